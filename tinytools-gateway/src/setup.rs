//! `tinytools-gateway setup <CLIENT>`: the gateway written into a client's config in one step.
//!
//! ```text
//! tinytools-gateway setup <CLIENT> [--dry-run] [--file <CLIENT_CONFIG>] [--gateway-config <FILE>] [--name <ENTRY>]
//! tinytools-gateway setup <CLIENT> --undo [--file <CLIENT_CONFIG>]
//! ```
//!
//! `setup` reads the client's user-level config, moves its MCP servers into the gateway's
//! config (converted as [`import`](crate::import) converts them), and leaves the client one
//! server, `tinytools` (`--name`), that runs `tinytools-gateway --config <gateway config>`.
//!
//! # The clients' files
//!
//! | CLIENT | file (`--file` overrides) | servers under | the entry written |
//! |---|---|---|---|
//! | `claude-code` | `~/.claude.json` | top-level `mcpServers` (`projects.*` untouched) | `{"type": "stdio", "command", "args"}` |
//! | `claude-desktop` | macOS `~/Library/Application Support/Claude/claude_desktop_config.json`, Windows `%APPDATA%\Claude\claude_desktop_config.json`, Linux `$XDG_CONFIG_HOME/Claude/claude_desktop_config.json` (else `~/.config/Claude/...`) | `mcpServers` | `{"command", "args"}` |
//! | `cursor` | `~/.cursor/mcp.json` | `mcpServers` | `{"command", "args"}` |
//! | `vscode` | the user `mcp.json`: Linux `$XDG_CONFIG_HOME/Code/User/mcp.json` (else `~/.config/Code/User/mcp.json`), macOS `~/Library/Application Support/Code/User/mcp.json`, Windows `%APPDATA%\Code\User\mcp.json` | `servers` | `{"type": "stdio", "command", "args"}` |
//! | `codex` | `$CODEX_HOME/config.toml`, else `~/.codex/config.toml` | `[mcp_servers.<name>]` | `command = ...`, `args = [...]` |
//!
//! Checked against (2026): Claude Code's MCP docs (code.claude.com/docs/en/mcp: user-scope
//! servers in `~/.claude.json`'s top-level `mcpServers`, local-scope ones under
//! `projects.<path>.mcpServers`, stdio entries written with `"type": "stdio"`); the MCP user
//! quickstart and vendors' guides for Claude Desktop (macOS and Windows paths; Linux has no
//! official build, and the unofficial ones use `~/.config/Claude`); Cursor's MCP docs
//! (cursor.com/docs/mcp: `~/.cursor/mcp.json`, `mcpServers`); VS Code's MCP configuration
//! reference (code.visualstudio.com/docs/copilot/reference/mcp-configuration: `mcp.json` in
//! the workspace or the user profile, a top-level `servers` object, stdio servers with
//! `"type": "stdio"`, `command`, `args`, `env`); Codex's `docs/config.md` (openai/codex:
//! `[mcp_servers.<name>]` tables with `command`, `args`, `env` in `~/.codex/config.toml`, or
//! `$CODEX_HOME`).
//!
//! Paths come from `HOME` (`USERPROFILE` when it is unset), `APPDATA`, `XDG_CONFIG_HOME` and
//! `CODEX_HOME` ([`Env`]).
//!
//! # What it does
//!
//! - The servers go into the gateway's config: `--gateway-config`, else
//!   `$XDG_CONFIG_HOME/tinytools-gateway/<CLIENT>.json` (else `~/.config/...`). Servers already
//!   there stay; when a name is in both, **the client's entry wins** (it is the one the user
//!   last had in use, and would otherwise survive only in the backup), and the replaced names
//!   are printed. The file is rewritten with its keys sorted, only when its servers change.
//! - Servers the client marks disabled (`"disabled": true`, Codex's `enabled = false`) move too,
//!   and stay disabled in the gateway's config (which skips them); remove the key there to
//!   enable one.
//! - Entries that already launch `tinytools-gateway --config ...` are never moved into a
//!   gateway: the one named `--name` is replaced, others are left in the client's file. So a
//!   second run changes nothing, and writes nothing, unless servers were added since.
//! - The client's file is edited in place: JSON by replacing the text of the servers key's value
//!   (added after the last top-level key when absent), so every other key, its order, comments
//!   and formatting keep their bytes; Codex's TOML through `toml_edit`, which keeps the rest of
//!   the document, comments included.
//! - Before writing, the client's file is copied to `<file>.tinytools-backup` (an existing
//!   backup is kept when identical, else setup is refused: run `--undo` first, or delete the
//!   backup if the current file is what you want to keep). Then the gateway's config and the
//!   client's file are each written to a temporary file and renamed over the old one. A
//!   symlinked client file is followed: its target is edited.
//! - `--dry-run` prints a unified diff of each file it would change, and writes nothing.
//!
//! # Undo
//!
//! `--undo` renames the backup over the client's file, when the file is still exactly what
//! setup wrote (setup's edit, made again from the backup, gives the file byte for byte). When
//! only keys outside the servers changed since (Claude Code rewrites its own keys in
//! `~/.claude.json` as it runs), the servers key alone is put back from the backup, keeping
//! those changes, and the backup is removed. When the servers themselves changed (the gateway's
//! entry is gone, or a server was added), undo refuses and writes nothing, since restoring
//! would lose that: put the servers back by hand, or, to drop the changes, rename the backup
//! over the file yourself. The gateway's config is left as it is.
//!
//! # Bad input
//!
//! Nothing is written, and the error names the file, line and column: a client file that is
//! not JSON (comments and trailing commas are fine) or TOML, or whose servers key is not an
//! object (or table). A missing client file is refused with its path: the client is probably
//! not installed, or keeps its config elsewhere (`--file`). To set up a client that has no
//! config yet, create the file empty: an empty file is a config without servers.

