//! [`RunEvent`]: what a run reports to the host, as it happens.

use serde::Serialize;

use crate::model::Usage;

/// One thing that happened in a run. Delivered to the host's [`EventSink`] and emitted as a
/// `tracing` event (target `tinytools::run`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEvent {
    /// Once per run, after `before_agent`: the registry-derived tool surface before any
    /// `before_model` narrowing — a ceiling, not a per-request measure.
    ToolsAdvertised {
        /// Direct tools (the bridge is not counted here).
        direct: usize,
        /// Deferred tools behind the bridge, or handed to the provider's own deferral.
        deferred: usize,
        /// Compact JSON bytes of the wire set as the run hands it over: Direct schemas plus
        /// the bridge; in provider-native mode also every deferred declaration (sent flagged
        /// as deferred; the provider's own search tool entry is not counted).
        schema_bytes: usize,
        /// Whether the deferred tools went to the provider's own deferral
        /// (`DiscoveryMode::ProviderNative` with a model that can); `false`: the bridge.
        native: bool,
    },
    /// A model call finished.
    ModelCalled {
        /// Which call of the run (1-based).
        turn: usize,
        /// Tools sent with it.
        tools: usize,
        /// Usage, when the provider reported it.
        usage: Option<Usage>,
    },
    /// The run's model wrote search keywords for a user message before query-aware discovery
    /// ranked it ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords)).
    /// One request of the run, not a turn of the conversation.
    KeywordsWritten {
        /// The keywords ranked with the message (only under `capture.tool_io`; empty when the
        /// model wrote none).
        keywords: Option<String>,
        /// Usage, when the provider reported it.
        usage: Option<Usage>,
        /// Why the request failed (the message was ranked as it is).
        error: Option<String>,
    },
    /// A `tool_search` call was answered, or (provider-native mode) the provider reported a
    /// search it ran itself: then `ranker` names the provider (`anthropic:tool_search_tool_bm25`,
    /// `openai:tool_search`), `call_id` is the provider's id for the search (empty when it gives
    /// none), and confidence and latency are unknown (`None`, `0.0`).
    ToolSearched {
        /// The call.
        call_id: String,
        /// The query (only under `capture.tool_io`).
        query: Option<String>,
        /// What was returned, best first.
        matched: Vec<String>,
        /// Which ranking answered.
        ranker: String,
        /// The first match's confidence.
        top_confidence: Option<f32>,
        /// Why a host ranker was not served.
        fallback: Option<String>,
        /// BM25's ranking, in compare mode.
        shadow_matched: Option<Vec<String>>,
        /// Ranking time.
        latency_ms: f64,
    },
    /// Deferred tools gained typed declarations for the following requests (recorded as a
    /// transcript patch, restored on resume).
    ToolsPromoted {
        /// The newly promoted tools.
        names: Vec<String>,
        /// What promoted them.
        cause: Promotion,
    },
    /// A deferred tool was called by its own name (after every `before_tool` gate let it
    /// through, before admission).
    DeferredToolCall {
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments that run, as the gates saw them (only under `capture.tool_io`).
        arguments: Option<String>,
    },
    /// Something other than the model changed a call's arguments before any gate saw it: an
    /// [aid](super::aids)'s [`RunWith`](super::aids::CallAction::RunWith), or strict mode
    /// dropping the `null`s of omitted optional properties. From here on every gate, event and
    /// the tool see `after`.
    ArgumentsAdjusted {
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// Who changed them: the aid's name, or `"strict_schema"`.
        by: String,
        /// The arguments before (only under `capture.tool_io`).
        before: Option<String>,
        /// The arguments after (only under `capture.tool_io`).
        after: Option<String>,
    },
    /// An admitted call is about to run. Exactly one `ToolCompleted` or `ToolFailed` follows.
    ToolStarted {
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments it runs on, exactly as every gate saw them (only under
        /// `capture.tool_io`).
        arguments: Option<String>,
    },
    /// A call returned a result (`is_error` when the tool refused).
    ToolCompleted {
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// Whether the tool ran and refused.
        is_error: bool,
    },
    /// A call failed: the tool errored, panicked or timed out.
    ToolFailed {
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// What went wrong (for the host; the model reads a short note).
        error: String,
    },
    /// An [aid](super::aids) acted on the model's turn.
    AidActed {
        /// The aid's [name](super::aids::Aid::name).
        aid: String,
        /// What it did.
        action: AidAction,
    },
    /// The conversation did not fit the model's window (the provider said so, or
    /// `RunPolicy::context_window` did): it was shrunk before the request was sent again.
    ContextShrunk {
        /// Tool results replaced by a note of their size.
        compacted_results: usize,
        /// Messages dropped, oldest turns first.
        dropped_messages: usize,
        /// The run's estimate of the request before.
        estimated_tokens_before: usize,
        /// And after.
        estimated_tokens_after: usize,
    },
    /// A call was answered without running: unknown name, bad arguments, or a gate said no.
    ToolRejected {
        /// The call.
        call_id: String,
        /// Why.
        reason: String,
    },
    /// A typed run's answer did not match its output schema: the run told the model what was
    /// wrong (a [feedback](crate::model::Message::Feedback) message) and asks again.
    OutputRejected {
        /// The model call whose answer it was (1-based).
        turn: usize,
        /// What was wrong, one line each.
        errors: Vec<String>,
    },
}

