//! The live task-suite benchmark: the suite's tasks over the 41-tool catalogue, through the
//! agent loop, against a real model, in four arms — all Direct; Deferred behind `tool_search`
//! only; Deferred with query-aware discovery (the default policy); and the same over 1,000
//! more BFCL tools as Deferred distractors — and a fifth on request, `gateway`: the catalogue
//! as MCP servers (one per family) behind the `tinytools-gateway` binary.
//!
//! ```text
//! ../shared/live/local-model.sh start                       # once: a local model on 127.0.0.1
//! cargo run --release -p tinytools-bench --bin live_tasks
//! cargo run --release -p tinytools-bench --bin live_tasks -- --json > results.json
//! cargo run -p tinytools-bench --bin live_tasks -- --scripted   # offline, what CI runs
//!
//! # the gateway arm: build the gateway and the catalogue server beside this binary first
//! cargo build --release -p tinytools-gateway -p tinytools-examples -p tinytools-bench \
//!     --bin tinytools-gateway --example mcp_serve --bin live_tasks
//! target/release/live_tasks --arms all-direct,gateway
//! ```
//!
//! The gateway arm writes a config in a temporary directory (one server per family: the
//! `mcp_serve` example with `--family`, an `allow` list of the family's tools, `read_note`
//! Direct), fills the gateway's own cache there (`tinytools-gateway report`), starts
//! `tinytools-gateway --config ... --cache-dir ...` and imports its tools with tinytools' MCP
//! client: the model gets exactly the gateway's `tools/list` (`tool_search` with the gateway's
//! manifest, 450 tokens by default — `--manifest-tokens` does not reach it — `call_tool` and
//! `notes__read_note`), Direct, and the run's own bridge stays off. Its system prompt is the
//! suite's without the `tool_search` sentence, followed by the gateway's handshake
//! instructions, as an MCP client shows them (`--no-gateway-instructions` leaves them out).
//! `--gateway-pre-search` makes the host a pre-searching one (`tinytools::mcp::GatewayPreSearch`): before each
//! run it sends the task's words to the gateway's `tool_search` and offers the tools found
//! (`--pre-limit`, `--pre-tokens`) as Direct tools called through `call_tool`, each under its
//! bare name when no other has it; a name the run does not offer goes to `call_tool` too.
//! The judge counts `call_tool {name, arguments}` as a call of `name`. The binaries are looked
//! for beside this one (`<profile>/tinytools-gateway`, `<profile>/examples/mcp_serve`), or
//! given with `--gateway-bin PATH` and `--catalogue-server PATH`. `--gateway-distractors N` puts
//! N BFCL tools behind the gateway beside the catalogue, 40 to a server (`bfcl1`, ...; the
//! `bfcl_serve` binary beside this one), and `--gateway-manifest-names count|grouped` passes
//! `--manifest-names` to the gateway (its default when not given: `count`).
//!
//! The model is `--base-url` / `--model`, else `TINYTOOLS_BASE_URL` / `TINYTOOLS_MODEL`, else
//! the server `local-model.sh` starts (`http://127.0.0.1:$TINYTOOLS_LLM_PORT/v1`, port 8091,
//! model `qwen2.5-coder-$TINYTOOLS_LLM_SIZE`, size 0.5b). Prints per arm: tasks succeeded, runs
//! that searched, `tool_search` calls, mean first-call prompt tokens (and their share of the
//! all-Direct arm's), first-request tool bytes, total prompt tokens, wall time; the JSON adds
//! successes per task kind (`single`, `chain`, `no_tool`), model calls, and the runs whose last
//! reply carried no text (`runs_without_answer`: the user got nothing to read).
//!
//! Options: `--arms all-direct,deferred,discovery,scale,gateway` (default: all but gateway); `--tasks ID,ID` or `--family NAME`
//! or `--limit N`; `--runs N`; `--dialect auto|native|json|pformat`; `--manifest-tokens N`
//! (default 60: the count rung and the families line, the shape that measured best within 15 %
//! of the all-Direct first call, `docs/live.md`); `--distractors N` (default 1000); `--pre-limit N`, `--pre-floor X`,
//! `--pre-tokens N`, `--pre-after-result N`, `--no-pre` (query-aware discovery of the discovery and scale arms;
//! defaults: the library's); `--ranker bm25|minilm` (the deferred arms' ranker: BM25 by
//! default, or the embedding ranker with the model `.ci/models` unpacks; the gateway arm then
//! starts the gateway with `--embedding-model`, which needs it built with `--features embedding`);
//! `--profile small-model|default` (default `small-model`, `RunPolicy::small_model`: the aids
//! `small` and the run's own keyword request; `default` is what a run gets with no profile, a
//! hosted model's: aids `standard`, no keyword request; give it before `--aids` and
//! `--no-keywords`, which refine it);
//! `--no-keywords` (pre-promotion ranks each message as written, without the search keywords
//! the run's model writes for it under the small-model profile, `PrePromotion::model_keywords`; the gateway arm's
//! host pre-search likewise, `GatewayPreSearch::with_keywords`; the report counts
//! those requests apart, `keyword_calls` and `keyword_tokens`); `--keyword-gate X` (the
//! keywords only for a message whose own best hit is under confidence X,
//! `PrePromotion::model_keywords_below`; the gateway arm's pre-search asks every time); `--stream` (every run streams, `Agent::stream`: the same loop over the
//! provider's SSE stream; each result records when the first text arrived); `--max-turns N` (default 8); `--aids none|standard|small|small-without:AID` (the aids
//! every run of every arm gets, `tinytools_bench::apply_aids`: `none` the loop's core alone,
//! `standard` the library's default, `small` the small-model preset (the default here), `small-without:AID` that
//! preset less one aid, an ablation; recorded as `aids` in the report); `--timeout-secs N` (provider
//! timeout, default 900: a cold first call on two cores takes minutes); `--lanes N` (the
//! all-Direct arm runs alone first, its long prompt filling a small server's shared context;
//! the other arms' task runs then share N lanes, default 3, the arms alternating task by task:
//! a local server decodes its slots together); `--json`; `--transcripts FILE` (the
//! JSON report with every transcript); `--max-tokens N` (each answer's cap, default 256: a
//! small model that starts repeating itself stops there); `--temperature X` (default: the
//! server's; `0` makes runs repeatable, for comparing variants).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinytools::dialect::Dialect;
use tinytools::discovery::PrePromotion;
use tinytools::model::ChatModel;
use tinytools::providers::{HttpOptions, OpenAiCompatible};
use tinytools::rank::ToolRanker;
use tinytools::run::RunPolicy;
use tinytools_bench::tasks::{self, Task};
use tinytools_bench::{
    self as bench, AidsChoice, ArmKind, ArmSpec, GatewayBinaries, GatewaySetup, KeywordModel, PreSearch,
};
use tinytools_examples::{live, models};