mod client;
mod edit;
mod files;

pub use client::{Client, Env};

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::config::{ConfigError, GatewayConfig};
use crate::import::{ImportError, import_value};
use edit::GatewayEntry;

/// What `setup` is asked to do.
#[derive(Clone, Debug)]
pub struct SetupOptions {
    /// The client.
    pub client: Client,
    /// `--file`: the client's config, instead of its usual place.
    pub file: Option<PathBuf>,
    /// `--gateway-config`: the gateway's config, instead of [`Env::gateway_config`].
    pub gateway_config: Option<PathBuf>,
    /// `--name`: the gateway's entry in the client's config.
    pub name: String,
    /// `--dry-run`: print the diffs, write nothing.
    pub dry_run: bool,
}

impl SetupOptions {
    /// The defaults for `client`: its usual files, the entry `tinytools`, writing.
    pub fn new(client: Client) -> Self {
        Self { client, file: None, gateway_config: None, name: DEFAULT_NAME.to_owned(), dry_run: false }
    }
}

/// The gateway's entry name when `--name` is not given.
pub const DEFAULT_NAME: &str = "tinytools";

/// What `setup` or `--undo` did (or, with `--dry-run`, would do).
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// For stdout: what was read, moved and written, and with `--dry-run` the diffs.
    pub lines: Vec<String>,
    /// For stderr: what the conversion skipped or changed (keys and names, never values).
    pub notes: Vec<String>,
}

