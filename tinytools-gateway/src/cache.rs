//! The manifest cache: each server's tool list on disk, so the gateway lists and searches
//! before any server runs.
//!
//! One JSON file per server, named after the server and a hash of its unexpanded config
//! ([`ServerConfig::identity`]): editing the config starts a new entry. The file records the
//! name and version the server reported; a server that starts and reports another version
//! is listed again and its entry replaced. Writes go to a temporary file renamed into place.
//! A file that cannot be read or parsed is ignored with a warning.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ServerConfig;

/// The format version of a cache file; files of another version are ignored.
pub const CACHE_FORMAT: u32 = 1;

/// One tool as its server listed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedTool {
    /// The server's name for it.
    pub name: String,
    /// Its description, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its title, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its `inputSchema`.
    pub input_schema: Value,
    /// Its MCP annotations, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

/// A server's tool list, as cached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`CACHE_FORMAT`].
    pub format: u32,
    /// The hash of the server's unexpanded config this was listed under.
    pub config_hash: String,
    /// The name the server reported in its handshake.
    pub server_name: Option<String>,
    /// The version the server reported.
    pub server_version: Option<String>,
    /// The server's instructions, if it sent any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// What the server says of itself in its handshake (title, description and instructions,
    /// as [`tinytools::mcp::self_description`] joins them): ranks its tools, never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_description: Option<String>,
    /// A paragraph about the server written once by a chat model (`--summaries`): ranks its
    /// tools, never shown. Kept while the server's tool names stay the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Its tools, in its order.
    pub tools: Vec<CachedTool>,
}

/// Where manifests are kept.
#[derive(Clone, Debug)]
pub struct ManifestCache {
    dir: PathBuf,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl ManifestCache {
    /// A cache in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The default directory: `$XDG_CACHE_HOME/tinytools-gateway`, else
    /// `$HOME/.cache/tinytools-gateway`; `None` when neither variable is set.
    pub fn default_dir() -> Option<PathBuf> {
        let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
        non_empty("XDG_CACHE_HOME")
            .or_else(|| non_empty("HOME").map(|home| home.join(".cache")))
            .map(|base| base.join("tinytools-gateway"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file a server's manifest lives in.
    pub fn path_for(&self, server: &ServerConfig) -> PathBuf {
        let safe: String = server
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .take(64)
            .collect();
        self.dir.join(format!("{safe}-{}.json", config_hash(server)))
    }

    /// The cached manifest of a server, when there is a readable one for its current config.
    /// A corrupt or foreign file is ignored with a warning.
    pub fn load(&self, server: &ServerConfig) -> Option<Manifest> {
        let path = self.path_for(server);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                tracing::warn!(server = %server.name, path = %path.display(), %error, "manifest cache unreadable; ignored");
                return None;
            }
        };
        match serde_json::from_str::<Manifest>(&text) {
            Ok(manifest) if manifest.format == CACHE_FORMAT && manifest.config_hash == config_hash(server) => {
                Some(manifest)
            }
            Ok(_) => {
                tracing::warn!(server = %server.name, path = %path.display(), "manifest cache of another format; ignored");
                None
            }
            Err(error) => {
                tracing::warn!(server = %server.name, path = %path.display(), %error, "manifest cache corrupt; ignored");
                None
            }
        }
    }

    /// Stores a server's manifest: written to a temporary file, then renamed into place.
    ///
    /// # Errors
    /// The I/O error, when the directory cannot be created or the file written.
    pub fn store(&self, server: &ServerConfig, manifest: &Manifest) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let path = self.path_for(server);
        let text = serde_json::to_string_pretty(manifest).map_err(std::io::Error::other)?;
        let temp =
            path.with_extension(format!("tmp.{}.{}", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&temp, text)?;
        std::fs::rename(&temp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }
}

impl Manifest {
    /// The text that ranks the server's tools beside their own: the written summary, then the
    /// server's own words (its instructions alone in a manifest cached before they were kept),
    /// at most [`tinytools::mcp::MAX_FAMILY_CONTEXT`] bytes.
    pub fn family_context(&self) -> Option<String> {
        let own = self.self_description.as_deref().or(self.instructions.as_deref());
        let mut text = String::new();
        for part in [self.summary.as_deref(), own].into_iter().flatten().map(str::trim).filter(|p| !p.is_empty()) {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(part);
        }
        let mut end = text.len().min(tinytools::mcp::MAX_FAMILY_CONTEXT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        (!text.is_empty()).then_some(text)
    }

    /// Whether `other` lists the same tool names in the same order (a summary written for one
    /// still describes the other).
    pub fn same_tools(&self, other: &Manifest) -> bool {
        self.tools.len() == other.tools.len() && self.tools.iter().zip(&other.tools).all(|(a, b)| a.name == b.name)
    }
}

/// The hash of a server's unexpanded config: FNV-1a 64 over [`ServerConfig::identity`],
/// stable across runs and platforms.
pub fn config_hash(server: &ServerConfig) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in server.identity().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GatewayConfig;
    use serde_json::json;

    fn server(args: &str) -> ServerConfig {
        let text = format!(
            r#"{{"mcpServers": {{"time": {{"command": "uvx", "args": {args}, "env": {{"K": "${{SECRET}}"}}}}}}}}"#
        );
        GatewayConfig::parse("c.json", &text).unwrap().servers.remove("time").unwrap()
    }

    fn manifest(server: &ServerConfig) -> Manifest {
        Manifest {
            format: CACHE_FORMAT,
            config_hash: config_hash(server),
            server_name: Some("time".into()),
            server_version: Some("1.0".into()),
            instructions: None,
            self_description: None,
            summary: Some("Tells the time.".into()),
            tools: vec![CachedTool {
                name: "now".into(),
                description: Some("The time.".into()),
                title: None,
                input_schema: json!({"type": "object"}),
                annotations: Some(json!({"readOnlyHint": true})),
            }],
        }
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tinytools-gateway-cache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_stored_manifest_loads_back_and_a_new_config_misses() {
        let cache = ManifestCache::new(temp_dir("round"));
        let time = server(r#"["mcp-server-time"]"#);
        assert_eq!(cache.load(&time), None);
        cache.store(&time, &manifest(&time)).unwrap();
        assert_eq!(cache.load(&time), Some(manifest(&time)));
        let edited = server(r#"["mcp-server-time", "--tz=UTC"]"#);
        assert_ne!(config_hash(&time), config_hash(&edited));
        assert_eq!(cache.load(&edited), None);
        let leftovers: Vec<_> = std::fs::read_dir(cache.dir()).unwrap().filter_map(Result::ok).collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    #[test]
    fn a_corrupt_file_is_ignored() {
        let cache = ManifestCache::new(temp_dir("corrupt"));
        let time = server("[]");
        std::fs::create_dir_all(cache.dir()).unwrap();
        std::fs::write(cache.path_for(&time), "{not json").unwrap();
        assert_eq!(cache.load(&time), None);
        std::fs::write(cache.path_for(&time), r#"{"format": 99}"#).unwrap();
        assert_eq!(cache.load(&time), None);
        cache.store(&time, &manifest(&time)).unwrap();
        assert!(cache.load(&time).is_some(), "a store replaces the corrupt file");
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    #[test]
    fn the_key_hashes_the_unexpanded_config() {
        let time = server("[]");
        assert_eq!(config_hash(&time), config_hash(&server("[]")));
        assert_eq!(config_hash(&time).len(), 16);
        assert!(time.identity().contains("${SECRET}"));
    }
}
