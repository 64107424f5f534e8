//! The encoder's dense products, `x · wᵀ` with `w` as PyTorch stores it (`[out, in]`),
//! packed once at load.
//!
//! A query is a few dozen rows (word pieces) against weights of hundreds of rows. A general
//! GEMM (`matrixmultiply`, behind ndarray's `dot`) packs both operands into panels on every
//! call; for so few rows, packing the weight cost about as much as the product (31 % of a BFCL
//! query's time against 42 % in its kernel, `perf`, 2026-12-06). So each weight is packed once,
//! at load ([`Packed`]): strips of [`STRIP`] output columns, each stored input-row by input-row,
//! so the kernel reads a strip front to back. The kernel broadcasts each input value of a
//! block of rows and multiplies it into the strip, on the widest SIMD the CPU has (pulp picks
//! AVX-512, AVX2 + FMA or plain code at run time, safely). Inputs are walked in chunks of
//! [`ROW_CHUNK`] rows that stay in the core's L2 while every strip passes, which serves a
//! catalogue's tall batches as well as a query.
//!
//! The weights are kept as bfloat16 (f32's top half, rounded to nearest): a query streams all
//! of them, so half the bytes made the encoder 1.0–1.2× as fast on two threads and 1.2–1.45×
//! on one, with the same recall on both dev sets to three digits and the published
//! sentence-transformers similarities still within 5·10⁻⁴ (2026-12-06). Widening a word back
//! to two f32 values is a shift and a mask.
//! Inputs, sums and everything after the product stay f32. The measurements that chose it are
//! in `docs/retrieval.md`.

use std::ops::Range;

use ndarray::{Array2, ArrayView2};
use pulp::{Arch, Simd, WithSimd, bytemuck};

/// Output columns per packed strip: two AVX-512 registers, four AVX2 ones.
const STRIP: usize = 32;

/// Accumulator registers a block uses (with the strip's loads and one broadcast, this fits
/// AVX2's 16 registers): a block is `ACCUMULATORS / vectors per strip` input rows. AVX-512's
/// 32 registers could hold more, but 24 and 28 (blocks of 12 and 14 rows) measured 15–45 %
/// slower a query and 16 or 20 no faster (`encoder_speed`, 2026-12-06).
const ACCUMULATORS: usize = 12;
const _: () = assert!(ACCUMULATORS <= STRIP);

/// Input rows per chunk: 192 rows of 384 floats are 288 KiB, well inside a core's L2.
const ROW_CHUNK: usize = 192;

/// A weight packed for [`x_wt`]: `[out, in]` regrouped into strips of [`STRIP`] output
/// columns, each strip `in` rows of [`PAIRS`] words, the last strip padded with zeros. Word
/// `i` of a row holds the strip's columns `i` (low half) and `i + PAIRS` (high half) as
/// bfloat16, so each vector of words widens into two of the strip's f32 vectors.
#[derive(Debug)]
pub(super) struct Packed {
    data: Vec<u32>,
    inner: usize,
    cols: usize,
}

/// Words per packed row of a strip: two bfloat16 columns each.
const PAIRS: usize = STRIP / 2;

impl Packed {
    /// Packs `w`, `[out, in]`.
    pub(super) fn new(w: &ArrayView2<'_, f32>) -> Self {
        let (cols, inner) = w.dim();
        let strips = cols.div_ceil(STRIP);
        let mut data = vec![0u32; strips * inner * PAIRS];
        for ((j, k), &value) in w.indexed_iter() {
            let (strip, column) = (j / STRIP, j % STRIP);
            let bits = u32::from(half::bf16::from_f32(value).to_bits());
            let word = &mut data[(strip * inner + k) * PAIRS + column % PAIRS];
            *word |= if column < PAIRS { bits } else { bits << 16 };
        }
        Self { data, inner, cols }
    }
}

/// What follows a product, element by element: the bias of each output column, then an
/// activation (BERT's GELU after the intermediate layer). Done by each thread on its own
/// columns while they are in cache.
#[derive(Clone, Copy)]
pub(super) struct Finish<'a> {
    /// One per output column.
    pub(super) bias: &'a [f32],
    /// Applied to every finished value, a row at a time.
    pub(super) activation: Option<fn(&mut [f32])>,
}

impl Finish<'_> {
    /// Finishes `part`, rows of `width` output columns starting at column `start`.
    fn apply(&self, part: &mut [f32], start: usize, width: usize) {
        let bias = self.bias.get(start..start + width).unwrap_or(&[]);
        for row in part.chunks_exact_mut(width.max(1)) {
            for (value, b) in row.iter_mut().zip(bias) {
                *value += b;
            }
            if let Some(activation) = self.activation {
                activation(row);
            }
        }
    }
}

