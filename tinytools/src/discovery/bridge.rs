//! [`DiscoveryBridge`]: the intrinsic `tool_search` tool — its declaration and its answers.

use serde::Serialize;
use serde_json::{Value, json};

use super::candidates::{LIKELY_HEADER, compact};
use super::manifest::{Manifest, ManifestDetail, families_line};
use super::{Candidate, DeferredCatalog, PrePromotion, RankOutcome, ToolDiscoveryPolicy, unknown_tool_answer};
use crate::model::{DeferredTool, NativeDeferral, NativeSearch};
use crate::rank::RankedTool;
use crate::schema::{SchemaPreparation, TokenCounter, count_tool_schema_tokens};
use crate::surface::Surface;
use crate::tool::TOOL_SEARCH;
use crate::{SchemaCompaction, ToolRegistry, ToolResult, ToolSchema};

/// A run's discovery: its deferred catalogue, its policy, and whether the intrinsic
/// `tool_search` is advertised.
///
/// `tool_search` is not a registered tool. It is appended after the name-sorted Direct tools
/// whenever discovery is enabled, at least one Deferred tool is on the run's
/// [`Surface`](crate::surface::Surface), the run's rules admit the bridge, and the host has not
/// registered (and admitted) a tool of that name (the host's always wins). In provider-native
/// mode ([`with_native`](Self::with_native)) the catalogue goes to the provider instead
/// ([`native_deferral`](Self::native_deferral)), and `tool_search` is advertised only when
/// the run's ranker answers the model's searches ([`NativeSearch::Client`]).
///
/// ```
/// use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
/// use tinytools::schema::EstimatedTokens;
/// use tinytools::{ToolRegistry, tool};
///
/// /// Read a note.
/// #[tool(read_only)]
/// async fn read_note(title: String) -> String { title }
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool(exposure = "deferred", family = "finance")]
/// async fn stock_quote(/** Ticker symbol. */ symbol: String) -> String { symbol }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(ReadNote)?.register(StockQuote)?;
/// let bridge = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default());
///
/// let tools = bridge.advertised(&EstimatedTokens);
/// let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
/// assert_eq!(names, ["read_note", "tool_search"]);
/// assert!(tools[1].description.contains("- stock_quote: Fetch the latest price for a ticker symbol."));
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let answer = bridge.search(&serde_json::json!({"query": "stock price"})).await;
/// assert!(answer.result.to_model_text().starts_with(r#"{"matches":[{"name":"stock_quote","#));
///
/// // What pre-promotion would load for a user message, without a run:
/// let ranked = bridge.catalog().rank(bridge.policy(), "ticker price", 3).await;
/// let loaded = bridge.promotable(&ranked, 3, &EstimatedTokens, |_| false);
/// assert_eq!(loaded.iter().map(|(t, _)| t.name.as_str()).collect::<Vec<_>>(), ["stock_quote"]);
/// # });
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
#[derive(Clone, Debug)]
pub struct DiscoveryBridge {
    catalog: DeferredCatalog,
    policy: ToolDiscoveryPolicy,
    surface: Surface,
    preparation: Option<SchemaPreparation>,
    native: Option<NativeSearch>,
}

/// One `tool_search` call's answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SearchAnswer {
    /// What the model reads.
    pub result: ToolResult,
    /// The model's query, when it gave a usable one.
    pub query: Option<String>,
    /// How the ranking went (`None` when the call was refused before ranking). Its
    /// `matched` are the full matches, the tools a run promotes.
    pub outcome: Option<RankOutcome>,
    /// The compact candidates the answer offers after its full matches (the two-stage
    /// search, [`ToolDiscoveryPolicy::search_candidates()`]).
    pub candidates: Vec<Candidate>,
}

impl DiscoveryBridge {
    /// A bridge over every Direct and Deferred tool of `registry` (no narrowing rules): its
    /// catalogue is the registry's Deferred tools.
    pub fn new(registry: &ToolRegistry, policy: ToolDiscoveryPolicy) -> Self {
        Self::over(Surface::all(registry), policy)
    }

