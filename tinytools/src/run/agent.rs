//! [`Agent`]: the loop — call the model, run its tool calls, repeat until it answers.

use std::sync::Arc;

use serde_json::Value;

use super::events::{EventSink, Promotion, RunEvent};
use super::policy::RunPolicy;
use super::transcript::{ToolPatch, Transcript};
use crate::discovery::DiscoveryBridge;
use crate::middleware::{Middleware, ToolGate};
use crate::model::{ChatModel, Message, ModelError, ModelRequest, ToolCall, Usage};
use crate::schema::{EstimatedTokens, TokenCounter, count_tool_schema_tokens};
use crate::surface::{AllowList, Rule, Surface};
use crate::tool::{TOOL_SEARCH, argument_notes, type_signature};
use crate::{CancellationToken, ToolContext, ToolError, ToolExposure, ToolRegistry, ToolResult, ToolSchema};

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
    registry: Arc<ToolRegistry>,
    model: Arc<dyn ChatModel>,
    policy: RunPolicy,
    middleware: Vec<Arc<dyn Middleware>>,
    events: Option<Arc<dyn EventSink>>,
    counter: Arc<dyn TokenCounter>,
    state: Option<Arc<dyn Fn(ToolContext) -> ToolContext + Send + Sync>>,
    rules: Vec<Arc<dyn Rule>>,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The model answered without calling a tool.
    Answered,
    /// `RunPolicy::max_turns` model calls were made.
    TurnLimit,
    /// The run's cancellation token fired.
    Cancelled,
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

struct Run<'a> {
    agent: &'a Agent,
    bridge: DiscoveryBridge,
    transcript: Transcript,
    promoted: Vec<ToolSchema>,
    cancel: CancellationToken,
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

    fn emit(&self, event: RunEvent) {
        tracing::debug!(target: "tinytools::run", ?event);
        if let Some(sink) = &self.events {
            sink.emit(&event);
        }
    }
}