/// `x · wᵀ`, finished by `finish`, for `x` `[rows, in]`: the result is `[rows, out]`. `x`
/// must have `w`'s `in` columns. With `threads` above 1 the strips are shared out over that
/// many parts on rayon's pool, each writing and finishing its own columns: what a single query
/// does to use the machine's cores; a catalogue's batches already run one per core and pass 1.
pub(super) fn x_wt(x: &ArrayView2<'_, f32>, w: &Packed, finish: Finish<'_>, threads: usize) -> Array2<f32> {
    let rows = x.nrows();
    let mut out = vec![0.0; rows * w.cols];
    if w.inner > 0 && x.ncols() == w.inner {
        let standard = x.as_standard_layout();
        if let Some(xs) = standard.as_slice() {
            product_on(threads, xs, w, finish, &mut out);
        }
    }
    Array2::from_shape_vec((rows, w.cols), out).unwrap_or_else(|_| Array2::zeros((rows, w.cols)))
}

/// [`Product`] over all of `w`'s strips, shared out over up to `threads` parts.
fn product_on(threads: usize, x: &[f32], w: &Packed, finish: Finish<'_>, out: &mut [f32]) {
    let strips = w.cols.div_ceil(STRIP);
    let parts = threads.clamp(1, strips.max(1));
    if parts == 1 {
        Arch::new().dispatch(Product { x, w, strips: 0..strips, out, stride: w.cols });
        finish.apply(out, 0, w.cols);
        return;
    }
    let rows = x.len() / w.inner;
    let bounds: Vec<Range<usize>> = (0..parts).map(|p| p * strips / parts..(p + 1) * strips / parts).collect();
    let columns = |r: &Range<usize>| (r.end * STRIP).min(w.cols) - r.start * STRIP;
    let mut locals: Vec<Vec<f32>> = bounds.iter().map(|r| vec![0.0; rows * columns(r)]).collect();
    rayon::scope(|scope| {
        for (range, local) in bounds.iter().zip(locals.iter_mut()) {
            let stride = columns(range);
            scope.spawn(move |_| {
                Arch::new().dispatch(Product { x, w, strips: range.clone(), out: local, stride });
                finish.apply(local, range.start * STRIP, stride);
            });
        }
    });
    for (range, local) in bounds.iter().zip(&locals) {
        let (start, width) = (range.start * STRIP, columns(range));
        for (row, part) in out.chunks_exact_mut(w.cols).zip(local.chunks_exact(width.max(1))) {
            row[start..start + width].copy_from_slice(part);
        }
    }
}

/// `x` times the strips `strips` of `w`, into `out`: `x`'s rows of `stride` floats, the
/// first strip's first column at column 0.
struct Product<'a> {
    x: &'a [f32],
    w: &'a Packed,
    strips: Range<usize>,
    out: &'a mut [f32],
    stride: usize,
}

impl WithSimd for Product<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        let Self { x, w, strips, out, stride } = self;
        let (inner, cols) = (w.inner, w.cols);
        let block = (ACCUMULATORS / (STRIP / S::F32_LANES)).max(1);
        let first_strip = strips.start;
        for (c, chunk) in x.chunks(ROW_CHUNK * inner).enumerate() {
            // A short last block is padded with zero rows, once per chunk for every strip, so
            // the kernel never checks how many rows it has.
            let (whole, rest) = chunk.split_at(chunk.len() / (block * inner) * block * inner);
            let padded = (!rest.is_empty()).then(|| {
                let mut padded = vec![0.0; block * inner];
                padded[..rest.len()].copy_from_slice(rest);
                padded
            });
            for s in strips.clone() {
                let Some(strip) = w.data.get(s * inner * PAIRS..(s + 1) * inner * PAIRS) else { continue };
                let (strip, _) = S::as_simd_u32s(strip);
                let width = STRIP.min(cols - s * STRIP);
                for (b, rows) in whole.chunks_exact(block * inner).chain(padded.as_deref()).enumerate() {
                    let acc = kernel(simd, rows, strip, inner, block);
                    let sums: &[f32] = bytemuck::cast_slice(&acc);
                    let first = c * ROW_CHUNK + b * block;
                    let present = (chunk.len() / inner - b * block).min(block);
                    for r in 0..present {
                        let at = (first + r) * stride + (s - first_strip) * STRIP;
                        out[at..at + width].copy_from_slice(&sums[r * STRIP..r * STRIP + width]);
                    }
                }
            }
        }
    }
}

