//! `tinytools-gateway import`: another MCP client's config file, converted into the
//! gateway's `mcpServers` JSON.
//!
//! | `--from` | file | servers under |
//! |---|---|---|
//! | `claude-desktop` | `claude_desktop_config.json` | `mcpServers` |
//! | `claude-code` | `~/.claude.json`, `.mcp.json` | `mcpServers` (`projects.<path>.mcpServers` skipped, with a note) |
//! | `cursor` | `~/.cursor/mcp.json` | `mcpServers` |
//! | `vscode` | `.vscode/mcp.json`, `settings.json` | `servers`, or `mcp.servers` |
//! | `codex` | `~/.codex/config.toml` | `[mcp_servers.<name>]` |
//!
//! Without `--from` the format is told from the file: TOML with `mcp_servers` is Codex's,
//! JSON with `mcpServers` is Claude's or Cursor's, JSON with `servers` or `mcp.servers` is VS
//! Code's. JSON may carry `//` and `/* */` comments and trailing commas (VS Code's files do).
//!
//! Each server keeps `command`, `args`, `env`, `cwd` (or `url`, `headers`) and `disabled`;
//! VS Code's `${env:VAR}` becomes `${VAR}` and its `${input:id}` prompts become the
//! environment variable `${ID}`; Codex's `enabled`, `startup_timeout_sec`,
//! `tool_timeout_sec`, `enabled_tools`, `disabled_tools`, `bearer_token_env_var`,
//! `http_headers` and `env_http_headers` become their gateway equivalents. Every other key
//! is dropped with a [note](Imported::notes). Literal values (secrets included) are copied
//! as they are, since the file already holds them; a note never quotes a value, only keys.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::config::GatewayConfig;

/// The client whose config is imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientFormat {
    /// Claude Desktop's `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Claude Code's `~/.claude.json` or a project's `.mcp.json`.
    ClaudeCode,
    /// Cursor's `mcp.json`.
    Cursor,
    /// VS Code's `mcp.json` or `settings.json`.
    VsCode,
    /// Codex's `config.toml`.
    Codex,
}

impl ClientFormat {
    /// Every format, in `--from` order.
    pub const ALL: [Self; 5] = [Self::ClaudeDesktop, Self::ClaudeCode, Self::Cursor, Self::VsCode, Self::Codex];

    /// Its `--from` name.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "claude-desktop",
            Self::ClaudeCode => "claude-code",
            Self::Cursor => "cursor",
            Self::VsCode => "vscode",
            Self::Codex => "codex",
        }
    }

    /// The format of a `--from` name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|format| format.name() == name)
    }
}

/// Why a file could not be imported. Its message names the file and what was expected, and
/// never quotes a value from the file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", file.display())]
pub struct ImportError {
    /// The file.
    pub file: PathBuf,
    /// What is wrong and what was expected.
    pub message: String,
}

/// A converted config.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The format read (detected, or as given).
    pub format: ClientFormat,
    /// `{"mcpServers": {...}}`, ready for `--config`.
    pub config: Value,
    /// What was skipped or changed, for stderr: keys and names, never values.
    pub notes: Vec<String>,
}

const EXPECTED: &str = "expected a Claude Desktop, Claude Code or Cursor config (JSON with an \"mcpServers\" \
     object), a VS Code one (JSON with \"servers\" or \"mcp\": {\"servers\"}), or a Codex config.toml \
     ([mcp_servers.<name>] tables)";

/// Reads and converts a client's config file; `from` is detected when `None`.
///
/// # Errors
/// [`ImportError`] when the file cannot be read, is neither JSON nor TOML, holds no servers
/// where its format keeps them, or a server entry is not of the format's shape.
pub fn import_file(file: impl AsRef<Path>, from: Option<ClientFormat>) -> Result<Imported, ImportError> {
    let file = file.as_ref();
    let text = std::fs::read_to_string(file)
        .map_err(|error| ImportError { file: file.to_owned(), message: format!("could not read it ({error})") })?;
    import_text(file, &text, from)
}

/// Converts a client's config text; `file` names it in messages and its extension helps
/// detection.
///
/// # Errors
/// As [`import_file`].
pub fn import_text(file: impl AsRef<Path>, text: &str, from: Option<ClientFormat>) -> Result<Imported, ImportError> {
    let file = file.as_ref();
    let fail = |message: String| ImportError { file: file.to_owned(), message };
    let toml_named = file.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("toml"));
    let root = parse_root(text, from, toml_named).map_err(fail)?;
    import_value(file, &root, from)
}

