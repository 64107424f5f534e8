//! The module graphs of a crate, read from its source: for every module that has child modules
//! (the crate root, each `mod.rs`, each `x.rs` beside an `x/`), which of its children name
//! which others.
//!
//! The source is read as tokens (comments, doc comments and string literals aside), code only:
//! an item under `#[cfg(test)]` (a test module, a test helper) is left out. A child `c` of
//! module `p` depends on a sibling `s` when code anywhere in `c`'s subtree names a path that
//! resolves to `p::s::…` (`super::s`, `super::super::s`, `crate::p::s`, `self::…`, and each
//! leaf of a `use` tree), or to `p::Name` where `p` re-exports `Name` from `s`
//! (`pub use s::{Name, …}`, any visibility).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A directory module's children and who names whom: `child → siblings it names`.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    /// `::`
    Path,
    Str(String),
    Punct(char),
}

/// The tokens of Rust source: identifiers, `::`, string literals and punctuation; comments,
/// char literals, lifetimes, numbers and whitespace dropped.
fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' || ((c == 'r' || c == 'b') && matches!(at(i + 1), '"' | '#' | 'r')) && raw_start(&chars, i) {
            let (text, end) = string_at(&chars, i);
            out.push(Token::Str(text));
            i = end;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if at(i + 1) == '\\' {
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                if chars[i] == '.' && !at(i + 1).is_ascii_digit() {
                    break;
                }
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::Path);
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// Whether a string literal (`"`, `r"`, `r#"`, `b"`, `br#"`) starts at `i`.
fn raw_start(chars: &[char], i: usize) -> bool {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) == Some(&'r') {
        j += 1;
        while chars.get(j) == Some(&'#') {
            j += 1;
        }
    }
    chars.get(j) == Some(&'"') && (i == 0 || !chars[i - 1].is_alphanumeric() && chars[i - 1] != '_')
}

/// The string literal at `i` and the index after it.
fn string_at(chars: &[char], mut i: usize) -> (String, usize) {
    if chars[i] == 'b' {
        i += 1;
    }
    let raw = chars[i] == 'r';
    let mut hashes = 0;
    if raw {
        i += 1;
        while chars[i] == '#' {
            hashes += 1;
            i += 1;
        }
    }
    i += 1; // the opening quote
    let start = i;
    while i < chars.len() {
        if !raw && chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == '"' && (0..hashes).all(|h| chars.get(i + 1 + h) == Some(&'#')) {
            let text = chars[start..i].iter().collect();
            return (text, i + 1 + hashes);
        }
        i += 1;
    }
    (chars[start..].iter().collect(), chars.len())
}

/// What one file holds, tests aside: the child modules it declares (`name → #[path]`, if any)
/// and the paths it names (`use` trees expanded), each with the inline module it is in.
#[derive(Debug, Default)]
struct FileScan {
    children: BTreeMap<String, Option<String>>,
    /// `(inline modules from the file's own module, the path's segments)`.
    paths: Vec<(Vec<String>, Vec<String>)>,
    /// `name → child` for `use child::…::name` (re-exports and private imports alike).
    reexports: BTreeMap<String, String>,
}

