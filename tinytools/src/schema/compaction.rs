//! [`SchemaCompaction`]: the byte budget a tool's declaration must fit, and the ladder that
//! makes it fit.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::node::{Slot, for_each_child_mut, walk_mut};
use super::refs::{definitions, prune_unreachable, ref_target};
use crate::ToolSchema;

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
///
/// const TIGHT: SchemaCompaction = SchemaCompaction::UNLIMITED.with_max_schema_bytes(2_000);
/// assert_eq!((TIGHT.max_description_bytes, TIGHT.max_schema_bytes), (None, Some(2_000)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
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

    /// Clips the description to this many bytes.
    #[must_use]
    pub const fn with_max_description_bytes(mut self, bytes: usize) -> Self {
        self.max_description_bytes = Some(bytes);
        self
    }

    /// Compacts the parameters schema until it fits this many bytes.
    #[must_use]
    pub const fn with_max_schema_bytes(mut self, bytes: usize) -> Self {
        self.max_schema_bytes = Some(bytes);
        self
    }
}

/// One rung of the compaction ladder, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CompactionRung {
    /// Remove `$defs` entries no reference reaches.
    PruneUnreachableDefinitions,
    /// Remove descriptions below the top-level properties (and inside definitions).
    StripNestedDescriptions,
    /// Remove every property description, the top-level ones too.
    StripAllDescriptions,
    /// Remove the definition tables; each `$ref` keeps only its target's `type`.
    DropDefinitions,
    /// Objects nested deeper than three levels keep only `"type": "object"`.
    CollapseDeepObjects,
    /// Remove `anyOf`, `oneOf` and `allOf` below the root.
    DropCombinators,
    /// The floor: each top-level property keeps only its `type` (and `nullable`). Names and
    /// `required` stay.
    BareTopLevelTypes,
}

/// What compaction did to one schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompactionReport {
    /// Parameters bytes (compact JSON) before.
    pub before: usize,
    /// Parameters bytes after.
    pub after: usize,
    /// The rungs applied, in order.
    pub rungs: Vec<CompactionRung>,
    /// Whether the parameters fit `max_schema_bytes` (always true without a budget).
    pub fits: bool,
    /// Whether the description was clipped.
    pub description_clipped: bool,
}

/// The depth below which [`CompactionRung::CollapseDeepObjects`] collapses objects.
pub const MAX_OBJECT_DEPTH: usize = 3;

impl SchemaCompaction {
    /// Fits a declaration to this budget: the description is clipped on a char boundary
    /// (ending in `…`), and the parameters climb the ladder — prune unreachable `$defs` →
    /// strip nested property descriptions → strip all property descriptions → drop definition
    /// tables → collapse objects deeper than 3 → drop `anyOf`/`oneOf`/`allOf` — until they fit.
    /// Every rung keeps the top-level argument surface: property names and `required`.
    ///
    /// When the ladder still does not fit, the floor is applied: each top-level property keeps
    /// only its `type`. A tool whose argument names alone exceed the budget is sent at the
    /// floor, and the report says `fits: false`.
    ///
    /// ```
    /// use serde_json::json;
    /// use tinytools::ToolSchema;
    /// use tinytools::schema::{CompactionRung, SchemaCompaction};
    ///
    /// let schema = ToolSchema::new(
    ///     "search",
    ///     "Search the catalogue. ".repeat(10),
    ///     json!({"type": "object", "required": ["q"], "properties": {
    ///         "q": {"type": "string", "description": "What to look for, in a few words."},
    ///         "page": {"type": "integer", "description": "Which page of results."}}}),
    /// );
    /// let budget = SchemaCompaction::UNLIMITED.with_max_description_bytes(40).with_max_schema_bytes(100);
    /// let (compact, report) = budget.compact(&schema);
    /// assert!(compact.description.len() <= 40 && compact.description.ends_with('…'));
    /// assert_eq!(report.rungs, [CompactionRung::PruneUnreachableDefinitions, CompactionRung::StripNestedDescriptions, CompactionRung::StripAllDescriptions]);
    /// assert!(report.fits && report.after <= 100);
    /// assert_eq!(compact.parameters["required"], json!(["q"]));
    /// ```
    pub fn compact(&self, schema: &ToolSchema) -> (ToolSchema, CompactionReport) {
        self.compact_with(schema, |_| {})
    }

