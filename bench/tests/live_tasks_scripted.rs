//! The live task-suite benchmark, run end to end against the offline keyword model: every arm
//! runs every task, the figures it reports are the ones its runs produced, and the deferred
//! arms' first requests are the small ones. (Its success counts measure nothing: the real
//! figures come from a real model, in `docs/live.md`.)

use std::sync::Arc;

use tinytools::discovery::PrePromotion;
use tinytools::model::{ChatModel, ModelResponse};
use tinytools::testkit::ScriptedModel;
use tinytools_bench::{self as bench, AidsChoice, ArmKind, KeywordModel, tasks};
use tinytools_examples::eval;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_arm_runs_every_task_and_reports_what_its_runs_did() {
    let model: Arc<dyn ChatModel> = Arc::new(KeywordModel);
    let all: Vec<&tasks::Task> = tasks::all().iter().collect();
    let mut specs = Vec::new();
    for kind in ArmKind::ALL {
        match bench::arm(kind, 400, 1_000, PrePromotion::default(), 8, AidsChoice::Standard) {
            Ok(spec) => specs.push(spec),
            // The scale arm adds BFCL's tools: without the eval set it is left out, unless the
            // set is required.
            Err(message) if kind == ArmKind::Scale && tasks::bfcl_tools_path().is_err() && !eval::eval_required() => {
                eprintln!("skipped the scale arm: {message}")
            }
            Err(message) => panic!("{message}"),
        }
    }
    let seen = std::sync::Mutex::new(Vec::new());
    let reports = bench::run_arms(model, &specs, &all, 1, 3, |spec, _| seen.lock().unwrap().push(spec.kind)).await;
    assert_eq!(reports.len(), specs.len());
    for (report, spec) in reports.iter().zip(&specs) {
        assert_eq!(report.arm, spec.kind.name());
        let heard = seen.lock().unwrap().iter().filter(|&&kind| kind == spec.kind).count();
        assert_eq!((heard, report.results.len()), (all.len(), all.len()), "{}", report.arm);
        assert!(report.results.iter().all(|r| r.error.is_none()), "{}: no run error", report.arm);
        // What the report says is what the runs did.
        let searched = report.results.iter().filter(|r| r.calls.iter().any(|c| c == "tool_search")).count();
        assert_eq!(report.searched_runs(), searched);
        let json = report.to_json(false);
        assert_eq!(json["succeeded"], report.results.iter().filter(|r| r.success).count());
        assert_eq!(json["runs"], all.len());
        let by_kind: Vec<u64> =
            tasks::KINDS.iter().map(|kind| json["succeeded_by_kind"][kind].as_u64().unwrap_or(u64::MAX)).collect();
        assert_eq!(by_kind.iter().sum::<u64>(), json["succeeded"].as_u64().unwrap_or(0), "{}", report.arm);
        assert_eq!(json["runs_without_answer"], report.results.iter().filter(|r| !r.answered).count());
        assert_eq!(json["model_calls"], report.results.iter().map(|r| r.model_calls).sum::<usize>());
        for result in &report.results {
            // The kind, read off the task's expected steps.
            let kind = match tasks::get(&result.id).expect("a task of the suite").steps().len() {
                0 => "no_tool",
                1 => "single",
                _ => "chain",
            };
            assert_eq!(result.kind, kind, "{}", result.id);
        }
    }
    let bytes = |arm: &str| reports.iter().find(|r| r.arm == arm).map(|r| r.mean_first_call_tool_bytes());
    let direct = bytes("all-direct").expect("ran");
    for arm in ["deferred", "discovery"] {
        let deferred = bytes(arm).expect("ran");
        assert!(deferred < direct * 0.15, "{arm}: {deferred} of {direct} bytes");
    }
    // The bridge-only arm never pre-promotes; the discovery arm does for some tasks.
    let pre = |arm: &str| {
        reports
            .iter()
            .find(|r| r.arm == arm)
            .map_or(0, |r| r.results.iter().filter(|t| !t.pre_promoted.is_empty()).count())
    };
    assert_eq!(pre("deferred"), 0);
    assert!(pre("discovery") > 0);
    let table = bench::table(&reports);
    assert!(table.lines().count() >= 4, "{table}");
}

/// `--aids` reaches every run: an empty reply is asked once more for the answer under `small`,
/// and is the answer under `standard` and `none`; the result names the aid that acted.
#[tokio::test]
async fn the_aids_choice_reaches_the_run() {
    let task = tasks::get("finance-share-price").expect("a task of the suite");
    let mut model_calls = Vec::new();
    let ablation = AidsChoice::parse("small-without:ask_after_empty_reply").expect("an aid of small_model");
    for aids in AidsChoice::ALL.into_iter().chain([ablation]) {
        let spec = bench::arm(ArmKind::Discovery, 60, 0, small_model_pre(), 8, aids).expect("the arm");
        assert_eq!(spec.aids, aids);
        let model = Arc::new(ScriptedModel::new([ModelResponse::text(""), ModelResponse::text("No idea.")]));
        let result = bench::run_task(model, &spec, task).await;
        assert!(result.error.is_none(), "{aids:?}: {:?}", result.error);
        let expected: &[&str] = if aids.name() == "small" { &["ask_after_empty_reply:feedback"] } else { &[] };
        assert_eq!(result.aids_acted, expected, "{aids:?}");
        // Only the request for the answer gets one: the empty reply ends the other runs with
        // nothing for the user to read.
        assert_eq!(result.answered, aids.name() == "small", "{aids:?}");
        assert_eq!(result.kind, "single");
        // The run's keyword request for pre-promotion is counted apart from the turns.
        assert_eq!(result.keyword_calls, 1, "{aids:?}");
        model_calls.push((aids.name(), result.model_calls));
    }
    let model_calls: Vec<(&str, usize)> = model_calls.iter().map(|(name, calls)| (name.as_str(), *calls)).collect();
    assert_eq!(model_calls, [("none", 1), ("standard", 1), ("small", 2), ("small-without:ask_after_empty_reply", 1)]);
}

/// `--stream` runs the same loop over the model's stream: the same calls, judgement and
/// requests as a plain run, and the moment the first text arrived is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_run_is_judged_like_a_plain_one_and_records_its_first_text() {
    let mut spec =
        bench::arm(ArmKind::Discovery, 400, 0, PrePromotion::default(), 8, AidsChoice::Standard).expect("the arm");
    let tasks: Vec<&tasks::Task> = tasks::all().iter().take(6).collect();
    for task in tasks {
        spec.stream = false;
        let plain = bench::run_task(Arc::new(KeywordModel), &spec, task).await;
        spec.stream = true;
        let streamed = bench::run_task(Arc::new(KeywordModel), &spec, task).await;
        assert_eq!(
            (&streamed.calls, streamed.success, streamed.model_calls, streamed.first_call_tool_bytes),
            (&plain.calls, plain.success, plain.model_calls, plain.first_call_tool_bytes),
            "{}",
            task.id
        );
        assert_eq!(plain.first_text_ms, None, "a plain run records no first text");
        let first = streamed.first_text_ms.expect("the answer's text streamed");
        assert!(first <= streamed.wall_ms, "{first} ms of {} ms", streamed.wall_ms);
    }
}

/// Pre-promotion under the small-model profile the suite runs: with the run's keyword request.
fn small_model_pre() -> PrePromotion {
    tinytools::run::RunPolicy::small_model().discovery.pre_promotion
}
