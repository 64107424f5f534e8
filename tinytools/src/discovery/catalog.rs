//! [`DeferredCatalog`]: the run's deferred tools, fixed at run start, and the ranking over them.

use std::sync::Arc;
use std::time::Instant;

use super::policy::{RankMode, ToolDiscoveryPolicy};
use crate::rank::{Bm25Index, Bm25Params, FieldWeights, RankContext, RankRequest, RankedTool, Tokenizer, ToolDocument};
use crate::surface::{Surface, SurfaceTool};
use crate::unwind::{CatchUnwind, catch_call};
use crate::{ToolExposure, ToolRegistry, ToolSchema};

/// One deferred tool as the catalogue holds it: the surface's own record of it.
pub type CatalogTool = SurfaceTool;

/// The deferred tools of a run: built once at run start from the registry's Deferred tools
/// that the host allow-list admits, and indexed for BM25.
///
/// ```
/// use tinytools::discovery::{DeferredCatalog, ToolDiscoveryPolicy};
/// use tinytools::{ToolRegistry, tool};
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool(exposure = "deferred", family = "finance")]
/// async fn stock_quote(/** Ticker symbol. */ symbol: String) -> String { symbol }
///
/// /// Send an email to one or more people.
/// #[tool(exposure = "deferred", family = "mail")]
/// async fn send_email(/** Recipients. */ to: Vec<String>) -> String { to.join(",") }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(StockQuote)?.register(SendEmail)?;
/// let catalog = DeferredCatalog::new(&registry, |_| true);
/// assert_eq!(catalog.len(), 2);
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let outcome = catalog.rank(&ToolDiscoveryPolicy::default(), "share price of ACME", 5).await;
/// assert_eq!(outcome.matched[0].name, "stock_quote");
/// assert_eq!(outcome.ranker, "bm25");
/// # });
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
#[derive(Clone, Debug)]
pub struct DeferredCatalog {
    /// Name-sorted and unique: [`get`](Self::get) binary-searches it.
    tools: Vec<CatalogTool>,
    index: Bm25Index,
}

/// What one ranking produced, and how: the material of a `ToolSearched` event.
#[derive(Clone, Debug, PartialEq)]
pub struct RankOutcome {
    /// The matches, best first, every one a tool of the catalogue.
    pub matched: Vec<RankedTool>,
    /// Which ranking answered: `"bm25"` or the host ranker's name.
    pub ranker: String,
    /// The first match's confidence, when the ranker gave one.
    pub top_confidence: Option<f32>,
    /// Why a host ranker was not served, when it was not.
    pub fallback: Option<String>,
    /// In [`RankMode::Compare`], what BM25 would have answered.
    pub shadow_matched: Option<Vec<String>>,
    /// How long the ranking took.
    pub latency_ms: f64,
}

impl DeferredCatalog {
    /// The registry's Deferred tools that `allowed` admits (for ranking outside a run; a run
    /// builds its catalogue from its [`Surface`] with [`of_surface`](Self::of_surface)).
    pub fn new(registry: &ToolRegistry, allowed: impl Fn(&str) -> bool) -> Self {
        let tools = registry
            .iter()
            .filter(|tool| tool.exposure() == ToolExposure::Deferred && allowed(tool.name()))
            .map(|tool| {
                SurfaceTool::new(tool.shared_schema(), ToolExposure::Deferred, tool.family(), tool.compaction())
            })
            .collect();
        Self::index(tools, &FieldWeights::default())
    }

    /// A run's catalogue: the Deferred tools its surface admits.
    pub fn of_surface(surface: &Surface) -> Self {
        Self::index(surface.deferred().cloned().collect(), &FieldWeights::default())
    }

    /// A catalogue of the given declarations and families, sorted by name (so the manifest is
    /// byte-stable); a repeated name keeps its first declaration.
    pub fn from_tools<S: Into<Arc<ToolSchema>>>(tools: impl IntoIterator<Item = (S, Option<String>)>) -> Self {
        Self::with_weights(tools, &FieldWeights::default())
    }

    /// As [`from_tools`](Self::from_tools), with other field weights.
    pub fn with_weights<S: Into<Arc<ToolSchema>>>(
        tools: impl IntoIterator<Item = (S, Option<String>)>,
        weights: &FieldWeights,
    ) -> Self {
        let tools = tools
            .into_iter()
            .map(|(schema, family)| SurfaceTool::new(schema.into(), ToolExposure::Deferred, family.as_deref(), None))
            .collect();
        Self::index(tools, weights)
    }

