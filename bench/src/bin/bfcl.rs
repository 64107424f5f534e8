//! BFCL end to end: the dev half's queries through the real agent, natively and deferred in
//! the pooled catalogue, scored by BFCL's own AST checker (`tinytools_bench::bfcl`).
//!
//! ```text
//! bench/bfcl/setup.sh
//! cargo run --release -p tinytools-bench --bin bfcl -- --base-url http://127.0.0.1:8091/v1 \
//!     --model qwen2.5-coder-1.5b --arms native,pool --limit 150 --seed 1 --json
//! ```
//!
//! Options: `--base-url URL[,URL...]` (several servers: each query run goes to the least busy
//! one and stays there; one server per core runs faster than one server on all cores),
//! `--queries FILE` (default BFCL's dev half in the eval sets' directory, `TINYTOOLS_EVAL_DIR`
//! else `../shared/eval`, which `bench/scripts/fetch-eval.sh` fetches; any file of that
//! format), `--tools FILE` (the pooled functions, default beside it), `--arms
//! native,pool,pool-ranker` (default `native,pool`), `--limit N` (a stratified sample, default
//! every query) and `--seed S` (default 1), `--results FILE` (resumable: finished queries are
//! kept and not run again; default `target/bfcl/MODEL-sSEED-nLIMIT.jsonl`), `--lanes N`
//! (queries of one arm in flight, default 2), `--aids none|standard|small`, `--dialect
//! auto|native|json|pformat`, `--temperature X` (default 0), `--timeout-secs N`, `--max-tokens N`
//! (each answer's cap, default 256 as `live_tasks`: a small model that starts repeating itself
//! stops there instead of writing until the timeout; runs 1–3 of `docs/external.md` ran
//! uncapped, and 2 and 3 of the 150 queries of runs 2 and 3 ran into the 900 s timeout),
//! `--python
//! PATH` (the Python with the wheel, default `TINYTOOLS_BFCL_PYTHON` or setup.sh's venv),
//! `--no-irrelevance` (leave out the wheel's irrelevance categories), `--scripted` (the
//! offline keyword model: proves the path, measures nothing), `--json` (the report as JSON on
//! stdout; otherwise a Markdown table), `--svg FILE` (the results page's chart: accuracy and
//! first-request bytes per arm), `--no-keywords` (the pool arms' pre-promotion ranks each
//! message as written, without the keywords the run's model writes for it by default,
//! `PrePromotion::model_keywords`; labelled `pool+plain`, `pool-ranker+plain`),
//! `--runner-up-floor R` (pre-promotion loads a runner-up beside the best hit only when its
//! confidence is at least R times the best's, `PrePromotion::runner_up_floor`; labelled
//! `pool+ru{R}`), `--keyword-gate X` (the model's keywords only for a message whose own best
//! hit is under confidence X, `PrePromotion::model_keywords_below`; labelled `pool+kg{X}`),
//! `--report-only`
//! (run nothing: report what the results file holds for this sample, as after a stopped run;
//! it also scores, with the checker, results the file holds without a twin-tolerant verdict),
//! `--twins K` (how many pooled functions the `native+twins` arm offers beside a query's own,
//! default `bfcl::DEFAULT_TWINS`, 2; labelled `native+twins{K}` otherwise),
//! `--twin-similarity T` (the twin rule's least description similarity, default
//! `twins::DEFAULT_MIN_DESCRIPTION_SIMILARITY`, 0.3), `--record FILE` (a run record for
//! `bench/records/bfcl/`: the command, date, commit, the JSON report and every query's outcome
//! by id) and `--machine TEXT` (the record's note on what else ran on the machine).
//!
//! Arms: `native` (BFCL's offered functions, Direct), `native+twins` (those and the K pooled
//! functions most like them, Direct: the choice among twins without retrieval), `pool` (every
//! pooled function Deferred) and `pool-ranker` (the same ranked by MiniLM). Every arm is
//! scored twice: by BFCL's checker, and twin-tolerantly (a right call of a gold function's
//! same-job twin counts; `tinytools_bench::bfcl::twins` states the rule).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinytools::dialect::Dialect;
use tinytools::discovery::DeferredCatalog;
use tinytools::model::ChatModel;
use tinytools::providers::{HttpOptions, OpenAiCompatible};
use tinytools_bench::bfcl::twins::{self, TwinRule};
use tinytools_bench::bfcl::{self, Arm, ArmSetup, BfclRun, Checker, Dataset, QueryResult, TwinPool};
use tinytools_bench::{AidsChoice, KeywordModel, Servers};
use tinytools_examples::{eval, models};

