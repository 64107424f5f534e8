//! A streamed Messages answer: Anthropic's events read into text deltas and `tool_use` calls.
//!
//! `message_start` opens the message with its input usage; each content block has a
//! `content_block_start`, `content_block_delta`s (`text_delta`, or `input_json_delta` pieces of
//! a `tool_use` block's input) and a `content_block_stop`; `message_delta` carries the
//! cumulative output usage; `message_stop` ends the message. `ping` keeps the connection
//! alive; `error` (such as `overloaded_error`) is the provider's error. A tool search Anthropic
//! runs itself streams as a `server_tool_use` block (its input in `input_json_delta` pieces)
//! and a `tool_search_tool_result` block that comes whole (the "Streaming" section of the tool
//! search tool's documentation); both are kept for the next request. Other block and delta
//! types (thinking, citations) and unknown events are passed over, as Anthropic's versioning
//! policy asks of clients.
//!
//! `message_delta` also carries the `stop_reason`: a message that stopped with `pause_turn`
//! is continued by `pause.rs`, which sends the blocks read here (text, `tool_use`
//! and the tool search's blocks, rebuilt from their deltas) back as they came.

use std::collections::{BTreeMap, VecDeque};

use serde_json::Value;

use crate::model::{ModelError, StreamEvent, ToolCall, Usage};
use crate::providers::http::provider_error;
use crate::providers::sse::SseEvent;
use crate::providers::stream::{Assemble, interrupted};
use crate::providers::usage::anthropic_usage;

/// The message so far.
#[derive(Debug, Default)]
pub(crate) struct MessageEvents {
    content: String,
    calls: Vec<Partial>,
    /// Content block index → its call's position, for `tool_use` blocks.
    blocks: BTreeMap<u64, usize>,
    /// The message's blocks (text, `tool_use` and the searches Anthropic ran) by content
    /// block index, each with its text or input as streamed so far.
    raw: BTreeMap<u64, (Value, String)>,
    usage: Option<Usage>,
    /// `message_delta`'s `stop_reason`.
    stop_reason: Option<String>,
    stopped: bool,
}

/// One streamed message read whole: its answer, and what a continuation needs.
#[derive(Debug)]
pub(crate) struct Segment {
    /// Its text, as streamed.
    pub(crate) content: String,
    /// Its `tool_use` calls.
    pub(crate) calls: Vec<ToolCall>,
    /// Its usage, as the stream reported it.
    pub(crate) usage: Option<Usage>,
    /// Its content blocks as they go back to the API, in order.
    pub(crate) blocks: Vec<Value>,
    /// Its `stop_reason`.
    pub(crate) stop_reason: Option<String>,
}

/// Whether a block is one of the tool search's own (`server_tool_use`, `tool_search_tool_result`).
pub(crate) fn is_server_block(block: &Value) -> bool {
    matches!(block["type"].as_str(), Some("server_tool_use" | "tool_search_tool_result"))
}

/// One `tool_use` block being written.
#[derive(Debug)]
struct Partial {
    id: String,
    name: String,
    input: String,
    /// Its `content_block_stop` was seen.
    closed: bool,
}

impl Assemble for MessageEvents {
    type Answer = Segment;

    fn read(&mut self, event: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|err| {
            let excerpt: String = event.data.chars().take(200).collect();
            ModelError::Transport(format!("the provider streamed an event that is not JSON ({err}): {excerpt}"))
        })?;
        let kind = data["type"].as_str().unwrap_or(&event.event);
        match kind {
            "message_start" => self.add_usage(&data["message"]["usage"], out),
            "content_block_start" => self.start_block(&data, out),
            "content_block_delta" => self.delta(&data, out),
            "content_block_stop" => self.stop_block(&data),
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_owned());
                }
                self.add_usage(&data["usage"], out);
            }
            "message_stop" => self.stopped = true,
            "error" => return Err(provider_error(error_status(&data["error"]["type"]), &event.data)),
            _ => {}
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.stopped
    }

    fn progress(&self) -> String {
        match self.calls.last() {
            Some(call) if !call.closed => format!("in tool call {} (`{}`)", self.calls.len(), call.name),
            _ if self.calls.is_empty() && self.content.is_empty() => "before the answer began".to_owned(),
            _ => "before the message's end".to_owned(),
        }
    }

    fn finish(self, reason: &str) -> Result<Segment, ModelError> {
        if !self.stopped || self.calls.iter().any(|call| !call.closed) {
            return Err(interrupted(self.progress(), reason));
        }
        let calls = self
            .calls
            .into_iter()
            .map(|call| ToolCall { id: call.id, name: call.name, arguments: call.input })
            .collect();
        let blocks = self.raw.into_values().map(|(block, streamed)| whole_block(block, &streamed)).collect();
        Ok(Segment { content: self.content, calls, usage: self.usage, blocks, stop_reason: self.stop_reason })
    }
}

