//! What a run may spend and how much it lets in: usage limits, the per-turn call cap, tool
//! result and response caps, typed tool timeouts, cancellation in flight, strict-mode nulls.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse};
use tinytools::run::{Agent, RunCaps, RunEvent, RunFailure, RunPolicy, StopReason, UsageLimit, UsageLimits};
use tinytools::schema::{ProviderProfile, SchemaPreparation};
use tinytools::testkit::ScriptedModel;
use tinytools::{CancellationToken, ToolContext, ToolRegistry, tool};
use tinytools_integration_tests::Recorder;

/// Echoes its key, `size` times over.
#[tool(read_only)]
async fn echo(
    /// What to echo.
    key: String,
    /// How many times.
    size: Option<usize>,
) -> String {
    key.repeat(size.unwrap_or(1))
}

/// Never finishes on its own, and ignores cancellation.
#[tool(read_only)]
async fn forever() -> String {
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    "stopped".to_owned()
}

/// Stops when its call is cancelled.
#[tool(read_only)]
async fn polite(ctx: &ToolContext) -> String {
    ctx.cancellation().cancelled().await;
    "stopped when asked".to_owned()
}

/// Refuses with a message that happens to read like a timeout.
#[tool(read_only)]
async fn grumpy() -> Result<String, tinytools::Refusal> {
    Err("timed out waiting for the upstream lock".into())
}

static RELEASED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A synchronous tool that blocks its thread until `release` has run (or five seconds pass).
#[tool(read_only)]
fn blocker() -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !RELEASED.load(Ordering::SeqCst) {
        if Instant::now() > deadline {
            return "stalled".to_owned();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    "released".to_owned()
}

/// Releases `blocker` after a short async wait.
#[tool(read_only)]
async fn release() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    RELEASED.store(true, Ordering::SeqCst);
    "done".to_owned()
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new();
    registry.register(Echo).expect("registers");
    registry.register(Forever).expect("registers");
    registry.register(Polite).expect("registers");
    registry.register(Grumpy).expect("registers");
    registry.register(Blocker).expect("registers");
    registry.register(Release).expect("registers");
    Arc::new(registry)
}

fn tool_messages(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, content, is_error, .. } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_request_limit_ends_the_run_before_the_next_call_with_the_counts_and_the_usage() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "echo", json!({"key": "a"}))]).with_usage(100, 10),
        ModelResponse::calls([("c2", "echo", json!({"key": "b"}))]).with_usage(120, 10),
        ModelResponse::text("done"),
    ]));
    let limits = UsageLimits::default().with_max_requests(2);
    let agent = Agent::new(registry(), model.clone()).with_policy(RunPolicy::default().with_usage_limits(limits));
    let error = agent.run(vec![Message::user("go")]).await.expect_err("the limit ends it");
    let RunFailure::UsageLimit(over) = &error.source else { panic!("{error}") };
    assert_eq!((over.limit, over.allowed, over.used), (UsageLimit::Requests, 2, 3));
    assert_eq!(model.requests().len(), 2, "the third request was never sent");
    assert_eq!((error.usage.prompt_tokens, error.usage.completion_tokens), (220, 20));
    assert_eq!(tool_messages(&error.transcript.messages).len(), 2, "both calls kept their answers");
    assert!(error.to_string().contains("3 model requests against a limit of 2"), "{error}");
}

#[tokio::test]
async fn the_token_limit_is_checked_after_each_answer() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "echo", json!({"key": "a"}))]).with_usage(400, 50),
        ModelResponse::text("done").with_usage(500, 60),
    ]));
    let limits = UsageLimits::default().with_max_total_tokens(1_000);
    let agent = Agent::new(registry(), model).with_policy(RunPolicy::default().with_usage_limits(limits));
    let error = agent.run(vec![Message::user("go")]).await.expect_err("over the token limit");
    assert!(
        matches!(error.source, RunFailure::UsageLimit(over) if over.limit == UsageLimit::TotalTokens && over.used == 1_010)
    );
    // Within the limit the same run answers.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "echo", json!({"key": "a"}))]).with_usage(400, 50),
        ModelResponse::text("done").with_usage(500, 50),
    ]));
    let agent = Agent::new(registry(), model).with_policy(RunPolicy::default().with_usage_limits(limits));
    assert_eq!(agent.run(vec![Message::user("go")]).await.expect("fits").answer, "done");
}

