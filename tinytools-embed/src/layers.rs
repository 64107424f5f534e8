//! The layers of [`BertEmbedder`](super::BertEmbedder)'s encoder (dense products, layer
//! norms, one encoder layer) and reading them, shape-checked, from a safetensors file.

use std::ops::Range;
use std::path::Path;

use ndarray::{Array1, Array2, Axis, Slice};
use safetensors::{Dtype, SafeTensors};

use tinytools::rank::embedding::EmbeddingError;

use super::attention::attend;
use super::elementwise;
use super::matmul::{Finish, Packed, x_wt};

#[derive(Debug)]
pub(super) struct Linear {
    /// `[out, in]` as PyTorch stores it, packed once for the products (`matmul`).
    weight: Packed,
    bias: Array1<f32>,
}

impl Linear {
    /// `x · wᵀ + b`, then `activation` on each value.
    fn forward(&self, x: &Array2<f32>, activation: Option<fn(&mut [f32])>, threads: usize) -> Array2<f32> {
        let bias = self.bias.as_slice().unwrap_or(&[]);
        x_wt(&x.view(), &self.weight, Finish { bias, activation }, threads)
    }
}

#[derive(Debug)]
pub(super) struct LayerNorm {
    weight: Array1<f32>,
    bias: Array1<f32>,
    eps: f32,
}

impl LayerNorm {
    pub(super) fn apply(&self, x: &mut Array2<f32>) {
        for mut row in x.rows_mut() {
            let n = row.len() as f32;
            let mean = row.sum() / n;
            row -= mean;
            let variance = row.dot(&row) / n;
            row /= (variance + self.eps).sqrt();
            row *= &self.weight;
            row += &self.bias;
        }
    }
}

#[derive(Debug)]
pub(super) struct Layer {
    /// The query, key and value projections stacked (`[3 · hidden, hidden]`): one product, one
    /// share-out over the cores and one layout of the input instead of three.
    query_key_value: Linear,
    attention_output: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

impl Layer {
    /// Encoder layer `prefix` (`encoder.layer.{i}`) of a BERT `hidden` wide with `inner`
    /// numbers in its feed-forward part.
    pub(super) fn load(
        weights: &Weights<'_>,
        prefix: &str,
        hidden: usize,
        inner: usize,
        eps: f32,
    ) -> Result<Self, EmbeddingError> {
        let p = prefix;
        Ok(Layer {
            query_key_value: weights.stacked_linear(
                &["query", "key", "value"].map(|part| format!("{p}.attention.self.{part}")),
                hidden,
                hidden,
            )?,
            attention_output: weights.linear(&format!("{p}.attention.output.dense"), hidden, hidden)?,
            attention_norm: weights.layer_norm(&format!("{p}.attention.output.LayerNorm"), hidden, eps)?,
            intermediate: weights.linear(&format!("{p}.intermediate.dense"), hidden, inner)?,
            output: weights.linear(&format!("{p}.output.dense"), inner, hidden)?,
            output_norm: weights.layer_norm(&format!("{p}.output.LayerNorm"), hidden, eps)?,
        })
    }

    /// One encoder layer over stacked texts; `segments` are each text's rows.
    pub(super) fn forward(
        &self,
        x: Array2<f32>,
        segments: &[Range<usize>],
        heads: usize,
        threads: usize,
    ) -> Array2<f32> {
        let qkv = self.query_key_value.forward(&x, None, threads);
        let hidden = x.ncols();
        let part = |i: usize| qkv.slice_axis(Axis(1), Slice::from(i * hidden..(i + 1) * hidden));
        let (q, k, v) = (part(0), part(1), part(2));
        let context = attend(&q, &k, &v, segments, heads, threads);
        let mut attended = self.attention_output.forward(&context, None, threads);
        attended += &x;
        self.attention_norm.apply(&mut attended);

        let inner = self.intermediate.forward(&attended, Some(elementwise::gelu), threads);
        let mut out = self.output.forward(&inner, None, threads);
        out += &attended;
        self.output_norm.apply(&mut out);
        out
    }
}

/// Typed, shape-checked access to the tensors of one safetensors file.
pub(super) struct Weights<'a> {
    pub(super) tensors: &'a SafeTensors<'a>,
    pub(super) path: &'a Path,
}

