//! One BFCL query through the real [`Agent`], in one arm, and what it did.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};
use tinytools::model::{ChatModel, Message};
use tinytools::run::aids::{Aid, Feedback, RunView};
use tinytools::run::{Agent, Promotion, RunEvent};
use tinytools::tool::TOOL_SEARCH;

use super::arm::ArmSetup;
use super::data::Query;
use crate::AidsChoice;
use crate::recording::{Events, Recording};

/// What one query did in one arm; a line of the resumable results file.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct QueryResult {
    /// The model's name.
    pub model: String,
    /// The aids every run got.
    pub aids: String,
    /// The arm's name.
    pub arm: String,
    /// BFCL's id.
    pub qid: String,
    /// BFCL's category.
    pub category: String,
    /// The calls scored, `[{name: arguments}]` as BFCL's checker reads them.
    pub scored_calls: Vec<Value>,
    /// Every call of a BFCL function the model emitted, executed or not.
    pub attempted: usize,
    /// Of those, how many ran.
    pub executed: usize,
    /// `tool_search` calls.
    pub searches: usize,
    /// What pre-promotion loaded for the user's message, best first, with each tool's
    /// confidence (empty in the native arm, or when nothing passed the floor).
    #[serde(default)]
    pub pre_promoted: Vec<(String, f32)>,
    /// Whether every gold function was in the first request's tools.
    pub gold_offered: bool,
    /// Whether every gold function was in some request's tools.
    pub gold_promoted: bool,
    /// Whether every gold function was among some `tool_search` answer's matches.
    pub gold_searched: bool,
    /// Model calls for the conversation's turns.
    pub model_calls: usize,
    /// The run's side requests for search keywords (not in the other figures).
    #[serde(default)]
    pub keyword_calls: usize,
    /// Bytes of the first request's tools array (compact JSON).
    pub first_request_tool_bytes: usize,
    /// Prompt tokens of the first request, as the server counted them.
    pub first_request_tokens: Option<u64>,
    /// Prompt tokens of every request.
    pub total_prompt_tokens: u64,
    /// Wall time of the run.
    pub wall_ms: f64,
    /// A run that ended in an error (a provider failure, a limit).
    pub error: Option<String>,
    /// BFCL's checker: whether the scored calls are right.
    pub valid: Option<bool>,
    /// BFCL's checker: why not.
    pub check_error: Option<String>,
    /// The twin-tolerant score: right by BFCL's checker once each call of a gold function's
    /// same-job twin ([`TwinRule`](super::twins::TwinRule)) is read as a call of the gold
    /// function; the same as `valid` when no call named a twin.
    #[serde(default)]
    pub twin_valid: Option<bool>,
    /// Calls of a gold function's twin the twin-tolerant score read as the gold function's.
    #[serde(default)]
    pub twin_calls: usize,
}

/// BFCL scores one response. Once a turn's call of a BFCL function has run, the next turn
/// offers no tools, so the model answers and the run ends: the calls scored are that turn's
/// (a call the arguments gate refused does not count as run, so the model's correction does).
/// A host aid through the loop's public seam, part of the benchmark's protocol, not a preset.
struct OneResponse;

/// What [`OneResponse`] sends: the next turn has no tools.
const ANSWER_NOW: &str = "Answer the user now.";

#[async_trait::async_trait]
impl Aid for OneResponse {
    fn name(&self) -> &'static str {
        "bfcl_one_response"
    }

    async fn after_calls(&self, view: &RunView<'_>) -> Option<Feedback> {
        let latest = view.messages().iter().rev().take_while(|m| !matches!(m, Message::Assistant { .. }));
        let ran =
            latest.into_iter().any(|m| matches!(m, Message::Tool { name, is_error: false, .. } if name != TOOL_SEARCH));
        ran.then(|| Feedback::new(ANSWER_NOW).without_tools())
    }
}

