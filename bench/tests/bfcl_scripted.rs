//! The BFCL arm end to end against offline models: the real agent, the real checker (from the
//! bfcl-eval wheel `bench/bfcl/setup.sh` installs; CI sets `TINYTOOLS_BFCL_REQUIRED=1`, so a
//! missing wheel fails here instead of skipping), the real dev-half queries (the public eval
//! set, skipped when missing unless `TINYTOOLS_EVAL_REQUIRED=1`).

#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tinytools::model::{ChatModel, ModelError, ModelRequest, ModelResponse};
use tinytools_bench::bfcl::twins::TwinRule;
use tinytools_bench::bfcl::{self, Arm, ArmSetup, BfclRun, Checker, Dataset, TwinPool};
use tinytools_bench::{AidsChoice, KeywordModel, Servers};
use tinytools_examples::eval;

/// BFCL's dev half, or `None` (the test skipped, with one line) when it is missing.
fn eval_dir() -> Option<PathBuf> {
    Some(eval::sets_or_skip(&["bfcl"])?.join("bfcl"))
}

fn checker() -> Option<Checker> {
    match Checker::start(&bfcl::default_python()) {
        Ok(checker) => Some(checker),
        Err(err) if std::env::var_os("TINYTOOLS_BFCL_REQUIRED").is_some() => panic!("{err}"),
        Err(err) => {
            eprintln!("skipped: {err}");
            None
        }
    }
}

fn dataset(dir: &Path, checker: &Checker) -> Dataset {
    bfcl::load(&dir.join("queries.jsonl"), &dir.join("tools.jsonl"), Some(&checker.data_dir))
        .expect("the dev half and the wheel load")
}

/// Answers each query with the call the test hands it, in BFCL's right answer's shape.
struct Oracle {
    calls: Vec<(String, Value)>,
    seen: AtomicUsize,
}

#[async_trait::async_trait]
impl ChatModel for Oracle {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.seen.fetch_add(1, Ordering::SeqCst);
        // Like a server, it answers later: other runs in flight go on meanwhile.
        tokio::task::yield_now().await;
        // Like a small model, it calls again after a result, for as long as tools are offered.
        if request.tools.is_empty() {
            return Ok(ModelResponse::text("Done."));
        }
        let calls: Vec<(String, &str, Value)> = self
            .calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| (format!("c{i}"), name.as_str(), args.clone()))
            .collect();
        Ok(ModelResponse::calls(calls.iter().map(|(id, name, args)| (id.as_str(), *name, args.clone()))))
    }
}

#[test]
fn the_checker_is_bfcl_s_own_and_reads_its_answers() {
    let Some(mut checker) = checker() else { return };
    let right = checker.check(
        "simple_python_0",
        "simple_python",
        &[json!({"calculate_triangle_area": {"base": 10, "height": 5}})],
    );
    assert_eq!(right.map(|v| v.valid), Ok(true));
    let wrong = checker
        .check("simple_python_0", "simple_python", &[json!({"calculate_triangle_area": {"base": 10, "height": 6}})])
        .unwrap();
    assert!(!wrong.valid && wrong.error.is_some_and(|e| e.contains("height")));
    // Dots become underscores, as BFCL expects of function-calling APIs.
    let dotted = checker.check("simple_python_1", "simple_python", &[json!({"math_factorial": {"number": 5}})]);
    assert_eq!(dotted.map(|v| v.valid), Ok(true));
    assert_eq!(checker.check("irrelevance_1", "irrelevance", &[]).map(|v| v.valid), Ok(true));
    assert_eq!(checker.check("irrelevance_1", "irrelevance", &[json!({"f": {}})]).map(|v| v.valid), Ok(false));
}