/// `block` rows of `x` (`inner` floats each) times one packed strip: the sums of row `r` are
/// vectors `r * STRIP / lanes` onwards, [`STRIP`] floats.
#[inline(always)]
fn kernel<S: Simd>(simd: S, x: &[f32], strip: &[S::u32s], inner: usize, block: usize) -> [S::f32s; STRIP] {
    let vectors = STRIP / S::F32_LANES;
    let words = (vectors / 2).max(1);
    let zero = simd.splat_f32s(0.0);
    let (shift, high) = (simd.splat_u32s(16), simd.splat_u32s(0xFFFF_0000));
    // Room for the widest case, plain code's one row of `STRIP` one-float vectors; the
    // compiler keeps the used ones in registers.
    let mut acc = [zero; STRIP];
    for (k, row) in strip.chunks_exact(words).take(inner).enumerate() {
        // A bfloat16 is an f32's top half: the low halves shift up, the high ones are masked.
        let mut w = [zero; STRIP];
        for (v, &pair) in row.iter().enumerate() {
            w[v] = simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(pair, shift));
            w[words + v] = simd.transmute_f32s_u32s(simd.and_u32s(pair, high));
        }
        for r in 0..block {
            let a = simd.splat_f32s(x[r * inner + k]);
            for (v, &w) in w.iter().take(vectors).enumerate() {
                acc[r * vectors + v] = simd.mul_add_f32s(a, w, acc[r * vectors + v]);
            }
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Finish<'static> = Finish { bias: &[], activation: None };

    #[test]
    fn each_part_adds_its_columns_bias_then_the_activation() {
        let x = Array2::from_shape_vec((3, 4), values(12, 5)).expect("shape");
        let w = Array2::from_shape_vec((70, 4), bf16_exact(values(280, 6))).expect("shape");
        let bias: Vec<f32> = (0..70).map(|j| j as f32).collect();
        let finish = Finish { bias: &bias, activation: Some(|row: &mut [f32]| row.iter_mut().for_each(|v| *v *= 2.0)) };
        let plain = x.dot(&w.t());
        for threads in [1, 2, 3] {
            let ours = x_wt(&x.view(), &Packed::new(&w.view()), finish, threads);
            for ((i, j), got) in ours.indexed_iter() {
                let want = (plain[[i, j]] + j as f32) * 2.0;
                assert!((got - want).abs() <= 1e-3, "({i}, {j}) on {threads}: {got} vs {want}");
            }
        }
    }

    /// `x · wᵀ` in f64, `w` as `[out, in]` rounded to bfloat16 as the packing stores it.
    fn naive(x: &[f32], w: &[f32], inner: usize) -> Vec<f32> {
        let w = bf16_exact(w.to_vec());
        let mut out = Vec::new();
        for xr in x.chunks_exact(inner) {
            for wr in w.chunks_exact(inner) {
                out.push(xr.iter().zip(wr).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum::<f64>() as f32);
            }
        }
        out
    }

    /// `values` rounded to the nearest bfloat16: weights the packing keeps exactly.
    fn bf16_exact(values: Vec<f32>) -> Vec<f32> {
        values.into_iter().map(|v| half::bf16::from_f32(v).to_f32()).collect()
    }

    #[test]
    fn weights_are_rounded_to_the_nearest_bfloat16_not_truncated() {
        // 1 + 3·2⁻⁹ lies between the bfloat16s 1 and 1 + 2⁻⁷ (seven mantissa bits), nearer
        // the second; a truncation would keep the first. Column 20 sits in a word's high half.
        let mut w = vec![0.0; 21];
        let value = 1.0 + 3.0 / 512.0;
        (w[0], w[20]) = (value, -value);
        let packed = Packed::new(&ArrayView2::from_shape((21, 1), &w).expect("shape"));
        let out = x_wt(&ArrayView2::from_shape((1, 1), &[1.0]).expect("shape"), &packed, NONE, 1);
        assert_eq!((out[[0, 0]], out[[0, 20]]), (1.0 + 1.0 / 128.0, -(1.0 + 1.0 / 128.0)));
    }

    /// Deterministic values in [-1, 1] without a random-number crate.
    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n as u32)
            .map(|i| {
                ((i.wrapping_mul(2_654_435_761).wrapping_add(seed.wrapping_mul(40_503)) >> 8) % 2001) as f32 / 1000.0
                    - 1.0
            })
            .collect()
    }

    fn product(rows: usize, cols: usize, inner: usize, threads: usize) -> (Vec<f32>, Vec<f32>) {
        let (x, w) = (values(rows * inner, 1), values(cols * inner, 2));
        let x_view = ArrayView2::from_shape((rows, inner), &x).expect("shape");
        let w_view = ArrayView2::from_shape((cols, inner), &w).expect("shape");
        let ours = x_wt(&x_view, &Packed::new(&w_view), NONE, threads);
        assert_eq!(ours.dim(), (rows, cols));
        (ours.iter().copied().collect(), naive(&x, &w, inner))
    }

    #[test]
    fn matches_the_naive_product_on_every_shape() {
        // Rows around the blocks (3 and 6) and past a chunk (192); columns around a strip
        // (32); inner sizes below and past a register.
        for rows in [1, 2, 3, 5, 6, 7, 13, 193] {
            for cols in [1, 31, 32, 33, 64, 75] {
                for inner in [1, 7, 16, 40, 384] {
                    for threads in [1, 2, 3] {
                        let (ours, want) = product(rows, cols, inner, threads);
                        for (got, want) in ours.iter().zip(&want) {
                            let close = (got - want).abs() <= 1e-4 * (1.0 + want.abs());
                            assert!(close, "{rows}x{cols}x{inner} on {threads}: {got} vs {want}");
                        }
                    }
                }
            }
        }
    }

    /// The product on one SIMD level, whichever the machine would pick.
    fn product_on<S: Simd>(simd: S, rows: usize, cols: usize, inner: usize) -> (Vec<f32>, Vec<f32>) {
        let (x, w) = (values(rows * inner, 1), values(cols * inner, 2));
        let packed = Packed::new(&ArrayView2::from_shape((cols, inner), &w).expect("shape"));
        let mut out = vec![0.0; rows * cols];
        simd.vectorize(Product { x: &x, w: &packed, strips: 0..cols.div_ceil(STRIP), out: &mut out, stride: cols });
        (out, naive(&x, &w, inner))
    }

    #[test]
    fn every_simd_width_gives_the_same_product() {
        // Run-time dispatch picks one level on the machine at hand; the others (plain code,
        // 4, 8 and 16 lanes, AVX2 and AVX-512 where present) must agree as well, since
        // another machine will pick them.
        let check = |level: &str, (ours, want): (Vec<f32>, Vec<f32>)| {
            for (got, want) in ours.iter().zip(&want) {
                assert!((got - want).abs() <= 1e-4 * (1.0 + want.abs()), "{level}: {got} vs {want}");
            }
        };
        for (rows, cols, inner) in [(1, 33, 40), (7, 64, 384), (13, 75, 16)] {
            check("plain", product_on(pulp::Scalar::new(), rows, cols, inner));
            check("4 lanes", product_on(pulp::Scalar128b, rows, cols, inner));
            check("8 lanes", product_on(pulp::Scalar256b, rows, cols, inner));
            check("16 lanes", product_on(pulp::Scalar512b, rows, cols, inner));
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(simd) = pulp::x86::V3::try_new() {
                    check("avx2", product_on(simd, rows, cols, inner));
                }
                if let Some(simd) = pulp::x86::V4::try_new() {
                    check("avx512", product_on(simd, rows, cols, inner));
                }
            }
        }
    }

    #[test]
    fn a_transposed_input_is_read_by_its_values_not_its_memory() {
        let x = Array2::from_shape_vec((8, 5), values(40, 3)).expect("shape");
        let w = Array2::from_shape_vec((4, 8), bf16_exact(values(32, 4))).expect("shape");
        let ours = x_wt(&x.t(), &Packed::new(&w.view()), NONE, 2);
        let theirs = x.t().dot(&w.t());
        for (a, b) in ours.iter().zip(theirs.iter()) {
            assert!((a - b).abs() <= 1e-4, "{a} vs {b}");
        }
    }

    #[test]
    fn empty_or_mismatched_inputs_give_zeros_not_a_panic() {
        let w = Packed::new(&ArrayView2::<f32>::from_shape((3, 0), &[]).expect("shape"));
        assert_eq!(
            x_wt(&ArrayView2::<f32>::from_shape((2, 0), &[]).expect("shape"), &w, NONE, 2),
            Array2::<f32>::zeros((2, 3))
        );
        let w = Packed::new(&ArrayView2::from_shape((2, 2), &[1.0; 4]).expect("shape"));
        assert_eq!(
            x_wt(&ArrayView2::from_shape((1, 3), &[1.0; 3]).expect("shape"), &w, NONE, 2),
            Array2::<f32>::zeros((1, 2))
        );
    }
}
