//! [`RunStream`]: a run as it happens — the model's text as it is written, and every
//! [`RunEvent`] in order — ending with the run's outcome.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::stream::{Stream, StreamExt};

use super::error::RunError;
use super::events::RunEvent;
use super::outcome::RunOutcome;
use crate::pump::Pump;

/// One item of a [`RunStream`], in the order it happened.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RunStreamItem {
    /// A piece of the model's text in this turn's answer, as it was written. The text of a
    /// turn that ends in calls, or that an aid answers with feedback, is shown too: the
    /// outcome's `answer` is what the run settled on.
    TextDelta {
        /// Which model call of the run (1-based, as in [`RunEvent::ModelCalled`]).
        turn: usize,
        /// The piece.
        text: String,
    },
    /// The model began writing a tool call. It runs only once the turn is complete and its
    /// gates admit it ([`RunEvent::ToolStarted`] then).
    ToolCallStarted {
        /// Which model call of the run (1-based).
        turn: usize,
        /// The call's position among the turn's calls (0-based).
        index: usize,
        /// The provider's id for the call.
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
    },
    /// A run event: the same events, in the same order, that the agent's
    /// [`EventSink`](super::EventSink) receives.
    Event(RunEvent),
}

/// A run as a stream of [`RunStreamItem`]s ([`Agent::stream`](super::Agent::stream)): the
/// same loop as [`Agent::run`](super::Agent::run), reporting as it goes. The run advances only
/// while the stream is polled; [`finish`](Self::finish) gives its outcome, and dropping the
/// stream abandons the run (a model call in flight is dropped, closing its connection).
///
/// ```
/// use std::sync::Arc;
/// use tinytools::model::{Message, ModelResponse};
/// use tinytools::run::{Agent, RunEvent, RunStreamItem};
/// use tinytools::testkit::ScriptedModel;
/// use tinytools::ToolRegistry;
///
/// let model = ScriptedModel::new([ModelResponse::text("ACME trades at 12.50.")]).streaming_in_pieces(6);
/// let agent = Agent::new(Arc::new(ToolRegistry::new()), Arc::new(model));
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let mut stream = agent.stream(vec![Message::user("What is ACME at?")]);
/// let mut shown = String::new();
/// while let Some(item) = stream.next().await {
///     match item {
///         RunStreamItem::TextDelta { text, .. } => shown.push_str(&text),
///         RunStreamItem::Event(RunEvent::ModelCalled { turn, .. }) => assert_eq!(turn, 1),
///         _ => {}
///     }
/// }
/// let outcome = stream.finish().await?;
/// assert_eq!((shown.as_str(), outcome.answer.as_str()), ("ACME trades at 12.50.", "ACME trades at 12.50."));
/// # Ok::<(), tinytools::run::RunError>(())
/// # }).unwrap();
/// ```
pub struct RunStream<'a> {
    pump: Pump<'a, RunStreamItem, Result<RunOutcome, RunError>>,
}

impl std::fmt::Debug for RunStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream").finish_non_exhaustive()
    }
}

impl<'a> RunStream<'a> {
    pub(super) fn new(pump: Pump<'a, RunStreamItem, Result<RunOutcome, RunError>>) -> Self {
        Self { pump }
    }

    /// The next item; `None` once the run has ended and every item was taken. (The same as
    /// [`StreamExt::next`], without importing it.)
    pub async fn next(&mut self) -> Option<RunStreamItem> {
        StreamExt::next(&mut self.pump).await
    }

    /// The run's outcome — the same [`run`](super::Agent::run) returns — running it to its
    /// end if it has not ended (the items not taken are dropped).
    ///
    /// # Errors
    /// As [`Agent::run`](super::Agent::run).
    pub async fn finish(self) -> Result<RunOutcome, RunError> {
        self.pump.into_output().await
    }
}

impl Stream for RunStream<'_> {
    type Item = RunStreamItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunStreamItem>> {
        Pin::new(&mut self.pump).poll_next(cx)
    }
}
