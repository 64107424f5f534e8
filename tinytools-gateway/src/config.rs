//! The gateway's config: the `mcpServers` JSON Claude Desktop, Claude Code and Cursor use,
//! plus a `gateway` object per server.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "github": {
//!       "command": "npx",
//!       "args": ["-y", "@modelcontextprotocol/server-github"],
//!       "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
//!       "cwd": "/tmp",
//!       "gateway": {
//!         "allow": ["*"],
//!         "deny": ["delete_*"],
//!         "exposure": "deferred",
//!         "tools": {"search_issues": "direct", "create_repository": "hidden"},
//!         "start_timeout_secs": 30,
//!         "call_timeout_secs": 60,
//!         "compaction": {"max_schema_bytes": 2000, "max_description_bytes": 400},
//!         "tool_compaction": {"search_issues": "unlimited"}
//!       }
//!     }
//!   }
//! }
//! ```
//!
//! Every key of `gateway` is optional. A tool is exposed when it matches `allow` (default:
//! everything) and no `deny` glob; an exposed tool takes its `tools` override or else
//! `exposure` (default `deferred`). `compaction` is the byte budget of the schemas and
//! descriptions `tool_search` answers with for the server's tools (a preset, `"third_party"` —
//! the default — or `"unlimited"`, or an object with `max_schema_bytes` and
//! `max_description_bytes`); `tool_compaction` sets it per tool. `${VAR}` (and `${VAR:-default}`) in `command`, `args`,
//! `env`, `cwd`, `url` and `headers` is expanded from the environment when the server starts.
//! A server with `"disabled": true` is skipped. A remote server (`url`, `headers`) is reached
//! over streamable HTTP ([`crate::transport`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use tinytools::{SchemaCompaction, ToolExposure};

use crate::glob::Glob;
use crate::template::{Secret, Template};

/// What is wrong with a config file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("could not read the gateway config {}: {source}; check the path given to --config", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{}: not valid JSON at line {line}, column {column} ({reason}); fix the syntax", file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// Where.
        line: usize,
        /// Where.
        column: usize,
        /// What the parser said.
        reason: String,
    },
    /// A key holds something other than what it should.
    #[error("{}: {path}: expected {expected}, found {found}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The JSON path of the key, such as `mcpServers.time.args[1]`.
        path: String,
        /// What the key should hold.
        expected: String,
        /// What it holds (never a string's text, which may be a secret).
        found: String,
    },
    /// A `${VAR}` reference names a variable the environment does not set.
    #[error(
        "{}: server `{server}`, {key}: the environment variable `{variable}` is not set; set it before starting the gateway, or give a default with `${{{variable}:-default}}`",
        file.display()
    )]
    MissingVariable {
        /// The file.
        file: PathBuf,
        /// The server.
        server: String,
        /// The key holding the reference, such as `env.GITHUB_TOKEN`.
        key: String,
        /// The variable.
        variable: String,
    },
}

/// How a tool is offered through the gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Exposure {
    /// Listed in `tools/list` under its namespaced name, callable directly.
    Direct,
    /// Found through `tool_search`, called through `call_tool` (the default).
    Deferred,
    /// Neither listed, searchable nor callable.
    Hidden,
}

impl Exposure {
    /// The tinytools exposure of the same meaning.
    pub fn to_tool_exposure(self) -> ToolExposure {
        match self {
            Self::Direct => ToolExposure::Direct,
            Self::Deferred => ToolExposure::Deferred,
            Self::Hidden => ToolExposure::Hidden,
        }
    }
}

/// A whole config file.
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    /// The file it was read from.
    pub file: PathBuf,
    /// The enabled servers, by name.
    pub servers: BTreeMap<String, ServerConfig>,
}

/// One configured server.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// Its name (the key under `mcpServers`).
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// The gateway's keys for it.
    pub policy: ServerPolicy,
}

