//! Finding and loading the public tool-retrieval sets (BFCL's and MetaTool's dev halves) and
//! scoring a ranking on them.
//!
//! The sets are not in the repository. [`eval_dir`] says where they are: `TINYTOOLS_EVAL_DIR`,
//! else `../shared/eval` beside the checkout, else `bench/eval-data` (where
//! `bench/scripts/fetch-eval.sh` writes BFCL's from its PyPI wheel). Tests that read them skip
//! with one line when they are missing ([`sets_or_skip`]), and fail instead when
//! `TINYTOOLS_EVAL_REQUIRED=1` (`.ci/run` sets it).
//!
//! Format (see `shared/eval/README.md`): `tools.jsonl` rows `{id, name, description,
//! parameters}`, `queries.jsonl` rows `{qid, query, gold: [id]}`. Every tool is registered
//! Deferred under a provider-safe version of its unique `id`; scoring maps back to `id`
//! (strict) and `name` (name level).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};
use tinytools::{Tool, ToolExposure, ToolRegistry, ToolResult};

/// One tool of a set.
#[derive(Clone, Debug, Deserialize)]
pub struct EvalTool {
    /// Unique id.
    pub id: String,
    /// Its name in the benchmark (not unique in BFCL).
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its JSON-Schema-like parameters.
    #[serde(default)]
    pub parameters: Value,
}

/// One query of a set.
#[derive(Clone, Debug, Deserialize)]
pub struct EvalQuery {
    /// Query id.
    pub qid: String,
    /// The user's words.
    pub query: String,
    /// Ids of the tools that answer it.
    pub gold: Vec<String>,
}

/// Reads a JSON-lines file.
pub fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| serde_json::from_str(line).map_err(|err| format!("{}:{}: {err}", path.display(), i + 1)))
        .collect()
}

/// The variable naming the directory that holds the sets (`bfcl/`, `metatool/`, each with
/// `tools.jsonl` and `queries.jsonl`). A relative path is taken from the workspace root.
pub const EVAL_DIR_VAR: &str = "TINYTOOLS_EVAL_DIR";

/// The switch (`=1`) that makes a missing set fail the tests that read it instead of skipping
/// them.
pub const EVAL_REQUIRED_VAR: &str = "TINYTOOLS_EVAL_REQUIRED";

/// The script that fetches BFCL's set from its PyPI wheel, from the workspace root.
pub const FETCH_SCRIPT: &str = "bench/scripts/fetch-eval.sh";

/// The workspace root (this crate's parent directory).
fn workspace_root() -> &'static Path {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest)
}

/// The directory holding the sets: `$TINYTOOLS_EVAL_DIR` when set (relative to the workspace
/// root), else `../shared/eval` beside the workspace when it is there, else
/// `bench/eval-data` (the fetch script's default) when it is there.
///
/// # Errors
/// When the variable is unset and neither default exists: what is missing and how to get it.
pub fn eval_dir() -> Result<PathBuf, String> {
    let root = workspace_root();
    if let Some(dir) = std::env::var_os(EVAL_DIR_VAR).filter(|dir| !dir.is_empty()) {
        return Ok(root.join(dir));
    }
    let beside = root.parent().map(|parent| parent.join("shared").join("eval"));
    let fetched = root.join("bench").join("eval-data");
    beside.into_iter().chain([fetched]).find(|dir| dir.is_dir()).ok_or_else(|| {
        format!(
            "needs the public eval sets ({EVAL_DIR_VAR} is unset and there is no ../shared/eval beside \
             the checkout nor bench/eval-data); run {FETCH_SCRIPT} or set {EVAL_DIR_VAR}"
        )
    })
}

/// How to get a set that is missing, for the messages.
fn how_to_get(set: &str) -> String {
    if set == "metatool" {
        format!("MetaTool is not on PyPI: place it by hand (see {FETCH_SCRIPT}) and set {EVAL_DIR_VAR}")
    } else {
        format!("run {FETCH_SCRIPT} or set {EVAL_DIR_VAR}")
    }
}

