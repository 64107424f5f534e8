//! The command line: `--help`'s text and the parsing of every subcommand's arguments.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tinytools_gateway::ManifestNames;
use tinytools_gateway::import::ClientFormat;
use tinytools_gateway::setup::{Client, DEFAULT_NAME, SetupOptions};

pub(crate) const HELP: &str = "\
tinytools-gateway: one MCP server in front of many.

Every configured MCP server's tools are offered behind two tools, `tool_search` (its
description lists every tool, within a token budget) and `call_tool {name, arguments}`,
plus the tools a server's config marks \"direct\". Tool lists are cached on disk, so the
gateway answers before any server runs; a server starts on its first call.

USAGE:
    tinytools-gateway --config <FILE> [--cache-dir <DIR>] [--no-cache] [--list-changed]
                      [--embedding-model <DIR>] [--discovery-wait <SECS>] [--summaries]
                      [--search-candidates <N>]
                      [--discovery-concurrency <N>] [--manifest-names count|grouped]
        Serve MCP on stdin/stdout (what a client's config launches).

    tinytools-gateway --config <FILE> --http <ADDR:PORT> [--token-env <VAR>]
                      [--shared-sessions] [...]
        Serve MCP over streamable HTTP at http://<ADDR:PORT>/mcp instead, until Ctrl-C.
        Every session gets the same tools (with --list-changed, each promotes its own).
        Only the address given is bound; the URL is printed on stderr (port 0 picks a free
        port). A non-loopback address (such as 0.0.0.0) is refused unless a bearer token is
        set with --token-env. DELETE of a session ends it (200 OK).

    tinytools-gateway import <FILE> [--from <FORMAT>]
        Convert another client's config into the gateway's mcpServers JSON, on stdout.
        FORMAT is claude-desktop, claude-code, cursor, vscode or codex; without --from it
        is detected (JSON with \"mcpServers\": Claude Desktop, Claude Code or Cursor; JSON
        with \"servers\" or \"mcp\": {\"servers\"}: VS Code; TOML with [mcp_servers.<name>]:
        Codex). Literal values, secrets included, are copied as they are (prefer
        \"${VAR}\" references); notes on what was skipped go to stderr and name keys only.
        Claude Code's project-scoped servers (projects.<path>.mcpServers) are skipped.

    tinytools-gateway report --config <FILE> [--cache-dir <DIR>] [--no-cache] [--start] [--json]
        Per server: its tools, the bytes and estimated tokens of its flattened tool list
        (what a client gets without the gateway), whether its tools came from the cache,
        its cold start (spawn to answered tools/list, in ms) and any failure; then the
        bytes and tokens of the gateway's first tools/list. A server whose tools are not
        cached is started (one at a time) and its tools cached; --start starts every
        server. --json prints one JSON object instead of the table.

    tinytools-gateway setup <CLIENT> [--dry-run] [--file <CLIENT_CONFIG>]
                      [--gateway-config <FILE>] [--name <ENTRY>]
    tinytools-gateway setup <CLIENT> --undo [--file <CLIENT_CONFIG>]
        Put the gateway in front of a client's MCP servers in one step. CLIENT is claude-code,
        claude-desktop, cursor, vscode or codex. The client's user config (~/.claude.json;
        Claude Desktop's claude_desktop_config.json; ~/.cursor/mcp.json; VS Code's user
        mcp.json; ~/.codex/config.toml; or --file) is read, its servers are moved (converted
        as `import` converts them, disabled ones kept disabled) into the gateway config
        (--gateway-config; default $XDG_CONFIG_HOME/tinytools-gateway/<CLIENT>.json, else
        ~/.config/tinytools-gateway/<CLIENT>.json; servers already there stay, and on a name
        clash the client's entry wins), and replaced by one entry, tinytools (--name), that
        runs `tinytools-gateway --config <that file>`. Every other key of the client's file
        keeps its text. The file is first copied to <file>.tinytools-backup; a second run
        changes nothing. A missing or malformed client file is refused, and nothing is
        written. --dry-run prints a unified diff of each file it would change, and writes
        nothing. --undo puts the backup back, when the file is still what setup wrote.

OPTIONS:
    --config <FILE>     The `mcpServers` JSON (Claude Desktop, Claude Code and Cursor's format),
                        with an optional \"gateway\" object per server: allow, deny (globs over
                        tool names), exposure (direct|deferred|hidden), tools (per-tool
                        exposure), start_timeout_secs, call_timeout_secs, compaction and
                        tool_compaction (the byte budget of what tool_search returns:
                        \"third_party\", \"unlimited\" or {max_schema_bytes, max_description_bytes}).
    --cache-dir <DIR>   Where tool lists are cached (default: $XDG_CACHE_HOME/tinytools-gateway,
                        else ~/.cache/tinytools-gateway).
    --no-cache          Keep no cache: list every server's tools at startup.
    --discovery-wait <SECS>
                        With servers whose tools are not cached yet (they are started in the
                        background at startup): how long tools/list waits for them before
                        answering with what is known and how many are still starting (default
                        3; 0 answers at once). tool_search and call_tool wait for the servers
                        they need regardless, up to each one's start timeout; once all are
                        listed, clients get notifications/tools/list_changed.
    --discovery-concurrency <N>
                        How many of those servers start at once (default: two per core, 2 to 8).
    --manifest-names count|grouped
                        When tool_search's description has no room for every tool's name: the
                        count and the server names (count, the default), or each server's tool
                        names in a compact form, as many as fit (grouped). Default from
                        TINYTOOLS_GATEWAY_MANIFEST_NAMES when set.
    --embedding-model <DIR>
                        Rank tool_search by meaning with this sentence-embedding model instead
                        of BM25: a directory holding all-MiniLM-L6-v2's model.safetensors,
                        config.json and vocab.txt, or a static model's static_vectors.bin
                        (from distill_static). The tools' vectors are kept in the cache
                        directory, so a restart embeds only what changed; a search falls back
                        to BM25 while the model is busy past 30 s. Needs the `embedding` build
                        feature.
    --list-changed      Opt-in profile for clients that act on notifications/tools/list_changed:
                        tools a search found join tools/list (at most 32) and the client is
                        notified. Off by default: the tool list then never changes.
    --http <ADDR:PORT>  Serve streamable HTTP on this address (127.0.0.1:8931, [::1]:8931,
                        localhost:8931) instead of stdio.
    --token-env <VAR>   With --http: the environment variable holding a bearer token. Every
                        request must then send `Authorization: Bearer <token>`, or gets 401.
                        The token is never printed or logged.
    --shared-sessions   With --http: keep sessions in <cache dir>/sessions, so that several
                        gateway processes sharing --cache-dir (and the config) can stand
                        behind one HTTP load balancer, any of them answering any request.
                        Not with --list-changed (its promotions live in one process).
    --search-candidates <N>
                        Two-stage search: after its full matches, each tool_search answer
                        offers up to N more tools compactly (a name and one line each, within
                        1,500 bytes), callable by name through call_tool. Default 0.
    --summaries         Have a chat model write one paragraph per server (what it is for, in
                        everyday words) from its cached tool list, once, kept in the manifest
                        cache: tool_search then ranks each server's tools with it (the model
                        never reads it). The model comes from the environment:
                        OPENROUTER_API_KEY, else TINYTOOLS_BASE_URL (a local server, with
                        TINYTOOLS_MODEL and an optional TINYTOOLS_API_KEY), else OPENAI_API_KEY.
                        Off by default: the gateway then sends no model request of its own.
    -h, --help          This text.
    -V, --version       The version.

ENVIRONMENT:
    TINYTOOLS_GATEWAY_LOG   What is logged to stderr, as a tracing filter (default: warn;
                            e.g. info, or tinytools_gateway=debug). Values from the
                            config's ${VAR} references are never logged. A server that
                            cannot start is logged once, with its reason.
    TINYTOOLS_GATEWAY_MANIFEST_NAMES
                            count or grouped: --manifest-names when it is not given.

REMOTE SERVERS:
    A server with \"url\" (and optional \"headers\") instead of \"command\" is reached
    over streamable HTTP; ${VAR} references in both are expanded when it is first
    called, and their values are never logged or shown in errors.
";

/// `--http`'s address and `--token-env`'s variable.
type HttpArgs = (SocketAddr, Option<String>);

/// What serving takes from the command line.
#[derive(Default)]
pub(crate) struct Serve {
    pub(crate) config: PathBuf,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) no_cache: bool,
    pub(crate) list_changed: bool,
    pub(crate) http: Option<HttpArgs>,
    pub(crate) embedding_model: Option<PathBuf>,
    pub(crate) discovery_wait: Option<Duration>,
    pub(crate) discovery_concurrency: Option<usize>,
    pub(crate) manifest_names: Option<ManifestNames>,
    pub(crate) shared_sessions: bool,
    pub(crate) summaries: bool,
    pub(crate) search_candidates: Option<usize>,
}

impl Serve {
    /// Takes `arg` (and its value from `args`) when it is a flag only serving has; false when
    /// it is not one.
    fn flag(&mut self, arg: &str, args: &mut impl Iterator<Item = String>) -> Result<bool, String> {
        match arg {
            "--list-changed" => self.list_changed = true,
            "--shared-sessions" => self.shared_sessions = true,
            "--summaries" => self.summaries = true,
            "--search-candidates" => {
                let text =
                    args.next().ok_or("--search-candidates needs a number: --search-candidates <N>, such as 10")?;
                let n = text.trim().parse::<usize>().ok().filter(|n| *n <= 50);
                let n = n.ok_or_else(|| format!("--search-candidates {text}: expected a whole number from 0 to 50"))?;
                self.search_candidates = Some(n);
            }
            "--embedding-model" => {
                let dir = args.next().ok_or("--embedding-model needs a directory: --embedding-model <DIR>")?;
                self.embedding_model = Some(dir.into());
            }
            "--discovery-wait" => {
                let text = args.next().ok_or("--discovery-wait needs seconds: --discovery-wait <SECS>, such as 3")?;
                let secs = text.trim().parse::<f64>().ok().filter(|s| s.is_finite() && (0.0..=3_600.0).contains(s));
                let secs = secs.ok_or_else(|| {
                    format!("--discovery-wait {text}: expected a number of seconds from 0 to 3600, such as 3 or 0.5")
                })?;
                self.discovery_wait = Some(Duration::from_secs_f64(secs));
            }
            "--discovery-concurrency" => {
                let text = args.next().ok_or("--discovery-concurrency needs a number: --discovery-concurrency <N>")?;
                let n = text.trim().parse::<usize>().ok().filter(|n| (1..=256).contains(n));
                let n =
                    n.ok_or_else(|| format!("--discovery-concurrency {text}: expected a whole number from 1 to 256"))?;
                self.discovery_concurrency = Some(n);
            }
            "--manifest-names" => {
                let text = args.next().ok_or("--manifest-names needs count or grouped")?;
                self.manifest_names = Some(manifest_names(&text, "--manifest-names")?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks the flags that only make sense together.
    fn check(self, token_env: Option<String>) -> Result<Self, String> {
        if token_env.is_some() && self.http.is_none() {
            return Err("--token-env only applies with --http <ADDR:PORT>; stdio needs no token".to_owned());
        }
        if self.shared_sessions && self.http.is_none() {
            return Err("--shared-sessions only applies with --http <ADDR:PORT>: a stdio session has one client".into());
        }
        if self.shared_sessions && self.list_changed {
            return Err("--shared-sessions cannot be combined with --list-changed: a session's promoted tools live \
                        in one gateway process, so another could not answer for them; drop one of the two"
                .into());
        }
        if self.shared_sessions && self.no_cache {
            return Err("--shared-sessions keeps sessions in the cache directory: remove --no-cache".into());
        }
        if let Some((addr, _)) = self.http.as_ref().filter(|(addr, _)| !addr.ip().is_loopback())
            && token_env.is_none()
        {
            return Err(tinytools_gateway::http::HttpError::NotLoopback { addr: *addr }.to_string());
        }
        let http = self.http.map(|(addr, _)| (addr, token_env));
        Ok(Self { http, ..self })
    }
}

/// `count` or `grouped`, for `what` (a flag or a variable).
pub(crate) fn manifest_names(text: &str, what: &str) -> Result<ManifestNames, String> {
    ManifestNames::from_name(text).ok_or_else(|| format!("{what} {text}: expected count or grouped"))
}

/// What the command line asks for.
pub(crate) enum Command {
    Serve(Box<Serve>),
    Import { file: PathBuf, from: Option<ClientFormat> },
    Report { config: PathBuf, cache_dir: Option<PathBuf>, no_cache: bool, start: bool, json: bool },
    Setup { options: SetupOptions, undo: bool },
}

/// The command line (without the program name); `None` when it was --help or --version,
/// already answered.
pub(crate) fn parse(args: impl Iterator<Item = String>) -> Result<Option<Command>, String> {
    let mut args = args.peekable();
    if args.peek().is_some_and(|arg| arg == "setup") {
        args.next();
        return parse_setup(args);
    }
    parse_other(args)
}

/// Serving, `import` and `report`.
fn parse_other(args: impl Iterator<Item = String>) -> Result<Option<Command>, String> {
    let mut args = args.peekable();
    let subcommand = match args.peek().map(String::as_str) {
        Some(word @ ("import" | "report")) => {
            let word = word.to_owned();
            args.next();
            Some(word)
        }
        _ => None,
    };
    let (mut config, mut cache_dir, mut no_cache, mut start, mut json) = (None, None, false, false, false);
    let mut serve = Serve::default();
    let (mut file, mut from): (Option<PathBuf>, Option<ClientFormat>) = (None, None);
    let mut token_env: Option<String> = None;
    let sub = subcommand.as_deref();
    while let Some(arg) = args.next() {
        if sub.is_none() && serve.flag(&arg, &mut args)? {
            continue;
        }
        match (sub, arg.as_str()) {
            (_, "-h" | "--help") => {
                print!("{HELP}");
                return Ok(None);
            }
            (_, "-V" | "--version") => {
                println!("tinytools-gateway {}", env!("CARGO_PKG_VERSION"));
                return Ok(None);
            }
            (None | Some("report"), "--config") => {
                config = Some(args.next().ok_or("--config needs a file: --config <FILE>")?.into());
            }
            (None | Some("report"), "--cache-dir") => {
                cache_dir = Some(args.next().ok_or("--cache-dir needs a directory: --cache-dir <DIR>")?.into());
            }
            (None | Some("report"), "--no-cache") => no_cache = true,
            (Some("report"), "--start") => start = true,
            (Some("report"), "--json") => json = true,
            (Some("import"), "--from") => {
                let name =
                    args.next().ok_or("--from needs a format: claude-desktop, claude-code, cursor, vscode or codex")?;
                from = Some(ClientFormat::from_name(&name).ok_or_else(|| {
                    format!(
                        "--from: unknown format `{name}`; expected claude-desktop, claude-code, cursor, vscode or codex"
                    )
                })?);
            }
            (Some("import"), other) if !other.starts_with('-') && file.is_none() => file = Some(other.into()),
            (None, "--http") => {
                let addr = args.next().ok_or("--http needs an address: --http 127.0.0.1:<PORT>")?;
                serve.http = Some((parse_addr(&addr)?, None));
            }
            (None, "--token-env") => {
                token_env = Some(args.next().ok_or("--token-env needs a variable name: --token-env <VAR>")?);
            }
            (None, "import" | "report" | "setup") => {
                return Err(format!(
                    "`{arg}` is a subcommand: put it first, as `tinytools-gateway {arg} ...`; see --help"
                ));
            }
            (_, other) => {
                let context = sub.map_or_else(String::new, |sub| format!(" for `{sub}`"));
                return Err(format!("unknown argument `{other}`{context}; see --help"));
            }
        }
    }
    match sub {
        Some("import") => {
            let file = file.ok_or("import needs a file: tinytools-gateway import <FILE> [--from <FORMAT>]")?;
            Ok(Some(Command::Import { file, from }))
        }
        Some(_) => {
            let config = config.ok_or("report needs --config <FILE>: the mcpServers JSON to measure; see --help")?;
            Ok(Some(Command::Report { config, cache_dir, no_cache, start, json }))
        }
        None => {
            let config = config.ok_or("missing --config <FILE>: the mcpServers JSON to serve; see --help")?;
            let serve = Serve { config, cache_dir, no_cache, ..serve }.check(token_env)?;
            Ok(Some(Command::Serve(Box::new(serve))))
        }
    }
}

/// `setup`'s arguments, after the word `setup`.
fn parse_setup(mut args: impl Iterator<Item = String>) -> Result<Option<Command>, String> {
    let (mut client, mut undo, mut dry_run) = (None, false, false);
    let (mut file, mut gateway_config, mut name): (Option<PathBuf>, Option<PathBuf>, Option<String>) =
        (None, None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                return Ok(None);
            }
            "--undo" => undo = true,
            "--dry-run" => dry_run = true,
            "--file" => {
                file = Some(args.next().ok_or("--file needs the client's config file: --file <CLIENT_CONFIG>")?.into());
            }
            "--gateway-config" => {
                let path = args.next().ok_or("--gateway-config needs a file: --gateway-config <FILE>")?;
                gateway_config = Some(path.into());
            }
            "--name" => {
                let entry = args.next().ok_or("--name needs the entry's name: --name <ENTRY>, such as tinytools")?;
                if entry.trim().is_empty() {
                    return Err("--name: the entry's name is empty; give one, such as --name tinytools".into());
                }
                name = Some(entry);
            }
            other if !other.starts_with('-') && client.is_none() => {
                client =
                    Some(Client::from_name(other).ok_or_else(|| {
                        format!("setup: unknown client `{other}`; expected one of {}", client_names())
                    })?);
            }
            other => return Err(format!("unknown argument `{other}` for `setup`; see --help")),
        }
    }
    let client = client.ok_or_else(|| {
        format!("setup needs a client: tinytools-gateway setup <CLIENT>, where CLIENT is one of {}", client_names())
    })?;
    if undo && (gateway_config.is_some() || name.is_some()) {
        return Err("setup --undo takes only --file (and --dry-run): it reads the gateway's entry from the \
                    client's file"
            .into());
    }
    let options = SetupOptions {
        file,
        gateway_config,
        name: name.unwrap_or_else(|| DEFAULT_NAME.to_owned()),
        dry_run,
        ..SetupOptions::new(client)
    };
    Ok(Some(Command::Setup { options, undo }))
}

/// `claude-code, claude-desktop, cursor, vscode, codex`.
fn client_names() -> String {
    Client::ALL.map(Client::name).join(", ")
}

/// `127.0.0.1:8931`, `[::1]:8931` or `localhost:8931`.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    let resolved = match text.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => text.to_owned(),
    };
    resolved.parse().map_err(|_| {
        format!(
            "--http {text}: expected an IP address and a port, such as 127.0.0.1:8931, [::1]:8931 or localhost:8931"
        )
    })
}
