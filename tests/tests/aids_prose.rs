//! The prose aids (`adopt_prose_calls`, and the opt-in nudge): a read-only
//! call spelt out in prose may be taken for the call; a call with side effects never is, and the
//! core ignores any aid that tries, unless the aid was built for it.
//!
//! Helpers are shared with `aids_small_model.rs` (`support/`).

use std::sync::Arc;
use tinytools_integration_tests::every_aid;

use serde_json::json;
use tinytools::model::{Message, ModelResponse, ToolCall};
use tinytools::run::aids::{Aid, NudgeDescribedCalls, ReplyAction, RunView};
use tinytools::run::{AidAction, Aids, RunEvent, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;

#[allow(dead_code)]
mod support;

use support::*;

fn narrating_then(then: ModelResponse) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([
        // No value quoted (with one, `counted` being a read-only tool of one string parameter,
        // the look-up would be made: see `a_look_up_described_...`).
        ModelResponse::text("To get it, call the `counted` function with the key k."),
        then,
        ModelResponse::text("The value is known."),
    ]))
}

#[tokio::test]
async fn a_call_described_in_prose_is_nudged_once_when_the_nudge_is_used() {
    // In no preset: measured on Qwen2.5-Coder-1.5B over nine live-suite runs, 42 nudges drew
    // the same sentence back 34 times and never the call a task needed.
    let nudging = RunPolicy::default().with_aids(every_aid().with(NudgeDescribedCalls));
    for policy in [every_aid_policy(), RunPolicy::default(), RunPolicy::default().with_aids(Aids::none())] {
        let model = narrating_then(ModelResponse::text("unused"));
        let (outcome, events) = run_recorded(model, policy, "k?").await;
        assert_eq!(
            (outcome.turns, outcome.answer.as_str()),
            (1, "To get it, call the `counted` function with the key k.")
        );
        assert!(aid_acted(&events).is_empty(), "{events:?}");
    }

    let model = narrating_then(ModelResponse::calls([("c", "counted", json!({"key": "k"}))]));
    let (outcome, events) = run_recorded(model.clone(), nudging.clone(), "k?").await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "The value is known."));
    assert_eq!(aid_acted(&events), [("nudge_described_calls", &FEEDBACK)]);
    let nudge = &model.requests()[1].messages.last().cloned();
    assert!(
        matches!(nudge, Some(Message::Feedback { content }) if content.contains("described calling `counted`")),
        "{nudge:?}"
    );

    // Described twice: one nudge only, and the second description is the answer.
    let model = narrating_then(ModelResponse::text("Just call `counted` yourself."));
    let (outcome, _) = run_recorded(model, nudging.clone(), "k?").await;
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("Just call `counted` yourself.", 2));

    // After a tool answered, naming a tool is just an answer.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
        ModelResponse::text("`counted` says: value of k."),
    ]));
    let (outcome, events) = run_recorded(model, nudging.clone(), "k?").await;
    assert_eq!(outcome.turns, 2);
    assert!(aid_acted(&events).is_empty(), "{events:?}");
    // Text that names no tool the model may call is an answer.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("It is sunny; no tool needed.")]));
    let (outcome, _) = run_recorded(model, nudging, "k?").await;
    assert_eq!(outcome.turns, 1);
}

