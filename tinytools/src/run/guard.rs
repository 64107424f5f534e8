//! What a run does about a model that goes round in circles: the same call again and again
//! (answered from the first result, then a request for the final answer), and a call described
//! in prose instead of made (one nudge).

use std::collections::HashMap;

use serde_json::Value;

use crate::ToolResult;
use crate::model::ToolCall;

/// The note a repeated call's answer starts with.
const REPEATED: &str = "You already made this exact call in this conversation, and this is its answer again. \
Use it, or call with different arguments.";

/// The request that ends a run whose model kept repeating itself.
pub(super) const FINAL_ANSWER: &str = "You keep repeating the same tool call. Do not call any tool now: \
answer the user in plain text with what you have, or tell them it cannot be done with these tools.";

/// Every call a run made, by name and canonical arguments, with its first answer.
#[derive(Default)]
pub(super) struct Repeats {
    seen: HashMap<String, (ToolResult, usize)>,
}

impl Repeats {
    /// The call's identity: its name and its arguments with object keys sorted (text that is
    /// not JSON stands for itself).
    pub(super) fn key(call: &ToolCall) -> String {
        let arguments = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(value) => canonical(&value),
            Err(_) => call.arguments.trim().to_owned(),
        };
        format!("{}\u{0}{arguments}", call.name)
    }

    /// Whether a call of this identity was answered before.
    pub(super) fn contains(&self, key: &str) -> bool {
        self.seen.contains_key(key)
    }

    /// Records a call's first answer.
    pub(super) fn record(&mut self, key: String, result: &ToolResult) {
        self.seen.entry(key).or_insert_with(|| (result.clone(), 0));
    }

    /// A repeat of a call answered before: its first answer behind the note, and how many
    /// times it has now been repeated.
    pub(super) fn repeat(&mut self, key: &str) -> Option<(ToolResult, usize)> {
        let (first, repeats) = self.seen.get_mut(key)?;
        *repeats += 1;
        let text = format!("{REPEATED}\n\n{}", first.to_model_text());
        let answer = if first.is_error { ToolResult::error(text) } else { ToolResult::text(text) };
        Some((answer, *repeats))
    }
}

/// JSON with every object's keys sorted, whatever the map's own order.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> =
                entries.iter().map(|(k, v)| format!("{}:{}", Value::String((*k).clone()), canonical(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// The tool a text reply talks about instead of calling: the first of `names` that appears in
/// it as a whole identifier.
pub(super) fn described_call<'a>(text: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    names.into_iter().find(|name| {
        text.match_indices(*name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
    })
}

/// The nudge sent once when the model describes a call instead of making it.
pub(super) fn nudge(name: &str) -> String {
    format!(
        "You described calling `{name}` instead of calling it. If a tool fits, call it now, with the arguments \
         its parameters describe; otherwise answer the user."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments: arguments.into() }
    }

    #[test]
    fn a_call_is_the_same_whatever_its_key_order_or_spacing() {
        let a = Repeats::key(&call("t", r#"{"b": 1, "a": {"y": [1, 2], "x": null}}"#));
        let b = Repeats::key(&call("t", r#"{"a":{"x":null,"y":[1,2]},"b":1}"#));
        assert_eq!(a, b);
        assert_ne!(a, Repeats::key(&call("u", r#"{"a":{"x":null,"y":[1,2]},"b":1}"#)));
        assert_ne!(a, Repeats::key(&call("t", r#"{"a":{"x":null,"y":[2,1]},"b":1}"#)));
    }

    #[test]
    fn repeats_are_answered_from_the_first_result_and_counted() {
        let mut repeats = Repeats::default();
        let key = Repeats::key(&call("t", "{}"));
        assert!(repeats.repeat(&key).is_none());
        repeats.record(key.clone(), &ToolResult::text("42"));
        repeats.record(key.clone(), &ToolResult::text("later answers never replace the first"));
        let (answer, n) = repeats.repeat(&key).unwrap_or_else(|| (ToolResult::text(""), 0));
        assert_eq!(n, 1);
        assert!(answer.to_model_text().ends_with("\n\n42") && !answer.is_error);
        assert_eq!(repeats.repeat(&key).map(|(_, n)| n), Some(2));
    }

    #[test]
    fn a_described_call_names_a_tool_as_a_whole_word() {
        let names = ["stock_quote", "read_note"];
        assert_eq!(described_call("Call the `stock_quote` function with ACME.", names), Some("stock_quote"));
        assert_eq!(described_call("stock_quote(symbol=ACME)", names), Some("stock_quote"));
        assert_eq!(described_call("my_stock_quotes are fine", names), None);
        assert_eq!(described_call("ACME trades at 12.50.", names), None);
    }
}
