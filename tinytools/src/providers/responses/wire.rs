//! The Responses API's wire format: a request's body (input items, function tools,
//! `namespace`s of deferred tools, `tool_search`) and an answer's output items.
//!
//! Shapes, from OpenAI's documentation (as stored offline): "Tool search"
//! (developers.openai.com/api/docs/guides/tools-tool-search): `{"type": "tool_search"}` hosted,
//! or with `"execution": "client"`, a `description` and `parameters`; `defer_loading: true` on
//! the functions inside a `{"type": "namespace", "name", "description", "tools"}` (fewer than
//! about ten functions a namespace, it advises); a hosted search answers with
//! `tool_search_call` (`execution: "server"`, `call_id: null`) and `tool_search_output` items, a
//! client one asks with `tool_search_call` (`execution: "client"`, a `call_id`, `arguments`)
//! and is answered with a `tool_search_output` echoing the `call_id` with the loaded `tools`;
//! a loaded function's `function_call` carries its `namespace`. The function tool's `strict`
//! defaults to `true` on this API (its reference), so tinytools sends `false`: the run's
//! schemas are not all strict-compatible. Usage: `input_tokens`,
//! `input_tokens_details.cached_tokens`, `output_tokens`.
//!
//! Reasoning items: a reasoning model's output holds `{"type": "reasoning", "id": "rs_…",
//! "summary": [...], "encrypted_content": "…"}` items before the items they led to. Nothing is
//! stored between requests (`store: false`), so, as the API reference's `include` parameter
//! describes (`reasoning.encrypted_content` "enables reasoning items to be used in multi-turn
//! conversations when using the Responses API statelessly"; asked only of reasoning models, the
//! others refuse it), and as OpenAI's cookbook "Better performance from reasoning models using
//! the Responses API" shows (it appends the whole `response.output` to the next input), an
//! output holding reasoning or a hosted search is kept whole ([`ProviderItems::turn`]) and
//! handed back in its order (`providers/turns.rs`). A turn written from the run's view instead
//! hands back the hosted searches' items ([`ProviderSearch::wire`], with the reasoning that led
//! to each) and the turn's other reasoning before its text and calls.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::discovery::search_answer_names;
use crate::model::{
    DeferredTool, Message, ModelError, ModelRequest, ModelResponse, NativeDeferral, NativeSearch, ProviderItems,
    ProviderSearch, ToolCall, aid_calls_as_notes,
};
use crate::providers::turns::{WholeTurns, same_arguments};
use crate::providers::usage::responses_usage;
use crate::tool::TOOL_SEARCH;

/// Who writes the items of [`ProviderItems`] this wire hands back.
pub(super) const RESPONSES: &str = "openai:responses";

/// How the searches OpenAI ran are named ([`ProviderSearch::ranker`]): only those go back here.
const OPENAI_SEARCH: &str = "openai:";

/// The deferred tools grouped for the wire: a family's tools in a `namespace` of that name (a
/// family over the limit is split into `family`, `family_2`, …), tools without a family as
/// deferred functions of their own.
pub(super) struct Namespaces<'a> {
    /// `(namespace, description, tools)`, by family.
    groups: Vec<(String, String, Vec<&'a DeferredTool>)>,
    bare: Vec<&'a DeferredTool>,
    by_tool: HashMap<&'a str, usize>,
}

