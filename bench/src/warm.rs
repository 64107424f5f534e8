//! An embedding ranker warmed before timing starts: `--vectors FILE` of the retrieval programs.

use std::path::Path;
use std::time::Instant;

use tinytools::discovery::DeferredCatalog;
use tinytools::rank::embedding::EmbeddingRanker;
use tinytools_examples::models::progress_bar;

/// Embeds `catalog` into `ranker`, with a progress bar on stderr; with `vectors`, through
/// [`EmbeddingRanker::warm`] (the file's valid vectors first, then what is missing, saved
/// back). Returns the milliseconds it took.
///
/// # Errors
/// The embedder's error; a vectors file that cannot be written.
pub fn warm(ranker: &EmbeddingRanker, catalog: &DeferredCatalog, vectors: Option<&Path>) -> Result<f64, String> {
    let started = Instant::now();
    match vectors {
        Some(path) => {
            let outcome = ranker.warm_with_progress(catalog, path, progress_bar).map_err(|e| e.to_string())?;
            if let Some(why) = &outcome.ignored {
                eprintln!("ignored {}: {why}", path.display());
            }
            eprintln!(
                "{} vectors from {}, {} tools embedded{}",
                outcome.loaded,
                path.display(),
                outcome.embedded,
                if outcome.saved { ", saved" } else { "" }
            );
        }
        None => {
            let embedded = ranker.prepare_with_progress(catalog, progress_bar).map_err(|e| e.to_string())?;
            eprintln!("embedded {embedded} tools");
        }
    }
    Ok(started.elapsed().as_secs_f64() * 1_000.0)
}
