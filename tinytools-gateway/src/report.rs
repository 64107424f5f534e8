//! `tinytools-gateway report`: per server, what its tools cost a client that lists them all
//! (the "flattened" `tools/list`) versus what the gateway's first `tools/list` costs.
//!
//! - A server's tools come from the manifest cache when it holds them; otherwise the server is
//!   started (one at a time, so the timings do not compete) and its `tools/list` is cached.
//!   With [`ReportOptions::start`] every server is started, cached or not.
//! - **Cold start** is the time from spawning the server to its answered `tools/list`
//!   (spawn, `initialize`, `tools/list`), in milliseconds; `None` when the server was not
//!   started.
//! - **Bytes** are those of each tool as MCP JSON, compact, summed over tools: for a server,
//!   `{name, description, inputSchema}` per tool (every tool it lists, since a client without
//!   the gateway gets them all); for the gateway, its `tool_search`, `call_tool` and Direct
//!   tools as it lists them. **Tokens** are [`EstimatedTokens`] of the same text.
//! - A server that cannot be started or listed is a failure, its message naming the server and
//!   what to check; its tools count as unknown (it adds nothing to the totals).

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::Tool as RemoteTool;
use serde::Serialize;
use serde_json::{Map, Value};
use tinytools::schema::{EstimatedTokens, TokenCounter};

use crate::cache::{CachedTool, ManifestCache};
use crate::catalog::Catalog;
use crate::config::{Exposure, GatewayConfig};
use crate::listing::listed_tools;
use crate::options::{GatewayOptions, policy};
use crate::supervisor::Supervisor;

/// What the report does.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ReportOptions {
    /// Start every server (and refresh its cache), not only those without a cached manifest.
    pub start: bool,
    /// The gateway options whose first `tools/list` is measured.
    pub gateway: GatewayOptions,
}

impl ReportOptions {
    /// Sets [`start`](Self::start).
    #[must_use]
    pub fn with_start(mut self, start: bool) -> Self {
        self.start = start;
        self
    }
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The config file.
    pub config: String,
    /// One entry per enabled server, by name.
    pub servers: Vec<ServerReport>,
    /// The flattened lists of every server together.
    pub flattened: Cost,
    /// The gateway's first `tools/list`.
    pub gateway: GatewayCost,
    /// How much smaller the gateway's first list is than the flattened lists, in percent of
    /// the flattened bytes (`None` when no tools are known).
    pub saved_percent: Option<f64>,
    /// How many servers failed.
    pub failures: usize,
}

/// One server's line.
#[derive(Clone, Debug, Serialize)]
pub struct ServerReport {
    /// Its config name.
    pub name: String,
    /// The tools it lists (`None` when unknown).
    pub tools: Option<usize>,
    /// Of those, the ones the gateway exposes (not Hidden by the config).
    pub exposed: Option<usize>,
    /// Of those, the Direct ones.
    pub direct: Option<usize>,
    /// Its flattened tool list.
    pub flattened: Cost,
    /// Whether its tools came from the manifest cache.
    pub from_cache: bool,
    /// Spawn to answered `tools/list`, in milliseconds, when it was started.
    pub cold_start_ms: Option<u64>,
    /// Why it could not be started or listed.
    pub failure: Option<String>,
}

/// The size of some tool declarations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    /// Bytes of compact MCP JSON.
    pub bytes: usize,
    /// Estimated tokens of the same.
    pub tokens: usize,
}

/// The gateway's first `tools/list`.
#[derive(Clone, Debug, Serialize)]
pub struct GatewayCost {
    /// The tools it lists: `tool_search`, `call_tool`, then the Direct tools.
    pub tools: Vec<String>,
    /// Their size.
    #[serde(flatten)]
    pub cost: Cost,
}

impl Cost {
    fn of(tools: &[RemoteTool]) -> Self {
        tools.iter().fold(Self::default(), |sum, tool| {
            let text = serde_json::to_string(tool).unwrap_or_default();
            Self { bytes: sum.bytes + text.len(), tokens: sum.tokens + EstimatedTokens.count(&text) }
        })
    }

    fn add(self, other: Self) -> Self {
        Self { bytes: self.bytes + other.bytes, tokens: self.tokens + other.tokens }
    }
}

/// A cached tool as a client without the gateway would list it: name, description and
/// `inputSchema`.
fn flattened(tool: &CachedTool) -> RemoteTool {
    let schema = match &tool.input_schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let mut listed = RemoteTool::new(tool.name.clone(), String::new(), Arc::new(schema));
    listed.description = tool.description.clone().map(Into::into);
    listed
}

