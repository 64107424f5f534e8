//! The official TypeScript SDK client (`@modelcontextprotocol/sdk`, `Client` with
//! `StdioClientTransport` and `StreamableHTTPClientTransport`) against the gateway binary,
//! fronting the real npm `server-everything` and PyPI `mcp-server-time`: `tests/ts/
//! gateway_client.cjs` lists, searches and calls one tool per server through `call_tool`, and
//! prints JSON checked here.
//!
//! Needs node and the reference servers `.ci/mcp-peers` installs (in `target/mcp-peers`, or
//! `$TINYTOOLS_MCP_PEERS`). Without them the test prints why and passes, unless
//! `TINYTOOLS_MCP_PEERS_REQUIRED=1`, which turns a missing one into a failure.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tinytools_examples::mcp_peers::{peers_required, peers_root};

use common::*;
use serve::{GATEWAY, spawn_http};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ts/gateway_client.cjs");

/// Why the TypeScript end-to-end test cannot run here, if it cannot.
fn missing(root: &Path) -> Option<String> {
    let node = std::process::Command::new("node").arg("--version").output();
    if !node.is_ok_and(|output| output.status.success()) {
        return Some("node is not on PATH".to_owned());
    }
    let needed = [
        "node_modules/@modelcontextprotocol/sdk/package.json",
        "node_modules/.bin/mcp-server-everything",
        "venv/bin/mcp-server-time",
    ];
    needed.iter().map(|path| root.join(path)).find(|path| !path.exists()).map(|path| {
        format!(
            "{} is not installed (run `.ci/mcp-peers` to install the reference MCP servers, or set TINYTOOLS_MCP_PEERS)",
            path.display()
        )
    })
}

/// Runs the script with these arguments and parses what it prints.
async fn run_script(root: &Path, args: &[&str]) -> Value {
    let mut command = tokio::process::Command::new("node");
    command.arg(SCRIPT).arg(root).args(args).kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("the TypeScript client finishes within 3 minutes")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the TypeScript client failed ({}):\n{stderr}\n{stdout}", output.status);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}\n{stderr}"))
}

/// What the script reports, checked the same for both transports.
fn check(out: &Value, transport: &str) {
    eprintln!("the TypeScript client over {transport}: {out}");
    assert_eq!(out["transport"], transport);
    assert_eq!(out["server"]["name"], "tinytools-gateway", "{out}");
    assert_eq!(out["tools"], json!(["tool_search", "call_tool"]), "{out}");
    let found = |key: &str| out["search"][key].as_array().cloned().unwrap_or_default();
    assert!(found("echo").contains(&json!("everything__echo")), "{out}");
    assert!(found("time").contains(&json!("time__get_current_time")), "{out}");
    let echo = &out["calls"]["echo"];
    assert_eq!(echo["isError"], false, "{out}");
    assert!(echo["text"].as_str().unwrap().contains("hello from the TypeScript SDK"), "{out}");
    let time = &out["calls"]["time"];
    assert_eq!(time["isError"], false, "{out}");
    assert!(time["text"].as_str().unwrap().contains("Europe/Paris"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_uses_the_gateway_over_stdio_and_http() {
    let root: PathBuf = peers_root();
    if let Some(why) = missing(&root) {
        assert!(!peers_required(), "TINYTOOLS_MCP_PEERS_REQUIRED=1 but {why}");
        eprintln!("skipped: {why}");
        return;
    }
    let dir = temp_dir("typescript");
    let cache = dir.join("cache");
    write_config(
        &dir,
        json!({
            "everything": {"command": root.join("node_modules/.bin/mcp-server-everything"), "args": ["stdio"]},
            "time": {"command": root.join("venv/bin/mcp-server-time"), "args": ["--local-timezone=UTC"]}
        }),
    );
    let config = dir.join("config.json");

    // Warm the cache (each server started once), so both runs search before any server runs.
    let report = std::process::Command::new(GATEWAY)
        .args(["report", "--json", "--config"])
        .arg(&config)
        .arg("--cache-dir")
        .arg(&cache)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));

    let (config_arg, cache_arg) = (config.to_str().unwrap(), cache.to_str().unwrap());
    let stdio = run_script(&root, &["stdio", GATEWAY, "--config", config_arg, "--cache-dir", cache_arg]).await;
    check(&stdio, "stdio");

    let gateway = spawn_http(&config, &cache, "127.0.0.1:0", &[], &[]).await;
    let http = run_script(&root, &["http", &gateway.url]).await;
    check(&http, "http");
    gateway.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
