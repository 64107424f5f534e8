//! How [`EmbeddingRanker`] scores a catalogue for a query: the blend that orders it, and the
//! calibrated confidence that says whether a hit is worth promoting
//! ([`EmbeddingRanker::explain`] shows both).

use pulp::{Arch, Simd, WithSimd};

use super::ranker::EmbeddingRanker;
use super::table::Table;
use crate::rank::DeferredCatalog;

/// How many of BM25's best tools get its blended score (the rest get only their cosine).
const BM25_CANDIDATES: usize = 100;

/// The cosine at which the confidence reaches
/// [`DEFAULT_MIN_CONFIDENCE`](crate::rank::DEFAULT_MIN_CONFIDENCE), pre-promotion's
/// default floor, for all-MiniLM-L6-v2: the cosine that best separates the dev halves' gold
/// tools from the nearest tools of the other set's catalogue (Youden's J, each set weighing
/// the same; `embedding_calibration` prints the distributions, the rule and the floor, and
/// `docs/retrieval.md` why the raw cosine and not its margin over the catalogue's mean).
pub const MINILM_COSINE_FLOOR: f32 = 0.415;

/// [`MINILM_COSINE_FLOOR`]'s counterpart for the static model distilled from all-MiniLM-L6-v2
/// ([`StaticEmbedder`](super::StaticEmbedder); `distill_static`'s default: PCA to 256, Zipf
/// weights, f16), chosen by the same rule on the same dev halves
/// (`embedding_calibration --ranker static`). Its cosines run higher than MiniLM's (any two
/// texts share the common word pieces' direction), so its floor sits higher; it separates the
/// sets less well (`docs/retrieval.md`).
pub const STATIC_MINILM_COSINE_FLOOR: f32 = 0.594;

/// One tool as the embedding ranker scored it for a query.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ScoredTool {
    /// The tool's name.
    pub name: String,
    /// Cosine similarity between the query and the tool's embedded text.
    pub cosine: f32,
    /// BM25's score for the tool relative to its best hit (`0..=1`; 0 when BM25 did not find it).
    pub lexical: f32,
    /// What the ranking orders by: the cosine min-max scaled over the catalogue, plus the
    /// ranker's `bm25_weight` × `lexical`.
    pub score: f32,
    /// The calibrated confidence ([`EmbeddingRanker::cosine_floor`]).
    pub confidence: f32,
}

/// A query's scoring over a catalogue: [`EmbeddingRanker::explain`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Explanation {
    /// The catalogue's background similarity to the query: the mean cosine over its tools.
    pub background: f32,
    /// The best tools, best first.
    pub hits: Vec<ScoredTool>,
}

/// The confidence of a hit of cosine `cosine`: 0 up to a cosine of 0,
/// [`DEFAULT_MIN_CONFIDENCE`] at `floor`, 1 at a cosine of 1, linear in between. So
/// pre-promotion's default floor promotes exactly the hits at or above the calibrated cosine,
/// and a stricter floor asks for a nearer one.
///
/// [`DEFAULT_MIN_CONFIDENCE`]: crate::rank::DEFAULT_MIN_CONFIDENCE
pub(super) fn confidence(cosine: f32, floor: f32) -> f32 {
    let anchor = crate::rank::DEFAULT_MIN_CONFIDENCE;
    let value = if cosine < floor {
        anchor * cosine / floor
    } else if floor < 1.0 {
        anchor + (1.0 - anchor) * (cosine - floor) / (1.0 - floor)
    } else {
        1.0
    };
    if value.is_finite() { value.clamp(0.0, 1.0) } else { 0.0 }
}

