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
use super::guard;
use crate::ToolSchema;
use crate::discovery::CatalogTool;
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
        if email || is_channel(token) {
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

/// Whether `token` is a `#channel`: `#` and a name with a letter (`#design-team`, not `#57`).
fn is_channel(token: &str) -> bool {
    token.strip_prefix('#').is_some_and(|name| {
        name.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') && name.chars().any(char::is_alphabetic)
    })
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
    match serde_json::from_str::<Value>(arguments) {
        Ok(value) => scalars(&value)
            .into_iter()
            .map(|leaf| match leaf {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect(),
        Err(_) => vec![arguments.to_owned()],
    }
}

/// The strings and numbers in `value`, however deep, in order (booleans and nulls left out).
pub(super) fn scalars(value: &Value) -> Vec<&Value> {
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

/// The word a parameter that takes `value` has in its name or description: "channel" for a
/// `#channel`, "email" for an email address; `None` for a quoted phrase, which any text
/// parameter may take.
fn kind_of(value: &str) -> Option<&'static str> {
    if value.starts_with('#') {
        Some("channel")
    } else if bare(value).contains('@') {
        Some("email")
    } else {
        None
    }
}

/// Whether a top-level parameter of `parameters` names or describes one of `kinds`; a
/// description that shows a `#channel` (`"in:#ops from:@dana"`, a search's modifiers) takes
/// the channel kind too.
fn takes_kind(parameters: &Value, kinds: &[&str]) -> bool {
    let Some(properties) = parameters.get("properties").and_then(Value::as_object) else {
        return false;
    };
    properties.iter().any(|(name, property)| {
        let description = property.get("description").and_then(Value::as_str).unwrap_or_default();
        let text = format!("{name} {description}").to_lowercase();
        let shows_channel =
            || description.split(|c: char| !(c.is_alphanumeric() || matches!(c, '#' | '-' | '_'))).any(is_channel);
        kinds.iter().any(|kind| text.contains(kind) || *kind == "channel" && shows_channel())
    })
}

impl Run<'_> {
    /// The question for a run about to end, in which a call other than `tool_search` has run
    /// without error, with a value of the user's request (the last user message when the run
    /// started, not a request of the loop guard's) that no call since (other than
    /// `tool_search`) has used, with how many are left; `None` when every value
    /// went into a call, or when there is no tool to name ([`Run::next_tools`]): with 41 tools
    /// declared and none named, Qwen2.5-Coder-1.5B answered the question in prose. Also the
    /// names of the tools it names.
    pub(super) async fn unused_values_question(&mut self) -> Option<(String, usize, Vec<String>)> {
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
        // Whether a call other than `tool_search` ran without error: a first step done. Measured
        // on Qwen2.5-Coder-1.5B: after a failed `read_note` and two searches it had apologised
        // for "lee@acme.com needs to be able to edit f_310"; asked, it emailed lee@acme.com.
        let mut done = false;
        for message in &self.transcript.messages[start..] {
            match message {
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls.iter().filter(|call| call.name != TOOL_SEARCH) {
                        arguments.extend(leaves(&call.arguments));
                        called.push(call.name.clone());
                    }
                }
                Message::Tool { name, is_error: false, .. } if name != TOOL_SEARCH => done = true,
                _ => {}
            }
        }
        let left = unused(&values, &arguments);
        if !done || left.is_empty() {
            return None;
        }
        let count = left.len();
        let have = if count == 1 { "has" } else { "have" };
        let said = format!("{} from my request {have} not gone into any call yet.", guard::listed(&left));
        let kinds: Vec<&str> = left.iter().filter_map(|value| kind_of(value)).collect();
        let named = self.next_tools(&request, &called, &kinds).await;
        if named.is_empty() {
            return None;
        }
        let mut text = format!("{said} If my request still needs a call, make it now.\nNow callable:");
        for schema in &named {
            text.push_str(&format!("\n`{}` takes: {}", schema.name, type_signature(&schema.parameters)));
        }
        Some((text, count, named.into_iter().map(|schema| schema.name).collect()))
    }

    /// The tools the question names: deferred tools no call has used, none destructive, that
    /// take the unused values' kind ([`takes_kind`]: a parameter about a "channel" for a
    /// `#channel`, an "email" for an address), are of the family of a tool the run called, or
    /// were already promoted (so past the floor for some message); of those, the ones the request ranks at
    /// all among them, in that order: the kind's first, then kin, each group as the request
    /// ranks them; at most [`NAMED_TOOLS`], and those not yet declared promoted. None while
    /// discovery is off.
    ///
    /// The candidates are ranked among themselves, not found in a ranking of the whole
    /// catalogue: that one returns only its best `max_limit` hits. Measured on
    /// Qwen2.5-Coder-1.5B at 1,041 tools: with `docs_create_document` called for "... let
    /// ben@acme.com edit it", `drive_share_file` fell outside them and the question named a
    /// promoted `slack_post_message` (`crm_log_call` with BM25 alone); with `stock_quote`
    /// called for "Post what GLOBX is trading at in #markets", the question named its kin
    /// `crypto_price` (the model then wrote a post about BTC) — `slack_post_message`, the one
    /// tool with a channel, was neither kin nor promoted.
    /// And after a search had led it to `unit_convert` for "lee@acme.com needs to be able to
    /// edit f_310", the family rule without the ranking named `news_headlines` and
    /// `translate_text`, and it called one.
    async fn next_tools(&mut self, request: &str, called: &[String], kinds: &[&str]) -> Vec<ToolSchema> {
        let pre = self.agent.policy.discovery.pre_promotion;
        if !pre.enabled || !self.bridge.is_active() {
            return Vec::new();
        }
        let registry = &self.agent.registry;
        let families: Vec<&str> = called.iter().filter_map(|name| registry.get(name)?.family()).collect();
        let kin = |tool: &CatalogTool| tool.family().is_some_and(|family| families.contains(&family));
        let promoted = |name: &str| self.promoted.iter().any(|schema| schema.name == name);
        let fits = |tool: &CatalogTool| takes_kind(&tool.schema().parameters, kinds);
        let candidates = self.bridge.catalog().subset(|tool| {
            let name = tool.schema().name.as_str();
            !called.iter().any(|c| c == name)
                && registry.get(name).is_some_and(|tool| !tool.annotations().destructive)
                && (kin(tool) || promoted(name) || fits(tool))
        });
        if candidates.is_empty() {
            return Vec::new();
        }
        let outcome = candidates.rank(self.bridge.policy(), request, candidates.len()).await;
        // The request's order, those it shares nothing with left out; those that take the
        // value's kind first, then kin.
        let mut ranked: Vec<(bool, bool, usize, &str)> = outcome
            .matched
            .iter()
            .enumerate()
            .filter(|(_, hit)| hit.confidence.is_some_and(|c| c > 0.0))
            .filter_map(|(rank, hit)| {
                let tool = candidates.get(&hit.name)?;
                Some((!fits(tool), !kin(tool), rank, hit.name.as_str()))
            })
            .collect();
        ranked.sort();
        let named: Vec<ToolSchema> =
            ranked.iter().filter_map(|(_, _, _, name)| self.bridge.prepared_schema(name)).take(NAMED_TOOLS).collect();
        let new: Vec<ToolSchema> = named.iter().filter(|schema| !promoted(&schema.name)).cloned().collect();
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

    #[test]
    fn a_parameter_takes_a_kind_by_its_name_its_description_or_a_channel_it_shows() {
        let takes = |name: &str, description: &str, kinds: &[&str]| {
            takes_kind(
                &serde_json::json!({"properties": {name: {"type": "string", "description": description}}}),
                kinds,
            )
        };
        assert!(takes("channel", "Where to post.", &["channel"]));
        assert!(takes("to", "Recipient email address.", &["email"]));
        assert!(takes("query", "Search terms, Slack modifiers allowed (\"in:#ops from:@dana\").", &["channel"]));
        assert!(!takes("query", "Search terms, Slack modifiers allowed (\"in:#ops from:@dana\").", &["email"]));
        for description in ["Issue number, such as #57.", "Code in C# or F#.", "Search terms."] {
            assert!(!takes("query", description, &["channel"]), "{description}");
        }
    }
}
