//! The `gateway` arm: the 41-tool catalogue served as MCP servers, one per family, behind the
//! `tinytools-gateway` binary, and the agent loop talking to the gateway through tinytools' own
//! MCP client. The model sees exactly the gateway's `tools/list` (`tool_search`, `call_tool`
//! and `notes__read_note`, Direct, as the gateway words them); the run's own discovery bridge
//! stays inactive, since its registry holds no Deferred tool.
//!
//! [`gateway_arm`] writes a config into a fresh temporary directory (one `mcpServers` entry per
//! family, each the catalogue server started with `--family <name>` and an `allow` list of that
//! family's tools, `read_note` made Direct), fills the gateway's cache with `tinytools-gateway
//! report` (so the first `tools/list` already lists every tool), then starts `tinytools-gateway
//! --config ... --cache-dir ...` and imports its tools. The gateway is the binary a user
//! installs, started as a process, never linked in.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};
use tinytools::mcp::{McpImport, McpServer, McpTool};
use tinytools::run::RunPolicy;
use tinytools::{SchemaCompaction, Tool, ToolAnnotations, ToolContext, ToolExposure, ToolRegistry, ToolResult};
use tinytools_examples::catalogue;

use crate::process::GatewayProcess;
use crate::{AidsChoice, ArmKind, ArmSpec};

/// The name `tinytools-gateway` gives its forwarding tool.
pub use tinytools::mcp::CALL_TOOL;

/// The gateway arm's system prompt, before the gateway's own instructions: the suite's prompt
/// without its sentence about `tool_search` (an MCP client's host knows nothing of the gateway;
/// the gateway's instructions and tool descriptions say how to use it).
pub const GATEWAY_SYSTEM_PROMPT: &str = "You are a helpful assistant. You cannot know live data such as \
prices, the weather or the user's accounts: get it with a tool, never guess it. Reply in one short sentence \
once you have the result.";

/// Where the two programs the gateway arm starts are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayBinaries {
    /// The `tinytools-gateway` binary.
    pub gateway: PathBuf,
    /// An MCP server on stdio serving the example catalogue: the `mcp_serve` example (which
    /// honours `--family`), or any server of the whole catalogue (the config's `allow` lists
    /// keep each family's server to its family).
    pub catalogue_server: PathBuf,
    /// The `bfcl_serve` binary, which serves BFCL distractor tools (only needed when the arm
    /// asks for [`distractors`](GatewaySetup::distractors)).
    pub distractor_server: PathBuf,
}

impl GatewayBinaries {
    /// The binaries a `cargo build` puts beside this program: `<profile>/tinytools-gateway` and
    /// `<profile>/examples/mcp_serve`, where `<profile>` is the directory of the running
    /// executable (the `live_tasks` binary's), or its parent for an example or a test. Whether
    /// they exist is [`check`](Self::check)ed when the arm starts.
    ///
    /// # Errors
    /// When the running executable cannot be found.
    pub fn beside_current_exe() -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|err| format!("cannot find the running executable: {err}"))?;
        let dir = exe.parent().ok_or_else(|| format!("{} has no parent directory", exe.display()))?;
        let profile = match dir.file_name().and_then(|name| name.to_str()) {
            Some("examples" | "deps") => dir.parent().unwrap_or(dir),
            _ => dir,
        };
        let suffix = std::env::consts::EXE_SUFFIX;
        Ok(Self {
            gateway: profile.join(format!("tinytools-gateway{suffix}")),
            catalogue_server: profile.join("examples").join(format!("mcp_serve{suffix}")),
            distractor_server: profile.join(format!("bfcl_serve{suffix}")),
        })
    }

    /// Fails when the gateway or the catalogue server is not a file (and the distractor server,
    /// when `distractors`), naming the `cargo build` command that builds them (`--release` when
    /// the gateway's directory is `release`).
    ///
    /// # Errors
    /// Which binary is missing, and how to build it.
    pub fn check(&self, distractors: bool) -> Result<(), String> {
        let release = self.gateway.parent().and_then(Path::file_name).is_some_and(|name| name == "release");
        let release = if release { " --release" } else { "" };
        let mut needed = vec![("tinytools-gateway", &self.gateway), ("catalogue server", &self.catalogue_server)];
        if distractors {
            needed.push(("distractor server", &self.distractor_server));
        }
        for (what, path) in needed {
            if !path.is_file() {
                return Err(format!(
                    "the gateway arm needs the {what} binary at {}, which is missing; build it with `cargo \
                     build{release} -p tinytools-gateway -p tinytools-examples -p tinytools-bench --bin \
                     tinytools-gateway --example mcp_serve --bin live_tasks --bin bfcl_serve` (or give its \
                     path: --gateway-bin, --catalogue-server)",
                    path.display()
                ));
            }
        }
        Ok(())
    }
}

