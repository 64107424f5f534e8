//! Distils a static (model2vec-style) embedding model from all-MiniLM-L6-v2: every vocabulary
//! token through the encoder on its own (on every core), then PCA and Zipf weights
//! (`tinytools_bench::distill::TokenOutputs`); `retrieval_eval --ranker static` ranks with it.
//!
//! ```text
//! .ci/models
//! cargo run --release -p tinytools-bench --bin distill_static -- [--model DIR] [--out DIR] [--variants]
//! ```
//!
//! Writes `--out` (default `target/models/minilm-static`, beside the MiniLM directory): PCA to
//! 256 dimensions, Zipf SIF weights (1e-4), f16. With `--variants`, also the measured variants
//! beside it from the same encoder pass: `-f32`, `-pca384`, `-pca128`, `-nopca` (the encoder's
//! outputs as they are) and `-unweighted`. Prints one JSON object: the distillation's seconds
//! and tokens, and per model its directory, file size, width and explained variance. The model
//! files are never committed.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use tinytools_bench::distill::{StaticOptions, TokenOutputs};
use tinytools_embed::{BertEmbedder, Precision};
use tinytools_examples::models;

fn main() {
    if let Err(message) = run() {
        eprintln!("distill_static: {message}");
        std::process::exit(2);
    }
}

/// The `--variants`: a directory suffix and its options.
fn variants() -> Vec<(&'static str, StaticOptions)> {
    let default = StaticOptions::default();
    vec![
        ("f32", StaticOptions { precision: Precision::F32, ..default }),
        ("pca384", StaticOptions { pca_dims: Some(384), ..default }),
        ("pca128", StaticOptions { pca_dims: Some(128), ..default }),
        ("nopca", StaticOptions { pca_dims: None, ..default }),
        ("unweighted", StaticOptions { sif_coefficient: None, ..default }),
    ]
}

fn run() -> Result<(), String> {
    let (mut model_dir, mut out, mut all) = (models::minilm_dir(), None, false);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--model" => model_dir = args.next().ok_or("--model needs a directory")?.into(),
            "--out" => out = Some(PathBuf::from(args.next().ok_or("--out needs a directory")?)),
            "--variants" => all = true,
            other => return Err(format!("unknown option `{other}`; see the binary's header")),
        }
    }
    let out = out.unwrap_or_else(|| model_dir.with_file_name("minilm-static"));
    let model = BertEmbedder::load(&model_dir).map_err(|e| format!("{e} (run .ci/models)"))?;
    let started = Instant::now();
    let progress = |done: usize, total: usize| {
        eprint!("\rdistilling word pieces {done}/{total}");
        if done >= total {
            eprintln!();
        }
    };
    let outputs = TokenOutputs::distill(&model, progress).map_err(|e| e.to_string())?;
    let distill_s = started.elapsed().as_secs_f64();
    let mut jobs = vec![(out.clone(), StaticOptions::default())];
    if all {
        for (suffix, options) in variants() {
            let mut dir = out.clone().into_os_string();
            dir.push(format!("-{suffix}"));
            jobs.push((dir.into(), options));
        }
    }
    let mut written = Vec::new();
    for (dir, options) in jobs {
        let started = Instant::now();
        let saved = outputs.save(&dir, &options).map_err(|e| e.to_string())?;
        written.push(json!({
            "dir": dir.display().to_string(),
            "options": format!("{options:?}"),
            "bytes": saved.bytes,
            "width": saved.width,
            "explained_variance": saved.explained_variance,
            "save_s": (started.elapsed().as_secs_f64() * 100.0).round() / 100.0,
        }));
        eprintln!("wrote {}", dir.display());
    }
    let report = json!({
        "model": model_dir.display().to_string(),
        "tokens": outputs.distilled(),
        "distill_s": (distill_s * 10.0).round() / 10.0,
        "models": written,
    });
    println!("{report}");
    Ok(())
}
