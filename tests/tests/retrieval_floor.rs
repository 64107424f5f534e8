//! Retrieval quality floors on the public eval sets in `../shared/eval` (beside the checkout,
//! as in CI): the default ranking must not lose what `docs/retrieval.md` records.
//! The full report is `cargo run --release -p tinytools-examples --example retrieval_eval`.

use std::path::PathBuf;

use tinytools::discovery::DeferredCatalog;
use tinytools_examples::eval::{self, EvalQuery, EvalTool, Scores};

fn eval_set(name: &str) -> (Vec<EvalTool>, Vec<EvalQuery>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval").join(name);
    let read = |file: &str| dir.join(file);
    let tools = eval::read_jsonl(&read("tools.jsonl"))
        .unwrap_or_else(|err| panic!("{err}: shared/eval must sit beside the checkout"));
    let queries = eval::read_jsonl(&read("queries.jsonl")).unwrap_or_else(|err| panic!("{err}"));
    (tools, queries)
}

/// Name-level recall@5 of the catalogue's BM25, the ranking `tool_search` uses by default.
fn name_level_recall_at_5(name: &str) -> f64 {
    let (tools, queries) = eval_set(name);
    let set = eval::register(&tools).expect("every eval tool registers");
    let catalog = DeferredCatalog::new(&set.registry, |_| true);
    let scores: Vec<Scores> = queries
        .iter()
        .map(|query| {
            let hits = catalog.bm25(&query.query, 50);
            let ids = hits.iter().filter_map(|hit| set.id_of.get(&hit.name));
            let names = eval::dedup_in_order(ids.filter_map(|id| set.name_of.get(id)).map(String::as_str));
            let gold = eval::dedup_in_order(query.gold.iter().filter_map(|id| set.name_of.get(id)).map(String::as_str));
            Scores::of(&names, &gold)
        })
        .collect();
    Scores::mean(&scores).recall_5
}

#[test]
fn bfcl_name_level_recall_at_5_stays_at_its_measured_level() {
    let recall = name_level_recall_at_5("bfcl");
    assert!(recall >= 0.87, "BFCL name-level recall@5 fell to {recall:.4} (measured 0.877)");
}

#[test]
fn metatool_recall_at_5_stays_at_its_measured_level() {
    let recall = name_level_recall_at_5("metatool");
    assert!(recall >= 0.63, "MetaTool recall@5 fell to {recall:.4} (measured 0.639)");
}
