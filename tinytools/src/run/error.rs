//! [`RunError`]: a run that could not go on, and why ([`RunFailure`]).

use super::limits::UsageLimitExceeded;
use super::transcript::Transcript;
use crate::model::{ModelError, OutputSchemaError, Usage};

/// A run that could not go on. The transcript so far and the usage so far are kept.
///
/// ```
/// use std::sync::Arc;
/// use tinytools::model::{Message, ModelResponse};
/// use tinytools::run::{Agent, RunFailure, RunPolicy, UsageLimits};
/// use tinytools::testkit::ScriptedModel;
/// use tinytools::ToolRegistry;
///
/// let model = Arc::new(ScriptedModel::new([ModelResponse::text("hi").with_usage(900, 200)]));
/// let limits = UsageLimits::default().with_max_total_tokens(1_000);
/// let agent = Agent::new(Arc::new(ToolRegistry::new()), model)
///     .with_policy(RunPolicy::default().with_usage_limits(limits));
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let error = agent.run(vec![Message::user("hello")]).await.unwrap_err();
/// assert!(matches!(error.source, RunFailure::UsageLimit(ref over) if over.used == 1_100));
/// assert_eq!(error.usage.prompt_tokens, 900);
/// # });
/// ```
#[derive(Debug, thiserror::Error)]
#[error("the run stopped after {turns} model call(s): {source}")]
#[non_exhaustive]
pub struct RunError {
    /// Why.
    #[source]
    pub source: RunFailure,
    /// The conversation up to the failure, for resuming.
    pub transcript: Transcript,
    /// Model calls made, the failed one included.
    pub turns: usize,
    /// Usage summed over the calls that reported it.
    pub usage: Usage,
}

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunFailure {
    /// The model call failed (after the provider's own retries, and after one shrink and
    /// retry for a context-length error that shrinking could help).
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The run reached one of `RunPolicy::usage_limits`.
    #[error(transparent)]
    UsageLimit(#[from] UsageLimitExceeded),
    /// The conversation does not fit the model's window even after shrinking it.
    #[error(transparent)]
    ContextOverflow(#[from] ContextOverflow),
    /// A typed run's output type cannot be asked for (found before any request).
    #[error(transparent)]
    OutputSchema(#[from] OutputSchemaError),
    /// A typed run's model never gave an answer that matches the output type.
    #[error(transparent)]
    Output(#[from] Box<OutputInvalid>),
}

/// The conversation could not be shrunk to fit the model's window.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the conversation does not fit the model's context window even after shrinking it: about {estimated_tokens} tokens against a target of {target_tokens} ({compacted} tool results compacted, {dropped} messages dropped){}{}; start a new conversation, cap tool results lower, or use a model with a larger window",
    match (prompt_tokens, window) {
        (Some(prompt), Some(window)) => format!("; the provider counted {prompt} tokens for a window of {window}"),
        (None, Some(window)) => format!("; the window is {window} tokens"),
        _ => String::new(),
    },
    provider_message.as_ref().map_or_else(String::new, |said| format!("; the provider said: {said}"))
)]
#[non_exhaustive]
pub struct ContextOverflow {
    /// The run's estimate of the smallest request it could make.
    pub estimated_tokens: usize,
    /// The estimate it needed to reach.
    pub target_tokens: usize,
    /// The prompt tokens the provider reported, when it did.
    pub prompt_tokens: Option<u64>,
    /// The window, as the provider or `RunPolicy::context_window` gave it.
    pub window: Option<u64>,
    /// Tool results replaced by a note.
    pub compacted: usize,
    /// Messages dropped.
    pub dropped: usize,
    /// The provider's own words, when it refused the request (a window the run never knew,
    /// or a limit that was not the prompt's, shows here).
    pub provider_message: Option<String>,
}

/// A typed run whose model never gave a valid answer: every answer it checked missed the
/// schema, or the run stopped (turn limit, cancellation, the repeat stop) before a valid one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the model's answer never matched the output type `{name}` ({attempts} answer(s) checked): {}; the last answer is kept in `answer`. Describe the fields better (doc comments, instructions), allow more retries (RunPolicy::with_output_retries), or use a model with native structured output",
    errors.join("; ")
)]
#[non_exhaustive]
pub struct OutputInvalid {
    /// The output schema's name.
    pub name: String,
    /// The model's last answer, as it wrote it.
    pub answer: String,
    /// What was wrong with it (or why the run stopped without one).
    pub errors: Vec<String>,
    /// Answers checked.
    pub attempts: usize,
}
