//! Test fixture for the gateway's tests (built with the `fixture` feature, never installed):
//! the 41-tool example catalogue over MCP on stdio, `calendar_cancel_event` Hidden, plus
//! `fixture_crash` (the process exits mid-call) and `fixture_sleep` (a hang).
//!
//! Environment: `FIXTURE_EXIT_UNLESS=<path>` exits at start (status 3) unless the file
//! exists; `FIXTURE_STARTS=<path>` appends a line each time the process starts.

use std::io::Write;
use std::sync::Arc;

use tinytools::mcp::McpToolServer;
use tinytools::{ToolExposure, tool};
use tinytools_examples::catalogue;

/// Exit the server process at once: a crash, for the gateway's fault tests.
#[tool]
async fn fixture_crash() -> String {
    std::process::exit(70)
}

/// Wait this many seconds, then answer: a hang, for the gateway's timeout tests.
#[tool]
async fn fixture_sleep(secs: u64) -> String {
    tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
    "slept".to_owned()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Some(path) = std::env::var_os("FIXTURE_STARTS") {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(file, "start")?;
    }
    if let Some(path) = std::env::var_os("FIXTURE_EXIT_UNLESS")
        && !std::path::Path::new(&path).exists()
    {
        std::process::exit(3);
    }
    let mut registry = catalogue::registry();
    if let Some(tool) = registry.remove("calendar_cancel_event") {
        registry.register_as(tool, ToolExposure::Hidden)?;
    }
    registry.register(FixtureCrash)?.register(FixtureSleep)?;
    McpToolServer::new(Arc::new(registry)).with_server_info("gateway-fixture", "0.1.0").serve_stdio().await?;
    Ok(())
}
