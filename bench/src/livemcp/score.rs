//! Ranking LiveMCPBench's tasks against its catalogue, and scoring the rankings.
//!
//! Every query goes through [`DeferredCatalog::rank`](tinytools::discovery::DeferredCatalog::rank)
//! with the bridge's policy, the path `tool_search` and pre-promotion take. Scores are at the
//! level of tool names (the annotations name no server): a ranking is read as the distinct
//! tool names of its hits, in order.
//! - **task level**: the task's question ranked; recall of the chain's distinct tools.
//! - **aligned steps**: where an annotation has as many steps as tools, step *i* is taken to
//!   need tool *i*; each such step's text ranked; recall of that one tool.
//! - **step union**: every step's text ranked; a chain tool counts as found at *k* when any
//!   step's top *k* holds it (an agent searching once per step).
//! - **chain**: the share of tasks whose every matched chain tool is in the steps' union at *k*
//!   (all or nothing per task; "question chain": every one in the question's own top *k*).
//! - **mis-paired steps**: aligned steps whose annotated tool is not the one their text
//!   describes ([`pairing`](super::pairing)), listed by id (`{task id}#{step number}`), and
//!   the aligned figure again without them.
//! - **pre-promotion**: what query-aware discovery would load before the first model call, as
//!   a run does it (floor, limit, token budget, [`EstimatedTokens`], the run's default
//!   counter): for the question alone, and for a conversation in which the question and then
//!   each step arrive as user messages (each promotes up to its limit of new tools).

use std::time::Instant;

use serde_json::{Value, json};

use crate::percentile::{percentile, sorted};
use tinytools::discovery::{DiscoveryBridge, RankOutcome};
use tinytools::schema::{EstimatedTokens, count_tool_schema_tokens};
use tinytools_examples::eval::{self, Scores};

use super::pairing::{Pairing, pairing};
use super::{Catalogue, Data, Task};

/// How many hits each scored ranking asks for; the scores read its first ten distinct names.
pub const RANK_LIMIT: usize = 20;

/// A gold tool name no catalogue tool carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmatched {
    /// The task's id.
    pub task: String,
    /// The name as annotated.
    pub name: String,
}

/// What pre-promotion loaded, summed over the tasks with matched gold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Tasks counted.
    pub tasks: usize,
    /// Tasks whose matched gold tools were all loaded.
    pub tasks_all_loaded: usize,
    /// Matched gold tools, summed over the tasks.
    pub gold: usize,
    /// Of those, how many were loaded.
    pub gold_loaded: usize,
    /// User messages ranked.
    pub messages: usize,
    /// Tools promoted, summed over the messages.
    pub promoted: usize,
    /// The promoted declarations' tokens, summed over the messages.
    pub tokens: usize,
}

impl Loaded {
    fn add(&mut self, gold: &[&str], loaded: &[String], messages: usize, tokens: usize) {
        let found = gold.iter().filter(|name| loaded.iter().any(|l| l == *name)).count();
        self.tasks += 1;
        self.tasks_all_loaded += usize::from(found == gold.len());
        self.gold += gold.len();
        self.gold_loaded += found;
        self.messages += messages;
        self.promoted += loaded.len();
        self.tokens += tokens;
    }

    fn to_json(self) -> Value {
        let ratio = |a: usize, b: usize| round(a as f64 / b.max(1) as f64);
        json!({
            "tasks": self.tasks,
            "tasks_all_gold_loaded": ratio(self.tasks_all_loaded, self.tasks),
            "gold_loaded": ratio(self.gold_loaded, self.gold),
            "messages": self.messages,
            "mean_promoted_per_message": ratio(self.promoted, self.messages),
            "mean_tokens_per_message": ratio(self.tokens, self.messages),
        })
    }
}