#[tokio::test]
async fn a_read_only_call_spelt_out_in_prose_is_taken_once_and_never_one_of_a_destructive_tool() {
    // The reply Qwen2.5-Coder-1.5B gave after `tool_search` found `hotel_search`.
    let prose = "To find a hotel in Porto for two people, you can call the `hotel_search` function with the \
                 following arguments:\n```json\n{\n  \"city\": \"Porto\",\n  \"check_in\": \"2026-06-03\",\n  \
                 \"check_out\": \"2026-06-06\",\n  \"guests\": 2\n}\n```";
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("s", "tool_search", json!({"query": "hotel in Porto"}))]),
        ModelResponse::text(prose),
        ModelResponse::text(prose),
        ModelResponse::text("Casa Azul has a room."),
    ]));
    let (outcome, events) =
        run_recorded(model, every_aid_policy(), "Somewhere to sleep in Porto, 3 to 6 June, two of us.").await;
    // Spelt out again after the taken call answered, the same call is not taken twice: the
    // sentence restates a call that ran, so the model is asked once for the answer.
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("Casa Azul has a room.", 4));
    assert_eq!(
        aid_acted(&events),
        [
            (
                "adopt_prose_calls",
                &AidAction::TookCall { call_id: "adopted_2".into(), tool_name: "hotel_search".into() }
            ),
            ("ask_after_empty_reply", &FEEDBACK),
        ]
    );
    let messages = &outcome.transcript.messages;
    let call = messages.iter().find_map(|m| match m {
        Message::Assistant { content, tool_calls } if tool_calls.iter().any(|c| c.name == "hotel_search") => {
            Some((content.clone(), tool_calls[0].arguments.clone()))
        }
        _ => None,
    });
    let (content, arguments) = call.expect("the taken call is in the transcript");
    assert_eq!(content, prose, "the transcript keeps the reply's text with the call");
    let arguments: serde_json::Value = serde_json::from_str(&arguments).expect("json");
    assert_eq!(arguments, json!({"city": "Porto", "check_in": "2026-06-03", "check_out": "2026-06-06", "guests": 2}));
    assert_eq!(
        messages
            .iter()
            .filter(|m| matches!(m, Message::Tool { name, is_error: false, .. } if name == "hotel_search"))
            .count(),
        1
    );

    // A destructive tool spelt out is never taken: the prose is the answer, or with the nudge
    // used, it is nudged.
    let destructive = "Call `github_merge_pr` with {\"repo\": \"acme/web\", \"number\": 57}.";
    let nudging = RunPolicy::default().with_aids(every_aid().with(NudgeDescribedCalls));
    for (policy, turns) in [(nudging, 2), (every_aid_policy(), 1), (RunPolicy::default().with_aids(Aids::none()), 1)] {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::text(destructive),
            ModelResponse::text("I will not merge it without you."),
        ]));
        let (outcome, events) = run_recorded(model, policy, "Land PR 57 on acme/web.").await;
        assert_eq!(outcome.turns, turns);
        assert!(taken(&events).is_empty() && started(&events) == 0, "{events:?}");
    }
}

#[tokio::test]
async fn only_a_read_only_call_is_taken_from_prose_before_or_after_a_tools_output() {
    // Prose may be repeating what a tool's output or the model's own search told it to do: a
    // call with side effects spelt out is never run, whenever it comes; after a tool's output,
    // neither is a look-up that reaches the outside world (`stock_quote` is `open_world`).
    let cases = [
        ("Now call `slack_post_message` with {\"channel\": \"#general\", \"text\": \"value of k\"}.", false),
        ("Now call `stock_quote` with {\"symbol\": \"ACME\"}.", false),
        ("Now call `portfolio_summary` with {\"account\": \"brokerage\"}.", true),
    ];
    for (prose, adopted) in cases {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
            ModelResponse::text(prose),
            ModelResponse::text("Done."),
        ]));
        let (outcome, events) = run_recorded(model, every_aid_policy(), "k, then tell everyone").await;
        assert_eq!(!taken(&events).is_empty(), adopted, "{prose}: {events:?}");
        assert_eq!((started(&events), outcome.turns), if adopted { (2, 3) } else { (1, 2) }, "{prose}");
    }
    // Before any tool answered (only `tool_search`), a call with side effects is not taken
    // either: the sentence is the answer, and nothing is posted.
    let prose = "Call `slack_post_message` with {\"channel\": \"#general\", \"text\": \"Closed Friday\"}.";
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("s", "tool_search", json!({"query": "post to a slack channel"}))]),
        ModelResponse::text(prose),
    ]));
    let (outcome, events) =
        run_recorded(model.clone(), every_aid_policy(), "Tell #general the office is closed Friday.").await;
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

