//! [`Agent`]: the loop — call the model, run its tool calls, repeat until it answers.

use std::sync::Arc;

use super::call::CallAnswer;
use super::events::{EventSink, Promotion, RunEvent};
use super::guard::{self, Repeats};
use super::policy::RunPolicy;
use super::transcript::{ToolPatch, Transcript};
use crate::discovery::DiscoveryBridge;
use crate::middleware::Middleware;
use crate::model::{ChatModel, Message, ModelError, ModelRequest, Usage};
use crate::schema::{EstimatedTokens, TokenCounter, count_tool_schema_tokens};
use crate::surface::{AllowList, Rule, Surface};
use crate::{CancellationToken, ToolContext, ToolRegistry, ToolResult, ToolSchema};

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
    model: Arc<dyn ChatModel>,
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

/// A run that could not go on: the model call failed. The transcript so far is kept.
#[derive(Debug, thiserror::Error)]
#[error("the run stopped after {turns} model call(s): {source}")]
pub struct RunError {
    /// What the model client said.
    #[source]
    pub source: ModelError,
    /// The conversation up to the failure, for resuming.
    pub transcript: Transcript,
    /// Model calls made, the failed one included.
    pub turns: usize,
}

/// One run in progress: what every step of it reads and writes.
pub(super) struct Run<'a> {
    pub(super) agent: &'a Agent,
    pub(super) bridge: DiscoveryBridge,
    pub(super) transcript: Transcript,
    pub(super) promoted: Vec<ToolSchema>,
    pub(super) cancel: CancellationToken,
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
    /// [`RunError`] when a model call fails; tool failures never end a run.
    pub async fn run(&self, messages: Vec<Message>) -> Result<RunOutcome, RunError> {
        self.run_until_cancelled(messages, CancellationToken::new()).await
    }

    /// [`run`](Self::run), stopping at the next step once `cancel` fires (running tools see
    /// it through their context).
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
        let mut run = Run { agent: self, bridge, transcript, promoted, cancel };
        if fresh {
            for middleware in &self.middleware {
                middleware.before_agent(&mut run.transcript.messages).await;
            }
        }
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
    async fn turns(mut self, surface: Vec<ToolSchema>, callable_by_name: Vec<String>) -> Result<RunOutcome, RunError> {
        let guard = self.agent.policy.loop_guard;
        let mut usage = Usage::default();
        let mut answer = String::new();
        let mut repeats = Repeats::default();
        let (mut nudged, mut answered_a_call, mut stop_tools) = (false, false, false);
        for turn in 1..=self.agent.policy.max_turns {
            if self.cancel.is_cancelled() {
                return Ok(self.finish(answer, StopReason::Cancelled, turn - 1, usage));
            }
            let mut request = ModelRequest {
                messages: self.transcript.messages.clone(),
                tools: surface.clone(),
                callable_by_name: callable_by_name.clone(),
            };
            if stop_tools {
                // The loop guard's last request: no tools, and the model's final answer.
                self.transcript.messages.push(Message::user(guard::FINAL_ANSWER));
                request = ModelRequest { messages: self.transcript.messages.clone(), ..ModelRequest::default() };
            } else {
                for middleware in &self.agent.middleware {
                    middleware.before_model(&mut request).await;
                }
                request.tools.extend(self.promoted.iter().cloned());
            }
            for middleware in &self.agent.middleware {
                middleware.before_send(&mut request.messages, &request.tools).await;
            }
            let mut response = match self.agent.model.complete(&request).await {
                Ok(response) => response,
                Err(source) => return Err(RunError { source, transcript: self.transcript, turns: turn }),
            };
            for middleware in &self.agent.middleware {
                middleware.after_model(&mut response).await;
            }
            if let Some(reported) = response.usage {
                usage.prompt_tokens += reported.prompt_tokens;
                usage.completion_tokens += reported.completion_tokens;
            }
            self.agent.emit(RunEvent::ModelCalled { turn, tools: request.tools.len(), usage: response.usage });
            answer.clone_from(&response.content);
            if stop_tools {
                self.transcript.messages.push(Message::Assistant { content: response.content, tool_calls: Vec::new() });
                return Ok(self.finish(answer, StopReason::RepeatedCalls, turn, usage));
            }
            let calls = response.tool_calls.clone();
            self.transcript
                .messages
                .push(Message::Assistant { content: response.content, tool_calls: response.tool_calls });
            if calls.is_empty() {
                let offered = request
                    .tools
                    .iter()
                    .map(|t| t.name.as_str())
                    .chain(request.callable_by_name.iter().map(String::as_str));
                match guard::described_call(&answer, offered) {
                    Some(name) if guard.nudge_described_calls && !nudged && !answered_a_call => {
                        nudged = true;
                        self.agent.emit(RunEvent::Nudged { tool_name: name.to_owned() });
                        self.transcript.messages.push(Message::user(guard::nudge(name)));
                        continue;
                    }
                    _ => return Ok(self.finish(answer, StopReason::Answered, turn, usage)),
                }
            }
            // Calls made before (or twice in this turn) are answered from their first answer.
            let keys: Vec<String> = calls.iter().map(Repeats::key).collect();
            let fresh: Vec<usize> =
                (0..calls.len()).filter(|&i| !repeats.contains(&keys[i]) && !keys[..i].contains(&keys[i])).collect();
            let answered = futures_util::future::join_all(fresh.iter().map(|&i| self.call(&calls[i]))).await;
            let mut answers: Vec<Option<CallAnswer>> = (0..calls.len()).map(|_| None).collect();
            for (i, answer) in fresh.into_iter().zip(answered) {
                repeats.record(keys[i].clone(), &answer.result);
                answered_a_call |= answer.ran_ok;
                answers[i] = Some(answer);
            }
            let (mut found, mut rejected, mut loaded) = (Vec::new(), Vec::new(), Vec::new());
            for (i, call) in calls.iter().enumerate() {
                let answer = match answers[i].take() {
                    Some(answer) => answer,
                    None => {
                        let (result, count) = repeats.repeat(&keys[i]).unwrap_or_else(|| (ToolResult::error("?"), 0));
                        let stopped = guard.max_repeats > 0 && count >= guard.max_repeats;
                        stop_tools |= stopped;
                        self.agent.emit(RunEvent::RepeatedCall {
                            call_id: call.id.clone(),
                            tool_name: call.name.clone(),
                            repeats: count,
                            stopped,
                        });
                        CallAnswer::just(result)
                    }
                };
                found.extend(answer.searched);
                rejected.extend(answer.rejected);
                loaded.extend(answer.loaded);
                self.transcript.messages.push(Message::Tool {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: answer.result.to_model_text(),
                    is_error: answer.result.is_error,
                });
            }
            let found = found.into_iter().filter_map(|name| self.bridge.prepared_schema(&name));
            self.promote(found.collect(), Promotion::Searched);
            let rejected = rejected.into_iter().filter_map(|name| self.bridge.prepared_schema(&name));
            self.promote(rejected.collect(), Promotion::RejectedCall);
            let loaded = loaded.into_iter().filter_map(|name| self.bridge.prepared_schema(&name));
            self.promote(loaded.collect(), Promotion::UnknownName);
        }
        let turns = self.agent.policy.max_turns;
        Ok(self.finish(answer, StopReason::TurnLimit, turns, usage))
    }

    /// The deferred tools the model may call by name this run (only while discovery is on);
    /// fixed at run start with the catalogue.
    fn callable_by_name(&self) -> Vec<String> {
        if !self.bridge.is_active() {
            return Vec::new();
        }
        self.bridge.catalog().iter().map(|tool| tool.schema().name.clone()).collect()
    }

    fn finish(self, answer: String, stop: StopReason, turns: usize, usage: Usage) -> RunOutcome {
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
        let wanted = pre.limit.saturating_add(self.promoted.len());
        let outcome = self.bridge.catalog().rank(self.bridge.policy(), query, wanted).await;
        let (mut chosen, mut confidences, mut spent) = (Vec::new(), Vec::new(), 0_usize);
        for hit in &outcome.matched {
            let Some(confidence) = hit.confidence.filter(|c| *c >= pre.min_confidence) else {
                continue;
            };
            if chosen.len() == pre.limit || self.promoted.iter().any(|tool| tool.name == hit.name) {
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
            confidences.push(confidence);
            chosen.push(schema);
        }
        let cause = Promotion::UserMessage { ranker: outcome.ranker, confidences, fallback: outcome.fallback };
        self.promote(chosen, cause);
    }

    /// Adds newly promoted declarations to every later request, once each, in order, as one
    /// transcript patch.
    fn promote(&mut self, found: Vec<ToolSchema>, cause: Promotion) {
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
        if let Promotion::UserMessage { confidences, .. } = &cause {
            debug_assert_eq!(confidences.len(), added.len(), "pre-promotion chose only new tools");
        }
        let names = added.iter().map(|tool| tool.name.clone()).collect();
        self.agent.emit(RunEvent::ToolsPromoted { names, cause });
        self.transcript.patches.push(ToolPatch { at_message: self.transcript.messages.len(), added: added.clone() });
        self.promoted.extend(added);
    }
}
