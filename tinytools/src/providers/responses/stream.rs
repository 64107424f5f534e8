//! A streamed Responses answer: text deltas and calls shown as they come, the whole answer
//! read from the closing event.
//!
//! `response.output_text.delta` carries a piece of text; `response.output_item.added` with a
//! `function_call` item (or a client-executed `tool_search_call`, the run's `tool_search`)
//! announces a call, and `response.function_call_arguments.delta` carries pieces of a
//! function's arguments (both by `output_index`). `response.completed` (or
//! `response.incomplete`, cut at the token limit) holds the whole response, read exactly as a
//! non-streamed answer is; `response.failed` and `error` are the provider's error. Other
//! events (`response.created`, `.in_progress`, `.output_item.done`, reasoning summaries) are
//! passed over. Event shapes as OpenAI's streaming reference describes them (and as the
//! Responses clients in the stored index replay them).

use std::collections::{BTreeMap, VecDeque};

use serde_json::Value;

use super::wire::response;
use crate::model::{ModelError, ModelResponse, StreamEvent};
use crate::providers::http::provider_error;
use crate::providers::sse::SseEvent;
use crate::providers::stream::{Assemble, interrupted};
use crate::tool::TOOL_SEARCH;

/// The answer so far.
#[derive(Debug, Default)]
pub(crate) struct ResponseEvents {
    /// `output_index` → the call's position and name, for `function_call` items.
    calls: BTreeMap<u64, (usize, String)>,
    text: bool,
    /// The closing event's response.
    done: Option<Value>,
}

impl Assemble for ResponseEvents {
    type Answer = ModelResponse;

    fn read(&mut self, event: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|err| {
            let excerpt: String = event.data.chars().take(200).collect();
            ModelError::Transport(format!("the provider streamed an event that is not JSON ({err}): {excerpt}"))
        })?;
        let index = data["output_index"].as_u64().unwrap_or(u64::MAX);
        match data["type"].as_str().unwrap_or(&event.event) {
            "response.output_text.delta" => {
                if let Some(piece) = data["delta"].as_str().filter(|piece| !piece.is_empty()) {
                    self.text = true;
                    out.push_back(StreamEvent::TextDelta(piece.to_owned()));
                }
            }
            "response.output_item.added" if is_call(&data["item"]) => {
                let item = &data["item"];
                let position = self.calls.len();
                let name = match item["type"].as_str() {
                    Some("function_call") => item["name"].as_str().unwrap_or_default().to_owned(),
                    _ => TOOL_SEARCH.to_owned(),
                };
                let id = item["call_id"].as_str().unwrap_or_default().to_owned();
                out.push_back(StreamEvent::ToolCallStarted { index: position, id, name: name.clone() });
                self.calls.insert(index, (position, name));
            }
            "response.function_call_arguments.delta" => {
                let piece = data["delta"].as_str().unwrap_or_default();
                if let Some((position, _)) = self.calls.get(&index).filter(|_| !piece.is_empty()) {
                    out.push_back(StreamEvent::ToolCallDelta { index: *position, arguments: piece.to_owned() });
                }
            }
            "response.completed" | "response.incomplete" => self.done = Some(data["response"].clone()),
            "response.failed" => return Err(failure(&data["response"]["error"], &event.data)),
            "error" => return Err(failure(&data, &event.data)),
            _ => {}
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done.is_some()
    }

    fn progress(&self) -> String {
        match self.calls.values().last() {
            Some((position, name)) => format!("in tool call {} (`{name}`)", position + 1),
            None if self.text => "in the answer's text".to_owned(),
            None => "before the answer began".to_owned(),
        }
    }

    fn finish(self, reason: &str) -> Result<ModelResponse, ModelError> {
        match &self.done {
            Some(done) => response(done),
            None => Err(interrupted(self.progress(), reason)),
        }
    }
}

/// Whether an output item is a call the run answers: a function's, or a client-executed
/// `tool_search_call` (the run's `tool_search`).
fn is_call(item: &Value) -> bool {
    item["type"] == "function_call" || item["type"] == "tool_search_call" && item["execution"] == "client"
}

/// A failure the stream reported: its `code` and `message` (`server_error`,
/// `rate_limit_exceeded`, …) as the provider's error.
fn failure(error: &Value, raw: &str) -> ModelError {
    let status = match error["code"].as_str().unwrap_or_default() {
        "rate_limit_exceeded" => 429,
        "invalid_prompt" | "invalid_request_error" => 400,
        "context_length_exceeded" => 400,
        _ => 500,
    };
    let body = serde_json::json!({"error": error});
    let text = if error.is_object() { body.to_string() } else { raw.to_owned() };
    provider_error(status, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(events: &[&str]) -> (Vec<StreamEvent>, Result<ModelResponse, ModelError>) {
        let mut assembler = ResponseEvents::default();
        let mut out = VecDeque::new();
        for data in events {
            let event = SseEvent { event: "message".into(), data: (*data).into() };
            if let Err(error) = assembler.read(&event, &mut out) {
                return (out.into(), Err(error));
            }
        }
        (out.into(), assembler.finish("the test's body ended"))
    }

    #[test]
    fn a_call_cut_before_the_closing_event_is_interrupted_and_says_where() {
        let (events, response) = read_all(&[
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"stock_quote","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"sym"}"#,
        ]);
        assert_eq!(events[1], StreamEvent::ToolCallDelta { index: 0, arguments: "{\"sym".into() });
        let error = response.expect_err("cut");
        assert!(
            matches!(&error, ModelError::Interrupted { during, .. } if during == "in tool call 1 (`stock_quote`)"),
            "{error}"
        );
    }

    #[test]
    fn a_failed_response_is_the_providers_error_and_a_client_search_is_announced() {
        let (_, response) = read_all(&[
            r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached"}}}"#,
        ]);
        let error = response.expect_err("failed");
        assert!(
            matches!(&error, ModelError::Provider { status: 429, message } if message == "Rate limit reached"),
            "{error}"
        );
        let (events, _) = read_all(&[
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"tool_search_call","execution":"client","call_id":"call_9","arguments":{}}}"#,
        ]);
        assert_eq!(events[0], StreamEvent::ToolCallStarted { index: 0, id: "call_9".into(), name: TOOL_SEARCH.into() });
    }
}
