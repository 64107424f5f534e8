//! The two-stage search and the first request at scale, model-free: which shape — full
//! schemas `k`, compact candidates `n` (a name and one line each), the candidates' byte
//! budget — offers the gold tool, and at what cost in bytes.
//!
//! ```text
//! cargo run --release -p tinytools-bench --bin two_stage_eval -- --json > sweep.json
//! cargo run --release -p tinytools-bench --bin two_stage_eval -- --sets livemcp --data "$(bench/livemcp/fetch.sh)"
//! ```
//!
//! - **bfcl-first** (every tool query of BFCL's dev half, `../shared/eval/bfcl`, over the
//!   pool arm's 1,986 Deferred functions with the query's own definitions, as `bfcl` builds
//!   it): the first request as a run builds it — pre-promotion's `k` promoted schemas
//!   (`DiscoveryBridge::promotable`, its 600-token budget and 0.05 floor) and `tool_search`'s
//!   declaration with `n` candidates (`first_request_candidates`, `schema_offering`). Per
//!   point: the share of queries whose gold functions are all offered (promoted or
//!   candidate), and the bytes of the first request's tools (compact JSON, as
//!   `ToolsAdvertised` counts them).
//! - **bfcl-search**: the same queries searched as the model might (the user message as the
//!   query) through `DiscoveryBridge::search` at each search shape: the share whose gold is in
//!   the answer (full match or candidate) and the answer's bytes.
//! - **livemcp** (`--data DIR`, LiveMCPBench 0.1.1's 526 tools, its tasks' annotated steps):
//!   any-step recall of the search answer: a gold tool counts when any step's search answer
//!   holds it, as a full match or a candidate.
//!
//! Options: `--ranker bm25|minilm` (MiniLM + BM25 as `tinytools_embed::load_ranker` installs it;
//! model from `TINYTOOLS_MODELS`, `.ci/models`), `--sets bfcl,livemcp`, `--record DIR` writes
//! the run records (per-query outcomes by id, no benchmark text) there, `--json` prints the
//! figures as one JSON object.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::ToolSchema;
use tinytools::discovery::{DiscoveryBridge, PrePromotion, RankOutcome, ToolDiscoveryPolicy};
use tinytools::schema::EstimatedTokens;
use tinytools_bench::bfcl::{self, Arm, ArmSetup};
use tinytools_bench::livemcp;
use tinytools_examples::{eval, models};

/// Full schemas the first request promotes (`--first-k`).
const FIRST_K: [usize; 4] = [0, 1, 2, 3];
/// Compact candidates, first request and search alike (`--n`).
const N: [usize; 6] = [0, 5, 10, 15, 20, 30];
/// Candidate byte budgets (`--budgets`).
const BUDGETS: [usize; 4] = [600, 1_000, 1_500, 2_500];
/// Full matches a search answers (`--search-k`; `--search-k none` sweeps no search shape).
const SEARCH_K: [usize; 3] = [1, 3, 5];
/// The issue's bound on the first request's tools.
const FIRST_REQUEST_BYTES: usize = 2_500;
/// Hits each query's ranking asks for (room for every point's promoted tools and candidates).
const RANKED: usize = 60;

