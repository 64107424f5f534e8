//! The loop guard: a repeated call is answered from its first answer and, at the limit (at once
//! for a search that found nothing), the run asks for the final answer; a call spelt out in
//! prose is adopted (never a destructive one; after a tool's output, only a read-only one); a
//! call described without arguments gets one nudge; an empty reply is asked for its answer; a
//! look-up described with its one value is made; a reply that is only a tool is taken for its
//! call and answered with the tool's signature.

use std::cell::Cell;
use std::sync::Arc;

use serde_json::json;
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::{Agent, LoopGuard, RunEvent, RunOutcome, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};

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

/// Empties the cache: destructive, and takes no arguments.
#[tool(destructive)]
async fn wipe_cache() -> String {
    "wiped".to_owned()
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = tinytools_examples::catalogue::registry();
    registry.register(Counted).expect("registers").register(WipeCache).expect("registers");
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

/// Runs `user` through `model` under `policy` over this suite's registry, recording the run's
/// events.
async fn run_recorded(model: Arc<ScriptedModel>, policy: RunPolicy, user: &str) -> (RunOutcome, Vec<RunEvent>) {
    tinytools_integration_tests::run_recorded(registry(), model, policy, user).await
}

/// Makes `call` whenever it is offered tools (at most `times` requests), and answers `answer`
/// when offered none.
fn calling_until_asked_to_answer(call: ModelResponse, answer: &'static str, times: usize) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::dynamic(
        (0..times)
            .map(|_| {
                let call = call.clone();
                Box::new(
                    move |request: &ModelRequest| {
                        if request.tools.is_empty() { ModelResponse::text(answer) } else { call.clone() }
                    },
                ) as _
            })
            .collect(),
    ))
}

#[tokio::test]
async fn a_model_that_repeats_one_call_fifty_times_gets_its_answer_and_then_is_asked_to_finish() {
    let before = runs_of_counted();
    let model = repeating(50);
    let guard = LoopGuard::default().with_answer_after_repeat(false);
    let policy = RunPolicy::default().with_max_turns(60).with_loop_guard(guard);
    let (outcome, events) = run_recorded(model.clone(), policy, "what is k?").await;
    assert_eq!(runs_of_counted() - before, 1, "the tool ran once");
    assert_eq!(outcome.stop, StopReason::RepeatedCalls);
    assert_eq!(outcome.answer, "The value of k is known.");
    // One run, three repeats answered from the first answer, then the final request.
    assert_eq!(outcome.turns, 5);
    let repeats: Vec<(usize, bool)> = events
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
        !is_error
            && content.starts_with("You already made this exact call in this conversation and it worked")
            && content.contains("Do not make it again: make the next call the user's request needs")
            && content.ends_with("value of k"),
        "{content}"
    );
    let last = model.requests().last().cloned().expect("requests");
    assert!(last.tools.is_empty() && last.callable_by_name.is_empty(), "the final request offers no tools");
    assert!(
        matches!(last.messages.last(), Some(Message::User { content }) if content.contains("Do not call any tool"))
    );
}

