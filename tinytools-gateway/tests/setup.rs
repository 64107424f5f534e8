//! `tinytools-gateway setup <CLIENT>`, run as the built binary against a temporary home for
//! each of the five clients: the client's file at its real place gets the gateway's entry with
//! every other key intact, its servers land in a gateway config that loads, a dry run shows the
//! diffs and writes nothing, a backup is made, a second run changes nothing, `--undo` restores
//! the file byte for byte, and a malformed file is refused with its line and nothing written.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use tinytools_gateway::GatewayConfig;
use tinytools_gateway::import::{ClientFormat, import_file};

const GATEWAY: &str = env!("CARGO_BIN_EXE_tinytools-gateway");

/// A temporary home: `HOME` is the directory, `XDG_CONFIG_HOME` its `xdg/`.
struct Home {
    dir: PathBuf,
}

impl Home {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tinytools-gateway-setup-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    fn xdg(&self) -> PathBuf {
        self.dir.join("xdg")
    }

    /// Where `client` keeps its user config, as the client's docs say, on this system.
    fn client_file(&self, client: &str) -> PathBuf {
        let app = |name: &str| -> PathBuf {
            if cfg!(target_os = "macos") {
                self.dir.join("Library/Application Support").join(name)
            } else if cfg!(windows) {
                self.dir.join("appdata").join(name)
            } else {
                self.xdg().join(name)
            }
        };
        match client {
            "claude-code" => self.dir.join(".claude.json"),
            "claude-desktop" => app("Claude").join("claude_desktop_config.json"),
            "cursor" => self.dir.join(".cursor/mcp.json"),
            "vscode" => app("Code").join("User/mcp.json"),
            "codex" => self.dir.join(".codex/config.toml"),
            other => panic!("no client {other}"),
        }
    }

    fn gateway_config(&self, client: &str) -> PathBuf {
        self.xdg().join("tinytools-gateway").join(format!("{client}.json"))
    }

    fn write(&self, file: &Path, text: &str) {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    fn setup(&self, args: &[&str]) -> Output {
        Command::new(GATEWAY)
            .arg("setup")
            .args(args)
            .env("HOME", &self.dir)
            .env("XDG_CONFIG_HOME", self.xdg())
            .env("APPDATA", self.dir.join("appdata"))
            .env_remove("CODEX_HOME")
            .output()
            .unwrap()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn backup(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.tinytools-backup", file.display()))
}

/// One client's file before setup, the text of it that must survive, and its servers.
struct Case {
    client: &'static str,
    format: ClientFormat,
    text: &'static str,
    /// Pieces of the file that setup must leave byte for byte.
    kept: &'static [&'static str],
    /// The servers moved, and those of them that are disabled.
    servers: &'static [&'static str],
    disabled: &'static [&'static str],
    /// The gateway entry's `"type"`.
    kind: Option<&'static str>,
}

