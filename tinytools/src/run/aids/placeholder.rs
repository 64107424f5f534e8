//! [`RefusePlaceholders`]: template placeholders in a call's arguments.
//!
//! `"ACME is trading at $<current-price>"` is a sentence with a hole the model meant to fill,
//! not a value.

use serde_json::Value;

use super::{Aid, CallAction, RunView};
use crate::ToolResult;
use crate::model::{Message, ToolCall};

/// Refuses, without running it, a call to a tool with side effects whose argument holds a
/// template placeholder (`<current-price>`, `$<price>`: words in `<` `>`, a single one not an
/// HTML element's name) that no user message or tool result holds: the answer names the hole,
/// and the deferred tools its words and the text around it rank to (past query-aware
/// discovery's floor) are named and promoted. A template the user asked for (`<first-name>` in
/// their own words) passes. In no preset: opt-in by name (`docs/aids.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefusePlaceholders;

/// The longest stretch of a placeholder's surrounding text that goes into the ranking query.
const MAX_CONTEXT_BYTES: usize = 200;

#[async_trait::async_trait]
impl Aid for RefusePlaceholders {
    fn name(&self) -> &'static str {
        "refuse_placeholders"
    }

    async fn on_call(&self, view: &RunView<'_>, call: &ToolCall) -> CallAction {
        if view.is_read_only(&call.name) || view.tool(&call.name).is_none() {
            return CallAction::Run;
        }
        let Some(Placeholder { argument, hole, context }) =
            serde_json::from_str(&call.arguments).ok().as_ref().and_then(placeholder_in)
        else {
            return CallAction::Run;
        };
        let grounded = view.messages().iter().any(|m| match m {
            Message::User { content } | Message::Tool { content, is_error: false, .. } => content.contains(&hole),
            _ => false,
        });
        if grounded {
            return CallAction::Run;
        }
        let name = &call.name;
        let with = if view.discovery_active() { " with a tool (`tool_search` finds one)" } else { " with a tool" };
        let mut text = format!(
            "`{argument}` holds the placeholder \"{hole}\", not a value, and `{name}` would use it as written. Get the \
             real value first{with}, then call `{name}` again with it in place of \"{hole}\"."
        );
        let found: Vec<String> =
            view.ranked(&missing_of(&hole, &context)).await.into_iter().map(|schema| schema.name).collect();
        if !found.is_empty() {
            let named: Vec<String> = found.iter().map(|name| format!("`{name}`")).collect();
            text.push_str(&format!("\nNow callable, and may give it: {}.", named.join(", ")));
        }
        CallAction::Answer { result: ToolResult::error(text), promote: found }
    }
}

/// The query that finds what fills a placeholder: its words, then the text it sits in (at
/// most [`MAX_CONTEXT_BYTES`]); the text around the hole ranks its sources better than the
/// hole's words alone.
fn missing_of(placeholder: &str, context: &str) -> String {
    let words = placeholder.trim_matches(['<', '>']).replace(['-', '_'], " ");
    let mut end = context.len().min(MAX_CONTEXT_BYTES);
    while !context.is_char_boundary(end) {
        end -= 1;
    }
    format!("{words}: {}", &context[..end])
}

/// The longest placeholder recognised, in bytes between its brackets.
const MAX_PLACEHOLDER_BYTES: usize = 40;

/// A template placeholder found in a call's arguments.
#[derive(Debug, PartialEq, Eq)]
struct Placeholder {
    /// The top-level argument that holds it.
    argument: String,
    /// The placeholder, brackets included: `<current-price>`.
    hole: String,
    /// The string it sits in (`ACME is trading at $<current-price>`): what the missing value
    /// is about, which ranks its sources better than the hole's words alone.
    context: String,
}

/// The first template placeholder among a call's arguments (strings at any depth count for
/// their top-level argument). A placeholder is `<` and `>` around words of ASCII letters and
/// digits joined by `-`, `_` or a space, the first starting with a letter: `<current-price>`,
/// `<message id>`, `<YOUR_EMAIL>`, `<price>`. A single word must have two characters or more
/// and not be an HTML element's name (`<b>`, `<br>`, `<div>` are markup); anything holding
/// other characters (`<@U123>`, `<https://x|link>`, `<a@b.com>`) or run into a letter or digit
/// on either side (`if a<b and c>d`, `Vec<String>`) is not one.
fn placeholder_in(args: &Value) -> Option<Placeholder> {
    let Value::Object(members) = args else {
        return None;
    };
    members.iter().find_map(|(argument, value)| {
        first_in(value).map(|(context, hole)| Placeholder {
            argument: argument.clone(),
            hole: hole.to_owned(),
            context: context.to_owned(),
        })
    })
}

