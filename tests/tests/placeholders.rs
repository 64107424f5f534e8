//! Template placeholders (the `refuse_placeholders` aid, opt-in: in no preset): a call to a
//! tool with side effects whose argument holds a placeholder such as `$<current-price>` is
//! refused before the tool runs; the answer names the hole, and the deferred tools that may
//! fill it (its words ranked against the catalogue) are promoted. A placeholder the user
//! wrote, a read-only tool, and a run without the aid (the default) let the call run.

use std::sync::Arc;
use tinytools_integration_tests::{every_aid, every_aid_policy};

use serde_json::json;
use tinytools::model::Message;
use tinytools::run::{AidAction, Promotion, RunEvent, RunOutcome, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools_integration_tests::{calling, run_recorded};

async fn run(model: Arc<ScriptedModel>, policy: RunPolicy, user: &str) -> (RunOutcome, Vec<RunEvent>) {
    run_recorded(Arc::new(tinytools_examples::catalogue::registry()), model, policy, user).await
}

fn answers_of(outcome: &RunOutcome, tool: &str) -> Vec<(String, bool)> {
    outcome
        .transcript
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { name, content, is_error, .. } if name == tool => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The calls `refuse_placeholders` answered without running them, by tool.
fn refused(events: &[RunEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::AidActed { aid, action: AidAction::AnsweredCall { tool_name, .. } }
                if aid == "refuse_placeholders" =>
            {
                Some(tool_name.as_str())
            }
            _ => None,
        })
        .collect()
}

const POST_PRICE: &str = "Post what GLOBX is trading at in #markets so the team sees it.";

#[tokio::test]
async fn a_placeholder_is_refused_the_tools_that_fill_it_promoted_and_the_real_value_posts() {
    // What Qwen2.5-Coder-1.5B wrote in every run of this request, before looking the price up.
    let hole = json!({"channel": "#markets", "text": "GLOBX is trading at $<current-price>"});
    let model = calling(vec![
        ("slack_post_message", hole),
        ("stock_quote", json!({"symbol": "GLOBX"})),
        ("slack_post_message", json!({"channel": "#markets", "text": "GLOBX is trading at $685.83"})),
    ]);
    let (outcome, events) = run(model.clone(), every_aid_policy(), POST_PRICE).await;
    let posts = answers_of(&outcome, "slack_post_message");
    assert_eq!(posts.len(), 2);
    let (refusal, is_error) = &posts[0];
    assert!(*is_error);
    assert!(
        refusal.starts_with(
            "`text` holds the placeholder \"<current-price>\", not a value, and `slack_post_message` would use it \
             as written. Get the real value first with a tool (`tool_search` finds one), then call \
             `slack_post_message` again with it in place of \"<current-price>\"."
        ),
        "{refusal}"
    );
    let callable = refusal.lines().last().unwrap_or_default();
    assert!(callable.starts_with("Now callable, and may give it: ") && callable.contains("`stock_quote`"), "{refusal}");
    assert!(!posts[1].1, "the post with the real price runs");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == "slack_post_message"))
            .count(),
        1,
        "the hole is never posted"
    );
    assert_eq!(refused(&events), ["slack_post_message"], "{events:?}");
    assert!(
        !events.iter().any(|e| matches!(e, RunEvent::ToolRejected { .. })),
        "the aid answered, no gate: {events:?}"
    );
    // Every tool the answer names is declared in the next request: those the user's message
    // had already promoted, and the rest promoted by the refusal.
    let requests = model.requests();
    let declared: Vec<&str> = requests[1].tools.iter().map(|t| t.name.as_str()).collect();
    let named: Vec<&str> = callable.split('`').skip(1).step_by(2).collect();
    assert!(named.iter().all(|n| declared.contains(n)), "{named:?} not all in {declared:?}");
    // Ranked with the text around the hole ("GLOBX is trading at"), not "current price" alone
    // (which puts `crypto_price` first): the model takes the first tool named.
    assert_eq!(named.first(), Some(&"stock_quote"), "{callable}");
    let by_refusal: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolsPromoted { names, cause: Promotion::Aid { aid } } if aid == "refuse_placeholders" => {
                Some(names)
            }
            _ => None,
        })
        .flatten()
        .collect();
    assert!(!by_refusal.is_empty() && by_refusal.iter().all(|n| named.contains(&n.as_str())), "{by_refusal:?}");

    // A one-word hole is one too, unless it is an HTML element's name.
    for (text, refused) in [("GLOBX: $<price>", true), ("GLOBX: <b>$685.83</b>", false)] {
        let model = calling(vec![("slack_post_message", json!({"channel": "#markets", "text": text}))]);
        let (outcome, _) = run(model, every_aid_policy(), POST_PRICE).await;
        assert_eq!(answers_of(&outcome, "slack_post_message")[0].1, refused, "{text}");
    }

    // Repeated as it was, the hole is refused again (a refusal is never replayed as a call that
    // worked): never posted.
    let model = calling(vec![
        ("slack_post_message", json!({"channel": "#markets", "text": "At $<current-price>"})),
        ("slack_post_message", json!({"channel": "#markets", "text": "At $<current-price>"})),
    ]);
    let (_, events) = run(model, every_aid_policy(), POST_PRICE).await;
    assert!(!events.iter().any(|e| matches!(e, RunEvent::ToolStarted { .. })), "{events:?}");
    assert_eq!(refused(&events), ["slack_post_message", "slack_post_message"], "{events:?}");
}

#[tokio::test]
async fn a_placeholder_the_user_wrote_a_read_only_tool_or_a_run_without_the_aid_let_the_call_run() {
    let template = json!({"channel": "#general", "text": "Welcome aboard, <first-name>!"});
    let user = "Post this template to #general as it is: Welcome aboard, <first-name>!";
    let (outcome, events) =
        run(calling(vec![("slack_post_message", template.clone())]), every_aid_policy(), user).await;
    assert!(!answers_of(&outcome, "slack_post_message")[0].1, "the user wrote it");
    assert!(refused(&events).is_empty(), "{events:?}");

    let search = json!({"query": "<board-meeting> slides"});
    let (outcome, events) =
        run(calling(vec![("drive_search_files", search)]), every_aid_policy(), "Board slides?").await;
    assert!(!answers_of(&outcome, "drive_search_files")[0].1, "a read-only look-up harms nothing");
    assert!(refused(&events).is_empty(), "{events:?}");

    // The check is an aid: the default aids, and the small-model ones without it, post the hole
    // as written.
    let hole = json!({"channel": "#markets", "text": "GLOBX is trading at $<current-price>"});
    let without = RunPolicy::default().with_aids(every_aid().without("refuse_placeholders"));
    for policy in [RunPolicy::default(), without] {
        let aids = format!("{:?}", policy.aids);
        let (outcome, events) = run(calling(vec![("slack_post_message", hole.clone())]), policy, POST_PRICE).await;
        assert!(!answers_of(&outcome, "slack_post_message")[0].1, "{aids}");
        assert!(refused(&events).is_empty(), "{aids}: {events:?}");
    }
}