const CASES: [Case; 5] = [
    Case {
        client: "claude-code",
        format: ClientFormat::ClaudeCode,
        text: r#"{
  "numStartups": 12,
  "projects": {
    "/work/app": {
      "mcpServers": {"local-only": {"type": "stdio", "command": "node", "args": ["x.js"]}},
      "allowedTools": []
    }
  },
  "mcpServers": {
    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {}},
    "docs": {"type": "http", "url": "https://example.invalid/mcp"}
  },
  "tipsHistory": {"a": 1}
}
"#,
        kept: &[
            "{\n  \"numStartups\": 12,\n  \"projects\": {\n    \"/work/app\": {\n      \"mcpServers\": {\"local-only\": {\"type\": \"stdio\", \"command\": \"node\", \"args\": [\"x.js\"]}},\n      \"allowedTools\": []\n    }\n  },\n  \"mcpServers\": ",
            ",\n  \"tipsHistory\": {\"a\": 1}\n}\n",
        ],
        servers: &["docs", "time"],
        disabled: &[],
        kind: Some("stdio"),
    },
    Case {
        client: "claude-desktop",
        format: ClientFormat::ClaudeDesktop,
        text: r#"{
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
        "old": {"command": "old-server", "disabled": true}
    }
}"#,
        kept: &["{\n    \"globalShortcut\": \"Ctrl+Space\",\n    \"mcpServers\": ", "\n}"],
        servers: &["files", "old"],
        disabled: &["old"],
        kind: None,
    },
    Case {
        client: "cursor",
        format: ClientFormat::Cursor,
        text: r#"{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh-mcp"], "env": {"GITHUB_TOKEN": "${env:GH}"}}}, "x": [1]}"#,
        kept: &["{\"mcpServers\": ", ", \"x\": [1]}"],
        servers: &["gh"],
        disabled: &[],
        kind: None,
    },
    Case {
        client: "vscode",
        format: ClientFormat::VsCode,
        text: r#"{
	// User MCP servers
	"inputs": [
		{"type": "promptString", "id": "api-key", "description": "API key", "password": true},
	],
	"servers": {
		"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}, // fetches
		"search": {"type": "stdio", "command": "node", "args": ["search.js"], "env": {"KEY": "${input:api-key}"}},
	},
	/* the end */
}
"#,
        kept: &[
            "{\n\t// User MCP servers\n\t\"inputs\": [\n\t\t{\"type\": \"promptString\", \"id\": \"api-key\", \"description\": \"API key\", \"password\": true},\n\t],\n\t\"servers\": ",
            ",\n\t/* the end */\n}\n",
        ],
        servers: &["fetch", "search"],
        disabled: &[],
        kind: Some("stdio"),
    },
    Case {
        client: "codex",
        format: ClientFormat::Codex,
        text: r#"# Codex settings
model = "o4-mini"
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.docs.env]
DOCS_TOKEN = "${DOCS_TOKEN}"

[mcp_servers.legacy]
command = "legacy-mcp"
enabled = false

[profiles.fast]
model = "gpt-4.1-mini"
"#,
        kept: &[
            "# Codex settings\nmodel = \"o4-mini\"\napproval_policy = \"on-request\"\n",
            "[profiles.fast]\nmodel = \"gpt-4.1-mini\"\n",
        ],
        servers: &["docs", "legacy"],
        disabled: &["legacy"],
        kind: None,
    },
];

/// The client's servers after setup, read back with the crate's own importer.
fn client_servers(file: &Path, format: ClientFormat) -> Value {
    import_file(file, Some(format)).unwrap().config["mcpServers"].clone()
}

fn check_set_up(home: &Home, case: &Case, file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    for kept in case.kept {
        assert!(text.contains(kept), "{}: lost {kept:?}:\n{text}", case.client);
    }
    let gateway = home.gateway_config(case.client);
    let expected = json!({"tinytools": {"command": GATEWAY, "args": ["--config", gateway.to_str().unwrap()]}});
    assert_eq!(client_servers(file, case.format), expected, "{}:\n{text}", case.client);
    if let Some(kind) = case.kind {
        assert!(text.contains(&format!("\"type\": \"{kind}\"")), "{}:\n{text}", case.client);
    }
    // The servers are in a gateway config that loads; disabled ones stay there, disabled.
    let config = GatewayConfig::load(&gateway).unwrap();
    let enabled: Vec<&str> = case.servers.iter().copied().filter(|name| !case.disabled.contains(name)).collect();
    assert_eq!(config.servers.keys().map(String::as_str).collect::<Vec<_>>(), enabled, "{}", case.client);
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&gateway).unwrap()).unwrap();
    let names: Vec<&str> = raw["mcpServers"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(names, case.servers, "{}", case.client);
    for name in case.disabled {
        assert_eq!(raw["mcpServers"][name]["disabled"], true, "{}: {name}", case.client);
    }
}

