//! The loop of a run: ask the model; a reply without calls is the answer (unless an aid asks
//! again); answer every call it made (within the per-turn cap, results bounded), promote what
//! they found; repeat until the answer, the turn limit or cancellation.

use futures_util::future::join_all;
use serde_json::Value;
use tracing::Instrument;

use super::ask::Asked;
use super::call::CallAnswer;
use super::error::{OutputInvalid, RunError, RunFailure};
use super::events::{Promotion, RunEvent};
use super::outcome::{RunOutcome, StopReason};
use super::output::Verdict;
use super::seam::{Fate, Next, OnReply};
use super::spans;
use super::state::Run;
use crate::ToolContent;
use crate::model::{Message, ToolCall, Usage};

impl Run<'_> {
    /// The run from its start to its end, in its span (`invoke_agent`): each turn in a
    /// `tinytools.turn` span, its model request and tool calls in theirs.
    pub(super) async fn run_to_end(mut self) -> Result<RunOutcome, RunError> {
        let span = self.span.clone();
        let ended = async move {
            self.start().await;
            self.turns().await
        }
        .instrument(span.clone())
        .await;
        spans::run_ended(&span, &ended);
        ended
    }

    async fn turns(mut self) -> Result<RunOutcome, RunError> {
        let offer = self.offer();
        let mut spent = std::mem::take(&mut self.spent);
        let mut answer = String::new();
        let mut next = Next::Tools;
        let mut checked = 0;
        while self.turn < self.policy().max_turns {
            if self.cancel.is_cancelled() {
                return Ok(self.finish(answer, StopReason::Cancelled, spent.usage));
            }
            self.turn += 1;
            let span = spans::turn(self.turn);
            let (request, asked) =
                self.ask(self.turn, &offer, next != Next::Tools, &mut spent).instrument(span.clone()).await;
            let mut response = match asked {
                Asked::Answer(response) => response,
                Asked::Cancelled => return Ok(self.finish(answer, StopReason::Cancelled, spent.usage)),
                Asked::Failed(source) => {
                    let (transcript, turns, usage) = (self.transcript, self.turn, spent.usage);
                    return Err(RunError { source, transcript, turns, usage });
                }
            };
            let deferred = request.native_deferral.iter().flat_map(|native| &native.tools);
            let deferred = deferred.map(|tool| tool.schema.name.clone());
            self.offered =
                request.tools.iter().map(|t| t.name.clone()).chain(request.callable_by_name).chain(deferred).collect();
            self.record_searches(std::mem::take(&mut response.searches));
            if let Some(items) = response.provider_items.take() {
                self.transcript.messages.push(Message::ProviderItems(items));
            }
            answer.clone_from(&response.content);
            if next == Next::Final {
                // Asked for the final answer: calls in this reply are not run.
                self.transcript.messages.push(Message::Assistant { content: response.content, tool_calls: Vec::new() });
                let settled = self.check_output(&answer, &mut checked, false);
                return self.conclude(answer, StopReason::RepeatedCalls, spent.usage, settled);
            }
            next = Next::Tools;
            let mut calls = response.tool_calls.clone();
            self.transcript
                .messages
                .push(Message::Assistant { content: response.content, tool_calls: response.tool_calls });
            if calls.is_empty() {
                match self.on_reply(&answer).instrument(span.clone()).await {
                    OnReply::Answer => match self.check_output(&answer, &mut checked, true) {
                        Settle::Retry => continue,
                        settled => return self.conclude(answer, StopReason::Answered, spent.usage, settled),
                    },
                    OnReply::Feedback(then) => {
                        next = then;
                        continue;
                    }
                    OnReply::Call { aid, call } => {
                        // The aid's, not the model's: kept as such, after the reply.
                        self.transcript.messages.push(Message::AidCall { aid: aid.to_owned(), call: call.clone() });
                        calls.push(call);
                    }
                }
            }
            spans::turn_calls(&span, calls.len());
            let ran_ok = self.answer_calls(&calls).instrument(span.clone()).await;
            if self.cancel.is_cancelled() {
                return Ok(self.finish(answer, StopReason::Cancelled, spent.usage));
            }
            if ran_ok {
                self.promote_after_tool_result().instrument(span.clone()).await;
            }
            if let Some(then) = self.after_calls().instrument(span).await {
                next = then;
            }
        }
        Ok(self.finish(answer, StopReason::TurnLimit, spent.usage))
    }

    /// Answers a turn's calls, in call order, each racing the run's cancellation: the aids
    /// decide each call's fate first; the calls that run, run concurrently; calls past the
    /// per-turn cap are not run. Records the results and promotes what they found; returns
    /// whether a tool ran without error.
    async fn answer_calls(&mut self, calls: &[ToolCall]) -> bool {
        let cap = self.policy().caps.max_tool_calls_per_turn;
        let mut fates = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            fates.push(if i < cap { self.fate(call).await } else { Fate::OverCap });
        }
        let this = &*self;
        let answers = join_all(calls.iter().zip(&fates).map(|(call, fate)| async move {
            match fate {
                Fate::Run { adjusted, .. } => Some(this.call(call, adjusted.as_ref()).await),
                Fate::Answer { .. } | Fate::OverCap => None,
            }
        }))
        .await;
        let mut ran_ok = false;
        let (mut searched, mut rejected, mut loaded, mut sources) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut by_aids: Vec<(Vec<String>, Promotion)> = Vec::new();
        for ((call, fate), answer) in calls.iter().zip(fates).zip(answers) {
            let answer = match (fate, answer) {
                (Fate::Run { note: Some(note), .. }, Some(mut answer)) => {
                    answer.result.content.insert(0, ToolContent::Text(note));
                    answer
                }
                (_, Some(answer)) => answer,
                (Fate::Answer { result, promote: names, aid }, None) => {
                    by_aids.push((names, Promotion::Aid { aid: aid.to_owned() }));
                    CallAnswer::just(result)
                }
                (_, None) => {
                    let reason = format!("past the turn's cap of {cap} tool calls");
                    self.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason });
                    CallAnswer::just(self.policy().caps.over_call_cap(calls.len()))
                }
            };
            let content = self.policy().caps.bound_result(answer.result.to_model_text());
            if answer.ran_ok {
                self.grounds.record(&call.name, &content);
            }
            ran_ok |= answer.ran_ok;
            searched.extend(answer.searched);
            rejected.extend(answer.rejected);
            loaded.extend(answer.loaded);
            sources.extend(answer.sources);
            self.transcript.messages.push(Message::Tool {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error: answer.result.is_error,
            });
        }
        if !self.cancel.is_cancelled() {
            self.promote_names(searched, Promotion::Searched);
            self.promote_names(rejected, Promotion::RejectedCall);
            self.promote_names(loaded, Promotion::UnknownName);
            self.promote_names(sources, Promotion::GroundingSource);
            for (names, cause) in by_aids {
                self.promote_names(names, cause);
            }
        }
        ran_ok
    }
}

