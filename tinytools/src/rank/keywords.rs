//! Search keywords written by a chat model for a user's message: the one request both
//! [`ExpandingRanker`](super::ExpandingRanker) and the run's query-aware discovery
//! ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords)) send, and
//! how its answer becomes search words.
//!
//! A user's message often shares no word with the tool it needs ("a bed for the night in
//! Lisbon" and `hotel_search`), and BM25 cannot rank what it cannot match. A small model can
//! name the kind of service a message needs in one short line ("hotel booking search"), and
//! that line bridges the gap. The model sees only the message (never a tool name), and its
//! answer only ever becomes search words.

use crate::model::{Message, ModelRequest, RequestPurpose};

/// The instruction the keyword model is given. Generic on purpose: it names no catalogue,
/// family or tool, so what it writes depends on the message alone.
const SYSTEM: &str = "You turn a user's request into search keywords for finding a software tool.";

/// How much of a query the keyword model reads.
const MAX_QUERY_BYTES: usize = 2_000;
/// How many keywords of the model's line are kept.
const MAX_KEYWORDS: usize = 12;
/// Words the keyword model echoes from its own instructions ("Request: ... which kind of app or
/// API ..."). They say what was asked, not what the message needs, and match whatever tool
/// happens to mention them ("api" matches any tool whose examples mention an API). The query's
/// own words are never dropped.
const ECHOED: &[&str] = &[
    "action",
    "actions",
    "api",
    "apis",
    "app",
    "apps",
    "application",
    "applications",
    "keyword",
    "keywords",
    "program",
    "request",
    "requests",
    "software",
    "tool",
    "tools",
];
/// The request that asks a model for `query`'s search keywords: a generic instruction and the
/// query (at most [`MAX_QUERY_BYTES`] of it), no tools.
pub(crate) fn keyword_request(query: &str) -> ModelRequest {
    ModelRequest {
        messages: vec![Message::system(SYSTEM), Message::user(prompt(query))],
        purpose: RequestPurpose::Keywords,
        ..ModelRequest::default()
    }
}

/// `query` with the keywords' line after it (as it was when there are none).
pub(crate) fn with_keywords(query: &str, keywords: &str) -> String {
    if keywords.is_empty() { query.to_owned() } else { format!("{query}\n{keywords}") }
}

/// The user turn: the query (cut at a character boundary) and what to answer.
fn prompt(query: &str) -> String {
    let mut end = query.len().min(MAX_QUERY_BYTES);
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "Request: {}\n\nWhich kind of app or API would a program use for this, and what action? \
         Reply with one line of 3 to 6 lowercase keywords, nothing else.",
        &query[..end]
    )
}

/// The search words of the model's answer: its first line with text in it, split into words
/// of letters and digits, at most [`MAX_KEYWORDS`], repeats and [`ECHOED`] words dropped.
pub(crate) fn keyword_line(answer: &str) -> String {
    let line = answer.lines().map(str::trim).find(|line| line.chars().any(char::is_alphanumeric)).unwrap_or("");
    let mut words: Vec<String> = Vec::new();
    for word in line.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
        let word = word.to_lowercase();
        if !words.contains(&word) && !ECHOED.contains(&word.as_str()) {
            words.push(word);
        }
        if words.len() == MAX_KEYWORDS {
            break;
        }
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_line_s_words_are_kept() {
        assert_eq!(
            keyword_line("Currency Converter, exchange-rate API\nHere is why: ..."),
            "currency converter exchange rate"
        );
        assert_eq!(keyword_line("stock price api"), "stock price");
        assert_eq!(keyword_line("booking request"), "booking");
        assert_eq!(keyword_line("API, Apps, software tool: keywords"), "", "only echoes of the prompt: nothing to add");
        assert_eq!(keyword_line("\n  **  \n`weather`, `forecast`"), "weather forecast");
        assert_eq!(keyword_line("a a b B"), "a b");
        let many: String = (0..40).map(|i| format!("k{i}, ")).collect();
        assert_eq!(keyword_line(&many).split(' ').count(), MAX_KEYWORDS);
        assert_eq!(keyword_line(""), "");
    }

    #[test]
    fn a_long_query_is_cut_at_a_character_boundary() {
        let query = "é".repeat(MAX_QUERY_BYTES);
        let prompt = prompt(&query);
        assert!(prompt.len() < MAX_QUERY_BYTES + 200);
        assert!(prompt.contains(&"é".repeat(MAX_QUERY_BYTES / 2)));
    }
}
