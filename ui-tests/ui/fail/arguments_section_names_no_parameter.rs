use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
///
/// # Arguments
///
/// * `ticker` - The ticker symbol.
#[tool]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
