//! One model call of a run: build the request (the conversation, the surface and the promoted
//! tools, as the middleware leave them), ask the model within the usage limits, racing
//! cancellation, shrinking the conversation once on a context overflow; a streamed run's call
//! passes the model's text on as it comes.

use tracing::Instrument;

use super::context::{self, Shrink};
use super::error::{ContextOverflow, RunFailure};
use super::events::RunEvent;
use super::limits::Spent;
use super::spans::Chat;
use super::state::Run;
use super::stream::RunStreamItem;
use crate::ToolSchema;
use crate::model::{Message, ModelError, ModelRequest, ModelResponse, NativeDeferral, RequestPurpose, StreamEvent};
use crate::schema::count_tool_schema_tokens;

/// What every request of a run offers the model, fixed at the run's start: the surface's
/// tools (and `tool_search`, when the run answers it), the deferred tools callable by name,
/// and what the provider defers itself in provider-native mode.
pub(super) struct Offer {
    pub(super) tools: Vec<ToolSchema>,
    pub(super) callable_by_name: Vec<String>,
    pub(super) native: Option<NativeDeferral>,
}

/// What one request came to.
pub(super) enum Asked {
    Answer(ModelResponse),
    Cancelled,
    Failed(RunFailure),
}

impl Run<'_> {
    /// What the run's requests offer.
    pub(super) fn offer(&self) -> Offer {
        Offer {
            tools: self.bridge.advertised_offering(self.setup.counter, &self.candidates),
            callable_by_name: self.callable_by_name(),
            native: self.bridge.native_deferral(),
        }
    }

    /// The request for this turn: the conversation, the surface and the promoted tools, as
    /// the middleware leave them. A request after feedback that withholds tools carries none,
    /// but keeps its native deferral: a provider that loaded deferred tools in the
    /// conversation needs their declarations for as long as the conversation names them.
    async fn build_request(&self, offer: &Offer, no_tools: bool) -> ModelRequest {
        let mut messages = Vec::with_capacity(self.transcript.messages.len() + 1);
        messages.extend(self.system_prompt().map(Message::system));
        messages.extend(self.transcript.messages.iter().cloned());
        let output = self.setup.output.filter(|output| output.native).map(|output| output.schema.clone());
        let mut request = ModelRequest {
            messages,
            tools: offer.tools.clone(),
            callable_by_name: offer.callable_by_name.clone(),
            max_response_bytes: Some(self.policy().caps.max_response_bytes),
            destructive: Vec::new(),
            native_deferral: offer.native.clone(),
            purpose: RequestPurpose::Turn,
            output,
        };
        if no_tools {
            request.tools.clear();
            request.callable_by_name.clear();
        } else {
            for middleware in self.setup.middleware {
                middleware.before_model(&mut request).await;
            }
            request.tools.extend(self.promoted.iter().cloned());
        }
        let registry = &self.setup.registry;
        let names = request.tools.iter().map(|tool| &tool.name).chain(&request.callable_by_name);
        request.destructive = names
            .filter(|name| registry.get(name).is_some_and(|tool| tool.annotations().destructive))
            .cloned()
            .collect();
        for middleware in self.setup.middleware {
            middleware.before_send(&mut request.messages, &request.tools).await;
        }
        request
    }

    /// The system message the run puts first on every request: the host's instructions, and
    /// a typed run's output schema in words for a model that cannot take it natively.
    fn system_prompt(&self) -> Option<String> {
        let instructions = self.setup.instructions.map(|instructions| instructions.render(&self.view()));
        let asked = self.setup.output.filter(|output| !output.native).map(super::output::OutputSpec::prompt);
        match (instructions, asked) {
            (Some(text), Some(asked)) => Some(format!("{text}\n\n{asked}")),
            (text, asked) => text.or(asked),
        }
    }

    /// Asks the model for this turn's answer. Shrinks the conversation first when
    /// `RunPolicy::context_window` says the request will not fit, and once more (then retries)
    /// when the provider reports a context-length error; races the run's cancellation; keeps
    /// to the usage limits.
    pub(super) async fn ask(
        &mut self,
        turn: usize,
        offer: &Offer,
        no_tools: bool,
        spent: &mut Spent,
    ) -> (ModelRequest, Asked) {
        let policy = self.setup.policy;
        let mut request = self.build_request(offer, no_tools).await;
        let tools_tokens = count_tool_schema_tokens(&request.tools, self.setup.counter);
        if let Some(window) = policy.context_window {
            let estimate = context::estimate(&request.messages, tools_tokens, self.setup.counter);
            let target = context::fill(window);
            if estimate > target {
                let done = self.shrink(tools_tokens, target);
                if !done.fits() {
                    return (request, Asked::Failed(overflow(done, None, Some(window as u64), None).into()));
                }
                request = self.build_request(offer, no_tools).await;
            }
        }
        let mut shrunk: Option<(Shrink, Option<u64>, Option<u64>)> = None;
        loop {
            if let Err(over) = policy.usage_limits.before_request(spent.requests) {
                return (request, Asked::Failed(over.into()));
            }
            spent.requests += 1;
            let Some(outcome) = self.request_once(turn, &request).await else {
                return (request, Asked::Cancelled);
            };
            let mut response = match outcome {
                Ok(response) => response,
                Err(ModelError::ContextLength { message }) => {
                    if let Some((done, prompt, window)) = shrunk {
                        return (request, Asked::Failed(overflow(done, prompt, window, Some(message)).into()));
                    }
                    let (prompt, window) = context::reported_tokens(&message);
                    let window = window.or(policy.context_window.map(|w| w as u64));
                    let estimate = context::estimate(&request.messages, tools_tokens, self.setup.counter);
                    let done = self.shrink(tools_tokens, context::target(estimate, prompt, window));
                    if !done.cut_anything() {
                        tracing::debug!(target: "tinytools::run", %message, "nothing left to cut");
                        return (request, Asked::Failed(overflow(done, prompt, window, Some(message)).into()));
                    }
                    shrunk = Some((done, prompt, window));
                    request = self.build_request(offer, no_tools).await;
                    continue;
                }
                Err(error) => return (request, Asked::Failed(error.into())),
            };
            for middleware in self.setup.middleware {
                middleware.after_model(&mut response).await;
            }
            if let Some(reported) = response.usage {
                spent.usage += reported;
            }
            self.emit(RunEvent::ModelCalled { turn, tools: request.tools.len(), usage: response.usage });
            if let Err(over) = policy.usage_limits.after_response(spent.usage) {
                return (request, Asked::Failed(over.into()));
            }
            return (request, Asked::Answer(response));
        }
    }

    /// One model request in its span (`chat {model}`), racing the run's cancellation: `None`
    /// when the run was cancelled first.
    async fn request_once(&self, turn: usize, request: &ModelRequest) -> Option<Result<ModelResponse, ModelError>> {
        let chat = Chat::start(self.setup.model, request, self.setup.tap.is_some(), self.policy().capture);
        let responding = self.respond(turn, request, &chat).instrument(chat.span.clone());
        let outcome = self.cancel.run_until_cancelled(responding).await;
        match &outcome {
            Some(Ok(response)) => chat.answered(response),
            Some(Err(error)) => chat.failed(error),
            None => chat.cancelled(),
        }
        outcome
    }

    /// One model call: [`complete`](crate::model::ChatModel::complete), or, in a streamed run,
    /// the model's stream, its text and the calls it begins passed on as they come (the first
    /// piece's time recorded on `chat`).
    async fn respond(&self, turn: usize, request: &ModelRequest, chat: &Chat) -> Result<ModelResponse, ModelError> {
        let Some(tap) = self.setup.tap else {
            return self.setup.model.complete(request).await;
        };
        let mut first = true;
        self.setup
            .model
            .stream(request)
            .into_response_with(|event| {
                if std::mem::take(&mut first) {
                    chat.first_chunk();
                }
                match event {
                    StreamEvent::TextDelta(text) => tap.push(RunStreamItem::TextDelta { turn, text: text.clone() }),
                    StreamEvent::ToolCallStarted { index, id, name } => tap.push(RunStreamItem::ToolCallStarted {
                        turn,
                        index: *index,
                        id: id.clone(),
                        name: name.clone(),
                    }),
                    _ => {}
                }
            })
            .await
    }

    /// Shrinks the run's conversation toward `target` estimated tokens, keeps the transcript's
    /// tool patches pointing at the same messages, and says what was cut.
    fn shrink(&mut self, tools_tokens: usize, target: usize) -> Shrink {
        let (done, kept) = context::shrink(&mut self.transcript.messages, tools_tokens, self.setup.counter, target);
        for patch in &mut self.transcript.patches {
            patch.at_message = kept.iter().filter(|&&i| i < patch.at_message).count();
        }
        self.emit(RunEvent::ContextShrunk {
            compacted_results: done.compacted,
            dropped_messages: done.dropped,
            estimated_tokens_before: done.before,
            estimated_tokens_after: done.after,
        });
        done
    }
}

fn overflow(done: Shrink, prompt_tokens: Option<u64>, window: Option<u64>, said: Option<String>) -> ContextOverflow {
    ContextOverflow {
        provider_message: said,
        estimated_tokens: done.after,
        target_tokens: done.target,
        prompt_tokens,
        window,
        compacted: done.compacted,
        dropped: done.dropped,
    }
}
