//! [`DeferredCatalog`]: the run's deferred tools, fixed at run start, indexed for BM25. How a
//! run ranks it (host ranker, fallback, timeout) is discovery's: `DeferredCatalog::rank` lives
//! there.

use std::sync::Arc;

use super::bm25::{Bm25Index, Bm25Params};
use super::document::{FieldWeights, ToolDocument};
use super::ranked::RankedTool;
use super::tokenize::Tokenizer;
use super::tokenize::{for_each_word, without_numbers};
use crate::surface::{Surface, SurfaceTool};
use crate::{ToolExposure, ToolRegistry, ToolSchema, ToolSpec};

/// One deferred tool as the catalogue holds it: the surface's own record of it.
pub type CatalogTool = SurfaceTool;

/// The deferred tools of a run: built once at run start from the registry's Deferred tools
/// that the host allow-list admits, and indexed for BM25.
///
/// ```
/// use tinytools::discovery::{DeferredCatalog, ToolDiscoveryPolicy};
/// use tinytools::{ToolRegistry, tool};
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool(exposure = "deferred", family = "finance")]
/// async fn stock_quote(/** Ticker symbol. */ symbol: String) -> String { symbol }
///
/// /// Send an email to one or more people.
/// #[tool(exposure = "deferred", family = "mail")]
/// async fn send_email(/** Recipients. */ to: Vec<String>) -> String { to.join(",") }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(StockQuote)?.register(SendEmail)?;
/// let catalog = DeferredCatalog::new(&registry, |_| true);
/// assert_eq!(catalog.len(), 2);
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let outcome = catalog.rank(&ToolDiscoveryPolicy::default(), "share price of ACME", 5).await;
/// assert_eq!(outcome.matched[0].name, "stock_quote");
/// assert_eq!(outcome.ranker, "bm25");
/// # });
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
#[derive(Clone, Debug)]
pub struct DeferredCatalog {
    /// Name-sorted and unique: [`get`](Self::get) binary-searches it.
    tools: Vec<CatalogTool>,
    index: Bm25Index,
    /// The numbers the tools' names have as words (`operation_7_of_service_3`): the only ones
    /// a query's numbers may match.
    name_numbers: Vec<String>,
}

impl DeferredCatalog {
    /// The registry's Deferred tools that `allowed` admits (for ranking outside a run; a run
    /// builds its catalogue from its [`Surface`] with [`of_surface`](Self::of_surface)).
    pub fn new(registry: &ToolRegistry, allowed: impl Fn(&str) -> bool) -> Self {
        let tools = registry
            .iter()
            .filter(|tool| tool.exposure() == ToolExposure::Deferred && allowed(tool.name()))
            .map(|tool| SurfaceTool::of(registry, tool))
            .collect();
        Self::index(tools, &FieldWeights::default())
    }

    /// A run's catalogue: the Deferred tools its surface admits.
    pub fn of_surface(surface: &Surface) -> Self {
        Self::of_surface_weighted(surface, &FieldWeights::default())
    }

    /// As [`of_surface`](Self::of_surface), with other field weights.
    pub fn of_surface_weighted(surface: &Surface, weights: &FieldWeights) -> Self {
        Self::index(surface.deferred().cloned().collect(), weights)
    }

    /// A catalogue of the given declarations and families, sorted by name (so the manifest is
    /// byte-stable); a repeated name keeps its first declaration.
    pub fn from_tools<S: Into<Arc<ToolSchema>>>(tools: impl IntoIterator<Item = (S, Option<String>)>) -> Self {
        Self::with_weights(tools, &FieldWeights::default())
    }

    /// As [`from_tools`](Self::from_tools), with other field weights.
    pub fn with_weights<S: Into<Arc<ToolSchema>>>(
        tools: impl IntoIterator<Item = (S, Option<String>)>,
        weights: &FieldWeights,
    ) -> Self {
        let tools = tools
            .into_iter()
            .map(|(schema, family)| {
                let schema: Arc<ToolSchema> = schema.into();
                let spec = ToolSpec {
                    exposure: ToolExposure::Deferred,
                    family: family.map(Into::into),
                    ..ToolSpec::owned(schema.name.clone(), schema.description.clone())
                };
                SurfaceTool::new(schema, Arc::new(spec))
            })
            .collect();
        Self::index(tools, weights)
    }

