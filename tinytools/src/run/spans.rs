//! The run's `tracing` spans, named and attributed after OpenTelemetry's GenAI semantic
//! conventions (`docs/tracing.md`): `invoke_agent` for the run, `tinytools.turn` for each of
//! its turns, `chat {model}` for each model request and `execute_tool {tool}` for each tool
//! call.
//!
//! A dynamic span name goes in `otel.name`, as `tracing-opentelemetry` reads it; numbers are
//! recorded as `i64` (an OpenTelemetry int: a `u64` would arrive as a string); what is known
//! only later is declared [`Empty`] and recorded then. With no subscriber interested, a span
//! is a static check and none of its fields is evaluated; nothing here formats or allocates
//! for a disabled span. Content (messages, arguments, results) is recorded only under
//! [`Capture`].

use std::fmt;
use std::time::Instant;

use serde_json::{Value, json};
use tracing::field::{Empty, display};
use tracing::{Span, info_span};

use super::error::{RunError, RunFailure};
use super::outcome::{RunOutcome, StopReason};
use super::policy::Capture;
use crate::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, RequestPurpose, ToolCall, Usage};
use crate::registry::ToolRegistry;
use crate::{ToolError, ToolExposure, ToolResult};

/// A count as an OpenTelemetry int.
fn int(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// `{operation} {subject}`, or the operation alone: a span name the conventions ask for.
struct Named<'a>(&'static str, Option<&'a str>);

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(subject) => write!(f, "{} {subject}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// The span of one run: `invoke_agent`.
pub(super) fn run(model: &dyn ChatModel, agent: Option<&str>) -> Span {
    info_span!(
        target: "tinytools::run",
        "invoke_agent",
        otel.name = agent.map(|name| format!("invoke_agent {name}")),
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.provider.name = model.provider_name(),
        gen_ai.request.model = model.model_name(),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        tinytools.tools.direct = Empty,
        tinytools.tools.deferred = Empty,
        tinytools.run.turns = Empty,
        tinytools.run.stop_reason = Empty,
        "error.type" = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// Records what the run advertised: its Direct tools and its deferred catalogue.
pub(super) fn advertised(span: &Span, direct: usize, deferred: usize) {
    span.record("tinytools.tools.direct", int(direct));
    span.record("tinytools.tools.deferred", int(deferred));
}

/// Records how the run ended: its usage, its turns, and its stop reason or failure.
pub(super) fn run_ended(span: &Span, ended: &Result<RunOutcome, RunError>) {
    if span.is_disabled() {
        return;
    }
    let (usage, turns) = match ended {
        Ok(outcome) => (outcome.usage, outcome.turns),
        Err(error) => (error.usage, error.turns),
    };
    if usage != Usage::default() {
        record_usage(span, &usage);
    }
    span.record("tinytools.run.turns", int(turns));
    match ended {
        Ok(outcome) => {
            span.record("tinytools.run.stop_reason", stop_reason(&outcome.stop));
        }
        Err(error) => match &error.source {
            RunFailure::Model(model) => failed(span, model_error_type(model), &error.source),
            RunFailure::UsageLimit(_) => failed(span, "usage_limit", &error.source),
            RunFailure::ContextOverflow(_) => failed(span, "context_overflow", &error.source),
            RunFailure::OutputSchema(_) => failed(span, "output_schema", &error.source),
            RunFailure::Output(_) => failed(span, "output_invalid", &error.source),
        },
    }
}

fn stop_reason(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::Answered => "answered",
        StopReason::TurnLimit => "turn_limit",
        StopReason::Cancelled => "cancelled",
        StopReason::RepeatedCalls => "repeated_calls",
    }
}

/// The span of one turn: `tinytools.turn` (the conventions have none).
pub(super) fn turn(number: usize) -> Span {
    info_span!(
        target: "tinytools::run",
        "tinytools.turn",
        otel.kind = "internal",
        tinytools.turn.number = int(number),
        tinytools.turn.tool_calls = Empty,
    )
}

/// Records how many calls a turn answers.
pub(super) fn turn_calls(span: &Span, calls: usize) {
    span.record("tinytools.turn.tool_calls", int(calls));
}

/// The span of one model request, `chat {model}`, and when it started.
pub(super) struct Chat {
    pub(super) span: Span,
    started: Option<Instant>,
    capture: Capture,
}

impl Chat {
    /// Opens the span of `request` to `model`; `stream` when the answer is streamed. Under
    /// `capture.messages` it carries the request's messages (`gen_ai.input.messages`).
    pub(super) fn start(model: &dyn ChatModel, request: &ModelRequest, stream: bool, capture: Capture) -> Self {
        let name = model.model_name();
        let span = info_span!(
            target: "tinytools::run",
            "chat",
            otel.name = %Named("chat", name),
            otel.kind = "client",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = model.provider_name(),
            gen_ai.request.model = name,
            gen_ai.request.stream = stream,
            gen_ai.response.finish_reasons = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.usage.cache_read.input_tokens = Empty,
            gen_ai.usage.cache_creation.input_tokens = Empty,
            gen_ai.response.time_to_first_chunk = Empty,
            gen_ai.input.messages = Empty,
            gen_ai.output.messages = Empty,
            tinytools.request.purpose = purpose(request.purpose),
            tinytools.request.tools = int(request.tools.len()),
            tinytools.latency_ms = Empty,
            "error.type" = Empty,
            otel.status_code = Empty,
            otel.status_description = Empty,
        );
        let started = (!span.is_disabled()).then(Instant::now);
        if capture.messages && started.is_some() {
            span.record("gen_ai.input.messages", messages(&request.messages).to_string());
        }
        Self { span, started, capture }
    }

    /// Records the first piece of a streamed answer (`gen_ai.response.time_to_first_chunk`,
    /// in seconds).
    pub(super) fn first_chunk(&self) {
        if let Some(started) = self.started {
            self.span.record("gen_ai.response.time_to_first_chunk", started.elapsed().as_secs_f64());
        }
    }

    /// Records the model's answer: why it stopped, its usage, its latency; under
    /// `capture.messages`, the answer itself (`gen_ai.output.messages`).
    pub(super) fn answered(&self, response: &ModelResponse) {
        if self.started.is_none() {
            return;
        }
        self.latency();
        let reason = finish_reason(response);
        self.span.record("gen_ai.response.finish_reasons", reason.0);
        if let Some(usage) = &response.usage {
            record_usage(&self.span, usage);
        }
        if self.capture.messages {
            let mut message = assistant(&response.content, &response.tool_calls);
            message["finish_reason"] = Value::from(reason.1);
            self.span.record("gen_ai.output.messages", Value::Array(vec![message]).to_string());
        }
    }

    /// Records a failed request.
    pub(super) fn failed(&self, error: &ModelError) {
        if self.started.is_some() {
            self.latency();
            failed(&self.span, model_error_type(error), error);
        }
    }

    /// Records a request the run's cancellation abandoned.
    pub(super) fn cancelled(&self) {
        self.latency();
        self.span.record("error.type", "cancelled");
    }

    fn latency(&self) {
        if let Some(started) = self.started {
            self.span.record("tinytools.latency_ms", started.elapsed().as_secs_f64() * 1_000.0);
        }
    }
}

fn purpose(purpose: RequestPurpose) -> &'static str {
    match purpose {
        RequestPurpose::Turn => "turn",
        RequestPurpose::Keywords => "keywords",
        RequestPurpose::Summary => "summary",
    }
}

/// Why the model stopped, as the conventions spell it: the recorded array, and the one reason.
fn finish_reason(response: &ModelResponse) -> (&'static str, &'static str) {
    match response.tool_calls.is_empty() {
        true => (r#"["stop"]"#, "stop"),
        false => (r#"["tool_call"]"#, "tool_call"),
    }
}

fn model_error_type(error: &ModelError) -> &'static str {
    match error {
        ModelError::ContextLength { .. } => "context_length",
        ModelError::Provider { .. } => "provider",
        ModelError::Transport(_) => "transport",
        ModelError::ResponseTooLarge { .. } => "response_too_large",
        ModelError::Interrupted { .. } => "interrupted",
        ModelError::TurnPaused { .. } => "turn_paused",
        ModelError::ScriptExhausted(_) => "script_exhausted",
    }
}

fn record_usage(span: &Span, usage: &Usage) {
    span.record("gen_ai.usage.input_tokens", int(usage.prompt_tokens));
    span.record("gen_ai.usage.output_tokens", int(usage.completion_tokens));
    span.record("gen_ai.usage.cache_read.input_tokens", int(usage.cache_read_tokens));
    span.record("gen_ai.usage.cache_creation.input_tokens", int(usage.cache_write_tokens));
}

/// Marks `span` failed: `error.type`, and the error's message as its status.
fn failed(span: &Span, kind: &'static str, error: &dyn fmt::Display) {
    span.record("error.type", kind);
    span.record("otel.status_code", "error");
    span.record("otel.status_description", display(error));
}

/// What a tool call's span knows when it opens.
pub(super) struct ToolSpan<'a> {
    pub(super) call: &'a ToolCall,
    pub(super) registry: &'a ToolRegistry,
    /// The tool's exposure on the run's surface; `None` for a name the model may not call.
    pub(super) exposure: Option<ToolExposure>,
    /// The run's own `tool_search`.
    pub(super) intrinsic: bool,
}

impl ToolSpan<'_> {
    /// Opens the span: `execute_tool {tool}`. `promoted` says whether the tool was promoted
    /// into the run's requests before this call; it is asked only when the span is enabled.
    pub(super) fn open(self, promoted: impl FnOnce() -> bool) -> Span {
        let call = self.call;
        let description = || self.registry.get(&call.name).map(|tool| tool.spec().description.as_ref());
        info_span!(
            target: "tinytools::run",
            "execute_tool",
            otel.name = %Named("execute_tool", Some(&call.name)),
            otel.kind = "internal",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = call.name.as_str(),
            gen_ai.tool.call.id = Some(call.id.as_str()).filter(|id| !id.is_empty()),
            gen_ai.tool.type = "function",
            gen_ai.tool.description = description(),
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
            tinytools.tool.exposure = exposure(self.exposure, self.intrinsic),
            tinytools.tool.promoted = promoted(),
            tinytools.tool.outcome = Empty,
            tinytools.latency_ms = Empty,
            "error.type" = Empty,
            otel.status_code = Empty,
            otel.status_description = Empty,
        )
    }
}

fn exposure(exposure: Option<ToolExposure>, intrinsic: bool) -> Option<&'static str> {
    if intrinsic {
        return Some("intrinsic");
    }
    exposure.map(|exposure| match exposure {
        ToolExposure::Direct => "direct",
        ToolExposure::Deferred => "deferred",
        ToolExposure::Hidden => "hidden",
    })
}

