//! Admission and dispatch: every violation at once, malformed JSON, refusals, failures, panics.

use std::sync::Arc;

use serde_json::json;
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, RunEvent};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolContext, ToolError, ToolRegistry, tool};
use tinytools_integration_tests::Recorder;

/// Options for a quote.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct QuoteOptions {
    /// Recent trades to include.
    #[schemars(range(max = 50))]
    limit: Option<u32>,
}

/// Fetch the latest price for a ticker symbol.
#[tool(read_only)]
async fn stock_quote(
    /// Ticker symbol.
    symbol: String,
    /// Extra options.
    options: Option<QuoteOptions>,
    /// Exchange to ask.
    exchange: Option<String>,
) -> Result<String, tinytools::Refusal> {
    if symbol == "NOPE" {
        return Err("unknown ticker NOPE; use a listed symbol such as ACME".into());
    }
    let limit = options.and_then(|o| o.limit).unwrap_or(0);
    Ok(format!("{symbol}@{} limit={limit}", exchange.unwrap_or_else(|| "NYSE".into())))
}

/// Always fails to reach its backend.
#[tool]
async fn flaky_backend() -> Result<String, std::convert::Infallible> {
    Ok("unreachable".into())
}

struct Broken;

#[async_trait::async_trait]
impl tinytools::Tool for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn description(&self) -> &str {
        "Cannot reach its database."
    }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {}})
    }
    async fn execute(&self, _args: serde_json::Value) -> anyhow::Result<tinytools::ToolResult> {
        anyhow::bail!("connection refused: postgres://admin:s3cret@db.internal:5432")
    }
}

/// Panics on purpose.
#[tool]
async fn explode(
    /// Anything.
    reason: String,
) -> String {
    panic!("boom: {reason}")
}

/// Echo the call id.
#[tool]
async fn whoami(ctx: &ToolContext, shout: Option<bool>) -> String {
    let id = ctx.call_id().to_owned();
    if shout.unwrap_or(false) { id.to_uppercase() } else { id }
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(StockQuote)
        .and_then(|r| r.register(FlakyBackend))
        .and_then(|r| r.register(Broken))
        .and_then(|r| r.register(Explode))
        .and_then(|r| r.register(Whoami))
        .expect("valid tools register");
    registry
}

#[tokio::test]
async fn every_violation_is_reported_at_once_with_its_pointer() {
    let err = registry()
        .dispatch("stock_quote", json!({"options": {"limit": "ten"}, "exchange": 7}))
        .await
        .expect_err("three violations");
    let ToolError::InvalidArguments { tool, violations } = &err else { panic!("{err}") };
    assert_eq!(tool, "stock_quote");
    let mut pointers: Vec<_> = violations.iter().map(|v| v.pointer.as_str()).collect();
    pointers.sort_unstable();
    assert_eq!(pointers, ["", "/exchange", "/options/limit"], "{violations:?}");
    assert!(violations.iter().any(|v| v.pointer.is_empty() && v.message.contains("\"symbol\"")), "{violations:?}");

    let answer = err.to_model_result();
    assert!(answer.is_error);
    let text = answer.to_model_text();
    assert!(text.contains("(3 problems)"), "{text}");
    assert!(text.contains("at `/options/limit`"), "{text}");
    assert!(text.contains("at the top level"), "{text}");
}

#[tokio::test]
async fn schema_constraints_beyond_types_are_enforced() {
    let err = registry()
        .dispatch("stock_quote", json!({"symbol": "ACME", "options": {"limit": 51}}))
        .await
        .expect_err("over max");
    let ToolError::InvalidArguments { violations, .. } = &err else { panic!("{err}") };
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].pointer, "/options/limit");
    assert!(violations[0].message.contains("50"), "{violations:?}");
}

#[tokio::test]
async fn valid_arguments_reach_the_tool_with_nested_values() {
    let result =
        registry().dispatch("stock_quote", json!({"symbol": "ACME", "options": {"limit": 3}})).await.expect("valid");
    assert_eq!(result.to_model_text(), "ACME@NYSE limit=3");
    assert!(!result.is_error);
}

