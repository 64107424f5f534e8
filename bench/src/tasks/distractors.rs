//! BFCL's real tool definitions as Deferred distractors, to run the suite over a catalogue of
//! a thousand tools. Read at run time from the public eval sets (`../shared/eval` beside the
//! checkout, or `TINYTOOLS_EVAL_DIR`; see `tinytools_examples::eval::eval_dir`); never copied.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use tinytools::tool::{TOOL_SEARCH, check_tool_name};
use tinytools::{Tool, ToolRegistry};
use tinytools_examples::catalogue;
use tinytools_examples::eval::{self, EvalTool};

/// Where BFCL's tool definitions live: `bfcl/tools.jsonl` in the eval sets' directory.
///
/// # Errors
/// When it is not there: what is missing and how to get it, in one line.
pub fn bfcl_tools_path() -> Result<PathBuf, String> {
    eval::set_file("bfcl", "tools.jsonl")
}

/// The first `n` of BFCL's tools in the file's order, each Deferred under its name made
/// provider-safe (`math.factorial` → `math_factorial`), with its own description and its
/// schema normalised to JSON Schema. A name that collides with the catalogue's, `tool_search`
/// or an earlier distractor's is skipped (BFCL repeats names with other descriptions).
///
/// # Errors
/// When the file cannot be read or parsed, or holds fewer than `n` usable tools.
pub fn bfcl_distractors(n: usize) -> Result<Vec<Arc<dyn Tool>>, String> {
    let path = bfcl_tools_path()?;
    let tools: Vec<EvalTool> = eval::read_jsonl(&path)?;
    let mut taken: HashSet<String> = catalogue::tools().iter().map(|tool| tool.name().to_owned()).collect();
    taken.insert(TOOL_SEARCH.to_owned());
    let mut out: Vec<Arc<dyn Tool>> = Vec::with_capacity(n);
    for tool in &tools {
        if out.len() == n {
            break;
        }
        let name = eval::safe_name(&tool.name);
        if check_tool_name(&name).is_err() || !taken.insert(name.clone()) {
            continue;
        }
        let parameters = eval::normalize_schema(&tool.parameters);
        out.push(eval::stub_tool(name, tool.description.clone(), parameters, "ok"));
    }
    if out.len() < n {
        return Err(format!(
            "{} has only {} distinct usable tool names; {n} were asked for",
            path.display(),
            out.len()
        ));
    }
    Ok(out)
}

/// The catalogue's [`registry`](catalogue::registry) (`read_note` Direct, 40 Deferred) plus
/// `n` [BFCL distractors](bfcl_distractors), all Deferred.
///
/// # Errors
/// As [`bfcl_distractors`], or when a distractor's schema does not register.
pub fn scale_registry(n: usize) -> Result<ToolRegistry, String> {
    let mut registry = catalogue::registry();
    for tool in bfcl_distractors(n)? {
        let name = tool.name().to_owned();
        registry.register_arc(tool).map_err(|err| format!("BFCL distractor {name}: {err}"))?;
    }
    Ok(registry)
}
