//! How query-aware discovery's floor trades promotions against mistakes, measured offline.
//!
//! ```text
//! cargo run --release -p tinytools-bench --bin pre_promotion_eval            # a table
//! cargo run --release -p tinytools-bench --bin pre_promotion_eval -- --json  # one JSON object
//! ```
//!
//! For each floor it ranks every user message of three sets with the catalogue's BM25 (the
//! path pre-promotion takes) and keeps at most three hits at or above the floor:
//! - **MetaTool** (`../shared/eval/metatool`, 2,000 queries over its 199 tools): how often
//!   something is promoted, and how often the gold tool is among what is promoted;
//! - **the live suite's tasks** over the 41-tool catalogue, the same two figures;
//! - **scale**: the same tasks over the catalogue grown by 1,000 BFCL tools as Deferred
//!   distractors (`live_tasks`'s scale arm), the same two figures;
//! - **unrelated**: BFCL's queries (maths, physics, code) over the 41-tool catalogue, where
//!   any promotion is a wrong one.
//!
//! Options: `--ranker minilm` ranks with the embedding ranker (model from `.ci/models`),
//! `--ranker static` with the static model `distill_static` writes (`--static-model DIR`,
//! default `target/models/minilm-static`), each with `--cosine-floor X` the cosine its
//! confidence meets the 0.05 floor at (default: the model's calibrated floor,
//! `MINILM_COSINE_FLOOR` or `STATIC_MINILM_COSINE_FLOOR`);
//! `--expand` wraps the ranker in `ExpandingRanker`, the keywords written by the model at
//! `TINYTOOLS_BASE_URL` (default: `local-model.sh`'s server, `http://127.0.0.1:$TINYTOOLS_LLM_PORT/v1`,
//! model `TINYTOOLS_MODEL` or `qwen2.5-coder-$TINYTOOLS_LLM_SIZE`), one short call per message:
//! MetaTool and the unrelated set then keep every tenth and every sixth message, and
//! `--subsets` gives the same subsets without expansion, to compare;
//! `--relative SCORE:FLOOR[:COSINE]` (with an embedding ranker) replaces the embedding
//! ranker's confidence by a query-relative rule (`tinytools_bench::relative`, chosen by
//! `embedding_calibration`): a hit counts as confidence 1 when its score over the whole
//! catalogue (`z`, `robust_z`, `gap10`, `z_blend`, `margin` or `cosine`) reaches FLOOR and its
//! cosine COSINE, else 0 (read the 0.05 row);
//! `--dump FILE` writes every message's top twenty hits as JSON lines. Each row's `no-tool`
//! counts the messages no tool fits (the suite's no-tool tasks; every unrelated message) that
//! promote something. The embedding ranker is built as hosts build it (`EmbeddingRanker::load`,
//! `EmbeddingRanker::new` over a `StaticEmbedder`), its confidence calibrated so that floor 0.05 is its dev-chosen cosine (`embedding_calibration`).

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::discovery::{DeferredCatalog, ToolDiscoveryPolicy};
use tinytools::rank::ExpandingRanker;
use tinytools::rank::embedding::EmbeddingRanker;
use tinytools_bench::relative::{Relative, Rule};
use tinytools_bench::tasks::{self, Expect};
use tinytools_examples::eval::{self, EvalQuery, EvalTool};
use tinytools_examples::{catalogue, live, models};

const FLOORS: [f32; 9] = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];
const LIMIT: usize = 3;
/// How many hits per message `--dump` writes (and the ranking asks for).
const DUMP_LIMIT: usize = 20;
const METATOOL_QUERIES: usize = 2_000;
/// BFCL tools added to the catalogue for the `scale` set, as `live_tasks`'s scale arm adds.
const SCALE_DISTRACTORS: usize = 1_000;

