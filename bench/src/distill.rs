//! Distilling a static model from a BERT sentence encoder, as model2vec does: every vocabulary
//! token through the encoder on its own, then PCA and a weight from the token's rank. What
//! `distill_static` runs; `tinytools_embed::StaticEmbedder` loads what it writes. Here, not in
//! the encoder crate: only the benchmarks distil.

use std::path::Path;

use ndarray::{Array2, Axis};
use tinytools::rank::embedding::{EmbeddingError, TextEmbedder};
use tinytools_embed::{BertEmbedder, Precision, StaticFile};

/// Token sequences per encoder pass when distilling (three word pieces each).
const BATCH: usize = 128;

/// Tokens between two progress reports.
const CHUNK: usize = 2_048;

/// The encoder's output for every vocabulary token on its own: the expensive half of
/// distilling a `tinytools_embed::StaticEmbedder`, done once and then shaped by
/// [`save`](Self::save) into as many static models as there are [`StaticOptions`].
///
/// Each token the tokenizer can produce (every one but `[PAD]`, `[CLS]`, `[SEP]`, `[MASK]` and
/// `[unusedN]`; `[UNK]` included) goes through the encoder as `[SEP] token [CLS]` (model2vec's
/// order, which it measured better than `[CLS] token [SEP]`), and its vector is the mean of
/// the last layer over those three positions, not normalised.
///
/// ```no_run
/// use tinytools_bench::distill::{StaticOptions, TokenOutputs};
/// use tinytools_embed::{BertEmbedder, StaticEmbedder};
///
/// let model = BertEmbedder::load("target/models/all-MiniLM-L6-v2")?;
/// let outputs = TokenOutputs::distill(&model, |done, total| eprintln!("{done}/{total}"))?;
/// outputs.save("target/models/minilm-static", &StaticOptions::default())?;
/// let fast = StaticEmbedder::load("target/models/minilm-static")?;
/// # Ok::<(), tinytools::rank::embedding::EmbeddingError>(())
/// ```
pub struct TokenOutputs {
    /// In id order; `""` for an id no token has.
    tokens: Vec<String>,
    /// Whether the tokenizer can produce the token (it was distilled).
    used: Vec<bool>,
    /// `tokens.len() × width`; zero rows for the tokens not used.
    outputs: Array2<f32>,
    /// The encoder's model id.
    source: String,
}

impl std::fmt::Debug for TokenOutputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenOutputs")
            .field("source", &self.source)
            .field("tokens", &self.tokens.len())
            .field("distilled", &self.distilled())
            .field("width", &self.outputs.ncols())
            .finish_non_exhaustive()
    }
}

/// How [`TokenOutputs::save`] shapes a static model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaticOptions {
    /// Centre the vectors and keep this many principal components (at most the encoder's
    /// width; the width itself rotates and centres without dropping any); `None` keeps the
    /// encoder's outputs as they are. model2vec's default: 256.
    pub pca_dims: Option<usize>,
    /// Weigh each token by `a / (a + p)`, `p` its frequency estimated by Zipf's law from its
    /// rank (its position in the vocabulary, which for BERT's vocabulary roughly follows
    /// frequency), `a` this coefficient; `None` weighs every token 1. model2vec's default:
    /// `1e-4`.
    pub sif_coefficient: Option<f32>,
    /// How the numbers are stored.
    pub precision: Precision,
}

impl Default for StaticOptions {
    fn default() -> Self {
        Self { pca_dims: Some(256), sif_coefficient: Some(1e-4), precision: Precision::F16 }
    }
}

/// What [`TokenOutputs::save`] wrote.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SavedStatic {
    /// The file's size in bytes.
    pub bytes: usize,
    /// Numbers per vector.
    pub width: usize,
    /// The share of the variance the kept principal components explain, with PCA.
    pub explained_variance: Option<f32>,
}

