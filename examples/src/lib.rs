//! Shared pieces of the tinytools examples: the 41-tool catalogue of the spec's live proof,
//! the loaders and metrics of the retrieval evaluation, the live benchmark's task suite and
//! judge, where the reference MCP servers and the embedding model live.
//!
//! `read_note` is Direct; the 40-tool long tail is Deferred, in families. Every tool answers
//! with deterministic, made-up data so examples and tests run offline.

pub mod bench;
pub mod catalogue;
pub mod eval;
pub mod live;
pub mod mcp_peers;
pub mod models;
pub mod scripted;
pub mod surface;
pub mod tasks;
