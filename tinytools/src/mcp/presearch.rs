//! [`GatewayPreSearch`]: query-aware discovery for a host in front of a tool gateway (such as
//! `tinytools-gateway`): an MCP server whose `tools/list` is `tool_search` and `call_tool`.
//!
//! A gateway never sees the user's message, so only the host can rank the gateway's catalogue
//! against it before the model chooses. Before a run, the host sends the user's message to the
//! gateway's own `tool_search` and offers the tools found, with the declarations the answer
//! carries, as Direct tools for that run, each called through the gateway's `call_tool` — the
//! counterpart of the agent loop's own pre-promotion
//! ([`PrePromotion`](crate::discovery::PrePromotion)). Like the loop, such a host:
//! - offers a found tool under its bare name (`stock_quote`, not `finance__stock_quote`) when
//!   no other offered tool has it; its calls still go to the gateway under the full name;
//! - sends a call of a name the run does not offer (a tool the model read in `tool_search`'s
//!   manifest, called without searching) to the gateway's `call_tool` instead of refusing it
//!   ([`GatewayPreSearch::forwarding`]): the gateway resolves a bare name that one server has,
//!   and otherwise answers with the catalogue's tools that fit.
//!
//! How this host compares with every tool flattened into the request, and with a plain MCP
//! client, is measured in `docs/live.md`.

use std::sync::Arc;

use super::McpError;
use crate::middleware::Middleware;
use crate::model::{ChatModel, ModelResponse};
use crate::rank::{ExpansionUsage, KeywordWriter};
use crate::schema::{EstimatedTokens, count_tool_schema_tokens};
use crate::tool::TOOL_SEARCH;
use crate::{Tool, ToolExposure, ToolRegistry, ToolResult, ToolSchema};
use serde_json::{Value, json};

/// The name a tool gateway gives its forwarding tool (`{"name": ..., "arguments": {...}}`), as
/// `tinytools-gateway` does.
pub const CALL_TOOL: &str = "call_tool";

/// A host's pre-search through a tool gateway: how many tools it offers per run, and the token
/// budget their declarations share.
///
/// A gateway never sees the user's message, so only the host can rank the gateway's catalogue
/// against it before the model chooses. [`registry_for`](Self::registry_for) sends the user's
/// message to the gateway's own `tool_search` and offers the tools found, with the
/// declarations the answer carries, as Direct tools for that run, each called through the
/// gateway's `call_tool`: the counterpart of the agent loop's own pre-promotion
/// ([`PrePromotion`](crate::discovery::PrePromotion)). A found tool is offered under its bare
/// name (`stock_quote`, not `finance__stock_quote`) when no other offered tool has it; its calls
/// still go to the gateway under the full name. [`forwarding`](Self::forwarding) sends a call
/// of a name the run does not offer (a tool the model read in `tool_search`'s manifest) to
/// `call_tool` instead of refusing it.
///
/// Its measured cost and success against every tool flattened into the request are in
/// `docs/live.md`.
///
/// ```
/// use serde_json::{Value, json};
/// use tinytools::mcp::GatewayPreSearch;
/// use tinytools::{Tool, ToolRegistry, ToolResult, tool};
///
/// // A gateway's two tools, as a host's MCP import of `tinytools-gateway` registers them: its
/// // search (here answering every query with one match) and its `call_tool`.
/// struct GatewaySearch;
///
/// #[async_trait::async_trait]
/// impl Tool for GatewaySearch {
///     fn name(&self) -> &str { "tool_search" }
///     fn description(&self) -> &str { "Find tools by what they do." }
///     fn parameters_schema(&self) -> Value {
///         json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}})
///     }
///     async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
///         let parameters = json!({"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]});
///         let found = json!({"name": "finance__stock_quote", "description": "Fetch a stock's price.", "parameters": parameters});
///         Ok(ToolResult::text(json!({"matches": [found]}).to_string()))
///     }
/// }
///
/// /// Call a tool found with tool_search.
/// #[tool]
/// fn call_tool(name: String, arguments: Value) -> String {
///     format!("{name} ran with {arguments}")
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut gateway = ToolRegistry::new();
/// gateway.register(GatewaySearch)?;
/// gateway.register(CallTool)?;
/// let host = GatewayPreSearch::new(&gateway, 3, 600)?;
///
/// // Before the run: the user's words go to the gateway's search, and what it finds is offered.
/// let (registry, offered) = host.registry_for(&gateway, "What is ACME trading at?").await;
/// assert_eq!(offered, ["stock_quote"]);
/// let answer = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await?;
/// assert_eq!(answer.to_model_text(), r#"finance__stock_quote ran with {"symbol":"ACME"}"#);
///
/// // A registry without the gateway's tools cannot be pre-searched.
/// assert!(GatewayPreSearch::new(&ToolRegistry::new(), 3, 600).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// Give the run [`forwarding`](Self::forwarding) as a middleware too, so that a name the model
/// read in the gateway's manifest reaches the gateway.
///
/// [`with_keywords`](Self::with_keywords) has the host's model write a line of search keywords
/// for the message first, as the run's own pre-promotion does by default
/// ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords)): the same
/// request, read the same way, so a host in front of a gateway finds tools as a run does.
#[derive(Clone)]
pub struct GatewayPreSearch {
    search: Arc<dyn Tool>,
    call: Arc<dyn Tool>,
    limit: usize,
    token_budget: usize,
    keywords: Option<Arc<KeywordWriter>>,
}

