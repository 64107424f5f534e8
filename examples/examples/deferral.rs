//! The deferral scenario of the spec's live proof: the 41-tool catalogue, what its first
//! request costs with every tool Direct versus the 40-tool long tail Deferred behind
//! `tool_search`, the manifest, what a search for the task returns — then a run.
//!
//! With `OPENROUTER_API_KEY` or `TINYTOOLS_BASE_URL` (+ `TINYTOOLS_MODEL`) set, the run is the
//! real A/B against that model and prints the spec's table. Without, it runs offline with a
//! scripted model, and says so.
//!
//! ```text
//! cargo run -p tinytools-examples --example deferral            # a report
//! cargo run -p tinytools-examples --example deferral -- --json  # the figures as one JSON object
//! ```

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, Manifest, ToolDiscoveryPolicy};
use tinytools::model::Message;
use tinytools::providers::OpenAiCompatible;
use tinytools::run::{Agent, RunEvent, RunPolicy};
use tinytools::schema::{EstimatedTokens, TokenCounter};
use tinytools::{ToolRegistry, ToolSchema};
use tinytools_examples::catalogue;
use tinytools_examples::live::{self, MANIFEST_TOKEN_BUDGET, TASK};
use tinytools_examples::scripted;
use tinytools_examples::surface::Surface;

/// What the example reports about the catalogue, before any model is called.
struct Figures {
    registry: ToolRegistry,
    direct: Surface,
    deferred: Surface,
    manifest: Manifest,
    first_request: Vec<ToolSchema>,
    first_bytes: usize,
    pre_promoted: Vec<String>,
    /// `tool_search`'s answer for the task, as the model reads it.
    found: Value,
    found_names: Vec<String>,
}

fn main() {
    let json_output = std::env::args().any(|arg| arg == "--json");
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("deferral: cannot start a runtime: {err}");
            std::process::exit(1);
        }
    };
    let figures = runtime.block_on(figures());
    let live_model = std::env::var("OPENROUTER_API_KEY").is_ok() || std::env::var("TINYTOOLS_BASE_URL").is_ok();
    let live_arms = if live_model {
        match runtime.block_on(live_ab()) {
            Ok(arms) => Some(arms),
            Err(message) => {
                eprintln!("deferral: the live run failed: {message}");
                std::process::exit(1);
            }
        }
    } else {
        None
    };
    if json_output {
        println!("{}", figures_json(&figures, live_arms.as_ref()));
        return;
    }
    print_figures(&figures);
    match live_arms {
        Some((model, direct, deferred)) => {
            println!("\nLive A/B against {model}:\n{}", live::table(&model, &direct, &deferred));
            println!("answers: all Direct {:?}; deferred {:?}", direct.answer, deferred.answer);
        }
        None => {
            println!("\nSCRIPTED MODEL — no OPENROUTER_API_KEY or TINYTOOLS_BASE_URL is set, so the model's turns");
            println!("below are replayed from a script; the tools, search, promotion and events are real.");
            runtime.block_on(scripted_run(figures.registry));
        }
    }
}