struct Options {
    first_k: Vec<usize>,
    n: Vec<usize>,
    budgets: Vec<usize>,
    search_k: Vec<usize>,
    /// `--promote-tokens`: pre-promotion's token budget, when not its default.
    promote_tokens: Option<usize>,
    ranker: String,
    sets: Vec<String>,
    data: Option<PathBuf>,
    record: Option<PathBuf>,
    json: bool,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("two_stage_eval: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let options = parse(std::env::args().skip(1).collect())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let mut policy = ToolDiscoveryPolicy::default();
    if let Some(tokens) = options.promote_tokens {
        policy = policy.with_pre_promotion(PrePromotion::default().with_token_budget(tokens));
    }
    if let Some(ranker) = models::named_ranker(&options.ranker, None)? {
        policy = policy.with_ranker(Arc::new(ranker)).with_ranker_timeout(std::time::Duration::from_secs(600));
    }
    let mut report = json!({"ranker": options.ranker, "first_request_bytes_bound": FIRST_REQUEST_BYTES});
    if options.sets.iter().any(|s| s == "bfcl") {
        let (first, search, per_query) = runtime.block_on(bfcl_sweep(&policy, &options))?;
        report["bfcl_first"] = json!(first);
        report["bfcl_search"] = json!(search);
        write_record(&options, "first-request", "bfcl", &report["bfcl_first"], &report["bfcl_search"], per_query)?;
    }
    if options.sets.iter().any(|s| s == "livemcp") {
        let dir = options.data.clone().or_else(|| std::env::var_os("TINYTOOLS_LIVEMCPBENCH").map(PathBuf::from));
        let dir = dir.ok_or("the livemcp set needs --data DIR (bench/livemcp/fetch.sh prints it)")?;
        let (rows, per_task) = runtime.block_on(livemcp_sweep(&dir, &policy, &options))?;
        report["livemcp_search"] = json!(rows);
        write_record(&options, "search-shape", "livemcp", &report["livemcp_search"], &Value::Null, per_task)?;
    }
    if options.json {
        println!("{report}");
    } else {
        print_tables(&report);
    }
    Ok(())
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut options = Options {
        first_k: FIRST_K.to_vec(),
        n: N.to_vec(),
        budgets: BUDGETS.to_vec(),
        search_k: SEARCH_K.to_vec(),
        promote_tokens: None,
        ranker: "bm25".into(),
        sets: vec!["bfcl".into()],
        data: None,
        record: None,
        json: false,
    };
    let list = |flag: &str, text: String| -> Result<Vec<usize>, String> {
        if text == "none" {
            return Ok(Vec::new());
        }
        text.split(',').map(|n| n.parse().map_err(|_| format!("{flag} takes whole numbers, comma-separated"))).collect()
    };
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--ranker" => options.ranker = value()?,
            "--first-k" => options.first_k = list(&flag, value()?)?,
            "--n" => options.n = list(&flag, value()?)?,
            "--budgets" => options.budgets = list(&flag, value()?)?,
            "--search-k" => options.search_k = list(&flag, value()?)?,
            "--promote-tokens" => options.promote_tokens = list(&flag, value()?)?.first().copied(),
            "--sets" => options.sets = value()?.split(',').map(str::to_owned).collect(),
            "--data" => options.data = Some(PathBuf::from(value()?)),
            "--record" => options.record = Some(PathBuf::from(value()?)),
            "--json" => options.json = true,
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if let Some(unknown) = options.sets.iter().find(|s| !["bfcl", "livemcp"].contains(&s.as_str())) {
        return Err(format!("--sets: unknown set `{unknown}` (bfcl, livemcp)"));
    }
    Ok(options)
}

impl Options {
    /// Every `(k, n, budget)` point over `ks` and the options' `n` and budgets.
    fn grid(&self, ks: &[usize]) -> Vec<(usize, usize, usize)> {
        let mut points = Vec::new();
        for &k in ks {
            for &n in &self.n {
                points.extend(self.budgets.iter().map(|&b| (k, n, b)));
            }
        }
        points
    }
}

/// One point's running totals.
#[derive(Default, Clone)]
struct Tally {
    queries: usize,
    offered: usize,
    offered_full: usize,
    bytes: usize,
    over_bound: usize,
}

impl Tally {
    fn add(&mut self, offered: bool, offered_full: bool, bytes: usize) {
        self.queries += 1;
        self.offered += usize::from(offered);
        self.offered_full += usize::from(offered_full);
        self.bytes += bytes;
        self.over_bound += usize::from(bytes > FIRST_REQUEST_BYTES);
    }

