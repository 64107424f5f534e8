//! [`ExpandingRanker`]: a chat model's search keywords added to every query of a ranker. The
//! measured gain, with the models and the command, is in `docs/retrieval.md`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::keywords::{keyword_line, keyword_request, with_keywords};
use super::ranked::RankedTool;
use super::ranker::{RankRequest, RankerError, ToolRanker};
use crate::model::{ChatModel, ModelError};

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
/// A run's query-aware discovery already asks the run's own model for a message's keywords,
/// as one of the run's requests
/// ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords), on by
/// default). This ranker is for what that does not reach: `tool_search`'s own queries, a host
/// that ranks without a run (a gateway's pre-search), or keywords from another model. Its
/// calls are counted here, not in any run's usage. Installed as a run's ranker, switch the
/// run's keywords off, or each message is expanded twice.
///
/// The bundled providers cap the keyword answer at 32 tokens (the request's
/// [`RequestPurpose`](crate::model::RequestPurpose)). Give it a client at temperature 0, and a
/// [`ToolDiscoveryPolicy::ranker_timeout`](crate::discovery::ToolDiscoveryPolicy::ranker_timeout)
/// that covers one short model call.
///
/// ```
/// use std::sync::Arc;
/// use tinytools::rank::{Bm25Ranker, ExpandingRanker};
/// use tinytools::testkit::ScriptedModel;
///
/// let model = Arc::new(ScriptedModel::new([]).with_keywords(["hotel booking API, search"]));
/// let ranker = ExpandingRanker::new(Arc::new(Bm25Ranker), model);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let query = ranker.expand("Get us a bed for the night in Lisbon").await;
/// assert_eq!(query, "Get us a bed for the night in Lisbon\nhotel booking search");
/// // The same query again is answered from the cache: the script has no second line.
/// assert_eq!(ranker.expand("Get us a bed for the night in Lisbon").await, query);
/// assert_eq!(ranker.usage().calls, 1);
/// # });
/// ```
pub struct ExpandingRanker {
    inner: Arc<dyn ToolRanker>,
    name: String,
    writer: KeywordWriter,
}

impl ExpandingRanker {
    /// Ranks with `inner` after `model` has added its keywords to each query.
    pub fn new(inner: Arc<dyn ToolRanker>, model: Arc<dyn ChatModel>) -> Self {
        let name = format!("{}+keywords", inner.name());
        Self { inner, name, writer: KeywordWriter::new(model) }
    }

    /// The query the inner ranker is given: `query`, then a line of the model's keywords (none
    /// when the model failed or wrote none).
    pub async fn expand(&self, query: &str) -> String {
        self.writer.expand(query).await
    }

    /// What the keyword model has cost so far.
    pub fn usage(&self) -> ExpansionUsage {
        self.writer.usage()
    }
}

/// A chat model writing search keywords for queries, remembering its recent answers and
/// counting what it costs: what [`ExpandingRanker`] and a gateway host's pre-search
/// ([`GatewayPreSearch::with_keywords`](crate::mcp::GatewayPreSearch::with_keywords)) share.
pub(crate) struct KeywordWriter {
    model: Arc<dyn ChatModel>,
    cache: Mutex<HashMap<String, Arc<str>>>,
    calls: AtomicU64,
    failed: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

impl KeywordWriter {
    /// Keywords written by `model`.
    pub(crate) fn new(model: Arc<dyn ChatModel>) -> Self {
        Self {
            model,
            cache: Mutex::new(HashMap::new()),
            calls: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            prompt_tokens: AtomicU64::new(0),
            completion_tokens: AtomicU64::new(0),
        }
    }

    /// `query` (trimmed), then a line of the model's keywords (none when the model failed or
    /// wrote none); an empty query stays empty and costs no request.
    pub(crate) async fn expand(&self, query: &str) -> String {
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
        with_keywords(query, &keywords)
    }

    /// What the keyword model has cost so far.
    pub(crate) fn usage(&self) -> ExpansionUsage {
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
        let request = keyword_request(query);
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