/// Runs `query` in `arm` with `aids` (and the one-response stop above): a fresh agent over the arm's
/// registry for this query, the user's words alone (BFCL's function-calling setting has no
/// system prompt).
pub async fn run_query(
    model: Arc<dyn ChatModel>,
    model_name: &str,
    setup: &ArmSetup,
    query: &Query,
    aids: AidsChoice,
) -> QueryResult {
    let recording = Recording::new(model);
    let events = Arc::new(Events::default());
    let (registry, policy) = setup.for_query(query);
    let agent = Agent::new(Arc::new(registry), recording.clone())
        .with_policy({
            let policy = crate::apply_aids(policy, aids);
            let with_stop = policy.aids.clone().with(OneResponse);
            policy.with_aids(with_stop)
        })
        .with_events(events.clone());
    let started = Instant::now();
    let outcome = agent.run(vec![Message::user(query.text.clone())]).await;
    let wall_ms = started.elapsed().as_secs_f64() * 1_000.0;
    let (messages, error) = match outcome {
        Ok(outcome) => (outcome.transcript.messages, None),
        Err(error) => (error.transcript.messages.clone(), Some(error.to_string())),
    };
    let (log, keyword_log) = recording.turns_and_keywords();
    let events = events.taken();
    let calls = Calls::of(&messages, &events);
    let gold: Vec<String> = query.gold_names.iter().map(|name| setup.wire_name(name)).collect();
    let holds_gold = |names: &[String]| gold.iter().all(|g| names.contains(g));
    let searched: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolSearched { matched, .. } => Some(matched.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    let pre_promoted = events
        .iter()
        .find_map(|event| match event {
            RunEvent::ToolsPromoted { names, cause: Promotion::UserMessage { confidences, .. } } => {
                Some(names.iter().cloned().zip(confidences.iter().copied()).collect())
            }
            _ => None,
        })
        .unwrap_or_default();
    QueryResult {
        model: model_name.to_owned(),
        aids: aids.name(),
        arm: setup.label.clone(),
        qid: query.qid.clone(),
        category: query.category.clone(),
        attempted: calls.attempted,
        executed: calls.executed,
        searches: calls.searches,
        pre_promoted,
        scored_calls: calls.scored,
        gold_offered: !gold.is_empty() && log.first().is_some_and(|request| holds_gold(&request.tools)),
        gold_promoted: !gold.is_empty() && {
            let all: Vec<String> = log.iter().flat_map(|request| request.tools.clone()).collect();
            holds_gold(&all)
        },
        gold_searched: !gold.is_empty() && holds_gold(&searched),
        model_calls: log.len(),
        keyword_calls: keyword_log.len(),
        first_request_tool_bytes: log.first().map_or(0, |request| request.tool_bytes),
        first_request_tokens: log.first().and_then(|request| request.prompt_tokens),
        total_prompt_tokens: log.iter().filter_map(|request| request.prompt_tokens).sum(),
        wall_ms,
        error,
        valid: None,
        check_error: None,
        twin_valid: None,
        twin_calls: 0,
    }
}

/// The calls a run made to the arm's functions, and which of them BFCL's checker scores.
struct Calls {
    scored: Vec<Value>,
    attempted: usize,
    executed: usize,
    searches: usize,
}

impl Calls {
    /// The rule: when any call ran, the calls that ran, in order, each distinct call once
    /// (a model that corrects a call the arguments gate refused is scored on the correction;
    /// parallel calls spread over turns all count). When none ran, the last turn's attempts.
    fn of(messages: &[Message], events: &[RunEvent]) -> Self {
        let started: HashSet<&str> = events
            .iter()
            .filter_map(|event| match event {
                RunEvent::ToolStarted { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        let mut ran = Vec::new();
        let mut last_turn = Vec::new();
        let (mut attempted, mut searches) = (0, 0);
        for message in messages {
            let Message::Assistant { tool_calls, .. } = message else { continue };
            let turn: Vec<_> = tool_calls.iter().filter(|call| call.name != TOOL_SEARCH).collect();
            searches += tool_calls.len() - turn.len();
            attempted += turn.len();
            if turn.is_empty() {
                continue;
            }
            last_turn = turn.iter().map(|call| as_checked(&call.name, &call.arguments)).collect();
            for call in turn.iter().filter(|call| started.contains(call.id.as_str())) {
                let checked = as_checked(&call.name, &call.arguments);
                if !ran.contains(&checked) {
                    ran.push(checked);
                }
            }
        }
        let executed = ran.len();
        let scored = if ran.is_empty() { last_turn } else { ran };
        Self { scored, attempted, executed, searches }
    }
}

/// `{name: arguments}`; arguments that are not a JSON object are kept under `__unparsed__`,
/// which no BFCL function declares, so the checker refuses them.
fn as_checked(name: &str, arguments: &str) -> Value {
    let args = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        Ok(Value::Null) if arguments.trim() == "null" => Value::Object(Map::new()),
        _ if arguments.trim().is_empty() => Value::Object(Map::new()),
        _ => serde_json::json!({"__unparsed__": arguments}),
    };
    let mut call = Map::new();
    call.insert(name.to_owned(), args);
    Value::Object(call)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinytools::model::ToolCall;

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall::new(id, name, args)
    }

    fn started(id: &str) -> RunEvent {
        RunEvent::ToolStarted { call_id: id.into(), tool_name: String::new(), arguments: None }
    }

    #[test]
    fn the_calls_that_ran_are_scored_once_each() {
        let messages = vec![
            Message::user("q"),
            Message::Assistant { content: String::new(), tool_calls: vec![call("1", TOOL_SEARCH, "{}")] },
            Message::Assistant { content: String::new(), tool_calls: vec![call("2", "f", r#"{"x": "bad"}"#)] },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("3", "f", r#"{"x": 1}"#), call("4", "f", r#"{"x": 1}"#)],
            },
        ];
        let calls = Calls::of(&messages, &[started("3"), started("4")]);
        assert_eq!(calls.scored, vec![serde_json::json!({"f": {"x": 1}})]);
        assert_eq!((calls.attempted, calls.executed, calls.searches), (3, 1, 1));
    }

    #[test]
    fn without_a_run_call_the_last_attempts_are_scored() {
        let messages = vec![
            Message::Assistant { content: String::new(), tool_calls: vec![call("1", "f", "{}")] },
            Message::Assistant { content: String::new(), tool_calls: vec![call("2", "g", "not json")] },
            Message::Assistant { content: "done".into(), tool_calls: vec![] },
        ];
        let calls = Calls::of(&messages, &[]);
        assert_eq!(calls.scored, vec![serde_json::json!({"g": {"__unparsed__": "not json"}})]);
        assert_eq!(Calls::of(&[Message::user("q")], &[]).scored, Vec::<Value>::new());
    }
}