/// The suite's manifest budget: no names fit, so `tool_search` states the count and the
/// families (names at 400 tokens cost 15.5 % of the all-Direct first call once three tools are
/// pre-promoted; this shape 12.5 %, with as many tasks solved).
const SUITE_MANIFEST_TOKENS: usize = 60;

struct Options {
    arms: Vec<ArmKind>,
    tasks: Vec<&'static Task>,
    runs: usize,
    scripted: bool,
    base_url: String,
    model: String,
    dialect: Dialect,
    manifest_tokens: usize,
    distractors: usize,
    pre_promotion: PrePromotion,
    max_turns: usize,
    aids: AidsChoice,
    timeout: Duration,
    json: bool,
    transcripts: Option<String>,
    lanes: usize,
    max_tokens: u32,
    temperature: Option<f32>,
    minilm: bool,
    stream: bool,
    gateway_bin: Option<PathBuf>,
    catalogue_server: Option<PathBuf>,
    gateway_instructions: bool,
    gateway_pre_search: bool,
    gateway_distractors: usize,
    gateway_manifest_names: Option<String>,
}

fn main() {
    tinytools_bench::cli::main("live_tasks", parse, run);
}

async fn run(options: Options) -> Result<(), String> {
    let (model, name) = chat_model(&options)?;
    eprintln!(
        "live_tasks: {} tasks x {} run(s), model {name}, aids {}",
        options.tasks.len(),
        options.runs,
        options.aids.name()
    );
    let ranker: Option<Arc<dyn ToolRanker>> =
        if options.minilm { Some(Arc::new(models::minilm_ranker()?)) } else { None };
    let mut specs = Vec::new();
    for kind in &options.arms {
        let mut spec = match kind {
            ArmKind::Gateway => gateway_spec(&options).await?,
            _ => local_spec(*kind, &options, ranker.as_ref())?,
        };
        spec.stream = options.stream;
        specs.push(spec);
    }
    // The all-Direct arm runs alone first (its prompt fills most of a small local server's
    // shared context); the other arms' task runs then share `lanes` lanes (`bench::run_arms`).
    let lanes = options.lanes.max(1);
    let started = std::time::Instant::now();
    let reports = bench::run_arms(model, &specs, &options.tasks, options.runs, lanes, |spec, result| {
        let pre =
            if result.pre_promoted.is_empty() { String::new() } else { format!(" pre {:?}", result.pre_promoted) };
        eprintln!(
            "  {:<10} {:<32} {} {:>6.1}s  calls {:?}{pre}  {}",
            spec.kind.name(),
            result.id,
            if result.success { "ok  " } else { "FAIL" },
            result.wall_ms / 1_000.0,
            result.calls,
            result.reason
        );
    })
    .await;
    let wall_s = started.elapsed().as_secs_f64();
    for gateway in specs.iter().filter_map(|spec| spec.gateway.as_ref()) {
        gateway.close().await;
    }
    let summary = json!({
        "model": name,
        "dialect": format!("{:?}", options.dialect),
        "tasks": options.tasks.len(),
        "runs_per_task": options.runs,
        "manifest_token_budget": options.manifest_tokens,
        "pre_promotion": format!("{:?}", options.pre_promotion),
        "aids": options.aids.name(),
        "lanes": lanes,
        "ranker": ranker.as_ref().map(|ranker| ranker.name().to_owned()),
        "wall_s": (wall_s * 10.0).round() / 10.0,
        "arms": reports.iter().map(|r| r.to_json(false)).collect::<Vec<_>>(),
    });
    write_out(&options, &summary, &reports, &name, wall_s)
}

