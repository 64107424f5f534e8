//! [`Violation`]: one way a call's arguments break its tool's schema, in two wordings (one for
//! the model, one for logs).

use std::fmt;

/// The longest violation message kept; a huge offending value is cut, not echoed whole.
pub(super) const MAX_MESSAGE_BYTES: usize = 300;

/// One way the arguments break the schema.
///
/// Two descriptions: [`message`](Self::message), for the model, may quote the offending value
/// (`"ten" is not of type "integer"`), which helps it fix the call; [`summary`](Self::summary)
/// never does (`the value is not of type "integer"`), because argument values can be personal
/// data. `Display` shows the summary, so [`ToolError`](super::ToolError)'s `Display`, the run's events and logs
/// carry no argument value; [`ToolError::to_model_result`](super::ToolError::to_model_result) shows the message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violation {
    /// JSON pointer to the offending value (`/options/limit`); empty for the arguments object.
    pub pointer: String,
    /// What was expected, in the validator's words; may quote the offending value.
    pub message: String,
    /// What was expected, without any value from the arguments: the kind of problem, the
    /// schema's types, limits and property names.
    pub summary: String,
}

impl Violation {
    /// A violation whose message holds no value from the arguments: it is its own summary.
    pub(crate) fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        let message = cut(message.into());
        Self { pointer: pointer.into(), summary: message.clone(), message }
    }

    /// A violation whose message may quote argument values, with its value-free summary.
    pub(crate) fn quoting(pointer: impl Into<String>, message: impl Into<String>, summary: impl Into<String>) -> Self {
        Self { pointer: pointer.into(), message: cut(message.into()), summary: cut(summary.into()) }
    }

    /// Serde's refusal of arguments the schema admitted, e.g. `invalid type: string "x",
    /// expected u32`; the summary keeps the kind and what was expected, not the value.
    pub(crate) fn from_serde(message: String) -> Self {
        const KINDS: [&str; 5] =
            ["invalid type", "invalid value", "invalid length", "unknown variant", "unknown field"];
        let summary = if message.starts_with("missing field `") {
            // The field is the parameter type's own name.
            message.clone()
        } else {
            // What was expected comes last, after any value quoted.
            let expected = message.rfind(", expected ").map(|at| &message[at + 2..]);
            match (KINDS.iter().find(|kind| message.starts_with(**kind)), expected) {
                (Some(kind), Some(expected)) => format!("{kind}, {expected}"),
                (Some(kind), None) => (*kind).to_owned(),
                (None, _) => "the arguments do not fit the tool's parameter types".to_owned(),
            }
        };
        Self::quoting("", message, summary)
    }

    /// The summaries, `; `-separated: what [`ToolError`](super::ToolError)'s `Display` shows.
    pub(crate) fn join(violations: &[Violation]) -> String {
        violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    }

    /// The pointer and the message, which may quote the value: what the model reads.
    pub(crate) fn for_model(&self) -> String {
        Self::located(&self.pointer, &self.message)
    }

    fn located(pointer: &str, text: &str) -> String {
        if pointer.is_empty() { format!("at the top level: {text}") } else { format!("at `{pointer}`: {text}") }
    }
}

/// A message cut at [`MAX_MESSAGE_BYTES`], on a char boundary.
fn cut(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

/// The pointer and the summary: no argument value.
impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Self::located(&self.pointer, &self.summary))
    }
}
