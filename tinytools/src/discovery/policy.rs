//! [`ToolDiscoveryPolicy`]: whether and how deferred tools are advertised and searched.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::model::NativeSearch;
use crate::rank::{FieldWeights, ToolRanker};

/// How a run's deferred tools reach the model (`ToolDiscoveryPolicy::mode`).
///
/// The bridge is portable and the default. With [`ProviderNative`](Self::ProviderNative), a
/// model whose provider defers tools itself ([`ModelProfile::native_deferral`]: the bundled
/// `Anthropic` and `OpenAiResponses` clients) gets the deferred tools that survive the run's
/// narrowing on the wire, flagged as deferred, beside the provider's search tool; the
/// provider loads what a search finds without the tools array changing, so the prompt's
/// cached prefix holds. Any other model gets the bridge. Either way the run's surface,
/// admission and events govern every call.
///
/// ```
/// use tinytools::discovery::{DiscoveryMode, ToolDiscoveryPolicy};
/// use tinytools::model::NativeSearch;
///
/// assert_eq!(ToolDiscoveryPolicy::default().mode, DiscoveryMode::Bridge);
/// let native = ToolDiscoveryPolicy::default().with_mode(DiscoveryMode::ProviderNative(NativeSearch::Provider));
/// assert_eq!(native.mode.native_search(), Some(NativeSearch::Provider));
/// ```
///
/// [`ModelProfile::native_deferral`]: crate::model::ModelProfile::native_deferral
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryMode {
    /// The intrinsic `tool_search` bridge: deferred tools stay off the wire until found, and
    /// a found tool joins the tools array (which changes the prompt's prefix once per tool).
    #[default]
    Bridge,
    /// The provider's own deferral, searched as [`NativeSearch`] says: by the provider, or by
    /// the run's ranker answering the model's `tool_search`.
    ProviderNative(NativeSearch),
}

impl DiscoveryMode {
    /// Who searches in provider-native mode; `None` for the bridge.
    pub const fn native_search(self) -> Option<NativeSearch> {
        match self {
            Self::Bridge => None,
            Self::ProviderNative(search) => Some(search),
        }
    }
}

/// Which ranking answers `tool_search` when a host ranker is installed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RankMode {
    /// The host ranker answers (BM25 when it fails).
    #[default]
    Ranker,
    /// BM25 answers; the host ranker is ignored.
    Bm25,
    /// The host ranker answers and BM25's ranking is recorded beside it
    /// (`ToolSearched.shadow_matched`), so the two can be judged on live traffic without
    /// changing what the model sees.
    Compare,
}

/// Governs discovery for a run (`RunPolicy::discovery`).
///
/// Every field is public; any values are safe. Limits are normalised when used, never trusted:
/// `max_limit` is at least 1 and `default_limit` lies in `1..=max_limit`.
///
/// ```
/// use tinytools::discovery::ToolDiscoveryPolicy;
///
/// let policy = ToolDiscoveryPolicy::default();
/// assert!(policy.enabled);
/// assert_eq!(policy.manifest_token_budget, 4_000);
/// assert_eq!((policy.limit(None), policy.limit(Some(3)), policy.limit(Some(500))), (5, 3, 20));
///
/// let odd = ToolDiscoveryPolicy::default().with_default_limit(0).with_max_limit(0);
/// assert_eq!((odd.limit(None), odd.limit(Some(0)), odd.limit(Some(9))), (1, 1, 1));
///
/// let wide = ToolDiscoveryPolicy::default().with_manifest_token_budget(8_000).with_max_limit(50);
/// assert_eq!((wide.manifest_token_budget, wide.limit(Some(40))), (8_000, 40));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ToolDiscoveryPolicy {
    /// With `false`, deferred tools are neither advertised nor searchable; a direct call by
    /// name still runs (deferral only ever subtracts from the wire).
    pub enabled: bool,
    /// Token budget of the manifest embedded in `tool_search`'s description.
    pub manifest_token_budget: usize,
    /// Matches returned when the model gives no `limit`.
    pub default_limit: usize,
    /// The most matches one search returns.
    pub max_limit: usize,
    /// A host ranker; `None` ranks with BM25.
    pub ranker: Option<Arc<dyn ToolRanker>>,
    /// Which ranking answers when `ranker` is set.
    pub rank_mode: RankMode,
    /// How long a host ranker may take before BM25 answers instead. Enforced with Tokio's
    /// timer: a run with a host ranker needs a runtime with time enabled.
    pub ranker_timeout: Duration,
    /// Query-aware discovery: promote the deferred tools that best match each new user
    /// message before the model is called. Bridge mode only: in provider-native mode the
    /// provider loads tools, and nothing is promoted.
    pub pre_promotion: PrePromotion,
    /// How deferred tools reach the model: the bridge (default) or the provider's own
    /// deferral.
    pub mode: DiscoveryMode,
    /// How much each part of a tool counts in the catalogue's BM25 index. Default:
    /// [`FieldWeights::default`], chosen by measurement.
    pub field_weights: FieldWeights,
    /// The two-stage search: how many more of a search's hits, after its full matches, it
    /// answers compactly as `candidates` (a name and one line each), which the model calls by
    /// name (a candidate's schema loads on its first call). `0`: full matches only. Normalised
    /// when used: at most [`MAX_CANDIDATES`] ([`search_candidates`](Self::search_candidates())).
    pub search_candidates: usize,
    /// The most bytes a search answer's candidates may take, each counted as its manifest
    /// line (`- name: line` and a line break, [`Candidate::bytes`](super::Candidate::bytes)).
    ///
    /// Off by default (`0` candidates in 1,500 B): a default changes only on live runs of
    /// two models, and this shape has been measured model-free only. Measured so
    /// (`two_stage_eval`, `docs/external.md`), 10 in 1,500 B beside the spec's 5 full matches
    /// lift LiveMCPBench's any-step recall of the answers from 0.707 to 0.830 at 4,096 B an
    /// answer instead of 2,980, and BFCL's dev half, its queries searched as written, from
    /// 83.0 % to 91.1 % of gold answered: `with_search_candidates(10, 1_500)`.
    pub search_candidate_bytes: usize,
}