/// The model the tasks run on, and how it is named in the output.
fn chat_model(options: &Options) -> Result<(Arc<dyn ChatModel>, String), String> {
    if options.scripted {
        return Ok((Arc::new(KeywordModel), "scripted keyword model (offline; its score measures nothing)".to_owned()));
    }
    let http = HttpOptions::local().with_timeout(options.timeout);
    let client = OpenAiCompatible::new(&options.base_url, &options.model, http)
        .map_err(|e| e.to_string())?
        .with_max_tokens(options.max_tokens);
    let client = match options.temperature {
        Some(temperature) => client.with_temperature(temperature),
        None => client,
    };
    Ok((options.dialect.wrap(Arc::new(client)), format!("{} at {}", options.model, options.base_url)))
}

/// The gateway arm: the catalogue behind a real gateway binary.
async fn gateway_spec(options: &Options) -> Result<ArmSpec, String> {
    let binaries = gateway_binaries(options)?;
    // With `--ranker minilm` the gateway ranks its `tool_search` with the same model.
    let mut serve_args = Vec::new();
    if options.minilm {
        serve_args.extend(["--embedding-model".to_owned(), models::minilm_dir().to_string_lossy().into_owned()]);
    }
    if let Some(names) = &options.gateway_manifest_names {
        serve_args.extend(["--manifest-names".to_owned(), names.clone()]);
    }
    let setup = GatewaySetup {
        max_turns: options.max_turns,
        instructions: options.gateway_instructions,
        serve_args,
        aids: options.aids,
        distractors: options.gateway_distractors,
    };
    let mut spec = bench::gateway_arm(&binaries, &setup).await?;
    let pre = options.pre_promotion;
    // The arm's runs offer no Deferred tool; its pre-promotion settings are the host's.
    spec.policy.discovery.pre_promotion = pre;
    if options.gateway_pre_search {
        spec.pre_search =
            Some(PreSearch::new(&spec.registry, pre.limit, pre.token_budget).map_err(|err| err.to_string())?);
    }
    let offered: Vec<String> = spec.registry.schemas().into_iter().map(|schema| schema.name).collect();
    let pre_search = match &spec.pre_search {
        Some(_) => format!(
            ", and the host pre-searches each task's words{} through tool_search: at most {} tools within {} tokens",
            if pre.model_keywords { " and the model's keywords for them" } else { "" },
            pre.limit,
            pre.token_budget
        ),
        None => String::new(),
    };
    eprintln!(
        "live_tasks: arm gateway ({} tools behind {}; the model is offered {}{pre_search})",
        spec.tools(),
        binaries.gateway.display(),
        offered.join(", "),
    );
    Ok(spec)
}

