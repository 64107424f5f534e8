//! [`AllowList`]: the name-list rule behind `RunPolicy::allowed_tools` and
//! `ToolAllowlistMiddleware`.

use std::collections::BTreeSet;

use super::{Rule, Subject, Verdict};

/// Admits only the listed names.
///
/// Whether the list also governs the intrinsic `tool_search` is a choice: the host allow-list
/// (`RunPolicy::allowed_tools`) names tools, and the bridge follows from what it admits; the
/// allow-list middleware treats `tool_search` as a name like any other, so it must be listed
/// to keep discovery.
///
/// ```
/// use tinytools::surface::{AllowList, Rule, Subject, Verdict};
///
/// let tools_only = AllowList::new(["stock_quote"]);
/// assert_eq!(tools_only.admit(Subject::Bridge), Verdict::Allow);
/// let every_name = AllowList::new(["stock_quote"]).covering_bridge(true);
/// assert!(!every_name.admit(Subject::Bridge).is_allow());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowList {
    names: BTreeSet<String>,
    covers_bridge: bool,
}

impl AllowList {
    /// Admits exactly these tool names; the bridge is not judged.
    pub fn new<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        Self::from_set(names.into_iter().map(Into::into).collect())
    }

    /// [`new`](Self::new) from a set already built.
    pub fn from_set(names: BTreeSet<String>) -> Self {
        Self { names, covers_bridge: false }
    }

    /// Whether `tool_search` must be listed too for the bridge to be advertised.
    #[must_use]
    pub fn covering_bridge(mut self, covers: bool) -> Self {
        self.covers_bridge = covers;
        self
    }

    /// Whether `name` is listed.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }
}

impl Rule for AllowList {
    fn admit(&self, subject: Subject<'_>) -> Verdict {
        if matches!(subject, Subject::Bridge) && !self.covers_bridge || self.contains(subject.name()) {
            Verdict::Allow
        } else {
            Verdict::Deny(format!("`{}` is not on the allow-list", subject.name()))
        }
    }
}
