//! A host that pre-searches through the gateway: before the first model call of a run, it
//! sends the user's message to the gateway's own `tool_search` and offers the tools found, with
//! the declarations the answer carries, as Direct tools for that run. Each is called through
//! the gateway's `call_tool` under its gateway name (`finance__stock_quote`).
//!
//! This is the gateway's counterpart of the runtime's query-aware discovery
//! ([`PrePromotion`](tinytools::discovery::PrePromotion)): an MCP server never sees the user's
//! message, so only the host can rank the catalogue against it before the model chooses. The
//! gateway arm measures it beside the plain client (`live_tasks --gateway-pre-search`), since
//! a client such as Claude Desktop does not do it.
//!
//! Two more things such a host does, as the runtime does for its own deferred tools:
//! - a found tool is offered under its bare name (`stock_quote`) when no other offered tool
//!   has that name, as the runtime offers a promoted tool; its calls still go to the gateway
//!   under the full name;
//! - a call of a name the run does not offer (a tool the model read in `tool_search`'s
//!   manifest, called without searching) is sent to the gateway's `call_tool` instead of
//!   being refused by the host ([`PreSearch::forwarding`]): the gateway resolves a bare name
//!   that one server has, and otherwise answers with the catalogue's nearest names.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::middleware::Middleware;
use tinytools::model::ModelResponse;
use tinytools::schema::{EstimatedTokens, count_tool_schema_tokens};
use tinytools::tool::TOOL_SEARCH;
use tinytools::{Tool, ToolExposure, ToolRegistry, ToolResult, ToolSchema};

use super::gateway::CALL_TOOL;

/// How many tools a pre-search offers, and the token budget their declarations share.
#[derive(Clone)]
pub struct PreSearch {
    search: Arc<dyn Tool>,
    call: Arc<dyn Tool>,
    limit: usize,
    token_budget: usize,
}

impl std::fmt::Debug for PreSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreSearch").field("limit", &self.limit).field("token_budget", &self.token_budget).finish()
    }
}

impl PreSearch {
    /// A pre-search over the gateway tools in `registry` (its `tool_search` and `call_tool`):
    /// at most `limit` tools, in the gateway's rank order, while their declarations fit
    /// `token_budget` estimated tokens (a tool that does not fit is passed over, as the
    /// runtime's pre-promotion does).
    ///
    /// # Errors
    /// When `registry` lacks the gateway's `tool_search` or `call_tool`.
    pub fn new(registry: &ToolRegistry, limit: usize, token_budget: usize) -> Result<Self, String> {
        let tool = |name: &str| {
            registry
                .get(name)
                .map(|registered| registered.tool().clone())
                .ok_or_else(|| format!("the gateway lists no `{name}`, so a host cannot pre-search through it"))
        };
        Ok(Self { search: tool(TOOL_SEARCH)?, call: tool(CALL_TOOL)?, limit, token_budget })
    }

    /// `base` with the tools the gateway finds for `prompt` added as Direct tools, and their
    /// names. A failed or empty search leaves `base` as it is (the model can still search).
    pub async fn registry_for(&self, base: &ToolRegistry, prompt: &str) -> (ToolRegistry, Vec<String>) {
        let mut registry = base.clone();
        let mut names = Vec::new();
        if self.limit == 0 {
            return (registry, names);
        }
        let answer = match self.search.execute(json!({"query": prompt, "limit": self.limit})).await {
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

    /// The middleware that sends a call of a name `registry` does not hold to the gateway's
    /// `call_tool`, as `{"name": <the name>, "arguments": <its arguments>}`, rather than letting
    /// the run refuse it. Arguments that are not JSON are passed on as the text they are, for the
    /// gateway to repair or refuse with its own message.
    pub fn forwarding(&self, registry: &ToolRegistry) -> Arc<dyn Middleware> {
        let offered = registry.schemas().into_iter().map(|schema| schema.name).collect();
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

/// See [`PreSearch::forwarding`].
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
