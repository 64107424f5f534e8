//! Context overflow: a provider's context-length error shrinks the conversation once and the
//! run goes on; a known window shrinks it before sending; what cannot fit is a typed error.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse};
use tinytools::run::{Agent, RunEvent, RunFailure, RunPolicy, StopReason};
use tinytools::{ToolRegistry, tool};
use tinytools_integration_tests::Recorder;

/// Returns 4,000 bytes about its key.
#[tool(read_only)]
async fn page(
    /// Which page.
    key: String,
) -> String {
    format!("{key}:{}", "x".repeat(4_000))
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new();
    registry.register(Page).expect("registers");
    Arc::new(registry)
}

/// A model with a small window: a request whose messages pass `window` bytes fails as
/// OpenAI fails it (tokens counted as bytes / 4). Otherwise it reads `pages` pages, one a turn,
/// then answers.
struct Windowed {
    window: usize,
    pages: usize,
    sent: Mutex<Vec<(usize, bool)>>,
}

#[async_trait::async_trait]
impl ChatModel for Windowed {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let bytes: usize = request.messages.iter().map(|m| serde_json::to_string(m).map_or(0, |s| s.len())).sum();
        let fits = bytes <= self.window;
        self.sent.lock().unwrap().push((bytes, fits));
        if !fits {
            return Err(ModelError::ContextLength {
                message: format!(
                    "This model's maximum context length is {} tokens. However, your messages resulted in {} tokens.",
                    self.window / 4,
                    bytes / 4
                ),
            });
        }
        let read = request.messages.iter().filter(|m| matches!(m, Message::Tool { .. })).count();
        if read < self.pages {
            let mut response = ModelResponse::calls([("c", "page", json!({"key": format!("p{read}")}))]);
            response.tool_calls[0].id = format!("c{read}");
            return Ok(response);
        }
        Ok(ModelResponse::text(format!("read {read} pages")))
    }
}

fn windowed(window: usize, pages: usize) -> Arc<Windowed> {
    Arc::new(Windowed { window, pages, sent: Mutex::new(Vec::new()) })
}

#[tokio::test]
async fn a_context_length_error_shrinks_old_results_and_the_run_goes_on() {
    let model = windowed(12_000, 4);
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(registry(), model.clone()).with_events(recorder.clone());
    let outcome =
        agent.run(vec![Message::system("Be brief."), Message::user("read four pages")]).await.expect("recovers");
    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.answer, "read 4 pages");
    let sent = model.sent.lock().unwrap().clone();
    assert_eq!(sent.iter().filter(|(_, fits)| !fits).count(), 1, "one failed request, then it fit: {sent:?}");
    let events = recorder.events();
    let shrunk: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::ContextShrunk { .. })).collect();
    let [
        RunEvent::ContextShrunk {
            compacted_results,
            dropped_messages,
            estimated_tokens_before,
            estimated_tokens_after,
        },
    ] = shrunk.as_slice()
    else {
        panic!("{shrunk:?}")
    };
    assert!(*compacted_results >= 1 && *dropped_messages == 0, "old results were enough: {shrunk:?}");
    assert!(estimated_tokens_after < estimated_tokens_before);
    // Nothing was lost that the model needs: every call still has its result, in order.
    let results: Vec<&str> = outcome
        .transcript
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["c0", "c1", "c2", "c3"]);
    assert!(matches!(&outcome.transcript.messages[0], Message::System { .. }));
}

#[tokio::test]
async fn a_request_that_cannot_fit_ends_the_run_with_the_counts() {
    let model = windowed(2_000, 0);
    let question = format!("summarise this: {}", "y".repeat(5_000));
    let counted = serde_json::to_string(&Message::user(question.clone())).expect("serialises").len() as u64 / 4;
    let agent = Agent::new(registry(), model.clone());
    let error = agent.run(vec![Message::user(question)]).await.expect_err("the latest question cannot be cut");
    let RunFailure::ContextOverflow(overflow) = &error.source else { panic!("{error}") };
    assert_eq!((overflow.prompt_tokens, overflow.window), (Some(counted), Some(500)));
    assert_eq!((overflow.compacted, overflow.dropped), (0, 0));
    assert!(error.to_string().contains("does not fit the model's context window"), "{error}");
    let said = overflow.provider_message.as_deref().expect("the provider's words are kept");
    assert!(said.starts_with("This model's maximum context length is 500 tokens."), "{said}");
    assert!(error.to_string().contains("the provider said: This model's maximum context length"), "{error}");
    assert_eq!(model.sent.lock().unwrap().len(), 1, "nothing to cut: no second request");
}

#[tokio::test]
async fn a_known_window_shrinks_before_the_request_is_sent() {
    let model = windowed(14_000, 5);
    let recorder = Arc::new(Recorder::default());
    let policy = RunPolicy::default().with_context_window(3_000);
    let agent = Agent::new(registry(), model.clone()).with_policy(policy).with_events(recorder.clone());
    let outcome = agent.run(vec![Message::user("read five pages")]).await.expect("fits");
    assert_eq!(outcome.answer, "read 5 pages");
    let sent = model.sent.lock().unwrap().clone();
    assert!(sent.iter().all(|(_, fits)| *fits), "no request was refused: {sent:?}");
    assert!(recorder.events().iter().any(|e| matches!(e, RunEvent::ContextShrunk { .. })));
}
