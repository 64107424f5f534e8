//! How [`EmbeddingRanker`] scores a catalogue for a query: the blend that orders it, and the
//! calibrated confidence that says whether a hit is worth promoting
//! ([`EmbeddingRanker::explain`] shows both).

use rustc_hash::FxHashMap;

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
        let cosines = cosines(&table, catalog, query_vector);
        let n = cosines.len().max(1) as f32;
        let background = cosines.iter().map(|(c, _)| c).sum::<f32>() / n;
        // Both signals on 0..=1 for this query: the cosine min-max scaled over the catalogue
        // (so the blend means the same on a 40-tool catalogue, where cosines bunch together,
        // as on a 3,000-tool one), BM25 relative to its best hit.
        let (low, high) =
            cosines.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &(c, _)| (l.min(c), h.max(c)));
        let spread = if high - low > f32::EPSILON { high - low } else { 1.0 };
        let mut scored: Vec<(f32, f32, f32, &str)> = cosines
            .into_iter()
            .map(|(cosine, name)| {
                let lexical = lexical.get(name).copied().unwrap_or(0.0);
                ((cosine - low) / spread + self.bm25_weight * lexical, cosine, lexical, name)
            })
            .collect();
        let order =
            |a: &(f32, f32, f32, &str), b: &(f32, f32, f32, &str)| b.0.total_cmp(&a.0).then_with(|| a.3.cmp(b.3));
        // Only the best `limit` are ever read: select them, then sort those.
        if limit > 0 && limit < scored.len() {
            scored.select_nth_unstable_by(limit - 1, order);
            scored.truncate(limit);
        }
        scored.sort_by(order);
        let hits = scored
            .into_iter()
            .take(limit)
            .map(|(score, cosine, lexical, name)| ScoredTool {
                name: name.to_owned(),
                cosine,
                lexical,
                score,
                confidence: confidence(cosine, self.cosine_floor),
            })
            .collect();
        Explanation { background, hits }
    }

    /// BM25's best candidates relative to its best hit (empty when it is not blended or finds
    /// nothing).
    fn lexical(&self, catalog: &DeferredCatalog, query: &str, limit: usize) -> FxHashMap<String, f32> {
        if self.bm25_weight <= 0.0 {
            return FxHashMap::default();
        }
        let hits = catalog.bm25(query, BM25_CANDIDATES.max(limit));
        let best = hits.first().and_then(|hit| hit.confidence).unwrap_or(0.0);
        if best <= 0.0 {
            return FxHashMap::default();
        }
        hits.into_iter().map(|hit| (hit.name, hit.confidence.unwrap_or(0.0) / best)).collect()
    }
}

/// Each embedded catalogue tool's cosine to the query (tools without a vector of the query's
/// length are left out). From [`SHARED_FROM`] tools the table is read on every core: it is
/// megabytes, cold after the query's embedding has streamed the model through the caches, and
/// each core brings its own memory bandwidth.
fn cosines<'a>(table: &Table, catalog: &'a DeferredCatalog, query: &[f32]) -> Vec<(f32, &'a str)> {
    let rows: Vec<Option<&[f32]>> = table.rows().collect();
    let cosine = |row: &Option<&[f32]>| row.map(|row| dot(row, query)).filter(|cosine| cosine.is_finite());
    let values: Vec<Option<f32>> = if rows.len() >= SHARED_FROM {
        use rayon::prelude::*;
        rows.par_iter().with_min_len(SHARED_FROM / 2).map(cosine).collect()
    } else {
        rows.iter().map(cosine).collect()
    };
    catalog.iter().zip(values).filter_map(|(tool, cosine)| Some((cosine?, tool.schema().name.as_str()))).collect()
}

/// Catalogues from this many tools are scored on every core.
const SHARED_FROM: usize = 1_000;

/// `Σ a·b` over sixteen running sums, which the compiler turns into SIMD: one running sum
/// cannot be reordered and costs a float add's latency per element (2 of a 3,420-tool search's
/// 5 ms went there, `perf`, 2026-12-06).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut sums = [0.0_f32; LANES];
    let (a_chunks, a_tail) = a.as_chunks::<LANES>();
    let (b_chunks, b_tail) = b.as_chunks::<LANES>();
    for (x, y) in a_chunks.iter().zip(b_chunks) {
        for lane in 0..LANES {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let tail: f32 = a_tail.iter().zip(b_tail).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + tail
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
    fn dot_matches_the_plain_sum_at_every_length() {
        for len in [0, 1, 15, 16, 17, 384, 390] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            assert!((f64::from(dot(&a, &b)) - plain).abs() < 1e-4, "length {len}");
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
