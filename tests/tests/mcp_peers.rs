//! MCP import against real reference servers (npm `server-everything` and `server-filesystem`,
//! PyPI `mcp-server-time`), installed by `.ci/mcp-peers`: import, find a tool by what it does
//! through `tool_search`, call it through the loop with the scripted model, get the real result.
//!
//! Without the servers each test prints why and passes; `.ci/run` sets
//! `TINYTOOLS_MCP_PEERS_REQUIRED=1`, which turns a missing server into a failure.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, PrePromotion};
use tinytools::mcp::McpServer;
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, RunPolicy};
use tinytools::schema::ProviderProfile;
use tinytools::testkit::ScriptedModel;
use tinytools::{SchemaPreparation, ToolExposure, ToolRegistry};
use tinytools_examples::mcp_peers::{Peer, peers_required};

/// Starts and imports a peer, or explains why it is skipped.
async fn import(peer: Peer, dir: &Path) -> Option<(McpServer, ToolRegistry)> {
    if let Some(why) = peer.missing() {
        assert!(!peers_required(), "TINYTOOLS_MCP_PEERS_REQUIRED=1 but {why}");
        eprintln!("skipped: {why}");
        return None;
    }
    let server = peer.connect(dir).await.expect("handshake");
    let mut registry = ToolRegistry::new();
    let report = server.register_into(&mut registry).await.expect("imports");
    assert!(report.skipped.is_empty(), "{report:?}");
    Some((server, registry))
}

/// The names `tool_search` answers with for this query.
async fn search(registry: &ToolRegistry, query: &str) -> Vec<String> {
    let bridge = DiscoveryBridge::new(registry, Default::default());
    let answer = bridge.search(&json!({"query": query, "limit": 3})).await;
    let body: Value = serde_json::from_str(&answer.result.to_model_text()).expect("JSON");
    body["matches"].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str().map(str::to_owned)).collect()
}

/// Runs the spec's shape: search, call what was found, answer. Returns the tool's answer.
///
/// Query-aware pre-promotion is off for this run, so the first request is the bridge alone
/// and the tool arrives through `tool_search`; a second run with the default policy checks
/// that pre-promotion loads the same tool from the user's message before the model is asked.
async fn search_then_call(registry: ToolRegistry, query: &str, tool: &str, args: Value) -> (String, bool) {
    let registry = Arc::new(registry);
    let prepared = || RunPolicy::default().with_tool_schemas(SchemaPreparation::new(ProviderProfile::OPENAI));

    let asked = Arc::new(ScriptedModel::new([ModelResponse::text("done")]));
    Agent::new(registry.clone(), asked.clone())
        .with_policy(prepared())
        .run(vec![Message::user(query)])
        .await
        .expect("runs");
    let first = &asked.requests()[0].tools;
    assert!(
        first.iter().any(|t| t.name == tool),
        "the message pre-promoted {tool}: {:?}",
        first.iter().map(|t| &t.name).collect::<Vec<_>>()
    );

    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "tool_search", json!({"query": query}))]),
        ModelResponse::calls([("c2", tool, args)]),
        ModelResponse::text("done"),
    ]));
    let mut policy = prepared();
    policy.discovery.pre_promotion = PrePromotion::off();
    let agent = Agent::new(registry, model.clone()).with_policy(policy);
    let outcome = agent.run(vec![Message::user(query)]).await.expect("runs");
    let requests = model.requests();
    let first: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(first, ["tool_search"], "every imported tool is Deferred: only the bridge is sent");
    assert!(requests[1].tools.iter().any(|t| t.name == tool), "the search promoted {tool}");
    let Some(Message::Tool { content, is_error, .. }) = outcome.transcript.messages.get(4) else {
        panic!("the tool answered: {:?}", outcome.transcript.messages)
    };
    (content.clone(), *is_error)
}

