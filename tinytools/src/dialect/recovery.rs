//! Recovering calls a model wrote as plain text, and repairing a misspelt tool name — only
//! ever to a tool the model was offered.
//!
//! What counts as a call:
//! - an object with a string `name` that [`repair_name`] maps to an offered tool, its
//!   `arguments` (or `parameters`) read as they are (a missing or null member is `{}`);
//! - an object that is *call-shaped* — a non-empty string `name` and an `arguments` (or
//!   `parameters`) member that is an object, a string holding a JSON object, or null — whose
//!   name is not offered: it keeps the name exactly as written, so the agent loop answers it
//!   with the unknown-tool answer instead of taking the reply for the final answer;
//! - either of those wrapped the OpenAI way, `{"type": "function", "function": {...}}` (or
//!   `{"function": {...}}`);
//! - a `{"tool_calls": [...]}` list or a top-level `[...]` array whose every element is one of
//!   those: each element is a call, in order. A list with anything else in it is data.
//!
//! And only JSON that stands alone: nothing but whitespace, a code fence or a tag
//! (`<tool_call>`) may share its first line before it or its last line after it. JSON quoted
//! inside a sentence — a model explaining a call, or repeating one a document showed it — is
//! text, never a call.
//!
//! Never a call: an object without a string `name` (`{"price": 12}`), an object with a
//! `name` but no `arguments`/`parameters` naming no offered tool (`{"name": "Alice", "age": 3}`),
//! and a tool *definition* — a `description` beside `name` and a JSON-Schema `parameters` — a
//! model quoting its catalogue.
//!
//! The JSON may carry `//` and `/* */` comments between its tokens and a trailing comma before
//! `}` or `]` (small models annotate their arguments); a `//` inside a string is text.
//!
//! A name is only ever changed to an offered tool: [`repair_name`] either finds the one
//! offered tool it means (one edit away, same script, not destructive) or the name is passed
//! through untouched, so nothing runs under a name other than the one written or an offered one.
//!
//! Reading a reply is linear in its length, however long its lines and however many `{` and
//! `[` it holds: where a value starting at each of them ends is found once for all of them
//! ([`Readings`]), a value is built only when it can be a call, and whether the rest of a line
//! leaves a value standing alone is found once per line ([`AloneAfter`]). The one cap is
//! [`Readings`]' budget ([`READ_BUDGET_PER_BYTE`](super::readings::READ_BUDGET_PER_BYTE)
//! bytes read per byte of the reply), which only a reply built to defeat it reaches.

use std::cell::OnceCell;

use super::readings::{Reading, Readings};
use super::relaxed_json::{Marks, read_value, work};

use serde_json::Value;

use crate::discovery::MAX_COMPARED_NAME_BYTES;
use crate::model::ToolCall;

