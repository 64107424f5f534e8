//! What goes on the wire about a tool: its [`ToolSchema`] declaration; its projection onto a
//! provider's rules and a run's budget ([`SchemaPreparation`], [`ProviderProfile`], the
//! [`SchemaCompaction`] ladder); and what it costs in tokens ([`TokenCounter`]).

mod compaction;
mod declaration;
mod generate;
mod node;
mod preparation;
mod profile;
pub(crate) mod refs;
mod tokens;

pub use compaction::{CompactionReport, CompactionRung, MAX_OBJECT_DEPTH, SchemaCompaction, clip};
pub use declaration::ToolSchema;
pub use generate::schema_for;
pub use preparation::{PreparedSchema, SchemaPreparation, drop_absent_nulls};
pub use profile::ProviderProfile;
pub(crate) use refs::{definitions as definitions_of, ref_target as ref_name};
#[cfg(feature = "tiktoken")]
pub use tokens::TiktokenCounter;
pub use tokens::{EstimatedTokens, TokenCounter, count_tool_schema_tokens};
