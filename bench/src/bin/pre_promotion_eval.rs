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
//!   any promotion is a wrong one;
//! - **bfcl**: the same queries over BFCL's pooled catalogue (`../shared/eval/bfcl/tools.jsonl`,
//!   one definition of each function name, as the
//!   `bfcl` benchmark's pool arm), the two figures of the first sets: how often the
//!   query's gold function is promoted before the model is called.
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
//! `--subsets` gives the same subsets without expansion, to compare, and `--full` keeps every
//! message even with `--expand`; `--sets bfcl,scale` ranks only the sets named;
//! `--fuse max|interleave|rrf|gate:X` (with `--expand`) ranks each message twice, as written
//! and with its keywords, keeps each ranking's hits at or above the default floor and merges
//! the two (each tool at its higher confidence; alternately; by reciprocal rank, k = 60), or
//! keeps the message's own ranking when its best confidence reaches X (`gate:X`: keywords only
//! where the message alone finds nothing confident, the rule of the opt-in
//! `PrePromotion::model_keywords_below`; stderr says how many messages would ask):
//! alternatives to ranking the message and its keywords as one query (`docs/retrieval.md`;
//! read the 0.05 row);
//! `--relative SCORE:FLOOR[:COSINE]` (with an embedding ranker) replaces the embedding
//! ranker's confidence by a query-relative rule (`tinytools_bench::relative`, chosen by
//! `embedding_calibration`): a hit counts as confidence 1 when its score over the whole
//! catalogue (`z`, `robust_z`, `gap10`, `z_blend`, `margin` or `cosine`) reaches FLOOR and its
//! cosine COSINE, else 0 (read the 0.05 row);
//! `--dump FILE` writes every message's top twenty hits as JSON lines. Each row's `no-tool`
//! counts the messages no tool fits (the suite's no-tool tasks; every unrelated message) that
//! promote something. The embedding ranker is built as hosts build it (`tinytools_embed::load_ranker`,
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
/// The sets, in the order they are ranked (`--sets` picks some).
const SETS: [&str; 5] = ["metatool", "suite", "scale", "unrelated", "bfcl"];
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
    let root = eval::sets_dir(&["bfcl", "metatool"])?;
    let expand = args.iter().any(|a| a == "--expand");
    let full = args.iter().any(|a| a == "--full");
    let subsets = !full && (expand || args.iter().any(|a| a == "--subsets"));
    let chosen = chosen_sets(&args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    let relative = args.windows(2).find(|w| w[0] == "--relative").map(|w| Rule::parse(&w[1])).transpose()?;
    let fusion = args.windows(2).find(|w| w[0] == "--fuse").map(|w| Fusion::parse(&w[1])).transpose()?;
    if fusion.is_some() && !expand {
        return Err("--fuse merges the message's ranking with its keywords': it needs --expand".to_owned());
    }
    let Ranking { plain, policy, embedding, expander } = ranking(&args, expand)?;
    let sets = Sets::read(&root, subsets)?;

    let dump = args.windows(2).find(|w| w[0] == "--dump").map(|w| w[1].clone());
    let mut dumped = String::new();
    let mut rows = Vec::new();
    for (label, catalog, probes) in [
        ("metatool", &sets.meta_catalog, &sets.meta),
        ("suite", &sets.suite_catalog, &sets.suite),
        ("scale", &sets.scale_catalog, &sets.suite),
        ("unrelated", &sets.suite_catalog, &sets.unrelated),
        ("bfcl", &sets.bfcl_catalog, &sets.bfcl),
    ] {
        if !chosen.iter().any(|set| set == label) {
            continue;
        }
        let mut asked = 0_usize;
        let ranked: Vec<Vec<(String, f32)>> = match (relative, &embedding) {
            (Some(rule), Some(ranker)) => ranked_relative(ranker, rule, catalog, probes)?,
            (Some(_), None) => return Err("--relative needs --ranker minilm or static".to_owned()),
            _ => probes
                .iter()
                .map(|probe| {
                    let hits = |policy| -> Vec<(String, f32)> {
                        let outcome = runtime.block_on(catalog.rank(policy, &probe.text, DUMP_LIMIT));
                        outcome.matched.into_iter().map(|hit| (hit.name, hit.confidence.unwrap_or(0.0))).collect()
                    };
                    match fusion {
                        Some(fusion) => {
                            let alone = hits(&plain);
                            asked += usize::from(fusion.asks(&alone));
                            fusion.merge(alone, hits(&policy))
                        }
                        None => hits(&policy),
                    }
                })
                .collect(),
        };
        if let Some(Fusion::Gate(share)) = fusion {
            eprintln!("{label}: {asked} of {} messages under the gate's {share} ask for keywords", probes.len());
        }
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

/// The sets `--sets` names (every set without it).
fn chosen_sets(args: &[String]) -> Result<Vec<String>, String> {
    let chosen = args.windows(2).find(|w| w[0] == "--sets").map(|w| w[1].split(',').map(str::to_owned).collect());
    let chosen: Vec<String> = chosen.unwrap_or_else(|| SETS.iter().map(|set| (*set).to_owned()).collect());
    match chosen.iter().find(|set| !SETS.contains(&set.as_str())) {
        Some(unknown) => Err(format!("--sets: unknown set `{unknown}` (the sets: {})", SETS.join(", "))),
        None => Ok(chosen),
    }
}

/// How the run ranks: the discovery policy, the embedding ranker behind it (for `--relative`),
/// and the keyword expander when `--expand` wraps it.
struct Ranking {
    /// The policy before `--expand` wraps its ranker (what `--fuse` ranks the message alone
    /// with).
    plain: ToolDiscoveryPolicy,
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
    let plain = policy.clone();
    let mut expander = None;
    if expand {
        let (expanded, expanding) = live::expand_locally(policy)?;
        policy = expanded;
        policy.ranker_timeout = std::time::Duration::from_secs(600);
        expander = Some(expanding);
    }
    Ok(Ranking { plain, policy, embedding, expander })
}

/// The messages and the catalogues they are ranked over.
struct Sets {
    meta_catalog: DeferredCatalog,
    meta: Vec<Probe>,
    suite_catalog: DeferredCatalog,
    scale_catalog: DeferredCatalog,
    suite: Vec<Probe>,
    unrelated: Vec<Probe>,
    bfcl_catalog: DeferredCatalog,
    bfcl: Vec<Probe>,
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
        // One definition of each function name, as the `bfcl` benchmark's pool arm offers; a
        // gold id counts by its function's name.
        let mut pool_tools: Vec<EvalTool> = eval::read_jsonl(&root.join("bfcl/tools.jsonl"))?;
        let function_of: std::collections::HashMap<String, String> =
            pool_tools.iter().map(|tool| (tool.id.clone(), tool.name.clone())).collect();
        let mut seen = std::collections::HashSet::new();
        pool_tools.retain(|tool| seen.insert(tool.name.clone()));
        let pool = eval::register(&pool_tools)?;
        let registered: std::collections::HashMap<&String, &String> =
            pool.id_of.iter().map(|(name, id)| (&pool.name_of[id], name)).collect();
        let bfcl = bfcl
            .iter()
            .enumerate()
            .filter(every(6))
            .map(|(_, q)| Probe {
                text: q.query.clone(),
                gold: q
                    .gold
                    .iter()
                    .filter_map(|id| function_of.get(id).and_then(|f| registered.get(f)).map(|name| (*name).clone()))
                    .collect(),
            })
            .collect();
        Ok(Self {
            meta_catalog: DeferredCatalog::new(&meta_set.registry, |_| true),
            meta,
            suite_catalog: DeferredCatalog::new(&catalogue::registry(), |_| true),
            scale_catalog: DeferredCatalog::new(&tasks::scale_registry(SCALE_DISTRACTORS)?, |_| true),
            suite,
            unrelated,
            bfcl_catalog: DeferredCatalog::new(&pool.registry, |_| true),
            bfcl,
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

/// How `--fuse` combines a message's ranking as written with its ranking with keywords.
#[derive(Clone, Copy)]
enum Fusion {
    /// The two rankings merged.
    Merge(Merge),
    /// The message's own ranking when its best hit's confidence reaches the share given, else
    /// the ranking with keywords: the keyword request asked only where the message alone finds
    /// nothing confident.
    Gate(f32),
}

/// How [`Fusion::Merge`] orders the two rankings' hits.
#[derive(Clone, Copy)]
enum Merge {
    /// Every hit of either, at its higher confidence, best first.
    Max,
    /// The first of each, then the second of each, and so on, the message's first.
    Interleave,
    /// By reciprocal rank (k = 60), summed over the two.
    Rrf,
}

impl Fusion {
    fn parse(name: &str) -> Result<Self, String> {
        Ok(match name {
            "max" => Self::Merge(Merge::Max),
            "interleave" => Self::Merge(Merge::Interleave),
            "rrf" => Self::Merge(Merge::Rrf),
            gate if gate.starts_with("gate:") => {
                Self::Gate(gate["gate:".len()..].parse().map_err(|_| format!("--fuse {gate}: gate:X takes a number"))?)
            }
            other => return Err(format!("--fuse: unknown rule `{other}` (max, interleave, rrf or gate:X)")),
        })
    }

    /// Whether the message's own ranking, `plain`, needs its keywords: always, but under a
    /// gate only when its best hit's confidence is under the gate's share.
    fn asks(self, plain: &[(String, f32)]) -> bool {
        match self {
            Self::Gate(share) => plain.first().is_none_or(|(_, confidence)| *confidence < share),
            Self::Merge(_) => true,
        }
    }

    /// The hits pre-promotion would choose from: one of the two rankings (a gate), or both
    /// merged.
    fn merge(self, plain: Vec<(String, f32)>, expanded: Vec<(String, f32)>) -> Vec<(String, f32)> {
        match self {
            Self::Gate(_) if self.asks(&plain) => expanded,
            Self::Gate(_) => plain,
            Self::Merge(merge) => merge.merge(plain, expanded),
        }
    }
}

impl Merge {
    /// The two rankings' hits at or above the default floor, merged; each keeps its higher
    /// confidence.
    fn merge(self, plain: Vec<(String, f32)>, expanded: Vec<(String, f32)>) -> Vec<(String, f32)> {
        let floor = tinytools::discovery::DEFAULT_MIN_CONFIDENCE;
        let [plain, expanded] =
            [plain, expanded].map(|hits| hits.into_iter().filter(|(_, c)| *c >= floor).collect::<Vec<_>>());
        let mut best: Vec<(String, f32, f64)> = Vec::new();
        for (list, hits) in [&plain, &expanded].into_iter().enumerate() {
            for (rank, (name, confidence)) in hits.iter().enumerate() {
                let order = match self {
                    Self::Max => -f64::from(*confidence),
                    Self::Interleave => (rank * 2 + list) as f64,
                    Self::Rrf => -1.0 / (60.0 + rank as f64),
                };
                match best.iter_mut().find(|(known, _, _)| known == name) {
                    Some(entry) => {
                        entry.1 = entry.1.max(*confidence);
                        entry.2 = match self {
                            Self::Rrf => entry.2 + order,
                            Self::Max | Self::Interleave => entry.2.min(order),
                        };
                    }
                    None => best.push((name.clone(), *confidence, order)),
                }
            }
        }
        best.sort_by(|a, b| a.2.total_cmp(&b.2));
        best.into_iter().map(|(name, confidence, _)| (name, confidence)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(list: &[(&str, f32)]) -> Vec<(String, f32)> {
        list.iter().map(|(name, confidence)| ((*name).to_owned(), *confidence)).collect()
    }

    fn names(list: &[(String, f32)]) -> Vec<&str> {
        list.iter().map(|(name, _)| name.as_str()).collect()
    }

    #[test]
    fn the_three_fusions_merge_the_two_rankings_their_own_way() {
        // `low` is under the default floor in both rankings: no fusion keeps it.
        let plain = hits(&[("a", 0.4), ("b", 0.3), ("low", 0.01)]);
        let expanded = hits(&[("c", 0.6), ("b", 0.2), ("d", 0.1), ("low", 0.02)]);
        let merged = |rule| Fusion::parse(rule).map(|fusion| fusion.merge(plain.clone(), expanded.clone()));
        let max = merged("max").unwrap();
        assert_eq!(names(&max), ["c", "a", "b", "d"]);
        assert_eq!(max[2].1, 0.3, "a tool in both keeps its higher confidence");
        assert_eq!(names(&merged("interleave").unwrap()), ["a", "c", "b", "d"]);
        assert_eq!(names(&merged("rrf").unwrap()), ["b", "a", "c", "d"], "in both lists beats first in one");
        assert!(Fusion::parse("sum").is_err());
        assert!(Fusion::parse("gate:x").is_err());
        assert_eq!(names(&merged("gate:0.4").unwrap()), ["a", "b", "low"], "a confident message ranks alone");
        assert_eq!(names(&merged("gate:0.5").unwrap())[0], "c", "else its keywords join it");
    }

    #[test]
    fn sets_are_checked_by_name() {
        let args = |list: &str| vec!["pre_promotion_eval".to_owned(), "--sets".to_owned(), list.to_owned()];
        assert_eq!(chosen_sets(&args("bfcl,scale")).unwrap(), ["bfcl", "scale"]);
        assert!(chosen_sets(&args("bfcl,nope")).unwrap_err().contains("`nope`"));
        assert_eq!(chosen_sets(&[]).unwrap().len(), SETS.len());
    }
}