impl TokenOutputs {
    /// Runs every token of `model`'s vocabulary through it, on rayon's pool, calling
    /// `progress(done, total)` on this thread every 2,048 tokens and at the end.
    /// all-MiniLM-L6-v2's 29,524 tokens took 42 s on two busy cores (`docs/retrieval.md`).
    ///
    /// # Errors
    /// [`EmbeddingError::Model`] for a model that reads fewer than three word pieces, or when
    /// a thread of the encoder fails.
    pub fn distill(model: &BertEmbedder, progress: impl Fn(usize, usize)) -> Result<Self, EmbeddingError> {
        if model.max_tokens() < 3 {
            return Err(EmbeddingError::model("the model reads fewer than three word pieces: [SEP] token [CLS]"));
        }
        let [cls, sep, unk] = model.special_ids();
        let rows = model.vocab_rows();
        let mut tokens = vec![String::new(); rows];
        for (id, token) in model.vocabulary().into_iter().enumerate() {
            if let (Some(slot), Some(token)) = (tokens.get_mut(id), token) {
                token.clone_into(slot);
            }
        }
        let used: Vec<bool> = tokens
            .iter()
            .enumerate()
            .map(|(id, token)| id == unk as usize || (!token.is_empty() && !is_special(token)))
            .collect();
        let ids: Vec<u32> = (0..rows).filter(|&id| used[id]).filter_map(|id| u32::try_from(id).ok()).collect();
        let mut outputs = Array2::<f32>::zeros((rows, model.width()));
        progress(0, ids.len());
        for (chunk_at, chunk) in ids.chunks(CHUNK).enumerate() {
            let sequences: Vec<Vec<u32>> = chunk.iter().map(|&id| vec![sep, id, cls]).collect();
            let means = mean_outputs(model, &sequences)?;
            for (&id, mean) in chunk.iter().zip(means) {
                outputs.row_mut(id as usize).assign(&ndarray::ArrayView1::from(&mean));
            }
            progress((chunk_at * CHUNK + chunk.len()).min(ids.len()), ids.len());
        }
        Ok(Self { tokens, used, outputs, source: model.model_id() })
    }

    /// Tokens distilled (the ones the tokenizer can produce).
    pub fn distilled(&self) -> usize {
        self.used.iter().filter(|used| **used).count()
    }

    /// Shapes a static model as `options` say and writes it into `dir` (created if need be),
    /// where `tinytools_embed::StaticEmbedder::load` reads it.
    ///
    /// # Errors
    /// [`EmbeddingError::Model`] for more PCA dimensions than the encoder's width, or none;
    /// [`EmbeddingError::Write`] when the directory or file cannot be written.
    pub fn save(&self, dir: impl AsRef<Path>, options: &StaticOptions) -> Result<SavedStatic, EmbeddingError> {
        let (vectors, explained_variance) = match options.pca_dims {
            None => (self.outputs.clone(), None),
            Some(dims) if dims == 0 || dims > self.outputs.ncols() => {
                return Err(EmbeddingError::model(format!(
                    "PCA to {dims} dimensions: 1 to {} can be kept",
                    self.outputs.ncols()
                )));
            }
            Some(dims) => {
                let (projected, explained) = pca(&self.outputs, &self.used, dims);
                (projected, Some(explained))
            }
        };
        let weights = match options.sif_coefficient {
            Some(a) => zipf_weights(&self.used, a),
            None => self.used.iter().map(|&used| if used { 1.0 } else { 0.0 }).collect(),
        };
        let pca_text = options.pca_dims.map_or_else(|| "no PCA".to_owned(), |dims| format!("PCA to {dims}"));
        let sif_text = options.sif_coefficient.map_or_else(|| "no weights".to_owned(), |a| format!("Zipf SIF {a}"));
        let file = StaticFile {
            source: format!("{}: [SEP] token [CLS] mean, {pca_text}, {sif_text}", self.source),
            precision: options.precision,
            width: vectors.ncols(),
            tokens: self.tokens.clone(),
            weights,
            vectors: vectors.iter().copied().collect(),
        };
        let bytes = file.save(dir)?;
        Ok(SavedStatic { bytes, width: file.width, explained_variance })
    }
}

/// [`BertEmbedder::mean_token_outputs`] of `sequences` in batches of [`BATCH`] over rayon's
/// pool (the encoder's own), in order.
fn mean_outputs(model: &BertEmbedder, sequences: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
    use rayon::prelude::*;
    let batches: Vec<Vec<Vec<f32>>> =
        sequences.par_chunks(BATCH).map(|batch| model.mean_token_outputs(batch)).collect::<Result<_, _>>()?;
    Ok(batches.into_iter().flatten().collect())
}

/// A token the tokenizer never produces: `[PAD]`, `[CLS]`, `[unused0]`, ... (`[UNK]` is
/// produced, and is checked for apart).
fn is_special(token: &str) -> bool {
    token.len() > 2 && token.starts_with('[') && token.ends_with(']')
}