#[tokio::test]
async fn the_first_repeat_of_an_answered_call_is_set_aside_and_the_answer_asked_for_without_tools() {
    let before = runs_of_counted();
    let model = repeating(10);
    let (outcome, events) = run_recorded(model.clone(), RunPolicy::default(), "what is k?").await;
    assert_eq!(runs_of_counted() - before, 1, "the tool ran once");
    assert_eq!(
        (outcome.stop, outcome.answer.as_str(), outcome.turns),
        (StopReason::Answered, "The value of k is known.", 2)
    );
    // The transcript reads question, call, result, answer: the repeat is not in it.
    let messages = &outcome.transcript.messages;
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(matches!(&messages[2], Message::Tool { content, is_error: false, .. } if content == "value of k"));
    assert!(
        matches!(&messages[3], Message::Assistant { content, tool_calls } if tool_calls.is_empty() && content == "The value of k is known.")
    );
    let repeats: Vec<(usize, bool)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::RepeatedCall { repeats, stopped, .. } => Some((*repeats, *stopped)),
            _ => None,
        })
        .collect();
    assert_eq!(repeats, [(1, true)]);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let last = &requests[2];
    assert!(last.tools.is_empty() && last.callable_by_name.is_empty(), "asked with no tools offered");
    assert!(matches!(last.messages.last(), Some(Message::Tool { .. })), "and no extra request in words");

    // A reply without text puts the repeat back: it is answered from the first answer, and
    // the run goes on under the usual limit.
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
    let (outcome, events) = run_recorded(model, RunPolicy::default(), "what is k?").await;
    let messages = &outcome.transcript.messages;
    assert!(matches!(&messages[3], Message::Assistant { tool_calls, .. } if tool_calls.len() == 1));
    assert!(
        matches!(&messages[4], Message::Tool { content, .. } if content.starts_with("You already made this exact call"))
    );
    assert_eq!(outcome.stop, StopReason::RepeatedCalls);
    assert!(events.iter().any(|e| matches!(e, RunEvent::RepeatedCall { repeats: 1, stopped: false, .. })));

    // A repeat that came beside a new call was answered as usual; when it comes alone its
    // event counts both repeats.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("a", "counted", json!({"key": "k"}))]),
        ModelResponse::calls([("b", "counted", json!({"key": "k"})), ("c", "counted", json!({"key": "j"}))]),
        ModelResponse::calls([("d", "counted", json!({"key": "k"}))]),
        ModelResponse::text("k and j are known."),
    ]));
    let (outcome, events) = run_recorded(model, RunPolicy::default(), "what are k and j?").await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "k and j are known."));
    let repeats: Vec<(usize, bool)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::RepeatedCall { repeats, stopped, .. } => Some((*repeats, *stopped)),
            _ => None,
        })
        .collect();
    assert_eq!(repeats, [(1, false), (2, true)]);
}

#[tokio::test]
async fn a_repeat_written_again_without_tools_is_asked_for_the_answer_in_words_once() {
    // Measured: offered no tools, the model wrote the merge call again as text (no answer), got
    // the repeat's note back and ended "I'm sorry, but I can't assist with that."
    let model = Arc::new(ScriptedModel::dynamic(
        (0..4)
            .map(|i| {
                Box::new(move |request: &ModelRequest| {
                    let asked_in_words = matches!(request.messages.last(), Some(Message::User { content })
                        if content.starts_with("The tool has answered (above). Now tell the user what it answered"));
                    match (request.tools.is_empty(), asked_in_words) {
                        (true, true) => ModelResponse::text("k is known: value of k."),
                        (true, false) => ModelResponse::text(""),
                        (false, _) => {
                            ModelResponse::calls([(format!("c{i}").as_str(), "counted", json!({"key": "k"}))])
                        }
                    }
                }) as _
            })
            .collect(),
    ));
    let (outcome, events) = run_recorded(model.clone(), RunPolicy::default(), "what is k?").await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "k is known: value of k."));
    // Question, call, result, the request in words, the answer: no repeat, no empty reply.
    let messages = &outcome.transcript.messages;
    assert_eq!(messages.len(), 5, "{messages:?}");
    assert!(matches!(&messages[3], Message::User { content } if content.starts_with("The tool has answered")));
    assert!(events.iter().any(|e| matches!(e, RunEvent::RepeatedCall { repeats: 1, stopped: true, .. })));
    assert_eq!(model.requests().len(), 4, "one request in words, not more");
}

#[tokio::test]
async fn without_a_limit_repeats_are_still_answered_from_the_first_answer() {
    let before = runs_of_counted();
    let policy = RunPolicy::default()
        .with_max_turns(6)
        .with_loop_guard(LoopGuard::default().with_max_repeats(0).with_answer_after_repeat(false));
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
    assert!(tool(3).0.starts_with("You already made this exact call") && tool(3).0.contains("it worked"));
    assert!(tool(5).1 && tool(5).0.contains("\"key\" is a required property"));
    let again = tool(7).0;
    assert!(tool(7).1 && again.starts_with("You already made this exact call") && again.contains("\"key\""));
    assert!(again.contains("Use it, or call with different arguments") && !again.contains("it worked"), "{again}");
}

