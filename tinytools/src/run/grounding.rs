//! The grounding gate: a call whose [grounded](crate::Grounding) argument (the tool author's
//! opt-in) holds a value the conversation never gave is refused before the tool runs, and the
//! model is told where the value comes from.

use serde_json::Value;

use crate::model::Message;
use crate::surface::Surface;
use crate::tool::{TOOL_SEARCH, appears_in, grounded_values, spelled_in};
use crate::{ToolExposure, ToolRegistry, ToolResult};

/// How much of an invented value the refusal quotes back.
const MAX_QUOTED_CHARS: usize = 80;

/// The texts a grounded value may be copied from: the user's messages and the results of
/// calls that ran without error (never `tool_search`'s, never a refusal). Kept apart from the
/// transcript, which context shrinking may cut.
#[derive(Debug, Default)]
pub(super) struct Grounds {
    /// `(None, text)` for a user message, `(Some(tool), text)` for a tool result.
    texts: Vec<(Option<String>, String)>,
}

impl Grounds {
    /// The grounds a conversation already holds.
    pub(super) fn of(messages: &[Message]) -> Self {
        let mut grounds = Self::default();
        for message in messages {
            match message {
                Message::User { content } => grounds.texts.push((None, content.clone())),
                Message::Tool { name, content, is_error: false, .. } => grounds.record(name, content),
                _ => {}
            }
        }
        grounds
    }

    /// A result of `tool` that ran without error.
    pub(super) fn record(&mut self, tool: &str, text: &str) {
        if tool != TOOL_SEARCH {
            self.texts.push((Some(tool.to_owned()), text.to_owned()));
        }
    }

    /// Whether `value` appears in a user message or in a result of one of `sources` (any
    /// tool's, with no sources).
    fn hold(&self, value: &str, sources: &[&str]) -> bool {
        self.counting(sources).any(|text| appears_in(value, text))
    }

    /// How the texts that count spell `value` when they hold it only in other letter case.
    fn spelling(&self, value: &str, sources: &[&str]) -> Option<String> {
        self.counting(sources).find_map(|text| spelled_in(value, text)).map(str::to_owned)
    }

    /// The texts that may supply a value of one of `sources` (any tool's, with no sources).
    fn counting<'a>(&'a self, sources: &'a [&str]) -> impl Iterator<Item = &'a str> {
        self.texts.iter().filter_map(move |(tool, text)| {
            let counts = tool.as_ref().is_none_or(|tool| sources.is_empty() || sources.contains(&tool.as_str()));
            counts.then_some(text.as_str())
        })
    }
}

/// A refused call: why (for the host's event), what the model reads, and the Deferred source
/// tools to promote.
pub(super) struct Ungrounded {
    pub(super) reason: String,
    pub(super) answer: ToolResult,
    pub(super) promote: Vec<String>,
}

/// What the gate reads besides the grounds: the tool's declaration and the run's surface.
pub(super) struct Gate<'r> {
    pub(super) registry: &'r ToolRegistry,
    pub(super) surface: &'r Surface,
    /// Whether `tool_search` is on, for the refusal's advice.
    pub(super) discovery: bool,
}

