//! The three-tool program of issue 17 — a quote, a currency conversion, and a tool that needs a
//! shared database handle — written against the crate root alone.
//!
//! ```text
//! cargo run -p tinytools-examples --example three_tools
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use tinytools::{Refusal, State, ToolRegistry, tool};

/// A stand-in for a connection pool.
struct Db {
    holdings: HashMap<&'static str, u32>,
}

/// Fetch the latest price for a ticker symbol.
#[tool(read_only)]
async fn stock_quote(
    /// Ticker symbol, such as ACME.
    symbol: String,
) -> Result<f64, Refusal> {
    match symbol.as_str() {
        "ACME" => Ok(12.5),
        other => Err(Refusal::new(format!("unknown ticker {other}; use an exchange symbol such as ACME"))),
    }
}

/// Convert an amount between two currencies.
#[tool(read_only)]
async fn currency_convert(
    /// The amount to convert.
    amount: f64,
    /// ISO 4217 code to convert from, such as EUR.
    from: String,
    /// ISO 4217 code to convert to, such as USD.
    to: String,
) -> Result<f64, Refusal> {
    match (from.as_str(), to.as_str()) {
        ("EUR", "USD") => Ok(amount * 1.08),
        ("USD", "EUR") => Ok(amount / 1.08),
        _ => Err(Refusal::new("only EUR and USD are supported")),
    }
}

/// How many shares of a ticker the user holds.
#[tool(read_only)]
async fn holding(
    /// Ticker symbol.
    symbol: String,
    db: State<Db>,
) -> u32 {
    db.holdings.get(symbol.as_str()).copied().unwrap_or(0)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = Db { holdings: HashMap::from([("ACME", 40)]) };
    let mut registry = ToolRegistry::new().with_state(Arc::new(db));
    registry.register(StockQuote)?.register(CurrencyConvert)?.register(Holding)?;

    for (name, args) in [
        ("stock_quote", json!({"symbol": "ACME"})),
        ("stock_quote", json!({"symbol": "XX"})),
        ("currency_convert", json!({"amount": 100.0, "from": "EUR", "to": "USD"})),
        ("holding", json!({"symbol": "ACME"})),
    ] {
        let result = registry.dispatch(name, args).await?;
        println!("{name}: {}{}", result.to_model_text(), if result.is_error { " (refused)" } else { "" });
    }
    Ok(())
}