/// Every figure of one evaluation, per task or step, to be averaged by [`Self::to_json`].
#[derive(Debug, Default)]
pub struct Evaluation {
    /// Distinct gold tool names, summed over tasks.
    pub gold_names: usize,
    /// The gold names no catalogue tool carries.
    pub unmatched: Vec<Unmatched>,
    /// Gold names (summed over tasks) that more than one catalogue tool carries.
    pub ambiguous: usize,
    /// Per task with matched gold: its question's scores against the matched gold.
    pub task_level: Vec<Scores>,
    /// Per task with any gold, matched or not: the same, unmatched gold counted as missed.
    pub task_level_all_gold: Vec<Scores>,
    /// Tasks whose steps pair one to one with their tools.
    pub aligned_tasks: usize,
    /// Per aligned step whose tool is matched: its text's scores against that tool.
    pub aligned_steps: Vec<Scores>,
    /// Per task with steps and matched gold: recall at 5, 10 and 20 of the steps' union.
    pub step_union: Vec<(f64, f64, f64)>,
    /// Per task with steps and matched gold: every gold tool in the steps' union at 10, at 20.
    pub chain: Vec<(bool, bool)>,
    /// Per task with matched gold: every gold tool in the question's top 10, top 20.
    pub question_chain: Vec<(bool, bool)>,
    /// Aligned steps whose annotated tool is another link's ([`Pairing::MisPaired`]), by id.
    pub mispaired: Vec<String>,
    /// Aligned steps that share no word with their tool or the chain's names, by id.
    pub unrelated: Vec<String>,
    /// Per aligned step that is not mis-paired: its scores, as `aligned_steps`.
    pub aligned_paired: Vec<Scores>,
    /// Per task with matched gold: its outcomes (ids and ranks only, no task text).
    pub per_task: Vec<Value>,
    /// Pre-promotion on the question alone.
    pub question_loaded: Loaded,
    /// Pre-promotion on the question and then every step as user messages.
    pub steps_loaded: Loaded,
    /// Milliseconds of every scored ranking.
    pub latencies_ms: Vec<f64>,
    /// Why the host ranker was not served, per ranking where it was not.
    pub fallbacks: Vec<String>,
}

/// Ranks every task of `data` through `bridge` (its catalogue and policy) and scores it.
pub async fn evaluate(data: &Data, bridge: &DiscoveryBridge) -> Evaluation {
    let mut evaluation = Evaluation::default();
    for task in &data.tasks {
        evaluation.task(&data.catalogue, bridge, task).await;
    }
    evaluation
}

impl Evaluation {
    async fn task(&mut self, catalogue: &Catalogue, bridge: &DiscoveryBridge, task: &Task) {
        let (gold, unmatched) = task.gold(catalogue);
        self.gold_names += gold.len() + unmatched.len();
        self.ambiguous += gold.iter().filter(|name| catalogue.count_named(name) > 1).count();
        self.unmatched
            .extend(unmatched.iter().map(|name| Unmatched { task: task.id.clone(), name: (*name).to_owned() }));
        if task.tools.is_empty() {
            return;
        }
        let names = self.rank(catalogue, bridge, &task.question).await;
        let listed: Vec<&str> = names.iter().map(String::as_str).collect();
        let all_gold = eval::dedup_in_order(task.tools.iter().map(String::as_str));
        self.task_level_all_gold.push(Scores::of(&listed, &all_gold));
        if gold.is_empty() {
            return;
        }
        self.task_level.push(Scores::of(&listed, &gold));
        let all_within = |ranking: &[String], k: usize| gold.iter().all(|g| ranking.iter().take(k).any(|n| n == g));
        self.question_chain.push((all_within(&names, 10), all_within(&names, 20)));
        // 1-based rank of each matched gold tool in a ranking's distinct names (null: not in it).
        let ranks = |ranking: &[String]| -> Vec<Value> {
            gold.iter()
                .map(|name| ranking.iter().position(|n| n == name).map_or(Value::Null, |at| json!(at + 1)))
                .collect()
        };
        let mut outcome = json!({"task": task.id, "question_gold_ranks": ranks(&names)});

        let mut step_rankings = Vec::with_capacity(task.steps.len());
        for step in &task.steps {
            step_rankings.push(self.rank(catalogue, bridge, step).await);
        }
        if task.aligned() {
            outcome["aligned_step_ranks"] = json!(self.aligned(catalogue, task, &step_rankings));
        }
        if !step_rankings.is_empty() {
            let found = |k: usize| {
                let hit = |name: &&&str| step_rankings.iter().any(|r| r.iter().take(k).any(|n| n == **name));
                gold.iter().filter(hit).count() as f64 / gold.len() as f64
            };
            self.step_union.push((found(5), found(10), found(20)));
            self.chain.push((found(10) >= 1.0, found(20) >= 1.0));
            // Per gold tool, its best rank over the steps' rankings.
            let best: Vec<Value> = gold
                .iter()
                .map(|name| {
                    step_rankings
                        .iter()
                        .filter_map(|r| r.iter().position(|n| n == name))
                        .min()
                        .map_or(Value::Null, |at| json!(at + 1))
                })
                .collect();
            outcome["any_step_best_ranks"] = json!(best);
        }
        self.per_task.push(outcome);

        let mut promoted = Vec::new();
        let tokens = self.promote(bridge, &task.question, &mut promoted).await;
        self.question_loaded.add(&gold, &names_of(catalogue, &promoted), 1, tokens);
        let mut tokens_all = tokens;
        for step in &task.steps {
            tokens_all += self.promote(bridge, step, &mut promoted).await;
        }
        self.steps_loaded.add(&gold, &names_of(catalogue, &promoted), 1 + task.steps.len(), tokens_all);
    }

