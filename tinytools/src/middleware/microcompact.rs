//! [`MicrocompactMiddleware`]: elide old tool results once a request nears its budget.

use std::sync::Arc;

use super::Middleware;
use crate::ToolSchema;
use crate::model::Message;
use crate::schema::{EstimatedTokens, TokenCounter, count_tool_schema_tokens};

/// Once a request's messages and tool schemas together reach `threshold` tokens, replaces the
/// content of all but the `keep_recent` latest tool results with a short note, in the request
/// only (the transcript keeps everything).
///
/// The gate charges the schemas the request carries (searched tools included), so a run whose
/// schemas eat a quarter of the window compacts a quarter of the window earlier.
///
/// ```
/// use tinytools::middleware::MicrocompactMiddleware;
///
/// let compact = MicrocompactMiddleware::new(96_000).keep_recent(3);
/// # let _ = compact;
/// ```
#[derive(Clone)]
pub struct MicrocompactMiddleware {
    threshold: usize,
    keep_recent: usize,
    counter: Arc<dyn TokenCounter>,
}

impl MicrocompactMiddleware {
    /// Compacts at `threshold` tokens, keeping the 2 latest tool results, counting with
    /// [`EstimatedTokens`].
    pub fn new(threshold: usize) -> Self {
        Self { threshold, keep_recent: 2, counter: Arc::new(EstimatedTokens) }
    }

    /// Keeps this many of the latest tool results whole.
    #[must_use]
    pub fn keep_recent(mut self, keep: usize) -> Self {
        self.keep_recent = keep;
        self
    }

    /// Counts with this counter.
    #[must_use]
    pub fn with_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = counter;
        self
    }

    /// Whether messages and tools together reach the threshold.
    pub fn gate(&self, messages: &[Message], tools: &[ToolSchema]) -> bool {
        let messages: usize = messages.iter().map(|m| m.count_tokens(self.counter.as_ref())).sum();
        messages.saturating_add(count_tool_schema_tokens(tools, self.counter.as_ref())) >= self.threshold
    }
}

#[async_trait::async_trait]
impl Middleware for MicrocompactMiddleware {
    async fn before_send(&self, messages: &mut Vec<Message>, tools: &[ToolSchema]) {
        if !self.gate(messages, tools) {
            return;
        }
        let results = messages.iter().filter(|m| matches!(m, Message::Tool { .. })).count();
        let mut old = results.saturating_sub(self.keep_recent);
        for message in messages.iter_mut() {
            if old == 0 {
                break;
            }
            if let Message::Tool { content, .. } = message {
                old -= 1;
                if content.len() > 80 {
                    *content = format!("[earlier tool result elided to save context: {} bytes]", content.len());
                }
            }
        }
    }
}
