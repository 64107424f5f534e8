//! Typed output: what a typed run's answer must be ([`OutputSchema`]), how the answer is read
//! and checked, what the model is told when it misses, and what the host gets
//! ([`Typed`], [`OutputInvalid`]).

use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::stream::Stream;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{OutputInvalid, RunError, RunFailure};
use super::outcome::RunOutcome;
use super::stream::{RunStream, RunStreamItem};
use crate::model::{OutputSchema, OutputSchemaError};

/// A typed run's result: the answer as `T`, and the run that produced it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Typed<T> {
    /// The answer, validated against `T`'s schema and deserialized.
    pub output: T,
    /// The run: its transcript (the answer's JSON text is the last assistant turn), usage,
    /// turns and stop reason.
    pub outcome: RunOutcome,
}

/// A typed run's output as the run holds it: the schema, its compiled validator, and whether
/// the provider constrains the answer itself.
pub(super) struct OutputSpec {
    pub(super) schema: OutputSchema,
    validator: jsonschema::Validator,
    /// The model takes the schema natively ([`ModelRequest::output`](crate::model::ModelRequest::output));
    /// otherwise the request asks for it in words.
    pub(super) native: bool,
}

/// What the run does with an answer.
pub(super) enum Verdict {
    /// It matches: the value.
    Valid(Value),
    /// It misses, and the model may try again: the feedback to send.
    Retry { feedback: String, errors: Vec<String> },
    /// It misses, and no retry is left.
    Failed(OutputInvalid),
}

impl OutputSpec {
    pub(super) fn new(schema: OutputSchema, native: bool) -> Result<Self, OutputSchemaError> {
        let validator = jsonschema::validator_for(&schema.schema)
            .map_err(|error| OutputSchemaError::Invalid { name: schema.name.clone(), reason: error.to_string() })?;
        Ok(Self { schema, validator, native })
    }

    /// The words that ask a model without native structured output for the shape.
    pub(super) fn prompt(&self) -> String {
        format!(
            "When you give your final answer (a reply that calls no tool), reply with only a JSON value, no other text and no code fence, that matches this JSON Schema:\n{}",
            self.schema.schema
        )
    }

    /// Checks the `attempt`-th answer (1-based); `retries` more are allowed after the first.
    pub(super) fn check(&self, answer: &str, attempt: usize, retries: usize) -> Verdict {
        let errors = match read_json(answer) {
            Ok(value) => {
                let errors: Vec<String> = self.validator.iter_errors(&value).map(|error| describe(&error)).collect();
                if errors.is_empty() {
                    return Verdict::Valid(value);
                }
                errors
            }
            Err(reason) => vec![reason],
        };
        if attempt > retries {
            return Verdict::Failed(self.invalid(answer, errors, attempt));
        }
        let listed: String = errors.iter().map(|error| format!("\n- {error}")).collect();
        let feedback = format!(
            "Your answer does not match the required output `{}`:{listed}\nReply again with only the corrected JSON value.",
            self.schema.name
        );
        Verdict::Retry { feedback, errors }
    }

    pub(super) fn invalid(&self, answer: &str, errors: Vec<String>, attempts: usize) -> OutputInvalid {
        OutputInvalid { name: self.schema.name.clone(), answer: answer.to_owned(), errors, attempts }
    }
}

/// One validation error: where, and what (`/total_cents: "12.5" is not of type "integer"`).
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    let path = error.instance_path().as_str();
    let at = if path.is_empty() { "the answer" } else { path };
    format!("{at}: {error}")
}

/// The JSON value an answer holds: the whole text, a fenced block, or the one object between
/// the first `{` and the last `}` (a model that wraps its JSON in a sentence).
pub(super) fn read_json(answer: &str) -> Result<Value, String> {
    let text = answer.trim();
    if text.is_empty() {
        return Err("the answer is empty; a JSON value was expected".to_owned());
    }
    let error = match serde_json::from_str::<Value>(text) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    if let Some(fenced) = fenced(text)
        && let Ok(value) = serde_json::from_str(fenced)
    {
        return Ok(value);
    }
    if let (Some(start), Some(end)) = (text.find('{'), text.rfind('}'))
        && start < end
        && let Ok(value) = serde_json::from_str(&text[start..=end])
    {
        return Ok(value);
    }
    Err(format!("the answer is not JSON ({error}); reply with the JSON value alone"))
}