impl<'a> Namespaces<'a> {
    pub(super) fn of(native: &'a NativeDeferral, limit: usize) -> Self {
        let mut families: BTreeMap<&str, Vec<&DeferredTool>> = BTreeMap::new();
        let mut bare = Vec::new();
        for tool in &native.tools {
            match tool.family.as_deref() {
                Some(family) => families.entry(family).or_default().push(tool),
                None => bare.push(tool),
            }
        }
        let mut groups = Vec::new();
        let mut by_tool = HashMap::new();
        for (family, tools) in families {
            let parts: Vec<&[&DeferredTool]> = tools.chunks(limit.max(1)).collect();
            for (part, chunk) in parts.iter().enumerate() {
                let base = namespace_name(family);
                let name = if part == 0 { base } else { format!("{base}_{}", part + 1) };
                let names: Vec<&str> = chunk.iter().map(|tool| tool.schema.name.as_str()).collect();
                let description = format!("Tools of the `{family}` family: {}.", names.join(", "));
                for tool in *chunk {
                    by_tool.insert(tool.schema.name.as_str(), groups.len());
                }
                groups.push((name, description, chunk.to_vec()));
            }
        }
        Self { groups, bare, by_tool }
    }

    /// The namespace a call of a deferred tool names: its family's namespace, or, for a tool of
    /// no family, its own name (as the API writes it: a deferred function outside any namespace
    /// is called with `"namespace": "<its name>"`).
    fn namespace(&self, tool: &str) -> Option<&str> {
        if let Some(&group) = self.by_tool.get(tool) {
            return Some(self.groups[group].0.as_str());
        }
        self.bare.iter().find(|bare| bare.schema.name == tool).map(|bare| bare.schema.name.as_str())
    }

    /// The declarations of `only` (every deferred tool when `None`): namespaces holding them,
    /// then the tools of no family.
    fn declarations(&self, only: Option<&[String]>) -> Vec<Value> {
        let wanted = |tool: &&&DeferredTool| only.is_none_or(|names| names.contains(&tool.schema.name));
        let mut out = Vec::new();
        for (name, description, tools) in &self.groups {
            let tools: Vec<Value> = tools.iter().filter(wanted).map(|tool| function(&tool.schema, true)).collect();
            if !tools.is_empty() {
                out.push(json!({"type": "namespace", "name": name, "description": description, "tools": tools}));
            }
        }
        out.extend(self.bare.iter().filter(wanted).map(|tool| function(&tool.schema, true)));
        out
    }
}

/// A family as a namespace name: the characters a function name may hold, the rest `_`.
fn namespace_name(family: &str) -> String {
    family.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

fn function(tool: &crate::ToolSchema, deferred: bool) -> Value {
    let mut function = json!({"type": "function", "name": tool.name, "description": tool.description, "parameters": tool.parameters, "strict": false});
    if deferred {
        function["defer_loading"] = json!(true);
    }
    function
}

/// The request's `tools`: its functions (the run's `tool_search` as the client-executed search
/// tool when the run answers the searches), then the deferred tools with `defer_loading`, then
/// the hosted `tool_search` when OpenAI searches.
pub(super) fn tools(request: &ModelRequest, namespaces: Option<&Namespaces<'_>>) -> Vec<Value> {
    let search = request.native_deferral.as_ref().map(|native| native.search);
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| match search {
            Some(NativeSearch::Client) if tool.name == TOOL_SEARCH => json!({
                "type": "tool_search", "execution": "client", "description": tool.description, "parameters": tool.parameters
            }),
            _ => function(tool, false),
        })
        .collect();
    if let Some(namespaces) = namespaces {
        tools.extend(namespaces.declarations(None));
    }
    if search == Some(NativeSearch::Provider) {
        tools.push(json!({"type": "tool_search"}));
    }
    tools
}

