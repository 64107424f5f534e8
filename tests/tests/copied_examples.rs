//! A description's example copied as the value (`LoopGuard::require_grounding`): a call whose
//! argument is, word for word, the one example of several words its description quotes, when
//! the conversation never said it, is refused once; the same call again runs.

use std::sync::Arc;

use serde_json::json;
use tinytools::model::Message;
use tinytools::run::{LoopGuard, RunEvent, RunOutcome, RunPolicy};
use tinytools::{ToolRegistry, tool};
use tinytools_integration_tests::{calling, run_recorded};

/// Set the user's status.
#[tool]
async fn set_status(
    /// Status text, such as "In a meeting".
    text: String,
    /// Who sees it: "the team" or "everyone".
    audience: Option<String>,
    /// Where it shows, such as "sidebar".
    place: Option<String>,
) -> String {
    let _shown = (audience, place);
    format!("status set: {text}")
}

async fn run(
    calls: Vec<(&'static str, serde_json::Value)>,
    user: &str,
    policy: RunPolicy,
) -> (RunOutcome, Vec<RunEvent>) {
    let mut registry = ToolRegistry::new();
    registry.register(SetStatus).expect("registers");
    run_recorded(Arc::new(registry), calling(calls), policy, user).await
}

/// Each tool answer: its text and whether it is an error.
fn answers(outcome: &RunOutcome) -> Vec<(String, bool)> {
    outcome
        .transcript
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { content, is_error, .. } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

const SICK: &str = "I'm off sick today. Can you make that show next to my name at work?";

/// Measured on Qwen2.5-Coder-1.5B: told "I'm off sick today", it set its status to the
/// description's "In a meeting".
#[tokio::test]
async fn the_descriptions_example_is_refused_once_and_the_requests_value_runs() {
    let (outcome, events) = run(
        vec![("set_status", json!({"text": "in a Meeting"})), ("set_status", json!({"text": "Off sick today"}))],
        SICK,
        RunPolicy::default(),
    )
    .await;
    let answers = answers(&outcome);
    assert_eq!(
        answers[0],
        (
            "`text` \"in a Meeting\" is the example from the description of `text`, word for word, and nothing in this \
             conversation says it. Call `set_status` again with the `text` this request needs, in the user's words: \
             \"I'm off sick today. Can you make that show next to my name at work?\""
                .to_owned(),
            true
        )
    );
    assert_eq!(answers[1], ("status set: Off sick today".to_owned(), false));
    assert!(
        events.iter().any(
            |e| matches!(e, RunEvent::ToolRejected { reason, .. } if reason.starts_with("copied example in `text`"))
        )
    );
}

#[tokio::test]
async fn the_same_call_again_runs_and_so_does_an_example_the_conversation_gave_or_a_closed_sets_value() {
    // Said once: the example may be what the request needs.
    let again = vec![("set_status", json!({"text": "In a meeting"})), ("set_status", json!({"text": "In a meeting"}))];
    let (outcome, _) = run(again, SICK, RunPolicy::default()).await;
    let errors: Vec<bool> = answers(&outcome).iter().map(|(_, is_error)| *is_error).collect();
    assert_eq!(errors, [true, false]);
    // The user said it.
    let (outcome, _) = run(
        vec![("set_status", json!({"text": "In a meeting"}))],
        "I'm in a meeting until 3, show that.",
        RunPolicy::default(),
    )
    .await;
    assert!(!answers(&outcome)[0].1);
    // One of several quoted values, or an example of one word: a closed set's value.
    let (outcome, _) = run(
        vec![("set_status", json!({"text": "Off sick", "audience": "the team", "place": "sidebar"}))],
        SICK,
        RunPolicy::default(),
    )
    .await;
    assert!(!answers(&outcome)[0].1, "{:?}", answers(&outcome));
    // Part of a longer value is the model's own text.
    let (outcome, _) =
        run(vec![("set_status", json!({"text": "In a meeting, then off sick"}))], SICK, RunPolicy::default()).await;
    assert!(!answers(&outcome)[0].1);
    // The guard off.
    let off = RunPolicy::default().with_loop_guard(LoopGuard::default().with_require_grounding(false));
    let (outcome, _) = run(vec![("set_status", json!({"text": "In a meeting"}))], SICK, off).await;
    assert!(!answers(&outcome)[0].1);
}