    /// Scores an aligned task's steps (step *i* against tool *i*) and sorts out the mis-paired
    /// ones; returns each scored step's 1-based rank of its tool (null: not in the ranking).
    fn aligned(&mut self, catalogue: &Catalogue, task: &Task, step_rankings: &[Vec<String>]) -> Vec<Value> {
        self.aligned_tasks += 1;
        let mut ranks = Vec::new();
        for (i, ((ranking, tool), step)) in step_rankings.iter().zip(&task.tools).zip(&task.steps).enumerate() {
            if catalogue.count_named(tool) == 0 {
                continue;
            }
            let listed: Vec<&str> = ranking.iter().map(String::as_str).collect();
            let scores = Scores::of(&listed, &[tool.as_str()]);
            let description = catalogue.description_of(tool).unwrap_or_default();
            let id = format!("{}#{}", task.id, i + 1);
            match pairing(step, tool, &description, task.tools.iter().map(String::as_str)) {
                Pairing::MisPaired => self.mispaired.push(id),
                other => {
                    if other == Pairing::Unrelated {
                        self.unrelated.push(id);
                    }
                    self.aligned_paired.push(scores);
                }
            }
            self.aligned_steps.push(scores);
            ranks.push(ranking.iter().position(|n| n == tool).map_or(Value::Null, |at| json!(at + 1)));
        }
        ranks
    }

    /// `query` ranked, as the distinct tool names of its hits, timed.
    async fn rank(&mut self, catalogue: &Catalogue, bridge: &DiscoveryBridge, query: &str) -> Vec<String> {
        let started = Instant::now();
        let outcome = bridge.catalog().rank(bridge.policy(), query, RANK_LIMIT).await;
        self.latencies_ms.push(started.elapsed().as_secs_f64() * 1_000.0);
        self.note_fallback(query, &outcome);
        names_of(catalogue, &outcome.matched.iter().map(|hit| hit.name.clone()).collect::<Vec<_>>())
    }

    /// What pre-promotion loads for `message` arriving as a user message after `promoted`
    /// (registered names, extended here), mirroring the run: ranked for its limit plus what is
    /// promoted already, hits at or above the floor, new ones only, at most its limit, while
    /// their declarations fit its token budget. Returns the tokens spent.
    async fn promote(&mut self, bridge: &DiscoveryBridge, message: &str, promoted: &mut Vec<String>) -> usize {
        let pre = bridge.policy().pre_promotion;
        let message = message.trim();
        if !pre.enabled || pre.limit == 0 || message.is_empty() {
            return 0;
        }
        let outcome = bridge.catalog().rank(bridge.policy(), message, pre.limit + promoted.len()).await;
        self.note_fallback(message, &outcome);
        let chosen =
            bridge.promotable(&outcome, pre.limit, &EstimatedTokens, |name| promoted.iter().any(|p| p == name));
        promoted.extend(chosen.iter().map(|(schema, _)| schema.name.clone()));
        chosen.iter().map(|(schema, _)| count_tool_schema_tokens(std::slice::from_ref(schema), &EstimatedTokens)).sum()
    }

