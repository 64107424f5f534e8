//! How much of the cached prompt prefix each discovery changes, per discovery mode: the same
//! task (three deferred tools found one after another) replayed from 127.0.0.1 against the
//! Anthropic and OpenAI Responses clients, each request's prompt rendered in the provider's
//! caching order (`tinytools_examples::wire::prefix`), compared with the request before it.
//! Prints JSON; no key, no network.
//!
//! ```text
//! cargo run -p tinytools-examples --features providers --example cache_prefix
//! ```
//!
//! For each consecutive pair of requests, `changed` is how many bytes of the earlier request's
//! prompt the later one no longer repeats from the start: what a prefix cache must compute
//! again. `after_search` marks the requests that follow a search (a discovery).

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::discovery::PrePromotion;
use tinytools::model::{ChatModel, Message, NativeSearch};
use tinytools::providers::{Anthropic, HttpOptions, OpenAiResponses};
use tinytools::run::{Agent, RunPolicy, StopReason};
use tinytools::{DiscoveryMode, ToolDiscoveryPolicy};
use tinytools_examples::catalogue;
use tinytools_examples::live::SYSTEM_PROMPT;
use tinytools_examples::wire::{self, Responder, TASK, prefix};

/// One arm: a name, a mode, and whether pre-promotion is on.
const ARMS: [(&str, DiscoveryMode, bool); 4] = [
    ("bridge", DiscoveryMode::Bridge, false),
    ("bridge_pre_promotion", DiscoveryMode::Bridge, true),
    ("native_provider_search", DiscoveryMode::ProviderNative(NativeSearch::Provider), false),
    ("native_client_search", DiscoveryMode::ProviderNative(NativeSearch::Client), false),
];

#[tokio::main(flavor = "current_thread")]
async fn main() {
    match measure().await {
        Ok(report) => println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default()),
        Err(message) => {
            eprintln!("cache_prefix: {message}");
            std::process::exit(1);
        }
    }
}

async fn measure() -> Result<Value, String> {
    let mut providers = serde_json::Map::new();
    for provider in ["anthropic", "openai_responses"] {
        let mut arms = serde_json::Map::new();
        for (name, mode, pre_promotion) in ARMS {
            arms.insert(name.to_owned(), arm(provider, mode, pre_promotion).await?);
        }
        providers.insert(provider.to_owned(), Value::Object(arms));
    }
    Ok(json!({"task": TASK, "unit": "bytes of compact JSON in the provider's caching order", "providers": providers}))
}

async fn arm(provider: &str, mode: DiscoveryMode, pre_promotion: bool) -> Result<Value, String> {
    let (script, render): (Arc<Responder>, fn(&Value) -> String) = match provider {
        "anthropic" => (wire::anthropic_script(mode, None), prefix::anthropic),
        _ => (wire::responses_script(mode, None), prefix::responses),
    };
    let replay = wire::serve(script).await.map_err(|e| format!("the replay server did not start: {e}"))?;
    let options = HttpOptions::default();
    let model: Arc<dyn ChatModel> = match provider {
        "anthropic" => Arc::new(
            Anthropic::with_base_url(&replay.base_url, "replay", wire::anthropic::MODEL, options)
                .map_err(|e| e.to_string())?,
        ),
        _ => Arc::new(
            OpenAiResponses::new(format!("{}/v1", replay.base_url), wire::responses::MODEL, options)
                .map_err(|e| e.to_string())?,
        ),
    };
    let pre = if pre_promotion { PrePromotion::default() } else { PrePromotion::off() };
    let discovery = ToolDiscoveryPolicy::default().with_mode(mode).with_pre_promotion(pre);
    let agent = Agent::builder(model)
        .instructions(SYSTEM_PROMPT)
        .registry(catalogue::registry())
        .policy(RunPolicy::default().with_discovery(discovery))
        .build()
        .map_err(|e| e.to_string())?;
    let outcome =
        agent.run(vec![Message::user(TASK)]).await.map_err(|e| format!("{provider} {mode:?}: the run failed: {e}"))?;
    if outcome.stop != StopReason::Answered {
        return Err(format!("{provider} {mode:?}: the run stopped with {:?}", outcome.stop));
    }
    // The run's search-keyword request is a prompt of its own, not a step of the conversation
    // whose prefix the cache keeps: counted, and left out of the comparison.
    let recorded = replay.requests();
    let keyword_requests = recorded.iter().filter(|request| wire::is_keywords(request)).count();
    let prompts: Vec<String> =
        recorded.iter().filter(|request| !wire::is_keywords(request)).map(|request| render(&request.body)).collect();
    let mut requests = vec![json!({"request": 1, "prompt_bytes": prompts.first().map_or(0, String::len)})];
    let (mut after_search, mut otherwise) = (Vec::new(), Vec::new());
    for (i, pair) in prompts.windows(2).enumerate() {
        let kept = prefix::common(&pair[0], &pair[1]);
        let changed = pair[0].len() - kept;
        let searched = wire::searched_at(mode, i);
        if searched {
            after_search.push(changed)
        } else {
            otherwise.push(changed)
        }
        requests.push(json!({"request": i + 2, "prompt_bytes": pair[1].len(), "kept": kept, "changed": changed, "after_search": searched}));
    }
    let mean = |values: &[usize]| {
        if values.is_empty() { 0.0 } else { values.iter().sum::<usize>() as f64 / values.len() as f64 }
    };
    Ok(json!({
        "requests": requests,
        "keyword_requests": keyword_requests,
        "discoveries": after_search.len(),
        "changed_per_discovery": mean(&after_search).round(),
        "changed_per_other_request": mean(&otherwise).round(),
        "changed_total": after_search.iter().chain(&otherwise).sum::<usize>(),
        "prompt_bytes_total": prompts.iter().map(String::len).sum::<usize>(),
    }))
}
