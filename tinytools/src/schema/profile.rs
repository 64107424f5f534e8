//! [`ProviderProfile`]: what each provider accepts in a tool's parameters schema, as data, with
//! the transform that brings a schema within it and a checker that verifies the result.

use serde_json::{Map, Value, json};

use super::node::{for_each_child, for_each_child_mut};

/// The JSON Schema a provider accepts for tool parameters.
///
/// Four profiles ship: [`OPENAI`](Self::OPENAI), [`ANTHROPIC`](Self::ANTHROPIC),
/// [`GEMINI`](Self::GEMINI) and [`PORTABLE`](Self::PORTABLE) (what all of them accept).
///
/// ```
/// use serde_json::json;
/// use tinytools::schema::ProviderProfile;
///
/// let schema = json!({"type": "object", "properties": {"n": {"type": ["integer", "null"], "format": "uint32"}}});
/// let gemini = ProviderProfile::GEMINI.adapt(&schema);
/// assert_eq!(gemini["properties"]["n"], json!({"type": "integer", "nullable": true}));
/// assert!(ProviderProfile::GEMINI.check(&gemini).is_empty());
/// assert!(!ProviderProfile::GEMINI.check(&schema).is_empty());
///
/// // A provider of your own: start from the closest profile and change what differs.
/// const NO_REFS: ProviderProfile = ProviderProfile::OPENAI.with_name("openai-no-refs").with_refs(false);
/// assert!(!NO_REFS.adapt(&json!({"$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"}}}))
///     .to_string()
///     .contains("$ref"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProviderProfile {
    /// A short name (`"openai"`).
    pub name: &'static str,
    /// `$ref` and `$defs` are accepted; otherwise references are inlined.
    pub refs: bool,
    /// `"type": ["string", "null"]` is accepted; otherwise a single type.
    pub type_arrays: bool,
    /// OpenAPI's `"nullable": true` expresses null (Gemini).
    pub nullable_keyword: bool,
    /// `anyOf` is accepted.
    pub any_of: bool,
    /// `oneOf` is accepted (otherwise enums of constants merge into `enum`, the rest into `anyOf`).
    pub one_of: bool,
    /// `allOf` is accepted (otherwise branches merge into their parent).
    pub all_of: bool,
    /// `const` is accepted (otherwise it becomes a one-value `enum`).
    pub const_keyword: bool,
    /// `additionalProperties` is accepted.
    pub additional_properties: bool,
    /// `enum` values must be strings (otherwise the enum moves into the description).
    pub enum_strings_only: bool,
    /// Every keyword a schema node may carry; others are removed.
    pub keywords: &'static [&'static str],
    /// The `format` values kept; others are removed.
    pub formats: &'static [&'static str],
}

const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uuid",
    "regex",
];

impl ProviderProfile {
    /// OpenAI function calling (and Structured Outputs' strict mode, with
    /// [`SchemaPreparation::strict`](super::SchemaPreparation::strict)).
    pub const OPENAI: Self = Self {
        name: "openai",
        refs: true,
        type_arrays: true,
        nullable_keyword: false,
        any_of: true,
        one_of: false,
        all_of: false,
        const_keyword: true,
        additional_properties: true,
        enum_strings_only: false,
        keywords: &[
            "type",
            "description",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "anyOf",
            "$ref",
            "$defs",
            "pattern",
            "format",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minItems",
            "maxItems",
        ],
        formats: &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"],
    };

    /// Anthropic Messages `input_schema`: most of draft 2020-12.
    pub const ANTHROPIC: Self = Self {
        name: "anthropic",
        refs: true,
        type_arrays: true,
        nullable_keyword: false,
        any_of: true,
        one_of: true,
        all_of: true,
        const_keyword: true,
        additional_properties: true,
        enum_strings_only: false,
        keywords: &[
            "type",
            "description",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "prefixItems",
            "enum",
            "const",
            "anyOf",
            "oneOf",
            "allOf",
            "$ref",
            "$defs",
            "pattern",
            "format",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minItems",
            "maxItems",
            "uniqueItems",
            "minLength",
            "maxLength",
            "default",
            "examples",
            "title",
        ],
        formats: STANDARD_FORMATS,
    };