#[test]
fn each_client_is_set_up_idempotently_and_undone_byte_for_byte() {
    for case in &CASES {
        let home = Home::new(case.client);
        let file = home.client_file(case.client);
        home.write(&file, case.text);

        let dry = home.setup(&[case.client, "--dry-run"]);
        assert!(dry.status.success(), "{}: {}", case.client, stderr(&dry));
        let out = stdout(&dry);
        let gateway = home.gateway_config(case.client);
        assert!(out.contains(&format!("--- {} (now)", file.display())), "{}: {out}", case.client);
        assert!(out.contains(&format!("+++ {} (after)", gateway.display())), "{}: {out}", case.client);
        assert!(out.contains("\n+") && out.contains("\n-"), "{}: {out}", case.client);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), case.text, "{}: the dry run wrote", case.client);
        assert!(!gateway.exists() && !backup(&file).exists(), "{}: the dry run wrote", case.client);

        let run = home.setup(&[case.client]);
        assert!(run.status.success(), "{}: {}", case.client, stderr(&run));
        assert!(stdout(&run).contains(&format!("backed up {}", file.display())), "{}", stdout(&run));
        assert_eq!(std::fs::read_to_string(backup(&file)).unwrap(), case.text, "{}: backup", case.client);
        check_set_up(&home, case, &file);

        let after = std::fs::read(&file).unwrap();
        let gateway_after = std::fs::read(&gateway).unwrap();
        let again = home.setup(&[case.client]);
        assert!(again.status.success(), "{}: {}", case.client, stderr(&again));
        assert!(stdout(&again).contains("already set up"), "{}: {}", case.client, stdout(&again));
        assert_eq!(std::fs::read(&file).unwrap(), after, "{}: the second run changed the file", case.client);
        assert_eq!(std::fs::read(&gateway).unwrap(), gateway_after, "{}", case.client);

        let undo = home.setup(&[case.client, "--undo"]);
        assert!(undo.status.success(), "{}: {}", case.client, stderr(&undo));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), case.text, "{}: undo", case.client);
        assert!(!backup(&file).exists(), "{}: the backup is left", case.client);
    }
}

#[test]
fn malformed_files_are_refused_with_their_line_and_nothing_is_written() {
    let home = Home::new("malformed");
    let cases = [
        ("cursor", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n  }\n}\n", ":3:", "not valid JSON"),
        (
            "claude-desktop",
            "{\n  \"theme\": 1,\n  \"mcpServers\": [\"a\"]\n}\n",
            ":3:17:",
            "\"mcpServers\" is an array",
        ),
        ("vscode", "{\n  // c\n  \"servers\": \"none\"\n}\n", ":3:14:", "\"servers\" is a string"),
        ("codex", "model = \"o3\"\n\n[mcp_servers.a\ncommand = \"x\"\n", ":3:", "not valid TOML"),
        ("codex", "model = \"o3\"\nmcp_servers = [1]\n", ":2:15:", "\"mcp_servers\" is an array"),
        ("claude-code", "{\"mcpServers\": {\"a\": {\"args\": []}}}", "server `a`", "neither \"command\""),
    ];
    for (client, text, place, what) in cases {
        let file = home.client_file(client);
        home.write(&file, text);
        let output = home.setup(&[client]);
        let error = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{client}: {error}");
        let at = if place.starts_with(':') { format!("{}{place}", file.display()) } else { place.to_owned() };
        assert!(error.contains(&at), "{client}: {error}");
        assert!(error.contains(what) && error.contains("nothing was written"), "{client}: {error}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "{client}");
        assert!(!backup(&file).exists() && !home.gateway_config(client).exists(), "{client}: something was written");
    }
}

