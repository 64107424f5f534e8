//! [`ToolPolicyMiddleware`]: fail-closed classification and side-effect checks.

use super::{Middleware, ToolGate};
use crate::ToolPolicies;
use crate::model::{ModelRequest, ToolCall};
use crate::tool::TOOL_SEARCH;

/// Admits only tools the policy snapshot classifies, and (optionally) refuses destructive ones.
///
/// [`strict`](Self::strict) is fail-closed: a name with no entry in the snapshot is removed
/// from requests and refused at execution — including the discovery bridge, `tool_search`,
/// which is never registered, so strict mode alone makes every deferred tool undiscoverable.
/// [`exempt_discovery_bridge(true)`](Self::exempt_discovery_bridge) exempts that reserved name
/// from the checks.
///
/// The exemption is opt-in because it is only safe when the snapshot is complete, as
/// [`ToolRegistry::policies`](crate::ToolRegistry::policies) is: it fires only for a
/// `tool_search` with no entry, so an incomplete or stale snapshot could otherwise let a real,
/// side-effecting host tool registered under that name bypass the fail-closed checks. A
/// host-registered `tool_search` always wins over the bridge and is judged by its own entry,
/// whatever this flag says.
///
/// ```
/// use tinytools::middleware::ToolPolicyMiddleware;
/// use tinytools::ToolRegistry;
///
/// let registry = ToolRegistry::new();
/// let policy = ToolPolicyMiddleware::strict(registry.policies()).exempt_discovery_bridge(true);
/// # let _ = policy;
/// ```
#[derive(Clone, Debug)]
pub struct ToolPolicyMiddleware {
    policies: ToolPolicies,
    exempt_bridge: bool,
    refuse_destructive: bool,
}

impl ToolPolicyMiddleware {
    /// Fail-closed: unclassified names are refused.
    pub fn strict(policies: ToolPolicies) -> Self {
        Self { policies, exempt_bridge: false, refuse_destructive: false }
    }

    /// Exempts the reserved `tool_search` name when the snapshot has no entry for it.
    #[must_use]
    pub fn exempt_discovery_bridge(mut self, exempt: bool) -> Self {
        self.exempt_bridge = exempt;
        self
    }

    /// Also refuses tools classified as destructive.
    #[must_use]
    pub fn refuse_destructive(mut self, refuse: bool) -> Self {
        self.refuse_destructive = refuse;
        self
    }

    fn judge(&self, name: &str) -> ToolGate {
        match self.policies.get(name) {
            Some(policy)
                if self.refuse_destructive
                    && policy.annotations.has_side_effects()
                    && policy.annotations.destructive =>
            {
                ToolGate::Deny(format!("`{name}` is destructive and this run does not allow destructive tools."))
            }
            Some(_) => ToolGate::Allow,
            None if self.exempt_bridge && name == TOOL_SEARCH => ToolGate::Allow,
            None => ToolGate::Deny("This tool is not permitted in this run.".to_owned()),
        }
    }
}

#[async_trait::async_trait]
impl Middleware for ToolPolicyMiddleware {
    async fn before_model(&self, request: &mut ModelRequest) {
        request.tools.retain(|tool| self.judge(&tool.name) == ToolGate::Allow);
    }

    async fn before_tool(&self, call: &ToolCall) -> ToolGate {
        self.judge(&call.name)
    }
}
