//! The loop of a run: build each request, ask the model (within the usage limits, racing
//! cancellation, shrinking the conversation once on a context overflow), answer its tool calls
//! (within the per-turn cap, results bounded), promote what they found, repeat.

use super::agent::{Run, RunOutcome, StopReason};
use super::call::CallAnswer;
use super::context::{self, Shrink};
use super::error::{ContextOverflow, RunError, RunFailure};
use super::events::{Promotion, RunEvent};
use super::guard::{self, Repeats};
use crate::dialect::prose;
use crate::model::{Message, ModelError, ModelRequest, ModelResponse, ToolCall, Usage};
use crate::schema::count_tool_schema_tokens;
use crate::tool::TOOL_SEARCH;
use crate::{ToolResult, ToolSchema};

/// What one request came to.
enum Asked {
    Answer(ModelResponse),
    Cancelled,
    Failed(RunFailure),
}

/// What asking for the answer instead of running a repeat came to.
enum Instead {
    /// The model answered in text: the run's answer.
    Answered(String),
    Cancelled,
    Failed(RunFailure),
    /// No text: the repeat is back in the transcript.
    Declined,
}

/// What the loop does with a reply that made no call.
enum Reply {
    /// The reply spelt a call out in prose: run it.
    Adopted(ToolCall),
    /// Ask the model again with this message.
    AskAgain(String),
    /// The reply is the run's answer.
    Final,
}

/// The loop guard's one-off requests, once made.
#[derive(Default)]
struct AskedAgain {
    nudged: bool,
    after_empty: bool,
    instead_of_repeat: bool,
    unused_values: bool,
    /// The turn the unused-value question was asked at, and the tools it named.
    question: Option<(usize, Vec<String>)>,
}

/// What the run has spent so far.
#[derive(Default)]
struct Spent {
    usage: Usage,
    requests: u64,
}

