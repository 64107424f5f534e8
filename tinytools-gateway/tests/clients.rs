//! Clients nobody here wrote, against the gateway binary over stdio and streamable HTTP: the
//! official MCP Python SDK (`tests/clients/python_client.py`, PyPI `mcp`) and the MCP
//! Inspector's CLI (npm `@modelcontextprotocol/inspector`, `--cli`). Each initializes, lists
//! the tools, searches, calls a tool through `call_tool` with good and with bad arguments,
//! calls an unknown and a Hidden name, and ends its session; over HTTP the Python SDK must
//! log no "Session termination failed".
//!
//! Opt-in: runs only with `TINYTOOLS_CLIENTS=1`, after `tinytools-gateway/tests/clients/
//! setup.sh` has installed the clients (pinned) into `target/clients` or
//! `$TINYTOOLS_CLIENTS_DIR`; otherwise it prints why and passes. With the variable set, a
//! missing client fails.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use common::*;
use serve::{GATEWAY, spawn_http};

const PYTHON_CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/python_client.py");
/// The most one client run may take on a loaded machine.
const RUN_BOUND: Duration = Duration::from_secs(120);

/// Where `setup.sh` installed the clients.
fn clients_dir() -> PathBuf {
    match std::env::var_os("TINYTOOLS_CLIENTS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/clients"),
    }
}

/// The Python interpreter and the Inspector, or `None` (with the reason printed) when the
/// check is not asked for.
fn clients() -> Option<(PathBuf, PathBuf)> {
    if !std::env::var("TINYTOOLS_CLIENTS").is_ok_and(|value| value == "1") {
        eprintln!(
            "skipped: the third-party client check is opt-in; run tinytools-gateway/tests/clients/setup.sh, then \
             TINYTOOLS_CLIENTS=1 cargo test -p tinytools-gateway --test clients"
        );
        return None;
    }
    let dir = clients_dir();
    let (python, inspector) = (dir.join("venv/bin/python"), dir.join("npm/node_modules/.bin/mcp-inspector"));
    for path in [&python, &inspector] {
        assert!(
            path.exists(),
            "TINYTOOLS_CLIENTS=1 but {} is missing: run tinytools-gateway/tests/clients/setup.sh (or set \
             TINYTOOLS_CLIENTS_DIR)",
            path.display()
        );
    }
    Some((python, inspector))
}

/// Runs `program args`, bounded, and returns its stdout; stderr is kept for the failure message.
async fn run(program: &Path, args: &[&str]) -> (bool, String, String) {
    let mut command = tokio::process::Command::new(program);
    command.args(args).kill_on_drop(true).stdin(std::process::Stdio::null());
    let output = tokio::time::timeout(RUN_BOUND, command.output())
        .await
        .unwrap_or_else(|_| panic!("{} did not finish within {RUN_BOUND:?}", program.display()))
        .expect("the client runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), stdout.into_owned(), stderr.into_owned())
}

/// What the Python SDK reports, checked the same for both transports.
fn check_python(out: &Value, transport: &str) {
    eprintln!("the Python SDK over {transport}: {out}");
    assert_eq!(out["transport"], transport);
    assert_eq!(out["server"], "tinytools-gateway", "{out}");
    assert_eq!(out["instructions"], true, "{out}");
    assert_eq!(out["tools"], json!(["tool_search", "call_tool"]), "{out}");
    let manifest = out["manifest"].as_str().unwrap();
    assert!(manifest.contains("stock_quote") && !manifest.contains("crypto_price"), "{manifest}");
    assert_eq!(out["search"][0], "fixture__stock_quote", "{out}");
    let calls = &out["calls"];
    assert_eq!(calls["good"]["isError"], false, "{out}");
    assert!(calls["good"]["text"].as_str().unwrap().contains("ACME"), "{out}");
    assert_eq!(calls["bad"]["isError"], true, "{out}");
    assert!(calls["bad"]["text"].as_str().unwrap().contains("symbol"), "the violation is named: {out}");
    for name in ["unknown", "hidden"] {
        assert_eq!(calls[name]["isError"], true, "{name}: {out}");
        assert!(!calls[name]["text"].as_str().unwrap().contains("crypto_price"), "a Hidden tool is never named");
    }
    assert_eq!(out["sdk_log"], json!([]), "the SDK logged nothing at warning or above (no failed termination)");
}

async fn python(python: &Path, args: &[&str], transport: &str) {
    let mut full = vec![PYTHON_CLIENT];
    full.extend_from_slice(args);
    let (ok, stdout, stderr) = run(python, &full).await;
    assert!(ok, "the Python client failed:\n{stderr}\n{stdout}");
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    let out: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}"));
    check_python(&out, transport);
}