/// Why `setup` or `--undo` wrote nothing. Each says which file, what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// A variable the client's files are found from is not set.
    #[error(
        "cannot find {client}'s config: {variable} is not set; set it, or name the file with --file <CLIENT_CONFIG>"
    )]
    NoHome {
        /// The client.
        client: &'static str,
        /// The variable.
        variable: &'static str,
    },
    /// The client's file does not exist.
    #[error("{}: no such file; {}", file.display(), missing_hint(client, *given))]
    Missing {
        /// The client.
        client: &'static str,
        /// The file.
        file: PathBuf,
        /// Whether it came from `--file`.
        given: bool,
    },
    /// A file could not be read.
    #[error("could not read {}: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The client's file is not valid JSON or TOML.
    #[error(
        "{}:{line}:{column}: not valid {format} ({reason}); fix the file there and run setup again (nothing was written)",
        file.display()
    )]
    Syntax {
        /// The file.
        file: PathBuf,
        /// `JSON` or `TOML`.
        format: &'static str,
        /// Where (1-based).
        line: usize,
        /// Where (1-based).
        column: usize,
        /// What the parser said.
        reason: String,
    },
    /// The client's servers key holds something other than an object of servers.
    #[error(
        "{}:{line}:{column}: \"{key}\" is {found}; it should be an object of servers by name, such as \
         {{\"my-server\": {{\"command\": \"...\", \"args\": [...]}}}} (a [{key}.<name>] table in TOML); fix it and \
         run setup again (nothing was written)",
        file.display()
    )]
    Shape {
        /// The file.
        file: PathBuf,
        /// Where its value starts (1-based).
        line: usize,
        /// Where its value starts (1-based).
        column: usize,
        /// The key.
        key: &'static str,
        /// What it holds.
        found: String,
    },
    /// A server entry could not be converted.
    #[error("{0}; fix that entry and run setup again (nothing was written)")]
    Import(#[from] ImportError),
    /// The gateway config already there does not load.
    #[error(
        "the gateway config already there does not load: {0}; fix it, or name another file with \
         --gateway-config <FILE> (nothing was written)"
    )]
    GatewayConfig(#[source] ConfigError),
    /// A backup from an earlier setup is in the way.
    #[error(
        "{} already exists, from an earlier setup, and differs from {}; nothing was written. To go back to that \
         backup run `tinytools-gateway setup <CLIENT> --undo` first; to keep the current file instead, delete the \
         backup and run setup again",
        backup.display(),
        file.display()
    )]
    BackupExists {
        /// The client's file.
        file: PathBuf,
        /// The backup.
        backup: PathBuf,
    },
    /// A file could not be written.
    #[error("could not write {}: {source}", file.display())]
    Write {
        /// The file.
        file: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// `--undo` found no backup.
    #[error(
        "nothing to undo: there is no backup {} (setup makes it beside the file it changes; if setup was given \
         --file, give --undo the same --file)",
        backup.display()
    )]
    NoBackup {
        /// The client's file.
        file: PathBuf,
        /// The backup looked for.
        backup: PathBuf,
    },
    /// `--undo` found the client's file changed since setup.
    #[error(
        "{}: {reason} since setup wrote it, so restoring {} would lose that; nothing was restored. Put the servers \
         back by hand (they are in the gateway's config), or, to drop the changes, rename the backup over the file \
         yourself",
        file.display(),
        backup.display()
    )]
    Changed {
        /// The client's file.
        file: PathBuf,
        /// The backup.
        backup: PathBuf,
        /// What changed.
        reason: &'static str,
    },
}

impl SetupError {
    /// The exit status for it: 1 when a file could not be written, 2 for everything the user
    /// can fix in the input.
    pub fn exit_status(&self) -> u8 {
        if matches!(self, Self::Write { .. }) { 1 } else { 2 }
    }
}

fn missing_hint(client: &str, given: bool) -> String {
    if given {
        "check the path given to --file, or create the file empty (an empty file is a config without servers) \
         and run setup again"
            .to_owned()
    } else {
        format!(
            "{client} keeps its user config there, so it is probably not installed or not started yet. Name the \
             file with --file <CLIENT_CONFIG>, or create it empty (an empty file is a config without servers) and \
             run setup again"
        )
    }
}

/// A parser's message up to its " at line L column C" (the error says where already).
fn first_clause(message: &str) -> String {
    message.find(" at line ").map_or(message, |at| &message[..at]).to_owned()
}

/// Moves `options.client`'s servers into the gateway's config and writes the gateway into the
/// client's config, as the [module docs](self) say; `env` finds the files.
///
/// # Errors
/// [`SetupError`], and then nothing was written (except when writing itself failed).
pub fn setup(options: &SetupOptions, env: &Env) -> Result<Report, SetupError> {
    let plan = plan(options, env)?;
    let mut report = Report { lines: plan.summary.clone(), notes: plan.notes.clone() };
    let client_changes = plan.text != plan.new_text;
    let gateway_changes = plan.gateway_old.as_deref() != Some(plan.gateway_new.as_str());
    let (file, gateway) = (&plan.file, &plan.gateway);
    if options.dry_run {
        report.lines.push("dry run: nothing was written; the changes would be:".into());
        if client_changes {
            report.lines.push(files::diff(file, &plan.text, &plan.new_text));
        }
        if gateway_changes {
            report.lines.push(files::diff(gateway, plan.gateway_old.as_deref().unwrap_or(""), &plan.gateway_new));
        }
        if !client_changes && !gateway_changes {
            report.lines.push("(none: already set up)".into());
        }
        return Ok(report);
    }
    if !client_changes && !gateway_changes {
        report.lines.push(format!(
            "already set up: {} launches the gateway on {}, and no other servers are left to move; nothing was written",
            file.display(),
            gateway.display()
        ));
        return Ok(report);
    }
    if client_changes && files::back_up(file, &plan.text)? {
        report.lines.push(format!("backed up {} to {}", file.display(), files::backup_path(file).display()));
    }
    if gateway_changes {
        files::write_atomic(gateway, &plan.gateway_new)?;
        report.lines.push(format!("wrote {}", gateway.display()));
    }
    if client_changes {
        files::write_atomic(file, &plan.new_text)?;
        let launch = format!("{} {}", plan.entry.command, plan.entry.args.join(" "));
        report.lines.push(format!("wrote {}: its servers are now `{}` ({launch})", file.display(), options.name));
        report.lines.push(format!(
            "restart {} to use it; undo with `tinytools-gateway setup {} --undo{}`",
            options.client.name(),
            options.client.name(),
            options.file.as_ref().map_or_else(String::new, |_| format!(" --file {}", file.display()))
        ));
    }
    Ok(report)
}