impl Grounds {
    /// The refusal of a call to `name` whose grounded argument holds a value the run's grounds
    /// do not; `None` when every grounded value is found (or the tool declares none).
    pub(super) fn refusal(&self, gate: &Gate<'_>, name: &str, arguments: &str) -> Option<Ungrounded> {
        let grounding = gate.surface.get(name)?.spec().grounding;
        if grounding.is_empty() {
            return None;
        }
        let args: Value = serde_json::from_str(arguments).ok()?;
        let surface = gate.surface;
        for rule in grounding {
            // A source the run cannot offer could never have answered: it is not asked for,
            // and never named.
            let sources: Vec<&str> = rule.sources.iter().copied().filter(|s| surface.exposure(s).is_some()).collect();
            let Some(value) = grounded_values(&args, rule.argument).into_iter().find(|v| !self.hold(v, &sources))
            else {
                continue;
            };
            let quoted: String = value.chars().take(MAX_QUOTED_CHARS).collect();
            let argument = rule.argument;
            // A value copied in other letter case is told its spelling, not sent to look it up.
            if let Some(spelling) = self.spelling(&value, &sources) {
                let text = format!(
                    "`{argument}` \"{quoted}\" is not spelled as in this conversation, which has \"{spelling}\". \
                     Values are case-sensitive: call `{name}` again with `{argument}` \"{spelling}\", exactly as \
                     written there."
                );
                let reason = format!("ungrounded `{argument}`: its value is in the conversation in other letter case");
                return Some(Ungrounded { reason, answer: ToolResult::error(text), promote: Vec::new() });
            }
            // An optional guess is best left out.
            let optional = !required(gate.registry.get(name)?.schema(), argument);
            let text =
                refusal_text(Refused { argument, quoted: &quoted, name, sources: &sources, optional }, gate.discovery);
            // An optional guess is left out, not looked up: its sources are not promoted.
            let promote = sources
                .iter()
                .filter(|s| !optional && surface.exposure(s) == Some(ToolExposure::Deferred))
                .map(|s| (*s).to_owned())
                .collect();
            let reason = if sources.is_empty() {
                format!("ungrounded `{argument}`: no user message or accepted tool result holds its value")
            } else {
                format!(
                    "ungrounded `{argument}`: no user message or accepted result of {} holds its value",
                    sources.join(", ")
                )
            };
            return Some(Ungrounded { reason, answer: ToolResult::error(text), promote });
        }
        None
    }
}

/// What a refused call is wrong about: its tool, the grounded argument and its value (quoted,
/// cut), the tools whose results could hold it, and whether the argument is optional.
struct Refused<'a> {
    argument: &'a str,
    quoted: &'a str,
    name: &'a str,
    sources: &'a [&'a str],
    optional: bool,
}

/// The refusal the model reads: where the value should have come from and what to do instead
/// (leave an optional guess out; look a required one up or ask the user).
fn refusal_text(refused: Refused<'_>, discovery: bool) -> String {
    let Refused { argument, quoted, name, sources, optional } = refused;
    match (sources, optional) {
        ([], false) => {
            let look_up = if discovery {
                "Look it up with a tool first (`tool_search` finds one)"
            } else {
                "Look it up with a tool first"
            };
            format!(
                "`{argument}` \"{quoted}\" appears neither in the user's words nor in any tool result of \
                 this conversation, and `{name}` needs the real value, not a guess. {look_up}, or ask the \
                 user for it."
            )
        }
        ([], true) => format!(
            "`{argument}` \"{quoted}\" appears neither in the user's words nor in any tool result of this \
             conversation, so it is a guess. `{argument}` is optional: call `{name}` again without it. Only \
             if the request needs one, look it up with a tool first or ask the user for it."
        ),
        (named, _) => {
            let named: Vec<String> = named.iter().map(|s| format!("`{s}`")).collect();
            let (which, whom) = match named.as_slice() {
                [one] => (one.clone(), one.clone()),
                many => (many.join(" or "), "one of them".to_owned()),
            };
            let said = format!(
                "`{argument}` \"{quoted}\" is not in the user's words and was not returned by {which} in \
                 this conversation"
            );
            if optional {
                format!(
                    "{said}, so it is a guess. `{argument}` is optional: call `{name}` again without it. Only \
                     if the request needs one, call {whom} first and use the value from its result."
                )
            } else {
                format!(
                    "{said}, and `{name}` needs the real value, not a guess. Call {whom} first, then call `{name}` \
                     again with the value from its result."
                )
            }
        }
    }
}

/// Whether `schema` lists `argument` as required.
fn required(schema: &crate::ToolSchema, argument: &str) -> bool {
    schema.parameters.get("required").and_then(Value::as_array).is_some_and(|names| names.iter().any(|n| n == argument))
}
