use tinytools::tool;

struct Ticker(String);

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn stock_quote(symbol: Ticker) -> String {
    symbol.0
}

fn main() {}