#[tokio::test]
async fn a_tool_that_ran_and_refused_is_an_error_result_not_an_error() {
    let result = registry().dispatch("stock_quote", json!({"symbol": "NOPE"})).await.expect("ran");
    assert!(result.is_error);
    assert_eq!(result.to_model_text(), "unknown ticker NOPE; use a listed symbol such as ACME");
}

#[tokio::test]
async fn raw_arguments_malformed_empty_and_not_an_object() {
    let registry = registry();
    let ctx = ToolContext::new("call_1");
    let err = registry.dispatch_raw("stock_quote", r#"{"symbol": "ACME""#, &ctx).await.expect_err("truncated JSON");
    assert!(matches!(err, ToolError::MalformedArguments { .. }), "{err}");
    assert!(err.to_model_result().to_model_text().contains("not valid JSON"));

    let ok = registry.dispatch_raw("whoami", "", &ctx).await.expect("empty means {}");
    assert_eq!(ok.to_model_text(), "call_1");

    let err = registry.dispatch_raw("stock_quote", "[1, 2]", &ctx).await.expect_err("not an object");
    let ToolError::InvalidArguments { violations, .. } = &err else { panic!("{err}") };
    assert!(violations[0].message.contains("object"), "{violations:?}");

    let err = registry.dispatch_raw("nope", "{", &ctx).await.expect_err("unknown first");
    assert!(matches!(err, ToolError::UnknownTool { .. }), "an unknown name is reported before the JSON");
}

#[tokio::test]
async fn a_tool_that_could_not_run_keeps_its_detail_from_the_model() {
    let err = registry().dispatch("broken", json!({})).await.expect_err("failed");
    assert!(matches!(&err, ToolError::Failed { tool, .. } if tool == "broken"));
    assert!(err.to_string().contains("connection refused"), "the host sees the cause: {err}");
    let answer = err.to_model_result().to_model_text();
    assert!(!answer.contains("s3cret") && !answer.contains("postgres://"), "{answer}");
    assert!(answer.contains("`broken` failed"), "{answer}");
}

#[tokio::test]
async fn a_panicking_tool_is_contained_and_the_registry_goes_on() {
    let registry = registry();
    let err = registry.dispatch("explode", json!({"reason": "test"})).await.expect_err("panicked");
    assert!(
        matches!(&err, ToolError::Panicked { tool, message } if tool == "explode" && message == "boom: test"),
        "{err}"
    );
    let after = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("still works");
    assert!(!after.is_error);
}

#[tokio::test]
async fn the_context_reaches_the_tool_and_stays_out_of_the_schema() {
    let registry = registry();
    let schema = &registry.get("whoami").expect("registered").schema().parameters;
    assert!(schema["properties"].get("ctx").is_none());
    let ctx = ToolContext::new("call_42");
    let result = registry.dispatch_with("whoami", json!({"shout": true}), &ctx).await.expect("runs");
    assert_eq!(result.to_model_text(), "CALL_42");
    // Outside a run the context is detached: an empty call id.
    assert_eq!(registry.dispatch("whoami", json!({})).await.expect("runs").to_model_text(), "");
}

#[tokio::test]
async fn an_infallible_result_is_plain_output() {
    let result = registry().dispatch("flaky_backend", json!({})).await.expect("runs");
    assert_eq!(result.to_model_text(), "unreachable");
}

/// Takes what it is given.
#[tool(read_only, allow_unknown_arguments)]
async fn lenient(
    /// A key.
    key: String,
) -> String {
    key
}

#[tokio::test]
async fn arguments_a_tool_does_not_declare_are_refused_unless_it_allows_them() {
    let mut registry = registry();
    registry.register(Lenient).expect("registers");
    let schema = &registry.get("stock_quote").expect("registered").schema().parameters;
    assert_eq!(schema["additionalProperties"], false, "{schema}");
    let err = registry.dispatch("stock_quote", json!({"symbol": "ACME", "ticker": "ACME"})).await.expect_err("refused");
    let ToolError::InvalidArguments { violations, .. } = &err else { panic!("{err}") };
    assert_eq!(violations.len(), 1);
    assert!(violations[0].message.contains("ticker"), "the model learns which key was wrong: {violations:?}");
    // Opting out admits the extra key; serde ignores it.
    let lenient = registry.dispatch("lenient", json!({"key": "k", "extra": 1})).await.expect("admitted");
    assert_eq!(lenient.to_model_text(), "k");
    assert!(registry.get("lenient").expect("registered").schema().parameters.get("additionalProperties").is_none());
}

/// A tree of any depth: its schema refers to itself.
struct Tree;

#[async_trait::async_trait]
impl tinytools::Tool for Tree {
    fn name(&self) -> &str {
        "tree"
    }
    fn description(&self) -> &str {
        "Counts the levels of a tree."
    }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {"child": {"$ref": "#"}}})
    }
    async fn execute(&self, args: serde_json::Value) -> anyhow::Result<tinytools::ToolResult> {
        let mut levels = 0;
        let mut at = &args;
        while let Some(child) = at.get("child") {
            levels += 1;
            at = child;
        }
        Ok(tinytools::ToolResult::text(levels.to_string()))
    }
}