/// Converts a client's config already parsed into a JSON value (Codex's TOML as its JSON
/// equivalent); `file` names it in messages. `tinytools-gateway setup` passes the servers it
/// moves this way, with the gateway's own entry left out.
///
/// # Errors
/// As [`import_file`], less the syntax errors.
pub fn import_value(file: impl AsRef<Path>, root: &Value, from: Option<ClientFormat>) -> Result<Imported, ImportError> {
    let file = file.as_ref();
    let fail = |message: String| ImportError { file: file.to_owned(), message };
    let Some(object) = root.as_object() else {
        return Err(fail(format!("the top level is not an object; {EXPECTED}")));
    };
    let format = match from {
        Some(format) => format,
        None => detect(object).ok_or_else(|| {
            let keys: Vec<_> = object.keys().take(8).map(|k| format!("\"{k}\"")).collect();
            fail(format!(
                "not a recognised MCP client config (top-level keys: {}); {EXPECTED}, or name the format with \
                 --from claude-desktop|claude-code|cursor|vscode|codex",
                if keys.is_empty() { "none".to_owned() } else { keys.join(", ") }
            ))
        })?,
    };
    let mut notes = Vec::new();
    let servers = server_entries(format, object, &mut notes).map_err(&fail)?;
    let mut converted = Map::new();
    for (name, entry) in servers.into_iter().flatten() {
        let Some(entry) = entry.as_object() else {
            return Err(fail(format!("server `{name}` is not an object")));
        };
        let server = match format {
            ClientFormat::Codex => codex_server(name, entry, &mut notes),
            _ => json_server(name, entry, &mut notes),
        }
        .map_err(&fail)?;
        converted.insert(name.clone(), server);
    }
    let config = json!({"mcpServers": converted});
    // The output must load as the gateway's config; its errors name keys, never values.
    GatewayConfig::parse(file, &config.to_string())
        .map_err(|error| fail(format!("the converted config does not load: {error}")))?;
    Ok(Imported { format, config, notes })
}

/// The config text as a JSON value: TOML for Codex (or a `.toml` file when no format is named),
/// else JSON with comments, or TOML holding `mcp_servers` when no format is named.
fn parse_root(text: &str, from: Option<ClientFormat>, toml_named: bool) -> Result<Value, String> {
    if from == Some(ClientFormat::Codex) || (from.is_none() && toml_named) {
        parse_toml(text).map_err(|reason| format!("not valid TOML ({reason}); {EXPECTED}"))
    } else {
        match serde_json::from_str::<Value>(&strip_jsonc(text)) {
            Ok(root) => Ok(root),
            Err(json_error) => match (from, parse_toml(text)) {
                (None, Ok(root)) if root.get("mcp_servers").is_some() => Ok(root),
                _ => Err(format!(
                    "not valid JSON (line {}, column {}); {EXPECTED}",
                    json_error.line(),
                    json_error.column()
                )),
            },
        }
    }
}

/// The servers object of `format`'s config; `None` when only project-scoped servers exist,
/// which `notes` then reports.
fn server_entries<'a>(
    format: ClientFormat,
    object: &'a Map<String, Value>,
    notes: &mut Vec<String>,
) -> Result<Option<&'a Map<String, Value>>, String> {
    match format {
        ClientFormat::ClaudeDesktop | ClientFormat::ClaudeCode | ClientFormat::Cursor => {
            let projects = object.get("projects").and_then(Value::as_object).map_or(0, |projects| {
                projects
                    .values()
                    .filter_map(|project| project.get("mcpServers").and_then(Value::as_object))
                    .map(Map::len)
                    .sum::<usize>()
            });
            if projects > 0 {
                notes.push(format!(
                    "skipped {projects} project-scoped server(s) under projects.<path>.mcpServers; only the \
                     top-level mcpServers were imported"
                ));
            }
            match object.get("mcpServers") {
                Some(servers) => servers_object(servers, "mcpServers").map(Some),
                None if projects > 0 => Ok(None),
                None => Err(format!("no \"mcpServers\" object; {EXPECTED}")),
            }
        }
        ClientFormat::VsCode => match (object.get("servers"), object.get("mcp").and_then(|mcp| mcp.get("servers"))) {
            (Some(servers), _) => servers_object(servers, "servers").map(Some),
            (None, Some(servers)) => servers_object(servers, "mcp.servers").map(Some),
            (None, None) => Err(format!("no \"servers\" or \"mcp.servers\" object; {EXPECTED}")),
        },
        ClientFormat::Codex => match object.get("mcp_servers") {
            Some(servers) => servers_object(servers, "mcp_servers").map(Some),
            None => Err(format!("no [mcp_servers.<name>] tables; {EXPECTED}")),
        },
    }
}

fn detect(object: &Map<String, Value>) -> Option<ClientFormat> {
    if object.contains_key("mcp_servers") {
        Some(ClientFormat::Codex)
    } else if object.contains_key("projects") {
        Some(ClientFormat::ClaudeCode)
    } else if object.contains_key("mcpServers") {
        Some(ClientFormat::ClaudeDesktop)
    } else if object.contains_key("servers") || object.get("mcp").is_some_and(|mcp| mcp.get("servers").is_some()) {
        Some(ClientFormat::VsCode)
    } else {
        None
    }
}