    /// Gemini `functionDeclarations[].parameters`: a subset of OpenAPI 3.0 — no `$ref`, a single
    /// `type` with `nullable`, string enums, no `additionalProperties`.
    pub const GEMINI: Self = Self {
        name: "gemini",
        refs: false,
        type_arrays: false,
        nullable_keyword: true,
        any_of: true,
        one_of: false,
        all_of: false,
        const_keyword: false,
        additional_properties: false,
        enum_strings_only: true,
        keywords: &[
            "type",
            "description",
            "properties",
            "required",
            "items",
            "enum",
            "format",
            "nullable",
            "anyOf",
            "minimum",
            "maximum",
            "minItems",
            "maxItems",
            "minLength",
            "maxLength",
            "pattern",
        ],
        formats: &["date-time", "enum", "int32", "int64", "float", "double"],
    };

    /// What every profile above accepts: plain types, properties, items, string enums, bounds.
    pub const PORTABLE: Self = Self {
        name: "portable",
        refs: false,
        type_arrays: false,
        nullable_keyword: false,
        any_of: false,
        one_of: false,
        all_of: false,
        const_keyword: false,
        additional_properties: false,
        enum_strings_only: true,
        keywords: &["type", "description", "properties", "required", "items", "enum", "minimum", "maximum"],
        formats: &[],
    };

    /// The four profiles.
    pub const ALL: [Self; 4] = [Self::OPENAI, Self::ANTHROPIC, Self::GEMINI, Self::PORTABLE];

    /// Sets the short name.
    #[must_use]
    pub const fn with_name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Sets whether `$ref` and `$defs` are accepted.
    #[must_use]
    pub const fn with_refs(mut self, refs: bool) -> Self {
        self.refs = refs;
        self
    }

    /// Sets whether `"type": [..]` arrays are accepted.
    #[must_use]
    pub const fn with_type_arrays(mut self, type_arrays: bool) -> Self {
        self.type_arrays = type_arrays;
        self
    }

    /// Sets whether OpenAPI's `"nullable": true` expresses null.
    #[must_use]
    pub const fn with_nullable_keyword(mut self, nullable_keyword: bool) -> Self {
        self.nullable_keyword = nullable_keyword;
        self
    }

    /// Sets whether `anyOf` is accepted.
    #[must_use]
    pub const fn with_any_of(mut self, any_of: bool) -> Self {
        self.any_of = any_of;
        self
    }

    /// Sets whether `oneOf` is accepted.
    #[must_use]
    pub const fn with_one_of(mut self, one_of: bool) -> Self {
        self.one_of = one_of;
        self
    }

    /// Sets whether `allOf` is accepted.
    #[must_use]
    pub const fn with_all_of(mut self, all_of: bool) -> Self {
        self.all_of = all_of;
        self
    }

    /// Sets whether `const` is accepted.
    #[must_use]
    pub const fn with_const_keyword(mut self, const_keyword: bool) -> Self {
        self.const_keyword = const_keyword;
        self
    }

    /// Sets whether `additionalProperties` is accepted.
    #[must_use]
    pub const fn with_additional_properties(mut self, additional_properties: bool) -> Self {
        self.additional_properties = additional_properties;
        self
    }

    /// Sets whether `enum` values must be strings.
    #[must_use]
    pub const fn with_enum_strings_only(mut self, enum_strings_only: bool) -> Self {
        self.enum_strings_only = enum_strings_only;
        self
    }

