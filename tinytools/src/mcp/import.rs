//! Importing a server: [`McpImport`] (how) and [`McpServer`] (the live connection).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::Tool as RemoteTool;
use rmcp::service::{MaybeSendFuture, NotificationContext, RunningService};
use rmcp::transport::{IntoTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;

use super::naming::{default_prefix, family_for, namespaced_name, remote_description};
use super::summary::{SummaryError, SummaryWriter, family_context, self_description};
use super::{McpError, McpTool};
use crate::tool::TOOL_SEARCH;
use crate::{SchemaCompaction, ToolAnnotations, ToolExposure, ToolRegistry, ToolSpec};

/// How one MCP server's tools are imported: under which family and name prefix, with which
/// exposure and schema budget, and how long to wait for the server.
///
/// The defaults are the spec's advice for third-party catalogues: every tool
/// [`Deferred`](ToolExposure::Deferred), [`SchemaCompaction::THIRD_PARTY`] on the wire, the
/// family named after the server and names prefixed `{server}__`.
///
/// ```
/// use std::time::Duration;
/// use tinytools::{SchemaCompaction, ToolExposure};
/// use tinytools::mcp::McpImport;
///
/// let import = McpImport::new("filesystem")
///     .expose("read_text_file", ToolExposure::Direct)
///     .expose("move_file", ToolExposure::Hidden)
///     .call_timeout(Duration::from_secs(10));
/// assert_eq!(import.family_name(), "filesystem");
/// assert_eq!(import.prefix_str(), "filesystem__");
/// assert_eq!(import.exposure_of("read_text_file"), ToolExposure::Direct);
/// assert_eq!(import.exposure_of("list_directory"), ToolExposure::Deferred);
/// ```
#[derive(Clone, Debug)]
pub struct McpImport {
    server: Arc<str>,
    family: String,
    prefix: String,
    exposure: ToolExposure,
    overrides: BTreeMap<String, ToolExposure>,
    compaction: SchemaCompaction,
    connect_timeout: Duration,
    call_timeout: Duration,
    summary: Option<String>,
}

impl McpImport {
    /// Imports under this server name: the family (made valid) and the `{name}__` prefix.
    pub fn new(server: impl Into<String>) -> Self {
        let server: String = server.into();
        Self {
            family: family_for(&server),
            prefix: default_prefix(&server),
            server: server.into(),
            exposure: ToolExposure::Deferred,
            overrides: BTreeMap::new(),
            compaction: SchemaCompaction::THIRD_PARTY,
            connect_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            summary: None,
        }
    }

    /// Uses another name prefix (`""` keeps the server's names as they are, made safe).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Uses another family (made valid: other characters become `-`).
    pub fn family(mut self, family: &str) -> Self {
        self.family = family_for(family);
        self
    }

    /// The exposure of every tool not named in [`expose`](Self::expose). Default: Deferred.
    pub fn exposure(mut self, exposure: ToolExposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// The exposure of one tool, by the name the server gives it.
    pub fn expose(mut self, remote_name: impl Into<String>, exposure: ToolExposure) -> Self {
        self.overrides.insert(remote_name.into(), exposure);
        self
    }

    /// The schema budget applied on the wire. Default: [`SchemaCompaction::THIRD_PARTY`].
    pub fn compaction(mut self, compaction: SchemaCompaction) -> Self {
        self.compaction = compaction;
        self
    }

    /// How long to wait for the server to start and answer `initialize`. Default: 30 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one `tools/call` may take before it fails. Default: 60 s (a run's
    /// [`tool_timeout`](crate::RunPolicy::tool_timeout) applies too, whichever is shorter).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// A summary of the server, written once by [`McpServer::write_summary`] and kept by the
    /// host: it joins the server's own words in its family's description, which discovery
    /// ranks with and never shows (so a search finds the server's tools by what it is for).
    pub fn family_summary(mut self, summary: impl Into<String>) -> Self {
        let summary = summary.into();
        self.summary = (!summary.trim().is_empty()).then_some(summary);
        self
    }

    /// The server's name, as given.
    pub fn server_name(&self) -> &str {
        &self.server
    }

    /// The family every imported tool carries.
    pub fn family_name(&self) -> &str {
        &self.family
    }

    /// The prefix of every imported name.
    pub fn prefix_str(&self) -> &str {
        &self.prefix
    }

    /// The exposure a tool of this (server-side) name is imported with.
    pub fn exposure_of(&self, remote_name: &str) -> ToolExposure {
        self.overrides.get(remote_name).copied().unwrap_or(self.exposure)
    }
}

/// What an import or refresh did, tool by tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportReport {
    /// The registry names now imported, in the server's order.
    pub imported: Vec<String>,
    /// Tools left out, each with the reason.
    pub skipped: Vec<SkippedTool>,
    /// Names a refresh took out of the registry (the previous import's).
    pub removed: Vec<String>,
}

/// A server tool that was not imported.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedTool {
    /// Its name on the server.
    pub remote_name: String,
    /// The name it would have had.
    pub name: String,
    /// Why it was left out.
    pub reason: String,
}

