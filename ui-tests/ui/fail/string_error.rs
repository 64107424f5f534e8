use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn stock_quote(symbol: String) -> Result<String, String> {
    Err(format!("unknown ticker {symbol}"))
}

fn main() {}
