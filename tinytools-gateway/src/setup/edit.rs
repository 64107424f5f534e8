//! The client's file read and edited in place: JSON (with comments) by replacing the text of
//! one top-level member's value, Codex's TOML through `toml_edit`. Everything else in the file
//! keeps its bytes.

use std::ops::Range;
use std::path::Path;

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use super::{Client, SetupError};
use crate::admission::json_kind;
use crate::import::strip_jsonc;

/// The entry `setup` writes: the gateway launched on its config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(super) struct GatewayEntry {
    /// `"stdio"` where the client's own entries carry a type (Claude Code, VS Code).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<&'static str>,
    /// The gateway's executable.
    pub(super) command: String,
    /// `["--config", <gateway config>]`.
    pub(super) args: Vec<String>,
}

impl GatewayEntry {
    /// The entry for `client` launching `command --config <config>`.
    pub(super) fn new(client: Client, command: String, config: &Path) -> Self {
        let kind = matches!(client, Client::ClaudeCode | Client::VsCode).then_some("stdio");
        Self { kind, command, args: vec!["--config".into(), config.to_string_lossy().into_owned()] }
    }

    /// The entry as `client` writes it, read back from a server entry that launches the gateway.
    pub(super) fn read(client: Client, entry: &Value) -> Option<Self> {
        if !is_gateway_entry(entry) {
            return None;
        }
        let command = entry.get("command")?.as_str()?.to_owned();
        let args: Option<Vec<String>> =
            entry.get("args")?.as_array()?.iter().map(|arg| arg.as_str().map(str::to_owned)).collect();
        Some(Self { args: args?, ..Self::new(client, command, Path::new("")) })
    }
}

/// Whether a server entry launches tinytools-gateway with a config: such an entry is never
/// imported into a gateway (the gateway would start itself).
pub(super) fn is_gateway_entry(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).map(Path::new);
    let gateway = command.and_then(Path::file_stem).is_some_and(|stem| stem.eq_ignore_ascii_case("tinytools-gateway"));
    let config =
        entry.get("args").and_then(Value::as_array).is_some_and(|args| args.iter().any(|arg| arg == "--config"));
    gateway && config
}

/// A client file, parsed: its servers (JSON's view of them, for Codex too).
#[derive(Debug)]
pub(super) struct Parsed {
    /// The servers object, empty when the key is absent.
    pub(super) servers: Map<String, Value>,
}

/// Parses `text` as `client`'s file and checks its servers key is an object.
pub(super) fn parse(client: Client, file: &Path, text: &str) -> Result<Parsed, SetupError> {
    if text.trim().is_empty() {
        return Ok(Parsed { servers: Map::new() });
    }
    let key = client.servers_key();
    let shape = |offset: usize, found: &str| {
        let (line, column) = line_column(text, offset);
        SetupError::Shape { file: file.to_owned(), line, column, key, found: found.to_owned() }
    };
    let servers = if client == Client::Codex {
        let document = toml_edit::Document::parse(text).map_err(|error| {
            let (line, column) = line_column(text, error.span().map_or(0, |span| span.start));
            let reason = error.message().trim().to_owned();
            SetupError::Syntax { file: file.to_owned(), format: "TOML", line, column, reason }
        })?;
        let table: toml::Table = toml::from_str(text).map_err(|error| {
            let (line, column) = line_column(text, error.span().map_or(0, |span| span.start));
            let reason = error.message().trim().to_owned();
            SetupError::Syntax { file: file.to_owned(), format: "TOML", line, column, reason }
        })?;
        match (document.get(key), table.get(key)) {
            (Some(item), Some(servers)) => match servers.as_table() {
                Some(servers) => serde_json::to_value(servers).ok().and_then(|value| value.as_object().cloned()),
                None => return Err(shape(item.span().map_or(0, |span| span.start), toml_kind(servers))),
            },
            _ => None,
        }
    } else {
        let root: Value = serde_json::from_str(&strip_jsonc(text)).map_err(|error| SetupError::Syntax {
            file: file.to_owned(),
            format: "JSON",
            line: error.line(),
            column: error.column(),
            reason: super::first_clause(&error.to_string()),
        })?;
        let Some(object) = root.as_object() else {
            return Err(shape(text.len() - text.trim_start().len(), "a top level that is not an object"));
        };
        match object.get(key) {
            Some(Value::Object(servers)) => Some(servers.clone()),
            Some(other) => {
                let offset = top_level(text).and_then(|top| top.member(key).map(|m| m.value.start)).unwrap_or(0);
                return Err(shape(offset, json_kind(other)));
            }
            None => None,
        }
    };
    Ok(Parsed { servers: servers.unwrap_or_default() })
}