/// A live connection to one MCP server, whose tools register as tinytools tools.
///
/// ```no_run
/// use std::sync::Arc;
/// use tinytools::ToolRegistry;
/// use tinytools::mcp::{McpImport, McpServer};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let mut command = tokio::process::Command::new("uvx");
/// command.arg("mcp-server-time");
/// let time = McpServer::connect_stdio(McpImport::new("time"), command).await?;
///
/// let mut registry = ToolRegistry::new();
/// let report = time.register_into(&mut registry).await?;
/// assert!(report.skipped.is_empty());
///
/// // Between runs: if the server said its list changed, take the new one.
/// time.refresh_if_changed(&mut registry).await?;
/// # Ok(()) }
/// ```
pub struct McpServer {
    import: McpImport,
    service: RunningService<RoleClient, ListWatcher>,
    /// The server's `list_changed` count when the tools were last listed.
    listed_at: AtomicU64,
    /// The registry names of the last import.
    registered: Mutex<Vec<String>>,
}

impl McpServer {
    /// Starts the server as a child process speaking MCP over stdio, and initializes it.
    ///
    /// The child is killed when the `McpServer` is dropped. Its stderr is inherited.
    ///
    /// # Errors
    /// [`McpError::Spawn`] when the program cannot start; [`McpError::Connect`] or
    /// [`McpError::ConnectTimedOut`] when it does not complete the MCP handshake.
    pub async fn connect_stdio(import: McpImport, command: tokio::process::Command) -> Result<Self, McpError> {
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        let transport = TokioChildProcess::new(command).map_err(|source| McpError::Spawn {
            server: import.server.to_string(),
            program,
            source,
        })?;
        Self::connect(import, transport).await
    }

