//! Context overflow: shrinking a conversation that no longer fits the model's window.
//!
//! When the provider reports a context-length error, or `RunPolicy::context_window` says the
//! next request will not fit, the run shrinks its conversation once and tries again:
//! 1. old tool results (all but the latest turn's) are replaced by a note of their size;
//! 2. then the oldest turns are dropped, whole — an assistant turn with its tool results, a
//!    reply, an earlier user message — never the system prompt, the latest user message or
//!    the latest turn, and never a tool call without its result;
//! 3. then the latest turn's results are compacted too.
//!
//! It stops as soon as the estimate fits the target. What was cut is a `ContextShrunk` event.

use crate::model::Message;
use crate::schema::TokenCounter;

/// The share of the window a request may fill: the rest is the model's answer, and the
/// run's estimate of what the provider counts.
const FILL: f64 = 0.9;

/// The note a compacted tool result is replaced by.
fn note(bytes: usize) -> String {
    format!("[earlier tool result removed to fit the context window: {bytes} bytes]")
}

/// What one shrink did, in the run's token estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Shrink {
    pub(super) compacted: usize,
    pub(super) dropped: usize,
    pub(super) before: usize,
    pub(super) after: usize,
    pub(super) target: usize,
}

impl Shrink {
    pub(super) fn fits(&self) -> bool {
        self.after <= self.target
    }

    pub(super) fn cut_anything(&self) -> bool {
        self.compacted > 0 || self.dropped > 0
    }
}

/// The token counts a provider's context-length message states, as `(prompt, window)`:
/// OpenAI's "maximum context length is 128000 tokens. However, your messages resulted in
/// 130417 tokens", llama.cpp's "(n_prompt_tokens 8804, n_ctx 8192)". Numbers under 256 are
/// not token counts.
pub(super) fn reported_tokens(message: &str) -> (Option<u64>, Option<u64>) {
    let mut numbers: Vec<u64> = Vec::new();
    let mut digits = String::new();
    for c in message.chars().chain(std::iter::once(' ')) {
        match c {
            '0'..='9' => digits.push(c),
            ',' | '_' if !digits.is_empty() => {}
            _ => {
                if let Ok(n) = digits.parse::<u64>()
                    && n >= 256
                {
                    numbers.push(n);
                }
                digits.clear();
            }
        }
    }
    match numbers.as_slice() {
        [] => (None, None),
        [window] => (None, Some(*window)),
        _ => {
            let (min, max) = numbers.iter().fold((u64::MAX, 0), |(lo, hi), &n| (lo.min(n), hi.max(n)));
            if max > min { (Some(max), Some(min)) } else { (None, Some(min)) }
        }
    }
}

/// The most a request may be estimated at for a `window` of tokens.
pub(super) fn fill(window: usize) -> usize {
    (window as f64 * FILL) as usize
}

/// The estimate a shrunk request must reach. `estimate` is the run's estimate of the request
/// that failed (or would); `prompt` and `window` what the provider or the policy said.
pub(super) fn target(estimate: usize, prompt: Option<u64>, window: Option<u64>) -> usize {
    let target = match (prompt, window) {
        // Scale the window into the run's estimate, in case the two count differently.
        (Some(prompt), Some(window)) if prompt > 0 => estimate as f64 * window as f64 / prompt as f64 * FILL,
        (_, Some(window)) => window as f64 * FILL,
        _ => estimate as f64 / 2.0,
    };
    (target as usize).min(estimate.saturating_sub(1))
}

/// The estimated tokens of `messages` plus `tools_tokens`.
pub(super) fn estimate(messages: &[Message], tools_tokens: usize, counter: &dyn TokenCounter) -> usize {
    messages.iter().map(|m| m.count_tokens(counter)).sum::<usize>() + tools_tokens
}