    /// A bridge over a run's [`Surface`]: its catalogue is the surface's Deferred tools (none
    /// when discovery is disabled), and every answer reads only the surface.
    pub fn over(surface: Surface, policy: ToolDiscoveryPolicy) -> Self {
        let catalog = if policy.enabled {
            DeferredCatalog::of_surface_weighted(&surface, &policy.field_weights)
        } else {
            DeferredCatalog::from_tools(Vec::<(ToolSchema, Option<String>)>::new())
        };
        Self { catalog, policy, surface, preparation: None, native: None }
    }

    /// Hands the catalogue to the provider's own deferral, searched as `native` says (`None`:
    /// the bridge). The run sets it when its policy asks for
    /// [`DiscoveryMode::ProviderNative`](super::DiscoveryMode::ProviderNative) and the model
    /// can defer natively.
    #[must_use]
    pub fn with_native(mut self, native: Option<NativeSearch>) -> Self {
        self.native = native;
        self
    }

    /// The same bridge answering searches in another shape: `default_limit` full matches
    /// when the model gives no `limit`, then `candidates` compact ones within
    /// `candidate_bytes` ([`ToolDiscoveryPolicy::with_search_candidates`]). The catalogue is
    /// kept as it was built: what an evaluation sweeping search shapes needs.
    #[must_use]
    pub fn with_search_shape(mut self, default_limit: usize, candidates: usize, candidate_bytes: usize) -> Self {
        self.policy = self.policy.with_default_limit(default_limit).with_search_candidates(candidates, candidate_bytes);
        self
    }

    /// Who searches in provider-native mode; `None` for the bridge.
    pub fn native(&self) -> Option<NativeSearch> {
        self.native
    }

    /// Whether `tool_search` calls are the run's to answer: the bridge is active, and no
    /// provider runs the searches itself.
    pub fn answers_search(&self) -> bool {
        self.is_active() && self.native != Some(NativeSearch::Provider)
    }

    /// What the provider is to defer itself: every deferred tool of the catalogue, prepared
    /// like every schema the run sends, with its family. `None` in bridge mode or when the
    /// bridge is not active.
    ///
    /// ```
    /// use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
    /// use tinytools::model::NativeSearch;
    /// use tinytools::schema::EstimatedTokens;
    /// use tinytools::{ToolRegistry, tool};
    ///
    /// /// Fetch the latest price for a ticker symbol.
    /// #[tool(exposure = "deferred", family = "finance")]
    /// async fn stock_quote(/** Ticker symbol. */ symbol: String) -> String { symbol }
    ///
    /// /// Write an audit record.
    /// #[tool(exposure = "hidden")]
    /// async fn audit_log(entry: String) -> String { entry }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(StockQuote)?.register(AuditLog)?;
    /// let bridge = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default());
    /// assert!(bridge.native_deferral().is_none(), "the bridge by default");
    ///
    /// let native = bridge.with_native(Some(NativeSearch::Provider));
    /// let deferral = native.native_deferral().expect("handed to the provider");
    /// assert_eq!(deferral.tools.len(), 1, "never a Hidden tool");
    /// assert_eq!(deferral.family_of("stock_quote"), Some("finance"));
    /// assert!(native.advertised(&EstimatedTokens).is_empty(), "no tool_search: the provider searches");
    /// # Ok::<(), tinytools::RegistryError>(())
    /// ```
    pub fn native_deferral(&self) -> Option<NativeDeferral> {
        let search = self.native.filter(|_| self.is_active())?;
        let tools = self
            .catalog
            .iter()
            .map(|tool| {
                let schema = self.project(tool.schema(), tool.compaction());
                DeferredTool::new(schema, tool.family().map(str::to_owned))
            })
            .collect();
        Some(NativeDeferral::new(tools, search))
    }

    /// Projects every schema the bridge sends — the tools array, `tool_search`'s own
    /// declaration, and the schemas a search returns — with this preparation (the run's
    /// `tool_schemas`). Each tool's own budget replaces the preparation's.
    #[must_use]
    pub fn with_preparation(mut self, preparation: Option<SchemaPreparation>) -> Self {
        self.preparation = preparation;
        self
    }

