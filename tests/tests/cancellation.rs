//! A timeout or a cancellation stops the tool: 1,000 runs whose tools hang, time out, panic,
//! are cancelled, are dropped with their run or block their thread leave no task, no blocking
//! thread and no later side effect behind (issue 64). Alive tasks are the runtime's own count
//! (`RuntimeMetrics::num_alive_tasks`); threads are counted by the runtime's thread start and
//! stop hooks, since tokio's blocking-thread count is an unstable metric.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools::{CancellationToken, Tool, ToolContext, ToolRegistry, tool};
use tokio::sync::Semaphore;

/// What hung tools wait for: released only after every run has returned.
static GATE: Semaphore = Semaphore::const_new(0);
/// Side effects done after a hung tool's await: must stay 0.
static LATE_EFFECTS: AtomicUsize = AtomicUsize::new(0);
/// Calls of the blocking tool that ran to their end.
static BLOCKING_DONE: AtomicUsize = AtomicUsize::new(0);
/// The tokens of every hung call, to check that each fired.
static TOKENS: Mutex<Vec<CancellationToken>> = Mutex::new(Vec::new());

/// Waits for the gate, then does its side effect.
#[tool]
async fn hang(ctx: &ToolContext) -> String {
    if let Ok(mut tokens) = TOKENS.lock() {
        tokens.push(ctx.cancellation().clone());
    }
    let _permit = GATE.acquire().await;
    LATE_EFFECTS.fetch_add(1, Ordering::SeqCst);
    "sent".to_owned()
}

/// Panics.
#[tool]
async fn boom() -> String {
    panic!("the tool broke")
}

/// Blocks its thread briefly, as it says.
#[tool(blocking)]
async fn crunch() -> String {
    std::thread::sleep(Duration::from_millis(2));
    BLOCKING_DONE.fetch_add(1, Ordering::SeqCst);
    "crunched".to_owned()
}

/// How a run ends.
#[derive(Clone, Copy, Debug)]
enum Ending {
    /// `hang` runs past the tool timeout.
    TimedOut,
    /// `hang` runs until the host cancels the run.
    Cancelled,
    /// `hang` runs until the host drops the run's future.
    Dropped,
    /// `boom` panics.
    Panicked,
    /// `crunch` blocks its thread and returns.
    Blocking,
}

const ENDINGS: [Ending; 5] = [Ending::TimedOut, Ending::Cancelled, Ending::Dropped, Ending::Panicked, Ending::Blocking];

fn registry() -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new();
    registry.register(Hang).expect("registers");
    registry.register(Boom).expect("registers");
    registry.register(Crunch).expect("registers");
    Arc::new(registry)
}

/// An agent whose model calls `tool` once, with this tool timeout.
fn agent(registry: &Arc<ToolRegistry>, tool: &str, timeout: Duration) -> Agent {
    let model = ScriptedModel::new([ModelResponse::calls([("c1", tool, json!({}))]), ModelResponse::text("done")]);
    let policy = RunPolicy::default().with_tool_timeout(timeout);
    Agent::new(Arc::clone(registry), Arc::new(model)).with_policy(policy)
}

/// One run ending as `ending` says; returns what the model read of the call, if the run returned.
async fn run(registry: Arc<ToolRegistry>, ending: Ending) -> Option<String> {
    let messages = vec![Message::user("go")];
    // Where the host stops the run, the tool's own timeout is out of reach.
    let (short, long) = (Duration::from_millis(30), Duration::from_secs(60));
    let outcome = match ending {
        Ending::TimedOut => agent(&registry, "hang", short).run(messages).await,
        Ending::Panicked => agent(&registry, "boom", short).run(messages).await,
        Ending::Blocking => agent(&registry, "crunch", long).run(messages).await,
        Ending::Cancelled => {
            let cancel = CancellationToken::new();
            let later = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                later.cancel();
            });
            let outcome = agent(&registry, "hang", long).run_until_cancelled(messages, cancel).await;
            let stop = outcome.as_ref().map(|outcome| outcome.stop.clone());
            assert!(matches!(stop, Ok(StopReason::Cancelled)), "{stop:?}");
            outcome
        }
        Ending::Dropped => {
            let agent = agent(&registry, "hang", long);
            let run = agent.run(messages);
            assert!(
                tokio::time::timeout(Duration::from_millis(5), run).await.is_err(),
                "the run should still be waiting"
            );
            return None;
        }
    };
    let outcome = outcome.expect("the run ends");
    outcome.transcript.messages.iter().find_map(|message| match message {
        Message::Tool { content, .. } => Some(content.clone()),
        _ => None,
    })
}

/// Keeps the panics `boom` makes on purpose out of the test's output.
fn quiet_boom() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&"the tool broke") {
            default(info);
        }
    }));
}