/// How the gateway arm is set up, beside its binaries.
#[derive(Clone, Debug)]
pub struct GatewaySetup {
    /// Every run's turn limit.
    pub max_turns: usize,
    /// Whether the system prompt carries the gateway's handshake instructions, as MCP clients
    /// show a server's instructions to their model.
    pub instructions: bool,
    /// Arguments for the gateway after its `--config` and `--cache-dir` (such as
    /// `--embedding-model DIR` or `--manifest-names grouped`).
    pub serve_args: Vec<String>,
    /// Every run's aids.
    pub aids: AidsChoice,
    /// BFCL distractor tools served beside the catalogue, [`DISTRACTORS_PER_SERVER`] to a
    /// server (`bfcl1`, `bfcl2`, ...): the gateway then fronts `41 + distractors` tools.
    pub distractors: usize,
}

impl Default for GatewaySetup {
    fn default() -> Self {
        Self { max_turns: 8, instructions: true, serve_args: Vec::new(), aids: AidsChoice::default(), distractors: 0 }
    }
}

/// How many BFCL distractor tools each distractor server serves.
pub const DISTRACTORS_PER_SERVER: usize = 40;

/// The gateway's config: one server per family, each the catalogue server told its family and
/// allowed only its tools; `read_note` Direct, as in the other arms. With `distractors`, as
/// many more servers (`bfcl1`, `bfcl2`, ...) as serve that many BFCL tools, each the
/// `bfcl_serve` binary told its slice.
pub fn gateway_config(binaries: &GatewayBinaries, distractors: usize) -> Value {
    let catalogue_server = &binaries.catalogue_server;
    let mut servers: Map<String, Value> = catalogue::families()
        .into_iter()
        .map(|(family, names)| {
            let mut gateway = json!({"allow": names});
            if family == catalogue::NOTES_FAMILY {
                gateway["tools"] = json!({"read_note": "direct"});
            }
            let server = json!({
                "command": catalogue_server.to_string_lossy(),
                "args": ["--family", family],
                "gateway": gateway,
            });
            (family, server)
        })
        .collect();
    for (index, skip) in (0..distractors).step_by(DISTRACTORS_PER_SERVER).enumerate() {
        let count = DISTRACTORS_PER_SERVER.min(distractors - skip);
        let server = json!({
            "command": binaries.distractor_server.to_string_lossy(),
            "args": ["--skip", skip.to_string(), "--count", count.to_string()],
        });
        servers.insert(format!("bfcl{}", index + 1), server);
    }
    json!({ "mcpServers": servers })
}

