//! What a tool hands back to the model: [`ToolResult`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One piece of a tool's output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolContent {
    /// Plain text, sent to the model as written.
    Text(String),
    /// Structured output, sent to the model as compact JSON.
    Json(Value),
}

/// The outcome of a tool call as the model will read it.
///
/// `is_error` marks a call that ran and refused (bad input the schema could not catch, a
/// business rule, a not-found): the model reads why and may try again. A tool that *could not
/// run* returns `Err` from [`Tool::execute`](crate::Tool::execute) instead, and the host sees a
/// [`ToolError::Failed`](crate::ToolError::Failed).
///
/// ```
/// use serde_json::json;
/// use tinytools::ToolResult;
///
/// let ok = ToolResult::json(json!({"symbol": "ACME", "price": 12.5}));
/// assert_eq!(ok.to_model_text(), r#"{"price":12.5,"symbol":"ACME"}"#);
///
/// let refused = ToolResult::error("market closed: try again after 09:30 ET");
/// assert!(refused.is_error);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResult {
    /// The output, in order.
    pub content: Vec<ToolContent>,
    /// Whether the tool ran and refused.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResult {
    /// A result of these parts; `is_error` when the tool ran and refused.
    pub fn new(content: Vec<ToolContent>, is_error: bool) -> Self {
        Self { content, is_error }
    }

    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ToolContent::Text(text.into())], is_error: false }
    }

    /// A successful structured result.
    pub fn json(value: Value) -> Self {
        Self { content: vec![ToolContent::Json(value)], is_error: false }
    }

    /// A result that tells the model the tool ran and refused, and why.
    pub fn error(message: impl Into<String>) -> Self {
        Self { content: vec![ToolContent::Text(message.into())], is_error: true }
    }

    /// The text the model reads: text parts as written, JSON parts compact, joined by newlines.
    pub fn to_model_text(&self) -> String {
        let mut out = String::new();
        for (i, part) in self.content.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            match part {
                ToolContent::Text(text) => out.push_str(text),
                ToolContent::Json(value) => out.push_str(&value.to_string()),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_join_with_newlines_and_json_is_compact() {
        let result = ToolResult {
            content: vec![ToolContent::Text("two quotes".into()), ToolContent::Json(serde_json::json!([1, 2]))],
            is_error: false,
        };
        assert_eq!(result.to_model_text(), "two quotes\n[1,2]");
    }

    #[test]
    fn serialized_form_round_trips() {
        let result = ToolResult::error("nope");
        let wire = serde_json::to_string(&result).unwrap_or_default();
        assert_eq!(wire, r#"{"content":[{"type":"text","value":"nope"}],"is_error":true}"#);
        assert_eq!(serde_json::from_str::<ToolResult>(&wire).ok(), Some(result));
    }
}
