//! Shared by the gateway's end-to-end tests: the fixture server, temporary configs, and an
//! rmcp client connected to an in-process gateway.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tinytools_gateway::{Gateway, GatewayConfig, GatewayOptions, ManifestCache, Supervisor};

/// The downstream fixture: the example catalogue plus fault tools. It is the
/// `gateway-fixture-server` example, which `cargo test` builds beside the gateway binary.
pub fn fixture_server() -> &'static str {
    static PATH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let binary = Path::new(env!("CARGO_BIN_EXE_tinytools-gateway"));
        let path = binary
            .parent()
            .map(|dir| {
                dir.join("examples").join("gateway-fixture-server").with_extension(std::env::consts::EXE_EXTENSION)
            })
            .unwrap_or_default();
        assert!(
            path.exists(),
            "{} is missing: `cargo test -p tinytools-gateway` builds it with the tests, or build it with \
             `cargo build -p tinytools-gateway --example gateway-fixture-server`",
            path.display()
        );
        path.to_string_lossy().into_owned()
    });
    &PATH
}

/// The fixture's own tools, beside the catalogue: `fixture_crash`, `fixture_sleep`,
/// `fixture_garbage` and `fixture_progress`.
pub const FIXTURE_OWN_TOOLS: usize = 4;

/// The tools the fixture lists: the catalogue's, less the Hidden `calendar_cancel_event`,
/// plus its own.
pub fn fixture_tool_count() -> usize {
    tinytools_examples::catalogue::registry().len() - 1 + FIXTURE_OWN_TOOLS
}

pub type Client = RunningService<RoleClient, ()>;

/// A fresh directory for one test.
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tinytools-gateway-e2e-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `mcpServers` into `dir/config.json` and reads it back.
pub fn write_config(dir: &Path, servers: Value) -> GatewayConfig {
    let path = dir.join("config.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json!({"mcpServers": servers})).unwrap()).unwrap();
    GatewayConfig::load(&path).unwrap()
}

/// A fixture server entry with these extra env variables and gateway keys.
pub fn fixture(env: Value, gateway: Value) -> Value {
    json!({"command": fixture_server(), "env": env, "gateway": gateway})
}

/// An in-process gateway over `config`, caching in `cache`, with an rmcp client on the other
/// end of a duplex pipe.
pub async fn connect(config: &GatewayConfig, cache: &Path) -> (Client, Gateway) {
    connect_with(config, cache, ()).await
}

/// As [`connect`], with `handler` as the client's handler.
pub async fn connect_with<H: rmcp::ClientHandler>(
    config: &GatewayConfig,
    cache: &Path,
    handler: H,
) -> (RunningService<RoleClient, H>, Gateway) {
    connect_with_options(config, cache, handler, GatewayOptions::default()).await
}

/// As [`connect_with`], with these gateway options (the discovery wait raised to 60 s).
pub async fn connect_with_options<H: rmcp::ClientHandler>(
    config: &GatewayConfig,
    cache: &Path,
    handler: H,
    options: GatewayOptions,
) -> (RunningService<RoleClient, H>, Gateway) {
    connect_exactly(config, cache, handler, options.with_discovery_wait(Duration::from_secs(60))).await
}

/// As [`connect_with_options`], with the options exactly as given.
pub async fn connect_exactly<H: rmcp::ClientHandler>(
    config: &GatewayConfig,
    cache: &Path,
    handler: H,
    options: GatewayOptions,
) -> (RunningService<RoleClient, H>, Gateway) {
    let supervisor = Arc::new(Supervisor::new(config, Some(ManifestCache::new(cache))));
    let gateway = Gateway::new(supervisor, options);
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let served = gateway.clone();
    tokio::spawn(async move {
        if let Ok(running) = served.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = handler.serve(client_io).await.expect("the gateway completes the handshake");
    (client, gateway)
}

/// Fills `cache` with every server's tools, as `tinytools-gateway report` does, so a gateway
/// over it starts warm: nothing to discover, and no `list_changed` of its own.
pub async fn warm(config: &GatewayConfig, cache: &Path) {
    let options = tinytools_gateway::report::ReportOptions::default();
    let report = tinytools_gateway::report::report(config, Some(ManifestCache::new(cache)), &options).await;
    assert_eq!(report.failures, 0, "{}", report.to_table());
}

pub async fn list<H: rmcp::ClientHandler>(client: &RunningService<RoleClient, H>) -> Vec<Tool> {
    client.peer().list_all_tools().await.expect("tools/list")
}

pub async fn call<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    arguments: Value,
) -> CallToolResult {
    let mut request = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = arguments {
        request = request.with_arguments(map);
    }
    client.peer().call_tool(request).await.expect("tools/call answers")
}

pub async fn call_tool<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    arguments: Value,
) -> CallToolResult {
    call(client, "call_tool", json!({"name": name, "arguments": arguments})).await
}

pub async fn search<H: rmcp::ClientHandler>(client: &RunningService<RoleClient, H>, query: &str) -> Value {
    let result = call(client, "tool_search", json!({"query": query})).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    serde_json::from_str(&text(&result)).expect("a JSON answer")
}

/// Every text block of a result, joined.
pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|block| block.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

pub fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|tool| tool.name.to_string()).collect()
}

pub fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map(|text| text.lines().count()).unwrap_or(0)
}

/// How many progress routes `relay` still holds once they have had up to 2 s to drain (a
/// call's route goes when its answer has been relayed): 0 when none is left.
pub async fn routes_after_drain(relay: &tinytools_gateway::relay::ProgressRelay) -> usize {
    let mut routes = usize::MAX;
    for _ in 0..100 {
        routes = relay.routes().await;
        if routes == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    routes
}

/// A client handler that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl ClientHandler for Counter {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Counter {
    /// The notifications so far.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Polls `done` every 20 ms for up to 30 s; true once it holds.
pub async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..1_500 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}
