use tinytools::tool;

/// Fetch the latest price for a ticker symbol.
#[tool(read_only = "yes", max_schema_bytes = "large", family = finance)]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
