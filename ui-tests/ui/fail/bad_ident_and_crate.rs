use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool(ident = "Quote Tool", crate = "my tools")]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
