use std::path::Path;
use std::time::Duration;

use super::*;

fn parse(text: &str) -> Result<GatewayConfig, ConfigError> {
    GatewayConfig::parse("claude_desktop_config.json", text)
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn a_claude_desktop_config_with_gateway_keys_reads() {
    let config = parse(
        r#"{
          "mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=${TZ:-UTC}"]},
            "github": {
              "command": "npx",
              "args": ["-y", "@modelcontextprotocol/server-github"],
              "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
              "cwd": "/tmp",
              "gateway": {
                "allow": ["*"], "deny": ["delete_*"], "exposure": "direct",
                "tools": {"create_repository": "hidden", "search_issues": "deferred"},
                "start_timeout_secs": 5, "call_timeout_secs": 2.5
              }
            },
            "remote": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "off": {"command": "nope", "disabled": true}
          }
        }"#,
    )
    .unwrap();
    assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["github", "remote", "time"]);
    let github = &config.servers["github"];
    assert_eq!(github.policy.exposure_of("search_issues"), Exposure::Deferred);
    assert_eq!(github.policy.exposure_of("get_issue"), Exposure::Direct);
    assert_eq!(github.policy.exposure_of("delete_repo"), Exposure::Hidden);
    assert_eq!(github.policy.exposure_of("create_repository"), Exposure::Hidden);
    assert_eq!(github.policy.start_timeout, Duration::from_secs(5));
    assert_eq!(github.policy.call_timeout, Duration::from_millis(2500));
    let time = &config.servers["time"];
    assert_eq!(time.policy, ServerPolicy::default());
    assert_eq!(time.policy.exposure_of("get_current_time"), Exposure::Deferred);
    assert!(matches!(config.servers["remote"].transport, Transport::Http { .. }));
    assert_eq!(github.describe(), "`npx`");
}

#[test]
fn allow_lists_hide_what_they_do_not_name() {
    let config = parse(
        r#"{"mcpServers": {"fs": {"command": "x", "gateway": {"allow": ["read_*"], "tools": {"write": "direct"}}}}}"#,
    )
    .unwrap();
    let policy = &config.servers["fs"].policy;
    assert_eq!(policy.exposure_of("read_file"), Exposure::Deferred);
    assert_eq!(policy.exposure_of("write"), Exposure::Hidden, "allow filters before overrides");
}

