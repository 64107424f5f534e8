//! The downstream servers' lives: configured → manifest-known → started → in use.
//!
//! [`Supervisor`] holds one [`Downstream`] per configured server. A server whose manifest is
//! in the cache is not started until a call needs it; one without is started in the
//! background at startup to learn its tools ([`crate::discovery`]). A failed start, a crash or
//! a hang past the call timeout becomes a [`CallFailure`] for that call only: the connection is
//! dropped (the child is killed) and the next call starts the server again. Other servers are
//! never touched. A failed start is also kept ([`Downstream::failure`]) so the manifest can
//! name the server with its reason, and logged once (again only when the reason changes).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, JsonObject,
    ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;
use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;

use crate::cache::{CACHE_FORMAT, CachedTool, Manifest, ManifestCache, config_hash};
use crate::config::{GatewayConfig, ServerConfig, Transport};
pub use crate::failure::CallFailure;
use crate::failure::{Failed, StartFailure, describe, seconds};
use crate::launch::start;
use crate::relay::{Connection, ProgressRelay, Upstream};
use crate::transport::lost_remote;

/// Where a downstream server is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Configured; its tools are not known yet.
    Configured,
    /// Its tools are known (from the cache or an earlier run), its process is not running.
    ManifestKnown,
    /// Running; no call has used it yet.
    Started,
    /// Running and has answered calls.
    InUse,
}

/// The servers of one config.
#[derive(Debug)]
pub struct Supervisor {
    servers: BTreeMap<String, Arc<Downstream>>,
    changes: Arc<watch::Sender<u64>>,
    discovered: AtomicBool,
}

/// One downstream server.
pub struct Downstream {
    config: ServerConfig,
    file: PathBuf,
    cache: Option<ManifestCache>,
    manifest: RwLock<Option<Arc<Manifest>>>,
    connection: Mutex<Option<Arc<Connection>>>,
    used: AtomicBool,
    starts: AtomicU64,
    changes: Arc<watch::Sender<u64>>,
    relay: ProgressRelay,
    /// Start attempts finished, and the last one's failure (cleared by a good start).
    attempts: AtomicU64,
    last_failure: std::sync::Mutex<Option<Failed>>,
}

impl Supervisor {
    /// Every server of `config`, each with its cached manifest when `cache` holds one. Starts
    /// nothing: [`Discovery`](crate::discovery::Discovery) starts the servers without one.
    pub fn new(config: &GatewayConfig, cache: Option<ManifestCache>) -> Self {
        let changes = Arc::new(watch::channel(0).0);
        let servers = config
            .servers
            .iter()
            .map(|(name, server)| {
                let manifest = cache.as_ref().and_then(|cache| cache.load(server)).map(Arc::new);
                let downstream = Downstream {
                    config: server.clone(),
                    file: config.file.clone(),
                    cache: cache.clone(),
                    manifest: RwLock::new(manifest),
                    connection: Mutex::new(None),
                    used: AtomicBool::new(false),
                    starts: AtomicU64::new(0),
                    changes: Arc::clone(&changes),
                    relay: ProgressRelay::default(),
                    attempts: AtomicU64::new(0),
                    last_failure: std::sync::Mutex::new(None),
                };
                (name.clone(), Arc::new(downstream))
            })
            .collect();
        Self { servers, changes, discovered: AtomicBool::new(false) }
    }

    /// True the first time it is asked: the servers without a manifest are then the asker's
    /// to discover (a second gateway over the same supervisor does not start them again).
    pub(crate) fn claim_discovery(&self) -> bool {
        !self.discovered.swap(true, Ordering::AcqRel)
    }

    /// Bumped each time a server's manifest, start failure or discovery changes.
    pub fn generation(&self) -> u64 {
        *self.changes.borrow()
    }

    /// Waits until the [`generation`](Self::generation) is past `seen`.
    pub(crate) async fn changed_since(&self, seen: u64) {
        let mut changes = self.changes.subscribe();
        let _ = changes.wait_for(|generation| *generation != seen).await;
    }

