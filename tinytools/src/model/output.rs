//! [`OutputSchema`]: the shape a run's final answer must have (typed output,
//! [`Agent::run_typed`](crate::run::Agent::run_typed)), checked before any request.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::refs;

/// The JSON Schema a run's final answer must match, as a request carries it
/// ([`ModelRequest::output`](super::ModelRequest::output)). A provider with native structured
/// output ([`ModelProfile::structured_output`](super::ModelProfile::structured_output)) sends
/// it in its own field (OpenAI `response_format`, Responses `text.format`, Anthropic
/// `output_config.format`); the run asks any other model for it in words. Either way the run
/// validates the answer against `schema` itself.
///
/// [`of`](Self::of) derives it from a Rust type and refuses, before any request, a type that
/// strict structured output cannot take:
///
/// ```
/// use schemars::JsonSchema;
/// use tinytools::model::{OutputSchema, OutputSchemaError};
///
/// #[derive(JsonSchema)]
/// struct Invoice {
///     /// Who is billed.
///     customer: String,
///     /// The total, in cents.
///     total_cents: u64,
/// }
///
/// let output = OutputSchema::of::<Invoice>()?;
/// assert_eq!(output.name, "Invoice");
/// assert_eq!(output.schema["required"], serde_json::json!(["customer", "total_cents"]));
///
/// #[derive(JsonSchema)]
/// struct Comment {
///     text: String,
///     replies: Vec<Comment>,
/// }
/// assert!(matches!(OutputSchema::of::<Comment>(), Err(OutputSchemaError::Recursive { .. })));
/// assert!(matches!(OutputSchema::of::<Vec<String>>(), Err(OutputSchemaError::NotAnObject { .. })));
/// # Ok::<(), OutputSchemaError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutputSchema {
    /// A name for the schema (providers require one): letters, digits, `_` and `-`, at most
    /// 64 characters.
    pub name: String,
    /// The schema, as schemars derives it (draft 2020-12, definitions under `$defs`).
    pub schema: Value,
}

/// Why a type or schema cannot be a run's output. Each says what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputSchemaError {
    /// The root is not an object: an array, a scalar, or a `oneOf`/`anyOf` (an enum with
    /// data). Structured output takes an object at the root.
    #[error(
        "the output type `{name}` is {found} at its root, and structured output takes only an object there: wrap it in a struct (for example `struct Answer {{ items: Vec<Item> }}`)"
    )]
    NotAnObject {
        /// The schema's name.
        name: String,
        /// What the root is.
        found: String,
    },
    /// The type refers to itself, which strict structured output cannot take.
    #[error(
        "the output type `{name}` is recursive (`{definition}` contains itself), and strict structured output cannot take a recursive type: flatten it (for example a list of items with parent ids) or bound its depth with distinct types"
    )]
    Recursive {
        /// The schema's name.
        name: String,
        /// The definition that contains itself (`#` for the root).
        definition: String,
    },
    /// The schema is not valid JSON Schema.
    #[error("the output schema `{name}` is not valid JSON Schema: {reason}; fix the schema or derive it with schemars")]
    Invalid {
        /// The schema's name.
        name: String,
        /// What the validator said.
        reason: String,
    },
}

impl OutputSchema {
    /// The schema of `T`, named after it.
    ///
    /// # Errors
    /// [`OutputSchemaError`] when `T` is not an object at its root or is recursive.
    pub fn of<T: JsonSchema>() -> Result<Self, OutputSchemaError> {
        Self::new(T::schema_name(), crate::schema::schema_for::<T>())
    }

    /// A schema given as JSON, named `name` (characters a provider refuses become `_`).
    ///
    /// # Errors
    /// [`OutputSchemaError`] when the schema is not an object at its root, is recursive, or is
    /// not valid JSON Schema.
    pub fn new(name: impl AsRef<str>, schema: Value) -> Result<Self, OutputSchemaError> {
        let name = wire_name(name.as_ref());
        let found = root_kind(&schema);
        if found != "an object" {
            return Err(OutputSchemaError::NotAnObject { name, found });
        }
        if let Some(definition) = recursive_definition(&schema) {
            return Err(OutputSchemaError::Recursive { name, definition });
        }
        if let Err(error) = jsonschema::validator_for(&schema) {
            return Err(OutputSchemaError::Invalid { name, reason: error.to_string() });
        }
        Ok(Self { name, schema })
    }
}

/// `name` as providers accept it: `[A-Za-z0-9_-]`, at most 64 characters, never empty.
fn wire_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    if cleaned.is_empty() { "output".to_owned() } else { cleaned }
}

fn root_kind(schema: &Value) -> String {
    let Some(root) = schema.as_object() else {
        return "not a schema object".to_owned();
    };
    for combinator in ["oneOf", "anyOf", "allOf"] {
        if root.contains_key(combinator) {
            return format!("a `{combinator}` (an enum with data, or a choice of shapes)");
        }
    }
    match root.get("type") {
        Some(Value::String(ty)) if ty == "object" => "an object".to_owned(),
        Some(Value::String(ty)) => format!("of type `{ty}`"),
        Some(other) => format!("of type {other}"),
        None if root.contains_key("enum") => "an `enum` of values".to_owned(),
        None => "without a `type`".to_owned(),
    }
}

/// The first definition that reaches itself through `$ref`s (`#` for the root), if any.
fn recursive_definition(schema: &Value) -> Option<String> {
    if refs::reachable(schema).contains("#") {
        return Some("#".to_owned());
    }
    let defs = refs::definitions(schema);
    let found =
        defs.iter().find(|(name, definition)| refs::reachable_from(&defs, vec![*definition]).contains(name.as_str()));
    found.map(|(name, _)| name.clone())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_cycle_between_two_definitions_is_recursive() {
        let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}});
        assert!(matches!(OutputSchema::new("x", schema), Err(OutputSchemaError::Recursive { .. })));
    }

    #[test]
    fn shared_definitions_without_a_cycle_are_fine() {
        let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "object", "properties": {"n": {"type": "integer"}}}}});
        assert!(OutputSchema::new("x", schema).is_ok());
    }

    #[test]
    fn names_are_made_wire_safe() {
        let output = OutputSchema::new("Page<Item>", json!({"type": "object"})).map(|o| o.name);
        assert_eq!(output, Ok("Page_Item_".to_owned()));
    }

    #[test]
    fn a_root_one_of_says_to_wrap_it() {
        let error = OutputSchema::new("Choice", json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}));
        let Err(error) = error else { panic!("a root oneOf was accepted") };
        assert!(error.to_string().contains("wrap it in a struct"), "{error}");
    }
}
