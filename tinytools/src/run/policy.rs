//! [`RunPolicy`]: what governs one run.

use crate::discovery::ToolDiscoveryPolicy;
use crate::schema::SchemaPreparation;

/// What governs one run: discovery and how schemas are projected before they are sent.
///
/// Defaults are safe: discovery on with the spec's limits, schemas sent as declared.
///
/// ```
/// use tinytools::discovery::DiscoveryBridge;
/// use tinytools::schema::{EstimatedTokens, ProviderProfile, SchemaPreparation};
/// use tinytools::{RunPolicy, SchemaCompaction, ToolRegistry};
///
/// let policy = RunPolicy {
///     tool_schemas: Some(SchemaPreparation::new(ProviderProfile::GEMINI).with_compaction(SchemaCompaction::THIRD_PARTY)),
///     ..RunPolicy::default()
/// };
/// assert!(policy.discovery.enabled);
/// let registry = ToolRegistry::new();
/// let bridge = DiscoveryBridge::for_run(&registry, &policy, |_| true);
/// assert!(bridge.advertised(&registry, |_| true, &EstimatedTokens).is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct RunPolicy {
    /// Whether and how deferred tools are advertised and searched.
    pub discovery: ToolDiscoveryPolicy,
    /// How every advertised and deferred schema is projected before it is sent;
    /// `None` sends them as declared.
    pub tool_schemas: Option<SchemaPreparation>,
}