impl std::fmt::Debug for GatewayPreSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayPreSearch")
            .field("limit", &self.limit)
            .field("token_budget", &self.token_budget)
            .field("keyword_usage", &self.keywords.as_ref().map(|writer| writer.usage()))
            .finish()
    }
}

impl GatewayPreSearch {
    /// A pre-search over the gateway tools in `registry` (its `tool_search` and `call_tool`):
    /// at most `limit` tools, in the gateway's rank order, while their declarations fit
    /// `token_budget` estimated tokens (a tool that does not fit is passed over, as the
    /// runtime's pre-promotion does).
    ///
    /// # Errors
    /// [`McpError::NotAGateway`] when `registry` lacks the gateway's `tool_search` or
    /// `call_tool`.
    pub fn new(registry: &ToolRegistry, limit: usize, token_budget: usize) -> Result<Self, McpError> {
        let tool = |name: &'static str| {
            registry.get(name).map(|registered| registered.tool().clone()).ok_or(McpError::NotAGateway { tool: name })
        };
        Ok(Self { search: tool(TOOL_SEARCH)?, call: tool(CALL_TOOL)?, limit, token_budget, keywords: None })
    }

    /// The same pre-search, with `model` first writing a line of search keywords for each
    /// message; the gateway's search is sent the message followed by that line. It is the
    /// request the run's own pre-promotion makes
    /// ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords)): the
    /// model sees the message alone (no tool name), its answer only ever becomes search words,
    /// and a failed request leaves the message as it is. Its cost is
    /// [`keyword_usage`](Self::keyword_usage), not any run's usage.
    ///
    /// ```
    /// # use serde_json::{Value, json};
    /// # use std::sync::Arc;
    /// # use tinytools::mcp::GatewayPreSearch;
    /// # use tinytools::testkit::ScriptedModel;
    /// # use tinytools::{Tool, ToolRegistry, ToolResult, tool};
    /// // A gateway whose search answers with the query it was sent.
    /// struct Echo;
    ///
    /// #[async_trait::async_trait]
    /// impl Tool for Echo {
    ///     fn name(&self) -> &str { "tool_search" }
    ///     fn description(&self) -> &str { "Find tools by what they do." }
    ///     fn parameters_schema(&self) -> Value { json!({"type": "object"}) }
    ///     async fn execute(&self, args: Value) -> anyhow::Result<ToolResult> {
    ///         let query = args["query"].as_str().unwrap_or("").replace('\n', " | ");
    ///         let found = json!({"name": "search__echo", "description": query, "parameters": {"type": "object"}});
    ///         Ok(ToolResult::text(json!({"matches": [found]}).to_string()))
    ///     }
    /// }
    /// /// Call a tool found with tool_search.
    /// #[tool]
    /// fn call_tool(name: String, arguments: Value) -> String { name }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut gateway = ToolRegistry::new();
    /// gateway.register(Echo)?;
    /// gateway.register(CallTool)?;
    /// let model = Arc::new(ScriptedModel::new([]).with_keywords(["hotel booking, search"]));
    /// let host = GatewayPreSearch::new(&gateway, 3, 600)?.with_keywords(model);
    /// let (registry, _) = host.registry_for(&gateway, "A bed for the night in Lisbon?").await;
    /// let sent = registry.get("echo").map(|tool| tool.tool().description().to_owned());
    /// assert_eq!(sent.as_deref(), Some("A bed for the night in Lisbon? | hotel booking search"));
    /// assert_eq!(host.keyword_usage().calls, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn with_keywords(mut self, model: Arc<dyn ChatModel>) -> Self {
        self.keywords = Some(Arc::new(KeywordWriter::new(model)));
        self
    }

    /// What the keyword model of [`with_keywords`](Self::with_keywords) has cost so far (all
    /// zero without one).
    pub fn keyword_usage(&self) -> ExpansionUsage {
        self.keywords.as_ref().map(|writer| writer.usage()).unwrap_or_default()
    }

    /// `base` with the tools the gateway finds for `prompt` added as Direct tools, and their
    /// names. A failed or empty search leaves `base` as it is (the model can still search).
    pub async fn registry_for(&self, base: &ToolRegistry, prompt: &str) -> (ToolRegistry, Vec<String>) {
        let mut registry = base.clone();
        let mut names = Vec::new();
        if self.limit == 0 {
            return (registry, names);
        }
        let query = match &self.keywords {
            Some(writer) => writer.expand(prompt).await,
            None => prompt.to_owned(),
        };
        let answer = match self.search.execute(json!({"query": query, "limit": self.limit})).await {
            Ok(answer) if !answer.is_error => answer,
            _ => return (registry, names),
        };
        let found = self.fitting(&answer);
        for schema in &found {
            let bare = bare_name(&schema.name);
            // The bare name when it is free: no other found tool, nor a tool of the run, has it.
            let shared = found.iter().filter(|other| bare_name(&other.name) == bare).count() > 1;
            let offered = if shared || base.contains(bare) { schema.name.clone() } else { bare.to_owned() };
            if registry.contains(&offered) {
                continue;
            }
            let target = schema.name.clone();
            let found = Found {
                schema: ToolSchema { name: offered.clone(), ..schema.clone() },
                target,
                call: self.call.clone(),
            };
            if registry.register(found).is_ok() {
                names.push(offered);
            }
        }
        (registry, names)
    }

    /// The middleware that sends a call of a name the model may not call in `registry` (not a
    /// Direct or Deferred tool of it) to the gateway's `call_tool`, as `{"name": <the name>,
    /// "arguments": <its arguments>}`, rather than letting the run refuse it. A Hidden tool's
    /// name is sent on like any unknown one, so the two read the same. Arguments that are not
    /// JSON are passed on as the text they are, for the gateway to repair or refuse with its
    /// own message.
    pub fn forwarding(&self, registry: &ToolRegistry) -> Arc<dyn Middleware> {
        let offered = registry
            .iter()
            .filter(|tool| tool.exposure() != ToolExposure::Hidden)
            .map(|tool| tool.name().to_owned())
            .collect();
        Arc::new(ForwardUnknown { offered })
    }

    /// The search answer's declarations, in order, at most `limit`, within the token budget.
    fn fitting(&self, answer: &ToolResult) -> Vec<ToolSchema> {
        let Ok(value) = serde_json::from_str::<Value>(&answer.to_model_text()) else { return Vec::new() };
        let matches = value.get("matches").and_then(Value::as_array).cloned().unwrap_or_default();
        let (mut chosen, mut spent) = (Vec::new(), 0_usize);
        for found in matches {
            let Ok(schema) = serde_json::from_value::<ToolSchema>(found) else { continue };
            let cost = count_tool_schema_tokens(std::slice::from_ref(&schema), &EstimatedTokens);
            if chosen.len() == self.limit || spent.saturating_add(cost) > self.token_budget {
                continue;
            }
            spent += cost;
            chosen.push(schema);
        }
        chosen
    }
}

