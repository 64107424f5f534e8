use tinytools::tool;

struct Quotes;

impl Quotes {
    /// Fetch the latest price for a ticker symbol.
    #[tool]
    async fn stock_quote(&self, symbol: String) -> String {
        symbol
    }
}

fn main() {}
