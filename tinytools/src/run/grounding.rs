//! The grounding check ([`LoopGuard::require_grounding`](super::LoopGuard::require_grounding)):
//! a call whose [grounded](crate::Grounding) argument holds a value the conversation never
//! gave is refused before the tool runs, and the model is told where the value comes from; so
//! is a call to a tool with side effects whose argument holds a template placeholder
//! (`$<current-price>`) that the conversation never wrote.

use serde_json::Value;

use super::agent::Run;
use crate::model::Message;
use crate::tool::{Placeholder, TOOL_SEARCH, appears_in, grounded_values, placeholder_in, spelled_in};
use crate::{ToolExposure, ToolResult};

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
    /// For a placeholder, its words and the text around it (`current price: GLOBX is trading
    /// at $<current-price>`): what the missing value is, for the caller to rank against the
    /// deferred catalogue.
    pub(super) missing: Option<String>,
}

impl Run<'_> {
    /// [`Run::ungrounded`] when the run's loop guard asks for grounding; `strict` is the
    /// arguments as strict mode rewrote them, if it did.
    pub(super) fn grounding_refusal(&self, name: &str, strict: Option<&str>, raw: &str) -> Option<Ungrounded> {
        if !self.agent.policy.loop_guard.require_grounding {
            return None;
        }
        let arguments = strict.unwrap_or(raw);
        self.ungrounded(name, arguments).or_else(|| self.placeholder(name, arguments))
    }

    /// The refusal of a call to a tool with side effects whose argument holds a template
    /// placeholder that no user message or tool result holds. Measured on
    /// Qwen2.5-Coder-1.5B: asked to post a price it had not looked up, it posted
    /// "GLOBX is trading at $<current-price>" in every run.
    fn placeholder(&self, name: &str, arguments: &str) -> Option<Ungrounded> {
        if !self.agent.registry.get(name)?.annotations().has_side_effects() {
            return None;
        }
        let Placeholder { argument, hole: placeholder, context } =
            placeholder_in(&serde_json::from_str(arguments).ok()?)?;
        if self.grounds.counting(&[]).any(|text| text.contains(&placeholder)) {
            return None;
        }
        let with = if self.bridge.is_active() { " with a tool (`tool_search` finds one)" } else { " with a tool" };
        let text = format!(
            "`{argument}` holds the placeholder \"{placeholder}\", not a value, and `{name}` would use it as written. \
             Get the real value first{with}, then call `{name}` again with it in place of \"{placeholder}\"."
        );
        Some(Ungrounded {
            reason: format!("placeholder in `{argument}`: a template hole, not a value"),
            answer: ToolResult::error(text),
            promote: Vec::new(),
            missing: Some(missing_of(&placeholder, &context)),
        })
    }

    /// The refusal of a call to `name` whose grounded argument holds a value the run's grounds
    /// do not; `None` when every grounded value is found (or the tool declares none).
    pub(super) fn ungrounded(&self, name: &str, arguments: &str) -> Option<Ungrounded> {
        let grounding = self.agent.registry.get(name)?.spec().grounding;
        if grounding.is_empty() {
            return None;
        }
        let args: Value = serde_json::from_str(arguments).ok()?;
        let surface = self.bridge.surface();
        for rule in grounding {
            // A source the run cannot offer could never have answered: it is not asked for,
            // and never named.
            let sources: Vec<&str> = rule.sources.iter().copied().filter(|s| surface.exposure(s).is_some()).collect();
            let Some(value) =
                grounded_values(&args, rule.argument).into_iter().find(|v| !self.grounds.hold(v, &sources))
            else {
                continue;
            };
            let quoted: String = value.chars().take(MAX_QUOTED_CHARS).collect();
            let argument = rule.argument;
            // Measured: Qwen2.5-Coder-1.5B copied the user's `t_5530` as `T_5530`, and read
            // "call `gmail_search` first" as a reason to search for something else.
            if let Some(spelling) = self.grounds.spelling(&value, &sources) {
                let text = format!(
                    "`{argument}` \"{quoted}\" is not spelled as in this conversation, which has \"{spelling}\". \
                     Values are case-sensitive: call `{name}` again with `{argument}` \"{spelling}\", exactly as \
                     written there."
                );
                let reason = format!("ungrounded `{argument}`: its value is in the conversation in other letter case");
                return Some(Ungrounded {
                    reason,
                    answer: ToolResult::error(text),
                    promote: Vec::new(),
                    missing: None,
                });
            }
            // Measured: Qwen2.5-Coder-1.5B sent `slack_post_message` a `thread_ts` it had made
            // up, for a post the user wanted in the channel. Optional, the guess is best left out.
            let optional = !required(self.agent.registry.get(name)?.schema(), argument);
            let text = match (sources.as_slice(), optional) {
                ([], false) => {
                    let look_up = if self.bridge.is_active() {
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
            };
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
            return Some(Ungrounded { reason, answer: ToolResult::error(text), promote, missing: None });
        }
        None
    }
}

/// Whether `schema` lists `argument` as required.
fn required(schema: &crate::ToolSchema, argument: &str) -> bool {
    schema.parameters.get("required").and_then(Value::as_array).is_some_and(|names| names.iter().any(|n| n == argument))
}

/// The longest stretch of a placeholder's surrounding text that goes into the ranking query.
const MAX_CONTEXT_BYTES: usize = 200;

/// The query that finds what fills a placeholder: its words, then the text it sits in (at
/// most [`MAX_CONTEXT_BYTES`]). Measured with BM25 over the example catalogue: "current price"
/// alone ranks `crypto_price` above `stock_quote`, and the model took the first tool named;
/// with "GLOBX is trading at" beside it `stock_quote` comes first.
fn missing_of(placeholder: &str, context: &str) -> String {
    let words = placeholder.trim_matches(['<', '>']).replace(['-', '_'], " ");
    let mut end = context.len().min(MAX_CONTEXT_BYTES);
    while !context.is_char_boundary(end) {
        end -= 1;
    }
    format!("{words}: {}", &context[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_is_ranked_by_its_words_and_at_most_200_bytes_around_it() {
        assert_eq!(missing_of("<current-price>", "At $<current-price>"), "current price: At $<current-price>");
        assert_eq!(missing_of("<YOUR_EMAIL>", "<YOUR_EMAIL>"), "YOUR EMAIL: <YOUR_EMAIL>");
        // 'é' is two bytes: byte 200 falls inside one, and the cut steps back to a boundary.
        let long = format!("x{}", "é".repeat(150));
        let query = missing_of("<a-b>", &long);
        assert_eq!(query, format!("a b: x{}", "é".repeat(99)));
    }
}
