//! What the suites of the small-model aids share (`aids_small_model.rs`, `aids_prose.rs`): the
//! registry their scripted models call, their preset, and readers of a run's events. Each suite
//! uses some of it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
pub(crate) use tinytools_integration_tests::small_model_policy;

use serde_json::json;
use tinytools::model::{ModelRequest, ModelResponse};
use tinytools::run::{AidAction, RunEvent, RunOutcome, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};

/// Reads of `ticking`, across every test of this suite (it only ever grows).
pub(crate) static TICKS: AtomicUsize = AtomicUsize::new(0);

/// Tells a key's value.
#[tool(read_only)]
pub(crate) async fn counted(
    /// Anything.
    key: String,
) -> String {
    format!("value of {key}")
}

/// A status that changes at every look: its answer is how many times it was read.
#[tool(read_only)]
pub(crate) async fn ticking(
    /// Anything.
    key: String,
) -> String {
    let tick = TICKS.fetch_add(1, Ordering::Relaxed) + 1;
    format!("{key} at tick {tick}")
}

/// The time now: read-only, and takes no arguments.
#[tool(read_only)]
pub(crate) async fn current_time() -> String {
    "10:42".to_owned()
}

/// Empties the cache: destructive, and takes no arguments.
#[tool(destructive)]
pub(crate) async fn wipe_cache() -> String {
    "wiped".to_owned()
}

pub(crate) fn registry() -> Arc<ToolRegistry> {
    let mut registry = tinytools_examples::catalogue::registry();
    registry.register(Counted).expect("registers").register(WipeCache).expect("registers");
    registry.register(Ticking).expect("registers").register(CurrentTime).expect("registers");
    Arc::new(registry)
}

/// The text `replay_repeats` and `ask_after_empty_reply` ask for the answer with, once a tool
/// has answered.
pub(crate) const ANSWER_FROM_RESULT: &str =
    "The tool has answered (above). Now tell the user what it answered, in one sentence, with the values it gave.";

/// Calls `tool` with the same arguments (keys in either order) whenever it is offered tools,
/// at most `times` requests, and answers when offered none.
pub(crate) fn repeating_tool(tool: &'static str, times: usize) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::dynamic(
        (0..times)
            .map(|i| {
                Box::new(move |request: &ModelRequest| {
                    if request.tools.is_empty() {
                        return ModelResponse::text("The value of k is known.");
                    }
                    let args = if i % 2 == 0 { r#"{"key":"k"}"# } else { r#"{ "key" : "k" }"# };
                    let mut response = ModelResponse::calls([("c", tool, json!({}))]);
                    response.tool_calls[0].arguments = args.to_owned();
                    response.tool_calls[0].id = format!("c{i}");
                    response
                }) as _
            })
            .collect(),
    ))
}

pub(crate) fn repeating(times: usize) -> Arc<ScriptedModel> {
    repeating_tool("counted", times)
}

/// Runs `user` through `model` under `policy` over this suite's registry, recording the run's
/// events.
pub(crate) async fn run_recorded(
    model: Arc<ScriptedModel>,
    policy: RunPolicy,
    user: &str,
) -> (RunOutcome, Vec<RunEvent>) {
    tinytools_integration_tests::run_recorded(registry(), model, policy, user).await
}

pub(crate) use tinytools_integration_tests::aid_acted;

/// The tools an aid took a call of for a reply.
pub(crate) fn taken(events: &[RunEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::AidActed { action: AidAction::TookCall { tool_name, .. }, .. } => Some(tool_name.as_str()),
            _ => None,
        })
        .collect()
}

pub(crate) fn started(events: &[RunEvent]) -> usize {
    events.iter().filter(|e| matches!(e, RunEvent::ToolStarted { .. })).count()
}

/// How many times `counted` ran (tools run off the test's thread: the run's events count them).
pub(crate) fn runs_of_counted(events: &[RunEvent]) -> usize {
    events.iter().filter(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == "counted")).count()
}

pub(crate) const FEEDBACK: AidAction = AidAction::Feedback { without_tools: false, final_answer: false };
pub(crate) const WITHOUT_TOOLS: AidAction = AidAction::Feedback { without_tools: true, final_answer: false };
pub(crate) const FINAL: AidAction = AidAction::Feedback { without_tools: true, final_answer: true };

/// Makes `call` whenever it is offered tools (at most `times` requests), and answers `answer`
/// when offered none.
pub(crate) fn calling_until_asked_to_answer(
    call: ModelResponse,
    answer: &'static str,
    times: usize,
) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::dynamic(
        (0..times)
            .map(|_| {
                let call = call.clone();
                Box::new(
                    move |request: &ModelRequest| {
                        if request.tools.is_empty() { ModelResponse::text(answer) } else { call.clone() }
                    },
                ) as _
            })
            .collect(),
    ))
}
