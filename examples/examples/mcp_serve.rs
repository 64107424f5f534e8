//! Serve the 41-tool example catalogue as an MCP server on stdio.
//!
//! Direct and Deferred tools are listed with the schemas `#[tool]` derived and their
//! classification as MCP annotations; Hidden tools never are. Point any MCP client at it:
//!
//! ```text
//! cargo build -p tinytools-examples --example mcp_serve
//! npx @modelcontextprotocol/inspector target/debug/examples/mcp_serve
//! ```

use std::sync::Arc;

use tinytools::mcp::McpToolServer;
use tinytools_examples::catalogue;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = McpToolServer::new(Arc::new(catalogue::registry()))
        .with_server_info("tinytools-catalogue", env!("CARGO_PKG_VERSION"))
        .with_instructions("Example tools with made-up data: finance, calendar, mail, Jira, GitHub, team and travel.");
    if let Err(err) = server.serve_stdio().await {
        eprintln!("mcp_serve: {err}");
        std::process::exit(1);
    }
}