/// The request's `input` items. A turn kept whole goes back as its output came (see
/// `providers/turns.rs`); Anthropic's items never go. `stateless` (`store: false`): a reasoning
/// item without its encrypted content is left out, as the API keeps nothing to resolve it by.
pub(super) fn input(request: &ModelRequest, namespaces: Option<&Namespaces<'_>>, stateless: bool) -> Vec<Value> {
    let client_search = request.native_deferral.as_ref().is_some_and(|native| native.search == NativeSearch::Client);
    let messages = aid_calls_as_notes(&request.messages);
    let whole = WholeTurns::plan(&messages, RESPONSES, same_turn);
    let kept = |item: &&Value| !(stateless && item["type"] == "reasoning" && item["encrypted_content"].is_null());
    let mut items = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        if let Some(turn) = whole.items_at(at) {
            items.extend(turn.items.iter().filter(kept).cloned());
            continue;
        }
        if whole.skips(at) {
            continue;
        }
        match message {
            Message::System { content } => items.push(json!({"role": "system", "content": content})),
            Message::User { content } | Message::Feedback { content } => {
                items.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant { content, tool_calls } => {
                if !content.is_empty() {
                    items.push(json!({"role": "assistant", "content": content}));
                }
                items.extend(tool_calls.iter().map(|call| call_item(call, client_search, namespaces)));
            }
            Message::Tool { call_id, name, content, .. } if client_search && name == TOOL_SEARCH => {
                let found = search_answer_names(content);
                let tools = namespaces.map(|namespaces| namespaces.declarations(Some(&found))).unwrap_or_default();
                items.push(json!({"type": "tool_search_output", "call_id": call_id, "execution": "client", "status": "completed", "tools": tools}));
            }
            Message::Tool { call_id, content, .. } => {
                items.push(json!({"type": "function_call_output", "call_id": call_id, "output": content}));
            }
            Message::ProviderSearch(search) if search.ranker.starts_with(OPENAI_SEARCH) => {
                items.extend(search.wire.iter().filter(kept).cloned());
            }
            Message::ProviderItems(provider) if provider.is_from(RESPONSES) => {
                items.extend(unsearched_reasoning(provider).filter(kept).cloned());
            }
            // Another provider's searches and items (Anthropic's blocks): never sent here. An
            // aid's call is a note by now (`aid_calls_as_notes`).
            Message::ProviderSearch(_) | Message::ProviderItems(_) | Message::AidCall { .. } => {}
        }
    }
    items
}

/// The reasoning items of a turn written anew (its text and calls from the run's view): all
/// of them for items kept beside the turn; of a whole turn's output, those after its last
/// hosted search (the ones before went back in the searches' items).
fn unsearched_reasoning(provider: &ProviderItems) -> impl Iterator<Item = &Value> {
    let after = if provider.whole_turn {
        provider
            .items
            .iter()
            .rposition(|item| {
                matches!(item["type"].as_str(), Some("tool_search_call" | "tool_search_output"))
                    && item["execution"] != "client"
            })
            .map_or(0, |at| at + 1)
    } else {
        0
    };
    provider.items[after..].iter().filter(|item| !provider.whole_turn || item["type"] == "reasoning")
}

/// Whether a turn's output `items` still say the run's `content` and `calls`: the text of its
/// messages, its function calls and client-run searches, in order.
fn same_turn(items: &[Value], content: &str, calls: &[ToolCall]) -> bool {
    let mut text = String::new();
    let mut written = Vec::new();
    for item in items {
        match item["type"].as_str() {
            Some("message") => text.push_str(&message_text(item)),
            Some("function_call") => written.push((&item["call_id"], item["name"].as_str(), &item["arguments"])),
            Some("tool_search_call") if item["execution"] == "client" => {
                written.push((&item["call_id"], Some(TOOL_SEARCH), &item["arguments"]));
            }
            _ => {}
        }
    }
    text == content
        && written.len() == calls.len()
        && written.iter().zip(calls).all(|((id, name, arguments), call)| {
            *id == call.id.as_str() && *name == Some(call.name.as_str()) && same_arguments(&call.arguments, arguments)
        })
}

fn call_item(call: &ToolCall, client_search: bool, namespaces: Option<&Namespaces<'_>>) -> Value {
    if client_search && call.name == TOOL_SEARCH {
        let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
        return json!({"type": "tool_search_call", "call_id": call.id, "execution": "client", "status": "completed", "arguments": arguments});
    }
    let mut item = json!({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments});
    if let Some(namespace) = namespaces.and_then(|namespaces| namespaces.namespace(&call.name)) {
        item["namespace"] = json!(namespace);
    }
    item
}