/// The most compact candidates one search answer or one first request offers.
pub const MAX_CANDIDATES: usize = 50;

/// Query-aware discovery (`ToolDiscoveryPolicy::pre_promotion`): at run start, and whenever a
/// run resumes on a new user message, that message is ranked against the run's deferred
/// catalogue with the run's ranker, and the best hits are promoted — their full declarations
/// join the tools array, recorded as a transcript patch exactly like searched tools — before
/// the model is called. A model that would not search still sees the tool it needs, typed.
///
/// The same ranking answers a call of a name the model may not call (an invented
/// `get_stock_price`, a near miss): the name's words and the call's arguments are ranked, the
/// hits are promoted, and the unknown-tool answer names them with their signatures.
///
/// Only hits at or above `min_confidence` are promoted (a hit without a confidence never is),
/// at most `limit` of them, and only while their declarations fit `token_budget`. The
/// defaults were chosen by the live task suite (`docs/live.md`): with the floor at 0.05 the
/// suite's gold tool is promoted for 56 % of its messages (0.10: 20 %), and a small model
/// succeeds far more often when it is; the price is that 41 % of unrelated messages promote a
/// tool or more (0.10: 9 %), a few hundred tokens the model is free to ignore
/// (`pre_promotion_eval` measures the trade offline). A floor of 0.03 promotes the gold tool
/// more often offline (65 %) but solved the same 30 of 62 live tasks at a costlier first call.
///
/// ```
/// use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
///
/// let policy = ToolDiscoveryPolicy::default();
/// assert_eq!(policy.pre_promotion, PrePromotion::default());
/// let bridge_only = ToolDiscoveryPolicy::default().with_pre_promotion(PrePromotion::off());
/// assert!(!bridge_only.pre_promotion.enabled);
///
/// assert!(!PrePromotion::default().model_keywords, "one model request per turn, nothing more");
/// let asking = PrePromotion::default().with_model_keywords(true);
/// assert!(asking.model_keywords);
/// // Keywords only for a message whose own best hit is under 0.2.
/// let gated = PrePromotion::default().with_model_keywords_below(Some(0.2));
/// assert_eq!(gated.model_keywords_below, Some(0.2));
///
/// let eager = PrePromotion::default().with_limit(5).with_min_confidence(0.0).with_token_budget(2_000);
/// assert_eq!((eager.limit, eager.min_confidence, eager.token_budget), (5, 0.0, 2_000));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct PrePromotion {
    /// Whether user messages are ranked and their best hits promoted.
    pub enabled: bool,
    /// The most tools one message promotes.
    pub limit: usize,
    /// The lowest ranker confidence (`0.0..=1.0`) a hit needs to be promoted, so a message
    /// unrelated to every deferred tool promotes nothing.
    pub min_confidence: f32,
    /// The most tokens the promoted declarations of one message may cost, as the run's token
    /// counter counts them.
    pub token_budget: usize,
    /// How many more of the message's hits are promoted once a tool has answered it, before
    /// the model is called again (`0`: none). The ranking is the same one, its next hits
    /// under the same floor and budget, once per user message: the first tool's result often
    /// calls for a second tool (find the contact, then log the call), and a model that
    /// answered a first call rarely searches for the next. Off by default: on the live suite
    /// it solved one more two-step task and the same number in all (`docs/archive/live-notebook.md`, stop 24).
    pub after_tool_result: usize,
    /// The share (`0.0..=1.0`) of the best hit's confidence a runner-up needs to be promoted
    /// beside it (`0.0`: any hit over the floor). When the best hit stands clear of the rest,
    /// the model gets it alone instead of beside near-twins it may pick by mistake; it can
    /// still search for the others. Off by default: measured live on an external benchmark's
    /// near-duplicate-heavy catalogue it gained nothing, and model-free it costs recall where
    /// the right tool often ranks second (`docs/external.md`).
    pub runner_up_floor: f32,
    /// Whether the run's own model first writes a line of search keywords for the message
    /// (one short request, no tools), ranked together with the message. The request is the
    /// run's: it counts against [`UsageLimits`](crate::run::UsageLimits) (asked only while the
    /// request limit leaves room for it and one answer), its usage is in the run's, it passes
    /// through the middleware's `before_send`, and it is reported as
    /// [`RunEvent::KeywordsWritten`](crate::run::RunEvent::KeywordsWritten). The model sees
    /// the message alone, never a tool name, and its answer only ever becomes search words
    /// ([`ExpandingRanker`](crate::rank::ExpandingRanker) documents how). A failed request
    /// leaves the message ranked as it is.
    ///
    /// Off by default: a run makes one model request per turn and nothing behind the host's
    /// back. [`RunPolicy::small_model`](crate::run::RunPolicy::small_model) turns it on: a
    /// small local model's user's everyday words often share none with the tool they need,
    /// and the keywords bridge that gap (on the project's own live suite the 1.5B model
    /// gained 4–6 tasks with them, the 0.5B nothing; `docs/live.md`). On an external
    /// benchmark whose queries use the tools' own words they cost a little
    /// (`docs/retrieval.md`, `docs/external.md`).
    pub model_keywords: bool,
    /// With [`model_keywords`](Self::model_keywords) on, asks for the keywords only when the
    /// message as written finds no hit at or above this confidence (`None`: always ask). A
    /// message that already names its tool in the tools' own words is then promoted from its
    /// own ranking and costs no keyword request. Off by default: model-free on the dev sets,
    /// `Some(0.2)` promotes what the default promotes within two messages while asking for
    /// keywords for about half of an external benchmark's function-worded queries and nearly
    /// every everyday-worded message of the live suite (`docs/retrieval.md`); live on that
    /// benchmark it saved half the requests and gained no accuracy (one run,
    /// `docs/external.md`). A way to save requests where many messages name their tool.
    pub model_keywords_below: Option<f32>,
    /// The first request at scale: when the manifest in `tool_search`'s description could
    /// not afford every tool's line (it degraded to names, a count or nothing), how many more
    /// of the message's hits over the floor, after the promoted ones, are offered there as
    /// compact candidates — a name and one line each — that the model calls by name (a
    /// candidate's schema loads on its first call). `0`: none. The same ranking pre-promotion
    /// makes: no extra request, nothing in the conversation, and `tool_search`'s declaration
    /// changes only when a new user message is ranked. At most [`MAX_CANDIDATES`].
    pub candidates: usize,
    /// The most bytes the first request's candidate lines (`- name: line`, each with its line
    /// break) may take.
    ///
    /// Off by default (`0` candidates in 1,500 B): a default changes only on live runs of
    /// two models, and the shape has been measured model-free only; with the 3 promoted
    /// schemas it would also put the first request at scale over 2,500 B. Measured on
    /// BFCL's dev half at 1,986 Deferred tools (`two_stage_eval`, `docs/external.md`):
    /// promoting none and offering 20 candidates in 1,500 B
    /// (`PrePromotion::default().with_limit(0).with_candidates(20, 1_500)`) offers every gold
    /// function in the first request for 90.0 % of its 1,197 tool queries at 1,971 B of
    /// tools on average (none over 2,500 B), against 75.5 % at 2,267 B by default; with the 3
    /// promoted schemas kept, 90.2 % at 3,599 B.
    pub candidate_bytes: usize,
}

