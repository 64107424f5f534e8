//! The encoder's dense products, `x · wᵀ` with `w` as PyTorch stores it (`[out, in]`),
//! packed once at load.
//!
//! A query is a few dozen rows (word pieces) against weights of hundreds of rows. A general
//! GEMM (`matrixmultiply`, behind ndarray's `dot`) packs both operands into panels on every
//! call; for so few rows, packing the weight cost about as much as the product (31 % of a BFCL
//! query's time against 42 % in its kernel, `perf`, 2026-12-06). So each weight is packed once,
//! at load ([`Packed`]): strips of [`STRIP`] output columns, each stored two input rows at a
//! time, so the kernel reads a strip front to back. The kernel broadcasts each input value of
//! a pass of rows and multiplies it into the strip, on the widest SIMD the CPU has (pulp picks
//! AVX-512, AVX2 + FMA or plain code at run time, safely). A pass is as many rows as the
//! registers hold sums for (20 on AVX-512), so a query's rows mostly pass each strip once and
//! the weights stream from memory while the sums are computed, not before; the inputs of a
//! pass are interleaved (`[k][r]`) so its values for one step sit side by side. Inputs are
//! walked in chunks of [`ROW_CHUNK`] rows that stay in the core's L2 while every strip passes,
//! which serves a catalogue's tall batches as well as a query.
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

/// Output columns per packed strip: one AVX-512 register, two AVX2 ones.
const STRIP: usize = 16;

/// Accumulator registers a pass may use: a pass is `ACCUMULATORS / vectors per strip` input
/// rows at most. On AVX-512 (32 registers, one vector per strip) that is 20 rows, so most of
/// a typical query's rows go through each strip in one pass and the weights stream in while
/// 40 products a word are computed. (At 24 the compiler kept a copy of every sum on the stack,
/// 24 stores a step; at 20 the loop is one load, two widening steps and 40 FMAs.) The other
/// levels keep to [`NARROW_ACCUMULATORS`].
const ACCUMULATORS: usize = 20;
/// The same for levels with 16 registers or fewer (AVX2: 5 rows of two vectors, room left
/// for the strip's four widened vectors and a broadcast).
const NARROW_ACCUMULATORS: usize = 10;

/// Input rows per chunk: 192 rows of 384 floats are 288 KiB, well inside a core's L2.
const ROW_CHUNK: usize = 192;

/// A weight packed for [`x_wt`]: `[out, in]` regrouped into strips of [`STRIP`] output
/// columns, the last strip padded with zeros. A strip is stored two input rows at a time:
/// word `i` of pair `p` holds column `i` at input row `2p` (low half) and `2p + 1` (high
/// half) as bfloat16, so each vector of words widens into two consecutive steps of the sum.
#[derive(Debug)]
pub(super) struct Packed {
    data: Vec<u32>,
    inner: usize,
    cols: usize,
}

impl Packed {
    /// Packs `w`, `[out, in]`.
    pub(super) fn new(w: &ArrayView2<'_, f32>) -> Self {
        let (cols, inner) = w.dim();
        let (strips, pairs) = (cols.div_ceil(STRIP), inner.div_ceil(2));
        let mut data = vec![0u32; strips * pairs * STRIP];
        for ((j, k), &value) in w.indexed_iter() {
            let (strip, column) = (j / STRIP, j % STRIP);
            let bits = u32::from(half::bf16::from_f32(value).to_bits());
            let word = &mut data[(strip * pairs + k / 2) * STRIP + column];
            *word |= if k % 2 == 0 { bits } else { bits << 16 };
        }
        Self { data, inner, cols }
    }

