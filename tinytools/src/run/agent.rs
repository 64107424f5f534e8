//! [`Agent`]: the loop — call the model, run its tool calls, repeat until it answers.

use std::sync::Arc;

use super::error::RunError;
use super::events::{EventSink, Promotion, RunEvent};
use super::grounding::Grounds;
use super::policy::RunPolicy;
use super::transcript::{ToolPatch, Transcript};
use crate::discovery::{DiscoveryBridge, RankOutcome};
use crate::middleware::Middleware;
use crate::model::{ChatModel, Message, Usage};
use crate::schema::{EstimatedTokens, TokenCounter, count_tool_schema_tokens};
use crate::surface::{AllowList, Rule, Surface};
use crate::{CancellationToken, ToolContext, ToolRegistry, ToolSchema};

/// Runs conversations against a model with a registry's tools.
///
/// At its start a run evaluates its rules (the host allow-list, every middleware's
/// [`rule`](Middleware::rule), the agent's own [`with_rule`](Self::with_rule)) into one
/// [`Surface`]: what exists for this run. Before the first model call, query-aware discovery
/// ([`PrePromotion`](crate::discovery::PrePromotion)) promotes the deferred tools that best
/// match the new user message. Each turn sends the Direct tools (and `tool_search` when
/// anything is deferred), then every promoted tool, in the order promoted; runs the model's
/// tool calls concurrently, keeping their results in call order; and stops when the model
/// answers without calling a tool, the turn limit is reached, or the run is cancelled. A
/// deferred tool is called by its own name — there is no wrapper — so every gate sees the real
/// name and arguments. Unknown, Hidden and refused names get the unknown-tool answer; arguments
/// admission refuses get every violation and the tool's compact signature (and a deferred tool
/// called that way is promoted); a tool that fails, panics or times out gets an error result;
/// the run goes on.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tinytools::model::{Message, ModelResponse};
/// use tinytools::run::Agent;
/// use tinytools::testkit::ScriptedModel;
/// use tinytools::{ToolRegistry, tool};
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool(exposure = "deferred", family = "finance")]
/// async fn stock_quote(/** Ticker symbol. */ symbol: String) -> String { format!("{symbol} 12.50") }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(StockQuote)?;
/// let model = ScriptedModel::new([
///     ModelResponse::calls([("c1", "tool_search", json!({"query": "stock price"}))]),
///     ModelResponse::calls([("c2", "stock_quote", json!({"symbol": "ACME"}))]),
///     ModelResponse::text("ACME trades at 12.50."),
/// ]);
/// let model = Arc::new(model);
/// let agent = Agent::new(Arc::new(registry), model.clone());
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let outcome = agent.run(vec![Message::user("What is ACME at?")]).await?;
/// assert_eq!(outcome.answer, "ACME trades at 12.50.");
/// let requests = model.requests();
/// assert_eq!(requests[0].tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["tool_search"]);
/// assert_eq!(requests[1].tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["tool_search", "stock_quote"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
pub struct Agent {
    pub(super) registry: Arc<ToolRegistry>,
    pub(super) model: Arc<dyn ChatModel>,
    pub(super) policy: RunPolicy,
    pub(super) middleware: Vec<Arc<dyn Middleware>>,
    events: Option<Arc<dyn EventSink>>,
    counter: Arc<dyn TokenCounter>,
    pub(super) state: Option<Arc<dyn Fn(ToolContext) -> ToolContext + Send + Sync>>,
    rules: Vec<Arc<dyn Rule>>,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without calling a tool.
    Answered,
    /// `RunPolicy::max_turns` model calls were made.
    TurnLimit,
    /// The run's cancellation token fired.
    Cancelled,
    /// The model kept repeating one call (`RunPolicy::loop_guard`): the run stopped offering
    /// tools and the answer is what the model said when asked for its final answer.
    RepeatedCalls,
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    /// The model's last text.
    pub answer: String,
    /// Why the run stopped.
    pub stop: StopReason,
    /// Everything needed to resume it.
    pub transcript: Transcript,
    /// Model calls made.
    pub turns: usize,
    /// Usage summed over the calls that reported it.
    pub usage: Usage,
}

/// One run in progress: what every step of it reads and writes.
pub(super) struct Run<'a> {
    pub(super) agent: &'a Agent,
    pub(super) bridge: DiscoveryBridge,
    pub(super) transcript: Transcript,
    pub(super) promoted: Vec<ToolSchema>,
    pub(super) cancel: CancellationToken,
    /// The user message pre-promotion ranked, until its follow-up promotion has run.
    pub(super) follow_up: Option<String>,
    /// What a grounded argument's value may be copied from.
    pub(super) grounds: Grounds,
    /// The user's request: the last user message when the run started (the loop guard's own
    /// requests are user messages too, and come after it).
    pub(super) request: Option<String>,
}

impl Agent {
    /// An agent with the default policy, no middleware, no event sink.
    pub fn new(registry: Arc<ToolRegistry>, model: Arc<dyn ChatModel>) -> Self {
        Self {
            registry,
            model,
            policy: RunPolicy::default(),
            middleware: Vec::new(),
            events: None,
            counter: Arc::new(EstimatedTokens),
            state: None,
            rules: Vec::new(),
        }
    }

