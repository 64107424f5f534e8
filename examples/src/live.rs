//! The spec's live proof as a reusable A/B: the same task over the 41-tool registry, all
//! Direct and then with the 40-tool long tail Deferred, against any [`ChatModel`].

use std::sync::{Arc, Mutex};

use tinytools::dialect::Dialect;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse};
use tinytools::providers::{HttpOptions, OpenAiCompatible};
use tinytools::rank::{Bm25Ranker, ExpandingRanker};
use tinytools::run::{Agent, Aids, RunError, RunEvent, RunPolicy};
use tinytools::{ToolRegistry, ToolSchema};

use crate::catalogue;

pub use crate::task::{MANIFEST_TOKEN_BUDGET, SYSTEM_PROMPT, TASK};

/// How the model reached the task's tool (`stock_quote` in the spec's task).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// It was in the tools array (all-Direct arm).
    Direct,
    /// Query-aware discovery promoted it before the first call, and the model called it.
    PrePromoted,
    /// Through `tool_search`.
    Search,
    /// Straight off the manifest, by name, without searching.
    Manifest,
    /// It never called the task's tool.
    Missed,
}

/// How an arm exposes the 41-tool catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// Every tool Direct: the baseline.
    AllDirect,
    /// The long tail Deferred behind `tool_search` alone: the spec's bridge, no pre-promotion.
    Bridge,
    /// The long tail Deferred with the library's default discovery (pre-promotion on).
    Discovery,
}

impl Exposure {
    /// The arm's label.
    pub fn label(self) -> &'static str {
        match self {
            Self::AllDirect => "all Direct",
            Self::Bridge => "bridge only",
            Self::Discovery => "deferred",
        }
    }
}

/// One arm's figures.
#[derive(Clone, Debug)]
pub struct Arm {
    /// "all Direct", "bridge only" or "deferred".
    pub label: &'static str,
    /// The route to the task's tool.
    pub route: Route,
    /// Prompt tokens of the first model call (provider-reported).
    pub first_call_prompt_tokens: Option<u64>,
    /// Prompt tokens summed over the run.
    pub total_prompt_tokens: u64,
    /// Compact JSON bytes of the first request's tools.
    pub schema_bytes: usize,
    /// Tools in the first request.
    pub first_request_tools: usize,
    /// After a search, a later request carried the task's tool's typed declaration.
    pub typed_declaration: bool,
    /// The model called `tool_search` at least once.
    pub searched: bool,
    /// The model's answer.
    pub answer: String,
    /// How the run ended, and what the run did about the model on the way (the aids that
    /// acted, context shrinking), as `Debug` text: `"Answered after ask_after_empty_reply"`.
    pub ending: String,
}

/// The live model the environment names: OpenRouter when `OPENROUTER_API_KEY` is set (model
/// `TOOL_DEFERRAL_MODEL`, default `openai/gpt-4.1-mini`), else the OpenAI-compatible server at
/// `TOOL_DEFERRAL_BASE_URL` (model `TOOL_DEFERRAL_MODEL`, default `local`). Returns the model
/// and its name.
///
/// # Errors
/// When neither is set, or the client cannot be built.
pub fn model_from_env() -> Result<(Arc<dyn ChatModel>, String), String> {
    if let Some(key) = env_var("OPENROUTER_API_KEY") {
        let name = env_var("TOOL_DEFERRAL_MODEL").unwrap_or_else(|| "openai/gpt-4.1-mini".into());
        let client = OpenAiCompatible::openrouter(key, name.clone()).map_err(|e| e.to_string())?;
        return Ok((Arc::new(client), name));
    }
    let Some(base_url) = env_var("TOOL_DEFERRAL_BASE_URL") else {
        return Err("a live run needs OPENROUTER_API_KEY or TOOL_DEFERRAL_BASE_URL (with TOOL_DEFERRAL_MODEL)".into());
    };
    let name = env_var("TOOL_DEFERRAL_MODEL").unwrap_or_else(|| "local".into());
    // A small local model that starts repeating itself stops at 512 tokens, not at the context limit.
    let client = OpenAiCompatible::local(base_url, name.clone()).map_err(|e| e.to_string())?.with_max_tokens(512);
    Ok((Arc::new(client), name))
}

