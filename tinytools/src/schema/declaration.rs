//! [`ToolSchema`]: one tool's declaration as a provider receives it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool as a model provider sees it: name, description and the arguments' JSON Schema.
///
/// Serializes to compact JSON with a fixed key order, so the same registry always yields the
/// same bytes (providers cache request prefixes byte for byte).
///
/// ```
/// use serde_json::json;
/// use tinytools::ToolSchema;
///
/// let schema = ToolSchema::new("read_note", "Read a note.", json!({"type": "object", "properties": {}}));
/// assert_eq!(
///     schema.to_compact_json(),
///     r#"{"name":"read_note","description":"Read a note.","parameters":{"properties":{},"type":"object"}}"#
/// );
/// assert_eq!(schema.byte_len(), schema.to_compact_json().len());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// The tool's description.
    pub description: String,
    /// The JSON Schema of its arguments object.
    pub parameters: Value,
}

impl ToolSchema {
    /// The declaration of tool `name`: its `description` and the JSON Schema of its arguments
    /// object (`parameters`).
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self { name: name.into(), description: description.into(), parameters }
    }

    /// The declaration as compact JSON: what it costs on the wire.
    pub fn to_compact_json(&self) -> String {
        // Serializing strings and `Value`s into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The size of [`to_compact_json`](Self::to_compact_json) in bytes.
    pub fn byte_len(&self) -> usize {
        self.to_compact_json().len()
    }
}
