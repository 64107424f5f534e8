//! [`RunPolicy`]: what governs one run.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::discovery::ToolDiscoveryPolicy;
use crate::schema::SchemaPreparation;

/// What governs one run. Defaults are safe: discovery on with the spec's limits, schemas sent
/// as declared, every registered tool admitted, 16 model turns, one minute per tool call,
/// tool inputs and outputs kept out of events.
///
/// ```
/// use tinytools::discovery::DiscoveryBridge;
/// use tinytools::schema::{EstimatedTokens, ProviderProfile, SchemaPreparation};
/// use tinytools::surface::Surface;
/// use tinytools::{RunPolicy, SchemaCompaction, ToolRegistry};
///
/// let policy = RunPolicy {
///     tool_schemas: Some(SchemaPreparation::new(ProviderProfile::GEMINI).with_compaction(SchemaCompaction::THIRD_PARTY)),
///     ..RunPolicy::default()
/// }
/// .allow_only(["read_note", "stock_quote"]);
/// assert!(policy.discovery.enabled);
/// assert!(policy.allows("stock_quote") && !policy.allows("gmail_send"));
/// let registry = ToolRegistry::new();
/// let bridge = DiscoveryBridge::for_run(Surface::all(&registry), &policy);
/// assert!(bridge.advertised(&EstimatedTokens).is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct RunPolicy {
    /// Whether and how deferred tools are advertised and searched.
    pub discovery: ToolDiscoveryPolicy,
    /// How every advertised and deferred schema is projected before it is sent;
    /// `None` sends them as declared.
    pub tool_schemas: Option<SchemaPreparation>,
    /// The host allow-list: `None` admits every registered tool. Like every narrowing rule it
    /// is evaluated once, at run start, into the run's [`Surface`](crate::surface::Surface):
    /// a tool it does not list is absent from every surface of the run.
    pub allowed_tools: Option<BTreeSet<String>>,
    /// What events may carry.
    pub capture: Capture,
    /// The most model calls in one run.
    pub max_turns: usize,
    /// How long one tool call may run before the model is told it timed out.
    pub tool_timeout: Duration,
}

/// What events may carry beyond names and counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// Record tool inputs (such as `ToolSearched.query`). Off by default: they can hold
    /// personal data.
    pub tool_io: bool,
}

impl Default for RunPolicy {
    fn default() -> Self {
        Self {
            discovery: ToolDiscoveryPolicy::default(),
            tool_schemas: None,
            allowed_tools: None,
            capture: Capture::default(),
            max_turns: 16,
            tool_timeout: Duration::from_secs(60),
        }
    }
}

impl RunPolicy {
    /// Admits only these tools (the host allow-list).
    #[must_use]
    pub fn allow_only<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.allowed_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the host allow-list admits `name`.
    pub fn allows(&self, name: &str) -> bool {
        self.allowed_tools.as_ref().is_none_or(|allowed| allowed.contains(name))
    }
}