/// How a server is reached, unexpanded.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP on stdio.
    Stdio {
        /// The program.
        command: Template,
        /// Its arguments.
        args: Vec<Template>,
        /// Variables set for it (on top of the gateway's environment).
        env: BTreeMap<String, Template>,
        /// Its working directory.
        cwd: Option<Template>,
    },
    /// A remote streamable-HTTP server.
    Http {
        /// Its URL.
        url: Template,
        /// Headers sent with every request.
        headers: BTreeMap<String, Template>,
    },
}

/// The gateway keys of one server.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerPolicy {
    /// Tool-name globs a tool must match one of (empty: every tool).
    pub allow: Vec<Glob>,
    /// Tool-name globs that leave a tool out.
    pub deny: Vec<Glob>,
    /// The exposure of every exposed tool without an override.
    pub exposure: Exposure,
    /// Per-tool exposure, by the server's own tool name.
    pub tools: BTreeMap<String, Exposure>,
    /// How long the server may take to start and answer `initialize`.
    pub start_timeout: Duration,
    /// How long one call may take.
    pub call_timeout: Duration,
    /// The budget of the schemas and descriptions `tool_search` answers with.
    pub compaction: SchemaCompaction,
    /// Per-tool budgets, by the server's own tool name.
    pub tool_compaction: BTreeMap<String, SchemaCompaction>,
}

impl Default for ServerPolicy {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            deny: Vec::new(),
            exposure: Exposure::Deferred,
            tools: BTreeMap::new(),
            start_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            compaction: SchemaCompaction::THIRD_PARTY,
            tool_compaction: BTreeMap::new(),
        }
    }
}

impl ServerPolicy {
    /// How the server's tool `remote_name` is offered: Hidden unless `allow` admits it and
    /// no `deny` glob matches; then its override, or the server's exposure.
    pub fn exposure_of(&self, remote_name: &str) -> Exposure {
        let allowed = self.allow.is_empty() || self.allow.iter().any(|glob| glob.matches(remote_name));
        if !allowed || self.deny.iter().any(|glob| glob.matches(remote_name)) {
            return Exposure::Hidden;
        }
        self.tools.get(remote_name).copied().unwrap_or(self.exposure)
    }

    /// The budget of the server's tool `remote_name`: its `tool_compaction`, or the server's.
    pub fn compaction_of(&self, remote_name: &str) -> SchemaCompaction {
        self.tool_compaction.get(remote_name).copied().unwrap_or(self.compaction)
    }
}

/// A stdio server's launch, expanded: its `Debug` shows no value.
#[derive(Clone)]
pub struct Launch {
    program: Secret,
    args: Vec<Secret>,
    env: Vec<(String, Secret)>,
    cwd: Option<Secret>,
}