#[test]
fn a_missing_file_or_unknown_client_is_refused_with_what_to_do() {
    let home = Home::new("missing");
    let output = home.setup(&["cursor"]);
    assert_eq!(output.status.code(), Some(2));
    let error = stderr(&output);
    let file = home.client_file("cursor");
    assert!(error.contains(&format!("{}: no such file", file.display())), "{error}");
    assert!(error.contains("--file") && error.contains("probably not installed"), "{error}");
    assert!(!file.exists());

    // An empty file is a config without servers.
    home.write(&file, "");
    let output = home.setup(&["cursor"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(client_servers(&file, ClientFormat::Cursor).as_object().unwrap().len(), 1);

    let output = home.setup(&["zed"]);
    assert_eq!(output.status.code(), Some(2));
    let error = stderr(&output);
    assert!(error.contains("unknown client `zed`"), "{error}");
    assert!(error.contains("claude-code, claude-desktop, cursor, vscode, codex"), "{error}");
    let output = home.setup(&["cursor", "--undo", "--name", "x"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn clashes_keep_the_clients_entry_and_changed_files_are_not_overwritten() {
    let home = Home::new("clash");
    let file = home.dir.join("elsewhere/my-mcp.json");
    let gateway = home.dir.join("gw/config.json");
    let original = r#"{"mcpServers": {"time": {"command": "uvx", "args": ["new"]}}}"#;
    home.write(&file, original);
    home.write(&gateway, r#"{"mcpServers": {"time": {"command": "uvx", "args": ["old"]}, "keep": {"command": "k"}}}"#);
    let (file_arg, gateway_arg) = (file.to_str().unwrap(), gateway.to_str().unwrap());
    let args = ["cursor", "--file", file_arg, "--gateway-config", gateway_arg, "--name", "gw"];
    let output = home.setup(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("replaced there: time"), "{}", stdout(&output));
    let config = GatewayConfig::load(&gateway).unwrap();
    assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["keep", "time"]);
    assert!(config.servers["time"].describe().contains("uvx"));
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&gateway).unwrap()).unwrap();
    assert_eq!(raw["mcpServers"]["time"]["args"], json!(["new"]));
    let servers = client_servers(&file, ClientFormat::Cursor);
    assert_eq!(servers["gw"]["args"], json!(["--config", gateway_arg]));

    // A server added since: setup again would need a new backup, and the old one differs.
    let set_up = std::fs::read_to_string(&file).unwrap();
    let edited = set_up.replacen("\"mcpServers\": {", "\"mcpServers\": {\"new\": {\"command\": \"n\"}, ", 1);
    home.write(&file, &edited);
    let output = home.setup(&args);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(stderr(&output).contains("already exists, from an earlier setup"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    // Undo would lose that server: refused too.
    let output = home.setup(&["cursor", "--undo", "--file", file_arg]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("its servers changed since setup wrote it"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    assert_eq!(std::fs::read_to_string(backup(&file)).unwrap(), original);
    // Back as setup left it, undo restores.
    home.write(&file, &set_up);
    let output = home.setup(&["cursor", "--undo", "--file", file_arg]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

#[test]
fn undo_keeps_what_the_client_changed_outside_its_servers() {
    let home = Home::new("claude-state");
    let case = &CASES[0];
    let file = home.client_file(case.client);
    home.write(&file, case.text);
    let output = home.setup(&[case.client]);
    assert!(output.status.success(), "{}", stderr(&output));
    // Claude Code rewrites its own keys in ~/.claude.json as it runs.
    let set_up = std::fs::read_to_string(&file).unwrap();
    home.write(&file, &set_up.replace("\"numStartups\": 12", "\"numStartups\": 13"));

    let dry = home.setup(&[case.client, "--undo", "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(stdout(&dry).contains("-    \"tinytools\": {"), "{}", stdout(&dry));
    assert!(backup(&file).exists());

    let output = home.setup(&[case.client, "--undo"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("changed outside its servers since setup"), "{}", stdout(&output));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        case.text.replace("\"numStartups\": 12", "\"numStartups\": 13")
    );
    assert!(!backup(&file).exists());
}

#[test]
fn help_names_the_subcommand_and_its_flags() {
    let help = Command::new(GATEWAY).arg("--help").output().unwrap();
    let help = stdout(&help);
    for piece in ["tinytools-gateway setup <CLIENT>", "--undo", "--dry-run", "--gateway-config", "--name <ENTRY>"] {
        assert!(help.contains(piece), "--help lacks {piece}:\n{help}");
    }
    assert!(help.contains("claude-code,\n") || help.contains("claude-code, "), "{help}");
}
