use tinytools::tool;

#[derive(Debug)]
struct QuoteError;

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn stock_quote(symbol: String) -> Result<String, QuoteError> {
    Ok(symbol)
}

fn main() {}
