//! The `tinytools-gateway` binary: serves the gateway over stdio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use tinytools_gateway::{Gateway, GatewayConfig, GatewayOptions, ManifestCache, Supervisor};

const HELP: &str = "\
tinytools-gateway: one MCP server in front of many.

Every configured MCP server's tools are offered behind two tools, `tool_search` (its
description lists every tool, within a token budget) and `call_tool {name, arguments}`,
plus the tools a server's config marks \"direct\". Tool lists are cached on disk, so the
gateway answers before any server runs; a server starts on its first call.

USAGE:
    tinytools-gateway --config <FILE> [--cache-dir <DIR>] [--no-cache]
        Serve MCP on stdin/stdout (what a client's config launches).

OPTIONS:
    --config <FILE>     The `mcpServers` JSON (Claude Desktop, Claude Code and Cursor's format),
                        with an optional \"gateway\" object per server: allow, deny (globs over
                        tool names), exposure (direct|deferred|hidden), tools (per-tool
                        exposure), start_timeout_secs, call_timeout_secs.
    --cache-dir <DIR>   Where tool lists are cached (default: $XDG_CACHE_HOME/tinytools-gateway,
                        else ~/.cache/tinytools-gateway).
    --no-cache          Keep no cache: list every server's tools at startup.
    -h, --help          This text.
    -V, --version       The version.

NOT IMPLEMENTED YET:
    tinytools-gateway import <FILE>    convert other clients' config files
    tinytools-gateway report           per-server tools, bytes and tokens
    --http 127.0.0.1:<PORT>            serve streamable HTTP instead of stdio
    Remote (\"url\") downstream servers are read from the config but answer
    \"not supported yet\" when called.
";

struct Args {
    config: PathBuf,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let (mut config, mut cache_dir, mut no_cache) = (None, None, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                return Ok(None);
            }
            "-V" | "--version" => {
                println!("tinytools-gateway {}", env!("CARGO_PKG_VERSION"));
                return Ok(None);
            }
            "--config" => config = Some(args.next().ok_or("--config needs a file: --config <FILE>")?.into()),
            "--cache-dir" => {
                cache_dir = Some(args.next().ok_or("--cache-dir needs a directory: --cache-dir <DIR>")?.into())
            }
            "--no-cache" => no_cache = true,
            "import" | "report" | "--http" => {
                return Err(format!("`{arg}` is not implemented yet; see --help for what works"));
            }
            other => return Err(format!("unknown argument `{other}`; see --help")),
        }
    }
    let config = config.ok_or("missing --config <FILE>: the mcpServers JSON to serve; see --help")?;
    Ok(Some(Args { config, cache_dir, no_cache }))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => return ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tinytools-gateway: {message}");
            return ExitCode::from(2);
        }
    };
    let config = match GatewayConfig::load(&args.config) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("tinytools-gateway: {error}");
            return ExitCode::from(2);
        }
    };
    let cache =
        if args.no_cache { None } else { args.cache_dir.or_else(ManifestCache::default_dir).map(ManifestCache::new) };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tinytools-gateway: could not start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        let supervisor = Arc::new(Supervisor::new(&config, cache));
        Gateway::new(supervisor, GatewayOptions::default()).serve_stdio().await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tinytools-gateway: serving stopped: {error}");
            ExitCode::FAILURE
        }
    }
}