fn narrating_then(then: ModelResponse) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([
        // No value quoted (with one, `counted` being a read-only tool of one string parameter,
        // the look-up would be made: see the last test).
        ModelResponse::text("To get it, call the `counted` function with the key k."),
        then,
        ModelResponse::text("The value is known."),
    ]))
}

#[tokio::test]
async fn a_call_described_in_prose_is_nudged_once_when_the_nudge_is_on() {
    // Off by default: measured on Qwen2.5-Coder-1.5B over nine live-suite runs, 42 nudges drew
    // the same sentence back 34 times and never the call a task needed.
    let nudging = RunPolicy::default().with_loop_guard(LoopGuard::default().with_nudge_described_calls(true));
    let model = narrating_then(ModelResponse::text("unused"));
    let outcome = Agent::new(registry(), model).run(vec![Message::user("k?")]).await.expect("runs");
    assert_eq!((outcome.turns, outcome.answer.as_str()), (1, "To get it, call the `counted` function with the key k."));

    let model = narrating_then(ModelResponse::calls([("c", "counted", json!({"key": "k"}))]));
    let (outcome, events) = run_recorded(model.clone(), nudging.clone(), "k?").await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "The value is known."));
    assert!(events.contains(&RunEvent::Nudged { tool_name: "counted".into() }));
    let nudge = &model.requests()[1].messages.last().cloned();
    assert!(matches!(nudge, Some(Message::User { content }) if content.contains("You described calling `counted`")));

    // Described twice: one nudge only, and the second description is the answer.
    let model = narrating_then(ModelResponse::text("Just call `counted` yourself."));
    let outcome =
        Agent::new(registry(), model).with_policy(nudging.clone()).run(vec![Message::user("k?")]).await.expect("runs");
    assert_eq!(outcome.answer, "Just call `counted` yourself.");
    assert_eq!(outcome.turns, 2);

    // After a tool answered, naming a tool is just an answer; with the guard off, no nudge.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
        ModelResponse::text("`counted` says: value of k."),
    ]));
    assert_eq!(
        Agent::new(registry(), model).with_policy(nudging).run(vec![Message::user("k?")]).await.expect("runs").turns,
        2
    );
    let off = RunPolicy::default().with_loop_guard(LoopGuard::off());
    let model = narrating_then(ModelResponse::text("unused"));
    assert_eq!(
        Agent::new(registry(), model).with_policy(off).run(vec![Message::user("k?")]).await.expect("runs").turns,
        1
    );
    // Text that names no tool the model may call is an answer.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("It is sunny; no tool needed.")]));
    assert_eq!(Agent::new(registry(), model).run(vec![Message::user("k?")]).await.expect("runs").turns, 1);
}

#[tokio::test]
async fn a_call_spelt_out_in_prose_is_adopted_once_and_never_for_a_destructive_tool() {
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
        run_recorded(model, RunPolicy::default(), "Somewhere to sleep in Porto, 3 to 6 June, two of us.").await;
    // Spelt out again after the adopted call answered, the same call is not adopted twice (it
    // would only be answered from its first answer): the sentence restates a call that ran, so
    // the model is asked once for the answer.
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("Casa Azul has a room.", 4));
    assert!(events.contains(&RunEvent::CallRestated { tool_name: "hotel_search".into() }), "{events:?}");
    let adopted: Vec<_> = events.into_iter().filter(|e| matches!(e, RunEvent::CallAdopted { .. })).collect();
    assert_eq!(adopted, [RunEvent::CallAdopted { call_id: "adopted_2".into(), tool_name: "hotel_search".into() }]);
    let messages = &outcome.transcript.messages;
    let call = messages.iter().find_map(|m| match m {
        Message::Assistant { content, tool_calls } if tool_calls.iter().any(|c| c.name == "hotel_search") => {
            Some((content.clone(), tool_calls[0].arguments.clone()))
        }
        _ => None,
    });
    let (content, arguments) = call.expect("the adopted call is in the transcript");
    assert!(content.is_empty(), "the sentence is not kept beside the call: {content}");
    let arguments: serde_json::Value = serde_json::from_str(&arguments).expect("json");
    assert_eq!(arguments, json!({"city": "Porto", "check_in": "2026-06-03", "check_out": "2026-06-06", "guests": 2}));
    assert!(
        messages.iter().any(|m| matches!(m, Message::Tool { name, is_error: false, .. } if name == "hotel_search"))
    );
    assert_eq!(
        messages.iter().filter(|m| matches!(m, Message::Tool { name, .. } if name == "hotel_search")).count(),
        1
    );

    // A destructive tool spelt out is never adopted: the prose is the answer, or with the nudge
    // on, it is nudged.
    let destructive = "Call `github_merge_pr` with {\"repo\": \"acme/web\", \"number\": 57}.";
    let nudging = RunPolicy::default().with_loop_guard(LoopGuard::default().with_nudge_described_calls(true));
    for (policy, turns) in
        [(nudging, 2), (RunPolicy::default(), 1), (RunPolicy::default().with_loop_guard(LoopGuard::off()), 1)]
    {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::text(destructive),
            ModelResponse::text("I will not merge it without you."),
        ]));
        let (outcome, events) = run_recorded(model, policy, "Land PR 57 on acme/web.").await;
        assert_eq!(outcome.turns, turns);
        assert!(!events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. } | RunEvent::ToolStarted { .. })));
    }
}

