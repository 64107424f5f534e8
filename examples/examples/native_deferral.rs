//! Provider-native deferral, streamed: the 41-tool catalogue's deferred tools go to the wire
//! with the provider's own deferral flag and search tool, and the run prints the model's text
//! as it is written and each discovery as it happens. The provider is replayed from
//! 127.0.0.1 with its documented payloads (`tinytools_examples::wire`): no key, no network.
//!
//! ```text
//! cargo run -p tinytools-examples --features providers --example native_deferral                       # Anthropic's own search
//! cargo run -p tinytools-examples --features providers --example native_deferral -- --provider openai  # the Responses API's hosted tool_search
//! cargo run -p tinytools-examples --features providers --example native_deferral -- --search client    # the model asks, tinytools' ranker answers
//! ```
//!
//! The clients, the wire formats, the loop, its gates and the tools are real; the model's
//! words are a replay of one task (find and call three deferred tools, then answer). Against a
//! real provider the same agent needs only `Anthropic::new(key, model)` or
//! `OpenAiResponses::openai(key, model)`.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tinytools::model::{ChatModel, Message, NativeSearch};
use tinytools::providers::{Anthropic, HttpOptions, OpenAiResponses};
use tinytools::run::{Agent, RunEvent, RunPolicy, RunStreamItem};
use tinytools::{DiscoveryMode, ToolDiscoveryPolicy};
use tinytools_examples::catalogue;
use tinytools_examples::live::SYSTEM_PROMPT;
use tinytools_examples::wire::{self, TASK};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(message) = run().await {
        eprintln!("native_deferral: {message}");
        std::process::exit(1);
    }
}

/// `(provider, search)` from the command line.
fn options() -> Result<(String, NativeSearch), String> {
    let (mut provider, mut search) = ("anthropic".to_owned(), NativeSearch::Provider);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
        match (arg.as_str(), value.as_str()) {
            ("--provider", "anthropic" | "openai") => provider = value,
            ("--search", "provider") => search = NativeSearch::Provider,
            ("--search", "client") => search = NativeSearch::Client,
            _ => {
                return Err(format!(
                    "unknown {arg} {value}: use --provider anthropic|openai, --search provider|client"
                ));
            }
        }
    }
    Ok((provider, search))
}

async fn run() -> Result<(), String> {
    let (provider, search) = options()?;
    let mode = DiscoveryMode::ProviderNative(search);
    let pace = Some(Duration::from_millis(25));
    let script =
        if provider == "openai" { wire::responses_script(mode, pace) } else { wire::anthropic_script(mode, pace) };
    let replay = wire::serve(script).await.map_err(|e| format!("the replay server did not start: {e}"))?;
    eprintln!("REPLAY — {provider}'s answers come from recorded payloads on {}", replay.base_url);
    let model: Arc<dyn ChatModel> = if provider == "openai" {
        let url = format!("{}/v1", replay.base_url);
        Arc::new(OpenAiResponses::new(url, wire::responses::MODEL, HttpOptions::default()).map_err(|e| e.to_string())?)
    } else {
        let claude =
            Anthropic::with_base_url(&replay.base_url, "replay", wire::anthropic::MODEL, HttpOptions::default());
        Arc::new(claude.map_err(|e| e.to_string())?)
    };
    let policy = RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_mode(mode));
    let agent = Agent::builder(model)
        .instructions(SYSTEM_PROMPT)
        .registry(catalogue::registry())
        .policy(policy)
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut stream = agent.stream(vec![Message::user(TASK)]);
    let mut writing = 0;
    while let Some(item) = stream.next().await {
        match item {
            RunStreamItem::TextDelta { turn, text } => {
                if turn != writing {
                    writing = turn;
                    print!("\nmodel: ");
                }
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            RunStreamItem::Event(event) => report(&event, started),
            _ => {}
        }
    }
    let outcome = stream.finish().await.map_err(|e| format!("the run failed: {e}"))?;
    println!();
    let usage = outcome.usage;
    eprintln!(
        "[{:?} after {} model calls; {} prompt tokens, {} of them from the prompt cache (replayed usage)]",
        outcome.stop, outcome.turns, usage.prompt_tokens, usage.cache_read_tokens
    );
    let requests = replay.requests();
    let same = requests.windows(2).all(|pair| pair[0].body["tools"] == pair[1].body["tools"]);
    eprintln!("[{} requests; the tools array was the same in every one: {same}]", requests.len());
    Ok(())
}

/// The events of a discovery, on stderr.
fn report(event: &RunEvent, started: Instant) {
    let at = started.elapsed().as_millis();
    match event {
        RunEvent::ToolsAdvertised { direct, deferred, native, .. } => {
            eprintln!("[{at} ms: {direct} Direct tool(s), {deferred} deferred, provider-native deferral: {native}]");
        }
        RunEvent::ToolSearched { ranker, matched, .. } => {
            eprintln!("\n[{at} ms: {ranker} searched and loaded {}]", matched.join(", "));
        }
        RunEvent::DeferredToolCall { tool_name, .. } => eprintln!("[{at} ms: calling the deferred {tool_name}]"),
        RunEvent::ToolCompleted { tool_name, is_error, .. } => {
            eprintln!("[{at} ms: {tool_name} {}]", if *is_error { "refused" } else { "answered" });
        }
        RunEvent::ToolRejected { reason, .. } => eprintln!("[{at} ms: a call was rejected: {reason}]"),
        _ => {}
    }
}
