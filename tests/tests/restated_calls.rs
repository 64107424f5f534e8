//! A reply that describes again a call that has run, instead of telling what it answered, is
//! asked once for the answer (the `ask_after_empty_reply` aid, in `Aids::small_model`): measured on
//! Qwen2.5-Coder-1.5B, 7 of 40 successful tool tasks ended "To get the latest trading price of
//! GLOBX in USD, you can use the `stock_quote` function…" after the price had come back.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{AidAction, Aids, RunEvent, RunOutcome, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};
use tinytools_integration_tests::aid_acted;

const ASKED: &str =
    "The tool has answered (above). Now tell the user what it answered, in one sentence, with the values it gave.";

/// The last trading price of a share.
#[tool(read_only)]
async fn share_price(
    /// Ticker symbol.
    symbol: String,
) -> Value {
    json!({"symbol": symbol, "price": 1284.1, "currency": "USD", "venue": "XNAS"})
}

/// Says the symbol back: it brings nothing new into the conversation.
#[tool(read_only)]
async fn echo_symbol(
    /// Ticker symbol.
    symbol: String,
) -> Value {
    json!({"symbol": symbol, "ok": true})
}

/// Reads a note: its answer is text, not JSON.
#[tool(read_only)]
async fn note(
    /// The note's title.
    title: String,
) -> String {
    if title == "groceries" { "eggs, oat milk, coffee beans".to_owned() } else { format!("no note titled {title}") }
}

async fn run(model: Arc<ScriptedModel>, aids: Aids) -> (RunOutcome, Vec<RunEvent>) {
    let mut registry = ToolRegistry::new();
    registry.register(SharePrice).expect("registers").register(EchoSymbol).expect("registers");
    registry.register(Note).expect("registers");
    let policy = RunPolicy::default().with_aids(aids);
    tinytools_integration_tests::run_recorded(Arc::new(registry), model, policy, "What is GLOBX trading at?").await
}

/// Whether `ask_after_empty_reply` sent its feedback (tools still offered) in the run.
fn asked_again(events: &[RunEvent]) -> bool {
    events.contains(&RunEvent::AidActed {
        aid: "ask_after_empty_reply".to_owned(),
        action: AidAction::Feedback { without_tools: false, final_answer: false },
    })
}

const RESTATED: &str = "To get the price of GLOBX, you can call the `share_price` function with the symbol \"GLOBX\".";

#[tokio::test]
async fn a_reply_that_describes_a_call_that_ran_is_asked_once_for_its_answer() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
        ModelResponse::text("GLOBX trades at $1,284.10."),
    ]));
    let (outcome, events) = run(model.clone(), Aids::small_model()).await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "GLOBX trades at $1,284.10."));
    assert!(asked_again(&events), "{events:?}");
    let asked = model.requests()[2].messages.last().cloned();
    assert!(matches!(&asked, Some(Message::Feedback { content }) if content == ASKED), "{asked:?}");
    assert!(!model.requests()[2].tools.is_empty(), "asked as after an empty reply, tools still offered");

    // Asked once: a second restatement is the answer.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
        ModelResponse::text(RESTATED),
    ]));
    let (outcome, _) = run(model, Aids::small_model()).await;
    assert_eq!((outcome.answer.as_str(), outcome.turns), (RESTATED, 3));

    // A reply past 8 KiB is not read for a restatement.
    let long = format!("{RESTATED} {}", "More words. ".repeat(800));
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(long.clone()),
    ]));
    let (outcome, _) = run(model, Aids::small_model()).await;
    assert_eq!((outcome.answer.as_str(), outcome.turns), (long.as_str(), 2));

    // Without the request for an answer, the restatement is the answer.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
    ]));
    let (outcome, events) = run(model, Aids::small_model().without("ask_after_empty_reply")).await;
    assert_eq!(outcome.answer, RESTATED);
    assert!(!events.iter().any(|e| matches!(e, RunEvent::AidActed { .. })), "{events:?}");
}

