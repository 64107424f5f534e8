//! [`Gateway`]: the MCP server a client talks to. Its `tools/list` is `tool_search`,
//! `call_tool` and the Direct tools the config names; every other tool is found by search and
//! called through `call_tool`, so no client refresh is ever needed.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::RequestParamsMeta;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as RemoteTool, ToolAnnotations as RemoteAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tinytools::discovery::{MAX_SUGGESTIONS, ToolDiscoveryPolicy, unknown_call_query, unknown_tool_answer};
use tinytools::tool::{argument_notes, type_signature};
use tinytools::{ToolError, ToolRanker, ToolSchema};
use tokio_util::sync::CancellationToken;

use crate::catalog::{Catalog, SharedCatalog, tool_search_schema};
use crate::promotion::Promoted;
use crate::relay::Upstream;
use crate::supervisor::Supervisor;

/// The name of the tool that forwards a call.
pub const CALL_TOOL: &str = "call_tool";
/// The name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// How the gateway serves.
#[derive(Clone)]
#[non_exhaustive]
pub struct GatewayOptions {
    /// How long `tools/list` (and a call of a name not known yet) waits for servers started
    /// at startup to list their tools. Default: 3 s.
    pub discovery_wait: Duration,
    /// The manifest's token budget in `tool_search`'s description (estimated tokens).
    /// Default: 450, which keeps the first `tools/list` under 3,000 bytes.
    pub manifest_token_budget: usize,
    /// The opt-in `list_changed` profile ([`crate::promotion`]): tools a search found join
    /// `tools/list` and the client is notified. Default: off, so the surface never changes.
    pub list_changed: bool,
    /// At most this many tools promoted at once under that profile. Default: 32.
    pub promotion_limit: usize,
    /// What ranks the catalogue for `tool_search`. Default: `None`, BM25. An embedding
    /// ranker (the binary's `--embedding-model`) ranks by meaning; a failing or slow one falls
    /// back to BM25 for that search.
    pub ranker: Option<Arc<dyn ToolRanker>>,
    /// How long a search waits for [`ranker`](Self::ranker) before answering with BM25.
    /// Default: 2 s, the runtime's. An embedding ranker embeds every tool on its first search.
    pub ranker_timeout: Duration,
}

impl std::fmt::Debug for GatewayOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayOptions")
            .field("discovery_wait", &self.discovery_wait)
            .field("manifest_token_budget", &self.manifest_token_budget)
            .field("list_changed", &self.list_changed)
            .field("promotion_limit", &self.promotion_limit)
            .field("ranker", &self.ranker.as_ref().map(|_| "custom"))
            .field("ranker_timeout", &self.ranker_timeout)
            .finish()
    }
}

impl Default for GatewayOptions {
    fn default() -> Self {
        Self {
            discovery_wait: Duration::from_secs(3),
            manifest_token_budget: 450,
            list_changed: false,
            promotion_limit: 32,
            ranker: None,
            ranker_timeout: Duration::from_secs(2),
        }
    }
}

impl GatewayOptions {
    /// Sets [`discovery_wait`](Self::discovery_wait).
    #[must_use]
    pub fn with_discovery_wait(mut self, wait: Duration) -> Self {
        self.discovery_wait = wait;
        self
    }

    /// Sets [`list_changed`](Self::list_changed).
    #[must_use]
    pub fn with_list_changed(mut self, on: bool) -> Self {
        self.list_changed = on;
        self
    }

    /// Sets [`promotion_limit`](Self::promotion_limit).
    #[must_use]
    pub fn with_promotion_limit(mut self, limit: usize) -> Self {
        self.promotion_limit = limit;
        self
    }

    /// Sets [`ranker`](Self::ranker) and [`ranker_timeout`](Self::ranker_timeout).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use tinytools::rank::{Bm25Ranker, ToolRanker};
    /// use tinytools_gateway::GatewayOptions;
    ///
    /// let ranker: Arc<dyn ToolRanker> = Arc::new(Bm25Ranker::default());
    /// let options = GatewayOptions::default().with_ranker(ranker, Duration::from_secs(30));
    /// assert!(options.ranker.is_some());
    /// ```
    #[must_use]
    pub fn with_ranker(mut self, ranker: Arc<dyn ToolRanker>, timeout: Duration) -> Self {
        self.ranker = Some(ranker);
        self.ranker_timeout = timeout;
        self
    }

    /// Sets [`manifest_token_budget`](Self::manifest_token_budget).
    #[must_use]
    pub fn with_manifest_token_budget(mut self, budget: usize) -> Self {
        self.manifest_token_budget = budget;
        self
    }
}

/// The gateway: an rmcp [`ServerHandler`] over a [`Supervisor`].
#[derive(Clone)]
pub struct Gateway {
    supervisor: Arc<Supervisor>,
    options: GatewayOptions,
    catalog: Arc<RwLock<(u64, SharedCatalog)>>,
    promoted: Arc<Promoted>,
}

