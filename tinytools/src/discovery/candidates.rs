//! Compact candidates: deferred tools offered by name and one line, without their schemas —
//! the second stage of a search answer, and the first request's likely tools when the
//! manifest could not afford every tool's line. The model calls a candidate by its own name;
//! admission checks the arguments against its schema, and a refused call promotes it typed.

use serde::Serialize;

use super::manifest::first_sentence;
use super::{DiscoveryBridge, PrePromotion, RankOutcome};
use crate::rank::RankedTool;

/// A deferred tool offered compactly: its name and the first sentence of its description
/// (at most [`SUMMARY_CHARS`](super::SUMMARY_CHARS) characters, the manifest's line).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Candidate {
    /// The tool's own name: what the model calls it by.
    pub name: String,
    /// The first sentence of its description (empty when it has none).
    pub line: String,
}

impl Candidate {
    /// The candidate as a manifest line: `- name: line`, or `- name` without a line.
    pub fn manifest_line(&self) -> String {
        if self.line.is_empty() { format!("- {}", self.name) } else { format!("- {}: {}", self.name, self.line) }
    }

    /// What it costs against a candidate byte budget: its manifest line and a line break.
    pub fn bytes(&self) -> usize {
        self.manifest_line().len() + 1
    }
}

/// What the first request says before its candidate lines.
pub(super) const LIKELY_HEADER: &str =
    "Likely tools for this request (call one by its own name; its arguments load on the first call):";

impl DiscoveryBridge {
    /// The compact candidates among `hits`, in rank order: tools of the catalogue that `skip`
    /// does not name (the full matches or promoted tools beside them), once each, at most
    /// `limit` (clamped to [`MAX_CANDIDATES`](super::MAX_CANDIDATES)), while their lines fit
    /// `bytes` ([`Candidate::bytes`]; a line that does not fit is passed over for a shorter
    /// one after it).
    fn compact(&self, hits: &[RankedTool], limit: usize, bytes: usize, skip: impl Fn(&str) -> bool) -> Vec<Candidate> {
        let limit = limit.min(super::MAX_CANDIDATES);
        let (mut chosen, mut spent): (Vec<Candidate>, usize) = (Vec::new(), 0);
        for hit in hits {
            if chosen.len() == limit {
                break;
            }
            if skip(&hit.name) || chosen.iter().any(|c| c.name == hit.name) {
                continue;
            }
            let Some(tool) = self.catalog().get(&hit.name) else { continue };
            let candidate =
                Candidate { name: tool.schema().name.clone(), line: first_sentence(&tool.schema().description) };
            let price = candidate.bytes();
            if spent.saturating_add(price) > bytes {
                continue;
            }
            spent += price;
            chosen.push(candidate);
        }
        chosen
    }

    /// A search answer's candidates: the hits of `outcome` after its first `full` (the full
    /// matches), at most the policy's [`search_candidates`](super::ToolDiscoveryPolicy::search_candidates()),
    /// within its `search_candidate_bytes`.
    pub(super) fn search_candidates(&self, outcome: &RankOutcome, full: &[String]) -> Vec<Candidate> {
        let policy = self.policy();
        let rest = outcome.matched.get(full.len()..).unwrap_or_default();
        let skip = |name: &str| full.iter().any(|f| f == name);
        self.compact(rest, policy.search_candidates(), policy.search_candidate_bytes, skip)
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
    /// let pre = bridge.policy().pre_promotion;
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
        self.compact(&over, pre.candidates(), pre.candidate_bytes, skip)
    }
}
