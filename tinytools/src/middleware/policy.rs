//! [`ToolPolicyMiddleware`]: fail-closed classification and side-effect rules.

use super::Middleware;
use crate::ToolPolicies;
use crate::surface::{Rule, Subject, Verdict};
use crate::tool::TOOL_SEARCH;

/// Admits only tools the policy snapshot classifies, and (optionally) no destructive ones.
/// It is a [rule](crate::surface): evaluated once per run, and a tool it refuses is absent from
/// every surface — tools array, manifest, search, promotion, suggestions, execution.
///
/// [`strict`](Self::strict) is fail-closed: a name with no entry in the snapshot is refused —
/// including the discovery bridge, `tool_search`, which is never registered, so strict mode
/// alone makes every deferred tool undiscoverable (they stay callable by name, as with
/// discovery disabled).
/// [`exempt_discovery_bridge(true)`](Self::exempt_discovery_bridge) exempts that reserved name
/// from the checks.
///
/// The exemption is opt-in, as the spec has it. It covers only the intrinsic bridge, never a
/// registered tool: a host tool registered as `tool_search` is judged by its own entry
/// whatever this flag says (and refused when a stale snapshot has none), so it cannot slip
/// through on the bridge's exemption. A host `tool_search` that is admitted wins over the
/// bridge; one the rules refuse is absent from the run, and the bridge serves if admitted.
///
/// ```
/// use tinytools::middleware::ToolPolicyMiddleware;
/// use tinytools::surface::{Rule, Subject};
/// use tinytools::ToolRegistry;
///
/// let registry = ToolRegistry::new();
/// let policy = ToolPolicyMiddleware::strict(registry.policies());
/// assert!(!policy.admit(Subject::Bridge).is_allow());
/// let policy = policy.exempt_discovery_bridge(true);
/// assert!(policy.admit(Subject::Bridge).is_allow());
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
}

impl Rule for ToolPolicyMiddleware {
    fn admit(&self, subject: Subject<'_>) -> Verdict {
        let Subject::Tool(tool) = subject else {
            // The bridge is never registered, so it never has an entry of its own.
            return if self.exempt_bridge {
                Verdict::Allow
            } else {
                Verdict::Deny(format!("the discovery bridge `{TOOL_SEARCH}` is unclassified in strict mode"))
            };
        };
        let name = tool.name();
        match self.policies.get(name) {
            Some(policy)
                if self.refuse_destructive
                    && policy.annotations.has_side_effects()
                    && policy.annotations.destructive =>
            {
                Verdict::Deny(format!("`{name}` is destructive and this run does not allow destructive tools"))
            }
            Some(_) => Verdict::Allow,
            None => Verdict::Deny(format!("`{name}` has no entry in the strict policy snapshot")),
        }
    }
}

impl Middleware for ToolPolicyMiddleware {
    fn rule(&self) -> Option<&dyn Rule> {
        Some(self)
    }
}
