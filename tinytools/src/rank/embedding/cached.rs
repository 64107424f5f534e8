//! What the embedding cache holds per tool, and what makes a vector usable: the leaves the
//! cache ([`store`](super::store)), the catalogue's table and the saved-vectors file share.

use std::sync::Arc;

use crate::rank::catalog::CatalogTool;
use crate::schema::ToolSchema;

/// Tool name → what was embedded for it. Fx-hashed: the names come from the host's registry,
/// and building a [`Table`](super::table::Table) looks every catalogue tool up.
pub(super) type Cache = rustc_hash::FxHashMap<String, Embedded>;

/// One tool's embedding.
pub(super) struct Embedded {
    /// The text embedded.
    pub(super) text: String,
    pub(super) vector: Arc<[f32]>,
    /// The declaration the text was read from. While the catalogue hands out this same one,
    /// a search need not rebuild the text to know the vector is current (rebuilding every
    /// tool's text cost 5 ms a search at 3,420 tools). `None` for vectors loaded from a file
    /// until a search has compared their text once.
    pub(super) schema: Option<Arc<ToolSchema>>,
    /// The family description the text was read with, beside `schema`.
    pub(super) context: Option<Arc<str>>,
}

impl Embedded {
    /// Whether this was embedded from `tool`'s very declaration and family description.
    pub(super) fn is_current_for(&self, tool: &CatalogTool) -> bool {
        self.schema.as_ref().is_some_and(|known| Arc::ptr_eq(known, tool.shared_schema()))
            && same_context(self.context.as_ref(), tool.shared_family_description())
    }
}

/// Whether two family descriptions are the same (the same allocation, or the same text).
pub(super) fn same_context(a: Option<&Arc<str>>, b: Option<&Arc<str>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
        _ => false,
    }
}

/// How far a vector's length may be from 1 (what `f32` rounding leaves of a normalised one).
pub(super) const UNIT_TOLERANCE: f32 = 1e-3;

/// Why a vector cannot be used where `width` numbers are expected: a wrong length, a number
/// that is not finite, or not unit length (cosine is computed as a dot product).
pub(super) fn check_vector(vector: &[f32], width: usize) -> Result<(), String> {
    if width == 0 || vector.len() != width {
        return Err(format!("has a {}-number vector where {width} were expected", vector.len()));
    }
    if vector.iter().any(|x| !x.is_finite()) {
        return Err("has a vector with a number that is not finite".to_owned());
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if (norm - 1.0).abs() > UNIT_TOLERANCE {
        return Err(format!("has a vector of length {norm}, not unit length"));
    }
    Ok(())
}