/// One Inspector CLI call (its own session) against `target`, its JSON answer.
async fn inspector(inspector: &Path, target: &[&str], method: &[&str]) -> Value {
    // The method's flags first, then `--` and the target, so the gateway's own flags are its.
    let mut args = vec!["--cli"];
    args.extend_from_slice(method);
    args.push("--");
    args.extend_from_slice(target);
    let (ok, stdout, stderr) = run(inspector, &args).await;
    // A result with `isError` exits non-zero, saying so on stderr; the result is on stdout.
    let is_error = stderr.contains("\"tool_is_error\"");
    assert!(ok || is_error, "the Inspector CLI failed ({method:?}):\n{stderr}\n{stdout}");
    let result = stdout.as_str();
    serde_json::from_str(result.trim()).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}\n{stderr}"))
}

/// The text of a `tools/call` answer the Inspector printed, and whether it is an error.
fn answer(out: &Value) -> (String, bool) {
    let blocks = out["content"].as_array().cloned().unwrap_or_default();
    let text = blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n");
    (text, out["isError"] == true)
}

/// The Inspector CLI's list, search and calls against `target`.
async fn check_inspector(binary: &Path, target: &[&str], transport: &str) {
    let listed = inspector(binary, target, &["--method", "tools/list"]).await;
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["tool_search", "call_tool"], "{transport}: {listed}");
    let call = |args: Vec<&'static str>| {
        let mut method = vec!["--method", "tools/call"];
        method.extend(args);
        async move { answer(&inspector(binary, target, &method).await) }
    };
    let (found, error) =
        call(vec!["--tool-name", "tool_search", "--tool-arg", "query=stock price for a ticker symbol"]).await;
    assert!(!error, "{transport}: {found}");
    let found: Value = serde_json::from_str(&found).unwrap();
    assert_eq!(found["matches"][0]["name"], "fixture__stock_quote", "{transport}: {found}");
    let via =
        |name: &'static str, arguments: &'static str| vec!["--tool-name", "call_tool", "--tool-arg", name, arguments];
    let (good, error) = call(via("name=fixture__stock_quote", r#"arguments={"symbol": "ACME"}"#)).await;
    assert!(!error && good.contains("ACME"), "{transport}: {good}");
    let (bad, error) = call(via("name=fixture__stock_quote", r#"arguments={"symbol": 42}"#)).await;
    assert!(error && bad.contains("symbol"), "{transport}: {bad}");
    for name in ["name=fixture__no_such_tool", "name=fixture__crypto_price"] {
        let (text, error) = call(via(name, r#"arguments={"symbol": "BTC"}"#)).await;
        assert!(error && !text.contains("crypto_price"), "{transport} {name}: {text}");
    }
    eprintln!("the Inspector CLI over {transport}: list, search, good, bad, unknown and Hidden calls passed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_and_the_inspector_cli_use_the_gateway_over_stdio_and_http() {
    let Some((python_bin, inspector_bin)) = clients() else { return };
    let dir = temp_dir("clients");
    let cache = dir.join("cache");
    let config =
        write_config(&dir, json!({"fixture": fixture(json!({}), json!({"tools": {"crypto_price": "hidden"}}))}));
    warm(&config, &cache).await;
    let config_path = dir.join("config.json");
    let (config_arg, cache_arg) = (config_path.to_str().unwrap(), cache.to_str().unwrap());
    let stdio = [GATEWAY, "--config", config_arg, "--cache-dir", cache_arg];

    python(&python_bin, &[&["stdio"], &stdio[..]].concat(), "stdio").await;
    check_inspector(&inspector_bin, &stdio, "stdio").await;

    let gateway = spawn_http(&config_path, &cache, "127.0.0.1:0", &[], &[]).await;
    python(&python_bin, &["http", &gateway.url], "http").await;
    check_inspector(&inspector_bin, &[&gateway.url], "http").await;
    let log = gateway.stop().await;
    assert!(!log.contains("panicked"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