    /// Sorts, deduplicates and indexes the catalogue's tools.
    fn index(mut list: Vec<CatalogTool>, weights: &FieldWeights) -> Self {
        // Stable: of two tools with one name, the first given stays.
        list.sort_by(|a, b| a.schema().name.cmp(&b.schema().name));
        list.dedup_by(|later, kept| later.schema().name == kept.schema().name);
        let weights = *weights;
        // Each document's fields are read on the thread that tokenizes it.
        let document = |i: usize| {
            ToolDocument::new(list[i].schema(), list[i].family())
                .with_family_description(list[i].family_description())
                .fields(weights)
        };
        let index = Bm25Index::build_split(list.len(), document, Tokenizer::default(), Bm25Params::default());
        let mut name_numbers = Vec::new();
        for tool in &list {
            for_each_word(&tool.schema().name, |word| {
                if word.bytes().all(|b| b.is_ascii_digit()) && !name_numbers.iter().any(|n| n == word) {
                    name_numbers.push(word.to_owned());
                }
            });
        }
        Self { tools: list, index, name_numbers }
    }

    /// The tool of that name, if the catalogue holds it.
    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.tools.binary_search_by(|tool| tool.schema().name.as_str().cmp(name)).ok().map(|i| &self.tools[i])
    }

    /// The name of the tool at `at` in [`iter`](Self::iter)'s order.
    #[cfg(feature = "embedding")]
    pub(crate) fn name_at(&self, at: usize) -> Option<&str> {
        self.tools.get(at).map(|tool| tool.schema().name.as_str())
    }

    /// How many tools the catalogue holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalogue is empty (then no bridge is advertised).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every tool, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &CatalogTool> {
        self.tools.iter()
    }

    /// BM25's best `limit` tools for `query`, with confidences. The query's numbers (a run of
    /// digits with no letter beside it: "15% of 2,340", `ev_4410`) match only a number a
    /// tool's name has; any other is left out, and counts as a word no tool has. Measured with
    /// `pre_promotion_eval` (`docs/retrieval.md`): matched, "what's 15% of 2,340?" promoted
    /// `aws_list_instances` (its "EC2") and `calendar_invite` (its "15:00:00Z").
    ///
    /// ```
    /// use tinytools::discovery::DeferredCatalog;
    /// use tinytools::ToolSchema;
    ///
    /// let tool = |name: &str, description: &str| {
    ///     let parameters = serde_json::json!({"type": "object"});
    ///     (ToolSchema::new(name, description, parameters), None)
    /// };
    /// let catalog = DeferredCatalog::from_tools([
    ///     tool("aws_list_instances", "List EC2 instances in a region, such as us-east-1."),
    ///     tool("operation_7_of_service_3", "Run an operation."),
    ///     tool("operation_8_of_service_3", "Run an operation."),
    /// ]);
    /// assert!(catalog.bm25("what's 15% of 2,340?", 3).is_empty());
    /// assert_eq!(catalog.bm25("my EC2 boxes", 3)[0].name, "aws_list_instances");
    /// assert_eq!(catalog.bm25("run operation 7", 3)[0].name, "operation_7_of_service_3");
    /// let sure = catalog.bm25("list instances", 1)[0].confidence;
    /// assert!(catalog.bm25("list 26 instances", 1)[0].confidence < sure);
    /// ```
    pub fn bm25(&self, query: &str, limit: usize) -> Vec<RankedTool> {
        self.bm25_at(query, limit)
            .into_iter()
            .map(|(at, confidence)| RankedTool {
                name: self.tools[at].schema().name.clone(),
                confidence: Some(confidence),
            })
            .collect()
    }

    /// [`bm25`](Self::bm25)'s hits as positions in [`iter`](Self::iter)'s order, with their
    /// confidences.
    pub(crate) fn bm25_at(&self, query: &str, limit: usize) -> Vec<(usize, f32)> {
        let (query, numbers) = without_numbers(query, |number| self.name_numbers.iter().any(|n| n == number));
        let mut distinct = numbers;
        distinct.sort_unstable();
        distinct.dedup();
        self.index
            .search_without(&query, limit, distinct.len())
            .into_iter()
            .map(|hit| (hit.doc, hit.confidence))
            .collect()
    }
}
