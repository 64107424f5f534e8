//! The tool vocabulary: the [`Tool`] trait and the facts a tool declares about itself.
//!
//! Most tools are written with the [`#[tool]`](macro@crate::tool) attribute on a plain
//! `async fn`, which implements [`TypedTool`]: typed arguments, output and error, facts in a
//! [`ToolSpec`]. A hand-written tool implements `TypedTool` too, and is a [`Tool`] through
//! one blanket impl. `Tool` itself, object-safe, is what the registry stores and what a tool
//! whose shape is only known at run time (an MCP import, a plugin) implements directly.

mod annotations;
mod context;
mod exposure;
mod grounding;
mod group;
mod naming;
mod refusal;
mod result;
mod signature;
mod spec;
mod state;
mod typed;

use serde_json::Value;

pub use annotations::ToolAnnotations;
pub use context::{CancellationToken, ToolContext};
pub use exposure::{ParseExposureError, ToolExposure};
pub use grounding::Grounding;
pub(crate) use grounding::{appears_in, grounded_values, spelled_in};
pub use group::ToolGroup;
pub use naming::{MAX_FAMILY_LEN, MAX_NAME_LEN, TOOL_SEARCH, check_family, check_tool_name};
pub use refusal::Refusal;
pub(crate) use refusal::refusal_answer;
pub use result::{ToolContent, ToolResult};
pub(crate) use signature::ordered_properties;
pub use signature::{argument_notes, type_signature};
pub use spec::ToolSpec;
pub use state::{RequiredState, State, StateMap};
pub use typed::{IntoToolResult, Json, TypedTool};

use crate::SchemaCompaction;