/// model2vec's weights: the used tokens ranked in id order, `p = (1 / (rank + 2)) / Σ`, and
/// each weighs `a / (a + p)`; unused tokens weigh 0.
fn zipf_weights(used: &[bool], a: f32) -> Vec<f32> {
    let count = used.iter().filter(|used| **used).count();
    let total: f64 = (0..count).map(|rank| 1.0 / (rank as f64 + 2.0)).sum();
    let mut rank = 0_usize;
    used.iter()
        .map(|&used| {
            if !used {
                return 0.0;
            }
            let p = 1.0 / (rank as f64 + 2.0) / total;
            rank += 1;
            (f64::from(a) / (f64::from(a) + p)) as f32
        })
        .collect()
}

/// The used rows of `x`, centred and projected on their `dims` principal components (the
/// unused rows stay zero), and the share of the variance those components explain.
fn pca(x: &Array2<f32>, used: &[bool], dims: usize) -> (Array2<f32>, f32) {
    let rows: Vec<usize> = (0..x.nrows()).filter(|&row| used.get(row).copied().unwrap_or(false)).collect();
    let mut centred = x.select(Axis(0), &rows);
    if let Some(mean) = centred.mean_axis(Axis(0)) {
        centred -= &mean;
    }
    let covariance = centred.t().dot(&centred);
    let n = covariance.nrows();
    let (values, vectors) = symmetric_eigen(covariance.iter().map(|&v| f64::from(v)).collect(), n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let kept = &order[..dims.min(n)];
    let basis = Array2::from_shape_fn((n, kept.len()), |(row, col)| vectors[row * n + kept[col]] as f32);
    let projected = centred.dot(&basis);
    let mut out = Array2::<f32>::zeros((x.nrows(), kept.len()));
    for (&row, values) in rows.iter().zip(projected.rows()) {
        out.row_mut(row).assign(&values);
    }
    let all: f64 = values.iter().map(|v| v.max(0.0)).sum();
    let share = kept.iter().map(|&i| values[i].max(0.0)).sum::<f64>() / all.max(f64::MIN_POSITIVE);
    (out, share as f32)
}

/// The eigenvalues and eigenvectors (the columns of the second, `n × n` row-major) of the
/// symmetric `n × n` row-major matrix `a`, by cyclic Jacobi rotations: a few sweeps of
/// `n² / 2` rotations for the 384 × 384 covariance, a second or so.
///
/// Written here rather than taken from a crate: `ndarray-linalg` needs a system LAPACK, and
/// `nalgebra` would be a second linear-algebra stack for one decomposition run once per
/// distillation.
fn symmetric_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let total: f64 = a.iter().map(|x| x * x).sum();
    for _sweep in 0..64 {
        let off: f64 = (0..n).flat_map(|p| (p + 1..n).map(move |q| (p, q))).map(|(p, q)| a[p * n + q].powi(2)).sum();
        if off <= total * 1e-24 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                let rotate = |m: &mut Vec<f64>, i: usize, j: usize| {
                    let (x, y) = (m[i], m[j]);
                    m[i] = c * x - s * y;
                    m[j] = s * x + c * y;
                };
                for k in 0..n {
                    rotate(&mut a, k * n + p, k * n + q);
                }
                for k in 0..n {
                    rotate(&mut a, p * n + k, q * n + k);
                }
                for k in 0..n {
                    rotate(&mut v, k * n + p, k * n + q);
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

#[cfg(test)]
mod tests {
    use tinytools_embed::StaticEmbedder;

    use super::*;

    /// A working BERT of `hidden` = 4, no layers, `positions` position embeddings and the
    /// vocabulary `[PAD] [UNK] [CLS] [SEP] word`, loaded from a directory written for it.
    fn tiny_model(name: &str, positions: usize, max_seq_length: usize) -> Result<BertEmbedder, EmbeddingError> {
        let dir = std::env::temp_dir().join(format!("tinytools-bench-{name}-{}", std::process::id()));
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
        let model = BertEmbedder::load(&dir);
        std::fs::remove_dir_all(&dir).ok();
        model
    }

    #[test]
    fn jacobi_finds_the_eigenpairs_of_a_symmetric_matrix() {
        let (values, vectors) = symmetric_eigen(vec![2.0, 1.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 5.0], 3);
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        for (got, want) in sorted.iter().zip([1.0, 3.0, 5.0]) {
            assert!((got - want).abs() < 1e-9, "{values:?}");
        }
        // A v = λ v for every column.
        let a = [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 5.0]];
        for (col, value) in values.iter().enumerate() {
            for (row, a_row) in a.iter().enumerate() {
                let av: f64 = (0..3).map(|k| a_row[k] * vectors[k * 3 + col]).sum();
                assert!((av - value * vectors[row * 3 + col]).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn pca_centres_keeps_the_main_direction_and_leaves_unused_rows_zero() {
        // Points on the line (1, 2) t around (5, 5), a little off it; row 2 is unused.
        let x = Array2::from_shape_vec((5, 2), vec![4.0, 3.0, 5.0, 5.0, 99.0, 99.0, 6.0, 7.0, 5.01, 4.99])
            .unwrap_or_default();
        let used = [true, true, false, true, true];
        let (projected, explained) = pca(&x, &used, 1);
        assert_eq!(projected.dim(), (5, 1));
        assert!(explained > 0.999, "{explained}");
        assert_eq!(projected[[2, 0]], 0.0);
        let length = 5.0_f32.sqrt();
        assert!((projected[[0, 0]].abs() - length).abs() < 1e-2, "{projected:?}");
        assert!((projected[[0, 0]] + projected[[3, 0]]).abs() < 1e-2, "centred: opposite ends");
    }

    #[test]
    fn zipf_weights_follow_model2vec() {
        let weights = zipf_weights(&[false, true, true, true], 0.5);
        let total = 1.0 / 2.0 + 1.0 / 3.0 + 1.0 / 4.0;
        let expected = [0.0, 0.5 / (0.5 + 0.5 / total), 0.5 / (0.5 + (1.0 / 3.0) / total), 0.5 / (0.5 + 0.25 / total)];
        for (got, want) in weights.iter().zip(expected) {
            assert!((f64::from(*got) - want).abs() < 1e-6, "{weights:?}");
        }
        assert!(weights[1] < weights[2] && weights[2] < weights[3], "rarer tokens weigh more");
    }

    #[test]
    fn the_encoder_refuses_ids_past_its_vocabulary_and_sequences_past_its_positions() -> Result<(), EmbeddingError> {
        let model = tiny_model("refuse", 8, 8)?;
        let error = model.mean_token_outputs(&[vec![3, 5, 2]]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("token id 5 is past the vocabulary (5)"), "{error}");
        let error = model.mean_token_outputs(&[vec![4; 9]]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("9 word pieces; the model reads 8"), "{error}");
        Ok(())
    }

    #[test]
    fn a_distilled_model_gives_each_token_the_encoder_output() -> Result<(), EmbeddingError> {
        let model = tiny_model("distill", 8, 8)?;
        let reports = std::sync::Mutex::new(Vec::new());
        let outputs = TokenOutputs::distill(&model, |done, total| reports.lock().unwrap().push((done, total)))?;
        assert_eq!(outputs.distilled(), 2, "[UNK] and `word`");
        assert_eq!(reports.into_inner().unwrap(), [(0, 2), (2, 2)]);
        let dir = std::env::temp_dir().join(format!("tinytools-distilled-{}", std::process::id()));
        let options = StaticOptions { pca_dims: None, sif_coefficient: None, precision: Precision::F32 };
        let saved = outputs.save(&dir, &options)?;
        assert_eq!(saved.width, 4);
        let fast = StaticEmbedder::load(&dir)?;
        let mut expected = model.mean_token_outputs(&[vec![3, 4, 2]])?.remove(0);
        let norm = expected.iter().map(|x| x * x).sum::<f32>().sqrt();
        expected.iter_mut().for_each(|x| *x /= norm);
        let got = fast.embed_one("word word");
        assert!(got.iter().zip(&expected).all(|(a, b)| (a - b).abs() < 1e-6), "{got:?} vs {expected:?}");
        assert!(fast.source().contains("no PCA, no weights"), "{}", fast.source());
        let too_many = StaticOptions { pca_dims: Some(5), ..options };
        let error = outputs.save(&dir, &too_many).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("PCA to 5 dimensions: 1 to 4"), "{error}");
        let pca = outputs.save(&dir, &StaticOptions { pca_dims: Some(1), ..StaticOptions::default() })?;
        assert_eq!((pca.width, StaticEmbedder::load(&dir)?.width()), (1, 1));
        std::fs::remove_dir_all(&dir).ok();
        Ok(())
    }
}
