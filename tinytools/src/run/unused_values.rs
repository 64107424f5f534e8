//! Values the user's request spelt out that no call has used: a run about to end with one
//! left over is asked once whether a call still needs it (`LoopGuard::ask_about_unused_values`).
//!
//! Measured on Qwen2.5-Coder-1.5B: asked to find a free slot "and book the earliest one as
//! 'Design sync'", it looked the slots up and answered "Book the earliest slot, which is 10:00,
//! as 'Design sync' with Priya and Tom." — the second step restated, not made. Told that
//! 'Design sync' had gone into no call, with the booking tool's signature, it made the call.

use serde_json::Value;

use super::agent::Run;
use super::events::Promotion;
use crate::ToolSchema;
use crate::model::Message;
use crate::tool::{TOOL_SEARCH, type_signature};

/// The longest quoted phrase taken for a value, in characters.
const MAX_QUOTED_CHARS: usize = 80;

/// How many tools the question names at most.
const NAMED_TOOLS: usize = 2;

/// The literal values of a user message, as written: quoted phrases (`'Design sync'`,
/// `"Q3 plan"`, `“Offsite”`), email addresses and `#channel`s — what a request names to be
/// put somewhere. Each once, in order.
pub(crate) fn literal_values(text: &str) -> Vec<String> {
    let mut values: Vec<String> = quoted(text);
    for token in text.split_whitespace() {
        let token = token.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#' || c == '@'));
        let email = token.split_once('@').is_some_and(|(user, domain)| {
            !user.is_empty() && domain.contains('.') && !domain.contains('@') && !domain.ends_with('.')
        });
        let channel = token.strip_prefix('#').is_some_and(|name| {
            name.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') && name.chars().any(char::is_alphabetic)
        });
        if email || channel {
            values.push(token.to_owned());
        }
    }
    let mut seen: Vec<String> = Vec::new();
    values.retain(|value| {
        let key = bare(value);
        let fresh = !key.is_empty() && !seen.contains(&key);
        seen.push(key);
        fresh
    });
    values
}

