//! The `tool_search` declaration the gateway lists: the discovery bridge's manifest of every
//! Deferred tool (told to call through `call_tool`), then what a client should know about the
//! servers that are not ready: how many are still starting, and which could not start and why.
//!
//! When the token budget has no room for every tool's name, the bridge's manifest degrades to
//! a count and the servers' names ([`ManifestNames::Count`], the default). The alternative,
//! [`ManifestNames::Grouped`], puts each server's tool names in a compact form in place of the
//! server names, as many per server as fit the same budget:
//!
//! ```text
//! 203 tools are available through search. By server (call one as server__tool):
//! - github (26): create_issue, get_issue, list_pulls … +23
//! - time (2): convert_time, get_current_time
//! ```
//!
//! Measured with local models at 281 tools (`docs/live.md`, the gateway arm): more tasks
//! solved on the larger model, beyond the noise on one run of two and within it on the other,
//! no change on the smaller one, at a 39 % larger first request. That is not enough to change a
//! default, so it is opt-in (`--manifest-names grouped`, or
//! `TINYTOOLS_GATEWAY_MANIFEST_NAMES=grouped`).

use serde_json::{Value, json};
use tinytools::ToolSchema;
use tinytools::discovery::{Manifest, ManifestDetail, families_line};
use tinytools::mcp::default_prefix;
use tinytools::schema::{EstimatedTokens, TokenCounter};

use crate::catalog::Catalog;

/// What the manifest says when the budget has no room for every tool's name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManifestNames {
    /// The count and the servers' names (the default).
    #[default]
    Count,
    /// The count, then each server's tool names, as many as fit the budget.
    Grouped,
}

impl ManifestNames {
    /// `count` or `grouped`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "count" => Some(Self::Count),
            "grouped" => Some(Self::Grouped),
            _ => None,
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Grouped => "grouped",
        }
    }
}

/// How many servers that could not start the status line names, with their reasons (a search
/// answer names them all). The line that counts the servers still starting names none: it is
/// there for a moment, and the description stays within the same few thousand bytes.
const UNAVAILABLE_NAMED: usize = 5;

/// The `tool_search` declaration for `catalog`: the bridge's, told to call through
/// `call_tool`, with the server names grouped per [`ManifestNames`], then the status lines.
pub fn tool_search_schema(catalog: &Catalog, names: ManifestNames) -> ToolSchema {
    let bridge = catalog.bridge();
    let mut schema = bridge.schema(&EstimatedTokens);
    let mut description = schema.description.replace(
        "you then call a tool by its own name.",
        "you then call one through `call_tool` with {\"name\": ..., \"arguments\": {...}}.",
    );
    let deferred = bridge.catalog();
    if deferred.is_empty() {
        // Nothing to list yet (every server still starting, or none known): no empty heading.
        description = description.replace("\n\nTools you can find:\n", "").trim_end().to_owned();
    } else if names == ManifestNames::Grouped {
        let budget = bridge.policy().manifest_token_budget;
        let detail = Manifest::build(deferred, budget, &EstimatedTokens).detail;
        if matches!(detail, ManifestDetail::Count | ManifestDetail::Nothing)
            && let Some(grouped) = grouped(catalog, budget, &EstimatedTokens)
        {
            description = match families_line(deferred) {
                Some(families) if description.contains(&families) => description.replace(&families, &grouped),
                _ => format!("{description} {grouped}"),
            };
        }
    }
    description.push_str(&status(catalog));
    schema.description = description;
    schema
}

/// Each server's Deferred tools, as the part of the gateway name after `server__`, in the
/// server's order; servers without one are left out.
fn by_server(catalog: &Catalog) -> Vec<(&str, Vec<&str>)> {
    catalog
        .deferred_by_server()
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(server, names)| {
            let prefix = default_prefix(server);
            (server.as_str(), names.iter().map(|name| name.strip_prefix(prefix.as_str()).unwrap_or(name)).collect())
        })
        .collect()
}

/// The grouped names: the most names per server for which the text fits `budget` tokens;
/// `None` when not even the servers' counts fit.
fn grouped(catalog: &Catalog, budget: usize, counter: &dyn TokenCounter) -> Option<String> {
    let servers = by_server(catalog);
    let longest = servers.iter().map(|(_, names)| names.len()).max().unwrap_or(0);
    let mut best = None;
    for each in 0..=longest {
        let text = render(&servers, each);
        if counter.count(&text) > budget {
            break;
        }
        best = Some(text);
    }
    best
}

fn render(servers: &[(&str, Vec<&str>)], each: usize) -> String {
    let mut text = String::from("By server (call one as server__tool):");
    for (server, names) in servers {
        text.push_str(&format!("\n- {server} ({})", names.len()));
        if each > 0 {
            text.push_str(": ");
            text.push_str(&names[..each.min(names.len())].join(", "));
        }
        if names.len() > each && each > 0 {
            text.push_str(&format!(" … +{}", names.len() - each));
        }
    }
    text
}

/// The status lines: the servers still starting, and those that could not start, with why.
fn status(catalog: &Catalog) -> String {
    let mut text = String::new();
    let starting = catalog.starting().len();
    if starting > 0 {
        text.push_str(&format!(
            "\n\nStill starting: {starting} of {} servers; their tools are not listed above yet, and tool_search \
             waits for them.",
            catalog.servers()
        ));
    }
    let unavailable = catalog.unavailable();
    if !unavailable.is_empty() {
        let mut failed: Vec<String> =
            unavailable.iter().take(UNAVAILABLE_NAMED).map(|(server, reason)| format!("{server} ({reason})")).collect();
        if unavailable.len() > UNAVAILABLE_NAMED {
            failed.push(format!("{} more, named in tool_search's answers", unavailable.len() - UNAVAILABLE_NAMED));
        }
        text.push_str(&format!("\n\nCould not start: {}.", failed.join("; ")));
    }
    text
}

/// What a `tool_search` answer adds about servers that are not ready: `starting` (names) and
/// `unavailable` (name → reason), each only when not empty.
pub fn status_fields(catalog: &Catalog) -> Vec<(&'static str, Value)> {
    let mut fields = Vec::new();
    if !catalog.starting().is_empty() {
        fields.push(("starting", json!(catalog.starting())));
    }
    if !catalog.unavailable().is_empty() {
        let reasons: serde_json::Map<String, Value> = catalog
            .unavailable()
            .iter()
            .map(|(server, reason)| (server.clone(), Value::String(reason.to_string())))
            .collect();
        fields.push(("unavailable", Value::Object(reasons)));
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_names_fit_the_budget_and_say_how_many_are_left_out() {
        let servers = [("github", vec!["create_issue", "get_issue", "list_pulls"]), ("time", vec!["now"])];
        assert_eq!(render(&servers, 0), "By server (call one as server__tool):\n- github (3)\n- time (1)");
        assert_eq!(
            render(&servers, 2),
            "By server (call one as server__tool):\n- github (3): create_issue, get_issue … +1\n- time (1): now"
        );
        assert_eq!(ManifestNames::from_name(" Grouped"), Some(ManifestNames::Grouped));
        assert_eq!(ManifestNames::from_name("names"), None);
        assert_eq!(ManifestNames::default().name(), "count");
    }
}
