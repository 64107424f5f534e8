//! What `#[tool]` expansions call. Not public API: no stability promise.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ToolResult;
pub use crate::tool::RequiredState;
pub use {anyhow, schemars, serde, serde_json};

/// What a `#[tool]` fn returned, probed by the expansion to choose its conversion by type
/// (autoref dispatch: the most specific impl below wins, with no `Any` and no syntax
/// sniffing, so a `Result` behind a type alias is still a `Result`).
///
/// The expansion writes `(&Returned(&output)).tt_returned().split(output)`: a `Result` goes
/// through as it is; any other value becomes `Ok(value)`.
pub struct Returned<'a, T>(pub &'a T);

/// The probe's answer for a `Result`.
pub struct IsResult;
/// The probe's answer for any other value.
pub struct IsValue;

/// Matches `Returned<Result<T, E>>` on the first probe.
pub trait ReturnsResult {
    /// The tag that knows how to split it.
    fn tt_returned(&self) -> IsResult {
        IsResult
    }
}
impl<T, E> ReturnsResult for Returned<'_, Result<T, E>> {}

/// Matches any `Returned<T>` one autoref later.
pub trait ReturnsValue {
    /// The tag that knows how to split it.
    fn tt_returned(&self) -> IsValue {
        IsValue
    }
}
impl<T> ReturnsValue for &Returned<'_, T> {}

impl IsResult {
    /// A `Result` is the fn's own split.
    pub fn split<T, E>(self, returned: Result<T, E>) -> Result<T, E> {
        returned
    }
}

impl IsValue {
    /// A plain value is a success.
    pub fn split<T>(self, returned: T) -> Result<T, std::convert::Infallible> {
        Ok(returned)
    }
}

/// A tool's successful value, probed like [`Returned`]: a [`ToolResult`] passes through, `()`
/// reads `ok`, anything else is serialized.
pub struct Produced<'a, T>(pub &'a T);

/// The probe's answer for a [`ToolResult`].
pub struct IsToolResult;
/// The probe's answer for `()`.
pub struct IsUnit;
/// The probe's answer for any other value.
pub struct IsSerialized;

/// Matches `&&Produced<ToolResult>` first.
pub trait ProducesToolResult {
    /// The tag that converts it.
    fn tt_produced(&self) -> IsToolResult {
        IsToolResult
    }
}
impl ProducesToolResult for &&Produced<'_, ToolResult> {}

/// Matches `&Produced<()>` one deref later.
pub trait ProducesUnit {
    /// The tag that converts it.
    fn tt_produced(&self) -> IsUnit {
        IsUnit
    }
}
impl ProducesUnit for &Produced<'_, ()> {}

/// Matches any `Produced<T>` last.
pub trait ProducesValue {
    /// The tag that converts it.
    fn tt_produced(&self) -> IsSerialized {
        IsSerialized
    }
}
impl<T> ProducesValue for Produced<'_, T> {}

impl IsToolResult {
    /// A `ToolResult` is already what the model reads.
    pub fn output(self, value: ToolResult) -> anyhow::Result<ToolResult> {
        Ok(value)
    }
}

impl IsUnit {
    /// `()` reads `ok`.
    pub fn output(self, (): ()) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("ok"))
    }
}

impl IsSerialized {
    /// A value that serializes to a JSON string (a `String`, a unit enum variant) is sent as
    /// text; anything else as JSON.
    pub fn output<T: ToolOutput>(self, value: T) -> anyhow::Result<ToolResult> {
        match serde_json::to_value(&value) {
            Ok(Value::String(text)) => Ok(ToolResult::text(text)),
            Ok(json) => Ok(ToolResult::json(json)),
            Err(err) => Err(anyhow::anyhow!("the tool's output could not be serialized: {err}")),
        }
    }
}

/// The bound a `#[tool]` fn's successful value must meet.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a #[tool] output: it must implement `serde::Serialize`",
    label = "this output type is not `Serialize`",
    note = "derive it on your type: `#[derive(serde::Serialize)]`, or return a `tinytools::ToolResult` or `String`"
)]
pub trait ToolOutput: Serialize {}

impl<T: Serialize> ToolOutput for T {}

/// The bound a `#[tool]` fn's error type must meet: an error, so that it can be a failure the
/// host reads, or a [`Refusal`](crate::Refusal) the model reads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a #[tool] error: say who reads it",
    label = "the `Err` type of this #[tool] fn",
    note = "return `Err(tinytools::Refusal::new(..))` for a message the model reads (a bad symbol, a record not found)",
    note = "or an error type (`std::error::Error + Send + Sync + 'static`, `anyhow::Error`) for a failure only the host sees; the model reads that the tool failed"
)]
pub trait ToolFnError {
    /// The error, for the registry to sort: a `Refusal` inside is the model's, the rest the host's.
    fn into_tool_error(self) -> anyhow::Error;
}

impl<E: Into<anyhow::Error>> ToolFnError for E {
    fn into_tool_error(self) -> anyhow::Error {
        self.into()
    }
}

/// A tool's `Err(e)`, for the typed layer to sort: a [`Refusal`](crate::Refusal) (also inside
/// an `anyhow::Error`) is the error result the model reads; every other error is the host's.
pub fn tool_error<E: ToolFnError>(error: E) -> anyhow::Result<ToolResult> {
    Err(error.into_tool_error())
}

/// A `State<T>` parameter's value, from the call's context (which the registry fills).
pub fn state<T: Send + Sync + 'static>(ctx: &crate::ToolContext) -> anyhow::Result<crate::State<T>> {
    ctx.shared_state::<T>().ok_or_else(|| {
        anyhow::anyhow!(
            "this tool takes `State<{}>`, which its call did not carry: call it through a `ToolRegistry` that has the state (`ToolRegistry::with_state`)",
            std::any::type_name::<T>()
        )
    })
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

/// The binary framing (magic, version, FNV-1a checksum) the runtime's saved-vectors file
/// uses, shared with `tinytools-embed`'s static-model file so the two cannot drift.
#[cfg(feature = "embedding")]
pub mod frame {
    pub use crate::rank::embedding::frame::{Framing, Opened, Reader, fnv1a, put_str, write_atomically};
}
