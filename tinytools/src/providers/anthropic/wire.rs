//! The Messages API's wire format: a request's body (tools, native deferral, cache
//! breakpoints) and an answer's blocks (text, `tool_use`, the tool search's own blocks).
//!
//! Shapes, from Anthropic's documentation (as stored offline):
//! - "Tool search tool" (platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool):
//!   the search tools `{"type": "tool_search_tool_bm25_20251119", "name":
//!   "tool_search_tool_bm25"}` (and `_regex_`), `defer_loading: true` on deferred tools (at
//!   least one tool not deferred), the answer's `server_tool_use` and `tool_search_tool_result`
//!   blocks (`content.tool_references[].tool_name`), handed back unchanged on the next request;
//!   a client-run search answers with a `tool_result` whose content is `tool_reference`
//!   blocks. Generally available: no beta header (the page's `status: stable`; the beta-era
//!   `advanced-tool-use-2025-11-20` is gone from the SDKs' list of betas).
//! - "Server tools" ("The server-side loop and pause_turn") and "Handling tool calls": an
//!   assistant turn goes back as it came, its blocks unchanged and in their order; a turn kept
//!   whole ([`ProviderItems::turn`]) is sent so (`providers/turns.rs`).
//! - "Tool use with prompt caching": `cache_control: {"type": "ephemeral"}` on the last tool
//!   caches the tools before it; deferred tools are not in that prefix, and a tool with
//!   `defer_loading` must not carry `cache_control` (a 400).
//! - "Prompt caching": the prefix runs tools → system → messages; `system` as text blocks
//!   takes a breakpoint; at most four breakpoints a request (this writes three); a breakpoint
//!   on the conversation's last block, moved forward each turn, reads the earlier turns from
//!   the cache.

use serde_json::{Value, json};

use crate::discovery::search_answer_names;
use crate::model::{
    Message, ModelRequest, NativeDeferral, NativeSearch, ProviderItems, ProviderSearch, ToolCall, aid_calls_as_notes,
};
use crate::providers::turns::{WholeTurns, same_arguments};
use crate::tool::TOOL_SEARCH;

/// Who writes the turns of [`ProviderItems`] this wire hands back.
pub(super) const ANTHROPIC: &str = "anthropic:messages";

/// How the searches Anthropic ran are named ([`ProviderSearch::ranker`]): only those go back here.
const ANTHROPIC_SEARCH: &str = "anthropic:";

/// Which of Anthropic's tool search tools a natively deferred request carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnthropicToolSearch {
    /// `tool_search_tool_bm25_20251119`: the model searches in natural language.
    #[default]
    Bm25,
    /// `tool_search_tool_regex_20251119`: the model writes Python regular expressions.
    Regex,
}

impl AnthropicToolSearch {
    /// The tool's `type` and `name` on the wire.
    pub const fn wire(self) -> (&'static str, &'static str) {
        match self {
            Self::Bm25 => ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"),
            Self::Regex => ("tool_search_tool_regex_20251119", "tool_search_tool_regex"),
        }
    }
}

/// How a client writes its requests.
pub(super) struct Options<'a> {
    pub(super) model: &'a str,
    pub(super) max_tokens: u32,
    /// Cache breakpoints on the system prompt and the last tool that is not deferred.
    pub(super) caching: bool,
    pub(super) search: AnthropicToolSearch,
}

const EPHEMERAL: &str = "ephemeral";

