//! What a benchmark run records: every request its model is sent, and every event of the run.
//! The live suite's runs and BFCL's share it.

use std::sync::{Arc, Mutex};

use tinytools::model::{ChatModel, ModelError, ModelProfile, ModelRequest, ModelResponse};
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
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.log.lock().map(|log| log.clone()).unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl ChatModel for Recording {
    fn profile(&self) -> ModelProfile {
        self.inner.profile()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let tools = request.tools.iter().map(|tool| tool.name.clone()).collect();
        let tool_bytes = serde_json::to_string(&request.tools).map_or(0, |text| text.len());
        let response = self.inner.complete(request).await;
        let usage = response.as_ref().ok().and_then(|r| r.usage);
        if let Ok(mut log) = self.log.lock() {
            log.push(Request {
                tools,
                tool_bytes,
                prompt_tokens: usage.map(|u| u.prompt_tokens),
                completion_tokens: usage.map_or(0, |u| u.completion_tokens),
            });
        }
        response
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
