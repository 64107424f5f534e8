use tinytools::{tool, tools};

struct NoFamily;

// A description with no family to describe.
#[tools(family_description = "Customer accounts and deals.")]
impl NoFamily {
    /// Create a record.
    #[tool]
    fn create_record(&self, name: String) -> String {
        name
    }
}

struct Blank;

#[tools(family = "crm", family_description = "  ")]
impl Blank {
    /// Create a record.
    #[tool]
    fn create_record(&self, name: String) -> String {
        name
    }
}

struct OnAMethod;

#[tools(family = "crm")]
impl OnAMethod {
    /// Create a record.
    #[tool(family_description = "Customer accounts and deals.")]
    fn create_record(&self, name: String) -> String {
        name
    }
}

/// Fetch the latest price for a ticker symbol.
#[tool(family = "finance", family_description = "Market data.")]
async fn stock_quote(symbol: String) -> String {
    symbol
}

fn main() {}
