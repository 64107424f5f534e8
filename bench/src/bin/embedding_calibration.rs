//! The embedding ranker's confidence floor, chosen on the dev halves and nothing else.
//!
//! ```text
//! .ci/models
//! cargo run --release -p tinytools-bench --bin embedding_calibration -- [--vectors-dir DIR] [--dump FILE]
//! ```
//!
//! Each query of BFCL's and MetaTool's dev halves (`../shared/eval`; MetaTool every
//! `--metatool-every N`th, default 5) is ranked with `EmbeddingRanker::explain` twice:
//! - over its own set's catalogue, where its gold tool is right: when the gold tool is among
//!   the three best hits (what pre-promotion would promote), its score is a *related* one;
//! - over the other set's catalogue (BFCL's queries over MetaTool's 199 tools, MetaTool's
//!   over BFCL's 3,420), where the gold tool is absent: the best score of the three best hits
//!   is a *foreign* one (a message about something the catalogue does not hold; the sets
//!   overlap in places, weather, currencies, films, where a foreign hit is a fair one).
//!
//! Two scores are measured: the raw **cosine**, and its **margin** over the catalogue's
//! background (cosine minus the mean cosine over every tool). The rule: for each score, the
//! floor is the one that maximises Youden's J (the share of related scores kept minus the
//! share of foreign ones passing, averaged over the two sets), on a grid of 0.005; the kept
//! score is the one with the larger J. It prints the distributions, each score's floor and J,
//! as one JSON object; `--dump FILE` writes every ranking as JSON lines. `--vectors-dir DIR`
//! keeps the catalogues' vectors across runs (`EmbeddingRanker::warm`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tinytools::discovery::DeferredCatalog;
use tinytools::rank::embedding::{EmbeddingRanker, Explanation};
use tinytools_examples::eval::{self, EvalQuery, EvalTool, RegisteredSet};
use tinytools_examples::models;

/// How many hits pre-promotion promotes at most.
const PROMOTED: usize = 3;
/// The scores measured: the raw cosine, and its margin over the catalogue's background.
const SCORES: [&str; 2] = ["cosine", "margin"];