fn toml_kind(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::Array(_) => "an array",
        toml::Value::String(_) => "a string",
        toml::Value::Table(_) => "a table",
        _ => "a number, boolean or date",
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |last| last.chars().count()) + 1;
    (line, column)
}

/// `text` with the client's servers replaced by `kept` (entries of the file kept as they are,
/// by name) and the gateway's entry under `name`.
pub(super) fn edit(
    client: Client,
    text: &str,
    parsed: &Parsed,
    kept: &[String],
    name: &str,
    entry: &GatewayEntry,
) -> Result<String, SetupError> {
    if client == Client::Codex {
        return Ok(edit_toml(text, kept, name, entry));
    }
    let mut servers: Vec<(&str, Entry<'_>)> =
        kept.iter().filter_map(|k| parsed.servers.get(k).map(|v| (k.as_str(), Entry::Kept(v)))).collect();
    servers.push((name, Entry::Gateway(entry)));
    let servers = Servers(servers);
    Ok(replace_member(text, client.servers_key(), &|indent| render(&servers, indent)))
}

/// `current` with its servers key as it is in `original` (whose text is taken as it is; an
/// empty object, or no `mcp_servers`, when `original` had none): `--undo` of a file whose
/// other keys changed since setup.
pub(super) fn restore_servers(client: Client, current: &str, original: &str) -> String {
    let key = client.servers_key();
    if client == Client::Codex {
        let (Ok(mut now), Ok(before)) =
            (current.parse::<toml_edit::DocumentMut>(), original.parse::<toml_edit::DocumentMut>())
        else {
            return current.to_owned();
        };
        now.remove(key);
        if let Some(servers) = before.get(key) {
            now.insert(key, servers.clone());
        }
        return now.to_string();
    }
    let value = top_level(original)
        .and_then(|top| top.member(key).map(|member| original[member.value.clone()].to_owned()))
        .unwrap_or_else(|| "{}".to_owned());
    replace_member(current, key, &|_| value.clone())
}

/// A server in the servers object `setup` writes.
#[derive(Serialize)]
#[serde(untagged)]
enum Entry<'a> {
    Gateway(&'a GatewayEntry),
    Kept(&'a Value),
}

/// Servers in the order given (serde_json's own map would sort them).
struct Servers<'a>(Vec<(&'a str, Entry<'a>)>);

impl Serialize for Servers<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, entry) in &self.0 {
            map.serialize_entry(name, entry)?;
        }
        map.end()
    }
}

/// `text` with the top-level member `key` set to `value` (its text, given the file's indent
/// unit): its value's text replaced when it is there, else the member added after the last one.
fn replace_member(text: &str, key: &str, value: &dyn Fn(Option<&str>) -> String) -> String {
    let quoted = Value::String(key.to_owned()).to_string();
    let Some(top) = top_level(text) else {
        // An empty file: a new object.
        return format!("{{\n  {quoted}: {}\n}}\n", value(Some("  ")));
    };
    let indent = top.indent.as_deref();
    if let Some(member) = top.member(key) {
        return format!("{}{}{}", &text[..member.value.start], value(indent), &text[member.value.end..]);
    }
    match top.members.last() {
        Some(last) => {
            let (separator, rendered) = match indent {
                Some(indent) => (format!(",\n{indent}"), value(Some(indent))),
                None => (", ".to_owned(), value(None)),
            };
            let at = last.value.end;
            format!("{}{separator}{quoted}: {rendered}{}", &text[..at], &text[at..])
        }
        None => {
            let (open, close) = (top.open + 1, top.close);
            format!("{}\n  {quoted}: {}\n{}", &text[..open], value(Some("  ")), &text[close..])
        }
    }
}

/// `value` as JSON one level in: pretty with the file's indent unit, or on one line when the
/// file's top level is on one line.
fn render(value: &impl Serialize, indent: Option<&str>) -> String {
    let Some(unit) = indent else {
        return serde_json::to_string(value).unwrap_or_default();
    };
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    if value.serialize(&mut serializer).is_err() {
        return String::new();
    }
    // Newlines only stand between tokens (a string's are escaped): each line moves one level in.
    String::from_utf8_lossy(&out).replace('\n', &format!("\n{unit}"))
}

/// The top-level object of a JSON (with comments) text.
pub(super) struct TopLevel {
    open: usize,
    close: usize,
    members: Vec<Member>,
    /// The whitespace before the first member on its line; `None` when the object is on one line.
    indent: Option<String>,
}

