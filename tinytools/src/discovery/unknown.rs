//! The answer to a call of a tool the model may not call: unknown, Hidden, or not admitted.

use serde_json::Value;

use crate::rank::tokenize;
use crate::tool::type_signature;
use crate::{ToolResult, ToolSchema};

/// The most close matches the answer names.
pub const MAX_SUGGESTIONS: usize = 3;

/// The longest name, in bytes, compared with others for close spellings. Edit distance costs
/// the product of the two lengths, and a name the model wrote can be any length: a longer
/// one gets no suggestions (and is never repaired to an offered tool), a longer candidate is
/// not compared by spelling. Provider tool names stop at 64 characters.
pub const MAX_COMPARED_NAME_BYTES: usize = 128;

/// The answer the model reads when it calls a name it may not call.
///
/// The answer never repeats the name it was given and suggests only from `callable` (the
/// names the model may call this run) and `loaded`, so a Hidden or non-admitted tool's name
/// never reaches the model. It names at most three close matches and, when `discovery` is
/// true (anything is deferred and searchable), tells the model to call `tool_search` with
/// what it wants to do instead of listing every callable name.
///
/// `loaded` are tools the run has just promoted for this call (query-aware discovery ranked
/// what the model wrote): they are named first, each with its compact signature, so the
/// model's next call can be typed.
///
/// ```
/// use tinytools::discovery::unknown_tool_answer;
/// use tinytools::ToolSchema;
///
/// let answer = unknown_tool_answer("stock_qoute", ["read_note", "stock_quote", "send_email"], true, &[]);
/// assert!(answer.is_error);
/// let text = answer.to_model_text();
/// assert!(text.contains("Did you mean `stock_quote`?"), "{text}");
/// assert!(text.contains("tool_search"), "{text}");
/// assert!(!text.contains("stock_qoute"));
///
/// let quote = ToolSchema::new(
///     "stock_quote",
///     "Fetch a price.",
///     serde_json::json!({"type": "object", "required": ["symbol"], "properties": {"symbol": {"type": "string"}}}),
/// );
/// let text = unknown_tool_answer("get_stock_price", ["read_note"], true, &[quote]).to_model_text();
/// assert!(text.contains("- `stock_quote` takes {symbol: string}"), "{text}");
/// ```
pub fn unknown_tool_answer<'a>(
    requested: &str,
    callable: impl IntoIterator<Item = &'a str>,
    discovery: bool,
    loaded: &[ToolSchema],
) -> ToolResult {
    if !loaded.is_empty() {
        return loaded_answer(requested, callable, loaded);
    }
    let suggestions = close_matches(requested, callable);
    let mut text = String::from("No tool by that name is available.");
    match suggestions.as_slice() {
        [] => {}
        [only] => text.push_str(&format!(" Did you mean `{only}`?")),
        several => {
            let list: Vec<String> = several.iter().map(|name| format!("`{name}`")).collect();
            text.push_str(&format!(" Did you mean one of {}?", list.join(", ")));
        }
    }
    if discovery {
        text.push_str(
            " To find a tool for what you want to do, call `tool_search` with a short description of the task.",
        );
    }
    ToolResult::error(text)
}

/// The longest query [`unknown_call_query`] builds, in bytes.
pub const MAX_UNKNOWN_QUERY_BYTES: usize = 1_000;

/// What a call of an unknown name is ranked by: the name's words, then each argument's name
/// and string value (in key order), at most [`MAX_UNKNOWN_QUERY_BYTES`]. `arguments` is the call's JSON text
/// as the model wrote it; text that is not a JSON object adds nothing.
///
/// The agent loop ranks it against the deferred catalogue to promote what the model meant
/// (query-aware discovery); a gateway ranks it to name the tools that may fit.
///
/// ```
/// use tinytools::discovery::unknown_call_query;
///
/// let query = unknown_call_query("get_stock_price", r#"{"ticker": "ACME", "days": 3}"#);
/// assert_eq!(query, "get stock price days ticker ACME");
/// assert_eq!(unknown_call_query("weather.now", "not json"), "weather now");
/// ```
pub fn unknown_call_query(name: &str, arguments: &str) -> String {
    let mut query = name.replace(['_', '-', '.'], " ");
    if let Ok(Value::Object(args)) = serde_json::from_str::<Value>(arguments) {
        for (key, value) in args {
            if query.len() >= MAX_UNKNOWN_QUERY_BYTES {
                break;
            }
            query.push(' ');
            query.push_str(&key.replace('_', " "));
            if let Value::String(text) = value {
                query.push(' ');
                query.push_str(&text);
            }
        }
    }
    let mut end = query.len().min(MAX_UNKNOWN_QUERY_BYTES);
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    query.truncate(end);
    query
}