impl Run<'_> {
    pub(super) async fn turns(
        mut self,
        surface: Vec<ToolSchema>,
        callable_by_name: Vec<String>,
    ) -> Result<RunOutcome, RunError> {
        let guard = self.agent.policy.loop_guard;
        let mut spent = Spent::default();
        let mut answer = String::new();
        let mut repeats = Repeats::default();
        let (mut answered_a_call, mut stop_tools) = (false, false);
        let mut asked = AskedAgain::default();
        for turn in 1..=self.agent.policy.max_turns {
            if self.cancel.is_cancelled() {
                return Ok(self.finish(answer, StopReason::Cancelled, turn - 1, spent.usage));
            }
            if stop_tools {
                // The loop guard's last request: no tools, and the model's final answer.
                self.transcript.messages.push(Message::user(guard::FINAL_ANSWER));
            }
            let (request, response) = match self.ask(turn, &surface, &callable_by_name, stop_tools, &mut spent).await {
                (request, Asked::Answer(response)) => (request, response),
                (_, Asked::Cancelled) => return Ok(self.finish(answer, StopReason::Cancelled, turn, spent.usage)),
                (_, Asked::Failed(source)) => {
                    return Err(RunError { source, transcript: self.transcript, turns: turn, usage: spent.usage });
                }
            };
            answer.clone_from(&response.content);
            if stop_tools {
                self.transcript.messages.push(Message::Assistant { content: response.content, tool_calls: Vec::new() });
                return Ok(self.finish(answer, StopReason::RepeatedCalls, turn, spent.usage));
            }
            let mut calls = response.tool_calls.clone();
            self.transcript
                .messages
                .push(Message::Assistant { content: response.content, tool_calls: response.tool_calls });
            if calls.is_empty() {
                match self.without_calls(&answer, &request, &repeats, &mut asked, answered_a_call, turn) {
                    Reply::Adopted(call) => {
                        // The transcript keeps the call, not the sentence: a small model copies
                        // its own earlier prose.
                        if let Some(last) = self.transcript.messages.last_mut() {
                            *last = Message::Assistant { content: String::new(), tool_calls: vec![call.clone()] };
                        }
                        answer.clear();
                        calls.push(call);
                    }
                    Reply::AskAgain(message) => {
                        self.transcript.messages.push(Message::user(message));
                        continue;
                    }
                    Reply::Final => {
                        if let Some(question) = self.ask_about_unused_values(&mut asked, turn).await {
                            self.transcript.messages.push(Message::user(question));
                            continue;
                        }
                        return Ok(self.finish(answer, StopReason::Answered, turn, spent.usage));
                    }
                }
            }
            // Calls made before (or twice in this turn) are answered from their first answer,
            // unless that was a grounding refusal the conversation has since answered; calls
            // past the per-turn cap are not run.
            let cap = self.agent.policy.caps.max_tool_calls_per_turn;
            let keys: Vec<String> = calls.iter().map(Repeats::key).collect();
            let answerable = |i: usize| {
                !repeats.contains(&keys[i])
                    || repeats.provisional(&keys[i])
                        && self.grounding_refusal(&calls[i].name, None, &calls[i].arguments).is_none()
            };
            let fresh: Vec<usize> =
                (0..calls.len().min(cap)).filter(|&i| answerable(i) && !keys[..i].contains(&keys[i])).collect();
            // Only calls whose answers the model already has: it is done with tools.
            let only_repeats = fresh.is_empty()
                && calls.len() <= cap
                && calls.iter().all(|call| call.name != TOOL_SEARCH)
                && keys.iter().all(|key| repeats.answered_ok(key));
            if only_repeats && guard.answer_after_repeat && !asked.instead_of_repeat {
                asked.instead_of_repeat = true;
                let counts: Vec<usize> = keys.iter().map(|key| repeats.times_repeated(key) + 1).collect();
                match self.answer_instead_of_repeat(turn, &surface, &calls, &counts, &mut spent).await {
                    Instead::Answered(text) => {
                        if let Some(question) = self.ask_about_unused_values(&mut asked, turn).await {
                            self.transcript.messages.push(Message::user(question));
                            answer = text;
                            continue;
                        }
                        return Ok(self.finish(text, StopReason::Answered, turn, spent.usage));
                    }
                    Instead::Cancelled => return Ok(self.finish(answer, StopReason::Cancelled, turn, spent.usage)),
                    Instead::Failed(source) => {
                        return Err(RunError { source, transcript: self.transcript, turns: turn, usage: spent.usage });
                    }
                    // No text: the repeat is back in the transcript, answered below as usual.
                    Instead::Declined => {}
                }
            }
            // Each call races the run's cancellation (in `call`): one that finished keeps its
            // answer, one still running is abandoned and answered "cancelled".
            let answered = futures_util::future::join_all(fresh.iter().map(|&i| self.call(&calls[i]))).await;
            let cancelled = self.cancel.is_cancelled();
            let mut answers: Vec<Option<CallAnswer>> = (0..calls.len()).map(|_| None).collect();
            let mut ran_now = false;
            for (i, answer) in fresh.into_iter().zip(answered) {
                repeats.record(keys[i].clone(), &answer.result, answer.fruitless, answer.provisional);
                ran_now |= answer.ran_ok;
                answers[i] = Some(answer);
            }
            let (mut found, mut rejected, mut loaded, mut sources) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for (i, call) in calls.iter().enumerate() {
                let answer = match answers[i].take() {
                    Some(answer) => answer,
                    None if i >= cap => {
                        let reason = format!("past the turn's cap of {cap} tool calls");
                        self.agent.emit(RunEvent::ToolRejected { call_id: call.id.clone(), reason });
                        CallAnswer::just(self.agent.policy.caps.over_call_cap(calls.len()))
                    }
                    None => {
                        let (result, count, fruitless) =
                            repeats.repeat(&keys[i]).unwrap_or_else(|| (ToolResult::error("?"), 0, false));
                        let stopped = guard.max_repeats > 0 && (count >= guard.max_repeats || fruitless);
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
                sources.extend(answer.sources);
                let content = self.agent.policy.caps.bound_result(answer.result.to_model_text());
                if answer.ran_ok {
                    self.grounds.record(&call.name, &content);
                }
                self.transcript.messages.push(Message::Tool {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content,
                    is_error: answer.result.is_error,
                });
            }
            if cancelled {
                return Ok(self.finish(answer, StopReason::Cancelled, turn, spent.usage));
            }
            self.promote_names(found, Promotion::Searched);
            self.promote_names(rejected, Promotion::RejectedCall);
            self.promote_names(loaded, Promotion::UnknownName);
            self.promote_names(sources, Promotion::GroundingSource);
            answered_a_call |= ran_now;
            if ran_now {
                self.promote_after_tool_result().await;
            }
        }
        let turns = self.agent.policy.max_turns;
        Ok(self.finish(answer, StopReason::TurnLimit, turns, spent.usage))
    }

    /// The request for this turn: the conversation, the surface and the promoted tools, as
    /// the middleware leave them. The loop guard's last request carries no tools.
    async fn request(&self, surface: &[ToolSchema], callable_by_name: &[String], no_tools: bool) -> ModelRequest {
        let mut request = ModelRequest {
            messages: self.transcript.messages.clone(),
            tools: surface.to_vec(),
            callable_by_name: callable_by_name.to_vec(),
            max_response_bytes: Some(self.agent.policy.caps.max_response_bytes),
            destructive: Vec::new(),
        };
        if no_tools {
            request.tools.clear();
            request.callable_by_name.clear();
        } else {
            for middleware in &self.agent.middleware {
                middleware.before_model(&mut request).await;
            }
            request.tools.extend(self.promoted.iter().cloned());
        }
        let registry = &self.agent.registry;
        let names = request.tools.iter().map(|tool| &tool.name).chain(&request.callable_by_name);
        request.destructive = names
            .filter(|name| registry.get(name).is_some_and(|tool| tool.annotations().destructive))
            .cloned()
            .collect();
        for middleware in &self.agent.middleware {
            middleware.before_send(&mut request.messages, &request.tools).await;
        }
        request
    }

    /// Asks the model for this turn's answer. Shrinks the conversation first when
    /// `RunPolicy::context_window` says the request will not fit, and once more (then retries)
    /// when the provider reports a context-length error; races the run's cancellation; keeps
    /// to the usage limits.
    async fn ask(
        &mut self,
        turn: usize,
        surface: &[ToolSchema],
        callable_by_name: &[String],
        no_tools: bool,
        spent: &mut Spent,
    ) -> (ModelRequest, Asked) {
        let policy = &self.agent.policy;
        let mut request = self.request(surface, callable_by_name, no_tools).await;
        let tools_tokens = count_tool_schema_tokens(&request.tools, self.agent.counter());
        if let Some(window) = policy.context_window {
            let estimate = context::estimate(&request.messages, tools_tokens, self.agent.counter());
            let target = context::fill(window);
            if estimate > target {
                let done = self.shrink(tools_tokens, target);
                if !done.fits() {
                    return (request, Asked::Failed(overflow(done, None, Some(window as u64)).into()));
                }
                request = self.request(surface, callable_by_name, no_tools).await;
            }
        }
        let mut shrunk: Option<(Shrink, Option<u64>, Option<u64>)> = None;
        loop {
            if let Err(over) = policy.usage_limits.before_request(spent.requests) {
                return (request, Asked::Failed(over.into()));
            }
            spent.requests += 1;
            let outcome = match self.cancel.run_until_cancelled(self.agent.model.complete(&request)).await {
                Some(outcome) => outcome,
                None => return (request, Asked::Cancelled),
            };
            let mut response = match outcome {
                Ok(response) => response,
                Err(ModelError::ContextLength { message }) => {
                    if let Some((done, prompt, window)) = shrunk {
                        return (request, Asked::Failed(overflow(done, prompt, window).into()));
                    }
                    let (prompt, window) = context::reported_tokens(&message);
                    let window = window.or(policy.context_window.map(|w| w as u64));
                    let estimate = context::estimate(&request.messages, tools_tokens, self.agent.counter());
                    let done = self.shrink(tools_tokens, context::target(estimate, prompt, window));
                    if !done.cut_anything() {
                        tracing::debug!(target: "tinytools::run", %message, "nothing left to cut");
                        return (request, Asked::Failed(overflow(done, prompt, window).into()));
                    }
                    shrunk = Some((done, prompt, window));
                    request = self.request(surface, callable_by_name, no_tools).await;
                    continue;
                }
                Err(error) => return (request, Asked::Failed(error.into())),
            };
            for middleware in &self.agent.middleware {
                middleware.after_model(&mut response).await;
            }
            if let Some(reported) = response.usage {
                spent.usage.prompt_tokens += reported.prompt_tokens;
                spent.usage.completion_tokens += reported.completion_tokens;
            }
            self.agent.emit(RunEvent::ModelCalled { turn, tools: request.tools.len(), usage: response.usage });
            if let Err(over) = policy.usage_limits.after_response(spent.usage) {
                return (request, Asked::Failed(over.into()));
            }
            return (request, Asked::Answer(response));
        }
    }

    /// Shrinks the run's conversation toward `target` estimated tokens, keeps the transcript's
    /// tool patches pointing at the same messages, and says what was cut.
    fn shrink(&mut self, tools_tokens: usize, target: usize) -> Shrink {
        let (done, kept) = context::shrink(&mut self.transcript.messages, tools_tokens, self.agent.counter(), target);
        for patch in &mut self.transcript.patches {
            patch.at_message = kept.iter().filter(|&&i| i < patch.at_message).count();
        }
        self.agent.emit(RunEvent::ContextShrunk {
            compacted_results: done.compacted,
            dropped_messages: done.dropped,
            estimated_tokens_before: done.before,
            estimated_tokens_after: done.after,
        });
        done
    }
}

fn overflow(done: Shrink, prompt_tokens: Option<u64>, window: Option<u64>) -> ContextOverflow {
    ContextOverflow {
        estimated_tokens: done.after,
        target_tokens: done.target,
        prompt_tokens,
        window,
        compacted: done.compacted,
        dropped: done.dropped,
    }
}

impl Run<'_> {
    /// The model wrote again, and only, calls whose answers it already has (measured on
    /// Qwen2.5-Coder-1.5B: with the tools still offered it writes the same call again and
    /// again, and asked for its answer after three repeats it has lost the thread; offered no
    /// tools at the first repeat, it answers from the result). The repeat is set aside and the
    /// model asked once with no tools offered: a reply with text is the run's answer, and the
    /// transcript reads call, result, answer. A reply without text (the call written again) is
    /// asked once more, in words ([`guard::ANSWER_FROM_RESULT`]): measured on the same model,
    /// it otherwise got the repeat's answer back and ended "I'm sorry, but I can't assist with
    /// that." after `github_merge_pr` had merged. Otherwise the repeat goes back into the
    /// transcript ([`Instead::Declined`]) and is answered as before. `counts[i]` is how many
    /// times `calls[i]` has now been repeated, for its `RepeatedCall` event. A reply that
    /// describes the call again instead of its answer ([`Run::restates_a_call_that_ran`]) is
    /// asked once more the same way, and stays the answer if the model then says nothing.
    async fn answer_instead_of_repeat(
        &mut self,
        turn: usize,
        surface: &[ToolSchema],
        calls: &[ToolCall],
        counts: &[usize],
        spent: &mut Spent,
    ) -> Instead {
        let Some(repeat) = self.transcript.messages.pop() else {
            return Instead::Declined;
        };
        let silent = |asked: &Asked| matches!(asked, Asked::Answer(response) if response.content.trim().is_empty());
        let (_, mut asked) = self.ask(turn, surface, &[], true, spent).await;
        let restated = match &asked {
            Asked::Answer(response) => {
                self.restates_a_call_that_ran(&response.content).map(|name| (name.to_owned(), response.content.clone()))
            }
            _ => None,
        };
        if silent(&asked) || restated.is_some() {
            // No text (offered no tools, the model wrote the call again), or the call told
            // again instead of its answer: asked in words, once.
            if let Some((tool_name, content)) = &restated {
                self.agent.emit(RunEvent::CallRestated { tool_name: tool_name.clone() });
                self.transcript.messages.push(Message::Assistant { content: content.clone(), tool_calls: Vec::new() });
            }
            self.transcript.messages.push(Message::user(guard::ANSWER_FROM_RESULT));
            let again = self.ask(turn, surface, &[], true, spent).await.1;
            if silent(&again) {
                // Nothing more: the request goes, and a restatement stays the answer.
                self.transcript.messages.pop();
                if restated.is_some() {
                    self.transcript.messages.pop();
                } else {
                    asked = again;
                }
            } else {
                asked = again;
            }
        }
        match asked {
            Asked::Answer(response) if !response.content.trim().is_empty() => {
                for (call, &repeats) in calls.iter().zip(counts) {
                    self.agent.emit(RunEvent::RepeatedCall {
                        call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        repeats,
                        stopped: true,
                    });
                }
                let content = response.content.clone();
                self.transcript.messages.push(Message::Assistant { content, tool_calls: Vec::new() });
                Instead::Answered(response.content)
            }
            Asked::Answer(_) => {
                self.transcript.messages.push(repeat);
                Instead::Declined
            }
            Asked::Cancelled => Instead::Cancelled,
            Asked::Failed(source) => Instead::Failed(source),
        }
    }

    /// What a reply without a call comes to under the loop guard: a call it spells out in
    /// prose, a nudge (it names a tool, before any tool answered), a request for the answer
    /// (it is empty, an echo, or the call described again once it ran), or the run's answer.
    fn without_calls(
        &self,
        answer: &str,
        request: &ModelRequest,
        repeats: &Repeats,
        asked: &mut AskedAgain,
        answered_a_call: bool,
        turn: usize,
    ) -> Reply {
        let guard = self.agent.policy.loop_guard;
        let offered: Vec<&str> = request
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .chain(request.callable_by_name.iter().map(String::as_str))
            .collect();
        if guard.adopt_described_calls {
            let just_named: &[String] = match &asked.question {
                Some((at, named)) if at + 1 == turn && !self.said_before(answer) => named,
                _ => &[],
            };
            let adopted = self
                .described_call(answer, &offered, &request.destructive, just_named)
                .map(|(name, arguments)| ToolCall {
                    id: format!("adopted_{turn}"),
                    name,
                    arguments: arguments.to_string(),
                })
                .filter(|call| !repeats.contains(&Repeats::key(call)));
            if let Some(call) = adopted {
                self.agent.emit(RunEvent::CallAdopted { call_id: call.id.clone(), tool_name: call.name.clone() });
                return Reply::Adopted(call);
            }
        }
        match prose::named_tool(answer, offered.iter().copied()) {
            Some(name) if guard.nudge_described_calls && !asked.nudged && !answered_a_call => {
                asked.nudged = true;
                self.agent.emit(RunEvent::Nudged { tool_name: name.to_owned() });
                Reply::AskAgain(guard::nudge(name))
            }
            _ if guard.ask_after_empty_reply && !asked.after_empty => {
                let event = if answer.trim().is_empty() || self.echoes_a_tool_that_ran(answer, &offered) {
                    RunEvent::EmptyReply
                } else if let Some(name) = self.restates_a_call_that_ran(answer) {
                    RunEvent::CallRestated { tool_name: name.to_owned() }
                } else {
                    return Reply::Final;
                };
                asked.after_empty = true;
                self.agent.emit(event);
                let request = if answered_a_call { guard::ANSWER_FROM_RESULT } else { guard::EMPTY_REPLY };
                Reply::AskAgain(request.to_owned())
            }
            _ => Reply::Final,
        }
    }

    /// The question about values of the request no call has used, once per run, under
    /// [`LoopGuard::ask_about_unused_values`](super::LoopGuard::ask_about_unused_values); never
    /// at the last turn, which leaves no turn for the answer.
    async fn ask_about_unused_values(&mut self, asked: &mut AskedAgain, turn: usize) -> Option<String> {
        if !self.agent.policy.loop_guard.ask_about_unused_values
            || asked.unused_values
            || turn >= self.agent.policy.max_turns
        {
            return None;
        }
        let (question, count, named) = self.unused_values_question().await?;
        asked.unused_values = true;
        asked.question = Some((turn, named));
        self.agent.emit(RunEvent::UnusedValues { count });
        Some(question)
    }
}
