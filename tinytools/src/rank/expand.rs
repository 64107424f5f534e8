//! [`ExpandingRanker`]: a chat model's search keywords added to the query before ranking.
//!
//! A user's message often shares no word with the tool it needs ("a bed for the night in
//! Lisbon" and `hotel_search`), and BM25 cannot rank what it cannot match. A small model can
//! name the kind of service a message needs in one short line ("hotel booking search"), and
//! that line bridges the gap. The measured gain, with the models and the command, is in
//! `docs/retrieval.md`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::model::{ChatModel, Message, ModelError, ModelRequest};
use crate::rank::{RankRequest, RankedTool, RankerError, ToolRanker};

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
/// How many expansions are remembered (a run ranks the same message for pre-promotion and
/// again for the follow-up after a tool result).
const CACHE_ENTRIES: usize = 256;

/// What the keyword model has cost so far. Its calls are not the run's: they are counted
/// here, not in the run's usage. Serializes as an object of its four counts, and displays as
/// one line.
///
/// ```
/// use tinytools::rank::ExpansionUsage;
///
/// let none = ExpansionUsage::default();
/// assert_eq!(none.to_string(), "0 model calls (0 failed), 0 prompt and 0 answer tokens");
/// assert_eq!(serde_json::to_value(none).unwrap()["calls"], 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ExpansionUsage {
    /// Keyword requests sent to the model (cached queries send none).
    pub calls: u64,
    /// Requests that failed; their queries were ranked as they were.
    pub failed: u64,
    /// Prompt tokens the model reported.
    pub prompt_tokens: u64,
    /// Answer tokens the model reported.
    pub completion_tokens: u64,
}

impl std::fmt::Display for ExpansionUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} model calls ({} failed), {} prompt and {} answer tokens",
            self.calls, self.failed, self.prompt_tokens, self.completion_tokens
        )
    }
}

/// Ranks with another ranker after asking a chat model for search keywords for the query.
///
/// The query the inner ranker sees is the original followed by the model's keywords, so a
/// word the user wrote still counts. The model sees only the query (never a tool name), and
/// its answer only ever becomes search words: at most twelve words of its first line, letters
/// and digits only, less the words it echoes from the question it was asked ("api", "app",
/// "tool" and the like, which match whatever tool mentions them). A model that fails or
/// answers nothing leaves the query as it was, counted in [`usage`](Self::usage) and logged;
/// the inner ranker still answers.
///
/// Give it a client with a small answer cap (`with_max_tokens(32)`) and temperature 0, and a
/// [`ToolDiscoveryPolicy::ranker_timeout`](crate::discovery::ToolDiscoveryPolicy::ranker_timeout)
/// that covers one short model call.
///
/// ```
/// use std::sync::Arc;
/// use tinytools::model::ModelResponse;
/// use tinytools::rank::{Bm25Ranker, ExpandingRanker};
/// use tinytools::testkit::ScriptedModel;
///
/// let model = Arc::new(ScriptedModel::new([ModelResponse::text("hotel booking API, search")]));
/// let ranker = ExpandingRanker::new(Arc::new(Bm25Ranker), model);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let query = ranker.expand("Get us a bed for the night in Lisbon").await;
/// assert_eq!(query, "Get us a bed for the night in Lisbon\nhotel booking search");
/// // The same query again is answered from the cache: the script has no second turn.
/// assert_eq!(ranker.expand("Get us a bed for the night in Lisbon").await, query);
/// assert_eq!(ranker.usage().calls, 1);
/// # });
/// ```
pub struct ExpandingRanker {
    inner: Arc<dyn ToolRanker>,
    model: Arc<dyn ChatModel>,
    name: String,
    cache: Mutex<HashMap<String, Arc<str>>>,
    calls: AtomicU64,
    failed: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

impl ExpandingRanker {
    /// Ranks with `inner` after `model` has added its keywords to each query.
    pub fn new(inner: Arc<dyn ToolRanker>, model: Arc<dyn ChatModel>) -> Self {
        let name = format!("{}+keywords", inner.name());
        Self {
            inner,
            model,
            name,
            cache: Mutex::new(HashMap::new()),
            calls: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            prompt_tokens: AtomicU64::new(0),
            completion_tokens: AtomicU64::new(0),
        }
    }

    /// The query the inner ranker is given: `query`, then a line of the model's keywords (none
    /// when the model failed or wrote none).
    pub async fn expand(&self, query: &str) -> String {
        let query = query.trim();
        if query.is_empty() {
            return String::new();
        }
        let keywords = match self.keywords(query).await {
            Ok(keywords) => keywords,
            Err(error) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%error, "the keyword model failed; the query is ranked as it is");
                return query.to_owned();
            }
        };
        if keywords.is_empty() { query.to_owned() } else { format!("{query}\n{keywords}") }
    }

    /// What the keyword model has cost so far.
    pub fn usage(&self) -> ExpansionUsage {
        ExpansionUsage {
            calls: self.calls.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
        }
    }

    async fn keywords(&self, query: &str) -> Result<Arc<str>, ModelError> {
        if let Some(hit) = self.cache.lock().ok().and_then(|cache| cache.get(query).cloned()) {
            return Ok(hit);
        }
        let request = ModelRequest {
            messages: vec![Message::system(SYSTEM), Message::user(prompt(query))],
            ..ModelRequest::default()
        };
        self.calls.fetch_add(1, Ordering::Relaxed);
        let response = self.model.complete(&request).await?;
        if let Some(usage) = response.usage {
            self.prompt_tokens.fetch_add(usage.prompt_tokens, Ordering::Relaxed);
            self.completion_tokens.fetch_add(usage.completion_tokens, Ordering::Relaxed);
        }
        let keywords: Arc<str> = keyword_line(&response.content).into();
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(query.to_owned(), keywords.clone());
        }
        Ok(keywords)
    }
}

impl std::fmt::Debug for ExpandingRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpandingRanker").field("name", &self.name).field("usage", &self.usage()).finish()
    }
}

#[async_trait::async_trait]
impl ToolRanker for ExpandingRanker {
    fn name(&self) -> &str {
        &self.name
    }

    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        let query = self.expand(request.query).await;
        self.inner.rank(RankRequest { query: &query, ..request }).await
    }
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
fn keyword_line(answer: &str) -> String {
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
