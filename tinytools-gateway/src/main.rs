//! The `tinytools-gateway` binary: serves the gateway over stdio or streamable HTTP, imports
//! other clients' configs, writes itself into a client's config (`setup`), and reports what
//! the gateway saves. The command line is parsed in `cli`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tinytools::ToolRanker;
use tinytools::mcp::SummaryWriter;
use tinytools::providers::OpenAiCompatible;

mod cli;

use cli::{Command, Serve, manifest_names, parse};
use tinytools_gateway::import::{ClientFormat, import_file};
use tinytools_gateway::report::{ReportOptions, report};
use tinytools_gateway::sessions::FileSessionStore;
use tinytools_gateway::setup::{Env, SetupOptions};
use tinytools_gateway::{
    Gateway, GatewayConfig, GatewayOptions, HttpOptions, HttpServer, ManifestCache, ManifestNames, Supervisor,
};
use tokio_util::sync::CancellationToken;

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
        Command::Setup { options, undo } => setup(&options, undo),
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
    let summaries = summary_writer(&serve).map_err(Exit::Usage)?;
    let runtime = runtime().ok_or_else(|| Exit::Failed("could not start the async runtime".into()))?;
    let served = runtime.block_on(async {
        let supervisor = Arc::new(Supervisor::new(&config, cache));
        if let Some(writer) = summaries {
            tokio::spawn(tinytools_gateway::summaries::keep_summaries(Arc::clone(&supervisor), writer));
        }
        let gateway = Gateway::new(supervisor, gateway_options);
        match http {
            Some(options) => serve_http(gateway, options).await,
            None => gateway.serve_stdio().await,
        }
    });
    served.map_err(|error| Exit::Failed(format!("serving stopped: {error}")))
}

/// With `--summaries`, the writer over the chat model the environment names.
fn summary_writer(serve: &Serve) -> Result<Option<SummaryWriter>, String> {
    if !serve.summaries {
        return Ok(None);
    }
    let model = OpenAiCompatible::from_env().map_err(|error| format!("--summaries: {error}"))?;
    Ok(Some(SummaryWriter::new(Arc::new(model))))
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
    if let Some(candidates) = serve.search_candidates {
        options = options.with_search_candidates(candidates, 1_500);
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
/// (`tinytools_embed::load_ranker`: the measured blend and calibrated confidence), its vectors kept
/// in the cache directory's `vectors/`, one file per model directory name (the file itself
/// is keyed by the model, so a file another model wrote is replaced, never trusted).
#[cfg(feature = "embedding")]
fn embedding_ranker(dir: &Path, cache: Option<&ManifestCache>) -> Result<Arc<dyn ToolRanker>, String> {
    let mut ranker = tinytools_embed::load_ranker(dir)
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

/// `tinytools-gateway setup`: what was done on stdout, the conversion's notes on stderr.
fn setup(options: &SetupOptions, undo: bool) -> ExitCode {
    let env = Env::from_process();
    let done = if undo {
        tinytools_gateway::setup::undo(options.client, options.file.as_deref(), options.dry_run, &env)
    } else {
        tinytools_gateway::setup::setup(options, &env)
    };
    match done {
        Ok(report) => {
            for note in &report.notes {
                eprintln!("tinytools-gateway setup: note: {note}");
            }
            for line in &report.lines {
                println!("{}", line.trim_end());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tinytools-gateway setup: {error}");
            ExitCode::from(error.exit_status())
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