/// Records a tool call's outcome: `ok`, `error` (the tool answered with an error), or why
/// it did not run (`unknown`, `denied`, `invalid_arguments`, `ungrounded`).
pub(super) fn tool_outcome(span: &Span, outcome: &'static str) {
    span.record("tinytools.tool.outcome", outcome);
}

/// Under `capture.tool_io`, records the arguments the call executes with.
pub(super) fn tool_arguments(span: &Span, arguments: &str, capture: Capture) {
    if capture.tool_io {
        span.record("gen_ai.tool.call.arguments", arguments);
    }
}

/// Records what a tool that ran answered: `ok` or `error`, and under `capture.tool_io` the
/// result as the model reads it.
pub(super) fn tool_answered(span: &Span, result: &ToolResult, capture: Capture) {
    tool_outcome(span, if result.is_error { "error" } else { "ok" });
    if capture.tool_io && !span.is_disabled() {
        span.record("gen_ai.tool.call.result", result.to_model_text());
    }
}

/// Records a call that failed to finish: it failed, panicked, timed out or was cancelled.
pub(super) fn tool_failed(span: &Span, error: &ToolError) {
    let kind = match error {
        ToolError::TimedOut { .. } => "timed_out",
        ToolError::Cancelled { .. } => "cancelled",
        ToolError::Panicked { .. } => "panicked",
        ToolError::InvalidArguments { .. } | ToolError::MalformedArguments { .. } => "invalid_arguments",
        _ => "failed",
    };
    tool_outcome(span, kind);
    if !span.is_disabled() {
        failed(span, kind, error);
    }
}

