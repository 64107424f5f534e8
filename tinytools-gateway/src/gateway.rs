//! [`Gateway`]: the MCP server a client talks to. Its `tools/list` is `tool_search`,
//! `call_tool` and the Direct tools the config names; every other tool is found by search and
//! called through `call_tool`, so no client refresh is ever needed.
//!
//! On a cold cache the servers are listed in the background ([`crate::discovery`]).
//! `tools/list` answers with what is known after at most
//! [`GatewayOptions::discovery_wait`], its manifest saying how many servers are still starting;
//! `tool_search` and `call_tool` never answer "no match" because a server is still starting:
//! they wait for the servers they need, each bounded by its start timeout. Once every server
//! has listed its tools (or failed to), each session is sent one
//! `notifications/tools/list_changed`, and the next `tools/list` is the full manifest. A
//! server that could not start is named, with its reason, in the manifest, in search answers
//! and in the answer to a call of one of its tools.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, RequestParamsMeta, ServerCapabilities, ServerConfig, Tool as RemoteTool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tinytools::ToolError;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

use crate::admission::{rejection, repair, server_for, unknown};
use crate::cancel::SharedCancellation;
use crate::catalog::{Catalog, Route, SharedCatalog};
use crate::discovery::{Discovery, named_in};
pub use crate::listing::CALL_TOOL;
use crate::listing::{listed, listed_tools, page};
use crate::manifest::status_fields;
pub use crate::options::GatewayOptions;
use crate::options::policy;
use crate::promotion::Promoted;
use crate::relay::Upstream;
use crate::spans;
use crate::supervisor::Supervisor;

/// The name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// How confident the best match of a search must be for it to be answered while servers are
/// still starting. BM25's confidence is the share of the query's weight a tool matches: on
/// the example catalogue, a query's own tool scores 0.28 to 0.77 ("stock price for a ticker
/// symbol": 0.63) and the next best 0.1 to 0.4. Below it, the search waits for the servers
/// still starting, one of which may hold a better match; a ranker without confidences always
/// waits.
pub const EARLY_CONFIDENCE: f32 = 0.5;

/// The gateway: an rmcp [`ServerHandler`] over a [`Supervisor`].
#[derive(Clone)]
pub struct Gateway {
    supervisor: Arc<Supervisor>,
    discovery: Arc<Discovery>,
    options: GatewayOptions,
    catalog: Arc<RwLock<(u64, SharedCatalog)>>,
    promoted: Arc<Promoted>,
    cancellations: Option<SharedCancellation>,
}

impl Gateway {
    /// A gateway over these servers. Call within a Tokio runtime: servers without a cached
    /// manifest are started in the background to learn their tools, at most
    /// [`GatewayOptions::discovery_concurrency`] at a time.
    pub fn new(supervisor: Arc<Supervisor>, options: GatewayOptions) -> Self {
        let discovery = Discovery::start(Arc::clone(&supervisor), options.discovery_concurrency);
        let generation = supervisor.generation();
        let catalog = Arc::new(Catalog::build_with(&supervisor, policy(&options), &discovery.pending()));
        let catalog = Arc::new(RwLock::new((generation, catalog)));
        let gateway = Self { supervisor, discovery, options, catalog, promoted: Arc::default(), cancellations: None };
        gateway.prime_ranker();
        gateway
    }

    /// With a host's ranker: once every server is listed, one ranking over the whole
    /// catalogue, so that a ranker that embeds the tools (the binary's `--embedding-model`)
    /// does it now rather than during the first client's search. Its answer and any failure
    /// are dropped: searches report their own.
    fn prime_ranker(&self) {
        let Some(ranker) = self.options.ranker.clone() else { return };
        let gateway = self.clone();
        tokio::spawn(async move {
            gateway.discovery.wait_all().await;
            let catalog = gateway.catalog();
            let tools = catalog.bridge().catalog();
            if tools.is_empty() {
                return;
            }
            let context = tinytools::rank::RankContext::default();
            let request = tinytools::rank::RankRequest::new("tool", 1, tools, &context);
            if let Err(error) = ranker.rank(request).await {
                tracing::debug!(%error, "priming the ranker failed; searches will try again");
            }
        });
    }