    fn pairs(&self) -> usize {
        self.inner.div_ceil(2)
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
    /// Finishes `part`: each row's output columns from column `start` on.
    fn apply(&self, part: &mut [&mut [f32]], start: usize) {
        for row in part.iter_mut() {
            let bias = self.bias.get(start..start + row.len()).unwrap_or(&[]);
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

/// [`Product`] over all of `w`'s strips, shared out over up to `threads` parts, each writing
/// its own columns of every output row in place.
fn product_on(threads: usize, x: &[f32], w: &Packed, finish: Finish<'_>, out: &mut [f32]) {
    Arch::new().dispatch(Shared { threads, x, w, finish, out });
}

/// [`product_on`] on one SIMD level: the rows are laid out once for it, and every part runs
/// on the same level, so each pass has a size the level's kernels take.
struct Shared<'a> {
    threads: usize,
    x: &'a [f32],
    w: &'a Packed,
    finish: Finish<'a>,
    out: &'a mut [f32],
}

impl WithSimd for Shared<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self { threads, x, w, finish, out } = self;
        let strips = w.cols.div_ceil(STRIP);
        let parts = threads.clamp(1, strips.max(1));
        let rows = &Rows::new(x, w.inner, rows_per_pass::<S>());
        let bounds: Vec<Range<usize>> = (0..parts).map(|p| p * strips / parts..(p + 1) * strips / parts).collect();
        let columns = |r: &Range<usize>| (r.end * STRIP).min(w.cols) - r.start * STRIP;
        let mut segments: Vec<Vec<&mut [f32]>> = bounds.iter().map(|_| Vec::with_capacity(x.len() / w.inner)).collect();
        for row in out.chunks_exact_mut(w.cols) {
            let mut rest = row;
            for (range, part) in bounds.iter().zip(segments.iter_mut()) {
                let (mine, more) = std::mem::take(&mut rest).split_at_mut(columns(range));
                part.push(mine);
                rest = more;
            }
        }
        let run = |range: &Range<usize>, out: &mut Vec<&mut [f32]>| {
            simd.vectorize(Product { rows, w, strips: range.clone(), out });
            finish.apply(out, range.start * STRIP);
        };
        if parts == 1 {
            segments.iter_mut().zip(&bounds).for_each(|(out, range)| run(range, out));
            return;
        }
        rayon::scope(|scope| {
            for (range, out) in bounds.iter().zip(segments.iter_mut()) {
                scope.spawn(move |_| run(range, out));
            }
        });
    }
}

/// The input rows as the kernel reads them: in chunks of at most [`ROW_CHUNK`] rows, each
/// chunk in passes of at most `most` rows (see [`passes`]), each pass stored input column by
/// input column (`[k][r]`, `k` padded to an even count with zeros), so a pass's values for one
/// step of the sum sit side by side.
struct Rows {
    /// `in` rounded up to even: the floats of one row in `values`.
    padded: usize,
    /// Each chunk's passes, as row ranges of the whole input.
    chunks: Vec<Vec<Range<usize>>>,
    values: Vec<f32>,
}

impl Rows {
    fn new(x: &[f32], inner: usize, most: usize) -> Self {
        let (count, padded) = (x.len() / inner.max(1), inner.div_ceil(2) * 2);
        let chunks: Vec<Vec<Range<usize>>> = (0..count)
            .step_by(ROW_CHUNK)
            .map(|first| {
                let rows = ROW_CHUNK.min(count - first);
                passes(rows, most).into_iter().map(|p| first + p.start..first + p.end).collect()
            })
            .collect();
        let mut values = vec![0.0; count * padded];
        for pass in chunks.iter().flatten() {
            let size = pass.len();
            let laid = &mut values[pass.start * padded..pass.end * padded];
            for (r, row) in x.chunks_exact(inner.max(1)).skip(pass.start).take(size).enumerate() {
                for (step, &value) in laid.chunks_exact_mut(size).zip(row) {
                    step[r] = value;
                }
            }
        }
        Self { padded, chunks, values }
    }
}

/// The input `rows` (laid out for the level this runs on) times the strips `strips` of `w`,
/// into `out`: one slice per output row, the first strip's first column at its index 0.
struct Product<'a, 'o> {
    rows: &'a Rows,
    w: &'a Packed,
    strips: Range<usize>,
    out: &'a mut [&'o mut [f32]],
}

impl WithSimd for Product<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        let Self { rows, w, strips, out } = self;
        let (cols, pairs, most) = (w.cols, w.pairs(), rows_per_pass::<S>());
        for chunk in &rows.chunks {
            for s in strips.clone() {
                let Some(words) = w.data.get(s * pairs * STRIP..(s + 1) * pairs * STRIP) else { continue };
                let (strip, _) = S::as_simd_u32s(words);
                let width = STRIP.min(cols - s * STRIP);
                for pass in chunk {
                    let xs = &rows.values[pass.start * rows.padded..pass.end * rows.padded];
                    // Each size is a constant once `S` is known, so every call below is its own
                    // unrolled kernel with its sums in registers; `passes` makes no other size.
                    let acc = match pass.len() {
                        n if n == most => kernel(simd, xs, strip, pairs, most),
                        n if n == most / 2 => kernel(simd, xs, strip, pairs, most / 2),
                        n if n == most / 4 => kernel(simd, xs, strip, pairs, most / 4),
                        n if n == most / 8 => kernel(simd, xs, strip, pairs, most / 8),
                        2 => kernel(simd, xs, strip, pairs, 2.min(most)),
                        _ => kernel(simd, xs, strip, pairs, 1),
                    };
                    let sums: &[f32] = bytemuck::cast_slice(&acc);
                    let at = (s - strips.start) * STRIP;
                    for (r, row) in out[pass.clone()].iter_mut().enumerate() {
                        row[at..at + width].copy_from_slice(&sums[r * STRIP..r * STRIP + width]);
                    }
                }
            }
        }
    }
}

/// The accumulator registers a pass may use on `S`.
fn accumulators<S: Simd>() -> usize {
    if S::F32_LANES >= 16 { ACCUMULATORS } else { NARROW_ACCUMULATORS }
}

/// The most rows one pass of the kernel takes on `S`.
fn rows_per_pass<S: Simd>() -> usize {
    (accumulators::<S>() / (STRIP / S::F32_LANES)).max(1)
}