/// One message: what it says and which tool names are right for it (empty: none is).
struct Probe {
    text: String,
    gold: Vec<String>,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("pre_promotion_eval: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let json_output = args.iter().any(|a| a == "--json");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let expand = args.iter().any(|a| a == "--expand");
    let subsets = expand || args.iter().any(|a| a == "--subsets");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    let relative = args.windows(2).find(|w| w[0] == "--relative").map(|w| Rule::parse(&w[1])).transpose()?;
    let Ranking { policy, embedding, expander } = ranking(&args, expand)?;
    let sets = Sets::read(&root, subsets)?;

    let dump = args.windows(2).find(|w| w[0] == "--dump").map(|w| w[1].clone());
    let mut dumped = String::new();
    let mut rows = Vec::new();
    for (label, catalog, probes) in [
        ("metatool", &sets.meta_catalog, &sets.meta),
        ("suite", &sets.suite_catalog, &sets.suite),
        ("scale", &sets.scale_catalog, &sets.suite),
        ("unrelated", &sets.suite_catalog, &sets.unrelated),
    ] {
        let ranked: Vec<Vec<(String, f32)>> = match (relative, &embedding) {
            (Some(rule), Some(ranker)) => ranked_relative(ranker, rule, catalog, probes)?,
            (Some(_), None) => return Err("--relative needs --ranker minilm or static".to_owned()),
            _ => probes
                .iter()
                .map(|probe| {
                    let outcome = runtime.block_on(catalog.rank(&policy, &probe.text, DUMP_LIMIT));
                    outcome.matched.into_iter().map(|hit| (hit.name, hit.confidence.unwrap_or(0.0))).collect()
                })
                .collect(),
        };
        for (probe, hits) in probes.iter().zip(&ranked) {
            let line = json!({"set": label, "text": probe.text, "gold": probe.gold, "hits": hits});
            dumped.push_str(&line.to_string());
            dumped.push('\n');
        }
        let ranked: Vec<Vec<(String, f32)>> =
            ranked.into_iter().map(|hits| hits.into_iter().take(LIMIT).collect()).collect();
        rows.extend(FLOORS.iter().map(|floor| floor_row(label, *floor, probes, &ranked)));
    }
    if let Some(path) = dump {
        std::fs::write(&path, dumped).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    if json_output {
        let ranker = policy.ranker.as_ref().map_or("bm25", |ranker| ranker.name());
        println!("{}", json!({"ranker": ranker, "subsets": subsets, "limit": LIMIT, "rows": rows}));
        return Ok(());
    }
    print_table(&rows);
    if let Some(expander) = expander {
        eprintln!("keyword expansion: {}", expander.usage());
    }
    Ok(())
}

/// How the run ranks: the discovery policy, the embedding ranker behind it (for `--relative`),
/// and the keyword expander when `--expand` wraps it.
struct Ranking {
    policy: ToolDiscoveryPolicy,
    embedding: Option<Arc<EmbeddingRanker>>,
    expander: Option<Arc<ExpandingRanker>>,
}

fn ranking(args: &[String], expand: bool) -> Result<Ranking, String> {
    let mut policy = ToolDiscoveryPolicy::default().with_max_limit(20);
    let mut embedding = None;
    if let Some(ranker) = embedding_ranker(args)? {
        let ranker = Arc::new(ranker);
        embedding = Some(Arc::clone(&ranker));
        policy = policy.with_ranker(ranker);
        policy.ranker_timeout = std::time::Duration::from_secs(600);
    }
    let mut expander = None;
    if expand {
        let (expanded, expanding) = live::expand_locally(policy)?;
        policy = expanded;
        policy.ranker_timeout = std::time::Duration::from_secs(600);
        expander = Some(expanding);
    }
    Ok(Ranking { policy, embedding, expander })
}

/// The messages and the catalogues they are ranked over.
struct Sets {
    meta_catalog: DeferredCatalog,
    meta: Vec<Probe>,
    suite_catalog: DeferredCatalog,
    scale_catalog: DeferredCatalog,
    suite: Vec<Probe>,
    unrelated: Vec<Probe>,
}

impl Sets {
    /// Reads the eval sets under `root` and the suite; with `subsets`, every 10th MetaTool
    /// query and every 6th BFCL one.
    fn read(root: &std::path::Path, subsets: bool) -> Result<Self, String> {
        let every = |step: usize| move |(i, _): &(usize, &EvalQuery)| !subsets || i % step == 0;
        let meta_tools: Vec<EvalTool> = eval::read_jsonl(&root.join("metatool/tools.jsonl"))?;
        let meta_queries: Vec<EvalQuery> = eval::read_jsonl(&root.join("metatool/queries.jsonl"))?;
        let meta_set = eval::register(&meta_tools)?;
        let name_of =
            |id: &String| meta_set.id_of.iter().find(|(_, v)| *v == id).map_or_else(|| id.clone(), |(k, _)| k.clone());
        let meta = meta_queries
            .iter()
            .take(METATOOL_QUERIES)
            .enumerate()
            .filter(every(10))
            .map(|(_, q)| Probe { text: q.query.clone(), gold: q.gold.iter().map(name_of).collect() })
            .collect();
        let suite = tasks::all()
            .iter()
            .map(|task| Probe {
                text: task.prompt.to_owned(),
                gold: match task.expect {
                    Expect::NoTool => Vec::new(),
                    Expect::Steps(steps) => {
                        steps.iter().map(|s| s.tool.to_owned()).filter(|t| t != "read_note").collect()
                    }
                },
            })
            .collect();
        let bfcl: Vec<EvalQuery> = eval::read_jsonl(&root.join("bfcl/queries.jsonl"))?;
        let unrelated = bfcl
            .iter()
            .enumerate()
            .filter(every(6))
            .map(|(_, q)| Probe { text: q.query.clone(), gold: Vec::new() })
            .collect();
        Ok(Self {
            meta_catalog: DeferredCatalog::new(&meta_set.registry, |_| true),
            meta,
            suite_catalog: DeferredCatalog::new(&catalogue::registry(), |_| true),
            scale_catalog: DeferredCatalog::new(&tasks::scale_registry(SCALE_DISTRACTORS)?, |_| true),
            suite,
            unrelated,
        })
    }
}

/// One row of the table: what promoting the hits at or above `floor` does for `probes`.
fn floor_row(label: &str, floor: f32, probes: &[Probe], ranked: &[Vec<(String, f32)>]) -> serde_json::Value {
    let (mut promoting, mut with_gold, mut wrong_only, mut promoted) = (0, 0, 0, 0);
    let (mut tool_probes, mut no_tool_promoting) = (0, 0);
    for (probe, hits) in probes.iter().zip(ranked) {
        let kept: Vec<&str> = hits.iter().filter(|(_, c)| *c >= floor).map(|(n, _)| n.as_str()).collect();
        tool_probes += usize::from(!probe.gold.is_empty());
        promoted += kept.len();
        if kept.is_empty() {
            continue;
        }
        promoting += 1;
        no_tool_promoting += usize::from(probe.gold.is_empty());
        if probe.gold.iter().any(|g| kept.contains(&g.as_str())) {
            with_gold += 1;
        } else {
            wrong_only += 1;
        }
    }
    let n = probes.len().max(1) as f64;
    json!({
        "set": label, "floor": floor, "messages": probes.len(),
        "promoting": round(promoting as f64 / n),
        "gold_promoted": round(with_gold as f64 / tool_probes.max(1) as f64),
        "only_wrong": round(wrong_only as f64 / n),
        "mean_promoted": round(promoted as f64 / n),
        "no_tool_promoting": format!("{no_tool_promoting}/{}", probes.len() - tool_probes),
    })
}

fn print_table(rows: &[serde_json::Value]) {
    println!(
        "{:<10} {:>5} {:>10} {:>14} {:>11} {:>13} {:>10}",
        "set", "floor", "promoting", "gold promoted", "only wrong", "mean promoted", "no-tool"
    );
    for row in rows {
        let f = |key: &str| row[key].as_f64().unwrap_or(f64::NAN);
        println!(
            "{:<10} {:>5.2} {:>10.3} {:>14.3} {:>11.3} {:>13.2} {:>10}",
            row["set"].as_str().unwrap_or(""),
            f("floor"),
            f("promoting"),
            f("gold_promoted"),
            f("only_wrong"),
            f("mean_promoted"),
            row["no_tool_promoting"].as_str().unwrap_or("")
        );
    }
}

/// The embedding ranker `--ranker` names (`None` for BM25), from `--static-model DIR` for
/// `static`, its cosine floor `--cosine-floor X` when given.
fn embedding_ranker(args: &[String]) -> Result<Option<EmbeddingRanker>, String> {
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let static_model = value("--static-model").map(std::path::PathBuf::from);
    let name = value("--ranker").unwrap_or_else(|| "bm25".to_owned());
    let Some(ranker) = models::named_ranker(&name, static_model.as_deref())? else { return Ok(None) };
    match value("--cosine-floor") {
        Some(floor) => Ok(Some(ranker.cosine_floor(floor.parse().map_err(|_| "--cosine-floor takes a number")?))),
        None => Ok(Some(ranker)),
    }
}

/// Every probe's best [`DUMP_LIMIT`] hits as the embedding ranker orders them, each with
/// confidence 1 when `rule` passes it over the whole catalogue, else 0.
fn ranked_relative(
    ranker: &EmbeddingRanker,
    rule: Rule,
    catalog: &DeferredCatalog,
    probes: &[Probe],
) -> Result<Vec<Vec<(String, f32)>>, String> {
    probes
        .iter()
        .map(|probe| {
            let explanation = ranker.explain(catalog, &probe.text, catalog.len()).map_err(|e| e.to_string())?;
            let stats = Relative::of(&explanation);
            Ok(explanation
                .hits
                .iter()
                .take(DUMP_LIMIT)
                .map(|hit| (hit.name.clone(), if rule.passes(&stats.values(hit)) { 1.0 } else { 0.0 }))
                .collect())
        })
        .collect()
}

fn round(x: f64) -> Value {
    json!((x * 1_000.0).round() / 1_000.0)
}