    /// The same gateway, passing a client's cancellations to and from the other gateway
    /// processes that share `cancellations` (replicas behind one load balancer): a
    /// `notifications/cancelled` that lands here for a call another process runs cancels it
    /// there, and the other way round.
    #[must_use]
    pub fn with_shared_cancellation(mut self, cancellations: SharedCancellation) -> Self {
        self.cancellations = Some(cancellations);
        self
    }

    /// The same gateway with nothing promoted, for a new client session: clones share what
    /// the `list_changed` profile promoted.
    #[must_use]
    pub fn session(&self) -> Self {
        Self { promoted: Arc::default(), ..self.clone() }
    }

    /// The tools the `list_changed` profile promoted on this session.
    pub fn promoted(&self) -> &Promoted {
        &self.promoted
    }

    /// The supervisor.
    pub fn supervisor(&self) -> &Arc<Supervisor> {
        &self.supervisor
    }

    /// The background listing of the servers the cache did not know.
    pub fn discovery(&self) -> &Arc<Discovery> {
        &self.discovery
    }

    /// The catalogue at the current generation (rebuilt when a manifest, a start failure or
    /// the set of starting servers changed).
    pub fn catalog(&self) -> SharedCatalog {
        let generation = self.supervisor.generation();
        {
            let current = self.catalog.read().unwrap_or_else(PoisonError::into_inner);
            if current.0 == generation {
                return Arc::clone(&current.1);
            }
        }
        let starting = self.discovery.pending();
        let rebuilt = Arc::new(Catalog::build_with(&self.supervisor, policy(&self.options), &starting));
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = (generation, Arc::clone(&rebuilt));
        rebuilt
    }

    /// The tools `tools/list` answers with: `tool_search`, `call_tool`, then the Direct tools
    /// (and, under the `list_changed` profile, the promoted ones).
    pub fn listed_tools(&self) -> Vec<RemoteTool> {
        let catalog = self.catalog();
        let mut tools = listed_tools(&catalog, self.options.manifest_names);
        if self.options.list_changed {
            tools.extend(self.promoted.listed(&catalog).iter().map(|schema| listed(schema, None)));
        }
        tools
    }

