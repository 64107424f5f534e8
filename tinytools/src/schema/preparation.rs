//! [`SchemaPreparation`]: projecting canonical schemas onto what a provider accepts and what a
//! run can afford, before they are sent.

use serde_json::{Value, json};

use super::compaction::{CompactionReport, SchemaCompaction};
use super::node::walk_mut;
use super::profile::ProviderProfile;
use crate::ToolSchema;

/// How every advertised and deferred schema is projected before it is sent
/// (`RunPolicy::tool_schemas`; `None` there sends schemas verbatim).
///
/// The projection runs: the provider profile ([`ProviderProfile::adapt`]: `$ref` resolution,
/// keyword stripping), then strict mode if asked, then compaction — the tool's own budget when
/// it declares one ([`Tool::schema_compaction`](crate::Tool::schema_compaction)), else the
/// run's.
///
/// Admission always validates against the canonical declared schema, never this projection,
/// and the two may diverge either way: compaction only removes constraints (the wire schema is
/// looser than what admission enforces), while strict mode adds them (every property required,
/// objects closed: the wire schema is stricter than what admission enforces).
///
/// ```
/// use serde_json::json;
/// use tinytools::ToolSchema;
/// use tinytools::schema::{ProviderProfile, SchemaPreparation};
///
/// let schema = ToolSchema::new(
///     "stock_quote",
///     "Fetch the latest price for a ticker symbol.",
///     json!({"type": "object", "required": ["symbol"], "properties": {
///         "symbol": {"type": "string"}, "limit": {"type": "integer", "format": "uint32", "minimum": 0}}}),
/// );
/// let openai = SchemaPreparation::new(ProviderProfile::OPENAI).with_strict(true);
/// let prepared = openai.prepare(&schema, None).schema;
/// assert_eq!(prepared.parameters["required"], json!(["symbol", "limit"]));
/// assert_eq!(prepared.parameters["properties"]["limit"]["type"], json!(["integer", "null"]));
/// assert_eq!(prepared.parameters["additionalProperties"], false);
/// assert!(prepared.parameters["properties"]["limit"].get("format").is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SchemaPreparation {
    /// What the provider accepts.
    pub profile: ProviderProfile,
    /// Closed objects, every property required, optional ones made nullable (OpenAI's strict
    /// mode). Where the profile cannot express null, optional properties stay optional.
    pub strict: bool,
    /// The run's budget, for tools that declare none.
    pub compaction: Option<SchemaCompaction>,
}

/// A projected declaration, and what compaction did to it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PreparedSchema {
    /// What is sent.
    pub schema: ToolSchema,
    /// The compaction report, when a budget applied.
    pub report: Option<CompactionReport>,
}

impl SchemaPreparation {
    /// A preparation for a provider profile: not strict, no run budget.
    pub fn new(profile: ProviderProfile) -> Self {
        Self { profile, strict: false, compaction: None }
    }

    /// Turns strict mode on or off.
    #[must_use]
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Sets the run's budget.
    #[must_use]
    pub fn with_compaction(mut self, compaction: SchemaCompaction) -> Self {
        self.compaction = Some(compaction);
        self
    }

    /// Projects one declaration. `tool_budget` is the tool's own budget, which replaces the
    /// run's when present. Idempotent: preparing a prepared schema changes nothing.
    pub fn prepare(&self, schema: &ToolSchema, tool_budget: Option<SchemaCompaction>) -> PreparedSchema {
        let mut parameters = self.profile.adapt(&schema.parameters);
        if self.strict {
            self.close(&mut parameters);
        }
        let mut prepared =
            ToolSchema { name: schema.name.clone(), description: schema.description.clone(), parameters };
        let report = tool_budget.or(self.compaction).map(|budget| {
            // Rungs may leave new bare objects; in strict mode they are closed after every rung,
            // so the budget is measured on what is sent.
            let (compacted, report) = budget.compact_with(&prepared, |parameters| {
                if self.strict {
                    self.close(parameters);
                }
            });
            prepared = compacted;
            report
        });
        PreparedSchema { schema: prepared, report }
    }

