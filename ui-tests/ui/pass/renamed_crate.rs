//! The runtime reached by another path (a facade that re-exports it, as a renamed dependency
//! or a company crate would): `crate = "..."` points the expansion at it (the expansion
//! snapshot `renamed_runtime_crate_and_struct_name` checks that no `tinytools` path is left),
//! and `ident = "..."` frees the default struct name for the tool's own output type.

mod renamed_tools {
    pub use tinytools::*;
}

use renamed_tools::{Refusal, Tool, ToolRegistry, tool};
use serde_json::json;

#[derive(serde::Serialize)]
struct StockQuote {
    symbol: String,
    price: f64,
}

/// The error half through an alias.
type Outcome<T> = Result<T, Refusal>;

/// Fetch the latest price for a ticker symbol.
#[tool(crate = "crate::renamed_tools", ident = "QuoteTool", read_only)]
async fn stock_quote(
    /// Ticker symbol, such as ACME.
    symbol: String,
) -> Outcome<StockQuote> {
    match symbol.as_str() {
        "ACME" => Ok(StockQuote { symbol, price: 12.5 }),
        other => Err(Refusal::new(format!("unknown ticker {other}"))),
    }
}

/// No description needed for a tool the model never sees.
#[tool(crate = "crate::renamed_tools", exposure = "hidden")]
fn purge() {}

/// An explicit empty description is a choice, not an oversight.
#[tool(crate = "crate::renamed_tools", description = "")]
fn ping() -> &'static str {
    "pong"
}

fn main() {
    assert_eq!(QuoteTool.name(), "stock_quote");
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let mut registry = ToolRegistry::new();
        registry.register(QuoteTool).unwrap().register(Purge).unwrap().register(Ping).unwrap();
        let quote = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await.unwrap();
        assert_eq!(quote.to_model_text(), r#"{"price":12.5,"symbol":"ACME"}"#);
        let refused = registry.dispatch("stock_quote", json!({"symbol": "XX"})).await.unwrap();
        assert!(refused.is_error);
        assert_eq!(refused.to_model_text(), "unknown ticker XX");
        assert_eq!(registry.dispatch("purge", json!({})).await.unwrap().to_model_text(), "ok");
        assert_eq!(registry.dispatch("ping", json!({})).await.unwrap().to_model_text(), "pong");
    });
}
