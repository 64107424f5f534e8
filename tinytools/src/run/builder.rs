//! [`AgentBuilder`]: a model, its instructions, tools, policy, middleware and events, then
//! [`build`](AgentBuilder::build).

use std::fmt;
use std::sync::Arc;

use super::agent::Agent;
use super::aids::Aids;
use super::events::EventSink;
use super::instructions::Instructions;
use super::policy::RunPolicy;
use crate::middleware::Middleware;
use crate::model::ChatModel;
use crate::surface::Rule;
use crate::tool::ToolGroup;
use crate::{RegistryError, Tool, ToolContext, ToolRegistry};

/// One registration, kept until [`AgentBuilder::build`] so that every mistake is reported
/// there, in order.
type Registration = Box<dyn FnOnce(&mut ToolRegistry) -> Result<(), RegistryError> + Send>;

/// Builds an [`Agent`] ([`Agent::builder`]): the model, then anything else in any order.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tinytools::model::{Message, ModelResponse};
/// use tinytools::run::{Agent, RunEvent};
/// use tinytools::testkit::ScriptedModel;
/// use tinytools::tool;
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool(exposure = "deferred", family = "finance")]
/// async fn stock_quote(/** Ticker symbol. */ symbol: String) -> String { format!("{symbol} 12.50") }
///
/// let model = Arc::new(ScriptedModel::new([
///     ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "ACME"}))]),
///     ModelResponse::text("ACME trades at 12.50."),
/// ]));
/// let agent = Agent::builder(model.clone())
///     .instructions("You answer questions about stocks in one sentence.")
///     .tool(StockQuote)
///     .on_event(|event: &RunEvent| tracing::debug!(?event))
///     .build()?;
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let outcome = agent.run(vec![Message::user("What is ACME trading at?")]).await?;
/// assert_eq!(outcome.answer, "ACME trades at 12.50.");
/// let first = &model.requests()[0];
/// assert_eq!(first.messages[0], Message::system("You answer questions about stocks in one sentence."));
/// # Ok::<(), tinytools::run::RunError>(())
/// # }).unwrap();
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
#[must_use = "an agent builder does nothing until `build` is called"]
pub struct AgentBuilder {
    /// Everything but the tools, set through the agent's own `with_*`.
    agent: Agent,
    registry: ToolRegistry,
    registrations: Vec<Registration>,
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("tools", &(self.registry.len() + self.registrations.len()))
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// The one obvious way to make an agent: a model, then its instructions, tools, policy,
    /// middleware and events, then [`build`](AgentBuilder::build). See [`AgentBuilder`].
    pub fn builder(model: impl ChatModel + 'static) -> AgentBuilder {
        let agent = Agent::new(Arc::new(ToolRegistry::new()), Arc::new(model));
        AgentBuilder { agent, registry: ToolRegistry::new(), registrations: Vec::new() }
    }
}

impl AgentBuilder {
    /// The host's instructions: text, or [`Instructions::dynamic`]. Sent first on every
    /// request of every run (streamed, typed and resumed ones too); never a message the
    /// caller manages.
    pub fn instructions(mut self, instructions: impl Into<Instructions>) -> Self {
        self.agent = self.agent.with_instructions(instructions);
        self
    }

    /// Names the agent, for telemetry (see [`Agent::with_name`]).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.agent = self.agent.with_name(name);
        self
    }

    /// Adds a tool (a `#[tool]` fn's struct, or any [`Tool`]), with its declared exposure.
    pub fn tool(mut self, tool: impl Tool + 'static) -> Self {
        self.registrations.push(Box::new(move |registry| registry.register(tool).map(drop)));
        self
    }

    /// Adds a `#[tools]` group: all its tools, or none.
    pub fn group<G: ToolGroup>(mut self, group: G) -> Self {
        self.registrations.push(Box::new(move |registry| registry.register_group(group).map(drop)));
        self
    }

    /// Starts from an existing registry (its tools and state); tools added with
    /// [`tool`](Self::tool) and [`group`](Self::group) join it.
    pub fn registry(mut self, registry: ToolRegistry) -> Self {
        self.registry = registry;
        self
    }

    /// Adds state every tool can read ([`State<T>`](crate::State)).
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.registry.insert_state(value);
        self
    }

    /// Sets the run policy (default [`RunPolicy::default`]: for a strong hosted model).
    pub fn policy(mut self, policy: RunPolicy) -> Self {
        self.agent = self.agent.with_policy(policy);
        self
    }

    /// Uses [`RunPolicy::small_model`], the profile for small local models. Replaces the
    /// policy set so far.
    pub fn for_small_model(mut self) -> Self {
        self.agent = self.agent.for_small_model();
        self
    }

    /// Sets the [aids](super::aids).
    pub fn aids(mut self, aids: Aids) -> Self {
        self.agent = self.agent.with_aids(aids);
        self
    }

    /// Adds a middleware; they run in the order added.
    pub fn middleware(self, middleware: impl Middleware + 'static) -> Self {
        self.shared_middleware(Arc::new(middleware))
    }

    /// Adds a middleware the host also keeps a handle on.
    pub fn shared_middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.agent = self.agent.with_middleware(middleware);
        self
    }

    /// Sends every [`RunEvent`](super::RunEvent) to `sink` (a closure, or any [`EventSink`]).
    pub fn on_event(mut self, sink: impl EventSink + 'static) -> Self {
        self.agent = self.agent.with_events(Arc::new(sink));
        self
    }

    /// Adds a narrowing rule (see [`Agent::with_rule`]).
    pub fn rule(mut self, rule: impl Rule + 'static) -> Self {
        self.agent = self.agent.with_rule(Arc::new(rule));
        self
    }

    /// Adds host state to every tool call's [`ToolContext`] (see [`Agent::with_tool_state`]).
    pub fn tool_state(mut self, state: impl Fn(ToolContext) -> ToolContext + Send + Sync + 'static) -> Self {
        self.agent = self.agent.with_tool_state(state);
        self
    }

    /// The agent.
    ///
    /// # Errors
    /// The first [`RegistryError`] of the tools added (a name taken twice, a bad name, an
    /// invalid schema, a tool's state missing), in the order they were added.
    pub fn build(self) -> Result<Agent, RegistryError> {
        let mut registry = self.registry;
        for register in self.registrations {
            register(&mut registry)?;
        }
        Ok(self.agent.with_registry(Arc::new(registry)))
    }
}