    /// Sets every keyword a schema node may carry.
    #[must_use]
    pub const fn with_keywords(mut self, keywords: &'static [&'static str]) -> Self {
        self.keywords = keywords;
        self
    }

    /// Sets the `format` values kept.
    #[must_use]
    pub const fn with_formats(mut self, formats: &'static [&'static str]) -> Self {
        self.formats = formats;
        self
    }

    /// Brings a parameters schema within this profile. Lossy only where the provider cannot
    /// express a construct, and then always towards a looser schema (admission still enforces
    /// the canonical one).
    ///
    /// Where references are not accepted they are inlined, within bounds: a reference nested
    /// more than 32 deep, or met once about 256 KB has been copied in (a chain of definitions
    /// that each use the previous one twice doubles at every link), is replaced by its
    /// definition's `type` and `description` alone, as a recursive one is. Such a cut is
    /// logged (`tracing` warning, target `tinytools::schema`).
    pub fn adapt(&self, schema: &Value) -> Value {
        let mut out = schema.clone();
        if !self.refs {
            let report = super::refs::inline(&mut out);
            if report.truncated() {
                tracing::warn!(
                    target: "tinytools::schema",
                    profile = self.name,
                    too_deep = report.too_deep,
                    over_budget = report.over_budget,
                    "references left unexpanded: nested too deep or past the inlining budget"
                );
            }
        }
        self.adapt_node(&mut out);
        if let Value::Object(root) = &mut out {
            root.insert("type".into(), json!("object"));
            root.entry("properties").or_insert_with(|| json!({}));
        }
        out
    }

    fn adapt_node(&self, value: &mut Value) {
        let Value::Object(node) = value else {
            // `true`/`false` schemas: "anything" is the portable spelling of `true`.
            *value = json!({});
            return;
        };
        for_each_child_mut(node, |_, child| self.adapt_node(child));
        if !self.const_keyword
            && let Some(constant) = node.remove("const")
        {
            node.entry("enum").or_insert_with(|| Value::Array(vec![constant]));
        }
        if !self.one_of
            && let Some(Value::Array(branches)) = node.remove("oneOf")
        {
            merge_union(node, branches, self.any_of);
        }
        if !self.all_of
            && let Some(Value::Array(branches)) = node.remove("allOf")
        {
            for branch in branches {
                merge_into(node, branch);
            }
        }
        if (!self.any_of || !self.type_arrays)
            && let Some(Value::Array(branches)) = node.remove("anyOf")
        {
            let (nulls, others): (Vec<Value>, Vec<Value>) = branches.into_iter().partition(is_null_schema);
            match (others.len(), self.any_of) {
                (1, _) | (_, false) => {
                    if let Some(first) = others.into_iter().next() {
                        merge_into(node, first);
                    }
                }
                _ => {
                    node.insert("anyOf".into(), Value::Array(others));
                }
            }
            if !nulls.is_empty() {
                self.allow_null(node);
            }
        }
        if !self.type_arrays
            && let Some(Value::Array(types)) = node.get("type").cloned()
        {
            let nullable = types.iter().any(|t| t == "null");
            match types.into_iter().find(|t| t != "null") {
                Some(single) => node.insert("type".into(), single),
                None => node.remove("type"),
            };
            if nullable && self.nullable_keyword {
                node.insert("nullable".into(), json!(true));
            }
        }
        if self.enum_strings_only
            && let Some(Value::Array(values)) = node.get("enum")
            && values.iter().any(|v| !v.is_string())
        {
            let listed: Vec<String> = values.iter().map(Value::to_string).collect();
            node.remove("enum");
            let note = format!("One of: {}.", listed.join(", "));
            let description = match node.get("description").and_then(Value::as_str) {
                Some(text) => format!("{text} {note}"),
                None => note,
            };
            node.insert("description".into(), json!(description));
        }
        if node.get("format").and_then(Value::as_str).is_some_and(|f| !self.formats.contains(&f)) {
            node.remove("format");
        }
        node.retain(|key, _| self.keywords.contains(&key.as_str()));
    }

    /// Whether this profile can say "or null" at all (type arrays, `nullable`, or `anyOf`).
    pub(crate) fn can_express_null(&self) -> bool {
        self.type_arrays || self.nullable_keyword || self.any_of
    }

    /// Marks a node as accepting null, in this profile's spelling.
    pub(crate) fn allow_null(&self, node: &mut Map<String, Value>) {
        if self.nullable_keyword {
            node.insert("nullable".into(), json!(true));
        } else if self.type_arrays {
            match node.get_mut("type") {
                Some(Value::String(single)) => {
                    let single = single.clone();
                    node.insert("type".into(), json!([single, "null"]));
                }
                Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => types.push(json!("null")),
                Some(_) => {}
                None if self.any_of => {
                    let inner: Map<String, Value> = std::mem::take(node);
                    let (description, rest): (Map<String, Value>, Map<String, Value>) =
                        inner.into_iter().partition(|(key, _)| key == "description");
                    node.extend(description);
                    node.insert("anyOf".into(), json!([Value::Object(rest), {"type": "null"}]));
                    return;
                }
                None => {}
            }
            if let Some(Value::Array(values)) = node.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
        }
    }

    /// Every way `schema` breaks this profile's rules, one line each (empty when it conforms).
    pub fn check(&self, schema: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        if schema.get("type") != Some(&json!("object")) {
            problems.push("the root must be `\"type\": \"object\"`".to_owned());
        }
        self.check_node(schema, "", &mut problems);
        problems
    }

    fn check_node(&self, value: &Value, at: &str, problems: &mut Vec<String>) {
        let Value::Object(node) = value else {
            problems.push(format!("{at}: a schema must be an object"));
            return;
        };
        for key in node.keys() {
            if !self.keywords.contains(&key.as_str()) {
                problems.push(format!("{at}: `{key}` is not accepted by {}", self.name));
            }
        }
        if !self.type_arrays && node.get("type").is_some_and(Value::is_array) {
            problems.push(format!("{at}: {} needs a single `type`", self.name));
        }
        if let Some(format) = node.get("format").and_then(Value::as_str)
            && !self.formats.contains(&format)
        {
            problems.push(format!("{at}: format `{format}` is not accepted by {}", self.name));
        }
        if self.enum_strings_only
            && let Some(Value::Array(values)) = node.get("enum")
            && values.iter().any(|v| !v.is_string())
        {
            problems.push(format!("{at}: {} accepts only string enums", self.name));
        }
        let mut index = 0;
        for_each_child(node, |_, child| {
            index += 1;
            self.check_node(child, &format!("{at}/{index}"), problems);
        });
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("null")) || schema.get("const") == Some(&Value::Null)
}

