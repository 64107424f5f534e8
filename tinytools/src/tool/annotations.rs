//! What a tool does to the world: [`ToolAnnotations`], read by policy middleware.

use serde::{Deserialize, Serialize};

/// A tool's side-effect classification, with the meaning (and the conservative
/// defaults) of MCP's tool annotations.
///
/// Policy middleware reads these through [`ToolRegistry::policies`](crate::ToolRegistry::policies).
/// A tool that declares nothing is treated as the riskiest kind: it may write, may destroy,
/// is not idempotent and talks to the open world.
///
/// ```
/// use tinytools::ToolAnnotations;
///
/// let unknown = ToolAnnotations::default();
/// assert!(unknown.has_side_effects() && unknown.destructive);
///
/// let lookup = ToolAnnotations::READ_ONLY;
/// assert!(!lookup.has_side_effects() && !lookup.destructive && lookup.idempotent);
///
/// const ARCHIVE: ToolAnnotations = ToolAnnotations::UNCLASSIFIED.with_destructive(false).with_idempotent(true);
/// assert!(ARCHIVE.has_side_effects() && !ARCHIVE.destructive && ARCHIVE.open_world);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool does not change its environment (MCP `readOnlyHint`).
    pub read_only: bool,
    /// When it does change its environment, the change may destroy something
    /// (MCP `destructiveHint`; meaningful only when not `read_only`).
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect (MCP `idempotentHint`).
    pub idempotent: bool,
    /// It reaches beyond a closed domain: the web, other people, third-party services
    /// (MCP `openWorldHint`).
    pub open_world: bool,
}

impl ToolAnnotations {
    /// A pure look-up: reads, never writes, safe to repeat, closed world.
    pub const READ_ONLY: Self = Self { read_only: true, destructive: false, idempotent: true, open_world: false };

    /// MCP's defaults for a tool that says nothing: assume the worst.
    pub const UNCLASSIFIED: Self = Self { read_only: false, destructive: true, idempotent: false, open_world: true };

    /// Sets whether the tool leaves its environment unchanged.
    #[must_use]
    pub const fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Sets whether a change the tool makes may destroy something.
    #[must_use]
    pub const fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// Sets whether a second identical call has no further effect.
    #[must_use]
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Sets whether the tool reaches beyond a closed domain.
    #[must_use]
    pub const fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }

    /// The classification of an MCP tool from the hints its server sent (`readOnlyHint`,
    /// `destructiveHint`, `idempotentHint`, `openWorldHint`), with MCP's defaults for each
    /// hint left out: not read-only, destructive unless read-only, not idempotent, open world.
    ///
    /// ```
    /// use tinytools::ToolAnnotations;
    ///
    /// assert_eq!(ToolAnnotations::from_mcp_hints(None, None, None, None), ToolAnnotations::UNCLASSIFIED);
    /// let lookup = ToolAnnotations::from_mcp_hints(Some(true), None, None, Some(false));
    /// assert!(lookup.read_only && !lookup.destructive && !lookup.open_world);
    /// ```
    pub const fn from_mcp_hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        idempotent: Option<bool>,
        open_world: Option<bool>,
    ) -> Self {
        let read_only = matches!(read_only, Some(true));
        Self {
            read_only,
            destructive: match destructive {
                Some(destructive) => destructive,
                None => !read_only,
            },
            idempotent: matches!(idempotent, Some(true)),
            open_world: !matches!(open_world, Some(false)),
        }
    }

    /// Whether calling the tool may change anything outside the conversation.
    pub const fn has_side_effects(&self) -> bool {
        !self.read_only
    }
}

impl Default for ToolAnnotations {
    fn default() -> Self {
        Self::UNCLASSIFIED
    }
}
