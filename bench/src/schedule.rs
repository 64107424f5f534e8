//! [`run_arms`]: every arm's task runs, spread over lanes so a local server decodes several
//! conversations together.
//!
//! A CPU server decodes its slots in one batch: the weights are read once per step for every
//! slot, so four conversations decode in little more time than one. The all-Direct arm's prompt
//! fills most of a small server's shared context, and beside another conversation its cached
//! prefix would be evicted (a minute to compute again on two cores), so it runs alone first,
//! one task at a time. The other arms' task runs then share `lanes` lanes, taken from one
//! queue in which the arms alternate task by task, so every arm sees the same server load.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tinytools::model::ChatModel;

use crate::tasks::Task;
use crate::{ArmKind, ArmReport, ArmSpec, TaskResult, run_task};

/// One task run still to do: which arm, which round, which task.
#[derive(Clone, Copy, Debug)]
struct Item {
    arm: usize,
    run: usize,
    task: usize,
}

/// One finished task run, with when it started and ended (seconds since the schedule began).
struct Done {
    item: Item,
    span: (f64, f64),
    result: TaskResult,
}

/// Runs `runs` rounds of `tasks` in every arm of `specs` and returns one report per arm, in
/// `specs`' order, each with its results in task order. The all-Direct arms run first on one
/// lane; the rest on `lanes` lanes (at least 1). An arm's wall time is the span from its first
/// task's start to its last task's end. `progress` hears of every finished task run.
pub async fn run_arms(
    model: Arc<dyn ChatModel>,
    specs: &[ArmSpec],
    tasks: &[&Task],
    runs: usize,
    lanes: usize,
    progress: impl Fn(&ArmSpec, &TaskResult) + Sync,
) -> Vec<ArmReport> {
    let started = Instant::now();
    let (heavy, light): (Vec<usize>, Vec<usize>) = (0..specs.len()).partition(|&i| specs[i].kind == ArmKind::AllDirect);
    let mut done: Vec<Done> = Vec::new();
    for (arms, width) in [(heavy, 1), (light, lanes.max(1))] {
        let mut queue = VecDeque::new();
        for run in 0..runs.max(1) {
            for task in 0..tasks.len() {
                // Within one arm a task's runs stay in order; across arms they alternate.
                queue.extend(arms.iter().map(|&arm| Item { arm, run, task }));
            }
        }
        let queue = Mutex::new(queue);
        let workers = (0..width).map(|_| {
            let (model, queue, progress) = (model.clone(), &queue, &progress);
            async move {
                let mut finished = Vec::new();
                while let Some(item) = queue.lock().ok().and_then(|mut queue| queue.pop_front()) {
                    let spec = &specs[item.arm];
                    let from = started.elapsed().as_secs_f64();
                    let result = run_task(model.clone(), spec, tasks[item.task]).await;
                    let span = (from, started.elapsed().as_secs_f64());
                    progress(spec, &result);
                    finished.push(Done { item, span, result });
                }
                finished
            }
        });
        done.extend(futures_util::future::join_all(workers).await.into_iter().flatten());
    }
    done.sort_by_key(|d| (d.item.arm, d.item.run, d.item.task));
    let mut reports = Vec::with_capacity(specs.len());
    let mut rest = done.into_iter().peekable();
    for (arm, spec) in specs.iter().enumerate() {
        let (mut first, mut last) = (f64::INFINITY, 0.0_f64);
        let mut results = Vec::new();
        while let Some(next) = rest.next_if(|d| d.item.arm == arm) {
            first = first.min(next.span.0);
            last = last.max(next.span.1);
            results.push(next.result);
        }
        let wall_s = if results.is_empty() { 0.0 } else { last - first };
        reports.push(ArmReport::new(spec, results, wall_s));
    }
    reports
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AidsChoice, KeywordModel, arm};
    use tinytools::discovery::PrePromotion;

    #[test]
    fn every_arm_gets_every_task_in_order_whatever_the_lanes() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let kinds = [ArmKind::AllDirect, ArmKind::Bridge, ArmKind::Discovery];
        let specs: Vec<ArmSpec> = kinds
            .iter()
            .map(|&kind| arm(kind, 60, 0, PrePromotion::default(), 4, AidsChoice::Standard).unwrap())
            .collect();
        let tasks: Vec<&Task> = crate::tasks::all().iter().take(5).collect();
        let heard = Mutex::new(Vec::new());
        for lanes in [1, 3, 8] {
            heard.lock().unwrap().clear();
            let reports = runtime.block_on(run_arms(Arc::new(KeywordModel), &specs, &tasks, 2, lanes, |spec, _| {
                heard.lock().unwrap().push(spec.kind);
            }));
            assert_eq!(reports.len(), 3);
            for (report, kind) in reports.iter().zip(kinds) {
                assert_eq!(report.arm, kind.name());
                let ids: Vec<&str> = report.results.iter().map(|r| r.id.as_str()).collect();
                let expected: Vec<&str> = tasks.iter().chain(&tasks).map(|t| t.id).collect();
                assert_eq!(ids, expected, "{lanes} lanes, arm {}", report.arm);
                assert!(report.wall_s >= 0.0);
            }
            let heard = heard.lock().unwrap();
            assert_eq!(heard.len(), 30, "every task run is reported once");
            // The all-Direct arm runs first and alone.
            assert!(heard[..10].iter().all(|&kind| kind == ArmKind::AllDirect));
        }
    }
}
