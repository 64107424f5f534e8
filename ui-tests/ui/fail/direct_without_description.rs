use tinytools::tool;

#[tool(read_only)]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