#[tokio::test]
async fn calls_past_the_turn_cap_are_answered_not_run_and_none_is_lost() {
    // A model that sends 1,000 calls in one turn.
    let calls: Vec<(String, serde_json::Value)> =
        (0..1_000).map(|i| (format!("c{i}"), json!({"key": format!("k{i}")}))).collect();
    let turn = ModelResponse::calls(calls.iter().map(|(id, args)| (id.as_str(), "echo", args.clone())));
    let model = Arc::new(ScriptedModel::new([turn, ModelResponse::text("done")]));
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(registry(), model).with_events(recorder.clone());
    let outcome = agent.run(vec![Message::user("go")]).await.expect("runs");
    let answers = tool_messages(&outcome.transcript.messages);
    assert_eq!(answers.len(), 1_000, "every call is answered, in order");
    assert!(answers.iter().enumerate().all(|(i, a)| a.0 == format!("c{i}")));
    let cap = RunCaps::default().max_tool_calls_per_turn;
    assert!(answers[..cap].iter().enumerate().all(|(i, a)| !a.2 && a.1 == format!("k{i}")), "the first {cap} ran");
    assert!(answers[cap..].iter().all(|a| a.2 && a.1.contains("at most 16")), "{:?}", answers[cap]);
    let events = recorder.events();
    assert_eq!(events.iter().filter(|e| matches!(e, RunEvent::ToolStarted { .. })).count(), cap);
    assert_eq!(events.iter().filter(|e| matches!(e, RunEvent::ToolRejected { .. })).count(), 1_000 - cap);

    // The cap is the policy's.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("a", "echo", json!({"key": "a"})), ("b", "echo", json!({"key": "b"}))]),
        ModelResponse::text("done"),
    ]));
    let caps = RunCaps::default().with_max_tool_calls_per_turn(1);
    let agent = Agent::new(registry(), model).with_policy(RunPolicy::default().with_caps(caps));
    let answers = tool_messages(&agent.run(vec![Message::user("go")]).await.expect("runs").transcript.messages);
    assert!(!answers[0].2 && answers[1].2 && answers[1].1.contains("at most 1."), "{answers:?}");
}

#[tokio::test]
async fn a_long_result_reaches_the_model_cut_with_its_size() {
    // A tool returning 50 MB, under the default cap.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "echo", json!({"key": "é", "size": 25_000_000}))]),
        ModelResponse::text("done"),
    ]));
    let agent = Agent::new(registry(), model.clone());
    agent.run(vec![Message::user("go")]).await.expect("runs");
    let sent = tool_messages(&model.requests()[1].messages);
    let text = &sent[0].1;
    let cap = RunCaps::default().max_tool_result_bytes;
    assert!(text.len() < cap + 200, "{} bytes reached the model", text.len());
    assert!(text.starts_with(&"é".repeat(cap / 2)), "cut on a character boundary");
    let note = format!("[truncated: the tool's result was 50000000 bytes; the first {cap} are shown]");
    assert!(text.ends_with(&note), "{}", &text[text.len() - 120..]);
    assert_eq!(model.requests()[0].max_response_bytes, Some(RunCaps::default().max_response_bytes));
}

#[tokio::test]
async fn a_timeout_is_typed_and_a_tools_own_timed_out_message_is_not_one() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "forever", json!({})), ("c2", "grumpy", json!({}))]),
        ModelResponse::text("done"),
    ]));
    let recorder = Arc::new(Recorder::default());
    let policy = RunPolicy::default().with_tool_timeout(Duration::from_millis(250));
    let agent = Agent::new(registry(), model).with_policy(policy).with_events(recorder.clone());
    let outcome = agent.run(vec![Message::user("go")]).await.expect("runs");
    let answers = tool_messages(&outcome.transcript.messages);
    assert!(answers[0].2 && answers[0].1.contains("did not finish in time (250 ms)"), "{answers:?}");
    assert!(
        answers[1].2 && answers[1].1 == "timed out waiting for the upstream lock",
        "the tool's own refusal: {answers:?}"
    );
    let failed: Vec<String> = recorder
        .events()
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolFailed { tool_name, error, .. } => Some(format!("{tool_name}: {error}")),
            _ => None,
        })
        .collect();
    assert_eq!(failed, ["forever: tool `forever` did not finish within 250 ms"]);
}

/// Answers only once cancelled: a model call that hangs.
struct Hanging(AtomicUsize);

#[async_trait::async_trait]
impl ChatModel for Hanging {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::future::pending::<()>().await;
        Ok(ModelResponse::text("never"))
    }
}