    /// [`compact`](Self::compact), with `after_rung` applied after every rung (and before the
    /// first measurement), so the budget is measured on the schema as it will be sent.
    pub(crate) fn compact_with(
        &self,
        schema: &ToolSchema,
        after_rung: impl Fn(&mut Value),
    ) -> (ToolSchema, CompactionReport) {
        let (parameters, mut report) = self.ladder(&schema.parameters, after_rung);
        let description = match self.max_description_bytes {
            Some(max) => clip(&schema.description, max),
            None => schema.description.clone(),
        };
        report.description_clipped = description != schema.description;
        (ToolSchema { name: schema.name.clone(), description, parameters }, report)
    }

    /// Runs the ladder on a parameters schema alone.
    pub fn compact_parameters(&self, parameters: &Value) -> (Value, CompactionReport) {
        self.ladder(parameters, |_| {})
    }

    fn ladder(&self, parameters: &Value, after_rung: impl Fn(&mut Value)) -> (Value, CompactionReport) {
        let mut out = parameters.clone();
        after_rung(&mut out);
        let before = byte_len(&out);
        let mut report =
            CompactionReport { before, after: before, rungs: Vec::new(), fits: true, description_clipped: false };
        let Some(budget) = self.max_schema_bytes else {
            return (out, report);
        };
        for rung in LADDER {
            if byte_len(&out) <= budget {
                break;
            }
            apply(rung, &mut out);
            after_rung(&mut out);
            report.rungs.push(rung);
        }
        report.after = byte_len(&out);
        report.fits = report.after <= budget;
        (out, report)
    }
}

const LADDER: [CompactionRung; 7] = [
    CompactionRung::PruneUnreachableDefinitions,
    CompactionRung::StripNestedDescriptions,
    CompactionRung::StripAllDescriptions,
    CompactionRung::DropDefinitions,
    CompactionRung::CollapseDeepObjects,
    CompactionRung::DropCombinators,
    CompactionRung::BareTopLevelTypes,
];

fn byte_len(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |text| text.len())
}

fn apply(rung: CompactionRung, root: &mut Value) {
    match rung {
        CompactionRung::PruneUnreachableDefinitions => {
            prune_unreachable(root);
        }
        CompactionRung::StripNestedDescriptions => strip_descriptions(root, 2),
        CompactionRung::StripAllDescriptions => strip_descriptions(root, 1),
        CompactionRung::DropDefinitions => drop_definitions(root),
        CompactionRung::CollapseDeepObjects => walk_mut(root, 0, &mut |node, depth| {
            if depth > MAX_OBJECT_DEPTH && node.contains_key("properties") {
                node.retain(|key, _| key == "type");
                node.insert("type".into(), json!("object"));
            }
        }),
        CompactionRung::DropCombinators => {
            if let Value::Object(node) = root {
                for_each_child_mut(node, |_, child| {
                    walk_mut(child, 1, &mut |node, _| {
                        for key in ["anyOf", "oneOf", "allOf"] {
                            node.remove(key);
                        }
                    });
                });
            }
        }
        CompactionRung::BareTopLevelTypes => {
            if let Some(Value::Object(properties)) = root.get_mut("properties") {
                for property in properties.values_mut() {
                    if let Value::Object(node) = property {
                        node.retain(|key, _| key == "type" || key == "nullable");
                    }
                }
            }
        }
    }
}

/// Removes `description` from every node at object depth `min_depth` or more, and from
/// every node inside the definition tables.
fn strip_descriptions(root: &mut Value, min_depth: usize) {
    let Value::Object(node) = root else { return };
    for_each_child_mut(node, |slot, child| {
        let (depth, floor) = match slot {
            Slot::Definition => (0, 0),
            Slot::Property => (1, min_depth),
            _ => (0, min_depth),
        };
        walk_mut(child, depth, &mut |node, depth| {
            if depth >= floor {
                node.remove("description");
            }
        });
    });
}

