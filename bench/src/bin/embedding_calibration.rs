//! The embedding ranker's confidence floor, chosen on the dev halves and nothing else.
//!
//! ```text
//! .ci/models
//! cargo run --release -p tinytools-bench --bin embedding_calibration -- [--vectors-dir DIR] [--dump FILE]
//! cargo run --release -p tinytools-bench --bin embedding_calibration -- --ranker static [--static-model DIR]
//! ```
//!
//! `--ranker minilm` (the default) calibrates all-MiniLM-L6-v2 from `.ci/models`
//! (`MINILM_COSINE_FLOOR`); `--ranker static` the static model `distill_static` writes, from
//! `--static-model DIR`, default `target/models/minilm-static` (`STATIC_MINILM_COSINE_FLOOR`).
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
//! Six scores of a hit are measured (`tinytools_bench::relative::SCORES`): the raw
//! **cosine**; its **margin** over the catalogue's background (cosine minus the mean cosine
//! over every tool); and three query-relative ones over the query's cosines across the whole
//! catalogue: the **z**-score (mean, standard deviation), a **robust z** (median, MAD), the
//! **gap** to the 10th best cosine; and the z-score of the blended ranking score. The rule:
//! for each score, alone and together with an absolute cosine floor (`-1`, none, or
//! 0.00–0.60 by 0.02), the floor that maximises Youden's J (the share of related scores kept
//! minus the share of foreign queries where a best-three hit passes, averaged over the two
//! sets; floors at the pooled values' every 0.25 % quantile, cosine's also on a 0.005 grid).
//! It prints the distributions and each rule's floors and J as one JSON object; `--dump FILE`
//! writes every ranking's best ten as JSON lines. `--vectors-dir DIR` keeps the catalogues'
//! vectors across runs (`EmbeddingRanker::warm`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tinytools::discovery::DeferredCatalog;
use tinytools::rank::embedding::EmbeddingRanker;
use tinytools_bench::percentile::{percentile, sorted};
use tinytools_bench::relative::{Relative, Rule, SCORES};
use tinytools_examples::eval::{self, EvalQuery, EvalTool, RegisteredSet};
use tinytools_examples::models;

/// How many hits pre-promotion promotes at most.
const PROMOTED: usize = 3;

/// One dev set: its catalogue, its queries and their gold tools' registered names.
struct Set {
    label: &'static str,
    catalog: DeferredCatalog,
    queries: Vec<(String, Vec<String>)>,
}

/// Per set: the gold hit's scores (when it is among the best three over its own catalogue),
/// and the best three hits' scores over the other set's catalogue.
#[derive(Default)]
struct Measured {
    related: [Vec<[f64; 6]>; 2],
    foreign: [Vec<Vec<[f64; 6]>>; 2],
    queries: [usize; 2],
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
    let root = eval::sets_dir(&["bfcl", "metatool"])?;
    let name = value("--ranker").unwrap_or_else(|| "minilm".to_owned());
    let static_model = value("--static-model").map(PathBuf::from);
    let ranker = models::named_ranker(&name, static_model.as_deref())?
        .ok_or("--ranker takes minilm or static: BM25 has no cosine to calibrate")?;
    let sets = [load(&root, "bfcl", 1)?, load(&root, "metatool", every.max(1))?];
    for set in &sets {
        let file = vectors_dir.as_ref().map(|dir| dir.join(format!("{}.vectors", set.label)));
        tinytools_bench::warm(&ranker, &set.catalog, file.as_deref())?;
    }
    let (measured, dump) = measure(&ranker, &sets)?;
    eprintln!("calibrated: {ranker:?}");
    if let Some(path) = value("--dump") {
        std::fs::write(&path, dump).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    let mut report = json!({"rule": "per score, alone and with an absolute cosine floor, the floors maximising \
        Youden's J averaged over both sets", "scores": {}});
    for (k, name) in SCORES.iter().enumerate() {
        let alone = best_rule(&measured, k, &[-1.0]);
        let cosines: Vec<f64> = std::iter::once(-1.0).chain((0..=30).map(|i| f64::from(i) * 0.02)).collect();
        let combined = best_rule(&measured, k, &cosines);
        let mut entry = json!({"alone": describe(&measured, alone), "with_cosine": describe(&measured, combined)});
        for (i, set) in sets.iter().enumerate() {
            let related: Vec<f64> = measured.related[i].iter().map(|v| v[k]).collect();
            let foreign: Vec<f64> = measured.foreign[i]
                .iter()
                .map(|hits| hits.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max))
                .collect();
            entry[set.label] = json!({"related": percentiles(&related), "foreign_best": percentiles(&foreign)});
        }
        report["scores"][*name] = entry;
    }
    println!("{report}");
    Ok(())
}

