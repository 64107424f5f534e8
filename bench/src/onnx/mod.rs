//! ONNX Runtime as a sentence encoder (cargo feature `ort`): [`OrtEmbedder`], measured against
//! `BertEmbedder` for issue 41 (`retrieval_eval --ranker ort --onnx-model FILE`).
//!
//! Nothing is downloaded at build time: `ort` is built with `load-dynamic`, and the runtime
//! is the shared library the PyPI `onnxruntime` wheel ships, named at run time by
//! `ORT_DYLIB_PATH`. The ONNX graph is written from the model's safetensors by
//! `bench/onnx/export_minilm.py` (see `bench/onnx/README.md` for both).

mod wordpiece;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use sha2::{Digest, Sha256};
use tinytools::rank::embedding::{EmbeddingError, TextEmbedder};

use self::wordpiece::WordPiece;

/// The environment variable naming ONNX Runtime's shared library.
pub const ORT_DYLIB_PATH: &str = "ORT_DYLIB_PATH";

/// Texts per ONNX Runtime call, as `BertEmbedder` batches them.
const BATCH: usize = 16;

/// Why an [`OrtEmbedder`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OrtError {
    /// `ORT_DYLIB_PATH` is not set, or names no file.
    #[error(
        "{ORT_DYLIB_PATH} {0}: point it at libonnxruntime.so.* from the PyPI `onnxruntime` wheel \
         (site-packages/onnxruntime/capi/; bench/onnx/README.md)"
    )]
    NoRuntime(String),
    /// ONNX Runtime's library did not load, or refused the model.
    #[error("ONNX Runtime: {what}")]
    Runtime {
        /// What went wrong, and what ONNX Runtime said.
        what: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A file was read but is not what it should be.
    #[error("{}: {what}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
}

impl OrtError {
    fn format(path: &Path, what: impl Into<String>) -> Self {
        Self::Format { path: path.into(), what: what.into() }
    }

    fn runtime(what: impl std::fmt::Display) -> Self {
        Self::Runtime { what: what.to_string() }
    }
}

/// How to run the ONNX graph.
#[derive(Clone, Copy, Debug)]
pub struct OrtOptions {
    /// ONNX Runtime's intra-op threads per session (its threads within one operator).
    pub intra_threads: usize,
    /// Sessions run side by side, each on its own batches (as `BertEmbedder` gives each core
    /// whole batches); each holds its own copy of the weights.
    pub sessions: usize,
}

impl Default for OrtOptions {
    /// One session on every core.
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Self { intra_threads: cores, sessions: 1 }
    }
}

/// A BERT sentence encoder run by ONNX Runtime: the word pieces of `tinytools`' WordPiece, the
/// graph `export_minilm.py` writes (its `last_hidden_state`), mean pooling over the real
/// tokens and unit length, as `BertEmbedder` computes them.
pub struct OrtEmbedder {
    name: String,
    model_id: String,
    wordpiece: WordPiece,
    /// Word pieces per text, `[CLS]` and `[SEP]` included.
    max_tokens: usize,
    hidden: usize,
    sessions: Vec<Mutex<Session>>,
}

impl std::fmt::Debug for OrtEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrtEmbedder").field("model_id", &self.model_id).field("sessions", &self.sessions.len()).finish()
    }
}

/// The process's one ONNX Runtime environment (`ort` allows no second), from the library
/// `ORT_DYLIB_PATH` names.
fn environment() -> Result<Environment, OrtError> {
    static ENVIRONMENT: OnceLock<Result<Environment, String>> = OnceLock::new();
    ENVIRONMENT
        .get_or_init(|| {
            let path = runtime_path().map_err(|e| e.to_string())?;
            let builder = ort::init_from(&path).map_err(|e| OrtError::runtime(e).to_string())?;
            builder.with_name("tinytools-bench").build().map_err(|e| OrtError::runtime(e).to_string())
        })
        .clone()
        .map_err(|what| OrtError::Runtime { what })
}

