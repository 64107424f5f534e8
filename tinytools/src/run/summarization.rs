//! [`SummarizationPolicy`]: when a conversation must be summarized, counting the tool schemas
//! every request carries.

use crate::ToolSchema;
use crate::schema::{TokenCounter, count_tool_schema_tokens};

/// When to summarize a conversation so the next request still fits the model's window.
///
/// Tool schemas ride along with every request, so they are charged against the same
/// threshold: a run whose schemas eat a quarter of the window summarizes a quarter of the
/// window earlier instead of overflowing.
///
/// ```
/// use serde_json::json;
/// use tinytools::run::SummarizationPolicy;
/// use tinytools::ToolSchema;
/// use tinytools::schema::EstimatedTokens;
///
/// let policy = SummarizationPolicy::default().with_context_window(10_000).with_threshold(0.8);
/// assert_eq!(policy.trigger_tokens(), 8_000);
/// assert!(!policy.should_summarize(7_999) && policy.should_summarize(8_000));
///
/// // 900 bytes of schema ≈ 200 tokens: the conversation may now hold 200 fewer.
/// let tool = ToolSchema { name: "t".into(), description: "x".repeat(850), parameters: json!({"type": "object"}) };
/// let tools = [tool];
/// assert!(policy.should_summarize_with_tools(7_850, &tools, &EstimatedTokens));
/// assert!(!policy.should_summarize_with_tools(7_700, &tools, &EstimatedTokens));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SummarizationPolicy {
    /// The model's context window, in tokens.
    pub context_window: usize,
    /// The fraction of the window at which to summarize (clamped to `0.0..=1.0`).
    pub threshold: f32,
}

impl Default for SummarizationPolicy {
    /// A 128,000-token window, summarized at 80%.
    fn default() -> Self {
        Self { context_window: 128_000, threshold: 0.8 }
    }
}

impl SummarizationPolicy {
    /// Sets the model's context window, in tokens.
    #[must_use]
    pub const fn with_context_window(mut self, context_window: usize) -> Self {
        self.context_window = context_window;
        self
    }

    /// Sets the fraction of the window at which to summarize.
    #[must_use]
    pub const fn with_threshold(mut self, threshold: f32) -> Self {
        self.threshold = threshold;
        self
    }

    /// The token count at which summarization starts.
    pub fn trigger_tokens(&self) -> usize {
        let threshold = if self.threshold.is_finite() { self.threshold.clamp(0.0, 1.0) } else { 1.0 };
        (self.context_window as f64 * f64::from(threshold)).floor() as usize
    }

    /// Whether a conversation of this many tokens should be summarized, tools aside.
    pub fn should_summarize(&self, conversation_tokens: usize) -> bool {
        conversation_tokens >= self.trigger_tokens()
    }

    /// Whether a conversation should be summarized once the tool schemas sent with it are
    /// counted too.
    pub fn should_summarize_with_tools(
        &self,
        conversation_tokens: usize,
        tools: &[ToolSchema],
        counter: &dyn TokenCounter,
    ) -> bool {
        self.should_summarize(conversation_tokens.saturating_add(count_tool_schema_tokens(tools, counter)))
    }
}
