use tinytools::tool;

#[derive(serde::Serialize)]
struct StockQuote {
    symbol: String,
    price: f64,
}

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn stock_quote(symbol: String) -> Result<StockQuote, tinytools::Refusal> {
    Ok(StockQuote { symbol, price: 12.5 })
}

fn main() {}
