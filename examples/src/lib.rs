//! Shared pieces of the tinytools examples: the 41-tool catalogue of the spec's live proof,
//! the loaders and metrics of the retrieval evaluation (the public sets in `../shared/eval`),
//! the spec's live A/B, the offline scripted model, where the reference MCP servers and the
//! embedding model live, and model providers replayed from 127.0.0.1 (`wire`).
//!
//! The default build (what the README's first command compiles) has the catalogue, the task,
//! the scripted model, the surface measures and the eval loaders; `live` and `wire` need the
//! `providers` feature, `mcp_peers` `mcp`, `models` `embedding` (`full` turns on all).
//!
//! `read_note` is Direct; the 40-tool long tail is Deferred, in families. Every tool answers
//! with deterministic, made-up data so examples and tests run offline.
//!
//! The live task-suite benchmark (its 62 tasks, judge and arms, and the `live_tasks`,
//! `pre_promotion_eval` and `retrieval_eval` programs) is the `tinytools-bench` crate, in
//! `bench/`, which runs over this catalogue.

pub mod catalogue;
pub mod eval;
#[cfg(feature = "providers")]
pub mod live;
#[cfg(feature = "mcp")]
pub mod mcp_peers;
#[cfg(feature = "embedding")]
pub mod models;
pub mod scripted;
pub mod surface;
pub mod task;
#[cfg(feature = "providers")]
pub mod wire;