/// Measures every server of `config`, starting those the cache does not know (all of them
/// with [`ReportOptions::start`]). Call within a Tokio runtime.
pub async fn report(config: &GatewayConfig, cache: Option<ManifestCache>, options: &ReportOptions) -> Report {
    let supervisor = Supervisor::new(config, cache);
    let mut servers = Vec::new();
    for server in supervisor.servers() {
        let from_cache = server.manifest().is_some();
        let (mut cold_start_ms, mut failure) = (None, None);
        if options.start || !from_cache {
            let began = Instant::now();
            match server.refresh_manifest().await {
                Ok(_) => cold_start_ms = Some(u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX)),
                Err(error) => failure = Some(error.to_string()),
            }
        }
        let manifest = server.manifest();
        let policy = &server.config().policy;
        let count = |wanted: &dyn Fn(Exposure) -> bool| {
            manifest.as_ref().map(|m| m.tools.iter().filter(|t| wanted(policy.exposure_of(&t.name))).count())
        };
        let tools: Vec<RemoteTool> =
            manifest.as_ref().map(|m| m.tools.iter().map(flattened).collect()).unwrap_or_default();
        servers.push(ServerReport {
            name: server.config().name.clone(),
            tools: manifest.as_ref().map(|m| m.tools.len()),
            exposed: count(&|exposure| exposure != Exposure::Hidden),
            direct: count(&|exposure| exposure == Exposure::Direct),
            flattened: Cost::of(&tools),
            from_cache,
            cold_start_ms,
            failure,
        });
    }
    let catalog = Catalog::build(&supervisor, policy(&options.gateway));
    let listed = listed_tools(&catalog, options.gateway.manifest_names);
    let gateway = GatewayCost { tools: listed.iter().map(|t| t.name.to_string()).collect(), cost: Cost::of(&listed) };
    let flattened = servers.iter().fold(Cost::default(), |sum, server| sum.add(server.flattened));
    // Byte counts stay far below 2^52, where f64 is exact.
    #[allow(clippy::cast_precision_loss)]
    let saved_percent = (flattened.bytes > 0)
        .then(|| ((1.0 - gateway.cost.bytes as f64 / flattened.bytes as f64) * 1000.0).round() / 10.0);
    let failures = servers.iter().filter(|server| server.failure.is_some()).count();
    Report { config: config.file.display().to_string(), servers, flattened, gateway, saved_percent, failures }
}

impl Report {
    /// The report as a table, for a terminal.
    pub fn to_table(&self) -> String {
        let mut rows = vec![[
            "server".to_owned(),
            "tools".to_owned(),
            "exposed".to_owned(),
            "bytes".to_owned(),
            "~tokens".to_owned(),
            "cached".to_owned(),
            "cold start".to_owned(),
            "status".to_owned(),
        ]];
        let or_dash = |value: Option<usize>| value.map_or_else(|| "-".to_owned(), thousands);
        for server in &self.servers {
            let known = server.tools.is_some();
            rows.push([
                server.name.clone(),
                or_dash(server.tools),
                or_dash(server.exposed),
                if known { thousands(server.flattened.bytes) } else { "-".to_owned() },
                if known { thousands(server.flattened.tokens) } else { "-".to_owned() },
                if server.from_cache { "yes" } else { "no" }.to_owned(),
                server.cold_start_ms.map_or_else(|| "-".to_owned(), |ms| format!("{} ms", thousands_u64(ms))),
                if server.failure.is_some() { "FAILED" } else { "ok" }.to_owned(),
            ]);
        }
        let widths: Vec<usize> =
            (0..8).map(|column| rows.iter().map(|row| row[column].chars().count()).max().unwrap_or(0)).collect();
        let mut out = String::new();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(column, cell)| {
                    let pad = widths[column].saturating_sub(cell.chars().count());
                    // Names and words left-aligned, numbers right-aligned.
                    if matches!(column, 0 | 5 | 7) {
                        format!("{cell}{}", " ".repeat(pad))
                    } else {
                        format!("{}{cell}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out.push('\n');
        let tools: usize = self.servers.iter().filter_map(|server| server.tools).sum();
        out.push_str(&format!(
            "flattened (every tool, as a client without the gateway lists them): {} tools, {} bytes, ~{} tokens\n",
            thousands(tools),
            thousands(self.flattened.bytes),
            thousands(self.flattened.tokens)
        ));
        out.push_str(&format!(
            "through the gateway (first tools/list: {}): {} bytes, ~{} tokens",
            self.gateway.tools.join(", "),
            thousands(self.gateway.cost.bytes),
            thousands(self.gateway.cost.tokens)
        ));
        match self.saved_percent {
            Some(saved) => out.push_str(&format!(", {saved:.1} % smaller\n")),
            None => out.push('\n'),
        }
        for server in &self.servers {
            if let Some(failure) = &server.failure {
                out.push_str(&format!("\n{} failed: {failure}\n", server.name));
            }
        }
        out
    }
}

fn thousands(n: usize) -> String {
    thousands_u64(u64::try_from(n).unwrap_or(u64::MAX))
}

fn thousands_u64(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(17_114), "17,114");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
