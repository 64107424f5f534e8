//! The real `tinytools-gateway` binary serving streamable HTTP (`--http`), driven by rmcp's
//! streamable-HTTP client: the same surface on every connection, a bearer token that is
//! enforced (401 without it) and never printed, and a session a `DELETE` ends.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/serve.rs"]
mod serve;

use serde_json::json;

use common::*;
use serve::{GATEWAY, connect_http, spawn_http};

const TOKEN: &str = "tok-canary-5d21b8e0c4";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_the_same_surface_on_every_http_connection() {
    let dir = temp_dir("http-serve");
    let server = fixture(json!({}), json!({"tools": {"currency_convert": "direct"}}));
    write_config(&dir, json!({"fixture": server}));
    let gateway = spawn_http(&dir.join("config.json"), &dir.join("cache"), "127.0.0.1:0", &[], &[]).await;
    assert!(gateway.url.starts_with("http://127.0.0.1:") && gateway.url.ends_with("/mcp"), "{}", gateway.url);

    let first = connect_http(&gateway.url, None).await.expect("initialize over HTTP");
    let info = first.peer().peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "tinytools-gateway");
    let tools = list(&first).await;
    assert_eq!(names(&tools), ["tool_search", "call_tool", "fixture__currency_convert"]);
    let answer = search(&first, "stock price of a ticker").await;
    let found: Vec<&str> = answer["matches"].as_array().unwrap().iter().filter_map(|m| m["name"].as_str()).collect();
    assert!(found.contains(&"fixture__stock_quote"), "{answer}");
    let quote = call_tool(&first, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(quote.is_error, Some(false), "{}", text(&quote));
    assert!(text(&quote).contains("ACME"), "{}", text(&quote));
    let refused = call_tool(&first, "fixture__stock_quote", json!({"symbol": 7})).await;
    assert_eq!(refused.is_error, Some(true), "admission runs over HTTP too");

    // A second session, while the first is open: the same tools, the same server.
    let second = connect_http(&gateway.url, None).await.expect("a second session");
    assert_eq!(names(&list(&second).await), names(&tools));
    let direct = call(&second, "fixture__currency_convert", json!({"amount": 10.0, "from": "USD", "to": "EUR"})).await;
    assert_eq!(direct.is_error, Some(false), "{}", text(&direct));

    // Anything but /mcp is not found.
    let other = reqwest::Client::new().get(gateway.url.replace("/mcp", "/other")).send().await.unwrap();
    assert_eq!(other.status(), 404);

    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
    // Ctrl-C stops it cleanly.
    let mut gateway = gateway;
    let pid = gateway.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let exit = tokio::time::timeout(std::time::Duration::from_secs(10), gateway.child.wait()).await;
    assert!(exit.expect("it exits within 10 s of SIGINT").unwrap().success(), "{}", gateway.log());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_every_request_without_it_gets_401_and_the_token_is_never_printed() {
    let dir = temp_dir("http-token");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let gateway = spawn_http(
        &dir.join("config.json"),
        &dir.join("cache"),
        "127.0.0.1:0",
        &["--token-env", "GATEWAY_TEST_TOKEN"],
        &[("GATEWAY_TEST_TOKEN", TOKEN)],
    )
    .await;

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let http = reqwest::Client::new();
    let post = |auth: Option<String>| {
        let mut request = http
            .post(&gateway.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.to_string());
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        request.send()
    };
    let missing = post(None).await.unwrap();
    assert_eq!(missing.status(), 401);
    assert_eq!(missing.headers()["www-authenticate"], "Bearer");
    let body = missing.text().await.unwrap();
    assert!(body.contains("Authorization: Bearer"), "{body}");
    assert!(!body.contains(TOKEN));
    assert_eq!(post(Some(format!("Bearer {TOKEN}x"))).await.unwrap().status(), 401);
    assert_eq!(post(Some(format!("Basic {TOKEN}"))).await.unwrap().status(), 401);
    assert_eq!(post(Some(format!("Bearer {TOKEN}"))).await.unwrap().status(), 200);

    let Err(refused) = connect_http(&gateway.url, None).await else { panic!("a session opened without the token") };
    assert!(!refused.contains(TOKEN), "{refused}");
    let client = connect_http(&gateway.url, Some(TOKEN)).await.expect("the token opens a session");
    assert_eq!(names(&list(&client).await), ["tool_search", "call_tool"]);
    let quote = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(quote.is_error, Some(false), "{}", text(&quote));
    client.cancel().await.unwrap();

    let log = gateway.stop().await;
    assert!(log.contains("(bearer token required)"), "{log}");
    assert!(log.lines().count() > 3, "trace logging is on, so the check below means something: {log}");
    assert!(!log.contains(TOKEN), "the token reached the gateway's stderr:\n{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused_and_help_explains_http() {
    let dir = temp_dir("http-refuse");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let config = dir.join("config.json");
    let run =
        |args: &[&str]| std::process::Command::new(GATEWAY).arg("--config").arg(&config).args(args).output().unwrap();
    let refused = run(&["--http", "0.0.0.0:0"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("non-loopback") && stderr.contains("--token-env"), "{stderr}");

    let unset = run(&["--http", "127.0.0.1:0", "--token-env", "TINYTOOLS_GATEWAY_TEST_UNSET_TOKEN"]);
    assert_eq!(unset.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unset.stderr).contains("TINYTOOLS_GATEWAY_TEST_UNSET_TOKEN: the variable is not set")
    );

    let bad = run(&["--http", "example.com:80"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected an IP address and a port"));

    let without_http = run(&["--token-env", "X"]);
    assert_eq!(without_http.status.code(), Some(2));

    let help = std::process::Command::new(GATEWAY).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for needle in ["--http <ADDR:PORT>", "--token-env <VAR>", "Authorization: Bearer", "REMOTE SERVERS"] {
        assert!(help.contains(needle), "--help mentions {needle}:\n{help}");
    }
    assert!(!help.contains("NOT IMPLEMENTED"), "{help}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Raw streamable-HTTP requests, as a client SDK sends them.
struct Raw {
    http: reqwest::Client,
    url: String,
}

impl Raw {
    async fn send(
        &self,
        method: reqwest::Method,
        session: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> reqwest::Response {
        let mut request = self
            .http
            .request(method, &self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        request.send().await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_a_session_with_200_ok_and_the_session_is_then_unknown() {
    let dir = temp_dir("http-delete");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let gateway = spawn_http(&dir.join("config.json"), &dir.join("cache"), "127.0.0.1:0", &[], &[]).await;
    // reqwest here is built without a TLS provider of its own (as in the gateway).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let raw = Raw { http: reqwest::Client::new(), url: gateway.url.clone() };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let started = raw.send(reqwest::Method::POST, None, Some(initialize)).await;
    assert_eq!(started.status(), 200);
    let session = started.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert!(started.text().await.unwrap().contains("tinytools-gateway"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(raw.send(reqwest::Method::POST, Some(&session), Some(initialized)).await.status(), 202);
    let listing = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let listed = raw.send(reqwest::Method::POST, Some(&session), Some(listing.clone())).await;
    assert_eq!(listed.status(), 200);
    assert!(listed.text().await.unwrap().contains("tool_search"));

    // What the Python SDK reads as success (it logs "Session termination failed: 202").
    let ended = raw.send(reqwest::Method::DELETE, Some(&session), None).await;
    assert_eq!(ended.status(), 200, "{:?}", ended.text().await);
    let after = raw.send(reqwest::Method::POST, Some(&session), Some(listing)).await;
    assert_eq!(after.status(), 404, "a terminated session is unknown");
    // DELETE without a session says what is missing.
    assert_eq!(raw.send(reqwest::Method::DELETE, None, None).await.status(), 400);
    gateway.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
