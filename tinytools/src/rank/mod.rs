//! Ranking deferred tools for a query.
//!
//! [`tokenize`] and [`Bm25Index`] are public so a host ranks with exactly the arithmetic the
//! `tool_search` bridge uses; [`ToolRanker`] is how a host plugs in its own, and
//! [`ExpandingRanker`] lets a chat model add search keywords to a query before any ranker.

mod bm25;
mod catalog;
mod document;
#[cfg(feature = "embedding")]
pub mod embedding;
mod expand;
pub(crate) mod keywords;
mod ranked;
mod ranker;
mod tokenize;

pub use bm25::{Bm25Hit, Bm25Index, Bm25Params};
pub use catalog::{CatalogTool, DeferredCatalog};
pub use document::{FieldWeights, ToolDocument};
#[cfg(feature = "mcp")]
pub(crate) use expand::KeywordWriter;
pub use expand::{ExpandingRanker, ExpansionUsage};
pub use ranked::RankedTool;
pub use ranker::{Bm25Ranker, DEFAULT_MIN_CONFIDENCE, RankContext, RankRequest, RankerError, ToolRanker};
pub use tokenize::{Tokenizer, tokenize};
