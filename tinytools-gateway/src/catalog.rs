//! The gateway's view of every downstream tool: a tinytools [`ToolRegistry`] built from the
//! servers' manifests (for admission and the `tool_search` bridge), each name's route, and
//! which servers are still starting or could not start.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
use tinytools::mcp::{default_prefix, family_for, namespaced_name, remote_description};
use tinytools::schema::EstimatedTokens;
use tinytools::{
    SchemaCompaction, Tool, ToolAnnotations, ToolExposure, ToolRegistry, ToolResult, ToolSchema, ToolSpec,
};

use crate::cache::CachedTool;
use crate::config::Exposure;
use crate::failure::StartFailure;
use crate::supervisor::{Downstream, Supervisor};

/// The longest piece of one server's instructions folded into the gateway's own.
pub const INSTRUCTIONS_CHARS: usize = 240;

/// Where a gateway name leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The server, by its config name.
    pub server: String,
    /// The tool, by the server's name for it.
    pub remote: String,
    /// Direct or Deferred (Hidden tools have no route).
    pub exposure: Exposure,
}

/// Every exposed downstream tool, at one manifest generation.
pub struct Catalog {
    registry: ToolRegistry,
    routes: BTreeMap<String, Route>,
    bridge: DiscoveryBridge,
    /// The tool declarations of Direct tools, name-sorted.
    direct: Vec<ToolSchema>,
    direct_annotations: BTreeMap<String, Value>,
    instructions: String,
    servers: usize,
    starting: Vec<String>,
    unavailable: Vec<(String, StartFailure)>,
    by_server: Vec<(String, Vec<String>)>,
}

/// A catalogue being built, server by server.
#[derive(Default)]
struct Builder {
    registry: ToolRegistry,
    routes: BTreeMap<String, Route>,
    direct_annotations: BTreeMap<String, Value>,
    /// Each server's instructions, clipped.
    notes: Vec<String>,
    /// Each server, as the instructions name it.
    servers: Vec<String>,
    unavailable: Vec<(String, StartFailure)>,
    /// Each server's Deferred tools, by gateway name, in the server's order.
    by_server: Vec<(String, Vec<String>)>,
}

impl Builder {
    /// Adds a server's exposed tools, or, when its tools are unknown, why.
    fn add(&mut self, server: &Downstream, starting: bool) {
        let config = server.config();
        let Some(manifest) = server.manifest() else {
            // Tools unknown: say why. (A server whose tools are cached stays listed as it is
            // when a start fails: the call that needed it is told, and the surface, which
            // clients cache, does not change with a transient failure.)
            let failure = server.failure().map(|failed| failed.reason).filter(|_| !starting);
            self.servers.push(match &failure {
                _ if starting => format!("{} (starting)", config.name),
                Some(reason) => format!("{} (could not start: {reason})", config.name),
                None => format!("{} (tools not known)", config.name),
            });
            if let Some(reason) = failure {
                self.unavailable.push((config.name.clone(), reason));
            }
            return;
        };
        let prefix = default_prefix(&config.name);
        let (mut exposed, mut deferred) = (0, Vec::new());
        for tool in &manifest.tools {
            let exposure = config.policy.exposure_of(&tool.name);
            if exposure == Exposure::Hidden {
                continue;
            }
            let name = namespaced_name(&prefix, &tool.name);
            if self.routes.contains_key(&name) {
                tracing::warn!(server = %config.name, tool = %tool.name, %name, "two tools share a gateway name; the later one is left out");
                continue;
            }
            let compaction = config.policy.compaction_of(&tool.name);
            let proxy = Proxy::new(name.clone(), &config.name, tool, exposure, compaction);
            if let Err(error) = self.registry.register(proxy) {
                tracing::warn!(server = %config.name, tool = %tool.name, %error, "tool left out");
                continue;
            }
            exposed += 1;
            match (exposure, &tool.annotations) {
                (Exposure::Direct, Some(annotations)) => {
                    self.direct_annotations.insert(name.clone(), annotations.clone());
                }
                (Exposure::Deferred, _) => deferred.push(name.clone()),
                _ => {}
            }
            self.routes.insert(name, Route { server: config.name.clone(), remote: tool.name.clone(), exposure });
        }
        self.servers.push(format!("{} ({exposed} tools)", config.name));
        self.by_server.push((config.name.clone(), deferred));
        if let Some(text) = manifest.instructions.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            self.notes.push(format!("- {}: {}", config.name, clip(text, INSTRUCTIONS_CHARS)));
        }
        // The server's own words and its written summary rank its tools (never shown in a
        // search answer), as an import's do; a family made by `family_for` is always valid.
        if let Some(context) = manifest.family_context()
            && let Err(error) = self.registry.describe_family(family_for(&config.name), context)
        {
            tracing::warn!(server = %config.name, %error, "server context not indexed");
        }
    }
}

impl Catalog {
    /// Builds the catalogue from every known manifest. A tool whose namespaced name another
    /// already took, or whose schema does not compile, is left out with a warning.
    pub fn build(supervisor: &Supervisor, policy: ToolDiscoveryPolicy) -> Self {
        Self::build_with(supervisor, policy, &BTreeSet::new())
    }

