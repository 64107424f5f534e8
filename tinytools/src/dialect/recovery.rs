//! Recovering calls a model wrote as plain text, and repairing a misspelt tool name — only
//! ever to a tool the model was offered.

use serde_json::Value;

use crate::model::ToolCall;

/// The offered tool a written name means: itself, a unique case-insensitive match, or a
/// unique close spelling (edit distance ≤ 2). `None` when nothing offered fits or several do.
pub(crate) fn repair_name(name: &str, offered: &[&str]) -> Option<String> {
    if offered.contains(&name) {
        return Some(name.to_owned());
    }
    let by_case: Vec<&&str> = offered.iter().filter(|o| o.eq_ignore_ascii_case(name)).collect();
    if let [only] = by_case.as_slice() {
        return Some((**only).to_owned());
    }
    let lower = name.to_ascii_lowercase();
    let mut close: Vec<(usize, &&str)> = offered
        .iter()
        .map(|o| (strsim::levenshtein(&lower, &o.to_ascii_lowercase()), o))
        .filter(|(distance, _)| *distance <= 2)
        .collect();
    close.sort_by_key(|(distance, _)| *distance);
    match close.as_slice() {
        [(best, only), rest @ ..] if rest.first().is_none_or(|(next, _)| next > best) => Some((**only).to_owned()),
        _ => None,
    }
}

/// A call read from JSON `{"name": ..., "arguments": {...}}` (arguments may be a JSON string),
/// if the name repairs to an offered tool.
pub(crate) fn call_from_json(value: &Value, offered: &[&str], id: String) -> Option<ToolCall> {
    let name = value.get("name").and_then(Value::as_str)?;
    let name = repair_name(name, offered)?;
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => "{}".to_owned(),
        Some(other) => other.to_string(),
    };
    Some(ToolCall { id, name, arguments })
}

/// Calls a model wrote as a bare or ```json-fenced object naming an offered tool, with the
/// text left once they are taken out. Plain JSON that names no offered tool stays text.
pub(crate) fn recover(text: &str, offered: &[&str], next_id: &mut dyn FnMut() -> String) -> (Vec<ToolCall>, String) {
    let mut calls = Vec::new();
    let mut kept = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let candidate = &rest[start..];
        let mut stream = serde_json::Deserializer::from_str(candidate).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let end = stream.byte_offset();
                match call_from_json(&value, offered, String::new()) {
                    Some(mut call) => {
                        call.id = next_id();
                        calls.push(call);
                        kept.push_str(strip_fence_open(&rest[..start]));
                        rest = strip_fence_close(&candidate[end..]);
                    }
                    None => {
                        kept.push_str(&rest[..start + end]);
                        rest = &candidate[end..];
                    }
                }
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
mod tests {
    use super::*;

    const OFFERED: [&str; 3] = ["stock_quote", "tool_search", "read_note"];

    fn ids() -> impl FnMut() -> String {
        let mut n = 0;
        move || {
            n += 1;
            format!("text_{n}")
        }
    }

    #[test]
    fn names_repair_only_to_one_offered_tool() {
        assert_eq!(repair_name("Stock_Quote", &OFFERED).as_deref(), Some("stock_quote"));
        assert_eq!(repair_name("stock_qoute", &OFFERED).as_deref(), Some("stock_quote"));
        assert_eq!(repair_name("delete_everything", &OFFERED), None);
        assert_eq!(repair_name("a", &["ab", "ac"]), None, "ambiguous");
    }

    #[test]
    fn bare_and_fenced_calls_are_recovered_and_other_json_stays_text() {
        let (calls, text) = recover(
            "Let me check.\n```json\n{\"name\": \"stock_quote\", \"arguments\": {\"symbol\": \"ACME\"}}\n```",
            &OFFERED,
            &mut ids(),
        );
        assert_eq!(calls.len(), 1);
        assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("stock_quote", r#"{"symbol":"ACME"}"#));
        assert_eq!(text, "Let me check.");
        let (calls, text) = recover(r#"{"name": "rm_rf", "arguments": {}} and {"price": 12}"#, &OFFERED, &mut ids());
        assert!(calls.is_empty());
        assert_eq!(text, r#"{"name": "rm_rf", "arguments": {}} and {"price": 12}"#);
        let (calls, _) = recover(r#"{"name":"tool_search","arguments":"{\"query\":\"stock\"}"}"#, &OFFERED, &mut ids());
        assert_eq!(calls[0].arguments, r#"{"query":"stock"}"#);
    }
}
