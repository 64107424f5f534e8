//! [`Refusal`]: the one tool error the model reads.

/// A tool's answer that it ran and will not do this call, written for the model to read:
/// a bad symbol, a record not found, a business rule. The model sees the message word for
/// word (as an error [`ToolResult`](crate::ToolResult)) and may try again.
///
/// Every other error a tool returns is a *failure*: the model reads only that the tool failed
/// (with the call's id as a reference), and the host gets the whole error and its source chain
/// in [`ToolError::Failed`](crate::ToolError::Failed) and the run's `ToolFailed` event. So an
/// error that carries a connection string, a path or a stack of causes never reaches the model
/// unless the tool says it should, by returning a `Refusal`.
///
/// A `#[tool]` fn refuses with `Err(Refusal)`; a hand-written [`Tool`](crate::Tool) returns
/// it from `execute` as `Err(Refusal::new(..).into())` (or `Ok(ToolResult::error(..))`), and
/// a host that runs the tool itself can match it with `error.downcast_ref::<Refusal>()`.
///
/// ```
/// use serde_json::json;
/// use tinytools::{Refusal, ToolError, ToolRegistry, tool};
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("connection to postgres://admin:hunter2@db/quotes refused")]
/// struct DbDown;
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool]
/// async fn stock_quote(symbol: String) -> Result<String, Refusal> {
///     match symbol.as_str() {
///         "ACME" => Ok("ACME 12.50".into()),
///         other => Err(Refusal::new(format!("unknown ticker {other}; use an exchange symbol such as ACME"))),
///     }
/// }
///
/// /// Fetch the dividend history of a ticker symbol.
/// #[tool]
/// async fn dividends(symbol: String) -> Result<String, DbDown> {
///     Err(DbDown)
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut registry = ToolRegistry::new();
/// registry.register(StockQuote)?;
/// registry.register(Dividends)?;
///
/// // A refusal is an answer: the model reads it.
/// let refused = registry.dispatch("stock_quote", json!({"symbol": "XX"})).await?;
/// assert!(refused.is_error);
/// assert!(refused.to_model_text().starts_with("unknown ticker XX"));
///
/// // A failure is the host's: the model's note has no part of the error.
/// let failed = registry.dispatch("dividends", json!({"symbol": "ACME"})).await.unwrap_err();
/// assert!(matches!(failed, ToolError::Failed { .. }));
/// assert!(failed.to_string().contains("hunter2")); // the host sees everything
/// assert!(!failed.to_model_result().to_model_text().contains("hunter2"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    message: String,
}

impl Refusal {
    /// A refusal whose message the model will read: say what was wrong and what to do.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }

    /// What the model reads.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A tool's `Err`: a [`Refusal`] inside (also under `anyhow` context) is the error result the
/// model reads; any other error stays an error, the host's. The one place that sorts them, for
/// the registry's calls and a `#[tool]` fn's own `execute` alike.
pub(crate) fn refusal_answer(error: anyhow::Error) -> Result<crate::ToolResult, anyhow::Error> {
    match error.downcast_ref::<Refusal>() {
        Some(refusal) => Ok(crate::ToolResult::error(refusal.message())),
        None => Err(error),
    }
}

impl From<String> for Refusal {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for Refusal {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}