/// Shrinks `messages` toward `target` estimated tokens (see the module docs). Returns what it
/// did and, for each message kept, its index before the shrink.
pub(super) fn shrink(
    messages: &mut Vec<Message>,
    tools_tokens: usize,
    counter: &dyn TokenCounter,
    target: usize,
) -> (Shrink, Vec<usize>) {
    let before = estimate(messages, tools_tokens, counter);
    let mut done = Shrink { before, after: before, target, ..Shrink::default() };
    let units = units(messages);
    let latest = units.last().cloned().unwrap_or(0..0);
    let mut kept: Vec<usize> = (0..messages.len()).collect();
    let refresh = |messages: &[Message], done: &mut Shrink| done.after = estimate(messages, tools_tokens, counter);

    // 1. Old tool results.
    done.compacted += compact(&mut messages[..latest.start]);
    refresh(messages, &mut done);
    // 2. The oldest turns, whole; each drop takes its messages' own cost off the estimate.
    let latest_user = messages.iter().rposition(|m| matches!(m, Message::User { .. }));
    let mut droppable: Vec<std::ops::Range<usize>> = units
        .iter()
        .filter(|unit| **unit != latest && droppable(&messages[(*unit).clone()], unit.start, latest_user))
        .cloned()
        .collect();
    droppable.reverse();
    let mut gone = vec![false; messages.len()];
    while !done.fits() {
        let Some(unit) = droppable.pop() else { break };
        for i in unit.clone() {
            gone[i] = true;
            done.after = done.after.saturating_sub(messages[i].count_tokens(counter));
        }
        done.dropped += unit.len();
    }
    if done.dropped > 0 {
        let mut i = 0;
        messages.retain(|_| {
            i += 1;
            !gone[i - 1]
        });
        kept.retain(|&i| !gone[i]);
    }
    // 3. The latest turn's results.
    if !done.fits() {
        let start = kept.iter().position(|&i| i >= latest.start).unwrap_or(messages.len());
        done.compacted += compact(&mut messages[start..]);
        refresh(messages, &mut done);
    }
    (done, kept)
}

/// Replaces every tool result longer than its note with the note; returns how many.
fn compact(messages: &mut [Message]) -> usize {
    let mut compacted = 0;
    for message in messages {
        if let Message::Tool { content, .. } = message {
            let replacement = note(content.len());
            if content.len() > replacement.len() {
                *content = replacement;
                compacted += 1;
            }
        }
    }
    compacted
}

/// The conversation's units, in order: one message each, except an assistant turn with calls,
/// which is one unit with the tool results that follow it, and the searches a provider ran
/// for an assistant turn and the items only it reads (reasoning), which are one unit with that
/// turn.
fn units(messages: &[Message]) -> Vec<std::ops::Range<usize>> {
    let mut units = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let mut turn = i;
        while turn < messages.len() && matches!(messages[turn], Message::ProviderSearch(_) | Message::ProviderItems(_))
        {
            turn += 1;
        }
        let mut end = match messages.get(turn) {
            Some(Message::Assistant { .. }) => turn + 1,
            _ => turn.max(i + 1),
        };
        // An aid's call is one unit with its result, like an assistant turn with calls.
        let calls = match messages.get(turn) {
            Some(Message::Assistant { tool_calls, .. }) => !tool_calls.is_empty(),
            Some(Message::AidCall { .. }) => {
                end = turn + 1;
                true
            }
            _ => false,
        };
        if calls {
            while end < messages.len() && matches!(messages[end], Message::Tool { .. }) {
                end += 1;
            }
        }
        units.push(i..end);
        i = end;
    }
    units
}

