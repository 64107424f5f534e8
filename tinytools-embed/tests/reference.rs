//! The encoder against the reference implementation: all-MiniLM-L6-v2's word pieces and
//! vectors for 61 varied texts (queries, tool descriptions, texts cut at 256 pieces, other
//! scripts, emoji, punctuation, numbers, nearly empty ones), made once by Hugging Face
//! transformers on PyTorch (`fixtures/make_reference.py`, which says how). Needs the model
//! `.ci/models` unpacks: skips without it, fails instead under `TINYTOOLS_MODELS_REQUIRED=1`
//! (as in CI).

// Test code: a missing fixture or model that does not load is the test failing.
#![allow(clippy::expect_used)]

use std::path::PathBuf;

use serde::Deserialize;
use tinytools::rank::embedding::TextEmbedder;
use tinytools_embed::BertEmbedder;

/// The least cosine to the reference vector a text may have.
const MIN_COSINE: f32 = 0.999;

#[derive(Deserialize)]
struct Reference {
    reference: String,
    texts: Vec<String>,
    ids: Vec<Vec<u32>>,
    vectors: Vec<Vec<f32>>,
}

/// `$TINYTOOLS_MODELS/all-MiniLM-L6-v2`, by default the workspace's `target/models/…`.
fn model_dir() -> PathBuf {
    let root = std::env::var_os("TINYTOOLS_MODELS")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/models"), PathBuf::from);
    root.join("all-MiniLM-L6-v2")
}

fn model() -> Option<BertEmbedder> {
    let dir = model_dir();
    if !dir.join("model.safetensors").exists() {
        let required = std::env::var("TINYTOOLS_MODELS_REQUIRED").is_ok_and(|v| v == "1");
        assert!(!required, "{} is missing: run .ci/models", dir.display());
        eprintln!("skipped: {} is not installed (run .ci/models)", dir.display());
        return None;
    }
    Some(BertEmbedder::load(&dir).expect("the model loads"))
}

fn reference() -> Reference {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference.json");
    let text = std::fs::read_to_string(&path).expect("the fixture is committed");
    let reference: Reference = serde_json::from_str(&text).expect("the fixture parses");
    assert!(reference.texts.len() >= 50, "at least 50 texts");
    assert_eq!((reference.ids.len(), reference.vectors.len()), (reference.texts.len(), reference.texts.len()));
    reference
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn word_pieces_match_the_reference_tokenizer() {
    let Some(model) = model() else { return };
    let reference = reference();
    let wrong: Vec<String> = reference
        .texts
        .iter()
        .zip(&reference.ids)
        .filter(|(text, ids)| model.token_ids(text) != **ids)
        .map(|(text, ids)| format!("{text:?}: ours {:?}, reference {ids:?}", model.token_ids(text)))
        .collect();
    let total = reference.ids.len();
    assert!(wrong.is_empty(), "{} of {total} texts tokenised differently:\n{}", wrong.len(), wrong.join("\n"));
    assert!(reference.ids.iter().any(|ids| ids.len() == 256), "a text is cut at max_seq_length");
}

/// Each text's vector, batched (a catalogue's path) and alone (a one-text call), within
/// [`MIN_COSINE`] of the reference's; prints the worst.
#[test]
fn vectors_match_the_reference_implementation() {
    let Some(model) = model() else { return };
    let reference = reference();
    let texts: Vec<&str> = reference.texts.iter().map(String::as_str).collect();
    let batched = model.embed(&texts).expect("the texts embed");
    let mut worst = (f32::INFINITY, "");
    let mut below = Vec::new();
    for ((text, expected), ours) in texts.iter().zip(&reference.vectors).zip(&batched) {
        assert_eq!(ours.len(), expected.len(), "{text:?}");
        let alone = model.embed(&[text]).expect("one text embeds").remove(0);
        for (path, vector) in [("batched", ours), ("alone", &alone)] {
            let similarity = cosine(vector, expected);
            if similarity < worst.0 {
                worst = (similarity, text);
            }
            if similarity < MIN_COSINE {
                below.push(format!("{path} {text:?}: {similarity:.6}"));
            }
        }
    }
    eprintln!(
        "{} texts against {}: worst cosine {:.6} ({:?})",
        texts.len(),
        reference.reference,
        worst.0,
        worst.1.chars().take(40).collect::<String>()
    );
    assert!(below.is_empty(), "below {MIN_COSINE}:\n{}", below.join("\n"));
}