/// One dev set: its catalogue, its queries and their gold tools' registered names.
struct Set {
    label: &'static str,
    catalog: DeferredCatalog,
    queries: Vec<(String, Vec<String>)>,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("embedding_calibration: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let every: usize = value("--metatool-every").map_or(Ok(5), |v| v.parse()).map_err(|_| "--metatool-every N")?;
    let vectors_dir = value("--vectors-dir").map(PathBuf::from);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let ranker = EmbeddingRanker::load(models::minilm_dir()).map_err(|e| format!("{e} (run .ci/models)"))?;
    let sets = [load(&root, "bfcl", 1)?, load(&root, "metatool", every.max(1))?];
    for set in &sets {
        let file = vectors_dir.as_ref().map(|dir| dir.join(format!("{}.vectors", set.label)));
        tinytools_bench::warm(&ranker, &set.catalog, file.as_deref())?;
    }
    let mut dump = String::new();
    // [score][set]: related (gold tool in the top three) and foreign scores.
    let (mut related, mut foreign) = (vec![vec![Vec::new(); 2]; 2], vec![vec![Vec::new(); 2]; 2]);
    for (i, set) in sets.iter().enumerate() {
        let other = &sets[1 - i];
        for (query, gold) in &set.queries {
            let own = ranker.explain(&set.catalog, query, 10).map_err(|e| e.to_string())?;
            let cross = ranker.explain(&other.catalog, query, 10).map_err(|e| e.to_string())?;
            if let Some(hit) = own.hits.iter().take(PROMOTED).find(|hit| gold.contains(&hit.name)) {
                related[0][i].push(f64::from(hit.cosine));
                related[1][i].push(f64::from(hit.cosine - own.background));
            }
            for (s, score) in foreign.iter_mut().zip(best_scores(&cross)) {
                s[i].push(score);
            }
            for (catalogue, explanation) in [(set.label, &own), (other.label, &cross)] {
                let hits: Vec<Value> = explanation.hits.iter().map(|h| json!([h.name, h.cosine, h.lexical])).collect();
                let line = json!({"set": set.label, "catalogue": catalogue, "query": query, "gold": gold,
                    "background": explanation.background, "hits": hits});
                dump.push_str(&line.to_string());
                dump.push('\n');
            }
        }
    }
    if let Some(path) = value("--dump") {
        std::fs::write(&path, dump).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    let queries = [sets[0].queries.len(), sets[1].queries.len()];
    let mut report = json!({"rule": "per score, the floor maximising Youden's J averaged over both sets (grid 0.005); \
        the score with the larger J is kept", "scores": {}});
    for (k, name) in SCORES.iter().enumerate() {
        let (floor, j) = youden(&related[k], &foreign[k], queries);
        let mut entry = json!({"floor": floor, "youden_j": round(j)});
        for (i, set) in sets.iter().enumerate() {
            let passing = |values: &[f64]| values.iter().filter(|v| **v >= floor).count();
            entry[set.label] = json!({
                "queries": queries[i],
                "gold_in_top3": round(related[k][i].len() as f64 / queries[i].max(1) as f64),
                "related": percentiles(&related[k][i]),
                "foreign": percentiles(&foreign[k][i]),
                "gold_promoted_at_floor": round(passing(&related[k][i]) as f64 / queries[i].max(1) as f64),
                "foreign_promoting_at_floor": round(passing(&foreign[k][i]) as f64 / foreign[k][i].len().max(1) as f64),
            });
        }
        report["scores"][*name] = entry;
    }
    println!("{report}");
    Ok(())
}

/// A dev set's catalogue and every `every`-th query with its gold tools' registered names.
fn load(root: &Path, label: &'static str, every: usize) -> Result<Set, String> {
    let tools: Vec<EvalTool> = eval::read_jsonl(&root.join(label).join("tools.jsonl"))?;
    let queries: Vec<EvalQuery> = eval::read_jsonl(&root.join(label).join("queries.jsonl"))?;
    let registered: RegisteredSet = eval::register(&tools)?;
    let mut names_of_id: HashMap<&str, Vec<String>> = HashMap::new();
    for (name, id) in &registered.id_of {
        names_of_id.entry(id.as_str()).or_default().push(name.clone());
    }
    let queries = queries
        .iter()
        .step_by(every)
        .map(|q| {
            let gold = q.gold.iter().flat_map(|id| names_of_id.get(id.as_str()).cloned().unwrap_or_default());
            (q.query.clone(), gold.collect())
        })
        .collect();
    Ok(Set { label, catalog: DeferredCatalog::new(&registered.registry, |_| true), queries })
}

/// The best cosine and the best margin over the background among the hits pre-promotion
/// would consider.
fn best_scores(explanation: &Explanation) -> [f64; 2] {
    let top = explanation.hits.iter().take(PROMOTED).map(|hit| hit.cosine).fold(f32::NEG_INFINITY, f32::max);
    [f64::from(top), f64::from(top - explanation.background)]
}

/// The floor (on a 0.005 grid over `-1..=1`) maximising Youden's J averaged over the sets: the
/// share of a set's related scores at or above it (of those whose gold tool was in the top
/// three) minus the share of its foreign scores at or above it. Returns the floor and its J.
fn youden(related: &[Vec<f64>], foreign: &[Vec<f64>], queries: [usize; 2]) -> (f64, f64) {
    let mut best = (0.0, f64::NEG_INFINITY);
    for step in -200..=200 {
        let floor = f64::from(step) * 0.005;
        let share = |values: &[f64]| values.iter().filter(|v| **v >= floor).count() as f64 / values.len().max(1) as f64;
        let j = (0..2).map(|i| share(&related[i]) - share(&foreign[i])).sum::<f64>() / 2.0;
        if j > best.1 && queries.iter().all(|n| *n > 0) {
            best = ((floor * 1_000.0).round() / 1_000.0, j);
        }
    }
    best
}

fn percentiles(values: &[f64]) -> Value {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at =
        |p: f64| sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().map_or(json!(null), round);
    json!({"n": sorted.len(), "p05": at(0.05), "p10": at(0.10), "p25": at(0.25), "p50": at(0.5),
        "p75": at(0.75), "p90": at(0.9), "p95": at(0.95), "p99": at(0.99)})
}

fn round(x: f64) -> Value {
    json!((x * 1_000.0).round() / 1_000.0)
}
