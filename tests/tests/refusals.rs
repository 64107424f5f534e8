//! Who reads a tool's error: a `Refusal` is the model's, word for word; every other error is
//! the host's (whole, with its source chain), and the model learns only that the tool failed.
//! The audience is chosen by the error's type, whatever the return type is spelt as.

use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Value, json};
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, RunEvent};
use tinytools::testkit::ScriptedModel;
use tinytools::{Refusal, Tool, ToolError, ToolRegistry, ToolResult, tool};
use tinytools_integration_tests::Recorder;

/// A secret a failure's cause carries: it must reach the host and never the model.
const SECRET: &str = "postgres://admin:hunter2@db.internal/quotes";

#[derive(Debug, thiserror::Error)]
#[error("the quote database did not answer")]
struct Unreachable {
    #[source]
    cause: std::io::Error,
}

fn unreachable() -> Unreachable {
    Unreachable { cause: std::io::Error::other(format!("connection to {SECRET} refused")) }
}

/// The error half spelt through an alias, as many crates do.
type QuoteResult<T> = Result<T, Refusal>;

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn stock_quote(
    /// Ticker symbol, such as ACME.
    symbol: String,
) -> QuoteResult<String> {
    match symbol.as_str() {
        "ACME" => Ok("ACME 12.50".into()),
        other => Err(Refusal::new(format!("unknown ticker {other}; use an exchange symbol such as ACME"))),
    }
}

/// Fetch the dividend history of a ticker symbol.
#[tool]
async fn dividends(
    /// Ticker symbol.
    symbol: String,
) -> Result<String, Unreachable> {
    let _ = symbol;
    Err(unreachable())
}

/// Read an account's holdings.
#[tool]
fn holdings(
    /// Account id.
    account: String,
) -> anyhow::Result<Vec<String>> {
    if account == "closed" {
        // A refusal keeps its audience through `anyhow`, context and all.
        return Err(Refusal::new("account closed; ask for an open one")).context("checking the account");
    }
    Err(unreachable()).context("loading holdings")
}

/// A plain value spelt through an alias of `Result` is still split: no `{"Ok": ..}` on the wire.
#[tool]
async fn tickers() -> QuoteResult<Vec<String>> {
    Ok(vec!["ACME".into(), "INIT".into()])
}

/// A hand-written tool that refuses with the typed error rather than an error result.
struct MarketHours;

#[async_trait::async_trait]
impl Tool for MarketHours {
    fn name(&self) -> &str {
        "market_hours"
    }
    fn description(&self) -> &str {
        "Whether the market is open."
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        Err(Refusal::new("market closed: try again after 09:30 ET").into())
    }
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(StockQuote)
        .and_then(|r| r.register(Dividends))
        .and_then(|r| r.register(Holdings))
        .and_then(|r| r.register(Tickers))
        .and_then(|r| r.register(MarketHours))
        .expect("registers");
    registry
}

#[tokio::test]
async fn a_refusal_behind_a_result_alias_is_an_error_result_the_model_reads() {
    let registry = registry();
    let refused = registry.dispatch("stock_quote", json!({"symbol": "XX"})).await.expect("a refusal is an answer");
    assert!(refused.is_error);
    assert_eq!(refused.to_model_text(), "unknown ticker XX; use an exchange symbol such as ACME");
    let quote = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("runs");
    assert!(!quote.is_error);
    assert_eq!(quote.to_model_text(), "ACME 12.50");
    let list = registry.dispatch("tickers", json!({})).await.expect("runs");
    assert_eq!(list.to_model_text(), r#"["ACME","INIT"]"#);
}

#[tokio::test]
async fn a_failure_keeps_its_chain_for_the_host_and_gives_the_model_nothing_of_it() {
    let registry = registry();
    for (name, args) in [("dividends", json!({"symbol": "ACME"})), ("holdings", json!({"account": "a1"}))] {
        let error = registry.dispatch(name, args).await.expect_err("a failure is the host's error");
        let ToolError::Failed { tool, source } = &error else { panic!("{name}: {error}") };
        assert_eq!(tool, name);
        let chain: Vec<String> = source.chain().map(ToString::to_string).collect();
        assert!(chain.iter().any(|cause| cause.contains(SECRET)), "{name}: the host gets the cause: {chain:?}");
        assert!(error.to_string().contains(SECRET), "{name}: Display shows the chain: {error}");
        let note = error.to_model_result();
        assert!(note.is_error);
        assert!(!note.to_model_text().contains("hunter2"), "{name}: {}", note.to_model_text());
        assert!(!note.to_model_text().contains("database"), "{name}: not even the outer message");
    }
}

#[tokio::test]
async fn a_refusal_inside_anyhow_and_from_a_hand_written_tool_is_still_a_refusal() {
    let registry = registry();
    let closed = registry.dispatch("holdings", json!({"account": "closed"})).await.expect("a refusal");
    assert!(closed.is_error);
    assert_eq!(closed.to_model_text(), "account closed; ask for an open one");

    let hours = registry.dispatch("market_hours", json!({})).await.expect("a refusal");
    assert!(hours.is_error);
    assert_eq!(hours.to_model_text(), "market closed: try again after 09:30 ET");
    // A host running the tool itself matches the typed error.
    let error = MarketHours.execute(json!({})).await.expect_err("refuses");
    assert_eq!(error.downcast_ref::<Refusal>().map(Refusal::message), Some("market closed: try again after 09:30 ET"));
}

#[tokio::test]
async fn in_a_run_the_model_reads_the_refusal_and_a_reference_to_the_failure() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([
            ("call_q", "stock_quote", json!({"symbol": "XX"})),
            ("call_d", "dividends", json!({"symbol": "ACME"})),
        ]),
        ModelResponse::text("The dividend service is down."),
    ]));
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(registry()), model.clone()).with_events(recorder.clone());
    let outcome = agent.run(vec![Message::user("ACME's dividends and XX's price?")]).await.expect("the run goes on");
    assert_eq!(outcome.answer, "The dividend service is down.");

    let answers: Vec<(&str, bool, &str)> = outcome
        .transcript
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, is_error, content, .. } => Some((call_id.as_str(), *is_error, content.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0], ("call_q", true, "unknown ticker XX; use an exchange symbol such as ACME"));
    let (_, failed, note) = answers[1];
    assert!(failed && note.contains("failed") && note.contains("Reference: call_d."), "{note}");

    // Nothing the model was sent holds the secret or the cause's words.
    let sent = serde_json::to_string(&model.requests().iter().map(|r| &r.messages).collect::<Vec<_>>()).expect("json");
    assert!(!sent.contains("hunter2") && !sent.contains("quote database"), "{sent}");

    // The host's event has all of it.
    let failures: Vec<(String, String)> = recorder
        .events()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ToolFailed { call_id, error, .. } => Some((call_id, error)),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].0, "call_d");
    assert!(
        failures[0].1.contains("the quote database did not answer") && failures[0].1.contains(SECRET),
        "{failures:?}"
    );
}
