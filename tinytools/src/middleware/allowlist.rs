//! [`ToolAllowlistMiddleware`]: a run-wide allow-list of names.

use super::Middleware;
use crate::surface::{AllowList, Rule};

/// Only these names exist for the run: any other tool is absent from every surface (tools
/// array, manifest, search, promotion, execution), as if Hidden. `tool_search` is a name like
/// any other: list it to keep discovery.
///
/// ```
/// use std::sync::Arc;
/// use tinytools::middleware::ToolAllowlistMiddleware;
/// use tinytools::run::Agent;
/// # use tinytools::testkit::ScriptedModel;
/// # let (registry, model) = (Arc::new(tinytools::ToolRegistry::new()), Arc::new(ScriptedModel::new([])));
///
/// let agent = Agent::new(registry, model)
///     .with_middleware(Arc::new(ToolAllowlistMiddleware::new(["read_note", "tool_search", "stock_quote"])));
/// # let _ = agent;
/// ```
#[derive(Clone, Debug)]
pub struct ToolAllowlistMiddleware {
    allowed: AllowList,
}

impl ToolAllowlistMiddleware {
    /// Allows exactly these names.
    pub fn new<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        Self { allowed: AllowList::new(names).covering_bridge(true) }
    }
}

impl Middleware for ToolAllowlistMiddleware {
    fn rule(&self) -> Option<&dyn Rule> {
        Some(&self.allowed)
    }
}