/// A top-level member: its key and where its value's text lies.
pub(super) struct Member {
    key: String,
    pub(super) value: Range<usize>,
}

impl TopLevel {
    /// The last member named `key` (the one a JSON parser keeps).
    pub(super) fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().rev().find(|member| member.key == key)
    }
}

/// Scans the top-level object; `None` when the text holds none (it was already checked to
/// parse, so this is the empty file).
pub(super) fn top_level(text: &str) -> Option<TopLevel> {
    let mut scan = Scanner { bytes: text.as_bytes(), pos: 0 };
    scan.trivia();
    if scan.peek() != Some(b'{') {
        return None;
    }
    let open = scan.pos;
    scan.pos += 1;
    let (mut members, mut indent) = (Vec::new(), None);
    loop {
        scan.trivia();
        match scan.peek()? {
            b'}' => break,
            b',' => scan.pos += 1,
            b'"' => {
                let start = scan.pos;
                let key = scan.string();
                if members.is_empty() {
                    let line = text[..start].rfind('\n').filter(|at| *at > open).map(|at| &text[at + 1..start]);
                    indent = line.filter(|line| line.chars().all(char::is_whitespace)).map(str::to_owned);
                }
                let key: String = serde_json::from_str(&text[key]).ok()?;
                scan.trivia();
                if scan.peek()? != b':' {
                    return None;
                }
                scan.pos += 1;
                scan.trivia();
                let value = scan.value();
                members.push(Member { key, value });
            }
            _ => return None,
        }
    }
    Some(TopLevel { open, close: scan.pos, members, indent })
}

struct Scanner<'t> {
    bytes: &'t [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn at(&self, pattern: &[u8]) -> bool {
        self.bytes[self.pos.min(self.bytes.len())..].starts_with(pattern)
    }

    /// Skips whitespace and comments.
    fn trivia(&mut self) {
        loop {
            while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
                self.pos += 1;
            }
            if self.at(b"//") {
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.pos += 1;
                }
            } else if self.at(b"/*") {
                self.pos += 2;
                while self.pos < self.bytes.len() && !self.at(b"*/") {
                    self.pos += 1;
                }
                self.pos = (self.pos + 2).min(self.bytes.len());
            } else {
                return;
            }
        }
    }

    /// A string from its opening quote, its quotes included.
    fn string(&mut self) -> Range<usize> {
        let start = self.pos;
        self.pos += 1;
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'"' => break,
                _ => {}
            }
        }
        start..self.pos.min(self.bytes.len())
    }

    /// Any value from its first byte.
    fn value(&mut self) -> Range<usize> {
        let start = self.pos;
        match self.peek() {
            Some(b'"') => return self.string(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(b) = self.peek() {
                    match b {
                        b'"' => {
                            self.string();
                            continue;
                        }
                        b'/' if self.at(b"//") || self.at(b"/*") => {
                            self.trivia();
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while self.peek().is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b'/') && !b.is_ascii_whitespace()) {
                    self.pos += 1;
                }
            }
        }
        start..self.pos
    }
}