/// `file` (`tools.jsonl`, `queries.jsonl`) of the set `set` (`bfcl`, `metatool`) under
/// [`eval_dir`].
///
/// # Errors
/// When the directory or the file is not there, in one line: what is missing and how to get it
/// (a program reports it as it is).
pub fn set_file(set: &str, file: &str) -> Result<PathBuf, String> {
    let dir = eval_dir().map_err(|_| {
        format!(
            "needs the public eval set `{set}` ({EVAL_DIR_VAR} is unset and there is no ../shared/eval \
             beside the checkout nor bench/eval-data); {}",
            how_to_get(set)
        )
    })?;
    let path = dir.join(set).join(file);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("needs the public eval set `{set}` ({} is missing); {}", path.display(), how_to_get(set)))
    }
}

/// Whether a missing set must fail rather than skip (`TINYTOOLS_EVAL_REQUIRED=1`).
pub fn eval_required() -> bool {
    std::env::var(EVAL_REQUIRED_VAR).is_ok_and(|v| v == "1")
}

/// The directory ([`eval_dir`]) holding every one of `sets`, each with its `tools.jsonl` and
/// `queries.jsonl`: `dir.join("bfcl").join("tools.jsonl")` is then there.
///
/// # Errors
/// The first missing file, as [`set_file`] words it.
pub fn sets_dir(sets: &[&str]) -> Result<PathBuf, String> {
    for set in sets {
        for file in ["tools.jsonl", "queries.jsonl"] {
            set_file(set, file)?;
        }
    }
    eval_dir()
}

/// A set's directory for a criterion bench named `program`, or the process ends saying what is
/// missing and how to get it: under `cargo bench` (which passes `--bench`) or with
/// `TINYTOOLS_EVAL_REQUIRED=1` as a failure, under `cargo test --benches` as a skip.
pub fn bench_set_dir(program: &str, set: &str) -> PathBuf {
    match sets_dir(&[set]) {
        Ok(dir) => dir.join(set),
        Err(missing) if std::env::args().any(|arg| arg == "--bench") || eval_required() => {
            eprintln!("{program}: {missing}");
            std::process::exit(1);
        }
        Err(missing) => {
            eprintln!("skipped: {missing}");
            std::process::exit(0);
        }
    }
}

/// For tests: [`sets_dir`], or `None` after one line on stderr (`skipped: ...`) saying what is
/// missing and how to get it (the test is then skipped).
///
/// # Panics
/// When a set is missing and [`eval_required`].
pub fn sets_or_skip(sets: &[&str]) -> Option<PathBuf> {
    match sets_dir(sets) {
        Ok(dir) => Some(dir),
        Err(missing) if eval_required() => panic!("{missing} ({EVAL_REQUIRED_VAR}=1)"),
        Err(missing) => {
            eprintln!("skipped: {missing}");
            None
        }
    }
}

/// A tool of a set as a registered, Deferred `Tool`: what `tool_search` would see. It only
/// ever answers with a fixed text: it is there to be ranked, not to work.
struct SetTool {
    registered_name: String,
    description: String,
    parameters: Value,
    family: Option<String>,
    answer: &'static str,
}

/// A Deferred stand-in for a set's tool, under `name`, with its description and (already
/// normalised) schema, answering every call with `answer`.
pub fn stub_tool(name: String, description: String, parameters: Value, answer: &'static str) -> Arc<dyn Tool> {
    Arc::new(SetTool { registered_name: name, description, parameters, family: None, answer })
}

/// [`stub_tool`] in a family (an MCP server's name, as an import would give it), which
/// discovery indexes beside the name and description.
pub fn stub_tool_in_family(
    name: String,
    family: String,
    description: String,
    parameters: Value,
    answer: &'static str,
) -> Arc<dyn Tool> {
    Arc::new(SetTool { registered_name: name, description, parameters, family: Some(family), answer })
}

#[async_trait::async_trait]
impl tinytools::Tool for SetTool {
    fn name(&self) -> &str {
        &self.registered_name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters_schema(&self) -> Value {
        self.parameters.clone()
    }
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Deferred
    }
    fn family(&self) -> Option<&str> {
        self.family.as_deref()
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text(self.answer))
    }
}