/// An environment variable's value, unless it is unset or blank.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The OpenAI-compatible server the examples talk to and its model name: `TINYTOOLS_BASE_URL`
/// and `TINYTOOLS_MODEL`, else the server `local-model.sh` starts
/// (`http://127.0.0.1:$TINYTOOLS_LLM_PORT/v1`, port 8091, model
/// `qwen2.5-coder-$TINYTOOLS_LLM_SIZE`, `default_size` when unset).
pub fn local_server(default_size: &str) -> (String, String) {
    let port = env_var("TINYTOOLS_LLM_PORT").unwrap_or_else(|| "8091".into());
    let size = env_var("TINYTOOLS_LLM_SIZE").unwrap_or_else(|| default_size.into());
    let base_url = env_var("TINYTOOLS_BASE_URL").unwrap_or_else(|| format!("http://127.0.0.1:{port}/v1"));
    let model = env_var("TINYTOOLS_MODEL").unwrap_or_else(|| format!("qwen2.5-coder-{size}"));
    (base_url, model)
}

/// The client an `ExpandingRanker` asks for search keywords: a 32-token answer at temperature
/// 0, whatever the run's own settings.
///
/// # Errors
/// When the client cannot be built from `base_url`.
pub fn keyword_client(base_url: &str, model: &str, http: HttpOptions) -> Result<Arc<dyn ChatModel>, String> {
    let client = OpenAiCompatible::new(base_url, model, http).map_err(|e| e.to_string())?;
    // The keyword request's purpose caps its answer at 32 tokens.
    Ok(Arc::new(client.with_temperature(0.0)))
}

/// `policy` with its ranker (BM25 when it has none) wrapped in an `ExpandingRanker` whose
/// keywords the [local server](local_server) writes (the 1.5B model unless the variables say
/// otherwise), and that expander, whose usage the caller reports.
///
/// # Errors
/// When the keyword client cannot be built.
pub fn expand_locally(policy: ToolDiscoveryPolicy) -> Result<(ToolDiscoveryPolicy, Arc<ExpandingRanker>), String> {
    let inner = policy.ranker.clone().unwrap_or_else(|| Arc::new(Bm25Ranker));
    let (base_url, model) = local_server("1.5b");
    let expanding = Arc::new(ExpandingRanker::new(inner, keyword_client(&base_url, &model, HttpOptions::local())?));
    Ok((policy.with_ranker(expanding.clone()), expanding))
}

/// The dialect a command line or variable names: `auto`, `native`, `json` or `pformat`.
///
/// # Errors
/// Any other name, with the four it could be.
pub fn dialect(name: &str) -> Result<Dialect, String> {
    Ok(match name {
        "auto" => Dialect::Auto,
        "native" => Dialect::Native,
        "json" => Dialect::JsonInTag,
        "pformat" => Dialect::PFormat,
        other => return Err(format!("unknown dialect `{other}`: auto, native, json or pformat")),
    })
}

/// The prompt dialect `TOOL_DEFERRAL_DIALECT` names ([`dialect`]'s names; anything else is
/// [`Dialect::Auto`], which also reads tool calls a model wrote as JSON in its text).
pub fn dialect_from_env() -> Dialect {
    std::env::var("TOOL_DEFERRAL_DIALECT").ok().and_then(|name| dialect(&name).ok()).unwrap_or(Dialect::Auto)
}

/// The model of an opt-in live test, or `None` (with a note naming the test on stderr) unless
/// `TOOL_DEFERRAL_LIVE=1`: [`model_from_env`] wrapped in [`dialect_from_env`]'s dialect.
/// Returns the model, its name and the dialect.
///
/// # Panics
/// When the live run is asked for but no model is configured.
pub fn live_model(test: &str) -> Option<(Arc<dyn ChatModel>, String, Dialect)> {
    if std::env::var("TOOL_DEFERRAL_LIVE").as_deref() != Ok("1") {
        eprintln!("{test}: skipped (set TOOL_DEFERRAL_LIVE=1 and a model; see the file's header)");
        return None;
    }
    let (model, name) = model_from_env().unwrap_or_else(|e| panic!("a live model: {e}"));
    let dialect = dialect_from_env();
    Some((dialect.wrap(model), name, dialect))
}

