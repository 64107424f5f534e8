//! Admission: every call's arguments are checked against the tool's canonical declared schema
//! (never a projected wire schema) before the tool sees them.

use serde_json::Value;

use super::error::{RegistryError, ToolError};
use super::violation::Violation;

/// The deepest arguments may nest: objects and arrays inside one another, the arguments
/// object itself counting one. Deeper arguments are refused before validation with one
/// [`Violation`] saying so.
///
/// Validating a value (and dropping one) recurses once per level, so arguments thousands of
/// levels deep handed to [`ToolRegistry::dispatch`](crate::ToolRegistry::dispatch) would
/// overflow the stack; the depth is measured without recursion, and refused arguments are
/// taken apart without it too. Arguments sent as text are already cut at 128 levels by the
/// JSON parser.
pub const MAX_ARGUMENT_DEPTH: usize = 64;

/// A tool's compiled argument validator.
pub(crate) struct Admission {
    validator: jsonschema::Validator,
}

impl Admission {
    /// Compiles the schema once, at registration.
    pub(crate) fn compile(tool: &str, schema: &Value) -> Result<Self, RegistryError> {
        let invalid = |reason: String| RegistryError::InvalidSchema { tool: tool.to_owned(), reason };
        let Some(root) = schema.as_object() else {
            return Err(invalid(format!("it must be a JSON object, found `{}`", kind(schema))));
        };
        match root.get("type") {
            Some(Value::String(ty)) if ty == "object" => {}
            other => {
                return Err(invalid(format!(
                    "its top level must declare \"type\": \"object\" (providers require an arguments object), found {}",
                    other.map_or_else(|| "no type".to_owned(), Value::to_string)
                )));
            }
        }
        let validator =
            jsonschema::validator_for(schema).map_err(|err| invalid(format!("it is not valid JSON Schema: {err}")))?;
        Ok(Self { validator })
    }

    /// Checks arguments; on failure lists every violation at once. Arguments nested deeper
    /// than [`MAX_ARGUMENT_DEPTH`] are refused before the validator sees them.
    pub(crate) fn check(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        if nests_deeper_than(args, MAX_ARGUMENT_DEPTH) {
            let message = format!(
                "the arguments nest objects and arrays more than {MAX_ARGUMENT_DEPTH} levels deep, \
                 the most accepted; send a flatter value"
            );
            return Err(ToolError::InvalidArguments {
                tool: tool.to_owned(),
                violations: vec![Violation::new("", message)],
            });
        }
        if self.validator.is_valid(args) {
            return Ok(());
        }
        let mut violations = Vec::new();
        for error in self.validator.iter_errors(args) {
            explain(&error, &mut violations);
        }
        Err(ToolError::InvalidArguments { tool: tool.to_owned(), violations })
    }
}

/// Turns a validator error into violations a model can act on.
///
/// An `anyOf`/`oneOf` failure ("not valid under any of the schemas") says nothing useful by
/// itself, and schemars emits one for every `Option<Struct>` (`anyOf: [$ref, null]`). When
/// exactly one branch matched the value's shape and failed deeper inside it, that branch's
/// errors are the real cause and are reported instead; otherwise the validator's message stands.
fn explain(error: &jsonschema::ValidationError<'_>, out: &mut Vec<Violation>) {
    use jsonschema::error::ValidationErrorKind;

    let path = error.instance_path().as_str();
    if let ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } = error.kind() {
        let inside = |e: &jsonschema::ValidationError<'_>| {
            e.instance_path().as_str().strip_prefix(path).is_some_and(|rest| rest.starts_with('/'))
        };
        let mut deeper = context.iter().filter(|branch| !branch.is_empty() && branch.iter().all(inside));
        if let (Some(branch), None) = (deeper.next(), deeper.next()) {
            for inner in branch {
                explain(inner, out);
            }
            return;
        }
    }
    out.push(Violation::quoting(path, error.to_string(), summary(error)));
}

/// A validator error without the offending value: jsonschema's masked wording (the value
/// called "the value"), and the same for the inner error of a `propertyNames` failure, which
/// the masked form would print whole.
fn summary(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind;

    const PLACEHOLDER: &str = "the value";
    match error.kind() {
        ValidationErrorKind::PropertyNames { error } => {
            format!("a property name is not allowed: {}", error.masked_with(PLACEHOLDER))
        }
        _ => error.masked_with(PLACEHOLDER).to_string(),
    }
}