/// The runtime library `ORT_DYLIB_PATH` names, when it exists.
///
/// # Errors
/// [`OrtError::NoRuntime`] when the variable is unset or names no file.
pub fn runtime_path() -> Result<PathBuf, OrtError> {
    let path = std::env::var_os(ORT_DYLIB_PATH).ok_or_else(|| OrtError::NoRuntime("is not set".into()))?;
    let path = PathBuf::from(path);
    if !path.is_file() {
        return Err(OrtError::NoRuntime(format!("names {}, which is not a file", path.display())));
    }
    Ok(path)
}

impl OrtEmbedder {
    /// Loads the ONNX graph `onnx` (written by `export_minilm.py` from `model_dir`) into
    /// ONNX Runtime, with the tokenizer and token budget of the sentence-transformers
    /// directory `model_dir`.
    ///
    /// # Errors
    /// [`OrtError`]: no runtime at `ORT_DYLIB_PATH`, a file missing or malformed, or a graph
    /// ONNX Runtime refuses.
    pub fn load(onnx: &Path, model_dir: &Path, options: OrtOptions) -> Result<Self, OrtError> {
        let config_path = model_dir.join("config.json");
        let config: serde_json::Value = read_json(&config_path)?;
        let number = |key: &str| {
            config[key]
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| OrtError::format(&config_path, format!("no whole number `{key}`")))
        };
        let (hidden, positions) = (number("hidden_size")?, number("max_position_embeddings")?);
        let sentence_config = model_dir.join("sentence_bert_config.json");
        let max_seq_length = if sentence_config.exists() {
            let value: serde_json::Value = read_json(&sentence_config)?;
            value["max_seq_length"].as_u64().map_or(positions, |n| usize::try_from(n).unwrap_or(usize::MAX))
        } else {
            positions
        };
        if positions < 2 {
            return Err(OrtError::format(&config_path, "max_position_embeddings must be at least 2"));
        }
        let max_tokens = max_seq_length.clamp(2, positions);
        let wordpiece = WordPiece::from_tokenizer_json(&model_dir.join("tokenizer.json"))?;

        let environment = environment()?;
        let sessions = (0..options.sessions.max(1))
            .map(|_| {
                let session = Session::builder(&environment)
                    .and_then(|b| b.with_optimization_level(GraphOptimizationLevel::All).map_err(ort::Error::from))
                    .and_then(|b| b.with_intra_threads(options.intra_threads.max(1)).map_err(ort::Error::from))
                    .and_then(|mut b| b.commit_from_file(onnx))
                    .map_err(|e| OrtError::runtime(format!("cannot load {}: {e}", onnx.display())))?;
                Ok(Mutex::new(session))
            })
            .collect::<Result<Vec<_>, OrtError>>()?;
        let name = model_dir.file_name().map_or_else(|| "bert".to_owned(), |n| n.to_string_lossy().into_owned());
        let model_id = format!(
            "{name} {hidden}d onnx:{} tokenizer:{} ort",
            file_hash(onnx)?,
            file_hash(&model_dir.join("tokenizer.json"))?
        );
        Ok(Self { name: format!("{name}-ort"), model_id, wordpiece, max_tokens, hidden, sessions })
    }

    /// The vocabulary ids the model reads for `text`: `[CLS]`, the word pieces (cut at the
    /// model's `max_seq_length`), `[SEP]`, as `BertEmbedder::token_ids` gives them.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.wordpiece.cls];
        ids.extend(self.wordpiece.encode(text, self.max_tokens.saturating_sub(2)));
        ids.push(self.wordpiece.sep);
        ids
    }

    /// One batch through `session`: padded to its longest text, mean-pooled over each text's
    /// own tokens, unit length.
    fn embed_batch(&self, session: &Mutex<Session>, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let rows = batch.len();
        let width = batch.iter().map(Vec::len).max().unwrap_or(0);
        let mut ids = vec![0_i64; rows * width];
        let mut mask = vec![0_i64; rows * width];
        for (row, text) in batch.iter().enumerate() {
            for (at, &id) in text.iter().enumerate() {
                ids[row * width + at] = i64::from(id);
                mask[row * width + at] = 1;
            }
        }
        let shape = [rows, width];
        let tensor = |values: Vec<i64>| {
            Tensor::from_array((shape, values)).map_err(|e| EmbeddingError::model(format!("ONNX Runtime: {e}")))
        };
        let inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask)?,
            "token_type_ids" => tensor(vec![0_i64; rows * width])?,
        ];
        let mut session = session.lock().map_err(|_| EmbeddingError::model("an ONNX session's lock is poisoned"))?;
        let outputs = session.run(inputs).map_err(|e| EmbeddingError::model(format!("ONNX Runtime: {e}")))?;
        let output = outputs
            .get("last_hidden_state")
            .ok_or_else(|| EmbeddingError::model("the ONNX graph has no output `last_hidden_state`"))?;
        let (out_shape, values) =
            output.try_extract_tensor::<f32>().map_err(|e| EmbeddingError::model(format!("ONNX Runtime: {e}")))?;
        let expected = [rows, width, self.hidden].map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        if out_shape[..] != expected {
            return Err(EmbeddingError::model(format!(
                "last_hidden_state has shape {out_shape:?}, expected {expected:?} (export the graph from this model)"
            )));
        }
        Ok(batch
            .iter()
            .enumerate()
            .map(|(row, text)| {
                let mut pooled = vec![0.0_f32; self.hidden];
                for at in 0..text.len() {
                    let start = (row * width + at) * self.hidden;
                    for (sum, value) in pooled.iter_mut().zip(&values[start..start + self.hidden]) {
                        *sum += value;
                    }
                }
                let count = text.len().max(1) as f32;
                pooled.iter_mut().for_each(|x| *x /= count);
                let norm = pooled.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    pooled.iter_mut().for_each(|x| *x /= norm);
                }
                pooled
            })
            .collect())
    }
}