/// The body of the first ```-fenced block, without its language tag.
fn fenced(text: &str) -> Option<&str> {
    let start = text.find("```")? + 3;
    let rest = &text[start..];
    let body_start = rest.find('\n').map_or(0, |line| line + 1);
    let body = &rest[body_start..];
    Some(body[..body.find("```")?].trim())
}

/// Turns a run's outcome into `T`, or the error a typed run ends with.
#[expect(clippy::result_large_err, reason = "RunError is what every run returns, kept whole for resuming")]
pub(super) fn typed<T: DeserializeOwned>(
    result: Result<RunOutcome, RunError>,
    name: &str,
) -> Result<Typed<T>, RunError> {
    let outcome = result?;
    let Some(value) = outcome.output.clone() else {
        let reason = format!("the run stopped ({:?}) before a valid answer", outcome.stop);
        let invalid =
            OutputInvalid { name: name.to_owned(), answer: outcome.answer.clone(), errors: vec![reason], attempts: 0 };
        let (transcript, turns, usage) = (outcome.transcript, outcome.turns, outcome.usage);
        return Err(RunError { source: RunFailure::Output(Box::new(invalid)), transcript, turns, usage });
    };
    match serde_json::from_value::<T>(value) {
        Ok(output) => Ok(Typed { output, outcome }),
        Err(error) => {
            // The schema admitted what the type does not (a hand-written schema, or a serde
            // attribute schemars does not see).
            let errors = vec![format!("the answer matches the schema but not the type: {error}")];
            let invalid = OutputInvalid { name: name.to_owned(), answer: outcome.answer.clone(), errors, attempts: 1 };
            let (transcript, turns, usage) = (outcome.transcript, outcome.turns, outcome.usage);
            Err(RunError { source: RunFailure::Output(Box::new(invalid)), transcript, turns, usage })
        }
    }
}

/// A typed run as a stream ([`Agent::stream_typed`](super::Agent::stream_typed)): the same
/// items as [`RunStream`] (the answer's JSON text as it is written), then
/// [`finish`](Self::finish) gives the answer as `T`.
pub struct TypedRunStream<'a, T> {
    inner: RunStream<'a>,
    name: String,
    _output: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for TypedRunStream<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedRunStream").field("output", &self.name).finish_non_exhaustive()
    }
}

impl<'a, T: DeserializeOwned> TypedRunStream<'a, T> {
    pub(super) fn new(inner: RunStream<'a>, name: String) -> Self {
        Self { inner, name, _output: PhantomData }
    }

    /// The next item; `None` once the run has ended.
    pub async fn next(&mut self) -> Option<RunStreamItem> {
        self.inner.next().await
    }

    /// The answer as `T`, running the run to its end if it has not ended.
    ///
    /// # Errors
    /// As [`Agent::run_typed`](super::Agent::run_typed).
    pub async fn finish(self) -> Result<Typed<T>, RunError> {
        typed(self.inner.finish().await, &self.name)
    }
}

impl<T> Stream for TypedRunStream<'_, T> {
    type Item = RunStreamItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunStreamItem>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_are_read_whole_fenced_or_from_a_sentence() {
        assert_eq!(read_json(r#" {"a": 1} "#), Ok(json!({"a": 1})));
        assert_eq!(read_json("```json\n{\"a\": 1}\n```"), Ok(json!({"a": 1})));
        assert_eq!(read_json(r#"Here it is: {"a": 1}. Done."#), Ok(json!({"a": 1})));
        assert!(read_json("no json here").is_err());
        assert!(read_json("   ").is_err());
    }

    #[test]
    fn a_miss_asks_again_then_fails_with_the_last_answer() {
        let schema = OutputSchema::new(
            "Total",
            json!({"type": "object", "required": ["cents"], "properties": {"cents": {"type": "integer"}}}),
        );
        let spec = OutputSpec::new(schema.unwrap_or_else(|e| panic!("{e}")), false).unwrap_or_else(|e| panic!("{e}"));
        let Verdict::Retry { feedback, errors } = spec.check(r#"{"cents": "12"}"#, 1, 1) else {
            panic!("the first miss was not retried")
        };
        assert!(feedback.contains("/cents") && errors.len() == 1, "{feedback}");
        let Verdict::Failed(invalid) = spec.check("twelve", 2, 1) else { panic!("the last miss was retried") };
        assert_eq!((invalid.answer.as_str(), invalid.attempts), ("twelve", 2));
        assert!(matches!(spec.check(r#"{"cents": 12}"#, 2, 1), Verdict::Valid(_)));
    }
}