#[test]
fn bad_configs_name_the_file_the_key_and_what_is_expected() {
    let cases = [
        (
            r#"{"mcpServers": {"time": {"command": "uvx", "args": ["a", 3]}}}"#,
            "claude_desktop_config.json: mcpServers.time.args[1]: expected a string, found 3",
        ),
        (
            r#"{"servers": {}}"#,
            "claude_desktop_config.json: mcpServers: expected an object of servers by name, found nothing (the key is missing)",
        ),
        (r#"[]"#, "(the top level): expected an object with an \"mcpServers\" object, found an array"),
        (
            r#"{"mcpServers": {"t": {"args": []}}}"#,
            "mcpServers.t: expected a \"command\" (a stdio server) or a \"url\" (a remote server), found neither",
        ),
        (
            r#"{"mcpServers": {"t": {"command": "x", "env": {"A": 1}}}}"#,
            "mcpServers.t.env.A: expected a string, found 1",
        ),
        (
            r#"{"mcpServers": {"t": {"command": "x", "gateway": {"exposure": "direkt"}}}}"#,
            "mcpServers.t.gateway.exposure: expected \"direct\", \"deferred\" or \"hidden\", found \"direkt\"",
        ),
        (
            r#"{"mcpServers": {"t": {"command": "x", "gateway": {"tools": {"a.b": true}}}}}"#,
            "mcpServers.t.gateway.tools[\"a.b\"]: expected \"direct\", \"deferred\" or \"hidden\", found true",
        ),
        (
            r#"{"mcpServers": {"t": {"command": "x", "gateway": {"call_timeout_secs": -1}}}}"#,
            "mcpServers.t.gateway.call_timeout_secs: expected a number of seconds above 0 and at most 86400, found -1",
        ),
        (
            r#"{"mcpServers": {"t": {"command": "x", "gateway": {"alow": []}}}}"#,
            "mcpServers.t.gateway.alow: expected one of the gateway keys allow, deny, exposure, tools, start_timeout_secs, call_timeout_secs, compaction, tool_compaction, found an unknown key",
        ),
        (
            r#"{"mcpServers": {"my server": {"command": "x", "gateway": {"deny": "a*"}}}}"#,
            "mcpServers[\"my server\"].gateway.deny: expected an array of strings, found a string",
        ),
        (
            r#"{"mcpServers": {"t": {"command": "x", "args": ["${OPEN"]}}}"#,
            "mcpServers.t.args[0]: expected a string whose `${...}` references are closed, found a `${` is not closed with `}`",
        ),
        (r#"{"mcpServers": {"t": {"command": "x",}}}"#, "claude_desktop_config.json: not valid JSON at line 1, column"),
    ];
    for (text, expected) in cases {
        let message = error(text);
        assert!(message.contains(expected), "{message}\n  expected to contain: {expected}");
    }
}

#[test]
fn a_string_found_in_the_wrong_place_is_never_quoted() {
    let message = error(r#"{"mcpServers": {"t": {"command": "x", "env": "sk-live-canary"}}}"#);
    assert!(!message.contains("sk-live-canary"), "{message}");
    assert!(message.ends_with("mcpServers.t.env: expected an object of strings, found a string"), "{message}");
}

#[test]
fn expansion_names_the_missing_variable_and_never_shows_values() {
    let config = parse(
        r#"{"mcpServers": {"gh": {"command": "run", "args": ["--token=${TOKEN}"], "env": {"KEY": "${SECRET}"}, "cwd": "${HOME}"}}}"#,
    )
    .unwrap();
    let server = &config.servers["gh"];
    let file = Path::new("claude_desktop_config.json");
    let missing = server.launch(file, |name| (name == "TOKEN").then(|| "canary-123".to_owned())).unwrap_err();
    assert_eq!(
        missing.to_string(),
        "claude_desktop_config.json: server `gh`, env.KEY: the environment variable `SECRET` is not set; \
         set it before starting the gateway, or give a default with `${SECRET:-default}`"
    );
    let launch = server.launch(file, |_| Some("canary-123".to_owned())).unwrap().unwrap();
    assert!(!format!("{launch:?}").contains("canary-123"));
    assert!(!format!("{config:?}").contains("canary-123"));
    let command = launch.command();
    let std = command.as_std();
    assert_eq!(std.get_args().collect::<Vec<_>>(), ["--token=canary-123"]);
    assert!(server.identity().contains("${SECRET}"));
    assert!(!server.identity().contains("canary"));
}

#[test]
fn compaction_budgets_are_read_per_server_and_per_tool() {
    let config = parse(
        r#"{"mcpServers": {"t": {"command": "x", "gateway": {
            "compaction": {"max_schema_bytes": 800, "max_description_bytes": null},
            "tool_compaction": {"big": "unlimited", "small": {"max_description_bytes": 40}}
        }}}}"#,
    )
    .unwrap();
    let policy = &config.servers["t"].policy;
    assert_eq!(policy.compaction_of("other"), SchemaCompaction::UNLIMITED.with_max_schema_bytes(800));
    assert_eq!(policy.compaction_of("big"), SchemaCompaction::UNLIMITED);
    assert_eq!(policy.compaction_of("small"), SchemaCompaction::UNLIMITED.with_max_description_bytes(40));
    let default = parse(r#"{"mcpServers": {"t": {"command": "x"}}}"#).unwrap();
    assert_eq!(default.servers["t"].policy.compaction_of("any"), SchemaCompaction::THIRD_PARTY);

    for (gateway, expected) in [
        (
            r#"{"compaction": "tiny"}"#,
            "mcpServers.t.gateway.compaction: expected \"third_party\", \"unlimited\" or an object",
        ),
        (
            r#"{"compaction": {"max_schema_bytes": 0}}"#,
            "mcpServers.t.gateway.compaction.max_schema_bytes: expected a whole number of bytes above 0, or null, found 0",
        ),
        (
            r#"{"compaction": {"bytes": 10}}"#,
            "mcpServers.t.gateway.compaction.bytes: expected max_schema_bytes or max_description_bytes, found an unknown key",
        ),
        (r#"{"tool_compaction": {"a": 3}}"#, "mcpServers.t.gateway.tool_compaction.a: expected \"third_party\""),
    ] {
        let message = error(&format!(r#"{{"mcpServers": {{"t": {{"command": "x", "gateway": {gateway}}}}}}}"#));
        assert!(message.contains(expected), "{message}\n  expected to contain: {expected}");
    }
}
