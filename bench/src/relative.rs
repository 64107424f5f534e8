//! Query-relative confidence for the embedding ranker (issue 41): how far a hit stands out
//! from the rest of *that query's* scores over the catalogue, beside its absolute cosine.
//! `embedding_calibration` chooses a rule on the dev halves; `pre_promotion_eval --relative`
//! measures it on the live suite's messages.

use tinytools::rank::embedding::{Explanation, ScoredTool};

/// The scores measured for a hit, in the order [`Relative::values`] returns them:
/// - `cosine`: the raw cosine (today's calibrated confidence is monotone in it);
/// - `margin`: the cosine minus the query's mean cosine over the catalogue;
/// - `z`: the cosine's z-score against the query's cosines over the whole catalogue;
/// - `robust_z`: the same against their median and MAD (× 1.4826);
/// - `gap10`: the cosine minus the catalogue's 10th best cosine for the query;
/// - `z_blend`: the blended ranking score's z-score against the query's blended scores.
pub const SCORES: [&str; 6] = ["cosine", "margin", "z", "robust_z", "gap10", "z_blend"];

/// The rank (1-based) of the cosine `gap10` measures the margin to.
const GAP_RANK: usize = 10;

/// One query's score distribution over a catalogue.
#[derive(Clone, Copy, Debug)]
pub struct Relative {
    mean: f64,
    std: f64,
    median: f64,
    mad: f64,
    kth: f64,
    score_mean: f64,
    score_std: f64,
}

impl Relative {
    /// The distribution of an explanation that holds every tool of the catalogue
    /// (`EmbeddingRanker::explain` with the catalogue's length as the limit).
    pub fn of(explanation: &Explanation) -> Self {
        let mut cosines: Vec<f64> = explanation.hits.iter().map(|h| f64::from(h.cosine)).collect();
        let scores: Vec<f64> = explanation.hits.iter().map(|h| f64::from(h.score)).collect();
        cosines.sort_by(|a, b| b.total_cmp(a));
        let (mean, std) = mean_std(&cosines);
        let (score_mean, score_std) = mean_std(&scores);
        let median = median(&cosines);
        let deviations: Vec<f64> = cosines.iter().map(|c| (c - median).abs()).collect();
        let mad = median_unsorted(deviations) * 1.4826;
        let kth = cosines.get(GAP_RANK - 1).or(cosines.last()).copied().unwrap_or(0.0);
        Self { mean, std, median, mad, kth, score_mean, score_std }
    }

    /// A hit's scores, in the order of [`SCORES`].
    pub fn values(&self, hit: &ScoredTool) -> [f64; 6] {
        let cosine = f64::from(hit.cosine);
        let ratio = |x: f64, spread: f64| if spread > 1e-9 { x / spread } else { 0.0 };
        [
            cosine,
            cosine - self.mean,
            ratio(cosine - self.mean, self.std),
            ratio(cosine - self.median, self.mad),
            cosine - self.kth,
            ratio(f64::from(hit.score) - self.score_mean, self.score_std),
        ]
    }
}

/// A promotion rule: a hit passes when its score `score` (an index into [`SCORES`]) is at or
/// above `floor` and its cosine at or above `cosine_min`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    /// Which score of [`SCORES`].
    pub score: usize,
    /// The score's floor.
    pub floor: f64,
    /// The absolute cosine a hit needs besides (`-1`: none).
    pub cosine_min: f64,
}

impl Rule {
    /// Whether a hit with these scores passes.
    pub fn passes(&self, values: &[f64; 6]) -> bool {
        values[self.score] >= self.floor && values[0] >= self.cosine_min
    }

    /// Parses `SCORE:FLOOR[:COSINE]` (`z:3.1`, `robust_z:4:0.3`).
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or_default();
        let score = SCORES.iter().position(|s| *s == name).ok_or_else(|| format!("unknown score `{name}`"))?;
        let number = |part: Option<&str>, default: Option<f64>| match (part, default) {
            (Some(p), _) => p.parse::<f64>().map_err(|_| format!("`{p}` is not a number")),
            (None, Some(d)) => Ok(d),
            (None, None) => Err("SCORE:FLOOR[:COSINE]".to_owned()),
        };
        Ok(Self { score, floor: number(parts.next(), None)?, cosine_min: number(parts.next(), Some(-1.0))? })
    }
}

fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The median of values sorted (either way).
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn median_unsorted(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    median(&values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_apply_both_floors() {
        let rule = Rule::parse("robust_z:4:0.3").unwrap_or(Rule { score: 9, floor: 0.0, cosine_min: 0.0 });
        assert_eq!(rule, Rule { score: 3, floor: 4.0, cosine_min: 0.3 });
        assert!(rule.passes(&[0.31, 0.0, 0.0, 4.0, 0.0, 0.0]));
        assert!(!rule.passes(&[0.29, 0.0, 0.0, 9.0, 0.0, 0.0]));
        assert!(!rule.passes(&[0.9, 0.0, 0.0, 3.9, 0.0, 0.0]));
        assert_eq!(Rule::parse("z:2").map(|r| r.cosine_min), Ok(-1.0));
        assert!(Rule::parse("zz:2").is_err() && Rule::parse("z").is_err() && Rule::parse("z:x").is_err());
    }

    #[test]
    fn medians_of_odd_and_even_lengths() {
        assert_eq!(median(&[3.0, 2.0, 1.0]), 2.0);
        assert_eq!(median_unsorted(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
