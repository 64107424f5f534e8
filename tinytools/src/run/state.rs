//! [`Run`]: one run in progress — what every step of the loop reads and writes — and how it
//! promotes deferred tools.

use std::collections::BTreeMap;
use std::sync::Arc;

use tracing::Span;

use super::events::{EventSink, Promotion, RunEvent};
use super::grounding::{Gate, Grounds};
use super::instructions::Instructions;
use super::limits::Spent;
use super::outcome::{RunOutcome, StopReason};
use super::output::OutputSpec;
use super::policy::RunPolicy;
use super::spans;
use super::stream::RunStreamItem;
use super::transcript::{ToolPatch, Transcript};
use super::view::RunView;
use crate::discovery::{Candidate, DiscoveryBridge, RankOutcome};
use crate::middleware::Middleware;
use crate::model::{ChatModel, Message, ProviderSearch, Usage};
use crate::pump::Outlet;
use crate::schema::TokenCounter;
use crate::{CancellationToken, ToolContext, ToolRegistry, ToolSchema};

/// Host state added to every tool call's context.
pub(super) type ToolState = dyn Fn(ToolContext) -> ToolContext + Send + Sync;

/// What a run borrows from its agent.
pub(super) struct Setup<'a> {
    pub(super) registry: &'a Arc<ToolRegistry>,
    pub(super) model: &'a dyn ChatModel,
    pub(super) policy: &'a RunPolicy,
    pub(super) middleware: &'a [Arc<dyn Middleware>],
    pub(super) events: Option<&'a dyn EventSink>,
    pub(super) counter: &'a dyn TokenCounter,
    pub(super) state: Option<&'a ToolState>,
    /// Where a streamed run's items go ([`Agent::stream`](super::Agent::stream)); `None`
    /// for [`Agent::run`](super::Agent::run).
    pub(super) tap: Option<&'a Outlet<RunStreamItem>>,
    /// The host's instructions, sent first on every request.
    pub(super) instructions: Option<&'a Instructions>,
    /// A typed run's output.
    pub(super) output: Option<&'a OutputSpec>,
    /// The agent's name, for telemetry.
    pub(super) name: Option<&'a str>,
}

/// One run in progress.
pub(super) struct Run<'a> {
    pub(super) setup: Setup<'a>,
    pub(super) bridge: DiscoveryBridge,
    pub(super) transcript: Transcript,
    pub(super) promoted: Vec<ToolSchema>,
    pub(super) cancel: CancellationToken,
    /// The user message pre-promotion ranked, until its follow-up promotion has run.
    follow_up: Option<String>,
    /// What a grounded argument's value may be copied from.
    pub(super) grounds: Grounds,
    /// The names the model could call in the latest request (declared or by name).
    pub(super) offered: Vec<String>,
    /// The compact candidates `tool_search`'s description offers for the user message
    /// (pre-promotion's ranking, when the manifest has degraded).
    pub(super) candidates: Vec<Candidate>,
    /// Feedback messages sent so far, by aid.
    pub(super) feedback: BTreeMap<&'static str, usize>,
    /// The model calls made so far.
    pub(super) turn: usize,
    /// What the run spent before its first turn (the search-keyword request).
    pub(super) spent: Spent,
    /// The run's span (`invoke_agent`).
    pub(super) span: Span,
}

impl<'a> Run<'a> {
    pub(super) fn new(
        setup: Setup<'a>,
        bridge: DiscoveryBridge,
        transcript: Transcript,
        cancel: CancellationToken,
    ) -> Self {
        // In provider-native mode nothing is promoted, even what a bridge-mode run did promote.
        let promoted = match bridge.native() {
            Some(_) => Vec::new(),
            None => transcript.promoted().filter_map(|name| bridge.prepared_schema(name)).collect(),
        };
        let span = spans::run(setup.model, setup.name);
        Self {
            setup,
            bridge,
            transcript,
            promoted,
            cancel,
            follow_up: None,
            grounds: Grounds::default(),
            offered: Vec::new(),
            candidates: Vec::new(),
            feedback: BTreeMap::new(),
            turn: 0,
            spent: Spent::default(),
            span,
        }
    }
}

