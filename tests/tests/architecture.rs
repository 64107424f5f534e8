//! The house rules, read from the source: the runtime crate's top-level modules depend on each
//! other without cycles (every `crate::module` path and every `use crate::{..}` of a root
//! re-export counts as an edge to the module the name comes from), and no source file of the
//! workspace is over 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tinytools/src")
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

fn ident_at(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// `name → module` for every `pub use module::{..}` / `pub use module::Name` of lib.rs.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else { continue };
        let module = ident_at(rest).to_owned();
        let items = rest[module.len()..].trim_start_matches("::").trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let name = item.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                map.insert(name.to_owned(), module.clone());
            }
        }
    }
    map
}

fn dependency_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = source_root();
    let lib = std::fs::read_to_string(root.join("lib.rs")).expect("lib.rs");
    let reexports = root_reexports(&lib);
    let modules: BTreeSet<String> = std::fs::read_dir(&root)
        .expect("src")
        .flatten()
        .filter_map(|e| e.path().file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|name| name != "lib")
        .collect();
    let mut graph = BTreeMap::new();
    for module in &modules {
        let mut files = Vec::new();
        let dir = root.join(module);
        rust_files(if dir.is_dir() { &dir } else { &root }, &mut files);
        if !dir.is_dir() {
            files.retain(|f| f.file_stem().is_some_and(|s| s == module.as_str()));
        }
        let mut deps = BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable");
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                let mut rest = line;
                while let Some(at) = rest.find("crate::") {
                    rest = &rest[at + "crate::".len()..];
                    if let Some(group) = rest.strip_prefix('{') {
                        for item in group.split([',', '}']) {
                            let name = ident_at(item.trim());
                            deps.insert(reexports.get(name).cloned().unwrap_or_else(|| name.to_owned()));
                        }
                    } else {
                        let name = ident_at(rest);
                        deps.insert(reexports.get(name).cloned().unwrap_or_else(|| name.to_owned()));
                    }
                }
            }
        }
        deps.remove(module);
        deps.retain(|d| modules.contains(d));
        graph.insert(module.clone(), deps);
    }
    graph
}

fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(next) = stack.pop() {
        for dep in graph.get(&next).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

/// Every pair of nodes that reach each other, each pair once.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, String)> {
    graph
        .keys()
        .flat_map(|a| {
            reachable(graph, a).into_iter().filter(|b| reachable(graph, b).contains(a)).map(move |b| (a.clone(), b))
        })
        .filter(|(a, b)| a < b)
        .collect()
}

#[test]
fn the_runtime_modules_have_no_dependency_cycles() {
    let graph = dependency_graph();
    assert!(graph.len() > 10, "the scan found the modules: {graph:?}");
    assert!(
        graph["run"].contains("discovery") && graph["discovery"].contains("rank"),
        "the scan sees edges: {graph:?}"
    );
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "modules that depend on each other: {cycles:?}\n{graph:#?}");
}

/// `file → files of run/ it names` (`super::x` from a file of run/; `super::super::x` from a
/// file of `run/aids/`, which counts as one node `aids`), code only: doc comments and tests
/// aside.
fn run_graph() -> BTreeMap<String, BTreeSet<String>> {
    let dir = source_root().join("run");
    let code = |path: &Path| -> String {
        let text = std::fs::read_to_string(path).expect("readable");
        let text = text.split("#[cfg(test)]").next().unwrap_or_default().to_owned();
        text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
    };
    let names = |text: &str, prefix: &str| -> BTreeSet<String> {
        text.match_indices(prefix).map(|(at, _)| ident_at(&text[at + prefix.len()..]).to_owned()).collect()
    };
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let in_aids = file.parent().is_some_and(|p| p.ends_with("aids"));
        let text = code(&file);
        let (node, deps) = if in_aids {
            ("aids".to_owned(), names(&text, "super::super::"))
        } else if stem == "mod" {
            continue;
        } else {
            (stem, names(&text, "super::"))
        };
        graph.entry(node).or_default().extend(deps);
    }
    let nodes: BTreeSet<String> = graph.keys().cloned().collect();
    for (node, deps) in &mut graph {
        deps.retain(|d| nodes.contains(d) && d != node);
    }
    graph
}

#[test]
fn the_files_of_the_run_module_have_no_dependency_cycles() {
    let graph = run_graph();
    assert!(graph.len() > 10 && graph["turns"].contains("call"), "the scan sees the run's files: {graph:?}");
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "files of run/ that depend on each other: {cycles:?}\n{graph:#?}");
}

/// The aids are outside the core: no core file but the seam, the policy, the run's state and
/// the agent's two front doors (`agent`, `builder`: they set the aids) names them.
#[test]
fn the_core_of_the_run_names_the_aids_only_at_its_seam() {
    let graph = run_graph();
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
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["tinytools", "tinytools-macros", "tinytools-gateway", "bench", "examples", "tests", "ui-tests"] {
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