/// The right call, emitted through the real agent in the pool arm (2,000 Deferred functions),
/// is found by name, runs, and BFCL's checker counts it right; the native arm too.
#[tokio::test]
async fn a_right_call_through_the_agent_is_scored_right_in_both_arms() {
    let Some(dir) = eval_dir() else { return };
    let Some(checker) = checker() else { return };
    let data = dataset(&dir, &checker);
    let query = data.queries.iter().find(|q| q.qid == "simple_python_0").expect("in the dev half").clone();
    let model = Arc::new(Oracle {
        calls: vec![("calculate_triangle_area".into(), json!({"base": 10, "height": 5}))],
        seen: AtomicUsize::new(0),
    });
    let results = tempfile_path("right");
    let run = BfclRun {
        servers: Servers::one(model.clone()),
        model_name: "oracle".into(),
        arms: vec![ArmSetup::new(Arm::Native, &data, None).unwrap(), ArmSetup::new(Arm::Pool, &data, None).unwrap()],
        queries: vec![query],
        aids: AidsChoice::Standard,
        lanes: 1,
        results: Some(results.clone()),
        run_missing: true,
        twin_score: None,
    };
    let out = run.run(Some(checker), |_| {}).await.expect("runs");
    assert_eq!(out.len(), 2);
    for result in &out {
        assert_eq!(result.valid, Some(true), "{result:?}");
        assert_eq!((result.attempted, result.executed), (1, 1));
        // BFCL scores one response: once the call ran, the next turn has no tools and ends it.
        assert_eq!(result.model_calls, 2, "{result:?}");
    }
    let pool = &out[1];
    assert!(pool.gold_offered, "pre-promotion put the gold function in the first request");
    assert!(pool.first_request_tool_bytes < 2_500, "{}", pool.first_request_tool_bytes);
    // Resumable: a second run over the same file makes no model call.
    let calls = model.seen.load(Ordering::SeqCst);
    let again = BfclRun { arms: vec![ArmSetup::new(Arm::Native, &data, None).unwrap()], ..run };
    let out = again.run(None, |_| {}).await.expect("runs");
    assert_eq!((out.len(), out[0].valid), (1, Some(true)));
    assert_eq!(model.seen.load(Ordering::SeqCst), calls);
    // Report only: what the file holds for the sample, nothing run for the rest.
    let other = data.queries.iter().find(|q| q.qid == "simple_python_1").expect("in the dev half").clone();
    let report = BfclRun { queries: vec![other], run_missing: false, ..again };
    assert!(report.run(None, |_| {}).await.expect("reads").is_empty());
    assert_eq!(model.seen.load(Ordering::SeqCst), calls);
    let _ = std::fs::remove_file(results);
}

/// The scripted keyword model over a seeded sample: every query gets a verdict, the sample is
/// stratified over all nine categories, and the pool's first request stays small.
#[tokio::test]
async fn the_scripted_model_runs_a_sample_of_every_category() {
    let Some(dir) = eval_dir() else { return };
    let Some(checker) = checker() else { return };
    let data = dataset(&dir, &checker);
    let queries = bfcl::sample(&data.queries, 30, 1);
    let categories: std::collections::BTreeSet<&str> = queries.iter().map(|q| q.category.as_str()).collect();
    assert_eq!(categories.len(), 9, "{categories:?}");
    let run = BfclRun {
        servers: Servers::one(Arc::new(KeywordModel)),
        model_name: "scripted".into(),
        arms: vec![ArmSetup::new(Arm::Pool, &data, None).unwrap()],
        queries,
        aids: AidsChoice::Standard,
        lanes: 2,
        results: None,
        run_missing: true,
        twin_score: None,
    };
    let out = run.run(Some(checker), |_| {}).await.expect("runs");
    assert_eq!(out.len(), 30);
    assert!(
        out.iter().all(|r| r.valid.is_some() && r.check_error.as_deref().is_none_or(|e| !e.contains("checker failed")))
    );
    let figures = bfcl::figures(&out);
    let tools = &figures["pool"]["tools (all)"];
    assert!(tools.first_tool_bytes / tools.n < 2_500);
}

fn tempfile_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tinytools-bfcl-{name}-{}.jsonl", std::process::id()))
}