fn scan(source: &str) -> FileScan {
    let tokens = tokens(source);
    let mut scan = FileScan::default();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0_usize;
    let mut i = 0;
    let mut pending_path: Option<String> = None;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('#')
                if tokens.get(i + 1) == Some(&Token::Punct('[')) || tokens.get(i + 1) == Some(&Token::Punct('!')) =>
            {
                let open = if tokens.get(i + 1) == Some(&Token::Punct('!')) { i + 2 } else { i + 1 };
                let end = matching(&tokens, open);
                let attribute = &tokens[open + 1..end];
                if is_test_cfg(attribute) && tokens.get(i + 1) != Some(&Token::Punct('!')) {
                    i = skip_item(&tokens, end + 1);
                    pending_path = None;
                    continue;
                }
                if let [Token::Ident(path), Token::Punct('='), Token::Str(file)] = attribute
                    && path == "path"
                {
                    pending_path = Some(file.clone());
                }
                i = end + 1;
            }
            Token::Ident(word) if word == "mod" => {
                if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                    match tokens.get(i + 2) {
                        Some(Token::Punct(';')) if inline.is_empty() => {
                            scan.children.insert(name.clone(), pending_path.take());
                        }
                        Some(Token::Punct('{')) => {
                            depth += 1;
                            inline.push((name.clone(), depth));
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                }
                pending_path = None;
                i += 2;
            }
            Token::Ident(word) if word == "use" => {
                let end = (i..tokens.len()).find(|&j| tokens[j] == Token::Punct(';')).unwrap_or(tokens.len());
                let modules: Vec<String> = inline.iter().map(|(name, _)| name.clone()).collect();
                for path in use_tree(&tokens[i + 1..end]) {
                    if modules.is_empty() && path.len() >= 2 && path[0] != "crate" && path[0] != "super" {
                        let first = if path[0] == "self" { path.get(1) } else { Some(&path[0]) };
                        if let (Some(first), Some(last)) = (first, path.last()) {
                            scan.reexports.insert(last.clone(), first.clone());
                        }
                    }
                    scan.paths.push((modules.clone(), path));
                }
                i = end + 1;
            }
            Token::Ident(word) if matches!(word.as_str(), "crate" | "super" | "self") => {
                let mut path = vec![word.clone()];
                let mut j = i + 1;
                while tokens.get(j) == Some(&Token::Path) {
                    match tokens.get(j + 1) {
                        Some(Token::Ident(next)) => path.push(next.clone()),
                        _ => break,
                    }
                    j += 2;
                }
                if path.len() > 1 {
                    scan.paths.push((inline.iter().map(|(name, _)| name.clone()).collect(), path));
                }
                i = j;
            }
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if inline.last().is_some_and(|(_, at)| *at == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    scan
}

/// The index of the bracket closing the one at `open`.
fn matching(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (at, token) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct('[' | '(' | '{') => depth += 1,
            Token::Punct(']' | ')' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    tokens.len().saturating_sub(1)
}

/// `cfg(test)`, `cfg(all(test, …))`: an attribute whose item exists only in tests.
fn is_test_cfg(attribute: &[Token]) -> bool {
    let word = |w: &str| attribute.iter().any(|t| *t == Token::Ident(w.to_owned()));
    matches!(attribute.first(), Some(Token::Ident(cfg)) if cfg == "cfg") && word("test") && !word("not")
}

/// The index after the item starting at `start` (past its other attributes): its `;`, or the
/// end of its first `{…}` block.
fn skip_item(tokens: &[Token], mut start: usize) -> usize {
    while tokens.get(start) == Some(&Token::Punct('#')) {
        start = matching(tokens, start + 1) + 1;
    }
    let mut i = start;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct(';') => return i + 1,
            Token::Punct('{') => return matching(tokens, i) + 1,
            Token::Punct('(' | '[') => i = matching(tokens, i) + 1,
            _ => i += 1,
        }
    }
    i
}

/// The leaf paths of a `use` tree (`a::{b, c::{d, e as f}, self}` → `a::b`, `a::c::d`, …).
fn use_tree(tokens: &[Token]) -> Vec<Vec<String>> {
    fn walk(tokens: &[Token], prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                Token::Ident(word) if word == "as" => i += 2,
                Token::Ident(word) if word == "self" && !path.is_empty() => i += 1,
                Token::Ident(word) => {
                    path.push(word.clone());
                    i += 1;
                }
                Token::Punct('{') => {
                    let end = i + matching(&tokens[i..], 0);
                    let mut start = i + 1;
                    let mut depth = 0;
                    for j in i + 1..=end {
                        match tokens[j] {
                            Token::Punct('{') => depth += 1,
                            Token::Punct('}') if depth > 0 => depth -= 1,
                            Token::Punct(',') | Token::Punct('}') if depth == 0 => {
                                walk(&tokens[start..j], &path, out);
                                start = j + 1;
                            }
                            _ => {}
                        }
                    }
                    return;
                }
                _ => i += 1,
            }
        }
        if !path.is_empty() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    walk(tokens, &[], &mut out);
    out
}