/// `{"child": {"child": ... {} ...}}`, `depth` objects deep, built without recursion (`json!`
/// with a value inside would serialize it recursively).
fn tree(depth: usize) -> serde_json::Value {
    let mut value = json!({});
    for _ in 1..depth {
        let mut object = serde_json::Map::new();
        object.insert("child".into(), value);
        value = serde_json::Value::Object(object);
    }
    value
}

#[tokio::test]
async fn arguments_ten_thousand_levels_deep_are_refused_without_overflowing_the_stack() {
    let mut registry = ToolRegistry::new();
    registry.register(Tree).expect("registers");
    // Validating this against the recursive schema (or dropping it) recurses once per level.
    let err = registry.dispatch("tree", tree(10_000)).await.expect_err("too deep");
    let ToolError::InvalidArguments { violations, .. } = &err else { panic!("{err}") };
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(err.to_string().contains(&format!("more than {} levels deep", tinytools::MAX_ARGUMENT_DEPTH)), "{err}");
    assert!(err.to_model_result().to_model_text().contains("send a flatter value"));
    // An unknown name with such arguments is answered as well.
    let err = registry.dispatch("no_such_tool", tree(10_000)).await.expect_err("unknown");
    assert!(matches!(err, ToolError::UnknownTool { .. }), "{err}");
    // At the limit the call runs.
    let ran = registry.dispatch("tree", tree(tinytools::MAX_ARGUMENT_DEPTH)).await.expect("at the limit");
    assert_eq!(ran.to_model_text(), (tinytools::MAX_ARGUMENT_DEPTH - 1).to_string());
    let err = registry.dispatch("tree", tree(tinytools::MAX_ARGUMENT_DEPTH + 1)).await.expect_err("past it");
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
}

const PERSONAL: &str = "jane.doe.1984@example.com";

#[tokio::test]
async fn a_rejection_tells_the_model_the_value_but_the_host_only_where_and_what() {
    let err = registry()
        .dispatch("stock_quote", json!({"symbol": PERSONAL, "options": {"limit": PERSONAL}, "exchange": 7}))
        .await
        .expect_err("two violations");
    let shown = err.to_string();
    assert!(!shown.contains("jane"), "{shown}");
    assert!(shown.contains("at `/options/limit`: the value is not of types"), "{shown}");
    assert!(shown.contains("at `/exchange`"), "{shown}");
    assert!(err.to_model_result().to_model_text().contains(PERSONAL), "the model may still read what it sent");

    // The run's `ToolRejected` event carries the same value-free reason.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "ACME", "options": {"limit": PERSONAL}}))]),
        ModelResponse::text("done"),
    ]));
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(registry()), model.clone()).with_events(recorder.clone());
    agent.run(vec![Message::user("quote")]).await.expect("runs");
    let reasons: Vec<String> = recorder
        .events()
        .into_iter()
        .filter_map(|event| match event {
            RunEvent::ToolRejected { call_id, reason } if call_id == "c1" => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(!reasons[0].contains("jane"), "{reasons:?}");
    assert!(reasons[0].contains("at `/options/limit`"), "{reasons:?}");
    let answered = model.requests()[1]
        .messages
        .iter()
        .any(|m| matches!(m, Message::Tool { content, .. } if content.contains(PERSONAL)));
    assert!(answered, "the model's answer names the value it sent");
}