/// The catalogue all Direct and with its long tail Deferred, the manifest, the first request
/// a run of the task sends and what `tool_search` finds for it.
async fn figures() -> Figures {
    let counter = EstimatedTokens;
    let policy = ToolDiscoveryPolicy::default().with_manifest_token_budget(MANIFEST_TOKEN_BUDGET);
    let all_direct = catalogue::all_direct_registry();
    let direct = Surface::of(&DiscoveryBridge::new(&all_direct, policy.clone()), &counter);
    let registry = catalogue::registry();
    let bridge = DiscoveryBridge::new(&registry, policy.clone());
    let deferred = Surface::of(&bridge, &counter);
    let manifest = Manifest::build(bridge.catalog(), policy.manifest_token_budget, &counter);
    let search = bridge.search(&json!({"query": TASK})).await;
    // The first request as a run really sends it: query-aware discovery (on by default) has
    // ranked the task against the catalogue and promoted what passed its floor.
    let first_request = first_request_tools(registry.clone()).await;
    let first_bytes = serde_json::to_string(&first_request).map_or(0, |text| text.len());
    let pre_promoted = first_request.iter().skip(deferred.tools.len()).map(|t| t.name.clone()).collect();
    let found: Value = serde_json::from_str(&search.result.to_model_text()).unwrap_or(Value::Null);
    let found_names = found["matches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["name"].as_str().map(str::to_owned))
        .collect();
    Figures { registry, direct, deferred, manifest, first_request, first_bytes, pre_promoted, found, found_names }
}

/// The figures (and the live arms, when a model ran) as one JSON object.
fn figures_json(figures: &Figures, live_arms: Option<&(String, live::Arm, live::Arm)>) -> Value {
    let counter = EstimatedTokens;
    let Figures { registry, direct, deferred, manifest, first_request, first_bytes, pre_promoted, found_names, .. } =
        figures;
    let mut out = json!({
        "catalogue": registry.len(),
        "token_counter": "estimate (bytes / 4.5)",
        "direct": direct.to_json(),
        "deferred": deferred.to_json(),
        "saved_bytes": direct.bytes.saturating_sub(deferred.bytes),
        "first_request": {"tools": first_request.len(), "schema_bytes": first_bytes, "pre_promoted": pre_promoted},
        "manifest": {"detail": format!("{:?}", manifest.detail), "tokens": counter.count(&manifest.text)},
        "task": TASK,
        "tool_search": found_names,
        "manifest_token_budget": MANIFEST_TOKEN_BUDGET,
    });
    if let Some((model, direct, deferred)) = live_arms {
        let arm = |a: &live::Arm| json!({"route": format!("{:?}", a.route), "first_call_prompt_tokens": a.first_call_prompt_tokens, "total_prompt_tokens": a.total_prompt_tokens});
        out["live"] = json!({"model": model, "direct": arm(direct), "deferred": arm(deferred)});
    }
    out
}

/// The figures as a report for a reader.
fn print_figures(figures: &Figures) {
    let counter = EstimatedTokens;
    let Figures { registry, direct, deferred, manifest, first_request, first_bytes, pre_promoted, found, found_names } =
        figures;
    println!("The 41-tool catalogue (bytes = compact JSON of name, description, parameters):\n");
    println!("{:<28} {:<9} {:<10} {:>6}", "tool", "exposure", "family", "bytes");
    for tool in registry.iter() {
        let exposure = tool.exposure().to_string();
        let family = tool.family().unwrap_or("-");
        println!("{:<28} {:<9} {:<10} {:>6}", tool.name(), exposure, family, tool.schema().byte_len());
    }
    println!("\nThe first request's tools array (tokens estimated):");
    println!("  {:<11} {:>5} {:>8} {:>8}  tools", "", "tools", "bytes", "tokens");
    for (label, surface) in [("all Direct", direct), ("deferred", deferred)] {
        println!(
            "  {label:<11} {:>5} {:>8} {:>8}  {}",
            surface.tools.len(),
            surface.bytes,
            surface.tokens,
            surface.names()
        );
    }
    let saved = 100.0 * direct.bytes.saturating_sub(deferred.bytes) as f64 / direct.bytes.max(1) as f64;
    println!("  saved       {:>14} bytes ({saved:.0}%)", direct.bytes.saturating_sub(deferred.bytes));
    println!(
        "  first request for the task: {} tools, {first_bytes} bytes (query-aware discovery promoted {})",
        first_request.len(),
        if pre_promoted.is_empty() { "nothing".to_owned() } else { pre_promoted.join(", ") }
    );
    println!(
        "\nThe manifest in tool_search's description ({:?}, {} tokens):",
        manifest.detail,
        counter.count(&manifest.text)
    );
    for line in manifest.text.lines() {
        println!("  {line}");
    }
    println!("\ntool_search {{\"query\": {TASK:?}}} returns: {}", found_names.join(", "));
    if let Some(first) = found["matches"].get(0) {
        println!("first match, with the full schema the model now calls it by:\n  {first}");
    }
}

/// The tools of the first request a run of the task sends (the scripted model answers at once).
async fn first_request_tools(registry: ToolRegistry) -> Vec<ToolSchema> {
    let model = Arc::new(tinytools::testkit::ScriptedModel::new([tinytools::model::ModelResponse::text("-")]));
    let policy = RunPolicy::default()
        .with_discovery(ToolDiscoveryPolicy::default().with_manifest_token_budget(MANIFEST_TOKEN_BUDGET));
    let Ok(agent) =
        Agent::builder(model.clone()).instructions(live::SYSTEM_PROMPT).registry(registry).policy(policy).build()
    else {
        return Vec::new();
    };
    let _ = agent.run(vec![Message::user(TASK)]).await;
    model.requests().first().map(|request| request.tools.clone()).unwrap_or_default()
}

/// The real A/B against the model the environment names.
async fn live_ab() -> Result<(String, live::Arm, live::Arm), String> {
    let client = OpenAiCompatible::from_env().map_err(|err| err.to_string())?;
    let name = client.model().to_owned();
    let model: Arc<dyn tinytools::model::ChatModel> = Arc::new(client);
    let direct = live::run_arm(model.clone(), live::Exposure::AllDirect).await.map_err(|err| err.to_string())?;
    let deferred = live::run_arm(model, live::Exposure::Discovery).await.map_err(|err| err.to_string())?;
    Ok((name, direct, deferred))
}

/// The task with a scripted model: search, call what the search found first, answer.
async fn scripted_run(registry: ToolRegistry) {
    let model = scripted::search_call_answer("stock price for a ticker", json!({"symbol": "ACME"}), |quote| {
        let price = quote.and_then(|q| q["price"].as_f64()).unwrap_or_default();
        format!("ACME is trading at ${price:.2}.")
    });
    let events: Arc<Mutex<Vec<RunEvent>>> = Arc::default();
    let log = events.clone();
    let policy = RunPolicy::default()
        .with_discovery(ToolDiscoveryPolicy::default().with_manifest_token_budget(MANIFEST_TOKEN_BUDGET));
    let agent = Agent::builder(model)
        .instructions(live::SYSTEM_PROMPT)
        .registry(registry)
        .policy(policy)
        .on_event(move |event: &RunEvent| {
            if let Ok(mut log) = log.lock() {
                log.push(event.clone());
            }
        })
        .build();
    let agent = match agent {
        Ok(agent) => agent,
        Err(err) => return println!("the agent could not be built: {err}"),
    };
    match agent.run(vec![Message::user(TASK)]).await {
        Ok(outcome) => {
            for event in events.lock().map(|e| e.clone()).unwrap_or_default() {
                println!("  event: {}", serde_json::to_string(&event).unwrap_or_default());
            }
            println!("  answer ({} model calls): {}", outcome.turns, outcome.answer);
        }
        Err(err) => println!("  the scripted run failed: {err}"),
    }
}
