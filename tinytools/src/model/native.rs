//! A provider's own deferral of tools: what a request hands a provider that defers tool
//! declarations itself ([`NativeDeferral`]), and the searches such a provider ran
//! ([`ProviderSearch`]), kept in the conversation so the next request hands them back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ToolSchema;

/// Who answers the model's searches of natively deferred tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NativeSearch {
    /// The provider runs the search (Anthropic's `tool_search_tool_bm25_20251119`, OpenAI's
    /// hosted `tool_search`) and reports it in its answer ([`ProviderSearch`]).
    #[default]
    Provider,
    /// The model asks, the run's own ranker answers, and the provider loads what it found
    /// (Anthropic: a `tool_search` tool whose result holds `tool_reference` blocks; OpenAI:
    /// `tool_search` with `execution: "client"`, answered with `tool_search_output`).
    Client,
}

/// One natively deferred tool: its declaration as the run sends it, and its family (OpenAI's
/// `namespace`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeferredTool {
    /// The declaration, prepared like every schema the run sends.
    pub schema: ToolSchema,
    /// The tool's family, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
}

impl DeferredTool {
    /// A deferred tool of `family` (or none).
    pub fn new(schema: ToolSchema, family: Option<String>) -> Self {
        Self { schema, family }
    }
}

/// The deferred tools a request asks the provider to defer itself
/// ([`ModelRequest::native_deferral`](super::ModelRequest::native_deferral)): each goes to the
/// wire with the provider's deferral flag, beside the provider's search tool (or the run's
/// `tool_search`, for [`NativeSearch::Client`]). The provider loads what a search finds
/// without the request's tools changing, so the prompt's prefix, and its cache, hold.
///
/// ```
/// use tinytools::model::{DeferredTool, NativeDeferral, NativeSearch};
/// use tinytools::ToolSchema;
///
/// let quote =
///     ToolSchema::new("stock_quote", "Fetch the latest price for a ticker symbol.", serde_json::json!({"type": "object"}));
/// let deferral = NativeDeferral::new(vec![DeferredTool::new(quote, Some("finance".into()))], NativeSearch::Provider);
/// assert_eq!(deferral.family_of("stock_quote"), Some("finance"));
/// assert!(deferral.get("read_note").is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NativeDeferral {
    /// The deferred tools, name-sorted: never Hidden or narrowed tools.
    pub tools: Vec<DeferredTool>,
    /// Who answers the model's searches.
    pub search: NativeSearch,
}

impl NativeDeferral {
    /// Deferral of `tools`, searched as `search` says.
    pub fn new(tools: Vec<DeferredTool>, search: NativeSearch) -> Self {
        Self { tools, search }
    }

    /// The deferred tool of that name.
    pub fn get(&self, name: &str) -> Option<&DeferredTool> {
        self.tools.iter().find(|tool| tool.schema.name == name)
    }

    /// The family of the deferred tool of that name.
    pub fn family_of(&self, name: &str) -> Option<&str> {
        self.get(name)?.family.as_deref()
    }
}

/// A search the provider ran itself ([`NativeSearch::Provider`]), as its answer reported it:
/// kept in the conversation ([`Message::ProviderSearch`](super::Message::ProviderSearch)) so
/// the next request hands the provider its own items back and the tools it loaded stay loaded.
///
/// ```
/// use tinytools::model::ProviderSearch;
///
/// let search = ProviderSearch::new("anthropic:tool_search_tool_bm25", "stock price", vec!["stock_quote".into()]);
/// assert_eq!(search.found, ["stock_quote"]);
/// assert!(search.wire.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProviderSearch {
    /// The provider's id for the search (Anthropic's `srvtoolu_…`), when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Which search ran, named by its provider: `anthropic:tool_search_tool_bm25`,
    /// `openai:tool_search`.
    pub ranker: String,
    /// What the model searched for, as it wrote it (a query, a pattern, namespace paths).
    pub query: String,
    /// The tools the search loaded, in the provider's order.
    pub found: Vec<String>,
    /// The provider's own items for the search, handed back as they came (Anthropic's
    /// `server_tool_use` and `tool_search_tool_result` blocks; OpenAI's `tool_search_call` and
    /// `tool_search_output` items, after the `reasoning` items that led to the search).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wire: Vec<Value>,
}

impl ProviderSearch {
    /// A search `ranker` ran for `query`, loading `found`.
    pub fn new(ranker: impl Into<String>, query: impl Into<String>, found: Vec<String>) -> Self {
        Self { id: None, ranker: ranker.into(), query: query.into(), found, wire: Vec::new() }
    }

    /// The same search with the provider's id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The same search with the provider's own items.
    #[must_use]
    pub fn with_wire(mut self, wire: Vec<Value>) -> Self {
        self.wire = wire;
        self
    }
}