struct Options {
    base_url: String,
    model: String,
    queries: Option<PathBuf>,
    tools: Option<PathBuf>,
    arms: Vec<Arm>,
    limit: Option<usize>,
    seed: u64,
    results: Option<PathBuf>,
    lanes: usize,
    aids: AidsChoice,
    dialect: Dialect,
    temperature: f32,
    timeout: Duration,
    max_tokens: u32,
    python: PathBuf,
    irrelevance: bool,
    scripted: bool,
    json: bool,
    svg: Option<PathBuf>,
    keywords: bool,
    keyword_gate: Option<f32>,
    runner_up_floor: f32,
    report_only: bool,
    twins: usize,
    twin_similarity: f64,
    record: Option<PathBuf>,
    machine: String,
}

fn main() {
    tinytools_bench::cli::main("bfcl", parse, run);
}

async fn run(options: Options) -> Result<(), String> {
    let queries_file = match &options.queries {
        Some(file) => file.clone(),
        None => eval::set_file("bfcl", "queries.jsonl")?,
    };
    let checker = Checker::start(&options.python)?;
    let wheel_data = options.irrelevance.then_some(checker.data_dir.as_path());
    let tools = options.tools.clone().unwrap_or_else(|| queries_file.with_file_name("tools.jsonl"));
    let data = bfcl::load(&queries_file, &tools, wheel_data)?;
    let queries = bfcl::sample(&data.queries, options.limit.unwrap_or(usize::MAX), options.seed);
    let servers = servers(&options)?;
    let model_name = if options.scripted { "scripted-keyword".to_owned() } else { options.model.clone() };
    let arms = arms(&options, &data)?;
    let pool = arms.iter().map(ArmSetup::pool_size).max().unwrap_or(0);
    let unmapped = bfcl::unmapped_types(data.pool.iter().chain(queries.iter().flat_map(|q| &q.offered)));
    eprintln!(
        "bfcl: {} of {} queries (seed {}), arms {}, model {model_name}, aids {}, pool {pool} functions; BFCL checker {} from {}",
        queries.len(),
        data.queries.len(),
        options.seed,
        options.arms.iter().map(|arm| arm.name()).collect::<Vec<_>>().join(","),
        options.aids.name(),
        checker.version,
        checker.data_dir.display()
    );
    let results_file = options.results.clone().unwrap_or_else(|| {
        let limit = options.limit.map_or("all".to_owned(), |n| n.to_string());
        PathBuf::from("target/bfcl").join(format!("{}-s{}-n{limit}.jsonl", model_name.replace('/', "_"), options.seed))
    });
    let bench = BfclRun {
        servers,
        model_name,
        arms,
        queries,
        aids: options.aids,
        lanes: options.lanes,
        results: Some(results_file.clone()),
        run_missing: !options.report_only,
        twin_score: Some((
            Arc::new(TwinPool::new(&data.pool)),
            TwinRule { min_description_similarity: options.twin_similarity },
        )),
    };
    let started = std::time::Instant::now();
    let results = bench
        .run(Some(checker), |r| {
            let verdict = match r.valid {
                Some(true) => "right",
                Some(false) => "wrong",
                None => "unchecked",
            };
            eprintln!(
                "  {:<11} {:<28} {verdict:<9} {:>6.1}s calls {}  {}",
                r.arm,
                r.qid,
                r.wall_ms / 1_000.0,
                serde_json::Value::Array(r.scored_calls.clone()),
                r.check_error.as_deref().unwrap_or("").chars().take(120).collect::<String>()
            );
        })
        .await?;
    let report = Report { pool, unmapped, results_file, wall_s: started.elapsed().as_secs() };
    report.print(&options, &bench, &results)
}