/// One module of a crate: its path from the crate root and what its file holds.
#[derive(Debug)]
struct Module {
    path: Vec<String>,
    scan: FileScan,
}

/// Every module of the crate whose root file is `root`, read from disk.
fn modules(root: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut stack = vec![(Vec::new(), root.to_owned(), true)];
    while let Some((path, file, owns_dir)) = stack.pop() {
        let Ok(source) = std::fs::read_to_string(&file) else { continue };
        let scan = scan(&source);
        let parent = file.parent().unwrap_or(Path::new(".")).to_owned();
        let dir = if owns_dir { parent.clone() } else { parent.join(file.file_stem().unwrap_or_default()) };
        for (name, at) in &scan.children {
            let mut child_path = path.clone();
            child_path.push(name.clone());
            let (child, owns) = match at {
                Some(at) => (parent.join(at), at.ends_with("mod.rs")),
                None if dir.join(format!("{name}.rs")).exists() => (dir.join(format!("{name}.rs")), false),
                None => (dir.join(name).join("mod.rs"), true),
            };
            stack.push((child_path, child, owns));
        }
        out.push(Module { path, scan });
    }
    out
}

/// `module path → its children's graph` for every module of the crate rooted at `root` that
/// has children.
pub fn crate_graphs(root: &Path) -> BTreeMap<Vec<String>, Graph> {
    let modules = modules(root);
    let mut graphs = BTreeMap::new();
    for parent in modules.iter().filter(|m| !m.scan.children.is_empty()) {
        let children: BTreeSet<&String> = parent.scan.children.keys().collect();
        let mut graph: Graph = children.iter().map(|c| ((*c).clone(), BTreeSet::new())).collect();
        for module in modules.iter().filter(|m| m.path.len() > parent.path.len() && m.path.starts_with(&parent.path)) {
            let from = &module.path[parent.path.len()];
            for (inline, path) in &module.scan.paths {
                let mut here = module.path.clone();
                here.extend(inline.iter().cloned());
                let Some(target) = resolve(&here, path) else { continue };
                if target.len() <= parent.path.len() || !target.starts_with(&parent.path) {
                    continue;
                }
                let name = &target[parent.path.len()];
                let to = if children.contains(name) { Some(name) } else { parent.scan.reexports.get(name) };
                if let Some(to) = to.filter(|to| *to != from && children.contains(to)) {
                    graph.entry(from.clone()).or_default().insert(to.clone());
                }
            }
        }
        graphs.insert(parent.path.clone(), graph);
    }
    graphs
}