/// `oneOf` without `oneOf`: constants merge into one `enum` (how schemars writes Rust enums);
/// other branches become `anyOf` where accepted, else the first branch stands.
fn merge_union(node: &mut Map<String, Value>, branches: Vec<Value>, any_of: bool) {
    let constants: Option<Vec<Value>> = branches
        .iter()
        .map(|branch| match branch.get("enum").or_else(|| branch.get("const")) {
            Some(Value::Array(values)) => Some(values.clone()),
            Some(single) => Some(vec![single.clone()]),
            None => None,
        })
        .collect::<Option<Vec<Vec<Value>>>>()
        .map(|lists| lists.into_iter().flatten().collect());
    if let Some(values) = constants {
        if values.iter().all(Value::is_string) {
            node.insert("type".into(), json!("string"));
        }
        node.insert("enum".into(), Value::Array(values));
    } else if any_of {
        node.insert("anyOf".into(), Value::Array(branches));
    } else if let Some(first) = branches.into_iter().next() {
        merge_into(node, first);
    }
}

/// Merges a branch's keywords into a node; the node's own keywords win, and properties and
/// `required` lists are united.
fn merge_into(node: &mut Map<String, Value>, branch: Value) {
    let Value::Object(branch) = branch else { return };
    for (key, value) in branch {
        match (key.as_str(), node.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (name, schema) in theirs {
                    mine.entry(name).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                node.insert(key, value);
            }
        }
    }
}