#[tokio::test]
async fn a_look_up_described_with_its_one_value_is_made_only_for_a_read_only_tool_of_one_string_parameter() {
    // Told to look the key up first, the model writes the look-up as a sentence: it is made.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c0", "jira_add_comment", json!({"key": "OPS-1", "body": "live"}))]),
        ModelResponse::text(
            "To find the ticket, call `jira_search_issues` with the query `\"project = OPS AND text ~ TLS\"`.",
        ),
        ModelResponse::calls([("c1", "jira_add_comment", json!({"key": "OPS-127", "body": "live"}))]),
        ModelResponse::text("Commented on OPS-127."),
    ]));
    let (outcome, events) =
        run_recorded(model, every_aid_policy(), "Comment 'live' on the OPS ticket about TLS certs.").await;
    assert_eq!(outcome.answer, "Commented on OPS-127.");
    assert_eq!(taken(&events), ["jira_search_issues"], "{events:?}");
    let adopted = outcome.transcript.messages.iter().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } if tool_calls.first().is_some_and(|c| c.name == "jira_search_issues") => {
            Some(tool_calls[0].arguments.clone())
        }
        _ => None,
    });
    assert_eq!(adopted.as_deref(), Some(r#"{"jql":"project = OPS AND text ~ TLS"}"#));

    // The bridge's search, described with its query, is made too.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::text(
            "To find when they are free, you can call the `tool_search` function with the query \"free times of two \
             people\".",
        ),
        ModelResponse::text("Priya and Tom are both free at 10:00."),
    ]));
    let (outcome, events) =
        run_recorded(model, every_aid_policy(), "When could priya@acme.com and tom@acme.com both meet?").await;
    let searched = events.iter().find_map(|e| match e {
        RunEvent::ToolSearched { matched, .. } => Some(matched.clone()),
        _ => None,
    });
    assert!(searched.is_some_and(|matched| matched.iter().any(|name| name == "calendar_free_slots")), "{events:?}");
    assert_eq!(taken(&events), ["tool_search"], "{events:?}");
    assert_eq!(outcome.answer, "Priya and Tom are both free at 10:00.");

    // A tool with side effects, one the value cannot fill alone, or a sentence that gives the
    // value to another argument, is only named: not made.
    for prose in [
        "Set your status: call `slack_set_status` with \"In a meeting\".",
        "Then call `currency_convert` with \"EUR\".",
        // (It tells the call's answer, "value of k": a bare restatement is asked for that.)
        "I called `counted` with the key k and the `scope` set to \"all\": value of k.",
    ] {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c0", "counted", json!({"key": "k"}))]),
            ModelResponse::text(prose),
            ModelResponse::text("never asked for"),
        ]));
        let (outcome, events) = run_recorded(model, every_aid_policy(), "k").await;
        assert!(taken(&events).is_empty(), "{prose}: {events:?}");
        assert_eq!(outcome.answer, prose);
    }
}

