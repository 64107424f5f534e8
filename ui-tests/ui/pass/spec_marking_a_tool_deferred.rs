//! The spec's "Marking a tool deferred" snippet, as written (its two `/* … */` bodies filled
//! in): a hand-written `Tool` with `async_trait` and `anyhow`, registered as usual.

use tinytools::{Tool, ToolExposure};

struct StockQuote;

#[async_trait::async_trait]
impl Tool for StockQuote {
    fn name(&self) -> &str { "stock_quote" }
    fn description(&self) -> &str { "Fetch the latest price for a ticker symbol." }
    fn parameters_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]})
    }
    fn exposure(&self) -> ToolExposure { ToolExposure::Deferred }
    async fn execute(&self, args: serde_json::Value) -> anyhow::Result<tinytools::ToolResult> {
        Ok(tinytools::ToolResult::text(format!("{} is at 12.50", args["symbol"])))
    }
}

fn main() {
    let mut registry = tinytools::ToolRegistry::new();
    registry.register(StockQuote).expect("registers as usual");
    assert!(registry.schemas().is_empty(), "Deferred: not in the tools array");
    assert_eq!(registry.get("stock_quote").map(|tool| tool.exposure()), Some(ToolExposure::Deferred));
}
