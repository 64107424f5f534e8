//! Repeated calls: [`StopRepeats`] ends a run that gets the same result for the same call over
//! and over; [`ReplayRepeats`] answers a repeat of a call that worked from its first answer.

use super::super::view::call_key;
use super::{ANSWER_FROM_RESULT, Aid, CallAction, Feedback, RunView};
use crate::ToolResult;
use crate::model::ToolCall;
use crate::tool::TOOL_SEARCH;

/// Ends the run when one call (the same name and arguments, whatever their key order) has
/// returned the same result `n` times in a row: one feedback asks for the final answer with
/// no tools offered, and that reply ends the run. Polling a status that changes, or reading a
/// file after writing it, runs every time. In every preset but `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopRepeats {
    times: usize,
}

impl StopRepeats {
    /// Stops after `times` identical results of one call in a row (at least 2).
    pub fn after(times: usize) -> Self {
        Self { times: times.max(2) }
    }
}

impl Default for StopRepeats {
    /// Three identical results in a row.
    fn default() -> Self {
        Self::after(3)
    }
}

/// The request that ends a run whose model kept repeating itself.
const FINAL_ANSWER: &str = "The same tool call has returned the same result several times in a row. Do not call \
any tool now: answer the user with what you have, or tell them it cannot be done with these tools.";

#[async_trait::async_trait]
impl Aid for StopRepeats {
    fn name(&self) -> &'static str {
        "stop_repeats"
    }

    async fn after_calls(&self, view: &RunView<'_>) -> Option<Feedback> {
        if view.feedback_sent(self.name()) > 0 {
            return None;
        }
        let calls = view.calls();
        let latest = calls.len().saturating_sub(view.latest_calls())..calls.len();
        let stuck = latest.into_iter().any(|pos| {
            let key = call_key(calls[pos].0);
            let results: Vec<Option<&str>> = calls[..=pos]
                .iter()
                .filter(|(call, _)| call_key(call) == key)
                .map(|(_, answer)| answer.map(|(content, _)| content))
                .collect();
            let last = results.last().copied().flatten();
            last.is_some() && results.iter().rev().take_while(|result| **result == last).count() >= self.times
        });
        stuck.then(|| Feedback::new(FINAL_ANSWER).final_answer())
    }
}

/// Answers a repeat of a call that already worked (not `tool_search`) from its first answer,
/// behind a note, instead of running it again; when a turn made only such repeats, asks once
/// for the answer with no tools offered. For models that lose the thread and call the same
/// look-up again instead of answering; wrong for tools whose answers change (polling).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayRepeats;

/// The note a replayed answer starts with.
const REPLAYED: &str = "You already made this exact call in this conversation and it worked; its answer is \
below again. Do not make it again: make the next call the user's request needs, or, if nothing is left, answer \
the user.";

#[async_trait::async_trait]
impl Aid for ReplayRepeats {
    fn name(&self) -> &'static str {
        "replay_repeats"
    }

    async fn on_call(&self, view: &RunView<'_>, call: &ToolCall) -> CallAction {
        if call.name == TOOL_SEARCH {
            return CallAction::Run;
        }
        let key = call_key(call);
        let first = view.calls().into_iter().find_map(|(earlier, answer)| match answer {
            Some((content, false)) if call_key(earlier) == key => Some(content.to_owned()),
            _ => None,
        });
        match first {
            Some(first) => CallAction::Answer {
                result: ToolResult::text(format!("{REPLAYED}\n\n{}", strip_note(&first))),
                promote: Vec::new(),
            },
            None => CallAction::Run,
        }
    }

    async fn after_calls(&self, view: &RunView<'_>) -> Option<Feedback> {
        if view.feedback_sent(self.name()) > 0 {
            return None;
        }
        let calls = view.calls();
        let latest = &calls[calls.len().saturating_sub(view.latest_calls())..];
        let only_replays = !latest.is_empty()
            && latest
                .iter()
                .all(|(_, answer)| matches!(answer, Some((content, false)) if content.starts_with(REPLAYED)));
        only_replays.then(|| Feedback::new(ANSWER_FROM_RESULT).without_tools())
    }
}

/// A first answer without the replay note (a replay of a replay quotes the original).
fn strip_note(content: &str) -> &str {
    content.strip_prefix(REPLAYED).map_or(content, |rest| rest.trim_start_matches('\n'))
}
