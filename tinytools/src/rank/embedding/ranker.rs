//! [`EmbeddingRanker`]: cosine similarity to each tool's embedded description, blended with BM25.

use std::path::Path;
use std::sync::Arc;

use super::keep::fill_and_keep;
use super::score::{Blend, Explanation, score};
use super::store::{Pending, Store};
use super::{EmbeddingError, TextEmbedder};
use crate::rank::catalog::DeferredCatalog;
use crate::rank::ranked::RankedTool;
use crate::rank::ranker::{RankRequest, RankerError, ToolRanker};

/// Ranks the deferred catalogue by the meaning of the query: each tool's
/// `"{name}: {description} Parameters: {top-level property names} Family: {family description}"`
/// (the last part when its family has a description, which only ranking reads) is embedded once (and
/// again only when it changes), the query once per search, and tools are ordered by their
/// cosine similarity to the query, min-max scaled over the catalogue, plus
/// [`bm25_weight`](Self::bm25_weight) × BM25's score relative to its best hit.
///
/// The blend keeps BM25's precision on exact words ("`currency_exchange.convert`") and adds
/// the embedding's reach across synonyms; on the eval sets it beats either alone
/// (`docs/retrieval.md`).
///
/// `confidence` is calibrated so that pre-promotion's default floor
/// ([`DEFAULT_MIN_CONFIDENCE`](crate::rank::DEFAULT_MIN_CONFIDENCE)) promotes a tool only
/// when its cosine reaches [`cosine_floor`](Self::cosine_floor), chosen on public dev sets for
/// each model ([`TextEmbedder::calibrated_cosine_floor`]). For all-MiniLM-L6-v2: every sentence is somewhat like every other to MiniLM (0.1–0.3 between
/// unrelated texts), so the raw cosine passed anything over the 0.05 floor. A message about
/// none of the tools now rarely promotes anything (none of the live suite's no-tool messages;
/// 5.8 % of unrelated questions), at a price: everyday words often sit below the floor too,
/// so it pre-promotes the right tool less often than BM25 does (`docs/retrieval.md`).
/// [`explain`](Self::explain) shows the numbers.
///
/// Embedding runs on Tokio's blocking pool. The first search over a catalogue embeds every
/// tool (8–13 ms of CPU a tool for all-MiniLM-L6-v2, spread over every core): call
/// [`prepare`](Self::prepare) ahead ([`warm`](Self::warm) to keep the vectors in a file across
/// restarts), or let the bridge's ranker timeout fall back to BM25
/// while the cache fills. The fill goes on in the background when the bridge gives up on its
/// search, and only one runs at a time: a search that finds one under way waits for it
/// without occupying a blocking thread, so searches given up on meanwhile leave no work
/// behind. The cache keeps one vector per tool name it has seen (1.5 KB for a
/// 384-number model), across runs and allow-lists, so share one ranker between agents over
/// the same registry. Only catalogue tools (Deferred, admitted) are ever embedded: a Hidden
/// tool's text never reaches the embedder, which may be a remote service.
///
/// Unlike BM25 it always proposes its nearest tools, even for a query that matches nothing
/// well; `confidence` says how near.
pub struct EmbeddingRanker {
    pub(super) embedder: Arc<dyn TextEmbedder>,
    name: String,
    pub(super) bm25_weight: f32,
    pub(super) cosine_floor: f32,
    pub(super) store: Arc<Store>,
    /// The file [`persist_to`](Self::persist_to) keeps the vectors in.
    pub(super) persist: Option<Arc<Path>>,
    /// What [`on_progress`](Self::on_progress) set.
    progress: Option<Progress>,
}

/// A host's progress callback: `(done, total)`.
type Progress = Arc<dyn Fn(usize, usize) + Send + Sync>;

impl std::fmt::Debug for EmbeddingRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingRanker")
            .field("name", &self.name)
            .field("bm25_weight", &self.bm25_weight)
            .field("cosine_floor", &self.cosine_floor)
            .field("persist", &self.persist)
            .field("progress", &self.progress.as_ref().map(|_| "set"))
            .finish()
    }
}