/// The unknown-tool answer that names the tools just loaded for this call, then close
/// spellings among the rest, at most [`MAX_SUGGESTIONS`] names in all.
fn loaded_answer<'a>(
    requested: &str,
    callable: impl IntoIterator<Item = &'a str>,
    loaded: &[ToolSchema],
) -> ToolResult {
    let mut text = String::from("No tool by that name is available. These tools may fit, and are now loaded:");
    let loaded = &loaded[..loaded.len().min(MAX_SUGGESTIONS)];
    for tool in loaded {
        text.push_str(&format!("\n- `{}` takes {}", tool.name, type_signature(&tool.parameters)));
    }
    let also: Vec<String> = close_matches(requested, callable)
        .into_iter()
        .filter(|name| loaded.iter().all(|tool| tool.name != *name))
        .take(MAX_SUGGESTIONS - loaded.len())
        .map(|name| format!("`{name}`"))
        .collect();
    if !also.is_empty() {
        text.push_str(&format!("\nAlso close: {}.", also.join(", ")));
    }
    text.push_str("\nCall the one that fits by its own name; if none fits, call `tool_search` with a short description of the task.");
    ToolResult::error(text)
}

/// Up to [`MAX_SUGGESTIONS`] names close to `requested`, closest first; none when
/// `requested` is longer than [`MAX_COMPARED_NAME_BYTES`].
fn close_matches<'a>(requested: &str, callable: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    if requested.len() > MAX_COMPARED_NAME_BYTES {
        return Vec::new();
    }
    let wanted = requested.to_lowercase();
    let wanted_terms = tokenize(requested);
    let mut scored: Vec<(f32, &str)> = callable
        .into_iter()
        .filter(|name| *name != requested)
        .map(|name| {
            let spelling = if name.len() > MAX_COMPARED_NAME_BYTES {
                0.0
            } else {
                1.0 - strsim::levenshtein(&wanted, &name.to_lowercase()) as f32
                    / wanted.len().max(name.len()).max(1) as f32
            };
            let terms = tokenize(name);
            let shared = terms.iter().filter(|term| wanted_terms.contains(term)).count();
            // How much of the candidate's name the request covers: `get_stock_price` covers
            // half of `stock_quote`.
            let overlap = shared as f32 / terms.len().max(1) as f32;
            (spelling.max(overlap), name)
        })
        .filter(|(score, _)| *score >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(MAX_SUGGESTIONS).map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_three_suggestions_closest_first() {
        let callable = ["stock_quote", "stock_quotes", "stock_quote_v2", "stock_quota", "weather"];
        let names = close_matches("stock_qoute", callable);
        assert_eq!(names.len(), 3);
        assert_eq!(names[0], "stock_quote");
        assert!(!names.contains(&"weather"));
    }

    #[test]
    fn shared_words_count_as_close() {
        assert_eq!(close_matches("get_stock_price", ["stock_quote", "send_email"]), ["stock_quote"]);
        assert!(close_matches("zzz", ["stock_quote"]).is_empty());
    }

    #[test]
    fn without_discovery_there_is_no_search_hint() {
        let text = unknown_tool_answer("nope", ["read_note"], false, &[]).to_model_text();
        assert_eq!(text, "No tool by that name is available.");
    }

    #[test]
    fn names_past_the_bound_are_not_compared() {
        // Every word of `stock_quote` is in it: within the bound, that would make it close.
        let huge = format!("stock_quote{}", "_x".repeat(50_000));
        assert!(close_matches(&huge, ["stock_quote", "send_email"]).is_empty());
        let text = unknown_tool_answer(&huge, ["stock_quote"], false, &[]).to_model_text();
        assert_eq!(text, "No tool by that name is available.");
        // Within the bound a long name is still compared, by spelling too.
        let long = "a".repeat(MAX_COMPARED_NAME_BYTES - 1);
        let typo = format!("{long}b");
        assert_eq!(close_matches(&typo, [format!("{long}c").as_str()]).len(), 1);
        // A candidate past the bound is not compared by spelling.
        let long = "a".repeat(MAX_COMPARED_NAME_BYTES);
        assert!(close_matches("aaaa", [format!("{long}c").as_str()]).is_empty());
        let typo = format!("{}b", &long[1..]);
        assert!(close_matches(&typo, [format!("{long}c").as_str()]).is_empty());
    }
}
