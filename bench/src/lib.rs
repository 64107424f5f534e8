//! The live task-suite benchmark: every task of [`tasks`] run through the agent loop against
//! a real model, in arms that expose the 41-tool example catalogue
//! (`tinytools_examples::catalogue`) differently, and what each arm costs and achieves.
//!
//! Arms ([`ArmKind`]): every tool Direct; the long tail Deferred behind `tool_search` alone
//! (the spec's bridge); the same with query-aware discovery (pre-promotion, the default
//! policy); the same over a catalogue grown by BFCL distractors; and the catalogue as MCP
//! servers behind the `tinytools-gateway` binary ([`gateway_arm`]).
//!
//! The crate's programs, run from the workspace root:
//!
//! ```text
//! cargo run --release -p tinytools-bench --bin live_tasks -- ...           # the benchmark (docs/live.md)
//! cargo run --release -p tinytools-bench --bin pre_promotion_eval -- ...   # pre-promotion's floor, offline
//! cargo run --release -p tinytools-bench --bin retrieval_eval -- ...       # tool_search's ranking on a public set
//! cargo run --release -p tinytools-bench --bin livemcp_retrieval -- ...    # the same on LiveMCPBench's tasks
//! cargo run --release -p tinytools-bench --bin bfcl -- ...                 # BFCL end to end, scored by its own checker
//! cargo run --release -p tinytools-bench --bin typed_output -- ...         # typed output: 24 extractions (docs/typed-output.md)
//! ```
//!
//! The eval sets (BFCL, MetaTool) are read at run time from `TINYTOOLS_EVAL_DIR`, else
//! `../shared/eval` beside the checkout, through `tinytools_examples::eval`
//! (`bench/scripts/fetch-eval.sh` fetches BFCL's from its PyPI wheel).

mod aids;
mod arms;
pub mod bfcl;
pub mod chart;
pub mod charts;
pub mod cli;
pub mod distill;
mod gateway;
pub mod livemcp;
pub mod percentile;
mod process;
mod recording;
pub mod records;
pub mod relative;
mod report;
mod schedule;
mod scripted;
mod servers;
pub mod tasks;
pub mod typed;
mod warm;

use std::sync::Arc;
use std::time::Instant;

pub use aids::{AidsChoice, apply_aids};
pub use arms::{ArmKind, ArmSpec, arm};
pub use gateway::{
    CALL_TOOL, DISTRACTORS_PER_SERVER, GATEWAY_SYSTEM_PROMPT, GatewayBinaries, GatewaySetup, gateway_arm,
    gateway_config,
};
pub use process::GatewayProcess;
pub use report::{ArmReport, TaskResult, table};
pub use schedule::run_arms;
pub use scripted::KeywordModel;
pub use servers::{Lease, Servers};
/// The host's pre-search through the gateway, as `tinytools` ships it.
pub use tinytools::mcp::GatewayPreSearch as PreSearch;
use tinytools::model::{ChatModel, Message};
use tinytools::run::{Agent, RunError, RunEvent, RunOutcome, RunStreamItem};
use tinytools::tool::TOOL_SEARCH;
pub use warm::warm;

use crate::recording::{Events, Recording};
use crate::tasks::Task;