impl Run<'_> {
    /// Reads the conversation's grounds, reports the advertised surface, and runs query-aware
    /// discovery on the latest user message.
    pub(super) async fn start(&mut self) {
        self.grounds = Grounds::of(&self.transcript.messages);
        let mut wire = self.bridge.advertised(self.setup.counter);
        let direct = wire.len() - usize::from(self.bridge.answers_search());
        let native = self.bridge.native_deferral();
        wire.extend(native.iter().flat_map(|native| native.tools.iter().map(|tool| tool.schema.clone())));
        let schema_bytes = serde_json::to_string(&wire).map_or(0, |text| text.len());
        let deferred = if self.bridge.is_active() { self.bridge.catalog().len() } else { 0 };
        spans::advertised(&self.span, direct, deferred);
        self.emit(RunEvent::ToolsAdvertised { direct, deferred, schema_bytes, native: native.is_some() });
        self.pre_promote().await;
    }

    pub(super) fn emit(&self, event: RunEvent) {
        tracing::debug!(target: "tinytools::run", ?event);
        if let Some(sink) = self.setup.events {
            sink.emit(&event);
        }
        if let Some(tap) = self.setup.tap {
            tap.push(RunStreamItem::Event(event));
        }
    }

    pub(super) fn policy(&self) -> &RunPolicy {
        self.setup.policy
    }

    /// The user's request: the conversation's last user message.
    pub(super) fn request(&self) -> Option<&str> {
        self.transcript.messages.iter().rev().find_map(|message| match message {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        })
    }

    /// What an aid sees of the run now.
    pub(super) fn view(&self) -> RunView<'_> {
        RunView {
            messages: &self.transcript.messages,
            request: self.request(),
            turn: self.turn,
            max_turns: self.policy().max_turns,
            offered: &self.offered,
            registry: self.setup.registry,
            bridge: &self.bridge,
            promoted: &self.promoted,
            counter: self.setup.counter,
            feedback: &self.feedback,
        }
    }

    /// What the grounding gate reads besides the grounds.
    pub(super) fn gate(&self) -> Gate<'_> {
        Gate { registry: self.setup.registry, surface: self.bridge.surface(), discovery: self.bridge.answers_search() }
    }

    /// Keeps the searches the provider ran before its answer in the conversation (just before
    /// the answer's turn, for the next request to hand back), each reported as a
    /// `ToolSearched` event whose `ranker` names the provider. Only tools of the catalogue
    /// count as matched.
    pub(super) fn record_searches(&mut self, searches: Vec<ProviderSearch>) {
        for search in searches {
            let matched =
                search.found.iter().filter(|name| self.bridge.catalog().get(name).is_some()).cloned().collect();
            self.emit(RunEvent::ToolSearched {
                call_id: search.id.clone().unwrap_or_default(),
                query: Some(search.query.clone()).filter(|_| self.policy().capture.tool_io),
                matched,
                ranker: search.ranker.clone(),
                top_confidence: None,
                fallback: None,
                shadow_matched: None,
                latency_ms: 0.0,
            });
            self.transcript.messages.push(Message::ProviderSearch(search));
        }
    }

    /// The deferred tools the model may call by name this run (only while discovery is on).
    pub(super) fn callable_by_name(&self) -> Vec<String> {
        if !self.bridge.is_active() {
            return Vec::new();
        }
        self.bridge.catalog().iter().map(|tool| tool.schema().name.clone()).collect()
    }

    pub(super) fn finish(self, answer: String, stop: StopReason, usage: Usage) -> RunOutcome {
        RunOutcome { answer, stop, transcript: self.transcript, turns: self.turn, usage, output: None }
    }

    /// Query-aware discovery: when the conversation ends with a user message, ranks it against
    /// the catalogue and promotes the hits that pass the floor and fit the token budget.
    async fn pre_promote(&mut self) {
        let pre = self.policy().discovery.pre_promotion;
        if !pre.enabled || pre.limit == 0 || !self.bridge.is_active() || self.bridge.native().is_some() {
            return;
        }
        let Some(Message::User { content }) = self.transcript.messages.last() else {
            return;
        };
        let query = content.trim().to_owned();
        if query.is_empty() {
            return;
        }
        let promotable = pre.limit.saturating_add(self.promoted.len());
        let (query, outcome) = self.pre_promotion_ranking(query, promotable.saturating_add(pre.candidates())).await;
        // Promotion reads the hits it always read; the candidates come from the rest.
        let mut head = outcome.clone();
        head.matched.truncate(promotable);
        let chosen = self.new_hits(&head, pre.limit);
        let (chosen, confidences): (Vec<ToolSchema>, Vec<f32>) = chosen.into_iter().unzip();
        let promoted = |name: &str| self.promoted.iter().chain(&chosen).any(|tool| tool.name == name);
        self.candidates = self.bridge.first_request_candidates(&outcome, pre, self.setup.counter, promoted);
        let cause = Promotion::UserMessage { ranker: outcome.ranker, confidences, fallback: outcome.fallback };
        self.promote(chosen, cause);
        if pre.after_tool_result > 0 {
            self.follow_up = Some(query);
        }
    }

    /// What pre-promotion loads of `outcome`, at most `limit`, passing over tools promoted
    /// already ([`DiscoveryBridge::promotable`]).
    fn new_hits(&self, outcome: &RankOutcome, limit: usize) -> Vec<(ToolSchema, f32)> {
        let promoted = |name: &str| self.promoted.iter().any(|tool| tool.name == name);
        self.bridge.promotable(outcome, limit, self.setup.counter, promoted)
    }

    /// The follow-up of query-aware discovery, once a tool has answered the user message:
    /// the same message ranked again, its next hits promoted (at most `after_tool_result`,
    /// under the same floor and budget). Runs once per message.
    pub(super) async fn promote_after_tool_result(&mut self) {
        let Some(query) = self.follow_up.take() else {
            return;
        };
        let pre = self.policy().discovery.pre_promotion;
        let wanted = pre.after_tool_result.saturating_add(self.promoted.len());
        let outcome = self.bridge.catalog().rank(self.bridge.policy(), &query, wanted).await;
        let limit = pre.after_tool_result;
        let chosen = self.new_hits(&outcome, limit);
        let (chosen, confidences) = chosen.into_iter().unzip();
        let cause = Promotion::AfterToolResult { ranker: outcome.ranker, confidences, fallback: outcome.fallback };
        self.promote(chosen, cause);
    }

    /// [`Run::promote`] for tools named by a call's answer or an aid: each name the bridge can
    /// prepare (a Deferred tool on the run's surface) is promoted; any other name is passed over.
    pub(super) fn promote_names(&mut self, names: Vec<String>, cause: Promotion) {
        let found = names.iter().filter_map(|name| self.bridge.prepared_schema(name)).collect();
        self.promote(found, cause);
    }

    /// Adds newly promoted declarations to every later request, once each, in order, as one
    /// transcript patch. In provider-native mode nothing is promoted: the provider loads what
    /// its searches find, and the tools array never changes.
    pub(super) fn promote(&mut self, found: Vec<ToolSchema>, cause: Promotion) {
        if self.bridge.native().is_some() {
            return;
        }
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
        let names = added.iter().map(|tool| tool.name.clone()).collect();
        self.emit(RunEvent::ToolsPromoted { names, cause });
        self.transcript.patches.push(ToolPatch { at_message: self.transcript.messages.len(), added: added.clone() });
        self.promoted.extend(added);
    }
}
