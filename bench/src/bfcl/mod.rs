//! BFCL end to end: each query of the Berkeley Function Calling Leaderboard's dev half through
//! the real [`Agent`](tinytools::run::Agent), its functions offered natively or deferred in a
//! pool of about 2,000, and the calls scored by BFCL's own AST checker from the bfcl-eval
//! wheel (read at run time, never copied here).
//!
//! ```text
//! bench/bfcl/setup.sh      # the wheel, --no-deps, in a venv of its own
//! cargo run --release -p tinytools-bench --bin bfcl -- --base-url URL --model NAME \
//!     --queries ../shared/eval/bfcl/queries.jsonl --arms native,pool --limit 150 --seed 1 --json
//! ```

mod arm;
mod chart;
mod checker;
mod data;
mod report;
mod run;
pub mod twins;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use futures_util::StreamExt;

pub use arm::{Arm, ArmSetup, DEFAULT_TWINS, MAX_TURNS, RANKER_TIMEOUT, STUB_ANSWER, TwinPool, unmapped_types};
pub use chart::draw as draw_chart;
pub use checker::{Checker, Verdict, default_python, script};
pub use data::{
    Dataset, Function, IRRELEVANCE_CATEGORIES, Query, QueryRow, TOOL_CATEGORIES, in_dev_half, load, sample,
};
pub use report::{Figures, figures, outcomes, table};
pub use run::{QueryResult, run_query};

use crate::{AidsChoice, Servers};
use std::sync::Arc;
use twins::{Profile, TwinRule};

/// One BFCL run: which model, arms, queries and aids, and where results go.
pub struct BfclRun {
    /// The model servers queries run against, each query run on the least busy one.
    pub servers: Servers,
    /// Its name, recorded with each result.
    pub model_name: String,
    /// The arms, run one after another.
    pub arms: Vec<ArmSetup>,
    /// The sampled queries.
    pub queries: Vec<Query>,
    /// The aids every run gets.
    pub aids: AidsChoice,
    /// Query runs in flight at once.
    pub lanes: usize,
    /// The results file: read first (finished queries are not run again), appended to after
    /// each query, so a run that stops keeps what it finished.
    pub results: Option<PathBuf>,
    /// Whether to run what the results file lacks (`false`: report only what it holds).
    pub run_missing: bool,
    /// The pooled functions and the rule of the twin-tolerant score (`None`: not scored).
    pub twin_score: Option<(Arc<TwinPool>, TwinRule)>,
}

impl BfclRun {
    /// Runs every arm over every query not already in the results file, scoring each with
    /// `checker` (when there is one) as it finishes. Queries go category by category in turn
    /// (the first of each, then the second of each, ...) and each through every arm before the
    /// next, so a run stopped part way leaves a balanced sample that every arm has answered.
    /// Returns this run's sample's results, earlier ones included.
    ///
    /// # Errors
    /// When the results file cannot be read or written.
    pub async fn run(
        &self,
        checker: Option<Checker>,
        progress: impl Fn(&QueryResult) + Sync,
    ) -> Result<Vec<QueryResult>, String> {
        let checker = checker.map(Mutex::new);
        let mut done = self.finished()?;
        let file = match &self.results {
            Some(path) => Some(Mutex::new(append(path)?)),
            None => None,
        };
        let by_qid: HashMap<&str, &Query> = self.queries.iter().map(|q| (q.qid.as_str(), q)).collect();
        let record = |mut result: QueryResult| -> Result<QueryResult, String> {
            if let (None, Some(checker)) = (result.valid, &checker) {
                let mut checker = checker.lock().map_err(|_| "the checker lock is poisoned".to_owned())?;
                match checker.check(&result.qid, &result.category, &result.scored_calls) {
                    Ok(verdict) => (result.valid, result.check_error) = (Some(verdict.valid), verdict.error),
                    Err(err) => result.check_error = Some(err),
                }
            }
            if let (None, Some(checker), Some(valid)) = (result.twin_valid, &checker, result.valid) {
                let renamed = match (&self.twin_score, by_qid.get(result.qid.as_str())) {
                    (Some((pool, rule)), Some(query)) if !valid => as_gold(query, &result.scored_calls, pool, *rule),
                    _ => None,
                };
                result.twin_valid = Some(valid);
                if let Some((calls, count)) = renamed {
                    let mut checker = checker.lock().map_err(|_| "the checker lock is poisoned".to_owned())?;
                    if let Ok(verdict) = checker.check(&result.qid, &result.category, &calls) {
                        result.twin_valid = Some(verdict.valid);
                        result.twin_calls = count;
                    }
                }
            }
            if let Some(file) = &file {
                let mut file = file.lock().map_err(|_| "the results lock is poisoned".to_owned())?;
                let line = serde_json::to_string(&result).map_err(|err| err.to_string())?;
                writeln!(file, "{line}").map_err(|err| format!("results file: {err}"))?;
            }
            progress(&result);
            Ok(result)
        };
        let mut out = Vec::new();
        let mut todo = Vec::new();
        for query in interleaved(&self.queries) {
            for setup in &self.arms {
                match done.remove(&(setup.label.clone(), query.qid.clone())) {
                    Some(result) if result.twin_valid.is_some() || checker.is_none() => out.push(result),
                    Some(result) => out.push(record(result)?),
                    None => todo.push((setup, query)),
                }
            }
        }
        if !self.run_missing {
            todo.clear();
        }
        let mut runs = futures_util::stream::iter(todo)
            .map(|(setup, query)| async move {
                let lease = self.servers.lease();
                run_query(lease.model(), &self.model_name, setup, query, self.aids).await
            })
            .buffer_unordered(self.lanes.max(1));
        while let Some(result) = runs.next().await {
            out.push(record(result)?);
        }
        Ok(out)
    }