/// A set registered for evaluation, with the maps back to ids and names.
pub struct RegisteredSet {
    /// Every tool, Deferred.
    pub registry: ToolRegistry,
    /// Registered name → benchmark id.
    pub id_of: HashMap<String, String>,
    /// Benchmark id → benchmark name.
    pub name_of: HashMap<String, String>,
}

/// Registers every tool Deferred, under a provider-safe name derived from its id, with its
/// schema's benchmark type names mapped to JSON Schema's.
pub fn register(tools: &[EvalTool]) -> Result<RegisteredSet, String> {
    let mut registry = ToolRegistry::new();
    let mut id_of = HashMap::new();
    let mut name_of = HashMap::new();
    for tool in tools {
        let mut registered_name = safe_name(&tool.id);
        while id_of.contains_key(&registered_name) {
            registered_name.push('_');
        }
        let set_tool = stub_tool(
            registered_name.clone(),
            tool.description.clone(),
            normalize_schema(&tool.parameters),
            "evaluation stub: ranking only",
        );
        registry.register_arc(set_tool).map_err(|err| format!("tool {}: {err}", tool.id))?;
        id_of.insert(registered_name, tool.id.clone());
        name_of.insert(tool.id.clone(), tool.name.clone());
    }
    Ok(RegisteredSet { registry, id_of, name_of })
}

/// A provider-safe tool name: `requests.get#2` → `requests_get_2`, cut to 64 bytes.
pub fn safe_name(id: &str) -> String {
    let mut name: String = id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    name.truncate(64);
    if name.is_empty() { "tool".to_owned() } else { name }
}

/// Maps the sets' type names (`dict`, `float`, `tuple`, `HashMap`, `any`, ...) to JSON
/// Schema's, walking only schema positions (a property may itself be called `type`).
pub fn normalize_schema(schema: &Value) -> Value {
    let mut out = normalize_node(schema);
    if let Some(root) = out.as_object_mut() {
        root.insert("type".into(), Value::String("object".into()));
        root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    } else {
        out = serde_json::json!({"type": "object", "properties": {}});
    }
    out
}