/// How many times to repeat a live A/B: `TOOL_DEFERRAL_RUNS`, at least 1.
pub fn runs_from_env() -> usize {
    std::env::var("TOOL_DEFERRAL_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1)
}

/// What every live A/B pair must show: the deferred arm's first call costs fewer prompt tokens
/// (when the server reports them) and fewer schema bytes; in a single run, both arms reach
/// `target`. Over several runs reaching is tallied instead, since a small model is not steady.
///
/// # Panics
/// When the pair does not show it.
pub fn check_pair(direct: &Arm, deferred: &Arm, runs: usize, target: &str) {
    if let (Some(d), Some(f)) = (direct.first_call_prompt_tokens, deferred.first_call_prompt_tokens) {
        assert!(f < d, "the deferred run's first call must cost fewer prompt tokens: {f} vs {d}");
    }
    assert!(deferred.schema_bytes < direct.schema_bytes);
    if runs == 1 {
        assert_ne!(direct.route, Route::Missed, "the all-Direct run must reach {target}");
        assert_ne!(deferred.route, Route::Missed, "the deferred run must reach {target}");
    }
}

/// Records every turn's request a model sees, and its prompt tokens (the run's search-keyword
/// request is not a turn: it is not recorded, so the first request is the first turn's).
struct Recording {
    inner: Arc<dyn ChatModel>,
    log: Mutex<Vec<(ModelRequest, Option<u64>)>>,
}

#[async_trait::async_trait]
impl ChatModel for Recording {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let response = self.inner.complete(request).await?;
        if let (true, Ok(mut log)) = (request.purpose.is_turn(), self.log.lock()) {
            log.push((request.clone(), response.usage.map(|u| u.prompt_tokens)));
        }
        Ok(response)
    }
}

/// Runs one arm with the standard manifest budget.
///
/// # Errors
/// [`RunError`] when a model call fails.
pub async fn run_arm(model: Arc<dyn ChatModel>, exposure: Exposure) -> Result<Arm, RunError> {
    run_arm_with(model, exposure, MANIFEST_TOKEN_BUDGET).await
}

/// Runs one arm with a given manifest budget (a small one leaves only a count: the model must
/// search).
///
/// # Errors
/// [`RunError`] when a model call fails.
pub async fn run_arm_with(
    model: Arc<dyn ChatModel>,
    exposure: Exposure,
    manifest_token_budget: usize,
) -> Result<Arm, RunError> {
    let registry = match exposure {
        Exposure::AllDirect => catalogue::all_direct_registry(),
        Exposure::Bridge | Exposure::Discovery => catalogue::registry(),
    };
    let pre_promotion = if exposure == Exposure::Discovery { PrePromotion::default() } else { PrePromotion::off() };
    let task = LiveTask {
        prompt: TASK,
        target: "stock_quote",
        deferred: exposure != Exposure::AllDirect,
        manifest_token_budget,
        pre_promotion,
    };
    let mut arm = run_task(model, registry, task).await?;
    arm.label = exposure.label();
    Ok(arm)
}

/// One task for a live arm: the user's words, the tool that answers them, and how the
/// registry is exposed.
#[derive(Clone, Copy, Debug)]
pub struct LiveTask<'a> {
    /// What the user asks.
    pub prompt: &'a str,
    /// The tool a correct run calls.
    pub target: &'a str,
    /// Whether the registry defers its long tail (labels the arm and its route).
    pub deferred: bool,
    /// The bridge's manifest budget.
    pub manifest_token_budget: usize,
    /// Query-aware discovery.
    pub pre_promotion: PrePromotion,
}

/// The aids the environment names in `TOOL_DEFERRAL_AIDS`: `none`, `small` (the small-model
/// preset) or, by default, `standard`.
pub fn aids_from_env() -> Aids {
    match env_var("TOOL_DEFERRAL_AIDS").as_deref() {
        Some("none") => Aids::none(),
        Some("small") => Aids::small_model(),
        _ => Aids::standard(),
    }
}