impl EmbeddingRanker {
    /// A ranker over `embedder`, blending BM25 at the measured default weight (0.4), its
    /// confidence calibrated for that model ([`TextEmbedder::calibrated_cosine_floor`]: the
    /// `tinytools-embed` crate's models give their measured floors; for another model, measure
    /// its own with `embedding_calibration` and set [`cosine_floor`](Self::cosine_floor) or
    /// implement that method). To load all-MiniLM-L6-v2 from a directory,
    /// `tinytools_embed::load_ranker(dir)`.
    pub fn new(embedder: Arc<dyn TextEmbedder>) -> Self {
        let name = format!("embedding:{}", embedder.name());
        let floor = embedder.calibrated_cosine_floor();
        Self {
            embedder,
            name,
            bm25_weight: 0.4,
            cosine_floor: 0.0,
            store: Arc::default(),
            persist: None,
            progress: None,
        }
        .cosine_floor(floor)
    }

    /// Calls `progress(done, total)` as a search embeds the catalogue's new tools, from the
    /// blocking thread that embeds them, as [`prepare_with_progress`](Self::prepare_with_progress)
    /// does: what a host that lets searches fill the cache (the gateway) shows as a progress
    /// bar.
    ///
    /// ```
    /// use tinytools::rank::embedding::EmbeddingRanker;
    /// # fn demo(ranker: EmbeddingRanker) {
    /// let ranker = ranker.on_progress(|done, total| eprint!("\rembedding tools: {done}/{total}"));
    /// # let _ = ranker; }
    /// ```
    #[must_use]
    pub fn on_progress(mut self, progress: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// The cosine at which a hit's confidence reaches pre-promotion's default floor: below it
    /// a hit is not promoted by default. The confidence is 0 at a cosine of 0, rises linearly
    /// to [`DEFAULT_MIN_CONFIDENCE`](crate::rank::DEFAULT_MIN_CONFIDENCE) at this cosine
    /// and on to 1 at a cosine of 1. Ranking does not depend on it. Non-finite or negative
    /// values count as `0` (every hit with a positive cosine passes the default floor).
    #[must_use]
    pub fn cosine_floor(mut self, cosine: f32) -> Self {
        self.cosine_floor = if cosine.is_finite() { cosine.max(0.0) } else { 0.0 };
        self
    }

    /// How much BM25's score, relative to its best hit, adds to the scaled cosine (both run
    /// `0..=1`): `0` ranks by meaning alone.
    /// Negative or non-finite values count as `0`.
    #[must_use]
    pub fn bm25_weight(mut self, weight: f32) -> Self {
        self.bm25_weight = if weight.is_finite() { weight.max(0.0) } else { 0.0 };
        self
    }

    /// Embeds every tool of `catalog` not yet embedded (or whose text changed), from this
    /// thread (the embedder spreads the work over the cores). Returns how many were embedded.
    /// To keep the vectors across restarts, [`warm`](Self::warm) instead.
    ///
    /// # Errors
    /// The embedder's error.
    pub fn prepare(&self, catalog: &DeferredCatalog) -> Result<usize, EmbeddingError> {
        self.prepare_with_progress(catalog, |_, _| {})
    }

    /// [`prepare`](Self::prepare), calling `progress(done, total)` on this thread: once with
    /// `done` 0 when there is anything to embed, then as each chunk of tools lands (about every
    /// 128 tools), last with `done == total`. What a host shows as a progress bar.
    ///
    /// # Errors
    /// The embedder's error; the tools embedded before it are kept.
    pub fn prepare_with_progress(
        &self,
        catalog: &DeferredCatalog,
        progress: impl Fn(usize, usize),
    ) -> Result<usize, EmbeddingError> {
        fill_and_keep(&self.store, &*self.embedder, self.store.stale(catalog), &progress, self.persist.as_deref())
    }

    /// What the ranking is made of for `query`: the catalogue's background similarity and its
    /// best `limit` tools, each with its cosine, BM25 share, blended score and calibrated
    /// confidence. Runs on this thread, embedding the catalogue's missing tools first
    /// ([`prepare`](Self::prepare)) and the query. For calibrating and for explaining a
    /// promotion; searches go through [`ToolRanker::rank`].
    ///
    /// # Errors
    /// The embedder's error.
    pub fn explain(&self, catalog: &DeferredCatalog, query: &str, limit: usize) -> Result<Explanation, EmbeddingError> {
        self.prepare(catalog)?;
        let vector = self.embedder.embed_query(query)?;
        self.store.check_embedded(std::slice::from_ref(&vector))?;
        if self.store.evict_other_widths(vector.len()) > 0 {
            self.prepare(catalog)?;
        }
        Ok(self.score(catalog, query, &vector, limit))
    }

    /// Scores `catalog` for `query` (embedded as `vector`) at this ranker's blend.
    fn score(&self, catalog: &DeferredCatalog, query: &str, vector: &[f32], limit: usize) -> Explanation {
        let blend = Blend { bm25_weight: self.bm25_weight, cosine_floor: self.cosine_floor };
        score(&*self.embedder, &self.store, blend, catalog, query, vector, limit)
    }
}

impl EmbeddingRanker {
    /// The catalogue's tools still to embed and, when there are any, the background-fill gate
    /// to embed them under. Waits for a fill under way first (it may embed them), then looks
    /// again.
    async fn missing(&self, catalog: &DeferredCatalog) -> (Vec<Pending>, Option<tokio::sync::OwnedMutexGuard<()>>) {
        if self.store.stale(catalog).is_empty() {
            return (Vec::new(), None);
        }
        let gate = Arc::clone(&self.store.background).lock_owned().await;
        let missing = self.store.stale(catalog);
        let gate = (!missing.is_empty()).then_some(gate);
        (missing, gate)
    }
}

#[async_trait::async_trait]
impl ToolRanker for EmbeddingRanker {
    fn name(&self) -> &str {
        &self.name
    }

    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        let (missing, gate) = self.missing(request.catalog).await;
        let (embedder, store, query) = (Arc::clone(&self.embedder), Arc::clone(&self.store), request.query.to_owned());
        let (persist, progress) = (self.persist.clone(), self.progress.clone());
        // The catalogue's missing tools and the query, off the async runtime. Vectors land in
        // the cache (and the persisted file) even when the bridge's timeout gives up on this
        // search; the gate is held until they have, so two writes never interleave.
        let query_vector = tokio::task::spawn_blocking(move || -> Result<Vec<f32>, EmbeddingError> {
            let report = |done, total| progress.iter().for_each(|progress| progress(done, total));
            fill_and_keep(&store, &*embedder, missing, &report, persist.as_deref())?;
            drop(gate);
            let vector = embedder.embed_query(&query)?;
            store.check_embedded(std::slice::from_ref(&vector))?;
            Ok(vector)
        })
        .await
        .map_err(|e| EmbeddingError::model(format!("the embedder panicked or was cancelled: {e}")))??;
        // Vectors from a file of another length than the embedder's: drop and embed again.
        if self.store.evict_other_widths(query_vector.len()) > 0 {
            let (missing, gate) = self.missing(request.catalog).await;
            let (embedder, store, persist) =
                (Arc::clone(&self.embedder), Arc::clone(&self.store), self.persist.clone());
            tokio::task::spawn_blocking(move || {
                let filled = fill_and_keep(&store, &*embedder, missing, &|_, _| {}, persist.as_deref());
                drop(gate);
                filled
            })
            .await
            .map_err(|e| EmbeddingError::model(format!("the embedder panicked or was cancelled: {e}")))??;
        }