fn normalize_node(node: &Value) -> Value {
    let Some(object) = node.as_object() else {
        return serde_json::json!({});
    };
    let mut out = Map::new();
    for (key, value) in object {
        let value = match key.as_str() {
            "type" => match value.as_str().map(json_type) {
                Some(Some(ty)) => Value::String(ty.into()),
                _ => continue,
            },
            "properties" => match value.as_object() {
                Some(properties) => Value::Object(
                    properties.iter().map(|(name, schema)| (name.clone(), normalize_node(schema))).collect(),
                ),
                None => continue,
            },
            "items" | "additionalProperties" if value.is_object() => normalize_node(value),
            "items" => match value.as_array() {
                Some(items) => Value::Array(items.iter().map(normalize_node).collect()),
                None => continue,
            },
            "anyOf" | "oneOf" | "allOf" => match value.as_array() {
                Some(branches) => Value::Array(branches.iter().map(normalize_node).collect()),
                None => continue,
            },
            "required" | "enum" if !value.is_array() => continue,
            "required" => {
                Value::Array(value.as_array().into_iter().flatten().filter(|v| v.is_string()).cloned().collect())
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// JSON Schema's name for a set's type name (`dict` → `object`, `float` → `number`, ...), or
/// `None` when JSON Schema has none (`any`): such a property is left unconstrained.
pub fn json_type(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "dict" | "object" | "hashmap" | "map" => "object",
        "float" | "double" | "number" => "number",
        "integer" | "int" | "long" => "integer",
        "string" | "str" | "char" => "string",
        "boolean" | "bool" => "boolean",
        "array" | "list" | "tuple" | "arraylist" => "array",
        "null" => "null",
        _ => return None,
    })
}

/// Recall@k, nDCG@10 and MRR, averaged over queries.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Scores {
    /// Recall at 1.
    pub recall_1: f64,
    /// Recall at 5.
    pub recall_5: f64,
    /// Recall at 10.
    pub recall_10: f64,
    /// nDCG at 10 (binary relevance).
    pub ndcg_10: f64,
    /// Mean reciprocal rank of the first relevant result.
    pub mrr: f64,
}

impl Scores {
    /// Scores one ranked list (no repeats) against its gold set.
    pub fn of(ranked: &[&str], gold: &[&str]) -> Self {
        if gold.is_empty() {
            return Self::default();
        }
        let relevant = |item: &str| gold.contains(&item);
        let recall = |k: usize| ranked.iter().take(k).filter(|item| relevant(item)).count() as f64 / gold.len() as f64;
        let gain = |(i, _): (usize, &&str)| 1.0 / (i as f64 + 2.0).log2();
        let dcg: f64 = ranked.iter().take(10).enumerate().filter(|(_, item)| relevant(item)).map(gain).sum();
        let ideal: f64 = (0..gold.len().min(10)).map(|i| 1.0 / (i as f64 + 2.0).log2()).sum();
        let mrr = ranked.iter().position(|item| relevant(item)).map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
        Self { recall_1: recall(1), recall_5: recall(5), recall_10: recall(10), ndcg_10: dcg / ideal, mrr }
    }

    /// The mean of many scores.
    pub fn mean(all: &[Scores]) -> Self {
        let n = all.len().max(1) as f64;
        let sum = |f: fn(&Scores) -> f64| all.iter().map(f).sum::<f64>() / n;
        Self {
            recall_1: sum(|s| s.recall_1),
            recall_5: sum(|s| s.recall_5),
            recall_10: sum(|s| s.recall_10),
            ndcg_10: sum(|s| s.ndcg_10),
            mrr: sum(|s| s.mrr),
        }
    }

    /// As the report's JSON object.
    pub fn to_json(&self) -> Value {
        let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
        serde_json::json!({
            "recall@1": round(self.recall_1),
            "recall@5": round(self.recall_5),
            "recall@10": round(self.recall_10),
            "ndcg@10": round(self.ndcg_10),
            "mrr": round(self.mrr),
        })
    }
}

/// Keeps the first occurrence of each item.
pub fn dedup_in_order<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_their_definitions() {
        let s = Scores::of(&["x", "a", "y", "b"], &["a", "b"]);
        assert_eq!((s.recall_1, s.recall_5), (0.0, 1.0));
        assert!((s.mrr - 0.5).abs() < 1e-12);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((s.ndcg_10 - dcg / ideal).abs() < 1e-12);
        assert_eq!(Scores::of(&[], &["a"]), Scores::default());
    }

    #[test]
    fn a_missing_set_says_what_is_missing_and_how_to_get_it() {
        let Err(bfcl) = set_file("bfcl", "no-such-file.jsonl") else { panic!("no-such-file.jsonl was found") };
        assert!(bfcl.starts_with("needs the public eval set `bfcl` ("), "{bfcl}");
        assert!(bfcl.ends_with(&format!("run {FETCH_SCRIPT} or set {EVAL_DIR_VAR}")), "{bfcl}");
        assert!(!bfcl.contains('\n'), "one line: {bfcl}");
        let Err(metatool) = set_file("metatool", "no-such-file.jsonl") else { panic!("no-such-file.jsonl was found") };
        assert!(metatool.contains("MetaTool is not on PyPI: place it by hand"), "{metatool}");
    }

    #[test]
    fn schemas_are_normalised_only_at_schema_positions() {
        let raw = serde_json::json!({"type": "dict", "properties": {
            "type": {"type": "string", "description": "a property called type"},
            "ratio": {"type": "float"}, "pair": {"type": "tuple", "items": {"type": "integer"}},
            "anything": {"type": "any"}}, "required": ["type"]});
        let out = normalize_schema(&raw);
        assert_eq!(out["type"], "object");
        assert_eq!(out["properties"]["type"]["type"], "string");
        assert_eq!(out["properties"]["ratio"]["type"], "number");
        assert_eq!(out["properties"]["pair"]["type"], "array");
        assert!(out["properties"]["anything"].get("type").is_none());
        assert_eq!(safe_name("requests.get#2"), "requests_get_2");
    }
}