impl EmbeddingRanker {
    /// Scores every embedded tool of `catalog` against `query_vector` and keeps the best
    /// `limit`: the ranking [`rank`](crate::rank::ToolRanker::rank) answers with.
    pub(super) fn score(
        &self,
        catalog: &DeferredCatalog,
        query: &str,
        query_vector: &[f32],
        limit: usize,
    ) -> Explanation {
        let lexical = self.lexical(catalog, query, limit);
        let table = self.store.table(catalog, query_vector.len());
        let cosines = cosines(&table, query_vector);
        let present = || cosines.iter().filter_map(|cosine| *cosine);
        let background = present().sum::<f32>() / present().count().max(1) as f32;
        // Both signals on 0..=1 for this query: the cosine min-max scaled over the catalogue
        // (so the blend means the same on a 40-tool catalogue, where cosines bunch together,
        // as on a 3,000-tool one), BM25 relative to its best hit.
        let (low, high) = present().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), c| (l.min(c), h.max(c)));
        let spread = if high - low > f32::EPSILON { high - low } else { 1.0 };
        // By catalogue position: the catalogue is in name order, so ties go to the first name.
        let mut scored: Vec<(f32, usize)> = cosines
            .iter()
            .enumerate()
            .filter_map(|(at, cosine)| {
                let lexical = lexical.get(at).copied().unwrap_or(0.0);
                Some(((cosine.as_ref()? - low) / spread + self.bm25_weight * lexical, at))
            })
            .collect();
        let order = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1));
        // Only the best `limit` are ever read: select them, then sort those.
        if limit > 0 && limit < scored.len() {
            scored.select_nth_unstable_by(limit - 1, order);
            scored.truncate(limit);
        }
        scored.sort_by(order);
        let hits = scored
            .into_iter()
            .take(limit)
            .filter_map(|(score, at)| {
                let cosine = cosines.get(at).copied().flatten()?;
                Some(ScoredTool {
                    name: catalog.name_at(at)?.to_owned(),
                    cosine,
                    lexical: lexical.get(at).copied().unwrap_or(0.0),
                    score,
                    confidence: confidence(cosine, self.cosine_floor),
                })
            })
            .collect();
        Explanation { background, hits }
    }

    /// BM25's best candidates relative to its best hit, by catalogue position (empty when it
    /// is not blended or finds nothing; 0 for a tool it did not find).
    fn lexical(&self, catalog: &DeferredCatalog, query: &str, limit: usize) -> Vec<f32> {
        if self.bm25_weight <= 0.0 {
            return Vec::new();
        }
        let hits = catalog.bm25_at(query, BM25_CANDIDATES.max(limit));
        let best = hits.first().map_or(0.0, |&(_, confidence)| confidence);
        if best <= 0.0 {
            return Vec::new();
        }
        let mut lexical = vec![0.0; catalog.len()];
        for (at, confidence) in hits {
            if let Some(slot) = lexical.get_mut(at) {
                *slot = confidence / best;
            }
        }
        lexical
    }
}

/// Each catalogue tool's cosine to the query, in catalogue order (`None` for a tool without a
/// vector of the query's length, or with a cosine that is not finite). From [`SHARED_FROM`]
/// tools the table is read on every core: it is megabytes, cold after the query's embedding has
/// streamed the model through the caches, and each core brings its own memory bandwidth.
fn cosines(table: &Table, query: &[f32]) -> Vec<Option<f32>> {
    let rows: Vec<Option<&[f32]>> = table.rows().collect();
    let arch = Arch::new();
    let score = |rows: &[Option<&[f32]>]| arch.dispatch(Cosines { rows, query });
    if rows.len() >= SHARED_FROM {
        use rayon::prelude::*;
        rows.par_chunks(SHARED_FROM / 2).flat_map_iter(score).collect()
    } else {
        score(&rows)
    }
}

/// [`cosines`] of some rows, on one SIMD level.
struct Cosines<'a, 'r> {
    rows: &'a [Option<&'r [f32]>],
    query: &'a [f32],
}

impl WithSimd for Cosines<'_, '_> {
    type Output = Vec<Option<f32>>;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        // A plain loop, not a closure: a closure is a function of its own, compiled without the
        // CPU features this one is compiled for unless it is inlined.
        let mut cosines = Vec::with_capacity(self.rows.len());
        for row in self.rows {
            let cosine = match row {
                Some(row) => Some(dot_on(simd, row, self.query)).filter(|c| c.is_finite()),
                None => None,
            };
            cosines.push(cosine);
        }
        cosines
    }
}

/// Catalogues from this many tools are scored on every core.
const SHARED_FROM: usize = 1_000;