/// Removes the definition tables; each `$ref` is replaced by its target's `type` (or `{}`).
fn drop_definitions(root: &mut Value) {
    let defs = definitions(root);
    if let Value::Object(node) = root {
        node.remove("$defs");
        node.remove("definitions");
    }
    walk_mut(root, 0, &mut |node: &mut Map<String, Value>, _| {
        if let Some(reference) = node.remove("$ref") {
            let target = reference.as_str().and_then(ref_target).and_then(|name| defs.get(name));
            if let Some(ty) = target.and_then(|def| def.get("type")) {
                node.entry("type").or_insert_with(|| ty.clone());
            }
        }
    });
}

/// `text` cut to at most `max_bytes` on a char boundary, ending in `…` when cut.
///
/// ```
/// use tinytools::schema::clip;
///
/// assert_eq!(clip("héllo wörld", 9), "héllo…"); // 6 bytes, then the 3-byte ellipsis
/// assert_eq!(clip("héllo wörld", 8), "héll…");
/// assert_eq!(clip("short", 80), "short");
/// assert_eq!(clip("abcdef", 2), "ab");
/// ```
pub fn clip(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let ellipsis = '…'.len_utf8();
    let (room, suffix) = if max_bytes >= ellipsis { (max_bytes - ellipsis, "…") } else { (max_bytes, "") };
    let mut end = room;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{suffix}", text[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested() -> Value {
        json!({
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"type": "object", "description": "top", "properties": {
                    "b": {"type": "object", "description": "second", "properties": {
                        "c": {"type": "object", "properties": {
                            "d": {"type": "object", "properties": {"e": {"type": "string"}}}}}}}}},
                "f": {"anyOf": [{"$ref": "#/$defs/F"}, {"type": "null"}], "description": "optional f"}
            },
            "$defs": {"F": {"type": "object", "description": "an F", "properties": {"x": {"type": "integer"}}},
                      "Unused": {"type": "string"}}
        })
    }

    #[test]
    fn each_rung_does_its_one_thing() {
        let mut schema = nested();
        apply(CompactionRung::PruneUnreachableDefinitions, &mut schema);
        assert!(schema["$defs"].get("Unused").is_none() && schema["$defs"].get("F").is_some());
        apply(CompactionRung::StripNestedDescriptions, &mut schema);
        assert_eq!(schema["properties"]["a"]["description"], "top");
        assert!(schema["properties"]["a"]["properties"]["b"].get("description").is_none());
        assert!(schema["$defs"]["F"].get("description").is_none());
        apply(CompactionRung::StripAllDescriptions, &mut schema);
        assert!(schema["properties"]["a"].get("description").is_none());
        apply(CompactionRung::DropDefinitions, &mut schema);
        assert!(schema.get("$defs").is_none());
        assert_eq!(schema["properties"]["f"]["anyOf"][0], json!({"type": "object"}));
        apply(CompactionRung::CollapseDeepObjects, &mut schema);
        assert_eq!(
            schema["properties"]["a"]["properties"]["b"]["properties"]["c"]["properties"]["d"],
            json!({"type": "object"})
        );
        apply(CompactionRung::DropCombinators, &mut schema);
        assert!(schema["properties"]["f"].get("anyOf").is_none());
        apply(CompactionRung::BareTopLevelTypes, &mut schema);
        assert_eq!(schema["properties"], json!({"a": {"type": "object"}, "f": {}}));
        let mut nullable = json!({"type": "object", "properties": {"n": {"type": ["integer", "null"], "minimum": 0}}});
        apply(CompactionRung::BareTopLevelTypes, &mut nullable);
        assert_eq!(nullable["properties"]["n"], json!({"type": ["integer", "null"]}));
        assert_eq!(schema["required"], json!(["a"]));
    }

    #[test]
    fn the_ladder_stops_as_soon_as_it_fits_and_reports_the_floor() {
        let schema = nested();
        let loose = SchemaCompaction { max_schema_bytes: Some(10_000), ..SchemaCompaction::UNLIMITED };
        let (same, report) = loose.compact_parameters(&schema);
        assert_eq!((same, report.rungs.len(), report.fits), (schema.clone(), 0, true));
        let impossible = SchemaCompaction { max_schema_bytes: Some(5), ..SchemaCompaction::UNLIMITED };
        let (floor, report) = impossible.compact_parameters(&schema);
        assert_eq!(report.rungs.len(), LADDER.len());
        assert!(!report.fits);
        assert_eq!(floor["properties"]["a"], json!({"type": "object"}));
    }
}