    /// Adds a narrowing rule (a host predicate such as `|subject: Subject<'_>| ...`): evaluated
    /// once per run with the allow-list and the middleware's rules; a tool it refuses is absent
    /// from every surface of the run. See [`crate::surface`].
    #[must_use]
    pub fn with_rule(mut self, rule: Arc<dyn Rule>) -> Self {
        self.rules.push(rule);
        self
    }

    /// The run's surface: the registry narrowed by every rule, evaluated now.
    pub fn surface(&self) -> Surface {
        let allow_list = self.policy.allowed_tools.clone().map(AllowList::from_set);
        let mut rules: Vec<&dyn Rule> = Vec::new();
        if let Some(allow_list) = &allow_list {
            rules.push(allow_list);
        }
        rules.extend(self.middleware.iter().filter_map(|middleware| middleware.rule()));
        rules.extend(self.rules.iter().map(AsRef::as_ref));
        Surface::new(&self.registry, &rules)
    }

    /// Sets the run policy.
    #[must_use]
    pub fn with_policy(mut self, policy: RunPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Adds a middleware; they run in the order added.
    #[must_use]
    pub fn with_middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Installs the event sink.
    #[must_use]
    pub fn with_events(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.events = Some(sink);
        self
    }

    /// Sets the token counter that sizes the manifest (default: [`EstimatedTokens`]).
    #[must_use]
    pub fn with_token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = counter;
        self
    }

    /// Adds host state to every tool call's [`ToolContext`].
    #[must_use]
    pub fn with_tool_state(mut self, state: impl Fn(ToolContext) -> ToolContext + Send + Sync + 'static) -> Self {
        self.state = Some(Arc::new(state));
        self
    }

    /// Runs a conversation to its end.
    ///
    /// # Errors
    /// [`RunError`] when a model call fails, a usage limit is reached, or the conversation
    /// cannot be shrunk to fit the model's window; tool failures never end a run.
    pub async fn run(&self, messages: Vec<Message>) -> Result<RunOutcome, RunError> {
        self.run_until_cancelled(messages, CancellationToken::new()).await
    }

    /// [`run`](Self::run), stopping promptly once `cancel` fires: a model call in flight is
    /// abandoned, running tools see it through their context and are abandoned too (each of
    /// their calls is answered "cancelled" in the transcript), and the outcome's stop reason is
    /// `Cancelled`.
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub async fn run_until_cancelled(
        &self,
        messages: Vec<Message>,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, RunError> {
        self.drive(Transcript { messages, patches: Vec::new() }, cancel, true).await
    }

    /// Continues a run from its transcript. Promoted tools come back only if the current rules
    /// still admit them (and they are still deferred and searchable). When the transcript ends
    /// with a user message, query-aware discovery ranks it first, as at a run's start.
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub async fn resume(&self, transcript: Transcript) -> Result<RunOutcome, RunError> {
        self.drive(transcript, CancellationToken::new(), false).await
    }

    async fn drive(
        &self,
        transcript: Transcript,
        cancel: CancellationToken,
        fresh: bool,
    ) -> Result<RunOutcome, RunError> {
        let bridge = DiscoveryBridge::for_run(self.surface(), &self.policy);
        let promoted = transcript.promoted().filter_map(|name| bridge.prepared_schema(name)).collect();
        let mut run = Run {
            agent: self,
            bridge,
            transcript,
            promoted,
            cancel,
            follow_up: None,
            grounds: Grounds::default(),
            request: None,
        };
        if fresh {
            for middleware in &self.middleware {
                middleware.before_agent(&mut run.transcript.messages).await;
            }
        }
        run.grounds = Grounds::of(&run.transcript.messages);
        run.request = run.transcript.messages.iter().rev().find_map(|message| match message {
            Message::User { content } => Some(content.clone()),
            _ => None,
        });
        let surface = run.bridge.advertised(self.counter.as_ref());
        let schema_bytes = serde_json::to_string(&surface).map_or(0, |text| text.len());
        let active = run.bridge.is_active();
        self.emit(RunEvent::ToolsAdvertised {
            direct: surface.len() - usize::from(active),
            deferred: if active { run.bridge.catalog().len() } else { 0 },
            schema_bytes,
        });
        run.pre_promote().await;
        let callable_by_name = run.callable_by_name();
        run.turns(surface, callable_by_name).await
    }

    /// The token counter that sizes the manifest and the promotion budgets.
    pub(super) fn counter(&self) -> &dyn TokenCounter {
        self.counter.as_ref()
    }

    pub(super) fn emit(&self, event: RunEvent) {
        tracing::debug!(target: "tinytools::run", ?event);
        if let Some(sink) = &self.events {
            sink.emit(&event);
        }
    }
}

impl Run<'_> {
    /// The deferred tools the model may call by name this run (only while discovery is on);
    /// fixed at run start with the catalogue.
    pub(super) fn callable_by_name(&self) -> Vec<String> {
        if !self.bridge.is_active() {
            return Vec::new();
        }
        self.bridge.catalog().iter().map(|tool| tool.schema().name.clone()).collect()
    }

