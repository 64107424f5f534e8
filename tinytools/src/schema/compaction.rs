//! [`SchemaCompaction`]: the byte budget a tool's declaration must fit.

use serde::{Deserialize, Serialize};

/// A byte budget for one tool's declaration on the wire.
///
/// A tool states its own budget with [`Tool::schema_compaction`](crate::Tool::schema_compaction)
/// (or `#[tool(compaction = "third_party")]`, `#[tool(max_schema_bytes = 2_000)]`); it
/// overrides the run's default. `None` in either field means "no limit".
///
/// ```
/// use tinytools::SchemaCompaction;
///
/// assert_eq!(SchemaCompaction::THIRD_PARTY.max_schema_bytes, Some(5_000));
/// assert_eq!(SchemaCompaction::THIRD_PARTY.max_description_bytes, Some(1_000));
/// assert_eq!(SchemaCompaction::preset("third_party"), Some(SchemaCompaction::THIRD_PARTY));
/// assert_eq!(SchemaCompaction::default(), SchemaCompaction::UNLIMITED);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SchemaCompaction {
    /// Clip the description to this many bytes (on a char boundary, ending in `…`).
    pub max_description_bytes: Option<usize>,
    /// Compact the parameters schema until its compact JSON fits this many bytes.
    pub max_schema_bytes: Option<usize>,
}

impl SchemaCompaction {
    /// No limits.
    pub const UNLIMITED: Self = Self { max_description_bytes: None, max_schema_bytes: None };

    /// Codex's budget for MCP tools: 5,000-byte schema, 1,000-byte description.
    pub const THIRD_PARTY: Self = Self { max_description_bytes: Some(1_000), max_schema_bytes: Some(5_000) };

    /// The named presets `#[tool(compaction = "...")]` accepts.
    pub const PRESETS: [(&'static str, SchemaCompaction); 2] =
        [("third_party", Self::THIRD_PARTY), ("unlimited", Self::UNLIMITED)];

    /// Looks up a preset by name.
    pub fn preset(name: &str) -> Option<Self> {
        Self::PRESETS.iter().find(|(preset, _)| *preset == name).map(|(_, budget)| *budget)
    }
}