/// `Σ a·b` on `S` (in [`cosines`], the widest SIMD the CPU has, picked at run time), in four
/// running sums so consecutive steps do not wait on each other. The plain loop it replaces
/// compiled to the baseline's 4-lane SSE without fused multiply-adds: the cosines of a
/// 3,420-tool catalogue took 0.42 ms of a 7 ms search that way, and take 0.20 ms so (two
/// cores, AVX2, 2026-12-07).
#[inline(always)]
fn dot_on<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let len = a.len().min(b.len());
    let (a, a_tail) = S::as_simd_f32s(&a[..len]);
    let (b, b_tail) = S::as_simd_f32s(&b[..len]);
    let mut sums = [simd.splat_f32s(0.0); 4];
    let (a4, a_rest) = a.as_chunks::<4>();
    let (b4, b_rest) = b.as_chunks::<4>();
    for (x, y) in a4.iter().zip(b4) {
        for lane in 0..4 {
            sums[lane] = simd.mul_add_f32s(x[lane], y[lane], sums[lane]);
        }
    }
    for (x, y) in a_rest.iter().zip(b_rest) {
        sums[0] = simd.mul_add_f32s(*x, *y, sums[0]);
    }
    let sum = simd.add_f32s(simd.add_f32s(sums[0], sums[1]), simd.add_f32s(sums[2], sums[3]));
    let tail: f32 = a_tail.iter().zip(b_tail).map(|(x, y)| x * y).sum();
    simd.reduce_sum_f32s(sum) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confidence_meets_the_default_floor_exactly_at_the_calibrated_cosine() {
        let anchor = crate::rank::DEFAULT_MIN_CONFIDENCE;
        let floor = MINILM_COSINE_FLOOR;
        assert!((confidence(floor, floor) - anchor).abs() < 1e-6);
        assert!(confidence(floor - 0.01, floor) < anchor);
        assert!(confidence(floor + 0.01, floor) > anchor);
        assert_eq!((confidence(-0.2, floor), confidence(0.0, floor), confidence(1.0, floor)), (0.0, 0.0, 1.0));
        assert_eq!(confidence(f32::NAN, floor), 0.0);
        // Monotone: a nearer tool is never less sure.
        let steps: Vec<f32> = (0..=100).map(|i| confidence(i as f32 / 100.0, floor)).collect();
        assert!(steps.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn the_dot_product_matches_the_plain_sum_on_every_simd_level_and_length() {
        for len in [0, 1, 7, 15, 16, 17, 31, 33, 384, 390] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            let mut levels = vec![
                ("plain", dot_on(pulp::Scalar::new(), &a, &b)),
                ("4 lanes", dot_on(pulp::Scalar128b, &a, &b)),
                ("8 lanes", dot_on(pulp::Scalar256b, &a, &b)),
                ("16 lanes", dot_on(pulp::Scalar512b, &a, &b)),
            ];
            let dispatched = Arch::new().dispatch(Cosines { rows: &[Some(&a), None], query: &b });
            assert_eq!(dispatched.len(), 2);
            assert_eq!(dispatched[1], None, "a tool without a vector has no cosine");
            levels.push(("dispatched", dispatched[0].unwrap_or(f32::NAN)));
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(simd) = pulp::x86::V3::try_new() {
                    levels.push(("avx2", dot_on(simd, &a, &b)));
                }
                if let Some(simd) = pulp::x86::V4::try_new() {
                    levels.push(("avx512", dot_on(simd, &a, &b)));
                }
            }
            for (level, got) in levels {
                assert!((f64::from(got) - plain).abs() < 1e-4, "{level}, length {len}: {got} vs {plain}");
            }
        }
    }

    #[test]
    fn a_floor_at_or_beyond_the_ends_still_gives_a_confidence_in_range() {
        for floor in [0.0, 1.0, 2.0] {
            for cosine in [-1.0, 0.0, 0.5, 1.0, 3.0] {
                let c = confidence(cosine, floor);
                assert!((0.0..=1.0).contains(&c), "floor {floor}, cosine {cosine}: {c}");
            }
        }
    }
}