/// Ranks every query over its own set's catalogue and the other's, each over the whole
/// catalogue, and keeps the scores the rules are chosen on; also the dump's lines.
fn measure(ranker: &EmbeddingRanker, sets: &[Set; 2]) -> Result<(Measured, String), String> {
    let mut measured = Measured::default();
    let mut dump = String::new();
    for (i, set) in sets.iter().enumerate() {
        let other = &sets[1 - i];
        measured.queries[i] = set.queries.len();
        for (query, gold) in &set.queries {
            let own = ranker.explain(&set.catalog, query, set.catalog.len()).map_err(|e| e.to_string())?;
            let cross = ranker.explain(&other.catalog, query, other.catalog.len()).map_err(|e| e.to_string())?;
            let (own_stats, cross_stats) = (Relative::of(&own), Relative::of(&cross));
            if let Some(hit) = own.hits.iter().take(PROMOTED).find(|hit| gold.contains(&hit.name)) {
                measured.related[i].push(own_stats.values(hit));
            }
            measured.foreign[i].push(cross.hits.iter().take(PROMOTED).map(|hit| cross_stats.values(hit)).collect());
            for (catalogue, explanation, stats) in [(set.label, &own, own_stats), (other.label, &cross, cross_stats)] {
                let hits: Vec<Value> =
                    explanation.hits.iter().take(10).map(|h| json!([h.name, stats.values(h)])).collect();
                let line = json!({"set": set.label, "catalogue": catalogue, "query": query, "gold": gold,
                    "background": explanation.background, "hits": hits});
                dump.push_str(&line.to_string());
                dump.push('\n');
            }
        }
    }
    Ok((measured, dump))
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

/// Youden's J of `rule`, averaged over the sets: the share of related scores passing minus
/// the share of foreign queries where some best-three hit passes.
fn youden(measured: &Measured, rule: Rule) -> f64 {
    (0..2)
        .map(|i| {
            let related = measured.related[i].iter().filter(|v| rule.passes(v)).count();
            let foreign = measured.foreign[i].iter().filter(|hits| hits.iter().any(|v| rule.passes(v))).count();
            related as f64 / measured.related[i].len().max(1) as f64
                - foreign as f64 / measured.foreign[i].len().max(1) as f64
        })
        .sum::<f64>()
        / 2.0
}

/// The rule on score `k` with the largest J, its floor among the pooled values' quantiles
/// (every 0.25 %; the cosine's also on a 0.005 grid) and its cosine floor among `cosines`.
fn best_rule(measured: &Measured, k: usize, cosines: &[f64]) -> Rule {
    let mut pooled: Vec<f64> = measured.related.iter().flatten().map(|v| v[k]).collect();
    pooled.extend(measured.foreign.iter().flatten().flatten().map(|v| v[k]));
    pooled.sort_by(f64::total_cmp);
    let mut floors: Vec<f64> =
        (0..400).filter_map(|q| pooled.get(q * pooled.len() / 400)).map(|v| (v * 1_000.0).round() / 1_000.0).collect();
    if k == 0 {
        floors.extend((-200..=200).map(|step| f64::from(step) * 0.005));
    }
    let mut best = (Rule { score: k, floor: 0.0, cosine_min: -1.0 }, f64::NEG_INFINITY);
    for &cosine_min in cosines {
        for &floor in &floors {
            let rule = Rule { score: k, floor, cosine_min };
            let j = youden(measured, rule);
            if j > best.1 + 1e-12 {
                best = (rule, j);
            }
        }
    }
    best.0
}

/// A rule's floors, J, and per set the share of all queries whose gold hit passes and of
/// foreign queries promoting.
fn describe(measured: &Measured, rule: Rule) -> Value {
    let mut entry =
        json!({"floor": rule.floor, "cosine_min": rule.cosine_min, "youden_j": round(youden(measured, rule))});
    for (i, label) in ["bfcl", "metatool"].into_iter().enumerate() {
        let related = measured.related[i].iter().filter(|v| rule.passes(v)).count();
        let foreign = measured.foreign[i].iter().filter(|hits| hits.iter().any(|v| rule.passes(v))).count();
        entry[label] = json!({
            "queries": measured.queries[i],
            "gold_in_top3": round(measured.related[i].len() as f64 / measured.queries[i].max(1) as f64),
            "gold_promoted": round(related as f64 / measured.queries[i].max(1) as f64),
            "foreign_promoting": round(foreign as f64 / measured.foreign[i].len().max(1) as f64),
        });
    }
    entry
}

fn percentiles(values: &[f64]) -> Value {
    let sorted = sorted(values.to_vec());
    let at = |p: f64| percentile(&sorted, p).map_or(json!(null), round);
    json!({"n": sorted.len(), "p05": at(0.05), "p10": at(0.10), "p25": at(0.25), "p50": at(0.5),
        "p75": at(0.75), "p90": at(0.9), "p95": at(0.95), "p99": at(0.99)})
}

fn round(x: f64) -> Value {
    json!((x * 1_000.0).round() / 1_000.0)
}