/// The request body: system text apart, consecutive same-role turns merged (the API wants
/// them alternating), tool results as `tool_result` blocks of a user turn, a provider's
/// search blocks in the assistant turn they served. With caching, breakpoints on the last tool
/// that is not deferred, the system prompt, and the last block of the conversation (so each
/// request of a run reads the one before it from the cache: the documentation's multi-turn
/// pattern).
pub(super) fn body(request: &ModelRequest, options: &Options<'_>) -> Value {
    let native = request.native_deferral.as_ref();
    let messages = aid_calls_as_notes(&request.messages);
    let whole = WholeTurns::plan(&messages, ANTHROPIC, same_turn);
    let mut system = Vec::new();
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        if whole.skips(at) {
            continue;
        }
        let (role, blocks) = match (whole.items_at(at), message) {
            (Some(turn), _) => ("assistant", turn.items.clone()),
            (None, Message::System { content }) => {
                system.push(content.clone());
                continue;
            }
            (None, Message::User { content } | Message::Feedback { content }) => {
                ("user", vec![json!({"type": "text", "text": content})])
            }
            (None, Message::Assistant { content, tool_calls }) => ("assistant", assistant_blocks(content, tool_calls)),
            (None, Message::Tool { call_id, name, content, is_error }) => {
                let content = tool_result_content(name, content, native);
                let result =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error});
                ("user", vec![result])
            }
            (None, Message::ProviderSearch(search)) if search.ranker.starts_with(ANTHROPIC_SEARCH) => {
                ("assistant", search.wire.clone())
            }
            // Another provider's searches and items (OpenAI's): Anthropic reads none of them;
            // its own whole turn that no longer matches is written from the run's view. An
            // aid's call is a note by now (`aid_calls_as_notes`).
            (None, Message::ProviderSearch(_) | Message::ProviderItems(_) | Message::AidCall { .. }) => continue,
        };
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    if options.caching
        && let Some(last) = turns.last_mut().and_then(|(_, blocks)| blocks.last_mut())
        && last.is_object()
    {
        last["cache_control"] = json!({"type": EPHEMERAL});
    }
    let messages: Vec<Value> =
        turns.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect();
    let mut body = json!({"model": options.model, "max_tokens": options.max_tokens, "messages": messages});
    if !system.is_empty() {
        let text = system.join("\n\n");
        body["system"] = if options.caching {
            json!([{"type": "text", "text": text, "cache_control": {"type": EPHEMERAL}}])
        } else {
            json!(text)
        };
    }
    let tools = tools(request, options);
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    if let Some(output) = &request.output {
        body["output_config"] = crate::providers::output::anthropic_output_config(output);
    }
    body
}

/// A turn written from the run's view: its text, then its calls.
pub(super) fn assistant_blocks(content: &str, tool_calls: &[ToolCall]) -> Vec<Value> {
    let mut blocks = Vec::new();
    if !content.is_empty() {
        blocks.push(json!({"type": "text", "text": content}));
    }
    for call in tool_calls {
        let input: Value =
            serde_json::from_str(&call.arguments).ok().filter(Value::is_object).unwrap_or_else(|| json!({}));
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    blocks
}

/// Whether a turn's `blocks` still say the run's `content` and `calls`: the text of its text
/// blocks, and its `tool_use` blocks, in order.
fn same_turn(blocks: &[Value], content: &str, calls: &[ToolCall]) -> bool {
    let text: String = blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect();
    let uses: Vec<&Value> = blocks.iter().filter(|block| block["type"] == "tool_use").collect();
    text == content
        && uses.len() == calls.len()
        && uses.iter().zip(calls).all(|(used, call)| {
            used["id"] == call.id.as_str()
                && used["name"] == call.name.as_str()
                && same_arguments(&call.arguments, &used["input"])
        })
}

/// The whole turn to keep for `blocks` (every part's, in order), when the run's view of it
/// would write it back otherwise: search or thinking blocks, text after a call, fields the
/// view does not keep (a call's `caller`).
pub(super) fn whole_turn(blocks: &[Value], content: &str, calls: &[ToolCall]) -> Option<ProviderItems> {
    (blocks != assistant_blocks(content, calls).as_slice()).then(|| ProviderItems::turn(ANTHROPIC, blocks.to_vec()))
}

/// A tool result's content: the run's text, except the answer of a `tool_search` the run ran
/// for a natively deferred request, which is the `tool_reference` blocks of what it found
/// (the API expands them into the tools' definitions).
fn tool_result_content(name: &str, content: &str, native: Option<&NativeDeferral>) -> Value {
    let Some(native) = native.filter(|native| native.search == NativeSearch::Client && name == TOOL_SEARCH) else {
        return json!(content);
    };
    let references: Vec<Value> = search_answer_names(content)
        .into_iter()
        .filter(|found| native.get(found).is_some())
        .map(|found| json!({"type": "tool_reference", "tool_name": found}))
        .collect();
    if references.is_empty() { json!(content) } else { Value::Array(references) }
}

/// The tools array: for a natively deferred request searched by Anthropic, its search tool
/// first; the request's tools; a cache breakpoint on the last of these; then every deferred
/// tool with `defer_loading` (and never a breakpoint).
fn tools(request: &ModelRequest, options: &Options<'_>) -> Vec<Value> {
    let native = request.native_deferral.as_ref();
    let mut tools = Vec::new();
    if native.is_some_and(|native| native.search == NativeSearch::Provider) {
        let (kind, name) = options.search.wire();
        tools.push(json!({"type": kind, "name": name}));
    }
    for tool in &request.tools {
        tools.push(json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters}));
    }
    if options.caching
        && let Some(last) = tools.last_mut()
    {
        last["cache_control"] = json!({"type": EPHEMERAL});
    }
    for deferred in native.into_iter().flat_map(|native| &native.tools) {
        let tool = &deferred.schema;
        tools.push(json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters, "defer_loading": true}));
    }
    tools
}

