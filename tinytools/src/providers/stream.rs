//! A provider's answer streamed over server-sent events: the response body read within the
//! request's byte cap, decoded ([`super::sse`]), and handed to the provider's [`Assemble`],
//! which says what each event adds and builds the whole answer at the end.
//!
//! The stream ends with the answer only when the provider said it is complete; a body that
//! ends, fails or times out before that is [`ModelError::Interrupted`], so a call cut in the
//! middle never reaches the run. Dropping the stream drops the connection.
//!
//! [`sse_stream`] is a model's stream whose last event is the answer; [`sse_pieces`] gives
//! the assembler's own answer instead (Anthropic's, which says whether the turn paused).

use std::collections::VecDeque;
use std::future::Future;

use futures_util::stream::{self, Stream, StreamExt};

use super::http::transport_message;
use super::sse::{SseDecoder, SseEvent};
use crate::model::{ModelError, ModelResponse, ModelStream, StreamEvent};

/// How one provider reads its stream's events into an answer.
pub(crate) trait Assemble: Send {
    /// What the whole answer is read into (a [`ModelResponse`], or more).
    type Answer: Send;

    /// Reads one event, adding what it shows of the answer to `out`.
    ///
    /// # Errors
    /// What the provider reported in the stream (an error event), or a chunk it cannot read.
    fn read(&mut self, event: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError>;

    /// Whether the provider said the answer is complete (its closing event).
    fn complete(&self) -> bool;

    /// Where the answer stands, for an interruption's message: "in tool call 2 (`quote`)".
    fn progress(&self) -> String;

    /// The whole answer, once `complete` says so or the body stopped (`reason` says how).
    ///
    /// # Errors
    /// [`ModelError::Interrupted`] with `reason` when the answer is not whole.
    fn finish(self, reason: &str) -> Result<Self::Answer, ModelError>;
}

/// One piece of a stream read by [`sse_pieces`]: an event to show, or the whole answer (last).
pub(crate) enum Piece<T> {
    /// What the answer shows so far.
    Event(StreamEvent),
    /// The whole answer.
    Answer(T),
}

/// The stream of an answer whose assembler reads it into a [`ModelResponse`]: its events,
/// then [`StreamEvent::Done`].
pub(crate) fn sse_stream<'a, A: Assemble<Answer = ModelResponse> + 'a>(
    connect: impl Future<Output = Result<reqwest::Response, ModelError>> + Send + 'a,
    max_bytes: usize,
    assembler: A,
) -> ModelStream<'a> {
    ModelStream::new(sse_pieces(connect, max_bytes, assembler).map(|piece| {
        piece.map(|piece| match piece {
            Piece::Event(event) => event,
            Piece::Answer(response) => StreamEvent::Done(response),
        })
    }))
}

/// The pieces of an answer: `connect` sends the request (with its retries); its body is then
/// read event by event into `assembler`, whose answer is the last piece.
pub(crate) fn sse_pieces<'a, A: Assemble + 'a>(
    connect: impl Future<Output = Result<reqwest::Response, ModelError>> + Send + 'a,
    max_bytes: usize,
    assembler: A,
) -> impl Stream<Item = Result<Piece<A::Answer>, ModelError>> + Send + 'a {
    enum Phase<F, A> {
        Connect(F, A),
        Read(Box<Reading<A>>),
        End,
    }
    stream::unfold(Phase::Connect(connect, assembler), move |phase| async move {
        let mut reading = match phase {
            Phase::Connect(connect, assembler) => match connect.await.and_then(|r| Body::new(r, max_bytes)) {
                Ok(body) => Box::new(Reading { body, assembler: Some(assembler), pending: VecDeque::new() }),
                Err(error) => return Some((Err(error), Phase::End)),
            },
            Phase::Read(reading) => reading,
            Phase::End => return None,
        };
        match reading.next().await? {
            Ok(Piece::Answer(answer)) => Some((Ok(Piece::Answer(answer)), Phase::End)),
            Ok(event) => Some((Ok(event), Phase::Read(reading))),
            Err(error) => Some((Err(error), Phase::End)),
        }
    })
}

/// A stream being read.
struct Reading<A> {
    body: Body,
    /// `None` once the answer was handed over.
    assembler: Option<A>,
    pending: VecDeque<StreamEvent>,
}

impl<A: Assemble> Reading<A> {
    /// The next piece of the answer; `None` after the answer or an error.
    async fn next(&mut self) -> Option<Result<Piece<A::Answer>, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(Piece::Event(event)));
            }
            let assembler = self.assembler.as_mut()?;
            if assembler.complete() {
                return self.finish("");
            }
            let event = match self.body.next().await {
                Ok(Some(event)) => event,
                Ok(None) => return self.finish("the connection closed before the stream's last event"),
                // Cut or timed out: an answer already whole (its calls closed) still stands.
                Err(ModelError::Transport(reason)) => return self.finish(&reason),
                Err(error) => {
                    self.assembler = None;
                    return Some(Err(error));
                }
            };
            if let Err(error) = assembler.read(&event, &mut self.pending) {
                self.assembler = None;
                return Some(Err(error));
            }
        }
    }

    fn finish(&mut self, reason: &str) -> Option<Result<Piece<A::Answer>, ModelError>> {
        Some(self.assembler.take()?.finish(reason).map(Piece::Answer))
    }
}

/// A response body read as events, refused once it passes the byte cap.
struct Body {
    response: reqwest::Response,
    decoder: SseDecoder,
    events: VecDeque<SseEvent>,
    read: usize,
    max_bytes: usize,
    ended: bool,
}

impl Body {
    fn new(response: reqwest::Response, max_bytes: usize) -> Result<Self, ModelError> {
        if response.content_length().is_some_and(|declared| declared > max_bytes as u64) {
            return Err(ModelError::ResponseTooLarge { limit: max_bytes });
        }
        let decoder = SseDecoder::default();
        Ok(Self { response, decoder, events: VecDeque::new(), read: 0, max_bytes, ended: false })
    }

    /// The next event; `None` at the body's end. A transport failure mid-body is
    /// [`ModelError::Transport`] (the caller says where the answer was).
    async fn next(&mut self) -> Result<Option<SseEvent>, ModelError> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            match self.response.chunk().await.map_err(|err| ModelError::Transport(transport_message(&err)))? {
                Some(chunk) => {
                    self.read += chunk.len();
                    if self.read > self.max_bytes {
                        return Err(ModelError::ResponseTooLarge { limit: self.max_bytes });
                    }
                    self.decoder.feed(&chunk, &mut self.events);
                }
                None => self.ended = true,
            }
        }
    }
}

/// [`ModelError::Interrupted`]: the answer stopped `during` this, for this `reason`.
pub(crate) fn interrupted(during: String, reason: &str) -> ModelError {
    ModelError::Interrupted { during, reason: reason.to_owned() }
}
