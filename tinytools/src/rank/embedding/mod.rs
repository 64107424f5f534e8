//! Ranking by meaning: a [`ToolRanker`](super::ToolRanker) over sentence embeddings
//! (cargo feature `embedding`).
//!
//! BM25 stays the default (free, deterministic, nothing to download); it cannot bridge
//! "a one-bedroom apartment in Portland" to a tool "about house renting". An embedding ranker
//! can: on MetaTool it lifts recall@5 from 0.64 to 0.80 (`docs/retrieval.md`). A host turns it
//! on with the model directory `.ci/models` unpacks: load it, embed the catalogue ahead (kept
//! in a file across starts), and install it; `tool_search` and pre-promotion then rank with
//! it, its confidence calibrated so that a message about none of the tools rarely reaches
//! pre-promotion's default floor (so it also pre-promotes less than BM25; `docs/retrieval.md`):
//!
//! ```no_run
//! use std::sync::Arc;
//! use tinytools::discovery::{DeferredCatalog, ToolDiscoveryPolicy};
//! use tinytools::rank::embedding::EmbeddingRanker;
//! # let registry = tinytools::ToolRegistry::new();
//!
//! let ranker = EmbeddingRanker::load("target/models/all-MiniLM-L6-v2")?;
//! ranker.warm(&DeferredCatalog::new(&registry, |_| true), "cache/tool-vectors.bin")?;
//! let policy = ToolDiscoveryPolicy::default().with_ranker(Arc::new(ranker));
//! # Ok::<(), tinytools::rank::embedding::EmbeddingError>(())
//! ```
//!
//! The gateway's `--embedding-model DIR` and the benchmarks' `--ranker minilm` build it the same
//! way. [`RankMode::Compare`](crate::discovery::RankMode::Compare) records BM25's ranking
//! beside it, to judge it on live traffic first.
//!
//! [`BertEmbedder`] runs all-MiniLM-L6-v2 (or any BERT-family sentence-transformers model
//! with mean pooling) in plain Rust; [`StaticEmbedder`] is a static model distilled from it
//! ([`TokenOutputs`], model2vec's method: a lookup and a mean, microseconds a text, lower
//! recall; its own calibrated floor, [`STATIC_MINILM_COSINE_FLOOR`]); [`TextEmbedder`] is the
//! seam for any other encoder, local or remote.

mod attention;
mod bert;
#[cfg(test)]
mod context_tests;
mod distill;
mod elementwise;
mod frame;
mod layers;
mod matmul;
mod persist;
mod ranker;
mod score;
mod static_file;
mod static_model;
mod store;
mod table;
mod vectors_file;
mod wordpiece;

use std::path::{Path, PathBuf};

pub use bert::BertEmbedder;
pub use distill::{SavedStatic, StaticOptions, TokenOutputs};
pub use persist::WarmOutcome;
pub use ranker::EmbeddingRanker;
pub use score::{Explanation, MINILM_COSINE_FLOOR, STATIC_MINILM_COSINE_FLOOR, ScoredTool};
pub use static_file::Precision;
pub use static_model::{STATIC_VECTORS_FILE, StaticEmbedder};

/// Turns texts into vectors whose dot product measures how alike their meanings are.
///
/// Vectors must be of one length and unit length (cosine = dot product). Embedding is
/// CPU-bound or blocking: [`EmbeddingRanker`] calls it off the async runtime.
pub trait TextEmbedder: Send + Sync {
    /// A short name, recorded in `ToolSearched.ranker` as `embedding:{name}`.
    fn name(&self) -> &str;

    /// One vector per text, in order.
    ///
    /// # Errors
    /// Whatever stops the encoder ([`EmbeddingError::Model`] for a computation that failed);
    /// the discovery bridge then answers with BM25 and records why.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError>;

