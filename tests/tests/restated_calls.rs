//! A reply that describes again a call that has run, instead of telling what it answered, is
//! asked once for the answer (`LoopGuard::ask_after_empty_reply`): measured on
//! Qwen2.5-Coder-1.5B, 7 of 40 successful tool tasks ended "To get the latest trading price of
//! GLOBX in USD, you can use the `stock_quote` function…" after the price had come back.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::{LoopGuard, RunEvent, RunOutcome, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};

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

async fn run(model: Arc<ScriptedModel>, guard: LoopGuard) -> (RunOutcome, Vec<RunEvent>) {
    let mut registry = ToolRegistry::new();
    registry.register(SharePrice).expect("registers").register(EchoSymbol).expect("registers");
    registry.register(Note).expect("registers");
    let policy = RunPolicy::default().with_loop_guard(guard);
    tinytools_integration_tests::run_recorded(Arc::new(registry), model, policy, "What is GLOBX trading at?").await
}

fn restated(name: &str) -> RunEvent {
    RunEvent::CallRestated { tool_name: name.to_owned() }
}

const RESTATED: &str = "To get the price of GLOBX, you can call the `share_price` function with the symbol \"GLOBX\".";

#[tokio::test]
async fn a_reply_that_describes_a_call_that_ran_is_asked_once_for_its_answer() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
        ModelResponse::text("GLOBX trades at $1,284.10."),
    ]));
    let (outcome, events) = run(model.clone(), LoopGuard::default()).await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "GLOBX trades at $1,284.10."));
    assert!(events.contains(&restated("share_price")), "{events:?}");
    let asked = model.requests()[2].messages.last().cloned();
    assert!(matches!(&asked, Some(Message::User { content }) if content == ASKED), "{asked:?}");
    assert!(!model.requests()[2].tools.is_empty(), "asked as after an empty reply, tools still offered");

    // Asked once: a second restatement is the answer.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
        ModelResponse::text(RESTATED),
    ]));
    let (outcome, _) = run(model, LoopGuard::default()).await;
    assert_eq!((outcome.answer.as_str(), outcome.turns), (RESTATED, 3));

    // A reply past 8 KiB is not read for a restatement.
    let long = format!("{RESTATED} {}", "More words. ".repeat(800));
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(long.clone()),
    ]));
    let (outcome, _) = run(model, LoopGuard::default()).await;
    assert_eq!((outcome.answer.as_str(), outcome.turns), (long.as_str(), 2));

    // Without the request for an answer, the restatement is the answer.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "share_price", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text(RESTATED),
    ]));
    let (outcome, events) = run(model, LoopGuard::default().with_ask_after_empty_reply(false)).await;
    assert_eq!(outcome.answer, RESTATED);
    assert!(!events.iter().any(|e| matches!(e, RunEvent::CallRestated { .. })));
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
        let (outcome, events) = run(model, LoopGuard::default()).await;
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
        let (outcome, events) = run(model, LoopGuard::default()).await;
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
        let (outcome, events) = run(model, LoopGuard::default()).await;
        assert_eq!(events.contains(&restated("note")), asked, "{reply}: {events:?}");
        let answer = if asked { "Eggs, oat milk and coffee beans." } else { reply };
        assert_eq!(outcome.answer, answer);
    }
}

/// Calls `share_price` whenever it is offered tools; offered none, replies `bare` until asked
/// in words, then `asked`.
fn repeating_then(bare: &'static str, asked: &'static str) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::dynamic(
        (0..5)
            .map(|i| {
                Box::new(move |request: &ModelRequest| {
                    let in_words =
                        matches!(request.messages.last(), Some(Message::User { content }) if content == ASKED);
                    match (request.tools.is_empty(), in_words) {
                        (true, true) => ModelResponse::text(asked),
                        (true, false) => ModelResponse::text(bare),
                        (false, _) => ModelResponse::calls([(
                            format!("c{i}").as_str(),
                            "share_price",
                            json!({"symbol": "GLOBX"}),
                        )]),
                    }
                }) as _
            })
            .collect(),
    ))
}

#[tokio::test]
async fn after_a_repeat_a_restated_call_is_asked_in_words_and_stays_the_answer_if_nothing_follows() {
    let (outcome, events) = run(repeating_then(RESTATED, "GLOBX is at $1,284.10."), LoopGuard::default()).await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "GLOBX is at $1,284.10."));
    assert!(events.contains(&restated("share_price")), "{events:?}");
    // Question, call, result, the restatement, the request, the answer.
    let messages = &outcome.transcript.messages;
    assert_eq!(messages.len(), 6, "{messages:?}");
    assert!(matches!(&messages[3], Message::Assistant { content, .. } if content == RESTATED));
    assert!(matches!(&messages[4], Message::User { content } if content == ASKED));

    // Asked in words, it says nothing: the restatement is the answer, and the request goes.
    let (outcome, _) = run(repeating_then(RESTATED, ""), LoopGuard::default()).await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, RESTATED));
    let messages = &outcome.transcript.messages;
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(
        matches!(&messages[3], Message::Assistant { content, tool_calls } if content == RESTATED && tool_calls.is_empty())
    );
}
