//! [`ToolAllowlistMiddleware`]: an execution-time allow-list.

use std::collections::BTreeSet;

use super::{Middleware, ToolGate};
use crate::model::{ModelRequest, ToolCall};

/// Only these names are offered and may run. `tool_search` is a name like any other: list it
/// to keep discovery.
#[derive(Clone, Debug)]
pub struct ToolAllowlistMiddleware {
    allowed: BTreeSet<String>,
}

impl ToolAllowlistMiddleware {
    /// Allows exactly these names.
    pub fn new<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        Self { allowed: names.into_iter().map(Into::into).collect() }
    }
}

#[async_trait::async_trait]
impl Middleware for ToolAllowlistMiddleware {
    async fn before_model(&self, request: &mut ModelRequest) {
        request.tools.retain(|tool| self.allowed.contains(&tool.name));
    }

    async fn before_tool(&self, call: &ToolCall) -> ToolGate {
        if self.allowed.contains(&call.name) {
            ToolGate::Allow
        } else {
            ToolGate::Deny("This tool is not permitted in this run.".to_owned())
        }
    }
}
