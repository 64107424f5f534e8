//! `tinytools-gateway import`: each client's config under `tests/import/` converts into its
//! `.expected.json`, literal secrets stay out of stderr, and an unknown file says what was
//! expected. Set `TINYTOOLS_GATEWAY_BLESS=1` to rewrite the expected files.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const GATEWAY: &str = env!("CARGO_BIN_EXE_tinytools-gateway");

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/import")
}

fn import(args: &[&str]) -> Output {
    Command::new(GATEWAY).arg("import").args(args).output().unwrap()
}

/// Every string under `env` and `headers` that is not a `${VAR}` reference: the literal
/// values a user's file holds.
fn literals(config: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for server in config["mcpServers"].as_object().unwrap().values() {
        for key in ["env", "headers"] {
            if let Some(map) = server.get(key).and_then(Value::as_object) {
                found.extend(map.values().filter_map(Value::as_str).filter(|v| !v.contains("${")).map(str::to_owned));
            }
        }
    }
    found
}

#[test]
fn every_client_config_converts_to_its_golden_file() {
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| !path.to_string_lossy().ends_with(".expected.json"))
        .collect();
    inputs.sort();
    assert_eq!(inputs.len(), 6, "{inputs:?}");
    let mut secrets = 0;
    for input in &inputs {
        let output = import(&[input.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{}: {stderr}", input.display());
        let actual: Value = serde_json::from_slice(&output.stdout).unwrap();
        let stem = input.file_stem().unwrap().to_string_lossy();
        let golden = dir().join(format!("{stem}.expected.json"));
        if std::env::var_os("TINYTOOLS_GATEWAY_BLESS").is_some() {
            std::fs::write(&golden, &output.stdout).unwrap();
        }
        let expected: Value = serde_json::from_str(&std::fs::read_to_string(&golden).unwrap()).unwrap();
        assert_eq!(actual, expected, "{} differs from {}", input.display(), golden.display());
        // The output loads as the gateway's config.
        tinytools_gateway::GatewayConfig::parse(&golden, &actual.to_string()).unwrap();
        for literal in literals(&actual) {
            secrets += 1;
            assert!(!stderr.contains(&literal), "{}: a literal value reached stderr: {stderr}", input.display());
        }
    }
    assert!(secrets >= 2, "the inputs hold literal secrets to check");
}

#[test]
fn notes_name_what_was_skipped_and_detection_can_be_overridden() {
    let code = import(&[dir().join("claude-code.json").to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&code.stderr);
    assert!(stderr.contains("read") && stderr.contains("as claude-code: 2 server(s)"), "{stderr}");
    assert!(stderr.contains("skipped 1 project-scoped server(s) under projects.<path>.mcpServers"), "{stderr}");

    let vscode = import(&[dir().join("vscode-mcp.json").to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&vscode.stderr);
    assert!(stderr.contains("`${input:github-token}` became the environment variable `${GITHUB_TOKEN}`"), "{stderr}");
    assert!(stderr.contains("dropped the key \"envFile\""), "{stderr}");

    let cursor = dir().join("cursor.json");
    let forced = import(&[cursor.to_str().unwrap(), "--from", "cursor"]);
    assert!(forced.status.success());
    assert!(String::from_utf8_lossy(&forced.stderr).contains("as cursor:"));
    let detected = import(&[cursor.to_str().unwrap()]);
    assert_eq!(forced.stdout, detected.stdout);
}

#[test]
fn an_unknown_or_mismatched_file_names_the_file_and_what_was_expected() {
    let scratch = std::env::temp_dir().join(format!("tinytools-gateway-import-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let settings = scratch.join("settings.json");
    std::fs::write(&settings, r#"{"editor.fontSize": 12, "apiKey": "sk-do-not-print"}"#).unwrap();
    let output = import(&[settings.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{}: not a recognised MCP client config", settings.display())), "{stderr}");
    assert!(stderr.contains("\"mcpServers\"") && stderr.contains("[mcp_servers.<name>]"), "{stderr}");
    assert!(!stderr.contains("sk-do-not-print"), "{stderr}");

    let as_codex = import(&[dir().join("cursor.json").to_str().unwrap(), "--from", "codex"]);
    assert_eq!(as_codex.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&as_codex.stderr).contains("cursor.json: not valid TOML"));

    let unknown = import(&[settings.to_str().unwrap(), "--from", "zed"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown format `zed`"));
    let _ = std::fs::remove_dir_all(&scratch);
}
