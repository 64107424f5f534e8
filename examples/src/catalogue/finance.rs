//! Family `finance`: quotes, currencies, crypto, portfolios, expenses.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tinytools::{Refusal, Tool, tool};

use super::stable_number;

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(StockQuote),
        Arc::new(CurrencyConvert),
        Arc::new(CryptoPrice),
        Arc::new(PortfolioSummary),
        Arc::new(ExpenseReport),
    ]
}

/// Options for a stock quote.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct QuoteOptions {
    /// How many of the most recent trades to include (0 to 50).
    #[schemars(range(max = 50))]
    pub limit: Option<u32>,
    /// Include pre-market and after-hours trading.
    #[serde(default)]
    pub extended_hours: bool,
}

/// Fetch the latest trading price of a stock by its ticker symbol, with recent trades.
#[tool(exposure = "deferred", family = "finance", read_only, open_world = true)]
pub async fn stock_quote(
    /// Ticker symbol, such as ACME or GLOBX.
    symbol: String,
    /// What else to return with the price.
    options: Option<QuoteOptions>,
) -> Result<Value, Refusal> {
    let symbol = symbol.trim().to_uppercase();
    if symbol.is_empty() || !symbol.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
        return Err("a ticker symbol is letters and digits, such as ACME".into());
    }
    let options = options.unwrap_or_default();
    let cents = 1_000 + stable_number(&symbol, 90_000);
    let price = cents as f64 / 100.0;
    let trades: Vec<Value> = (0..options.limit.unwrap_or(0).min(50))
        .map(|i| json!({"price": (cents + u64::from(i) % 7) as f64 / 100.0, "shares": 100 + i * 10}))
        .collect();
    Ok(
        json!({"symbol": symbol, "price": price, "currency": "USD", "extended_hours": options.extended_hours, "trades": trades}),
    )
}

/// Convert an amount of money from one currency to another at today's rate.
#[tool(exposure = "deferred", family = "finance", read_only, open_world = true)]
pub async fn currency_convert(
    /// The amount to convert.
    amount: f64,
    /// ISO 4217 code of the currency the amount is in, such as EUR.
    from: String,
    /// ISO 4217 code of the currency to convert into, such as JPY.
    to: String,
) -> Value {
    let rate = 0.5 + stable_number(&format!("{from}{to}"), 1_000) as f64 / 500.0;
    json!({"amount": amount, "from": from, "to": to, "rate": rate, "converted": (amount * rate * 100.0).round() / 100.0})
}

/// Get the current price of a cryptocurrency such as BTC or ETH.
#[tool(exposure = "deferred", family = "finance", read_only, open_world = true)]
pub async fn crypto_price(
    /// The coin's symbol, such as BTC.
    coin: String,
    /// Currency to price it in; USD when left out.
    vs_currency: Option<String>,
) -> Value {
    let price = 10 + stable_number(&coin, 60_000);
    json!({"coin": coin.to_uppercase(), "price": price, "currency": vs_currency.unwrap_or_else(|| "USD".into())})
}

/// Summarize the value, daily change and allocation of the user's investment portfolio.
#[tool(exposure = "deferred", family = "finance", read_only)]
pub async fn portfolio_summary(
    /// Account to summarize: "brokerage" or "retirement".
    account: String,
) -> Value {
    json!({"account": account, "value": 48_210.55, "day_change_pct": 0.8, "allocation": {"stocks": 0.7, "bonds": 0.2, "cash": 0.1}})
}

/// Report spending by category over a date range, from the user's linked cards.
#[tool(exposure = "deferred", family = "finance", read_only)]
pub async fn expense_report(
    /// First day of the range, YYYY-MM-DD.
    start_date: String,
    /// Last day of the range, YYYY-MM-DD.
    end_date: String,
    /// Only this category, such as "travel" or "meals".
    category: Option<String>,
) -> Value {
    json!({"from": start_date, "to": end_date, "category": category, "total": 1_284.10, "currency": "USD"})
}
