//! Discovery: deferred tools stay off the wire until the model searches for them.
//!
//! - [`DeferredCatalog`]: the run's deferred tools, fixed at run start from the registry and
//!   the host allow-list, and [`rank`](DeferredCatalog::rank), which never fails.
//! - [`DiscoveryBridge`]: the intrinsic `tool_search` tool — its declaration with a
//!   [`Manifest`] under a token budget, its answers, and the unknown-tool answer.
//! - [`ToolDiscoveryPolicy`]: `enabled`, the manifest budget, limits, the host ranker,
//!   [`PrePromotion`] (query-aware discovery of each new user message), and the
//!   [`DiscoveryMode`]: the bridge, or the provider's own deferral.

mod bridge;
mod candidates;
mod catalog;
#[cfg(test)]
mod context_tests;
mod manifest;
mod policy;
mod unknown;

/// The catalogue discovery ranks (defined with the ranking in [`rank`](crate::rank)).
pub use crate::rank::{CatalogTool, DeferredCatalog};
pub use bridge::{DiscoveryBridge, SearchAnswer, search_answer_names};
pub use candidates::Candidate;
pub use catalog::RankOutcome;
pub use manifest::{FAMILIES_CHARS, Manifest, ManifestDetail, SUMMARY_CHARS, families_line, first_sentence};
pub use policy::{DEFAULT_MIN_CONFIDENCE, DiscoveryMode, MAX_CANDIDATES, PrePromotion, RankMode, ToolDiscoveryPolicy};
pub use unknown::{
    MAX_COMPARED_NAME_BYTES, MAX_SUGGESTIONS, MAX_UNKNOWN_QUERY_BYTES, unknown_call_query, unknown_tool_answer,
};