/// Quoted phrases with their quotes: an opening quote at the start or after a space or
/// bracket, its closing one followed by the end, a space or punctuation (so "Tom's notes" in
/// `'Tom's notes'` stays whole, and "I'll" opens nothing).
fn quoted(text: &str) -> Vec<String> {
    const PAIRS: [(char, char); 4] = [('\'', '\''), ('"', '"'), ('“', '”'), ('‘', '’')];
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let opens = i == 0 || chars[i - 1].is_whitespace() || matches!(chars[i - 1], '(' | '[' | ':');
        let Some(&(_, close)) = PAIRS.iter().find(|(open, _)| *open == chars[i]).filter(|_| opens) else {
            i += 1;
            continue;
        };
        let end = (i + 2..chars.len()).find(|&j| {
            chars[j] == close
                && !chars[j - 1].is_whitespace()
                && chars.get(j + 1).is_none_or(|next| next.is_whitespace() || next.is_ascii_punctuation())
        });
        match end {
            Some(j) if j - i - 1 <= MAX_QUOTED_CHARS && !chars[i + 1].is_whitespace() => {
                found.push(chars[i..=j].iter().collect());
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// A value as compared with the arguments: without its quotes or a channel's `#`, in lower case.
fn bare(value: &str) -> String {
    value.trim_matches(['\'', '"', '“', '”', '‘', '’', '#']).to_lowercase()
}

/// The values of `text` that none of `arguments` holds (compared in lower case, without
/// quotes or `#`).
pub(crate) fn unused<'a>(values: &'a [String], arguments: &[String]) -> Vec<&'a str> {
    let arguments: Vec<String> = arguments.iter().map(|text| text.to_lowercase()).collect();
    values
        .iter()
        .filter(|value| !arguments.iter().any(|text| text.contains(&bare(value))))
        .map(String::as_str)
        .collect()
}

/// Every string and number in a call's arguments (the whole text when it is not JSON).
fn leaves(arguments: &str) -> Vec<String> {
    fn walk(value: &Value, into: &mut Vec<String>) {
        match value {
            Value::String(text) => into.push(text.clone()),
            Value::Number(number) => into.push(number.to_string()),
            Value::Array(items) => items.iter().for_each(|item| walk(item, into)),
            Value::Object(members) => members.values().for_each(|item| walk(item, into)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut into = Vec::new();
    match serde_json::from_str::<Value>(arguments) {
        Ok(value) => walk(&value, &mut into),
        Err(_) => into.push(arguments.to_owned()),
    }
    into
}

impl Run<'_> {
    /// The question for a run about to end with a value of the user's request (the last user
    /// message when the run started, not a request of the loop guard's) that no call since
    /// (other than `tool_search`) has used, with how many are left; `None` when every value
    /// went into a call, or when there is no tool to name ([`Run::next_tools`]): with 41 tools
    /// declared and none named, Qwen2.5-Coder-1.5B answered the question in prose.
    pub(super) async fn unused_values_question(&mut self) -> Option<(String, usize)> {
        let request = self.request.clone()?;
        let start = self
            .transcript
            .messages
            .iter()
            .rposition(|message| matches!(message, Message::User { content } if *content == request))?;
        let values = literal_values(&request);
        if values.is_empty() {
            return None;
        }
        let mut arguments = Vec::new();
        let mut called = Vec::new();
        for message in &self.transcript.messages[start..] {
            if let Message::Assistant { tool_calls, .. } = message {
                for call in tool_calls.iter().filter(|call| call.name != TOOL_SEARCH) {
                    arguments.extend(leaves(&call.arguments));
                    called.push(call.name.clone());
                }
            }
        }
        let left = unused(&values, &arguments);
        if called.is_empty() || left.is_empty() {
            return None;
        }
        let count = left.len();
        let left = match left.as_slice() {
            [one] => format!("{one} from my request has not gone into any call yet."),
            [first @ .., last] => {
                format!("{} and {last} from my request have not gone into any call yet.", first.join(", "))
            }
            [] => return None,
        };
        let named = self.next_tools(&request, &called).await;
        if named.is_empty() {
            return None;
        }
        let mut text = format!("{left} If my request still needs a call, make it now.\nNow callable:");
        for schema in &named {
            text.push_str(&format!("\n`{}` takes: {}", schema.name, type_signature(&schema.parameters)));
        }
        Some((text, count))
    }

    /// The tools the question names: deferred tools no call has used, none destructive, that
    /// the request ranks at all, of the family of a tool the run called or already promoted
    /// (so past the floor for some message), those of a called tool's family first, each group
    /// in the order the request ranks them; at most [`NAMED_TOOLS`], and those not yet declared
    /// promoted. None while discovery is off. Measured on Qwen2.5-Coder-1.5B: after a search
    /// had led it to `unit_convert` for "lee@acme.com needs to be able to edit f_310", the
    /// family rule alone named `news_headlines` and `translate_text`, and it called one. Measured over the example catalogue: ranked alone, "make me a doc
    /// called 'Launch checklist' and let ben@acme.com edit it" puts `slack_post_message` and
    /// `crm_log_call` above `drive_share_file`.
    async fn next_tools(&mut self, request: &str, called: &[String]) -> Vec<ToolSchema> {
        let pre = self.agent.policy.discovery.pre_promotion;
        if !pre.enabled || !self.bridge.is_active() {
            return Vec::new();
        }
        let registry = &self.agent.registry;
        let families: Vec<&str> = called.iter().filter_map(|name| registry.get(name)?.family()).collect();
        let catalog = self.bridge.catalog();
        let outcome = catalog.rank(self.bridge.policy(), request, catalog.len()).await;
        // Where the request ranks a tool; `None` when it shares nothing with it.
        let rank_of = |name: &str| {
            outcome.matched.iter().position(|hit| hit.name == name && hit.confidence.is_some_and(|c| c > 0.0))
        };
        let mut candidates: Vec<(bool, usize, &str)> = catalog
            .iter()
            .map(|tool| tool.schema().name.as_str())
            .filter(|name| !called.iter().any(|c| c == name))
            .filter_map(|name| {
                let tool = registry.get(name)?;
                let kin = tool.family().is_some_and(|family| families.contains(&family));
                let promoted = self.promoted.iter().any(|schema| schema.name == name);
                let rank = rank_of(name)?;
                (!tool.annotations().destructive && (kin || promoted)).then_some((!kin, rank, name))
            })
            .collect();
        candidates.sort();
        let named: Vec<ToolSchema> =
            candidates.iter().filter_map(|(_, _, name)| self.bridge.prepared_schema(name)).take(NAMED_TOOLS).collect();
        let new: Vec<ToolSchema> =
            named.iter().filter(|schema| !self.promoted.iter().any(|tool| tool.name == schema.name)).cloned().collect();
        let confidences = new
            .iter()
            .map(|schema| {
                outcome.matched.iter().find(|hit| hit.name == schema.name).and_then(|hit| hit.confidence).unwrap_or(0.0)
            })
            .collect();
        let cause = Promotion::AfterToolResult { ranker: outcome.ranker, confidences, fallback: outcome.fallback };
        self.promote(new, cause);
        named
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_phrases_emails_and_channels_are_values() {
        let values = literal_values(
            "Find a gap when priya@acme.com and Tom@acme.com are free, and book it as 'Design sync'; post it in \
             #design-team (not #57), then \"Launch\" it. I'll be late: it's Tom's call.",
        );
        assert_eq!(values, ["'Design sync'", "\"Launch\"", "priya@acme.com", "Tom@acme.com", "#design-team"]);
        assert_eq!(literal_values("Call it 'Tom's notes' please"), ["'Tom's notes'"]);
        assert_eq!(
            literal_values("“Offsite” and ‘Q3 plan’, and 'priya@acme.com'."),
            ["“Offsite”", "‘Q3 plan’", "'priya@acme.com'"]
        );
        for text in ["What's 15% of 2,340?", "It's Sydney, isn't it?", "a ' b ' c", "@here and x@y and a@b."] {
            assert!(literal_values(text).is_empty(), "{text}: {:?}", literal_values(text));
        }
        let long = format!("'{}'", "word ".repeat(20).trim_end());
        assert!(literal_values(&long).is_empty(), "a quoted passage longer than a value");
    }

    #[test]
    fn a_value_is_used_when_an_argument_holds_it_in_any_case() {
        let values = literal_values("Book 'Design sync' with priya@acme.com and post in #markets.");
        let call = leaves(r#"{"title": "design SYNC", "attendees": ["Priya@Acme.com"], "n": 3}"#);
        assert_eq!(unused(&values, &call), ["#markets"]);
        assert_eq!(
            unused(&values, &leaves(r#"{"channel": "markets", "text": "Design sync with priya@acme.com"}"#)),
            Vec::<&str>::new()
        );
        assert_eq!(leaves("not json"), ["not json"]);
    }
}