    pub(super) fn finish(self, answer: String, stop: StopReason, turns: usize, usage: Usage) -> RunOutcome {
        RunOutcome { answer, stop, transcript: self.transcript, turns, usage }
    }

    /// Query-aware discovery: when the conversation ends with a user message, ranks it against
    /// the catalogue and promotes the hits that pass the floor and fit the token budget.
    async fn pre_promote(&mut self) {
        let pre = self.agent.policy.discovery.pre_promotion;
        if !pre.enabled || pre.limit == 0 || !self.bridge.is_active() {
            return;
        }
        let Some(Message::User { content }) = self.transcript.messages.last() else {
            return;
        };
        let query = content.trim();
        if query.is_empty() {
            return;
        }
        let query = query.to_owned();
        let wanted = pre.limit.saturating_add(self.promoted.len());
        let outcome = self.bridge.catalog().rank(self.bridge.policy(), &query, wanted).await;
        let (chosen, confidences) = self.pre_promotable(&outcome, pre.limit, true).into_iter().unzip();
        let cause = Promotion::UserMessage { ranker: outcome.ranker, confidences, fallback: outcome.fallback };
        self.promote(chosen, cause);
        if pre.after_tool_result > 0 {
            self.follow_up = Some(query);
        }
    }

    /// The follow-up of query-aware discovery, once a tool has answered the user message:
    /// the same message ranked again, its next hits promoted (at most
    /// `after_tool_result`, under the same floor and budget). Runs once per message.
    pub(super) async fn promote_after_tool_result(&mut self) {
        let Some(query) = self.follow_up.take() else {
            return;
        };
        let pre = self.agent.policy.discovery.pre_promotion;
        let wanted = pre.after_tool_result.saturating_add(self.promoted.len());
        let outcome = self.bridge.catalog().rank(self.bridge.policy(), &query, wanted).await;
        let (chosen, confidences) = self.pre_promotable(&outcome, pre.after_tool_result, true).into_iter().unzip();
        let cause = Promotion::AfterToolResult { ranker: outcome.ranker, confidences, fallback: outcome.fallback };
        self.promote(chosen, cause);
    }

    /// The hits of a ranking that pre-promotion would load, in rank order, with their
    /// confidences: at or above the floor, at most the limit, while their declarations fit the
    /// token budget, at most `limit`; tools already promoted are passed over when `only_new`.
    /// Serves the user-message and follow-up paths (only new tools) and the unknown-name path
    /// (whose answer names every fitting tool, promoted before or not).
    pub(super) fn pre_promotable(&self, outcome: &RankOutcome, limit: usize, only_new: bool) -> Vec<(ToolSchema, f32)> {
        let pre = self.agent.policy.discovery.pre_promotion;
        let (mut chosen, mut spent) = (Vec::new(), 0_usize);
        for hit in &outcome.matched {
            let Some(confidence) = hit.confidence.filter(|c| *c >= pre.min_confidence) else {
                continue;
            };
            if chosen.len() == limit || (only_new && self.promoted.iter().any(|tool| tool.name == hit.name)) {
                continue;
            }
            let Some(schema) = self.bridge.prepared_schema(&hit.name) else {
                continue;
            };
            let cost = count_tool_schema_tokens(std::slice::from_ref(&schema), self.agent.counter.as_ref());
            if spent.saturating_add(cost) > pre.token_budget {
                continue;
            }
            spent += cost;
            chosen.push((schema, confidence));
        }
        chosen
    }

    /// [`Run::promote`] for tools named by a call's answer: each name the bridge can prepare
    /// (a Deferred tool on the run's surface) is promoted; any other name is passed over.
    pub(super) fn promote_names(&mut self, names: Vec<String>, cause: Promotion) {
        let found = names.iter().filter_map(|name| self.bridge.prepared_schema(name)).collect();
        self.promote(found, cause);
    }

    /// Adds newly promoted declarations to every later request, once each, in order, as one
    /// transcript patch.
    pub(super) fn promote(&mut self, found: Vec<ToolSchema>, cause: Promotion) {
        let mut added: Vec<ToolSchema> = Vec::new();
        for schema in found {
            let known = self.promoted.iter().chain(&added).any(|tool| tool.name == schema.name);
            if !known {
                added.push(schema);
            }
        }
        if added.is_empty() {
            return;
        }
        if let Promotion::UserMessage { confidences, .. } | Promotion::AfterToolResult { confidences, .. } = &cause {
            debug_assert_eq!(confidences.len(), added.len(), "pre-promotion chose only new tools");
        }
        let names = added.iter().map(|tool| tool.name.clone()).collect();
        self.agent.emit(RunEvent::ToolsPromoted { names, cause });
        self.transcript.patches.push(ToolPatch { at_message: self.transcript.messages.len(), added: added.clone() });
        self.promoted.extend(added);
    }
}
