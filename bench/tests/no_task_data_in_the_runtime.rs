//! The runtime is not fitted to this benchmark: no source file of `tinytools/src` quotes a
//! task's data — its distinctive tokens (an address, an id with digits, a made-up ticker), or
//! a run of six words of its request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use tinytools_bench::tasks;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source tree").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The tokens of a request that belong to this suite alone: addresses, `#channels`, ids that
/// mix letters and digits, and all-capital words of five letters or more.
fn distinctive(prompt: &str) -> Vec<String> {
    prompt
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '?' | '!' | '(' | ')' | '"' | '\'' | ';'))
        .map(|token| token.trim_end_matches(['.', ':']))
        .filter(|token| {
            let digits = token.chars().any(|c| c.is_ascii_digit());
            let letters = token.chars().any(|c| c.is_ascii_alphabetic());
            let capitals = token.len() >= 5 && token.chars().all(|c| c.is_ascii_uppercase());
            token.contains('@') || (digits && letters && token.len() >= 4) || capitals
        })
        .map(str::to_owned)
        .collect()
}

/// Every run of six words of a request, in lower case.
fn phrases(prompt: &str) -> Vec<String> {
    let words: Vec<String> = prompt.split_whitespace().map(str::to_lowercase).collect();
    words.windows(6).map(|window| window.join(" ")).collect()
}

#[test]
fn no_runtime_source_quotes_a_tasks_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tinytools/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 50, "the runtime's sources: {}", files.len());
    let sources: Vec<(PathBuf, String)> =
        files.into_iter().map(|path| (path.clone(), std::fs::read_to_string(&path).expect("readable"))).collect();
    let mut found = Vec::new();
    let mut checked = 0;
    for task in tasks::all() {
        let tokens = distinctive(task.prompt);
        let runs = phrases(task.prompt);
        checked += tokens.len() + runs.len();
        for (path, text) in &sources {
            let lower = text.to_lowercase();
            for token in &tokens {
                if text.contains(token.as_str()) {
                    found.push(format!("{}: `{token}` ({})", path.display(), task.id));
                }
            }
            for run in &runs {
                if lower.contains(run.as_str()) {
                    found.push(format!("{}: \"{run}\" ({})", path.display(), task.id));
                }
            }
        }
    }
    assert!(checked > 100, "too little to check: {checked}");
    assert!(found.is_empty(), "task data in the runtime:\n{}", found.join("\n"));
}

#[test]
fn the_check_finds_what_it_looks_for() {
    assert_eq!(
        distinctive("Email priya@acme.com about doc_88 and GLOBX, not ACME."),
        ["priya@acme.com", "doc_88", "GLOBX"]
    );
    assert_eq!(
        phrases("one two three four five six seven"),
        ["one two three four five six", "two three four five six seven"]
    );
}
