//! [`Agent`]: the loop — call the model, run its tool calls, repeat until it answers.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::aids::{Aid, Aids};
use super::error::RunError;
use super::error::RunFailure;
use super::events::EventSink;
use super::instructions::Instructions;
use super::outcome::RunOutcome;
use super::output::{self, OutputSpec, Typed, TypedRunStream};
use super::policy::RunPolicy;
use super::state::{Run, Setup, ToolState};
use super::stream::{RunStream, RunStreamItem};
use super::transcript::Transcript;
use crate::discovery::DiscoveryBridge;
use crate::middleware::Middleware;
use crate::model::{ChatModel, Message, NativeSearch, OutputSchema, Usage};
use crate::pump::{Outlet, Pump};
use crate::schema::{EstimatedTokens, TokenCounter};
use crate::surface::{AllowList, Rule, Surface};
use crate::{CancellationToken, ToolContext, ToolRegistry};

/// Runs conversations against a model with a registry's tools.
///
/// At its start a run evaluates its rules (the host allow-list, every middleware's
/// [`rule`](Middleware::rule), the agent's own [`with_rule`](Self::with_rule)) into one
/// [`Surface`]: what exists for this run. Before the first model call, query-aware discovery
/// ([`PrePromotion`](crate::discovery::PrePromotion)) promotes the deferred tools that best
/// match the new user message (ranked locally: the default run makes exactly one model
/// request per turn; [`for_small_model`](Self::for_small_model) adds a keyword request).
/// Each turn sends the Direct tools (and `tool_search` when
/// anything is deferred), then every promoted tool, in the order promoted; runs the model's
/// tool calls concurrently, keeping their results in call order; and stops when the model
/// answers without calling a tool (**a reply without calls is the answer**), the turn limit is
/// reached, or the run is cancelled. A deferred tool is called by its own name — there is no
/// wrapper — so every gate sees the real name and arguments. Unknown, Hidden and refused names
/// get the unknown-tool answer; arguments admission refuses get every violation and the tool's
/// compact signature (and a deferred tool called that way is promoted); a tool that fails,
/// panics or times out gets an error result; the run goes on. An identical call runs again
/// each time it is made.
///
/// [Aids](super::aids) may correct the model's turns, each named and opt-in: the default,
/// [`Aids::standard`], only ends a run whose model gets the same result for the same call
/// three times in a row. Whatever the aids, a tool with side effects runs only from a call
/// the model emitted as a call, and the run's own words reach the model as
/// [`Message::Feedback`], never as the user's.
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
    state: Option<Arc<ToolState>>,
    rules: Vec<Arc<dyn Rule>>,
    instructions: Option<Instructions>,
    name: Option<String>,
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
            instructions: None,
            name: None,
        }
    }

    /// The same agent over `registry` (the builder's tools, once registered).
    pub(super) fn with_registry(mut self, registry: Arc<ToolRegistry>) -> Self {
        self.registry = registry;
        self
    }

    /// Names the agent, for telemetry: its runs' spans are `invoke_agent {name}` with
    /// `gen_ai.agent.name` (`docs/tracing.md`).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the host's [`Instructions`] (a system prompt), sent first on every request of
    /// every run, never kept in a transcript.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<Instructions>) -> Self {
        self.instructions = Some(instructions.into());
        self
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

    /// Runs with [`RunPolicy::small_model`], the profile for small local models: its aids and
    /// a search-keyword request before each user message is ranked. Replaces the policy set
    /// so far; later `with_*` calls refine it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tinytools::ToolRegistry;
    /// use tinytools::run::Agent;
    /// use tinytools::testkit::ScriptedModel;
    ///
    /// let agent = Agent::new(Arc::new(ToolRegistry::new()), Arc::new(ScriptedModel::new([]))).for_small_model();
    /// assert!(agent.policy().discovery.pre_promotion.model_keywords);
    /// ```
    #[must_use]
    pub fn for_small_model(self) -> Self {
        self.with_policy(RunPolicy::small_model())
    }

    /// The run policy.
    pub fn policy(&self) -> &RunPolicy {
        &self.policy
    }

    /// Sets the [aids](super::aids) (default [`Aids::standard`]): `Aids::none()` for the core
    /// alone, `Aids::small_model()` for the aids kept for small local models.
    #[must_use]
    pub fn with_aids(mut self, aids: Aids) -> Self {
        self.policy.aids = aids;
        self
    }

    /// Adds one aid after those the policy has.
    #[must_use]
    pub fn with_aid(mut self, aid: impl Aid + 'static) -> Self {
        self.policy.aids = std::mem::take(&mut self.policy.aids).with(aid);
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
        self.drive(Transcript { messages, patches: Vec::new() }, cancel, true, None, None).await
    }

    /// [`run`](Self::run) for an answer of type `T`: the model's final answer must be a JSON
    /// value that matches `T`'s schema (schemars). A provider with native structured output
    /// ([`ModelProfile::structured_output`](crate::model::ModelProfile::structured_output))
    /// is sent the schema in its own field; any other model is asked for it in words. An
    /// answer that misses gets one [feedback](Message::Feedback) turn listing what was wrong,
    /// up to [`RunPolicy::output_retries`] times (each counted against the turn and usage
    /// limits), then the run ends with [`RunFailure::Output`], which keeps the last answer.
    /// Tools, deferral and the aids work as in any run.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tinytools::model::{Message, ModelResponse};
    /// use tinytools::run::{Agent, RunEvent};
    /// use tinytools::testkit::ScriptedModel;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    /// struct Contact {
    ///     /// Full name.
    ///     name: String,
    ///     /// Age in years.
    ///     age: u32,
    /// }
    ///
    /// let model = Arc::new(ScriptedModel::new([
    ///     ModelResponse::text(r#"{"name": "Ada Lovelace", "age": "thirty-six"}"#),
    ///     ModelResponse::text(r#"{"name": "Ada Lovelace", "age": 36}"#),
    /// ]));
    /// let agent = Agent::builder(model.clone()).instructions("Extract the contact.").build()?;
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let typed = agent.run_typed::<Contact>(vec![Message::user("Ada Lovelace, 36, mathematician")]).await?;
    /// assert_eq!(typed.output, Contact { name: "Ada Lovelace".into(), age: 36 });
    /// assert_eq!(typed.outcome.turns, 2); // the first answer missed and was sent back
    /// # Ok::<(), tinytools::run::RunError>(())
    /// # }).unwrap();
    /// # Ok::<(), tinytools::RegistryError>(())
    /// ```
    ///
    /// # Errors
    /// As [`run`](Self::run); and [`RunFailure::OutputSchema`] before any request when `T`
    /// cannot be asked for (not an object at its root, or recursive),
    /// [`RunFailure::Output`] when no answer matched.
    pub async fn run_typed<T: DeserializeOwned + JsonSchema>(
        &self,
        messages: Vec<Message>,
    ) -> Result<Typed<T>, RunError> {
        let transcript = Transcript { messages, patches: Vec::new() };
        let spec = match self.output_spec::<T>() {
            Ok(spec) => spec,
            Err(source) => return Err(RunError { source, transcript, turns: 0, usage: Usage::default() }),
        };
        let result = self.drive(transcript, CancellationToken::new(), true, None, Some(&spec)).await;
        output::typed(result, &spec.schema.name)
    }

    /// [`run_typed`](Self::run_typed) as a stream: the items of [`stream`](Self::stream) (the
    /// answer's JSON text as it is written), then [`TypedRunStream::finish`] gives the answer
    /// as `T`.
    pub fn stream_typed<T: DeserializeOwned + JsonSchema>(&self, messages: Vec<Message>) -> TypedRunStream<'_, T> {
        let spec = self.output_spec::<T>();
        let name = spec.as_ref().map_or_else(|_| String::new(), |spec| spec.schema.name.clone());
        let transcript = Transcript { messages, patches: Vec::new() };
        let cancel = CancellationToken::new();
        let pump = Pump::new(move |tap| async move {
            match spec {
                Ok(spec) => self.drive(transcript, cancel, true, Some(&tap), Some(&spec)).await,
                Err(source) => Err(RunError { source, transcript, turns: 0, usage: Usage::default() }),
            }
        });
        TypedRunStream::new(RunStream::new(pump), name)
    }

    /// `T`'s output schema, checked, for this agent's model.
    fn output_spec<T: JsonSchema>(&self) -> Result<OutputSpec, RunFailure> {
        let schema = OutputSchema::of::<T>()?;
        Ok(OutputSpec::new(schema, self.model.profile().structured_output)?)
    }

    /// [`run`](Self::run) as a stream: the model's text as it is written (each model call
    /// [streamed](ChatModel::stream)), the calls it begins, and every [`RunEvent`] in order
    /// (the installed event sink still receives them too); then
    /// [`RunStream::finish`] gives the same outcome `run` returns. One loop serves both.
    /// See [`RunStream`] for an example.
    ///
    /// [`RunEvent`]: super::RunEvent
    pub fn stream(&self, messages: Vec<Message>) -> RunStream<'_> {
        self.stream_until_cancelled(messages, CancellationToken::new())
    }

    /// [`stream`](Self::stream), stopping promptly once `cancel` fires, as
    /// [`run_until_cancelled`](Self::run_until_cancelled) does: the model's stream in flight is
    /// dropped (its connection closed) and the outcome's stop reason is `Cancelled`.
    pub fn stream_until_cancelled(&self, messages: Vec<Message>, cancel: CancellationToken) -> RunStream<'_> {
        let transcript = Transcript { messages, patches: Vec::new() };
        RunStream::new(Pump::new(
            move |tap| async move { self.drive(transcript, cancel, true, Some(&tap), None).await },
        ))
    }

    /// Continues a run from its transcript. Promoted tools come back only if the current rules
    /// still admit them (and they are still deferred and searchable). When the transcript ends
    /// with a user message, query-aware discovery ranks it first, as at a run's start.
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub async fn resume(&self, transcript: Transcript) -> Result<RunOutcome, RunError> {
        self.drive(transcript, CancellationToken::new(), false, None, None).await
    }

    /// [`resume`](Self::resume) as a stream, as [`stream`](Self::stream) is to
    /// [`run`](Self::run): the model's text as it is written and every [`RunEvent`] in order,
    /// then [`RunStream::finish`] gives the same outcome `resume` returns. One loop serves all
    /// four.
    ///
    /// [`RunEvent`]: super::RunEvent
    pub fn resume_stream(&self, transcript: Transcript) -> RunStream<'_> {
        let cancel = CancellationToken::new();
        RunStream::new(Pump::new(
            move |tap| async move { self.drive(transcript, cancel, false, Some(&tap), None).await },
        ))
    }

    /// Who searches natively deferred tools this run: the policy's provider-native mode, when
    /// the model can defer natively; `None` (the bridge) otherwise.
    fn native_search(&self) -> Option<NativeSearch> {
        let asked = self.policy.discovery.mode.native_search()?;
        if self.model.profile().native_deferral {
            return Some(asked);
        }
        tracing::warn!(
            target: "tinytools::run",
            "DiscoveryMode::ProviderNative asked, but the model cannot defer tools natively (its profile's native_deferral is false): the run uses the tool_search bridge"
        );
        None
    }

    /// The one loop of [`run`](Self::run), [`resume`](Self::resume), [`stream`](Self::stream)
    /// and [`resume_stream`](Self::resume_stream): `tap` receives a streamed run's items.
    async fn drive(
        &self,
        transcript: Transcript,
        cancel: CancellationToken,
        fresh: bool,
        tap: Option<&Outlet<RunStreamItem>>,
        output: Option<&OutputSpec>,
    ) -> Result<RunOutcome, RunError> {
        let setup = Setup {
            registry: &self.registry,
            model: self.model.as_ref(),
            policy: &self.policy,
            middleware: &self.middleware,
            events: self.events.as_deref(),
            counter: self.counter.as_ref(),
            state: self.state.as_deref(),
            tap,
            instructions: self.instructions.as_ref(),
            output,
            name: self.name.as_deref(),
        };
        let bridge = DiscoveryBridge::over(self.surface(), self.policy.discovery.clone())
            .with_preparation(self.policy.tool_schemas)
            .with_native(self.native_search());
        let mut run = Run::new(setup, bridge, transcript, cancel);
        if fresh {
            for middleware in &self.middleware {
                middleware.before_agent(&mut run.transcript.messages).await;
            }
        }
        run.run_to_end().await
    }
}
