//! One tool call of a run: the arguments that execute, gates, the intrinsic search, admission
//! (and what a refused call is answered with), the grounding gate, execution with its timeout,
//! and the answers to names the model may not call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing::{Instrument, Span};

use super::events::RunEvent;
use super::execution::Execution;
use super::promotion::ranked;
use super::seam::Adjustment;
use super::spans::{self, ToolSpan};
use super::state::Run;
use crate::discovery::unknown_call_query;
use crate::middleware::ToolGate;
use crate::model::ToolCall;
use crate::schema::drop_absent_nulls;
use crate::tool::{TOOL_SEARCH, argument_notes, type_signature};
use crate::{ToolContext, ToolError, ToolExposure, ToolResult};

/// What [`RunEvent::ArgumentsAdjusted`] names as `by` when strict mode dropped the `null`s of
/// omitted optional properties.
const STRICT_SCHEMA: &str = "strict_schema";

impl Run<'_> {
    /// Answers one call. `adjusted` holds the arguments an aid asked to run it on instead.
    ///
    /// Every gate, every event and the tool itself see one call: the model's, with the
    /// arguments that execute (the aid's, then with strict mode's absent `null`s removed).
    /// Each adjustment is reported first as [`RunEvent::ArgumentsAdjusted`]. The call runs in
    /// its span (`execute_tool {tool}`), which records its outcome.
    pub(super) async fn call(&self, call: &ToolCall, adjusted: Option<&Adjustment>) -> CallAnswer {
        let intrinsic = call.name == TOOL_SEARCH && self.bridge.answers_search();
        let exposure = self.bridge.surface().exposure(&call.name);
        let opened = ToolSpan { call, registry: self.setup.registry, exposure, intrinsic };
        let span = opened.open(|| self.promoted.iter().any(|tool| tool.name == call.name));
        let started = (!span.is_disabled()).then(Instant::now);
        let answer = self.answer_call(call, adjusted, exposure, intrinsic, &span).instrument(span.clone()).await;
        spans::tool_latency(&span, started);
        answer
    }

    async fn answer_call(
        &self,
        call: &ToolCall,
        adjusted: Option<&Adjustment>,
        exposure: Option<ToolExposure>,
        intrinsic_search: bool,
        span: &Span,
    ) -> CallAnswer {
        let surface = self.bridge.surface();
        if !intrinsic_search && exposure.is_none() {
            let reason = match surface.refusal(&call.name) {
                Some(refusal) => format!("refused by the run's rules: {refusal}"),
                None => "unknown or hidden".to_owned(),
            };
            self.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason });
            spans::tool_outcome(span, "unknown");
            return self.unknown_name(call).await;
        }
        let executed = self.executed(call, adjusted);
        let call = &executed;
        spans::tool_arguments(span, &call.arguments, self.policy().capture);
        for middleware in self.setup.middleware {
            if let ToolGate::Deny(reason) = middleware.before_tool(call).await {
                self.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason: reason.clone() });
                spans::tool_outcome(span, "denied");
                return CallAnswer::just(ToolResult::error(reason));
            }
        }
        if intrinsic_search {
            let answer = self.search(call).await;
            spans::tool_answered(span, &answer.result, self.policy().capture);
            return answer;
        }
        if exposure == Some(ToolExposure::Deferred) {
            let arguments = self.captured(&call.arguments);
            self.emit(RunEvent::DeferredToolCall { call_id: call.id.clone(), tool_name: call.name.clone(), arguments });
        }
        let args = match self.setup.registry.admit(&call.name, &call.arguments) {
            Ok(admitted) => admitted.into_args(),
            Err(error) => {
                spans::tool_outcome(span, "invalid_arguments");
                return self.refused(call, exposure, &error);
            }
        };
        if let Some(refusal) = self.grounds.refusal(&self.gate(), &call.name, &call.arguments) {
            self.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason: refusal.reason });
            spans::tool_outcome(span, "ungrounded");
            return CallAnswer { sources: refusal.promote, ..CallAnswer::just(refusal.answer) };
        }
        let arguments = self.captured(&call.arguments);
        self.emit(RunEvent::ToolStarted { call_id: call.id.clone(), tool_name: call.name.clone(), arguments });
        let mut result = match self.execute(call, args).await {
            Ok(result) => {
                self.emit(RunEvent::ToolCompleted {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    is_error: result.is_error,
                });
                spans::tool_answered(span, &result, self.policy().capture);
                result
            }
            Err(error) => {
                spans::tool_failed(span, &error);
                self.failed(call, &error)
            }
        };
        for middleware in self.setup.middleware {
            middleware.after_tool(call, &mut result).await;
        }
        let ran_ok = !result.is_error;
        CallAnswer { ran_ok, ..CallAnswer::just(result) }
    }

    /// The call as it will execute: the model's name and id, on the aid's arguments when one
    /// adjusted them, then without the `null`s strict mode drops. Each change is an event.
    fn executed(&self, call: &ToolCall, adjusted: Option<&Adjustment>) -> ToolCall {
        let mut executed = call.clone();
        if let Some(adjustment) = adjusted {
            self.adjusted(call, adjustment.aid, &adjustment.arguments);
            executed.arguments.clone_from(&adjustment.arguments);
        }
        if let Some(strict) = self.strict_arguments(&executed.name, &executed.arguments) {
            self.adjusted(&executed, STRICT_SCHEMA, &strict);
            executed.arguments = strict;
        }
        executed
    }

    /// Reports that `by` changed `call`'s arguments to `arguments`.
    fn adjusted(&self, call: &ToolCall, by: &str, arguments: &str) {
        self.emit(RunEvent::ArgumentsAdjusted {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            by: by.to_owned(),
            before: self.captured(&call.arguments),
            after: self.captured(arguments),
        });
    }

    /// A tool input as events may carry it: only under `capture.tool_io`.
    fn captured(&self, arguments: &str) -> Option<String> {
        self.policy().capture.tool_io.then(|| arguments.to_owned())
    }

    /// Runs an admitted call as a task the run owns ([`Execution`]), racing its timeout and the
    /// run's cancellation. However the race ends before the tool does (timeout, cancellation,
    /// or this future dropped with the run), the task is aborted and the call's token fires: an
    /// async tool stops at its next `.await` and nothing of it runs afterwards. A tool that
    /// [blocks](crate::Tool::blocking) runs on the blocking pool and cannot be stopped
    /// mid-way; the run answers on time all the same.
    async fn execute(&self, call: &ToolCall, args: Value) -> Result<ToolResult, ToolError> {
        let token = self.cancel.child_token();
        let mut ctx = ToolContext::new(call.id.as_str()).with_cancellation(token.clone());
        if let Some(state) = self.setup.state {
            ctx = state(ctx);
        }
        let blocking = self.setup.registry.get(&call.name).is_some_and(|tool| tool.spec().blocking);
        let work = Arc::clone(self.setup.registry).run_admitted(call.name.clone(), args, ctx);
        // Fires the token unless the tool finished: on timeout, cancellation and drop alike.
        let fire = token.drop_guard();
        let task = Execution::start(work, blocking, &call.name);
        let timeout: Duration = self.policy().tool_timeout;
        match tokio::time::timeout(timeout, self.cancel.run_until_cancelled(task)).await {
            Ok(Some(outcome)) => {
                fire.disarm();
                outcome
            }
            Ok(None) => Err(ToolError::Cancelled { tool: call.name.clone() }),
            Err(_) => Err(ToolError::TimedOut { tool: call.name.clone(), after: timeout }),
        }
    }

    /// The answer to a call that failed: the tool errored, panicked, timed out or was cancelled.
    fn failed(&self, call: &ToolCall, error: &ToolError) -> ToolResult {
        self.emit(RunEvent::ToolFailed {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            error: format!("{error}"),
        });
        // Arguments the tool's own types refused read like an admission refusal.
        let answer = match error {
            ToolError::InvalidArguments { .. } => self.rejection(&call.name, error),
            _ => error.to_model_result(),
        };
        // The failure's detail is the host's; the model gets a reference to it that the user can
        // quote, the id the host's `ToolFailed` event carries.
        if matches!(error, ToolError::Failed { .. } | ToolError::Panicked { .. }) && !call.id.is_empty() {
            return ToolResult::error(format!("{} Reference: {}.", answer.to_model_text(), call.id));
        }
        answer
    }

    /// The answer to a call admission refused: every violation with the tool's signature, and
    /// a made-up grounded value among the bad arguments told at once (fixing the shape alone
    /// would only earn the grounding refusal on the next turn). A deferred tool's refusal
    /// promotes it.
    fn refused(&self, call: &ToolCall, exposure: Option<ToolExposure>, error: &ToolError) -> CallAnswer {
        let mut reason = error.to_string();
        let mut answer = CallAnswer::just(self.rejection(&call.name, error));
        if let Some(refusal) = self.grounds.refusal(&self.gate(), &call.name, &call.arguments) {
            reason = format!("{reason}; {}", refusal.reason);
            let text = format!("{}\n\n{}", answer.result.to_model_text(), refusal.answer.to_model_text());
            answer.result = ToolResult::error(text);
            answer.sources = refusal.promote;
        }
        self.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason });
        if exposure == Some(ToolExposure::Deferred) {
            answer.rejected.push(call.name.clone());
        }
        answer
    }

    /// The answer to a name the model may not call. While the bridge is active and query-aware
    /// discovery is on, the name's words and the call's arguments are ranked against the
    /// catalogue like a user message: the hits that pass the floor and the token budget are
    /// promoted, and the answer names them with their signatures. The answer depends only on
    /// what the model wrote — an unknown, Hidden or refused name of the same spelling reads the
    /// same — and names only tools of the surface.
    async fn unknown_name(&self, call: &ToolCall) -> CallAnswer {
        let query = unknown_call_query(&call.name, &call.arguments);
        let loaded = ranked(&self.bridge, self.setup.counter, &query).await;
        let result = self.bridge.unknown_tool(&call.name, &loaded);
        CallAnswer { loaded: loaded.into_iter().map(|schema| schema.name).collect(), ..CallAnswer::just(result) }
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

    /// In strict mode, the arguments with the `null`s of omitted optional properties removed
    /// (see [`drop_absent_nulls`]); `None` when nothing changes.
    fn strict_arguments(&self, name: &str, raw: &str) -> Option<String> {
        if !self.policy().tool_schemas.is_some_and(|preparation| preparation.strict) {
            return None;
        }
        let tool = self.bridge.surface().get(name)?;
        let mut args: Value = serde_json::from_str(raw).ok()?;
        let before = args.clone();
        drop_absent_nulls(&tool.schema().parameters, &mut args);
        (args != before).then(|| args.to_string())
    }

    async fn search(&self, call: &ToolCall) -> CallAnswer {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let answer = self.bridge.search(&args).await;
        let found: Vec<String> =
            answer.outcome.as_ref().map(|o| o.matched.iter().map(|hit| hit.name.clone()).collect()).unwrap_or_default();
        if let Some(outcome) = answer.outcome {
            self.emit(RunEvent::ToolSearched {
                call_id: call.id.clone(),
                query: answer.query.filter(|_| self.policy().capture.tool_io),
                matched: found.clone(),
                ranker: outcome.ranker,
                top_confidence: outcome.top_confidence,
                fallback: outcome.fallback,
                shadow_matched: outcome.shadow_matched,
                latency_ms: outcome.latency_ms,
            });
        }
        CallAnswer { searched: found, ..CallAnswer::just(answer.result) }
    }
}

/// One call's answer, and the deferred tools it makes the loop promote.
pub(super) struct CallAnswer {
    pub(super) result: ToolResult,
    /// Found by `tool_search`.
    pub(super) searched: Vec<String>,
    /// Deferred tools called by name whose arguments admission refused.
    pub(super) rejected: Vec<String>,
    /// Deferred tools an unknown name's ranking loaded.
    pub(super) loaded: Vec<String>,
    /// Deferred tools a refused ungrounded value must come from.
    pub(super) sources: Vec<String>,
    /// A tool ran and answered without an error (the intrinsic search does not count).
    pub(super) ran_ok: bool,
}

impl CallAnswer {
    pub(super) fn just(result: ToolResult) -> Self {
        Self {
            result,
            searched: Vec::new(),
            rejected: Vec::new(),
            loaded: Vec::new(),
            sources: Vec::new(),
            ran_ok: false,
        }
    }
}
