//! The embedding cache: one vector per tool name, what was embedded for it, and the fills
//! that add to it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockWriteGuard};

use super::cached::{Cache, Embedded};
use super::table::Table;
use super::{EmbeddingError, TextEmbedder};
use crate::rank::catalog::DeferredCatalog;
use crate::schema::ToolSchema;

/// A tool to embed: its declaration, its family description and the text read from them.
pub(super) struct Pending {
    pub(super) schema: Arc<ToolSchema>,
    pub(super) context: Option<Arc<str>>,
    pub(super) text: String,
}

/// Texts per call of the embedder when filling: enough for every core to take several batches
/// (`BertEmbedder` runs 16 at a time), few enough that progress moves every second or so.
pub(super) const FILL_CHUNK: usize = 128;

/// The embedded tools, shared with the blocking tasks that fill it.
#[derive(Default)]
pub(super) struct Store {
    /// Written only through [`write`](Self::write), which moves the generation on.
    vectors: RwLock<Cache>,
    /// Bumped by every write to the cache: a [`Table`] of an older generation is rebuilt.
    generation: AtomicU64,
    /// The last catalogue's table, reused while the catalogue and the cache stay as they were.
    table: Mutex<Option<Arc<Table>>>,
    /// Held while embedding, so two fills (a search's and a [`prepare`](super::EmbeddingRanker::prepare))
    /// do not embed the same tools twice: the second waits, then finds them done.
    filling: Mutex<()>,
    /// Held by a search from before it hands a fill to the blocking pool until that fill
    /// ends, even if the search is given up on: one background fill at a time. Waited for
    /// asynchronously, so waiting holds no blocking thread.
    pub(super) background: Arc<tokio::sync::Mutex<()>>,
    /// The length of the embedder's vectors once one has been seen; 0 before.
    width: AtomicUsize,
    /// Held while the vectors are written to a file (writes share a temporary file name).
    pub(super) saving: Mutex<()>,
}

