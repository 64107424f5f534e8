//! The aids against a model that goes round in circles, under `Aids::small_model()` unless a
//! test says otherwise. The default (`Aids::standard()`, only `stop_repeats`) runs every
//! identical call again and, once one call has returned the same result three times in a row,
//! asks once for the final answer with no tools. `replay_repeats` answers a repeat of a call
//! that worked from its first answer and then asks for the answer without tools;
//! `ask_after_empty_reply` asks once after an empty reply, an echo or a restated call.
//! Everything the run writes is a `Message::Feedback`, and every feedback turn is a model call
//! that counts against `max_turns` (none is sent at the last turn).
//!
//! Prose, and the core's terms for an aid that takes a call, are in `aids_prose.rs`; the
//! helpers both use are in `support/`.

use std::sync::Arc;

use serde_json::json;
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::aids::StopRepeats;
use tinytools::run::{AidAction, Aids, RunEvent, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;

#[allow(dead_code)]
mod support;

use support::*;

#[tokio::test]
async fn under_the_default_a_repeated_call_runs_until_its_result_came_three_times_then_the_answer_is_asked_for() {
    let model = repeating(50);
    let (outcome, events) = run_recorded(model.clone(), RunPolicy::default().with_max_turns(60), "what is k?").await;
    assert_eq!(runs_of_counted(&events), 3, "every identical call runs again");
    assert_eq!(outcome.stop, StopReason::RepeatedCalls);
    assert_eq!(outcome.answer, "The value of k is known.");
    // Three runs, then the final request.
    assert_eq!(outcome.turns, 4);
    assert_eq!(aid_acted(&events), [("stop_repeats", &FINAL)]);
    let results: Vec<&str> = outcome
        .transcript
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, is_error: false, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["value of k"; 3], "no result is replayed under the default");
    let last = model.requests().last().cloned().expect("requests");
    assert!(last.tools.is_empty() && last.callable_by_name.is_empty(), "the final request offers no tools");
    assert!(
        matches!(last.messages.last(), Some(Message::Feedback { content }) if content.contains("Do not call any tool")),
        "{:?}",
        last.messages.last()
    );

    // No feedback at the last turn: with three turns the third result ends the run at the limit.
    let (outcome, events) = run_recorded(repeating(10), RunPolicy::default().with_max_turns(3), "what is k?").await;
    assert_eq!((outcome.stop, outcome.turns, runs_of_counted(&events)), (StopReason::TurnLimit, 3, 3));
    assert!(aid_acted(&events).is_empty(), "{events:?}");

    // A status that changes is polled every time: the same call, never the same result.
    let (outcome, events) =
        run_recorded(repeating_tool("ticking", 10), RunPolicy::default().with_max_turns(6), "k?").await;
    assert_eq!((outcome.stop, outcome.turns, started(&events)), (StopReason::TurnLimit, 6, 6));
    assert!(aid_acted(&events).is_empty(), "{events:?}");
}

#[tokio::test]
async fn with_no_aids_every_repeat_runs_until_the_turn_limit_and_a_patient_stop_waits_longer() {
    let policy = RunPolicy::default().with_max_turns(6).with_aids(Aids::none());
    let (outcome, events) = run_recorded(repeating(10), policy, "k?").await;
    assert_eq!((outcome.stop, outcome.turns), (StopReason::TurnLimit, 6));
    assert_eq!(runs_of_counted(&events), 6);
    assert!(aid_acted(&events).is_empty(), "{events:?}");

    let policy = RunPolicy::default().with_max_turns(10).with_aids(Aids::none().with(StopRepeats::after(5)));
    let (outcome, events) = run_recorded(repeating(10), policy, "k?").await;
    assert_eq!((outcome.stop, outcome.turns, runs_of_counted(&events)), (StopReason::RepeatedCalls, 6, 5));
    assert_eq!(aid_acted(&events), [("stop_repeats", &FINAL)]);
}

