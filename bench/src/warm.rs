//! An embedding ranker warmed before timing starts: `--vectors FILE` of the retrieval programs.

use std::path::Path;
use std::time::Instant;

use tinytools::discovery::DeferredCatalog;
use tinytools::rank::embedding::EmbeddingRanker;

/// Loads `vectors` into `ranker` when the file exists, embeds the rest of `catalog`, and saves
/// every vector back to `vectors` when it is given. Returns the milliseconds it took.
///
/// # Errors
/// A vectors file that cannot be read, is not the ranker's, or cannot be written; the
/// embedder's error.
pub fn warm(ranker: &EmbeddingRanker, catalog: &DeferredCatalog, vectors: Option<&Path>) -> Result<f64, String> {
    let started = Instant::now();
    if let Some(path) = vectors.filter(|path| path.exists()) {
        let loaded = ranker.load_vectors(path).map_err(|e| e.to_string())?;
        eprintln!("loaded {loaded} vectors from {}", path.display());
    }
    let embedded = ranker.prepare(catalog).map_err(|e| e.to_string())?;
    let ms = started.elapsed().as_secs_f64() * 1_000.0;
    eprintln!("embedded {embedded} tools");
    if let Some(path) = vectors {
        ranker.save_vectors(path).map_err(|e| e.to_string())?;
    }
    Ok(ms)
}
