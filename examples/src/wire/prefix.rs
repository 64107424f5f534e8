//! The prompt a provider caches, read from a request body, and how much of it the next request
//! keeps.
//!
//! A provider caches a request's prompt as a prefix: what the next request repeats byte for
//! byte from the start can be read from the cache, and everything after the first byte that
//! differs is computed again. The order is the providers' own: Anthropic renders tools, then
//! the system prompt, then the messages ("Prompt caching": the prefix hierarchy tools → system
//! → messages), and leaves deferred tools out of it ("Tool use with prompt caching": "Deferred
//! tools are not included in the system-prompt prefix"); OpenAI caches the request's tools,
//! then its input ("Prompt caching": tools and messages, in order), and loads found tools at the
//! end of the context ("Tool search": "All tools are loaded at the end of the model's context
//! window"). This model counts bytes of compact JSON; it is not either provider's tokenizer.

use serde_json::Value;

/// The cacheable prompt of an Anthropic Messages body: the tools that are not deferred, the
/// system prompt, the messages, each as compact JSON, one after another, without the
/// `cache_control` markers (a breakpoint marks where to cache; moving it to the latest
/// message each turn, as the documentation's multi-turn example does, still reads the
/// earlier prefix).
pub fn anthropic(body: &Value) -> String {
    let mut body = body.clone();
    unmark(&mut body);
    let tools = items(&body["tools"]).filter(|tool| tool["defer_loading"] != true);
    let system = std::iter::once(&body["system"]).filter(|system| !system.is_null());
    tools.chain(system).chain(items(&body["messages"])).map(Value::to_string).collect()
}

/// Removes every `cache_control` field.
fn unmark(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.remove("cache_control");
            fields.values_mut().for_each(unmark);
        }
        Value::Array(items) => items.iter_mut().for_each(unmark),
        _ => {}
    }
}

/// The cacheable prompt of a Responses body: its tools, then its input items, each as compact
/// JSON, one after another. Of a deferred function the model sees its name and description,
/// of a namespace its name and description ("Tool search": "tool search is mostly deferring
/// the parameter schema"); the functions a search loads come with the search's output, in
/// the input.
pub fn responses(body: &Value) -> String {
    let tools = items(&body["tools"]).map(|tool| {
        if tool["type"] == "namespace" || tool["defer_loading"] == true {
            serde_json::json!({"type": tool["type"], "name": tool["name"], "description": tool["description"]})
        } else {
            tool.clone()
        }
    });
    tools.chain(items(&body["input"]).cloned()).map(|item| item.to_string()).collect()
}

fn items(array: &Value) -> impl Iterator<Item = &Value> {
    array.as_array().into_iter().flatten()
}

/// How many leading bytes `a` and `b` share.
///
/// ```
/// assert_eq!(tinytools_examples::wire::prefix::common("[tools][sys][m1]", "[tools][sys][m1][m2]"), 16);
/// ```
pub fn common(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}