impl TextEmbedder for OrtEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn model_id(&self) -> String {
        self.model_id.clone()
    }

    /// Batches of 16 texts of similar length (sorted by word pieces, so padding stays small),
    /// each session taking the next batch until none is left.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let ids: Vec<Vec<u32>> = texts.iter().map(|text| self.token_ids(text)).collect();
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let batches: Vec<Vec<usize>> = order.chunks(BATCH).map(<[usize]>::to_vec).collect();
        let next = AtomicUsize::new(0);
        let worker = |session: &Mutex<Session>| -> Result<Vec<(usize, Vec<f32>)>, EmbeddingError> {
            let mut done = Vec::new();
            loop {
                let Some(batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) else { return Ok(done) };
                let texts: Vec<Vec<u32>> = batch.iter().map(|&i| ids[i].clone()).collect();
                done.extend(batch.iter().copied().zip(self.embed_batch(session, &texts)?));
            }
        };
        let parts: Vec<Vec<(usize, Vec<f32>)>> = match &self.sessions[..] {
            [one] => vec![worker(one)?],
            sessions => std::thread::scope(|scope| {
                let handles: Vec<_> = sessions.iter().map(|session| scope.spawn(|| worker(session))).collect();
                handles
                    .into_iter()
                    .map(|handle| handle.join().map_err(|_| EmbeddingError::model("an embedding thread panicked"))?)
                    .collect::<Result<_, _>>()
            })?,
        };
        let mut vectors = vec![Vec::new(); texts.len()];
        for (at, vector) in parts.into_iter().flatten() {
            vectors[at] = vector;
        }
        Ok(vectors)
    }
}

/// Reads and parses a JSON file; errors name the file.
fn read_json(path: &Path) -> Result<serde_json::Value, OrtError> {
    let text = std::fs::read_to_string(path).map_err(|source| OrtError::Io { path: path.into(), source })?;
    serde_json::from_str(&text).map_err(|e| OrtError::format(path, format!("not JSON: {e}")))
}

/// The first 16 hex digits of a file's SHA-256, read a megabyte at a time (the graph is 90 MB;
/// reading it whole would count in the peak memory measured).
fn file_hash(path: &Path) -> Result<String, OrtError> {
    let io = |source| OrtError::Io { path: path.into(), source };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0_u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer).map_err(io)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect())
}
