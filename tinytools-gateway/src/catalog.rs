//! The gateway's view of every downstream tool: a tinytools [`ToolRegistry`] built from the
//! servers' manifests (for admission and the `tool_search` bridge), and each name's route.

use std::collections::BTreeMap;
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
use crate::supervisor::Supervisor;

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
}

impl Catalog {
    /// Builds the catalogue from every known manifest. A tool whose namespaced name another
    /// already took, or whose schema does not compile, is left out with a warning.
    pub fn build(supervisor: &Supervisor, policy: ToolDiscoveryPolicy) -> Self {
        let mut registry = ToolRegistry::new();
        let mut routes = BTreeMap::new();
        let mut direct_annotations = BTreeMap::new();
        let mut notes = Vec::new();
        let mut servers = Vec::new();
        for server in supervisor.servers() {
            let config = server.config();
            let Some(manifest) = server.manifest() else {
                servers.push(format!("{} (tools not known yet)", config.name));
                continue;
            };
            let prefix = default_prefix(&config.name);
            let mut exposed = 0;
            for tool in &manifest.tools {
                let exposure = config.policy.exposure_of(&tool.name);
                if exposure == Exposure::Hidden {
                    continue;
                }
                let name = namespaced_name(&prefix, &tool.name);
                if routes.contains_key(&name) {
                    tracing::warn!(server = %config.name, tool = %tool.name, %name, "two tools share a gateway name; the later one is left out");
                    continue;
                }
                let compaction = config.policy.compaction_of(&tool.name);
                let proxy = Proxy::new(name.clone(), &config.name, tool, exposure, compaction);
                match registry.register(proxy) {
                    Ok(_) => {
                        exposed += 1;
                        if exposure == Exposure::Direct
                            && let Some(annotations) = &tool.annotations
                        {
                            direct_annotations.insert(name.clone(), annotations.clone());
                        }
                        routes.insert(name, Route { server: config.name.clone(), remote: tool.name.clone(), exposure });
                    }
                    Err(error) => {
                        tracing::warn!(server = %config.name, tool = %tool.name, %error, "tool left out");
                    }
                }
            }
            servers.push(format!("{} ({exposed} tools)", config.name));
            if let Some(text) = manifest.instructions.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                notes.push(format!("- {}: {}", config.name, clip(text, INSTRUCTIONS_CHARS)));
            }
        }
        let bridge = DiscoveryBridge::new(&registry, policy);
        let direct = bridge.advertised(&EstimatedTokens).into_iter().filter(|t| routes.contains_key(&t.name)).collect();
        let mut instructions = format!(
            "This gateway fronts these MCP servers: {}. Find a tool with `tool_search` (describe the task in a few \
             words), then call it with `call_tool` {{\"name\": ..., \"arguments\": {{...}}}} in the same turn.",
            if servers.is_empty() { "none".to_owned() } else { servers.join(", ") }
        );
        if !notes.is_empty() {
            instructions.push_str("\nServer notes:\n");
            instructions.push_str(&notes.join("\n"));
        }
        Self { registry, routes, bridge, direct, direct_annotations, instructions }
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

/// The `tool_search` declaration the gateway lists: the bridge's, told to call through
/// `call_tool`.
pub fn tool_search_schema(catalog: &Catalog) -> ToolSchema {
    let mut schema = catalog.bridge().schema(&EstimatedTokens);
    schema.description = schema.description.replace(
        "you then call a tool by its own name.",
        "you then call one through `call_tool` with {\"name\": ..., \"arguments\": {...}}.",
    );
    schema
}

/// Shared between the gateway's handlers.
pub type SharedCatalog = Arc<Catalog>;