/// `finance__stock_quote` without its server's prefix: `stock_quote`. A name without a prefix
/// is its own bare name.
fn bare_name(name: &str) -> &str {
    name.split_once("__").map_or(name, |(_, tool)| if tool.is_empty() { name } else { tool })
}

/// A tool a pre-search found: its declaration as the gateway's answer gave it, under the name
/// the run offers it by, called through the gateway's `call_tool` under its gateway name.
struct Found {
    schema: ToolSchema,
    target: String,
    call: Arc<dyn Tool>,
}

#[async_trait::async_trait]
impl Tool for Found {
    fn name(&self) -> &str {
        &self.schema.name
    }

    fn description(&self) -> &str {
        &self.schema.description
    }

    fn parameters_schema(&self) -> Value {
        self.schema.parameters.clone()
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    async fn execute(&self, args: Value) -> anyhow::Result<ToolResult> {
        self.call.execute(json!({"name": self.target, "arguments": args})).await
    }
}

/// See [`GatewayPreSearch::forwarding`].
struct ForwardUnknown {
    offered: std::collections::HashSet<String>,
}

#[async_trait::async_trait]
impl Middleware for ForwardUnknown {
    async fn after_model(&self, response: &mut ModelResponse) {
        for call in &mut response.tool_calls {
            if self.offered.contains(&call.name) {
                continue;
            }
            let arguments = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            call.arguments = json!({"name": call.name, "arguments": arguments}).to_string();
            call.name = CALL_TOOL.to_owned();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    /// A gateway search that answers every query with `matches` and keeps the queries it was
    /// sent (a clone shares them).
    #[derive(Clone, Default)]
    struct Search {
        matches: Vec<&'static str>,
        sent: Arc<std::sync::Mutex<Vec<String>>>,
    }

    #[async_trait::async_trait]
    impl Tool for Search {
        fn name(&self) -> &str {
            TOOL_SEARCH
        }
        fn description(&self) -> &str {
            "Find tools."
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object"})
        }
        async fn execute(&self, args: Value) -> anyhow::Result<ToolResult> {
            self.sent.lock().unwrap().push(args["query"].as_str().unwrap_or_default().to_owned());
            let matches: Vec<Value> = self
                .matches
                .iter()
                .map(|name| json!({"name": name, "description": "A tool.", "parameters": {"type": "object"}}))
                .collect();
            Ok(ToolResult::text(json!({ "matches": matches }).to_string()))
        }
    }

    /// A gateway `call_tool` that answers with what it was asked.
    struct Call;

    #[async_trait::async_trait]
    impl Tool for Call {
        fn name(&self) -> &str {
            CALL_TOOL
        }
        fn description(&self) -> &str {
            "Call a tool."
        }
        fn parameters_schema(&self) -> Value {
            json!({"type": "object"})
        }
        async fn execute(&self, args: Value) -> anyhow::Result<ToolResult> {
            Ok(ToolResult::text(args.to_string()))
        }
    }

    fn gateway(matches: Vec<&'static str>) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        registry.register(Search { matches, ..Search::default() }).unwrap();
        registry.register(Call).unwrap();
        registry
    }

    #[tokio::test]
    async fn a_bare_name_two_servers_share_keeps_its_prefix_and_the_limit_holds() {
        let base = gateway(vec!["mail__search", "drive__search", "mail__send", "notes__read"]);
        let host = GatewayPreSearch::new(&base, 3, 600).unwrap();
        let (registry, offered) = host.registry_for(&base, "find the mail").await;
        assert_eq!(offered, ["mail__search", "drive__search", "send"]);
        let answer = registry.dispatch("send", json!({})).await.unwrap();
        assert_eq!(answer.to_model_text(), r#"{"arguments":{},"name":"mail__send"}"#);
        assert_eq!(base.len(), 2, "the base registry is left alone");
    }

    #[tokio::test]
    async fn calls_of_names_the_run_does_not_offer_go_to_call_tool() {
        let base = gateway(vec![]);
        let forwarding = GatewayPreSearch::new(&base, 3, 600).unwrap().forwarding(&base);
        let call =
            |name: &str, arguments: &str| ToolCall { id: "c".into(), name: name.into(), arguments: arguments.into() };
        let mut response = ModelResponse {
            content: String::new(),
            tool_calls: vec![
                call("tool_search", r#"{"query": "x"}"#),
                call("stock_quote", r#"{"symbol": "ACME"}"#),
                call("nope", "{oops"),
            ],
            usage: None,
            searches: Vec::new(),
            provider_items: None,
        };
        forwarding.after_model(&mut response).await;
        let calls: Vec<(&str, Value)> = response
            .tool_calls
            .iter()
            .map(|call| (call.name.as_str(), serde_json::from_str(&call.arguments).unwrap()))
            .collect();
        assert_eq!(calls[0], ("tool_search", json!({"query": "x"})), "an offered name is left alone");
        assert_eq!(calls[1], (CALL_TOOL, json!({"name": "stock_quote", "arguments": {"symbol": "ACME"}})));
        assert_eq!(
            calls[2],
            (CALL_TOOL, json!({"name": "nope", "arguments": "{oops"})),
            "text that is not JSON is passed on"
        );
    }

    struct Failing;

    #[async_trait::async_trait]
    impl ChatModel for Failing {
        async fn complete(&self, _: &crate::model::ModelRequest) -> Result<ModelResponse, crate::model::ModelError> {
            Err(crate::model::ModelError::Transport("the server is down".into()))
        }
    }

    #[tokio::test]
    async fn keywords_join_the_search_and_a_failed_request_leaves_the_message_as_it_is() {
        let search = Search::default();
        let mut base = ToolRegistry::new();
        base.register(search.clone()).unwrap();
        base.register(Call).unwrap();
        let prompt = "Somewhere to sleep in Porto?";

        let plain = GatewayPreSearch::new(&base, 3, 600).unwrap();
        plain.registry_for(&base, prompt).await;
        assert_eq!(plain.keyword_usage(), ExpansionUsage::default());

        let model = Arc::new(crate::testkit::ScriptedModel::new([]).with_keywords(["Hotel booking, API"]));
        let host = plain.clone().with_keywords(model.clone());
        host.registry_for(&base, prompt).await;
        let request = &model.keyword_requests()[0];
        assert!(request.tools.is_empty(), "the keyword request names no tool");
        assert_eq!(host.keyword_usage().calls, 1);

        let failing = plain.with_keywords(Arc::new(Failing));
        failing.registry_for(&base, prompt).await;
        assert_eq!((failing.keyword_usage().calls, failing.keyword_usage().failed), (1, 1));

        let sent = search.sent.lock().unwrap().clone();
        assert_eq!(sent, [prompt.to_owned(), format!("{prompt}\nhotel booking"), prompt.to_owned()]);
    }
}