    /// Bumps the generation: something the catalogue shows changed.
    pub(crate) fn touch(&self) {
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// The servers, by name.
    pub fn servers(&self) -> impl Iterator<Item = &Arc<Downstream>> {
        self.servers.values()
    }

    /// One server.
    pub fn server(&self, name: &str) -> Option<&Arc<Downstream>> {
        self.servers.get(name)
    }
}

impl Downstream {
    /// Its config.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Its manifest, when known.
    pub fn manifest(&self) -> Option<Arc<Manifest>> {
        self.manifest.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Why its last start (or listing, when its tools are unknown) failed; `None` once a start
    /// succeeds.
    pub fn failure(&self) -> Option<Failed> {
        self.last_failure.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Records the outcome of a start or listing: bumps the generation when the reason
    /// changed, and logs a failure unless the same reason was logged for the last one.
    fn record(&self, failed: Option<Failed>) {
        let mut last = self.last_failure.lock().unwrap_or_else(PoisonError::into_inner);
        let before = last.as_ref().map(|failed| failed.reason.clone());
        let now = failed.as_ref().map(|failed| failed.reason.clone());
        if let Some(failed) = &failed {
            let name = &self.config.name;
            if before.as_ref() == Some(&failed.reason) {
                tracing::debug!(server = %name, reason = %failed.reason, "the server failed to start again");
            } else {
                let config = self.file.display();
                tracing::warn!(server = %name, reason = %failed.reason, %config, "{}", failed.message);
            }
        }
        *last = failed;
        drop(last);
        if before != now {
            self.changes.send_modify(|generation| *generation += 1);
        }
    }

    /// How many times its process has been started.
    pub fn starts(&self) -> u64 {
        self.starts.load(Ordering::Relaxed)
    }

    /// Where it is in its life.
    pub fn stage(&self) -> Stage {
        let running = self.connection.try_lock().map_or(true, |slot| slot.as_deref().is_some_and(alive));
        match (running, self.used.load(Ordering::Relaxed), self.manifest().is_some()) {
            (true, true, _) => Stage::InUse,
            (true, false, _) => Stage::Started,
            (false, _, true) => Stage::ManifestKnown,
            (false, _, false) => Stage::Configured,
        }
    }

    /// Sends one `tools/call`, starting the server first when it is not running. The server's
    /// progress notifications for it go to `upstream` (when the client asked for progress);
    /// when `cancel` fires, the server is sent `notifications/cancelled` for the call.
    ///
    /// # Errors
    /// [`CallFailure`] when the server cannot be started, exits or breaks the connection, does
    /// not answer within its call timeout, or answers with a protocol error; also when the
    /// call is cancelled.
    pub async fn call(
        self: &Arc<Self>,
        tool: &str,
        arguments: JsonObject,
        upstream: Option<Upstream>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallFailure> {
        let name = &self.config.name;
        let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        let mut retried = false;
        let (connection, handle, route) = loop {
            let connection = self.connection().await?;
            // The route is in place before any notification of this call can be handled.
            let mut routes = self.relay.lock().await;
            match connection.peer().send_request_with_option(request.clone(), PeerRequestOptions::no_options()).await {
                Ok(handle) => {
                    let route = upstream
                        .clone()
                        .map(|upstream| self.relay.route(&mut routes, handle.progress_token.clone(), upstream));
                    break (connection, handle, route);
                }
                // The request never left: the process had exited since the last call. Once.
                Err(_) if !retried => {
                    drop(routes);
                    retried = true;
                    self.stop(&connection).await;
                }
                Err(error) => return Err(self.broken(&connection, &error).await),
            }
        };
        self.used.store(true, Ordering::Relaxed);
        let peer = connection.peer();
        let id = handle.id.clone();
        let token = handle.progress_token.clone();
        let after = self.config.policy.call_timeout;
        let answer = tokio::select! {
            answer = tokio::time::timeout(after, handle.await_response()) => answer,
            () = cancel.cancelled() => {
                let reason = "the client cancelled the call".to_owned();
                if let Err(error) = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason))).await {
                    tracing::debug!(server = %name, %error, "could not pass the cancellation on");
                }
                return Err(CallFailure(format!("the call to the `{name}` server was cancelled")));
            }
        };
        // The server answered: its progress for the call reaches the client before the answer.
        if route.is_some() && answer.is_ok() {
            self.relay.settle(&token).await;
        }
        drop(route);
        match answer {
            Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
            Ok(Ok(_)) => Err(CallFailure(format!(
                "the `{name}` server answered `{tool}` with something other than a tool result (such as a task or an \
                 input request), which this gateway does not relay; call the server from the client directly."
            ))),
            Ok(Err(ServiceError::McpError(error))) => {
                Err(CallFailure(format!("the `{name}` server refused the call: {}", error.message)))
            }
            Ok(Err(error)) => Err(self.broken(&connection, &error).await),
            Err(_) => {
                // Dropping the request sent nothing: tell the server, then stop it.
                let reason = format!("no answer within {}", seconds(after));
                let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason))).await;
                self.stop(&connection).await;
                Err(CallFailure(format!(
                    "the `{name}` server did not answer `{tool}` within {}; it was stopped and will be started \
                     again on the next call. Retry with a smaller request, or raise gateway.call_timeout_secs for it.",
                    seconds(after)
                )))
            }
        }
    }

    /// Stops a connection that broke and says so: for a remote server in
    /// [`lost_remote`]'s words, scrubbed of its secrets.
    async fn broken(&self, connection: &Arc<Connection>, error: &ServiceError) -> CallFailure {
        self.stop(connection).await;
        if matches!(self.config.transport, Transport::Http { .. }) {
            return lost_remote(&self.config, error);
        }
        CallFailure(format!(
            "the `{}` server stopped answering ({}); its process may have crashed. \
             It will be started again on the next call: retry once, and if it fails again check the server.",
            self.config.name,
            describe(error)
        ))
    }

    /// The progress relay of this server's calls.
    pub fn relay(&self) -> &ProgressRelay {
        &self.relay
    }

    /// The live connection, started when there is none (or the last one closed). A call's
    /// fresh connection whose server's tools are unknown or stale lists them again, aside.
    async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, CallFailure> {
        let (connection, fresh) = self.connect().await?;
        if fresh && self.stale(&connection) {
            let server = Arc::clone(self);
            let listed = Arc::clone(&connection);
            tokio::spawn(async move {
                if let Err(failure) = server.list_on(&listed).await {
                    tracing::warn!(server = %server.config.name, %failure, "could not refresh the server's tools");
                }
            });
        }
        Ok(connection)
    }

    /// The live connection, and whether this call started it.
    async fn connect(&self) -> Result<(Arc<Connection>, bool), CallFailure> {
        let attempts = self.attempts.load(Ordering::Acquire);
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref().filter(|c| alive(c)) {
            return Ok((Arc::clone(connection), false));
        }
        *slot = None;
        // A start that failed while this call waited for it is this call's answer too: each
        // waiting call starting the server again would queue one start timeout after another.
        if self.attempts.load(Ordering::Acquire) != attempts
            && let Some(failed) = self.failure()
        {
            return Err(failed.message);
        }
        let started = start(&self.config, &self.file, &self.relay, || {
            self.starts.fetch_add(1, Ordering::Relaxed);
        })
        .await;
        self.record(started.as_ref().err().cloned());
        self.attempts.fetch_add(1, Ordering::AcqRel);
        let connection = Arc::new(started.map_err(|failed| failed.message)?);
        *slot = Some(Arc::clone(&connection));
        Ok((connection, true))
    }

    /// Whether the manifest is missing, or from another config or server version than the
    /// server `connection` reached.
    fn stale(&self, connection: &Connection) -> bool {
        let info = connection.peer().peer_info().and_then(|info| info.server_info.clone());
        match (self.manifest(), info) {
            (None, _) => true,
            (Some(known), Some(info)) => {
                known.server_name.as_deref() != Some(info.name.as_str())
                    || known.server_version.as_deref() != Some(info.version.as_str())
            }
            (Some(_), None) => false,
        }
    }

    /// Drops this connection, killing the child; a later call starts a new one.
    async fn stop(&self, connection: &Arc<Connection>) {
        let mut slot = self.connection.lock().await;
        if slot.as_ref().is_some_and(|current| Arc::ptr_eq(current, connection)) {
            *slot = None;
        }
        connection.cancellation_token().cancel();
    }

    /// Lists the server's tools (starting it when needed) and stores the manifest.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub async fn refresh_manifest(self: &Arc<Self>) -> Result<Arc<Manifest>, CallFailure> {
        // Not `connection`: a second listing aside would race this one (both store the
        // manifest; the later may still be writing the cache after this one returned).
        let (connection, _) = self.connect().await?;
        let listed = self.list_on(&connection).await;
        if let Err(failure) = &listed
            && self.manifest().is_none()
        {
            self.record(Some(Failed::with_message(StartFailure::ListFailed, failure.clone())));
        }
        listed
    }

    async fn list_on(&self, connection: &Arc<Connection>) -> Result<Arc<Manifest>, CallFailure> {
        let name = &self.config.name;
        let after = self.config.policy.call_timeout;
        let listed = match tokio::time::timeout(after, connection.peer().list_all_tools()).await {
            Ok(Ok(listed)) => listed,
            Ok(Err(error)) => {
                return Err(CallFailure(format!(
                    "the `{name}` server could not list its tools ({})",
                    describe(&error)
                )));
            }
            Err(_) => {
                return Err(CallFailure(format!(
                    "the `{name}` server did not list its tools within {}",
                    seconds(after)
                )));
            }
        };
        let peer = connection.peer().peer_info();
        let info = peer.as_ref().and_then(|info| info.server_info.clone());
        let mut manifest = Manifest {
            format: CACHE_FORMAT,
            config_hash: config_hash(&self.config),
            server_name: info.as_ref().map(|info| info.name.clone()),
            server_version: info.as_ref().map(|info| info.version.clone()),
            instructions: peer.as_ref().and_then(|info| info.instructions.clone()),
            self_description: peer.as_deref().and_then(tinytools::mcp::self_description),
            summary: None,
            tools: listed
                .into_iter()
                .map(|tool| CachedTool {
                    name: tool.name.to_string(),
                    description: tool.description.map(|d| d.to_string()),
                    title: tool.title,
                    input_schema: Value::Object(tool.input_schema.as_ref().clone()),
                    annotations: tool.annotations.and_then(|a| serde_json::to_value(a).ok()),
                })
                .collect(),
        };
        // A summary written for the same tools still describes them.
        manifest.summary =
            self.manifest().filter(|known| known.same_tools(&manifest)).and_then(|known| known.summary.clone());
        Ok(self.publish(manifest))
    }

    /// Makes `manifest` the server's: stored in the cache, and the generation bumped when it
    /// differs from the one known.
    pub(crate) fn publish(&self, manifest: Manifest) -> Arc<Manifest> {
        let manifest = Arc::new(manifest);
        if let Some(cache) = &self.cache
            && let Err(error) = cache.store(&self.config, &manifest)
        {
            let (name, dir) = (&self.config.name, cache.dir().display());
            tracing::warn!(server = %name, %dir, %error, "could not write the manifest cache");
        }
        let changed = self.manifest().as_deref() != Some(&*manifest);
        *self.manifest.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&manifest));
        if changed {
            self.changes.send_modify(|generation| *generation += 1);
        }
        manifest
    }
}

impl std::fmt::Debug for Downstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Downstream")
            .field("name", &self.config.name)
            .field("stage", &self.stage())
            .field("tools", &self.manifest().map(|m| m.tools.len()))
            .finish_non_exhaustive()
    }
}

/// Whether a connection can still carry a request. rmcp's `is_closed` only reports a
/// connection the gateway closed; one whose process exited on its own has a closed transport.
fn alive(connection: &Connection) -> bool {
    !connection.is_closed() && !connection.peer().is_transport_closed()
}
