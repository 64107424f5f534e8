//! Test-only package: see tests/. What several of its suites share.

// The README's and the guide's code blocks, as doctests.
#[cfg(doctest)]
mod docs;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinytools::ToolRegistry;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{ChatModel, Message, ModelRequest, ModelResponse};
use tinytools::run::aids::Aids;
use tinytools::run::{Agent, AidAction, EventSink, RunEvent, RunOutcome, RunPolicy};
use tinytools::testkit::ScriptedModel;

/// An event sink that keeps every event of a run, in order.
#[derive(Default)]
pub struct Recorder(Mutex<Vec<RunEvent>>);

impl Recorder {
    /// Every event so far.
    pub fn events(&self) -> Vec<RunEvent> {
        self.0.lock().map(|events| events.clone()).unwrap_or_default()
    }
}

impl EventSink for Recorder {
    fn emit(&self, event: &RunEvent) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event.clone());
        }
    }
}

/// The default policy with the aids kept for small local models ([`Aids::small_model`]),
/// nothing else of [`RunPolicy::small_model`]: what the aids' own suites run under.
pub fn small_model_policy() -> RunPolicy {
    RunPolicy::default().with_aids(Aids::small_model())
}

/// How many cases a property test runs: `PROPTEST_CASES` when set (a long local run is one
/// command: `PROPTEST_CASES=100000 cargo test -p tinytools-integration-tests --test hidden_names`),
/// else the suite's own `default`, sized for CI.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(default)
}

/// A model that makes `calls` one per request, in order (ids `call_0`, `call_1`, ...), then
/// answers "done".
pub fn calling(calls: Vec<(&'static str, Value)>) -> Arc<ScriptedModel> {
    let answers = calls.into_iter().enumerate().map(|(i, (name, args))| {
        Box::new(move |_: &ModelRequest| {
            let mut response = ModelResponse::calls([("c", name, args.clone())]);
            response.tool_calls[0].id = format!("call_{i}");
            response
        }) as _
    });
    let done = Box::new(|_: &ModelRequest| ModelResponse::text("done")) as _;
    Arc::new(ScriptedModel::dynamic(answers.chain([done]).collect()))
}

/// Runs `user` over `registry` through `model` under `policy`, with every event recorded.
///
/// # Panics
/// When the run fails (a scripted model that runs out of answers, for one).
pub async fn run_recorded(
    registry: Arc<ToolRegistry>,
    model: Arc<dyn ChatModel>,
    policy: RunPolicy,
    user: &str,
) -> (RunOutcome, Vec<RunEvent>) {
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(registry, model)
        .with_policy(policy)
        .with_events(recorder.clone())
        .run(vec![Message::user(user)])
        .await
        .expect("runs");
    (outcome, recorder.events())
}

/// `night_shelter_booking`, a tool whose description carries the words of a request for a
/// bed in Porto ("sleep", "somewhere", "Porto"): registered Hidden, no search keywords may
/// bring it within reach.
pub struct NightShelter;

#[async_trait::async_trait]
impl tinytools::Tool for NightShelter {
    fn name(&self) -> &str {
        "night_shelter_booking"
    }
    fn description(&self) -> &str {
        "Book a night shelter bed: sleep, somewhere, Porto."
    }
    fn parameters_schema(&self) -> Value {
        serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}})
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<tinytools::ToolResult> {
        Ok(tinytools::ToolResult::text("booked"))
    }
}

/// Every aid's action in `events`, in order, with the aid's name.
pub fn aid_acted(events: &[RunEvent]) -> Vec<(&str, &AidAction)> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::AidActed { aid, action } => Some((aid.as_str(), action)),
            _ => None,
        })
        .collect()
}

/// The tools a request offered, by name.
pub fn names(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|t| t.name.as_str()).collect()
}

/// The spec's task: search, call the found tool with typed arguments, answer.
pub fn spec_script() -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::calls([("c1", "tool_search", json!({"query": "stock price of a ticker"}))]).with_usage(900, 20),
        ModelResponse::calls([("c2", "stock_quote", json!({"symbol": "ACME", "options": {"limit": 2}}))])
            .with_usage(1_700, 25),
        ModelResponse::text("ACME is trading at its latest price.").with_usage(1_900, 12),
    ])
}

/// The spec's bridge alone: query-aware discovery off, so every promotion is the model's search.
pub fn bridge_only() -> RunPolicy {
    RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_pre_promotion(PrePromotion::off()))
}