/// Runs `task` over `registry` against `model` and reports the arm.
///
/// # Errors
/// [`RunError`] when a model call fails.
pub async fn run_task(model: Arc<dyn ChatModel>, registry: ToolRegistry, task: LiveTask<'_>) -> Result<Arm, RunError> {
    let LiveTask { prompt, target, deferred, manifest_token_budget, pre_promotion } = task;
    let recording = Arc::new(Recording { inner: model, log: Mutex::new(Vec::new()) });
    let discovery = ToolDiscoveryPolicy::default()
        .with_manifest_token_budget(manifest_token_budget)
        .with_pre_promotion(pre_promotion);
    let policy = RunPolicy::default().with_discovery(discovery).with_max_turns(6);
    let policy = policy.with_aids(aids_from_env());
    let interventions = Arc::new(Mutex::new(Vec::<String>::new()));
    let noted = interventions.clone();
    let sink = move |event: &RunEvent| {
        let kind = match event {
            RunEvent::AidActed { aid, .. } => aid.clone(),
            RunEvent::ContextShrunk { .. } => "context shrunk".to_owned(),
            _ => return,
        };
        if let Ok(mut noted) = noted.lock() {
            noted.push(kind);
        }
    };
    let agent = Agent::new(Arc::new(registry), recording.clone()).with_policy(policy).with_events(Arc::new(sink));
    let outcome = agent.run(vec![Message::system(SYSTEM_PROMPT), Message::user(prompt)]).await?;
    let interventions = interventions.lock().map(|noted| noted.clone()).unwrap_or_default();
    let ending = if interventions.is_empty() {
        format!("{:?}", outcome.stop)
    } else {
        format!("{:?} after {}", outcome.stop, interventions.join(", "))
    };
    let log = recording.log.lock().map(|log| log.clone()).unwrap_or_default();
    let calls: Vec<&str> = outcome
        .transcript
        .messages
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.name.as_str()).collect(),
            _ => Vec::new(),
        })
        .collect();
    let quote_at = calls.iter().position(|name| *name == target);
    let searched = calls.iter().position(|name| *name == "tool_search");
    let first: Vec<ToolSchema> = log.first().map(|(request, _)| request.tools.clone()).unwrap_or_default();
    let pre_promoted = first.iter().any(|tool| tool.name == target);
    let route = match (quote_at, searched) {
        (None, _) => Route::Missed,
        (Some(_), _) if !deferred => Route::Direct,
        (Some(_), _) if pre_promoted => Route::PrePromoted,
        (Some(q), Some(s)) if s < q => Route::Search,
        (Some(_), _) => Route::Manifest,
    };
    let typed_declaration = log.iter().skip(1).any(|(request, _)| request.tools.iter().any(|t| t.name == target));
    Ok(Arm {
        label: if deferred { Exposure::Discovery.label() } else { Exposure::AllDirect.label() },
        route,
        first_call_prompt_tokens: log.first().and_then(|(_, tokens)| *tokens),
        total_prompt_tokens: log.iter().filter_map(|(_, tokens)| *tokens).sum(),
        schema_bytes: serde_json::to_string(&first).map_or(0, |text| text.len()),
        first_request_tools: first.len(),
        typed_declaration,
        searched: searched.is_some(),
        answer: outcome.answer,
        ending,
    })
}

/// The spec's table for two arms.
pub fn table(model: &str, direct: &Arm, deferred: &Arm) -> String {
    let tokens = |arm: &Arm| arm.first_call_prompt_tokens.map_or_else(|| "?".to_owned(), |t| t.to_string());
    let change = match (direct.first_call_prompt_tokens, deferred.first_call_prompt_tokens) {
        (Some(d), Some(f)) if d > 0 => format!(" ({:+.0}%)", 100.0 * (f as f64 - d as f64) / d as f64),
        _ => String::new(),
    };
    format!(
        "model\tfirst-call prompt tokens\ttotal prompt tokens\tschema bytes\troute\n\
         {model}\t{} → {}{change}\t{} → {}\t{} → {}\t{:?}\n",
        tokens(direct),
        tokens(deferred),
        direct.total_prompt_tokens,
        deferred.total_prompt_tokens,
        direct.schema_bytes,
        deferred.schema_bytes,
        deferred.route,
    )
}