fn servers_object<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>, String> {
    value.as_object().ok_or_else(|| format!("{path} is not an object of servers by name; {EXPECTED}"))
}

fn parse_toml(text: &str) -> Result<Value, String> {
    let table: toml::Table = toml::from_str(text).map_err(|error| first_line(&error.to_string()))?;
    serde_json::to_value(table).map_err(|error| error.to_string())
}

fn first_line(text: &str) -> String {
    text.lines().find(|line| !line.trim().is_empty()).unwrap_or("a syntax error").trim().to_owned()
}

/// A Claude Desktop, Claude Code, Cursor or VS Code server entry.
fn json_server(name: &str, entry: &Map<String, Value>, notes: &mut Vec<String>) -> Result<Value, String> {
    let mut out = Map::new();
    let kind = entry.get("type").and_then(Value::as_str);
    if kind == Some("sse") {
        notes.push(format!(
            "server `{name}`: an SSE server; the gateway reaches remote servers over streamable HTTP only"
        ));
    }
    for (key, value) in entry {
        match key.as_str() {
            "command" | "cwd" | "url" => {
                let text = value.as_str().ok_or_else(|| format!("server `{name}`: \"{key}\" is not a string"))?;
                out.insert(key.clone(), Value::String(vscode_references(name, key, text, notes)));
            }
            "args" => {
                let items = value.as_array().ok_or_else(|| format!("server `{name}`: \"args\" is not an array"))?;
                let args = items
                    .iter()
                    .enumerate()
                    .map(|(i, arg)| match arg {
                        Value::String(text) => Ok(Value::String(vscode_references(name, "args", text, notes))),
                        Value::Number(n) => Ok(Value::String(n.to_string())),
                        _ => Err(format!("server `{name}`: args[{i}] is not a string")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert(key.clone(), Value::Array(args));
            }
            "env" | "headers" => {
                out.insert(key.clone(), Value::Object(string_map(name, key, value, notes)?));
            }
            "disabled" if value.is_boolean() => {
                out.insert(key.clone(), value.clone());
            }
            "gateway" => {
                out.insert(key.clone(), value.clone());
            }
            "type" => {}
            other => {
                notes.push(format!("server `{name}`: dropped the key \"{other}\", which the gateway does not use"))
            }
        }
    }
    if !out.contains_key("command") && !out.contains_key("url") {
        return Err(format!("server `{name}` has neither \"command\" (a stdio server) nor \"url\" (a remote server)"));
    }
    Ok(Value::Object(out))
}

/// A Codex `[mcp_servers.<name>]` table.
fn codex_server(name: &str, entry: &Map<String, Value>, notes: &mut Vec<String>) -> Result<Value, String> {
    let mut out = Map::new();
    let mut gateway = Map::new();
    let mut headers = Map::new();
    for (key, value) in entry {
        let string = || value.as_str().ok_or_else(|| format!("server `{name}`: `{key}` is not a string"));
        let strings = || {
            value
                .as_array()
                .filter(|items| items.iter().all(Value::is_string))
                .cloned()
                .ok_or_else(|| format!("server `{name}`: `{key}` is not an array of strings"))
        };
        let seconds =
            || value.as_f64().filter(|s| *s > 0.0).ok_or_else(|| format!("server `{name}`: `{key}` is not a number"));
        match key.as_str() {
            "command" | "cwd" | "url" => {
                out.insert(key.clone(), Value::String(string()?.to_owned()));
            }
            "args" => {
                out.insert(key.clone(), Value::Array(strings()?));
            }
            "env" => {
                out.insert(key.clone(), Value::Object(string_map(name, key, value, notes)?));
            }
            "http_headers" => headers.extend(string_map(name, key, value, notes)?),
            "env_http_headers" => {
                for (header, variable) in string_map(name, key, value, notes)? {
                    let variable = variable.as_str().unwrap_or_default();
                    headers.insert(header, Value::String(format!("${{{variable}}}")));
                }
            }
            "bearer_token_env_var" => {
                headers.insert("Authorization".into(), Value::String(format!("Bearer ${{{}}}", string()?)));
            }
            "enabled" => {
                if value.as_bool() == Some(false) {
                    out.insert("disabled".into(), Value::Bool(true));
                }
            }
            "startup_timeout_sec" => {
                seconds()?;
                gateway.insert("start_timeout_secs".into(), value.clone());
            }
            "startup_timeout_ms" => {
                gateway.insert("start_timeout_secs".into(), json!(seconds()? / 1000.0));
            }
            "tool_timeout_sec" => {
                seconds()?;
                gateway.insert("call_timeout_secs".into(), value.clone());
            }
            "enabled_tools" => {
                gateway.insert("allow".into(), Value::Array(strings()?));
            }
            "disabled_tools" => {
                gateway.insert("deny".into(), Value::Array(strings()?));
            }
            other => notes.push(format!("server `{name}`: dropped the key `{other}`, which the gateway does not use")),
        }
    }
    if !headers.is_empty() {
        out.insert("headers".into(), Value::Object(headers));
    }
    if !gateway.is_empty() {
        out.insert("gateway".into(), Value::Object(gateway));
    }
    if !out.contains_key("command") && !out.contains_key("url") {
        return Err(format!("server `{name}` has neither `command` (a stdio server) nor `url` (a remote server)"));
    }
    Ok(Value::Object(out))
}

/// An object of strings (numbers and booleans are written as strings), references converted.
fn string_map(name: &str, key: &str, value: &Value, notes: &mut Vec<String>) -> Result<Map<String, Value>, String> {
    let map = value.as_object().ok_or_else(|| format!("server `{name}`: \"{key}\" is not an object of strings"))?;
    map.iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(text) => text.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err(format!("server `{name}`: \"{key}.{k}\" is not a string")),
            };
            Ok((k.clone(), Value::String(vscode_references(name, &format!("{key}.{k}"), &text, notes))))
        })
        .collect()
}

