//! What one run may spend ([`UsageLimits`]) and the sizes it caps ([`RunCaps`]).

use crate::ToolResult;
use crate::model::Usage;

/// What the run has spent so far.
#[derive(Default)]
pub(super) struct Spent {
    pub(super) usage: Usage,
    pub(super) requests: u64,
}

/// How much one run may spend, as Pydantic AI's `UsageLimits`: model requests, and total
/// tokens as the provider reports them. Past either, the run ends with
/// [`RunFailure::UsageLimit`](super::RunFailure::UsageLimit), and the [`RunError`](super::RunError)
/// carries the usage so far. Both are off by default (`RunPolicy::max_turns` still bounds a run).
///
/// The request limit is checked before each model call, so it is never exceeded; the token
/// limit after each answer, since only the answer says what the request cost.
///
/// ```
/// use tinytools::run::{RunPolicy, UsageLimits};
///
/// let limits = UsageLimits::default().with_max_requests(4).with_max_total_tokens(50_000);
/// let policy = RunPolicy::default().with_usage_limits(limits);
/// assert_eq!((policy.usage_limits.max_requests, policy.usage_limits.max_total_tokens), (Some(4), Some(50_000)));
/// assert_eq!(RunPolicy::default().usage_limits, UsageLimits::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UsageLimits {
    /// The most model requests in the run (a context-overflow retry counts).
    pub max_requests: Option<u64>,
    /// The most prompt plus completion tokens over the run's requests.
    pub max_total_tokens: Option<u64>,
}

/// Which usage limit a run reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageLimit {
    /// `UsageLimits::max_requests`.
    Requests,
    /// `UsageLimits::max_total_tokens`.
    TotalTokens,
}

/// A run reached one of its [`UsageLimits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the run reached its usage limit: {used} {what} against a limit of {allowed} (RunPolicy::usage_limits); raise the limit or split the task",
    what = match limit { UsageLimit::Requests => "model requests", UsageLimit::TotalTokens => "tokens" }
)]
#[non_exhaustive]
pub struct UsageLimitExceeded {
    /// The limit reached.
    pub limit: UsageLimit,
    /// What the limit allows.
    pub allowed: u64,
    /// What the run used (for requests: the request it would have made next).
    pub used: u64,
}

impl UsageLimits {
    /// Limits the run to this many model requests.
    #[must_use]
    pub const fn with_max_requests(mut self, max_requests: u64) -> Self {
        self.max_requests = Some(max_requests);
        self
    }

    /// Limits the run to this many prompt plus completion tokens.
    #[must_use]
    pub const fn with_max_total_tokens(mut self, max_total_tokens: u64) -> Self {
        self.max_total_tokens = Some(max_total_tokens);
        self
    }

    /// Whether one more request is allowed after `requests` have been made.
    pub(super) fn before_request(&self, requests: u64) -> Result<(), UsageLimitExceeded> {
        match self.max_requests {
            Some(allowed) if requests >= allowed => {
                Err(UsageLimitExceeded { limit: UsageLimit::Requests, allowed, used: requests + 1 })
            }
            _ => Ok(()),
        }
    }

    /// Whether the usage so far is within the token limit.
    pub(super) fn after_response(&self, usage: Usage) -> Result<(), UsageLimitExceeded> {
        let used = usage.prompt_tokens.saturating_add(usage.completion_tokens);
        match self.max_total_tokens {
            Some(allowed) if used > allowed => {
                Err(UsageLimitExceeded { limit: UsageLimit::TotalTokens, allowed, used })
            }
            _ => Ok(()),
        }
    }
}

