//! Prose under every preset: a call spelt out, explained or named in a reply without calls is
//! never run (the reply is the answer), and a reply that is only the name of a tool that ran
//! is an echo, asked once for the answer under `small_model`. The core ignores an aid that
//! takes a call of a tool with side effects for a reply, unless the aid was built for it.
//!
//! Helpers are shared with `aids_small_model.rs` (`support/`).

use std::sync::Arc;

use serde_json::json;
use tinytools::model::{Message, ModelResponse, ToolCall};
use tinytools::run::aids::{Aid, ReplyAction, RunView};
use tinytools::run::{Aids, RunEvent, RunPolicy};
use tinytools::testkit::ScriptedModel;

#[allow(dead_code)]
mod support;

use support::*;

fn every_preset() -> [RunPolicy; 3] {
    [small_model_policy(), RunPolicy::default(), RunPolicy::default().with_aids(Aids::none())]
}

#[tokio::test]
async fn a_call_described_or_named_in_prose_is_the_answer_under_every_preset() {
    // A read-only look-up explained, a destructive call spelt out with its JSON, the bare name
    // of a tool that takes no arguments (read-only or destructive): nothing runs, and the
    // reply is the run's answer in one model call.
    let replies = [
        "To get it, call the `counted` function with the key k.",
        "Call `counted` with {\"key\": \"k\"}.",
        "Call `github_merge_pr` with {\"repo\": \"acme/web\", \"number\": 57}.",
        "current_time",
        "wipe_cache",
    ];
    for policy in every_preset() {
        let aids = format!("{:?}", policy.aids);
        for reply in replies {
            let model = Arc::new(ScriptedModel::new([ModelResponse::text(reply), ModelResponse::text("unused")]));
            let (outcome, events) = run_recorded(model, policy.clone(), "k?").await;
            assert_eq!((outcome.turns, outcome.answer.as_str()), (1, reply), "{aids}");
            assert!(aid_acted(&events).is_empty() && started(&events) == 0, "{aids}: {reply}: {events:?}");
        }
    }

    // After `tool_search` found it (so it was offered), a call with side effects spelt out is
    // the answer too: nothing is posted.
    let prose = "Call `slack_post_message` with {\"channel\": \"#general\", \"text\": \"Closed Friday\"}.";
    for policy in every_preset() {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("s", "tool_search", json!({"query": "post to a slack channel"}))]),
            ModelResponse::text(prose),
        ]));
        let (outcome, events) = run_recorded(model.clone(), policy, "Tell #general the office is closed Friday.").await;
        assert!(
            model.requests()[1].tools.iter().any(|t| t.name == "slack_post_message"),
            "the search found it: it was offered"
        );
        assert_eq!((outcome.answer.as_str(), outcome.turns), (prose, 2));
        assert!(taken(&events).is_empty(), "{events:?}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == "slack_post_message")),
            "{events:?}"
        );
    }
}

#[tokio::test]
async fn a_reply_that_is_only_the_name_of_a_tool_that_ran_is_asked_for_the_answer() {
    // An echo, not a call: asked for the answer, as an empty reply is (measured: taken for a
    // call, refused, the model posted twice).
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("s", "tool_search", json!({"query": "record call"}))]),
        ModelResponse::calls([("c", "crm_log_call", json!({"contact_id": "c_48", "notes": "renewal pricing"}))]),
        ModelResponse::text("`crm_log_call`"),
        ModelResponse::text("Logged."),
    ]));
    let (outcome, events) =
        run_recorded(model, small_model_policy(), "Log my call with c_48 about renewal pricing.").await;
    assert_eq!(aid_acted(&events), [("ask_after_empty_reply", &FEEDBACK)], "{events:?}");
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("Logged.", 4));
    let ran = outcome
        .transcript
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool { name, is_error: false, .. } if name == "crm_log_call"));
    assert_eq!(ran.count(), 1, "the name is not taken for another call");
}

/// An aid of the host's that takes `call` for any reply until that tool has run (what a
/// prompt-injected sentence would need); `for_side_effects` says whether it was built to take
/// calls of tools with side effects.
struct TakesACall {
    tool: &'static str,
    arguments: serde_json::Value,
    for_side_effects: bool,
}

#[async_trait::async_trait]
impl Aid for TakesACall {
    fn name(&self) -> &'static str {
        "takes_a_call"
    }

    fn takes_side_effect_calls(&self) -> bool {
        self.for_side_effects
    }

    async fn on_reply(&self, view: &RunView<'_>, _reply: &str) -> ReplyAction {
        if view.ran_ok(self.tool) {
            return ReplyAction::Accept;
        }
        let arguments = self.arguments.to_string();
        ReplyAction::TakeCall(ToolCall::new("taken", self.tool, arguments))
    }
}

#[tokio::test]
async fn the_core_runs_an_aids_read_only_call_and_ignores_a_side_effect_one_unless_the_aid_is_built_for_it() {
    let post = || json!({"channel": "#general", "text": "hello"});
    let cases = [
        ("slack_post_message", post(), false, false),
        ("slack_post_message", post(), true, true),
        ("current_time", json!({}), false, true),
    ];
    for (tool, arguments, for_side_effects, runs) in cases {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("s", "tool_search", json!({"query": "post to a slack channel"}))]),
            ModelResponse::text("I could do it."),
            ModelResponse::text("Done."),
        ]));
        let aid = TakesACall { tool, arguments, for_side_effects };
        let policy = RunPolicy::default().with_aids(Aids::none().with(aid));
        let (outcome, events) = run_recorded(model.clone(), policy, "Say hello in #general.").await;
        assert!(model.requests()[1].tools.iter().any(|t| t.name == tool), "{tool}: offered");
        let ran = events.iter().any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == tool));
        assert_eq!((ran, taken(&events).len()), (runs, usize::from(runs)), "{tool}: {events:?}");
        let answer = if runs { ("Done.", 3) } else { ("I could do it.", 2) };
        assert_eq!((outcome.answer.as_str(), outcome.turns), answer, "{tool}");
    }
}