    /// The declaration a deferred tool is promoted with once found: projected like every
    /// other schema the run sends. `None` when the catalogue does not hold it.
    pub fn prepared_schema(&self, name: &str) -> Option<ToolSchema> {
        self.catalog.get(name).map(|tool| self.project(tool.schema(), tool.compaction()))
    }

    /// The hits of `outcome` that query-aware discovery loads, in rank order, with their
    /// confidences: at or above the pre-promotion floor (and the runner-up floor's share of the
    /// best hit's confidence), at most `limit`, while their prepared
    /// declarations fit its token budget as `counter` counts; hits `skip` names are passed
    /// over (tools promoted already). What a run's pre-promotion does with a user message,
    /// for hosts and evaluations that want to know without running one.
    pub fn promotable(
        &self,
        outcome: &RankOutcome,
        limit: usize,
        counter: &dyn TokenCounter,
        skip: impl Fn(&str) -> bool,
    ) -> Vec<(ToolSchema, f32)> {
        let pre = self.policy.pre_promotion;
        let best = outcome.matched.first().and_then(|hit| hit.confidence).unwrap_or(0.0);
        let floor = pre.min_confidence.max(best * pre.runner_up_floor);
        let (mut chosen, mut spent) = (Vec::new(), 0_usize);
        for hit in &outcome.matched {
            let Some(confidence) = hit.confidence.filter(|c| *c >= floor) else {
                continue;
            };
            if chosen.len() == limit || skip(&hit.name) {
                continue;
            }
            let Some(schema) = self.prepared_schema(&hit.name) else {
                continue;
            };
            let cost = count_tool_schema_tokens(std::slice::from_ref(&schema), counter);
            if spent.saturating_add(cost) > pre.token_budget {
                continue;
            }
            spent += cost;
            chosen.push((schema, confidence));
        }
        chosen
    }

    /// Whether calling `name` cannot change anything: a read-only tool of the surface, or the
    /// bridge's own `tool_search` while it is active.
    pub(crate) fn is_read_only(&self, name: &str) -> bool {
        if name == TOOL_SEARCH {
            return self.answers_search();
        }
        self.surface.get(name).is_some_and(|tool| tool.spec().annotations.read_only)
    }

    /// The declaration of any tool on the surface (Direct or Deferred), projected like every
    /// schema the run sends. `None` when the surface does not admit it.
    pub fn projected_schema(&self, name: &str) -> Option<ToolSchema> {
        self.surface.get(name).map(|tool| self.project(tool.schema(), tool.compaction()))
    }

    /// A schema as the run sends it: prepared when the run prepares schemas, and always within
    /// the tool's own budget (an imported tool's `THIRD_PARTY` one), so a third-party
    /// description is bounded in every wire form — declaration, search answer, promotion —
    /// whether or not `RunPolicy::tool_schemas` is set.
    fn project(&self, schema: &ToolSchema, budget: Option<SchemaCompaction>) -> ToolSchema {
        match (&self.preparation, budget) {
            (Some(preparation), budget) => preparation.prepare(schema, budget).schema,
            (None, Some(budget)) => budget.compact(schema).0,
            (None, None) => schema.clone(),
        }
    }

    /// The run's deferred catalogue (empty when discovery is disabled).
    pub fn catalog(&self) -> &DeferredCatalog {
        &self.catalog
    }

    /// The run's discovery policy.
    pub fn policy(&self) -> &ToolDiscoveryPolicy {
        &self.policy
    }

    /// The surface the bridge reads.
    pub fn surface(&self) -> &Surface {
        &self.surface
    }

    /// Whether the intrinsic `tool_search` is advertised and answered this run.
    pub fn is_active(&self) -> bool {
        self.policy.enabled
            && !self.catalog.is_empty()
            && !self.surface.admits(TOOL_SEARCH)
            && self.surface.admits_bridge()
    }

    /// The tools array a run starts from: the surface's Direct tools, name-sorted, then
    /// `tool_search` when the run [answers searches](Self::answers_search).
    pub fn advertised(&self, counter: &dyn TokenCounter) -> Vec<ToolSchema> {
        self.advertised_offering(counter, &[])
    }

