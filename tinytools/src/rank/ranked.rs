//! [`RankedTool`]: what every ranker answers with, BM25 included.

/// One tool a ranker proposes.
///
/// ```
/// use tinytools::rank::RankedTool;
///
/// let hit = RankedTool::new("stock_quote", Some(0.9));
/// assert_eq!((hit.name.as_str(), hit.confidence), ("stock_quote", Some(0.9)));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RankedTool {
    /// The tool's name as the catalogue knows it. Names the catalogue does not hold are
    /// dropped before anything reaches the model.
    pub name: String,
    /// How sure the ranker is, when it can say (`0.0..=1.0`).
    pub confidence: Option<f32>,
}

impl RankedTool {
    /// Tool `name`, proposed with `confidence` (`None` when the ranker cannot say).
    pub fn new(name: impl Into<String>, confidence: Option<f32>) -> Self {
        Self { name: name.into(), confidence }
    }
}
