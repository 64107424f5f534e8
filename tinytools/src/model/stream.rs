//! A model's answer as it is written: [`StreamEvent`]s in a [`ModelStream`], ending with the
//! whole [`ModelResponse`].

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::stream::{self, Stream, StreamExt};

use super::{ModelError, ModelResponse, Usage};

/// One step of a model's answer as it is written ([`ChatModel::stream`](super::ChatModel::stream)).
///
/// A stream announces each call with `ToolCallStarted` before any of its argument deltas,
/// and ends with `Done`, which holds the whole answer exactly as
/// [`complete`](super::ChatModel::complete) would return it; a stream that fails ends with
/// an error instead, and nothing it began is an answer. The deltas are for showing progress:
/// `Done` is what counts (a prompt dialect, for one, takes call text out of the answer that
/// its deltas may have shown).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// The model began a tool call.
    ToolCallStarted {
        /// The call's position among the answer's calls (0-based).
        index: usize,
        /// The provider's id for the call (empty when it gives none).
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A piece of a call's arguments JSON (not valid JSON until the call is complete).
    ToolCallDelta {
        /// The call's position among the answer's calls, as in `ToolCallStarted`.
        index: usize,
        /// The piece.
        arguments: String,
    },
    /// Usage as the provider reported it so far (a later report replaces an earlier one).
    Usage(Usage),
    /// The answer is complete: the last event of the stream.
    Done(ModelResponse),
}

impl StreamEvent {
    /// A whole response as a stream tells it: its text as one delta, each call started with
    /// its arguments as one delta, its usage, then `Done`. What
    /// [`ChatModel::stream`](super::ChatModel::stream) yields for a model that does not stream.
    ///
    /// ```
    /// use tinytools::model::{ModelResponse, StreamEvent};
    ///
    /// let response = ModelResponse::text("ACME trades at 12.50.").with_usage(40, 8);
    /// let events = StreamEvent::replay(response.clone());
    /// assert_eq!(events[0], StreamEvent::TextDelta("ACME trades at 12.50.".into()));
    /// assert_eq!(events.last(), Some(&StreamEvent::Done(response)));
    /// ```
    pub fn replay(response: ModelResponse) -> Vec<Self> {
        let mut events = Vec::with_capacity(2 + 2 * response.tool_calls.len());
        if !response.content.is_empty() {
            events.push(Self::TextDelta(response.content.clone()));
        }
        for (index, call) in response.tool_calls.iter().enumerate() {
            events.push(Self::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() });
            if !call.arguments.is_empty() {
                events.push(Self::ToolCallDelta { index, arguments: call.arguments.clone() });
            }
        }
        if let Some(usage) = response.usage {
            events.push(Self::Usage(usage));
        }
        events.push(Self::Done(response));
        events
    }
}

/// The stream of one model call: [`StreamEvent`]s, ending with [`StreamEvent::Done`] or an
/// error. Dropping it abandons the call (a provider closes its connection).
///
/// ```
/// use tinytools::model::{ModelResponse, ModelStream, StreamEvent};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut stream = ModelStream::from_response(ModelResponse::text("hello"));
/// assert_eq!(stream.next().await.transpose().unwrap(), Some(StreamEvent::TextDelta("hello".into())));
/// let mut shown = String::new();
/// let response = ModelStream::from_response(ModelResponse::text("hello"))
///     .into_response_with(|event| if let StreamEvent::TextDelta(text) = event { shown.push_str(text) })
///     .await
///     .unwrap();
/// assert_eq!((shown.as_str(), response.content.as_str()), ("hello", "hello"));
/// # });
/// ```
pub struct ModelStream<'a> {
    inner: Pin<Box<dyn Stream<Item = Result<StreamEvent, ModelError>> + Send + 'a>>,
}

impl std::fmt::Debug for ModelStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelStream").finish_non_exhaustive()
    }
}

impl<'a> ModelStream<'a> {
    /// Wraps a stream of events (a model's own implementation of
    /// [`stream`](super::ChatModel::stream)).
    pub fn new(stream: impl Stream<Item = Result<StreamEvent, ModelError>> + Send + 'a) -> Self {
        Self { inner: Box::pin(stream) }
    }

    /// The stream of a response already complete ([`StreamEvent::replay`]).
    pub fn from_response(response: ModelResponse) -> Self {
        Self::new(stream::iter(StreamEvent::replay(response).into_iter().map(Ok)))
    }

    /// The next event; `None` after the last. (The same as [`StreamExt::next`], without
    /// importing it.)
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ModelError>> {
        StreamExt::next(&mut self.inner).await
    }

    /// Reads the stream to its end and returns the whole answer.
    ///
    /// # Errors
    /// The stream's error, or [`ModelError::Interrupted`] when it ends without
    /// [`StreamEvent::Done`].
    pub async fn into_response(self) -> Result<ModelResponse, ModelError> {
        self.into_response_with(|_| {}).await
    }

    /// [`into_response`](Self::into_response), showing `on_event` every event before `Done`.
    ///
    /// # Errors
    /// As [`into_response`](Self::into_response).
    pub async fn into_response_with(
        mut self,
        mut on_event: impl FnMut(&StreamEvent),
    ) -> Result<ModelResponse, ModelError> {
        while let Some(event) = self.next().await {
            match event? {
                StreamEvent::Done(response) => return Ok(response),
                other => on_event(&other),
            }
        }
        Err(ModelError::Interrupted {
            during: "before its last event".into(),
            reason: "the model's stream ended without its answer".into(),
        })
    }
}

impl Stream for ModelStream<'_> {
    type Item = Result<StreamEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}
