//! `tinytools-gateway report` over the fixture server (the example catalogue): the JSON
//! report's totals agree with each other, a warm cache starts nothing, `--start` does, and a
//! server that cannot start is a failure of its own.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use serde_json::{Value, json};

use common::*;

const GATEWAY: &str = env!("CARGO_BIN_EXE_tinytools-gateway");
const CANARY: &str = "sk-canary-report-51d0";

fn report(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    Command::new(GATEWAY)
        .arg("report")
        .arg("--config")
        .arg(dir.join("config.json"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args(extra)
        .env("CANARY_TOKEN", CANARY)
        .output()
        .unwrap()
}

fn json_report(dir: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let output = report(dir, &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains(CANARY) && !stderr.contains(CANARY), "the canary leaked: {stdout}{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

fn server<'r>(report: &'r Value, name: &str) -> &'r Value {
    report["servers"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap()
}

#[test]
fn the_json_report_is_consistent_and_the_cache_spares_a_start() {
    let dir = temp_dir("report");
    let starts = dir.join("starts");
    write_config(
        &dir,
        json!({
            "fixture": fixture(json!({"FIXTURE_STARTS": starts, "FIXTURE_TOKEN": "${CANARY_TOKEN}"}), json!({"tools": {"currency_convert": "direct"}})),
            "broken": {"command": "/nonexistent/tinytools-gateway-fixture"}
        }),
    );

    let cold = json_report(&dir, &[]);
    eprintln!("{}", serde_json::to_string_pretty(&cold).unwrap());
    let fixture = server(&cold, "fixture");
    // The catalogue's 41 tools, less `calendar_cancel_event` (Hidden by the fixture, so not
    // listed), plus the fixture's own.
    let listed = fixture_tool_count();
    assert_eq!(fixture["tools"], listed);
    assert_eq!(fixture["exposed"], listed);
    assert_eq!(fixture["direct"], 1);
    assert_eq!(fixture["from_cache"], false);
    assert!(fixture["cold_start_ms"].as_u64().is_some(), "{fixture}");
    assert!(fixture["failure"].is_null());
    let (bytes, tokens) =
        (fixture["flattened"]["bytes"].as_u64().unwrap(), fixture["flattened"]["tokens"].as_u64().unwrap());
    assert!(bytes > 10_000, "{bytes}");
    assert!(tokens * 4 < bytes && tokens * 5 > bytes, "about 4.5 bytes a token: {tokens} for {bytes}");

    let broken = server(&cold, "broken");
    assert!(broken["tools"].is_null() && broken["cold_start_ms"].is_null());
    assert_eq!(broken["flattened"]["bytes"], 0);
    let failure = broken["failure"].as_str().unwrap();
    assert!(failure.contains("`broken` server could not be started"), "{failure}");
    assert_eq!(cold["failures"], 1);

    assert_eq!(cold["flattened"]["bytes"], bytes);
    assert_eq!(cold["flattened"]["tokens"], tokens);
    assert_eq!(cold["gateway"]["tools"], json!(["tool_search", "call_tool", "fixture__currency_convert"]));
    let gateway = cold["gateway"]["bytes"].as_u64().unwrap();
    assert!(gateway < bytes && gateway <= 3_500, "gateway {gateway} bytes vs flattened {bytes}");
    assert!(cold["gateway"]["tokens"].as_u64().unwrap() < tokens);
    assert!(cold["saved_percent"].as_f64().unwrap() > 75.0, "{}", cold["saved_percent"]);
    assert_eq!(lines(&starts), 1);

    // Warm: the tools come from the cache, nothing starts, the numbers are the same.
    let warm = json_report(&dir, &[]);
    let fixture = server(&warm, "fixture");
    assert_eq!(fixture["from_cache"], true);
    assert!(fixture["cold_start_ms"].is_null());
    assert_eq!(warm["flattened"], cold["flattened"]);
    assert_eq!(warm["gateway"], cold["gateway"]);
    assert_eq!(lines(&starts), 1, "a warm report starts nothing");

    // --start times every server, cached or not.
    let timed = json_report(&dir, &["--start"]);
    assert!(server(&timed, "fixture")["cold_start_ms"].as_u64().is_some());
    assert_eq!(server(&timed, "fixture")["from_cache"], true);
    assert_eq!(lines(&starts), 2);

    // The table, for people.
    let table = report(&dir, &[]);
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    eprintln!("{text}");
    assert!(text.starts_with("server"), "{text}");
    assert!(text.contains("FAILED") && text.contains("broken failed:") && text.contains("% smaller"), "{text}");
    assert!(!text.contains(CANARY));
}