#[tokio::test]
async fn the_first_repeat_of_an_answered_call_is_answered_from_its_first_answer_and_the_answer_asked_for_without_tools()
{
    let model = repeating(10);
    let (outcome, events) = run_recorded(model.clone(), small_model_policy(), "what is k?").await;
    assert_eq!(runs_of_counted(&events), 1, "the tool ran once");
    assert_eq!(
        (outcome.stop, outcome.answer.as_str(), outcome.turns),
        (StopReason::Answered, "The value of k is known.", 3)
    );
    // Question, call, result, the repeat, its replay, the request, the answer.
    let messages = &outcome.transcript.messages;
    assert_eq!(messages.len(), 7, "{messages:?}");
    assert!(matches!(&messages[2], Message::Tool { content, is_error: false, .. } if content == "value of k"));
    let Message::Tool { content, is_error, .. } = &messages[4] else { panic!("a repeat's answer: {:?}", messages[4]) };
    assert!(
        !is_error
            && content.starts_with("You already made this exact call in this conversation and it worked")
            && content.contains("Do not make it again: make the next call the user's request needs")
            && content.ends_with("value of k"),
        "{content}"
    );
    assert!(matches!(&messages[5], Message::Feedback { content } if content == ANSWER_FROM_RESULT));
    assert!(
        matches!(&messages[6], Message::Assistant { content, tool_calls } if tool_calls.is_empty() && content == "The value of k is known.")
    );
    assert_eq!(
        aid_acted(&events),
        [
            ("replay_repeats", &AidAction::AnsweredCall { call_id: "c1".into(), tool_name: "counted".into() }),
            ("replay_repeats", &WITHOUT_TOOLS),
        ]
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[2].tools.is_empty() && requests[2].callable_by_name.is_empty(), "asked with no tools offered");

    // A reply without text is asked once more (tools offered again); the repeats that follow
    // are answered from the first answer, and the third identical replay ends the run.
    let model = Arc::new(ScriptedModel::dynamic(
        (0..10)
            .map(|i| {
                Box::new(move |request: &ModelRequest| {
                    if request.tools.is_empty() {
                        return ModelResponse::text(if i < 5 { "" } else { "k is known." });
                    }
                    ModelResponse::calls([(format!("c{i}").as_str(), "counted", json!({"key": "k"}))])
                }) as _
            })
            .collect(),
    ));
    let (outcome, events) = run_recorded(model, small_model_policy(), "what is k?").await;
    assert_eq!(runs_of_counted(&events), 1);
    assert_eq!((outcome.stop, outcome.answer.as_str(), outcome.turns), (StopReason::RepeatedCalls, "k is known.", 6));
    let replayed = |id: &str| AidAction::AnsweredCall { call_id: id.into(), tool_name: "counted".into() };
    assert_eq!(
        aid_acted(&events),
        [
            ("replay_repeats", &replayed("c1")),
            ("replay_repeats", &WITHOUT_TOOLS),
            ("ask_after_empty_reply", &FEEDBACK),
            ("replay_repeats", &replayed("c3")),
            ("replay_repeats", &replayed("c4")),
            ("stop_repeats", &FINAL),
        ]
    );

    // A repeat that comes beside a new call is answered from the first answer and the new call
    // runs; only a turn of nothing but repeats asks for the answer.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("a", "counted", json!({"key": "k"}))]),
        ModelResponse::calls([("b", "counted", json!({"key": "k"})), ("c", "counted", json!({"key": "j"}))]),
        ModelResponse::calls([("d", "counted", json!({"key": "k"}))]),
        ModelResponse::text("k and j are known."),
    ]));
    let (outcome, events) = run_recorded(model.clone(), small_model_policy(), "what are k and j?").await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "k and j are known."));
    assert_eq!(runs_of_counted(&events), 2);
    let replayed = |id: &str| AidAction::AnsweredCall { call_id: id.into(), tool_name: "counted".into() };
    assert_eq!(
        aid_acted(&events),
        [("replay_repeats", &replayed("b")), ("replay_repeats", &replayed("d")), ("replay_repeats", &WITHOUT_TOOLS)]
    );
    let requests = model.requests();
    assert!(!requests[2].tools.is_empty() && requests[3].tools.is_empty());
}