#[tokio::test]
async fn a_reply_that_names_the_tool_and_tells_a_value_it_brought_is_the_answer() {
    for answer in [
        "Per `share_price`, GLOBX last traded at $1,284.10.",
        "`share_price` says 1284.1 USD.",
        "`share_price` answered from XNAS.",
    ] {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
            ModelResponse::text(answer),
        ]));
        let (outcome, events) = run(model, Aids::small_model()).await;
        assert_eq!((outcome.answer.as_str(), outcome.turns), (answer, 2), "{events:?}");
    }
    // A reply that names no tool that ran is never a restatement, nor is one about a tool whose
    // answer only said back what the call sent ("GLOBX" is in the question, `true` is no value).
    for (tool, answer) in [
        ("share_price", "You can look GLOBX up with `stock_quote`."),
        ("echo_symbol", "I called `echo_symbol`; it worked."),
    ] {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", tool, json!({"symbol": "GLOBX"}))]),
            ModelResponse::text(answer),
        ]));
        let (outcome, events) = run(model, Aids::small_model()).await;
        assert_eq!((outcome.answer.as_str(), outcome.turns), (answer, 2), "{events:?}");
    }
}

#[tokio::test]
async fn a_text_answer_is_told_by_its_new_words() {
    // Measured: "To get the grocery list, call the `read_note` function with the title
    // "groceries"." after the note had come back.
    let restating = "To get the grocery list, call the `note` function with the title \"groceries\".";
    for (reply, asked) in [(restating, true), ("Your `note` says: eggs, oat milk and coffee beans.", false)] {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", "note", json!({"title": "groceries"}))]),
            ModelResponse::text(reply),
            ModelResponse::text("Eggs, oat milk and coffee beans."),
        ]));
        let (outcome, events) = run(model, Aids::small_model()).await;
        assert_eq!(asked_again(&events), asked, "{reply}: {events:?}");
        let answer = if asked { "Eggs, oat milk and coffee beans." } else { reply };
        assert_eq!(outcome.answer, answer);
    }
}

#[tokio::test]
async fn after_a_replayed_repeat_a_restated_call_is_asked_once_more_and_stays_the_answer_if_nothing_follows() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c0", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::calls([("c1", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
        ModelResponse::text("GLOBX is at $1,284.10."),
    ]));
    let (outcome, events) = run(model.clone(), Aids::small_model()).await;
    assert_eq!(
        (outcome.stop, outcome.answer.as_str(), outcome.turns),
        (StopReason::Answered, "GLOBX is at $1,284.10.", 4)
    );
    let ran = events.iter().filter(|e| matches!(e, RunEvent::ToolStarted { .. })).count();
    assert_eq!(ran, 1, "the repeat is answered from the first answer: {events:?}");
    assert_eq!(
        aid_acted(&events),
        [
            ("replay_repeats", &AidAction::AnsweredCall { call_id: "c1".into(), tool_name: "share_price".into() }),
            ("replay_repeats", &AidAction::Feedback { without_tools: true, final_answer: false }),
            ("ask_after_empty_reply", &AidAction::Feedback { without_tools: false, final_answer: false }),
        ]
    );
    // The replay's request for the answer offers no tools; the restatement's offers them again.
    let requests = model.requests();
    for (i, tools) in [(2, false), (3, true)] {
        assert!(
            matches!(requests[i].messages.last(), Some(Message::Feedback { content }) if content == ASKED),
            "{i}: {:?}",
            requests[i].messages.last()
        );
        assert_eq!(!requests[i].tools.is_empty(), tools, "{i}");
    }
    // Question, call, result, repeat, its replay, the request, the restatement, the request, the
    // answer: nothing the model wrote is taken back.
    let messages = &outcome.transcript.messages;
    assert_eq!(messages.len(), 9, "{messages:?}");
    assert!(matches!(&messages[4], Message::Tool { content, is_error: false, .. }
        if content.starts_with("You already made this exact call") && content.contains("1284.1")));
    assert!(
        matches!(&messages[6], Message::Assistant { content, tool_calls } if content == RESTATED && tool_calls.is_empty())
    );

    // Asked once more, it restates the call again: the restatement is the answer.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c0", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::calls([("c1", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
        ModelResponse::text(RESTATED),
    ]));
    let (outcome, _) = run(model, Aids::small_model()).await;
    assert_eq!((outcome.stop, outcome.answer.as_str(), outcome.turns), (StopReason::Answered, RESTATED, 4));
}
