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

use std::collections::{BTreeMap, VecDeque};

use serde_json::Value;

use super::anthropic_wire::searches;
use super::http::provider_error;
use super::sse::SseEvent;
use super::stream::{Assemble, interrupted};
use super::usage::anthropic_usage;
use crate::model::{ModelError, ModelResponse, StreamEvent, ToolCall, Usage};

/// The message so far.
#[derive(Debug, Default)]
pub(crate) struct MessageEvents {
    content: String,
    calls: Vec<Partial>,
    /// Content block index → its call's position, for `tool_use` blocks.
    blocks: BTreeMap<u64, usize>,
    /// The blocks of the searches Anthropic ran, by content block index, with a
    /// `server_tool_use` block's input as streamed so far.
    server: BTreeMap<u64, (Value, String)>,
    usage: Option<Usage>,
    stopped: bool,
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
            "message_delta" => self.add_usage(&data["usage"], out),
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

    fn finish(self, reason: &str) -> Result<ModelResponse, ModelError> {
        if !self.stopped || self.calls.iter().any(|call| !call.closed) {
            return Err(interrupted(self.progress(), reason));
        }
        let tool_calls = self
            .calls
            .into_iter()
            .map(|call| ToolCall { id: call.id, name: call.name, arguments: call.input })
            .collect();
        let server = self.server.into_values().map(|(block, _)| block).collect();
        Ok(ModelResponse { content: self.content, tool_calls, usage: self.usage, searches: searches(server) })
    }
}

impl MessageEvents {
    fn start_block(&mut self, data: &Value, out: &mut VecDeque<StreamEvent>) {
        let block = &data["content_block"];
        match block["type"].as_str() {
            Some("text") => self.add_text(block["text"].as_str().unwrap_or_default(), out),
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
                self.blocks.insert(data["index"].as_u64().unwrap_or(u64::MAX), index);
                self.calls.push(Partial { id, name, input, closed: false });
            }
            Some("server_tool_use" | "tool_search_tool_result") => {
                self.server.insert(data["index"].as_u64().unwrap_or(u64::MAX), (block.clone(), String::new()));
            }
            _ => {}
        }
    }

    fn delta(&mut self, data: &Value, out: &mut VecDeque<StreamEvent>) {
        let delta = &data["delta"];
        match delta["type"].as_str() {
            Some("text_delta") => self.add_text(delta["text"].as_str().unwrap_or_default(), out),
            Some("input_json_delta") => {
                let piece = delta["partial_json"].as_str().unwrap_or_default();
                let block = data["index"].as_u64().unwrap_or(u64::MAX);
                if let Some((_, input)) = self.server.get_mut(&block) {
                    input.push_str(piece);
                    return;
                }
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
        if let Some((server, input)) = self.server.get_mut(&block) {
            if let Ok(input) = serde_json::from_str::<Value>(input) {
                server["input"] = input;
            }
            return;
        }
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
