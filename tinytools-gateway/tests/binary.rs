//! The real `tinytools-gateway` binary over stdio, driven by rmcp's client: what a client's
//! config launches. A canary secret passed through `${VAR}` never comes back.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use common::*;

const GATEWAY: &str = env!("CARGO_BIN_EXE_tinytools-gateway");
const CANARY: &str = "sk-canary-7f3a9e1c";

fn gateway(config: &std::path::Path, cache: &std::path::Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(GATEWAY);
    command.arg("--config").arg(config).arg("--cache-dir").arg(cache).env("CANARY_TOKEN", CANARY);
    // Everything the gateway and rmcp log reaches stderr, which the canary test reads.
    command.env("TINYTOOLS_GATEWAY_LOG", "trace");
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_stdio_and_no_canary_secret_leaks() {
    let dir = temp_dir("binary");
    let cache = dir.join("cache");
    let server = json!({
        "command": fixture_server(),
        "args": ["--token=${CANARY_TOKEN}"],
        "env": {"FIXTURE_TOKEN": "${CANARY_TOKEN}", "FIXTURE_STARTS": dir.join("starts")},
        "gateway": {"tools": {"currency_convert": "direct"}}
    });
    let missing = json!({"command": fixture_server(), "env": {"KEY": "${TINYTOOLS_GATEWAY_TEST_UNSET_VAR}"}});
    write_config(&dir, json!({"fixture": server, "unset": missing}));
    let config = dir.join("config.json");

    let (transport, stderr) =
        TokioChildProcess::builder(gateway(&config, &cache)).stderr(Stdio::piped()).spawn().unwrap();
    // Drained as it comes: a full pipe would block the gateway's logging.
    let stderr = stderr.map(|mut stderr| {
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut log = String::new();
            let _ = stderr.read_to_string(&mut log).await;
            log
        })
    });
    let client = ().serve(transport).await.expect("handshake with the binary");
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "tinytools-gateway");
    let instructions = info.instructions.clone().unwrap_or_default();

    let tools = list(&client).await;
    assert_eq!(names(&tools), ["tool_search", "call_tool", "fixture__currency_convert"]);
    let answer = search(&client, "weather forecast").await;
    let quote = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(quote.is_error, Some(false), "{}", text(&quote));
    let bad = call_tool(&client, "fixture__stock_quote", json!({"symbol": 7})).await;
    assert_eq!(bad.is_error, Some(true));
    let crash = call_tool(&client, "fixture__fixture_crash", json!({})).await;
    assert_eq!(crash.is_error, Some(true));

    // A server whose ${VAR} is unset: its tools are unknown, and the failure names the variable.
    let unset = tinytools_gateway::GatewayConfig::load(&config).unwrap();
    let launch = unset.servers["unset"].launch(&config, |name| std::env::var(name).ok()).unwrap_err().to_string();
    assert!(
        launch.contains("server `unset`, env.KEY") && launch.contains("TINYTOOLS_GATEWAY_TEST_UNSET_VAR"),
        "{launch}"
    );

    let mut seen = vec![instructions, serde_json::to_string(&tools).unwrap(), answer.to_string()];
    for result in [&quote, &bad, &crash] {
        seen.push(serde_json::to_string(result).unwrap());
    }
    client.cancel().await.unwrap();
    let mut log = String::new();
    if let Some(reader) = stderr
        && let Ok(Ok(text)) = tokio::time::timeout(std::time::Duration::from_secs(5), reader).await
    {
        log = text;
    }
    assert!(log.contains("TRACE") || log.contains("DEBUG"), "the log was captured");
    seen.push(log);
    for entry in std::fs::read_dir(&cache).unwrap() {
        seen.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    assert!(seen.len() >= 8, "the cache holds the fixture's manifest");
    for text in &seen {
        assert!(!text.contains(CANARY), "the canary leaked: {text}");
    }
}