/// An arm over the catalogue in this process, ranked by `ranker` when one is set.
fn local_spec(kind: ArmKind, options: &Options, ranker: Option<&Arc<dyn ToolRanker>>) -> Result<ArmSpec, String> {
    let mut spec = bench::arm(
        kind,
        options.manifest_tokens,
        options.distractors,
        options.pre_promotion,
        options.max_turns,
        options.aids,
    )?;
    if let Some(ranker) = ranker {
        spec.policy.discovery = spec.policy.discovery.clone().with_ranker(ranker.clone());
        // The first search over the scale arm embeds its 1,041 tools (about 10 s here).
        spec.policy.discovery.ranker_timeout = Duration::from_secs(120);
    }
    eprintln!("live_tasks: arm {} ({} tools)", kind.name(), spec.registry.len());
    Ok(spec)
}

/// The transcripts file, and the summary on stdout (JSON, or a table).
fn write_out(
    options: &Options,
    summary: &serde_json::Value,
    reports: &[bench::ArmReport],
    name: &str,
    wall_s: f64,
) -> Result<(), String> {
    if let Some(path) = &options.transcripts {
        let mut full = summary.clone();
        full["arms"] = reports.iter().map(|r| r.to_json(true)).collect();
        std::fs::write(path, full.to_string()).map_err(|err| format!("cannot write {path}: {err}"))?;
    }
    if options.json {
        println!("{summary}");
    } else {
        println!(
            "model {name}, aids {}, {} lane(s), {wall_s:.0} s in all\n\n{}",
            options.aids.name(),
            options.lanes.max(1),
            bench::table(reports)
        );
        let results = reports.iter().flat_map(|report| &report.results);
        let (calls, tokens) = results.fold((0, 0), |(c, t), r| (c + r.keyword_calls, t + r.keyword_tokens));
        if calls > 0 {
            println!("search-keyword requests: {calls} ({tokens} tokens), not counted above");
        }
    }
    Ok(())
}

impl Options {
    /// Every option at its default: the local server, every arm but the gateway, every task.
    fn new() -> Self {
        let (base_url, model) = live::local_server("0.5b");
        Options {
            arms: ArmKind::ALL.to_vec(),
            tasks: tasks::all().iter().collect(),
            runs: 1,
            scripted: false,
            base_url,
            model,
            dialect: Dialect::Auto,
            manifest_tokens: SUITE_MANIFEST_TOKENS,
            distractors: 1_000,
            // The small-model profile, selected explicitly (`RunPolicy::small_model`): the
            // suite runs small local models. `--profile default` is a hosted model's default.
            pre_promotion: RunPolicy::small_model().discovery.pre_promotion,
            max_turns: 8,
            aids: AidsChoice::Small,
            timeout: Duration::from_secs(900),
            json: false,
            transcripts: None,
            lanes: 3,
            max_tokens: 256,
            temperature: None,
            minilm: false,
            stream: false,
            gateway_bin: None,
            catalogue_server: None,
            gateway_instructions: true,
            gateway_pre_search: false,
            gateway_distractors: 0,
            gateway_manifest_names: None,
        }
    }
}

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::new();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        if pre_promotion_option(&arg, &mut value, &mut options.pre_promotion)?
            || gateway_option(&arg, &mut value, &mut options)?
        {
            continue;
        }
        match arg.as_str() {
            "--profile" => match value()?.as_str() {
                "small-model" => {
                    options.pre_promotion.model_keywords = true;
                    options.aids = AidsChoice::Small;
                }
                "default" => {
                    options.pre_promotion.model_keywords = false;
                    options.aids = AidsChoice::Standard;
                }
                other => return Err(format!("unknown profile {other}: small-model or default")),
            },
            "--arms" => {
                options.arms = value()?
                    .split(',')
                    .map(|name| ArmKind::parse(name.trim()).ok_or_else(|| format!("unknown arm `{name}`")))
                    .collect::<Result<_, _>>()?;
            }
            "--tasks" => {
                options.tasks = value()?
                    .split(',')
                    .map(|id| tasks::get(id.trim()).ok_or_else(|| format!("unknown task `{id}`")))
                    .collect::<Result<_, _>>()?;
            }
            "--family" => {
                let family = value()?;
                options.tasks.retain(|task| task.family == family);
            }
            "--limit" => {
                let limit = count(value()?)?;
                options.tasks.truncate(limit);
            }
            "--runs" => options.runs = count(value()?)?,
            "--scripted" => options.scripted = true,
            "--base-url" => options.base_url = value()?,
            "--model" => options.model = value()?,
            "--dialect" => options.dialect = tinytools_bench::cli::dialect(&value()?)?,
            "--manifest-tokens" => options.manifest_tokens = count(value()?)?,
            "--distractors" => options.distractors = count(value()?)?,
            "--ranker" => match value()?.as_str() {
                "bm25" => options.minilm = false,
                "minilm" => options.minilm = true,
                other => return Err(format!("unknown ranker {other}: bm25 or minilm")),
            },
            "--stream" => options.stream = true,
            "--max-turns" => options.max_turns = count(value()?)?,
            "--aids" => {
                let name = value()?;
                options.aids = AidsChoice::parse(name.trim())
                    .ok_or_else(|| format!("unknown aids `{name}`: none, standard, small or small-without:AID"))?;
            }
            "--timeout-secs" => options.timeout = Duration::from_secs(count(value()?)? as u64),
            "--json" => options.json = true,
            "--transcripts" => options.transcripts = Some(value()?),
            "--lanes" => options.lanes = count(value()?)?,
            "--temperature" => {
                let text = value()?;
                options.temperature = Some(text.parse().map_err(|_| format!("not a temperature: {text}"))?);
            }
            "--max-tokens" => options.max_tokens = u32::try_from(count(value()?)?).unwrap_or(u32::MAX),
            other => return Err(format!("unknown option `{other}` (the options are in the binary's header)")),
        }
    }
    if options.tasks.is_empty() {
        return Err("no task selected".into());
    }
    Ok(options)
}

