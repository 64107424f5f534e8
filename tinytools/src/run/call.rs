//! One tool call of a run: gates, the intrinsic search, admission (and what a refused call
//! is answered with), execution with its timeout, and the answers to names the model may not
//! call.

use serde_json::Value;

use super::agent::Run;
use super::events::RunEvent;
use super::grounding::Ungrounded;
use super::guard;
use crate::discovery::unknown_call_query;
use crate::middleware::ToolGate;
use crate::model::ToolCall;
use crate::registry::Admitted;
use crate::schema::drop_absent_nulls;
use crate::tool::{TOOL_SEARCH, argument_notes, type_signature};
use crate::{ToolContent, ToolContext, ToolError, ToolExposure, ToolResult, ToolSchema};

impl Run<'_> {
    /// Answers one call.
    pub(super) async fn call(&self, call: &ToolCall) -> CallAnswer {
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
            return self.unknown_name(call).await;
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
        let mut arguments = self.strict_arguments(&call.name, &call.arguments);
        let mut dropped = Vec::new();
        let admitted = match agent.registry.admit(&call.name, arguments.as_deref().unwrap_or(&call.arguments)) {
            Ok(admitted) => admitted,
            Err(error) => match self.without_undeclared(&call.name, arguments.as_deref().unwrap_or(&call.arguments)) {
                Some(Undeclared { admitted, names, arguments: kept }) => {
                    agent.emit(RunEvent::UndeclaredArgumentsDropped {
                        call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        names: names.clone(),
                    });
                    arguments = Some(kept);
                    dropped = names;
                    admitted
                }
                None => return self.refused(call, exposure, arguments.as_deref(), &error).await,
            },
        };
        if let Some(refusal) = self.grounding_refusal(&call.name, arguments.as_deref(), &call.arguments) {
            let refusal = self.with_sources_of_missing(refusal).await;
            agent.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason: refusal.reason });
            return CallAnswer { sources: refusal.promote, provisional: true, ..CallAnswer::just(refusal.answer) };
        }
        agent.emit(RunEvent::ToolStarted { call_id: call.id.clone(), tool_name: call.name.clone() });
        let mut ctx = ToolContext::new(call.id.as_str()).with_cancellation(self.cancel.child_token());
        if let Some(state) = &agent.state {
            ctx = state(ctx);
        }
        let timeout = agent.policy.tool_timeout;
        // The call races its timeout and the run's cancellation; either way its token fires
        // so a cooperative tool can stop, and the call is answered.
        let outcome = match tokio::time::timeout(timeout, self.cancel.run_until_cancelled(admitted.run(&ctx))).await {
            Ok(Some(outcome)) => outcome,
            Ok(None) => Err(ToolError::Cancelled { tool: call.name.clone() }),
            Err(_) => {
                ctx.cancellation().cancel();
                Err(ToolError::TimedOut { tool: call.name.clone(), after: timeout })
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
                // Arguments the tool's own types refused read like an admission refusal.
                let mut answer = match error {
                    ToolError::InvalidArguments { .. } => self.rejection(&call.name, &error),
                    _ => error.to_model_result(),
                };
                // The failure's detail is the host's; the model gets a reference to it that the
                // user can quote, the id the host's `ToolFailed` event carries.
                if matches!(error, ToolError::Failed { .. } | ToolError::Panicked { .. }) && !call.id.is_empty() {
                    answer = ToolResult::error(format!("{} Reference: {}.", answer.to_model_text(), call.id));
                }
                answer
            }
        };
        for middleware in &agent.middleware {
            middleware.after_tool(call, &mut result).await;
        }
        if !dropped.is_empty() {
            result.content.insert(0, ToolContent::Text(left_out(&call.name, &dropped)));
        }
        let ran_ok = !result.is_error;
        CallAnswer { ran_ok, ..CallAnswer::just(result) }
    }

    /// The answer to a call admission refused: every violation with the tool's signature, and
    /// a made-up id among the bad arguments told at once (fixing the shape alone would only
    /// earn the grounding refusal on the next turn: measured on the 1.5B model, which answered
    /// the shape's refusal in prose and never looked up the id). A deferred tool's refusal
    /// promotes it.
    async fn refused(
        &self,
        call: &ToolCall,
        exposure: Option<ToolExposure>,
        arguments: Option<&str>,
        error: &ToolError,
    ) -> CallAnswer {
        let mut reason = error.to_string();
        let mut answer = CallAnswer::just(self.rejection(&call.name, error));
        if let Some(refusal) = self.grounding_refusal(&call.name, arguments, &call.arguments) {
            let refusal = self.with_sources_of_missing(refusal).await;
            reason = format!("{reason}; {}", refusal.reason);
            let text = format!("{}\n\n{}", answer.result.to_model_text(), refusal.answer.to_model_text());
            answer.result = ToolResult::error(text);
            answer.sources = refusal.promote;
        }
        self.agent.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason });
        if exposure == Some(ToolExposure::Deferred) {
            answer.rejected.push(call.name.clone());
        }
        answer
    }

    /// A refused call of a read-only tool admitted once the top-level arguments its declared
    /// schema does not name are left out (`LoopGuard::drop_undeclared_arguments`); `None` when
    /// the guard is off, the tool has side effects, nothing is undeclared, or the call is
    /// still refused without them.
    fn without_undeclared(&self, name: &str, raw: &str) -> Option<Undeclared<'_>> {
        if !self.agent.policy.loop_guard.drop_undeclared_arguments {
            return None;
        }
        let tool = self.agent.registry.get(name)?;
        if !tool.annotations().read_only {
            return None;
        }
        let Ok(Value::Object(mut arguments)) = serde_json::from_str::<Value>(raw) else {
            return None;
        };
        let declared = tool.schema().parameters.get("properties").and_then(Value::as_object);
        let names: Vec<String> = arguments
            .keys()
            .filter(|key| declared.is_none_or(|declared| !declared.contains_key(*key)))
            .cloned()
            .collect();
        if names.is_empty() {
            return None;
        }
        arguments.retain(|key, _| !names.contains(key));
        let kept = Value::Object(arguments).to_string();
        let admitted = self.agent.registry.admit(name, &kept).ok()?;
        Some(Undeclared { admitted, names, arguments: kept })
    }

    /// The answer to a name the model may not call. While the bridge is active and query-aware
    /// discovery is on, the name's words and the call's arguments are ranked against the
    /// catalogue like a user message: the hits that pass the floor and the token budget are
    /// promoted, and the answer names them with their signatures. The answer depends only on
    /// what the model wrote — an unknown, Hidden or refused name of the same spelling reads the
    /// same — and names only tools of the surface.
    async fn unknown_name(&self, call: &ToolCall) -> CallAnswer {
        let loaded = self.ranked_promotable(&unknown_call_query(&call.name, &call.arguments)).await;
        let result = self.bridge.unknown_tool(&call.name, &loaded);
        CallAnswer { loaded: loaded.into_iter().map(|schema| schema.name).collect(), ..CallAnswer::just(result) }
    }

    /// A placeholder refusal with the deferred tools that may give the missing value: its words
    /// and the text around it (`current price: GLOBX is trading at $<current-price>`) ranked against the catalogue like a user message, the hits that pass
    /// query-aware discovery's floor and budget named in the answer and promoted. Unchanged when
    /// the refusal is not a placeholder's, discovery is off or nothing passes.
    async fn with_sources_of_missing(&self, mut refusal: Ungrounded) -> Ungrounded {
        let Some(missing) = refusal.missing.as_deref() else {
            return refusal;
        };
        let found: Vec<String> = self.ranked_promotable(missing).await.into_iter().map(|schema| schema.name).collect();
        if found.is_empty() {
            return refusal;
        }
        let named: Vec<String> = found.iter().map(|name| format!("`{name}`")).collect();
        let text = format!("{}\nNow callable, and may give it: {}.", refusal.answer.to_model_text(), named.join(", "));
        refusal.answer = ToolResult::error(text);
        refusal.promote = found;
        refusal
    }

    /// `query` ranked against the deferred catalogue like a user message: the declarations of
    /// the hits that pass query-aware discovery's floor and token budget, at most its limit;
    /// none while discovery or the bridge is off.
    async fn ranked_promotable(&self, query: &str) -> Vec<ToolSchema> {
        let pre = self.agent.policy.discovery.pre_promotion;
        if !pre.enabled || pre.limit == 0 || !self.bridge.is_active() {
            return Vec::new();
        }
        let outcome = self.bridge.catalog().rank(self.bridge.policy(), query, pre.limit).await;
        self.pre_promotable(&outcome, pre.limit, false).into_iter().map(|(schema, _)| schema).collect()
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
        if !self.agent.policy.tool_schemas.is_some_and(|preparation| preparation.strict) {
            return None;
        }
        let tool = self.agent.registry.get(name)?;
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
        let fruitless = answer.outcome.is_some() && found.is_empty();
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
        CallAnswer { searched: found, fruitless, ..CallAnswer::just(answer.result) }
    }
}

/// A call admitted without the arguments its tool does not declare.
struct Undeclared<'r> {
    admitted: Admitted<'r>,
    /// The arguments left out.
    names: Vec<String>,
    /// The arguments that ran, as JSON.
    arguments: String,
}

/// The line a call's answer starts with when arguments its tool does not declare were left out.
fn left_out(tool: &str, names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    let them = if names.len() == 1 { "it" } else { "them" };
    format!("`{tool}` does not take {}, so it ran without {them}:", guard::listed(&names))
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
    /// A `tool_search` that matched nothing: the same call again cannot find anything.
    pub(super) fruitless: bool,
    /// A grounding refusal: the same call is checked again once the conversation has more.
    pub(super) provisional: bool,
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
            fruitless: false,
            provisional: false,
        }
    }
}
