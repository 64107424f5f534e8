use tinytools::tool;

/// Fetch the latest price for a ticker symbol, with the day's range, volume, market cap,
/// dividend yield and a great deal of other detail that will not fit this budget.
#[tool(max_description_bytes = 60)]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
