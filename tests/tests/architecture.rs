//! The house rules, read from the source: in every crate of the workspace, the children of
//! every module (the crate root's top-level modules, each directory module's files and
//! subdirectories) depend on each other without cycles (`graph`: every `crate::…`/`super::…`
//! path and `use` leaf counts, a name a module re-exports counting as the child it comes
//! from; tests aside), and no source file of the workspace is over 600 lines.

#[path = "architecture/graph.rs"]
mod graph;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use graph::{Graph, crate_graphs, crate_roots, cycles};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("readable").flatten() {
            rust_files(&entry.path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

/// `crate root → module → its children's graph`, over the whole workspace.
fn workspace_graphs() -> BTreeMap<PathBuf, BTreeMap<Vec<String>, Graph>> {
    crate_roots(&workspace()).into_iter().map(|root| (root.clone(), crate_graphs(&root))).collect()
}

/// The runtime's graph of module `path`.
fn runtime_graph(path: &[&str]) -> Graph {
    let root = workspace().join("tinytools/src/lib.rs");
    let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
    crate_graphs(&root).remove(&path).unwrap_or_default()
}

#[test]
fn no_module_graph_in_the_workspace_has_a_cycle() {
    let graphs = workspace_graphs();
    let modules: usize = graphs.values().map(BTreeMap::len).sum();
    assert!(graphs.len() > 10 && modules > 30, "the scan found the crates and their modules: {graphs:#?}");
    let top = runtime_graph(&[]);
    assert!(top.len() > 10 && top["run"].contains("discovery") && top["discovery"].contains("rank"), "{top:?}");
    let rank = runtime_graph(&["rank"]);
    assert!(rank["catalog"].contains("bm25") && rank["embedding"].contains("catalog"), "{rank:?}");
    let embedding = runtime_graph(&["rank", "embedding"]);
    assert!(embedding["ranker"].contains("score") && embedding["store"].contains("table"), "{embedding:?}");
    let mut found = Vec::new();
    for (root, modules) in &graphs {
        for (module, graph) in modules {
            let circles = cycles(graph);
            if !circles.is_empty() {
                let at = if module.is_empty() { "the crate root".to_owned() } else { module.join("::") };
                found.push(format!("{} {at}: {circles:?}\n{graph:#?}", root.display()));
            }
        }
    }
    assert!(found.is_empty(), "modules whose children depend on each other:\n{}", found.join("\n"));
}

/// The aids are outside the core: no core file of `run/` but the seam, the policy, the run's
/// state and the agent's two front doors (`agent`, `builder`: they set the aids) names them.
#[test]
fn the_core_of_the_run_names_the_aids_only_at_its_seam() {
    let graph = runtime_graph(&["run"]);
    assert!(graph.len() > 10 && graph["turns"].contains("call"), "the scan sees the run's files: {graph:?}");
    let naming: BTreeSet<&str> =
        graph.iter().filter(|(node, deps)| *node != "aids" && deps.contains("aids")).map(|(n, _)| n.as_str()).collect();
    let allowed: BTreeSet<&str> = ["seam", "policy", "state", "agent", "builder"].into();
    assert!(naming.is_subset(&allowed), "core files that name the aids: {naming:?}");
}

/// The house rule "no file over about 600 lines", over every crate of the workspace (tests,
/// benchmarks and examples too; generated and vendored text aside: there is none in `.rs`).
#[test]
fn no_source_file_is_over_600_lines() {
    const MAX_LINES: usize = 600;
    let workspace = workspace();
    let mut files = Vec::new();
    for krate in [
        "tinytools",
        "tinytools-macros",
        "tinytools-embed",
        "tinytools-gateway",
        "bench",
        "examples",
        "tests",
        "ui-tests",
    ] {
        rust_files(&workspace.join(krate), &mut files);
    }
    assert!(files.len() > 100, "the scan found the sources: {}", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).expect("readable").lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these by concept: {long:?}");
}