    /// [`advertised`](Self::advertised) with `tool_search`'s declaration offering
    /// `candidates` ([`schema_offering`](Self::schema_offering)): the tools array of a run
    /// whose user message pre-promotion ranked.
    pub fn advertised_offering(&self, counter: &dyn TokenCounter, candidates: &[Candidate]) -> Vec<ToolSchema> {
        let direct = self.surface.direct();
        let mut tools: Vec<ToolSchema> = direct.map(|tool| self.project(tool.schema(), tool.compaction())).collect();
        if self.answers_search() {
            tools.push(self.schema_offering(counter, candidates));
        }
        tools
    }

    /// Whether the manifest in `tool_search`'s description lists every deferred tool with
    /// its line ([`ManifestDetail::Summaries`]) within the policy's budget.
    pub fn manifest_lists_every_line(&self, counter: &dyn TokenCounter) -> bool {
        Manifest::build(&self.catalog, self.policy.manifest_token_budget, counter).detail == ManifestDetail::Summaries
    }

    /// The `tool_search` declaration: its description embeds the manifest of the catalogue,
    /// sized to `manifest_token_budget` as `counter` counts. Byte-stable for a catalogue.
    pub fn schema(&self, counter: &dyn TokenCounter) -> ToolSchema {
        self.schema_offering(counter, &[])
    }

    /// The `tool_search` declaration, its description ending with `candidates` (the first
    /// request's likely tools, [`first_request_candidates`](Self::first_request_candidates))
    /// after the manifest: one `- name: line` each under a line saying they are called by
    /// name. With no candidates, [`schema`](Self::schema). Byte-stable for a catalogue and
    /// its candidates.
    pub fn schema_offering(&self, counter: &dyn TokenCounter, candidates: &[Candidate]) -> ToolSchema {
        let mut schema = self.bare_schema(counter);
        if !candidates.is_empty() {
            let lines: Vec<String> = candidates.iter().map(Candidate::manifest_line).collect();
            schema.description = format!("{}\n\n{LIKELY_HEADER}\n{}", schema.description, lines.join("\n"));
        }
        // The manifest was fitted to its own token budget: the run's byte budget must not clip it.
        self.project(&schema, Some(SchemaCompaction::UNLIMITED))
    }

