//! Test fixture: the 41-tool example catalogue served over MCP on stdio, with
//! `calendar_cancel_event` Hidden, so the round-trip tests can check it is never listed.

use std::sync::Arc;

use tinytools::ToolExposure;
use tinytools::mcp::McpToolServer;
use tinytools_examples::catalogue;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = catalogue::registry();
    if let Some(tool) = registry.remove("calendar_cancel_event") {
        registry.register_as(tool, ToolExposure::Hidden)?;
    }
    McpToolServer::new(Arc::new(registry)).with_server_info("tinytools-catalogue", "0.1.0").serve_stdio().await?;
    Ok(())
}