pub use crate::rank::DEFAULT_MIN_CONFIDENCE;

impl Default for PrePromotion {
    fn default() -> Self {
        Self {
            enabled: true,
            limit: 3,
            min_confidence: DEFAULT_MIN_CONFIDENCE,
            token_budget: 600,
            after_tool_result: 0,
            runner_up_floor: 0.0,
            model_keywords: false,
            model_keywords_below: None,
            candidates: 0,
            candidate_bytes: 1_500,
        }
    }
}

impl PrePromotion {
    /// Query-aware discovery switched off: only `tool_search` promotes.
    pub fn off() -> Self {
        Self { enabled: false, ..Self::default() }
    }

    /// Sets the most tools one message promotes.
    #[must_use]
    pub const fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Sets the lowest ranker confidence a hit needs to be promoted.
    #[must_use]
    pub const fn with_min_confidence(mut self, min_confidence: f32) -> Self {
        self.min_confidence = min_confidence;
        self
    }

    /// Sets the most tokens the promoted declarations of one message may cost.
    #[must_use]
    pub const fn with_token_budget(mut self, token_budget: usize) -> Self {
        self.token_budget = token_budget;
        self
    }

    /// Sets how many more of the message's hits are promoted once a tool has answered it.
    #[must_use]
    pub const fn with_after_tool_result(mut self, after_tool_result: usize) -> Self {
        self.after_tool_result = after_tool_result;
        self
    }