/// Sizes a run caps so that one model or tool cannot flood it.
///
/// - `max_tool_calls_per_turn` (default 16): calls past it in one model turn are not run;
///   each is answered with an error saying to make it in a later turn.
/// - `max_tool_result_bytes` (default 100,000, about 25,000 tokens, Claude Code's limit for an
///   MCP tool's output): a longer result reaches the model cut on a character boundary, with a
///   note giving its original size. The host's events still say the tool completed.
/// - `max_response_bytes` (default 8 MiB): the largest provider HTTP response body the
///   bundled providers read; past it the call fails with `ModelError::ResponseTooLarge`. The
///   body is read incrementally and never buffered whole first.
///
/// ```
/// use tinytools::run::{RunCaps, RunPolicy};
///
/// let caps = RunPolicy::default().caps;
/// assert_eq!((caps.max_tool_calls_per_turn, caps.max_tool_result_bytes, caps.max_response_bytes), (16, 100_000, 8 << 20));
///
/// let policy = RunPolicy::default().with_caps(RunCaps::default().with_max_tool_calls_per_turn(4));
/// assert_eq!(policy.caps.max_tool_calls_per_turn, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunCaps {
    /// The most tool calls run from one model answer.
    pub max_tool_calls_per_turn: usize,
    /// The most bytes of one tool result sent to the model.
    pub max_tool_result_bytes: usize,
    /// The most bytes of one provider response body.
    pub max_response_bytes: usize,
}

impl Default for RunCaps {
    fn default() -> Self {
        Self { max_tool_calls_per_turn: 16, max_tool_result_bytes: 100_000, max_response_bytes: 8 << 20 }
    }
}

impl RunCaps {
    /// Sets the most tool calls run from one model answer.
    #[must_use]
    pub const fn with_max_tool_calls_per_turn(mut self, max_tool_calls_per_turn: usize) -> Self {
        self.max_tool_calls_per_turn = max_tool_calls_per_turn;
        self
    }

    /// Sets the most bytes of one tool result sent to the model.
    #[must_use]
    pub const fn with_max_tool_result_bytes(mut self, max_tool_result_bytes: usize) -> Self {
        self.max_tool_result_bytes = max_tool_result_bytes;
        self
    }

    /// Sets the most bytes of one provider response body.
    #[must_use]
    pub const fn with_max_response_bytes(mut self, max_response_bytes: usize) -> Self {
        self.max_response_bytes = max_response_bytes;
        self
    }

    /// The answer to a call past `max_tool_calls_per_turn`.
    pub(super) fn over_call_cap(&self, made: usize) -> ToolResult {
        ToolResult::error(format!(
            "Not run: this turn made {made} tool calls and a turn may make at most {}. Make this call again in your next turn if you still need it.",
            self.max_tool_calls_per_turn
        ))
    }

    /// `text` cut to `max_tool_result_bytes` (on a character boundary) with a note of its
    /// original size, or `text` as it is.
    pub(super) fn bound_result(&self, text: String) -> String {
        let max = self.max_tool_result_bytes;
        if text.len() <= max {
            return text;
        }
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let note = format!("\n[truncated: the tool's result was {} bytes; the first {end} are shown]", text.len());
        let mut cut = text;
        cut.truncate(end);
        cut.push_str(&note);
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_cut_on_character_boundaries_with_their_size() {
        let caps = RunCaps { max_tool_result_bytes: 5, ..RunCaps::default() };
        assert_eq!(caps.bound_result("short".into()), "short");
        let cut = caps.bound_result("ééééé".into());
        assert!(cut.starts_with("éé\n[truncated: the tool's result was 10 bytes; the first 4 are shown]"), "{cut}");
    }

    #[test]
    fn the_request_limit_is_checked_before_and_the_token_limit_after() {
        let limits = UsageLimits { max_requests: Some(2), max_total_tokens: Some(100) };
        assert!(limits.before_request(1).is_ok());
        let over = limits.before_request(2).unwrap_err();
        assert_eq!((over.limit, over.allowed, over.used), (UsageLimit::Requests, 2, 3));
        assert!(limits.after_response(Usage::new(60, 40)).is_ok());
        let over = limits.after_response(Usage::new(60, 41)).unwrap_err();
        assert!(over.to_string().contains("101 tokens against a limit of 100"), "{over}");
    }
}
