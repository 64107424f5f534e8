//! Middleware: hooks around a run's model calls and tool calls.
//!
//! Three kinds, which narrow in three different ways (see `docs/narrowing.md`):
//! - **Rules** ([`Middleware::rule`]): [`ToolAllowlistMiddleware`] and [`ToolPolicyMiddleware`]
//!   decide once per run which tools exist for it at all. A tool they refuse is absent from
//!   every surface (tools array, manifest, search, promotion, resume, suggestions, execution),
//!   as a Hidden tool is. See [`crate::surface`].
//! - **Per-turn selection** (`before_model`): [`ContextualToolSelectionMiddleware`] and
//!   [`DynamicToolSelectionMiddleware`] shape one request's tools array, before promoted tools
//!   are appended; a wire-size optimisation that only subsets what the rules allow.
//! - **Per-call gates** (`before_tool`): [`HostAuthorization`] may refuse one call, by its real
//!   name — deferred tools included, and `tool_search` too.

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
use crate::surface::Rule;
use crate::{ToolResult, ToolSchema};

/// Whether a tool call may run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolGate {
    /// Run it.
    Allow,
    /// Do not; the model reads the reason as an error result.
    Deny(String),
}

/// Hooks around a run. Every method has a do-nothing default.
#[async_trait::async_trait]
pub trait Middleware: Send + Sync {
    /// The rule this middleware narrows the run with, evaluated once at run start into the
    /// run's [`Surface`](crate::surface::Surface). Default: none.
    fn rule(&self) -> Option<&dyn Rule> {
        None
    }

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
