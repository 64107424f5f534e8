//! [`RunPolicy`]: what governs one run.

use std::collections::BTreeSet;
use std::time::Duration;

use super::limits::{RunCaps, UsageLimits};
use crate::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
use crate::schema::SchemaPreparation;
use crate::surface::Surface;

/// What governs one run. Defaults are safe: discovery on with the spec's limits, schemas sent
/// as declared, every registered tool admitted, 16 model turns, one minute per tool call,
/// tool inputs and outputs kept out of events, the loop guard on, no usage limits, the
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
/// let bridge = DiscoveryBridge::for_run(Surface::all(&registry), &policy);
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
    /// What the run does about a model that repeats a call or describes one instead of
    /// making it.
    pub loop_guard: LoopGuard,
    /// How many model requests and tokens the run may spend.
    pub usage_limits: UsageLimits,
    /// Tool calls per turn, bytes of a tool result, bytes of a provider response.
    pub caps: RunCaps,
    /// The model's context window in tokens, as the run's token counter counts them. When set,
    /// a request estimated above 90 % of it is shrunk before it is sent (see
    /// [`RunFailure::ContextOverflow`](super::RunFailure::ContextOverflow)); either way a
    /// provider's context-length error shrinks the conversation and retries once.
    pub context_window: Option<usize>,
}

