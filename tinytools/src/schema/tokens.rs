//! Counting tokens: [`TokenCounter`] and what tool schemas cost.

use crate::ToolSchema;

/// Counts the tokens a piece of text costs a model.
///
/// The run's counter sizes the `tool_search` manifest and charges tool schemas against
/// summarisation thresholds.
pub trait TokenCounter: Send + Sync {
    /// Tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// A fast estimate that needs no vocabulary: one token per four bytes, rounded up.
///
/// ```
/// use tinytools::schema::{EstimatedTokens, TokenCounter};
///
/// assert_eq!(EstimatedTokens.count(""), 0);
/// assert_eq!(EstimatedTokens.count("stock_quote"), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EstimatedTokens;

impl TokenCounter for EstimatedTokens {
    fn count(&self, text: &str) -> usize {
        text.len().div_ceil(4)
    }
}

/// What a set of tool declarations costs on the wire, in tokens: each declaration's compact
/// JSON, counted by `counter`.
///
/// ```
/// use serde_json::json;
/// use tinytools::ToolSchema;
/// use tinytools::schema::{EstimatedTokens, count_tool_schema_tokens};
///
/// let schema = ToolSchema { name: "t".into(), description: "d".into(), parameters: json!({"type": "object"}) };
/// assert_eq!(count_tool_schema_tokens(&[schema.clone()], &EstimatedTokens), schema.byte_len().div_ceil(4));
/// ```
pub fn count_tool_schema_tokens(schemas: &[ToolSchema], counter: &dyn TokenCounter) -> usize {
    schemas.iter().map(|schema| counter.count(&schema.to_compact_json())).sum()
}
