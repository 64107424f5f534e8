//! The gateway's performance targets, measured and printed as one JSON object (a benchmark,
//! not a test: it asserts nothing, and CI does not time it).
//!
//! ```sh
//! cargo build --release -p tinytools-gateway --bins --examples
//! target/release/examples/gateway_bench > bench.json
//! ```
//!
//! - `ready`: 20 fixture servers configured, their tool lists cached: the time from nothing to
//!   the first `tools/list` answered, for the library in process (supervisor, gateway, rmcp
//!   handshake over a pipe, `tools/list`) and for the binary (spawn, handshake over stdio,
//!   `tools/list`), with the number of fixture processes either spawned (the target is 0).
//! - `call_overhead`: the median latency of `stock_quote` through the gateway's `call_tool`
//!   minus the median of the same call made directly with an rmcp client on the fixture.
//! - `first_list`: the gateway's first `tools/list` versus every tool flattened, for 10 to
//!   1,000 downstream tools (copies of the fixture's real tools), as `report` counts bytes.
//! - `embedding_first_search`, when `GATEWAY_EMBEDDING_MODEL` names a model directory (and the
//!   binary was built with `--features embedding`): the binary launched over the same 20
//!   servers with `--embedding-model`, from spawn to its first `tool_search` answered, with no
//!   saved vectors (`cold`: the whole catalogue is embedded) and with the vectors its cache
//!   kept from the launch before (`restart`).
//!
//! The fixture server and the gateway binary are found beside this example's directory
//! (`target/<profile>/`), or at `GATEWAY_FIXTURE` and `GATEWAY_BIN`.

#[path = "common/beside.rs"]
mod beside;
use beside::beside;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tinytools_gateway::cache::{CACHE_FORMAT, Manifest, config_hash};
use tinytools_gateway::report::{ReportOptions, report};
use tinytools_gateway::{Gateway, GatewayConfig, GatewayOptions, ManifestCache, Supervisor};

type Client = RunningService<RoleClient, ()>;
type Failure = Box<dyn std::error::Error>;

