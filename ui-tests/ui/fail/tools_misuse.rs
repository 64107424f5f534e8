use tinytools::tools;

struct Portfolio;

#[tools(family = "finance", name = "portfolio")]
impl Portfolio {
    /// Buy shares.
    #[tool]
    fn buy(&mut self, symbol: String) -> String {
        symbol
    }

    /// Sell shares.
    #[tool]
    fn sell(symbol: String) -> String {
        symbol
    }
}

struct Empty;

#[tools]
impl Empty {
    fn helper(&self) {}
}

fn main() {}