/// Runs one task in one arm: a fresh agent over the arm's registry and policy (with the arm's
/// [aids](apply_aids)), the arm's system prompt, the task's words. A failed model call is a
/// failed task, never a crash.
pub async fn run_task(model: Arc<dyn ChatModel>, spec: &ArmSpec, task: &Task) -> TaskResult {
    let recording = Recording::new(model);
    let events = Arc::new(Events::default());
    let (registry, pre_searched, forwarding) = match &spec.pre_search {
        Some(pre) => {
            // The host's pre-search takes the path a run's pre-promotion takes: the model's
            // keywords first (recorded with the run's other keyword requests), unless off.
            let pre = if spec.policy.discovery.pre_promotion.model_keywords {
                pre.clone().with_keywords(recording.clone())
            } else {
                pre.clone()
            };
            let (registry, names) = pre.registry_for(&spec.registry, task.prompt).await;
            let forwarding = pre.forwarding(&registry);
            (Arc::new(registry), names, Some(forwarding))
        }
        None => (spec.registry.clone(), Vec::new(), None),
    };
    let policy = apply_aids(spec.policy.clone(), spec.aids);
    let mut agent = Agent::new(registry, recording.clone()).with_policy(policy).with_events(events.clone());
    if let Some(forwarding) = forwarding {
        agent = agent.with_middleware(forwarding);
    }
    let started = Instant::now();
    let messages = vec![Message::system(spec.system_prompt.as_ref()), Message::user(task.prompt)];
    let (outcome, first_text_ms) = drive(&agent, messages, spec.stream, started).await;
    let wall_ms = started.elapsed().as_secs_f64() * 1_000.0;
    let (log, keyword_log) = recording.turns_and_keywords();
    let events = events.taken();
    let (messages, error) = match outcome {
        Ok(outcome) => (outcome.transcript.messages, None),
        Err(error) => (error.transcript.messages.clone(), Some(error.to_string())),
    };
    let judgement = tasks::judge(task, &messages);
    let pre_promoted = promoted_for_the_user(pre_searched, &events);
    let aids_acted = events.iter().filter_map(aid_acted).collect();
    let answered = tasks::last_reply(&messages).is_some_and(|(content, _)| !content.trim().is_empty());
    TaskResult {
        id: task.id.to_owned(),
        kind: task.kind(),
        answered,
        success: judgement.success && error.is_none(),
        reason: error.clone().map_or(judgement.reason, |e| format!("run error: {e}")),
        search_calls: judgement.calls.iter().filter(|name| *name == TOOL_SEARCH).count(),
        calls: judgement.calls,
        pre_promoted,
        model_calls: log.len(),
        keyword_calls: keyword_log.len(),
        keyword_tokens: keyword_log.iter().map(|r| r.prompt_tokens.unwrap_or(0) + r.completion_tokens).sum(),
        first_call_prompt_tokens: log.first().and_then(|request| request.prompt_tokens),
        first_call_tool_bytes: log.first().map_or(0, |request| request.tool_bytes),
        total_prompt_tokens: log.iter().filter_map(|request| request.prompt_tokens).sum(),
        completion_tokens: log.iter().map(|request| request.completion_tokens).sum(),
        wall_ms,
        first_text_ms,
        error,
        aids_acted,
        messages,
    }
}

/// The run, streamed or not, and when the first text arrived (ms after `started`) when
/// streamed.
async fn drive(
    agent: &Agent,
    messages: Vec<Message>,
    stream: bool,
    started: Instant,
) -> (Result<RunOutcome, RunError>, Option<f64>) {
    if !stream {
        return (agent.run(messages).await, None);
    }
    let mut stream = agent.stream(messages);
    let mut first_text_ms = None;
    while let Some(item) = stream.next().await {
        if first_text_ms.is_none() && matches!(item, RunStreamItem::TextDelta { .. }) {
            first_text_ms = Some(started.elapsed().as_secs_f64() * 1_000.0);
        }
    }
    (stream.finish().await, first_text_ms)
}

/// What reached the model before its first call because of the user's words: the host's
/// pre-search, then the run's own pre-promotion.
fn promoted_for_the_user(pre_searched: Vec<String>, events: &[RunEvent]) -> Vec<String> {
    pre_searched
        .into_iter()
        .chain(
            events
                .iter()
                .filter_map(|event| match event {
                    RunEvent::ToolsPromoted { names, cause: tinytools::run::Promotion::UserMessage { .. } } => {
                        Some(names)
                    }
                    _ => None,
                })
                .flatten()
                .cloned(),
        )
        .collect()
}

/// `name:kind` for an aid's action, as the report records it.
fn aid_acted(event: &RunEvent) -> Option<String> {
    let RunEvent::AidActed { aid, action } = event else { return None };
    let kind = serde_json::to_value(action).ok()?.get("kind")?.as_str()?.to_owned();
    Some(format!("{aid}:{kind}"))
}
