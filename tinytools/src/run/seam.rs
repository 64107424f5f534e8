//! Where the loop asks its [aids](super::aids), and the core's terms for what they may do:
//! a taken or adjusted call of a tool with side effects is ignored unless the aid was built
//! for it; feedback is a typed message that costs a turn (none is sent at the last turn);
//! promotions reach only deferred tools of the run's surface; every action is an event.

use std::sync::Arc;

use super::aids::{Aid, CallAction, Feedback, ReplyAction};
use super::events::{AidAction, Promotion, RunEvent};
use super::state::Run;
use crate::ToolResult;
use crate::model::ToolCall;
use crate::tool::TOOL_SEARCH;

/// What the next request offers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// The surface and the promoted tools.
    Tools,
    /// No tools (an aid's feedback asked for that).
    NoTools,
    /// No tools, and the reply ends the run.
    Final,
}

/// What the loop does with a reply without calls.
pub(super) enum OnReply {
    /// It is the run's answer.
    Answer,
    /// Feedback was sent; the next request offers this.
    Feedback(Next),
    /// Run this call the aid took for it.
    Call {
        /// The aid.
        aid: &'static str,
        /// The call.
        call: ToolCall,
    },
}

/// Arguments an aid asked a call to run on instead of the model's.
pub(super) struct Adjustment {
    /// The aid.
    pub(super) aid: &'static str,
    /// The arguments (JSON text).
    pub(super) arguments: String,
}

/// What becomes of one call.
pub(super) enum Fate {
    /// Run it, on other arguments if an aid adjusted them, its result led by the aid's note.
    Run { adjusted: Option<Adjustment>, note: Option<String> },
    /// Answered by an aid without running.
    Answer { result: ToolResult, promote: Vec<String>, aid: &'static str },
    /// Past the turn's cap: not run.
    OverCap,
}

impl Run<'_> {
    /// Asks the aids about a reply without calls, in order; the first that does not accept
    /// decides. At the last turn nothing is asked: no turn is left for an answer.
    pub(super) async fn on_reply(&mut self, reply: &str) -> OnReply {
        if self.turn >= self.policy().max_turns {
            return OnReply::Answer;
        }
        let policy = self.setup.policy;
        for aid in policy.aids.iter() {
            let action = aid.on_reply(&self.view(), reply).await;
            match action {
                ReplyAction::Accept => {}
                ReplyAction::Feedback(feedback) => return OnReply::Feedback(self.send(aid.name(), feedback)),
                ReplyAction::TakeCall(call) => {
                    if self.may_take(aid, &call.name) {
                        let action = AidAction::TookCall { call_id: call.id.clone(), tool_name: call.name.clone() };
                        self.emit(RunEvent::AidActed { aid: aid.name().to_owned(), action });
                        return OnReply::Call { aid: aid.name(), call };
                    }
                    tracing::debug!(target: "tinytools::run", aid = aid.name(), tool = %call.name, "taken call ignored");
                }
            }
        }
        OnReply::Answer
    }

    /// The fate of one call: the aids are asked in order (only about a name the model may
    /// call); the first that does not let it run as it is decides.
    pub(super) async fn fate(&self, call: &ToolCall) -> Fate {
        let known =
            self.bridge.surface().admits(&call.name) || call.name == TOOL_SEARCH && self.bridge.answers_search();
        if known {
            for aid in self.policy().aids.iter() {
                match aid.on_call(&self.view(), call).await {
                    CallAction::Run => {}
                    CallAction::Answer { result, promote } => {
                        let action = AidAction::AnsweredCall { call_id: call.id.clone(), tool_name: call.name.clone() };
                        self.emit(RunEvent::AidActed { aid: aid.name().to_owned(), action });
                        return Fate::Answer { result, promote, aid: aid.name() };
                    }
                    CallAction::RunWith { arguments, note } if self.may_adjust(aid, &call.name) => {
                        let action = AidAction::AdjustedCall { call_id: call.id.clone(), tool_name: call.name.clone() };
                        self.emit(RunEvent::AidActed { aid: aid.name().to_owned(), action });
                        return Fate::Run {
                            adjusted: Some(Adjustment { aid: aid.name(), arguments }),
                            note: Some(note),
                        };
                    }
                    CallAction::RunWith { .. } => {
                        tracing::debug!(target: "tinytools::run", aid = aid.name(), tool = %call.name, "adjusted call ignored");
                    }
                }
            }
        }
        Fate::Run { adjusted: None, note: None }
    }

    /// After a turn's calls were answered: the first aid with feedback sends it (never at the
    /// last turn). Returns what the next request offers, when one did.
    pub(super) async fn after_calls(&mut self) -> Option<Next> {
        if self.turn >= self.policy().max_turns {
            return None;
        }
        let policy = self.setup.policy;
        for aid in policy.aids.iter() {
            if let Some(feedback) = aid.after_calls(&self.view()).await {
                return Some(self.send(aid.name(), feedback));
            }
        }
        None
    }

    /// Whether `aid` may run a call of `name` that the model did not emit as is: a name offered
    /// this turn that cannot change anything, or any offered name for an aid built for side
    /// effects.
    fn may_take(&self, aid: &Arc<dyn Aid>, name: &str) -> bool {
        let offered = self.offered.iter().any(|offered| offered == name);
        let read_only = self.bridge.is_read_only(name);
        offered && (read_only || aid.takes_side_effect_calls() && self.bridge.surface().admits(name))
    }

    /// Whether `aid` may run the model's call of `name` on other arguments: a tool that cannot
    /// change anything, or any tool for an aid built for side effects.
    fn may_adjust(&self, aid: &Arc<dyn Aid>, name: &str) -> bool {
        self.bridge.is_read_only(name) || aid.takes_side_effect_calls()
    }

    /// Writes an aid's feedback into the conversation, promotes what it names, and says what
    /// the next request offers.
    fn send(&mut self, aid: &'static str, feedback: Feedback) -> Next {
        *self.feedback.entry(aid).or_default() += 1;
        let action = AidAction::Feedback { without_tools: !feedback.offer_tools, final_answer: feedback.final_answer };
        self.emit(RunEvent::AidActed { aid: aid.to_owned(), action });
        self.transcript.messages.push(feedback.message());
        self.promote_names(feedback.promote, Promotion::Aid { aid: aid.to_owned() });
        match (feedback.final_answer, feedback.offer_tools) {
            (true, _) => Next::Final,
            (false, false) => Next::NoTools,
            (false, true) => Next::Tools,
        }
    }
}
