//! BERT's self-attention: each text's rows attend to each other, head by head, and to no
//! other text stacked in the same batch.

use std::ops::Range;

use ndarray::{Array2, ArrayView2, Axis, Slice};

use super::elementwise;

/// Scaled dot-product attention of stacked texts, each text attending only to its own rows
/// (`segments`), head by head: the context, `[rows, hidden]`. With `threads` above 1 the heads
/// are shared out over rayon's pool (a long query's attention is a quarter of its time on one
/// thread); each head writes only its own columns.
pub(super) fn attend(
    q: &ArrayView2<'_, f32>,
    k: &ArrayView2<'_, f32>,
    v: &ArrayView2<'_, f32>,
    segments: &[Range<usize>],
    heads: usize,
    threads: usize,
) -> Array2<f32> {
    let width = q.ncols() / heads.max(1);
    let one_head = |head: usize| {
        let columns = Slice::from(head * width..(head + 1) * width);
        let (q, k, v) =
            (q.slice_axis(Axis(1), columns), k.slice_axis(Axis(1), columns), v.slice_axis(Axis(1), columns));
        let mut context = Array2::<f32>::zeros((q.nrows(), width));
        for segment in segments {
            // (`ndarray::s!` expands to an `allow(unsafe_code)` this crate forbids.)
            let rows = Slice::from(segment.clone());
            let (q, k, v) = (q.slice_axis(Axis(0), rows), k.slice_axis(Axis(0), rows), v.slice_axis(Axis(0), rows));
            let mut scores = q.dot(&k.t());
            softmax_rows(&mut scores, 1.0 / (width as f32).sqrt());
            context.slice_axis_mut(Axis(0), rows).assign(&scores.dot(&v));
        }
        context
    };
    let per_head: Vec<Array2<f32>> = if threads > 1 {
        use rayon::prelude::*;
        (0..heads).into_par_iter().map(one_head).collect()
    } else {
        (0..heads).map(one_head).collect()
    };
    let mut context = Array2::<f32>::zeros(q.raw_dim());
    for (head, part) in per_head.iter().enumerate() {
        context.slice_axis_mut(Axis(1), Slice::from(head * width..(head + 1) * width)).assign(part);
    }
    context
}

/// Each row of `scores`, scaled by `scale`, through softmax.
fn softmax_rows(scores: &mut Array2<f32>, scale: f32) {
    for mut row in scores.rows_mut() {
        let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v * scale));
        row.mapv_inplace(|v| v * scale - max);
        match row.as_slice_mut() {
            Some(values) => elementwise::exp(values),
            None => row.mapv_inplace(f32::exp),
        }
        let sum = row.sum();
        row /= sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(rows: usize, cols: usize, seed: u32) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            let n = (i as u32 * 31 + j as u32 * 7 + seed * 101).wrapping_mul(2_654_435_761) >> 20;
            (n % 200) as f32 / 100.0 - 1.0
        })
    }

    #[test]
    fn heads_on_several_threads_give_the_same_context() {
        let (q, k, v) = (matrix(7, 8, 1), matrix(7, 8, 2), matrix(7, 8, 3));
        let segments = [0..3, 3..7];
        let one = attend(&q.view(), &k.view(), &v.view(), &segments, 2, 1);
        let two = attend(&q.view(), &k.view(), &v.view(), &segments, 2, 2);
        assert_eq!(one, two);
    }

    #[test]
    fn a_stacked_text_attends_only_to_its_own_rows() {
        let (q, k, v) = (matrix(7, 8, 4), matrix(7, 8, 5), matrix(7, 8, 6));
        let stacked = attend(&q.view(), &k.view(), &v.view(), &[0..3, 3..7], 2, 1);
        let rows = Slice::from(3..7);
        let (q2, k2, v2) = (q.slice_axis(Axis(0), rows), k.slice_axis(Axis(0), rows), v.slice_axis(Axis(0), rows));
        let alone = attend(&q2, &k2, &v2, std::slice::from_ref(&(0..4)), 2, 1);
        assert_eq!(stacked.slice_axis(Axis(0), rows), alone);
        // Every context row is a weighted mean of its text's value rows, so within their range.
        for (row, segment) in [(0, 0..3), (5, 3..7)] {
            for col in 0..8 {
                let values = v.slice_axis(Axis(0), Slice::from(segment.clone())).column(col).to_vec();
                let (lo, hi) = values.iter().fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                let got = stacked[[row, col]];
                assert!(got >= lo - 1e-6 && got <= hi + 1e-6, "row {row} col {col}: {got} outside {lo}..{hi}");
            }
        }
    }
}
