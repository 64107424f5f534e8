//! The library's errors: [`RegistryError`] for registration, [`ToolError`] for calls.

use super::violation::Violation;
use crate::ToolResult;

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Another tool already has this name.
    #[error("a tool named `{name}` is already registered; tool names must be unique, so rename one of them")]
    DuplicateName {
        /// The contested name.
        name: String,
    },
    /// The name breaks the provider rule `^[A-Za-z0-9_-]{1,64}$`.
    #[error("`{name}` cannot be a tool name: {reason}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The family breaks the family rule.
    #[error("tool `{tool}` has family `{family}`, which is not valid: {reason}")]
    InvalidFamily {
        /// The tool.
        tool: String,
        /// The rejected family.
        family: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The tool reads host state ([`State<T>`](crate::State)) the registry does not have.
    #[error(
        "tool `{tool}` takes `State<{type_name}>`, but the registry has no `{type_name}`: add it with `ToolRegistry::with_state(..)` (or `insert_state`) before registering the tool"
    )]
    MissingState {
        /// The tool.
        tool: String,
        /// The state type it needs.
        type_name: &'static str,
    },
    /// The parameters schema is not a usable JSON Schema for an arguments object.
    #[error("tool `{tool}` has a parameters schema that cannot be used: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong with the schema.
        reason: String,
    },
    /// A [`Grounding`](crate::Grounding) names an argument the parameters schema does not have.
    #[error(
        "tool `{tool}` declares the argument `{argument}` grounded, but its parameters schema has no property `{argument}`: name the argument as the schema spells it"
    )]
    UnknownGroundedArgument {
        /// The tool.
        tool: String,
        /// The argument named.
        argument: &'static str,
    },
}

/// Why a call did not produce a [`ToolResult`].
///
/// Every variant has a clear answer for the model: [`ToolError::to_model_result`]. A tool that
/// ran and refused is not an error here: it is an `Ok` result with `is_error` set.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool of that name is registered.
    #[error("no tool named `{name}` is registered")]
    UnknownTool {
        /// The name that was asked for.
        name: String,
    },
    /// The arguments were not JSON at all.
    #[error("the arguments for `{tool}` are not valid JSON ({message}); send one JSON object")]
    MalformedArguments {
        /// The tool.
        tool: String,
        /// What the JSON parser said.
        message: String,
    },
    /// The arguments broke the tool's declared schema. Lists every violation.
    ///
    /// `Display` names each violation by its pointer and [`summary`](Violation::summary),
    /// never an argument value (they can be personal data, and this is what host events and
    /// logs carry); [`to_model_result`](Self::to_model_result) gives the model the fuller
    /// [`message`](Violation::message).
    #[error("the arguments for `{tool}` do not match its schema: {}", Violation::join(violations))]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Every violation, each with its JSON pointer.
        violations: Vec<Violation>,
    },
    /// The tool could not run: it returned `Err`.
    #[error("tool `{tool}` could not run: {source:#}")]
    Failed {
        /// The tool.
        tool: String,
        /// What went wrong.
        #[source]
        source: anyhow::Error,
    },
    /// The call ran past `RunPolicy::tool_timeout` and was abandoned (its cancellation token
    /// fired first). A tool's own error that mentions a timeout is [`Failed`](Self::Failed),
    /// never this.
    #[error("tool `{tool}` did not finish within {} ms", after.as_millis())]
    TimedOut {
        /// The tool.
        tool: String,
        /// How long it was given.
        after: std::time::Duration,
    },
    /// The run was cancelled while the call was running; the call was abandoned.
    #[error("tool `{tool}` was cancelled with its run")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// The tool panicked. The panic was contained.
    #[error("tool `{tool}` panicked: {message}")]
    Panicked {
        /// The tool.
        tool: String,
        /// The panic payload, when it was a string.
        message: String,
    },
}

impl ToolError {
    /// The answer the model should read for this failure: an error [`ToolResult`] that says
    /// what was wrong and what to do about it.
    ///
    /// ```
    /// use tinytools::ToolError;
    ///
    /// let err = ToolError::MalformedArguments { tool: "stock_quote".into(), message: "EOF".into() };
    /// let answer = err.to_model_result();
    /// assert!(answer.is_error);
    /// assert!(answer.to_model_text().contains("not valid JSON"));
    /// ```
    pub fn to_model_result(&self) -> ToolResult {
        let text = match self {
            Self::UnknownTool { name } => format!("Unknown tool `{name}`."),
            Self::MalformedArguments { .. } => format!("{self}."),
            Self::InvalidArguments { tool, violations } => {
                let mut text = format!(
                    "The arguments for `{tool}` do not match its schema ({} problem{}). Fix every one and call it again:",
                    violations.len(),
                    if violations.len() == 1 { "" } else { "s" }
                );
                for violation in violations {
                    text.push_str("\n- ");
                    text.push_str(&violation.for_model());
                }
                text
            }
            // Internal detail stays with the host; the model learns that retrying the same call
            // will not help.
            Self::Failed { tool, .. } => {
                format!(
                    "Tool `{tool}` failed while running. Do not retry the same call; tell the user it is unavailable."
                )
            }
            // A timeout reads better than a generic failure: the model may retry with less work.
            Self::TimedOut { tool, after } => {
                format!(
                    "Tool `{tool}` did not finish in time ({} ms). Try a smaller request, or tell the user it is slow.",
                    after.as_millis()
                )
            }
            Self::Cancelled { tool } => format!("The run was cancelled before `{tool}` finished."),
            Self::Panicked { tool, .. } => {
                format!(
                    "Tool `{tool}` crashed while running. Do not retry the same call; tell the user it is unavailable."
                )
            }
        };
        ToolResult::error(text)
    }
}
