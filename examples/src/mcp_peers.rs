//! Where the reference MCP servers live, for the MCP tests and examples.
//!
//! `.ci/mcp-peers` installs them (pinned) into `target/mcp-peers`: npm
//! `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem`, and
//! PyPI `mcp-server-time` in a virtualenv. `TINYTOOLS_MCP_PEERS` points elsewhere.

use std::path::{Path, PathBuf};

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

    /// The command that starts it on stdio, or why it cannot be started here. `dir` is the
    /// directory the filesystem server may touch (ignored by the others).
    pub fn command(self, dir: &Path) -> Result<tokio::process::Command, String> {
        let root = peers_root();
        let program = self.program(&root);
        if !program.exists() {
            return Err(format!(
                "{} is not installed at {} (run `.ci/mcp-peers` to install the reference MCP servers, \
                 or set TINYTOOLS_MCP_PEERS)",
                self.name(),
                program.display()
            ));
        }
        let mut command = tokio::process::Command::new(program);
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