/// Whether `value` nests objects and arrays more than `limit` deep (a scalar is depth 0, `{}`
/// depth 1). Iterative, and stops at the first container past the limit.
fn nests_deeper_than(value: &Value, limit: usize) -> bool {
    let mut pending = vec![(value, 1)];
    while let Some((value, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        pending.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// Drops a value without recursing: `serde_json::Value`'s own drop recurses once per level,
/// which overflows the stack for a value thousands of levels deep. Containers are emptied
/// into a work list before they are dropped, so each drop is shallow.
pub(crate) fn drop_flat(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, child)| child)),
            _ => {}
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::violation::MAX_MESSAGE_BYTES;
    use super::*;

    fn quote_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "symbol": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["symbol"]
        })
    }

    #[test]
    fn every_violation_is_reported_with_its_pointer() -> Result<(), RegistryError> {
        let admission = Admission::compile("stock_quote", &quote_schema())?;
        let Err(ToolError::InvalidArguments { violations, .. }) = admission.check("stock_quote", &json!({"limit": 0}))
        else {
            panic!("expected invalid arguments");
        };
        let pointers: Vec<_> = violations.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(pointers.contains(&"") && pointers.contains(&"/limit"), "{pointers:?}");
        assert!(violations.iter().any(|v| v.message.contains("symbol")));
        Ok(())
    }

    #[test]
    fn an_optional_struct_is_explained_through_the_branch_that_matched() -> Result<(), RegistryError> {
        let schema = json!({
            "type": "object",
            "$defs": {"Options": {"type": "object", "properties": {"limit": {"type": ["integer", "null"]}}}},
            "properties": {"options": {"anyOf": [{"$ref": "#/$defs/Options"}, {"type": "null"}]}}
        });
        let admission = Admission::compile("t", &schema)?;
        let Err(ToolError::InvalidArguments { violations, .. }) =
            admission.check("t", &json!({"options": {"limit": "ten"}}))
        else {
            panic!("expected invalid arguments");
        };
        assert_eq!(
            violations,
            [Violation::quoting(
                "/options/limit",
                "\"ten\" is not of types \"null\", \"integer\"",
                "the value is not of types \"null\", \"integer\""
            )]
        );
        // A value that matches no branch's shape keeps the validator's own message.
        let Err(ToolError::InvalidArguments { violations, .. }) = admission.check("t", &json!({"options": 3})) else {
            panic!("expected invalid arguments");
        };
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].pointer, "/options");
        Ok(())
    }

    #[test]
    fn a_schema_that_is_not_an_object_schema_is_refused() {
        for bad in [json!(true), json!({"type": "string"}), json!({"properties": {}})] {
            assert!(matches!(Admission::compile("t", &bad), Err(RegistryError::InvalidSchema { .. })), "{bad}");
        }
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let violation = Violation::new("/x", "é".repeat(400));
        assert!(violation.message.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
        assert!(violation.message.ends_with('…'));
    }

    const SECRET: &str = "secret@example.com";

    #[test]
    fn summaries_and_display_never_quote_an_argument_value() -> Result<(), RegistryError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "age": {"type": "integer"},
                "kind": {"enum": ["a", "b"]},
                "code": {"type": "string", "pattern": "^[0-9]+$", "maxLength": 4},
                "fixed": {"const": "x"},
                "tags": {"type": "array", "uniqueItems": true, "maxItems": 1},
                "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
                "names": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
                "nested": {"type": "object", "properties": {"n": {"type": "number", "minimum": 5}}},
                "not_this": {"not": {"type": "string"}}
            },
            "required": ["must"]
        });
        let admission = Admission::compile("t", &schema)?;
        let args = json!({
            "age": SECRET, "kind": SECRET, "code": SECRET, "fixed": SECRET, "tags": [SECRET, SECRET],
            "either": SECRET, "names": {SECRET: 1}, "nested": {"n": SECRET}, "not_this": SECRET
        });
        let Err(error @ ToolError::InvalidArguments { .. }) = admission.check("t", &args) else {
            panic!("expected invalid arguments");
        };
        let ToolError::InvalidArguments { violations, .. } = &error else { unreachable!() };
        assert!(violations.len() >= 10, "{violations:?}");
        assert!(violations.iter().any(|v| v.message.contains(SECRET)), "the model may still read it");
        for violation in violations {
            assert!(!violation.summary.contains("secret"), "{violation:?}");
            assert!(!violation.to_string().contains("secret"), "{violation:?}");
        }
        let shown = error.to_string();
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("at `/age`: the value is not of type \"integer\""), "{shown}");
        assert!(shown.contains("\"must\" is a required property"), "{shown}");
        assert!(error.to_model_result().to_model_text().contains(SECRET));
        Ok(())
    }

    #[test]
    fn serde_refusals_keep_what_was_expected_not_the_value() {
        let cases = [
            (format!("invalid type: string \"{SECRET}\", expected u32"), "invalid type, expected u32"),
            (
                format!("invalid value: string \"{SECRET}, expected x\", expected a date"),
                "invalid value, expected a date",
            ),
            (format!("unknown variant `{SECRET}`, expected `a` or `b`"), "unknown variant, expected `a` or `b`"),
            ("missing field `symbol`".to_owned(), "missing field `symbol`"),
            (format!("{SECRET} is odd"), "the arguments do not fit the tool's parameter types"),
        ];
        for (message, summary) in cases {
            let violation = Violation::from_serde(message.clone());
            assert_eq!((violation.message.as_str(), violation.summary.as_str()), (message.as_str(), summary));
        }
    }

    /// `{"a": {"a": ... 1 ...}}`, `depth` objects deep, built without recursion (`json!` with
    /// a value inside serializes it, recursively).
    fn nested(depth: usize) -> Value {
        let mut value = json!(1);
        for _ in 0..depth {
            let mut object = serde_json::Map::new();
            object.insert("a".into(), value);
            value = Value::Object(object);
        }
        value
    }

    #[test]
    fn arguments_deeper_than_the_limit_are_refused_before_validation() -> Result<(), RegistryError> {
        let admission = Admission::compile("t", &json!({"type": "object"}))?;
        assert!(admission.check("t", &nested(MAX_ARGUMENT_DEPTH)).is_ok());
        let Err(ToolError::InvalidArguments { violations, .. }) = admission.check("t", &nested(MAX_ARGUMENT_DEPTH + 1))
        else {
            panic!("expected a refusal");
        };
        assert_eq!(violations.len(), 1);
        assert!(violations[0].message.contains("more than 64 levels deep"), "{violations:?}");
        assert!(!nests_deeper_than(&json!({"a": [1, {"b": []}]}), 4));
        assert!(nests_deeper_than(&json!({"a": [1, {"b": []}]}), 3));
        // Taken apart without recursion: 100,000 levels would overflow `Value`'s own drop.
        drop_flat(nested(100_000));
        Ok(())
    }
}