/// Whether a unit may be dropped: not a system message, not the latest user message (at
/// `latest_user`).
fn droppable(unit: &[Message], start: usize, latest_user: Option<usize>) -> bool {
    match unit.first() {
        Some(Message::System { .. }) => false,
        Some(Message::User { .. }) => latest_user != Some(start),
        Some(_) => true,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use crate::schema::EstimatedTokens;

    fn turn(id: &str, result: &str) -> [Message; 2] {
        let call = ToolCall { id: id.into(), name: "lookup".into(), arguments: "{}".into() };
        [
            Message::Assistant { content: String::new(), tool_calls: vec![call] },
            Message::Tool { call_id: id.into(), name: "lookup".into(), content: result.into(), is_error: false },
        ]
    }

    fn conversation() -> Vec<Message> {
        let big = "x".repeat(4_000);
        let mut messages = vec![Message::system("Be brief."), Message::user("first question")];
        messages.extend(turn("a", &big));
        messages.push(Message::Assistant { content: "first answer".into(), tool_calls: Vec::new() });
        messages.push(Message::user("second question"));
        messages.extend(turn("b", &big));
        messages.extend(turn("c", &big));
        messages
    }

    #[test]
    fn the_runs_feedback_goes_before_the_users_latest_words() {
        let mut messages = conversation();
        messages.push(Message::feedback("The tool has answered (above). Now tell the user what it answered."));
        messages.extend(turn("d", "small"));
        let (_, _) = shrink(&mut messages, 0, &EstimatedTokens, 10);
        assert!(messages.iter().any(|m| matches!(m, Message::User { content } if content == "second question")));
        assert!(!messages.iter().any(|m| matches!(m, Message::Feedback { .. })), "{messages:?}");
    }

    #[test]
    fn reported_counts_are_read_from_openai_and_llama_messages() {
        let openai =
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130417 tokens.";
        assert_eq!(reported_tokens(openai), (Some(130_417), Some(128_000)));
        assert_eq!(
            reported_tokens("exceeds the available context size (n_prompt_tokens 8,804, n_ctx 8,192)"),
            (Some(8_804), Some(8_192))
        );
        assert_eq!(reported_tokens("maximum context length is 8192 tokens"), (None, Some(8_192)));
        assert_eq!(reported_tokens("Context size has been exceeded."), (None, None));
    }

    #[test]
    fn old_results_go_first_and_nothing_else_when_that_is_enough() {
        let mut messages = conversation();
        let before = estimate(&messages, 0, &EstimatedTokens);
        let (done, kept) = shrink(&mut messages, 0, &EstimatedTokens, before - 1_500);
        assert!(done.fits() && done.compacted == 2 && done.dropped == 0, "{done:?}");
        assert_eq!(kept.len(), messages.len());
        let Message::Tool { content, .. } = &messages[9] else { panic!("{messages:?}") };
        assert_eq!(content.len(), 4_000, "the latest turn's result is whole");
    }

    #[test]
    fn then_whole_turns_go_oldest_first_keeping_the_system_prompt_and_the_latest_question() {
        let mut messages = conversation();
        let (done, kept) = shrink(&mut messages, 0, &EstimatedTokens, 1_050);
        assert!(done.fits() && done.dropped > 0, "{done:?}");
        assert!(matches!(&messages[0], Message::System { .. }));
        assert!(messages.iter().any(|m| matches!(m, Message::User { content } if content == "second question")));
        assert!(!messages.iter().any(|m| matches!(m, Message::User { content } if content == "first question")));
        // Every kept call still has its result right after it.
        for (i, message) in messages.iter().enumerate() {
            if let Message::Assistant { tool_calls, .. } = message {
                for (j, call) in tool_calls.iter().enumerate() {
                    assert!(matches!(&messages[i + 1 + j], Message::Tool { call_id, .. } if *call_id == call.id));
                }
            }
            if let Message::Tool { .. } = message {
                assert!(i > 0 && matches!(messages[i - 1], Message::Assistant { .. } | Message::Tool { .. }));
            }
        }
        assert_eq!(kept.len(), messages.len());
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_providers_search_stays_with_the_turn_it_served() {
        let search =
            crate::model::ProviderSearch::new("anthropic:tool_search_tool_bm25", "lookup", vec!["lookup".into()]);
        let mut messages = vec![Message::user("q"), Message::ProviderSearch(search.clone())];
        messages.extend(turn("a", "r"));
        messages.push(Message::ProviderSearch(search));
        messages.push(Message::Assistant { content: "done".into(), tool_calls: Vec::new() });
        assert_eq!(units(&messages), [0..1, 1..4, 4..6]);
    }

    #[test]
    fn a_providers_reasoning_stays_with_the_turn_it_led_to() {
        let reasoning =
            crate::model::ProviderItems::new("openai:responses", vec![serde_json::json!({"type": "reasoning"})]);
        let mut messages = vec![Message::user("q"), Message::ProviderItems(reasoning.clone())];
        messages.extend(turn("a", "r"));
        messages.push(Message::ProviderItems(reasoning));
        messages.push(Message::Assistant { content: "done".into(), tool_calls: Vec::new() });
        assert_eq!(units(&messages), [0..1, 1..4, 4..6]);
    }

    #[test]
    fn a_conversation_that_cannot_fit_says_so() {
        let mut messages = conversation();
        let (done, _) = shrink(&mut messages, 0, &EstimatedTokens, 5);
        assert!(!done.fits() && done.cut_anything(), "{done:?}");
        assert_eq!(messages.len(), 4, "system, latest question, the latest turn's call and its result: {messages:?}");
    }

    #[test]
    fn the_target_scales_the_window_into_the_runs_estimate() {
        assert_eq!(target(10_000, Some(10_000), Some(8_000)), 7_200);
        assert_eq!(target(10_000, None, Some(8_000)), 7_200);
        assert_eq!(target(10_000, None, None), 5_000);
        assert_eq!(target(100, None, Some(8_000)), 99, "always below what failed");
    }
}