/// The offered tool a written name means: itself; or, when exactly one offered tool is within
/// one edit of it — ignoring ASCII case, a swap of two neighbouring letters counting as one
/// edit — that tool. Never across scripts (a name with a character outside ASCII is only ever
/// matched exactly, so a Cyrillic `е` does not pass for a Latin `e`), and never to a tool in
/// `protected` (the destructive ones: a typo must not be what deletes something). Spellings
/// are compared only between names of at most [`MAX_COMPARED_NAME_BYTES`] whose lengths differ
/// by at most one byte (no other pair can be that close). `None` when nothing offered fits or
/// several do.
pub(crate) fn repair_name(name: &str, offered: &[&str], protected: &[&str]) -> Option<String> {
    if offered.contains(&name) {
        return Some(name.to_owned());
    }
    if !name.is_ascii() || name.len() > MAX_COMPARED_NAME_BYTES {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    let close: Vec<&&str> = offered
        .iter()
        .filter(|o| o.is_ascii() && o.len() <= MAX_COMPARED_NAME_BYTES && o.len().abs_diff(name.len()) <= 1)
        .filter(|o| strsim::osa_distance(&lower, &o.to_ascii_lowercase()) <= 1)
        .collect();
    match close.as_slice() {
        [only] if !protected.contains(only) => Some((**only).to_owned()),
        _ => None,
    }
}

/// One call read from a JSON object, `{"name": ..., "arguments": {...}}` (arguments may be a
/// JSON string) or its OpenAI wrapper `{"type": "function", "function": {...}}`.
///
/// A name that [`repair_name`] maps to an offered tool becomes that tool. Any other name is
/// kept exactly as written when the object is call-shaped (see the module notes) — the caller
/// refuses it, as the agent loop does with its unknown-tool answer — and is never turned into
/// some other tool. `None` for JSON that is no call.
pub(crate) fn call_from_json(value: &Value, offered: &[&str], protected: &[&str], id: String) -> Option<ToolCall> {
    let call = unwrap_function(value);
    let written = call.get("name").and_then(Value::as_str)?;
    if is_definition(call) {
        return None;
    }
    let arguments = call.get("arguments").or_else(|| call.get("parameters"));
    let name = match repair_name(written, offered, protected) {
        Some(offered_name) => offered_name,
        None if is_call_shaped(written, arguments) => written.to_owned(),
        None => return None,
    };
    let arguments = match arguments {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => "{}".to_owned(),
        Some(other) => other.to_string(),
    };
    Some(ToolCall { id, name, arguments })
}

/// The calls one JSON value holds: a single call, or every element of a `tool_calls` list or
/// top-level array when each is a call. Ids come from `next_id`, in order, and only once the
/// whole value is known to be calls; empty when it is not.
fn calls_in(value: &Value, offered: &[&str], protected: &[&str], next_id: &mut dyn FnMut() -> String) -> Vec<ToolCall> {
    let items = match value {
        Value::Array(items) => items.as_slice(),
        Value::Object(object) if !object.contains_key("name") => match object.get("tool_calls") {
            Some(Value::Array(items)) => items.as_slice(),
            _ => std::slice::from_ref(value),
        },
        Value::Object(_) => std::slice::from_ref(value),
        _ => return Vec::new(),
    };
    let mut calls = Vec::with_capacity(items.len());
    for item in items {
        match call_from_json(item, offered, protected, String::new()) {
            Some(call) => calls.push(call),
            None => return Vec::new(),
        }
    }
    for call in &mut calls {
        call.id = next_id();
    }
    calls
}

/// The `function` member of an OpenAI-style wrapper (no `name` of its own, `type` absent or
/// `"function"`); otherwise the value itself.
fn unwrap_function(value: &Value) -> &Value {
    let typed = value.get("type").is_none_or(|ty| ty == "function");
    match value.get("function") {
        Some(inner @ Value::Object(_)) if typed && value.get("name").is_none() => inner,
        _ => value,
    }
}

/// A non-empty name with arguments that are an object, a string holding a JSON object, or null.
fn is_call_shaped(name: &str, arguments: Option<&Value>) -> bool {
    let arguments_fit = match arguments {
        Some(Value::Object(_) | Value::Null) => true,
        Some(Value::String(text)) => serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()),
        _ => false,
    };
    !name.trim().is_empty() && arguments_fit
}

/// A tool's definition rather than a call to it: a `description` string beside the name and a
/// JSON Schema (`"type": "object"` or `properties`) as its `parameters`, with no `arguments`.
fn is_definition(call: &Value) -> bool {
    let schema = call
        .get("parameters")
        .is_some_and(|p| p.get("type").is_some_and(|ty| ty == "object") || p.get("properties").is_some());
    call.get("description").is_some_and(Value::is_string) && call.get("arguments").is_none() && schema
}

/// The text of a reply that made calls, without what is left of the calls' own syntax: a
/// reply reduced to stray braces, brackets and commas (`{}}`, what a small model's doubled
/// braces leave once its call is read) is no text at all. That residue matters: the reply goes
/// back to the model as its own earlier turn, and a small model copies it (a history with `{`
/// before its call can make it answer `{` and stop).
pub(crate) fn without_residue(text: &str) -> String {
    if text.chars().any(char::is_alphanumeric) {
        text.trim_matches(|c: char| c.is_whitespace() || matches!(c, '{' | '}' | '[' | ']' | ',')).to_owned()
    } else {
        String::new()
    }
}

