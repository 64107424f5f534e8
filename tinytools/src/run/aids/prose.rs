//! Calls a reply talks about instead of making: the tool it names, and — when the prose
//! carries them — the arguments it wrote.
//!
//! Small models often answer a request they have the tool for with a sentence such as
//! "call the `hotel_search` tool with the arguments `{"city": "Porto", ...}`", or quote the
//! call they mean inside a sentence. text recovery never takes JSON
//! quoted in prose for a call; this module reads such a reply for the agent loop, which decides
//! what to do with it (see [`AdoptProseCalls`](super::AdoptProseCalls)).

use std::cell::OnceCell;

use serde_json::{Map, Value};

use crate::dialect::relaxed_json::read_value;

/// Replies longer than this are never read for a described call: a described call is a
/// sentence or two, and the scan must stay cheap on an 8 MiB reply.
const MAX_DESCRIBED_CALL_BYTES: usize = 8 * 1024;

/// At most this many JSON objects are looked at; a reply with more is not one call described.
const MAX_OBJECTS: usize = 2;

/// Whether `text` names `name` as a whole identifier (not inside a longer one).
pub(crate) fn mentions(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    !name.is_empty()
        && text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
}

/// The first of `names` that `text` names as a whole identifier.
pub(crate) fn named_tool<'a>(text: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names.into_iter().find(|name| mentions(text, name))
}

/// The call a prose reply spells out, as a tool name and its arguments object. Either:
/// - the reply holds exactly one JSON object, call-shaped (`{"name": N, "arguments": {...}}`)
///   with `N` one of `offered`; or
/// - the reply names exactly one of `offered` as a whole identifier and holds exactly one JSON
///   object, which is not call-shaped: that object is the tool's arguments.
///
/// Never a tool in `protected` (the destructive ones: a sentence is not a strong enough signal
/// for them), never a name that is not offered, never from a reply over 8 KiB. `None`
/// otherwise.
pub(crate) fn described_call(text: &str, offered: &[&str], protected: &[&str]) -> Option<(String, Value)> {
    if text.len() > MAX_DESCRIBED_CALL_BYTES {
        return None;
    }
    let objects = objects_in(text)?;
    let [object] = objects.as_slice() else {
        return None;
    };
    let allowed = |name: &str| offered.contains(&name) && !protected.contains(&name);
    if let Some(Value::String(name)) = object.get("name") {
        let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
            Some(Value::Object(arguments)) => Value::Object(arguments.clone()),
            Some(Value::String(text)) => serde_json::from_str::<Value>(text).ok().filter(Value::is_object)?,
            Some(Value::Null) | None => Value::Object(Map::new()),
            Some(_) => return None,
        };
        // A `name` member that is a tool is the call; one that is not (`{"name": "Alice"}`) may
        // still be the named tool's arguments.
        if offered.contains(&name.as_str()) {
            return allowed(name).then(|| (name.clone(), arguments));
        }
        if object.contains_key("arguments") {
            return None;
        }
    }
    let name = only_named(text, offered)?;
    allowed(name).then(|| (name.to_owned(), Value::Object(object.clone())))
}

/// The one tool of `offered` that `text` names as a whole identifier; `None` when it names
/// none or several. A tool may be offered twice (declared, and callable by name): it is one
/// tool.
fn only_named<'a>(text: &str, offered: &[&'a str]) -> Option<&'a str> {
    let mut named: Vec<&str> = offered.iter().copied().filter(|name| mentions(text, name)).collect();
    named.sort_unstable();
    named.dedup();
    match named.as_slice() {
        [name] => Some(name),
        _ => None,
    }
}

/// The tool a prose reply names and the one value it quotes for it, as in
/// ``call `jira_search_issues` with the query "status = 'In Progress'"``: exactly one of
/// `offered` named (never one in `protected`), no JSON object, exactly one non-empty
/// double-quoted string (straight or curly quotes, on one line, at most 200 characters). The
/// loop takes it for a call only of a tool whose one required parameter is a string.
pub(crate) fn described_lookup(text: &str, offered: &[&str], protected: &[&str]) -> Option<(String, String)> {
    let name = assignment_target(text, offered, protected)?;
    let mut values = quoted(text);
    let value = values.pop().filter(|_| values.is_empty())?;
    Some((name.to_owned(), value))
}

