//! [`ToolRanker`]: the pluggable ranking the discovery bridge asks.

use super::catalog::DeferredCatalog;
use super::ranked::RankedTool;

/// What a ranker may know besides the query.
///
/// The discovery bridge always passes an empty context: the model's query is the only intent,
/// because the model already distilled the turn into it. Hosts that rank outside the bridge
/// may fill it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RankContext {
    /// Recent conversation text, most recent last.
    pub conversation: Vec<String>,
}

/// Everything a ranker is asked with.
///
/// ```
/// use tinytools::ToolSchema;
/// use tinytools::rank::{DeferredCatalog, RankContext, RankRequest};
///
/// let quote = ToolSchema::new("stock_quote", "Fetch a stock price.", serde_json::json!({"type": "object"}));
/// let catalog = DeferredCatalog::from_tools([(quote, None)]);
/// let context = RankContext::default();
/// let request = RankRequest::new("stock price", 5, &catalog, &context);
/// let narrower = request.with_query("stock quote");
/// assert_eq!((narrower.query, narrower.limit), ("stock quote", 5));
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct RankRequest<'a> {
    /// The model's words: what it wants to do.
    pub query: &'a str,
    /// How many tools to return at most.
    pub limit: usize,
    /// The deferred tools it may choose from.
    pub catalog: &'a DeferredCatalog,
    /// Anything else the caller knows (empty from the bridge).
    pub context: &'a RankContext,
}

impl<'a> RankRequest<'a> {
    /// A request for at most `limit` tools of `catalog` that fit `query`, with `context`.
    pub fn new(query: &'a str, limit: usize, catalog: &'a DeferredCatalog, context: &'a RankContext) -> Self {
        Self { query, limit, catalog, context }
    }

    /// The same request for `query` (a ranker that rewrites the query before another ranks).
    #[must_use]
    pub fn with_query(self, query: &'a str) -> Self {
        Self { query, ..self }
    }
}

/// Why a host ranker gave no ranking. A search never fails on it: BM25 answers, and the
/// reason (this error's text and its causes) lands in `ToolSearched.fallback`.
///
/// ```
/// use tinytools::rank::RankerError;
///
/// let down = RankerError::unavailable("the embedding service at 10.0.0.7 did not answer");
/// assert!(down.to_string().contains("did not answer"));
/// let failed = RankerError::failed(std::io::Error::other("socket closed"));
/// assert!(std::error::Error::source(&failed).is_some());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RankerError {
    /// What the ranker needs is not there (a model still loading, a service down).
    #[error("the ranker is unavailable: {reason}")]
    Unavailable {
        /// What is missing.
        reason: String,
    },
    /// The ranker failed; the cause is kept for the host.
    #[error("the ranker failed")]
    Failed {
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl RankerError {
    /// What the ranker needs is not there.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self::Unavailable { reason: reason.into() }
    }

    /// The ranker failed with this error.
    pub fn failed(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Failed { source: Box::new(source) }
    }
}

/// Ranks the deferred catalogue for a query: a decision model, an embedding index, a
/// cross-encoder... Installed with
/// [`ToolDiscoveryPolicy::with_ranker`](crate::discovery::ToolDiscoveryPolicy::with_ranker).
///
/// A ranker may fail, time out, panic or return nothing: the bridge then answers with BM25
/// and records why. It cannot make an error reach the model.
///
/// ```
/// use tinytools::rank::{RankRequest, RankedTool, RankerError, ToolRanker};
///
/// /// Ranks tools whose name starts with the query first.
/// struct Prefix;
///
/// #[async_trait::async_trait]
/// impl ToolRanker for Prefix {
///     fn name(&self) -> &str { "prefix" }
///     async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
///         Ok(request
///             .catalog
///             .iter()
///             .filter(|tool| tool.schema().name.starts_with(request.query))
///             .take(request.limit)
///             .map(|tool| RankedTool::new(tool.schema().name.clone(), None))
///             .collect())
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait ToolRanker: Send + Sync {
    /// A short name, recorded in `ToolSearched.ranker`.
    fn name(&self) -> &str;

    /// The best tools for the request, best first, at most `request.limit`.
    ///
    /// # Errors
    /// [`RankerError`]: the bridge answers with BM25 instead and records why.
    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError>;
}

/// The default ranking as a [`ToolRanker`]: the catalogue's own BM25 index. Useful to compose
/// (re-rank BM25's candidates) or to compare against.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bm25Ranker;

#[async_trait::async_trait]
impl ToolRanker for Bm25Ranker {
    fn name(&self) -> &str {
        "bm25"
    }

    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        Ok(request.catalog.bm25(request.query, request.limit))
    }
}

/// The confidence pre-promotion asks of a hit by default
/// ([`PrePromotion::min_confidence`](crate::discovery::PrePromotion::min_confidence)): BM25's
/// confidence counts every word of the message, and the embedding ranker's is calibrated to
/// reach this value at its calibrated cosine (`EmbeddingRanker::cosine_floor`, feature
/// `embedding`). It lives with the rankers, whose confidences are scaled to it; discovery
/// re-exports it.
pub const DEFAULT_MIN_CONFIDENCE: f32 = 0.05;