#[test]
fn help_explains_and_bad_command_lines_say_what_to_do() {
    let help = std::process::Command::new(GATEWAY).arg("--help").output().unwrap();
    assert!(help.status.success());
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(text.contains("--config <FILE>") && text.contains("--cache-dir <DIR>"), "{text}");
    assert!(text.contains("import <FILE> [--from <FORMAT>]") && text.contains("report --config <FILE>"), "{text}");
    assert!(text.contains("TINYTOOLS_GATEWAY_LOG"), "{text}");
    let output = std::process::Command::new(GATEWAY).arg("--http").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--http needs an address"));
    for (args, says) in [
        (&["import"][..], "import needs a file"),
        (&["report"][..], "report needs --config <FILE>"),
        (&["report", "--from", "x"][..], "unknown argument `--from` for `report`"),
    ] {
        let output = std::process::Command::new(GATEWAY).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&output.stderr).contains(says), "{args:?}");
    }
}

#[test]
fn a_bad_config_is_reported_with_the_file_and_key() {
    let dir = temp_dir("bad-config");
    let config = dir.join("config.json");
    std::fs::write(&config, r#"{"mcpServers": {"time": {"command": "uvx", "args": ["a", 3]}}}"#).unwrap();
    let output = std::process::Command::new(GATEWAY).arg("--config").arg(&config).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains(&format!("{}: mcpServers.time.args[1]: expected a string, found 3", config.display())),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_is_the_binarys_opt_in_profile() {
    let dir = temp_dir("binary-list-changed");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let config = dir.join("config.json");
    // Profile on first: that run fills the cache, so the second starts warm. (A cold start
    // advertises list_changed whatever the profile: it notifies once discovery is done.)
    for on in [true, false] {
        let mut command = gateway(&config, &dir.join("cache"));
        if on {
            command.arg("--list-changed");
        }
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.expect("handshake with the binary");
        let tools = client.peer().peer_info().unwrap().capabilities.tools.clone().unwrap();
        assert_eq!(tools.list_changed == Some(true), on, "--list-changed given: {on}");
        search(&client, "stock price for a ticker symbol").await;
        let listed = names(&list(&client).await);
        assert_eq!(listed.contains(&"fixture__stock_quote".to_owned()), on, "{listed:?}");
        client.cancel().await.unwrap();
    }
}

#[test]
fn discovery_manifest_and_replica_flags_are_explained_and_checked() {
    let dir = temp_dir("binary-flags");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let config = dir.join("config.json");
    let help = std::process::Command::new(GATEWAY).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--discovery-wait <SECS>",
        "--discovery-concurrency <N>",
        "--manifest-names count|grouped",
        "--shared-sessions",
    ] {
        assert!(help.contains(flag), "--help explains {flag}:\n{help}");
    }
    let run = |args: &[&str]| {
        let output = std::process::Command::new(GATEWAY).arg("--config").arg(&config).args(args).output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    for (args, says) in [
        (&["--discovery-wait", "soon"][..], "--discovery-wait soon: expected a number of seconds"),
        (&["--discovery-wait", "-1"][..], "expected a number of seconds from 0 to 3600"),
        (&["--discovery-concurrency", "0"][..], "expected a whole number from 1 to 256"),
        (&["--manifest-names", "all"][..], "--manifest-names all: expected count or grouped"),
        (&["--shared-sessions"][..], "--shared-sessions only applies with --http"),
        (
            &["--http", "127.0.0.1:0", "--shared-sessions", "--list-changed"][..],
            "cannot be combined with --list-changed",
        ),
        (&["--http", "127.0.0.1:0", "--shared-sessions", "--no-cache"][..], "remove --no-cache"),
    ] {
        let (code, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let output = std::process::Command::new(GATEWAY)
        .arg("--config")
        .arg(&config)
        .env("TINYTOOLS_GATEWAY_MANIFEST_NAMES", "sideways")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("TINYTOOLS_GATEWAY_MANIFEST_NAMES sideways: expected count or grouped"), "{stderr}");
}
