//! Test fixture for the gateway's tests (built with the `fixture` feature, never installed):
//! the 41-tool example catalogue over MCP on stdio, `calendar_cancel_event` Hidden, plus
//! `fixture_crash` (the process exits mid-call), `fixture_sleep` (a hang), `fixture_garbage`
//! (non-JSON-RPC bytes on stdout) and `fixture_progress` (progress notifications).
//!
//! Environment: `FIXTURE_EXIT_UNLESS=<path>` exits at start (status 3) unless the file
//! exists; `FIXTURE_HANG_UNLESS=<path>` never answers `initialize` unless the file exists;
//! `FIXTURE_WAIT_FOR=<path>` answers `initialize` once the file exists (a slow start the test
//! ends); `FIXTURE_START_CPU_MS=<ms>` uses that much CPU time before serving (an
//! interpreter's start, for the cold-start benchmark: with many at once on few cores, each
//! takes longer, as real ones do);
//! `FIXTURE_STARTS=<path>` appends the process id each time the process starts;
//! `FIXTURE_EVENTS=<path>` appends `cancelled <secs>` when a `fixture_sleep` call is cancelled.

use std::io::Write;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tinytools::mcp::McpToolServer;
use tinytools::{ToolContext, ToolExposure, tool};
use tinytools_examples::catalogue;

/// Exit the server process at once: a crash, for the gateway's fault tests.
#[tool]
async fn fixture_crash() -> String {
    std::process::exit(70)
}

/// Wait this many seconds, then answer: a hang, for the gateway's timeout tests.
#[tool]
async fn fixture_sleep(secs: u64, ctx: &ToolContext) -> String {
    tokio::select! {
        () = tokio::time::sleep(std::time::Duration::from_secs(secs)) => "slept".to_owned(),
        () = ctx.cancellation().cancelled() => {
            if let Some(path) = std::env::var_os("FIXTURE_EVENTS")
                && let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path)
            {
                let _ = writeln!(file, "cancelled {secs}");
            }
            "cancelled".to_owned()
        }
    }
}

/// Write lines that are not JSON-RPC to stdout, then answer (or, without `answer`, never).
#[tool]
async fn fixture_garbage(answer: bool) -> String {
    let garbage: &[&[u8]] = &[
        b"this line is not JSON\n",
        b"\xff\xfe\x00 binary bytes\n",
        b"{\"hello\": \"a JSON object that is no JSON-RPC message\"}\n",
        b"{\"jsonrpc\": \"2.0\", \"id\": 987654321, \"result\": {\"content\": []}}\n",
        b"[1, 2, 3]\n",
    ];
    {
        let mut stdout = std::io::stdout().lock();
        for line in garbage {
            let _ = stdout.write_all(line);
        }
        let _ = stdout.flush();
    }
    if !answer {
        std::future::pending::<()>().await;
    }
    "answered after garbage".to_owned()
}

/// Report progress `steps` times, then answer with the number of steps.
#[tool]
async fn fixture_progress(steps: u32) -> String {
    // Answered by `Fixture::call_tool`, which has the request's progress token.
    format!("{steps} steps")
}

/// The catalogue's server, with `fixture_progress` answered here.
struct Fixture(McpToolServer);

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.0.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "fixture_progress" {
            return self.0.call_tool(request, context).await;
        }
        let steps = request.arguments.as_ref().and_then(|a| a.get("steps")).and_then(serde_json::Value::as_u64);
        let steps = steps.unwrap_or(1);
        if let Some(token) = context.meta.get_progress_token() {
            for step in 1..=steps {
                #[allow(clippy::cast_precision_loss)]
                let param = ProgressNotificationParam::new(token.clone(), step as f64)
                    .with_total(steps as f64)
                    .with_message(format!("step {step} of {steps}"));
                let _ = context.peer.notify_progress(param).await;
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("{steps} steps"))]).into())
    }
}

/// Keeps one core busy until the process has used `cpu` of CPU time (read from
/// `/proc/self/stat`, in ticks of 10 ms), or, where that cannot be read, for `cpu` of wall time.
fn burn(cpu: std::time::Duration) {
    let used = || -> Option<std::time::Duration> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split(' ').collect();
        // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
        let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some(std::time::Duration::from_millis(ticks * 10))
    };
    let began = std::time::Instant::now();
    let mut spins: u64 = 0;
    loop {
        for _ in 0..100_000 {
            spins = std::hint::black_box(spins.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        let done = match used() {
            Some(used) => used >= cpu,
            None => began.elapsed() >= cpu,
        };
        if done {
            break;
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Some(path) = std::env::var_os("FIXTURE_STARTS") {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(file, "{}", std::process::id())?;
    }
    if let Some(path) = std::env::var_os("FIXTURE_EXIT_UNLESS")
        && !std::path::Path::new(&path).exists()
    {
        std::process::exit(3);
    }
    if let Some(path) = std::env::var_os("FIXTURE_HANG_UNLESS")
        && !std::path::Path::new(&path).exists()
    {
        std::future::pending::<()>().await;
    }
    if let Some(path) = std::env::var_os("FIXTURE_WAIT_FOR") {
        while !std::path::Path::new(&path).exists() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    if let Some(ms) = std::env::var("FIXTURE_START_CPU_MS").ok().and_then(|ms| ms.parse().ok()) {
        burn(std::time::Duration::from_millis(ms));
    }
    let mut registry = catalogue::registry();
    if let Some(tool) = registry.remove("calendar_cancel_event") {
        registry.register_as(tool, ToolExposure::Hidden)?;
    }
    registry.register(FixtureCrash)?.register(FixtureSleep)?.register(FixtureGarbage)?.register(FixtureProgress)?;
    let server = McpToolServer::new(Arc::new(registry)).with_server_info("gateway-fixture", "0.1.0");
    let running = Fixture(server).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
