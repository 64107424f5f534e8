//! The expansion names everything by absolute path: a module that shadows `serde`, `schemars`,
//! `anyhow`, `async_trait`, `serde_json`, `Option`, `Result`, `Some`, `Ok` and `Err` still
//! compiles, so a user needs `tinytools` alone.

mod tools {
    #![allow(dead_code, non_camel_case_types, non_snake_case)]

    mod serde {}
    mod schemars {}
    mod anyhow {}
    mod async_trait {}
    mod serde_json {}
    struct Option;
    struct Result;
    struct Some;
    struct Ok;
    struct Err;

    use tinytools::tool;

    /// Fetch the latest price for a ticker symbol.
    #[tool(exposure = "deferred", family = "finance", max_schema_bytes = 900)]
    pub async fn stock_quote(
        /// Ticker symbol.
        symbol: String,
        /// Recent trades.
        limit: core::option::Option<u32>,
    ) -> core::result::Result<String, tinytools::Refusal> {
        core::result::Result::Ok(format!("{symbol} {limit:?}"))
    }
}

fn main() {
    use tinytools::Tool;
    assert_eq!(tools::StockQuote.family(), Some("finance"));
    assert_eq!(tools::StockQuote.parameters_schema()["required"], serde_json::json!(["symbol"]));
}
