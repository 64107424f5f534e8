//! Load: 1,000 concurrent runs of a few turns each, every event and message accounted for.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, RequestPurpose};
use tinytools::run::{Agent, EventSink, RunEvent, StopReason};
use tinytools_examples::catalogue;

/// Answers from the conversation's length, so one instance serves every run: search, call the
/// found tool, answer; a keyword request gets a line of keywords.
struct ThreeTurns;

#[async_trait::async_trait]
impl ChatModel for ThreeTurns {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let run = match request.messages.first() {
            Some(Message::User { content }) => content.clone(),
            _ => String::new(),
        };
        tokio::task::yield_now().await;
        if request.purpose == RequestPurpose::Keywords {
            return Ok(ModelResponse::text("stock quote price"));
        }
        Ok(match request.messages.len() {
            1 => ModelResponse::calls([("s", "tool_search", json!({"query": "stock price of a ticker", "limit": 1}))]),
            3 => ModelResponse::calls([("q", "stock_quote", json!({"symbol": "ACME"}))]),
            _ => ModelResponse::text(format!("answer for {run}")),
        })
    }
}

#[derive(Default)]
struct Count(Mutex<Vec<RunEvent>>);

impl EventSink for Count {
    fn emit(&self, event: &RunEvent) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event.clone());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_runs_lose_nothing() {
    let registry = Arc::new(catalogue::registry());
    let model: Arc<dyn ChatModel> = Arc::new(ThreeTurns);
    let mut runs = Vec::new();
    for i in 0..1_000 {
        let events = Arc::new(Count::default());
        let agent = Agent::new(registry.clone(), model.clone()).with_events(events.clone());
        runs.push(tokio::spawn(async move {
            let outcome = agent.run(vec![Message::user(format!("What is ACME stock trading at? (run {i})"))]).await;
            (i, outcome, events)
        }));
    }
    let mut finished = 0;
    for run in runs {
        let (i, outcome, events) = run.await.expect("no run panicked");
        let outcome = outcome.expect("no run failed");
        assert_eq!(outcome.stop, StopReason::Answered);
        assert_eq!(
            outcome.answer,
            format!("answer for What is ACME stock trading at? (run {i})"),
            "answers never cross runs"
        );
        assert_eq!(outcome.transcript.messages.len(), 6, "user, search, result, call, result, answer");
        let events = events.0.lock().map(|e| e.clone()).unwrap_or_default();
        let count = |f: fn(&RunEvent) -> bool| events.iter().filter(|e| f(e)).count();
        assert_eq!(count(|e| matches!(e, RunEvent::ToolsAdvertised { .. })), 1);
        assert_eq!(count(|e| matches!(e, RunEvent::KeywordsWritten { .. })), 0, "no request but the turns'");
        assert_eq!(count(|e| matches!(e, RunEvent::ModelCalled { .. })), 3);
        assert_eq!(count(|e| matches!(e, RunEvent::ToolSearched { .. })), 1);
        // Query-aware discovery promoted the quote before the first call; the search adds nothing.
        assert_eq!(count(|e| matches!(e, RunEvent::ToolsPromoted { .. })), 1);
        assert!(
            outcome.transcript.patches[0].at_message == 1 && outcome.transcript.promoted().any(|n| n == "stock_quote")
        );
        assert_eq!(count(|e| matches!(e, RunEvent::DeferredToolCall { .. })), 1);
        assert_eq!(count(|e| matches!(e, RunEvent::ToolStarted { .. })), 1);
        assert_eq!(count(|e| matches!(e, RunEvent::ToolCompleted { is_error: false, .. })), 1);
        assert_eq!(events.len(), 9);
        finished += 1;
    }
    assert_eq!(finished, 1_000);
}
