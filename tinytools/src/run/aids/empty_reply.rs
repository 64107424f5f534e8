//! [`AskAfterEmptyReply`]: one request for the answer after a reply that tells nothing.

use std::collections::HashSet;

use serde_json::Value;

use super::{ANSWER_FROM_RESULT, Aid, Feedback, ReplyAction, RunView, prose};
use crate::model::Message;
use crate::tool::TOOL_SEARCH;

/// Asks once for the answer when a reply has neither text nor a call, when it is only the
/// name of a tool that has already answered (an echo), or when it names a tool that answered
/// and holds none of the values that answer brought into the conversation (the call told
/// again instead of its answer). Once a tool has answered without error the request points
/// at its answer; before, it asks for the answer or for word that it cannot be done. In
/// `small_model`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AskAfterEmptyReply;

/// The request sent when no tool has answered yet.
const EMPTY_REPLY: &str = "Answer the user now in plain text. If you could not do what they asked, tell them so.";

/// A string longer than this is not a value an answer quotes (a body of text, a description):
/// it neither makes a result's answer nor is looked for in a reply.
const MAX_VALUE_CHARS: usize = 80;

/// A reply longer than this is not read for a restatement: a restated call is a sentence or
/// two, and the check must stay cheap beside a 100 kB result.
const MAX_REPLY_BYTES: usize = 8 * 1024;

/// At most this many distinct values of one result are looked for.
const MAX_VALUES: usize = 256;

#[async_trait::async_trait]
impl Aid for AskAfterEmptyReply {
    fn name(&self) -> &'static str {
        "ask_after_empty_reply"
    }

    async fn on_reply(&self, view: &RunView<'_>, reply: &str) -> ReplyAction {
        if view.feedback_sent(self.name()) > 0 {
            return ReplyAction::Accept;
        }
        let offered: Vec<&str> = view.offered().collect();
        let echo = prose::bare_name(reply, &offered).is_some_and(|name| view.ran_ok(name));
        if !(reply.trim().is_empty() || echo || restates_a_call_that_ran(view, reply)) {
            return ReplyAction::Accept;
        }
        let answered = view
            .messages()
            .iter()
            .any(|m| matches!(m, Message::Tool { name, is_error: false, .. } if name != TOOL_SEARCH && view.tool(name).is_some()));
        ReplyAction::Feedback(Feedback::new(if answered { ANSWER_FROM_RESULT } else { EMPTY_REPLY }))
    }
}

/// Whether `answer` names a tool whose successful results brought values into the
/// conversation (no user message and no call's arguments held them) and holds none of them: a
/// restatement of the call, not its answer. `false` when the reply tells any such value,
/// names no tool that answered, or the results brought nothing new.
fn restates_a_call_that_ran<'v>(view: &'v RunView<'_>, answer: &str) -> bool {
    let messages = view.messages();
    let named = |message: &'v Message| match message {
        Message::Tool { name, content, is_error: false, .. }
            if name != TOOL_SEARCH && view.tool(name).is_some() && prose::mentions(answer, name) =>
        {
            Some(content.as_str())
        }
        _ => None,
    };
    if answer.len() > MAX_REPLY_BYTES || !messages.iter().any(|message| named(message).is_some()) {
        return false;
    }
    let mut known = String::new();
    for message in messages {
        match message {
            Message::User { content } => known.push_str(&content.to_lowercase()),
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    known.push_str(&call.arguments.to_lowercase());
                }
            }
            _ => {}
        }
        known.push('\n');
    }
    let reply = answer.to_lowercase();
    let reply_without_commas = reply.replace(',', "");
    let told = |value: &str| reply.contains(value) || reply_without_commas.contains(value);
    let mut restated = false;
    for content in messages.iter().filter_map(named) {
        let new: Vec<String> = result_values(content).into_iter().filter(|value| !known.contains(value)).collect();
        if new.iter().any(|value| told(value)) {
            return false;
        }
        restated |= !new.is_empty();
    }
    restated
}

/// The values of a tool's result, in lower case: the strings (of 2 to 80 characters) and
/// numbers of its JSON, read from its first `{` or `[` (a note may come before it); of a
/// result that is not JSON, its words of three letters or more ("eggs, oat milk" gives `eggs`,
/// `oat`, `milk`); each once, at most 256.
fn result_values(content: &str) -> Vec<String> {
    let value = |leaf: &Value| match leaf {
        Value::String(text) => {
            let text = text.trim();
            (2..=MAX_VALUE_CHARS).contains(&text.chars().count()).then(|| text.to_lowercase())
        }
        other => Some(other.to_string()),
    };
    let json = content
        .find(['{', '['])
        .and_then(|start| serde_json::Deserializer::from_str(&content[start..]).into_iter::<Value>().next())
        .and_then(Result::ok);
    let mut values = Vec::new();
    match json {
        Some(json) => values.extend(scalars(&json).into_iter().filter_map(value)),
        None => values.extend(
            content
                .split(|c: char| !c.is_alphanumeric())
                .filter(|word| word.chars().count() >= 3)
                .map(str::to_lowercase),
        ),
    }
    let mut seen = HashSet::new();
    values.retain(|value| seen.insert(value.clone()));
    values.truncate(MAX_VALUES);
    values
}

/// The strings and numbers in `value`, however deep, in order (booleans and nulls left out).
fn scalars(value: &Value) -> Vec<&Value> {
    fn walk<'v>(value: &'v Value, into: &mut Vec<&'v Value>) {
        match value {
            Value::String(_) | Value::Number(_) => into.push(value),
            Value::Array(items) => items.iter().for_each(|item| walk(item, into)),
            Value::Object(members) => members.values().for_each(|item| walk(item, into)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut into = Vec::new();
    walk(value, &mut into);
    into
}

#[cfg(test)]
mod tests {
    use super::result_values;

    #[test]
    fn a_results_values_are_its_short_strings_and_numbers_after_any_note() {
        let content = "`stock_quote` does not take `vs_currency`, so it ran without it:\n\
                       {\"currency\":\"USD\",\"extended_hours\":false,\"price\":685.83,\"trades\":[{\"size\":3}],\"note\":null}";
        assert_eq!(result_values(content), ["usd", "685.83", "3"]);
        assert_eq!(
            result_values("eggs, oat milk, coffee beans; 2 limes"),
            ["eggs", "oat", "milk", "coffee", "beans", "limes"]
        );
        let long = format!("{{\"body\": \"{}\", \"id\": \"x\"}}", "word ".repeat(30));
        assert!(result_values(&long).is_empty(), "a long text and a one-letter string are not values");
        let words: Vec<String> = (0..300).map(|i| format!("word{i} word{i}")).collect();
        let values = result_values(&words.join(" "));
        assert_eq!((values.len(), values[1].as_str()), (256, "word1"), "each once, at most 256");
    }
}