/// Records a tool call's latency, from `started`.
pub(super) fn tool_latency(span: &Span, started: Option<Instant>) {
    if let Some(started) = started {
        span.record("tinytools.latency_ms", started.elapsed().as_secs_f64() * 1_000.0);
    }
}

/// A conversation as the conventions' `gen_ai.input.messages` has it: each message a role
/// and its parts. Items only a provider reads are left out.
fn messages(messages: &[Message]) -> Value {
    let text = |role: &str, content: &str| json!({"role": role, "parts": [{"type": "text", "content": content}]});
    let list = messages.iter().filter_map(|message| match message {
        Message::System { content } => Some(text("system", content)),
        Message::User { content } | Message::Feedback { content } => Some(text("user", content)),
        Message::Assistant { content, tool_calls } => Some(assistant(content, tool_calls)),
        Message::Tool { call_id, content, .. } => Some(json!({
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": call_id, "response": content}],
        })),
        Message::AidCall { call, .. } => Some(json!({"role": "user", "parts": [tool_call(call)]})),
        _ => None,
    });
    Value::Array(list.collect())
}

/// The model's turn as a message of the conventions: its text, then its calls.
fn assistant(content: &str, calls: &[ToolCall]) -> Value {
    let mut parts = Vec::with_capacity(calls.len() + 1);
    if !content.is_empty() {
        parts.push(json!({"type": "text", "content": content}));
    }
    parts.extend(calls.iter().map(tool_call));
    json!({"role": "assistant", "parts": parts})
}

fn tool_call(call: &ToolCall) -> Value {
    let arguments = serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
    json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments})
}
