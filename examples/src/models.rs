//! Where the sentence-embedding model lives for tests and examples (`.ci/models` puts it there).

use std::path::{Path, PathBuf};

use std::sync::Arc;

use tinytools::rank::embedding::EmbeddingRanker;
use tinytools_embed::{BertEmbedder, StaticEmbedder};

/// `$TINYTOOLS_MODELS/all-MiniLM-L6-v2`, by default `target/models/all-MiniLM-L6-v2`.
pub fn minilm_dir() -> PathBuf {
    let root = match std::env::var_os("TINYTOOLS_MODELS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/models"),
    };
    root.join("all-MiniLM-L6-v2")
}

/// Whether a missing model must fail rather than skip (`.ci/run` sets `TINYTOOLS_MODELS_REQUIRED=1`).
pub fn models_required() -> bool {
    std::env::var("TINYTOOLS_MODELS_REQUIRED").is_ok_and(|v| v == "1")
}

/// all-MiniLM-L6-v2, or `None` (with a note on stderr) when it is not installed and not required.
///
/// # Panics
/// When the model is required and missing, or present and unloadable.
pub fn minilm() -> Option<BertEmbedder> {
    let dir = minilm_dir();
    if !dir.join("model.safetensors").exists() {
        assert!(!models_required(), "{} is missing: run .ci/models", dir.display());
        eprintln!("skipped: {} is not installed (run .ci/models)", dir.display());
        return None;
    }
    match BertEmbedder::load(&dir) {
        Ok(model) => Some(model),
        Err(e) => panic!("{e}"),
    }
}

/// The embedding ranker on all-MiniLM-L6-v2 from [`minilm_dir`], built as hosts build it
/// ([`tinytools_embed::load_ranker`]: the default blend and calibration); the benchmark
/// programs' `--ranker minilm`.
///
/// # Errors
/// When the model is not there or does not load (run `.ci/models`).
pub fn minilm_ranker() -> Result<EmbeddingRanker, String> {
    tinytools_embed::load_ranker(minilm_dir()).map_err(|e| format!("{e} (run .ci/models)"))
}

/// [`minilm_ranker`], reading a search's first `tokens` word pieces
/// ([`BertEmbedder::with_query_tokens`]) when given: the benchmarks' `--query-tokens N`.
///
/// # Errors
/// When the model is not there or does not load (run `.ci/models`).
pub fn minilm_ranker_reading(tokens: Option<usize>) -> Result<EmbeddingRanker, String> {
    let Some(tokens) = tokens else { return minilm_ranker() };
    let model = BertEmbedder::load(minilm_dir()).map_err(|e| format!("{e} (run .ci/models)"))?;
    Ok(EmbeddingRanker::new(Arc::new(model.with_query_tokens(tokens))))
}

/// `minilm-static` beside [`minilm_dir`]: where `distill_static` writes the static model.
pub fn static_dir() -> PathBuf {
    minilm_dir().with_file_name("minilm-static")
}

/// The embedding ranker on the static model in `dir` (default [`static_dir`]), built as a host
/// builds it (`EmbeddingRanker::new` over a [`StaticEmbedder`]: the default blend and the
/// static model's own calibration); the benchmark programs' `--ranker static`.
///
/// # Errors
/// When the model is not there or does not load (run `distill_static`).
pub fn static_ranker(dir: Option<&Path>) -> Result<EmbeddingRanker, String> {
    let dir = dir.map_or_else(static_dir, Path::to_path_buf);
    let model = StaticEmbedder::load(&dir).map_err(|e| format!("{e} (run distill_static)"))?;
    Ok(EmbeddingRanker::new(Arc::new(model)))
}

/// The ranker a benchmark's `--ranker NAME` asks for: `None` for `bm25` (the catalogue's
/// own), [`minilm_ranker`] for `minilm`, [`static_ranker`] over `static_model` for `static`.
///
/// # Errors
/// Another name, or a model that does not load.
pub fn named_ranker(name: &str, static_model: Option<&Path>) -> Result<Option<EmbeddingRanker>, String> {
    match name {
        "bm25" => Ok(None),
        "minilm" => minilm_ranker().map(Some),
        "static" => static_ranker(static_model).map(Some),
        other => Err(format!("unknown ranker `{other}`: use bm25, minilm or static")),
    }
}

/// A progress bar on stderr for [`EmbeddingRanker::prepare_with_progress`] and
/// [`EmbeddingRanker::warm_with_progress`]: one line, rewritten in place, ended when done.
pub fn progress_bar(done: usize, total: usize) {
    use std::io::Write;
    const WIDTH: usize = 30;
    let filled = (done * WIDTH).checked_div(total).unwrap_or(WIDTH);
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "\rembedding tools [{}{}] {done}/{total}", "#".repeat(filled), " ".repeat(WIDTH - filled));
    if done >= total {
        let _ = writeln!(stderr);
    }
    let _ = stderr.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ranker_name_is_bm25_minilm_or_static() {
        assert!(matches!(named_ranker("bm25", None), Ok(None)));
        let unknown = named_ranker("bert", None).err().unwrap_or_default();
        assert!(unknown.contains("unknown ranker `bert`"), "{unknown}");
        let missing = named_ranker("static", Some(Path::new("/nonexistent/static"))).err().unwrap_or_default();
        assert!(missing.contains("/nonexistent/static") && missing.contains("distill_static"), "{missing}");
        assert_eq!(static_dir().file_name().and_then(|n| n.to_str()), Some("minilm-static"));
    }
}
