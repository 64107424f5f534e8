//! [`GatewayProcess`]: a running gateway, as an arm holds it.

use std::path::{Path, PathBuf};

use tinytools::mcp::McpServer;

/// A running gateway: the MCP session to it, and its temporary directory (config and cache),
/// removed when the last handle goes. [`close`](Self::close) ends the session, and with it the
/// gateway and its servers.
pub struct GatewayProcess {
    pub(crate) server: tokio::sync::Mutex<Option<McpServer>>,
    pub(crate) dir: PathBuf,
    pub(crate) tools_behind: usize,
    pub(crate) instructions: Option<String>,
}

impl GatewayProcess {
    /// The tools the gateway fronts, as its `report` counted them.
    pub fn tools_behind(&self) -> usize {
        self.tools_behind
    }

    /// The instructions the gateway sent in its handshake.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The temporary directory holding the config and the cache.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Ends the MCP session: the gateway sees its stdin close, exits, and stops its servers.
    /// Tool calls made afterwards fail. Dropping the last handle instead kills the gateway.
    pub async fn close(&self) {
        if let Some(server) = self.server.lock().await.take() {
            server.close().await;
        }
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl std::fmt::Debug for GatewayProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayProcess")
            .field("dir", &self.dir)
            .field("tools_behind", &self.tools_behind)
            .finish_non_exhaustive()
    }
}