/// How a run answers a model that goes round in circles (`RunPolicy::loop_guard`).
///
/// - The same call — name and arguments, whatever their key order — made again in one run is
///   not run again: it is answered with its first answer behind a note saying so. At
///   `max_repeats` repeats the run stops offering tools, asks the model for its final answer,
///   and ends with `StopReason::RepeatedCalls`; a repeated `tool_search` that matched nothing
///   stops it at its first repeat (the same words cannot find anything new). Each intervention
///   is a `RepeatedCall` event.
/// - The first time the model writes again, and only, calls whose answers it already has
///   (not `tool_search`, not an error), it is taken to be done with tools
///   (`answer_after_repeat`): the repeat is set aside and the model asked once more with no
///   tools offered; a reply with text is the run's answer (`StopReason::Answered`, a
///   `RepeatedCall` event with `stopped`), and the transcript reads call, result, answer. A
///   reply without text (the call written again) is asked once more, still with no tools, in
///   words ("The tool has answered (above). Now tell the user what it answered, in one
///   sentence."), and
///   the transcript keeps that request before the answer; a second reply without text puts the
///   repeat back, answered as above. Measured on
///   Qwen2.5-Coder-1.5B (`docs/live.md`): offered the tools again it writes the same call
///   again, offered none it answers from the result.
/// - A reply without a call that spells one out — it names exactly one tool the model may
///   call and holds exactly one JSON object of arguments, or quotes a call
///   `{"name": ..., "arguments": {...}}` of such a tool inside a sentence — is taken as that
///   call (`adopt_described_calls`), unless the tool is annotated destructive or the same call
///   was already made. Once a tool other than `tool_search` has answered, only a read-only
///   tool is adopted: the prose may then be repeating what a tool's output told the model to
///   do; the reply to the unused-value question (below) is the exception, for the tools that
///   question named, since it asked for their call — unless the reply repeats an earlier one
///   word for word. A reply that names one read-only tool whose one required parameter is a
///   string, and quotes exactly one value (``call `jira_search_issues` with "status = 'In
///   Progress'"``), is taken as that look-up with the value; so is a described `tool_search`
///   with its one quoted query. A reply that names one tool and,
///   with no JSON object, writes its arguments as assignments (``file_id="doc_88"``,
///   `email: 'x@y.z'`, `limit=5`; every required parameter one value of its type) is taken as
///   that call. A reply that is only a tool — its name alone, or tool declarations copied back
///   from the request — is taken as a call of it (the first one
///   declared) without arguments, when the tool requires an argument (admission then refuses
///   it and answers with the tool's signature, from which the model writes the call) or may be
///   adopted at all. A `CallAdopted` event records it; the transcript keeps the call, not the
///   sentence.
/// - With `nudge_described_calls` on (off by default), a reply without a call that names a
///   tool the model may call, before any tool has answered successfully, gets one nudge: the
///   run asks the model to make the call it described, or to answer. A `Nudged` event records
///   it.
/// - A reply with neither text nor a call gets one request for the answer
///   (`ask_after_empty_reply`), recorded by an `EmptyReply` event; so does a reply that is
///   only a tool that has already run without error (an echo, never adopted as a call), and
///   one that names a tool that has answered but holds none of the values its results brought
///   into the conversation (the call described again instead of its answer; a `CallRestated`
///   event records it, here and after a repeat). Once
///   a tool has answered without error the request points at its answer, as after a repeat
///   above; before, it asks for the answer or for word that it cannot be done.
/// - A call whose [grounded](crate::Grounding) argument holds a value that no user message and
///   no tool result of the run holds (when the grounding names source tools, no result of
///   theirs) is refused before the tool runs (`require_grounding`): the answer names the
///   argument and where its value comes from, a Deferred source is promoted
///   ([`Promotion::GroundingSource`](super::Promotion::GroundingSource)), and a `ToolRejected`
///   event records it. Only results of calls that ran without error count as a source. A
///   call to a tool with side effects whose argument holds a template placeholder
///   (`"GLOBX is trading at $<current-price>"`, `"$<price>"`: words in `<` `>`, a single one
///   not an HTML element's name) that no user message or tool result holds is refused the
///   same way: the answer names the hole, and the Deferred tools its words and the text
///   around it rank to (past query-aware discovery's floor) are named and promoted.
/// - A run that has called a tool and is about to end while a value the last user message
///   spelt out — a quoted phrase, an email address, a `#channel` — has gone into no call
///   (`tool_search` aside) asks once whether a call still needs it
///   (`ask_about_unused_values`, an `UnusedValues` event), once a call other than
///   `tool_search` has run without error. The question names, with their signatures, up to
///   two Deferred tools no call has used, none destructive, that the message ranks at all
///   among them: those with a parameter for the value's kind first (a channel for a
///   `#channel` — by its name or description, or a `#channel` its description shows — an email
///   for an address), then a called tool's family, then those already promoted, each group in
///   the order the message ranks them; those not yet declared are promoted. With discovery off
///   there is nothing to name and it is not asked: measured with 41 tools declared, the model
///   answered it in prose.
/// - A call of a read-only tool that admission refuses only for arguments the tool does not
///   declare runs without them (`drop_undeclared_arguments`): its answer starts by naming what
///   was left out, and an `UndeclaredArgumentsDropped` event records it. Measured on
///   Qwen2.5-Coder-1.5B: told that `stock_quote` takes no `vs_currency` (a field of the
///   promoted `crypto_price`), it sent the same call again twice and gave up. A tool with side
///   effects is never run on arguments other than the model's.
///
/// ```
/// use tinytools::run::{LoopGuard, RunPolicy};
///
/// let guard = RunPolicy::default().loop_guard;
/// assert_eq!(guard, LoopGuard::default());
/// assert_eq!((guard.max_repeats, guard.answer_after_repeat, guard.adopt_described_calls), (3, true, true));
/// assert!(!guard.nudge_described_calls && guard.ask_after_empty_reply && guard.require_grounding);
/// let off = LoopGuard::off();
/// assert_eq!((off.max_repeats, off.adopt_described_calls, off.nudge_described_calls), (0, false, false));
/// assert!(guard.ask_about_unused_values && !off.ask_about_unused_values);
/// assert!(guard.drop_undeclared_arguments && !off.drop_undeclared_arguments);
///
/// let patient = LoopGuard::default().with_max_repeats(5).with_answer_after_repeat(false);
/// let policy = RunPolicy::default().with_loop_guard(patient);
/// assert_eq!((policy.loop_guard.max_repeats, policy.loop_guard.answer_after_repeat), (5, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoopGuard {
    /// Repeats of one call after which the run asks for the final answer (`0`: never; repeats
    /// are still answered from the first result).
    pub max_repeats: usize,
    /// At the first repeat of calls already answered, ask for the answer with no tools offered
    /// instead of answering the repeat.
    pub answer_after_repeat: bool,
    /// Take a call spelt out in prose (one offered, non-destructive tool and its arguments)
    /// for the call.
    pub adopt_described_calls: bool,
    /// Nudge once when the model describes a call instead of making it. Off by default:
    /// measured on Qwen2.5-Coder-1.5B over nine runs of the live suite, 42 nudges drew the same
    /// sentence back 34 times, 2 junk calls, and never a call a task needed; each cost a turn.
    pub nudge_described_calls: bool,
    /// Ask once for the answer when a reply has neither text nor a call.
    pub ask_after_empty_reply: bool,
    /// Refuse a call whose [grounded](crate::Grounding) argument holds a value the
    /// conversation never gave, and tell the model where the value comes from (promoting a
    /// deferred source tool), instead of running the tool on an invented id; and refuse a call
    /// with side effects that holds a template placeholder (`<current-price>`) in its place.
    pub require_grounding: bool,
    /// Ask once, when a run that has called a tool is about to end, whether a call still needs
    /// a value the last user message spelt out (a quoted phrase, an email address, a
    /// `#channel`) that no call has used; with discovery on, the message's best-ranked tools
    /// not yet called are promoted and named with their signatures.
    pub ask_about_unused_values: bool,
    /// Run a read-only tool's call whose only fault is arguments the tool does not declare
    /// without them, and say so in its answer, instead of refusing it.
    pub drop_undeclared_arguments: bool,
}

