//! A gateway whose downstream server is remote (streamable HTTP): a second gateway binary in
//! `--http` mode, with a bearer token, fronting the fixture server. The front gateway runs as
//! the real binary over stdio with every log on, so a canary secret in the remote server's
//! `url` and `headers` can be looked for in its log, its results and its cache.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam, ServerResult};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;

use common::*;
use serve::{GATEWAY, spawn_http};

const CANARY: &str = "sk-remote-canary-93be0d17";

/// Every file under `dir`, read as text.
fn read_all(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&read_all(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()));
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_is_listed_searched_and_called_and_its_secrets_never_leak() {
    let dir = temp_dir("remote");
    // The remote: a gateway over HTTP fronting the fixture, every tool Direct there so the
    // front gateway sees the fixture's own tools. It takes the canary as its bearer token,
    // so a call that succeeds proves the header was sent.
    let upstream_dir = dir.join("upstream");
    std::fs::create_dir_all(&upstream_dir).unwrap();
    write_config(&upstream_dir, json!({"fixture": fixture(json!({}), json!({"exposure": "direct"}))}));
    let upstream_config = upstream_dir.join("config.json");
    let upstream_cache = upstream_dir.join("cache");
    let token_env = [("UPSTREAM_TOKEN", CANARY)];
    let token_arg = ["--token-env", "UPSTREAM_TOKEN"];
    let upstream = spawn_http(&upstream_config, &upstream_cache, "127.0.0.1:0", &token_arg, &token_env).await;
    let port = upstream.url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/mcp").to_owned();

    // A port nothing listens on, for a remote server that cannot be reached.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let front_dir = dir.join("front");
    std::fs::create_dir_all(&front_dir).unwrap();
    write_config(
        &front_dir,
        json!({
            "remote": {
                "url": "http://127.0.0.1:${UPSTREAM_PORT}/mcp",
                "headers": {"Authorization": "Bearer ${CANARY_TOKEN}", "X-Trace": "gateway-test"},
                "gateway": {"start_timeout_secs": 20}
            },
            "down": {
                "url": format!("http://127.0.0.1:{closed}/mcp?key=${{CANARY_TOKEN}}"),
                "headers": {"X-Api-Key": "${CANARY_TOKEN}"},
                "gateway": {"start_timeout_secs": 5}
            }
        }),
    );
    let front_cache = front_dir.join("cache");
    let mut command = tokio::process::Command::new(GATEWAY);
    command.arg("--config").arg(front_dir.join("config.json")).arg("--cache-dir").arg(&front_cache);
    command.env("CANARY_TOKEN", CANARY).env("UPSTREAM_PORT", &port).env("TINYTOOLS_GATEWAY_LOG", "trace");
    let (transport, stderr) = TokioChildProcess::builder(command).stderr(Stdio::piped()).spawn().unwrap();
    let stderr = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let mut log = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut log).await;
        }
        log
    });
    let client = ().serve(transport).await.expect("handshake with the front gateway");

    // The remote's tools were listed at startup (no cache yet) and are found by search.
    let tools = list(&client).await;
    assert_eq!(names(&tools), ["tool_search", "call_tool"]);
    let answer = search(&client, "stock price of a ticker").await;
    let found: Vec<&str> = answer["matches"].as_array().unwrap().iter().filter_map(|m| m["name"].as_str()).collect();
    assert!(found.contains(&"remote__fixture__stock_quote"), "{answer}");
    let quote = call_tool(&client, "remote__fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(quote.is_error, Some(false), "{}", text(&quote));
    assert!(text(&quote).contains("ACME"), "{}", text(&quote));
    let refused = call_tool(&client, "remote__fixture__stock_quote", json!({"symbol": 7})).await;
    assert_eq!(refused.is_error, Some(true), "admitted against the remote tool's own schema");

    // The remote goes away: that call gets a clear error, and the next one after it comes
    // back on the same port reconnects.
    upstream.stop().await;
    let gone = call_tool(&client, "remote__fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(gone.is_error, Some(true), "{}", text(&gone));
    let gone_text = text(&gone);
    eprintln!("the failed call answered: {gone_text}");
    assert!(gone_text.contains("`remote` server"), "{gone_text}");
    // In the remote wording, not a stdio server's.
    assert!(gone_text.contains("could not be reached") && !gone_text.contains("process"), "{gone_text}");
    let again = format!("127.0.0.1:{port}");
    let upstream = spawn_http(&upstream_config, &upstream_cache, &again, &token_arg, &token_env).await;
    let back = call_tool(&client, "remote__fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(back.is_error, Some(false), "the next call reconnects: {}", text(&back));

    client.cancel().await.unwrap();
    upstream.stop().await;
    let log = stderr.await.unwrap();
    // The unreachable server's failure is logged (so the check below means something),
    // with its url as configured.
    assert!(log.contains("down") && log.contains("could not be reached"), "{log}");
    assert!(log.contains("key=${CANARY_TOKEN}"), "the url is shown unexpanded: {log}");
    assert!(!log.contains(CANARY), "the canary reached the gateway's stderr:\n{log}");
    for result in [&quote, &refused, &gone, &back] {
        assert!(!serde_json::to_string(result).unwrap().contains(CANARY), "{result:?}");
    }
    assert!(!answer.to_string().contains(CANARY));
    let cached = read_all(&front_cache);
    assert!(cached.contains("stock_quote"), "the remote's manifest is cached");
    assert!(!cached.contains(CANARY), "the canary reached the cache");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Records every progress notification the gateway sends.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push(params);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_servers_progress_reaches_the_client_under_its_own_token() {
    let dir = temp_dir("remote-progress");
    // The remote: a gateway over HTTP fronting the fixture, whose `fixture_progress` sends one
    // progress notification a step; they travel fixture -> remote gateway -> HTTP -> here.
    let upstream_dir = dir.join("upstream");
    std::fs::create_dir_all(&upstream_dir).unwrap();
    write_config(&upstream_dir, json!({"fixture": fixture(json!({}), json!({"exposure": "direct"}))}));
    let upstream =
        spawn_http(&upstream_dir.join("config.json"), &upstream_dir.join("cache"), "127.0.0.1:0", &[], &[]).await;
    let config = write_config(&dir, json!({"remote": {"url": upstream.url, "gateway": {"start_timeout_secs": 20}}}));
    let recorder = Recorder::default();
    let (client, gateway) = connect_with(&config, &dir.join("cache"), recorder.clone()).await;

    let steps = 4;
    let arguments = json!({"name": "remote__fixture__fixture_progress", "arguments": {"steps": steps}});
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("call_tool").with_arguments(arguments.as_object().unwrap().clone()),
    ));
    let handle = client.peer().send_request_with_option(request, PeerRequestOptions::no_options()).await.unwrap();
    let token = handle.progress_token.clone();
    let ServerResult::CallToolResult(result) = handle.await_response().await.unwrap() else { panic!("a tool result") };
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(text(&result), format!("{steps} steps"));
    let last = f64::from(steps);
    let mut got_last = false;
    for _ in 0..500 {
        got_last = recorder.0.lock().unwrap().iter().any(|p| (p.progress - last).abs() < f64::EPSILON);
        if got_last {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = recorder.0.lock().unwrap().clone();
    assert!(got_last, "the last step reaches the client: {seen:?}");
    for progress in &seen {
        assert_eq!(progress.progress_token, token, "the client's token, not the gateway's: {seen:?}");
        assert_eq!(progress.total, Some(last));
    }
    // The remote connection relayed them: its route is gone now the call is over.
    let relay = gateway.supervisor().server("remote").unwrap().relay().clone();
    assert_eq!(routes_after_drain(&relay).await, 0);
    client.cancel().await.unwrap();
    upstream.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