#[tokio::test]
async fn a_repeat_answered_without_tools_by_an_empty_reply_is_asked_for_the_answer_once_more() {
    // Measured: offered no tools, the model wrote nothing that answered, got the repeat's note
    // back and ended "I'm sorry, but I can't assist with that."
    let model = Arc::new(ScriptedModel::dynamic(
        (0..4)
            .map(|i| {
                Box::new(move |request: &ModelRequest| {
                    let asked_with_tools = !request.tools.is_empty()
                        && matches!(request.messages.last(), Some(Message::Feedback { content }) if content == ANSWER_FROM_RESULT);
                    match (request.tools.is_empty(), asked_with_tools) {
                        (_, true) => ModelResponse::text("k is known: value of k."),
                        (true, false) => ModelResponse::text(""),
                        (false, false) => {
                            ModelResponse::calls([(format!("c{i}").as_str(), "counted", json!({"key": "k"}))])
                        }
                    }
                }) as _
            })
            .collect(),
    ));
    let (outcome, events) = run_recorded(model.clone(), small_model_policy(), "what is k?").await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "k is known: value of k."));
    // Question, call, result, repeat, replay, the request, the empty reply, the request again,
    // the answer: each a model call that counted.
    let messages = &outcome.transcript.messages;
    assert_eq!(messages.len(), 9, "{messages:?}");
    assert!(matches!(&messages[7], Message::Feedback { content } if content == ANSWER_FROM_RESULT));
    assert_eq!(outcome.turns, 4);
    assert_eq!(
        aid_acted(&events)[1..],
        [("replay_repeats", &WITHOUT_TOOLS), ("ask_after_empty_reply", &FEEDBACK)],
        "{events:?}"
    );
    assert_eq!(model.requests().len(), 4, "one request more, not two");
}

#[tokio::test]
async fn the_same_call_twice_in_one_turn_runs_twice_and_a_repeated_rejection_is_refused_again() {
    for policy in [RunPolicy::default(), small_model_policy()] {
        let aids = format!("{:?}", policy.aids);
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("a", "counted", json!({"key": "x"})), ("b", "counted", json!({"key": "x"}))]),
            ModelResponse::calls([("c", "counted", json!({"wrong": 1}))]),
            ModelResponse::calls([("d", "counted", json!({"wrong": 1}))]),
            ModelResponse::text("done"),
        ]));
        let (outcome, events) = run_recorded(model, policy, "x?").await;
        // Within one turn neither call has answered yet, so neither is a repeat of a call that
        // worked: both run, under either preset.
        assert_eq!(runs_of_counted(&events), 2, "{aids}");
        let tool = |i: usize| match &outcome.transcript.messages[i] {
            Message::Tool { content, is_error, .. } => (content.clone(), *is_error),
            other => panic!("{aids}: a tool answer at {i}: {other:?}"),
        };
        assert_eq!((tool(2), tool(3)), (("value of x".into(), false), ("value of x".into(), false)), "{aids}");
        assert!(tool(5).1 && tool(5).0.contains("\"key\" is a required property"), "{aids}");
        // A refusal is never replayed: the repeat meets admission again, and is told the same.
        assert_eq!(tool(7), tool(5), "{aids}");
        assert!(aid_acted(&events).is_empty(), "{aids}: {events:?}");
        assert_eq!(outcome.answer, "done");
    }
}