const SERVERS: usize = 20;
const READY_RUNS: usize = 20;
const CALLS: usize = 400;
const WARMUP: usize = 40;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Failure> {
    let dir = std::env::temp_dir().join(format!("tinytools-gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let fixture = beside("GATEWAY_FIXTURE", "gateway-fixture-server")?;
    let binary = beside("GATEWAY_BIN", "tinytools-gateway")?;
    let starts = dir.join("starts");
    let servers: serde_json::Map<String, Value> = (0..SERVERS)
        .map(|i| (format!("server{i:02}"), json!({"command": fixture, "env": {"FIXTURE_STARTS": starts}})))
        .collect();
    let config_path = dir.join("config.json");
    std::fs::write(&config_path, json!({"mcpServers": servers}).to_string())?;
    let config = GatewayConfig::load(&config_path)?;
    let cache = ManifestCache::new(dir.join("cache"));
    // Warm the cache: `report` starts each server once and stores its tools.
    let warmed = report(&config, Some(cache.clone()), &ReportOptions::default()).await;
    if warmed.failures > 0 {
        return Err(format!("the fixture did not start: {}", warmed.to_table()).into());
    }

    let mut output = json!({
        "ready": ready(&config, &cache, &binary, &config_path, &starts).await?,
        "call_overhead": call_overhead(&config, &cache, &fixture).await?,
        "first_list": first_list(&dir, &cache, &config).await?,
    });
    if let Some(model) = std::env::var_os("GATEWAY_EMBEDDING_MODEL") {
        output["embedding_first_search"] =
            embedding_first_search(&binary, &config_path, &cache, model.as_ref()).await?;
    }
    println!("{}", serde_json::to_string_pretty(&output)?);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map(|text| text.lines().count()).unwrap_or(0)
}

fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn summary(samples: &[Duration]) -> Value {
    let max = samples.iter().max().copied().unwrap_or_default();
    json!({"median_ms": millis(median(samples.to_vec())), "max_ms": millis(max), "runs": samples.len()})
}

/// An in-process gateway with an rmcp client on the other end of a pipe.
async fn in_process(config: &GatewayConfig, cache: &ManifestCache) -> Result<(Client, Gateway), Failure> {
    let supervisor = Arc::new(Supervisor::new(config, Some(cache.clone())));
    let gateway = Gateway::new(supervisor, GatewayOptions::default());
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let served = gateway.clone();
    tokio::spawn(async move {
        if let Ok(running) = served.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    Ok((().serve(client_io).await?, gateway))
}

async fn ready(
    config: &GatewayConfig,
    cache: &ManifestCache,
    binary: &Path,
    config_path: &Path,
    starts: &Path,
) -> Result<Value, Failure> {
    let before = lines(starts);
    let mut library = Vec::new();
    let mut listed_bytes = 0;
    for _ in 0..READY_RUNS {
        let began = Instant::now();
        let (client, gateway) = in_process(config, cache).await?;
        let tools = client.peer().list_all_tools().await?;
        library.push(began.elapsed());
        listed_bytes = serde_json::to_vec(&json!({"tools": tools}))?.len();
        if gateway.supervisor().servers().any(|server| server.starts() > 0) {
            return Err("a server was started to answer tools/list".into());
        }
        client.cancel().await?;
    }
    let mut process = Vec::new();
    for _ in 0..READY_RUNS {
        let began = Instant::now();
        let mut command = tokio::process::Command::new(binary);
        command.arg("--config").arg(config_path).arg("--cache-dir").arg(cache.dir());
        let client = ().serve(TokioChildProcess::new(command)?).await?;
        client.peer().list_all_tools().await?;
        process.push(began.elapsed());
        client.cancel().await?;
    }
    Ok(json!({
        "servers": SERVERS,
        "library": summary(&library),
        "binary": summary(&process),
        "first_list_bytes": listed_bytes,
        "servers_spawned": lines(starts) - before,
    }))
}

async fn call_overhead(config: &GatewayConfig, cache: &ManifestCache, fixture: &Path) -> Result<Value, Failure> {
    let arguments = json!({"symbol": "ACME"});
    let Value::Object(arguments) = arguments else { return Err("arguments".into()) };
    let direct = ().serve(TokioChildProcess::new(tokio::process::Command::new(fixture))?).await?;
    let (through, _gateway) = in_process(config, cache).await?;
    let forwarded = json!({"name": "server00__stock_quote", "arguments": arguments});
    let Value::Object(forwarded) = forwarded else { return Err("arguments".into()) };
    let (mut direct_samples, mut gateway_samples) = (Vec::new(), Vec::new());
    // Interleaved, so both see the same machine load.
    for i in 0..WARMUP + CALLS {
        let began = Instant::now();
        let answer = direct
            .peer()
            .call_tool(CallToolRequestParams::new("stock_quote").with_arguments(arguments.clone()))
            .await?;
        let direct_took = began.elapsed();
        let began = Instant::now();
        let relayed =
            through.peer().call_tool(CallToolRequestParams::new("call_tool").with_arguments(forwarded.clone())).await?;
        let gateway_took = began.elapsed();
        if answer.is_error == Some(true) || relayed.is_error == Some(true) || answer.content != relayed.content {
            return Err(format!("the answers differ: {answer:?} / {relayed:?}").into());
        }
        if i >= WARMUP {
            direct_samples.push(direct_took);
            gateway_samples.push(gateway_took);
        }
    }
    let (direct_median, gateway_median) = (median(direct_samples.clone()), median(gateway_samples.clone()));
    direct.cancel().await?;
    through.cancel().await?;
    Ok(json!({
        "calls": CALLS,
        "direct": summary(&direct_samples),
        "through_gateway": summary(&gateway_samples),
        "overhead_median_ms": millis(gateway_median.saturating_sub(direct_median)),
    }))
}

/// For each size, servers holding copies of the fixture's tools (cached, never started).
async fn first_list(dir: &Path, cache: &ManifestCache, config: &GatewayConfig) -> Result<Value, Failure> {
    let template = config.servers.values().next().and_then(|server| cache.load(server)).ok_or("no cached manifest")?;
    let per_server = template.tools.len();
    let mut rows = Vec::new();
    for total in [10_usize, 100, 300, 1_000] {
        let servers = total.div_ceil(per_server);
        let entries: serde_json::Map<String, Value> = (0..servers)
            .map(|i| (format!("svc{i:02}"), json!({"command": format!("/nonexistent/bench-{total}-{i}")})))
            .collect();
        let path = dir.join(format!("first-list-{total}.json"));
        std::fs::write(&path, json!({"mcpServers": entries}).to_string())?;
        let sized = GatewayConfig::load(&path)?;
        let sized_cache = ManifestCache::new(dir.join(format!("cache-{total}")));
        for (i, server) in sized.servers.values().enumerate() {
            let take = (total - i * per_server).min(per_server);
            let manifest = Manifest {
                format: CACHE_FORMAT,
                config_hash: config_hash(server),
                tools: template.tools[..take].to_vec(),
                ..template.clone()
            };
            sized_cache.store(server, &manifest)?;
        }
        let measured = report(&sized, Some(sized_cache), &ReportOptions::default()).await;
        let tools: usize = measured.servers.iter().filter_map(|server| server.tools).sum();
        rows.push(json!({
            "downstream_tools": tools,
            "flattened_bytes": measured.flattened.bytes,
            "gateway_bytes": measured.gateway.cost.bytes,
            "gateway_tokens": measured.gateway.cost.tokens,
            "saved_percent": measured.saved_percent,
        }));
    }
    Ok(Value::Array(rows))
}

const EMBEDDING_RUNS: usize = 5;

/// The binary with `--embedding-model`: spawn to first search answered, without and with the
/// vectors its cache keeps.
async fn embedding_first_search(
    binary: &Path,
    config_path: &Path,
    cache: &ManifestCache,
    model: &Path,
) -> Result<Value, Failure> {
    let search = json!({"name": "tool_search", "arguments": {"query": "convert 250 euros into yen"}});
    let Value::Object(search) = search else { return Err("arguments".into()) };
    let launch = || async {
        let began = Instant::now();
        let mut command = tokio::process::Command::new(binary);
        command
            .arg("--config")
            .arg(config_path)
            .arg("--cache-dir")
            .arg(cache.dir())
            .arg("--embedding-model")
            .arg(model);
        let client = ().serve(TokioChildProcess::new(command)?).await?;
        let params = CallToolRequestParams::new("call_tool").with_arguments(search.clone());
        let answer = client.peer().call_tool(params).await?;
        let took = began.elapsed();
        client.cancel().await?;
        let text: String = answer.content.iter().filter_map(|block| block.as_text().map(|t| t.text.clone())).collect();
        Ok::<_, Failure>((took, text))
    };
    let vectors = cache.dir().join("vectors");
    let (mut cold, mut restart, mut answers) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..EMBEDDING_RUNS {
        let _ = std::fs::remove_dir_all(&vectors);
        let (took, text) = launch().await?;
        cold.push(took);
        answers.push(text);
        let (took, text) = launch().await?;
        restart.push(took);
        answers.push(text);
    }
    answers.dedup();
    let saved_bytes =
        std::fs::read_dir(&vectors)?.filter_map(|entry| entry.ok()?.metadata().ok()).map(|m| m.len()).sum::<u64>();
    Ok(json!({
        "model": model.file_name().map(|name| name.to_string_lossy().into_owned()),
        "cold": summary(&cold),
        "restart": summary(&restart),
        "saved_bytes": saved_bytes,
        "same_answer_every_launch": answers.len() == 1,
    }))
}
