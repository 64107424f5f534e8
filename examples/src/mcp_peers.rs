//! Where the reference MCP servers live, for the MCP tests and examples.
//!
//! `.ci/mcp-peers` installs them (pinned) into `target/mcp-peers`: npm
//! `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem`, and
//! PyPI `mcp-server-time` in a virtualenv. `TINYTOOLS_MCP_PEERS` points elsewhere.

use std::path::{Path, PathBuf};

use tinytools::mcp::{McpImport, McpServer};

/// The reference servers this workspace tests against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// npm `@modelcontextprotocol/server-everything`: the protocol's kitchen sink.
    Everything,
    /// npm `@modelcontextprotocol/server-filesystem`: file tools confined to one directory.
    Filesystem,
    /// PyPI `mcp-server-time`: current time and time-zone conversion.
    Time,
}

impl Peer {
    /// Every peer.
    pub const ALL: [Peer; 3] = [Peer::Everything, Peer::Filesystem, Peer::Time];

    /// The short server name used as family and prefix.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Everything => "everything",
            Peer::Filesystem => "filesystem",
            Peer::Time => "time",
        }
    }

    fn program(self, root: &Path) -> PathBuf {
        match self {
            Peer::Everything => root.join("node_modules/.bin/mcp-server-everything"),
            Peer::Filesystem => root.join("node_modules/.bin/mcp-server-filesystem"),
            Peer::Time => root.join("venv/bin/mcp-server-time"),
        }
    }

    /// Why it cannot be started here, or `None` when it is installed.
    pub fn missing(self) -> Option<String> {
        let program = self.program(&peers_root());
        (!program.exists()).then(|| {
            format!(
                "{} is not installed at {} (run `.ci/mcp-peers` to install the reference MCP servers, \
                 or set TINYTOOLS_MCP_PEERS)",
                self.name(),
                program.display()
            )
        })
    }

    /// Starts it and completes the MCP handshake, imported under its own name with the
    /// defaults. `dir` is the directory the filesystem server may touch (ignored by the others).
    ///
    /// # Errors
    /// Why it is not installed, or why it did not start or answer.
    pub async fn connect(self, dir: &Path) -> Result<McpServer, String> {
        let command = self.command(dir)?;
        McpServer::connect_stdio(McpImport::new(self.name()), command).await.map_err(|err| err.to_string())
    }

    /// The command that starts it on stdio, or why it cannot be started here.
    fn command(self, dir: &Path) -> Result<tokio::process::Command, String> {
        if let Some(why) = self.missing() {
            return Err(why);
        }
        let mut command = tokio::process::Command::new(self.program(&peers_root()));
        match self {
            Peer::Everything => {
                command.arg("stdio");
            }
            Peer::Filesystem => {
                command.arg(dir);
            }
            Peer::Time => {
                command.arg("--local-timezone=UTC");
            }
        }
        command.stderr(std::process::Stdio::null());
        Ok(command)
    }
}

/// `TINYTOOLS_MCP_PEERS`, or the workspace's `target/mcp-peers`.
pub fn peers_root() -> PathBuf {
    match std::env::var_os("TINYTOOLS_MCP_PEERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/mcp-peers"),
    }
}

/// Whether a missing peer must fail rather than skip (`.ci/run` sets `TINYTOOLS_MCP_PEERS_REQUIRED=1`).
pub fn peers_required() -> bool {
    std::env::var("TINYTOOLS_MCP_PEERS_REQUIRED").is_ok_and(|v| v == "1")
}
