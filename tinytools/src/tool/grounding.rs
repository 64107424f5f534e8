//! [`Grounding`]: an argument whose value the model must copy, never make up.

use serde_json::Value;

/// An argument whose value must come from the conversation: an id, a key, a handle that only
/// the user or another tool can know.
///
/// Small models skip the look-up of a two-step task and call the action tool with an id they
/// invented (`contact_id: "12345"`, `key: "OPS-127"` copied from the parameter's own example).
/// A tool that declares the argument grounded gets such a call refused before it runs, and
/// the model is told where the value comes from, so the run turns back to the look-up (the
/// agent loop's grounding gate, always on for a tool that declares it).
///
/// A value is grounded when it appears, as a whole token, in a user message or in a result of
/// a call that ran without error: any tool's result, or with [`sources`](Self::sources), a
/// result of one of those tools (a source the run cannot offer — Hidden, narrowed away, not
/// registered — is ignored, and when none is left any tool's result counts). The user's own
/// words always count: a user who says "scrap ev_4410" has given the id. The refusal names
/// the sources, so the model knows which tool to call first.
///
/// Strings and numbers are checked, and each string or number of an array; other values, and
/// absent optional arguments, are not. An optional argument (one the schema does not require,
/// such as a thread to reply in) that holds a made-up value is refused with "call it again
/// without it" first, and its sources are not promoted: a guess at an optional value is more
/// often an extra than a missing look-up. With `#[tool]`, mark the parameter:
///
/// ```
/// use tinytools::tool;
///
/// /// Log a phone call with a contact in the CRM.
/// #[tool]
/// async fn crm_log_call(
///     /// The contact's id, from crm_find_contact.
///     #[grounded(from = "crm_find_contact")]
///     contact_id: String,
///     /// What was discussed.
///     notes: String,
/// ) -> String {
///     format!("logged a call with {contact_id}: {notes}")
/// }
///
/// use tinytools::{Grounding, TypedTool};
/// assert_eq!(CrmLogCall.spec().grounding, &[Grounding::new("contact_id").with_sources(&["crm_find_contact"])]);
/// ```
///
/// A hand-written [`ToolSpec`](crate::ToolSpec) states it with
/// [`with_grounding`](crate::ToolSpec::with_grounding); registration checks that each
/// grounded argument is a property of the tool's schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Grounding {
    /// The argument's name, as the schema spells it.
    pub argument: &'static str,
    /// The tools whose results may supply the value besides the user's words (none: any
    /// tool's result).
    pub sources: &'static [&'static str],
}

impl Grounding {
    /// A grounded argument that the user's words or any tool's result may supply.
    pub const fn new(argument: &'static str) -> Self {
        Self { argument, sources: &[] }
    }

    /// Of tool results, only these tools' may supply it (the user's words still do).
    #[must_use]
    pub const fn with_sources(mut self, sources: &'static [&'static str]) -> Self {
        self.sources = sources;
        self
    }
}

/// The values of `argument` in `args` that a grounding check looks for: a string (trimmed) or
/// a number, or each of those in an array; empty when the argument is absent or of another
/// kind.
pub(crate) fn grounded_values(args: &Value, argument: &str) -> Vec<String> {
    let scalar = |value: &Value| match value {
        Value::String(text) => Some(text.trim().to_owned()).filter(|text| !text.is_empty()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    };
    match args.get(argument) {
        Some(Value::Array(items)) => items.iter().filter_map(scalar).collect(),
        Some(value) => scalar(value).into_iter().collect(),
        None => Vec::new(),
    }
}

/// Whether `value` occurs in `text` as a whole token: not run into a letter, digit or `_` on
/// either side (`c_12` is in `{"id":"c_12"}`; `c_1` and `12` are not).
pub(crate) fn appears_in(value: &str, text: &str) -> bool {
    !value.is_empty() && text.match_indices(value).any(|(at, _)| whole_token(text, at, value.len()))
}

/// How `text` spells `value` when it holds it as a whole token but in other ASCII letter case
/// (`m_7781` for `M_7781`): the spelling a refusal points the model to. `None` when the text
/// holds no such token.
pub(crate) fn spelled_in<'t>(value: &str, text: &'t str) -> Option<&'t str> {
    if value.is_empty() {
        return None;
    }
    // ASCII case folding keeps every byte offset, so a match in the folded text is one in `text`.
    let (folded, wanted) = (text.to_ascii_lowercase(), value.to_ascii_lowercase());
    folded
        .match_indices(&wanted)
        .find(|&(at, _)| whole_token(text, at, value.len()))
        .map(|(at, _)| &text[at..at + value.len()])
}

/// Whether the `len` bytes of `text` at `at` are not run into a letter, digit or `_`.
fn whole_token(text: &str, at: usize, len: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let before = text[..at].chars().next_back();
    let after = text[at + len..].chars().next();
    !before.is_some_and(word) && !after.is_some_and(word)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_value_must_be_a_whole_token_of_the_text() {
        let result = r#"{"contacts": [{"id": "c_12", "name": "Dana Ortiz"}], "total": 120}"#;
        assert!(appears_in("c_12", result));
        assert!(appears_in("Dana Ortiz", result));
        assert!(!appears_in("c_1", result), "a prefix of a token is not the token");
        assert!(!appears_in("12", result), "nor is its tail");
        assert!(appears_in("120", result));
        assert!(!appears_in("ortiz", result), "the match is case-sensitive: ids are");
        assert!(!appears_in("", result));
        assert!(appears_in("OPS-127", "Comment on OPS-127, please."));
        assert!(!appears_in("OPS-12", "Comment on OPS-127, please."));
    }

    #[test]
    fn a_value_in_other_letter_case_is_found_with_the_texts_spelling() {
        let request = "Can you pull up conversation m_7781? And ops-127.";
        assert_eq!(spelled_in("M_7781", request), Some("m_7781"));
        assert_eq!(spelled_in("OPS-127", request), Some("ops-127"));
        assert_eq!(spelled_in("t_553", request), None, "still a whole token");
        assert_eq!(spelled_in("M_77810", request), None);
        assert_eq!(spelled_in("", request), None);
        assert_eq!(spelled_in("ÉTÉ", "l'été"), None, "only ASCII letters fold");
    }

    #[test]
    fn strings_numbers_and_their_arrays_are_checked() {
        let args = json!({"id": "  c_12 ", "n": 42, "ids": ["a", 7, true, ""], "flag": true, "blank": " "});
        assert_eq!(grounded_values(&args, "id"), ["c_12"]);
        assert_eq!(grounded_values(&args, "n"), ["42"]);
        assert_eq!(grounded_values(&args, "ids"), ["a", "7"]);
        assert!(grounded_values(&args, "flag").is_empty());
        assert!(grounded_values(&args, "blank").is_empty());
        assert!(grounded_values(&args, "absent").is_empty());
    }
}