/// Two servers: query runs spread over both, each run's turns on the server it started on.
#[tokio::test]
async fn query_runs_spread_over_the_servers_and_keep_theirs() {
    let Some(dir) = eval_dir() else { return };
    let data = bfcl::load(&dir.join("queries.jsonl"), &dir.join("tools.jsonl"), None).expect("loads");
    let queries = bfcl::sample(&data.queries, 8, 1);
    let oracle = || Arc::new(Oracle { calls: vec![("no_such_function".into(), json!({}))], seen: AtomicUsize::new(0) });
    let (left, right) = (oracle(), oracle());
    let run = BfclRun {
        servers: Servers::new(vec![left.clone(), right.clone()]).expect("two servers"),
        model_name: "two".into(),
        arms: vec![ArmSetup::new(Arm::Native, &data, None).unwrap()],
        queries,
        aids: AidsChoice::Standard,
        lanes: 2,
        results: None,
        run_missing: true,
        twin_score: None,
    };
    let out = run.run(None, |_| {}).await.expect("runs");
    assert_eq!(out.len(), 8);
    let (on_left, on_right) = (left.seen.load(Ordering::SeqCst), right.seen.load(Ordering::SeqCst));
    let all: usize = out.iter().map(|r| r.model_calls).sum();
    assert_eq!(on_left + on_right, all, "every model call went to one of the two");
    assert!(on_left > 0 && on_right > 0, "both servers answered: {on_left} and {on_right}");
}

/// The native + twins arm offers the query's own functions and the pooled ones most like them,
/// all Direct; a right call of the gold function's same-job twin is wrong by BFCL's score and
/// right by the twin-tolerant one, a call of another job's function wrong by both.
#[tokio::test]
async fn a_twin_s_right_call_counts_only_in_the_twin_tolerant_score() {
    let Some(dir) = eval_dir() else { return };
    let Some(checker) = checker() else { return };
    let data = dataset(&dir, &checker);
    let query = data.queries.iter().find(|q| q.qid == "simple_python_0").expect("in the dev half").clone();
    let arm = ArmSetup::new(Arm::NativeTwins, &data, None).unwrap();
    let twins: Vec<String> = arm.twins_for(&query).iter().map(|f| f.name.clone()).collect();
    assert_eq!(twins.len(), bfcl::DEFAULT_TWINS);
    let (registry, _) = arm.for_query(&query);
    assert_eq!(registry.len(), query.offered.len() + twins.len());
    assert!(twins.iter().all(|name| registry.contains(&eval::safe_name(name))), "{twins:?}");
    let wider = ArmSetup::new(Arm::NativeTwins, &data, None).unwrap().with_twins(5);
    assert_eq!((wider.twins_for(&query).len(), wider.label.as_str()), (5, "native+twins5"));
    let pool = Arc::new(TwinPool::new(&data.pool));
    let mut outcomes = Vec::new();
    for called in ["calc_area_triangle", "calculate_circumference"] {
        let model = Arc::new(Oracle {
            calls: vec![(called.into(), json!({"base": 10, "height": 5}))],
            seen: AtomicUsize::new(0),
        });
        let run = BfclRun {
            servers: Servers::one(model),
            model_name: "oracle".into(),
            arms: vec![ArmSetup::new(Arm::NativeTwins, &data, None).unwrap()],
            queries: vec![query.clone()],
            aids: AidsChoice::Standard,
            lanes: 1,
            results: None,
            run_missing: true,
            twin_score: Some((pool.clone(), TwinRule::default())),
        };
        let checker = checker_or_panic();
        let out = run.run(Some(checker), |_| {}).await.expect("runs");
        outcomes.push((out[0].valid, out[0].twin_valid, out[0].twin_calls));
    }
    assert_eq!(outcomes, [(Some(false), Some(true), 1), (Some(false), Some(false), 0)]);
}

fn checker_or_panic() -> Checker {
    Checker::start(&bfcl::default_python()).expect("the checker started a moment ago")
}
