//! The gateway's `tracing` spans: every `tools/call` it answers (`tool_search`, a tool called
//! through `call_tool`, a Direct tool) is an `execute_tool {tool}` span after OpenTelemetry's
//! GenAI conventions, as the runtime's tool calls are (`docs/tracing.md`). The span names the
//! tool, how it was reached and the server that answered, and the call's outcome; it never
//! carries arguments or results (the gateway has no capture switch).

use std::fmt;

use rmcp::model::CallToolResult;
use tracing::field::{Empty, display};
use tracing::{Span, info_span};

/// `execute_tool {tool}`.
struct Name<'a>(&'a str);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "execute_tool {}", self.0)
    }
}

/// The span of one call of `tool`, reached as `exposure` (`intrinsic` for `tool_search`,
/// `deferred` through `call_tool`, `direct`).
pub(crate) fn call(tool: &str, exposure: &'static str) -> Span {
    // A forwarded call runs in a downstream server: an extension, in the conventions' words.
    let kind = if exposure == "intrinsic" { "function" } else { "extension" };
    info_span!(
        target: "tinytools_gateway",
        "execute_tool",
        otel.name = %Name(tool),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.type = kind,
        mcp.method.name = "tools/call",
        tinytools.tool.exposure = exposure,
        tinytools.gateway.server = Empty,
        tinytools.tool.outcome = Empty,
        "error.type" = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// Records the server a call is forwarded to.
pub(crate) fn server(span: &Span, server: &str) {
    span.record("tinytools.gateway.server", server);
}

/// Records why a call was not forwarded: `unknown` (no such tool) or `invalid_arguments`.
pub(crate) fn outcome(span: &Span, outcome: &'static str) {
    span.record("tinytools.tool.outcome", outcome);
}

/// Records what the tool answered: `ok`, or `error` when it answered with an error.
pub(crate) fn answered(span: &Span, result: &CallToolResult) {
    outcome(span, if result.is_error == Some(true) { "error" } else { "ok" });
}

/// Records a call its server could not answer (not running, timed out, gone).
pub(crate) fn failed(span: &Span, failure: &dyn fmt::Display) {
    outcome(span, "failed");
    span.record("error.type", "server_failed");
    span.record("otel.status_code", "error");
    span.record("otel.status_description", display(failure));
}