impl Gateway {
    /// A gateway over these servers. Call within a Tokio runtime: servers without a cached
    /// manifest are started in the background to learn their tools.
    pub fn new(supervisor: Arc<Supervisor>, options: GatewayOptions) -> Self {
        supervisor.discover();
        let generation = supervisor.generation();
        let catalog = Arc::new(Catalog::build(&supervisor, policy(&options)));
        let catalog = Arc::new(RwLock::new((generation, catalog)));
        Self { supervisor, options, catalog, promoted: Arc::default() }
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

    /// The catalogue at the current manifest generation (rebuilt when a manifest changed).
    pub fn catalog(&self) -> SharedCatalog {
        let generation = self.supervisor.generation();
        {
            let current = self.catalog.read().unwrap_or_else(PoisonError::into_inner);
            if current.0 == generation {
                return Arc::clone(&current.1);
            }
        }
        let rebuilt = Arc::new(Catalog::build(&self.supervisor, policy(&self.options)));
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = (generation, Arc::clone(&rebuilt));
        rebuilt
    }

    /// The tools `tools/list` answers with: `tool_search`, `call_tool`, then the Direct tools
    /// (and, under the `list_changed` profile, the promoted ones).
    pub fn listed_tools(&self) -> Vec<RemoteTool> {
        let catalog = self.catalog();
        let mut tools = listed_tools(&catalog);
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

    /// Answers one `tools/call` of the gateway. A forwarded call's progress goes to
    /// `upstream`, when given; `cancel` cancels it downstream too.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        upstream: Option<Upstream>,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        let arguments = arguments.map_or(Value::Object(Map::new()), Value::Object);
        match name {
            TOOL_SEARCH => {
                self.wait_for_discovery().await;
                self.search(&arguments).await
            }
            CALL_TOOL => {
                let Some(target) = arguments.get("name").and_then(Value::as_str) else {
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

    async fn wait_for_discovery(&self) {
        if self.supervisor.discovering() {
            self.supervisor.wait_for_discovery(self.options.discovery_wait).await;
        }
    }

    async fn search(&self, arguments: &Value) -> CallToolResult {
        let catalog = self.catalog();
        let answer = catalog.bridge().search(arguments).await;
        if answer.result.is_error {
            return error_result(&answer.result.to_model_text());
        }
        let text = answer.result.to_model_text();
        let mut value: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!({"matches": []}));
        let found = value.get("matches").and_then(Value::as_array).is_some_and(|m| !m.is_empty());
        if found && let Some(object) = value.as_object_mut() {
            object.insert(
                "note".into(),
                Value::String(
                    "Call the one that fits now, through `call_tool` with {\"name\": \"<its name>\", \"arguments\": {...}}."
                        .into(),
                ),
            );
        }
        CallToolResult::success(vec![ContentBlock::text(value.to_string())])
    }

    /// Admits `arguments` against the tool's own schema, then forwards the call.
    async fn forward(
        &self,
        name: &str,
        arguments: Value,
        upstream: Option<Upstream>,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        let mut catalog = self.catalog();
        if catalog.resolve(name).is_none() && self.supervisor.discovering() {
            self.supervisor.wait_for_discovery(self.options.discovery_wait).await;
            catalog = self.catalog();
        }
        // A name without its `server__` prefix is taken when exactly one server has that tool.
        let Some((name, route)) = catalog.resolve(name).map(|(name, route)| (name.to_owned(), route.clone())) else {
            return error_result(&unknown(&catalog, name, &arguments).await);
        };
        let name = name.as_str();
        let arguments = match repair(arguments) {
            Ok(arguments) => arguments,
            Err(message) => return error_result(&message),
        };
        let raw = Value::Object(arguments.clone()).to_string();
        if let Err(error) = catalog.registry().admit(name, &raw) {
            let text = match &error {
                ToolError::InvalidArguments { .. } | ToolError::MalformedArguments { .. } => {
                    rejection(&catalog, name, &error)
                }
                _ => format!("the call to `{name}` was not admitted: {error}"),
            };
            return error_result(&text);
        }
        let Some(server) = self.supervisor.server(&route.server) else {
            return error_result("the tool's server is no longer configured; call tool_search again.");
        };
        match server.call(&route.remote, arguments, upstream, cancel).await {
            Ok(result) => result,
            Err(failure) => error_result(&failure.to_string()),
        }
    }
}

/// The tools a gateway over `catalog` answers `tools/list` with: `tool_search`, `call_tool`,
/// then the Direct tools.
pub fn listed_tools(catalog: &Catalog) -> Vec<RemoteTool> {
    let mut tools = vec![listed(&tool_search_schema(catalog), None), listed(&call_tool_schema(), None)];
    tools.extend(catalog.direct().iter().map(|schema| listed(schema, catalog.direct_annotations(&schema.name))));
    tools
}

/// What the model reads when admission refuses a call's arguments: every violation, then the
/// tool's compact signature and argument notes, then the call to send again. A client never
/// shows the model a searched tool's schema except inside the search answer, so a model that
/// wrote `arguments` from memory (missing `to`, a wrong type) gets what it needs to fix them
/// here, as the in-process bridge answers a deferred tool called without its schema.
fn rejection(catalog: &Catalog, name: &str, error: &ToolError) -> String {
    let mut text = error.to_model_result().to_model_text();
    let Some(tool) = catalog.registry().get(name) else { return text };
    let parameters = &tool.schema().parameters;
    text.push_str(&format!("\n`{name}` takes: {}", type_signature(parameters)));
    let notes = argument_notes(parameters);
    if !notes.is_empty() {
        text.push('\n');
        text.push_str(&notes);
    }
    text.push_str(&format!(
        "\nCall it again through call_tool with {{\"name\": \"{name}\", \"arguments\": {{...}}}} holding every required argument."
    ));
    text
}

/// What the model reads when `call_tool` names no tool of the catalogue: the tools that the
/// name's words and the arguments rank best for, each with its compact signature, and how to
/// call one, as the runtime answers an unknown name while its bridge is active. A tool is
/// named when its confidence reaches the discovery policy's pre-promotion floor, the floor the
/// runtime ranks unknown names under. When nothing ranks, close spellings and the hint to search. The answer never repeats the name it was
/// given, and names only tools that `tool_search` could find.
async fn unknown(catalog: &Catalog, name: &str, arguments: &Value) -> String {
    let raw = match arguments {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let bridge = catalog.bridge();
    let floor = bridge.policy().pre_promotion.min_confidence;
    let outcome = bridge.catalog().rank(bridge.policy(), &unknown_call_query(name, &raw), MAX_SUGGESTIONS).await;
    let fits: Vec<ToolSchema> = outcome
        .matched
        .iter()
        .filter(|hit| hit.confidence.is_some_and(|confidence| confidence >= floor))
        .filter_map(|hit| catalog.registry().get(&hit.name).map(|tool| tool.schema().clone()))
        .collect();
    if fits.is_empty() {
        return unknown_tool_answer(name, catalog.names(), true, &[]).to_model_text();
    }
    let mut text = String::from("No tool by that name is available. These tools may fit:");
    for tool in &fits {
        text.push_str(&format!("\n- `{}` takes {}", tool.name, type_signature(&tool.parameters)));
    }
    text.push_str(
        "\nCall the one that fits through call_tool with {\"name\": \"<its name>\", \"arguments\": {...}}; if none \
         fits, call tool_search with a short description of the task.",
    );
    text
}

/// The arguments as an object: absent is `{}`, and an object sent as a JSON string is parsed.
fn repair(arguments: Value) -> Result<Map<String, Value>, String> {
    match arguments {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        Value::String(text) if text.trim().is_empty() => Ok(Map::new()),
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err("\"arguments\" must be a JSON object of the tool's parameters, such as {\"city\": \"Paris\"}; \
                      it was a string that is not a JSON object."
                .to_owned()),
        },
        other => Err(format!(
            "\"arguments\" must be a JSON object of the tool's parameters, not {}; send an object such as {{\"city\": \"Paris\"}}.",
            kind(&other)
        )),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|block| block.as_text().map(|t| t.text.as_str())).collect()
}

fn error_result(text: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.to_owned())])
}

pub(crate) fn policy(options: &GatewayOptions) -> ToolDiscoveryPolicy {
    let policy = ToolDiscoveryPolicy::default()
        .with_manifest_token_budget(options.manifest_token_budget)
        .with_ranker_timeout(options.ranker_timeout);
    match &options.ranker {
        Some(ranker) => policy.with_ranker(ranker.clone()),
        None => policy,
    }
}

/// `call_tool`'s declaration.
pub fn call_tool_schema() -> ToolSchema {
    ToolSchema {
        name: CALL_TOOL.to_owned(),
        description: "Call a tool found with tool_search, by its name, with its arguments.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as tool_search gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments, as its schema says."}
            },
            "required": ["name", "arguments"]
        }),
    }
}

