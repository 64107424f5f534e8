//! The catalogue's vectors side by side, in its order: what a search scores in one pass over
//! contiguous memory. Looking each tool up by name and following its pointer cost 1.5–2.6 ms
//! of a 3,420-tool search (the vectors scattered, and cold after the query's embedding has
//! streamed the model through the caches; `perf`, 2026-12-06); the pass over the table is a
//! tenth of that.

use std::sync::Arc;

use super::cached::{Cache, same_context};
use crate::rank::catalog::DeferredCatalog;
use crate::schema::ToolSchema;

/// One catalogue's vectors as of one state of the cache.
pub(super) struct Table {
    /// The cache's generation the table was read at.
    generation: u64,
    /// The declarations of the catalogue it was built for, in order.
    schemas: Vec<Arc<ToolSchema>>,
    /// Their family descriptions, in order.
    contexts: Vec<Option<Arc<str>>>,
    width: usize,
    /// Per catalogue tool: whether it has a row (a cached vector of `width` numbers).
    present: Vec<bool>,
    /// The rows of the present tools, in catalogue order.
    data: Vec<f32>,
    /// Every tool was cached as embedded from this very declaration: nothing is stale.
    linked: bool,
}

impl Table {
    /// Reads `catalog`'s vectors of `width` numbers out of `cache` (at `generation`).
    pub(super) fn build(cache: &Cache, catalog: &DeferredCatalog, generation: u64, width: usize) -> Self {
        let mut table = Self {
            generation,
            schemas: Vec::with_capacity(catalog.len()),
            contexts: Vec::with_capacity(catalog.len()),
            width,
            present: Vec::with_capacity(catalog.len()),
            data: Vec::with_capacity(catalog.len() * width),
            linked: true,
        };
        for tool in catalog.iter() {
            let schema = tool.shared_schema();
            let found = cache.get(&schema.name);
            table.linked &= found.is_some_and(|e| e.is_current_for(tool));
            let vector = found.map(|e| &e.vector).filter(|v| v.len() == width && width > 0);
            table.present.push(vector.is_some());
            table.data.extend_from_slice(vector.map_or(&[][..], |v| &v[..]));
            table.schemas.push(Arc::clone(schema));
            table.contexts.push(tool.shared_family_description().cloned());
        }
        table
    }

    /// Whether the table is `catalog`'s (the same declarations, in order) at `generation`.
    pub(super) fn is_for(&self, catalog: &DeferredCatalog, generation: u64) -> bool {
        self.generation == generation
            && self.schemas.len() == catalog.len()
            && catalog.iter().zip(self.schemas.iter().zip(&self.contexts)).all(|(tool, (schema, context))| {
                Arc::ptr_eq(tool.shared_schema(), schema)
                    && same_context(tool.shared_family_description(), context.as_ref())
            })
    }

    /// Every tool has a current vector: a search has nothing to embed or relink.
    pub(super) fn linked(&self) -> bool {
        self.linked
    }

    /// The length of the rows.
    pub(super) fn width(&self) -> usize {
        self.width
    }

    /// Each catalogue tool's row, in catalogue order (`None` for a tool without one).
    pub(super) fn rows(&self) -> impl Iterator<Item = Option<&[f32]>> {
        let mut rows = self.data.chunks_exact(self.width.max(1));
        self.present.iter().map(move |&present| if present { rows.next() } else { None })
    }
}