        let explanation = self.score(request.catalog, request.query, &query_vector, request.limit);
        Ok(explanation
            .hits
            .into_iter()
            .map(|hit| RankedTool { name: hit.name, confidence: Some(hit.confidence) })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::super::score::UNCALIBRATED_COSINE_FLOOR;
    use super::super::store::document;
    use super::super::vectors_file::{SavedTool, SavedVectors};
    use super::*;
    use crate::schema::ToolSchema;

    /// Embeds a text as its length and one, normalised: enough to watch calls and the cache.
    struct Lengths(std::sync::atomic::AtomicUsize);

    impl TextEmbedder for Lengths {
        fn name(&self) -> &str {
            "lengths"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            self.0.fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok(crate::rank::embedding::length_vectors(texts))
        }
    }

    fn schema(name: &str, description: &str, parameters: serde_json::Value) -> ToolSchema {
        ToolSchema { name: name.into(), description: description.into(), parameters }
    }

    #[test]
    fn the_embedded_text_is_name_description_and_parameter_names() {
        let with = schema(
            "stock_quote",
            "Latest price.",
            serde_json::json!({"type": "object", "properties": {"symbol": {}, "venue": {}}}),
        );
        assert_eq!(document(&with, None), "stock_quote: Latest price. Parameters: symbol, venue");
        let without = schema("ping", "Checks the link.", serde_json::json!({"type": "object"}));
        assert_eq!(document(&without, None), "ping: Checks the link.");
        assert_eq!(
            document(&with, Some("Market data from an exchange.")),
            "stock_quote: Latest price. Parameters: symbol, venue Family: Market data from an exchange."
        );
        assert_eq!(document(&without, Some("")), "ping: Checks the link.");
    }

    #[test]
    fn weights_that_make_no_sense_count_as_zero() {
        let ranker = || EmbeddingRanker::new(Arc::new(Lengths(0.into())));
        assert_eq!(ranker().bm25_weight, 0.4);
        for bad in [-1.0, f32::NAN, f32::INFINITY] {
            assert_eq!(ranker().bm25_weight(bad).bm25_weight, 0.0);
        }
        assert_eq!(ranker().name(), "embedding:lengths");
        assert_eq!(ranker().cosine_floor, UNCALIBRATED_COSINE_FLOOR);
        for bad in [-1.0, f32::NAN, f32::NEG_INFINITY] {
            assert_eq!(ranker().cosine_floor(bad).cosine_floor, 0.0);
        }
        assert_eq!(ranker().cosine_floor(0.2).cosine_floor, 0.2);
    }

    /// [`Lengths`] with a calibrated floor of its own.
    struct Calibrated(f32);

    impl TextEmbedder for Calibrated {
        fn name(&self) -> &str {
            "calibrated"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            Ok(crate::rank::embedding::length_vectors(texts))
        }
        fn calibrated_cosine_floor(&self) -> f32 {
            self.0
        }
    }

    #[test]
    fn a_new_ranker_starts_from_its_embedders_calibrated_floor() {
        assert_eq!(Lengths(0.into()).calibrated_cosine_floor(), 0.5, "the default: no model's");
        let floor = |embedder: Calibrated| EmbeddingRanker::new(Arc::new(embedder)).cosine_floor;
        assert_eq!(floor(Calibrated(0.594)), 0.594);
        assert_eq!(floor(Calibrated(0.3)), 0.3);
        for bad in [-1.0, f32::NAN, f32::INFINITY] {
            assert_eq!(floor(Calibrated(bad)), 0.0, "{bad} counts as 0, as with cosine_floor");
        }
        let set = EmbeddingRanker::new(Arc::new(Calibrated(0.3))).cosine_floor(0.5);
        assert_eq!(set.cosine_floor, 0.5, "a host's choice wins");
    }

    #[tokio::test]
    async fn tools_are_embedded_once_and_every_hit_is_a_catalogue_tool() {
        let embedder = Arc::new(Lengths(0.into()));
        let reported = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = Arc::clone(&reported);
        let ranker = EmbeddingRanker::new(embedder.clone()).bm25_weight(0.0).on_progress(move |done, total| {
            seen.lock().map(|mut seen| seen.push((done, total))).ok();
        });
        let catalog = DeferredCatalog::from_tools([
            (schema("a", "short", serde_json::json!({})), None),
            (schema("b", "a much longer description", serde_json::json!({})), None),
        ]);
        let context = crate::rank::RankContext::default();
        let request = |query| RankRequest { query, limit: 5, catalog: &catalog, context: &context };
        let first = ranker.rank(request("x")).await.unwrap_or_default();
        assert_eq!(first.iter().map(|hit| hit.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(embedder.0.load(std::sync::atomic::Ordering::SeqCst), 3, "two tools and the query");
        let _ = ranker.rank(request("a much longer query text")).await;
        assert_eq!(embedder.0.load(std::sync::atomic::Ordering::SeqCst), 4, "only the query again");
        let reported = reported.lock().map(|seen| seen.clone()).unwrap_or_default();
        assert_eq!(reported, [(0, 2), (2, 2)], "the first search's fill, and nothing for the second");
    }

    /// Embeds a text as a point on the unit circle picked by its bytes: spread out, no sleep.
    struct Angles;

    impl TextEmbedder for Angles {
        fn name(&self) -> &str {
            "angles"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            let angle = |t: &str| t.bytes().fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b))) as f32;
            Ok(texts.iter().map(|t| vec![angle(t).sin(), angle(t).cos()]).collect())
        }
    }