fn listed(schema: &ToolSchema, annotations: Option<&Value>) -> RemoteTool {
    let input = match &schema.parameters {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let tool = RemoteTool::new(schema.name.clone(), schema.description.clone(), Arc::new(input));
    match annotations.and_then(|value| serde_json::from_value::<RemoteAnnotations>(value.clone()).ok()) {
        Some(annotations) => tool.with_annotations(annotations),
        None => tool,
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").field("supervisor", &self.supervisor).finish_non_exhaustive()
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools();
        let capabilities = if self.options.list_changed {
            capabilities.enable_tool_list_changed().build()
        } else {
            capabilities.build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("tinytools-gateway", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.catalog().instructions().to_owned())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.wait_for_discovery().await;
        Ok(ListToolsResult::with_all_items(self.listed_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp moves the request's `_meta` into the context.
        let token = context.meta.get_progress_token().or_else(|| request.progress_token());
        let upstream = token.map(|token| Upstream { peer: context.peer.clone(), token });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stringified_arguments_are_parsed_and_others_refused() {
        assert_eq!(repair(json!("{\"a\": 1}")).unwrap(), json!({"a": 1}).as_object().unwrap().clone());
        assert!(repair(Value::Null).unwrap().is_empty());
        assert!(repair(json!("")).unwrap().is_empty());
        assert!(repair(json!("[1]")).unwrap_err().contains("not a JSON object"));
        assert!(repair(json!(3)).unwrap_err().contains("not a number"));
    }
}
