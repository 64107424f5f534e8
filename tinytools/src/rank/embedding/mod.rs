//! Ranking by meaning: a [`ToolRanker`](crate::rank::ToolRanker) over sentence embeddings
//! (cargo feature `embedding`).
//!
//! BM25 stays the default (free, deterministic, nothing to download); it cannot bridge
//! "a one-bedroom apartment in Portland" to a tool "about house renting". An embedding ranker
//! can: on MetaTool it lifts recall@5 from 0.64 to 0.80 (`docs/retrieval.md`).
//!
//! This module is the ranker and its seam, with no model in it: [`TextEmbedder`] turns texts
//! into vectors (any encoder, local or remote), [`EmbeddingRanker`] blends their cosines with
//! BM25, calibrates its confidence for pre-promotion and keeps the catalogue's vectors in a
//! file across starts ([`EmbeddingRanker::warm`]). The encoders live in the `tinytools-embed`
//! crate: all-MiniLM-L6-v2 in plain Rust (`BertEmbedder`), a static model2vec-style model
//! (`StaticEmbedder`), and `tinytools_embed::load_ranker(dir)`, the ranker hosts install
//! (the gateway's `--embedding-model DIR` and the benchmarks' `--ranker minilm` build it so).
//! A host turns it on with the model directory `.ci/models` unpacks: load it, embed the
//! catalogue ahead (kept in a file across starts), and install it; `tool_search` and
//! pre-promotion then rank with it, its confidence calibrated so that a message about none of
//! the tools rarely reaches pre-promotion's default floor (`docs/retrieval.md`):
//!
//! ```ignore
//! use std::sync::Arc;
//! use tinytools::discovery::{DeferredCatalog, ToolDiscoveryPolicy};
//!
//! let ranker = tinytools_embed::load_ranker("target/models/all-MiniLM-L6-v2")?;
//! ranker.warm(&DeferredCatalog::new(&registry, |_| true), "cache/tool-vectors.bin")?;
//! let policy = ToolDiscoveryPolicy::default().with_ranker(Arc::new(ranker));
//! ```
//!
//! Any other encoder plugs in through [`TextEmbedder`] (`examples/examples/custom_embedder.rs`
//! ranks with a toy one that needs no model):
//!
//! ```
//! use std::sync::Arc;
//! use tinytools::rank::embedding::{EmbeddingError, EmbeddingRanker, TextEmbedder};
//!
//! /// Every text the same direction: a stand-in for a real encoder.
//! struct Constant;
//!
//! impl TextEmbedder for Constant {
//!     fn name(&self) -> &str {
//!         "constant"
//!     }
//!     fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
//!         Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
//!     }
//!     fn calibrated_cosine_floor(&self) -> f32 {
//!         0.6
//!     }
//! }
//!
//! let ranker = EmbeddingRanker::new(Arc::new(Constant));
//! assert_eq!(tinytools::rank::ToolRanker::name(&ranker), "embedding:constant");
//! ```
//!
//! [`RankMode::Compare`](crate::discovery::RankMode::Compare) records BM25's ranking beside
//! it, to judge it on live traffic first.

mod cached;
#[cfg(test)]
mod context_tests;
pub(crate) mod frame;
mod keep;
mod persist;
mod ranker;
mod score;
mod store;
mod table;
mod vectors_file;

use std::path::{Path, PathBuf};

pub use persist::WarmOutcome;
pub use ranker::EmbeddingRanker;
pub use score::{Explanation, ScoredTool, UNCALIBRATED_COSINE_FLOOR};

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
    /// words are ranked by BM25 too (`tinytools_embed::BertEmbedder::with_query_tokens`).
    ///
    /// # Errors
    /// As [`embed`](Self::embed); [`EmbeddingError::Model`] when it returns no vector.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbeddingError> {
        self.embed(&[query])?.into_iter().next().ok_or_else(|| EmbeddingError::model("the embedder returned no vector"))
    }

    /// What identifies this model's vectors in a saved-vectors file
    /// ([`EmbeddingRanker::warm`]): vectors saved under another id are never loaded. Make it
    /// change whenever the vectors would (other weights, another tokenizer, other arithmetic);
    /// `tinytools_embed::BertEmbedder` gives its name, width, a hash of its files and its
    /// encoder version.
    /// By default, [`name`](Self::name).
    fn model_id(&self) -> String {
        self.name().to_owned()
    }

    /// The cosine at which this model's hits reach pre-promotion's default floor: where
    /// [`EmbeddingRanker::new`] puts its [`cosine_floor`](EmbeddingRanker::cosine_floor).
    /// Every model spreads its cosines its own way, so measure it for yours
    /// (`embedding_calibration`, `docs/retrieval.md`). By default
    /// [`UNCALIBRATED_COSINE_FLOOR`] (0.5, no model's measurement: on the strict side, so an
    /// uncalibrated model pre-promotes less rather than more); `tinytools-embed`'s models give
    /// their measured floors (`MINILM_COSINE_FLOOR`, `STATIC_MINILM_COSINE_FLOOR`).
    fn calibrated_cosine_floor(&self) -> f32 {
        UNCALIBRATED_COSINE_FLOOR
    }

    /// `query · row` for every row, in order: how a search scores the catalogue's vectors
    /// (cosines, the vectors being unit length), every search. By default a plain loop on
    /// this thread; an encoder with SIMD and a thread pool of its own may do it faster
    /// (`tinytools_embed`'s models do, over both cores from 1,000 rows). A tool whose number
    /// is missing (fewer numbers than rows) or not finite is left unscored.
    fn dot_products(&self, query: &[f32], rows: &[&[f32]]) -> Vec<f32> {
        rows.iter().map(|row| score::dot(row, query)).collect()
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
    /// A file was read but is not what it should be: not what a model's loader needs, or not
    /// vectors this ranker can use.
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

    /// The file at `path` is not what it should be: `what` says how.
    pub fn format(path: &Path, what: impl Into<String>) -> Self {
        Self::Format { path: path.into(), what: what.into() }
    }
}

impl From<EmbeddingError> for crate::rank::ranker::RankerError {
    fn from(error: EmbeddingError) -> Self {
        Self::failed(error)
    }
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