/// What promoted deferred tools into a run's tools array.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Promotion {
    /// The model's `tool_search` calls of the turn found them.
    Searched,
    /// Query-aware discovery ranked a new user message and they passed the
    /// [`PrePromotion`](crate::discovery::PrePromotion) floor and budget.
    UserMessage {
        /// Which ranking answered (`"bm25"` or the host ranker's name).
        ranker: String,
        /// Each promoted tool's confidence, in the order of `names`.
        confidences: Vec<f32>,
        /// Why a host ranker was not served, when it was not.
        fallback: Option<String>,
    },
    /// A tool answered the user message and the message's next hits passed the floor and
    /// budget ([`PrePromotion::after_tool_result`](crate::discovery::PrePromotion::after_tool_result)).
    AfterToolResult {
        /// Which ranking answered (`"bm25"` or the host ranker's name).
        ranker: String,
        /// Each promoted tool's confidence, in the order of `names`.
        confidences: Vec<f32>,
        /// Why a host ranker was not served, when it was not.
        fallback: Option<String>,
    },
    /// The model called the deferred tool by name without its declaration and admission
    /// refused the arguments: the declaration now comes with every request.
    RejectedCall,
    /// The model called a name it may not call; ranking that name and its arguments against
    /// the catalogue found these, and the unknown-tool answer named them.
    UnknownName,
    /// The model called a tool with an invented value for a [grounded](crate::Grounding)
    /// argument; these are the tools that value must come from, and the refusal named them.
    GroundingSource,
    /// An [aid](super::aids)'s feedback or answer promoted them.
    Aid {
        /// The aid's name.
        aid: String,
    },
}

/// What an [aid](super::aids) did ([`RunEvent::AidActed`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AidAction {
    /// It sent the model a [feedback](crate::model::Message::Feedback) message.
    Feedback {
        /// Whether the next turn offers no tools.
        without_tools: bool,
        /// Whether that turn's reply ends the run.
        final_answer: bool,
    },
    /// It took a call for the model's reply.
    TookCall {
        /// The id the run gave the call.
        call_id: String,
        /// The tool.
        tool_name: String,
    },
    /// It answered a call without running it.
    AnsweredCall {
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
    },
    /// It ran a call on adjusted arguments.
    AdjustedCall {
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
    },
}

/// Receives a run's events.
pub trait EventSink: Send + Sync {
    /// Called for each event, in order.
    fn emit(&self, event: &RunEvent);
}

impl<F: Fn(&RunEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: &RunEvent) {
        self(event);
    }
}
