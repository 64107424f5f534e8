//! The gateway's first launch, measured and printed as one JSON object (a benchmark, not a
//! test: it asserts nothing, and CI does not time it).
//!
//! ```sh
//! cargo build --release -p tinytools-gateway --bins --examples
//! target/release/examples/cold_start > cold.json
//! ```
//!
//! For each scenario, 20 fixture servers are configured with an empty cache and the real
//! binary is launched over stdio, as a client's config launches it. From the spawn:
//! - `first_list`: when the first `tools/list` was answered, its bytes, and how many servers
//!   it said were still starting;
//! - `search`: a `tool_search` for "stock price for a ticker symbol" sent 0.5 s after the
//!   spawn: when it was answered, what it matched first, and the start time of that match's
//!   server (spawn to listed tools, from the gateway's log) — the target is an answer within
//!   that time;
//! - `all_listed_ms`: when the `notifications/tools/list_changed` that ends discovery arrived
//!   (target: within 8 s), and how many came (target: 1); the slowest server's start;
//! - `cpu_at_all_listed` (Linux): the CPU time the gateway process and its servers had used
//!   by then, which shows whose work the wait is (`servers_ms` over the cores there are is the
//!   least the launch can take);
//! - `warm`: the next launch on the now-warm cache, spawn to the first `tools/list` answered
//!   (median of 5; target ≤ 100 ms) and its bytes (target ≤ 3,000).
//!
//! Scenarios: `plain` (the fixture starts in milliseconds), `interpreter` (each server uses
//! 500 ms of CPU before it answers, as a Node or Python server starting up), and, when
//! `.ci/mcp-peers` has installed them, `reference servers`: ten npm `server-everything` and
//! ten PyPI `mcp-server-time`, real servers (the search then asks for "current time in a
//! timezone"). The last two also with every server started at once
//! (`--discovery-concurrency 20`), for comparison. The fixture and the gateway are found
//! beside this example's directory, or at `GATEWAY_FIXTURE` and `GATEWAY_BIN`; the reference
//! servers in `target/mcp-peers` or `$TINYTOOLS_MCP_PEERS`.

#[path = "common/beside.rs"]
mod beside;
use beside::beside;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

type Failure = Box<dyn std::error::Error>;

const SERVERS: usize = 20;
const FIXTURE_QUERY: &str = "stock price for a ticker symbol";
const PEERS_QUERY: &str = "current time in a timezone";
const SEARCH_AT: Duration = Duration::from_millis(500);
const WARM_RUNS: usize = 5;

/// When each `notifications/tools/list_changed` arrived.
#[derive(Clone)]
struct Notified {
    began: Instant,
    at: Arc<Mutex<Vec<Duration>>>,
}

impl ClientHandler for Notified {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Ok(mut at) = self.at.lock() {
            at.push(self.began.elapsed());
        }
    }
}