/// A count given on the command line.
fn count(text: String) -> Result<usize, String> {
    text.parse::<usize>().map_err(|_| format!("not a count: {text}"))
}

/// A confidence given on the command line.
fn confidence(text: String) -> Result<f32, String> {
    text.parse().map_err(|_| format!("not a confidence in 0..=1: {text}"))
}

/// One of the query-aware discovery options (`--pre-*`, `--no-pre`, `--no-keywords`,
/// `--keyword-gate`) into `pre`; `false` when `arg` is not one of them.
fn pre_promotion_option(
    arg: &str,
    value: &mut dyn FnMut() -> Result<String, String>,
    pre: &mut PrePromotion,
) -> Result<bool, String> {
    match arg {
        "--pre-limit" => pre.limit = count(value()?)?,
        "--pre-tokens" => pre.token_budget = count(value()?)?,
        "--pre-after-result" => pre.after_tool_result = count(value()?)?,
        "--pre-floor" => pre.min_confidence = confidence(value()?)?,
        "--no-pre" => *pre = PrePromotion::off(),
        "--no-keywords" => pre.model_keywords = false,
        "--keyword-gate" => pre.model_keywords_below = Some(confidence(value()?)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// One of the gateway arm's options into `options`; `false` when `arg` is not one of them.
fn gateway_option(
    arg: &str,
    value: &mut dyn FnMut() -> Result<String, String>,
    options: &mut Options,
) -> Result<bool, String> {
    match arg {
        "--gateway-bin" => options.gateway_bin = Some(value()?.into()),
        "--catalogue-server" => options.catalogue_server = Some(value()?.into()),
        "--no-gateway-instructions" => options.gateway_instructions = false,
        "--gateway-pre-search" => options.gateway_pre_search = true,
        "--gateway-distractors" => options.gateway_distractors = count(value()?)?,
        "--gateway-manifest-names" => match value()?.as_str() {
            names @ ("count" | "grouped") => options.gateway_manifest_names = Some(names.to_owned()),
            other => return Err(format!("unknown manifest names {other}: count or grouped")),
        },
        _ => return Ok(false),
    }
    Ok(true)
}

/// The gateway arm's binaries: those beside this executable, unless `--gateway-bin` or
/// `--catalogue-server` says otherwise.
fn gateway_binaries(options: &Options) -> Result<GatewayBinaries, String> {
    let mut binaries = GatewayBinaries::beside_current_exe()?;
    if let Some(gateway) = &options.gateway_bin {
        binaries.gateway = gateway.clone();
    }
    if let Some(server) = &options.catalogue_server {
        binaries.catalogue_server = server.clone();
    }
    Ok(binaries)
}