    /// Serves on this process's stdin and stdout until the client disconnects.
    ///
    /// # Errors
    /// A message when the handshake fails or the session ends abnormally.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let running = self.serve(rmcp::transport::stdio()).await.map_err(|error| error.to_string())?;
        running.waiting().await.map_err(|error| error.to_string())?;
        Ok(())
    }

    /// Answers one `tools/call` of the gateway, in its span (`execute_tool {tool}`, the tool
    /// `call_tool` names for a call through it). A forwarded call's progress goes to
    /// `upstream`, when given; `cancel` cancels it downstream too.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        upstream: Option<Upstream>,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        let arguments = arguments.map_or(Value::Object(Map::new()), Value::Object);
        let span = match name {
            TOOL_SEARCH => spans::call(TOOL_SEARCH, "intrinsic"),
            CALL_TOOL => spans::call(arguments.get("name").and_then(Value::as_str).unwrap_or(CALL_TOOL), "deferred"),
            direct => spans::call(direct, "direct"),
        };
        self.answer(name, arguments, upstream, cancel).instrument(span).await
    }

    async fn answer(
        &self,
        name: &str,
        arguments: Value,
        upstream: Option<Upstream>,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        match name {
            TOOL_SEARCH => {
                let result = self.search(&arguments).await;
                spans::answered(&Span::current(), &result);
                result
            }
            CALL_TOOL => {
                let Some(target) = arguments.get("name").and_then(Value::as_str) else {
                    spans::outcome(&Span::current(), "invalid_arguments");
                    return error_result(
                        "call_tool needs {\"name\": \"<a tool name from tool_search>\", \"arguments\": {...}}; \
                         find the name with tool_search first.",
                    );
                };
                let inner = arguments.get("arguments").cloned().unwrap_or(Value::Null);
                self.forward(target, inner, upstream, cancel).await
            }
            direct => self.forward(direct, arguments, upstream, cancel).await,
        }
    }

    async fn search(&self, arguments: &Value) -> CallToolResult {
        let query = arguments.get("query").and_then(Value::as_str).unwrap_or_default();
        let catalog = self.catalog_for_search(query).await;
        let answer = catalog.bridge().search(arguments).await;
        if answer.result.is_error {
            return error_result(&answer.result.to_model_text());
        }
        let text = answer.result.to_model_text();
        let mut value: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!({"matches": []}));
        let found = value.get("matches").and_then(Value::as_array).is_some_and(|m| !m.is_empty());
        let candidates = value.get("candidates").and_then(Value::as_array).is_some_and(|c| !c.is_empty());
        if let Some(object) = value.as_object_mut() {
            if found {
                // The two-stage answer: a candidate goes through `call_tool` like a full
                // match; admission checks its arguments and a refusal carries its signature.
                let note = if candidates {
                    "Call the one that fits now, through `call_tool` with {\"name\": \"<its name>\", \"arguments\": {...}}. A candidate is called the same way, by its name; a call with wrong arguments is answered with its schema."
                } else {
                    "Call the one that fits now, through `call_tool` with {\"name\": \"<its name>\", \"arguments\": {...}}."
                };
                object.insert("note".into(), Value::String(note.into()));
            }
            if !catalog.starting().is_empty() {
                let note = "Some servers are still starting (`starting`): if no tool here fits, search again in a few seconds.";
                object.insert("starting_note".into(), Value::String(note.into()));
            }
            object.extend(status_fields(&catalog).into_iter().map(|(key, field)| (key.to_owned(), field)));
        }
        CallToolResult::success(vec![ContentBlock::text(value.to_string())])
    }

    /// The catalogue a search of `query` is answered from. While servers are still starting,
    /// those the query names are started first and waited for; then the search waits, server
    /// by server, until its best match is [confident](EARLY_CONFIDENCE) or every server is
    /// done, bounded by the pending servers' start timeout.
    async fn catalog_for_search(&self, query: &str) -> SharedCatalog {
        if self.discovery.is_done() || query.trim().is_empty() {
            return self.catalog();
        }
        let named = named_in(query, &self.discovery.pending());
        for server in &named {
            self.discovery.urge(server);
        }
        let deadline = tokio::time::Instant::from_std(Instant::now() + self.discovery.search_bound());
        loop {
            let seen = self.supervisor.generation();
            let catalog = self.catalog();
            if self.discovery.is_done() {
                return catalog;
            }
            let waiting_for_named = named.iter().any(|server| self.discovery.is_pending(server));
            if !waiting_for_named && confident(&catalog, query).await {
                return catalog;
            }
            if tokio::time::timeout_at(deadline, self.supervisor.changed_since(seen)).await.is_err() {
                return self.catalog();
            }
        }
    }

    /// The catalogue a call of `name` is resolved in. While servers are still starting, a
    /// name with a starting server's `server__` prefix waits for that server (started first),
    /// and a name without any server's prefix for every server, bounded by their timeouts.
    async fn catalog_for_call(&self, name: &str) -> SharedCatalog {
        let catalog = self.catalog();
        if catalog.resolve(name).is_some() || self.discovery.is_done() {
            return catalog;
        }
        match server_for(&self.supervisor, name) {
            Some(server) if self.discovery.is_pending(server) => {
                self.discovery.wait_for_server(server, self.discovery.bound(server)).await;
            }
            Some(_) => {}
            None => {
                self.discovery.wait(self.discovery.search_bound()).await;
            }
        }
        self.catalog()
    }

    /// Resolves `name`, starting its server again when that server's tools are unknown because
    /// it could not start; `Err` is the answer to give instead.
    async fn resolve(&self, name: &str, arguments: &Value) -> Result<(SharedCatalog, String, Route), String> {
        let mut catalog = self.catalog_for_call(name).await;
        if catalog.resolve(name).is_none()
            && let Some(server) = server_for(&self.supervisor, name).and_then(|s| self.supervisor.server(s))
            && server.manifest().is_none()
            && !self.discovery.is_pending(&server.config().name)
        {
            if let Err(failure) = server.refresh_manifest().await {
                return Err(format!("{failure} Until it starts, its tools cannot be called."));
            }
            catalog = self.catalog();
        }
        let Some((known, route)) = catalog.resolve(name).map(|(known, route)| (known.to_owned(), route.clone())) else {
            let mut text = unknown(&catalog, name, arguments).await;
            if !catalog.starting().is_empty() {
                let starting = catalog.starting().len();
                text.push_str(&format!(
                    "\n{starting} server(s) are still starting and their tools are not known yet; if none fits, call \
                     tool_search again in a few seconds."
                ));
            }
            return Err(text);
        };
        Ok((catalog, known, route))
    }

    /// Admits `arguments` against the tool's own schema, then forwards the call; records on
    /// the call's span (the current one) where it went and how it ended.
    async fn forward(
        &self,
        name: &str,
        arguments: Value,
        upstream: Option<Upstream>,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        let span = Span::current();
        // A name without its `server__` prefix is taken when exactly one server has that tool.
        let (catalog, name, route) = match self.resolve(name, &arguments).await {
            Ok(resolved) => resolved,
            Err(answer) => {
                spans::outcome(&span, "unknown");
                return error_result(&answer);
            }
        };
        spans::server(&span, &route.server);
        let name = name.as_str();
        let arguments = match repair(arguments) {
            Ok(arguments) => arguments,
            Err(message) => {
                spans::outcome(&span, "invalid_arguments");
                return error_result(&message);
            }
        };
        let raw = Value::Object(arguments.clone()).to_string();
        if let Err(error) = catalog.registry().admit(name, &raw) {
            let text = match &error {
                ToolError::InvalidArguments { .. } | ToolError::MalformedArguments { .. } => {
                    rejection(&catalog, name, &error)
                }
                _ => format!("the call to `{name}` was not admitted: {error}"),
            };
            spans::outcome(&span, "invalid_arguments");
            return error_result(&text);
        }
        let Some(server) = self.supervisor.server(&route.server) else {
            spans::outcome(&span, "unknown");
            return error_result("the tool's server is no longer configured; call tool_search again.");
        };
        match server.call(&route.remote, arguments, upstream, cancel).await {
            Ok(result) => {
                spans::answered(&span, &result);
                result
            }
            Err(failure) => {
                spans::failed(&span, &failure);
                error_result(&failure.to_string())
            }
        }
    }
}