/// What an answer's blocks hold: its text, its calls, and the searches Anthropic ran.
pub(super) fn read_blocks(blocks: &[Value]) -> (String, Vec<ToolCall>, Vec<ProviderSearch>) {
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    let mut server = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => content.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: block["id"].as_str().unwrap_or_default().to_owned(),
                name: block["name"].as_str().unwrap_or_default().to_owned(),
                arguments: block["input"].to_string(),
            }),
            Some("server_tool_use" | "tool_search_tool_result") => server.push(block.clone()),
            _ => {}
        }
    }
    (content, tool_calls, searches(server))
}

/// The tool searches among an answer's server blocks: each `server_tool_use` of a tool search
/// with the `tool_search_tool_result` that answers it (by `tool_use_id`), in order. A search
/// without its result (a paused turn) is kept with nothing found; blocks of other server tools
/// are not searches.
pub(super) fn searches(server: Vec<Value>) -> Vec<ProviderSearch> {
    let (uses, results): (Vec<Value>, Vec<Value>) =
        server.into_iter().partition(|block| block["type"] == "server_tool_use");
    uses.into_iter()
        .filter(|used| used["name"].as_str().is_some_and(|name| name.starts_with("tool_search_tool")))
        .map(|used| {
            let id = used["id"].as_str().unwrap_or_default().to_owned();
            let result = results.iter().find(|result| result["tool_use_id"] == id.as_str()).cloned();
            let found = result.as_ref().map(found_tools).unwrap_or_default();
            let input = &used["input"];
            let query = input["query"]
                .as_str()
                .or_else(|| input["pattern"].as_str())
                .map_or_else(|| input.to_string(), str::to_owned);
            let ranker = format!("anthropic:{}", used["name"].as_str().unwrap_or_default());
            let wire = std::iter::once(used.clone()).chain(result).collect();
            ProviderSearch::new(ranker, query, found).with_id(id).with_wire(wire)
        })
        .collect()
}

/// The tools a `tool_search_tool_result` loaded (none for a `tool_search_tool_result_error`).
fn found_tools(result: &Value) -> Vec<String> {
    let references = result["content"]["tool_references"].as_array().into_iter().flatten();
    references.filter_map(|reference| reference["tool_name"].as_str()).map(str::to_owned).collect()
}