/// The models queries run against: the offline keyword model, or one client per server.
fn servers(options: &Options) -> Result<Servers, String> {
    if options.scripted {
        return Ok(Servers::one(Arc::new(KeywordModel)));
    }
    let mut models: Vec<Arc<dyn ChatModel>> = Vec::new();
    for base_url in options.base_url.split(',').map(str::trim).filter(|url| !url.is_empty()) {
        let http = HttpOptions::local().with_timeout(options.timeout);
        let client = OpenAiCompatible::new(base_url, &options.model, http)
            .map_err(|e| format!("--base-url {base_url}: {e}"))?
            .with_temperature(options.temperature)
            .with_max_tokens(options.max_tokens);
        models.push(options.dialect.wrap(Arc::new(client)));
    }
    Servers::new(models)
}

/// The arms asked for, each with its ranker (the pool-ranker arm's pool is embedded before
/// any query is timed), and with `--no-keywords` pre-promotion without the model's keywords.
fn arms(options: &Options, data: &Dataset) -> Result<Vec<ArmSetup>, String> {
    let mut arms = Vec::new();
    for arm in &options.arms {
        let setup = match arm {
            Arm::Native | Arm::Pool => ArmSetup::new(*arm, data, None)?,
            Arm::NativeTwins => ArmSetup::new(*arm, data, None)?.with_twins(options.twins),
            Arm::PoolRanker => {
                let embedding = Arc::new(models::minilm_ranker()?);
                let setup = ArmSetup::new(*arm, data, Some(embedding.clone()))?;
                // Embed the pool before any query is timed (queries' own definitions come later).
                let started = std::time::Instant::now();
                let embedded =
                    embedding.prepare(&DeferredCatalog::new(setup.pool(), |_| true)).map_err(|e| e.to_string())?;
                eprintln!("bfcl: embedded {embedded} pooled functions in {:.1} s", started.elapsed().as_secs_f64());
                setup
            }
        };
        let setup = setup.with_runner_up_floor(options.runner_up_floor).with_keyword_gate(options.keyword_gate);
        arms.push(setup.with_model_keywords(options.keywords));
    }
    Ok(arms)
}

/// What the report says besides the figures.
struct Report {
    pool: usize,
    unmapped: std::collections::BTreeMap<String, usize>,
    results_file: PathBuf,
    wall_s: u64,
}