/// Reads a response object (the body of a non-streamed answer, or a stream's closing event's
/// `response`).
pub(super) fn response(body: &Value) -> Result<ModelResponse, ModelError> {
    let Some(output) = body["output"].as_array() else {
        let excerpt: String = body.to_string().chars().take(300).collect();
        return Err(ModelError::Transport(format!("the response has no output: {excerpt}")));
    };
    let mut response = read_output(output);
    response.usage = responses_usage(&body["usage"]);
    Ok(response)
}

/// What an answer's output items hold: its text, its calls (a client-executed search is a
/// `tool_search` call the run answers), the searches OpenAI ran (each with the reasoning items
/// that led to it), and, when the output holds more than a message and calls in that order
/// (reasoning, a hosted search, a message after a call), the whole output in its order, to go
/// back as it came.
fn read_output(output: &[Value]) -> ModelResponse {
    let mut content = String::new();
    let mut calls = Vec::new();
    let mut searches: Vec<ProviderSearch> = Vec::new();
    let mut reasoning: Vec<Value> = Vec::new();
    for item in output {
        match item["type"].as_str() {
            Some("reasoning") => reasoning.push(item.clone()),
            Some("message") => content.push_str(&message_text(item)),
            Some("function_call") => calls.push(ToolCall {
                id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                name: item["name"].as_str().unwrap_or_default().to_owned(),
                arguments: arguments_text(&item["arguments"]),
            }),
            Some("tool_search_call") if item["execution"] == "client" => calls.push(ToolCall {
                id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                name: TOOL_SEARCH.to_owned(),
                arguments: arguments_text(&item["arguments"]),
            }),
            Some("tool_search_call") => {
                let query = search_query(&item["arguments"]);
                let mut wire = std::mem::take(&mut reasoning);
                wire.push(item.clone());
                searches.push(ProviderSearch::new("openai:tool_search", query, Vec::new()).with_wire(wire));
            }
            Some("tool_search_output") => {
                if let Some(search) = searches.last_mut() {
                    search.found.extend(loaded_tools(&item["tools"]));
                    search.wire.push(item.clone());
                }
            }
            _ => {}
        }
    }
    let provider_items = needs_whole_turn(output).then(|| ProviderItems::turn(RESPONSES, output.to_vec()));
    ModelResponse { content, tool_calls: calls, usage: None, searches, provider_items }
}

/// A `message` item's text (its refusals too).
fn message_text(item: &Value) -> String {
    let parts = item["content"].as_array().into_iter().flatten();
    parts.filter_map(|part| part["text"].as_str().or_else(|| part["refusal"].as_str())).collect()
}

/// Whether an output says more than the run's view of its turn (its text, then its calls)
/// would write back: an item of another kind, or a message after a call or beside another.
fn needs_whole_turn(output: &[Value]) -> bool {
    let mut messages = 0;
    let mut called = false;
    for item in output {
        match item["type"].as_str() {
            Some("message") if called || messages > 0 => return true,
            Some("message") => messages += 1,
            Some("function_call") => called = true,
            Some("tool_search_call") if item["execution"] == "client" => called = true,
            _ => return true,
        }
    }
    false
}

fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What a hosted search looked for: its `query`, or the namespace `paths` it loaded.
fn search_query(arguments: &Value) -> String {
    if let Some(query) = arguments["query"].as_str() {
        return query.to_owned();
    }
    match arguments["paths"].as_array() {
        Some(paths) => paths.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
        None => arguments.to_string(),
    }
}

/// The functions a `tool_search_output` loaded, namespaces opened.
fn loaded_tools(tools: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in tools.as_array().into_iter().flatten() {
        if tool["type"] == "namespace" {
            names.extend(loaded_tools(&tool["tools"]));
        } else if let Some(name) = tool["name"].as_str() {
            names.push(name.to_owned());
        }
    }
    names
}
