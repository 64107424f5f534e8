use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool(family = "finance", family = "markets")]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