struct Scenario {
    name: &'static str,
    /// The fixture's CPU at start, or `None` for the reference servers.
    cpu_ms: Option<u64>,
    concurrency: Option<usize>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Failure> {
    let fixture = beside("GATEWAY_FIXTURE", "gateway-fixture-server")?;
    let binary = beside("GATEWAY_BIN", "tinytools-gateway")?;
    let peers = peers();
    let mut scenarios = vec![
        Scenario { name: "plain", cpu_ms: Some(0), concurrency: None },
        Scenario { name: "interpreter", cpu_ms: Some(500), concurrency: None },
        Scenario { name: "interpreter, all at once", cpu_ms: Some(500), concurrency: Some(SERVERS) },
    ];
    if peers.is_some() {
        scenarios.push(Scenario { name: "reference servers", cpu_ms: None, concurrency: None });
        scenarios.push(Scenario { name: "reference servers, all at once", cpu_ms: None, concurrency: Some(SERVERS) });
    }
    let mut results = Vec::new();
    for scenario in &scenarios {
        let dir = std::env::temp_dir().join(format!("tinytools-gateway-cold-{}-{}", std::process::id(), results.len()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let (config, query) = match (scenario.cpu_ms, &peers) {
            (Some(cpu_ms), _) => (write_config(&dir, &fixture, cpu_ms)?, FIXTURE_QUERY),
            (None, Some(peers)) => (write_peers_config(&dir, peers)?, PEERS_QUERY),
            (None, None) => continue,
        };
        let mut extra = Vec::new();
        if let Some(servers) = scenario.concurrency {
            extra = vec!["--discovery-concurrency".to_owned(), servers.to_string()];
        }
        let cold = cold(&binary, &config, &dir.join("cache"), &extra, query).await?;
        let warm = warm(&binary, &config, &dir.join("cache")).await?;
        results.push(json!({"scenario": scenario.name, "servers": SERVERS, "fixture_start_cpu_ms": scenario.cpu_ms,
            "discovery_concurrency": scenario.concurrency.map_or_else(|| json!("default"), |n| json!(n)),
            "cold": cold, "warm": warm}));
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!("{}", serde_json::to_string_pretty(&Value::Array(results))?);
    Ok(())
}

fn write_config(dir: &Path, fixture: &Path, cpu_ms: u64) -> Result<PathBuf, Failure> {
    let servers: serde_json::Map<String, Value> = (0..SERVERS)
        .map(|i| {
            let env = json!({"FIXTURE_START_CPU_MS": cpu_ms.to_string()});
            (format!("server{i:02}"), json!({"command": fixture, "env": env}))
        })
        .collect();
    let path = dir.join("config.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string())?;
    Ok(path)
}

fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e4).round() / 10.0
}

fn gateway(binary: &Path, config: &Path, cache: &Path, extra: &[String]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(binary);
    command.arg("--config").arg(config).arg("--cache-dir").arg(cache).args(extra);
    command.env("TINYTOOLS_GATEWAY_LOG", "tinytools_gateway::discovery=info");
    command
}

/// The reference servers `.ci/mcp-peers` installs, when they are there.
fn peers() -> Option<PathBuf> {
    let dir = match std::env::var_os("TINYTOOLS_MCP_PEERS") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_exe().ok()?.parent()?.parent()?.parent()?.join("mcp-peers"),
    };
    let ready =
        dir.join("node_modules/.bin/mcp-server-everything").exists() && dir.join("venv/bin/mcp-server-time").exists();
    ready.then_some(dir)
}

fn write_peers_config(dir: &Path, peers: &Path) -> Result<PathBuf, Failure> {
    let everything = peers.join("node_modules/.bin/mcp-server-everything");
    let time = peers.join("venv/bin/mcp-server-time");
    let servers: serde_json::Map<String, Value> = (0..SERVERS)
        .map(|i| match i % 2 {
            0 => (format!("everything{i:02}"), json!({"command": everything, "args": ["stdio"]})),
            _ => (format!("time{i:02}"), json!({"command": time, "args": ["--local-timezone=UTC"]})),
        })
        .collect();
    let path = dir.join("config.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string())?;
    Ok(path)
}

/// How many servers a manifest says are still starting (0 when it says nothing).
fn starting(description: &str) -> usize {
    description
        .split("Still starting: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// One cold launch, measured from the spawn.
async fn cold(binary: &Path, config: &Path, cache: &Path, extra: &[String], query: &str) -> Result<Value, Failure> {
    let began = Instant::now();
    let notified = Notified { began, at: Arc::default() };
    let (transport, stderr) = TokioChildProcess::builder(gateway(binary, config, cache, extra))
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let pid = transport.id();
    let log = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut text).await;
        }
        text
    });
    let client = notified.clone().serve(transport).await?;
    let initialized = began.elapsed();
    // The first tools/list and the search at 0.5 s go out independently, as a client's would.
    let (first, search) = tokio::join!(first_list(&client, began), async {
        tokio::time::sleep(SEARCH_AT.saturating_sub(began.elapsed())).await;
        let sent = began.elapsed();
        let arguments = json!({"query": query}).as_object().cloned().unwrap_or_default();
        let answer = client.peer().call_tool(CallToolRequestParams::new("tool_search").with_arguments(arguments)).await;
        (sent, answer, began.elapsed())
    });
    let (first, (sent, answer, answered)) = (first?, search);
    let answer = answer?;
    let text: String = answer.content.iter().filter_map(|block| block.as_text().map(|t| t.text.clone())).collect();
    let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let matched = answer["matches"][0]["name"].as_str().unwrap_or_default().to_owned();
    for _ in 0..600 {
        if notified.at.lock().map(|at| !at.is_empty()).unwrap_or(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cpu = pid.map(cpu_ms);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let full = first_list(&client, began).await?;
    client.cancel().await?;
    let starts = server_starts(&tokio::time::timeout(Duration::from_secs(10), log).await??);
    let server = matched.split("__").next().unwrap_or_default();
    let notifications = notified.at.lock().map(|at| at.clone()).unwrap_or_default();
    Ok(json!({
        "initialize_ms": millis(initialized),
        "first_list": first,
        "search": {"query": query, "sent_at_ms": millis(sent), "answered_at_ms": millis(answered), "took_ms": millis(answered - sent),
            "matched": matched, "matched_server_start_ms": starts.iter().find(|(s, _)| s == server).map(|(_, ms)| ms),
            "still_starting_in_answer": answer["starting"].as_array().map_or(0, Vec::len)},
        "all_listed_ms": notifications.first().map(|at| millis(*at)),
        "notifications": notifications.len(),
        "servers_listed": starts.len(),
        "slowest_server_start_ms": starts.iter().map(|(_, ms)| *ms).max(),
        "full_list": full,
        "cpu_at_all_listed": cpu,
    }))
}

/// The CPU time (user and system, ms) used so far by process `pid` and by its descendants
/// (`/proc`, Linux only; zeros elsewhere).
fn cpu_ms(pid: u32) -> Value {
    let ticks = |pid: u32| -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // After the command name in parentheses: state is field 3, utime 14 and stime 15.
        let fields: Vec<&str> = stat.rsplit_once(')').map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
        fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
            + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
    };
    let children = |pid: u32| -> Vec<u32> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).map(|dir| dir.flatten().collect()).unwrap_or(vec![]);
        tasks
            .iter()
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|text| text.split_whitespace().filter_map(|id| id.parse().ok()).collect::<Vec<u32>>())
            .collect()
    };
    let (mut servers, mut descendants, mut queue) = (0, 0, children(pid));
    while let Some(child) = queue.pop() {
        servers += ticks(child);
        descendants += 1;
        queue.extend(children(child));
    }
    // Clock ticks are 10 ms on Linux (USER_HZ = 100).
    json!({"gateway_ms": ticks(pid) * 10, "servers_ms": servers * 10, "processes": descendants})
}

