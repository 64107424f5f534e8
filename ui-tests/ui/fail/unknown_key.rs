use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool(exposer = "deferred")]
async fn stock_quote(
    /// Ticker symbol.
    symbol: String,
) -> String {
    symbol
}

fn main() {}
