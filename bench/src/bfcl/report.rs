//! A BFCL run's figures per arm and category, from its results.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::data::IRRELEVANCE_CATEGORIES;
use super::run::QueryResult;

/// One arm's figures over one group of queries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// Queries.
    pub n: usize,
    /// Right by BFCL's checker.
    pub right: usize,
    /// Right by the twin-tolerant score (a gold function's same-job twin accepted).
    pub twin_right: usize,
    /// Queries checked (a checker that could not answer leaves one unchecked).
    pub checked: usize,
    /// Gold functions all in the first request's tools.
    pub gold_offered: usize,
    /// Gold functions all in some request's tools.
    pub gold_promoted: usize,
    /// Gold functions all in some `tool_search` answer.
    pub gold_searched: usize,
    /// Runs with a `tool_search` call.
    pub searched: usize,
    /// Runs that ended in an error.
    pub errors: usize,
    /// Sum of the first requests' tools bytes.
    pub first_tool_bytes: usize,
    /// Sum of the first requests' prompt tokens, and how many reported them.
    pub first_tokens: (u64, usize),
    /// Sum of all prompt tokens.
    pub prompt_tokens: u64,
    /// Sum of wall times.
    pub wall_ms: f64,
}

impl Figures {
    fn add(&mut self, result: &QueryResult) {
        self.n += 1;
        self.right += usize::from(result.valid == Some(true));
        self.twin_right += usize::from(result.twin_valid.or(result.valid) == Some(true));
        self.checked += usize::from(result.valid.is_some());
        self.gold_offered += usize::from(result.gold_offered);
        self.gold_promoted += usize::from(result.gold_promoted);
        self.gold_searched += usize::from(result.gold_searched);
        self.searched += usize::from(result.searches > 0);
        self.errors += usize::from(result.error.is_some());
        self.first_tool_bytes += result.first_request_tool_bytes;
        if let Some(tokens) = result.first_request_tokens {
            self.first_tokens.0 += tokens;
            self.first_tokens.1 += 1;
        }
        self.prompt_tokens += result.total_prompt_tokens;
        self.wall_ms += result.wall_ms;
    }

    /// Right over queries.
    pub fn accuracy(&self) -> f64 {
        self.right as f64 / self.n.max(1) as f64
    }

    /// As the report's JSON object.
    pub fn to_json(&self) -> Value {
        let n = self.n.max(1) as f64;
        let round = |x: f64| (x * 1_000.0).round() / 1_000.0;
        json!({
            "n": self.n,
            "right": self.right,
            "accuracy": round(self.accuracy()),
            "twin_right": self.twin_right,
            "twin_tolerant_accuracy": round(self.twin_right as f64 / n),
            "unchecked": self.n - self.checked,
            "gold_offered": round(self.gold_offered as f64 / n),
            "gold_promoted": round(self.gold_promoted as f64 / n),
            "gold_searched": round(self.gold_searched as f64 / n),
            "searched": round(self.searched as f64 / n),
            "errors": self.errors,
            "first_request_tool_bytes": (self.first_tool_bytes as f64 / n).round(),
            "first_request_tokens": (self.first_tokens.0 as f64 / self.first_tokens.1.max(1) as f64).round(),
            "prompt_tokens": (self.prompt_tokens as f64 / n).round(),
            "wall_s": (self.wall_ms / 1_000.0).round(),
        })
    }
}

/// The group a category is reported under besides itself.
fn group(category: &str) -> &'static str {
    if IRRELEVANCE_CATEGORIES.contains(&category) { "irrelevance (all)" } else { "tools (all)" }
}

/// Figures by arm, then by category and by group.
pub fn figures(results: &[QueryResult]) -> BTreeMap<String, BTreeMap<String, Figures>> {
    let mut out: BTreeMap<String, BTreeMap<String, Figures>> = BTreeMap::new();
    for result in results {
        let arm = out.entry(result.arm.clone()).or_default();
        arm.entry(result.category.clone()).or_default().add(result);
        arm.entry(group(&result.category).to_owned()).or_default().add(result);
    }
    out
}

/// A Markdown table of the figures: one row per arm and group or category.
pub fn table(figures: &BTreeMap<String, BTreeMap<String, Figures>>) -> String {
    let mut out = String::from(
        "| arm | category | n | accuracy | twin-tolerant | gold offered | gold promoted | gold searched | first request: tool bytes / tokens | prompt tokens per query | wall |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (arm, categories) in figures {
        for (category, f) in categories {
            let n = f.n.max(1) as f64;
            let pct = |k: usize| format!("{:.0} %", 100.0 * k as f64 / n);
            out.push_str(&format!(
                "| {arm} | {category} | {} | {}/{} ({:.1} %) | {} | {} | {} | {} | {:.0} / {:.0} | {:.0} | {:.0} s |\n",
                f.n,
                f.right,
                f.n,
                100.0 * f.accuracy(),
                f.twin_right,
                pct(f.gold_offered),
                pct(f.gold_promoted),
                pct(f.gold_searched),
                f.first_tool_bytes as f64 / n,
                f.first_tokens.0 as f64 / f.first_tokens.1.max(1) as f64,
                f.prompt_tokens as f64 / n,
                f.wall_ms / 1_000.0,
            ));
        }
    }
    out
}

/// Each result's outcome for a run record, by arm and BFCL id: the verdicts and counts, never
/// the calls, the names of BFCL's functions or the checker's words (they quote the set).
pub fn outcomes(results: &[QueryResult]) -> Value {
    let rows: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "arm": r.arm,
                "qid": r.qid,
                "category": r.category,
                "valid": r.valid,
                "twin_valid": r.twin_valid,
                "twin_calls": r.twin_calls,
                "gold_offered": r.gold_offered,
                "gold_promoted": r.gold_promoted,
                "gold_searched": r.gold_searched,
                "attempted": r.attempted,
                "executed": r.executed,
                "searches": r.searches,
                "pre_promoted": r.pre_promoted.len(),
                "model_calls": r.model_calls,
                "keyword_calls": r.keyword_calls,
                "first_request_tool_bytes": r.first_request_tool_bytes,
                "first_request_tokens": r.first_request_tokens,
                "total_prompt_tokens": r.total_prompt_tokens,
                "wall_ms": r.wall_ms.round(),
                "run_error": r.error.is_some(),
            })
        })
        .collect();
    Value::Array(rows)
}
