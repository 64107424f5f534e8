//! How [`EmbeddingRanker`](super::EmbeddingRanker) scores a catalogue for a query: the blend that orders it, and the
//! calibrated confidence that says whether a hit is worth promoting
//! ([`EmbeddingRanker::explain`](super::EmbeddingRanker::explain) shows both).

use super::TextEmbedder;
use super::store::Store;
use super::table::Table;
use crate::rank::catalog::DeferredCatalog;

/// How many of BM25's best tools get its blended score (the rest get only their cosine).
const BM25_CANDIDATES: usize = 100;

/// The cosine floor of a model no one has calibrated
/// ([`TextEmbedder::calibrated_cosine_floor`](super::TextEmbedder::calibrated_cosine_floor)'s
/// default): halfway between unrelated (0) and the same meaning (1). No model's measurement:
/// a guess on the strict side for sentence encoders such as all-MiniLM-L6-v2, whose unrelated
/// texts sit at 0.1–0.3 (its measured floor is 0.415), so an uncalibrated model pre-promotes
/// less rather than more. Measure your model's (`embedding_calibration`, `docs/retrieval.md`).
pub const UNCALIBRATED_COSINE_FLOOR: f32 = 0.5;

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
    /// The calibrated confidence ([`EmbeddingRanker::cosine_floor`](super::EmbeddingRanker::cosine_floor)).
    pub confidence: f32,
}

/// A query's scoring over a catalogue: [`EmbeddingRanker::explain`](super::EmbeddingRanker::explain).
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
    let anchor = crate::rank::ranker::DEFAULT_MIN_CONFIDENCE;
    let value = if cosine < floor {
        anchor * cosine / floor
    } else if floor < 1.0 {
        anchor + (1.0 - anchor) * (cosine - floor) / (1.0 - floor)
    } else {
        1.0
    };
    if value.is_finite() { value.clamp(0.0, 1.0) } else { 0.0 }
}

/// What a ranker blends by: [`EmbeddingRanker::bm25_weight`](super::EmbeddingRanker::bm25_weight)
/// and [`EmbeddingRanker::cosine_floor`](super::EmbeddingRanker::cosine_floor).
#[derive(Clone, Copy, Debug)]
pub(super) struct Blend {
    pub(super) bm25_weight: f32,
    pub(super) cosine_floor: f32,
}

/// Scores every embedded tool of `catalog` in `store` against `query_vector` and keeps the
/// best `limit`: the ranking [`rank`](crate::rank::ToolRanker::rank) answers with.
pub(super) fn score(
    embedder: &dyn TextEmbedder,
    store: &Store,
    blend: Blend,
    catalog: &DeferredCatalog,
    query: &str,
    query_vector: &[f32],
    limit: usize,
) -> Explanation {
    let lexical = lexical(blend.bm25_weight, catalog, query, limit);
    let table = store.table(catalog, query_vector.len());
    let cosines = cosines(embedder, &table, query_vector);
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
            Some(((cosine.as_ref()? - low) / spread + blend.bm25_weight * lexical, at))
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
                confidence: confidence(cosine, blend.cosine_floor),
            })
        })
        .collect();
    Explanation { background, hits }
}

/// BM25's best candidates relative to its best hit, by catalogue position (empty when it
/// is not blended (`bm25_weight` 0) or finds nothing; 0 for a tool it did not find).
fn lexical(bm25_weight: f32, catalog: &DeferredCatalog, query: &str, limit: usize) -> Vec<f32> {
    if bm25_weight <= 0.0 {
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

/// Each catalogue tool's cosine to the query, in catalogue order (`None` for a tool without a
/// vector of the query's length, or with a cosine that is not finite), from the embedder's
/// [`dot_products`](TextEmbedder::dot_products) over the table's contiguous rows.
fn cosines(embedder: &dyn TextEmbedder, table: &Table, query: &[f32]) -> Vec<Option<f32>> {
    let rows: Vec<Option<&[f32]>> = table.rows().collect();
    let present: Vec<&[f32]> = rows.iter().flatten().copied().collect();
    let mut dots = embedder.dot_products(query, &present).into_iter();
    rows.iter().map(|row| row.and_then(|_| dots.next()).filter(|c| c.is_finite())).collect()
}

/// `Σ a·b` in eight running sums, so consecutive steps do not wait on each other and the
/// compiler can keep them in vector registers (the baseline's 4-lane SSE on x86-64).
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let len = a.len().min(b.len());
    let (a8, a_rest) = a[..len].as_chunks::<8>();
    let (b8, b_rest) = b[..len].as_chunks::<8>();
    let mut sums = [0.0_f32; 8];
    for (x, y) in a8.iter().zip(b8) {
        for lane in 0..8 {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confidence_meets_the_default_floor_exactly_at_the_calibrated_cosine() {
        let anchor = crate::rank::ranker::DEFAULT_MIN_CONFIDENCE;
        let floor = 0.415;
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
    fn the_dot_product_matches_the_plain_sum_at_every_length() {
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 384, 390] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            let got = dot(&a, &b);
            assert!((f64::from(got) - plain).abs() < 1e-4, "length {len}: {got} vs {plain}");
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
