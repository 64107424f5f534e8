//! Admission: every call's arguments are checked against the tool's canonical declared schema
//! (never a projected wire schema) before the tool sees them.

use std::fmt;

use serde_json::Value;

use crate::{RegistryError, ToolError};

/// The longest violation message kept; a huge offending value is cut, not echoed whole.
const MAX_MESSAGE_BYTES: usize = 300;

/// One way the arguments break the schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value (`/options/limit`); empty for the arguments object.
    pub pointer: String,
    /// What was expected, in the validator's words.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > MAX_MESSAGE_BYTES {
            let mut end = MAX_MESSAGE_BYTES;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        Self { pointer: pointer.into(), message }
    }

    pub(crate) fn join(violations: &[Violation]) -> String {
        violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "at the top level: {}", self.message)
        } else {
            write!(f, "at `{}`: {}", self.pointer, self.message)
        }
    }
}

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

    /// Checks arguments; on failure lists every violation at once.
    pub(crate) fn check(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
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
    out.push(Violation::new(path, error.to_string()));
}

/// Arguments that passed the schema but that serde still could not read into the tool's
/// parameter types. Raised by `#[tool]`-generated code; dispatch turns it into
/// [`ToolError::InvalidArguments`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ArgumentsRejected(pub(crate) String);

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
        assert_eq!(violations, [Violation::new("/options/limit", "\"ten\" is not of types \"null\", \"integer\"")]);
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
}
