use tinytools::tool;

struct Quote {
    price: f64,
}

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn stock_quote(symbol: String) -> Quote {
    let _ = symbol;
    Quote { price: 1.0 }
}

fn main() {}