/// What setup would write.
struct Plan {
    file: PathBuf,
    text: String,
    new_text: String,
    gateway: PathBuf,
    gateway_old: Option<String>,
    gateway_new: String,
    entry: GatewayEntry,
    summary: Vec<String>,
    notes: Vec<String>,
}

fn plan(options: &SetupOptions, env: &Env) -> Result<Plan, SetupError> {
    let client = options.client;
    let file = client_file(client, options.file.as_deref(), env)?;
    let text = files::read(&file)?;
    let parsed = edit::parse(client, &file, &text)?;
    let kept = other_gateways(&parsed.servers, &options.name);
    let moved: Map<String, Value> = parsed
        .servers
        .iter()
        .filter(|(_, entry)| !edit::is_gateway_entry(entry))
        .map(|(name, entry)| (name.clone(), entry.clone()))
        .collect();
    let converted = import_value(&file, &json!({ client.servers_key(): moved }), Some(client.format()))?;
    let imported = imported_servers(&converted.config);
    let gateway = match &options.gateway_config {
        Some(path) => absolute(path)?,
        None => env.gateway_config(client)?,
    };
    let (gateway_old, gateway_new, replaced) = merge(&gateway, &imported)?;
    let entry = GatewayEntry::new(client, gateway_command(), &gateway);
    let new_text = edit::edit(client, &text, &parsed, &kept, &options.name, &entry)?;
    let mut summary = vec![format!("read {} ({}): {}", file.display(), client.name(), names(moved.keys()))];
    if !moved.is_empty() {
        let replaced =
            if replaced.is_empty() { String::new() } else { format!("; replaced there: {}", replaced.join(", ")) };
        summary.push(format!("moving them into the gateway config {}{replaced}", gateway.display()));
    }
    let disabled: Vec<&String> = imported
        .iter()
        .filter(|(_, server)| server.get("disabled") == Some(&Value::Bool(true)))
        .map(|(n, _)| n)
        .collect();
    if !disabled.is_empty() {
        summary.push(format!("disabled, and kept disabled in the gateway config: {}", names(disabled.into_iter())));
    }
    if !kept.is_empty() {
        summary.push(format!("other gateway entries, left in the client's file: {}", kept.join(", ")));
    }
    let notes = converted.notes;
    Ok(Plan { file, text, new_text, gateway, gateway_old, gateway_new, entry, summary, notes })
}

/// `n server(s): a, b`, or `no servers`.
fn names<'a>(names: impl ExactSizeIterator<Item = &'a String>) -> String {
    match names.len() {
        0 => "no servers to move".into(),
        count => format!("{count} server(s): {}", names.map(String::as_str).collect::<Vec<_>>().join(", ")),
    }
}

/// The names of the entries that launch a gateway, other than `name`'s.
fn other_gateways(servers: &Map<String, Value>, name: &str) -> Vec<String> {
    servers.iter().filter(|(n, entry)| *n != name && edit::is_gateway_entry(entry)).map(|(n, _)| n.clone()).collect()
}

