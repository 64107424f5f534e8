//! Replicas: three `tinytools-gateway --http --shared-sessions` processes sharing one config and
//! one cache directory, behind nginx (round robin) on 127.0.0.1, with ten concurrent rmcp
//! clients in bounded loops. Every request of a session may land on any replica. With every
//! replica live, no request fails; with one killed mid-run, at most the requests in flight on
//! it fail, and each client's next requests succeed. A session deleted through one replica is
//! unknown to the others. Beside it, without nginx: a `notifications/cancelled` that lands on
//! another replica than the one running the call cancels the call.
//!
//! The nginx test needs nginx (`apt-get install nginx`; `.ci/run` installs it). Without it the test says so
//! and passes, unless `TINYTOOLS_NGINX_REQUIRED=1` (`.ci/run` sets it).

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;

use common::*;
use serve::{HttpGateway, connect_http, spawn_http};

const CLIENTS: usize = 10;
/// Rounds (a search and a call each) per client with every replica live, then with one killed.
const LIVE_ROUNDS: usize = 10;
const KILL_ROUNDS: usize = 20;
/// What a loaded machine may take to answer one request before it counts as failed.
const REQUEST_BOUND: Duration = Duration::from_secs(30);

/// The nginx binary, or `None` (skipped, with a note) when it is not installed and not required.
fn nginx() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin"].map(PathBuf::from));
    if let Some(found) = dirs.iter().map(|dir| dir.join("nginx")).find(|path| path.is_file()) {
        return Some(found);
    }
    let why = "nginx is not installed (apt-get install -y nginx); the replica test needs it";
    assert!(!std::env::var("TINYTOOLS_NGINX_REQUIRED").is_ok_and(|value| value == "1"), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// nginx in the foreground as one process, round robin over `replicas`, logging each
/// request's upstream.
struct Nginx {
    child: tokio::process::Child,
    url: String,
    access: PathBuf,
}

impl Nginx {
    async fn start(binary: &Path, dir: &Path, replicas: &[&HttpGateway]) -> Self {
        let temp = dir.join("temp");
        std::fs::create_dir_all(&temp).unwrap();
        let servers: String = replicas
            .iter()
            .map(|replica| {
                let authority = replica.url.trim_start_matches("http://").trim_end_matches("/mcp");
                format!("    server {authority} max_fails=1 fail_timeout=60s;\n")
            })
            .collect();
        let port = free_port();
        let (d, t) = (dir.display(), temp.display());
        let conf = format!(
            "master_process off;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n\
             events {{ worker_connections 512; }}\n\
             http {{\n  log_format upstreams '$request_method $status $upstream_addr';\n  \
             access_log {d}/access.log upstreams;\n  client_body_temp_path {t}/body;\n  \
             proxy_temp_path {t}/proxy;\n  fastcgi_temp_path {t}/fastcgi;\n  uwsgi_temp_path {t}/uwsgi;\n  \
             scgi_temp_path {t}/scgi;\n  upstream gateways {{\n{servers}  }}\n  server {{\n    \
             listen 127.0.0.1:{port};\n    location /mcp {{\n      proxy_pass http://gateways;\n      \
             proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      \
             proxy_set_header Host $http_host;\n      proxy_buffering off;\n      \
             proxy_request_buffering off;\n      proxy_read_timeout 300s;\n      \
             proxy_next_upstream error timeout;\n    }}\n  }}\n}}\n"
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let mut command = tokio::process::Command::new(binary);
        command.arg("-p").arg(dir).arg("-e").arg(dir.join("error.log")).arg("-c").arg(&conf_path);
        // One process (no master and workers), so that killing it leaves nothing behind, and
        // no inherited output, which a stray process would hold open.
        command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        command.stderr(std::process::Stdio::null()).kill_on_drop(true);
        let child = command.spawn().expect("nginx starts");
        let url = format!("http://127.0.0.1:{port}/mcp");
        for _ in 0..250 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Self { child, url, access: dir.join("access.log") };
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
        panic!("nginx did not listen on 127.0.0.1:{port}; its error log:\n{log}");
    }

    /// The replicas that answered a request, from the access log.
    fn upstreams_used(&self) -> BTreeSet<String> {
        let log = std::fs::read_to_string(&self.access).unwrap_or_default();
        log.lines()
            .filter_map(|line| line.split(' ').nth(2).map(str::to_owned))
            .filter(|upstream| upstream.starts_with("127.0.0.1:"))
            .map(|upstream| upstream.trim_end_matches(',').to_owned())
            .collect()
    }
}

/// One round of a client: a search, then a call of what it found. `Err` names what failed.
async fn round(client: &Client) -> Result<(), String> {
    let request = |name: &str, arguments: serde_json::Value| {
        rmcp::model::CallToolRequestParams::new(name.to_owned()).with_arguments(arguments.as_object().unwrap().clone())
    };
    let found = tokio::time::timeout(
        REQUEST_BOUND,
        client.peer().call_tool(request("tool_search", json!({"query": "stock price for a ticker symbol"}))),
    )
    .await
    .map_err(|_| "tool_search timed out".to_owned())?
    .map_err(|error| format!("tool_search: {error}"))?;
    if !text(&found).contains("fixture__stock_quote") {
        return Err(format!("tool_search found something else: {}", text(&found)));
    }
    let arguments = json!({"name": "fixture__stock_quote", "arguments": {"symbol": "ACME"}});
    let quote = tokio::time::timeout(REQUEST_BOUND, client.peer().call_tool(request("call_tool", arguments)))
        .await
        .map_err(|_| "call_tool timed out".to_owned())?
        .map_err(|error| format!("call_tool: {error}"))?;
    match quote.is_error {
        Some(true) => Err(format!("call_tool answered an error: {}", text(&quote))),
        _ if text(&quote).contains("ACME") => Ok(()),
        _ => Err(format!("call_tool answered something else: {}", text(&quote))),
    }
}

/// Each client's outcomes, round by round, while `done` counts finished rounds.
async fn run_clients(clients: &[Client], rounds: usize, done: &AtomicUsize) -> Vec<Vec<Result<(), String>>> {
    let runs = clients.iter().map(|client| async move {
        let mut outcomes = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            outcomes.push(round(client).await);
            done.fetch_add(1, Ordering::SeqCst);
        }
        outcomes
    });
    futures_util::future::join_all(runs).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_nginx_answer_any_request_and_survive_one_killed() {
    let Some(nginx_binary) = nginx() else { return };
    let dir = temp_dir("replicas");
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let (config_path, cache) = (dir.join("config.json"), dir.join("cache"));
    warm(&config, &cache).await;
    let shared = ["--shared-sessions"];
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(spawn_http(&config_path, &cache, "127.0.0.1:0", &shared, &[]).await);
    }
    let nginx = Nginx::start(&nginx_binary, &dir, &replicas.iter().collect::<Vec<_>>()).await;

    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        clients.push(connect_http(&nginx.url, None).await.expect("a session through nginx"));
    }
    let done = AtomicUsize::new(0);
    let live = run_clients(&clients, LIVE_ROUNDS, &done).await;
    let failed: Vec<&String> = live.iter().flatten().filter_map(|outcome| outcome.as_ref().err()).collect();
    assert!(failed.is_empty(), "with every replica live, {} rounds failed: {failed:?}", failed.len());
    assert_eq!(nginx.upstreams_used().len(), 3, "every replica answered: {:?}", nginx.upstreams_used());
    let restored = replicas.iter().filter(|replica| replica.log().contains("session restored from external store"));
    assert!(restored.count() >= 2, "sessions were served by replicas that did not create them");

    // One replica killed a quarter of the way through the next run.
    let done = Arc::new(AtomicUsize::new(0));
    let victim = replicas.remove(0);
    let killer = {
        let done = Arc::clone(&done);
        let mut victim = victim;
        tokio::spawn(async move {
            while done.load(Ordering::SeqCst) < CLIENTS * KILL_ROUNDS / 4 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            victim.child.start_kill().unwrap();
            let _ = victim.child.wait().await;
        })
    };
    let outcomes = run_clients(&clients, KILL_ROUNDS, &done).await;
    killer.await.unwrap();
    let failures: Vec<&String> = outcomes.iter().flatten().filter_map(|outcome| outcome.as_ref().err()).collect();
    eprintln!("with one replica killed: {} of {} rounds failed: {failures:?}", failures.len(), CLIENTS * KILL_ROUNDS);
    assert!(failures.len() <= CLIENTS, "at most the requests in flight on the killed replica fail: {failures:?}");
    for (client, rounds) in outcomes.iter().enumerate() {
        let last_failure = rounds.iter().rposition(Result::is_err);
        if let Some(at) = last_failure {
            assert!(at < KILL_ROUNDS / 2, "client {client} still failed at round {at}: {rounds:?}");
        }
    }
    for client in &clients {
        round(client).await.expect("every client goes on through the live replicas");
    }
    for client in clients {
        client.cancel().await.unwrap();
    }

    deleted_through_one_replica_is_unknown_to_the_others(&replicas).await;
    for replica in replicas {
        replica.stop().await;
    }
    let mut nginx = nginx;
    let _ = nginx.child.kill().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A POST to `url` of one JSON-RPC message, in `session` when given.
fn post(http: &reqwest::Client, url: &str, session: Option<&str>, body: &serde_json::Value) -> reqwest::RequestBuilder {
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
}

/// A session begun on `url` (initialized), by its id.
async fn begin(http: &reqwest::Client, url: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let begun = post(http, url, None, &initialize).send().await.unwrap();
    let session = begun.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = begun.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(http, url, Some(&session), &initialized).send().await.unwrap().status(), 202);
    session
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_landing_on_another_replica_cancels_the_call() {
    let dir = temp_dir("replica-cancel");
    let (events, starts) = (dir.join("events"), dir.join("starts"));
    let env = json!({"FIXTURE_EVENTS": events, "FIXTURE_STARTS": starts});
    let config = write_config(&dir, json!({"fixture": fixture(env, json!({}))}));
    let (config_path, cache) = (dir.join("config.json"), dir.join("cache"));
    warm(&config, &cache).await;
    let shared = ["--shared-sessions"];
    let running = spawn_http(&config_path, &cache, "127.0.0.1:0", &shared, &[]).await;
    let other = spawn_http(&config_path, &cache, "127.0.0.1:0", &shared, &[]).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let session = begin(&http, &running.url).await;

    // A 30 s call on the first replica, cancelled through the second once it runs.
    let sleep = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "call_tool",
        "arguments": {"name": "fixture__fixture_sleep", "arguments": {"secs": 30}}}});
    let began = std::time::Instant::now();
    let call = tokio::spawn(post(&http, &running.url, Some(&session), &sleep).send());
    let mut waited = 0;
    while lines(&starts) == 0 {
        assert!(waited < 300, "the fixture never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 5, "reason": "the user gave up"}});
    assert_eq!(post(&http, &other.url, Some(&session), &cancel).send().await.unwrap().status(), 202);
    let answered = tokio::time::timeout(Duration::from_secs(15), call).await;
    let took = began.elapsed();
    let answer = answered.expect("the call ends long before its 30 s").unwrap().unwrap().text().await.unwrap();
    assert!(answer.contains("cancelled"), "{answer}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    // The downstream server hears of it as the call ends, not before the client's answer.
    let mut cancelled = String::new();
    for _ in 0..100 {
        cancelled = std::fs::read_to_string(&events).unwrap_or_default();
        if cancelled.contains("cancelled 30") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(cancelled.contains("cancelled 30"), "the downstream server was told within 5 s: {cancelled:?}");
    assert!(other.log().contains("session restored from external store"), "the cancellation landed elsewhere");
    let markers = || std::fs::read_dir(cache.join("sessions/cancelled")).map_or(0, |dir| dir.count());
    for _ in 0..100 {
        if markers() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(markers(), 0, "the marker went with the call");
    for replica in [running, other] {
        replica.stop().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A session begun on one replica, used on a second, deleted on the second, is unknown (404)
/// on the first, which still held it.
async fn deleted_through_one_replica_is_unknown_to_the_others(replicas: &[HttpGateway]) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let (first, second) = (&replicas[0].url, &replicas[1].url);
    let session = begin(&http, first).await;
    let listing = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let elsewhere = post(&http, second, Some(&session), &listing).send().await.unwrap();
    assert_eq!(elsewhere.status(), 200, "the second replica restores the session");
    assert!(elsewhere.text().await.unwrap().contains("tool_search"));
    let ended = http
        .delete(second)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);
    assert_eq!(post(&http, first, Some(&session), &listing).send().await.unwrap().status(), 404, "deleted everywhere");
}
