//! The typed layer: a hand-written `TypedTool` is a `Tool` through one blanket impl, which
//! reads its arguments, converts its output and sorts its error; `#[tool]` writes the same
//! impl; the registry's `ToolSpec` is the one fact sheet every view reads.

use std::sync::Arc;

use serde_json::json;
use tinytools::model::{Message, ModelResponse};
use tinytools::surface::Surface;
use tinytools::testkit::ScriptedModel;
use tinytools::{
    Agent, Json, Refusal, Tool, ToolAnnotations, ToolContext, ToolError, ToolExposure, ToolRegistry, ToolSpec,
    TypedTool, tool,
};

/// A ticker: upper-case letters only. The schema says "string"; serde says more.
#[derive(Debug, serde::Deserialize)]
#[serde(try_from = "String")]
struct Ticker(String);

impl TryFrom<String> for Ticker {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        if !text.is_empty() && text.chars().all(|c| c.is_ascii_uppercase()) {
            Ok(Self(text))
        } else {
            Err(format!("`{text}` is not an upper-case ticker"))
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct QuoteArgs {
    /// Ticker symbol, such as ACME.
    #[schemars(with = "String")]
    symbol: Ticker,
}

#[derive(serde::Serialize)]
struct Quote {
    symbol: String,
    price: f64,
}

#[derive(Debug, thiserror::Error)]
#[error("the quote feed at {url} is down")]
struct FeedDown {
    url: &'static str,
}

struct StockQuote;

impl TypedTool for StockQuote {
    type Args = QuoteArgs;
    type Output = Json<Quote>;
    type Error = anyhow::Error;

    fn spec(&self) -> &ToolSpec {
        static SPEC: ToolSpec = ToolSpec::new("stock_quote", "Fetch the latest price for a ticker symbol.")
            .with_exposure(ToolExposure::Deferred)
            .with_family("finance")
            .with_annotations(ToolAnnotations::READ_ONLY);
        &SPEC
    }

    async fn call(&self, args: QuoteArgs, _: &ToolContext) -> Result<Json<Quote>, anyhow::Error> {
        match args.symbol.0.as_str() {
            "ACME" => Ok(Json(Quote { symbol: args.symbol.0, price: 12.5 })),
            "DOWN" => Err(FeedDown { url: "https://feed.internal/?key=s3cr3t" }.into()),
            other => Err(Refusal::new(format!("no listing for `{other}`")).into()),
        }
    }
}

#[tokio::test]
async fn a_typed_tool_is_a_tool_whose_facts_come_from_its_spec() {
    let tool: &dyn Tool = &StockQuote;
    assert_eq!((tool.name(), tool.exposure(), tool.family()), ("stock_quote", ToolExposure::Deferred, Some("finance")));
    assert_eq!(tool.annotations(), ToolAnnotations::READ_ONLY);
    let schema = tool.parameters_schema();
    assert_eq!(schema["properties"]["symbol"]["type"], "string");
    assert_eq!(schema["properties"]["symbol"]["description"], "Ticker symbol, such as ACME.");
    assert_eq!(schema["required"], json!(["symbol"]));
}

#[tokio::test]
async fn output_refusal_failure_and_arguments_are_each_sorted_once() {
    let mut registry = ToolRegistry::new();
    registry.register(StockQuote).expect("registers");
    let quote = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("runs");
    assert_eq!(quote.to_model_text(), r#"{"price":12.5,"symbol":"ACME"}"#);
    assert!(!quote.is_error);

    let refused = registry.dispatch("stock_quote", json!({"symbol": "XYZ"})).await.expect("a refusal is an answer");
    assert!(refused.is_error);
    assert_eq!(refused.to_model_text(), "no listing for `XYZ`");

    let failed = registry.dispatch("stock_quote", json!({"symbol": "DOWN"})).await.expect_err("a failure");
    let ToolError::Failed { tool, source } = &failed else { panic!("Failed, got {failed:?}") };
    assert_eq!(tool, "stock_quote");
    assert!(source.downcast_ref::<FeedDown>().is_some(), "the host gets the error itself: {source:?}");
    assert!(!failed.to_model_result().to_model_text().contains("s3cr3t"), "the model never reads it");

    // The schema admits any string; the type refuses this one. No string matching, no downcast:
    // the typed layer reports it as what it is.
    let rejected = registry.dispatch("stock_quote", json!({"symbol": "acme"})).await.expect_err("refused");
    let ToolError::InvalidArguments { tool, violations } = &rejected else { panic!("InvalidArguments: {rejected:?}") };
    assert_eq!(tool, "stock_quote");
    assert!(violations[0].message.contains("not an upper-case ticker"), "{violations:?}");
}

#[tokio::test]
async fn a_run_answers_a_type_refusal_with_the_signature_and_goes_on() {
    let mut registry = ToolRegistry::new();
    registry.register(StockQuote).expect("registers");
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "acme"}))]),
        ModelResponse::calls([("c2", "stock_quote", json!({"symbol": "ACME"}))]),
        ModelResponse::text("ACME is at 12.50"),
    ]));
    let outcome = Agent::new(Arc::new(registry), model).run(vec![Message::user("ACME?")]).await.expect("runs");
    let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[2] else { panic!("a tool answer") };
    assert!(*is_error);
    assert!(content.contains("not an upper-case ticker"), "{content}");
    assert!(content.contains("`stock_quote` takes: {symbol: string}"), "{content}");
    assert_eq!(outcome.answer, "ACME is at 12.50");
}

/// Fetch the latest price for a ticker symbol.
#[tool(exposure = "deferred", family = "finance", read_only)]
async fn macro_quote(
    /** Ticker symbol. */
    symbol: String,
) -> String {
    format!("{symbol} 12.50")
}

/// Works with any typed tool, by its types.
fn describe<T: TypedTool>(tool: &T) -> String {
    format!("{} ({})", tool.spec().name, std::any::type_name::<T::Output>())
}

#[test]
fn tool_writes_the_typed_impl() {
    assert!(describe(&MacroQuote).starts_with("macro_quote (") && describe(&MacroQuote).ends_with("ToolResult)"));
    let spec = MacroQuote.spec();
    assert_eq!((spec.exposure, spec.family.as_deref()), (ToolExposure::Deferred, Some("finance")));
    assert_eq!(spec.annotations, ToolAnnotations::READ_ONLY);
}

#[test]
fn the_registrys_spec_is_what_every_view_reads_after_register_as() {
    let mut registry = ToolRegistry::new();
    registry.register_as(Arc::new(StockQuote), ToolExposure::Hidden).expect("registers");
    registry.register(MacroQuote).expect("registers");
    let entry = registry.get("stock_quote").expect("registered");
    // The tool's own method still says Deferred; the registry's fact sheet says Hidden, and
    // every view reads that one.
    assert_eq!(entry.tool().exposure(), ToolExposure::Deferred);
    assert_eq!(entry.spec().exposure, ToolExposure::Hidden);
    assert_eq!(entry.exposure(), ToolExposure::Hidden);
    let surface = Surface::new(&registry, &[]);
    assert!(!surface.admits("stock_quote"), "Hidden: in no view");
    assert!(surface.admits("macro_quote"));
    let shown = surface.deferred().find(|tool| tool.schema().name == "macro_quote").expect("deferred");
    assert!(
        std::ptr::eq(shown.spec(), registry.get("macro_quote").expect("registered").spec()),
        "borrowed, not copied"
    );
}