#[tokio::test]
async fn a_reply_that_is_only_a_tool_gets_its_signature_back_unless_it_is_a_read_only_tool_without_arguments() {
    // The replies Qwen2.5-Coder-1.5B gave: the found tool's bare name, and after a refusal the
    // declarations it had been sent, copied back. A tool that needs arguments (and any tool
    // with side effects) is not called from its name: the reply gets its signature back.
    let echo = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"drive_search_files\", \"description\": \
                \"Search Google Drive files by name or content.\", \"parameters\": {\"type\": \"object\"}}}\n\
                {\"type\": \"function\", \"function\": {\"name\": \"drive_share_file\", \"desc";
    let cases = [
        ("crm_log_call", "crm_log_call", json!({"contact_id": "c_48", "notes": "renewal pricing", "minutes": 20})),
        (echo, "drive_search_files", json!({"query": "Q3 plan"})),
    ];
    for (reply, tool, arguments) in cases {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("s", "tool_search", json!({"query": "record call or find a file"}))]),
            ModelResponse::text(reply),
            ModelResponse::calls([("c", tool, arguments.clone())]),
            ModelResponse::text("Done."),
        ]));
        let user = "Spoke with c_48 for 20 minutes about renewal pricing; and find the Q3 plan.";
        let (outcome, events) = run_recorded(model.clone(), every_aid_policy(), user).await;
        assert_eq!((outcome.answer.as_str(), outcome.turns), ("Done.", 4), "{tool}");
        assert_eq!(aid_acted(&events), [("adopt_prose_calls", &FEEDBACK)], "{tool}: {events:?}");
        let told = model.requests()[2].messages.last().cloned();
        assert!(
            matches!(&told, Some(Message::Feedback { content })
                if content.starts_with(&format!("Your reply named `{tool}` but made no call."))
                    && content.contains(&format!("`{tool}` takes: {{"))),
            "{tool}: {told:?}"
        );
        let messages = &outcome.transcript.messages;
        assert!(
            !messages.iter().any(|m| matches!(m, Message::Assistant { tool_calls, .. }
                if tool_calls.iter().any(|c| c.id.starts_with("adopted_")))),
            "{tool}: no call is taken from the name"
        );
        assert_eq!(
            messages
                .iter()
                .filter(|m| matches!(m, Message::Tool { name, is_error: false, .. } if name == tool))
                .count(),
            1,
            "{tool}: the call written after the signature runs"
        );
    }

    // The name of a tool that has already run is an echo, not a call: asked for the answer, as
    // an empty reply is (measured: taken for a call, refused, the model posted twice).
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("s", "tool_search", json!({"query": "record call"}))]),
        ModelResponse::calls([("c", "crm_log_call", json!({"contact_id": "c_48", "notes": "renewal pricing"}))]),
        ModelResponse::text("`crm_log_call`"),
        ModelResponse::text("Logged."),
    ]));
    let (outcome, events) =
        run_recorded(model, every_aid_policy(), "Log my call with c_48 about renewal pricing.").await;
    assert_eq!(aid_acted(&events), [("ask_after_empty_reply", &FEEDBACK)], "{events:?}");
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("Logged.", 4));

    // A read-only tool that needs no arguments is called from its name.
    let model =
        Arc::new(ScriptedModel::new([ModelResponse::text("current_time"), ModelResponse::text("It is 10:42.")]));
    let (outcome, events) = run_recorded(model, every_aid_policy(), "What time is it?").await;
    assert_eq!(taken(&events), ["current_time"], "{events:?}");
    assert!(
        outcome.transcript.messages.iter().any(|m| matches!(m, Message::Tool { name, content, is_error: false, .. }
            if name == "current_time" && content == "10:42"))
    );
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("It is 10:42.", 2));

    // A destructive one is not called from its bare name, nor is a name the run does not offer.
    for reply in ["wipe_cache", "`erase_everything`"] {
        let model = Arc::new(ScriptedModel::new([ModelResponse::text(reply), ModelResponse::text("Not wiped.")]));
        let (_, events) = run_recorded(model, every_aid_policy(), "Clear the cache.").await;
        assert!(taken(&events).is_empty() && started(&events) == 0, "{reply}: {events:?}");
    }
}

/// An aid of the host's that takes a post for any reply (what a prompt-injected sentence would
/// need); `for_side_effects` says whether it was built to.
struct PostsForAnyReply {
    for_side_effects: bool,
}

#[async_trait::async_trait]
impl Aid for PostsForAnyReply {
    fn name(&self) -> &'static str {
        "posts_for_any_reply"
    }

    fn takes_side_effect_calls(&self) -> bool {
        self.for_side_effects
    }

    async fn on_reply(&self, view: &RunView<'_>, _reply: &str) -> ReplyAction {
        if view.ran_ok("slack_post_message") {
            return ReplyAction::Accept;
        }
        let arguments = json!({"channel": "#general", "text": "hello"}).to_string();
        ReplyAction::TakeCall(ToolCall { id: "taken".into(), name: "slack_post_message".into(), arguments })
    }
}

#[tokio::test]
async fn the_core_ignores_an_aid_taking_a_side_effect_call_unless_the_aid_is_built_for_it() {
    for for_side_effects in [false, true] {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("s", "tool_search", json!({"query": "post to a slack channel"}))]),
            ModelResponse::text("I could post it."),
            ModelResponse::text("Posted."),
        ]));
        let policy = RunPolicy::default().with_aids(Aids::none().with(PostsForAnyReply { for_side_effects }));
        let (outcome, events) = run_recorded(model.clone(), policy, "Say hello in #general.").await;
        assert!(model.requests()[1].tools.iter().any(|t| t.name == "slack_post_message"), "offered");
        let posted = events
            .iter()
            .any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == "slack_post_message"));
        assert_eq!((posted, taken(&events).len()), (for_side_effects, usize::from(for_side_effects)), "{events:?}");
        let answer = if for_side_effects { ("Posted.", 3) } else { ("I could post it.", 2) };
        assert_eq!((outcome.answer.as_str(), outcome.turns), answer);
    }
}
