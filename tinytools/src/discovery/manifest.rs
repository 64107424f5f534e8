//! The manifest in `tool_search`'s description: what is deferred, under a token budget.

use super::DeferredCatalog;
use crate::schema::TokenCounter;

/// The longest summary a manifest line keeps of a tool's description.
pub const SUMMARY_CHARS: usize = 60;

/// How much detail the manifest could afford.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManifestDetail {
    /// `- name: first sentence (≤ 60 chars)` per tool.
    Summaries,
    /// The names only.
    Names,
    /// Only how many tools there are.
    Count,
    /// Nothing fits the budget.
    Nothing,
}

/// The manifest text and the rung of the ladder it reached.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Manifest {
    /// The text embedded in `tool_search`'s description (empty for [`ManifestDetail::Nothing`]).
    pub text: String,
    /// How much detail fit.
    pub detail: ManifestDetail,
}

impl Manifest {
    /// Builds the most detailed manifest whose text `counter` counts within `budget` tokens:
    /// summaries, else names only, else a bare count, else nothing. Never over budget, even at 0.
    ///
    /// ```
    /// use tinytools::discovery::{DeferredCatalog, Manifest, ManifestDetail};
    /// use tinytools::schema::EstimatedTokens;
    /// use tinytools::ToolSchema;
    ///
    /// let tool = |name: &str, description: &str| {
    ///     (ToolSchema::new(name, description, serde_json::json!({"type": "object"})), None)
    /// };
    /// let catalog = DeferredCatalog::from_tools([
    ///     tool("stock_quote", "Fetch the latest price for a ticker symbol. Delayed 15 minutes."),
    ///     tool("send_email", "Send an email."),
    /// ]);
    /// let full = Manifest::build(&catalog, 4_000, &EstimatedTokens);
    /// assert_eq!(full.detail, ManifestDetail::Summaries);
    /// assert_eq!(full.text, "- send_email: Send an email.\n- stock_quote: Fetch the latest price for a ticker symbol.");
    /// assert_eq!(Manifest::build(&catalog, 8, &EstimatedTokens).detail, ManifestDetail::Names);
    /// assert_eq!(Manifest::build(&catalog, 0, &EstimatedTokens).detail, ManifestDetail::Nothing);
    /// ```
    pub fn build(catalog: &DeferredCatalog, budget: usize, counter: &dyn TokenCounter) -> Self {
        let rungs = [
            (ManifestDetail::Summaries, summaries(catalog)),
            (ManifestDetail::Names, names(catalog)),
            (ManifestDetail::Count, count(catalog)),
        ];
        rungs.into_iter().find(|(_, text)| counter.count(text) <= budget).map_or(
            Self { text: String::new(), detail: ManifestDetail::Nothing },
            |(detail, text)| Self { text, detail },
        )
    }
}

fn summaries(catalog: &DeferredCatalog) -> String {
    let lines: Vec<String> = catalog
        .iter()
        .map(|tool| match first_sentence(&tool.schema().description) {
            summary if summary.is_empty() => format!("- {}", tool.schema().name),
            summary => format!("- {}: {summary}", tool.schema().name),
        })
        .collect();
    lines.join("\n")
}

fn names(catalog: &DeferredCatalog) -> String {
    let names: Vec<&str> = catalog.iter().map(|tool| tool.schema().name.as_str()).collect();
    names.join(", ")
}

fn count(catalog: &DeferredCatalog) -> String {
    match catalog.len() {
        1 => "1 tool is available through search.".to_owned(),
        n => format!("{n} tools are available through search."),
    }
}

/// The families the catalogue's tools belong to, for `tool_search`'s description when the
/// manifest could afford no names: `"Their families: calendar, finance, gmail (and 1,000 tools
/// without one)."`, at most [`FAMILIES_CHARS`] characters of names. `None` when no tool has a
/// family.
///
/// ```
/// use tinytools::discovery::{DeferredCatalog, families_line};
/// use tinytools::ToolSchema;
///
/// let tool = |name: &str, family: Option<&str>| {
///     (ToolSchema::new(name, "A tool.", serde_json::json!({"type": "object"})), family.map(str::to_owned))
/// };
/// let catalog = DeferredCatalog::from_tools([tool("a", Some("mail")), tool("b", Some("finance")), tool("c", None)]);
/// assert_eq!(families_line(&catalog).as_deref(), Some("Their families: finance, mail (and 1 tool without one)."));
/// assert_eq!(families_line(&DeferredCatalog::from_tools([tool("c", None)])), None);
/// ```
pub fn families_line(catalog: &DeferredCatalog) -> Option<String> {
    let mut families: Vec<&str> = catalog.iter().filter_map(|tool| tool.family()).collect();
    families.sort_unstable();
    families.dedup();
    if families.is_empty() {
        return None;
    }
    let mut listed = String::new();
    let mut shown = 0;
    for family in &families {
        if listed.len() + family.len() > FAMILIES_CHARS {
            break;
        }
        if !listed.is_empty() {
            listed.push_str(", ");
        }
        listed.push_str(family);
        shown += 1;
    }
    let mut more = Vec::new();
    if shown < families.len() {
        more.push(format!("{} more families", families.len() - shown));
    }
    match catalog.iter().filter(|tool| tool.family().is_none()).count() {
        0 => {}
        1 => more.push("1 tool without one".to_owned()),
        n => more.push(format!("{n} tools without one")),
    }
    let more = if more.is_empty() { String::new() } else { format!(" (and {})", more.join(", ")) };
    Some(format!("Their families: {listed}{more}."))
}

/// The most characters of family names [`families_line`] lists.
pub const FAMILIES_CHARS: usize = 300;

/// The description's first sentence, at most [`SUMMARY_CHARS`] characters (cut at a word,
/// ending in `…`).
///
/// ```
/// use tinytools::discovery::first_sentence;
///
/// assert_eq!(first_sentence("Send an email. Attachments allowed."), "Send an email.");
/// assert_eq!(first_sentence("Version 2.1 of the tool! More."), "Version 2.1 of the tool!");
/// assert_eq!(
///     first_sentence("Search hotels in a city for the given check-in and check-out dates and guests"),
///     "Search hotels in a city for the given check-in and…"
/// );
/// ```
pub fn first_sentence(description: &str) -> String {
    let text = description.trim();
    let mut end = text.len();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace)) {
            end = if c == '\n' { at } else { at + c.len_utf8() };
            break;
        }
    }
    let sentence = text[..end].trim();
    if sentence.chars().count() <= SUMMARY_CHARS {
        return sentence.to_owned();
    }
    let cut: String = sentence.chars().take(SUMMARY_CHARS - 1).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(space) if space > 0 => cut[..space].trim_end_matches([',', ';', ':']).to_owned(),
        _ => cut,
    };
    format!("{cut}…")
}
