//! # tinytools
//!
//! Define LLM tools on plain `async fn`s and run catalogues of hundreds of them without
//! paying every schema on every turn.
//!
//! - **Define**: [`#[tool]`](macro@tool) turns a documented fn into a [`Tool`] with a JSON
//!   Schema derived by schemars, an [exposure](ToolExposure), a family, a side-effect
//!   [classification](ToolAnnotations) and a [schema budget](SchemaCompaction).
//! - **Register and call**: the [`ToolRegistry`] keeps Direct, Deferred and Hidden tools apart,
//!   validates every call's arguments against the declared schema (all violations at once),
//!   and contains a tool's panic.
//!
//! ```
//! use tinytools::{Refusal, ToolExposure, ToolRegistry, tool};
//!
//! /// Fetch the latest price for a ticker symbol.
//! #[tool(exposure = "deferred", family = "finance", read_only)]
//! async fn stock_quote(
//!     /// Ticker symbol, such as ACME.
//!     symbol: String,
//!     /// Also return the day's high and low.
//!     #[serde(default)]
//!     range: bool,
//! ) -> Result<String, Refusal> {
//!     match symbol.as_str() {
//!         "ACME" if range => Ok("ACME 12.50 (high 12.80, low 12.10)".into()),
//!         "ACME" => Ok("ACME 12.50".into()),
//!         other => Err(Refusal::new(format!("unknown ticker {other}; use an exchange symbol such as ACME"))),
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let mut registry = ToolRegistry::new();
//! registry.register(StockQuote)?;
//!
//! let schema = &registry.deferred_schemas()[0];
//! assert_eq!(schema.parameters["properties"]["symbol"]["description"], "Ticker symbol, such as ACME.");
//! assert_eq!(schema.parameters["required"], serde_json::json!(["symbol"]));
//!
//! let quote = registry.dispatch("stock_quote", serde_json::json!({"symbol": "ACME"})).await?;
//! assert_eq!(quote.to_model_text(), "ACME 12.50");
//! let refused = registry.dispatch("stock_quote", serde_json::json!({"symbol": "XX"})).await?;
//! assert!(refused.is_error);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Cargo features
//!
//! The package is `tinytools-sdk` on crates.io (the crate it builds is `tinytools`). The
//! default build is the runtime alone: no HTTP client, no MCP SDK, no neural model.
//!
//! ```toml
//! [dependencies]
//! tinytools-sdk = { version = "0.1", features = ["providers"] }
//! ```
//!
//! | feature | what it adds |
//! |---|---|
//! | `providers` | `providers`: OpenAI-compatible (Chat Completions), OpenAI Responses and Anthropic models over reqwest (rustls) |
//! | `mcp` | `mcp`: import an MCP server's tools as a Deferred family, serve a registry (rmcp) |
//! | `embedding` | `rank::embedding`: rank by meaning over any `TextEmbedder` (the encoders, all-MiniLM-L6-v2 in plain Rust among them, are the `tinytools-embed` crate's) |
//! | `tiktoken` | `schema::TiktokenCounter`: real BPE token counts (o200k, cl100k; offline) |
//! | `testkit` | `testkit::ScriptedModel`: a model that replays a script, for tests |

// docs.rs (`--cfg docsrs`, nightly): each feature-gated item is labelled with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod dialect;
pub mod discovery;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod middleware;
pub mod model;
#[cfg(feature = "providers")]
pub mod providers;
mod pump;
pub mod rank;
pub mod registry;
pub mod run;
pub mod schema;
pub mod surface;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tool;
mod unwind;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use discovery::{DeferredCatalog, DiscoveryBridge, DiscoveryMode, RankMode, ToolDiscoveryPolicy};
pub use model::{ChatModel, Message, ModelResponse};
pub use rank::ToolRanker;
pub use registry::{
    MAX_ARGUMENT_DEPTH, RegisteredTool, RegistryError, ToolError, ToolPolicies, ToolPolicy, ToolRegistry, Violation,
};
pub use run::{Agent, RunEvent, RunOutcome, RunPolicy, RunStream, RunStreamItem, StopReason};
pub use schema::{SchemaCompaction, SchemaPreparation, ToolSchema};
pub use tool::{
    CancellationToken, Grounding, IntoToolResult, Json, Refusal, State, Tool, ToolAnnotations, ToolContent,
    ToolContext, ToolExposure, ToolGroup, ToolResult, ToolSpec, TypedTool,
};

