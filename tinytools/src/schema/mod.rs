//! What goes on the wire about a tool: its [`ToolSchema`] declaration, and the
//! [`SchemaCompaction`] budget that bounds it, and what it costs in tokens.

mod compaction;
mod declaration;
mod generate;
mod tokens;

pub use compaction::SchemaCompaction;
pub use declaration::ToolSchema;
pub use generate::schema_for;
pub use tokens::{EstimatedTokens, TokenCounter, count_tool_schema_tokens};