impl Store {
    pub(super) fn read(&self) -> std::sync::RwLockReadGuard<'_, Cache> {
        self.vectors.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cache, to change it: the next search rebuilds its [`Table`].
    pub(super) fn write(&self) -> RwLockWriteGuard<'_, Cache> {
        let cache = self.vectors.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.generation.fetch_add(1, Ordering::AcqRel);
        cache
    }

    /// `catalog`'s vectors of `width` numbers side by side: the last table when neither the
    /// catalogue nor the cache has changed since, else a new one.
    pub(super) fn table(&self, catalog: &DeferredCatalog, width: usize) -> Arc<Table> {
        let mut last = self.table.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cache = self.read();
        // Writers bump the generation while they hold the write lock: under the read lock it
        // cannot move.
        let generation = self.generation.load(Ordering::Acquire);
        if let Some(table) = last.as_ref().filter(|t| t.width() == width && t.is_for(catalog, generation)) {
            return Arc::clone(table);
        }
        let table = Arc::new(Table::build(&cache, catalog, generation, width));
        *last = Some(Arc::clone(&table));
        table
    }

    /// The embedder's vector length, when known.
    pub(super) fn width(&self) -> Option<usize> {
        Some(self.width.load(Ordering::Acquire)).filter(|width| *width > 0)
    }

    /// Checks vectors the embedder returned: all of one non-zero length, finite, and of the
    /// length it returned before. The first good ones teach the store that length.
    pub(super) fn check_embedded(&self, vectors: &[Vec<f32>]) -> Result<(), EmbeddingError> {
        let Some(first) = vectors.first() else { return Ok(()) };
        let width = self.width().unwrap_or(first.len());
        if let Some(odd) = vectors.iter().find(|v| v.len() != width || width == 0) {
            return Err(EmbeddingError::model(format!(
                "the embedder returned a {}-number vector where {width} were expected",
                odd.len()
            )));
        }
        if !vectors.iter().flatten().all(|x| x.is_finite()) {
            return Err(EmbeddingError::model("the embedder returned a vector with a number that is not finite"));
        }
        self.width.store(width, Ordering::Release);
        Ok(())
    }

    /// Drops cached vectors of another length than `width` (loaded from a file before the
    /// embedder's length was known); returns how many. They are embedded again as missing.
    pub(super) fn evict_other_widths(&self, width: usize) -> usize {
        if self.read().values().all(|e| e.vector.len() == width) {
            return 0;
        }
        let mut cache = self.write();
        let before = cache.len();
        cache.retain(|_, e| e.vector.len() == width);
        before - cache.len()
    }

    /// The catalogue's tools whose embedding is missing or out of date. A tool handed out as
    /// the same declaration as when it was embedded is current without reading its text; one
    /// whose declaration is new but whose text is not (a new registry, vectors from a file) is
    /// linked to the new declaration, so the next search skips it as cheaply.
    pub(super) fn stale(&self, catalog: &DeferredCatalog) -> Vec<Pending> {
        if let Some(width) = self.width()
            && self.table(catalog, width).linked()
        {
            return Vec::new();
        }
        let mut relink = Vec::new();
        let mut stale = Vec::new();
        {
            let cache = self.read();
            for tool in catalog.iter() {
                let schema = tool.shared_schema();
                let found = cache.get(&schema.name);
                if found.is_some_and(|e| e.is_current_for(tool)) {
                    continue;
                }
                let context = tool.shared_family_description().cloned();
                let text = document(schema, context.as_deref());
                if found.is_some_and(|e| e.text == text) {
                    relink.push((Arc::clone(schema), context));
                } else {
                    stale.push(Pending { schema: Arc::clone(schema), context, text });
                }
            }
        }
        if !relink.is_empty() {
            let mut cache = self.write();
            for (schema, context) in relink {
                if let Some(embedded) = cache.get_mut(&schema.name) {
                    embedded.schema = Some(schema);
                    embedded.context = context;
                }
            }
        }
        stale
    }

    /// Embeds what is still stale of `pending` (another search may have embedded it while this
    /// one waited), [`FILL_CHUNK`] texts per call of the embedder (which spreads each call over
    /// the cores), calling `progress(done, total)` after each and keeping each chunk's vectors as
    /// it lands; returns how many were embedded.
    pub(super) fn fill(
        &self,
        embedder: &dyn TextEmbedder,
        pending: Vec<Pending>,
        progress: &dyn Fn(usize, usize),
    ) -> Result<usize, EmbeddingError> {
        if pending.is_empty() {
            return Ok(0);
        }
        let _filling = self.filling.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let missing: Vec<Pending> = {
            let cache = self.read();
            pending.into_iter().filter(|p| cache.get(&p.schema.name).is_none_or(|e| e.text != p.text)).collect()
        };
        if missing.is_empty() {
            return Ok(0);
        }
        let total = missing.len();
        let mut missing = missing.into_iter();
        let mut done = 0;
        progress(0, total);
        while done < total {
            let chunk: Vec<Pending> = missing.by_ref().take(FILL_CHUNK).collect();
            let texts: Vec<&str> = chunk.iter().map(|p| p.text.as_str()).collect();
            let vectors = embedder.embed(&texts)?;
            if vectors.len() != chunk.len() {
                return Err(EmbeddingError::model(format!(
                    "the embedder returned {} vectors for {} texts",
                    vectors.len(),
                    chunk.len()
                )));
            }
            self.check_embedded(&vectors)?;
            done += chunk.len();
            let mut cache = self.write();
            for (Pending { schema, context, text }, vector) in chunk.into_iter().zip(vectors) {
                let name = schema.name.clone();
                cache.insert(name, Embedded { text, vector: vector.into(), schema: Some(schema), context });
            }
            drop(cache);
            progress(done, total);
        }
        Ok(total)
    }
}

/// What is embedded for a tool: its name, description and parameter names, then its family's
/// description (`context`), which the manifest and search answers never show.
pub(super) fn document(schema: &ToolSchema, context: Option<&str>) -> String {
    let mut text = format!("{}: {}", schema.name, schema.description);
    if let Some(properties) = schema.parameters.get("properties").and_then(|p| p.as_object())
        && !properties.is_empty()
    {
        text.push_str(" Parameters: ");
        text.push_str(&properties.keys().map(String::as_str).collect::<Vec<_>>().join(", "));
    }
    if let Some(context) = context.filter(|context| !context.is_empty()) {
        text.push_str(" Family: ");
        text.push_str(context);
    }
    text
}
