use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool(compaction = "third-party")]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