    /// Results of this model and aids already in the results file, by arm and query.
    fn finished(&self) -> Result<HashMap<(String, String), QueryResult>, String> {
        let Some(path) = self.results.as_ref().filter(|path| path.exists()) else {
            return Ok(HashMap::new());
        };
        let text = std::fs::read_to_string(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        let aids = self.aids.name();
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str::<QueryResult>(line).ok())
            .filter(|result| result.model == self.model_name && result.aids == aids)
            .map(|result| ((result.arm.clone(), result.qid.clone()), result))
            .collect())
    }
}

/// The queries, category by category in turn, each category in its own order.
fn interleaved(queries: &[Query]) -> Vec<&Query> {
    let mut by_category: Vec<(&str, Vec<&Query>)> = Vec::new();
    for query in queries {
        match by_category.iter_mut().find(|(category, _)| *category == query.category) {
            Some((_, members)) => members.push(query),
            None => by_category.push((&query.category, vec![query])),
        }
    }
    let longest = by_category.iter().map(|(_, members)| members.len()).max().unwrap_or(0);
    (0..longest).flat_map(|i| by_category.iter().filter_map(move |(_, members)| members.get(i).copied())).collect()
}

/// `calls` with each call of a gold function's twin read as the gold function's, and how many
/// were: the gold functions are the query's own definitions of its gold names, a called
/// function the query's own definition or else the pool's.
fn as_gold(
    query: &Query,
    calls: &[serde_json::Value],
    pool: &TwinPool,
    rule: TwinRule,
) -> Option<(Vec<serde_json::Value>, usize)> {
    let offered: Vec<Profile> = query.offered.iter().map(Profile::of).collect();
    let gold_wire: Vec<String> =
        query.gold_names.iter().map(|name| tinytools_examples::eval::safe_name(name)).collect();
    let gold: Vec<Profile> = offered.iter().filter(|p| gold_wire.contains(&p.wire_name)).cloned().collect();
    let profile_of = |name: &str| offered.iter().find(|p| p.wire_name == name).or_else(|| pool.profile(name));
    let renamed = twins::as_gold(calls, &gold, profile_of, rule)?;
    let count = renamed.iter().zip(calls).filter(|(a, b)| a != b).count();
    Some((renamed, count))
}

fn append(path: &Path) -> Result<std::fs::File, String> {
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|err| format!("cannot open {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_take_turns_by_category() {
        let query = |qid: &str, category: &str| Query {
            qid: qid.into(),
            category: category.into(),
            text: String::new(),
            offered: vec![],
            gold_names: vec![],
        };
        let queries = [query("a1", "a"), query("a2", "a"), query("a3", "a"), query("b1", "b"), query("c1", "c")];
        let order: Vec<&str> = interleaved(&queries).iter().map(|q| q.qid.as_str()).collect();
        assert_eq!(order, ["a1", "b1", "c1", "a2", "a3"]);
    }
}