/// The first placeholder in a value's strings, depth first, with the string it is in.
fn first_in(value: &Value) -> Option<(&str, &str)> {
    match value {
        Value::String(text) => in_text(text).map(|hole| (text.as_str(), hole)),
        Value::Array(items) => items.iter().find_map(first_in),
        Value::Object(members) => members.values().find_map(first_in),
        _ => None,
    }
}

/// The first placeholder of a text, brackets included.
fn in_text(text: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(open) = text[from..].find('<').map(|at| from + at) {
        let inner = &text[open + 1..];
        let free_before = !text[..open].ends_with(|c: char| c.is_alphanumeric());
        if let Some(close) = inner.find('>').filter(|&close| close <= MAX_PLACEHOLDER_BYTES)
            && free_before
            && !inner[close + 1..].starts_with(|c: char| c.is_alphanumeric())
            && is_placeholder(&inner[..close])
        {
            return Some(&text[open..open + close + 2]);
        }
        from = open + 1;
    }
    None
}

fn is_placeholder(inner: &str) -> bool {
    let words: Vec<&str> = inner.split(['-', '_', ' ']).collect();
    let one_word_not_markup =
        || inner.len() >= 2 && !HTML_ELEMENTS.iter().any(|element| element.eq_ignore_ascii_case(inner));
    (words.len() >= 2 || one_word_not_markup())
        && words.iter().all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric()))
        && words[0].starts_with(|c: char| c.is_ascii_alphabetic())
}

/// The names of HTML's elements (the living standard's, with the common obsolete ones): a
/// single bracketed word that is one of these is markup, not a hole; any other single word
/// (`$<price>`) is one.
const HTML_ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "area",
    "article",
    "aside",
    "audio",
    "b",
    "base",
    "bdi",
    "bdo",
    "big",
    "blink",
    "blockquote",
    "body",
    "br",
    "button",
    "canvas",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "data",
    "datalist",
    "dd",
    "del",
    "details",
    "dfn",
    "dialog",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "font",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "legend",
    "li",
    "link",
    "main",
    "map",
    "mark",
    "marquee",
    "menu",
    "meta",
    "meter",
    "nav",
    "noscript",
    "object",
    "ol",
    "optgroup",
    "option",
    "output",
    "p",
    "param",
    "picture",
    "pre",
    "progress",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "script",
    "search",
    "section",
    "select",
    "slot",
    "small",
    "source",
    "span",
    "strike",
    "strong",
    "style",
    "sub",
    "summary",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "time",
    "title",
    "tr",
    "track",
    "tt",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
];

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_bracketed_phrase_is_a_placeholder_and_markup_is_not() {
        let found = |args: Value| placeholder_in(&args).map(|found| (found.argument, found.hole));
        let post = json!({"channel": "#markets", "text": "ACME is trading at $<current-price>"});
        assert_eq!(
            placeholder_in(&post),
            Some(Placeholder {
                argument: "text".into(),
                hole: "<current-price>".into(),
                context: "ACME is trading at $<current-price>".into()
            })
        );
        assert_eq!(found(json!({"text": "at $<price>"})), Some(("text".into(), "<price>".into())));
        assert_eq!(found(json!({"to": "<id>"})), Some(("to".into(), "<id>".into())));
        assert_eq!(found(json!({"ids": ["m_1", "<message id>"]})), Some(("ids".into(), "<message id>".into())));
        assert_eq!(found(json!({"to": {"email": "<YOUR_EMAIL>"}})), Some(("to".into(), "<YOUR_EMAIL>".into())));
        assert_eq!(found(json!({"t": "a < b and <two words>"})), Some(("t".into(), "<two words>".into())));
        for text in [
            "<b>bold</b> and <br>",
            "<DIV> <Span> <h1> <x>",
            "Vec<String> and fn f<T>()",
            "<@U123> <!here> <https://x.io|the-link>",
            "Ben <bo@example.org>",
            "<-x> <x-> <x--y> <1-up>",
            "if a<b and c>d then",
            "<a phrase with more than forty bytes between its brackets>",
            "<unclosed-thing",
        ] {
            assert_eq!(found(json!({"text": text})), None, "{text}");
        }
        assert_eq!(found(json!("<not-args>")), None, "only an arguments object is read");
        assert_eq!(found(json!({"n": 3, "flag": true})), None);
    }

    #[test]
    fn a_placeholder_is_ranked_by_its_words_and_at_most_200_bytes_around_it() {
        assert_eq!(missing_of("<current-price>", "At $<current-price>"), "current price: At $<current-price>");
        assert_eq!(missing_of("<YOUR_EMAIL>", "<YOUR_EMAIL>"), "YOUR EMAIL: <YOUR_EMAIL>");
        let long = format!("x{}", "é".repeat(150));
        let query = missing_of("<a-b>", &long);
        assert_eq!(query, format!("a b: x{}", "é".repeat(99)));
    }
}