    /// Sorts, deduplicates and indexes the catalogue's tools.
    fn index(mut list: Vec<CatalogTool>, weights: &FieldWeights) -> Self {
        // Stable: of two tools with one name, the first given stays.
        list.sort_by(|a, b| a.schema().name.cmp(&b.schema().name));
        list.dedup_by(|later, kept| later.schema().name == kept.schema().name);
        let weights = *weights;
        // Each document's fields are read on the thread that tokenizes it.
        let document = |i: usize| ToolDocument::new(list[i].schema(), list[i].family()).fields(weights);
        let index = Bm25Index::build_split(list.len(), document, Tokenizer::default(), Bm25Params::default());
        Self { tools: list, index }
    }

    /// The tool of that name, if the catalogue holds it.
    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.tools.binary_search_by(|tool| tool.schema().name.as_str().cmp(name)).ok().map(|i| &self.tools[i])
    }

    /// How many tools the catalogue holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalogue is empty (then no bridge is advertised).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every tool, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &CatalogTool> {
        self.tools.iter()
    }

    /// BM25's best `limit` tools for `query`, with confidences.
    pub fn bm25(&self, query: &str, limit: usize) -> Vec<RankedTool> {
        self.index
            .search(query, limit)
            .into_iter()
            .map(|hit| RankedTool { name: self.tools[hit.doc].schema().name.clone(), confidence: Some(hit.confidence) })
            .collect()
    }

    /// Ranks the catalogue for `query` as `policy` says. Never fails: a host ranker that
    /// errors, panics, times out, or names nothing the catalogue holds falls back to BM25, and
    /// the reason is in [`RankOutcome::fallback`]. Every match is resolved through
    /// [`get`](Self::get), so a name the ranker invented never reaches the model. `limit` is
    /// clamped into `1..=policy.max_limit`.
    pub async fn rank(&self, policy: &ToolDiscoveryPolicy, query: &str, limit: usize) -> RankOutcome {
        let started = Instant::now();
        let limit = policy.limit(Some(u64::try_from(limit).unwrap_or(u64::MAX)));
        let host = policy.ranker.as_ref().filter(|_| policy.rank_mode != RankMode::Bm25);
        let Some(ranker) = host else {
            return self.bm25_outcome(query, limit, None, started);
        };
        let context = RankContext::default();
        let request = RankRequest { query, limit, catalog: self, context: &context };
        let name = ranker.name().to_owned();
        // A panic before the future exists is caught like one while it is polled.
        let answer = match catch_call(|| ranker.rank(request)) {
            Ok(future) => tokio::time::timeout(policy.ranker_timeout, CatchUnwind(future)).await,
            Err(panic) => Ok(Err(panic)),
        };
        let hits = match answer {
            Err(_) => Err(format!("ranker `{name}` timed out after {} ms", policy.ranker_timeout.as_millis())),
            Ok(Err(panic)) => Err(format!("ranker `{name}` panicked: {panic}")),
            Ok(Ok(Err(error))) => Err(format!("ranker `{name}` failed: {error:#}")),
            Ok(Ok(Ok(hits))) => self.resolve(&name, hits, limit),
        };
        match hits {
            Err(reason) => {
                tracing::warn!(ranker = %name, %reason, "host ranker not served; BM25 answers");
                self.bm25_outcome(query, limit, Some(reason), started)
            }
            Ok(matched) => {
                let shadow_matched = (policy.rank_mode == RankMode::Compare)
                    .then(|| self.bm25(query, limit).into_iter().map(|hit| hit.name).collect());
                RankOutcome {
                    top_confidence: matched.first().and_then(|hit| hit.confidence),
                    matched,
                    ranker: name,
                    fallback: None,
                    shadow_matched,
                    latency_ms: elapsed_ms(started),
                }
            }
        }
    }

    /// Keeps the hits the catalogue holds, once each, at most `limit`.
    fn resolve(&self, ranker: &str, hits: Vec<RankedTool>, limit: usize) -> Result<Vec<RankedTool>, String> {
        let proposed = hits.len();
        let mut matched: Vec<RankedTool> = Vec::new();
        for hit in hits {
            if self.get(&hit.name).is_some() && !matched.iter().any(|m| m.name == hit.name) {
                let confidence = hit.confidence.filter(|c| c.is_finite()).map(|c| c.clamp(0.0, 1.0));
                matched.push(RankedTool { name: hit.name, confidence });
            }
        }
        matched.truncate(limit);
        match (proposed, matched.is_empty()) {
            (0, _) => Err(format!("ranker `{ranker}` returned nothing")),
            (n, true) => Err(format!("ranker `{ranker}` named {n} tool(s), none of them in the catalogue")),
            _ => Ok(matched),
        }
    }

    fn bm25_outcome(&self, query: &str, limit: usize, fallback: Option<String>, started: Instant) -> RankOutcome {
        let matched = self.bm25(query, limit);
        RankOutcome {
            top_confidence: matched.first().and_then(|hit| hit.confidence),
            matched,
            ranker: "bm25".to_owned(),
            fallback,
            shadow_matched: None,
            latency_ms: elapsed_ms(started),
        }
    }
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1_000.0
}