    fn note_fallback(&mut self, query: &str, outcome: &RankOutcome) {
        if let Some(reason) = &outcome.fallback {
            self.fallbacks.push(format!("{query:?}: {reason}"));
        }
    }

    /// Percentile `p` (`0.0..=1.0`) of the scored rankings' latencies, in milliseconds.
    pub fn latency_ms(&self, p: f64) -> f64 {
        percentile(&sorted(self.latencies_ms.clone()), p).unwrap_or(0.0)
    }

    /// The figures as one JSON object.
    pub fn to_json(&self) -> Value {
        let pairs = self.step_union.len().max(1) as f64;
        let union = |f: fn(&(f64, f64, f64)) -> f64| round(self.step_union.iter().map(f).sum::<f64>() / pairs);
        let unmatched: Vec<Value> = self.unmatched.iter().map(|u| json!({"task": u.task, "tool": u.name})).collect();
        json!({
            "gold": {
                "names": self.gold_names,
                "unmatched": self.unmatched.len(),
                "unmatched_names": unmatched,
                "shared_by_servers": self.ambiguous,
                "tasks_scored": self.task_level.len(),
            },
            "task_level": Scores::mean(&self.task_level).to_json(),
            "task_level_unmatched_as_missed": Scores::mean(&self.task_level_all_gold).to_json(),
            "step_level": {
                "aligned": {
                    "tasks": self.aligned_tasks,
                    "steps": self.aligned_steps.len(),
                    "scores": Scores::mean(&self.aligned_steps).to_json(),
                },
                "union": {
                    "tasks": self.step_union.len(),
                    "recall@5": union(|p| p.0),
                    "recall@10": union(|p| p.1),
                    "recall@20": union(|p| p.2),
                },
                "chain": {
                    "tasks": self.chain.len(),
                    "recall@10": share(&self.chain, |c| c.0),
                    "recall@20": share(&self.chain, |c| c.1),
                },
                "aligned_without_mispaired": {
                    "steps": self.aligned_paired.len(),
                    "scores": Scores::mean(&self.aligned_paired).to_json(),
                },
                "mispaired_steps": self.mispaired,
                "unrelated_steps": self.unrelated,
            },
            "question_chain": {
                "tasks": self.question_chain.len(),
                "recall@10": share(&self.question_chain, |c| c.0),
                "recall@20": share(&self.question_chain, |c| c.1),
            },
            "pre_promotion": {
                "question": self.question_loaded.to_json(),
                "question_then_steps": self.steps_loaded.to_json(),
            },
            "queries": self.latencies_ms.len(),
            "query_ms_p50": round(self.latency_ms(0.5)),
            "query_ms_p95": round(self.latency_ms(0.95)),
            "per_task": self.per_task,
        })
    }
}

/// Registered names as the distinct tool names they carry, in order.
fn names_of(catalogue: &Catalogue, registered: &[String]) -> Vec<String> {
    let names = registered.iter().filter_map(|r| catalogue.by_registered(r)).map(|tool| tool.name.as_str());
    eval::dedup_in_order(names).into_iter().map(str::to_owned).collect()
}

/// The share of `items` for which `test` holds, rounded.
fn share<T>(items: &[T], test: impl Fn(&T) -> bool) -> Value {
    round(items.iter().filter(|item| test(item)).count() as f64 / items.len().max(1) as f64)
}

fn round(x: f64) -> Value {
    json!((x * 10_000.0).round() / 10_000.0)
}
