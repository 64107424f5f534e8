use tinytools::tool;

#[tool(exposure = "deferred")]
async fn stock_quote(
    /// Ticker symbol.
    symbol: String,
) -> String {
    symbol
}

fn main() {}
