//! ONNX Runtime's vectors (`OrtEmbedder`, cargo feature `ort`) against `BertEmbedder`'s on the
//! same all-MiniLM-L6-v2. Skipped, with a note, unless `ORT_DYLIB_PATH` names the runtime and
//! the ONNX graph exists (`TINYTOOLS_ONNX_MODEL`, default `target/models/all-MiniLM-L6-v2.onnx`;
//! `bench/onnx/README.md` makes both).
#![cfg(feature = "ort")]

use std::path::PathBuf;

use tinytools::rank::embedding::{BertEmbedder, TextEmbedder};
use tinytools_bench::onnx::{OrtEmbedder, OrtOptions, runtime_path};
use tinytools_examples::models;

fn onnx_path() -> PathBuf {
    std::env::var_os("TINYTOOLS_ONNX_MODEL").map_or_else(|| models::minilm_dir().with_extension("onnx"), PathBuf::from)
}

/// Both encoders, or `None` with a note when the runtime, the graph or the model is missing.
fn encoders(options: OrtOptions) -> Option<(BertEmbedder, OrtEmbedder)> {
    if let Err(why) = runtime_path() {
        eprintln!("skipped: {why}");
        return None;
    }
    let onnx = onnx_path();
    if !onnx.is_file() {
        eprintln!("skipped: no ONNX graph at {} (run bench/onnx/export_minilm.py)", onnx.display());
        return None;
    }
    let bert = models::minilm()?;
    match OrtEmbedder::load(&onnx, &models::minilm_dir(), options) {
        Ok(ort) => Some((bert, ort)),
        Err(e) => panic!("{e}"),
    }
}

fn texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "The weather is lovely today.",
        "It's so sunny outside!",
        "",
        "Find me a one-bedroom apartment in Portland under $2,000 a month.",
        "get_weather_forecast: Returns the forecast for a city. Parameters: city (string), days (integer)",
        "Café résumé naïve — Ünïcödé and 中文 text, zero\u{200b}width",
        "word ",
    ]
    .map(str::to_owned)
    .to_vec();
    // Longer than the 256-piece budget, so both cut it at the same place.
    texts.push("tool search ranks deferred tools by meaning ".repeat(60));
    // Enough texts of mixed lengths for several padded batches.
    texts.extend((1..40).map(|n| "convert currency amounts between dollars and euros ".repeat(n % 7 + 1)));
    texts
}

fn compare(options: OrtOptions) -> Result<(), Box<dyn std::error::Error>> {
    let Some((bert, ort)) = encoders(options) else { return Ok(()) };
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    for text in &refs {
        assert_eq!(ort.token_ids(text), bert.token_ids(text), "token ids of {text:?}");
    }
    let expected = bert.embed(&refs)?;
    let got = ort.embed(&refs)?;
    assert_eq!(got.len(), expected.len());
    let mut worst = 1.0_f32;
    for ((text, a), b) in refs.iter().zip(&got).zip(&expected) {
        assert_eq!(a.len(), b.len());
        let cosine: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        assert!(cosine > 0.999, "cosine {cosine} for {text:?}");
        worst = worst.min(cosine);
    }
    eprintln!("{} texts, {options:?}: lowest cosine {worst}", refs.len());
    assert_ne!(ort.model_id(), bert.model_id(), "ORT's vectors are keyed apart from BertEmbedder's");
    Ok(())
}

#[test]
fn ort_vectors_match_bert_embedder() -> Result<(), Box<dyn std::error::Error>> {
    compare(OrtOptions { intra_threads: 1, sessions: 1 })
}

#[test]
fn ort_vectors_match_with_sessions_side_by_side() -> Result<(), Box<dyn std::error::Error>> {
    compare(OrtOptions { intra_threads: 1, sessions: 2 })
}
