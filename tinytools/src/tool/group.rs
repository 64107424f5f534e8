//! [`ToolGroup`]: several tools that share one value, as `#[tools]` makes them.

use std::sync::Arc;

use super::Tool;

/// Several tools over one shared value: the `#[tool]` methods of an `impl` block marked
/// [`#[tools]`](macro@crate::tools), whose `&self` is their state (as rmcp's `#[tool_router]`
/// has it). Register them together with
/// [`ToolRegistry::register_group`](crate::ToolRegistry::register_group).
///
/// The block's keys are defaults for its tools; a method's own `#[tool(...)]` keys win.
///
/// ```
/// use std::sync::Mutex;
/// use serde_json::json;
/// use tinytools::{Refusal, ToolExposure, ToolRegistry, tools};
///
/// struct Portfolio {
///     holdings: Mutex<Vec<(String, u32)>>,
/// }
///
/// #[tools(family = "finance", exposure = "deferred")]
/// impl Portfolio {
///     /// List the account's holdings.
///     #[tool(read_only)]
///     async fn holdings(&self) -> Vec<(String, u32)> {
///         self.holdings.lock().map(|h| h.clone()).unwrap_or_default()
///     }
///
///     /// Buy shares of a ticker symbol.
///     #[tool(exposure = "direct")]
///     fn buy(
///         &self,
///         /// Ticker symbol, such as ACME.
///         symbol: String,
///         /// How many shares.
///         shares: u32,
///     ) -> Result<String, Refusal> {
///         if shares == 0 {
///             return Err(Refusal::new("buy at least one share"));
///         }
///         let mut holdings = self.holdings.lock().map_err(|_| Refusal::new("the portfolio is unavailable"))?;
///         holdings.push((symbol.clone(), shares));
///         Ok(format!("bought {shares} {symbol}"))
///     }
///
///     /// Not a tool: no `#[tool]`.
///     fn total(&self) -> u32 {
///         self.holdings.lock().map(|h| h.iter().map(|(_, n)| n).sum()).unwrap_or(0)
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut registry = ToolRegistry::new();
/// registry.register_group(Portfolio { holdings: Mutex::new(Vec::new()) })?;
/// assert_eq!(registry.get("holdings").map(|t| t.exposure()), Some(ToolExposure::Deferred));
/// assert_eq!(registry.get("buy").map(|t| t.exposure()), Some(ToolExposure::Direct));
/// assert_eq!(registry.get("buy").and_then(|t| t.family()), Some("finance"));
///
/// registry.dispatch("buy", json!({"symbol": "ACME", "shares": 3})).await?;
/// let held = registry.dispatch("holdings", json!({})).await?;
/// assert_eq!(held.to_model_text(), r#"[["ACME",3]]"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// A block can describe its family once, for discovery's ranking only (the model never reads
/// it):
///
/// ```
/// use tinytools::{ToolRegistry, tools};
///
/// struct Crm;
///
/// #[tools(family = "crm", family_description = "Customer accounts, sales leads and deals.", exposure = "deferred")]
/// impl Crm {
///     /// Create a record.
///     #[tool]
///     async fn create_record(&self, /** Its name. */ name: String) -> String { name }
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.register_group(Crm)?;
/// assert_eq!(registry.family_description("crm"), Some("Customer accounts, sales leads and deals."));
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
pub trait ToolGroup: Send + Sync + 'static {
    /// The group's tools, each holding the group.
    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool>>;

    /// The block's family and its description (`#[tools(family = "crm", family_description =
    /// "...")]`), which registering the group gives to
    /// [`ToolRegistry::describe_family`](crate::ToolRegistry::describe_family). `None` by default.
    fn described_family(&self) -> Option<(&'static str, &'static str)> {
        None
    }
}
