//! Server summaries (`--summaries`): one paragraph per server, written once by a chat model
//! from its manifest (name, own words, tools), kept in the manifest cache and given to the
//! server's family, so `tool_search` finds a server's tools by what the server is for. The
//! model never reads a summary back: it only ranks.

use std::collections::HashSet;
use std::sync::Arc;

use tinytools::mcp::SummaryWriter;

use crate::cache::Manifest;
use crate::supervisor::{Downstream, Supervisor};

/// Writes the summary of every server whose manifest has none, one server at a time, and
/// again whenever a manifest changes without one (new tools); runs until dropped. A failed
/// request is logged and not retried for the same tools until the gateway restarts, so a
/// broken model costs one request per server.
pub async fn keep_summaries(supervisor: Arc<Supervisor>, writer: SummaryWriter) {
    let mut tried: HashSet<(String, Vec<String>)> = HashSet::new();
    loop {
        let seen = supervisor.generation();
        for server in supervisor.servers() {
            let Some(manifest) = server.manifest().filter(|manifest| manifest.summary.is_none()) else {
                continue;
            };
            let names = manifest.tools.iter().map(|tool| tool.name.clone()).collect();
            if tried.insert((server.config().name.clone(), names)) {
                summarize(server, &manifest, &writer).await;
            }
        }
        supervisor.changed_since(seen).await;
    }
}

/// Writes `manifest`'s summary and publishes it, unless the server's manifest changed its
/// tools (or got a summary) meanwhile.
async fn summarize(server: &Downstream, manifest: &Manifest, writer: &SummaryWriter) {
    let name = &server.config().name;
    let tools: Vec<(&str, &str)> =
        manifest.tools.iter().map(|tool| (tool.name.as_str(), tool.description.as_deref().unwrap_or(""))).collect();
    let about = manifest.self_description.as_deref().or(manifest.instructions.as_deref());
    match writer.write(name, about, &tools).await {
        Ok(summary) => {
            let current = server.manifest().filter(|now| now.same_tools(manifest) && now.summary.is_none());
            if let Some(now) = current {
                tracing::info!(server = %name, bytes = summary.len(), "server summary written");
                server.publish(Manifest { summary: Some(summary), ..(*now).clone() });
            }
        }
        Err(error) => tracing::warn!(server = %name, %error, "no server summary"),
    }
}