    fn row(&self, point: Value) -> Value {
        let n = self.queries.max(1) as f64;
        let mut row = point;
        row["queries"] = json!(self.queries);
        row["gold_offered"] = json!(self.offered);
        row["gold_offered_share"] = json!(round(self.offered as f64 / n));
        row["gold_full"] = json!(self.offered_full);
        row["mean_bytes"] = json!((self.bytes as f64 / n).round());
        row["over_2500"] = json!(self.over_bound);
        row
    }
}

fn round(x: f64) -> f64 {
    (x * 1_000.0).round() / 1_000.0
}

fn bytes_of(tools: &[ToolSchema]) -> usize {
    serde_json::to_string(tools).map_or(0, |text| text.len())
}

fn holds_all(gold: &[String], offered: &[&str]) -> bool {
    !gold.is_empty() && gold.iter().all(|g| offered.contains(&g.as_str()))
}

/// The first-request and search sweeps over BFCL's dev half, and each query's outcomes.
async fn bfcl_sweep(
    policy: &ToolDiscoveryPolicy,
    options: &Options,
) -> Result<(Vec<Value>, Vec<Value>, Vec<Value>), String> {
    let root = eval::sets_dir(&["bfcl"])?;
    let data = bfcl::load(&root.join("bfcl/queries.jsonl"), &root.join("bfcl/tools.jsonl"), None)?;
    let arm = ArmSetup::new(Arm::Pool, &data, None)?;
    let first_points = options.grid(&options.first_k);
    let search_points = options.grid(&options.search_k);
    let mut first = vec![Tally::default(); first_points.len()];
    let mut search = vec![Tally::default(); search_points.len()];
    let mut per_query = Vec::new();
    let started = std::time::Instant::now();
    for (i, query) in data.queries.iter().enumerate() {
        if i % 50 == 0 {
            eprintln!("bfcl: {i}/{} ({:.0} s)", data.queries.len(), started.elapsed().as_secs_f64());
        }
        let (registry, _) = arm.for_query(query);
        let bridge = DiscoveryBridge::new(&registry, policy.clone());
        let gold: Vec<String> = query.gold_names.iter().map(|name| arm.wire_name(name)).collect();
        let outcome = bridge.catalog().rank_with_candidates(bridge.policy(), &query.text, RANKED).await;
        let mut offered_at = Vec::new();
        for (tally, &(k, n, b)) in first.iter_mut().zip(&first_points) {
            let (offered, full, bytes) = first_request(&bridge, &outcome, &gold, k, n, b);
            tally.add(offered, full, bytes);
            offered_at.push(json!([u8::from(offered), bytes]));
        }
        let mut searched_at = Vec::new();
        let mut shaped = bridge.clone();
        for (tally, &(k, n, b)) in search.iter_mut().zip(&search_points) {
            shaped = shaped.with_search_shape(k, n, b);
            let (offered, full, bytes) = search_answer(&shaped, &query.text, &gold).await;
            tally.add(offered, full, bytes);
            searched_at.push(json!([u8::from(offered), bytes]));
        }
        let ranks: Vec<Value> = gold
            .iter()
            .map(|g| outcome.matched.iter().position(|hit| &hit.name == g).map_or(Value::Null, |at| json!(at + 1)))
            .collect();
        per_query.push(json!({
            "qid": query.qid, "category": query.category, "gold_ranks": ranks,
            "first": offered_at, "search": searched_at,
        }));
    }
    let point = |(k, n, b): (usize, usize, usize)| json!({"k": k, "n": n, "budget": b});
    let first = first.iter().zip(first_points).map(|(t, p)| t.row(point(p))).collect();
    let search = search.iter().zip(search_points).map(|(t, p)| t.row(point(p))).collect();
    Ok((first, search, per_query))
}

/// Whether the first request a run builds at point `(k, n, budget)` offers every gold
/// function (and with full schemas alone), and its tools' bytes.
fn first_request(
    bridge: &DiscoveryBridge,
    outcome: &RankOutcome,
    gold: &[String],
    k: usize,
    n: usize,
    budget: usize,
) -> (bool, bool, usize) {
    let mut head = outcome.clone();
    head.matched.truncate(k);
    let promoted: Vec<ToolSchema> =
        bridge.promotable(&head, k, &EstimatedTokens, |_| false).into_iter().map(|(schema, _)| schema).collect();
    let pre = PrePromotion::default().with_limit(k).with_candidates(n, budget);
    let skip = |name: &str| promoted.iter().any(|tool| tool.name == name);
    let candidates = bridge.first_request_candidates(outcome, pre, &EstimatedTokens, skip);
    let mut tools = bridge.advertised_offering(&EstimatedTokens, &candidates);
    tools.extend(promoted.iter().cloned());
    let full: Vec<&str> = promoted.iter().map(|tool| tool.name.as_str()).collect();
    let mut all = full.clone();
    all.extend(candidates.iter().map(|c| c.name.as_str()));
    (holds_all(gold, &all), holds_all(gold, &full), bytes_of(&tools))
}

/// Whether a search of `query` through `shaped` (a bridge at one search shape) answers every
/// gold tool (and as full matches alone), and the answer's bytes.
async fn search_answer(shaped: &DiscoveryBridge, query: &str, gold: &[String]) -> (bool, bool, usize) {
    let answer = shaped.search(&json!({"query": query})).await;
    let full: Vec<&str> = answer.outcome.iter().flat_map(|o| o.matched.iter().map(|hit| hit.name.as_str())).collect();
    let mut all = full.clone();
    all.extend(answer.candidates.iter().map(|c| c.name.as_str()));
    (holds_all(gold, &all), holds_all(gold, &full), answer.result.to_model_text().len())
}

/// LiveMCPBench: each task's steps searched at every search shape; any-step recall per shape.
async fn livemcp_sweep(
    dir: &std::path::Path,
    policy: &ToolDiscoveryPolicy,
    options: &Options,
) -> Result<(Vec<Value>, Vec<Value>), String> {
    let data = livemcp::load(dir)?;
    let bridge = DiscoveryBridge::new(&data.catalogue.registry, policy.clone());
    let points = options.grid(&options.search_k);
    let mut recall = vec![(0.0_f64, 0_usize, 0_usize); points.len()];
    let mut per_task = Vec::new();
    for task in &data.tasks {
        let (gold, _) = task.gold(&data.catalogue);
        if gold.is_empty() || task.steps.is_empty() {
            continue;
        }
        let mut found_at = Vec::new();
        let mut shaped = bridge.clone();
        for (slot, &(k, n, b)) in recall.iter_mut().zip(&points) {
            shaped = shaped.with_search_shape(k, n, b);
            let mut answered: Vec<String> = Vec::new();
            let mut bytes = 0;
            for step in &task.steps {
                let answer = shaped.search(&json!({"query": step})).await;
                bytes += answer.result.to_model_text().len();
                let full = answer.outcome.iter().flat_map(|o| o.matched.iter().map(|hit| hit.name.clone()));
                answered.extend(full.chain(answer.candidates.iter().map(|c| c.name.clone())));
            }
            let names: Vec<&str> = answered
                .iter()
                .filter_map(|registered| data.catalogue.by_registered(registered).map(|tool| tool.name.as_str()))
                .collect();
            let found = gold.iter().filter(|g| names.contains(g)).count();
            slot.0 += found as f64 / gold.len() as f64;
            slot.1 += 1;
            slot.2 += bytes / task.steps.len();
            found_at.push(json!(found));
        }
        per_task.push(json!({"task": task.id, "gold": gold.len(), "found": found_at}));
    }
    let rows = recall
        .iter()
        .zip(points)
        .map(|(&(sum, tasks, bytes), (k, n, b))| {
            let t = tasks.max(1) as f64;
            json!({"k": k, "n": n, "budget": b, "tasks": tasks, "any_step_recall": round(sum / t),
                   "mean_answer_bytes": (bytes as f64 / t).round()})
        })
        .collect();
    Ok((rows, per_task))
}

/// Writes `{what, date, commit, command, figures, per_query}` under `DIR/<area>/`.
fn write_record(options: &Options, area: &str, set: &str, a: &Value, b: &Value, per: Vec<Value>) -> Result<(), String> {
    let Some(dir) = &options.record else { return Ok(()) };
    let dir = dir.join(area);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let date = command_output("date", &["-u", "+%Y-%m-%d"]);
    let commit = command_output("git", &["rev-parse", "--short", "HEAD"]);
    let command: Vec<String> = std::env::args().collect();
    let record = json!({
        "what": format!("two_stage_eval, {set}: the shape sweep (k full schemas, n compact candidates, their byte budget); per item: for each point in the rows' order, [gold offered 0/1, bytes]"),
        "date": date, "commit": commit, "command": command.join(" "), "ranker": options.ranker,
        "model": "none (model-free)",
        "rows": a, "search_rows": b,
    });
    let tag = options.promote_tokens.map_or_else(String::new, |t| format!("-promote{t}"));
    let path = dir.join(format!("{date}-two-stage-{set}-{}{tag}.json", options.ranker));
    // One line per item, so a record of a thousand queries stays readable and small.
    let head = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())?;
    let items: Vec<String> = per.iter().map(|item| format!("  {item}")).collect();
    let text = format!(
        "{},\n \"per_item\": [\n{}\n ]\n}}\n",
        head.trim_end().trim_end_matches('}').trim_end(),
        items.join(",\n")
    );
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn command_output(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map_or_else(String::new, |text| text.trim().to_owned())
}

fn print_tables(report: &Value) {
    for (key, share) in [("bfcl_first", "gold_offered_share"), ("bfcl_search", "gold_offered_share")] {
        let Some(rows) = report[key].as_array() else { continue };
        println!(
            "{key}\n{:>3} {:>3} {:>6} {:>8} {:>8} {:>10} {:>9}",
            "k", "n", "budget", "offered", "full", "mean B", ">2500"
        );
        for row in rows {
            println!(
                "{:>3} {:>3} {:>6} {:>8} {:>8} {:>10} {:>9}",
                row["k"], row["n"], row["budget"], row[share], row["gold_full"], row["mean_bytes"], row["over_2500"]
            );
        }
    }
    if let Some(rows) = report["livemcp_search"].as_array() {
        println!("livemcp_search\n{:>3} {:>3} {:>6} {:>8} {:>10}", "k", "n", "budget", "recall", "mean B");
        for row in rows {
            println!(
                "{:>3} {:>3} {:>6} {:>8} {:>10}",
                row["k"], row["n"], row["budget"], row["any_step_recall"], row["mean_answer_bytes"]
            );
        }
    }
}
