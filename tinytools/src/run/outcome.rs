//! How a run ended: [`RunOutcome`] and its [`StopReason`].

use serde_json::Value;

use super::transcript::Transcript;
use crate::model::Usage;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without calling a tool.
    Answered,
    /// `RunPolicy::max_turns` model calls were made.
    TurnLimit,
    /// The run's cancellation token fired.
    Cancelled,
    /// The model kept repeating itself: an [aid](super::aids) (the repeat stop) asked for its
    /// final answer with no tools offered, and the answer is that reply.
    RepeatedCalls,
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The model's last text.
    pub answer: String,
    /// Why the run stopped.
    pub stop: StopReason,
    /// Everything needed to resume it.
    pub transcript: Transcript,
    /// Model calls made.
    pub turns: usize,
    /// Usage summed over the calls that reported it.
    pub usage: Usage,
    /// A typed run's answer as the JSON value that matched its output schema
    /// ([`Agent::run_typed`](super::Agent::run_typed)); `None` for an untyped run.
    pub output: Option<Value>,
}