    /// Sets whether the run's model writes search keywords for each message before it is ranked.
    #[must_use]
    pub const fn with_model_keywords(mut self, model_keywords: bool) -> Self {
        self.model_keywords = model_keywords;
        self
    }

    /// Sets the confidence under which the message's own best hit asks for the model's
    /// keywords (`None`: always ask).
    #[must_use]
    pub const fn with_model_keywords_below(mut self, confidence: Option<f32>) -> Self {
        self.model_keywords_below = confidence;
        self
    }

    /// Sets how many compact candidates the first request offers beside the promoted tools
    /// when the manifest has degraded (`0`: none), and the bytes their lines may take.
    ///
    /// ```
    /// use tinytools::discovery::{PrePromotion, MAX_CANDIDATES};
    ///
    /// let pre = PrePromotion::default().with_candidates(8, 600);
    /// assert_eq!((pre.candidates, pre.candidate_bytes), (8, 600));
    /// assert_eq!(PrePromotion::default().with_candidates(0, 600).candidates(), 0, "switched off");
    /// assert_eq!(PrePromotion::default().with_candidates(500, 600).candidates(), MAX_CANDIDATES);
    /// ```
    #[must_use]
    pub const fn with_candidates(mut self, candidates: usize, candidate_bytes: usize) -> Self {
        self.candidates = candidates;
        self.candidate_bytes = candidate_bytes;
        self
    }

    /// How many compact candidates the first request may offer: `candidates`, at most
    /// [`MAX_CANDIDATES`].
    pub const fn candidates(&self) -> usize {
        if self.candidates < MAX_CANDIDATES { self.candidates } else { MAX_CANDIDATES }
    }

    /// Sets the share of the best hit's confidence a runner-up needs to be promoted beside it.
    #[must_use]
    pub const fn with_runner_up_floor(mut self, runner_up_floor: f32) -> Self {
        self.runner_up_floor = runner_up_floor;
        self
    }
}

impl Default for ToolDiscoveryPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            manifest_token_budget: 4_000,
            default_limit: 5,
            max_limit: 20,
            ranker: None,
            rank_mode: RankMode::Ranker,
            ranker_timeout: Duration::from_secs(2),
            pre_promotion: PrePromotion::default(),
            mode: DiscoveryMode::Bridge,
            field_weights: FieldWeights::default(),
            search_candidates: 0,
            search_candidate_bytes: 1_500,
        }
    }
}

impl ToolDiscoveryPolicy {
    /// Discovery switched off.
    pub fn disabled() -> Self {
        Self { enabled: false, ..Self::default() }
    }