/// `path` (`crate::…`, `super::…`, `self::…`) from module `here`, as segments from the crate
/// root; `None` for a path into another crate.
fn resolve(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut at = here.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

fn reachable(graph: &Graph, from: &str) -> BTreeSet<String> {
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
pub fn cycles(graph: &Graph) -> Vec<(String, String)> {
    graph
        .keys()
        .flat_map(|a| {
            reachable(graph, a).into_iter().filter(|b| reachable(graph, b).contains(a)).map(move |b| (a.clone(), b))
        })
        .filter(|(a, b)| a < b)
        .collect()
}

/// Every crate root of the workspace's packages: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`.
pub fn crate_roots(workspace: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let Ok(entries) = std::fs::read_dir(workspace) else { return roots };
    for package in entries.flatten().map(|e| e.path()).filter(|p| p.join("Cargo.toml").exists()) {
        let src = package.join("src");
        for root in ["lib.rs", "main.rs"] {
            if src.join(root).exists() {
                roots.push(src.join(root));
            }
        }
        if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
            roots.extend(bins.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "rs")));
        }
    }
    roots.sort();
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut graph = Graph::new();
        for (from, to) in edges {
            graph.entry((*from).to_owned()).or_default().insert((*to).to_owned());
            graph.entry((*to).to_owned()).or_default();
        }
        graph
    }

    #[test]
    fn the_cycle_finder_finds_every_circle_and_nothing_else() {
        let pairs = |c: Vec<(String, String)>| -> Vec<(String, String)> { c };
        assert!(cycles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty(), "a diamond is no circle");
        let found = pairs(cycles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("e", "e")])));
        let want: Vec<(String, String)> =
            [("a", "b"), ("a", "c"), ("b", "c")].iter().map(|(a, b)| ((*a).into(), (*b).into())).collect();
        assert_eq!(found, want, "the three-circle, not the way into it");
    }

    #[test]
    fn use_trees_expand_to_their_leaves() {
        let leaves = use_tree(&tokens("super::{a, b::{C, D as E}, self}"));
        let want: Vec<Vec<String>> =
            [vec!["super", "a"], vec!["super", "b", "C"], vec!["super", "b", "D"], vec!["super"]]
                .iter()
                .map(|p| p.iter().map(|s| (*s).to_owned()).collect())
                .collect();
        assert_eq!(leaves, want);
    }

    #[test]
    fn a_scan_reads_code_not_comments_strings_or_tests() {
        let source = r##"
            //! super::doc::Comment names nothing
            mod kept;
            #[cfg(test)]
            mod only_in_tests;
            pub use kept::{Thing, other::Deep};
            fn f() -> &'static str { let _ = crate::real::Path; "crate::in_a::string" }
            /* crate::in_a::block */
            #[cfg(test)]
            mod tests { use crate::test_only::X; }
        "##;
        let scan = scan(source);
        assert_eq!(scan.children.keys().collect::<Vec<_>>(), ["kept"]);
        assert_eq!(scan.reexports.get("Thing").map(String::as_str), Some("kept"));
        assert_eq!(scan.reexports.get("Deep").map(String::as_str), Some("kept"));
        let named: Vec<String> = scan.paths.iter().map(|(_, p)| p.join("::")).collect();
        assert!(named.contains(&"crate::real::Path".to_owned()), "{named:?}");
        assert!(named.iter().all(|p| !p.contains("string") && !p.contains("block") && !p.contains("test_only")));
    }

    /// A crate on disk with a real circle (`a` → `b` through a re-export, `b` → `a` through
    /// `super`) and a clean sibling tree: the graphs see the circle, in the module it is in.
    #[test]
    fn a_circle_in_a_nested_module_is_found() {
        let root = std::env::temp_dir().join(format!("architecture-scan-{}", std::process::id()));
        let write = |file: &str, text: &str| {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("lib.rs", "mod outer;\nmod leaf;\n");
        write("leaf.rs", "pub struct Leaf;\n");
        write("outer/mod.rs", "mod a;\nmod b;\nmod c;\npub use a::A;\n");
        write("outer/a.rs", "use super::b::B;\npub struct A;\n");
        write("outer/b.rs", "pub struct B(crate::outer::A);\n");
        write("outer/c.rs", "use crate::leaf::Leaf;\nuse super::b::B;\n");
        let graphs = crate_graphs(&root.join("lib.rs"));
        std::fs::remove_dir_all(&root).ok();
        let outer = &graphs[&vec!["outer".to_owned()]];
        assert_eq!(cycles(outer), [("a".to_owned(), "b".to_owned())], "{outer:?}");
        assert!(outer["c"].contains("b"));
        let top = &graphs[&Vec::new()];
        assert!(top["outer"].contains("leaf") && cycles(top).is_empty(), "{top:?}");
    }
}
