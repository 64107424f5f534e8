use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn stock_quote(symbol: &str) -> String {
    symbol.to_owned()
}

fn main() {}
