//! Same-job twins in BFCL's pool, model-free: how many pooled functions and dev-half gold
//! functions have a twin under the twin-tolerant score's rule (`tinytools_bench::bfcl::twins`),
//! and the distribution the rule's description threshold was chosen on.
//!
//! ```text
//! cargo run --release -p tinytools-bench --bin bfcl_twins -- [--queries FILE] [--tools FILE] \
//!     [--twin-similarity T] [--record FILE]
//! ```
//!
//! The distribution: for every distinct gold function of the query file's tool queries, the
//! best description similarity (Jaccard of word sets) to another pooled function with the same
//! required parameters, in tenths, with how many of those best pairs also pass the rule's name
//! test. Prints one JSON object; `--record FILE` writes it as a run record with each tool
//! query's outcome by id (how many of its gold functions have a twin, and how many twins).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Value, json};
use tinytools_bench::bfcl::twins::{self, Profile, TwinRule};
use tinytools_bench::bfcl::{self, TOOL_CATEGORIES};
use tinytools_examples::eval;

struct Options {
    queries: Option<PathBuf>,
    tools: Option<PathBuf>,
    rule: TwinRule,
    record: Option<PathBuf>,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("bfcl_twins: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let options = parse(std::env::args().skip(1))?;
    let queries_file = match &options.queries {
        Some(file) => file.clone(),
        None => eval::set_file("bfcl", "queries.jsonl")?,
    };
    let tools = options.tools.clone().unwrap_or_else(|| queries_file.with_file_name("tools.jsonl"));
    let data = bfcl::load(&queries_file, &tools, None)?;
    let pool: Vec<Profile> = data.pool.iter().map(Profile::of).collect();
    let rule = options.rule;
    let twins_of = |p: &Profile| pool.iter().filter(|q| rule.twins(p, q)).count();
    let pooled_with_twins = pool.iter().filter(|p| twins_of(p) > 0).count();

    let mut gold: BTreeMap<String, Profile> = BTreeMap::new();
    let mut per_query = Vec::new();
    let mut queries_with_twin = 0;
    let tool_queries: Vec<_> = data.queries.iter().filter(|q| TOOL_CATEGORIES.contains(&q.category.as_str())).collect();
    for query in &tool_queries {
        let names: BTreeSet<String> = query.gold_names.iter().map(|n| eval::safe_name(n)).collect();
        let profiles: Vec<Profile> =
            query.offered.iter().map(Profile::of).filter(|p| names.contains(&p.wire_name)).collect();
        let twin_counts: Vec<usize> = profiles.iter().map(twins_of).collect();
        let with_twin = twin_counts.iter().filter(|&&n| n > 0).count();
        queries_with_twin += usize::from(with_twin > 0);
        per_query.push(json!({"qid": query.qid, "category": query.category, "gold": profiles.len(),
            "gold_with_twin": with_twin, "twins": twin_counts}));
        for profile in profiles {
            gold.entry(profile.wire_name.clone()).or_insert(profile);
        }
    }
    let gold_with_twins = gold.values().filter(|p| twins_of(p) > 0).count();
    let output = json!({
        "pool_functions": pool.len(),
        "pooled_with_twin": pooled_with_twins,
        "tool_queries": tool_queries.len(),
        "tool_queries_with_a_gold_twin": queries_with_twin,
        "gold_functions": gold.len(),
        "gold_functions_with_twin": gold_with_twins,
        "twin_rule": {"min_description_similarity": rule.min_description_similarity},
        "distribution": distribution(&pool, gold.values(), rule),
        "per_query": per_query,
    });
    println!("{output:#}");
    if let Some(path) = &options.record {
        tinytools_bench::records::write(path, "model-free", output)?;
        eprintln!("bfcl_twins: record written to {}", path.display());
    }
    Ok(())
}

/// Per tenth of description similarity: gold functions whose best same-parameter pooled
/// function falls there, and how many of those pairs pass the rule's name test too.
fn distribution<'a>(pool: &[Profile], gold: impl Iterator<Item = &'a Profile>, rule: TwinRule) -> Value {
    let mut bins: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut no_partner = 0;
    let lenient = TwinRule { min_description_similarity: 0.0 };
    for g in gold {
        let best = pool
            .iter()
            .filter(|p| p.wire_name != g.wire_name && !g.required.is_empty() && p.required == g.required)
            .map(|p| (twins::jaccard(&g.description, &p.description), p))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let Some((similarity, partner)) = best else {
            no_partner += 1;
            continue;
        };
        let tenth = format!("{:.1}", (similarity * 10.0).floor() / 10.0);
        let bin = bins.entry(tenth).or_default();
        bin.0 += 1;
        bin.1 += usize::from(lenient.twins(g, partner));
    }
    let bins: Vec<Value> =
        bins.into_iter().map(|(from, (n, named))| json!({"from": from, "gold": n, "names_pass": named})).collect();
    json!({"no_same_parameter_partner": no_partner, "by_best_similarity": bins,
        "rule_threshold": rule.min_description_similarity})
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options { queries: None, tools: None, rule: TwinRule::default(), record: None };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--queries" => options.queries = Some(value()?.into()),
            "--tools" => options.tools = Some(value()?.into()),
            "--record" => options.record = Some(value()?.into()),
            "--twin-similarity" => {
                let text = value()?;
                options.rule.min_description_similarity = match text.parse::<f64>() {
                    Ok(t) if (0.0..=1.0).contains(&t) => t,
                    _ => return Err(format!("`--twin-similarity {text}`: give a similarity from 0 to 1")),
                };
            }
            other => return Err(format!("unknown option `{other}` (see the doc comment of bfcl_twins.rs)")),
        }
    }
    Ok(options)
}