/// `rows` split into passes: as many of `most` rows as fit, then the rest in passes of
/// `most / 2`, `most / 4`, `most / 8`, two and one, largest first, so no row is padded.
fn passes(rows: usize, most: usize) -> Vec<Range<usize>> {
    let mut passes = Vec::new();
    let mut start = 0;
    for size in [most, most / 2, most / 4, most / 8, 2, 1] {
        while size > 0 && rows - start >= size {
            passes.push(start..start + size);
            start += size;
        }
    }
    passes
}

/// `rows` rows of `x` (a pass of [`Rows`]: `[k][r]`) times one packed strip of
/// `pairs` pairs: row `r`'s [`STRIP`] sums are the vectors from `r * STRIP / lanes` on.
///
/// A pass small enough to spare the registers keeps the even and the odd input rows' products
/// in separate sums, added at the end: with one sum a vector, each step waits for two chained
/// FMAs (8 cycles), so a pass of one to ten rows ran at its latency, not at the FMA units'
/// rate; split, each sum takes one FMA a step.
#[inline(always)]
fn kernel<S: Simd>(simd: S, x: &[f32], strip: &[S::u32s], pairs: usize, rows: usize) -> [S::f32s; ACCUMULATORS] {
    let vectors = STRIP / S::F32_LANES;
    let split = 2 * rows * vectors <= accumulators::<S>();
    let zero = simd.splat_f32s(0.0);
    let (shift, high) = (simd.splat_u32s(16), simd.splat_u32s(0xFFFF_0000));
    // Room for the most any level uses; the compiler keeps the used ones in registers.
    let (mut acc, mut odd_acc) = ([zero; ACCUMULATORS], [zero; ACCUMULATORS]);
    for (words, x) in strip.chunks_exact(vectors).take(pairs).zip(x.chunks_exact(2 * rows)) {
        // A bfloat16 is an f32's top half: input row 2p's halves shift up, 2p + 1's are masked.
        let (mut even, mut odd) = ([zero; STRIP], [zero; STRIP]);
        for (v, &pair) in words.iter().enumerate() {
            even[v] = simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(pair, shift));
            odd[v] = simd.transmute_f32s_u32s(simd.and_u32s(pair, high));
        }
        let (now, next) = x.split_at(rows);
        for r in 0..rows {
            let (a, b) = (simd.splat_f32s(now[r]), simd.splat_f32s(next[r]));
            for v in 0..vectors {
                let i = r * vectors + v;
                if split {
                    acc[i] = simd.mul_add_f32s(a, even[v], acc[i]);
                    odd_acc[i] = simd.mul_add_f32s(b, odd[v], odd_acc[i]);
                } else {
                    acc[i] = simd.mul_add_f32s(b, odd[v], simd.mul_add_f32s(a, even[v], acc[i]));
                }
            }
        }
    }
    if split {
        for (sum, odd) in acc.iter_mut().zip(odd_acc).take(rows * vectors) {
            *sum = simd.add_f32s(*sum, odd);
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
        // the second; a truncation would keep the first. Input row 0 sits in a word's low
        // half, row 1 in its high half.
        let value = 1.0 + 3.0 / 512.0;
        let w = [value, 0.0, 0.0, -value];
        let packed = Packed::new(&ArrayView2::from_shape((2, 2), &w).expect("shape"));
        let x = ArrayView2::from_shape((2, 2), &[1.0, 0.0, 0.0, 1.0]).expect("shape");
        let out = x_wt(&x, &packed, NONE, 1);
        assert_eq!((out[[0, 0]], out[[1, 1]]), (1.0 + 1.0 / 128.0, -(1.0 + 1.0 / 128.0)));
    }

    #[test]
    fn passes_cover_every_row_once_largest_first() {
        for most in [1, 2, 5, 24] {
            for rows in 0..60 {
                let passes = passes(rows, most);
                assert_eq!(passes.iter().map(Range::len).sum::<usize>(), rows, "{rows} rows, {most}");
                assert!(passes.windows(2).all(|p| p[0].end == p[1].start && p[0].len() >= p[1].len()));
                let sizes = [most, most / 2, most / 4, most / 8, 2, 1];
                assert!(passes.iter().all(|p| sizes.contains(&p.len())), "{rows} rows, {most}: {passes:?}");
            }
        }
        assert_eq!(passes(26, 24), [0..24, 24..26]);
        assert_eq!(passes(5, 1), [0..1, 1..2, 2..3, 3..4, 4..5]);
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
        // Rows around the passes (24, 12, 6, 5, 3, 2) and past a chunk (192); columns around
        // a strip (16); inner sizes odd and even, below and past a register.
        for rows in [1, 2, 3, 5, 6, 7, 13, 25, 47, 193] {
            for cols in [1, 15, 16, 17, 33, 75] {
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
        let rows = Rows::new(&x, inner, rows_per_pass::<S>());
        let mut segments: Vec<&mut [f32]> = out.chunks_exact_mut(cols).collect();
        simd.vectorize(Product { rows: &rows, w: &packed, strips: 0..cols.div_ceil(STRIP), out: &mut segments });
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
        for (rows, cols, inner) in [(1, 33, 40), (7, 64, 384), (13, 75, 16), (29, 17, 7)] {
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
