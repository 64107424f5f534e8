//! What `#[tool]` expansions call. Not public API: no stability promise.

use std::any::Any;
use std::fmt::Display;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::schema::schema_for;
use crate::{ToolResult, registry::ArgumentsRejected};
pub use {anyhow, async_trait::async_trait, schemars, serde, serde_json};

/// Reads the admitted arguments into the generated arguments struct.
pub fn parse_arguments<T: DeserializeOwned>(args: Value) -> anyhow::Result<T> {
    serde_json::from_value(args).map_err(|err| ArgumentsRejected(err.to_string()).into())
}

/// Turns a tool's return value into what the model reads.
///
/// A `ToolResult` passes through; `()` becomes the text `ok`; a value that serializes to a JSON
/// string (a `String`, a unit enum variant) is sent as text; anything else as JSON.
pub fn output<T: Serialize + 'static>(value: T) -> anyhow::Result<ToolResult> {
    let mut slot = Some(value);
    let any: &mut dyn Any = &mut slot;
    if let Some(result) = any.downcast_mut::<Option<ToolResult>>().and_then(Option::take) {
        return Ok(result);
    }
    if any.is::<Option<()>>() {
        return Ok(ToolResult::text("ok"));
    }
    let Some(value) = slot else {
        unreachable!("only a ToolResult is taken out of the slot");
    };
    match serde_json::to_value(&value) {
        Ok(Value::String(text)) => Ok(ToolResult::text(text)),
        Ok(json) => Ok(ToolResult::json(json)),
        Err(err) => Err(anyhow::anyhow!("the tool's output could not be serialized: {err}")),
    }
}

/// A tool's `Err(e)`: it ran and refused, and the model reads `e`.
pub fn refusal<E: Display>(error: E) -> anyhow::Result<ToolResult> {
    Ok(ToolResult::error(error.to_string()))
}

/// The bound every `#[tool]` parameter's type must meet.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a #[tool] parameter: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "this parameter's type is not `Deserialize + JsonSchema`",
    note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`",
    note = "for a foreign type, wrap it in a newtype of your own or use a type that has both (String, numbers, Vec, Option, ...)"
)]
pub trait ToolArgument {}

impl<T: DeserializeOwned + schemars::JsonSchema> ToolArgument for T {}

/// Compile-time check that a parameter's type is a [`ToolArgument`]; the expansion calls it
/// at each parameter type's span so the first error names the type and the fix.
pub const fn assert_argument<T: ToolArgument>() {}

/// Runs a synchronous `#[tool]` fn on Tokio's blocking pool, so that a fn that blocks (a file,
/// a database driver, a long computation) cannot stall the executor the run's other calls
/// share. Outside a Tokio runtime it runs inline. A panic in the fn is raised again here,
/// where the registry contains it like any tool panic. A call the run abandons (its timeout,
/// cancellation) leaves the fn to finish on its thread: a blocking fn cannot be interrupted.
pub async fn run_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(f).await {
            Ok(value) => value,
            Err(error) => match error.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(_) => std::panic::resume_unwind(Box::new("the blocking pool shut down before the tool finished")),
            },
        },
        Err(_) => f(),
    }
}