/// Calls a model wrote as bare or ```json-fenced JSON (see the module notes for what counts),
/// with the text left once they are taken out. JSON that is no call stays text; a call with
/// a name that is not offered is returned under that name, unchanged. An object wrapped in a tag
/// named after an offered tool (`<stock_quote>{"symbol": "ACME"}</stock_quote>`, a form small
/// models write) is a call of that tool with those arguments.
pub(crate) fn recover(
    text: &str,
    offered: &[&str],
    protected: &[&str],
    next_id: &mut dyn FnMut() -> String,
) -> (Vec<ToolCall>, String) {
    let marks = OnceCell::new();
    let mut readings = Readings::new(text, &marks);
    let after = OnceCell::new();
    let alone_after = |offset: usize| after.get_or_init(|| AloneAfter::of(text)).at(offset);
    let mut calls = Vec::new();
    let mut kept = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(['{', '[']) {
        // The text since the last reading: searched here, looked back over below.
        work::charge(start + 1);
        let candidate = &rest[start..];
        let at = text.len() - candidate.len();
        let read = value_at(text, at, &mut readings, &marks);
        let alone = |end: usize| line_before_alone(&rest[..start]) && alone_after(at + end);
        let found = match &read {
            Some((value, end)) if alone(*end) => calls_in(value, offered, protected, next_id),
            _ => Vec::new(),
        };
        match read {
            Some((_, end)) if !found.is_empty() => {
                calls.extend(found);
                kept.push_str(strip_fence_open(&rest[..start]));
                rest = strip_fence_close(&candidate[end..]);
            }
            Some((Value::Object(arguments), end))
                if let Some(call) = tagged_call(&rest[..start], &candidate[end..], offered)
                    && line_before_alone(&rest[..start - call.1])
                    && alone_after(at + end + call.2) =>
            {
                let (name, open, close) = call;
                calls.push(ToolCall { id: next_id(), name, arguments: Value::Object(arguments).to_string() });
                kept.push_str(&rest[..start - open]);
                rest = &candidate[end + close..];
            }
            // JSON that is no call is text; an array's elements are still looked at one by one.
            Some((value, end)) if !value.is_array() => {
                kept.push_str(&rest[..start + end]);
                rest = &candidate[end..];
            }
            _ => {
                kept.push_str(&rest[..=start]);
                rest = &rest[start + 1..];
            }
        }
    }
    kept.push_str(rest);
    (calls, kept.trim().to_owned())
}

/// The value [`read_value`] reads at byte `at` when it can matter: an object, or an array of
/// objects only (what can be calls). An array holding anything else is no call, and its
/// elements are looked at one by one as the loop goes on, exactly as when it is read; so it is
/// not built, and neither is anything that is no value. `readings` says which is which without
/// building anything, so a value is built only once it is known to be one.
fn value_at(text: &str, at: usize, readings: &mut Readings<'_>, marks: &OnceCell<Marks>) -> Option<(Value, usize)> {
    let end = match readings.at(at) {
        Reading::Object { end } | Reading::Array { end, objects_only: true } => end,
        Reading::Array { objects_only: false, .. } | Reading::Nothing => return None,
    };
    // The strict reading, and the relaxed one when that fails: each at most the value.
    work::charge(2 * (end - at));
    let read = read_value(text, at, marks);
    debug_assert_eq!(read.as_ref().map(|(_, len)| at + len), Some(end), "the reading and the value agree");
    read
}

/// Whether JSON after `before` (the text since the last reading) can stand alone as a call:
/// nothing but whitespace, stray braces, a code fence or a tag (`<tool_call>`) shares the line
/// before it. With [`AloneAfter`] for the line after it, this is what makes a call: JSON quoted
/// inside a sentence is text, never a call — a model explaining a call, or repeating one a
/// document showed it, does not make it.
fn line_before_alone(before: &str) -> bool {
    is_wrapper(before.rsplit('\n').next().unwrap_or_default().trim_matches(is_stray))
}

/// Whitespace, or a brace, bracket or comma: what small models' doubled braces leave around a
/// call.
fn is_stray(c: char) -> bool {
    c.is_whitespace() || matches!(c, '{' | '}' | '[' | ']' | ',')
}

/// Whether a line's text beside a call (stray characters trimmed) leaves it alone: nothing, a
/// code fence (```` ``` ````, ```` ```json ````) or tags (`<tool_call>`, `</tool_call>`).
fn is_wrapper(text: &str) -> bool {
    text.is_empty()
        || text.trim_matches('`').is_empty()
        || text.strip_prefix("```").is_some_and(|lang| lang.chars().all(|c| c.is_ascii_alphanumeric()))
        || text.split_inclusive('>').all(|tag| {
            let tag = tag.trim();
            tag.starts_with('<')
                && tag.ends_with('>')
                && tag[1..tag.len() - 1].trim_start_matches('/').chars().all(is_tag_char)
        })
}

/// A character of a tag's name.
fn is_tag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// For each byte offset of a reply, whether the text after it on its line — up to the next
/// `\n`, stray characters trimmed from both ends — is a wrapper ([`is_wrapper`]): whether a
/// value ending there leaves its last line alone. Found for every offset of a line in one
/// backward pass over it, so asking costs nothing however many values end on one long line.
struct AloneAfter {
    /// A bit per offset, the reply's end included.
    bits: Vec<u64>,
}

