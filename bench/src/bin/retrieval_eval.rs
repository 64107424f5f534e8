//! Retrieval quality of `tool_search`'s ranking on a public tool-retrieval set.
//!
//! ```text
//! cargo run --release -p tinytools-bench --bin retrieval_eval -- \
//!     --tools ../shared/eval/bfcl/tools.jsonl --queries ../shared/eval/bfcl/queries.jsonl
//! ```
//!
//! Every tool is registered Deferred; each query goes through `DeferredCatalog::rank`, the
//! path `tool_search` takes. Prints one JSON object on stdout; notes go to stderr.
//!
//! Options: `--ranker bm25` (default: the catalogue's own BM25); `--ranker custom` with
//! `--no-stem`, `--no-stop`, `--prefix N`, `--weights NAME,DESC,PARAM_NAMES,PARAM_DESCS,FAMILY`,
//! `--k1 X`, `--b X` (the knobs measured in docs/retrieval.md); `--ranker minilm` (the
//! embedding ranker on all-MiniLM-L6-v2 from `.ci/models`, blending BM25 at `--bm25-weight X`,
//! default 0.4, reading a query's first `--query-tokens N` word pieces, by default
//! `BertEmbedder::DEFAULT_QUERY_TOKENS`; the tools are embedded before timing starts, reported as `embed_ms`;
//! `--vectors FILE` loads saved tool vectors when the file exists and saves them after);
//! `--ranker static` (the static model
//! `distill_static` writes, from `--static-model DIR`, default `target/models/minilm-static`,
//! blended the same way and with the same `--bm25-weight` knob; the report adds
//! `query_embed_us_p50`/`_p99`, a query's embedding alone); `--every N` (every Nth query only);
//! `--limit K` (ranked list length, default 50). The report's `peak_rss_mb` is the process's
//! peak resident memory.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tinytools::discovery::{DeferredCatalog, RankMode, ToolDiscoveryPolicy};
use tinytools::rank::embedding::EmbeddingRanker;
use tinytools::rank::{
    Bm25Index, Bm25Params, FieldWeights, RankRequest, RankedTool, RankerError, Tokenizer, ToolDocument, ToolRanker,
};
use tinytools_bench::cli::whole_number;
use tinytools_bench::percentile::{percentile, sorted};
use tinytools_embed::StaticEmbedder;
use tinytools_examples::eval::{self, EvalQuery, EvalTool, Scores};
use tinytools_examples::models;