#[tokio::test]
async fn everything_server_is_imported_deferred_searched_and_called() {
    let Some((server, registry)) = import(Peer::Everything, Path::new(".")).await else { return };
    assert!(registry.len() >= 10, "server-everything lists its tools: {}", registry.len());
    assert!(registry.iter().all(|t| t.exposure() == ToolExposure::Deferred && t.family() == Some("everything")));
    let (name, _) = server.server_info().expect("handshake info");
    assert!(name.contains("everything"), "{name}");
    assert!(server.instructions().is_some_and(|text| text.contains("get-roots-list")), "its handshake instructions");

    let found = search(&registry, "echo back a message").await;
    assert_eq!(found.first().map(String::as_str), Some("everything__echo"), "{found:?}");
    let (answer, is_error) = search_then_call(
        registry,
        "echo back a message",
        "everything__echo",
        json!({"message": "hello from tinytools"}),
    )
    .await;
    assert!(!is_error && answer.contains("hello from tinytools"), "{answer}");
}

#[tokio::test]
async fn everything_servers_list_changed_after_initialize_does_not_duplicate_the_catalogue() {
    let Some((server, mut registry)) = import(Peer::Everything, Path::new(".")).await else { return };
    let before: Vec<String> = registry.iter().map(|t| t.name().to_owned()).collect();
    // The server announces a change right after `initialize`; whether or not it landed before
    // the listing, a refresh re-imports the same set, replacing nothing it did not own.
    let report = server.refresh(&mut registry).await.expect("re-lists");
    assert!(report.skipped.is_empty(), "{report:?}");
    assert_eq!(report.removed.len(), before.len());
    let after: Vec<String> = registry.iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(after, before);
    assert!(!server.tools_changed());
    server.close().await;
}

#[tokio::test]
async fn filesystem_server_reads_a_real_file_found_by_what_it_does() {
    let dir = std::env::temp_dir().join(format!("tinytools-mcp-fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let dir = dir.canonicalize().expect("canonical");
    let file = dir.join("notes.txt");
    std::fs::write(&file, "the launch is on Thursday").expect("writes");
    let Some((_server, registry)) = import(Peer::Filesystem, &dir).await else { return };
    let destructive = registry.get("filesystem__write_file").map(|t| t.annotations().read_only);
    assert_eq!(destructive, Some(false), "write_file is classified as writing");

    let query = "read the complete contents of a text file";
    let found = search(&registry, query).await;
    assert!(found.iter().any(|n| n == "filesystem__read_text_file"), "{found:?}");
    let path = file.to_string_lossy().into_owned();
    let (answer, is_error) =
        search_then_call(registry, query, "filesystem__read_text_file", json!({"path": path})).await;
    assert!(!is_error && answer.contains("the launch is on Thursday"), "{answer}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn filesystem_server_refusal_outside_its_directory_reaches_the_model_as_an_error() {
    let dir = std::env::temp_dir().join(format!("tinytools-mcp-fs-deny-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let Some((_server, registry)) = import(Peer::Filesystem, &dir.canonicalize().expect("canonical")).await else {
        return;
    };
    let answer = registry.dispatch("filesystem__read_text_file", json!({"path": "/etc/hostname"})).await.expect("runs");
    assert!(answer.is_error, "{}", answer.to_model_text());
    assert!(answer.to_model_text().to_lowercase().contains("denied"), "{}", answer.to_model_text());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn time_server_tells_the_time_in_a_zone() {
    let Some((_server, registry)) = import(Peer::Time, Path::new(".")).await else { return };
    let query = "what is the current time in a timezone";
    let found = search(&registry, query).await;
    assert_eq!(found.first().map(String::as_str), Some("time__get_current_time"), "{found:?}");
    let (answer, is_error) =
        search_then_call(registry, query, "time__get_current_time", json!({"timezone": "Europe/Paris"})).await;
    assert!(!is_error, "{answer}");
    let parsed: Value = serde_json::from_str(&answer).expect("the server answers JSON text");
    assert_eq!(parsed["timezone"], "Europe/Paris");
    assert!(parsed["datetime"].as_str().is_some_and(|t| t.starts_with("20")), "{parsed}");
}

#[tokio::test]
async fn a_bad_time_zone_is_the_servers_refusal_not_a_crash() {
    let Some((_server, registry)) = import(Peer::Time, Path::new(".")).await else { return };
    let answer = registry.dispatch("time__get_current_time", json!({"timezone": "Mars/Olympus"})).await.expect("runs");
    assert!(answer.is_error, "{}", answer.to_model_text());
    assert!(answer.to_model_text().contains("Mars/Olympus"), "{}", answer.to_model_text());
}
