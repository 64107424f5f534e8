//! [`RunPolicy`]: what governs one run.

use std::collections::BTreeSet;
use std::time::Duration;

use super::aids::Aids;
use super::limits::{RunCaps, UsageLimits};
use crate::discovery::ToolDiscoveryPolicy;
use crate::schema::SchemaPreparation;

/// What governs one run. Defaults are for the model the user brought, usually a strong hosted
/// one: exactly one model request per turn, nothing asked behind the host's back
/// ([`RunPolicy::small_model`] is the one profile for small local models). Defaults are
/// safe: discovery on with the spec's limits, schemas sent
/// as declared, every registered tool admitted, 16 model turns, one minute per tool call,
/// tool inputs and outputs kept out of events, the [standard aids](Aids::standard), no usage limits, the
/// [`RunCaps`] defaults, and no known context window (a provider's context-length error still
/// shrinks the conversation once).
///
/// ```
/// use tinytools::discovery::DiscoveryBridge;
/// use tinytools::schema::{EstimatedTokens, ProviderProfile, SchemaPreparation};
/// use tinytools::surface::Surface;
/// use tinytools::{RunPolicy, SchemaCompaction, ToolRegistry};
///
/// let policy = RunPolicy::default()
///     .with_tool_schemas(SchemaPreparation::new(ProviderProfile::GEMINI).with_compaction(SchemaCompaction::THIRD_PARTY))
///     .with_max_turns(8)
///     .allow_only(["read_note", "stock_quote"]);
/// assert!(policy.discovery.enabled);
/// assert_eq!(policy.max_turns, 8);
/// assert!(policy.allows("stock_quote") && !policy.allows("gmail_send"));
/// let registry = ToolRegistry::new();
/// let bridge = DiscoveryBridge::over(Surface::all(&registry), policy.discovery.clone());
/// assert!(bridge.advertised(&EstimatedTokens).is_empty());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RunPolicy {
    /// Whether and how deferred tools are advertised and searched.
    pub discovery: ToolDiscoveryPolicy,
    /// How every advertised and deferred schema is projected before it is sent;
    /// `None` sends them as declared.
    pub tool_schemas: Option<SchemaPreparation>,
    /// The host allow-list: `None` admits every registered tool. Like every narrowing rule it
    /// is evaluated once, at run start, into the run's [`Surface`](crate::surface::Surface):
    /// a tool it does not list is absent from every surface of the run.
    pub allowed_tools: Option<BTreeSet<String>>,
    /// What events may carry.
    pub capture: Capture,
    /// The most model calls in one run.
    pub max_turns: usize,
    /// How long one tool call may run before the model is told it timed out.
    pub tool_timeout: Duration,
    /// The [aids](super::aids) that may correct the model's turns (default:
    /// [`Aids::standard`]).
    pub aids: Aids,
    /// How many model requests and tokens the run may spend.
    pub usage_limits: UsageLimits,
    /// Tool calls per turn, bytes of a tool result, bytes of a provider response.
    pub caps: RunCaps,
    /// The model's context window in tokens, as the run's token counter counts them. When set,
    /// a request estimated above 90 % of it is shrunk before it is sent (see
    /// [`RunFailure::ContextOverflow`](super::RunFailure::ContextOverflow)); either way a
    /// provider's context-length error shrinks the conversation and retries once.
    pub context_window: Option<usize>,
    /// How many more answers a typed run ([`Agent::run_typed`](super::Agent::run_typed))
    /// asks for after one that misses its output schema (default 2): each is one feedback
    /// turn, counted against `max_turns` and the usage limits like every other.
    pub output_retries: usize,
}

/// What events and the run's spans may carry beyond names and counts (`docs/tracing.md`).
///
/// ```
/// use tinytools::run::{Capture, RunPolicy};
///
/// assert!(!RunPolicy::default().capture.tool_io);
/// assert!(!RunPolicy::default().capture.messages);
/// let policy = RunPolicy::default().with_capture(Capture::default().with_tool_io(true).with_messages(true));
/// assert!(policy.capture.tool_io && policy.capture.messages);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capture {
    /// Record tool inputs (such as `ToolSearched.query`), and on the spans a call's
    /// arguments and result (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off
    /// by default: they can hold personal data.
    pub tool_io: bool,
    /// Record the conversation on the model-request spans: the messages each request sends
    /// (`gen_ai.input.messages`) and the answer (`gen_ai.output.messages`). Off by default:
    /// prompts hold the user's words.
    pub messages: bool,
}

