//! The `tinytools-gateway` binary: serves the gateway over stdio or streamable HTTP, imports
//! other clients' configs, and reports what the gateway saves.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tinytools::ToolRanker;

use tinytools_gateway::import::{ClientFormat, import_file};
use tinytools_gateway::report::{ReportOptions, report};
use tinytools_gateway::sessions::FileSessionStore;
use tinytools_gateway::{
    Gateway, GatewayConfig, GatewayOptions, HttpOptions, HttpServer, ManifestCache, ManifestNames, Supervisor,
};
use tokio_util::sync::CancellationToken;

const HELP: &str = "\
tinytools-gateway: one MCP server in front of many.

Every configured MCP server's tools are offered behind two tools, `tool_search` (its
description lists every tool, within a token budget) and `call_tool {name, arguments}`,
plus the tools a server's config marks \"direct\". Tool lists are cached on disk, so the
gateway answers before any server runs; a server starts on its first call.

USAGE:
    tinytools-gateway --config <FILE> [--cache-dir <DIR>] [--no-cache] [--list-changed]
                      [--embedding-model <DIR>] [--discovery-wait <SECS>]
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
struct Serve {
    config: PathBuf,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    list_changed: bool,
    http: Option<HttpArgs>,
    embedding_model: Option<PathBuf>,
    discovery_wait: Option<Duration>,
    discovery_concurrency: Option<usize>,
    manifest_names: Option<ManifestNames>,
    shared_sessions: bool,
}

