//! A first agent (docs/guide/agent-loop.md): a builder, instructions, one deferred tool found through
//! `tool_search`, and a typed answer, against any OpenAI-compatible endpoint.
//!
//! ```text
//! OPENAI_API_KEY=sk-... cargo run -p tinytools-examples --features providers --example quickstart
//! TINYTOOLS_BASE_URL=http://127.0.0.1:8091/v1 cargo run -p tinytools-examples --features providers --example quickstart   # a local model
//! ```
//!
//! Without a key it says which variables it reads and exits.

use schemars::JsonSchema;
use serde::Deserialize;
use tinytools::providers::OpenAiCompatible;
use tinytools::run::Agent;
use tinytools::{Message, tool};

/// Fetch the latest price for a ticker symbol.
#[tool(exposure = "deferred", family = "finance", read_only)]
async fn stock_quote(
    /** Ticker symbol, such as ACME. */
    symbol: String,
) -> String {
    format!("{symbol}: 12.50 USD")
}

/// The answer, as the program wants it.
#[derive(Debug, Deserialize, JsonSchema)]
struct Quote {
    /// Ticker symbol.
    symbol: String,
    /// Last price in US dollars.
    price: f64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let Ok(model) = OpenAiCompatible::from_env() else {
        eprintln!("set OPENAI_API_KEY, OPENROUTER_API_KEY or TINYTOOLS_BASE_URL to run this example");
        return Ok(());
    };
    let agent = Agent::builder(model)
        .instructions("You look up stock prices. Use your tools; never guess a price.")
        .tool(StockQuote)
        .build()?;
    let quote = agent.run_typed::<Quote>(vec![Message::user("What is ACME trading at?")]).await?;
    println!("{} trades at {:.2} USD", quote.output.symbol, quote.output.price);
    Ok(())
}