impl Run<'_> {
    async fn turns(mut self, surface: Vec<ToolSchema>, callable_by_name: Vec<String>) -> Result<RunOutcome, RunError> {
        let mut usage = Usage::default();
        let mut answer = String::new();
        for turn in 1..=self.agent.policy.max_turns {
            if self.cancel.is_cancelled() {
                return Ok(self.finish(answer, StopReason::Cancelled, turn - 1, usage));
            }
            let mut request = ModelRequest {
                messages: self.transcript.messages.clone(),
                tools: surface.clone(),
                callable_by_name: callable_by_name.clone(),
            };
            for middleware in &self.agent.middleware {
                middleware.before_model(&mut request).await;
            }
            request.tools.extend(self.promoted.iter().cloned());
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
            let calls = response.tool_calls.clone();
            self.transcript
                .messages
                .push(Message::Assistant { content: response.content, tool_calls: response.tool_calls });
            if calls.is_empty() {
                return Ok(self.finish(answer, StopReason::Answered, turn, usage));
            }
            let answers = futures_util::future::join_all(calls.iter().map(|call| self.call(call))).await;
            let (mut found, mut rejected) = (Vec::new(), Vec::new());
            for (call, answer) in calls.iter().zip(answers) {
                found.extend(answer.searched);
                rejected.extend(answer.rejected);
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

    /// Answers one call.
    async fn call(&self, call: &ToolCall) -> CallAnswer {
        let agent = self.agent;
        let surface = self.bridge.surface();
        let intrinsic_search = call.name == TOOL_SEARCH && self.bridge.is_active();
        let exposure = surface.exposure(&call.name);
        if !intrinsic_search && exposure.is_none() {
            let reason = match surface.refusal(&call.name) {
                Some(refusal) => format!("refused by the run's rules: {refusal}"),
                None => "unknown or hidden".to_owned(),
            };
            agent.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason });
            return CallAnswer::just(self.bridge.unknown_tool(&call.name));
        }
        for middleware in &agent.middleware {
            if let ToolGate::Deny(reason) = middleware.before_tool(call).await {
                agent.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason: reason.clone() });
                return CallAnswer::just(ToolResult::error(reason));
            }
        }
        if intrinsic_search {
            return self.search(call).await;
        }
        if exposure == Some(ToolExposure::Deferred) {
            agent.emit(RunEvent::DeferredToolCall { call_id: call.id.clone(), tool_name: call.name.clone() });
        }
        let admitted = match agent.registry.admit(&call.name, &call.arguments) {
            Ok(admitted) => admitted,
            Err(error) => {
                agent.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason: error.to_string() });
                let mut answer = CallAnswer::just(self.rejection(&call.name, &error));
                if exposure == Some(ToolExposure::Deferred) {
                    answer.rejected.push(call.name.clone());
                }
                return answer;
            }
        };
        agent.emit(RunEvent::ToolStarted { call_id: call.id.clone(), tool_name: call.name.clone() });
        let mut ctx = ToolContext::new(call.id.as_str()).with_cancellation(self.cancel.child_token());
        if let Some(state) = &agent.state {
            ctx = state(ctx);
        }
        let timeout = agent.policy.tool_timeout;
        let outcome = match tokio::time::timeout(timeout, admitted.run(&ctx)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                ctx.cancellation().cancel();
                Err(ToolError::Failed {
                    tool: call.name.clone(),
                    source: anyhow::anyhow!("timed out after {} ms", timeout.as_millis()),
                })
            }
        };
        let mut result = match outcome {
            Ok(result) => {
                agent.emit(RunEvent::ToolCompleted {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    is_error: result.is_error,
                });
                result
            }
            Err(error) => {
                agent.emit(RunEvent::ToolFailed {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    error: format!("{error}"),
                });
                timed_out_note(&error).unwrap_or_else(|| error.to_model_result())
            }
        };
        for middleware in &agent.middleware {
            middleware.after_tool(call, &mut result).await;
        }
        CallAnswer::just(result)
    }

    /// What the model reads when admission refuses a call: every violation, then the tool's
    /// compact signature and argument notes (from the declaration the run sends), so a model
    /// that guessed the arguments without the schema can fix them.
    fn rejection(&self, name: &str, error: &ToolError) -> ToolResult {
        let answer = error.to_model_result();
        let Some(schema) = self.bridge.projected_schema(name) else {
            return answer;
        };
        let mut text = answer.to_model_text();
        text.push_str(&format!("\n`{name}` takes: {}", type_signature(&schema.parameters)));
        let notes = argument_notes(&schema.parameters);
        if !notes.is_empty() {
            text.push('\n');
            text.push_str(&notes);
        }
        ToolResult::error(text)
    }

    async fn search(&self, call: &ToolCall) -> CallAnswer {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let answer = self.bridge.search(&args).await;
        let found: Vec<String> =
            answer.outcome.as_ref().map(|o| o.matched.iter().map(|hit| hit.name.clone()).collect()).unwrap_or_default();
        if let Some(outcome) = answer.outcome {
            self.agent.emit(RunEvent::ToolSearched {
                call_id: call.id.clone(),
                query: answer.query.filter(|_| self.agent.policy.capture.tool_io),
                matched: found.clone(),
                ranker: outcome.ranker,
                top_confidence: outcome.top_confidence,
                fallback: outcome.fallback,
                shadow_matched: outcome.shadow_matched,
                latency_ms: outcome.latency_ms,
            });
        }
        CallAnswer { result: answer.result, searched: found, rejected: Vec::new() }
    }
}

/// One call's answer, and the deferred tools it makes the loop promote.
struct CallAnswer {
    result: ToolResult,
    /// Found by `tool_search`.
    searched: Vec<String>,
    /// Deferred tools called by name whose arguments admission refused.
    rejected: Vec<String>,
}

impl CallAnswer {
    fn just(result: ToolResult) -> Self {
        Self { result, searched: Vec::new(), rejected: Vec::new() }
    }
}

/// A timeout reads better to the model than a generic failure: it may retry with less work.
fn timed_out_note(error: &ToolError) -> Option<ToolResult> {
    match error {
        ToolError::Failed { tool, source } if source.to_string().starts_with("timed out") => {
            Some(ToolResult::error(format!("Tool `{tool}` did not finish in time ({source}).")))
        }
        _ => None,
    }
}