/// The tool a prose reply names when it may write that tool's arguments without JSON — as
/// assignments ([`assigned`]) or one quoted value ([`described_lookup`]): exactly one of
/// `offered` named, never one in `protected`, and no JSON object in the reply (that one is
/// [`described_call`]'s); `None` past 8 KiB.
pub(crate) fn assignment_target<'a>(text: &str, offered: &[&'a str], protected: &[&str]) -> Option<&'a str> {
    if text.len() > MAX_DESCRIBED_CALL_BYTES || !objects_in(text)?.is_empty() {
        return None;
    }
    only_named(text, offered).filter(|name| !protected.contains(name))
}

/// A parameter the prose assigns two different values.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TwoValues;

/// The value `text` assigns to `parameter`: the parameter as a whole identifier (in backticks
/// or quotes or not), `=` or `:`, then a value in straight quotes, single quotes or backticks
/// (a string), or a bare JSON number or boolean (`limit=5`). `Ok(None)` when the text assigns
/// it nothing; [`TwoValues`] when it assigns two different values.
pub(crate) fn assigned(text: &str, parameter: &str) -> Result<Option<Value>, TwoValues> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut found: Option<Value> = None;
    for (at, _) in text.match_indices(parameter) {
        let after = &text[at + parameter.len()..];
        if text[..at].chars().next_back().is_some_and(is_ident) || after.chars().next().is_some_and(is_ident) {
            continue;
        }
        let rest = after.trim_start_matches(['`', '"', '\'']).trim_start();
        let Some(rest) = rest.strip_prefix('=').or_else(|| rest.strip_prefix(':')) else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(quote @ ('"' | '\'' | '`')) => {
                let body = &rest[1..];
                let Some(end) = body.find(quote) else { continue };
                Value::String(body[..end].to_owned())
            }
            _ => {
                let token = rest.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ')' | '`')).next();
                match token.map(|token| token.trim_end_matches('.')).and_then(|t| serde_json::from_str(t).ok()) {
                    Some(value @ (Value::Number(_) | Value::Bool(_))) => value,
                    _ => continue,
                }
            }
        };
        match &found {
            Some(earlier) if *earlier != value => return Err(TwoValues),
            _ => found = Some(value),
        }
    }
    Ok(found)
}

/// The tool a reply that is nothing but a tool stands for: its name alone (in backticks or
/// quotes, with `()` or a full stop after it), or tool declarations copied back from the
/// request (`{"type": "function", "function": {"name": ...}}`, in `<tools>` tags or not, cut
/// short or whole), the first one declared. Only a name in `offered`; `None` for any other
/// reply, and for one over 8 KiB.
pub(crate) fn bare_name<'a>(text: &str, offered: &[&'a str]) -> Option<&'a str> {
    if text.len() > MAX_DESCRIBED_CALL_BYTES {
        return None;
    }
    let text = text.trim();
    let name = match text.strip_prefix("<tools>").map(str::trim_start).unwrap_or(text) {
        body if body.starts_with('{') => first_declared(body)?,
        _ => {
            let name = text.trim_end_matches('.').trim_end_matches("()");
            name.strip_prefix('`')
                .and_then(|n| n.strip_suffix('`'))
                .or_else(|| name.strip_prefix('"').and_then(|n| n.strip_suffix('"')))
                .unwrap_or(name)
        }
    };
    offered.iter().copied().find(|offered| *offered == name)
}

/// The name of the first declaration a text opens with, `{"type": "function", "function":
/// {"name": "..."`, read token by token so that a declaration cut short still counts.
fn first_declared(body: &str) -> Option<&str> {
    fn eat<'t>(rest: &'t str, token: &str) -> Option<&'t str> {
        rest.trim_start().strip_prefix(token)
    }
    let mut rest = eat(body, "{")?;
    for token in ["\"type\"", ":", "\"function\"", ",", "\"function\"", ":", "{", "\"name\"", ":", "\""] {
        rest = eat(rest, token)?;
    }
    let end = rest.find('"')?;
    Some(&rest[..end])
}

/// The double-quoted strings of a text, each on one line, trimmed, in order; the scan stops at
/// the second (a caller wants to know whether there is exactly one).
fn quoted(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['"', '\u{201c}']) {
        let after = &rest[open..];
        let opener = after.chars().next().unwrap_or('"');
        let closer = if opener == '"' { '"' } else { '\u{201d}' };
        let inner = &after[opener.len_utf8()..];
        let Some(close) = inner.find(closer) else {
            break;
        };
        let value = inner[..close].trim();
        if !value.is_empty() && !value.contains('\n') && value.chars().count() <= 200 {
            found.push(value.to_owned());
        }
        if found.len() > 1 {
            break;
        }
        rest = &inner[close + closer.len_utf8()..];
    }
    found
}

