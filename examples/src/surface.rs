//! What a run's first request carries, and the all-Direct baseline deferral is measured against.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::discovery::DiscoveryBridge;
use tinytools::schema::{TokenCounter, count_tool_schema_tokens};
use tinytools::{ToolExposure, ToolRegistry, ToolSchema};

/// The tools array of a run's first request, its compact JSON bytes and its token count.
#[derive(Clone, Debug)]
pub struct Surface {
    /// The tools, as the bridge advertises them.
    pub tools: Vec<ToolSchema>,
    /// Compact JSON bytes of the array.
    pub bytes: usize,
    /// Tokens as `counter` counts them.
    pub tokens: usize,
}

impl Surface {
    /// What `bridge` advertises before any promotion.
    pub fn of(bridge: &DiscoveryBridge, counter: &dyn TokenCounter) -> Self {
        let tools = bridge.advertised(counter);
        let bytes = serde_json::to_string(&tools).map_or(0, |text| text.len());
        let tokens = count_tool_schema_tokens(&tools, counter);
        Self { tools, bytes, tokens }
    }

    /// The tool names, shortened past three.
    pub fn names(&self) -> String {
        match self.tools.len() {
            0..=3 => self.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
            n => format!("{}, … ({n})", self.tools[0].name),
        }
    }

    /// `{"tools", "schema_bytes", "tokens"}`.
    pub fn to_json(&self) -> Value {
        json!({"tools": self.tools.len(), "schema_bytes": self.bytes, "tokens": self.tokens})
    }
}

/// The same tools with every one Direct: the baseline a deferral is measured against.
pub fn all_direct(registry: &ToolRegistry) -> ToolRegistry {
    let mut direct = ToolRegistry::new();
    for tool in registry.iter() {
        // The names and schemas were accepted once already; they are accepted again.
        if let Err(err) = direct.register_as(Arc::clone(tool.tool()), ToolExposure::Direct) {
            unreachable!("a registered tool registers again: {err}");
        }
    }
    direct
}