/// A tool the model can call.
///
/// Four methods describe the tool (`name`, `description`, `parameters_schema`, and `execute`
/// runs it); the rest are declarative facts with defaults: its [exposure](ToolExposure), its
/// family (a group name the discovery bridge indexes), its [side-effect
/// classification](ToolAnnotations) and its [schema budget](SchemaCompaction).
///
/// The spec's hand-written tool, which registers exactly like a `#[tool]`-made one:
///
/// ```
/// use tinytools::{Tool, ToolExposure, ToolRegistry, ToolResult};
///
/// struct StockQuote;
///
/// #[async_trait::async_trait]
/// impl Tool for StockQuote {
///     fn name(&self) -> &str { "stock_quote" }
///     fn description(&self) -> &str { "Fetch the latest price for a ticker symbol." }
///     fn parameters_schema(&self) -> serde_json::Value {
///         serde_json::json!({
///             "type": "object",
///             "properties": {"symbol": {"type": "string", "description": "Ticker, e.g. ACME."}},
///             "required": ["symbol"]
///         })
///     }
///     fn exposure(&self) -> ToolExposure { ToolExposure::Deferred }
///     async fn execute(&self, args: serde_json::Value) -> anyhow::Result<tinytools::ToolResult> {
///         Ok(ToolResult::text(format!("{} is at 12.50", args["symbol"].as_str().unwrap_or("?"))))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut registry = ToolRegistry::new();
/// registry.register(StockQuote)?;
/// assert!(registry.schemas().is_empty()); // Deferred: not in the tools array
/// let result = registry.dispatch("stock_quote", serde_json::json!({"symbol": "ACME"})).await?;
/// assert_eq!(result.to_model_text(), "ACME is at 12.50");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by: `^[A-Za-z0-9_-]{1,64}$`, unique in a registry.
    fn name(&self) -> &str;

    /// What the tool does, for the model. For Deferred tools the first sentence is what the
    /// `tool_search` manifest shows, so lead with it.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments object. Admission validates every call against it.
    fn parameters_schema(&self) -> Value;

    /// How the tool is exposed to the model. Default: [`ToolExposure::Direct`].
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    /// A group name (`"finance"`, an MCP server's name) that discovery indexes. Default: none.
    fn family(&self) -> Option<&str> {
        None
    }

    /// What calling the tool does to the world. Default: [`ToolAnnotations::UNCLASSIFIED`].
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::UNCLASSIFIED
    }

    /// This tool's own schema budget; overrides the run's default. Default: none.
    fn schema_compaction(&self) -> Option<SchemaCompaction> {
        None
    }

    /// The arguments whose values must come from the conversation, never from the model's
    /// imagination ([`Grounding`]); a `const` slice (`const G: &[Grounding] = &[...]`).
    /// Default: none.
    fn grounding(&self) -> &'static [Grounding] {
        &[]
    }

    /// The host state the tool reads ([`State`] parameters of a `#[tool]` fn): registering it
    /// in a registry that lacks one is an error, so no call finds its state missing.
    /// Default: none.
    fn required_state(&self) -> Vec<RequiredState> {
        Vec::new()
    }

    /// Whether the tool blocks its thread while it runs (CPU-bound work, a blocking client,
    /// `std::thread::sleep`). Default: `false`.
    ///
    /// A run calls an async tool as a task it owns: on the tool's timeout, on the run's
    /// cancellation and when the run itself is dropped, the task is aborted, its
    /// [cancellation token](ToolContext::cancellation) fires, and nothing of it runs after its
    /// next `.await`. A tool that says `true` is called on tokio's blocking pool instead, so
    /// it cannot stall the runtime's workers; the run still answers on time and its token
    /// still fires, but **a blocking tool cannot be stopped mid-way**: it runs to its end on
    /// its pool thread. Say `true` only when the tool truly blocks, and check the token
    /// between steps if it can stop early. `#[tool(blocking)]` sets it; a synchronous
    /// `#[tool]` fn already runs its body on the blocking pool and needs no flag.
    fn blocking(&self) -> bool {
        false
    }

    /// Runs the tool on arguments that already passed admission.
    ///
    /// `Ok` with [`ToolResult::error`], or `Err` holding a [`Refusal`], means "ran and
    /// refused": the model reads why. Any other `Err` means "could not run" (a dependency
    /// down, a bug): the host sees [`ToolError::Failed`](crate::ToolError::Failed) with the
    /// whole error, and the model a short failure note that holds none of it.
    async fn execute(&self, args: Value) -> anyhow::Result<ToolResult>;

    /// Runs the tool with the call's [`ToolContext`]. The registry always calls this one.
    ///
    /// The default ignores the context and calls [`execute`](Self::execute); override it
    /// when the tool needs the call id, cancellation or host state.
    async fn execute_with(&self, args: Value, ctx: &ToolContext) -> anyhow::Result<ToolResult> {
        let _ = ctx;
        self.execute(args).await
    }

    /// Runs the tool and sorts its answer by who reads it: the registry calls this one.
    ///
    /// The default calls [`execute_with`](Self::execute_with): an `Err` holding a
    /// [`Refusal`] becomes the error result the model reads, any other `Err` an
    /// [`InvokeError::Failed`] (the registry's [`ToolError::Failed`](crate::ToolError::Failed)).
    /// A [`TypedTool`] also reports arguments its `Args` type refuses, as
    /// [`InvokeError::Arguments`]. There is rarely a reason to override it.
    async fn invoke(&self, args: Value, ctx: &ToolContext) -> Result<ToolResult, InvokeError> {
        self.execute_with(args, ctx).await.or_else(refusal_answer).map_err(InvokeError::Failed)
    }
}

/// Why [`Tool::invoke`] has no answer for the model; the registry turns it into a
/// [`ToolError`](crate::ToolError) that names the tool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InvokeError {
    /// The arguments passed the schema, but the tool's own types refused them (serde's
    /// message): the registry's [`ToolError::InvalidArguments`](crate::ToolError::InvalidArguments).
    #[error("the arguments do not fit the tool's types: {0}")]
    Arguments(String),
    /// The tool could not run: the host reads this, the model only that the tool failed.
    #[error(transparent)]
    Failed(anyhow::Error),
}
