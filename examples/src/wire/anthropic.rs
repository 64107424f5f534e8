//! Anthropic Messages answers as the API writes them, for replays.
//!
//! The shapes follow Anthropic's documentation as stored offline: the answer (`id`, `type`,
//! `role`, `model`, `content`, `stop_reason`, `usage` with `cache_creation_input_tokens` and
//! `cache_read_input_tokens`) from "Messages"; the `server_tool_use` block
//! (`srvtoolu_…`, `name` `tool_search_tool_bm25`, `input.query`) and the
//! `tool_search_tool_result` block (`content.type` `tool_search_tool_search_result`,
//! `tool_references` of `{"type": "tool_reference", "tool_name"}`) from the "Response format"
//! section of "Tool search tool"; the event stream (`message_start`, `content_block_start` /
//! `_delta` / `_stop`, `message_delta`, `message_stop`; a `server_tool_use` block's input in
//! `input_json_delta` pieces, a `tool_search_tool_result` block whole at its start) from
//! "Streaming Messages" and that page's "Streaming" section.

use serde_json::{Value, json};

/// The model the replays name.
pub const MODEL: &str = "claude-sonnet-4-5-20250929";

/// A whole answer of `content` blocks.
pub fn message(id: &str, content: Vec<Value>, usage: Value) -> Value {
    let stop_reason = if content.iter().any(|block| block["type"] == "tool_use") { "tool_use" } else { "end_turn" };
    json!({"id": id, "type": "message", "role": "assistant", "model": MODEL, "content": content,
           "stop_reason": stop_reason, "stop_sequence": null, "usage": usage})
}

/// A `text` block.
pub fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A `tool_use` block.
pub fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// Anthropic's own BM25 tool search: its `server_tool_use` block, then its result naming
/// `found`.
pub fn tool_search(id: &str, query: &str, found: &[&str]) -> [Value; 2] {
    let references: Vec<Value> =
        found.iter().map(|name| json!({"type": "tool_reference", "tool_name": name})).collect();
    [
        json!({"type": "server_tool_use", "id": id, "name": "tool_search_tool_bm25", "input": {"query": query}}),
        json!({"type": "tool_search_tool_result", "tool_use_id": id,
               "content": {"type": "tool_search_tool_search_result", "tool_references": references}}),
    ]
}

/// A `usage` object: uncached input, output, and the prompt cache's reads and writes.
pub fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Value {
    json!({"input_tokens": input, "output_tokens": output,
           "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write})
}

/// A whole answer as its event stream tells it: text in pieces of a few words, inputs in two
/// `input_json_delta` pieces, a `ping`, the output usage in `message_delta`.
pub fn events(message: &Value) -> Vec<String> {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    let mut events = vec![event("message_start", json!({"type": "message_start", "message": start}))];
    events.push(event("ping", json!({"type": "ping"})));
    for (index, block) in message["content"].as_array().into_iter().flatten().enumerate() {
        events.extend(block_events(index, block).into_iter().map(|(name, data)| event(name, data)));
    }
    let delta = json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
                       "usage": {"output_tokens": message["usage"]["output_tokens"]}});
    events.push(event("message_delta", delta));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    events
}

fn block_events(index: usize, block: &Value) -> Vec<(&'static str, Value)> {
    let start =
        |content_block: Value| json!({"type": "content_block_start", "index": index, "content_block": content_block});
    let delta =
        |delta: Value| ("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta}));
    let mut events = Vec::new();
    match block["type"].as_str() {
        Some("text") => {
            events.push(("content_block_start", start(json!({"type": "text", "text": ""}))));
            let text = block["text"].as_str().unwrap_or_default();
            let words: Vec<&str> = text.split_inclusive(' ').collect();
            for piece in words.chunks(3) {
                events.push(delta(json!({"type": "text_delta", "text": piece.concat()})));
            }
        }
        Some(kind @ ("tool_use" | "server_tool_use")) => {
            let mut opened = block.clone();
            opened["input"] = json!({});
            if kind == "server_tool_use" {
                opened.as_object_mut().map(|fields| fields.remove("input"));
            }
            events.push(("content_block_start", start(opened)));
            let input = block["input"].to_string();
            let middle = input.char_indices().map(|(at, _)| at).nth(input.chars().count() / 2).unwrap_or(0);
            for piece in [&input[..middle], &input[middle..]] {
                events.push(delta(json!({"type": "input_json_delta", "partial_json": piece})));
            }
        }
        _ => events.push(("content_block_start", start(block.clone()))),
    }
    events.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    events
}
