//! [`AskAboutUnusedValues`]: values the user's request spelt out that no call has used.

use serde_json::Value;

use super::{Aid, Feedback, ReplyAction, RunView, listed};
use crate::ToolSchema;
use crate::discovery::CatalogTool;
use crate::model::Message;
use crate::tool::{TOOL_SEARCH, type_signature};

/// The longest quoted phrase taken for a value, in characters.
const MAX_QUOTED_CHARS: usize = 80;

/// How many tools the question names at most.
const NAMED_TOOLS: usize = 2;

/// The literal values of a user message, as written: quoted phrases (`'Team sync'`,
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
pub(crate) fn scalars(value: &Value) -> Vec<&Value> {
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

/// Asks once, when a run that has called a tool is about to end, whether a call still needs a
/// value the user's request spelt out (a quoted phrase, an email address, a `#channel`) that
/// no call has used, naming (and promoting) up to two deferred tools that may take it, with
/// their signatures. Asked only once a call other than `tool_search` has run without error,
/// never at the last turn, and only while discovery is on (with nothing to name it is not
/// asked). The question is the run's, not the user's: it reopens nothing the model decided,
/// and a call the model makes after it runs only as any call would. In no preset: opt-in by name (`docs/aids.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AskAboutUnusedValues;

#[async_trait::async_trait]
impl Aid for AskAboutUnusedValues {
    fn name(&self) -> &'static str {
        "ask_about_unused_values"
    }

    async fn on_reply(&self, view: &RunView<'_>, _reply: &str) -> ReplyAction {
        let (turn, max_turns) = view.turn();
        if view.feedback_sent(self.name()) > 0 || turn >= max_turns {
            return ReplyAction::Accept;
        }
        match question(view).await {
            Some((text, named)) => ReplyAction::Feedback(Feedback::new(text).promoting(named)),
            None => ReplyAction::Accept,
        }
    }
}

/// The question, and the tools it names; `None` when every value of the request went into a
/// call, no call other than `tool_search` has run without error, or there is no tool to name.
async fn question(view: &RunView<'_>) -> Option<(String, Vec<String>)> {
    let request = view.request()?;
    let messages = view.messages();
    let start = messages.iter().rposition(|m| matches!(m, Message::User { content } if content == request))?;
    let values = literal_values(request);
    if values.is_empty() {
        return None;
    }
    let (mut arguments, mut called, mut done) = (Vec::new(), Vec::new(), false);
    for message in &messages[start..] {
        match message {
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls.iter().filter(|call| call.name != TOOL_SEARCH) {
                    arguments.extend(leaves(&call.arguments));
                    called.push(call.name.clone());
                }
            }
            Message::Tool { name, is_error: false, .. } if name != TOOL_SEARCH && view.tool(name).is_some() => {
                done = true;
            }
            _ => {}
        }
    }
    let left = unused(&values, &arguments);
    if !done || left.is_empty() {
        return None;
    }
    let have = if left.len() == 1 { "has" } else { "have" };
    let kinds: Vec<&str> = left.iter().filter_map(|value| kind_of(value)).collect();
    let named = next_tools(view, request, &called, &kinds).await;
    if named.is_empty() {
        return None;
    }
    let mut text = format!(
        "{} from the user's request {have} not gone into any call. If the request still needs a call for it, make \
         that call; if not, answer the user.\nCallable now:",
        listed(&left)
    );
    for schema in &named {
        text.push_str(&format!("\n`{}` takes: {}", schema.name, type_signature(&schema.parameters)));
    }
    Some((text, named.into_iter().map(|schema| schema.name).collect()))
}

/// The tools the question names: deferred tools no call has used, none destructive, that take
/// the unused values' kind ([`takes_kind`]), are of the family of a tool the run called, or
/// were already promoted; of those, the ones the request ranks at all among them, the kind's
/// first, then kin, each group as the request ranks them; at most [`NAMED_TOOLS`]. The
/// candidates are ranked among themselves: a ranking of the whole catalogue returns only its
/// best hits. None while discovery or pre-promotion is off.
async fn next_tools(view: &RunView<'_>, request: &str, called: &[String], kinds: &[&str]) -> Vec<ToolSchema> {
    if !view.discovery().pre_promotion.enabled || !view.discovery_active() {
        return Vec::new();
    }
    let families: Vec<&str> = called.iter().filter_map(|name| view.tool(name)?.spec().family.as_deref()).collect();
    let kin = |tool: &CatalogTool| tool.family().is_some_and(|family| families.contains(&family));
    let promoted = |name: &str| view.promoted().iter().any(|schema| schema.name == name);
    let fits = |tool: &CatalogTool| takes_kind(&tool.schema().parameters, kinds);
    let candidates = view.catalog().subset(|tool| {
        let name = tool.schema().name.as_str();
        !called.iter().any(|c| c == name)
            && view.tool(name).is_some_and(|tool| !tool.spec().annotations.destructive)
            && (kin(tool) || promoted(name) || fits(tool))
    });
    if candidates.is_empty() {
        return Vec::new();
    }
    let outcome = candidates.rank(view.discovery(), request, candidates.len()).await;
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
    ranked.iter().filter_map(|(_, _, _, name)| view.prepared_schema(name)).take(NAMED_TOOLS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_phrases_emails_and_channels_are_values() {
        let values = literal_values(
            "Find a gap when ana@example.com and Bo@example.com are free, and book it as 'Team sync'; post it in \
             #design-team (not #57), then \"Launch\" it. I'll be late: it's Tom's call.",
        );
        assert_eq!(values, ["'Team sync'", "\"Launch\"", "ana@example.com", "Bo@example.com", "#design-team"]);
        assert_eq!(literal_values("Call it 'Tom's notes' please"), ["'Tom's notes'"]);
        assert_eq!(
            literal_values("“Offsite” and ‘Q3 plan’, and 'ana@example.com'."),
            ["“Offsite”", "‘Q3 plan’", "'ana@example.com'"]
        );
        for text in ["What's 15% of 2,340?", "It's Sydney, isn't it?", "a ' b ' c", "@here and x@y and a@b."] {
            assert!(literal_values(text).is_empty(), "{text}: {:?}", literal_values(text));
        }
        let long = format!("'{}'", "word ".repeat(20).trim_end());
        assert!(literal_values(&long).is_empty(), "a quoted passage longer than a value");
    }

    #[test]
    fn a_value_is_used_when_an_argument_holds_it_in_any_case() {
        let values = literal_values("Book 'Team sync' with ana@example.com and post in #markets.");
        let call = leaves(r#"{"title": "team SYNC", "attendees": ["Ana@Example.com"], "n": 3}"#);
        assert_eq!(unused(&values, &call), ["#markets"]);
        assert_eq!(
            unused(&values, &leaves(r#"{"channel": "markets", "text": "Team sync with ana@example.com"}"#)),
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
