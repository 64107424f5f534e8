//! A streamed Chat Completions answer: `chat.completion.chunk` events read into text deltas and
//! tool calls assembled by index, as OpenAI, OpenRouter and `llama-server` send them.
//!
//! A call's first fragment carries its `index`, `id` and name, later ones more of its
//! `arguments` under the same `index`; fragments of parallel calls may interleave. Usage comes
//! in the chunk after the one with the `finish_reason` (OpenAI, with
//! `stream_options.include_usage`), or on that chunk itself with `timings` beside it
//! (`llama-server`; older builds report only `timings`). The stream ends with `data: [DONE]`;
//! a body that ends after the `finish_reason` without it is complete too, one that ends before
//! is interrupted. A chunk holding an `error` object is the provider's error.

use std::collections::{BTreeMap, VecDeque};

use serde_json::Value;

use crate::model::{ModelError, ModelResponse, StreamEvent, ToolCall, Usage};
use crate::providers::http::provider_error;
use crate::providers::sse::SseEvent;
use crate::providers::stream::{Assemble, interrupted};
use crate::providers::usage::chat_usage;

/// The answer so far.
#[derive(Debug, Default)]
pub(crate) struct ChatChunks {
    content: String,
    /// Calls by the provider's index.
    calls: BTreeMap<u64, Partial>,
    usage: Option<Usage>,
    /// A choice's `finish_reason` was seen: every call is whole, and the answer stands even if
    /// the usage chunk or `[DONE]` never comes.
    finished: bool,
    /// `[DONE]` was seen.
    done: bool,
}

/// One call being written.
#[derive(Debug, Default)]
struct Partial {
    id: String,
    name: String,
    arguments: String,
    /// Its position in the answer's calls, once announced.
    announced: Option<usize>,
}

impl Assemble for ChatChunks {
    type Answer = ModelResponse;

    fn read(&mut self, event: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|err| {
            let excerpt: String = data.chars().take(200).collect();
            ModelError::Transport(format!("the provider streamed a chunk that is not JSON ({err}): {excerpt}"))
        })?;
        let error = chunk.get("error").filter(|error| !error.is_null());
        if let Some(error) = error.or((event.event == "error").then_some(&chunk)) {
            // llama-server's `code` is the HTTP status it would have answered; OpenAI's is a name.
            let status = error["code"].as_u64().and_then(|code| u16::try_from(code).ok());
            return Err(provider_error(status.filter(|s| *s >= 400).unwrap_or(500), data));
        }
        if let Some(choice) = chunk["choices"].get(0) {
            self.choice(choice, out);
        }
        if let Some(usage) = usage(&chunk) {
            self.usage = Some(usage);
            out.push_back(StreamEvent::Usage(usage));
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done
    }

    fn progress(&self) -> String {
        match self.calls.values().last() {
            Some(call) => format!("in tool call {} (`{}`)", self.calls.len(), call.name),
            None if self.content.is_empty() => "before the answer began".to_owned(),
            None => "in the answer's text".to_owned(),
        }
    }

    fn finish(self, reason: &str) -> Result<ModelResponse, ModelError> {
        if !self.done && !self.finished {
            return Err(interrupted(self.progress(), reason));
        }
        let tool_calls = self
            .calls
            .into_values()
            .enumerate()
            .map(|(i, call)| ToolCall {
                id: if call.id.is_empty() { format!("call_{i}") } else { call.id },
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        let (content, usage) = (self.content, self.usage);
        Ok(ModelResponse { content, tool_calls, usage, searches: Vec::new(), provider_items: None })
    }
}

impl ChatChunks {
    /// Reads the first choice's delta and finish reason.
    fn choice(&mut self, choice: &Value, out: &mut VecDeque<StreamEvent>) {
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str().filter(|text| !text.is_empty()) {
            self.content.push_str(text);
            out.push_back(StreamEvent::TextDelta(text.to_owned()));
        }
        for (position, fragment) in delta["tool_calls"].as_array().into_iter().flatten().enumerate() {
            let index = fragment["index"].as_u64().unwrap_or(position as u64);
            self.fragment(index, fragment, out);
        }
        if choice["finish_reason"].as_str().is_some() {
            self.finished = true;
        }
    }

    /// Adds one fragment to the call at `index`, announcing the call once its name is known.
    fn fragment(&mut self, index: u64, fragment: &Value, out: &mut VecDeque<StreamEvent>) {
        let announced = self.calls.values().filter(|call| call.announced.is_some()).count();
        let call = self.calls.entry(index).or_default();
        if call.id.is_empty()
            && let Some(id) = fragment["id"].as_str()
        {
            id.clone_into(&mut call.id);
        }
        let function = &fragment["function"];
        if call.name.is_empty()
            && let Some(name) = function["name"].as_str()
        {
            name.clone_into(&mut call.name);
        }
        if call.announced.is_none() && !call.name.is_empty() {
            call.announced = Some(announced);
            let (id, name) = (call.id.clone(), call.name.clone());
            out.push_back(StreamEvent::ToolCallStarted { index: announced, id, name });
        }
        let piece = match &function["arguments"] {
            Value::String(text) => text.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        if piece.is_empty() {
            return;
        }
        call.arguments.push_str(&piece);
        if let Some(index) = call.announced {
            out.push_back(StreamEvent::ToolCallDelta { index, arguments: piece });
        }
    }
}

/// A chunk's usage: its `usage` object (with the cached prompt tokens), else
/// `llama-server`'s `timings`.
fn usage(chunk: &Value) -> Option<Usage> {
    if let Some(usage) = chunk.get("usage").and_then(chat_usage) {
        return Some(usage);
    }
    let count = |object: &Value, key: &str| object.get(key).and_then(Value::as_u64).unwrap_or(0);
    let timings = chunk.get("timings").filter(|timings| timings.is_object())?;
    Some(Usage::new(count(timings, "prompt_n"), count(timings, "predicted_n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(chunks: &[&str]) -> (Vec<StreamEvent>, Result<ModelResponse, ModelError>) {
        let mut assembler = ChatChunks::default();
        let mut out = VecDeque::new();
        for data in chunks {
            let event = SseEvent { event: "message".into(), data: (*data).into() };
            if let Err(error) = assembler.read(&event, &mut out) {
                return (out.into(), Err(error));
            }
        }
        (out.into(), assembler.finish("the test's body ended"))
    }

    #[test]
    fn the_call_order_follows_the_index_and_ids_are_filled() {
        // Index 1's first fragment arrives before index 0's: calls are ordered by index.
        let (events, response) = read_all(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"b","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"a","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
        ]);
        let response = response.expect("complete");
        let names: Vec<_> = response.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str())).collect();
        assert_eq!(names, [("call_0", "a"), ("call_1", "b")]);
        assert!(matches!(&events[0], StreamEvent::ToolCallStarted { index: 0, name, .. } if name == "b"));
    }

    #[test]
    fn a_body_without_finish_reason_or_done_is_interrupted_and_says_where() {
        let (_, response) = read_all(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"stock_quote","arguments":"{\"sym"}}]}}]}"#,
        ]);
        let error = response.expect_err("cut");
        assert!(
            matches!(&error, ModelError::Interrupted { during, .. } if during == "in tool call 1 (`stock_quote`)"),
            "{error}"
        );
    }

    #[test]
    fn timings_stand_in_for_usage_only_when_usage_is_absent() {
        let (_, response) = read_all(&[
            r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}],"timings":{"prompt_n":12,"predicted_n":3}}"#,
        ]);
        assert_eq!(response.expect("complete").usage, Some(Usage::new(12, 3)));
    }
}
