//! [`ToolPolicies`]: the snapshot of every registered tool's classification.

use std::collections::BTreeMap;

use crate::{ToolAnnotations, ToolExposure};

/// What policy middleware knows about one tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolPolicy {
    /// Its exposure.
    pub exposure: ToolExposure,
    /// Its side-effect classification.
    pub annotations: ToolAnnotations,
}

impl ToolPolicy {
    /// The policy of a tool of `exposure` and `annotations`.
    pub const fn new(exposure: ToolExposure, annotations: ToolAnnotations) -> Self {
        Self { exposure, annotations }
    }
}

/// A name → [`ToolPolicy`] snapshot, as [`ToolRegistry::policies`](crate::ToolRegistry::policies)
/// returns it: one entry for every registered tool, whatever its exposure.
///
/// Fail-closed middleware treats a name with no entry as unclassified, so a snapshot must be
/// complete to be safe; build one by hand (it implements `FromIterator`) only for tests.
///
/// ```
/// use tinytools::{ToolAnnotations, ToolExposure, ToolPolicies, ToolPolicy};
///
/// let policies: ToolPolicies = [(
///     "stock_quote".to_owned(),
///     ToolPolicy::new(ToolExposure::Deferred, ToolAnnotations::READ_ONLY),
/// )]
/// .into_iter()
/// .collect();
/// assert!(policies.get("stock_quote").is_some_and(|p| !p.annotations.has_side_effects()));
/// assert!(!policies.contains("tool_search"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolPolicies {
    entries: BTreeMap<String, ToolPolicy>,
}

impl ToolPolicies {
    /// The entry for `name`, if the snapshot has one.
    pub fn get(&self, name: &str) -> Option<&ToolPolicy> {
        self.entries.get(name)
    }

    /// Whether the snapshot has an entry for `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// How many tools the snapshot covers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the snapshot is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry, name-sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ToolPolicy)> {
        self.entries.iter().map(|(name, policy)| (name.as_str(), policy))
    }
}

impl FromIterator<(String, ToolPolicy)> for ToolPolicies {
    fn from_iter<I: IntoIterator<Item = (String, ToolPolicy)>>(iter: I) -> Self {
        Self { entries: iter.into_iter().collect() }
    }
}