#[tokio::test]
async fn cancelling_returns_promptly_while_the_model_is_thinking() {
    let cancel = CancellationToken::new();
    let model = Arc::new(Hanging(AtomicUsize::new(0)));
    let agent = Agent::new(registry(), model.clone());
    let trigger = cancel.clone();
    let cancelled_at = Arc::new(std::sync::Mutex::new(None));
    let stamp = cancelled_at.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        *stamp.lock().expect("stamp") = Some(Instant::now());
        trigger.cancel();
    });
    let outcome =
        agent.run_until_cancelled(vec![Message::user("go")], cancel).await.expect("a cancelled run is an outcome");
    let after_cancel = cancelled_at.lock().expect("stamp").expect("cancelled").elapsed();
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert_eq!(model.0.load(Ordering::SeqCst), 1);
    assert!(after_cancel < Duration::from_millis(100), "returned {after_cancel:?} after the cancel");
}

#[tokio::test]
async fn cancelling_while_tools_run_answers_every_call_and_stops() {
    let cancel = CancellationToken::new();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([
            ("c1", "forever", json!({})),
            ("c2", "echo", json!({"key": "a"})),
            ("c3", "polite", json!({})),
        ]),
        ModelResponse::text("never asked"),
    ]));
    let policy = RunPolicy::default().with_tool_timeout(Duration::from_secs(3_600));
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(registry(), model.clone()).with_policy(policy).with_events(recorder.clone());
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = agent.run_until_cancelled(vec![Message::user("go")], cancel).await.expect("an outcome");
    assert!(started.elapsed() < Duration::from_secs(60), "the stubborn tool was abandoned");
    // Every started call still ends with exactly one ToolCompleted or ToolFailed.
    let events = recorder.events();
    for id in ["c1", "c2", "c3"] {
        let ends = events
            .iter()
            .filter(|e| matches!(e, RunEvent::ToolCompleted { call_id, .. } | RunEvent::ToolFailed { call_id, .. } if call_id == id))
            .count();
        assert_eq!(ends, 1, "{id}: {events:?}");
    }
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert_eq!(model.requests().len(), 1);
    let answers = tool_messages(&outcome.transcript.messages);
    assert_eq!(answers.len(), 3, "no call is left without its result: {answers:?}");
    assert!(answers[0].2 && answers[0].1.contains("cancelled"), "abandoned: {answers:?}");
    assert_eq!(answers[1].1, "a", "a call that finished keeps its answer");
    assert!(answers[2].1.contains("cancelled") || answers[2].1 == "stopped when asked", "{answers:?}");
}

#[tokio::test]
async fn in_strict_mode_null_for_an_optional_argument_means_absent() {
    // An imported tool whose canonical schema does not accept null for its optional argument.
    let parameters = json!({"type": "object", "properties": {"symbol": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["symbol"]});
    let mut registry = ToolRegistry::new();
    let quote = tinytools_examples::eval::stub_tool("quote".into(), "Fetch a quote.".into(), parameters, "quoted");
    registry.register_arc(quote).expect("registers");
    let registry = Arc::new(registry);
    let run = |strict: bool| {
        let registry = registry.clone();
        async move {
            let model = Arc::new(ScriptedModel::new([
                ModelResponse::calls([("c1", "quote", json!({"symbol": "ACME", "limit": null}))]),
                ModelResponse::text("done"),
            ]));
            let preparation = SchemaPreparation::new(ProviderProfile::OPENAI).with_strict(strict);
            let policy = RunPolicy::default().with_tool_schemas(preparation);
            let outcome = Agent::new(registry, model).with_policy(policy).run(vec![Message::user("go")]).await;
            tool_messages(&outcome.expect("runs").transcript.messages).remove(0)
        }
    };
    assert_eq!(run(true).await, ("c1".to_owned(), "quoted".to_owned(), false));
    // Outside strict mode the model saw `limit` as an integer it may omit: null is refused.
    let refused = run(false).await;
    assert!(refused.2 && refused.1.contains("limit"), "{refused:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_synchronous_tool_runs_on_the_blocking_pool_and_cannot_stall_the_executor() {
    // On a single-threaded runtime a blocking fn run inline would hold the only thread, and
    // `release` could never run: `blocker` would answer "stalled".
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "blocker", json!({})), ("c2", "release", json!({}))]),
        ModelResponse::text("done"),
    ]));
    let outcome = Agent::new(registry(), model).run(vec![Message::user("go")]).await.expect("runs");
    let answers = tool_messages(&outcome.transcript.messages);
    assert_eq!((answers[0].1.as_str(), answers[1].1.as_str()), ("released", "done"), "{answers:?}");
}
