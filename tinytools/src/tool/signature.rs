//! Compact TypeScript-style views of a parameters schema, for hosts that write their own
//! prompt text: [`type_signature`] and [`argument_notes`].

use serde_json::{Map, Value};

/// How deep nested objects are spelled out before they become `object`.
const MAX_DEPTH: usize = 3;
/// The longest signature; longer ones end in `…`.
const MAX_CHARS: usize = 400;

/// A one-line TypeScript-style type of a parameters schema: `{path: string, limit?: integer}`.
/// Enums become unions, arrays `T[]`, references are followed, nesting beyond three levels
/// reads `object`, and the whole is at most 400 characters.
///
/// ```
/// use serde_json::json;
/// use tinytools::tool::type_signature;
///
/// let schema = json!({"type": "object", "required": ["path"], "properties": {
///     "path": {"type": "string"}, "limit": {"type": "integer"},
///     "mode": {"enum": ["fast", "full"]}, "tags": {"type": "array", "items": {"type": "string"}}}});
/// assert_eq!(type_signature(&schema), r#"{path: string, limit?: integer, mode?: "fast" | "full", tags?: string[]}"#);
/// ```
pub fn type_signature(schema: &Value) -> String {
    let defs = crate::schema::definitions_of(schema);
    let text = render(schema, &defs, 0);
    if text.chars().count() <= MAX_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_CHARS - 1).collect();
    format!("{cut}…")
}

/// One short line per described top-level property: `- path: The file to read.`, required
/// ones first (in the schema's `required` order), then the others by name.
///
/// ```
/// use serde_json::json;
/// use tinytools::tool::argument_notes;
///
/// let schema = json!({"type": "object", "required": ["path"], "properties": {
///     "limit": {"type": "integer", "description": "Lines to read.\nAt most 500."},
///     "path": {"type": "string", "description": "The file to read."},
///     "raw": {"type": "boolean"}}});
/// assert_eq!(argument_notes(&schema), "- path: The file to read.\n- limit: Lines to read. At most 500.");
/// ```
pub fn argument_notes(schema: &Value) -> String {
    ordered_properties(schema)
        .into_iter()
        .filter_map(|(name, property)| {
            let description = property.get("description")?.as_str()?.split_whitespace().collect::<Vec<_>>().join(" ");
            (!description.is_empty()).then(|| format!("- {name}: {description}"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level properties: required ones first, in `required` order, then the rest by name.
pub(crate) fn ordered_properties(schema: &Value) -> Vec<(&str, &Value)> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut ordered: Vec<(&str, &Value)> =
        required.iter().filter_map(|name| properties.get_key_value(*name)).map(|(k, v)| (k.as_str(), v)).collect();
    ordered
        .extend(properties.iter().filter(|(name, _)| !required.contains(&name.as_str())).map(|(k, v)| (k.as_str(), v)));
    ordered
}

fn render(schema: &Value, defs: &Map<String, Value>, depth: usize) -> String {
    let Some(node) = schema.as_object() else {
        return "any".to_owned();
    };
    if let Some(target) = node.get("$ref").and_then(Value::as_str).and_then(crate::schema::ref_name) {
        return match defs.get(target) {
            Some(def) if depth < MAX_DEPTH => render(def, defs, depth + 1),
            _ => "object".to_owned(),
        };
    }
    if let Some(Value::Array(values)) = node.get("enum") {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    if let Some(constant) = node.get("const") {
        return constant.to_string();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(key) {
            let mut parts: Vec<String> = branches.iter().map(|b| render(b, defs, depth)).collect();
            parts.dedup();
            return parts.join(" | ");
        }
    }
    match node.get("type") {
        Some(Value::Array(types)) => {
            types.iter().map(|t| single(t.as_str().unwrap_or("any"), node, defs, depth)).collect::<Vec<_>>().join(" | ")
        }
        Some(Value::String(ty)) => single(ty, node, defs, depth),
        _ if node.contains_key("properties") => single("object", node, defs, depth),
        _ => "any".to_owned(),
    }
}

fn single(ty: &str, node: &Map<String, Value>, defs: &Map<String, Value>, depth: usize) -> String {
    match ty {
        "array" => {
            let item = node.get("items").map_or_else(|| "any".to_owned(), |items| render(items, defs, depth));
            if item.contains(' ') { format!("({item})[]") } else { format!("{item}[]") }
        }
        "object" if depth < MAX_DEPTH && node.contains_key("properties") => {
            let as_value = Value::Object(node.clone());
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let fields: Vec<String> = ordered_properties(&as_value)
                .into_iter()
                .map(|(name, property)| {
                    let optional = if required.contains(&name) { "" } else { "?" };
                    format!("{name}{optional}: {}", render(property, defs, depth + 1))
                })
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        other => other.to_owned(),
    }
}
