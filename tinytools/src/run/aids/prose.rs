//! What a reply without calls says about the tools: whether it names one, and whether it is
//! nothing but a tool's name (read by [`AskAfterEmptyReply`](super::AskAfterEmptyReply)).

/// Replies longer than this are never read as a bare name: a bare name is a few words, and the
/// scan must stay cheap on an 8 MiB reply.
const MAX_BARE_REPLY_BYTES: usize = 8 * 1024;

/// Whether `text` names `name` as a whole identifier (not inside a longer one).
pub(crate) fn mentions(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    !name.is_empty()
        && text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
}

/// The tool a reply that is nothing but a tool stands for: its name alone (in backticks or
/// quotes, with `()` or a full stop after it), or tool declarations copied back from the
/// request (`{"type": "function", "function": {"name": ...}}`, in `<tools>` tags or not, cut
/// short or whole), the first one declared. Only a name in `offered`; `None` for any other
/// reply, and for one over 8 KiB.
pub(crate) fn bare_name<'a>(text: &str, offered: &[&'a str]) -> Option<&'a str> {
    if text.len() > MAX_BARE_REPLY_BYTES {
        return None;
    }
    let text = text.trim();
    let name = match text.strip_prefix("<tools>").map(str::trim_start).unwrap_or(text) {
        body if body.starts_with('{') => first_declared(body)?,
        _ => {
            let name = text.trim_end_matches('.').trim_end_matches("()");
            name.strip_prefix('`')
                .and_then(|n| n.strip_suffix('`'))
                .or_else(|| name.strip_prefix('"').and_then(|n| n.strip_suffix('"')))
                .unwrap_or(name)
        }
    };
    offered.iter().copied().find(|offered| *offered == name)
}

/// The name of the first declaration a text opens with, `{"type": "function", "function":
/// {"name": "..."`, read token by token so that a declaration cut short still counts.
fn first_declared(body: &str) -> Option<&str> {
    fn eat<'t>(rest: &'t str, token: &str) -> Option<&'t str> {
        rest.trim_start().strip_prefix(token)
    }
    let mut rest = eat(body, "{")?;
    for token in ["\"type\"", ":", "\"function\"", ",", "\"function\"", ":", "{", "\"name\"", ":", "\""] {
        rest = eat(rest, token)?;
    }
    let end = rest.find('"')?;
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFERED: [&str; 4] = ["hotel_search", "stock_quote", "delete_repo", "hotel_search"];

    #[test]
    fn a_reply_that_is_only_a_tool_names_it() {
        let bare = |text: &str| bare_name(text, &OFFERED);
        for text in ["stock_quote", " `stock_quote` ", "\"stock_quote\"", "stock_quote()", "stock_quote.\n"] {
            assert_eq!(bare(text), Some("stock_quote"), "{text:?}");
        }
        // Declarations copied back: the first one, whole or cut short, in tags or not.
        let echo = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"hotel_search\", \"parameters\": {}}}\n\
                    {\"type\": \"function\", \"function\": {\"name\": \"stock_quote\", \"parameters\": {}}}\n</tools>";
        assert_eq!(bare(echo), Some("hotel_search"));
        assert_eq!(bare(r#"{"type":"function","function":{"name":"stock_quote","descr"#), Some("stock_quote"));
        // A sentence, another tool, a call, or a declaration of a tool not offered: not bare.
        assert_eq!(bare("Use stock_quote."), None);
        assert_eq!(bare("send_email"), None);
        assert_eq!(bare("`stock_quote"), None);
        assert_eq!(bare(r#"{"name": "stock_quote", "arguments": {}}"#), None);
        assert_eq!(bare(r#"{"type": "function", "function": {"name": "send_email"}}"#), None);
        assert_eq!(bare(&format!("{}stock_quote", " ".repeat(MAX_BARE_REPLY_BYTES))), None);
    }

    #[test]
    fn a_name_is_mentioned_only_as_a_whole_identifier() {
        assert!(mentions("call `stock_quote` now", "stock_quote"));
        assert!(!mentions("my_stock_quotes", "stock_quote") && !mentions("anything", ""));
    }
}