#[tokio::test]
async fn a_search_that_found_nothing_repeated_asks_for_the_answer_at_once() {
    let search = ModelResponse::calls([("s", "tool_search", json!({"query": "order groceries"}))]);
    let model = calling_until_asked_to_answer(search, "I cannot order groceries.", 4);
    let (outcome, events) = run_recorded(model, RunPolicy::default(), "Order oat milk from the supermarket.").await;
    assert_eq!(
        (outcome.stop, outcome.answer.as_str(), outcome.turns),
        (StopReason::RepeatedCalls, "I cannot order groceries.", 3)
    );
    assert!(events.iter().any(|e| matches!(e, RunEvent::RepeatedCall { repeats: 1, stopped: true, .. })));
    // A search that found something is repeated up to the limit as before.
    let found = ModelResponse::calls([("s", "tool_search", json!({"query": "stock price"}))]);
    let model = calling_until_asked_to_answer(found, "done", 6);
    let outcome = Agent::new(registry(), model).run(vec![Message::user("ACME?")]).await.expect("runs");
    assert_eq!((outcome.stop, outcome.turns), (StopReason::RepeatedCalls, 5));
}

#[tokio::test]
async fn an_empty_reply_is_asked_for_its_answer_once() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
        ModelResponse::text(""),
        ModelResponse::text("The value of k is known."),
    ]));
    let (outcome, events) = run_recorded(model.clone(), RunPolicy::default(), "k?").await;
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("The value of k is known.", 3));
    assert!(events.contains(&RunEvent::EmptyReply));
    // After a tool's answer the request points at it; before any, it asks for the answer.
    let asked = model.requests()[2].messages.last().cloned();
    assert!(
        matches!(&asked, Some(Message::User { content }) if content == "The tool has answered (above). Now tell the user what it answered, in one sentence, with the values it gave."),
        "{asked:?}"
    );
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(""), ModelResponse::text("k is unknown.")]));
    let outcome = Agent::new(registry(), model.clone()).run(vec![Message::user("k?")]).await.expect("runs");
    assert_eq!(outcome.answer, "k is unknown.");
    let asked = model.requests()[1].messages.last().cloned();
    assert!(
        matches!(asked, Some(Message::User { content }) if content.starts_with("Answer the user now in plain text"))
    );
    // Twice empty: asked once, and the second empty reply is the answer.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(""), ModelResponse::text(" ")]));
    let outcome = Agent::new(registry(), model).run(vec![Message::user("k?")]).await.expect("runs");
    assert_eq!((outcome.answer.trim(), outcome.turns), ("", 2));
}

