//! `--family-context written`: each server's summary written by a chat model with
//! [`SummaryWriter`] (the SDK's opt-in import step), from the server's name, its own
//! description and its tools, as a host would write it once at import. Kept in a file
//! (`--summaries FILE`, a JSON object of server name to summary) so later runs rank with the
//! same text and ask nothing; the file holds model-written text about the set and stays
//! outside the repository (under `target/`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use tinytools::mcp::{SummaryWriter, family_for};

use super::Data;

/// Every server's written summary: read from `file` when it holds one, else written with
/// `writer` and saved there. Returns the summaries and how many were written now.
///
/// # Errors
/// An unreadable set or file, or a file that cannot be written. A server whose summary the
/// model fails to write is left without one (counted in the second figure's complement).
pub async fn summaries(
    servers: &Value,
    writer: &SummaryWriter,
    file: &Path,
) -> Result<(BTreeMap<String, String>, usize), String> {
    let mut kept: BTreeMap<String, String> = match std::fs::read_to_string(file) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(error) => return Err(format!("cannot read {}: {error}", file.display())),
    };
    let mut written = 0;
    for server in servers.as_array().into_iter().flatten() {
        let Some(name) = server["server_name"].as_str() else { continue };
        if kept.contains_key(name) {
            continue;
        }
        let tools: Vec<(&str, &str)> = server["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| Some((tool["name"].as_str()?, tool["description"].as_str().unwrap_or(""))))
            .collect();
        match writer.write(name, server["server_description"].as_str(), &tools).await {
            Ok(summary) => {
                kept.insert(name.to_owned(), summary);
                written += 1;
                eprintln!("server {name}: summary written ({written} now)");
                // Kept after each one: an interrupted run resumes where it stopped.
                save(&kept, file)?;
            }
            Err(error) => eprintln!("server {name}: {error}"),
        }
    }
    save(&kept, file)?;
    Ok((kept, written))
}

fn save(kept: &BTreeMap<String, String>, file: &Path) -> Result<(), String> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let text = serde_json::to_string_pretty(kept).map_err(|e| e.to_string())?;
    std::fs::write(file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// The set's servers as its tool file lists them (see [`super::files`]).
///
/// # Errors
/// When `dir` holds no set or its tool file is not JSON.
pub fn servers_of(dir: &Path) -> Result<Value, String> {
    super::read_json(&super::files(dir)?.0)
}

/// Gives each server's family its summary (ranking only).
///
/// # Errors
/// A family the registry refuses (never, for names made by `family_for`).
pub fn describe(data: &mut Data, summaries: &BTreeMap<String, String>) -> Result<(), String> {
    for (server, summary) in summaries {
        data.catalogue.registry.describe_family(family_for(server), summary.clone()).map_err(|e| e.to_string())?;
    }
    Ok(())
}