    fn bare_schema(&self, counter: &dyn TokenCounter) -> ToolSchema {
        let manifest = Manifest::build(&self.catalog, self.policy.manifest_token_budget, counter);
        let intro = "Find tools that are not loaded yet. Describe what you want to do in a few words; \
                     the best matching tools come back with their full schemas, and you then call a \
                     tool by its own name.";
        let description = match manifest.detail {
            ManifestDetail::Summaries | ManifestDetail::Names => {
                format!("{intro}\n\nTools you can find:\n{}", manifest.text)
            }
            ManifestDetail::Count | ManifestDetail::Nothing => {
                // No names fit: say at least which kinds of tools there are (outside the
                // manifest, which stays the spec's bare count). Measured on the live suite
                // (docs/live.md): a small model searches for a family it has been told of.
                let families = families_line(&self.catalog);
                let parts: Vec<&str> = [intro, manifest.text.as_str(), families.as_deref().unwrap_or("")]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect();
                parts.join(" ")
            }
        };
        let max = self.policy.max_limit();
        let default = self.policy.limit(None);
        ToolSchema {
            name: TOOL_SEARCH.to_owned(),
            description,
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What you want to do, in a few words, such as \"stock price\" or \"send an email\"."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": max,
                        "description": format!("How many tools to return (default {default}, at most {max}).")
                    }
                },
                "required": ["query"]
            }),
        }
    }

    /// Answers a `tool_search` call. Never fails: a missing or empty query is answered with
    /// what to send instead; no match is answered with a note; a failing host ranker falls
    /// back to BM25 (see [`DeferredCatalog::rank`]). The answer never repeats the query.
    pub async fn search(&self, args: &Value) -> SearchAnswer {
        let query = args.get("query").and_then(Value::as_str).map(str::trim).filter(|q| !q.is_empty());
        let Some(query) = query else {
            return SearchAnswer {
                result: ToolResult::error(
                    "tool_search needs a \"query\": a few words saying what you want to do, such as {\"query\": \"convert currency\"}.",
                ),
                query: None,
                outcome: None,
                candidates: Vec::new(),
            };
        };
        let requested = args.get("limit").and_then(|limit| {
            limit
                .as_u64()
                .or_else(|| limit.as_i64().map(|n| n.max(1).unsigned_abs()))
                .or_else(|| limit.as_f64().filter(|f| f.is_finite()).map(|f| f.max(1.0).min(u64::MAX as f64) as u64))
        });
        let limit = self.policy.limit(requested);
        let ranked = limit + self.policy.search_candidates();
        let mut outcome = self.catalog.rank_with_candidates(&self.policy, query, ranked).await;
        // The same declaration the loop promotes the tool with.
        let matches: Vec<ToolSchema> =
            outcome.matched.iter().take(limit).filter_map(|hit| self.prepared_schema(&hit.name)).collect();
        let full: Vec<String> = matches.iter().map(|schema| schema.name.clone()).collect();
        let candidates = self.search_candidates(&outcome, &full);
        // What the run promotes and reports: the full matches alone.
        outcome.matched.truncate(limit);
        // A small model copies a tool result's sentences word for word: the note states the
        // next step as the model should take it.
        let note = match (matches.is_empty(), candidates.is_empty()) {
            (true, _) => {
                "No tool matches. Try other words that describe the task (\"check the weather\") rather than a tool name; if no tool can do it, tell the user so."
            }
            (false, true) => "These tools are now callable: call the one that fits, with its arguments.",
            (false, false) => {
                "These tools are now callable: call the one that fits, with its arguments. A candidate is called the same way, by its name; its schema loads on the first call."
            }
        };
        let text = serde_json::to_string(&Answer { matches, candidates: &candidates, note }).unwrap_or_default();
        SearchAnswer {
            result: ToolResult::text(text),
            query: Some(query.to_owned()),
            outcome: Some(outcome),
            candidates,
        }
    }

    /// The answer to a call of a name the model may not call this run. Close matches come only
    /// from the surface: its Direct tools and, while the bridge is active, the deferred
    /// catalogue. `loaded` are deferred tools the run has just promoted for this call (ranked
    /// from what the model wrote); the answer names them first, with their signatures. It
    /// points to `tool_search` only when the run answers that tool.
    pub fn unknown_tool(&self, requested: &str, loaded: &[ToolSchema]) -> ToolResult {
        let mut callable: Vec<&str> = self.surface.direct().map(|tool| tool.schema().name.as_str()).collect();
        if self.is_active() {
            callable.extend(self.catalog.iter().map(|tool| tool.schema().name.as_str()));
        }
        unknown_tool_answer(requested, callable, self.answers_search(), loaded)
    }
}

#[derive(Serialize)]
struct Answer<'a> {
    matches: Vec<ToolSchema>,
    #[serde(skip_serializing_if = "<[Candidate]>::is_empty")]
    candidates: &'a [Candidate],
    note: &'a str,
}

/// The names a `tool_search` answer ([`DiscoveryBridge::search`]) returned, best first, read
/// back from the text the model reads (a note an aid put before it is passed over): what a
/// provider that loads found tools itself ([`NativeSearch::Client`]) hands the provider
/// instead of the text. Empty for an answer that found nothing or refused the call.
///
/// ```
/// use tinytools::discovery::search_answer_names;
///
/// let text = r#"{"matches":[{"name":"stock_quote","description":"…","parameters":{}}],"note":"…"}"#;
/// assert_eq!(search_answer_names(text), ["stock_quote"]);
/// assert_eq!(search_answer_names(&format!("Note: searched for you.\n{text}\n(cut)")), ["stock_quote"]);
/// assert!(search_answer_names("tool_search needs a \"query\"").is_empty());
/// ```
pub fn search_answer_names(text: &str) -> Vec<String> {
    let Some(start) = text.find("{\"matches\"") else {
        return Vec::new();
    };
    // The answer's JSON may be followed by more text (a bounded result's note).
    let Some(Ok(answer)) = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>().next() else {
        return Vec::new();
    };
    let matches = answer.get("matches").and_then(Value::as_array).into_iter().flatten();
    matches.filter_map(|hit| hit.get("name").and_then(Value::as_str)).map(str::to_owned).collect()
}