impl Launch {
    /// The process to spawn.
    pub fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(self.program.expose());
        command.args(self.args.iter().map(Secret::expose));
        command.envs(self.env.iter().map(|(key, value)| (key.as_str(), value.expose())));
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd.expose());
        }
        command.kill_on_drop(true);
        command
    }

    /// Its working directory, expanded (to check it exists; never shown).
    pub(crate) fn cwd(&self) -> Option<&str> {
        self.cwd.as_ref().map(Secret::expose)
    }
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch").field("args", &self.args.len()).field("env", &self.env.len()).finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// Expands a stdio server's launch from the environment `lookup` reads.
    ///
    /// # Errors
    /// [`ConfigError::MissingVariable`] naming `file`, the server, the key and the variable;
    /// `Ok(None)` for a remote server.
    pub fn launch(&self, file: &Path, lookup: impl Fn(&str) -> Option<String>) -> Result<Option<Launch>, ConfigError> {
        let Transport::Stdio { command, args, env, cwd } = &self.transport else {
            return Ok(None);
        };
        let expand = |template: &Template, key: String| {
            template.expand(&lookup).map_err(|variable| ConfigError::MissingVariable {
                file: file.to_owned(),
                server: self.name.clone(),
                key,
                variable,
            })
        };
        let program = expand(command, "command".into())?;
        let args =
            args.iter().enumerate().map(|(i, arg)| expand(arg, format!("args[{i}]"))).collect::<Result<_, _>>()?;
        let env = env
            .iter()
            .map(|(key, value)| Ok((key.clone(), expand(value, format!("env.{key}"))?)))
            .collect::<Result<_, ConfigError>>()?;
        let cwd = cwd.as_ref().map(|cwd| expand(cwd, "cwd".into())).transpose()?;
        Ok(Some(Launch { program, args, env, cwd }))
    }

    /// The unexpanded config as canonical JSON: what the manifest cache key hashes.
    pub fn identity(&self) -> String {
        let raw = |map: &BTreeMap<String, Template>| -> Map<String, Value> {
            map.iter().map(|(k, v)| (k.clone(), Value::String(v.raw().to_owned()))).collect()
        };
        let value = match &self.transport {
            Transport::Stdio { command, args, env, cwd } => serde_json::json!({
                "command": command.raw(),
                "args": args.iter().map(Template::raw).collect::<Vec<_>>(),
                "env": raw(env),
                "cwd": cwd.as_ref().map(Template::raw),
            }),
            Transport::Http { url, headers } => serde_json::json!({"url": url.raw(), "headers": raw(headers)}),
        };
        value.to_string()
    }

    /// A short, unexpanded description of how it is started, for messages.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, .. } => format!("`{command}`"),
            Transport::Http { url, .. } => format!("<{url}>"),
        }
    }
}

impl GatewayConfig {
    /// Reads and checks a config file.
    ///
    /// # Errors
    /// [`ConfigError`] naming the file, the key's JSON path and what was expected.
    pub fn load(file: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let file = file.as_ref();
        let text =
            std::fs::read_to_string(file).map_err(|source| ConfigError::Read { file: file.to_owned(), source })?;
        Self::parse(file, &text)
    }

    /// Checks a config's text; `file` is only for messages.
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub fn parse(file: impl AsRef<Path>, text: &str) -> Result<Self, ConfigError> {
        let reader = Reader { file: file.as_ref().to_owned() };
        let root: Value = serde_json::from_str(text).map_err(|error| ConfigError::Syntax {
            file: reader.file.clone(),
            line: error.line(),
            column: error.column(),
            reason: syntax_reason(&error),
        })?;
        let root = reader.object(&root, "(the top level)", "an object with an \"mcpServers\" object")?;
        let Some(servers_value) = root.get("mcpServers") else {
            return Err(reader.invalid("mcpServers", "an object of servers by name", "nothing (the key is missing)"));
        };
        let servers_map = reader.object(servers_value, "mcpServers", "an object of servers by name")?;
        let mut servers = BTreeMap::new();
        for (name, entry) in servers_map {
            let path = format!("mcpServers{}", key_path(name));
            if let Some(server) = reader.server(name, entry, &path)? {
                servers.insert(name.clone(), server);
            }
        }
        Ok(Self { file: reader.file, servers })
    }
}

fn syntax_reason(error: &serde_json::Error) -> String {
    // serde_json's message ends with " at line L column C"; the error says where already.
    let message = error.to_string();
    match message.find(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    }
}

/// `.name`, or `["name"]` when the name is not a plain identifier.
fn key_path(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        format!(".{key}")
    } else {
        format!("[{}]", Value::String(key.to_owned()))
    }
}

/// What a JSON value is, for "found ...": a string's text is never shown.
fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

struct Reader {
    file: PathBuf,
}

const GATEWAY_KEYS: &str =
    "allow, deny, exposure, tools, start_timeout_secs, call_timeout_secs, compaction, tool_compaction";

impl Reader {
    fn invalid(&self, path: &str, expected: &str, found: &str) -> ConfigError {
        ConfigError::Invalid {
            file: self.file.clone(),
            path: path.to_owned(),
            expected: expected.to_owned(),
            found: found.to_owned(),
        }
    }