impl Capture {
    /// Sets whether events record tool inputs.
    #[must_use]
    pub const fn with_tool_io(mut self, tool_io: bool) -> Self {
        self.tool_io = tool_io;
        self
    }

    /// Sets whether the model-request spans record the conversation.
    #[must_use]
    pub const fn with_messages(mut self, messages: bool) -> Self {
        self.messages = messages;
        self
    }
}

impl Default for RunPolicy {
    fn default() -> Self {
        Self {
            discovery: ToolDiscoveryPolicy::default(),
            tool_schemas: None,
            allowed_tools: None,
            capture: Capture::default(),
            max_turns: 16,
            tool_timeout: Duration::from_secs(60),
            aids: Aids::standard(),
            usage_limits: UsageLimits::default(),
            caps: RunCaps::default(),
            context_window: None,
            output_retries: 2,
        }
    }
}

impl RunPolicy {
    /// The profile for a small local model (a 0.5B–7B model on llama.cpp, Ollama or vLLM),
    /// the one switch for what helped such models on the project's measurements
    /// (`docs/aids.md`, `docs/live.md`): the [`Aids::small_model`] aids, and query-aware
    /// discovery ranking each user message with a line of search keywords the model writes
    /// for it first ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords)):
    /// **one more model request per user message**. Everything else is the default. A
    /// strong hosted model needs none of it: keep [`RunPolicy::default`], which makes
    /// exactly one model request per turn.
    ///
    /// ```
    /// use tinytools::run::{Aids, RunPolicy};
    ///
    /// let small = RunPolicy::small_model();
    /// assert!(small.discovery.pre_promotion.model_keywords);
    /// assert_eq!(small.aids.names(), Aids::small_model().names());
    /// let hosted = RunPolicy::default();
    /// assert!(!hosted.discovery.pre_promotion.model_keywords);
    /// assert_eq!(hosted.aids.names(), Aids::standard().names());
    /// ```
    pub fn small_model() -> Self {
        let mut policy = Self::default().with_aids(Aids::small_model());
        policy.discovery.pre_promotion = policy.discovery.pre_promotion.with_model_keywords(true);
        policy
    }

    /// Sets how many more answers a typed run asks for after one that misses its schema.
    #[must_use]
    pub fn with_output_retries(mut self, retries: usize) -> Self {
        self.output_retries = retries;
        self
    }

    /// Sets the discovery policy.
    #[must_use]
    pub fn with_discovery(mut self, discovery: ToolDiscoveryPolicy) -> Self {
        self.discovery = discovery;
        self
    }

    /// Projects every schema with this preparation before it is sent.
    #[must_use]
    pub fn with_tool_schemas(mut self, preparation: SchemaPreparation) -> Self {
        self.tool_schemas = Some(preparation);
        self
    }

    /// Sets what events may carry.
    #[must_use]
    pub fn with_capture(mut self, capture: Capture) -> Self {
        self.capture = capture;
        self
    }

    /// Sets the most model calls in one run.
    #[must_use]
    pub fn with_max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = max_turns;
        self
    }

    /// Sets how long one tool call may run.
    #[must_use]
    pub fn with_tool_timeout(mut self, tool_timeout: Duration) -> Self {
        self.tool_timeout = tool_timeout;
        self
    }

    /// Sets the aids (see [`Aids::none`], [`Aids::standard`], [`Aids::small_model`]).
    #[must_use]
    pub fn with_aids(mut self, aids: Aids) -> Self {
        self.aids = aids;
        self
    }

    /// Sets how many model requests and tokens the run may spend.
    #[must_use]
    pub fn with_usage_limits(mut self, usage_limits: UsageLimits) -> Self {
        self.usage_limits = usage_limits;
        self
    }

    /// Sets the run's size caps.
    #[must_use]
    pub fn with_caps(mut self, caps: RunCaps) -> Self {
        self.caps = caps;
        self
    }

    /// Sets the model's context window in tokens.
    #[must_use]
    pub fn with_context_window(mut self, tokens: usize) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Admits only these tools (the host allow-list).
    #[must_use]
    pub fn allow_only<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.allowed_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the host allow-list admits `name`.
    pub fn allows(&self, name: &str) -> bool {
        self.allowed_tools.as_ref().is_none_or(|allowed| allowed.contains(name))
    }
}