#[test]
fn a_thousand_runs_leave_no_task_no_thread_and_no_late_side_effect() {
    quiet_boom();
    let threads = Arc::new(AtomicUsize::new(0));
    let (started, stopped) = (Arc::clone(&threads), Arc::clone(&threads));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_keep_alive(Duration::from_millis(20))
        .on_thread_start(move || {
            started.fetch_add(1, Ordering::SeqCst);
        })
        .on_thread_stop(move || {
            stopped.fetch_sub(1, Ordering::SeqCst);
        })
        .enable_all()
        .build()
        .expect("a runtime");
    let registry = registry();
    let metrics = runtime.metrics();
    let workers = metrics.num_workers();
    let before = (metrics.num_alive_tasks(), threads.load(Ordering::SeqCst));
    assert_eq!(before, (0, workers), "before: no task, no thread but the workers");
    let answers = runtime.block_on(async {
        let mut answers = Vec::new();
        for batch in 0..10 {
            let runs: Vec<_> = (0..100)
                .map(|i| tokio::spawn(run(Arc::clone(&registry), ENDINGS[(batch * 100 + i) % ENDINGS.len()])))
                .collect();
            for handle in runs {
                answers.push(handle.await.expect("a run never panics"));
            }
        }
        // Every run has returned: let every hung tool through. Any tool still alive now would
        // do its side effect.
        GATE.add_permits(10_000);
        tokio::time::sleep(Duration::from_millis(100)).await;
        answers
    });
    let timed_out = answers.iter().flatten().filter(|answer| answer.contains("did not finish in time")).count();
    let cancelled = answers.iter().flatten().filter(|answer| answer.contains("was cancelled")).count();
    let crashed = answers.iter().flatten().filter(|answer| answer.contains("crashed while running")).count();
    assert_eq!((timed_out, cancelled, crashed), (200, 200, 200), "{:?}", &answers[..5]);
    assert_eq!(answers.iter().filter(|answer| answer.is_none()).count(), 200, "the dropped runs");
    assert_eq!(BLOCKING_DONE.load(Ordering::SeqCst), 200, "every blocking call ran to its end");
    assert_eq!(LATE_EFFECTS.load(Ordering::SeqCst), 0, "a stopped tool did its side effect later");
    let tokens = TOKENS.lock().map(|tokens| tokens.clone()).unwrap_or_default();
    assert_eq!(tokens.len(), 600);
    assert!(tokens.iter().all(CancellationToken::is_cancelled), "every stopped call's token fired");

    // Aborted tasks are released as the workers get to them, idle blocking threads after their
    // keep-alive: wait for both, then count.
    let deadline = Instant::now() + Duration::from_secs(10);
    while (metrics.num_alive_tasks() > 0 || threads.load(Ordering::SeqCst) > workers) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let after = (metrics.num_alive_tasks(), threads.load(Ordering::SeqCst));
    assert_eq!(after, before, "after 1,000 runs: (alive tasks, threads) as before");
}

/// A tool that blocks its thread without saying so holds one worker, not the run: on a
/// multi-threaded runtime the run still answers at its timeout.
#[test]
fn an_undeclared_blocking_tool_does_not_hold_the_run_past_its_timeout() {
    /// Blocks its thread for a second, without saying so.
    #[tool]
    async fn stall() -> String {
        std::thread::sleep(Duration::from_secs(1));
        "late".to_owned()
    }
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    let mut registry = ToolRegistry::new();
    registry.register(Stall).expect("registers");
    let model = ScriptedModel::new([ModelResponse::calls([("c1", "stall", json!({}))]), ModelResponse::text("done")]);
    let policy = RunPolicy::default().with_tool_timeout(Duration::from_millis(50));
    let agent = Agent::new(Arc::new(registry), Arc::new(model)).with_policy(policy);
    let started = Instant::now();
    let outcome = runtime.block_on(agent.run(vec![Message::user("go")])).expect("the run ends");
    let took = started.elapsed();
    assert_eq!(outcome.answer, "done");
    let answer = match &outcome.transcript.messages[2] {
        Message::Tool { content, .. } => content.clone(),
        other => panic!("{other:?}"),
    };
    assert!(answer.contains("did not finish in time"), "{answer}");
    // The stalled worker is still asleep when the run returns: the run did not wait for it.
    assert!(took < Duration::from_millis(900), "the run waited {took:?} for a stalled tool");
    assert!(!Stall.blocking());
}

/// `#[tool(blocking)]` is a fact of the tool that the registry keeps.
#[test]
fn the_blocking_flag_is_the_tools_own_fact() {
    assert!(Crunch.blocking());
    assert!(!Hang.blocking());
    let registry = registry();
    assert!(registry.get("crunch").is_some_and(|tool| tool.spec().blocking));
    assert!(registry.get("hang").is_some_and(|tool| !tool.spec().blocking));
}