    /// Every way a prepared parameters schema breaks this preparation's rules: the profile's
    /// ([`ProviderProfile::check`]) and, in strict mode, closed objects with every property
    /// required. Empty when it conforms.
    pub fn check(&self, parameters: &Value) -> Vec<String> {
        let mut problems = self.profile.check(parameters);
        if !self.strict {
            return problems;
        }
        let profile = self.profile;
        let mut parameters = parameters.clone();
        walk_mut(&mut parameters, 0, &mut |node, depth| {
            if !is_object_schema(node) {
                return;
            }
            if profile.additional_properties && node.get("additionalProperties") != Some(&json!(false)) {
                problems.push(format!("an object at depth {depth} is not closed (`additionalProperties: false`)"));
            }
            let names: Vec<&String> =
                node.get("properties").and_then(Value::as_object).map(|p| p.keys().collect()).unwrap_or_default();
            let required = node.get("required").and_then(Value::as_array);
            let mut missing =
                names.iter().filter(|name| !required.is_some_and(|r| r.iter().any(|v| v == name.as_str())));
            if profile.can_express_null()
                && let Some(name) = missing.next()
            {
                problems.push(format!("property `{name}` at depth {depth} is not required"));
            }
        });
        problems
    }

    /// Strict mode on a parameters schema: every object closed, every property required, the
    /// optional ones nullable.
    fn close(&self, parameters: &mut Value) {
        let profile = self.profile;
        walk_mut(parameters, 0, &mut |node, _| {
            if !is_object_schema(node) {
                return;
            }
            if profile.additional_properties {
                node.insert("additionalProperties".into(), json!(false));
            }
            if !profile.can_express_null() {
                return;
            }
            let required: Vec<Value> = node.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
            let Some(Value::Object(properties)) = node.get_mut("properties") else {
                node.insert("required".into(), json!([]));
                return;
            };
            let mut all = required.clone();
            for (name, property) in properties.iter_mut() {
                let name = Value::String(name.clone());
                if !required.contains(&name) {
                    if let Value::Object(property) = property {
                        profile.allow_null(property);
                    }
                    all.push(name);
                }
            }
            node.insert("required".into(), Value::Array(all));
        });
    }
}

/// In strict mode a model must send every property, `null` for the optional ones it means to
/// leave out. This removes those `null`s from `args` — wherever the canonical `parameters`
/// schema declares the property, does not require it and does not itself accept `null` — so
/// that admission, which checks the canonical schema, sees them as absent.
///
/// ```
/// use serde_json::json;
/// use tinytools::schema::drop_absent_nulls;
///
/// let schema = json!({"type": "object", "properties": {"symbol": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["symbol"]});
/// let mut args = json!({"symbol": null, "limit": null});
/// drop_absent_nulls(&schema, &mut args);
/// assert_eq!(args, json!({"symbol": null}), "a required property's null is still refused by admission");
/// ```
pub fn drop_absent_nulls(parameters: &Value, args: &mut Value) {
    drop_nulls_at(parameters, args, 0);
}

fn drop_nulls_at(schema: &Value, args: &mut Value, depth: usize) {
    const MAX_DEPTH: usize = 32;
    let (Some(properties), Value::Object(args)) = (schema.get("properties").and_then(Value::as_object), args) else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let required = |name: &str| schema["required"].as_array().is_some_and(|r| r.iter().any(|v| v == name));
    let accepts_null = |property: &Value| {
        let null = json!("null");
        property.get("type").is_some_and(|t| *t == null || t.as_array().is_some_and(|types| types.contains(&null)))
            || ["anyOf", "oneOf"].iter().any(|key| {
                property[*key].as_array().is_some_and(|options| options.iter().any(|o| o.get("type") == Some(&null)))
            })
    };
    args.retain(|name, value| {
        !(value.is_null() && properties.get(name).is_some_and(|p| !accepts_null(p)) && !required(name))
    });
    for (name, value) in args.iter_mut() {
        if let Some(property) = properties.get(name) {
            drop_nulls_at(property, value, depth + 1);
        }
    }
}

/// Whether a schema node describes an object: strict mode closes these.
fn is_object_schema(node: &serde_json::Map<String, Value>) -> bool {
    node.get("type") == Some(&json!("object")) || node.contains_key("properties")
}