impl Report {
    /// Draws the chart (`--svg`) and prints the report: JSON (`--json`) or a Markdown table.
    fn print(self, options: &Options, bench: &BfclRun, results: &[QueryResult]) -> Result<(), String> {
        let Self { pool, unmapped, results_file, wall_s } = self;
        let figures = bfcl::figures(results);
        if let Some(path) = &options.svg {
            let title = format!(
                "BFCL dev sample, {} queries, {} ({} aids)",
                bench.queries.len(),
                bench.model_name,
                options.aids.name()
            );
            bfcl::draw_chart(&figures, &title, path)?;
        }
        let by_arm: serde_json::Map<String, serde_json::Value> = figures
            .iter()
            .map(|(arm, groups)| (arm.clone(), groups.iter().map(|(g, f)| (g.clone(), f.to_json())).collect()))
            .collect();
        let mut report = json!({
            "model": bench.model_name,
            "aids": options.aids.name(),
            "seed": options.seed,
            "limit": options.limit,
            "queries": bench.queries.len(),
            "pool_functions": pool,
            "max_turns": bfcl::MAX_TURNS,
            "unmapped_types": unmapped,
            "results_file": results_file,
            "wall_s": wall_s,
            "arms": by_arm,
            "twins": options.twins,
            "twin_rule": {"min_description_similarity": options.twin_similarity},
        });
        if options.json {
            println!("{report:#}");
        } else {
            println!("{}", bfcl::table(&figures));
            println!("types reaching JSON Schema unconstrained: {unmapped:?}");
        }
        if let Some(path) = &options.record {
            report["per_query"] = bfcl::outcomes(results);
            tinytools_bench::records::write(path, &options.machine, report)?;
            eprintln!("bfcl: record written to {}", path.display());
        }
        Ok(())
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8091/v1".to_owned(),
            model: "qwen2.5-coder-1.5b".to_owned(),
            queries: None,
            tools: None,
            arms: vec![Arm::Native, Arm::Pool],
            limit: None,
            seed: 1,
            results: None,
            lanes: 2,
            aids: AidsChoice::default(),
            dialect: Dialect::Auto,
            temperature: 0.0,
            timeout: Duration::from_secs(900),
            max_tokens: 256,
            python: bfcl::default_python(),
            irrelevance: true,
            scripted: false,
            json: false,
            svg: None,
            keywords: true,
            runner_up_floor: 0.0,
            keyword_gate: None,
            report_only: false,
            twins: bfcl::DEFAULT_TWINS,
            twin_similarity: twins::DEFAULT_MIN_DESCRIPTION_SIMILARITY,
            record: None,
            machine: String::new(),
        }
    }
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::default();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--base-url" => options.base_url = value()?,
            "--model" => options.model = value()?,
            "--queries" => options.queries = Some(value()?.into()),
            "--tools" => options.tools = Some(value()?.into()),
            "--arms" => {
                options.arms = value()?
                    .split(',')
                    .map(|name| {
                        Arm::parse(name.trim())
                            .ok_or_else(|| format!("unknown arm `{name}`: native, native+twins, pool or pool-ranker"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--limit" => options.limit = Some(number(&value()?)?),
            "--seed" => options.seed = number(&value()?)? as u64,
            "--results" => options.results = Some(value()?.into()),
            "--lanes" => options.lanes = number(&value()?)?,
            "--aids" => {
                let name = value()?;
                options.aids = AidsChoice::parse(&name).ok_or_else(|| format!("unknown aids `{name}`"))?;
            }
            "--dialect" => options.dialect = tinytools_bench::cli::dialect(&value()?)?,
            "--temperature" => {
                options.temperature = value()?.parse().map_err(|_| "--temperature takes a number".to_owned())?
            }
            "--timeout-secs" => options.timeout = Duration::from_secs(number(&value()?)? as u64),
            "--max-tokens" => options.max_tokens = u32::try_from(number(&value()?)?).unwrap_or(u32::MAX),
            "--python" => options.python = value()?.into(),
            "--no-irrelevance" => options.irrelevance = false,
            "--scripted" => options.scripted = true,
            "--json" => options.json = true,
            "--svg" => options.svg = Some(value()?.into()),
            "--no-keywords" => options.keywords = false,
            "--runner-up-floor" => options.runner_up_floor = unit(&flag, &value()?, "a share")? as f32,
            "--keyword-gate" => options.keyword_gate = Some(unit(&flag, &value()?, "a confidence")? as f32),
            "--report-only" => options.report_only = true,
            "--twins" => options.twins = number(&value()?)?,
            "--twin-similarity" => options.twin_similarity = unit(&flag, &value()?, "a similarity")?,
            "--record" => options.record = Some(value()?.into()),
            "--machine" => options.machine = value()?,
            other => return Err(format!("unknown option `{other}` (see the doc comment of bench/src/bin/bfcl.rs)")),
        }
    }
    Ok(options)
}

/// A number from 0 to 1 for `flag`, `what` it is saying what to give.
fn unit(flag: &str, text: &str, what: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{flag} {text}`: give {what} from 0 to 1")),
    }
}

fn number(text: &str) -> Result<usize, String> {
    text.parse().map_err(|_| format!("`{text}` is not a whole number"))
}
