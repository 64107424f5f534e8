//! Anthropic's paused turns. With server tools (the hosted tool search), the API runs the
//! tools in a loop of its own and may stop a long turn before it ends, with
//! `stop_reason: "pause_turn"`; the client continues it by sending the assistant's content
//! back as it came, after the same request, and the answer goes on where it stopped. Both
//! `complete` and `stream` do so, up to a number of continuations, and hand the run one
//! answer: the text, calls and search blocks of every part, in order, the usage summed.
//!
//! Sources, as stored offline: "Server tools" (platform.claude.com/docs/en/agents-and-tools/
//! tool-use/server-tools), its section "The server-side loop and pause_turn" (the paused
//! response is passed back as-is in a subsequent request); "Stop reasons and fallback"
//! (`pause_turn`: a server-tool loop reached its iteration limit; send the assistant content
//! back to continue). Each part answers with its own blocks only, so the request of the next
//! part carries every block of the turn so far; a paused `server_tool_use` may still lack its
//! result, which a later part brings.

use futures_util::stream::StreamExt;
use serde_json::{Value, json};

use super::stream::{MessageEvents, Segment, is_server_block};
use super::wire::{searches, whole_turn};
use crate::model::{ModelError, ModelResponse, ModelStream, StreamEvent, ToolCall, Usage};
use crate::providers::stream::{Piece, interrupted, sse_pieces};
use crate::pump::{Outlet, Pump};

/// The continuations of one paused turn a client sends by default (LangChain's Anthropic
/// middleware stops at five too).
pub(super) const MAX_CONTINUATIONS: usize = 5;

/// The stop reason of a paused turn.
const PAUSE_TURN: &str = "pause_turn";

impl Segment {
    /// Whether the API paused the turn (`stop_reason: "pause_turn"`).
    pub(super) fn paused(&self) -> bool {
        self.stop_reason.as_deref() == Some(PAUSE_TURN)
    }
}

/// A turn read part by part: what the parts so far said.
#[derive(Debug, Default)]
pub(super) struct Turn {
    content: String,
    calls: Vec<ToolCall>,
    usage: Option<Usage>,
    /// Every block of the parts so far, as they go back to the API.
    blocks: Vec<Value>,
}

impl Turn {
    /// Adds a paused part.
    pub(super) fn add(&mut self, part: Segment) {
        self.content.push_str(&part.content);
        self.calls.extend(part.calls);
        self.usage = sum(self.usage, part.usage);
        self.blocks.extend(part.blocks);
    }

    /// The answer, with its last part: a search paused in one part is paired with the result
    /// a later part brought; the blocks of every part, in order, kept to go back unchanged
    /// when the run's view of the turn would not say them.
    pub(super) fn finish(mut self, last: Segment) -> ModelResponse {
        self.add(last);
        let provider_items = whole_turn(&self.blocks, &self.content, &self.calls);
        let server = self.blocks.into_iter().filter(is_server_block).collect();
        let (content, tool_calls, usage) = (self.content, self.calls, self.usage);
        ModelResponse { content, tool_calls, usage, searches: searches(server), provider_items }
    }

    /// The request continuing the turn: `base` with every block so far as its last,
    /// assistant, turn (added to it when `base` already ends with one). `base` itself before
    /// the first part.
    pub(super) fn request(&self, base: &Value) -> Value {
        let mut body = base.clone();
        if self.blocks.is_empty() {
            return body;
        }
        let Some(messages) = body["messages"].as_array_mut() else { return body };
        match messages.last_mut() {
            Some(last) if last["role"] == "assistant" && last["content"].is_array() => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(self.blocks.iter().cloned());
                }
            }
            _ => messages.push(json!({"role": "assistant", "content": self.blocks})),
        }
        body
    }

    /// A streamed part's event as the whole turn tells it: calls numbered after the earlier
    /// parts' calls, usage added to theirs.
    fn shift(&self, event: StreamEvent) -> StreamEvent {
        let before = self.calls.len();
        match event {
            StreamEvent::ToolCallStarted { index, id, name } => {
                StreamEvent::ToolCallStarted { index: index + before, id, name }
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                StreamEvent::ToolCallDelta { index: index + before, arguments }
            }
            StreamEvent::Usage(usage) => StreamEvent::Usage(sum(self.usage, Some(usage)).unwrap_or(usage)),
            other => other,
        }
    }
}

fn sum(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a += b;
            Some(a)
        }
        (a, b) => a.or(b),
    }
}

/// The error of a turn still paused after `limit` continuations.
pub(super) fn paused_too_long(limit: usize) -> ModelError {
    ModelError::TurnPaused { continuations: limit }
}

/// The streamed turn: each part streamed from `send(request)`, its events passed on as the
/// whole turn tells them, a paused part continued (at most `limit` times), then `Done` with
/// the whole answer.
pub(super) fn stream<'a, S, F>(base: Value, limit: usize, max_bytes: usize, send: S) -> ModelStream<'a>
where
    S: Fn(Value) -> F + Send + 'a,
    F: Future<Output = Result<reqwest::Response, ModelError>> + Send + 'a,
{
    let pump = Pump::new(move |outlet: Outlet<Result<StreamEvent, ModelError>>| async move {
        let mut turn = Turn::default();
        for _ in 0..=limit {
            let mut pieces = Box::pin(sse_pieces(send(turn.request(&base)), max_bytes, MessageEvents::default()));
            let part = loop {
                match pieces.next().await {
                    Some(Ok(Piece::Event(event))) => outlet.push(Ok(turn.shift(event))),
                    Some(Ok(Piece::Answer(part))) => break part,
                    Some(Err(error)) => return outlet.push(Err(error)),
                    None => return outlet.push(Err(interrupted("before the message's end".into(), "no answer"))),
                }
            };
            if !part.paused() {
                return outlet.push(Ok(StreamEvent::Done(turn.finish(part))));
            }
            turn.add(part);
        }
        outlet.push(Err(paused_too_long(limit)));
    });
    ModelStream::new(pump)
}
