//! The opt-in `list_changed` profile: tools a search found join the gateway's `tools/list`,
//! and the client is sent `notifications/tools/list_changed`.
//!
//! Off by default ([`GatewayOptions::list_changed`](crate::GatewayOptions::list_changed)):
//! Claude Desktop, Claude Code and Cursor do not act on the notification, and a surface that
//! changes under a client defeats its prompt cache. For clients that do refresh, a promoted
//! tool is then callable by its own name, with its schema in the client's tool list. At most
//! [`GatewayOptions::promotion_limit`](crate::GatewayOptions::promotion_limit) tools are
//! promoted at once; the longest-promoted leaves first.

use std::sync::{PoisonError, RwLock};

use serde_json::Value;
use tinytools::ToolSchema;

use crate::catalog::Catalog;

/// The tools promoted on one gateway (shared by its clones; see
/// [`Gateway::session`](crate::Gateway::session)).
#[derive(Debug, Default)]
pub struct Promoted {
    tools: RwLock<Vec<ToolSchema>>,
}

impl Promoted {
    /// Promotes the matches of a `tool_search` answer (its JSON text), keeping at most
    /// `limit`. True when the list changed.
    pub fn promote(&self, answer: &str, limit: usize) -> bool {
        let Ok(value) = serde_json::from_str::<Value>(answer) else { return false };
        let Some(matches) = value.get("matches").and_then(Value::as_array) else { return false };
        let mut tools = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        let mut changed = false;
        for found in matches {
            let Some(name) = found.get("name").and_then(Value::as_str) else { continue };
            if tools.iter().any(|tool| tool.name == name) {
                continue;
            }
            let description = found.get("description").and_then(Value::as_str).unwrap_or_default();
            let parameters = found.get("parameters").cloned().unwrap_or_else(|| serde_json::json!({"type": "object"}));
            tools.push(ToolSchema::new(name, description, parameters));
            changed = true;
        }
        if tools.len() > limit {
            let excess = tools.len() - limit;
            tools.drain(..excess);
        }
        changed
    }

    /// The promoted tools `catalog` still routes and does not list as Direct already.
    pub fn listed(&self, catalog: &Catalog) -> Vec<ToolSchema> {
        let tools = self.tools.read().unwrap_or_else(PoisonError::into_inner);
        tools
            .iter()
            .filter(|tool| catalog.route(&tool.name).is_some())
            .filter(|tool| !catalog.direct().iter().any(|direct| direct.name == tool.name))
            .cloned()
            .collect()
    }

    /// How many tools are promoted.
    pub fn len(&self) -> usize {
        self.tools.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_promoted_once_and_the_oldest_leave_past_the_limit() {
        let promoted = Promoted::default();
        let answer = |names: &[&str]| {
            let matches: Vec<Value> =
                names.iter().map(|n| serde_json::json!({"name": n, "description": "d", "parameters": {}})).collect();
            serde_json::json!({"matches": matches}).to_string()
        };
        assert!(promoted.promote(&answer(&["a", "b"]), 3));
        assert!(!promoted.promote(&answer(&["b"]), 3), "nothing new");
        assert!(promoted.promote(&answer(&["c", "d"]), 3));
        let names: Vec<String> =
            promoted.tools.read().unwrap_or_else(PoisonError::into_inner).iter().map(|t| t.name.clone()).collect();
        assert_eq!(names, ["b", "c", "d"]);
        assert!(!promoted.promote("not json", 3));
        assert_eq!(promoted.len(), 3);
    }
}
