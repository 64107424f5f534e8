//! [`CandleBert`]: candle-transformers' BERT as a [`TextEmbedder`], for measuring against
//! [`BertEmbedder`](super::BertEmbedder) only (feature `encoder-compare`; `bench`'s
//! `encoder_compare` runs both).

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::wordpiece::WordPiece;
use super::{EmbeddingError, TextEmbedder, read_json};

/// Word pieces per text, `[CLS]` and `[SEP]` included (all-MiniLM-L6-v2's `max_seq_length`).
const MAX_TOKENS: usize = 256;

/// Texts per forward pass, padded to the longest of them; candle spreads each matrix product
/// over the cores itself.
const BATCH: usize = 16;

/// A sentence-transformers BERT model on candle's CPU backend: our WordPiece, candle's
/// encoder, mean pooling over the unpadded tokens, unit length.
pub struct CandleBert {
    name: String,
    wordpiece: WordPiece,
    model: BertModel,
}

impl std::fmt::Debug for CandleBert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CandleBert").field("name", &self.name).finish_non_exhaustive()
    }
}

impl CandleBert {
    /// Loads the directory [`BertEmbedder::load`](super::BertEmbedder::load) reads.
    ///
    /// # Errors
    /// [`EmbeddingError`] naming the file that is missing or that candle could not load.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, EmbeddingError> {
        let dir = dir.as_ref();
        let config: Config = read_json(&dir.join("config.json"))?;
        let wordpiece = WordPiece::from_tokenizer_json(&dir.join("tokenizer.json"))?;
        let weights_path = dir.join("model.safetensors");
        let bytes =
            std::fs::read(&weights_path).map_err(|source| EmbeddingError::Io { path: weights_path.clone(), source })?;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu)
            .map_err(|e| EmbeddingError::format(&weights_path, format!("candle cannot read it: {e}")))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| EmbeddingError::format(&weights_path, format!("candle cannot build BERT from it: {e}")))?;
        let name = dir.file_name().map_or_else(|| "bert".to_owned(), |n| n.to_string_lossy().into_owned());
        Ok(Self { name: format!("{name}+candle"), wordpiece, model })
    }

    fn embed_batch(&self, texts: &[&str]) -> candle_core::Result<Vec<Vec<f32>>> {
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|text| {
                let mut ids = vec![self.wordpiece.cls];
                ids.extend(self.wordpiece.encode(text, MAX_TOKENS - 2));
                ids.push(self.wordpiece.sep);
                ids
            })
            .collect();
        let longest = ids.iter().map(Vec::len).max().unwrap_or(0);
        let mut flat = Vec::with_capacity(ids.len() * longest);
        let mut mask = Vec::with_capacity(ids.len() * longest);
        for text in &ids {
            flat.extend(text.iter().copied().chain(std::iter::repeat_n(0, longest - text.len())));
            mask.extend((0..longest).map(|i| u32::from(i < text.len())));
        }
        let shape = (ids.len(), longest);
        let input = Tensor::from_vec(flat, shape, &Device::Cpu)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
        let output = self.model.forward(&input, &input.zeros_like()?, Some(&mask))?;
        let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = output.broadcast_mul(&weights)?.sum(1)?;
        let pooled = summed.broadcast_div(&weights.sum(1)?)?;
        let normalised = pooled.broadcast_div(&pooled.sqr()?.sum_keepdim(1)?.sqrt()?)?;
        normalised.to_vec2()
    }
}

impl TextEmbedder for CandleBert {
    fn name(&self) -> &str {
        &self.name
    }

    /// Embeds texts of similar length together (by bytes), so batches carry little padding.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut vectors = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            let embedded = self.embed_batch(&batch_texts).map_err(|e| EmbeddingError::model(format!("candle: {e}")))?;
            for (&i, vector) in batch.iter().zip(embedded) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }
}
