//! Template placeholders in a call's arguments: `"GLOBX is trading at $<current-price>"` is a
//! sentence with a hole the model meant to fill, not a value. The loop refuses such a call to
//! a tool with side effects (see `LoopGuard::require_grounding`) before it posts the hole.

use serde_json::Value;

/// The longest placeholder recognised, in bytes between its brackets.
const MAX_PLACEHOLDER_BYTES: usize = 40;

/// The first template placeholder among a call's arguments, with the argument that holds it
/// (strings at any depth count for their top-level argument). A placeholder is `<` and `>`
/// around two or more words of ASCII letters and digits joined by `-`, `_` or a space, the
/// first word starting with a letter: `<current-price>`, `<message id>`, `<YOUR_EMAIL>`. A
/// single word (`<b>`, `<price>`) may be markup and is not one, nor is anything holding other
/// characters (`<@U123>`, `<https://x|link>`, `<a@b.com>`) or run into a letter or digit on
/// either side (`if a<b and c>d`).
pub(crate) fn placeholder_in(args: &Value) -> Option<(String, String)> {
    let Value::Object(members) = args else {
        return None;
    };
    members.iter().find_map(|(argument, value)| first_in(value).map(|found| (argument.clone(), found.to_owned())))
}

/// The first placeholder in a value's strings, depth first.
fn first_in(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) => in_text(text),
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
    words.len() >= 2
        && words.iter().all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric()))
        && words[0].starts_with(|c: char| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_bracketed_phrase_is_a_placeholder_and_markup_is_not() {
        let found = |args: Value| placeholder_in(&args);
        let post = json!({"channel": "#markets", "text": "GLOBX is trading at $<current-price>"});
        assert_eq!(found(post), Some(("text".into(), "<current-price>".into())));
        assert_eq!(found(json!({"ids": ["m_1", "<message id>"]})), Some(("ids".into(), "<message id>".into())));
        assert_eq!(found(json!({"to": {"email": "<YOUR_EMAIL>"}})), Some(("to".into(), "<YOUR_EMAIL>".into())));
        assert_eq!(found(json!({"t": "a < b and <two words>"})), Some(("t".into(), "<two words>".into())));
        for text in [
            "<b>bold</b> and <br>",
            "price <price>",
            "<@U123> <!here> <https://x.io|the-link>",
            "Ben <ben@acme.com>",
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
}