/// Whether `catalog`'s best match for `query` is confident enough to answer while servers
/// are still starting.
async fn confident(catalog: &Catalog, query: &str) -> bool {
    let bridge = catalog.bridge();
    if bridge.catalog().is_empty() {
        return false;
    }
    let outcome = bridge.catalog().rank(bridge.policy(), query, 1).await;
    outcome.top_confidence.is_some_and(|confidence| confidence >= EARLY_CONFIDENCE)
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|block| block.as_text().map(|t| t.text.as_str())).collect()
}

fn error_result(text: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.to_owned())])
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").field("supervisor", &self.supervisor).finish_non_exhaustive()
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools();
        // A session that starts while servers are still starting is told when they are done.
        let capabilities = if self.options.list_changed || !self.discovery.is_done() {
            capabilities.enable_tool_list_changed().build()
        } else {
            capabilities.build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("tinytools-gateway", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.catalog().instructions().to_owned())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.discovery.is_done() {
            return;
        }
        let discovery = Arc::clone(&self.discovery);
        tokio::spawn(async move {
            discovery.wait_all().await;
            if let Err(error) = context.peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "could not send notifications/tools/list_changed after discovery");
            }
        });
    }

    async fn on_cancelled(&self, notification: CancelledNotificationParam, context: NotificationContext<RoleServer>) {
        if let (Some(shared), Some(request)) = (&self.cancellations, &notification.request_id) {
            shared.post(&context.extensions, request).await;
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if !self.discovery.is_done() {
            self.discovery.wait(self.options.discovery_wait).await;
        }
        let cursor = request.as_ref().and_then(|request| request.cursor.as_deref());
        page(self.listed_tools(), cursor, self.options.page_size)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp moves the request's `_meta` into the context.
        let token = context.meta.get_progress_token().or_else(|| request.progress_token());
        let upstream = token.map(|token| Upstream { peer: context.peer.clone(), token });
        // Cancelled through another replica: watched while the call runs.
        let _watch =
            self.cancellations.as_ref().and_then(|shared| shared.watch(&context.extensions, &context.id, &context.ct));
        let result = self.call(&request.name, request.arguments, upstream, &context.ct).await;
        if self.options.list_changed
            && request.name == TOOL_SEARCH
            && result.is_error != Some(true)
            && self.promoted.promote(&text_of(&result), self.options.promotion_limit)
            && let Err(error) = context.peer.notify_tool_list_changed().await
        {
            tracing::debug!(%error, "could not send notifications/tools/list_changed");
        }
        Ok(result.into())
    }
}