    /// Initializes a server over any rmcp transport (an in-process pipe, streamable HTTP).
    ///
    /// # Errors
    /// [`McpError::Connect`] or [`McpError::ConnectTimedOut`].
    pub async fn connect<T, E, A>(import: McpImport, transport: T) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let watcher = ListWatcher::default();
        let server = import.server.to_string();
        let service = match tokio::time::timeout(import.connect_timeout, watcher.serve(transport)).await {
            Ok(Ok(service)) => service,
            Ok(Err(error)) => return Err(McpError::Connect { server, reason: error.to_string() }),
            Err(_) => return Err(McpError::ConnectTimedOut { server, after: import.connect_timeout }),
        };
        Ok(Self { import, service, listed_at: AtomicU64::new(0), registered: Mutex::new(Vec::new()) })
    }

    /// The import settings.
    pub fn import(&self) -> &McpImport {
        &self.import
    }

    /// The name and version the server reported in its handshake.
    pub fn server_info(&self) -> Option<(String, String)> {
        let info = self.service.peer().peer_info()?;
        info.server_info.as_ref().map(|server| (server.name.clone(), server.version.clone()))
    }

    /// The instructions the server sent in its handshake, if any: third-party text for the
    /// host to show its model (or not).
    pub fn instructions(&self) -> Option<String> {
        self.service.peer().peer_info()?.instructions.clone()
    }

    /// What the server says of itself in its handshake: its title and description (MCP's
    /// `Implementation`), then its `instructions`, each once, at most
    /// [`MAX_FAMILY_CONTEXT`](super::MAX_FAMILY_CONTEXT) bytes in all. Registering the server's tools gives it to their
    /// family ([`ToolRegistry::describe_family`]), which discovery ranks with and never shows.
    pub fn self_description(&self) -> Option<String> {
        self_description(&*self.service.peer().peer_info()?)
    }

    /// A summary of this server written by `writer`'s model from its name, its own words and
    /// its current tools: one request. Keep it with what you cache of the server and give it
    /// to [`McpImport::family_summary`] on the next start, so it is written once.
    ///
    /// # Errors
    /// [`SummaryError::Mcp`] when the server cannot list its tools; the writer's errors.
    pub async fn write_summary(&self, writer: &SummaryWriter) -> Result<String, SummaryError> {
        let (tools, _) = self.tools().await.map_err(Box::new)?;
        let lines: Vec<(&str, &str)> =
            tools.iter().map(|tool| (tool.remote_name.as_str(), tool.spec.description.as_ref())).collect();
        writer.write(&self.import.server, self.self_description().as_deref(), &lines).await
    }

    /// Whether the server sent `notifications/tools/list_changed` since the tools were last listed.
    pub fn tools_changed(&self) -> bool {
        self.service.service().changes() > self.listed_at.load(Ordering::Acquire)
    }

    /// Whether the connection is closed (the server exited or the transport broke).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Lists the server's tools (every page) and builds them, namespaced, with the reasons for
    /// any left out. Registers nothing.
    ///
    /// # Errors
    /// [`McpError::List`] when the server cannot answer `tools/list`.
    pub async fn tools(&self) -> Result<(Vec<McpTool>, Vec<SkippedTool>), McpError> {
        let changes = self.service.service().changes();
        let listed = tokio::time::timeout(self.import.call_timeout, self.service.peer().list_all_tools())
            .await
            .map_err(|_| McpError::CallTimedOut {
                server: self.import.server.to_string(),
                after: self.import.call_timeout,
            })?
            .map_err(|source| McpError::List { server: self.import.server.to_string(), source })?;
        self.listed_at.store(changes, Ordering::Release);

        let mut tools = Vec::with_capacity(listed.len());
        let mut skipped = Vec::new();
        let mut taken: BTreeMap<String, String> = BTreeMap::new();
        for remote in listed {
            let name = namespaced_name(&self.import.prefix, &remote.name);
            let refusal = if name == TOOL_SEARCH {
                Some(format!(
                    "`{TOOL_SEARCH}` is the discovery bridge's name and a server may not take it; \
                     import this server with a prefix"
                ))
            } else {
                taken.get(&name).map(|first| {
                    format!(
                        "`{}` and `{first}` both become `{name}`; give this server another prefix or expose only one",
                        remote.name
                    )
                })
            };
            if let Some(reason) = refusal {
                skipped.push(SkippedTool { reason, remote_name: remote.name.to_string(), name });
                continue;
            }
            taken.insert(name.clone(), remote.name.to_string());
            tools.push(self.build(name, remote));
        }
        Ok((tools, skipped))
    }

    /// Lists the server's tools and registers them. A tool whose name is already taken in the
    /// registry, or whose schema does not compile, is skipped and reported, never replaced.
    ///
    /// # Errors
    /// [`McpError::List`] when the server cannot answer `tools/list`; the registry is unchanged.
    pub async fn register_into(&self, registry: &mut ToolRegistry) -> Result<ImportReport, McpError> {
        let (tools, skipped) = self.tools().await?;
        Ok(self.register(tools, registry, ImportReport { skipped, ..ImportReport::default() }))
    }

    /// Replaces the tools this server registered with its current list: the host's answer to
    /// `notifications/tools/list_changed`, between runs (a run's catalogue is fixed when it starts).
    ///
    /// # Errors
    /// [`McpError::List`] when the server cannot answer; the registry is then unchanged.
    pub async fn refresh(&self, registry: &mut ToolRegistry) -> Result<ImportReport, McpError> {
        let (tools, skipped) = self.tools().await?;
        let previous = std::mem::take(&mut *self.registered.lock().unwrap_or_else(PoisonError::into_inner));
        let mut removed = Vec::new();
        for name in previous {
            if registry.remove(&name).is_some() {
                removed.push(name);
            }
        }
        Ok(self.register(tools, registry, ImportReport { skipped, removed, ..ImportReport::default() }))
    }

    /// Registers what was listed, records each refusal, and remembers the names for a refresh.
    fn register(&self, tools: Vec<McpTool>, registry: &mut ToolRegistry, mut report: ImportReport) -> ImportReport {
        // The family is valid by construction (`family_for`), so describing it cannot fail.
        let context = family_context([self.import.summary.as_deref(), self.self_description().as_deref()]);
        let _ = registry.describe_family(self.import.family.clone(), context.unwrap_or_default());
        for tool in tools {
            let (name, remote_name) = (tool.spec.name.to_string(), tool.remote_name.clone());
            match registry.register_arc(Arc::new(tool)) {
                Ok(_) => report.imported.push(name),
                Err(error) => report.skipped.push(SkippedTool { remote_name, name, reason: error.to_string() }),
            }
        }
        for skip in &report.skipped {
            tracing::warn!(server = %self.import.server, tool = %skip.remote_name, reason = %skip.reason, "MCP tool not imported");
        }
        *self.registered.lock().unwrap_or_else(PoisonError::into_inner) = report.imported.clone();
        report
    }

    /// [`refresh`](Self::refresh) only when the server announced a change since the last
    /// listing: the one call a host makes between runs. `None` when nothing changed.
    ///
    /// # Errors
    /// As [`refresh`](Self::refresh).
    pub async fn refresh_if_changed(&self, registry: &mut ToolRegistry) -> Result<Option<ImportReport>, McpError> {
        if !self.tools_changed() {
            return Ok(None);
        }
        self.refresh(registry).await.map(Some)
    }

    /// Ends the session and stops the server.
    pub async fn close(mut self) {
        let _ = self.service.close().await;
    }

    fn build(&self, name: String, remote: RemoteTool) -> McpTool {
        let description = remote_description(
            &self.import.server,
            &remote.name,
            remote.description.as_deref(),
            remote.title.as_deref(),
        );
        let hints = remote.annotations.as_ref();
        let annotations = ToolAnnotations::from_mcp_hints(
            hints.and_then(|a| a.read_only_hint),
            hints.and_then(|a| a.destructive_hint),
            hints.and_then(|a| a.idempotent_hint),
            hints.and_then(|a| a.open_world_hint),
        );
        let spec = ToolSpec {
            exposure: self.import.exposure_of(&remote.name),
            family: Some(self.import.family.clone().into()),
            annotations,
            compaction: Some(self.import.compaction),
            ..ToolSpec::owned(name, description)
        };
        McpTool {
            spec,
            remote_name: remote.name.to_string(),
            parameters: Value::Object(remote.input_schema.as_ref().clone()),
            server: Arc::clone(&self.import.server),
            peer: self.service.peer().clone(),
            call_timeout: self.import.call_timeout,
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("server", &self.import.server).finish_non_exhaustive()
    }
}

/// The client side of the session: counts `tools/list_changed` notifications.
#[derive(Clone, Default)]
pub(crate) struct ListWatcher {
    changes: Arc<AtomicU64>,
}

impl ListWatcher {
    fn changes(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }
}

impl ClientHandler for ListWatcher {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.changes.fetch_add(1, Ordering::AcqRel);
        std::future::ready(())
    }
}