    /// Sets the token budget of the manifest embedded in `tool_search`'s description.
    #[must_use]
    pub fn with_manifest_token_budget(mut self, manifest_token_budget: usize) -> Self {
        self.manifest_token_budget = manifest_token_budget;
        self
    }

    /// Sets the matches returned when the model gives no `limit`.
    #[must_use]
    pub fn with_default_limit(mut self, default_limit: usize) -> Self {
        self.default_limit = default_limit;
        self
    }

    /// Sets the most matches one search returns.
    #[must_use]
    pub fn with_max_limit(mut self, max_limit: usize) -> Self {
        self.max_limit = max_limit;
        self
    }

    /// Sets the two-stage search: how many compact candidates a search answers after its full
    /// matches (`0`: full matches only), and the bytes their lines may take.
    ///
    /// ```
    /// use tinytools::discovery::{ToolDiscoveryPolicy, MAX_CANDIDATES};
    ///
    /// let policy = ToolDiscoveryPolicy::default().with_search_candidates(15, 2_000);
    /// assert_eq!((policy.search_candidates(), policy.search_candidate_bytes), (15, 2_000));
    /// let off = ToolDiscoveryPolicy::default().with_search_candidates(0, 2_000);
    /// assert_eq!(off.search_candidates(), 0, "full matches only");
    /// let huge = ToolDiscoveryPolicy::default().with_search_candidates(10_000, 2_000);
    /// assert_eq!(huge.search_candidates(), MAX_CANDIDATES, "clamped");
    /// ```
    #[must_use]
    pub fn with_search_candidates(mut self, candidates: usize, candidate_bytes: usize) -> Self {
        self.search_candidates = candidates;
        self.search_candidate_bytes = candidate_bytes;
        self
    }

    /// How many compact candidates a search answers after its full matches: at most
    /// [`MAX_CANDIDATES`].
    pub fn search_candidates(&self) -> usize {
        self.search_candidates.min(MAX_CANDIDATES)
    }

    /// Sets how long a host ranker may take before BM25 answers instead.
    #[must_use]
    pub fn with_ranker_timeout(mut self, ranker_timeout: Duration) -> Self {
        self.ranker_timeout = ranker_timeout;
        self
    }

    /// Sets query-aware discovery.
    #[must_use]
    pub fn with_pre_promotion(mut self, pre_promotion: PrePromotion) -> Self {
        self.pre_promotion = pre_promotion;
        self
    }

    /// Sets the field weights of the catalogue's BM25 index.
    #[must_use]
    pub fn with_field_weights(mut self, field_weights: FieldWeights) -> Self {
        self.field_weights = field_weights;
        self
    }

    /// Sets how deferred tools reach the model.
    #[must_use]
    pub fn with_mode(mut self, mode: DiscoveryMode) -> Self {
        self.mode = mode;
        self
    }

    /// Installs a host ranker.
    #[must_use]
    pub fn with_ranker(mut self, ranker: Arc<dyn ToolRanker>) -> Self {
        self.ranker = Some(ranker);
        self
    }

    /// Sets the rank mode.
    #[must_use]
    pub fn with_rank_mode(mut self, mode: RankMode) -> Self {
        self.rank_mode = mode;
        self
    }

    /// The largest number of matches a search may return (at least 1).
    pub fn max_limit(&self) -> usize {
        self.max_limit.max(1)
    }

    /// How many matches to return for a requested limit: the default when none is given,
    /// clamped into `1..=max_limit` either way.
    pub fn limit(&self, requested: Option<u64>) -> usize {
        let max = self.max_limit();
        match requested {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX).clamp(1, max),
            None => self.default_limit.clamp(1, max),
        }
    }
}

impl fmt::Debug for ToolDiscoveryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDiscoveryPolicy")
            .field("enabled", &self.enabled)
            .field("manifest_token_budget", &self.manifest_token_budget)
            .field("default_limit", &self.default_limit)
            .field("max_limit", &self.max_limit)
            .field("ranker", &self.ranker.as_ref().map(|ranker| ranker.name().to_owned()))
            .field("rank_mode", &self.rank_mode)
            .field("ranker_timeout", &self.ranker_timeout)
            .field("pre_promotion", &self.pre_promotion)
            .field("mode", &self.mode)
            .field("field_weights", &self.field_weights)
            .field("search_candidates", &self.search_candidates)
            .field("search_candidate_bytes", &self.search_candidate_bytes)
            .finish()
    }
}