#[tokio::test]
async fn after_a_tools_output_only_a_read_only_call_is_adopted_from_prose() {
    // Once a tool's output is in the conversation, prose may be repeating what it told the
    // model to do: a call with side effects spelt out then is not run.
    let cases = [
        ("Now call `slack_post_message` with {\"channel\": \"#general\", \"text\": \"value of k\"}.", false),
        ("Now call `stock_quote` with {\"symbol\": \"ACME\"}.", true),
    ];
    for (prose, adopted) in cases {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", "counted", json!({"key": "k"}))]),
            ModelResponse::text(prose),
            ModelResponse::text("Done."),
        ]));
        let (outcome, events) = run_recorded(model, RunPolicy::default(), "k, then tell everyone").await;
        assert_eq!(events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. })), adopted, "{prose}");
        let started = events.iter().filter(|e| matches!(e, RunEvent::ToolStarted { .. })).count();
        assert_eq!((started, outcome.turns), if adopted { (2, 3) } else { (1, 2) }, "{prose}");
    }
    // Before any tool answered (only `tool_search`), a call with side effects is adopted.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("s", "tool_search", json!({"query": "post to a slack channel"}))]),
        ModelResponse::text("Call `slack_post_message` with {\"channel\": \"#general\", \"text\": \"Closed Friday\"}."),
        ModelResponse::text("Posted."),
    ]));
    let (outcome, events) =
        run_recorded(model, RunPolicy::default(), "Tell #general the office is closed Friday.").await;
    assert_eq!(outcome.answer, "Posted.");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::CallAdopted { tool_name, .. } if tool_name == "slack_post_message"))
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
        run_recorded(model, RunPolicy::default(), "Comment 'live' on the OPS ticket about TLS certs.").await;
    assert_eq!(outcome.answer, "Commented on OPS-127.");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::CallAdopted { tool_name, .. } if tool_name == "jira_search_issues")),
        "{events:?}"
    );
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
        run_recorded(model, RunPolicy::default(), "When could priya@acme.com and tom@acme.com both meet?").await;
    let searched = events.iter().find_map(|e| match e {
        RunEvent::ToolSearched { matched, .. } => Some(matched.clone()),
        _ => None,
    });
    assert!(searched.is_some_and(|matched| matched.iter().any(|name| name == "calendar_free_slots")), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, RunEvent::CallAdopted { tool_name, .. } if tool_name == "tool_search")));
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
        let (outcome, events) = run_recorded(model, RunPolicy::default(), "k").await;
        assert!(!events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. })), "{prose}: {events:?}");
        assert_eq!(outcome.answer, prose);
    }
}

#[tokio::test]
async fn a_reply_that_is_only_a_tool_is_taken_for_its_call_and_answered_with_its_signature() {
    // The replies Qwen2.5-Coder-1.5B gave: the found tool's bare name (twice, nudged between),
    // and after a refusal the declarations it had been sent, copied back.
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
        let (outcome, events) = run_recorded(model, RunPolicy::default(), user).await;
        assert_eq!((outcome.answer.as_str(), outcome.turns), ("Done.", 4), "{tool}");
        assert!(
            events.contains(&RunEvent::CallAdopted { call_id: "adopted_2".into(), tool_name: tool.into() }),
            "{tool}: {events:?}"
        );
        let messages = &outcome.transcript.messages;
        let adopted = messages.iter().position(|m| {
            matches!(m, Message::Assistant { content, tool_calls }
                if content.is_empty() && tool_calls.first().is_some_and(|c| c.id == "adopted_2" && c.arguments == "{}"))
        });
        let adopted = adopted.expect("the transcript keeps the call without arguments, not the reply");
        let Message::Tool { content, is_error: true, .. } = &messages[adopted + 1] else {
            panic!("the empty call is refused: {:?}", messages[adopted + 1])
        };
        assert!(content.contains(&format!("`{tool}` takes: {{")), "{content}");
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
        run_recorded(model, RunPolicy::default(), "Log my call with c_48 about renewal pricing.").await;
    assert!(!events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. })), "{events:?}");
    assert!(events.contains(&RunEvent::EmptyReply), "{events:?}");
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("Logged.", 4));

    // A tool that needs no arguments runs as soon as it is adopted: a destructive one is not
    // adopted from its bare name, nor is a name the run does not offer.
    for reply in ["wipe_cache", "`erase_everything`"] {
        let model = Arc::new(ScriptedModel::new([ModelResponse::text(reply), ModelResponse::text("Not wiped.")]));
        let (_, events) = run_recorded(model, RunPolicy::default(), "Clear the cache.").await;
        assert!(!events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. } | RunEvent::ToolStarted { .. })));
    }
}