impl Weights<'_> {
    /// An f32 tensor's numbers and shape; names are tried with and without the `bert.` prefix.
    fn tensor(&self, name: &str) -> Result<(Vec<f32>, Vec<usize>), EmbeddingError> {
        let view = self
            .tensors
            .tensor(name)
            .or_else(|_| self.tensors.tensor(&format!("bert.{name}")))
            .map_err(|_| EmbeddingError::format(self.path, format!("no tensor `{name}`")))?;
        if view.dtype() != Dtype::F32 {
            return Err(EmbeddingError::format(self.path, format!("`{name}` is {:?}; only f32 loads", view.dtype())));
        }
        let numbers = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Ok((numbers, view.shape().to_vec()))
    }

    pub(super) fn matrix(&self, name: &str, rows: Option<usize>, cols: usize) -> Result<Array2<f32>, EmbeddingError> {
        let (numbers, shape) = self.tensor(name)?;
        match shape[..] {
            [r, c] if c == cols && rows.is_none_or(|rows| rows == r) => Array2::from_shape_vec((r, c), numbers)
                .map_err(|e| EmbeddingError::format(self.path, format!("`{name}`: {e}"))),
            _ => Err(EmbeddingError::format(
                self.path,
                format!("`{name}` has shape {shape:?}, expected [{rows:?}, {cols}]"),
            )),
        }
    }

    fn vector(&self, name: &str, len: usize) -> Result<Array1<f32>, EmbeddingError> {
        let (numbers, shape) = self.tensor(name)?;
        if shape != [len] {
            return Err(EmbeddingError::format(self.path, format!("`{name}` has shape {shape:?}, expected [{len}]")));
        }
        Ok(Array1::from_vec(numbers))
    }

    fn linear(&self, prefix: &str, inputs: usize, outputs: usize) -> Result<Linear, EmbeddingError> {
        self.stacked_linear(&[prefix.to_owned()], inputs, outputs)
    }

    /// Several linear layers over the same input as one: their weights' rows and their biases
    /// one after another.
    fn stacked_linear(&self, prefixes: &[String], inputs: usize, outputs: usize) -> Result<Linear, EmbeddingError> {
        let mut weight = Array2::<f32>::zeros((0, inputs));
        let mut bias = Vec::with_capacity(prefixes.len() * outputs);
        for prefix in prefixes {
            let part = self.matrix(&format!("{prefix}.weight"), Some(outputs), inputs)?;
            weight.append(Axis(0), part.view()).map_err(|e| EmbeddingError::format(self.path, e.to_string()))?;
            bias.extend(self.vector(&format!("{prefix}.bias"), outputs)?);
        }
        Ok(Linear { weight: Packed::new(&weight.view()), bias: Array1::from_vec(bias) })
    }

    pub(super) fn layer_norm(&self, prefix: &str, len: usize, eps: f32) -> Result<LayerNorm, EmbeddingError> {
        Ok(LayerNorm {
            weight: self.vector(&format!("{prefix}.weight"), len)?,
            bias: self.vector(&format!("{prefix}.bias"), len)?,
            eps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_norm_centres_and_scales_each_row() {
        let norm = LayerNorm { weight: Array1::from_elem(4, 2.0), bias: Array1::from_elem(4, 1.0), eps: 0.0 };
        let mut x = Array2::from_shape_vec((1, 4), vec![1.0, 2.0, 3.0, 4.0]).unwrap_or_default();
        norm.apply(&mut x);
        let row = x.row(0);
        assert!((row.sum() / 4.0 - 1.0).abs() < 1e-6, "mean is the bias");
        assert!((row[3] - (1.0 + 2.0 * 1.5 / 1.25_f32.sqrt())).abs() < 1e-5);
    }
}
