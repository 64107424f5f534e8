//! What a tool may know about the call it serves: [`ToolContext`].

use std::fmt;
use std::sync::Arc;

use super::state::{State, StateMap};

pub use tokio_util::sync::CancellationToken;

/// The per-call context a tool may take: the call id, a cancellation token, and host state.
///
/// It is never part of the tool's schema. A `#[tool]` fn receives it by declaring a parameter of
/// type `&ToolContext` (or `ToolContext`); a hand-written tool overrides
/// [`Tool::execute_with`](crate::Tool::execute_with).
///
/// Cloning is cheap: the state map is shared.
///
/// ```
/// use std::sync::Arc;
/// use tinytools::ToolContext;
///
/// struct Db { quotes: u32 }
///
/// let ctx = ToolContext::new("call_1").with_state(Db { quotes: 3 });
/// assert_eq!(ctx.call_id(), "call_1");
/// assert_eq!(ctx.state::<Db>().map(|db| db.quotes), Some(3));
/// assert!(ctx.state::<String>().is_none());
///
/// ctx.cancellation().cancel();
/// assert!(ctx.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct ToolContext {
    call_id: Arc<str>,
    cancellation: CancellationToken,
    state: StateMap,
}

impl ToolContext {
    /// A context for the call with this id, with no host state.
    pub fn new(call_id: impl Into<Arc<str>>) -> Self {
        Self { call_id: call_id.into(), ..Self::default() }
    }

    /// A context for a call made outside any run (tests, direct host calls): empty call id,
    /// no state, never cancelled.
    pub fn detached() -> Self {
        Self::default()
    }

    /// Adds host state, reachable by its type through [`state`](Self::state). A second value
    /// of the same type replaces the first.
    #[must_use]
    pub fn with_state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.with_shared_state(Arc::new(value))
    }

    /// Adds host state that is already shared.
    #[must_use]
    pub fn with_shared_state<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert_shared(value);
        self
    }

    /// This context with `base` under its own state: a registry's state, which the call's own
    /// (a run's per-call state) overrides type by type.
    #[must_use]
    pub(crate) fn over_state(&self, base: &StateMap) -> Self {
        Self { state: self.state.layered_over(base), ..self.clone() }
    }

    /// Uses this cancellation token (for example a child of the run's own).
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// The id of the call being served: the provider's tool-call id inside a run.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Host state of type `T`, if the host supplied one (as `T` or as `Arc<T>`).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.state.get_ref::<T>()
    }

    /// Host state of type `T` as the [`State`] extractor a `#[tool]` parameter receives.
    pub fn shared_state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.state.get::<T>().map(State)
    }

    /// The token a long-running tool should watch (`token.cancelled().await`).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("cancelled", &self.is_cancelled())
            .field("state_types", &self.state.len())
            .finish()
    }
}
