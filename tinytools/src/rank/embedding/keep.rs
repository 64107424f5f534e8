//! Keeping the vectors a fill embeds: the saved-vectors file written after every fill that
//! added any, when the ranker was told where ([`EmbeddingRanker::persist_to`](super::EmbeddingRanker::persist_to)).

use std::path::Path;

use super::frame::write_atomically;
use super::store::{Pending, Store};
use super::vectors_file::{SavedTool, SavedVectors};
use super::{EmbeddingError, TextEmbedder};

/// Writes every vector in `store` to `path` (see [`EmbeddingRanker::save_vectors`](super::EmbeddingRanker::save_vectors)). One
/// write at a time: they share the temporary file beside `path`.
pub(super) fn save(store: &Store, embedder: &dyn TextEmbedder, path: &Path) -> Result<usize, EmbeddingError> {
    let _saving = store.saving.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = store.read();
    let mut tools: Vec<SavedTool> = cache
        .iter()
        .map(|(name, e)| SavedTool { name: name.clone(), text: e.text.clone(), vector: e.vector.to_vec() })
        .collect();
    drop(cache);
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let width = tools.first().map_or(0, |tool| tool.vector.len());
    let count = tools.len();
    let file = SavedVectors { model: embedder.model_id(), width, tools };
    write_atomically(path, &file.encode())?;
    Ok(count)
}

/// [`Store::fill`], then, when it embedded anything, writes the file
/// [`EmbeddingRanker::persist_to`](super::EmbeddingRanker::persist_to) named, if any: every fill the ranker makes goes through here.
/// A failed write is a warning (the vectors are in memory all the same).
pub(super) fn fill_and_keep(
    store: &Store,
    embedder: &dyn TextEmbedder,
    pending: Vec<Pending>,
    progress: &dyn Fn(usize, usize),
    path: Option<&Path>,
) -> Result<usize, EmbeddingError> {
    let embedded = store.fill(embedder, pending, progress)?;
    if let Some(path) = path.filter(|_| embedded > 0)
        && let Err(error) = save(store, embedder, path)
    {
        tracing::warn!(%error, "tool vectors not saved; they are kept in memory");
    }
    Ok(embedded)
}