struct Options {
    tools: PathBuf,
    queries: PathBuf,
    ranker: String,
    limit: usize,
    tokenizer: Tokenizer,
    weights: FieldWeights,
    params: Bm25Params,
    bm25_weight: Option<f32>,
    vectors: Option<PathBuf>,
    static_model: Option<PathBuf>,
    /// `--query-tokens`: MiniLM's query length, when not its default.
    query_tokens: Option<usize>,
    every: usize,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("retrieval_eval: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let options = parse_args(std::env::args().skip(1))?;
    let tools: Vec<EvalTool> = eval::read_jsonl(&options.tools)?;
    let queries: Vec<EvalQuery> = eval::read_jsonl(&options.queries)?;
    let queries: Vec<EvalQuery> = queries.into_iter().step_by(options.every.max(1)).collect();
    let set = eval::register(&tools)?;

    let started = Instant::now();
    let catalog = DeferredCatalog::new(&set.registry, |_| true);
    let build_ms = started.elapsed().as_secs_f64() * 1_000.0;

    let Setup { policy, embed_ms, query_embed_us } = setup(&options, &catalog, &queries)?;
    eprintln!(
        "{} tools, {} queries, ranker {}, index built in {build_ms:.1} ms",
        tools.len(),
        queries.len(),
        options.ranker
    );

    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().map_err(|e| e.to_string())?;
    let mut latencies = Vec::with_capacity(queries.len());
    let (mut name_level, mut strict) = (Vec::new(), Vec::new());
    let mut empty = 0_usize;
    for query in &queries {
        let started = Instant::now();
        let outcome = runtime.block_on(catalog.rank(&policy, &query.query, options.limit));
        latencies.push(started.elapsed().as_secs_f64() * 1e6);
        // A custom ranker that finds nothing falls back to BM25, which finds nothing either;
        // any other fallback means the measurement is not of the ranker asked for.
        match &outcome.fallback {
            Some(reason) if reason.ends_with("returned nothing") => empty += 1,
            Some(reason) => return Err(format!("query {}: the ranker fell back: {reason}", query.qid)),
            None => {}
        }
        let ids: Vec<&str> =
            outcome.matched.iter().filter_map(|hit| set.id_of.get(&hit.name)).map(String::as_str).collect();
        let gold_ids: Vec<&str> = query.gold.iter().map(String::as_str).collect();
        strict.push(Scores::of(&ids, &gold_ids));
        let names = eval::dedup_in_order(ids.iter().filter_map(|id| set.name_of.get(*id)).map(String::as_str));
        let gold_names =
            eval::dedup_in_order(gold_ids.iter().filter_map(|id| set.name_of.get(*id)).map(String::as_str));
        name_level.push(Scores::of(&names, &gold_names));
    }
    if empty > 0 {
        eprintln!("{empty} queries share no term with any tool");
    }
    let [p50, p99] = p50_p99(latencies);
    let tenths = |x: f64| (x * 10.0).round() / 10.0;
    let mut report = json!({
        "tools": tools.len(),
        "queries": queries.len(),
        "ranker": options.ranker,
        "build_ms": (build_ms * 100.0).round() / 100.0,
        "search_us_p50": tenths(p50),
        "search_us_p99": tenths(p99),
        "name_level": Scores::mean(&name_level).to_json(),
        "strict": Scores::mean(&strict).to_json(),
    });
    if let Some(ms) = embed_ms {
        report["embed_ms"] = json!(tenths(ms));
    }
    if let Some([p50, p99]) = query_embed_us {
        (report["query_embed_us_p50"], report["query_embed_us_p99"]) = (json!(tenths(p50)), json!(tenths(p99)));
    }
    if let Some(mb) = peak_rss_mb() {
        report["peak_rss_mb"] = json!(mb);
    }
    println!("{report}");
    Ok(())
}

/// The policy that ranks with `--ranker`, and what building it cost.
struct Setup {
    policy: ToolDiscoveryPolicy,
    /// Embedding the catalogue (ms), for an embedding ranker.
    embed_ms: Option<f64>,
    /// A query's embedding alone (µs, p50 and p99), for the static model.
    query_embed_us: Option<[f64; 2]>,
}

fn setup(options: &Options, catalog: &DeferredCatalog, queries: &[EvalQuery]) -> Result<Setup, String> {
    let mut setup = Setup {
        policy: ToolDiscoveryPolicy::default().with_max_limit(options.limit).with_default_limit(options.limit),
        embed_ms: None,
        query_embed_us: None,
    };
    if options.ranker == "custom" {
        let ranker = CustomBm25::new(catalog, options.tokenizer, &options.weights, options.params);
        setup.policy = setup.policy.with_ranker(Arc::new(ranker)).with_rank_mode(RankMode::Ranker);
    } else if let Some((mut ranker, embed_us)) = embedding_ranker(options, queries)? {
        setup.query_embed_us = embed_us;
        if let Some(weight) = options.bm25_weight {
            ranker = ranker.bm25_weight(weight);
        }
        setup.embed_ms = Some(tinytools_bench::warm(&ranker, catalog, options.vectors.as_deref())?);
        setup.policy = setup.policy.with_ranker(Arc::new(ranker)).with_rank_mode(RankMode::Ranker);
    } else if options.ranker != "bm25" {
        return Err(format!("unknown ranker `{}`: use bm25, custom, minilm or static", options.ranker));
    }
    Ok(setup)
}

/// An embedding ranker, and its query embedding's time alone (µs, p50 and p99) when measured.
type BuiltRanker = (EmbeddingRanker, Option<[f64; 2]>);

/// The embedding ranker `--ranker` names, `None` for a ranker that is not one; for `static`,
/// also how long embedding one query takes on its own (µs, p50 and p99 over `queries`), since
/// a search's time is then mostly the cosines and the blend.
fn embedding_ranker(options: &Options, queries: &[EvalQuery]) -> Result<Option<BuiltRanker>, String> {
    match options.ranker.as_str() {
        "minilm" => Ok(Some((models::minilm_ranker_reading(options.query_tokens)?, None))),
        "static" => {
            let dir = options.static_model.clone().unwrap_or_else(models::static_dir);
            let model = StaticEmbedder::load(&dir).map_err(|e| format!("{e} (run distill_static)"))?;
            eprintln!("static model: {}", model.source());
            let micros: Vec<f64> = queries
                .iter()
                .map(|query| {
                    let started = Instant::now();
                    std::hint::black_box(model.embed_one(&query.query));
                    started.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            Ok(Some((EmbeddingRanker::new(Arc::new(model)), Some(p50_p99(micros)))))
        }
        _ => Ok(None),
    }
}

/// The median and the 99th percentile of `values` (0 for none).
fn p50_p99(values: Vec<f64>) -> [f64; 2] {
    let values = sorted(values);
    [0.5, 0.99].map(|p| percentile(&values, p).unwrap_or(0.0))
}

/// The process's peak resident memory in MB (Linux's `VmHWM`), when the OS says.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kb / 1024.0).round())
}

/// BM25 with measurement knobs, as a host ranker over the catalogue.
struct CustomBm25 {
    index: Bm25Index,
    names: Vec<String>,
}

impl CustomBm25 {
    fn new(catalog: &DeferredCatalog, tokenizer: Tokenizer, weights: &FieldWeights, params: Bm25Params) -> Self {
        let documents: Vec<ToolDocument<'_>> =
            catalog.iter().map(|tool| ToolDocument::new(tool.schema(), tool.family())).collect();
        let index = Bm25Index::build(documents.iter().map(|d| d.fields(*weights)), tokenizer, params);
        Self { index, names: catalog.iter().map(|tool| tool.schema().name.clone()).collect() }
    }
}

#[async_trait::async_trait]
impl ToolRanker for CustomBm25 {
    fn name(&self) -> &str {
        "custom"
    }
    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        Ok(self
            .index
            .search(request.query, request.limit)
            .into_iter()
            .map(|hit| RankedTool::new(self.names[hit.doc].clone(), Some(hit.confidence)))
            .collect())
    }
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        tools: PathBuf::new(),
        queries: PathBuf::new(),
        ranker: "bm25".into(),
        limit: 50,
        tokenizer: Tokenizer::default(),
        weights: FieldWeights::default(),
        params: Bm25Params::default(),
        bm25_weight: None,
        vectors: None,
        static_model: None,
        query_tokens: None,
        every: 1,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String| text.parse::<f32>().map_err(|_| format!("{flag}: `{text}` is not a number"));
        match flag.as_str() {
            "--tools" => options.tools = value()?.into(),
            "--queries" => options.queries = value()?.into(),
            "--ranker" => options.ranker = value()?,
            "--limit" => options.limit = whole_number(&flag, &value()?)?,
            "--no-stem" => options.tokenizer.stem = false,
            "--no-stop" => options.tokenizer.stop_words = false,
            "--prefix" => options.tokenizer.prefix = whole_number(&flag, &value()?)?,
            "--k1" => options.params.k1 = number(value()?)?,
            "--b" => options.params.b = number(value()?)?,
            "--bm25-weight" => options.bm25_weight = Some(number(value()?)?),
            "--vectors" => options.vectors = Some(value()?.into()),
            "--static-model" => options.static_model = Some(value()?.into()),
            "--query-tokens" => options.query_tokens = Some(whole_number(&flag, &value()?)?),
            "--every" => options.every = whole_number(&flag, &value()?)?,
            "--weights" => {
                let parts: Vec<f32> = value()?.split(',').map(|p| number(p.to_owned())).collect::<Result<_, _>>()?;
                let [name, description, parameter_names, parameter_descriptions, family] = parts[..] else {
                    return Err("--weights takes five numbers: NAME,DESC,PARAM_NAMES,PARAM_DESCS,FAMILY".into());
                };
                options.weights = FieldWeights::default()
                    .with_name(name)
                    .with_description(description)
                    .with_parameter_names(parameter_names)
                    .with_parameter_descriptions(parameter_descriptions)
                    .with_family(family);
            }
            other => return Err(format!("unknown option `{other}`; see the binary's header")),
        }
    }
    if options.tools.as_os_str().is_empty() || options.queries.as_os_str().is_empty() {
        return Err("--tools FILE and --queries FILE are required".into());
    }
    Ok(options)
}
