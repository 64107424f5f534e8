//! What a run does about a model that goes round in circles: the same call again and again
//! (answered from the first result, then a request for the final answer; at once when asking
//! again cannot help), a call described in prose instead of made (adopted, or one nudge), and
//! an empty reply (one request for the answer).

use std::collections::HashMap;

use serde_json::Value;

use crate::ToolResult;
use crate::model::ToolCall;

/// The note a repeated call's answer starts with, when the first answer was an error.
const REPEATED: &str = "You already made this exact call in this conversation, and this is its answer again. \
Use it, or call with different arguments.";

/// The note a repeated call's answer starts with, when the first call worked. Measured on
/// Qwen2.5-Coder-1.5B: told only "use it, or call with different arguments", it made a
/// two-step request's first call again and again and never the second.
const REPEATED_DONE: &str = "You already made this exact call in this conversation and it worked; its answer is \
below again. Do not make it again: make the next call the user's request needs, or, if nothing is left, answer \
the user.";

/// The request that ends a run whose model kept repeating itself.
pub(super) const FINAL_ANSWER: &str = "You keep repeating the same tool call. Do not call any tool now: \
answer the user in plain text with what you have, or tell them it cannot be done with these tools.";

/// Every call a run made, by name and canonical arguments, with its first answer.
#[derive(Default)]
pub(super) struct Repeats {
    seen: HashMap<String, Seen>,
}

/// A call's first answer, whether it was fruitless or provisional, and how often it was
/// repeated since.
struct Seen {
    first: ToolResult,
    fruitless: bool,
    provisional: bool,
    repeats: usize,
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

    /// Records a call's first answer; `fruitless`: asking again cannot give anything new (a
    /// `tool_search` that matched nothing); `provisional`: the answer held only for the
    /// conversation so far (a grounding refusal), and a later answer replaces it.
    pub(super) fn record(&mut self, key: String, result: &ToolResult, fruitless: bool, provisional: bool) {
        if self.seen.get(&key).is_none_or(|seen| seen.provisional) {
            self.seen.insert(key, Seen { first: result.clone(), fruitless, provisional, repeats: 0 });
        }
    }

    /// Whether a call of this identity was answered provisionally: the loop checks it again
    /// before replaying the answer.
    pub(super) fn provisional(&self, key: &str) -> bool {
        self.seen.get(key).is_some_and(|seen| seen.provisional)
    }

    /// Whether a call of this identity was answered before, and not with an error or "no
    /// match".
    pub(super) fn answered_ok(&self, key: &str) -> bool {
        self.seen.get(key).is_some_and(|seen| !seen.first.is_error && !seen.fruitless)
    }

    /// How many times a call of this identity has been repeated so far (0 if never made).
    pub(super) fn times_repeated(&self, key: &str) -> usize {
        self.seen.get(key).map_or(0, |seen| seen.repeats)
    }

    /// A repeat of a call answered before: its first answer behind the note, how many times it
    /// has now been repeated, and whether the first answer was fruitless.
    pub(super) fn repeat(&mut self, key: &str) -> Option<(ToolResult, usize, bool)> {
        let seen = self.seen.get_mut(key)?;
        seen.repeats += 1;
        let answer = if seen.first.is_error {
            ToolResult::error(format!("{REPEATED}\n\n{}", seen.first.to_model_text()))
        } else {
            ToolResult::text(format!("{REPEATED_DONE}\n\n{}", seen.first.to_model_text()))
        };
        Some((answer, seen.repeats, seen.fruitless))
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

/// The request for the answer once a tool has answered: when, offered no tools at the first
/// repeat of an answered call, the model wrote the call again, and instead of [`EMPTY_REPLY`]
/// after a call ran without error. Measured on Qwen2.5-Coder-1.5B over seven transcripts of
/// the live suite: asked this, it told the result each time ("The tool answered that the pull
/// request #57 on the acme/api repository was merged by squash.", "The price of one share of
/// GLOBX is $685.83."); asked "Answer the user now in plain text", it answered "I'm sorry, but I
/// don't have the ability to access your bank account" after `expense_report` had answered,
/// and "Now reply to my request" made it copy the request back. "…, with the values it gave"
/// also drew the answer from 8 replies that had described the call again instead ("To get the
/// CPU usage on the checkout service…, you can call the `datadog_query_metrics` function…"),
/// where without it 3 of the 8 still said only "The tool returned the slides".
pub(super) const ANSWER_FROM_RESULT: &str =
    "The tool has answered (above). Now tell the user what it answered, in one sentence, with the values it gave.";

/// The request sent once when the model replies with neither text nor a call before any tool
/// has answered without error: measured on Qwen2.5-Coder-1.5B after a search that found
/// nothing, it answers the user instead of ending the run with an empty answer.
pub(super) const EMPTY_REPLY: &str =
    "Answer the user now in plain text. If you could not do what they asked, tell them so.";

/// Items as a sentence lists them: "a", "a and b", "a, b and c".
pub(super) fn listed(items: &[impl AsRef<str>]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [first @ .., last] => {
            let first: Vec<&str> = first.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", first.join(", "), last.as_ref())
        }
    }
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
        repeats.record(key.clone(), &ToolResult::text("42"), false, false);
        repeats.record(key.clone(), &ToolResult::text("later answers never replace the first"), true, false);
        let (answer, n, fruitless) = repeats.repeat(&key).unwrap_or_else(|| (ToolResult::text(""), 0, true));
        assert_eq!((n, fruitless), (1, false));
        assert!(answer.to_model_text().ends_with("\n\n42") && !answer.is_error);
        assert_eq!(repeats.repeat(&key).map(|(_, n, _)| n), Some(2));
    }

    #[test]
    fn a_described_call_names_a_tool_as_a_whole_word() {
        use crate::dialect::prose::named_tool;
        let names = ["stock_quote", "read_note"];
        assert_eq!(named_tool("Call the `stock_quote` function with ACME.", names), Some("stock_quote"));
        assert_eq!(named_tool("stock_quote(symbol=ACME)", names), Some("stock_quote"));
        assert_eq!(named_tool("my_stock_quotes are fine", names), None);
        assert_eq!(named_tool("ACME trades at 12.50.", names), None);
    }

    #[test]
    fn a_fruitless_call_is_remembered_as_such() {
        let mut repeats = Repeats::default();
        let key = Repeats::key(&call("tool_search", r#"{"query":"x"}"#));
        repeats.record(key.clone(), &ToolResult::text("{\"matches\":[]}"), true, false);
        assert!(repeats.repeat(&key).is_some_and(|(_, n, fruitless)| n == 1 && fruitless));
    }

    #[test]
    fn items_are_listed_as_a_sentence_lists_them() {
        use super::listed;
        assert_eq!(listed(&[] as &[&str]), "");
        assert_eq!(listed(&["`a`"]), "`a`");
        assert_eq!(listed(&["a", "b"]), "a and b");
        assert_eq!(listed(&["a".to_owned(), "b".to_owned(), "c".to_owned()]), "a, b and c");
    }
}