    /// As [`build`](Self::build), knowing which servers are still `starting` (listing their
    /// tools for the first time).
    pub fn build_with(supervisor: &Supervisor, policy: ToolDiscoveryPolicy, starting: &BTreeSet<String>) -> Self {
        let mut builder = Builder::default();
        for server in supervisor.servers() {
            builder.add(server, starting.contains(&server.config().name));
        }
        let Builder { registry, routes, direct_annotations, notes, servers, unavailable, by_server } = builder;
        let bridge = DiscoveryBridge::new(&registry, policy);
        let direct = bridge.advertised(&EstimatedTokens).into_iter().filter(|t| routes.contains_key(&t.name)).collect();
        let mut instructions = format!(
            "This gateway fronts these MCP servers: {}. Find a tool with `tool_search` (describe the task in a few \
             words), then call it with `call_tool` {{\"name\": ..., \"arguments\": {{...}}}} in the same turn.",
            if servers.is_empty() { "none".to_owned() } else { servers.join(", ") }
        );
        if !starting.is_empty() {
            instructions.push_str(
                " Servers marked starting are still listing their tools: tool_search waits for them, and the \
                 tool list is updated once they are done.",
            );
        }
        if !notes.is_empty() {
            instructions.push_str("\nServer notes:\n");
            instructions.push_str(&notes.join("\n"));
        }
        Self {
            registry,
            routes,
            bridge,
            direct,
            direct_annotations,
            instructions,
            servers: supervisor.servers().count(),
            starting: starting.iter().filter(|name| supervisor.server(name).is_some()).cloned().collect(),
            unavailable,
            by_server,
        }
    }

    /// The registry admission runs against.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The `tool_search` bridge over the Deferred tools.
    pub fn bridge(&self) -> &DiscoveryBridge {
        &self.bridge
    }

    /// Where a name leads; `None` for unknown and Hidden names alike.
    pub fn route(&self, name: &str) -> Option<&Route> {
        self.routes.get(name)
    }

    /// The tool `name` stands for, with its gateway name: `name` itself when it is one, else
    /// the one tool whose server calls it `name` (a model that dropped the `server__` prefix).
    /// `None` when no tool or more than one tool answers to it.
    pub fn resolve(&self, name: &str) -> Option<(&str, &Route)> {
        if let Some((known, route)) = self.routes.get_key_value(name) {
            return Some((known, route));
        }
        let mut by_remote = self.routes.iter().filter(|(_, route)| route.remote == name);
        match (by_remote.next(), by_remote.next()) {
            (Some((known, route)), None) => Some((known, route)),
            _ => None,
        }
    }

    /// Every callable name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.routes.keys().map(String::as_str)
    }

    /// Every callable name with its route, name-sorted.
    pub fn routes(&self) -> impl Iterator<Item = (&str, &Route)> {
        self.routes.iter().map(|(name, route)| (name.as_str(), route))
    }

    /// How many servers are configured.
    pub fn servers(&self) -> usize {
        self.servers
    }

    /// Each server's Deferred tools, by gateway name, in the server's own order.
    pub fn deferred_by_server(&self) -> &[(String, Vec<String>)] {
        &self.by_server
    }

    /// The servers still listing their tools for the first time, by name.
    pub fn starting(&self) -> &[String] {
        &self.starting
    }

    /// The servers whose tools are unknown because they could not start (or list them), with
    /// the reason, by name.
    pub fn unavailable(&self) -> &[(String, StartFailure)] {
        &self.unavailable
    }

    /// The Direct tools' declarations, name-sorted.
    pub fn direct(&self) -> &[ToolSchema] {
        &self.direct
    }

    /// A Direct tool's MCP annotations, as its server sent them.
    pub fn direct_annotations(&self, name: &str) -> Option<&Value> {
        self.direct_annotations.get(name)
    }

    /// The gateway's `initialize` instructions: the servers, how to use the gateway, and
    /// each server's own instructions, clipped.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }
}

fn clip(text: &str, chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= chars {
        return flat;
    }
    let mut clipped: String = flat.chars().take(chars.saturating_sub(1)).collect();
    clipped.push('…');
    clipped
}

/// A downstream tool in the registry: its declaration, for admission and search. Calls never
/// run it; the gateway forwards them.
struct Proxy {
    spec: ToolSpec,
    schema: Value,
}

impl Proxy {
    fn new(name: String, server: &str, tool: &CachedTool, exposure: Exposure, compaction: SchemaCompaction) -> Self {
        let description = remote_description(server, &tool.name, tool.description.as_deref(), tool.title.as_deref());
        let hint = |key: &str| tool.annotations.as_ref().and_then(|a| a.get(key)).and_then(Value::as_bool);
        let annotations = ToolAnnotations::from_mcp_hints(
            hint("readOnlyHint"),
            hint("destructiveHint"),
            hint("idempotentHint"),
            hint("openWorldHint"),
        );
        let mut spec = ToolSpec::owned(name, description)
            .with_exposure(exposure.to_tool_exposure())
            .with_annotations(annotations)
            .with_compaction(compaction);
        spec.family = Some(family_for(server).into());
        Self { spec, schema: tool.input_schema.clone() }
    }
}

#[async_trait::async_trait]
impl Tool for Proxy {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    fn parameters_schema(&self) -> Value {
        self.schema.clone()
    }

    fn exposure(&self) -> ToolExposure {
        self.spec.exposure
    }

    fn family(&self) -> Option<&str> {
        self.spec.family.as_deref()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.spec.annotations
    }

    fn schema_compaction(&self) -> Option<SchemaCompaction> {
        self.spec.compaction
    }

    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::error("this tool is called through the gateway, which forwards the call to its server"))
    }
}

/// Shared between the gateway's handlers.
pub type SharedCatalog = Arc<Catalog>;
