//! Middleware: hooks around a run's model calls and tool calls.
//!
//! Exposure middleware shapes `request.tools` in `before_model`, which runs before searched
//! tools are appended, so it never sees a deferred tool. Execution gates judge each call in
//! `before_tool` by its real name — deferred tools included, and `tool_search` too.

mod allowlist;
mod authorization;
mod microcompact;
mod policy;
mod selection;

pub use allowlist::ToolAllowlistMiddleware;
pub use authorization::HostAuthorization;
pub use microcompact::MicrocompactMiddleware;
pub use policy::ToolPolicyMiddleware;
pub use selection::{ContextualToolSelectionMiddleware, DynamicToolSelectionMiddleware};

use crate::model::{Message, ModelRequest, ModelResponse, ToolCall};
use crate::{ToolResult, ToolSchema};

/// Whether a tool call may run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolGate {
    /// Run it.
    Allow,
    /// Do not; the model reads the reason as an error result.
    Deny(String),
}

/// Hooks around a run. Every method has a do-nothing default.
#[async_trait::async_trait]
pub trait Middleware: Send + Sync {
    /// Once, before the first model call: may edit the starting messages.
    async fn before_agent(&self, _messages: &mut Vec<Message>) {}

    /// Before each model call: may narrow `request.tools` (searched tools are appended after).
    async fn before_model(&self, _request: &mut ModelRequest) {}

    /// Just before each model call, with the final tools (searched tools included) read-only:
    /// may rewrite the messages sent (not the transcript), to fit a budget.
    async fn before_send(&self, _messages: &mut Vec<Message>, _tools: &[ToolSchema]) {}

    /// After each model call.
    async fn after_model(&self, _response: &mut ModelResponse) {}

    /// Before each tool call, with its real name and arguments.
    async fn before_tool(&self, _call: &ToolCall) -> ToolGate {
        ToolGate::Allow
    }

    /// After each tool call that ran.
    async fn after_tool(&self, _call: &ToolCall, _result: &mut ToolResult) {}
}