    /// A search's query as one vector; what [`EmbeddingRanker`] calls for every search. By
    /// default the one vector [`embed`](Self::embed) gives for it. An encoder whose cost grows
    /// with the text may read less of a long query than of a tool's text, since the query's
    /// words are ranked by BM25 too ([`BertEmbedder::with_query_tokens`]).
    ///
    /// # Errors
    /// As [`embed`](Self::embed); [`EmbeddingError::Model`] when it returns no vector.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbeddingError> {
        self.embed(&[query])?.into_iter().next().ok_or_else(|| EmbeddingError::model("the embedder returned no vector"))
    }

    /// What identifies this model's vectors in a saved-vectors file
    /// ([`EmbeddingRanker::warm`]): vectors saved under another id are never loaded. Make it
    /// change whenever the vectors would (other weights, another tokenizer, other arithmetic);
    /// [`BertEmbedder`] gives its name, width, a hash of its files and its encoder version.
    /// By default, [`name`](Self::name).
    fn model_id(&self) -> String {
        self.name().to_owned()
    }

    /// The cosine at which this model's hits reach pre-promotion's default floor: where
    /// [`EmbeddingRanker::new`] puts its [`cosine_floor`](EmbeddingRanker::cosine_floor).
    /// Every model spreads its cosines its own way, so measure it for yours
    /// (`embedding_calibration`, `docs/retrieval.md`). By default [`MINILM_COSINE_FLOOR`], for
    /// all-MiniLM-L6-v2 ([`BertEmbedder`]); [`StaticEmbedder`] gives
    /// [`STATIC_MINILM_COSINE_FLOOR`].
    fn calibrated_cosine_floor(&self) -> f32 {
        MINILM_COSINE_FLOOR
    }
}

/// Why a model could not be loaded, or could not embed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbeddingError {
    /// A file could not be read (a model's, or saved vectors).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// Saved vectors could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The embedder could not embed: its computation failed, or it answered with vectors
    /// the ranker cannot use.
    #[error("the embedder failed: {what}")]
    Model {
        /// What went wrong.
        what: String,
    },
    /// A file was read but is not what it should be: not what a BERT sentence encoder needs,
    /// or not vectors this ranker can use.
    #[error("{}: {what}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
}

impl EmbeddingError {
    /// The embedder's computation failed.
    pub fn model(what: impl Into<String>) -> Self {
        Self::Model { what: what.into() }
    }

    fn format(path: &Path, what: impl Into<String>) -> Self {
        Self::Format { path: path.into(), what: what.into() }
    }
}

/// Reads and parses one of a model's JSON files; errors name the file.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbeddingError> {
    let text = std::fs::read_to_string(path).map_err(|source| EmbeddingError::Io { path: path.into(), source })?;
    serde_json::from_str(&text).map_err(|e| EmbeddingError::format(path, format!("not the JSON expected here: {e}")))
}

/// `work` over `items` in batches of `batch`, on every core: each thread takes the next batch
/// until none is left; the results in the items' order.
fn on_every_core<T: Sync, R: Send>(
    items: &[T],
    batch: usize,
    work: impl Fn(&[T]) -> Vec<R> + Sync,
) -> Result<Vec<R>, EmbeddingError> {
    let batches: Vec<&[T]> = items.chunks(batch.max(1)).collect();
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(batches.len());
    if threads <= 1 {
        return Ok(batches.into_iter().flat_map(&work).collect());
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let thread = || {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(batch) = batches.get(at) else { return done };
            done.push((at, work(batch)));
        }
    };
    let parts: Vec<Vec<(usize, Vec<R>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(thread)).collect();
        handles.into_iter().map(|handle| handle.join()).collect::<Result<_, _>>()
    })
    .map_err(|_| EmbeddingError::model("an embedding thread panicked"))?;
    let mut ordered: Vec<(usize, Vec<R>)> = parts.into_iter().flatten().collect();
    ordered.sort_unstable_by_key(|(at, _)| *at);
    Ok(ordered.into_iter().flat_map(|(_, results)| results).collect())
}

/// A test embedder's vectors: each text's length and 1, normalised, so texts of one length
/// share a vector and any two lengths differ.
#[cfg(test)]
fn length_vectors(texts: &[&str]) -> Vec<Vec<f32>> {
    texts
        .iter()
        .map(|t| {
            let (a, b) = (t.len() as f32, 1.0_f32);
            let n = (a * a + b * b).sqrt();
            vec![a / n, b / n]
        })
        .collect()
}
