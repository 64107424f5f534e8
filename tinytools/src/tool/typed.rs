//! [`TypedTool`]: a tool with typed arguments, output and error, which is a [`Tool`] through
//! one blanket impl.

use std::future::Future;

use async_trait::async_trait;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::SchemaCompaction;

use super::{
    Grounding, InvokeError, RequiredState, Tool, ToolAnnotations, ToolContext, ToolExposure, ToolResult, ToolSpec,
    refusal_answer,
};

/// A tool whose arguments, output and error are Rust types. `#[tool]` writes this impl for
/// a fn; write it by hand when a macro does not fit (a tool built from configuration, a
/// generic tool).
///
/// Every `TypedTool` is a [`Tool`] (one blanket impl), so it registers like any other. That
/// impl does, once for every typed tool, what a hand-written `Tool` does itself: the JSON
/// Schema from `Args` (schemars, with each field's doc comment), the arguments read into
/// `Args` (a mismatch the schema let through is
/// [`ToolError::InvalidArguments`](crate::ToolError::InvalidArguments), answered with the
/// tool's signature), the output turned into a [`ToolResult`] ([`IntoToolResult`]), and the
/// error sorted by who reads it: a [`Refusal`](crate::Refusal) is the model's, any other error
/// the host's ([`ToolError::Failed`](crate::ToolError::Failed)). Panics and timeouts are the
/// registry's, as for every tool.
///
/// ```
/// use tinytools::{Json, Refusal, ToolContext, ToolExposure, ToolRegistry, ToolSpec, TypedTool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct QuoteArgs {
///     /// Ticker symbol, such as ACME.
///     symbol: String,
/// }
///
/// #[derive(serde::Serialize)]
/// struct Quote { symbol: String, price: f64 }
///
/// struct StockQuote;
///
/// impl TypedTool for StockQuote {
///     type Args = QuoteArgs;
///     type Output = Json<Quote>;
///     type Error = Refusal;
///
///     fn spec(&self) -> &ToolSpec {
///         static SPEC: ToolSpec = ToolSpec::new("stock_quote", "Fetch the latest price for a ticker symbol.")
///             .with_exposure(ToolExposure::Deferred);
///         &SPEC
///     }
///
///     async fn call(&self, args: QuoteArgs, _: &ToolContext) -> Result<Json<Quote>, Refusal> {
///         match args.symbol.as_str() {
///             "ACME" => Ok(Json(Quote { symbol: args.symbol, price: 12.5 })),
///             other => Err(Refusal::new(format!("no listing for `{other}`: pass a ticker such as ACME"))),
///         }
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut registry = ToolRegistry::new();
/// registry.register(StockQuote)?;
/// let quote = registry.dispatch("stock_quote", serde_json::json!({"symbol": "ACME"})).await?;
/// assert_eq!(quote.to_model_text(), r#"{"price":12.5,"symbol":"ACME"}"#);
/// let refused = registry.dispatch("stock_quote", serde_json::json!({"symbol": "XYZ"})).await?;
/// assert!(refused.is_error && refused.to_model_text().starts_with("no listing for `XYZ`"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub trait TypedTool: Send + Sync {
    /// The arguments object; its JSON Schema is the tool's parameters schema.
    type Args: DeserializeOwned + schemars::JsonSchema + Send;
    /// What a call returns; see [`IntoToolResult`].
    type Output: IntoToolResult + Send;
    /// Why a call did not succeed: a [`Refusal`](crate::Refusal) (also inside an
    /// `anyhow::Error`) is what the model reads; any other error is a failure only the host
    /// sees.
    type Error: Into<anyhow::Error> + Send;

    /// The tool's facts: name, description, exposure, family, annotations, budget.
    fn spec(&self) -> &ToolSpec;

    /// The host state the tool reads (see [`Tool::required_state`]). Default: none.
    fn required_state(&self) -> Vec<RequiredState> {
        Vec::new()
    }

    /// Runs the tool on arguments that passed admission and read into `Args`.
    fn call(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        &self.spec().name
    }

    fn description(&self) -> &str {
        &self.spec().description
    }

    fn parameters_schema(&self) -> Value {
        crate::schema::schema_for::<T::Args>()
    }

    fn exposure(&self) -> ToolExposure {
        self.spec().exposure
    }

    fn family(&self) -> Option<&str> {
        self.spec().family.as_deref()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.spec().annotations
    }

    fn schema_compaction(&self) -> Option<SchemaCompaction> {
        self.spec().compaction
    }

    fn grounding(&self) -> &'static [Grounding] {
        self.spec().grounding
    }

    fn blocking(&self) -> bool {
        self.spec().blocking
    }

    fn required_state(&self) -> Vec<RequiredState> {
        TypedTool::required_state(self)
    }

    async fn execute(&self, args: Value) -> anyhow::Result<ToolResult> {
        self.execute_with(args, &ToolContext::detached()).await
    }

    async fn execute_with(&self, args: Value, ctx: &ToolContext) -> anyhow::Result<ToolResult> {
        self.invoke(args, ctx).await.map_err(|error| match error {
            InvokeError::Failed(source) => source,
            arguments => arguments.into(),
        })
    }

    async fn invoke(&self, args: Value, ctx: &ToolContext) -> Result<ToolResult, InvokeError> {
        let args: T::Args = serde_json::from_value(args).map_err(|error| InvokeError::Arguments(error.to_string()))?;
        let answer = match self.call(args, ctx).await {
            Ok(output) => output.into_tool_result(),
            Err(error) => refusal_answer(error.into()),
        };
        answer.map_err(InvokeError::Failed)
    }
}

/// What a [`TypedTool`] may return: a [`ToolResult`] as it is, `()` as `ok`, a `String` or
/// `&'static str` as text, a `serde_json::Value` as JSON, and any `Serialize` type wrapped
/// in [`Json`].
pub trait IntoToolResult {
    /// The result the model reads.
    ///
    /// # Errors
    /// When the value cannot be serialized: a failure of the tool, which the host reads.
    fn into_tool_result(self) -> anyhow::Result<ToolResult>;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> anyhow::Result<ToolResult> {
        Ok(self)
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("ok"))
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::json(self))
    }
}

/// A [`TypedTool`] output sent as JSON: any `Serialize` value (one that serializes to a
/// string is sent as text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> anyhow::Result<ToolResult> {
        match serde_json::to_value(&self.0) {
            Ok(Value::String(text)) => Ok(ToolResult::text(text)),
            Ok(json) => Ok(ToolResult::json(json)),
            Err(err) => Err(anyhow::anyhow!("the tool's output could not be serialized: {err}")),
        }
    }
}