impl Default for LoopGuard {
    fn default() -> Self {
        Self {
            max_repeats: 3,
            answer_after_repeat: true,
            adopt_described_calls: true,
            nudge_described_calls: false,
            ask_after_empty_reply: true,
            require_grounding: true,
            ask_about_unused_values: true,
            drop_undeclared_arguments: true,
        }
    }
}

impl LoopGuard {
    /// No adoption, no nudge, no second request after an empty reply or a repeat, and repeats
    /// never end the run (they are still answered from the first result).
    pub fn off() -> Self {
        Self {
            max_repeats: 0,
            answer_after_repeat: false,
            adopt_described_calls: false,
            nudge_described_calls: false,
            ask_after_empty_reply: false,
            require_grounding: false,
            ask_about_unused_values: false,
            drop_undeclared_arguments: false,
        }
    }

    /// Sets the repeats of one call after which the run asks for the final answer (`0`: never).
    #[must_use]
    pub const fn with_max_repeats(mut self, max_repeats: usize) -> Self {
        self.max_repeats = max_repeats;
        self
    }

    /// Sets whether the first repeat of answered calls asks for the answer with no tools offered.
    #[must_use]
    pub const fn with_answer_after_repeat(mut self, answer_after_repeat: bool) -> Self {
        self.answer_after_repeat = answer_after_repeat;
        self
    }

    /// Sets whether a call spelt out in prose is taken for the call.
    #[must_use]
    pub const fn with_adopt_described_calls(mut self, adopt_described_calls: bool) -> Self {
        self.adopt_described_calls = adopt_described_calls;
        self
    }

    /// Sets whether a call described instead of made gets one nudge.
    #[must_use]
    pub const fn with_nudge_described_calls(mut self, nudge_described_calls: bool) -> Self {
        self.nudge_described_calls = nudge_described_calls;
        self
    }

    /// Sets whether a reply with neither text nor a call gets one request for the answer.
    #[must_use]
    pub const fn with_ask_after_empty_reply(mut self, ask_after_empty_reply: bool) -> Self {
        self.ask_after_empty_reply = ask_after_empty_reply;
        self
    }

    /// Sets whether a call with an ungrounded value for a [grounded](crate::Grounding)
    /// argument is refused.
    #[must_use]
    pub const fn with_require_grounding(mut self, require_grounding: bool) -> Self {
        self.require_grounding = require_grounding;
        self
    }

    /// Sets whether a run about to end with a value of the user's message unused asks once
    /// whether a call still needs it.
    #[must_use]
    pub const fn with_ask_about_unused_values(mut self, ask_about_unused_values: bool) -> Self {
        self.ask_about_unused_values = ask_about_unused_values;
        self
    }

    /// Sets whether a read-only tool's call refused only for undeclared arguments runs
    /// without them.
    #[must_use]
    pub const fn with_drop_undeclared_arguments(mut self, drop_undeclared_arguments: bool) -> Self {
        self.drop_undeclared_arguments = drop_undeclared_arguments;
        self
    }
}

/// What events may carry beyond names and counts.
///
/// ```
/// use tinytools::run::{Capture, RunPolicy};
///
/// assert!(!RunPolicy::default().capture.tool_io);
/// let policy = RunPolicy::default().with_capture(Capture::default().with_tool_io(true));
/// assert!(policy.capture.tool_io);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capture {
    /// Record tool inputs (such as `ToolSearched.query`). Off by default: they can hold
    /// personal data.
    pub tool_io: bool,
}

impl Capture {
    /// Sets whether events record tool inputs.
    #[must_use]
    pub const fn with_tool_io(mut self, tool_io: bool) -> Self {
        self.tool_io = tool_io;
        self
    }
}

// Here rather than in `discovery`, so that discovery does not depend on the run.
impl DiscoveryBridge {
    /// The bridge a run with this policy uses: its discovery policy and schema preparation.
    pub fn for_run(surface: Surface, policy: &RunPolicy) -> Self {
        Self::over(surface, policy.discovery.clone()).with_preparation(policy.tool_schemas)
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
            loop_guard: LoopGuard::default(),
            usage_limits: UsageLimits::default(),
            caps: RunCaps::default(),
            context_window: None,
        }
    }
}

impl RunPolicy {
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

    /// Sets the loop guard.
    #[must_use]
    pub fn with_loop_guard(mut self, loop_guard: LoopGuard) -> Self {
        self.loop_guard = loop_guard;
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
