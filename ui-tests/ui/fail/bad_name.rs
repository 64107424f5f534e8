use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool(name = "stock.quote")]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