fn imported_servers(config: &Value) -> Map<String, Value> {
    config.get("mcpServers").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The client's file: `--file` or its usual place, symlinks followed; it must exist.
fn client_file(client: Client, file: Option<&Path>, env: &Env) -> Result<PathBuf, SetupError> {
    let (path, given) = match file {
        Some(file) => (absolute(file)?, true),
        None => (client.default_file(env)?, false),
    };
    std::fs::canonicalize(&path).map_err(|_| SetupError::Missing { client: client.name(), file: path, given })
}

fn absolute(path: &Path) -> Result<PathBuf, SetupError> {
    std::path::absolute(path).map_err(|source| SetupError::Read { file: path.to_owned(), source })
}

/// The command the client's entry runs: this executable when it is the gateway (so the client
/// needs no PATH), else `tinytools-gateway`.
fn gateway_command() -> String {
    std::env::current_exe()
        .ok()
        .filter(|exe| exe.file_stem().is_some_and(|stem| stem == "tinytools-gateway"))
        .and_then(|exe| exe.to_str().map(str::to_owned))
        .unwrap_or_else(|| "tinytools-gateway".to_owned())
}

/// The gateway config with `imported` merged in (the client's entries win): its text now
/// (`None` when there is no file), its text after, and the names replaced.
fn merge(gateway: &Path, imported: &Map<String, Value>) -> Result<(Option<String>, String, Vec<String>), SetupError> {
    let old = match std::fs::read_to_string(gateway) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(SetupError::Read { file: gateway.to_owned(), source }),
    };
    let mut root = match &old {
        Some(text) => {
            GatewayConfig::parse(gateway, text).map_err(SetupError::GatewayConfig)?;
            serde_json::from_str(text).unwrap_or_else(|_| json!({}))
        }
        None => json!({"mcpServers": {}}),
    };
    let before = root.clone();
    let mut replaced = Vec::new();
    if let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) {
        for (name, server) in imported {
            if servers.get(name).is_some_and(|existing| existing != server) {
                replaced.push(name.clone());
            }
            servers.insert(name.clone(), server.clone());
        }
    }
    let new = match &old {
        Some(text) if root == before => text.clone(),
        _ => serde_json::to_string_pretty(&root).unwrap_or_default() + "\n",
    };
    Ok((old, new, replaced))
}

/// Restores the client's file from the backup setup made, when the file is still what setup
/// wrote (see the [module docs](self)); with `dry_run`, prints the diff instead.
///
/// # Errors
/// [`SetupError::NoBackup`], [`SetupError::Changed`], or the file's own errors; then nothing
/// was written.
pub fn undo(client: Client, file: Option<&Path>, dry_run: bool, env: &Env) -> Result<Report, SetupError> {
    let file = client_file(client, file, env)?;
    let backup = files::backup_path(&file);
    if !backup.exists() {
        return Err(SetupError::NoBackup { file, backup });
    }
    let (current, original) = (files::read(&file)?, files::read(&backup)?);
    let now = edit::parse(client, &file, &current)?;
    let before = edit::parse(client, &backup, &original)?;
    let mut gateways =
        now.servers.iter().filter_map(|(name, entry)| Some((name, GatewayEntry::read(client, entry)?))).peekable();
    let reason = if gateways.peek().is_none() { "the gateway's entry is gone" } else { "its servers changed" };
    // What setup wrote, made again from the backup with each gateway entry the file holds.
    let written: Vec<String> = gateways
        .filter_map(|(name, entry)| {
            let kept = other_gateways(&before.servers, name);
            edit::edit(client, &original, &before, &kept, name, &entry).ok()
        })
        .collect();
    let restored = if written.contains(&current) {
        None
    } else if written.iter().any(|text| edit::parse(client, &file, text).is_ok_and(|w| w.servers == now.servers)) {
        Some(edit::restore_servers(client, &current, &original))
    } else {
        return Err(SetupError::Changed { file, backup, reason });
    };
    let mut report = Report::default();
    if dry_run {
        report.lines.push("dry run: nothing was written; the change would be:".into());
        report.lines.push(files::diff(&file, &current, restored.as_deref().unwrap_or(&original)));
        return Ok(report);
    }
    match restored {
        None => {
            std::fs::rename(&backup, &file).map_err(|source| SetupError::Write { file: file.clone(), source })?;
            report.lines.push(format!(
                "restored {} from {} (and removed the backup)",
                file.display(),
                backup.display()
            ));
        }
        Some(text) => {
            files::write_atomic(&file, &text)?;
            std::fs::remove_file(&backup).map_err(|source| SetupError::Write { file: backup.clone(), source })?;
            report.lines.push(format!(
                "{} changed outside its servers since setup (kept); put back its servers from {} (and removed the backup)",
                file.display(),
                backup.display()
            ));
        }
    }
    report.lines.push(format!(
        "the gateway's config still holds the servers it was given; delete it if {} was its only client",
        client.name()
    ));
    Ok(report)
}
