//! `--summaries`: a server's summary is written once from its cached manifest, kept in the
//! cache, carried over while its tools stay the same, and ranks its tools (never shown).

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tinytools::discovery::ToolDiscoveryPolicy;
use tinytools::mcp::SummaryWriter;
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, RequestPurpose};
use tinytools_gateway::cache::{CACHE_FORMAT, CachedTool, Manifest, config_hash};
use tinytools_gateway::catalog::Catalog;
use tinytools_gateway::summaries::keep_summaries;
use tinytools_gateway::{ManifestCache, Supervisor};

use common::*;

/// Writes a summary naming what the server's own text calls it, and counts its requests; a
/// server named `broken` makes it fail.
struct Writer(AtomicUsize);

#[async_trait::async_trait]
impl ChatModel for Writer {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        assert_eq!(request.purpose, RequestPurpose::Summary);
        assert!(request.tools.is_empty(), "a summary request carries no tools");
        self.0.fetch_add(1, Ordering::SeqCst);
        let prompt = match request.messages.last() {
            Some(Message::Feedback { content }) => content.clone(),
            other => panic!("the prompt is the SDK's own words, never the user's: {other:?}"),
        };
        if prompt.contains("Service: broken") {
            return Err(ModelError::Transport("connection reset".into()));
        }
        let kind = if prompt.contains("Service: ledger") { "bookkeeping accountancy" } else { "meteorology" };
        Ok(ModelResponse::text(format!("**Summary:** A service for {kind} questions.")))
    }
}

fn manifest(server: &tinytools_gateway::config::ServerConfig, tool: &str) -> Manifest {
    Manifest {
        format: CACHE_FORMAT,
        config_hash: config_hash(server),
        server_name: None,
        server_version: None,
        instructions: None,
        self_description: None,
        summary: None,
        tools: vec![CachedTool {
            name: tool.into(),
            description: Some("Record an entry.".into()),
            title: None,
            input_schema: json!({"type": "object", "properties": {"id": {"type": "string"}}}),
            annotations: None,
        }],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_is_written_once_kept_in_the_cache_and_ranks_the_servers_tools() {
    let dir = temp_dir("summaries");
    let servers = json!({
        "ledger": {"command": "/nonexistent/ledger"},
        "sky": {"command": "/nonexistent/sky"},
        "broken": {"command": "/nonexistent/broken"},
    });
    let config = write_config(&dir, servers);
    let cache = ManifestCache::new(dir.join("cache"));
    for (name, server) in &config.servers {
        cache.store(server, &manifest(server, &format!("{name}_record"))).unwrap();
    }
    // Before: no word of "accountancy" is in any tool, so nothing is found.
    let supervisor = Arc::new(Supervisor::new(&config, Some(cache.clone())));
    let search = |catalog: &Catalog| {
        let bridge = catalog.bridge().clone();
        async move { bridge.search(&json!({"query": "accountancy"})).await.result.to_model_text() }
    };
    let before = search(&Catalog::build(&supervisor, ToolDiscoveryPolicy::default())).await;
    assert!(!before.contains("ledger__ledger_record"), "{before}");

    let writer = Arc::new(Writer(AtomicUsize::new(0)));
    let task = tokio::spawn(keep_summaries(Arc::clone(&supervisor), SummaryWriter::new(writer.clone())));
    let written = |name: &str| supervisor.server(name).and_then(|s| s.manifest()).and_then(|m| m.summary.clone());
    for _ in 0..200 {
        if written("ledger").is_some() && written("sky").is_some() && writer.0.load(Ordering::SeqCst) == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(written("ledger").as_deref(), Some("A service for bookkeeping accountancy questions."));
    assert_eq!(written("broken"), None, "a failed request leaves the server without a summary");
    assert_eq!(writer.0.load(Ordering::SeqCst), 3, "one request per server");

    // The summary ranks the server's tool, and the answer never shows it.
    let after = search(&Catalog::build(&supervisor, ToolDiscoveryPolicy::default())).await;
    assert!(after.contains("ledger__ledger_record"), "{after}");
    assert!(!after.contains("bookkeeping"), "the summary is never shown: {after}");

    // Kept in the cache: a restarted gateway has it without asking again.
    let ledger = &config.servers["ledger"];
    assert!(cache.load(ledger).unwrap().summary.is_some());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(writer.0.load(Ordering::SeqCst), 3, "a failed server is not asked again in a loop");
    task.abort();
    let restarted = Arc::new(Supervisor::new(&config, Some(cache)));
    let again = Arc::new(Writer(AtomicUsize::new(0)));
    let task = tokio::spawn(keep_summaries(Arc::clone(&restarted), SummaryWriter::new(again.clone())));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(again.0.load(Ordering::SeqCst), 1, "only the server without a summary is asked");
    task.abort();
}

#[test]
fn a_summary_is_carried_only_for_the_same_tools() {
    let dir = temp_dir("summaries-same");
    let config = write_config(&dir, json!({"ledger": {"command": "/nonexistent/ledger"}}));
    let server = &config.servers["ledger"];
    let (one, mut other) = (manifest(server, "a"), manifest(server, "a"));
    assert!(one.same_tools(&other));
    other.tools[0].name = "b".into();
    assert!(!one.same_tools(&other));
    let described = Manifest {
        summary: Some("Books.".into()),
        instructions: Some("Use for money.".into()),
        ..manifest(server, "a")
    };
    assert_eq!(described.family_context().as_deref(), Some("Books. Use for money."));
    let own = Manifest { self_description: Some("Ledger. Use for money.".into()), ..described };
    assert_eq!(own.family_context().as_deref(), Some("Books. Ledger. Use for money."));
}