/// Turns a documented fn into a [`Tool`].
///
/// ```
/// use tinytools::{Tool, ToolExposure, tool};
///
/// /// Create an issue in a Jira project.
/// ///
/// /// Returns the new issue's key.
/// #[tool(exposure = "deferred", family = "jira", idempotent = false)]
/// async fn jira_create_issue(
///     /// Project key, such as `OPS`.
///     project: String,
///     /// One-line summary.
///     summary: String,
///     /// Priority from 1 (highest) to 5.
///     priority: Option<u8>,
/// ) -> String {
///     format!("{project}-1")
/// }
///
/// let tool = JiraCreateIssue;
/// assert_eq!(tool.name(), "jira_create_issue");
/// assert_eq!(tool.description(), "Create an issue in a Jira project.\n\nReturns the new issue's key.");
/// assert_eq!(tool.exposure(), ToolExposure::Deferred);
/// assert_eq!(tool.family(), Some("jira"));
/// assert_eq!(tool.parameters_schema()["required"], serde_json::json!(["project", "summary"]));
/// ```
///
/// # Keys
///
/// | key | value | default |
/// |-----|-------|---------|
/// | `name` | `"stock_quote"`: `^[A-Za-z0-9_-]{1,64}$`, not `tool_search` | the fn's name |
/// | `ident` | the generated struct's name, such as `"QuoteTool"` | the fn's name in UpperCamelCase |
/// | `crate` | the runtime's path, such as `"::my_tools"` (a renamed dependency, a facade) | `::tinytools` |
/// | `description` | a string (`""` on purpose for a Direct tool that needs none) | the doc comment up to its first `#` heading |
/// | `exposure` | `"direct"`, `"deferred"` or `"hidden"` | `"direct"` |
/// | `family` | 1–64 of `[A-Za-z0-9_.-]` | none |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | flag, or `= true` / `= false` | [`ToolAnnotations::UNCLASSIFIED`]; `read_only` starts from [`ToolAnnotations::READ_ONLY`] |
/// | `compaction` | `"third_party"` or `"unlimited"` | none |
/// | `max_schema_bytes`, `max_description_bytes` | a byte count (overrides the preset's) | none |
/// | `allow_unknown_arguments` | flag | off: an argument the fn does not take is refused (the schema says `additionalProperties: false`), and the model is told which exist |
/// | `blocking` | flag | off: the fn is awaited as a task the run aborts on timeout or cancellation; `blocking` runs it on tokio's blocking pool instead, for a fn that blocks its thread (it then cannot be stopped mid-way; see [`Tool::blocking`]) |
///
/// # Parameters
///
/// Every parameter becomes a property of the arguments object, named as written (or as its
/// `#[serde(rename = "...")]` says). Its `///` doc comment, or its entry in a rustdoc-style
/// `# Arguments` list, is its description. `Option<T>` is optional, `#[serde(default)]` too.
/// Types must own their data and implement `serde::Deserialize` + `schemars::JsonSchema`.
/// Two kinds of parameter are not part of the schema: a [`State<T>`](State) receives the host
/// state the registry carries (registering the tool without it is an error), and a
/// `&ToolContext` (or `ToolContext`) receives the call's [`ToolContext`].
///
/// `#[grounded]` on an argument makes it one the model must copy, never invent (an id, a key,
/// an address): a call whose value appears in no user message and no tool result of the run is
/// refused before the fn runs, and the model told where the value comes from.
/// `#[grounded(from = "crm_find_contact")]` (repeat `from` for more) accepts, besides the
/// user's words, only a result of those tools, and names them in the refusal; see [`Grounding`].
///
/// # Return types
///
/// Chosen by the type, so aliases work. `Result<T, E>`: `Err` holding a [`Refusal`] becomes an
/// error result the model reads (the tool ran and refused); any other error type
/// (`std::error::Error + Send + Sync + 'static`, `anyhow::Error`) is a failure the host reads
/// and the model only learns of; a `String` error does not compile (say which it is). `T` (or
/// any other return type) must be `Serialize`: a [`ToolResult`] is passed through, `()` becomes
/// `ok`, a value that serializes to a string is sent as text, and anything else as JSON.
///
/// # Compile-time checks
///
/// Each is an error at the offending span, and all are reported together: unknown or repeated
/// keys (with the closest key suggested), a bad exposure, family or name, the reserved
/// `tool_search`, `self`, generics, `unsafe`, destructuring patterns, borrowed parameters, two
/// parameters sent under one name, a `read_only` tool marked `destructive`, a Deferred tool
/// without a description or with an undocumented parameter (search could not find it, or the
/// model could not use it), a Direct tool without a description, a description over the tool's
/// own `max_description_bytes`, a type in the signature named like the generated struct (use
/// `ident`), a parameter type that is not `Deserialize + JsonSchema`, an output that is not
/// `Serialize`, and an error type that is neither a [`Refusal`] nor an error.
///
/// # Generated code
///
/// The fn stays as written. Beside it: a unit struct named after it in UpperCamelCase
/// (`stock_quote` → `StockQuote`) with the fn's visibility, and, inside a `const _: () = { ... }`
/// block, the arguments struct and the [`Tool`] impl. Read it with `cargo expand`; the
/// expansion snapshots in `ui-tests/tests/snapshots/` show the same code.
pub use tinytools_macros::tool;

/// Makes the `#[tool]` methods of an `impl` block a [`ToolGroup`]: one tool per method, with
/// `&self` as their shared state; register them with
/// [`ToolRegistry::register_group`]. The block takes the keys of [`#[tool]`](macro@tool)
/// except `name`, `ident` and `description`, as defaults its methods' own keys override, and one
/// of its own: `family_description = "..."` (with `family`), what the family's tools have in
/// common, given to [`ToolRegistry::describe_family`] when the group registers. See
/// [`ToolGroup`] for examples.
pub use tinytools_macros::tools;
