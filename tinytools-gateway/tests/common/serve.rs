//! The gateway binary in `--http` mode: spawned, its URL read from stderr, its log kept.

#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::Client;

/// The gateway binary.
pub const GATEWAY: &str = env!("CARGO_BIN_EXE_tinytools-gateway");

/// A running `tinytools-gateway --http` process.
pub struct HttpGateway {
    pub child: tokio::process::Child,
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
    log: Arc<Mutex<String>>,
}

impl HttpGateway {
    /// Everything it wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Kills it and waits for it to exit.
    pub async fn stop(mut self) -> String {
        let _ = self.child.kill().await;
        let _ = self.child.wait().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.log()
    }
}

/// Starts `tinytools-gateway --config <config> --cache-dir <cache> --http <addr> <extra...>`
/// with `env` added, logging everything (`TINYTOOLS_GATEWAY_LOG=trace`), and waits for the
/// line that says where it serves.
pub async fn spawn_http(config: &Path, cache: &Path, addr: &str, extra: &[&str], env: &[(&str, &str)]) -> HttpGateway {
    let mut command = tokio::process::Command::new(GATEWAY);
    command.arg("--config").arg(config).arg("--cache-dir").arg(cache).arg("--http").arg(addr).args(extra);
    command.env("TINYTOOLS_GATEWAY_LOG", "trace").envs(env.iter().copied());
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    command.stderr(std::process::Stdio::piped()).kill_on_drop(true);
    let mut child = command.spawn().expect("the gateway binary starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = Arc::new(Mutex::new(String::new()));
    let marker = "serving MCP over streamable HTTP at ";
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            log.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(at) = line.find(marker) {
                let rest = &line[at + marker.len()..];
                return rest.split_whitespace().next().map(str::to_owned);
            }
        }
        None
    })
    .await
    .ok()
    .flatten();
    let Some(url) = url else {
        panic!("the gateway did not say where it serves; its stderr:\n{}", log.lock().unwrap())
    };
    let kept = Arc::clone(&log);
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    HttpGateway { child, url, log }
}

/// An rmcp client over streamable HTTP, with a bearer token when given.
pub async fn connect_http(url: &str, token: Option<&str>) -> Result<Client, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    // reqwest here is built without a TLS provider of its own (as in the gateway).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport).await.map_err(|error| error.to_string())
}