    fn object<'v>(&self, value: &'v Value, path: &str, expected: &str) -> Result<&'v Map<String, Value>, ConfigError> {
        value.as_object().ok_or_else(|| self.invalid(path, expected, &found(value)))
    }

    fn string<'v>(&self, value: &'v Value, path: &str) -> Result<&'v str, ConfigError> {
        value.as_str().ok_or_else(|| self.invalid(path, "a string", &found(value)))
    }

    fn template(&self, value: &Value, path: &str) -> Result<Template, ConfigError> {
        let raw = self.string(value, path)?;
        Template::parse(raw)
            .map_err(|reason| self.invalid(path, "a string whose `${...}` references are closed", &reason))
    }

    fn strings(&self, value: &Value, path: &str) -> Result<Vec<String>, ConfigError> {
        let items = value.as_array().ok_or_else(|| self.invalid(path, "an array of strings", &found(value)))?;
        items.iter().enumerate().map(|(i, item)| Ok(self.string(item, &format!("{path}[{i}]"))?.to_owned())).collect()
    }

    fn template_map(&self, value: &Value, path: &str) -> Result<BTreeMap<String, Template>, ConfigError> {
        let map = self.object(value, path, "an object of strings")?;
        map.iter().map(|(k, v)| Ok((k.clone(), self.template(v, &format!("{path}{}", key_path(k)))?))).collect()
    }

    fn server(&self, name: &str, entry: &Value, path: &str) -> Result<Option<ServerConfig>, ConfigError> {
        let entry = self.object(entry, path, "an object with \"command\" (or \"url\")")?;
        if let Some(disabled) = entry.get("disabled") {
            match disabled {
                Value::Bool(true) => return Ok(None),
                Value::Bool(false) => {}
                other => return Err(self.invalid(&format!("{path}.disabled"), "true or false", &found(other))),
            }
        }
        let key = |k: &str| format!("{path}.{k}");
        let transport = match (entry.get("command"), entry.get("url")) {
            (Some(command), _) => {
                let command = self.template(command, &key("command"))?;
                let args = match entry.get("args") {
                    Some(args) => {
                        let items = args
                            .as_array()
                            .ok_or_else(|| self.invalid(&key("args"), "an array of strings", &found(args)))?;
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, arg)| self.template(arg, &format!("{path}.args[{i}]")))
                            .collect::<Result<_, _>>()?
                    }
                    None => Vec::new(),
                };
                let env =
                    entry.get("env").map(|env| self.template_map(env, &key("env"))).transpose()?.unwrap_or_default();
                let cwd = entry.get("cwd").map(|cwd| self.template(cwd, &key("cwd"))).transpose()?;
                Transport::Stdio { command, args, env, cwd }
            }
            (None, Some(url)) => {
                let url = self.template(url, &key("url"))?;
                let headers = entry
                    .get("headers")
                    .map(|h| self.template_map(h, &key("headers")))
                    .transpose()?
                    .unwrap_or_default();
                Transport::Http { url, headers }
            }
            (None, None) => {
                return Err(self.invalid(
                    path,
                    "a \"command\" (a stdio server) or a \"url\" (a remote server)",
                    "neither",
                ));
            }
        };
        for other in entry.keys() {
            if !matches!(
                other.as_str(),
                "command" | "args" | "env" | "cwd" | "url" | "headers" | "type" | "disabled" | "gateway"
            ) {
                tracing::warn!(server = name, key = %other, "unknown key in a server entry; ignored");
            }
        }
        let policy = match entry.get("gateway") {
            Some(gateway) => self.policy(gateway, &key("gateway"))?,
            None => ServerPolicy::default(),
        };
        Ok(Some(ServerConfig { name: name.to_owned(), transport, policy }))
    }

    fn policy(&self, value: &Value, path: &str) -> Result<ServerPolicy, ConfigError> {
        let map = self.object(value, path, &format!("an object with any of {GATEWAY_KEYS}"))?;
        let mut policy = ServerPolicy::default();
        for (key, value) in map {
            let at = format!("{path}.{key}");
            match key.as_str() {
                "allow" => policy.allow = self.strings(value, &at)?.into_iter().map(Glob::new).collect(),
                "deny" => policy.deny = self.strings(value, &at)?.into_iter().map(Glob::new).collect(),
                "exposure" => policy.exposure = self.exposure(value, &at)?,
                "tools" => {
                    let tools =
                        self.object(value, &at, "an object of tool name to \"direct\", \"deferred\" or \"hidden\"")?;
                    for (tool, exposure) in tools {
                        let exposure = self.exposure(exposure, &format!("{at}{}", key_path(tool)))?;
                        policy.tools.insert(tool.clone(), exposure);
                    }
                }
                "start_timeout_secs" => policy.start_timeout = self.seconds(value, &at)?,
                "call_timeout_secs" => policy.call_timeout = self.seconds(value, &at)?,
                "compaction" => policy.compaction = self.compaction(value, &at)?,
                "tool_compaction" => {
                    let tools = self.object(value, &at, "an object of tool name to a compaction budget")?;
                    for (tool, budget) in tools {
                        let budget = self.compaction(budget, &format!("{at}{}", key_path(tool)))?;
                        policy.tool_compaction.insert(tool.clone(), budget);
                    }
                }
                _ => {
                    return Err(self.invalid(
                        &at,
                        &format!("one of the gateway keys {GATEWAY_KEYS}"),
                        "an unknown key",
                    ));
                }
            }
        }
        Ok(policy)
    }

    fn exposure(&self, value: &Value, path: &str) -> Result<Exposure, ConfigError> {
        let expected = "\"direct\", \"deferred\" or \"hidden\"";
        match value.as_str() {
            Some("direct") => Ok(Exposure::Direct),
            Some("deferred") => Ok(Exposure::Deferred),
            Some("hidden") => Ok(Exposure::Hidden),
            Some(other) => Err(self.invalid(path, expected, &Value::String(other.to_owned()).to_string())),
            None => Err(self.invalid(path, expected, &found(value))),
        }
    }

    fn compaction(&self, value: &Value, path: &str) -> Result<SchemaCompaction, ConfigError> {
        const EXPECTED: &str = "\"third_party\", \"unlimited\" or an object with max_schema_bytes and/or \
                                max_description_bytes (whole numbers above 0, or null for no limit)";
        if let Some(name) = value.as_str() {
            return SchemaCompaction::preset(name)
                .ok_or_else(|| self.invalid(path, EXPECTED, &Value::String(name.to_owned()).to_string()));
        }
        let map = self.object(value, path, EXPECTED)?;
        let mut budget = SchemaCompaction::UNLIMITED;
        for (key, bytes) in map {
            let at = format!("{path}.{key}");
            let limit = match bytes {
                Value::Null => None,
                other => match other.as_u64().filter(|n| *n > 0).and_then(|n| usize::try_from(n).ok()) {
                    Some(n) => Some(n),
                    None => return Err(self.invalid(&at, "a whole number of bytes above 0, or null", &found(other))),
                },
            };
            match key.as_str() {
                "max_schema_bytes" => budget.max_schema_bytes = limit,
                "max_description_bytes" => budget.max_description_bytes = limit,
                _ => return Err(self.invalid(&at, "max_schema_bytes or max_description_bytes", "an unknown key")),
            }
        }
        Ok(budget)
    }

    fn seconds(&self, value: &Value, path: &str) -> Result<Duration, ConfigError> {
        match value.as_f64() {
            Some(secs) if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 => Ok(Duration::from_secs_f64(secs)),
            _ => Err(self.invalid(path, "a number of seconds above 0 and at most 86400", &found(value))),
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