impl MessageEvents {
    fn start_block(&mut self, data: &Value, out: &mut VecDeque<StreamEvent>) {
        let block = &data["content_block"];
        let at = data["index"].as_u64().unwrap_or(u64::MAX);
        if matches!(block["type"].as_str(), Some("text" | "tool_use")) || is_server_block(block) {
            self.raw.insert(at, (block.clone(), String::new()));
        }
        match block["type"].as_str() {
            Some("text") => {
                let text = block["text"].as_str().unwrap_or_default();
                if let Some((_, streamed)) = self.raw.get_mut(&at) {
                    streamed.push_str(text);
                }
                self.add_text(text, out);
            }
            Some("tool_use") => {
                let index = self.calls.len();
                let id = block["id"].as_str().unwrap_or_default().to_owned();
                let name = block["name"].as_str().unwrap_or_default().to_owned();
                // The input starts as `{}` and arrives in `input_json_delta` pieces.
                let input = match &block["input"] {
                    Value::Object(fields) if !fields.is_empty() => block["input"].to_string(),
                    _ => String::new(),
                };
                out.push_back(StreamEvent::ToolCallStarted { index, id: id.clone(), name: name.clone() });
                if !input.is_empty() {
                    out.push_back(StreamEvent::ToolCallDelta { index, arguments: input.clone() });
                }
                self.blocks.insert(at, index);
                self.calls.push(Partial { id, name, input, closed: false });
            }
            _ => {}
        }
    }

    fn delta(&mut self, data: &Value, out: &mut VecDeque<StreamEvent>) {
        let delta = &data["delta"];
        let block = data["index"].as_u64().unwrap_or(u64::MAX);
        let piece = delta["text"].as_str().or_else(|| delta["partial_json"].as_str()).unwrap_or_default();
        if matches!(delta["type"].as_str(), Some("text_delta" | "input_json_delta"))
            && let Some((_, streamed)) = self.raw.get_mut(&block)
        {
            streamed.push_str(piece);
        }
        match delta["type"].as_str() {
            Some("text_delta") => self.add_text(piece, out),
            Some("input_json_delta") => {
                let Some(&index) = self.blocks.get(&block) else { return };
                if piece.is_empty() {
                    return;
                }
                self.calls[index].input.push_str(piece);
                out.push_back(StreamEvent::ToolCallDelta { index, arguments: piece.to_owned() });
            }
            _ => {}
        }
    }

    /// Closes a block; a call's input becomes compact JSON, as the non-streamed answer gives
    /// it (`{}` when no piece came), or stays as written when it is not JSON.
    fn stop_block(&mut self, data: &Value) {
        let block = data["index"].as_u64().unwrap_or(u64::MAX);
        let Some(call) = self.blocks.get(&block).and_then(|&index| self.calls.get_mut(index)) else { return };
        call.closed = true;
        if call.input.trim().is_empty() {
            "{}".clone_into(&mut call.input);
        } else if let Ok(input) = serde_json::from_str::<Value>(&call.input) {
            call.input = input.to_string();
        }
    }

    fn add_text(&mut self, text: &str, out: &mut VecDeque<StreamEvent>) {
        if !text.is_empty() {
            self.content.push_str(text);
            out.push_back(StreamEvent::TextDelta(text.to_owned()));
        }
    }

    /// `message_start`'s usage, then `message_delta`'s cumulative counts over it.
    fn add_usage(&mut self, usage: &Value, out: &mut VecDeque<StreamEvent>) {
        if let Some(total) = anthropic_usage(usage, self.usage) {
            self.usage = Some(total);
            out.push_back(StreamEvent::Usage(total));
        }
    }
}

/// A streamed block whole, as the API sends it: a text block with its text, a `tool_use` or
/// `server_tool_use` block with its input (`{}` when none came or it is not JSON, for a
/// `tool_use`; the start's for a server block), a search result as it started.
fn whole_block(mut block: Value, streamed: &str) -> Value {
    match block["type"].as_str() {
        Some("text") => block["text"] = Value::String(streamed.to_owned()),
        Some(kind @ ("tool_use" | "server_tool_use")) => match serde_json::from_str::<Value>(streamed) {
            Ok(input) => block["input"] = input,
            Err(_) if kind == "tool_use" => block["input"] = Value::Object(serde_json::Map::new()),
            Err(_) => {}
        },
        _ => {}
    }
    block
}

/// The HTTP status Anthropic gives each error type (its errors page), for an error that
/// arrives in the stream after the 200.
fn error_status(kind: &Value) -> u16 {
    match kind.as_str().unwrap_or_default() {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    }
}