/// Codex's `config.toml` with `[mcp_servers]` holding only `kept` and the gateway's table.
fn edit_toml(text: &str, kept: &[String], name: &str, entry: &GatewayEntry) -> String {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    // `parse` checked the text already.
    let Ok(mut document) = text.parse::<DocumentMut>() else { return text.to_owned() };
    let servers = document.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    if let Some(inline) = servers.as_inline_table().cloned() {
        *servers = Item::Table(inline.into_table());
    }
    if let Some(servers) = servers.as_table_like_mut() {
        let names: Vec<String> = servers.iter().map(|(key, _)| key.to_owned()).collect();
        for server in names.iter().filter(|server| !kept.contains(server)) {
            servers.remove(server);
        }
        let mut table = Table::new();
        table["command"] = value(entry.command.as_str());
        table["args"] = value(entry.args.iter().map(String::as_str).collect::<Array>());
        servers.insert(name, Item::Table(table));
    }
    document.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> GatewayEntry {
        GatewayEntry::new(Client::Cursor, "/bin/tinytools-gateway".into(), Path::new("/c/g.json"))
    }

    #[test]
    fn a_member_is_replaced_and_everything_else_keeps_its_bytes() {
        let text = "{\n    // mine\n    \"a\": [1, {\"b\": \"}\"}],\n    \"mcpServers\": {\"x\": {\"command\": \"y\"}}, /* c */\n    \"z\": true,\n}\n";
        let top = top_level(text).unwrap();
        assert_eq!(top.indent.as_deref(), Some("    "));
        assert_eq!(&text[top.member("a").unwrap().value.clone()], "[1, {\"b\": \"}\"}]");
        let entry = entry();
        let servers = Servers(vec![("t", Entry::Gateway(&entry))]);
        let out = replace_member(text, "mcpServers", &|indent| render(&servers, indent));
        let expected = "{\n    // mine\n    \"a\": [1, {\"b\": \"}\"}],\n    \"mcpServers\": {\n        \"t\": {\n            \"command\": \"/bin/tinytools-gateway\",\n            \"args\": [\n                \"--config\",\n                \"/c/g.json\"\n            ]\n        }\n    }, /* c */\n    \"z\": true,\n}\n";
        assert_eq!(out, expected);
    }

    #[test]
    fn a_missing_member_is_added_after_the_last_or_into_an_empty_object() {
        let servers = |indent: Option<&str>| render(&Servers(vec![]), indent);
        assert_eq!(replace_member("{\n  \"a\": 1\n}", "servers", &servers), "{\n  \"a\": 1,\n  \"servers\": {}\n}");
        assert_eq!(replace_member("{\"a\": 1}", "servers", &servers), "{\"a\": 1, \"servers\": {}}");
        assert_eq!(replace_member("{}\n", "servers", &servers), "{\n  \"servers\": {}\n}\n");
        assert_eq!(replace_member("", "servers", &servers), "{\n  \"servers\": {}\n}\n");
    }

    #[test]
    fn undo_puts_back_only_the_servers_when_other_keys_changed() {
        let original = "{\"n\": 1, \"mcpServers\": {\"a\": {\"command\": \"x\"}} }";
        let current = "{\"n\": 2, \"mcpServers\": {\"t\": {}}, \"new\": 3}";
        let restored = restore_servers(Client::Cursor, current, original);
        assert_eq!(restored, "{\"n\": 2, \"mcpServers\": {\"a\": {\"command\": \"x\"}}, \"new\": 3}");
        let restored = restore_servers(Client::Codex, "m = 2\n[mcp_servers.t]\ncommand = \"g\"\n", "m = 1\n");
        assert_eq!(restored, "m = 2\n");
    }

    #[test]
    fn only_entries_launching_the_gateway_with_a_config_count_as_the_gateway() {
        assert!(is_gateway_entry(&serde_json::json!({"command": "/x/tinytools-gateway", "args": ["--config", "c"]})));
        assert!(is_gateway_entry(&serde_json::json!({"command": "tinytools-gateway.exe", "args": ["--config", "c"]})));
        assert!(!is_gateway_entry(&serde_json::json!({"command": "tinytools-gateway", "args": ["import", "x"]})));
        assert!(!is_gateway_entry(&serde_json::json!({"command": "npx", "args": ["--config", "c"]})));
    }

    #[test]
    fn codex_tables_are_replaced_and_the_rest_kept() {
        let text = "# top\nmodel = \"o3\"\n\n[mcp_servers.a]\ncommand = \"npx\"\n\n[mcp_servers.a.env]\nK = \"v\"\n\n[profiles.x]\nmodel = \"y\"\n";
        let out = edit_toml(text, &[], "tinytools", &entry());
        assert!(out.starts_with("# top\nmodel = \"o3\"\n"), "{out}");
        assert!(!out.contains("[mcp_servers.a"), "{out}");
        assert!(out.contains("[profiles.x]\nmodel = \"y\"\n"), "{out}");
        assert!(
            out.contains(
                "[mcp_servers.tinytools]\ncommand = \"/bin/tinytools-gateway\"\nargs = [\"--config\", \"/c/g.json\"]\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_servers_key_of_the_wrong_shape_is_refused_with_its_line() {
        let error = parse(Client::Cursor, Path::new("m.json"), "{\n  \"mcpServers\": [1]\n}").unwrap_err().to_string();
        assert!(error.starts_with("m.json:2:17: \"mcpServers\" is an array"), "{error}");
        let error = parse(Client::Codex, Path::new("c.toml"), "a = 1\nmcp_servers = [1]\n").unwrap_err().to_string();
        assert!(error.starts_with("c.toml:2:15: \"mcp_servers\" is an array"), "{error}");
        let error = parse(Client::Codex, Path::new("c.toml"), "a = 1\n[mcp_servers\n").unwrap_err().to_string();
        assert!(error.starts_with("c.toml:2:"), "{error}");
    }
}
