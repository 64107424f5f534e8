//! The deferral scenario of the spec's live proof: the 41-tool catalogue, what its first
//! request costs with every tool Direct versus the 40-tool long tail Deferred behind
//! `tool_search`, the manifest, what a search for the task returns — then a run.
//!
//! It runs offline: the model's turns come from a script, and it says so. Built with the
//! `providers` feature and with `OPENROUTER_API_KEY` or `TINYTOOLS_BASE_URL` (+
//! `TINYTOOLS_MODEL`) set, the run is the real A/B against that model and prints the spec's
//! table.
//!
//! ```text
//! cargo run -p tinytools-examples --example deferral            # a report
//! cargo run -p tinytools-examples --example deferral -- --json  # the figures as one JSON object
//! OPENROUTER_API_KEY=... cargo run -p tinytools-examples --features providers --example deferral
//! ```

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, Manifest, ToolDiscoveryPolicy};
use tinytools::model::Message;
use tinytools::run::{Agent, Capture, RunEvent, RunPolicy};
use tinytools::schema::{EstimatedTokens, TokenCounter};
use tinytools::{ToolRegistry, ToolSchema};
use tinytools_examples::catalogue;
use tinytools_examples::scripted;
use tinytools_examples::surface::Surface;
use tinytools_examples::task::{MANIFEST_TOKEN_BUDGET, SYSTEM_PROMPT, TASK};

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
    let live_arms = live_ab::run(&runtime);
    if json_output {
        println!("{}", figures_json(&figures, live_arms.as_ref()));
        return;
    }
    print_figures(&figures);
    match live_arms {
        Some(arms) => arms.print(),
        None => {
            println!("\nSCRIPTED MODEL — no model is configured, so the model's turns below are replayed");
            println!("from a script; the tools, search, promotion and events are real.");
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
fn figures_json(figures: &Figures, live_arms: Option<&live_ab::LiveArms>) -> Value {
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
    if let Some(arms) = live_arms {
        out["live"] = arms.to_json();
    }
    out
}

/// The figures as a report for a reader.
fn print_figures(figures: &Figures) {
    let counter = EstimatedTokens;
    let Figures { registry, direct, deferred, manifest, first_request, first_bytes, pre_promoted, found, found_names } =
        figures;
    println!("The 41-tool catalogue. exposure: direct tools are sent in every request, deferred ones are found");
    println!("through tool_search; family: the group a tool is listed under; bytes: its schema (name,");
    println!("description, parameters) as compact JSON.\n");
    println!("{:<28} {:<9} {:<10} {:>6}", "tool", "exposure", "family", "bytes");
    for tool in registry.iter() {
        let exposure = tool.exposure().to_string();
        let family = tool.family().unwrap_or("-");
        println!("{:<28} {:<9} {:<10} {:>6}", tool.name(), exposure, family, tool.schema().byte_len());
    }
    println!("\nThe first request's tools array: tool schemas sent to the model, as compact JSON bytes and");
    println!("tokens (estimated as bytes / 4.5; the `tiktoken` feature counts real BPE tokens):");
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
        "\nThe manifest: tool_search's description lists what the Deferred tools are, so the model knows what\n\
         to search for. Within its {MANIFEST_TOKEN_BUDGET}-token budget it is at detail {:?} ({} tokens):",
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
    let Ok(agent) = Agent::builder(model.clone()).instructions(SYSTEM_PROMPT).registry(registry).policy(policy).build()
    else {
        return Vec::new();
    };
    let _ = agent.run(vec![Message::user(TASK)]).await;
    model.requests().first().map(|request| request.tools.clone()).unwrap_or_default()
}

/// The real A/B against the model the environment names (with the `providers` feature).
#[cfg(feature = "providers")]
mod live_ab {
    use std::sync::Arc;

    use serde_json::{Value, json};
    use tinytools::providers::OpenAiCompatible;
    use tinytools_examples::live;

    /// Both arms' figures against one model.
    pub(crate) struct LiveArms {
        model: String,
        direct: live::Arm,
        deferred: live::Arm,
    }

    /// The A/B when `OPENROUTER_API_KEY` or `TINYTOOLS_BASE_URL` names a model; exits when it
    /// fails.
    pub(crate) fn run(runtime: &tokio::runtime::Runtime) -> Option<LiveArms> {
        if std::env::var("OPENROUTER_API_KEY").is_err() && std::env::var("TINYTOOLS_BASE_URL").is_err() {
            return None;
        }
        match runtime.block_on(arms()) {
            Ok(arms) => Some(arms),
            Err(message) => {
                eprintln!("deferral: the live run failed: {message}");
                std::process::exit(1);
            }
        }
    }

    async fn arms() -> Result<LiveArms, String> {
        let client = OpenAiCompatible::from_env().map_err(|err| err.to_string())?;
        let model = client.model().to_owned();
        let chat: Arc<dyn tinytools::model::ChatModel> = Arc::new(client);
        let direct = live::run_arm(chat.clone(), live::Exposure::AllDirect).await.map_err(|err| err.to_string())?;
        let deferred = live::run_arm(chat, live::Exposure::Discovery).await.map_err(|err| err.to_string())?;
        Ok(LiveArms { model, direct, deferred })
    }

    impl LiveArms {
        pub(crate) fn to_json(&self) -> Value {
            let arm = |a: &live::Arm| json!({"route": format!("{:?}", a.route), "first_call_prompt_tokens": a.first_call_prompt_tokens, "total_prompt_tokens": a.total_prompt_tokens});
            json!({"model": self.model, "direct": arm(&self.direct), "deferred": arm(&self.deferred)})
        }

        pub(crate) fn print(&self) {
            let Self { model, direct, deferred } = self;
            println!("\nLive A/B against {model}:\n{}", live::table(model, direct, deferred));
            println!("answers: all Direct {:?}; deferred {:?}", direct.answer, deferred.answer);
        }
    }
}

/// Without the `providers` feature there is no live run.
#[cfg(not(feature = "providers"))]
mod live_ab {
    use serde_json::Value;

    /// Never built: this build cannot call a model.
    pub(crate) enum LiveArms {}

    /// Says so when the environment names a model.
    pub(crate) fn run(_runtime: &tokio::runtime::Runtime) -> Option<LiveArms> {
        if std::env::var("OPENROUTER_API_KEY").is_ok() || std::env::var("TINYTOOLS_BASE_URL").is_ok() {
            eprintln!("deferral: a model is configured, but this build has no providers; add `--features providers`");
        }
        None
    }

    impl LiveArms {
        pub(crate) fn to_json(&self) -> Value {
            match *self {}
        }

        pub(crate) fn print(&self) {
            match *self {}
        }
    }
}

/// The task with a scripted model: search, call what the search found first, answer.
async fn scripted_run(registry: ToolRegistry) {
    let model = scripted::search_call_answer("stock price for a ticker", json!({"symbol": "ACME"}), |quote| {
        let price = quote.and_then(|q| q["price"].as_f64()).unwrap_or_default();
        format!("ACME is trading at ${price:.2}.")
    });
    let events: Arc<Mutex<Vec<RunEvent>>> = Arc::default();
    let log = events.clone();
    // Events carry the model's search words and a call's arguments only when asked: they can
    // hold the user's data. This example shows them.
    let policy = RunPolicy::default()
        .with_discovery(ToolDiscoveryPolicy::default().with_manifest_token_budget(MANIFEST_TOKEN_BUDGET))
        .with_capture(Capture::default().with_tool_io(true));
    let agent = Agent::builder(model)
        .instructions(SYSTEM_PROMPT)
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
            println!("The run's events, in order:");
            for event in events.lock().map(|e| e.clone()).unwrap_or_default() {
                println!("  - {}", describe(&serde_json::to_value(&event).unwrap_or_default()));
            }
            println!("The answer, after {} model requests: {}", outcome.turns, outcome.answer);
        }
        Err(err) => println!("  the scripted run failed: {err}"),
    }
}

