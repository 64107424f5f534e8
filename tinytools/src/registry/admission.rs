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
        Self {
            pointer: pointer.into(),
            message,
        }
    }

    pub(crate) fn join(violations: &[Violation]) -> String {
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
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
        let invalid = |reason: String| RegistryError::InvalidSchema {
            tool: tool.to_owned(),
            reason,
        };
        let Some(root) = schema.as_object() else {
            return Err(invalid(format!(
                "it must be a JSON object, found `{}`",
                kind(schema)
            )));
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
        let validator = jsonschema::validator_for(schema)
            .map_err(|err| invalid(format!("it is not valid JSON Schema: {err}")))?;
        Ok(Self { validator })
    }

    /// Checks arguments; on failure lists every violation at once.
    pub(crate) fn check(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        if self.validator.is_valid(args) {
            return Ok(());
        }
        let violations = self
            .validator
            .iter_errors(args)
            .map(|err| Violation::new(err.instance_path().as_str(), err.to_string()))
            .collect();
        Err(ToolError::InvalidArguments {
            tool: tool.to_owned(),
            violations,
        })
    }
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
        let Err(ToolError::InvalidArguments { violations, .. }) =
            admission.check("stock_quote", &json!({"limit": 0}))
        else {
            panic!("expected invalid arguments");
        };
        let pointers: Vec<_> = violations.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(
            pointers.contains(&"") && pointers.contains(&"/limit"),
            "{pointers:?}"
        );
        assert!(violations.iter().any(|v| v.message.contains("symbol")));
        Ok(())
    }

    #[test]
    fn a_schema_that_is_not_an_object_schema_is_refused() {
        for bad in [
            json!(true),
            json!({"type": "string"}),
            json!({"properties": {}}),
        ] {
            assert!(
                matches!(
                    Admission::compile("t", &bad),
                    Err(RegistryError::InvalidSchema { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let violation = Violation::new("/x", "é".repeat(400));
        assert!(violation.message.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
        assert!(violation.message.ends_with('…'));
    }
}
