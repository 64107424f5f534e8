//! MCP, both ways (feature `mcp`, on the official `rmcp` SDK).
//!
//! - **Import**: [`McpServer`] starts a server (a child process over stdio, or any rmcp
//!   transport), lists its tools and registers each as a [`Tool`](crate::Tool): Deferred by
//!   default, family = the server's name, names prefixed `{server}__` and made provider-safe
//!   ([`namespaced_name`]), the server's `inputSchema` under
//!   [`SchemaCompaction::THIRD_PARTY`](crate::SchemaCompaction::THIRD_PARTY) on the wire, and
//!   each call a `tools/call`. A crashed or hung server gives error results (and a
//!   [`ToolFailed`](crate::run::RunEvent::ToolFailed) event with the cause), never a dead run.
//!   `notifications/tools/list_changed` is honoured between runs: [`McpServer::tools_changed`],
//!   then [`McpServer::refresh`].
//! - **Export**: [`McpToolServer`] serves a [`ToolRegistry`](crate::ToolRegistry) as an MCP
//!   server; Hidden tools are never listed nor callable.
//! - **In front of a gateway**: [`GatewayPreSearch`] ranks a tool gateway's catalogue
//!   (`tinytools-gateway`: `tool_search` + `call_tool`) against the user's message before the
//!   model is called, and offers what it finds as typed tools.
//!
//! One line of host code imports a whole server:
//!
//! ```no_run
//! # async fn demo(registry: &mut tinytools::ToolRegistry) -> Result<(), tinytools::mcp::McpError> {
//! use tinytools::mcp::{McpImport, McpServer};
//!
//! let mut command = tokio::process::Command::new("npx");
//! command.args(["-y", "@modelcontextprotocol/server-everything"]);
//! let everything = McpServer::connect_stdio(McpImport::new("everything"), command).await?;
//! everything.register_into(registry).await?;
//! # Ok(()) }
//! ```

mod export;
mod import;
mod naming;
mod presearch;
mod summary;
mod tool;

use std::time::Duration;

pub use export::McpToolServer;
pub use import::{ImportReport, McpImport, McpServer, SkippedTool};
pub use naming::{default_prefix, family_for, namespaced_name, remote_description};
pub use presearch::{CALL_TOOL, GatewayPreSearch};
pub use summary::{MAX_FAMILY_CONTEXT, MAX_SUMMARY_BYTES, SummaryError, SummaryWriter, self_description};
pub use tool::McpTool;

/// The `rmcp` SDK this module is built on, for transports beyond stdio (pass one to
/// [`McpServer::connect`]; streamable HTTP needs rmcp's own transport features).
pub use rmcp;

/// What went wrong talking to an MCP server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's program could not be started.
    #[error("could not start the {server} MCP server (`{program}`): {source}; check that it is installed and on PATH")]
    Spawn {
        /// The server, by the name the host gave it.
        server: String,
        /// The program that was run.
        program: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The server started but the MCP handshake failed.
    #[error("the {server} MCP server did not complete the MCP handshake: {reason}; check that it speaks MCP on stdio")]
    Connect {
        /// The server.
        server: String,
        /// What failed.
        reason: String,
    },
    /// The server did not answer `initialize` in time.
    #[error("the {server} MCP server did not answer `initialize` within {after:?}; it may be hung or still installing")]
    ConnectTimedOut {
        /// The server.
        server: String,
        /// How long we waited.
        after: Duration,
    },
    /// `tools/list` failed.
    #[error("the {server} MCP server could not list its tools: {source}")]
    List {
        /// The server.
        server: String,
        /// What rmcp reported.
        #[source]
        source: rmcp::ServiceError,
    },
    /// A `tools/call` could not be completed (the server exited, the transport broke).
    #[error("the {server} MCP server could not be reached for the call: {source}; it may have exited")]
    Call {
        /// The server.
        server: String,
        /// What rmcp reported.
        #[source]
        source: rmcp::ServiceError,
    },
    /// The server did not answer in time.
    #[error("the {server} MCP server did not answer within {after:?}; it may be hung")]
    CallTimedOut {
        /// The server.
        server: String,
        /// How long we waited.
        after: Duration,
    },
    /// The call was cancelled by the host before the server answered.
    #[error("the call to the {server} MCP server was cancelled")]
    Cancelled {
        /// The server.
        server: String,
    },
    /// Serving a registry failed.
    #[error("serving tools over MCP failed: {reason}")]
    Serve {
        /// What failed.
        reason: String,
    },
    /// A [`GatewayPreSearch`] was asked for over a registry that lacks one of a gateway's tools.
    #[error(
        "the registry holds no `{tool}`, so a host cannot pre-search through it; register the gateway's \
         tools (`tool_search` and `call_tool`) under their own names first"
    )]
    NotAGateway {
        /// The missing tool's name.
        tool: &'static str,
    },
}
