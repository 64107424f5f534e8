//! [`NudgeDescribedCalls`]: one nudge when a reply describes a call instead of making it.

use super::{Aid, Feedback, ReplyAction, RunView, prose};
use crate::model::Message;

/// Once a run, before any tool has answered without error, a reply without a call that names
/// a tool the model may call gets one feedback: make the call it described, or answer. In no
/// preset: measured on a small model it drew the same sentence back far more often than a
/// call (`docs/aids.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NudgeDescribedCalls;

#[async_trait::async_trait]
impl Aid for NudgeDescribedCalls {
    fn name(&self) -> &'static str {
        "nudge_described_calls"
    }

    async fn on_reply(&self, view: &RunView<'_>, reply: &str) -> ReplyAction {
        let answered = view.messages().iter().any(|m| matches!(m, Message::Tool { is_error: false, .. }));
        if view.feedback_sent(self.name()) > 0 || answered {
            return ReplyAction::Accept;
        }
        match prose::named_tool(reply, view.offered()) {
            Some(name) => ReplyAction::Feedback(Feedback::new(format!(
                "Your reply described calling `{name}` instead of calling it. If a tool fits, call it now, with the \
                 arguments its parameters describe; otherwise answer the user."
            ))),
            None => ReplyAction::Accept,
        }
    }
}
