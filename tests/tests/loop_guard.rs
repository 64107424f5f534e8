//! The loop guard: a repeated call is answered from its first answer and, at the limit, the run
//! asks for the final answer; a call described in prose gets one nudge.

use std::cell::Cell;
use std::sync::Arc;

use serde_json::json;
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::{Agent, LoopGuard, RunEvent, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};
use tinytools_integration_tests::Recorder;

thread_local! {
    /// Runs of `counted` on this test's thread (each test runs its agent on its own thread).
    static COUNTED: Cell<usize> = const { Cell::new(0) };
}

fn runs_of_counted() -> usize {
    COUNTED.with(Cell::get)
}

/// Counts its runs.
#[tool(read_only)]
async fn counted(
    /// Anything.
    key: String,
) -> String {
    COUNTED.with(|n| n.set(n.get() + 1));
    format!("value of {key}")
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = tinytools_examples::catalogue::registry();
    registry.register(Counted).expect("registers");
    Arc::new(registry)
}

/// Calls `counted` with the same arguments (keys in either order) for ever, then answers when
/// offered no tools.
fn repeating(times: usize) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::dynamic(
        (0..times)
            .map(|i| {
                Box::new(move |request: &ModelRequest| {
                    if request.tools.is_empty() {
                        return ModelResponse::text("The value of k is known.");
                    }
                    let args = if i % 2 == 0 { r#"{"key":"k"}"# } else { r#"{ "key" : "k" }"# };
                    let mut response = ModelResponse::calls([("c", "counted", json!({}))]);
                    response.tool_calls[0].arguments = args.to_owned();
                    response.tool_calls[0].id = format!("c{i}");
                    response
                }) as _
            })
            .collect(),
    ))
}

#[tokio::test]
async fn a_model_that_repeats_one_call_fifty_times_gets_its_answer_and_then_is_asked_to_finish() {
    let before = runs_of_counted();
    let model = repeating(50);
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(registry(), model.clone())
        .with_policy(RunPolicy { max_turns: 60, ..RunPolicy::default() })
        .with_events(recorder.clone())
        .run(vec![Message::user("what is k?")])
        .await
        .expect("runs");
    assert_eq!(runs_of_counted() - before, 1, "the tool ran once");
    assert_eq!(outcome.stop, StopReason::RepeatedCalls);
    assert_eq!(outcome.answer, "The value of k is known.");
    // One run, three repeats answered from the first answer, then the final request.
    assert_eq!(outcome.turns, 5);
    let repeats: Vec<(usize, bool)> = recorder
        .events()
        .iter()
        .filter_map(|e| match e {
            RunEvent::RepeatedCall { repeats, stopped, tool_name, .. } if tool_name == "counted" => {
                Some((*repeats, *stopped))
            }
            _ => None,
        })
        .collect();
    assert_eq!(repeats, [(1, false), (2, false), (3, true)]);
    let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[4] else { panic!("a repeat's answer") };
    assert!(
        !is_error && content.starts_with("You already made this exact call") && content.ends_with("value of k"),
        "{content}"
    );
    let last = model.requests().last().cloned().expect("requests");
    assert!(last.tools.is_empty() && last.callable_by_name.is_empty(), "the final request offers no tools");
    assert!(
        matches!(last.messages.last(), Some(Message::User { content }) if content.contains("Do not call any tool"))
    );
}

#[tokio::test]
async fn without_a_limit_repeats_are_still_answered_from_the_first_answer() {
    let before = runs_of_counted();
    let policy = RunPolicy {
        max_turns: 6,
        loop_guard: LoopGuard { max_repeats: 0, ..LoopGuard::default() },
        ..RunPolicy::default()
    };
    let outcome =
        Agent::new(registry(), repeating(10)).with_policy(policy).run(vec![Message::user("k?")]).await.expect("runs");
    assert_eq!((outcome.stop, outcome.turns), (StopReason::TurnLimit, 6));
    assert_eq!(runs_of_counted() - before, 1);
}

#[tokio::test]
async fn the_same_call_twice_in_one_turn_runs_once_and_a_repeated_rejection_is_answered_again() {
    let before = runs_of_counted();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("a", "counted", json!({"key": "x"})), ("b", "counted", json!({"key": "x"}))]),
        ModelResponse::calls([("c", "counted", json!({"wrong": 1}))]),
        ModelResponse::calls([("d", "counted", json!({"wrong": 1}))]),
        ModelResponse::text("done"),
    ]));
    let outcome = Agent::new(registry(), model).run(vec![Message::user("x?")]).await.expect("runs");
    assert_eq!(runs_of_counted() - before, 1);
    let tool = |i: usize| match &outcome.transcript.messages[i] {
        Message::Tool { content, is_error, .. } => (content.clone(), *is_error),
        _ => panic!("a tool answer at {i}"),
    };
    assert_eq!(tool(2).0, "value of x");
    assert!(tool(3).0.starts_with("You already made this exact call"));
    assert!(tool(5).1 && tool(5).0.contains("\"key\" is a required property"));
    assert!(tool(7).1 && tool(7).0.starts_with("You already made this exact call") && tool(7).0.contains("\"key\""));
}

fn narrating_then(then: ModelResponse) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([
        ModelResponse::text("To get it, call the `counted` function with the key \"k\"."),
        then,
        ModelResponse::text("The value is known."),
    ]))
}

#[tokio::test]
async fn a_call_described_in_prose_is_nudged_once() {
    let model = narrating_then(ModelResponse::calls([("c", "counted", json!({"key": "k"}))]));
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(registry(), model.clone())
        .with_events(recorder.clone())
        .run(vec![Message::user("k?")])
        .await
        .expect("runs");
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "The value is known."));
    assert!(recorder.events().contains(&RunEvent::Nudged { tool_name: "counted".into() }));
    let nudge = &model.requests()[1].messages.last().cloned();
    assert!(matches!(nudge, Some(Message::User { content }) if content.contains("You described calling `counted`")));

    // Described twice: one nudge only, and the second description is the answer.
    let model = narrating_then(ModelResponse::text("Just call `counted` yourself."));
    let outcome = Agent::new(registry(), model).run(vec![Message::user("k?")]).await.expect("runs");
    assert_eq!(outcome.answer, "Just call `counted` yourself.");
    assert_eq!(outcome.turns, 2);

    // After a tool answered, naming a tool is just an answer; with the guard off, no nudge.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
        ModelResponse::text("`counted` says: value of k."),
    ]));
    assert_eq!(Agent::new(registry(), model).run(vec![Message::user("k?")]).await.expect("runs").turns, 2);
    let off = RunPolicy { loop_guard: LoopGuard::off(), ..RunPolicy::default() };
    let model = narrating_then(ModelResponse::text("unused"));
    assert_eq!(
        Agent::new(registry(), model).with_policy(off).run(vec![Message::user("k?")]).await.expect("runs").turns,
        1
    );
    // Text that names no tool the model may call is an answer.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("It is sunny; no tool needed.")]));
    assert_eq!(Agent::new(registry(), model).run(vec![Message::user("k?")]).await.expect("runs").turns, 1);
}
