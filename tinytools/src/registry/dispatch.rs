//! The host's call path: look the tool up, admit the arguments, run it, contain a panic.

use serde_json::Value;

use super::ToolError;
use super::admission::drop_flat;
use super::{RegisteredTool, ToolRegistry, Violation};
use crate::tool::{InvokeError, StateMap};
use crate::unwind::CatchUnwind;
use crate::{ToolContext, ToolResult};

impl ToolRegistry {
    /// Calls a tool by name: the host path, which reaches every exposure, Hidden included.
    ///
    /// The arguments are validated against the tool's declared schema first; every violation
    /// comes back at once in [`ToolError::InvalidArguments`]. A panic inside the tool is
    /// contained and reported as [`ToolError::Panicked`].
    ///
    /// ```
    /// use serde_json::json;
    /// use tinytools::{ToolError, ToolRegistry, tool};
    ///
    /// /// Add two integers.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut registry = ToolRegistry::new();
    /// registry.register(Add)?;
    ///
    /// let sum = registry.dispatch("add", json!({"a": 2, "b": 3})).await?;
    /// assert_eq!(sum.to_model_text(), "5");
    ///
    /// let err = registry.dispatch("add", json!({"a": "two"})).await.unwrap_err();
    /// let ToolError::InvalidArguments { violations, .. } = &err else { panic!("{err}") };
    /// assert_eq!(violations.len(), 2); // `a` has the wrong type and `b` is missing
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`ToolError`] when the tool is not registered, the arguments are invalid, or the tool
    /// failed or panicked. A tool that ran and refused is an `Ok` result with `is_error` set.
    pub async fn dispatch(&self, name: &str, args: Value) -> Result<ToolResult, ToolError> {
        self.dispatch_with(name, args, &ToolContext::detached()).await
    }

    /// [`dispatch`](Self::dispatch) with the call's context (id, cancellation, host state).
    ///
    /// # Errors
    /// As [`dispatch`](Self::dispatch).
    pub async fn dispatch_with(&self, name: &str, args: Value, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        self.admit_value(name, args)?.run(ctx).await
    }

    /// [`dispatch_with`](Self::dispatch_with) for arguments still in their wire form, as a
    /// provider sends them. An empty string means "no arguments" (`{}`), as several providers
    /// send for parameterless tools.
    ///
    /// # Errors
    /// [`ToolError::MalformedArguments`] when the text is not JSON; otherwise as
    /// [`dispatch`](Self::dispatch).
    pub async fn dispatch_raw(&self, name: &str, raw_args: &str, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        self.admit(name, raw_args)?.run(ctx).await
    }

    /// The first half of a call: finds the tool and admits its wire-form arguments, without
    /// running it. The agent loop announces a call only once it is admitted.
    ///
    /// ```
    /// use tinytools::{ToolContext, ToolRegistry, tool};
    ///
    /// /// Add two integers.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut registry = ToolRegistry::new();
    /// registry.register(Add)?;
    /// assert!(registry.admit("add", r#"{"a": 1}"#).is_err());
    /// let admitted = registry.admit("add", r#"{"a": 1, "b": 2}"#)?;
    /// assert_eq!(admitted.run(&ToolContext::detached()).await?.to_model_text(), "3");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`ToolError::UnknownTool`], [`ToolError::MalformedArguments`] or
    /// [`ToolError::InvalidArguments`].
    pub fn admit<'r>(&'r self, name: &str, raw_args: &str) -> Result<Admitted<'r>, ToolError> {
        // The name is checked before the JSON: an unknown tool is the answer that matters.
        let entry = self.entry(name)?;
        let args = if raw_args.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str(raw_args)
                .map_err(|err| ToolError::MalformedArguments { tool: name.to_owned(), message: err.to_string() })?
        };
        Self::admit_entry(entry, args, &self.state)
    }

    fn admit_value<'r>(&'r self, name: &str, args: Value) -> Result<Admitted<'r>, ToolError> {
        match self.entry(name) {
            Ok(entry) => Self::admit_entry(entry, args, &self.state),
            Err(error) => {
                drop_flat(args);
                Err(error)
            }
        }
    }

    fn entry(&self, name: &str) -> Result<&RegisteredTool, ToolError> {
        self.get(name).ok_or_else(|| ToolError::UnknownTool { name: name.to_owned() })
    }

    /// Admits arguments to a found tool. Refused arguments are dropped without recursion: a
    /// host's value may be deeper than the stack allows `Value`'s own drop to go.
    fn admit_entry<'r>(entry: &'r RegisteredTool, args: Value, state: &'r StateMap) -> Result<Admitted<'r>, ToolError> {
        match entry.admission.check(entry.name(), &args) {
            Ok(()) => Ok(Admitted { entry, args, state }),
            Err(error) => {
                drop_flat(args);
                Err(error)
            }
        }
    }
}

impl ToolRegistry {
    /// Runs a call admission has already accepted (`args` from [`Admitted::into_args`]), owning
    /// the registry: a `'static` future the agent loop can run off its own task, where its
    /// timeout and cancellation always win.
    pub(crate) async fn run_admitted(
        self: std::sync::Arc<Self>,
        name: String,
        args: Value,
        ctx: ToolContext,
    ) -> Result<ToolResult, ToolError> {
        let entry = self.entry(&name)?;
        Admitted { entry, args, state: &self.state }.run(&ctx).await
    }
}

/// A call whose tool exists and whose arguments passed admission; [`run`](Self::run) it.
#[derive(Debug)]
pub struct Admitted<'r> {
    entry: &'r RegisteredTool,
    args: Value,
    state: &'r StateMap,
}

impl Admitted<'_> {
    /// The admitted arguments, for [`ToolRegistry::run_admitted`].
    pub(crate) fn into_args(self) -> Value {
        self.args
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.entry.name()
    }

    /// Runs the tool. A panic is contained ([`ToolError::Panicked`]); an `Err` holding a
    /// [`Refusal`](crate::Refusal) is the tool's answer, an error result the model reads.
    ///
    /// # Errors
    /// [`ToolError::Failed`], [`ToolError::Panicked`], or [`ToolError::InvalidArguments`]
    /// when serde rejects what the schema allowed.
    pub async fn run(self, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let name = self.entry.name().to_owned();
        let ctx = ctx.over_state(self.state);
        match CatchUnwind(self.entry.tool.invoke(self.args, &ctx)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(InvokeError::Arguments(message))) => {
                Err(ToolError::InvalidArguments { tool: name, violations: vec![Violation::from_serde(message)] })
            }
            Ok(Err(InvokeError::Failed(source))) => Err(ToolError::Failed { tool: name, source }),
            Err(message) => {
                tracing::error!(tool = %name, %message, "tool panicked; the panic was contained");
                Err(ToolError::Panicked { tool: name, message })
            }
        }
    }
}
