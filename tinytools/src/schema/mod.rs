//! What goes on the wire about a tool: its [`ToolSchema`] declaration, and the
//! [`SchemaCompaction`] budget that bounds it.

mod compaction;
mod declaration;
mod generate;

pub use compaction::SchemaCompaction;
pub use declaration::ToolSchema;
pub use generate::schema_for;
