use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool(exposure = "deferred")]
async fn stock_quote(
    /// Ticker symbol.
    symbol: String,
    currency: Option<String>,
) -> String {
    format!("{symbol}{currency:?}")
}

fn main() {}