#[tokio::test]
async fn a_repeated_search_stops_after_the_same_result_three_times_whether_it_found_anything_or_not() {
    // No search is special any more: one that found nothing and one that found something both
    // run until the same answer came three times (`replay_repeats` never replays a search).
    for policy in [RunPolicy::default(), small_model_policy()] {
        let aids = format!("{:?}", policy.aids);
        let search = ModelResponse::calls([("s", "tool_search", json!({"query": "order groceries"}))]);
        let model = calling_until_asked_to_answer(search, "I cannot order groceries.", 5);
        let (outcome, events) = run_recorded(model, policy.clone(), "Order oat milk from the supermarket.").await;
        assert_eq!(
            (outcome.stop, outcome.answer.as_str(), outcome.turns),
            (StopReason::RepeatedCalls, "I cannot order groceries.", 4),
            "{aids}"
        );
        assert_eq!(aid_acted(&events), [("stop_repeats", &FINAL)], "{aids}");
        let searched = events.iter().filter(|e| matches!(e, RunEvent::ToolSearched { .. })).count();
        assert_eq!(searched, 3, "{aids}");

        let found = ModelResponse::calls([("s", "tool_search", json!({"query": "stock price"}))]);
        let model = calling_until_asked_to_answer(found, "done", 6);
        let (outcome, events) = run_recorded(model, policy, "ACME?").await;
        assert_eq!((outcome.stop, outcome.turns), (StopReason::RepeatedCalls, 4), "{aids}");
        assert_eq!(aid_acted(&events), [("stop_repeats", &FINAL)], "{aids}");
    }
}

#[tokio::test]
async fn an_empty_reply_is_asked_for_its_answer_once() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
        ModelResponse::text(""),
        ModelResponse::text("The value of k is known."),
    ]));
    let (outcome, events) = run_recorded(model.clone(), small_model_policy(), "k?").await;
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("The value of k is known.", 3));
    assert_eq!(aid_acted(&events), [("ask_after_empty_reply", &FEEDBACK)]);
    // After a tool's answer the request points at it; before any, it asks for the answer.
    let asked = model.requests()[2].messages.last().cloned();
    assert!(matches!(&asked, Some(Message::Feedback { content }) if content == ANSWER_FROM_RESULT), "{asked:?}");
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(""), ModelResponse::text("k is unknown.")]));
    let (outcome, _) = run_recorded(model.clone(), small_model_policy(), "k?").await;
    assert_eq!(outcome.answer, "k is unknown.");
    let asked = model.requests()[1].messages.last().cloned();
    assert!(
        matches!(asked, Some(Message::Feedback { content }) if content.starts_with("Answer the user now in plain text"))
    );
    // Twice empty: asked once, and the second empty reply is the answer.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(""), ModelResponse::text(" ")]));
    let (outcome, _) = run_recorded(model, small_model_policy(), "k?").await;
    assert_eq!((outcome.answer.trim(), outcome.turns), ("", 2));
    // Under the default an empty reply is the answer.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("")]));
    let (outcome, events) = run_recorded(model, RunPolicy::default(), "k?").await;
    assert_eq!((outcome.answer.as_str(), outcome.turns, outcome.stop), ("", 1, StopReason::Answered));
    assert!(aid_acted(&events).is_empty(), "{events:?}");
}

#[tokio::test]
async fn feedback_costs_a_turn_and_none_is_sent_at_the_last_turn() {
    let script = || {
        Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
            ModelResponse::text(""),
            ModelResponse::text("The value of k is known."),
        ]))
    };
    // With three turns, the empty reply's feedback takes the third.
    let (outcome, _) = run_recorded(script(), small_model_policy().with_max_turns(3), "k?").await;
    assert_eq!(
        (outcome.stop, outcome.turns, outcome.answer.as_str()),
        (StopReason::Answered, 3, "The value of k is known.")
    );
    // With two, the empty reply comes at the last turn: it is the answer, and nothing is asked.
    let model = script();
    let (outcome, events) = run_recorded(model.clone(), small_model_policy().with_max_turns(2), "k?").await;
    assert_eq!((outcome.stop, outcome.turns, outcome.answer.as_str()), (StopReason::Answered, 2, ""));
    assert!(aid_acted(&events).is_empty(), "{events:?}");
    assert_eq!(model.requests().len(), 2);
    assert!(!outcome.transcript.messages.iter().any(|m| matches!(m, Message::Feedback { .. })));
}