impl Serve {
    /// Takes `arg` (and its value from `args`) when it is a flag only serving has; false when
    /// it is not one.
    fn flag(&mut self, arg: &str, args: &mut impl Iterator<Item = String>) -> Result<bool, String> {
        match arg {
            "--list-changed" => self.list_changed = true,
            "--shared-sessions" => self.shared_sessions = true,
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
fn manifest_names(text: &str, what: &str) -> Result<ManifestNames, String> {
    ManifestNames::from_name(text).ok_or_else(|| format!("{what} {text}: expected count or grouped"))
}

enum Command {
    Serve(Box<Serve>),
    Import { file: PathBuf, from: Option<ClientFormat> },
    Report { config: PathBuf, cache_dir: Option<PathBuf>, no_cache: bool, start: bool, json: bool },
}

fn parse(args: impl Iterator<Item = String>) -> Result<Option<Command>, String> {
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
            (None, "import" | "report") => {
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

/// The bearer token from the variable `--token-env` names.
fn token(variable: &str) -> Result<String, String> {
    match std::env::var(variable) {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_owned()),
        Ok(_) => Err(format!("--token-env {variable}: the variable is empty; put the bearer token in it")),
        Err(_) => Err(format!(
            "--token-env {variable}: the variable is not set (or not valid UTF-8); export it with the bearer token"
        )),
    }
}

/// Sends the library's `tracing` events to stderr, filtered by `TINYTOOLS_GATEWAY_LOG`, with
/// remote servers' secrets scrubbed.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TINYTOOLS_GATEWAY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(tinytools_gateway::redact::RedactingStderr)
        .with_ansi(false)
        .try_init();
}

fn main() -> ExitCode {
    init_logging();
    let command = match parse(std::env::args().skip(1)) {
        Ok(Some(command)) => command,
        Ok(None) => return ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tinytools-gateway: {message}");
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Import { file, from } => import(&file, from),
        Command::Report { config, cache_dir, no_cache, start, json } => {
            let Some(config) = load(&config) else { return ExitCode::from(2) };
            let cache = cache(cache_dir, no_cache);
            let Some(runtime) = runtime() else { return ExitCode::FAILURE };
            let options = ReportOptions::default().with_start(start);
            let report = runtime.block_on(report(&config, cache, &options));
            if json {
                match serde_json::to_string_pretty(&report) {
                    Ok(text) => println!("{text}"),
                    Err(error) => {
                        eprintln!("tinytools-gateway: could not write the report: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            } else {
                print!("{}", report.to_table());
            }
            ExitCode::SUCCESS
        }
        Command::Serve(serve) => match run(*serve) {
            Ok(()) => ExitCode::SUCCESS,
            Err(Exit::Usage(message)) => {
                eprintln!("tinytools-gateway: {message}");
                ExitCode::from(2)
            }
            Err(Exit::Failed(message)) => {
                eprintln!("tinytools-gateway: {message}");
                ExitCode::FAILURE
            }
        },
    }
}

/// How serving ended badly: a mistake in the command line or the config (exit status 2), or a
/// failure while serving (1).
enum Exit {
    Usage(String),
    Failed(String),
}

/// Serves until the client disconnects (stdio) or Ctrl-C (HTTP).
fn run(serve: Serve) -> Result<(), Exit> {
    let config = GatewayConfig::load(&serve.config).map_err(|error| Exit::Usage(error.to_string()))?;
    let cache = cache(serve.cache_dir.clone(), serve.no_cache);
    let gateway_options = gateway_options(&serve, cache.as_ref()).map_err(Exit::Usage)?;
    let http = http_options(&serve, cache.as_ref()).map_err(Exit::Usage)?;
    let runtime = runtime().ok_or_else(|| Exit::Failed("could not start the async runtime".into()))?;
    let served = runtime.block_on(async {
        let supervisor = Arc::new(Supervisor::new(&config, cache));
        let gateway = Gateway::new(supervisor, gateway_options);
        match http {
            Some(options) => serve_http(gateway, options).await,
            None => gateway.serve_stdio().await,
        }
    });
    served.map_err(|error| Exit::Failed(format!("serving stopped: {error}")))
}

/// The gateway's options from the command line (and TINYTOOLS_GATEWAY_MANIFEST_NAMES).
fn gateway_options(serve: &Serve, cache: Option<&ManifestCache>) -> Result<GatewayOptions, String> {
    let mut options = GatewayOptions::default().with_list_changed(serve.list_changed);
    if let Some(dir) = &serve.embedding_model {
        options = options.with_ranker(embedding_ranker(dir, cache)?, EMBEDDING_RANKER_TIMEOUT);
    }
    if let Some(wait) = serve.discovery_wait {
        options = options.with_discovery_wait(wait);
    }
    if let Some(servers) = serve.discovery_concurrency {
        options = options.with_discovery_concurrency(servers);
    }
    let from_env = std::env::var(MANIFEST_NAMES_VAR).ok().filter(|value| !value.trim().is_empty());
    let names = match (serve.manifest_names, from_env) {
        (Some(names), _) => names,
        (None, Some(value)) => manifest_names(&value, MANIFEST_NAMES_VAR)?,
        (None, None) => ManifestNames::default(),
    };
    Ok(options.with_manifest_names(names))
}

/// The variable `--manifest-names` defaults from.
const MANIFEST_NAMES_VAR: &str = "TINYTOOLS_GATEWAY_MANIFEST_NAMES";

/// The HTTP listener's options, when serving HTTP: its token from `--token-env`, and with
/// `--shared-sessions` the session directory under the cache.
fn http_options(serve: &Serve, cache: Option<&ManifestCache>) -> Result<Option<HttpOptions>, String> {
    let Some((addr, token_env)) = &serve.http else { return Ok(None) };
    let mut http = HttpOptions::new(*addr);
    if let Some(variable) = token_env {
        http = http.with_token(token(variable)?);
    }
    if serve.shared_sessions {
        let cache = cache.ok_or(
            "--shared-sessions keeps sessions in the cache directory, and there is none: give --cache-dir <DIR> \
             (the same for every gateway process)",
        )?;
        let store = FileSessionStore::open(cache.dir().join("sessions")).map_err(|error| error.to_string())?;
        http = http.with_shared_sessions(store);
    }
    Ok(Some(http))
}

/// How long a search waits for the embedding ranker: its first search embeds every tool
/// (about 1 s for 41 tools on two busy cores here), so the runtime's 2 s default would fall
/// back to BM25 on a loaded machine.
const EMBEDDING_RANKER_TIMEOUT: Duration = Duration::from_secs(30);

/// The sentence-embedding ranker over the model in `dir`, built as the docs tell hosts to
/// (`EmbeddingRanker::load`: the measured blend and calibrated confidence), its vectors kept
/// in the cache directory's `vectors/`, one file per model directory name (the file itself
/// is keyed by the model, so a file another model wrote is replaced, never trusted).
#[cfg(feature = "embedding")]
fn embedding_ranker(dir: &Path, cache: Option<&ManifestCache>) -> Result<Arc<dyn ToolRanker>, String> {
    use tinytools::rank::embedding::EmbeddingRanker;
    let mut ranker = EmbeddingRanker::load(dir)
        .map_err(|error| format!("--embedding-model {}: {error}", dir.display()))?
        .on_progress(embedding_progress);
    if let Some(cache) = cache {
        let vectors = cache.dir().join("vectors");
        let name = dir.file_name().map_or_else(|| "model".into(), |name| name.to_string_lossy().into_owned());
        match std::fs::create_dir_all(&vectors) {
            Ok(()) => ranker = ranker.persist_to(vectors.join(format!("{name}.vec"))),
            Err(error) => eprintln!(
                "tinytools-gateway: cannot create {}: {error}; tool vectors are not kept across restarts",
                vectors.display()
            ),
        }
    }
    Ok(Arc::new(ranker))
}

/// The embedding of new tools as a progress bar when stderr is a terminal; otherwise one
/// `info` line when it is done.
#[cfg(feature = "embedding")]
fn embedding_progress(done: usize, total: usize) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        let width = 30 * done / total.max(1);
        eprint!("\rtinytools-gateway: embedding tools for tool_search [{:<30}] {done}/{total}", "#".repeat(width));
        if done == total {
            eprintln!();
        }
    } else if done == total {
        tracing::info!(tools = total, "embedded the new tools for tool_search");
    }
}

/// Without the `embedding` feature there is no encoder to load.
#[cfg(not(feature = "embedding"))]
fn embedding_ranker(dir: &Path, _cache: Option<&ManifestCache>) -> Result<Arc<dyn ToolRanker>, String> {
    Err(format!(
        "--embedding-model {}: this gateway was built without the `embedding` feature; build it with \
         `cargo install tinytools-gateway --features embedding` (or `cargo build -p tinytools-gateway --features embedding`)",
        dir.display()
    ))
}

/// Binds, says where on stderr, and serves until Ctrl-C.
async fn serve_http(gateway: Gateway, options: HttpOptions) -> Result<(), String> {
    let token = if options.has_token() { " (bearer token required)" } else { "" };
    let server = HttpServer::bind(options).await.map_err(|error| error.to_string())?;
    eprintln!("tinytools-gateway: serving MCP over streamable HTTP at {}{token}", server.url());
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    server.serve(gateway, shutdown).await;
    Ok(())
}

fn import(file: &std::path::Path, from: Option<ClientFormat>) -> ExitCode {
    match import_file(file, from) {
        Ok(imported) => {
            let servers = imported.config["mcpServers"].as_object().map_or(0, serde_json::Map::len);
            let format = match (from, imported.format) {
                (None, ClientFormat::ClaudeDesktop) => "an mcpServers file (Claude Desktop, Claude Code, Cursor)",
                (_, format) => format.name(),
            };
            eprintln!("tinytools-gateway import: read {} as {format}: {servers} server(s)", file.display());
            for note in &imported.notes {
                eprintln!("tinytools-gateway import: note: {note}");
            }
            match serde_json::to_string_pretty(&imported.config) {
                Ok(text) => {
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("tinytools-gateway import: could not write the config: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(error) => {
            eprintln!("tinytools-gateway import: {error}");
            ExitCode::from(2)
        }
    }
}

fn load(file: &std::path::Path) -> Option<GatewayConfig> {
    GatewayConfig::load(file).map_err(|error| eprintln!("tinytools-gateway: {error}")).ok()
}

fn cache(dir: Option<PathBuf>, no_cache: bool) -> Option<ManifestCache> {
    if no_cache { None } else { dir.or_else(ManifestCache::default_dir).map(ManifestCache::new) }
}

fn runtime() -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| eprintln!("tinytools-gateway: could not start the async runtime: {error}"))
        .ok()
}