/// Compact candidates (`candidates.rs` makes them from a ranking).
impl DiscoveryBridge {
    /// A search answer's candidates: the hits of `outcome` after its first `full` (the full
    /// matches), at most the policy's [`search_candidates`](ToolDiscoveryPolicy::search_candidates()),
    /// within its `search_candidate_bytes`.
    pub(super) fn search_candidates(&self, outcome: &RankOutcome, full: &[String]) -> Vec<Candidate> {
        let policy = self.policy();
        let rest = outcome.matched.get(full.len()..).unwrap_or_default();
        let skip = |name: &str| full.iter().any(|f| f == name);
        compact(self.catalog(), rest, policy.search_candidates(), policy.search_candidate_bytes, skip)
    }

    /// The first request's compact candidates for a user message's ranking, `outcome`, as
    /// `pre` (a run passes its policy's) says: its hits at or above pre-promotion's floor
    /// that `skip` does not name (the tools promoted), at most
    /// [`PrePromotion::candidates()`], while their
    /// manifest lines (each with its line break) fit `candidate_bytes`. None while the
    /// manifest lists every tool's line (it already offers them all) or pre-promotion is off.
    /// What a run puts in `tool_search`'s description ([`schema_offering`](Self::schema_offering)).
    ///
    /// ```
    /// use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
    /// use tinytools::schema::EstimatedTokens;
    /// use tinytools::{ToolRegistry, tool};
    ///
    /// /// Fetch the latest price for a ticker symbol.
    /// #[tool(exposure = "deferred")]
    /// async fn stock_quote(/** Ticker symbol. */ symbol: String) -> String { symbol }
    ///
    /// /// Convert an amount between two currencies.
    /// #[tool(exposure = "deferred")]
    /// async fn convert_currency(/** The amount. */ amount: f64, /** Currency code. */ to: String) -> String { to }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(StockQuote)?.register(ConvertCurrency)?;
    /// // A manifest budget too small for the lines: the manifest is a bare count.
    /// let policy = ToolDiscoveryPolicy::default().with_manifest_token_budget(12);
    /// let bridge = DiscoveryBridge::new(&registry, policy);
    /// let pre = bridge.policy().pre_promotion.with_candidates(20, 1_500);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let ranked = bridge.catalog().rank_with_candidates(bridge.policy(), "stock price in euros", 10).await;
    /// let candidates = bridge.first_request_candidates(&ranked, pre, &EstimatedTokens, |_| false);
    /// assert_eq!(candidates[0].name, "stock_quote");
    /// let schema = bridge.schema_offering(&EstimatedTokens, &candidates);
    /// assert!(schema.description.contains("- stock_quote: Fetch the latest price for a ticker symbol."));
    /// // With room for every line, the manifest already offers them all.
    /// let roomy = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default());
    /// assert!(roomy.first_request_candidates(&ranked, pre, &EstimatedTokens, |_| false).is_empty());
    /// # });
    /// # Ok::<(), tinytools::RegistryError>(())
    /// ```
    pub fn first_request_candidates(
        &self,
        outcome: &RankOutcome,
        pre: PrePromotion,
        counter: &dyn crate::schema::TokenCounter,
        skip: impl Fn(&str) -> bool,
    ) -> Vec<Candidate> {
        if !pre.enabled || pre.candidates() == 0 || self.manifest_lists_every_line(counter) {
            return Vec::new();
        }
        let floor = pre.min_confidence;
        let over: Vec<RankedTool> =
            outcome.matched.iter().filter(|hit| hit.confidence.is_some_and(|c| c >= floor)).cloned().collect();
        compact(self.catalog(), &over, pre.candidates(), pre.candidate_bytes, skip)
    }
}
