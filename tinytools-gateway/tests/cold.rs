//! The first launch, as a client sees it: an empty cache, servers listed in the background.
//! `tools/list` answers with what is known and says what is still starting; `tool_search` and
//! `call_tool` wait for the servers they need instead of answering "no match"; the client is
//! told once when the list has filled in; and a server that cannot start is named, with a
//! one-line reason and no path, in the manifest, in search answers and in the answer to a call
//! of its tools, and logged once.
//!
//! Nothing here is timed: a slow start is one the test ends (the fixture waits for a file), and
//! every wait is bounded so that a hang fails instead of blocking.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use rmcp::ServerHandler;
use serde_json::{Value, json};
use tinytools_gateway::GatewayOptions;

use common::*;

fn description(tools: &[rmcp::model::Tool]) -> String {
    tools[0].description.as_deref().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_start_answers_with_what_is_known_waits_where_it_must_and_notifies_once() {
    let dir = temp_dir("cold-start");
    let ready = dir.join("slow-may-start");
    let config = write_config(
        &dir,
        json!({
            "alpha": fixture(json!({}), json!({})),
            "beta": fixture(json!({}), json!({})),
            "slow": fixture(json!({"FIXTURE_WAIT_FOR": ready}), json!({"start_timeout_secs": 60})),
        }),
    );
    let counter = Counter::default();
    let options = GatewayOptions::default().with_discovery_wait(Duration::ZERO);
    let (client, gateway) = connect_exactly(&config, &dir.join("cache"), counter.clone(), options).await;
    let capabilities = client.peer().peer_info().unwrap().capabilities.tools.clone().unwrap();
    assert_eq!(capabilities.list_changed, Some(true), "a cold start will say when its list fills in");
    let instructions = client.peer().peer_info().unwrap().instructions.clone().unwrap_or_default();
    assert!(instructions.contains("slow (starting)"), "{instructions}");
    assert!(!instructions.contains("not known yet"), "{instructions}");

    // alpha and beta list their tools; slow waits for its file.
    let discovery = gateway.discovery().clone();
    assert!(eventually(|| discovery.pending().len() == 1).await, "{:?}", discovery.pending());
    let listed = description(&list(&client).await);
    assert!(listed.contains("Still starting: 1 of 3 servers;"), "{listed}");

    // A confident match among the servers already listed is answered at once, saying what
    // is still starting.
    let answer = search(&client, "stock price for a ticker symbol").await;
    let first = answer["matches"][0]["name"].as_str().unwrap();
    assert!(first == "alpha__stock_quote" || first == "beta__stock_quote", "{answer}");
    assert_eq!(answer["starting"], json!(["slow"]), "{answer}");
    assert!(answer["starting_note"].as_str().unwrap().contains("search again"), "{answer}");

    // A call of the starting server's tool waits for it, instead of "no tool by that name".
    let call = {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            let arguments = json!({"name": "slow__stock_quote", "arguments": {"symbol": "ACME"}});
            let request = rmcp::model::CallToolRequestParams::new("call_tool")
                .with_arguments(arguments.as_object().unwrap().clone());
            peer.call_tool(request).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!call.is_finished(), "the call waits for its server");
    std::fs::write(&ready, "").unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(30), call).await.unwrap().unwrap().unwrap();
    assert_eq!(answered.is_error, Some(false), "{}", text(&answered));
    assert!(text(&answered).contains("ACME"), "{}", text(&answered));

    // Discovery is done: one notification, then the full manifest.
    assert!(eventually(|| counter.count() >= 1).await, "notified once the list filled in");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(counter.count(), 1, "notified once");
    let full = description(&list(&client).await);
    assert!(!full.contains("Still starting"), "{full}");
    assert_eq!(gateway.catalog().names().filter(|name| name.starts_with("slow__")).count(), fixture_tool_count());
    assert!(!gateway.get_info().instructions.unwrap_or_default().contains("starting"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_that_names_a_starting_server_waits_for_it() {
    let dir = temp_dir("cold-named");
    let ready = dir.join("weather-may-start");
    let config = write_config(
        &dir,
        json!({
            "alpha": fixture(json!({}), json!({"allow": ["stock_quote"]})),
            "weather": fixture(json!({"FIXTURE_WAIT_FOR": ready}), json!({"allow": ["weather_*"]})),
        }),
    );
    let options = GatewayOptions::default().with_discovery_wait(Duration::ZERO);
    let (client, gateway) = connect_exactly(&config, &dir.join("cache"), (), options).await;
    let discovery = gateway.discovery().clone();
    assert!(eventually(|| discovery.pending().len() == 1).await, "{:?}", discovery.pending());
    let search = {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            let request = rmcp::model::CallToolRequestParams::new("tool_search")
                .with_arguments(json!({"query": "weather forecast"}).as_object().unwrap().clone());
            peer.call_tool(request).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!search.is_finished(), "nothing known fits: the search waits for the server it names");
    std::fs::write(&ready, "").unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(30), search).await.unwrap().unwrap().unwrap();
    let answer: Value = serde_json::from_str(&text(&answered)).unwrap();
    assert_eq!(answer["matches"][0]["name"], "weather__weather_forecast", "{answer}");
    assert!(answer.get("starting").is_none(), "{answer}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_named_with_its_reason_and_no_path() {
    let dir = temp_dir("cold-broken");
    let never = dir.join("never-created");
    let quick = json!({"start_timeout_secs": 1});
    let config = write_config(
        &dir,
        json!({
            "good": fixture(json!({}), json!({})),
            "ghost": {"command": "/nonexistent/dir/ghost-mcp"},
            "unset": {"command": fixture_server(), "env": {"KEY": "${TINYTOOLS_GATEWAY_COLD_TEST_UNSET}"}},
            "flaky": fixture(json!({"FIXTURE_EXIT_UNLESS": never}), json!({})),
            "hangs": fixture(json!({"FIXTURE_HANG_UNLESS": never}), quick),
        }),
    );
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let manifest = description(&list(&client).await);
    for (server, reason) in [
        ("flaky", "exited during the MCP handshake"),
        ("ghost", "command `ghost-mcp` not found"),
        ("hangs", "timed out: no MCP handshake within 1 s"),
        ("unset", "environment variable `TINYTOOLS_GATEWAY_COLD_TEST_UNSET` is not set"),
    ] {
        let named = format!("{server} ({reason})");
        assert!(manifest.contains(&named), "the manifest names {named}: {manifest}");
    }
    assert!(manifest.contains("Could not start: "), "{manifest}");

    let answer = search(&client, "ghost server").await;
    assert_eq!(answer["unavailable"]["ghost"], "command `ghost-mcp` not found", "{answer}");
    let instructions = gateway.get_info().instructions.unwrap_or_default();
    assert!(instructions.contains("ghost (could not start: command `ghost-mcp` not found)"), "{instructions}");

    let mut seen = vec![manifest, answer.to_string(), instructions];
    for _ in 0..2 {
        let called = call_tool(&client, "ghost__haunt", json!({})).await;
        assert_eq!(called.is_error, Some(true));
        let message = text(&called);
        assert!(message.contains("`ghost` server could not be started: command `ghost-mcp` not found"), "{message}");
        seen.push(message);
    }
    let unset = text(&call_tool(&client, "unset__stock_quote", json!({"symbol": "ACME"})).await);
    assert!(unset.contains("`TINYTOOLS_GATEWAY_COLD_TEST_UNSET` is not set"), "{unset}");
    seen.push(unset);
    let dir_text = dir.to_string_lossy().into_owned();
    for text in &seen {
        assert!(!text.contains("/nonexistent") && !text.contains(&dir_text), "a path reached the client: {text}");
    }
    let good = call_tool(&client, "good__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(good.is_error, Some(false), "{}", text(&good));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_logs_a_server_that_cannot_start_once_per_launch() {
    use rmcp::ServiceExt;
    use rmcp::transport::TokioChildProcess;

    let dir = temp_dir("cold-log");
    write_config(&dir, json!({"good": fixture(json!({}), json!({})), "ghost": {"command": "/nonexistent/ghost-mcp"}}));
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tinytools-gateway"));
    command.arg("--config").arg(dir.join("config.json")).arg("--cache-dir").arg(dir.join("cache"));
    command.arg("--discovery-wait").arg("30");
    let (transport, stderr) = TokioChildProcess::builder(command).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let stderr = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let mut log = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut log).await;
        }
        log
    });
    let client = ().serve(transport).await.expect("handshake with the binary");
    assert!(description(&list(&client).await).contains("ghost (command `ghost-mcp` not found)"));
    for _ in 0..3 {
        let called = call_tool(&client, "ghost__haunt", json!({})).await;
        assert!(text(&called).contains("command `ghost-mcp` not found"), "{}", text(&called));
    }
    client.cancel().await.unwrap();
    let log = tokio::time::timeout(Duration::from_secs(10), stderr).await.unwrap().unwrap();
    let lines: Vec<&str> = log.lines().filter(|line| line.contains("`ghost`")).collect();
    assert_eq!(lines.len(), 1, "logged once for the launch, with its reason:\n{log}");
    assert!(lines[0].contains("command `ghost-mcp` not found") && lines[0].contains("WARN"), "{log}");
}