/// How a run's answer settles a typed run.
pub(super) enum Settle {
    /// The run is untyped, or the answer matches: its value.
    Done(Option<Value>),
    /// It misses; the feedback is in the transcript and the model asks again.
    Retry,
    /// It misses, with no retry left.
    Failed(OutputInvalid),
}

impl Run<'_> {
    /// Checks a typed run's answer (the `checked`-th so far): an untyped run is done; a miss
    /// with a retry left (and `may_retry`) sends the model its errors as feedback.
    pub(super) fn check_output(&mut self, answer: &str, checked: &mut usize, may_retry: bool) -> Settle {
        let Some(spec) = self.setup.output else { return Settle::Done(None) };
        *checked += 1;
        // A reply the run asked for as final gets no retry: the attempt is past any budget.
        let retries = if may_retry { self.policy().output_retries } else { *checked - 1 };
        match spec.check(answer, *checked, retries) {
            Verdict::Valid(value) => Settle::Done(Some(value)),
            Verdict::Failed(invalid) => Settle::Failed(invalid),
            Verdict::Retry { feedback, errors } => {
                self.emit(RunEvent::OutputRejected { turn: self.turn, errors });
                self.transcript.messages.push(Message::feedback(feedback));
                Settle::Retry
            }
        }
    }

    /// Ends the run on its answer: its outcome, with a typed run's value, or the typed run's
    /// error. (`Settle::Retry` never reaches here: the loop goes on.)
    #[expect(clippy::result_large_err, reason = "RunError is what every run returns, kept whole for resuming")]
    pub(super) fn conclude(
        self,
        answer: String,
        stop: StopReason,
        usage: Usage,
        settled: Settle,
    ) -> Result<RunOutcome, RunError> {
        let invalid = match settled {
            Settle::Done(output) => {
                let mut outcome = self.finish(answer, stop, usage);
                outcome.output = output;
                return Ok(outcome);
            }
            Settle::Failed(invalid) => invalid,
            Settle::Retry => {
                let name = self.setup.output.map(|spec| spec.schema.name.clone()).unwrap_or_default();
                OutputInvalid { name, answer, errors: Vec::new(), attempts: 0 }
            }
        };
        let turns = self.turn;
        Err(RunError { source: RunFailure::Output(Box::new(invalid)), transcript: self.transcript, turns, usage })
    }
}
