//! OpenAI Responses answers as the API writes them, for replays.
//!
//! The shapes follow OpenAI's documentation as stored offline: the response object (`id`,
//! `object: "response"`, `status`, `model`, `output`, `usage` with
//! `input_tokens_details.cached_tokens`) from the API reference; `message` items with
//! `output_text` parts and `function_call` items (`call_id`, `name`, `namespace`, `arguments`
//! as JSON text) from "Function calling"; the hosted search's `tool_search_call` (`execution:
//! "server"`, `call_id: null`, `arguments.paths`) and `tool_search_output` (the loaded
//! namespace with its functions) and the client search's `tool_search_call` (`execution:
//! "client"`, a `call_id`, the arguments the search tool's schema asks for) from "Tool search";
//! the event stream (`response.created`, `response.output_item.added`,
//! `response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.output_item.done`, `response.completed`) from "Streaming API responses".

use serde_json::{Value, json};

/// The model the replays name.
pub const MODEL: &str = "gpt-5.4";

/// A whole response of `output` items.
pub fn response(id: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({"id": id, "object": "response", "created_at": 1_767_225_600, "status": "completed", "model": MODEL,
           "output": output, "usage": usage})
}

/// An assistant `message` item.
pub fn message(id: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// A `function_call` item (`namespace` as the loaded tool's).
pub fn function_call(call_id: &str, name: &str, namespace: Option<&str>, arguments: &Value) -> Value {
    let mut item = json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": name,
                          "arguments": arguments.to_string(), "status": "completed"});
    if let Some(namespace) = namespace {
        item["namespace"] = json!(namespace);
    }
    item
}

/// A hosted search that loaded the functions `found` from the request's declarations: its
/// `tool_search_call` and `tool_search_output` items, the output holding each found function
/// inside the namespace it was declared in (as the hosted example of the documentation shows).
pub fn hosted_search(request: &Value, found: &[&str]) -> [Value; 2] {
    let mut paths = Vec::new();
    let mut loaded = Vec::new();
    for tool in request["tools"].as_array().into_iter().flatten() {
        if tool["type"] == "namespace" {
            let inside: Vec<Value> = tool["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|function| found.iter().any(|name| function["name"] == *name))
                .cloned()
                .collect();
            if !inside.is_empty() {
                paths.push(tool["name"].clone());
                let mut namespace = tool.clone();
                namespace["tools"] = Value::Array(inside);
                loaded.push(namespace);
            }
        } else if found.iter().any(|name| tool["name"] == *name) {
            paths.push(tool["name"].clone());
            loaded.push(tool.clone());
        }
    }
    [
        json!({"type": "tool_search_call", "execution": "server", "call_id": null, "status": "completed", "arguments": {"paths": paths}}),
        json!({"type": "tool_search_output", "execution": "server", "call_id": null, "status": "completed", "tools": loaded}),
    ]
}

/// The namespace the request declares `tool` in, if any.
pub fn namespace_of(request: &Value, tool: &str) -> Option<String> {
    request["tools"].as_array().into_iter().flatten().find_map(|entry| {
        let inside = entry["tools"].as_array().into_iter().flatten().any(|function| function["name"] == tool);
        (entry["type"] == "namespace" && inside).then(|| entry["name"].as_str().unwrap_or_default().to_owned())
    })
}

/// A client-executed search: the model asks, the application answers.
pub fn client_search(call_id: &str, query: &str) -> Value {
    json!({"type": "tool_search_call", "id": format!("tsc_{call_id}"), "execution": "client", "call_id": call_id,
           "status": "completed", "arguments": {"query": query}})
}

/// A `usage` object: input (the cached ones included), the cached share, output.
pub fn usage(input: u64, cached: u64, output: u64) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": output,
           "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input + output})
}

/// A whole response as its event stream tells it: each item added, its text or arguments in
/// pieces, done; then `response.completed` with the whole response.
pub fn events(response: &Value) -> Vec<String> {
    let event = |data: Value| format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or_default());
    let mut created = response.clone();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    created["usage"] = Value::Null;
    let mut events = vec![event(json!({"type": "response.created", "sequence_number": 0, "response": created}))];
    for (index, item) in response["output"].as_array().into_iter().flatten().enumerate() {
        let mut added = item.clone();
        match item["type"].as_str() {
            Some("message") => added["content"] = json!([]),
            Some("function_call") => added["arguments"] = json!(""),
            _ => {}
        }
        events.push(event(json!({"type": "response.output_item.added", "output_index": index, "item": added})));
        if item["type"] == "message" {
            let text = item["content"][0]["text"].as_str().unwrap_or_default();
            for piece in text.split_inclusive(' ') {
                events.push(event(
                    json!({"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                                         "content_index": 0, "delta": piece}),
                ));
            }
        }
        if item["type"] == "function_call" {
            let arguments = item["arguments"].as_str().unwrap_or_default();
            events.push(event(json!({"type": "response.function_call_arguments.delta", "item_id": item["id"],
                                     "output_index": index, "delta": arguments})));
        }
        events.push(event(json!({"type": "response.output_item.done", "output_index": index, "item": item})));
    }
    events.push(event(json!({"type": "response.completed", "response": response})));
    events
}
