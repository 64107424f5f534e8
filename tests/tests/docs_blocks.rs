//! The README's and the guide's config samples parse: every ```json block with serde_json and
//! every ```toml block with toml, so a sample cannot rot into something no client would read.
//! Every fenced block names its language, so none is compiled as Rust by accident or left
//! unchecked. (The Rust blocks are doctests: `cargo test -p tinytools-integration-tests --doc`.)

use std::path::{Path, PathBuf};

/// The languages a fenced block may name: Rust (with rustdoc's attributes), and the samples'.
const LANGUAGES: [&str; 6] = ["rust", "sh", "json", "toml", "text", "nginx"];

/// One fenced block: its page, its first line's number, its language and its text.
struct Block {
    page: PathBuf,
    line: usize,
    language: String,
    text: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// README.md, docs/README.md and every page of docs/guide/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("docs/README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root().join("docs/guide"))
        .expect("docs/guide exists")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    guide.sort();
    assert!(guide.len() >= 5, "the guide's pages: {guide:?}");
    pages.extend(guide);
    pages
}

fn blocks(page: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(page).expect("a readable page");
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.as_mut() {
            None if trimmed.starts_with("```") => {
                let language = trimmed.trim_start_matches('`').trim().to_owned();
                open = Some(Block { page: page.to_owned(), line: index + 1, language, text: String::new() });
            }
            Some(_) if trimmed.starts_with("```") => blocks.extend(open.take()),
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            None => {}
        }
    }
    assert!(open.is_none(), "{}: a fenced block is never closed", page.display());
    blocks
}

fn all_blocks() -> Vec<Block> {
    pages().iter().flat_map(|page| blocks(page)).collect()
}

fn place(block: &Block) -> String {
    format!("{}:{}", block.page.display(), block.line)
}

#[test]
fn every_block_names_a_known_language() {
    for block in all_blocks() {
        let language = block.language.split(',').next().unwrap_or_default();
        assert!(
            LANGUAGES.contains(&language),
            "{}: a ```{} block; name one of {LANGUAGES:?}",
            place(&block),
            block.language
        );
    }
}

#[test]
fn every_json_block_parses() {
    let json: Vec<Block> = all_blocks().into_iter().filter(|block| block.language == "json").collect();
    assert!(json.len() >= 5, "the README and the gateway's guide hold config samples");
    for block in json {
        if let Err(error) = serde_json::from_str::<serde_json::Value>(&block.text) {
            panic!("{}: a ```json block that is not JSON: {error}\n{}", place(&block), block.text);
        }
    }
}

#[test]
fn every_toml_block_parses() {
    let toml: Vec<Block> = all_blocks().into_iter().filter(|block| block.language == "toml").collect();
    assert!(!toml.is_empty(), "the README's install lines are TOML");
    for block in toml {
        if let Err(error) = toml::from_str::<toml::Table>(&block.text) {
            panic!("{}: a ```toml block that is not TOML: {error}\n{}", place(&block), block.text);
        }
    }
}
