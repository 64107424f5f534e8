//! The spec's "Marking a tool deferred" example, bodies filled in, compiles as written and
//! registers exactly like a `#[tool]`-made tool.

use serde_json::json;
use tinytools::{Tool, ToolExposure, ToolRegistry};

struct StockQuote;

#[rustfmt::skip] // kept as the spec writes it
#[async_trait::async_trait]
impl Tool for StockQuote {
    fn name(&self) -> &str { "stock_quote" }
    fn description(&self) -> &str { "Fetch the latest price for a ticker symbol." }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {"symbol": {"type": "string", "description": "Ticker symbol."}},
            "required": ["symbol"]
        })
    }
    fn exposure(&self) -> ToolExposure { ToolExposure::Deferred }
    async fn execute(&self, args: serde_json::Value) -> anyhow::Result<tinytools::ToolResult> {
        let symbol = args["symbol"].as_str().unwrap_or_default();
        Ok(tinytools::ToolResult::text(format!("{symbol}: 12.50 USD")))
    }
}

mod made_by_the_macro {
    /// Fetch the latest price for a ticker symbol.
    #[tinytools::tool(exposure = "deferred")]
    pub async fn stock_quote(
        /// Ticker symbol.
        symbol: String,
    ) -> String {
        format!("{symbol}: 12.50 USD")
    }
}

#[tokio::test]
async fn hand_written_and_macro_made_tools_register_and_answer_alike() {
    let mut by_hand = ToolRegistry::new();
    by_hand.register(StockQuote).expect("registers");
    let mut by_macro = ToolRegistry::new();
    by_macro.register(made_by_the_macro::StockQuote).expect("registers");

    for registry in [&by_hand, &by_macro] {
        assert!(registry.schemas().is_empty(), "Deferred tools are not in the tools array");
        let deferred = registry.deferred_schemas();
        assert_eq!(deferred.len(), 1);
        assert_eq!(deferred[0].name, "stock_quote");
        assert_eq!(deferred[0].description, "Fetch the latest price for a ticker symbol.");
        assert_eq!(deferred[0].parameters["required"], json!(["symbol"]));
        assert_eq!(deferred[0].parameters["properties"]["symbol"]["description"], "Ticker symbol.");
        let result = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("runs");
        assert_eq!(result.to_model_text(), "ACME: 12.50 USD");
    }
    assert_eq!(by_hand.policies(), by_macro.policies().iter().map(|(n, p)| (n.to_owned(), *p)).collect());
}