/// The JSON objects of a text, outermost only, in order; `None` past [`MAX_OBJECTS`].
fn objects_in(text: &str) -> Option<Vec<Map<String, Value>>> {
    let marks = OnceCell::new();
    let mut objects = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find('{') {
        let start = at + offset;
        match read_value(text, start, &marks) {
            Some((Value::Object(object), length)) => {
                if objects.len() == MAX_OBJECTS {
                    return None;
                }
                objects.push(object);
                at = start + length.max(1);
            }
            _ => at = start + 1,
        }
    }
    Some(objects)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const OFFERED: [&str; 4] = ["hotel_search", "stock_quote", "delete_repo", "hotel_search"];
    const PROTECTED: [&str; 1] = ["delete_repo"];

    fn read(text: &str) -> Option<(String, Value)> {
        described_call(text, &OFFERED, &PROTECTED)
    }

    #[test]
    fn a_named_tool_with_one_object_of_arguments_is_the_call() {
        let text = "To find a hotel, call the `hotel_search` tool with the arguments \
                    `{\"city\": \"Porto\", \"check_in\": \"2026-06-03\"}`.";
        assert_eq!(read(text), Some(("hotel_search".into(), json!({"city": "Porto", "check_in": "2026-06-03"}))));
        let fenced = "You can call the `hotel_search` function with the following arguments:\n```json\n\
                      {\n  \"city\": \"Porto\"\n}\n```";
        assert_eq!(read(fenced), Some(("hotel_search".into(), json!({"city": "Porto"}))));
    }

    #[test]
    fn a_call_quoted_in_a_sentence_is_the_call() {
        let text = r#"To use one, reply with {"name": "stock_quote", "arguments": {"symbol": "ACME"}}."#;
        assert_eq!(read(text), Some(("stock_quote".into(), json!({"symbol": "ACME"}))));
        let string_arguments = r#"Try {"name": "stock_quote", "arguments": "{\"symbol\": \"ACME\"}"} now"#;
        assert_eq!(read(string_arguments), Some(("stock_quote".into(), json!({"symbol": "ACME"}))));
    }

    #[test]
    fn nothing_is_read_that_is_ambiguous_destructive_or_not_offered() {
        // No arguments: a mention is not a call.
        assert_eq!(read("You can use the hotel_search function."), None);
        // Two tools named, or two objects: which one is meant is a guess.
        assert_eq!(read("Use `hotel_search` or `stock_quote` with {\"city\": \"Porto\"}."), None);
        assert_eq!(read("Call `hotel_search` with {\"city\": \"Porto\"} or {\"city\": \"Lisbon\"}."), None);
        // A destructive tool, named or quoted.
        assert_eq!(read("Call `delete_repo` with {\"repo\": \"acme/web\"}."), None);
        assert_eq!(read(r#"Send {"name": "delete_repo", "arguments": {"repo": "x"}}."#), None);
        // A call of a tool that is not offered, even beside an offered name.
        assert_eq!(read(r#"Like `stock_quote`, {"name": "send_email", "arguments": {"to": "x"}}."#), None);
        // A name inside a longer identifier is no mention.
        assert_eq!(read("my_stock_quotes holds {\"symbol\": \"ACME\"}."), None);
        // Too long to be a sentence about a call.
        let long =
            format!("Call `stock_quote` with {{\"symbol\": \"ACME\"}}. {}", "a".repeat(MAX_DESCRIBED_CALL_BYTES));
        assert_eq!(read(&long), None);
    }

    #[test]
    fn an_object_whose_name_is_data_is_the_named_tools_arguments() {
        let text = "Call `hotel_search` with {\"name\": \"Grand Hotel\", \"city\": \"Porto\"}.";
        assert_eq!(read(text), Some(("hotel_search".into(), json!({"name": "Grand Hotel", "city": "Porto"}))));
    }

    #[test]
    fn a_named_tool_with_one_quoted_value_is_a_described_lookup() {
        let lookup = |text: &str| described_lookup(text, &OFFERED, &PROTECTED);
        let text = "To find the ticket, call `hotel_search` with the query `\"status = 'In Progress'\"`.";
        assert_eq!(lookup(text), Some(("hotel_search".into(), "status = 'In Progress'".into())));
        let curly = "Call stock_quote for \u{201c}ACME\u{201d} first.";
        assert_eq!(lookup(curly), Some(("stock_quote".into(), "ACME".into())));
        // Not one value, not one tool, a protected tool, or an object of arguments: not a lookup.
        assert_eq!(lookup("Call `hotel_search` first."), None);
        assert_eq!(lookup("Call `hotel_search` with \"Porto\" or \"Lisbon\"."), None);
        assert_eq!(lookup("Call `hotel_search` or `stock_quote` with \"Porto\"."), None);
        assert_eq!(lookup("Call `delete_repo` with \"acme/web\"."), None);
        assert_eq!(lookup("Call `hotel_search` with {\"city\": \"Porto\"}."), None);
        assert_eq!(lookup("Call `hotel_search` with \"\"."), None);
        assert_eq!(lookup("Call `hotel_search` with \"Porto"), None);
    }

    #[test]
    fn assignments_in_prose_are_the_named_tools_values() {
        let said = "I have called the `hotel_search` function with the arguments `city=\"Porto\"`, \
                    `nights: 3`, `pets = 'no'` and `\"late\": true`.";
        assert_eq!(assignment_target(said, &OFFERED, &PROTECTED), Some("hotel_search"));
        assert_eq!(assigned(said, "city"), Ok(Some(json!("Porto"))));
        assert_eq!(assigned(said, "nights"), Ok(Some(json!(3))));
        assert_eq!(assigned(said, "pets"), Ok(Some(json!("no"))));
        assert_eq!(assigned(said, "late"), Ok(Some(json!(true))));
        // Not assigned: a mention, a word inside another, an unquoted word.
        assert_eq!(assigned("the city of Porto, a cityscape: \"x\", city: Porto", "city"), Ok(None));
        // The same value twice is one value; two values are none.
        assert_eq!(assigned("city=\"Porto\", or city: \"Porto\"", "city"), Ok(Some(json!("Porto"))));
        assert_eq!(assigned("city=\"Porto\" or city=\"Lisbon\"", "city"), Err(TwoValues));
        // A JSON object is described_call's; two tools, or a protected one, are no target.
        assert_eq!(assignment_target("Call `hotel_search` with {\"city\": \"Porto\"}.", &OFFERED, &PROTECTED), None);
        assert_eq!(assignment_target("`hotel_search` or `stock_quote`: city=\"x\"", &OFFERED, &PROTECTED), None);
        assert_eq!(assignment_target("`delete_repo` with repo=\"x\"", &OFFERED, &PROTECTED), None);
    }

    #[test]
    fn a_reply_that_is_only_a_tool_names_it() {
        let bare = |text: &str| bare_name(text, &OFFERED);
        for text in ["stock_quote", " `stock_quote` ", "\"stock_quote\"", "stock_quote()", "stock_quote.\n"] {
            assert_eq!(bare(text), Some("stock_quote"), "{text:?}");
        }
        // Declarations copied back: the first one, whole or cut short, in tags or not.
        let echo = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"hotel_search\", \"parameters\": {}}}\n\
                    {\"type\": \"function\", \"function\": {\"name\": \"stock_quote\", \"parameters\": {}}}\n</tools>";
        assert_eq!(bare(echo), Some("hotel_search"));
        assert_eq!(bare(r#"{"type":"function","function":{"name":"stock_quote","descr"#), Some("stock_quote"));
        // A sentence, another tool, a call, or a declaration of a tool not offered: not bare.
        assert_eq!(bare("Use stock_quote."), None);
        assert_eq!(bare("send_email"), None);
        assert_eq!(bare("`stock_quote"), None);
        assert_eq!(bare(r#"{"name": "stock_quote", "arguments": {}}"#), None);
        assert_eq!(bare(r#"{"type": "function", "function": {"name": "send_email"}}"#), None);
        assert_eq!(bare(&format!("{}stock_quote", " ".repeat(MAX_DESCRIBED_CALL_BYTES))), None);
    }

    #[test]
    fn many_braces_are_read_in_bounded_time_and_give_nothing() {
        let text = "{".repeat(MAX_DESCRIBED_CALL_BYTES);
        assert_eq!(read(&text), None);
        assert!(mentions("call `stock_quote` now", "stock_quote") && !mentions("anything", ""));
    }
}