    /// Embeds tool texts as [`Angles`] does but answers every query with the vector of the
    /// text `"b"`: a search that embeds its query with `embed` instead finds `a`.
    struct QueryPath;

    impl TextEmbedder for QueryPath {
        fn name(&self) -> &str {
            "query-path"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            Ok(texts.iter().map(|text| if text.starts_with('a') { vec![1.0, 0.0] } else { vec![0.0, 1.0] }).collect())
        }
        fn embed_query(&self, _query: &str) -> Result<Vec<f32>, EmbeddingError> {
            Ok(vec![0.0, 1.0])
        }
    }

    #[tokio::test]
    async fn searches_and_explanations_embed_the_query_through_embed_query() {
        let catalog = DeferredCatalog::from_tools(
            ["a", "b"].map(|name| (schema(name, "does a thing", serde_json::json!({})), None)),
        );
        let ranker = EmbeddingRanker::new(Arc::new(QueryPath)).bm25_weight(0.0);
        let context = crate::rank::RankContext::default();
        let hits = ranker.rank(RankRequest { query: "a", limit: 1, catalog: &catalog, context: &context }).await;
        assert_eq!(hits.unwrap_or_default().into_iter().map(|hit| hit.name).collect::<Vec<_>>(), ["b"]);
        let explained = ranker.explain(&catalog, "a", 1).map(|e| e.hits.into_iter().map(|t| t.name).collect());
        assert_eq!(explained.ok(), Some(vec!["b".to_owned()]));
    }

