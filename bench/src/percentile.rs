//! Percentiles of measured figures: one rule for every benchmark's report.

/// The `p` quantile (`0.0..=1.0`) of `sorted` (ascending): the value at index `round((n − 1)·p)`,
/// `None` for no values.
///
/// ```
/// use tinytools_bench::percentile::{percentile, sorted};
///
/// let times = sorted(vec![3.0, 1.0, 2.0, 4.0, 5.0]);
/// assert_eq!(percentile(&times, 0.5), Some(3.0));
/// assert_eq!(percentile(&times, 0.99), Some(5.0));
/// assert_eq!(percentile(&[], 0.5), None);
/// ```
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    sorted.get((last as f64 * p).round() as usize).copied()
}

/// `values` in ascending order (NaN last), ready for [`percentile`].
pub fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}
