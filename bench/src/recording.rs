//! What a benchmark run records: every request its model is sent, and every event of the run.
//! The live suite's runs and BFCL's share it.

use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use tinytools::model::{
    ChatModel, ModelError, ModelProfile, ModelRequest, ModelResponse, ModelStream, RequestPurpose, StreamEvent,
};
use tinytools::run::{EventSink, RunEvent};

/// One request the model was sent, and what it reported.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    /// The names in its tools array.
    pub tools: Vec<String>,
    /// The tools array's compact JSON bytes.
    pub tool_bytes: usize,
    /// Its prompt tokens, when the provider reported usage.
    pub prompt_tokens: Option<u64>,
    /// Its completion tokens (0 without usage).
    pub completion_tokens: u64,
    /// A turn of the conversation, or the run's side request for search keywords.
    pub purpose: RequestPurpose,
}

/// A model that records each request it passes on.
pub(crate) struct Recording {
    inner: Arc<dyn ChatModel>,
    log: Mutex<Vec<Request>>,
}

impl Recording {
    pub(crate) fn new(inner: Arc<dyn ChatModel>) -> Arc<Self> {
        Arc::new(Self { inner, log: Mutex::new(Vec::new()) })
    }

    /// The requests so far, in order.
    fn requests(&self) -> Vec<Request> {
        self.log.lock().map(|log| log.clone()).unwrap_or_default()
    }

    /// The conversation's turns so far, in order, and apart the keyword requests.
    pub(crate) fn turns_and_keywords(&self) -> (Vec<Request>, Vec<Request>) {
        self.requests().into_iter().partition(|request| request.purpose.is_turn())
    }
}

#[async_trait::async_trait]
impl ChatModel for Recording {
    fn profile(&self) -> ModelProfile {
        self.inner.profile()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let response = self.inner.complete(request).await;
        self.record(request, response.as_ref().ok());
        response
    }

    /// The inner model's own stream, recorded when it ends (a stream that fails is recorded
    /// without usage, as a failed `complete` is).
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        let mut recorded = false;
        let events = self.inner.stream(request).map(move |item| {
            match &item {
                Ok(StreamEvent::Done(response)) if !recorded => {
                    recorded = true;
                    self.record(request, Some(response));
                }
                Err(_) if !recorded => {
                    recorded = true;
                    self.record(request, None);
                }
                _ => {}
            }
            item
        });
        ModelStream::new(events)
    }
}

impl Recording {
    fn record(&self, request: &ModelRequest, response: Option<&ModelResponse>) {
        let usage = response.and_then(|r| r.usage);
        if let Ok(mut log) = self.log.lock() {
            log.push(Request {
                tools: request.tools.iter().map(|tool| tool.name.clone()).collect(),
                tool_bytes: serde_json::to_string(&request.tools).map_or(0, |text| text.len()),
                prompt_tokens: usage.map(|u| u.prompt_tokens),
                completion_tokens: usage.map_or(0, |u| u.completion_tokens),
                purpose: request.purpose,
            });
        }
    }
}

/// The events of a run, kept in order.
#[derive(Default)]
pub(crate) struct Events(Mutex<Vec<RunEvent>>);

impl Events {
    /// The events so far, in order.
    pub(crate) fn taken(&self) -> Vec<RunEvent> {
        self.0.lock().map(|events| events.clone()).unwrap_or_default()
    }
}

impl EventSink for Events {
    fn emit(&self, event: &RunEvent) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event.clone());
        }
    }
}