    #[tokio::test]
    async fn a_catalogue_scored_on_every_core_ranks_as_one_pass_would() {
        // Past the size from which the cosines are shared over the cores.
        let tools: Vec<ToolSchema> = (0..1_500)
            .map(|i| schema(&format!("tool_{i}"), &format!("does thing {i}"), serde_json::json!({})))
            .collect();
        let catalog = DeferredCatalog::from_tools(tools.iter().cloned().map(|tool| (tool, None)));
        let ranker = EmbeddingRanker::new(Arc::new(Angles)).bm25_weight(0.0);
        let context = crate::rank::RankContext::default();
        let hits = ranker.rank(RankRequest { query: "q", limit: 20, catalog: &catalog, context: &context }).await;
        let got: Vec<String> = hits.unwrap_or_default().into_iter().map(|hit| hit.name).collect();
        let vectors = Angles.embed(
            &tools
                .iter()
                .map(|schema| document(schema, None))
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        let query = Angles.embed(&["q"]).unwrap_or_default().concat();
        let mut want: Vec<(f32, &str)> = vectors
            .unwrap_or_default()
            .iter()
            .zip(&tools)
            .map(|(v, tool)| (v.iter().zip(&query).map(|(a, b)| a * b).sum(), tool.name.as_str()))
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        let want: Vec<&str> = want.iter().take(20).map(|(_, name)| *name).collect();
        assert_eq!(got, want);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_searches_over_a_new_catalogue_embed_it_once() {
        let embedder = Arc::new(Lengths(0.into()));
        let ranker = EmbeddingRanker::new(embedder.clone());
        let catalog = DeferredCatalog::from_tools(
            (0..8).map(|i| (schema(&format!("tool_{i}"), "does a thing", serde_json::json!({})), None)),
        );
        let context = crate::rank::RankContext::default();
        let request = |query| RankRequest { query, limit: 3, catalog: &catalog, context: &context };
        let (a, b) = tokio::join!(ranker.rank(request("one")), ranker.rank(request("two")));
        assert_eq!((a.map(|hits| hits.len()).ok(), b.map(|hits| hits.len()).ok()), (Some(3), Some(3)));
        assert_eq!(embedder.0.load(std::sync::atomic::Ordering::SeqCst), 8 + 2, "eight tools once, two queries");
    }

    #[test]
    fn a_tool_seen_as_the_same_declaration_is_not_read_again() {
        let ranker = EmbeddingRanker::new(Arc::new(Lengths(0.into())));
        let tools = || {
            [(schema("a", "short", serde_json::json!({})), None), (schema("b", "longer", serde_json::json!({})), None)]
        };
        let first = DeferredCatalog::from_tools(tools());
        assert_eq!(ranker.prepare(&first).ok(), Some(2));
        // Linked to the declarations it read: nothing is stale, without reading any text.
        assert!(ranker.store.stale(&first).is_empty());
        let linked = |catalog: &DeferredCatalog| {
            let cache = ranker.store.read();
            catalog.iter().all(|tool| {
                cache[&tool.schema().name].schema.as_ref().is_some_and(|s| Arc::ptr_eq(s, tool.shared_schema()))
            })
        };
        assert!(linked(&first));
        // Equal declarations in new allocations: same text, so nothing to embed; relinked.
        let second = DeferredCatalog::from_tools(tools());
        assert!(!linked(&second));
        assert_eq!(ranker.prepare(&second).ok(), Some(0));
        assert!(linked(&second));
    }

    #[tokio::test]
    async fn vectors_of_another_length_loaded_first_are_embedded_again_at_the_first_search() {
        let path = std::env::temp_dir().join(format!("tinytools-wide-vectors-{}.json", std::process::id()));
        // Unit vectors, consistent, current texts: only their length (3, the embedder's is 2) is wrong.
        let tool =
            |name: &str, text: &str, vector: Vec<f32>| SavedTool { name: name.into(), text: text.into(), vector };
        let tools = vec![tool("a", "a: short", vec![1.0, 0.0, 0.0]), tool("b", "b: longer text", vec![0.0, 1.0, 0.0])];
        std::fs::write(&path, SavedVectors { model: "lengths".into(), width: 3, tools }.encode()).ok();
        let embedder = Arc::new(Lengths(0.into()));
        let ranker = EmbeddingRanker::new(embedder.clone()).bm25_weight(0.0);
        assert_eq!(ranker.load_vectors(&path).ok(), Some(2), "the embedder's length is not known yet");
        std::fs::remove_file(&path).ok();
        let catalog = DeferredCatalog::from_tools([
            (schema("a", "short", serde_json::json!({})), None),
            (schema("b", "longer text", serde_json::json!({})), None),
        ]);
        let context = crate::rank::RankContext::default();
        let request = RankRequest { query: "x", limit: 5, catalog: &catalog, context: &context };
        let hits = ranker.rank(request).await.map_err(|e| e.to_string());
        let names = hits.map(|hits| hits.into_iter().map(|hit| hit.name).collect::<Vec<_>>());
        assert_eq!(names, Ok(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(embedder.0.load(std::sync::atomic::Ordering::SeqCst), 1 + 2, "the query, then both tools again");
        assert!(ranker.store.read().values().all(|e| e.vector.len() == 2));
    }

    /// Embeds nothing until released, then slowly; counts the texts it embeds and how many
    /// calls overlap.
    #[derive(Default)]
    struct Held {
        released: std::sync::atomic::AtomicBool,
        texts: AtomicUsize,
        running: AtomicUsize,
        most_at_once: AtomicUsize,
    }

    impl TextEmbedder for Held {
        fn name(&self) -> &str {
            "held"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_at_once.fetch_max(now, Ordering::SeqCst);
            while !self.released.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(50));
            self.running.fetch_sub(1, Ordering::SeqCst);
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn searches_given_up_on_during_a_fill_leave_no_work_behind() {
        let embedder = Arc::new(Held::default());
        let ranker = EmbeddingRanker::new(embedder.clone());
        let catalog = DeferredCatalog::from_tools(
            (0..8).map(|i| (schema(&format!("tool_{i}"), "does a thing", serde_json::json!({})), None)),
        );
        let context = crate::rank::RankContext::default();
        for query in ["one", "two", "three", "four", "five"] {
            let request = RankRequest { query, limit: 3, catalog: &catalog, context: &context };
            let search = tokio::time::timeout(std::time::Duration::from_millis(10), ranker.rank(request)).await;
            assert!(search.is_err(), "given up on, as the bridge's ranker timeout does");
        }
        // Every search was given up on while the first one's fill was under way.
        embedder.released.store(true, Ordering::SeqCst);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while ranker.store.read().len() < 8 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(ranker.store.read().len(), 8, "the first search's fill landed");
        // Time for anything else left behind to run.
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        assert_eq!(embedder.texts.load(Ordering::SeqCst), 8 + 1, "the tools once and the first query, nothing more");
        assert_eq!(embedder.most_at_once.load(Ordering::SeqCst), 1);
    }
}
