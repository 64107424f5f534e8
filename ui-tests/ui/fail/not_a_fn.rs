use tinytools::tool;

/// A quote.
#[tool]
struct StockQuote {
    symbol: String,
}

fn main() {}