/// Starts the gateway over the catalogue's servers (and the distractor servers `setup` asks
/// for) and builds the arm: its registry is the gateway's tools, Direct, under the gateway's
/// own names; its system prompt is [`GATEWAY_SYSTEM_PROMPT`] then, when
/// [`instructions`](GatewaySetup::instructions), the gateway's handshake instructions.
///
/// # Errors
/// When a binary is missing, the directory cannot be written, the cache cannot be filled (a
/// server failed to list its tools), or the gateway does not complete the handshake.
pub async fn gateway_arm(binaries: &GatewayBinaries, setup: &GatewaySetup) -> Result<ArmSpec, String> {
    binaries.check(setup.distractors > 0)?;
    let dir = fresh_dir()?;
    // From here the directory is removed on every way out: `GatewayProcess` owns it, or this guard.
    let guard = DirGuard(Some(dir.clone()));
    let config = dir.join("config.json");
    let cache = dir.join("cache");
    let text = serde_json::to_string_pretty(&gateway_config(binaries, setup.distractors))
        .map_err(|err| format!("cannot write the gateway config: {err}"))?;
    std::fs::write(&config, text).map_err(|err| format!("cannot write {}: {err}", config.display()))?;
    let tools_behind = fill_cache(&binaries.gateway, &config, &cache).await?;

    let mut command = tokio::process::Command::new(&binaries.gateway);
    command.arg("--config").arg(&config).arg("--cache-dir").arg(&cache).args(&setup.serve_args);
    let import = McpImport::new("gateway").exposure(ToolExposure::Direct).compaction(SchemaCompaction::UNLIMITED);
    let server = McpServer::connect_stdio(import, command)
        .await
        .map_err(|err| format!("cannot start {}: {err}", binaries.gateway.display()))?;
    let (tools, skipped) = server.tools().await.map_err(|err| format!("the gateway's tools/list failed: {err}"))?;
    if let Some(skip) = skipped.first() {
        return Err(format!(
            "the gateway lists a tool tinytools cannot import: {} ({})",
            skip.remote_name, skip.reason
        ));
    }
    let mut registry = ToolRegistry::new();
    for tool in tools {
        let name = tool.remote_name().to_owned();
        registry
            .register(GatewayTool { name: name.clone(), inner: tool })
            .map_err(|err| format!("cannot register the gateway's `{name}`: {err}"))?;
    }
    let handshake = server.instructions().filter(|text| !text.trim().is_empty());
    let mut system_prompt = GATEWAY_SYSTEM_PROMPT.to_owned();
    if let Some(text) = handshake.as_deref().filter(|_| setup.instructions) {
        system_prompt.push_str("\n\n");
        system_prompt.push_str(text);
    }
    let process = GatewayProcess {
        server: tokio::sync::Mutex::new(Some(server)),
        dir: guard.release(),
        tools_behind,
        instructions: handshake,
    };
    let policy = RunPolicy::default().with_max_turns(setup.max_turns);
    Ok(ArmSpec {
        kind: ArmKind::Gateway,
        registry: Arc::new(registry),
        policy,
        aids: setup.aids,
        system_prompt: system_prompt.into(),
        gateway: Some(Arc::new(process)),
        pre_search: None,
        stream: false,
    })
}

/// Runs `tinytools-gateway report`, which starts every server whose tools are not cached and
/// caches them; returns the number of tools the gateway fronts.
async fn fill_cache(gateway: &Path, config: &Path, cache: &Path) -> Result<usize, String> {
    let output = tokio::process::Command::new(gateway)
        .arg("report")
        .arg("--config")
        .arg(config)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--json")
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|err| format!("cannot run {} report: {err}", gateway.display()))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_slice(&output.stdout).map_err(|err| {
        format!(
            "`tinytools-gateway report` did not print its JSON report ({err}; {}): {}",
            output.status,
            stderr.trim()
        )
    })?;
    let servers = report["servers"].as_array().map(Vec::as_slice).unwrap_or_default();
    let failures: Vec<String> = servers
        .iter()
        .filter_map(|server| Some(format!("{}: {}", server["name"].as_str()?, server["failure"].as_str()?)))
        .collect();
    if !failures.is_empty() || !output.status.success() {
        return Err(format!(
            "`tinytools-gateway report` could not list every catalogue server's tools ({}): {}",
            output.status,
            if failures.is_empty() { stderr.trim().to_owned() } else { failures.join("; ") }
        ));
    }
    Ok(servers.iter().filter_map(|server| server["exposed"].as_u64()).sum::<u64>() as usize)
}

/// A new, empty directory under the system's temporary directory.
fn fresh_dir() -> Result<PathBuf, String> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tinytools-gateway-arm-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    Ok(dir)
}

/// Removes a directory when dropped, unless released.
struct DirGuard(Option<PathBuf>);

impl DirGuard {
    fn release(mut self) -> PathBuf {
        self.0.take().unwrap_or_default()
    }
}

impl Drop for DirGuard {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// One of the gateway's tools under the gateway's own name (the import's `gateway__` prefix
/// taken off: tinytools refuses to import a server's `tool_search` unprefixed, while a host may
/// register one), Direct, its declaration as the gateway sent it.
struct GatewayTool {
    name: String,
    inner: McpTool,
}

#[async_trait::async_trait]
impl Tool for GatewayTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn parameters_schema(&self) -> Value {
        self.inner.parameters_schema()
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    fn annotations(&self) -> ToolAnnotations {
        self.inner.annotations()
    }

    fn schema_compaction(&self) -> Option<SchemaCompaction> {
        None
    }

    async fn execute(&self, args: Value) -> anyhow::Result<ToolResult> {
        self.inner.execute(args).await
    }

    async fn execute_with(&self, args: Value, ctx: &ToolContext) -> anyhow::Result<ToolResult> {
        self.inner.execute_with(args, ctx).await
    }
}