/// VS Code's and Cursor's `${env:VAR}` becomes `${VAR}`; a `${input:id}` prompt becomes the
/// environment variable named after it (upper-cased, `_` for other characters), with a note.
fn vscode_references(name: &str, key: &str, text: &str, notes: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        if let Some(variable) = inner.strip_prefix("env:") {
            out.push_str(&format!("${{{variable}}}"));
        } else if let Some(input) = inner.strip_prefix("input:") {
            let mut variable: String =
                input.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
            if variable.is_empty() || variable.starts_with(|c: char| c.is_ascii_digit()) {
                variable.insert(0, '_');
            }
            notes.push(format!(
                "server `{name}`, {key}: the VS Code prompt `${{input:{input}}}` became the environment variable \
                 `${{{variable}}}`; set it before starting the gateway"
            ));
            out.push_str(&format!("${{{variable}}}"));
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// JSON with comments (`//`, `/* */`) and trailing commas made plain JSON; strings are kept
/// as they are.
pub(crate) fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
                out.push(' ');
            }
            (',', _) => {
                // A comma followed only by whitespace and a closing bracket is dropped.
                let mut ahead = chars.clone();
                let mut trailing = false;
                while let Some(next) = ahead.next() {
                    if next.is_whitespace() {
                        continue;
                    }
                    if next == '/' && ahead.peek() == Some(&'/') {
                        ahead.by_ref().find(|c| *c == '\n');
                        continue;
                    }
                    if next == '/' && ahead.peek() == Some(&'*') {
                        ahead.next();
                        let mut last = ' ';
                        ahead.by_ref().find(|c| std::mem::replace(&mut last, *c) == '*' && *c == '/');
                        continue;
                    }
                    trailing = matches!(next, '}' | ']');
                    break;
                }
                if !trailing {
                    out.push(',');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_stripped_outside_strings() {
        let text = "{\n // a comment\n \"a\": \"x // not a comment\", /* block */ \"b\": [1, 2,],\n}";
        let value: Value = serde_json::from_str(&strip_jsonc(text)).unwrap();
        assert_eq!(value, json!({"a": "x // not a comment", "b": [1, 2]}));
        // A trailing comma before a comment and the closing bracket.
        let text = "{\"a\": 1, // one\n /* end */\n}";
        let value: Value = serde_json::from_str(&strip_jsonc(text)).unwrap();
        assert_eq!(value, json!({"a": 1}));
    }

    #[test]
    fn vscode_references_become_environment_references() {
        let mut notes = Vec::new();
        let text = vscode_references("gh", "env.T", "Bearer ${input:github-token} ${env:HOME} ${KEEP}", &mut notes);
        assert_eq!(text, "Bearer ${GITHUB_TOKEN} ${HOME} ${KEEP}");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("`${GITHUB_TOKEN}`"), "{notes:?}");
    }

    #[test]
    fn an_unknown_file_names_the_file_and_what_was_expected() {
        let error = import_text("x.json", r#"{"editor.fontSize": 12}"#, None).unwrap_err().to_string();
        assert!(error.starts_with("x.json: not a recognised MCP client config"), "{error}");
        assert!(error.contains("\"mcpServers\"") && error.contains("mcp_servers"), "{error}");
        let error = import_text("x.json", "not json at all", None).unwrap_err().to_string();
        assert!(error.starts_with("x.json: not valid JSON"), "{error}");
    }
}