/// One event in words: what happened and what each of its fields says.
fn describe(event: &Value) -> String {
    let names = |value: &Value| {
        let names: Vec<&str> = value.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        names.join(", ")
    };
    let name = event["event"].as_str().unwrap_or("?");
    match name {
        "tools_advertised" => format!(
            "tools_advertised: the run offers {} Direct tool(s) with full schemas plus tool_search, and keeps {} \
             Deferred behind it ({} bytes of tool schemas)",
            event["direct"], event["deferred"], event["schema_bytes"]
        ),
        "tools_promoted" if event["cause"]["kind"] == "user_message" => format!(
            "tools_promoted: before the first request, the {} ranker scored the user's message against the \
             catalogue; {} passed its floor (confidence {:.2}), so its schema is sent at once",
            event["cause"]["ranker"].as_str().unwrap_or("?"),
            names(&event["names"]),
            event["cause"]["confidences"][0].as_f64().unwrap_or_default()
        ),
        "tools_promoted" => format!(
            "tools_promoted: {} joined the tools array (found by a search); the next request carries its schema",
            names(&event["names"])
        ),
        "model_called" => {
            let usage = if event["usage"].is_null() { " (a scripted model reports no token usage)" } else { "" };
            format!("model_called: request {} to the model, with {} tool schemas{usage}", event["turn"], event["tools"])
        }
        "tool_searched" => format!(
            "tool_searched: the model called tool_search {}; {} found {} (best confidence {:.2}, {:.3} ms)",
            event["query"],
            event["ranker"].as_str().unwrap_or("?"),
            names(&event["matched"]),
            event["top_confidence"].as_f64().unwrap_or_default(),
            event["latency_ms"].as_f64().unwrap_or_default()
        ),
        "deferred_tool_call" => format!(
            "deferred_tool_call: the model called the Deferred tool {} by name, arguments {}; it was promoted, so it is admitted",
            event["tool_name"].as_str().unwrap_or("?"),
            event["arguments"].as_str().map_or_else(|| event["arguments"].to_string(), str::to_owned)
        ),
        "tool_started" => format!("tool_started: {} runs", event["tool_name"].as_str().unwrap_or("?")),
        "tool_completed" => format!(
            "tool_completed: {} {}",
            event["tool_name"].as_str().unwrap_or("?"),
            if event["is_error"] == true { "answered with an error the model reads" } else { "answered" }
        ),
        _ => format!("{name}: {event}"),
    }
}