/// A `tools/list`: when it was answered, its bytes, and how many servers it says are starting.
async fn first_list<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    began: Instant,
) -> Result<Value, Failure> {
    let tools = client.peer().list_all_tools().await?;
    let at = began.elapsed();
    let bytes = serde_json::to_vec(&json!({"tools": tools}))?.len();
    let description = tools.first().and_then(|tool| tool.description.as_deref()).unwrap_or_default();
    Ok(json!({"at_ms": millis(at), "bytes": bytes, "servers_starting": starting(description)}))
}

/// Each server's start (spawn to listed tools), from the gateway's "listed the server's tools"
/// log lines (`server=server07 tools=45 ms=123`).
fn server_starts(log: &str) -> Vec<(String, u64)> {
    log.lines()
        .filter(|line| line.contains("listed the server's tools"))
        .filter_map(|line| {
            let field = |key: &str| line.split(' ').find_map(|word| word.strip_prefix(key)).map(str::to_owned);
            Some((field("server=")?, field("ms=")?.parse().ok()?))
        })
        .collect()
}

/// Launches on the warm cache: spawn to the first `tools/list` answered.
async fn warm(binary: &Path, config: &Path, cache: &Path) -> Result<Value, Failure> {
    let mut samples = Vec::new();
    let mut bytes = 0;
    for _ in 0..WARM_RUNS {
        let began = Instant::now();
        let client = ().serve(TokioChildProcess::new(gateway(binary, config, cache, &[]))?).await?;
        let tools = client.peer().list_all_tools().await?;
        samples.push(began.elapsed());
        bytes = serde_json::to_vec(&json!({"tools": tools}))?.len();
        client.cancel().await?;
    }
    samples.sort();
    let median = samples.get(samples.len() / 2).copied().unwrap_or_default();
    Ok(json!({"first_list_median_ms": millis(median), "first_list_bytes": bytes, "runs": WARM_RUNS}))
}