impl AloneAfter {
    /// Marks every line of `text`.
    fn of(text: &str) -> Self {
        work::charge(text.len());
        let mut alone = Self { bits: vec![0; text.len() / 64 + 1] };
        let mut from = 0;
        for line in text.split('\n') {
            alone.mark_line(from, line);
            from += line.len() + 1;
        }
        alone
    }

    /// Whether a value ending at byte `offset` leaves the rest of its line alone.
    fn at(&self, offset: usize) -> bool {
        self.bits.get(offset / 64).is_some_and(|word| word >> (offset % 64) & 1 == 1)
    }

    /// Marks `offset`: a value ending there leaves the rest of its line alone.
    fn set(&mut self, offset: usize) {
        if let Some(word) = self.bits.get_mut(offset / 64) {
            *word |= 1 << (offset % 64);
        }
    }

    /// Marks the offsets of `line`, which starts at byte `from`. From an offset, the trimmed
    /// rest of the line starts at the first character that is not stray, so it is a wrapper
    /// exactly when a wrapper starts at that character and runs to the line's last one that
    /// is not stray ([`WrapperStarts`]); past that last one, it is empty.
    fn mark_line(&mut self, from: usize, line: &str) {
        let body = line.trim_end_matches(is_stray);
        for offset in (body.len()..=line.len()).filter(|&offset| line.is_char_boundary(offset)) {
            self.set(from + offset);
        }
        let starts = WrapperStarts::of(body);
        let mut alone = false;
        for (offset, c) in body.char_indices().rev() {
            if !is_stray(c) {
                alone = starts.contains(offset, c);
            }
            if alone {
                self.set(from + offset);
            }
        }
    }
}

/// The offsets of a line's text (ending in a character that is not stray) from which the rest
/// is one wrapper ([`is_wrapper`]): within its trailing run of backticks; the start of a
/// ```` ```lang ```` fence it ends with; or a `<` of the run of tags (whitespace between them)
/// it ends with.
struct WrapperStarts {
    /// Where the trailing run of backticks starts (`usize::MAX`: none).
    backticks_from: usize,
    /// Where the fence's opening backticks start.
    fence_at: Option<usize>,
    /// Where the run of tags starts (`usize::MAX`: none).
    tags_from: usize,
}

impl WrapperStarts {
    /// Where wrappers start in `body`, found by walking back from its end.
    fn of(body: &str) -> Self {
        let ticks = body.trim_end_matches('`').len();
        let lang = body.trim_end_matches(|c: char| c.is_ascii_alphanumeric());
        let mut tags_from = usize::MAX;
        let mut end = body.len();
        while let Some(inner) = body[..end].strip_suffix('>')
            && let Some(open) = inner.trim_end_matches(is_tag_char).trim_end_matches('/').strip_suffix('<')
        {
            tags_from = open.len();
            end = open.trim_end().len();
        }
        Self {
            backticks_from: if ticks < body.len() { ticks } else { usize::MAX },
            fence_at: lang.strip_suffix("```").map(str::len),
            tags_from,
        }
    }

    /// Whether a wrapper runs from `c`, the character at `offset`, to the end.
    fn contains(&self, offset: usize, c: char) -> bool {
        offset >= self.backticks_from || self.fence_at == Some(offset) || (offset >= self.tags_from && c == '<')
    }
}

/// A tag around an arguments object that names an offered tool: `<stock_quote>` just before it
/// and `</stock_quote>` just after (whitespace aside). Returns the tool, and how many bytes of
/// `before` and `after` the tags take.
fn tagged_call(before: &str, after: &str, offered: &[&str]) -> Option<(String, usize, usize)> {
    let trimmed = before.trim_end();
    let open_at = trimmed.strip_suffix('>')?.rfind('<')?;
    let tag = &trimmed[open_at + 1..trimmed.len() - 1];
    if tag.is_empty() || !tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return None;
    }
    let name = offered.iter().find(|name| **name == tag)?;
    let rest = after.trim_start();
    let close = format!("</{tag}>");
    let after_close = rest.strip_prefix(close.as_str())?;
    Some(((*name).to_owned(), before.len() - open_at, after.len() - after_close.len()))
}

fn strip_fence_open(text: &str) -> &str {
    let trimmed = text.trim_end();
    for fence in ["```json", "```JSON", "```"] {
        if let Some(before) = trimmed.strip_suffix(fence) {
            return before;
        }
    }
    text
}

fn strip_fence_close(text: &str) -> &str {
    text.trim_start().strip_prefix("```").unwrap_or(text)
}

#[cfg(test)]
mod tests;
