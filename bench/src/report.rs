//! What one task run and one arm produced, as a table and as JSON.

use serde_json::{Value, json};
use tinytools::model::Message;

use crate::ArmSpec;

/// One task run.
#[derive(Clone, Debug)]
pub struct TaskResult {
    /// The task's id.
    pub id: String,
    /// The task's kind: `single` (one call), `chain` (a later call uses an earlier one's
    /// result) or `no_tool` (no catalogue tool fits).
    pub kind: &'static str,
    /// Whether the run's last reply carried text: a run that ends without one leaves the user
    /// nothing to read, whatever the judge (which scores calls) says.
    pub answered: bool,
    /// Judged a success (and no run error).
    pub success: bool,
    /// Why, in one line.
    pub reason: String,
    /// Tools called, in order.
    pub calls: Vec<String>,
    /// `tool_search` calls.
    pub search_calls: usize,
    /// Tools query-aware discovery promoted before the first call.
    pub pre_promoted: Vec<String>,
    /// Model calls made for the conversation's turns.
    pub model_calls: usize,
    /// The run's side requests for search keywords (not in the other figures).
    pub keyword_calls: usize,
    /// Prompt and answer tokens of those requests.
    pub keyword_tokens: u64,
    /// Prompt tokens of the first model call, as the provider reported them.
    pub first_call_prompt_tokens: Option<u64>,
    /// Compact JSON bytes of the first request's tools.
    pub first_call_tool_bytes: usize,
    /// Prompt tokens over every model call.
    pub total_prompt_tokens: u64,
    /// Tokens the model wrote over every call, as the provider reported them: what a
    /// decode-bound local server spends its time on.
    pub completion_tokens: u64,
    /// Wall time of the run.
    pub wall_ms: f64,
    /// Streamed runs: when the model's first text arrived, from the run's start.
    pub first_text_ms: Option<f64>,
    /// The run error, when a model call failed.
    pub error: Option<String>,
    /// Each time an aid acted, in order: the aid's name and what it did (`feedback`,
    /// `took_call`, `answered_call`, `adjusted_call`), as `name:kind`.
    pub aids_acted: Vec<String>,
    /// The transcript.
    pub messages: Vec<Message>,
}

/// One arm's figures.
#[derive(Clone, Debug)]
pub struct ArmReport {
    /// The arm's name.
    pub arm: &'static str,
    /// Tools exposed, offered or not (for the gateway arm, the tools behind the gateway).
    pub tools: usize,
    /// Every task run.
    pub results: Vec<TaskResult>,
    /// Wall time of the whole arm.
    pub wall_s: f64,
}

impl ArmReport {
    pub(super) fn new(spec: &ArmSpec, results: Vec<TaskResult>, wall_s: f64) -> Self {
        Self { arm: spec.kind.name(), tools: spec.tools(), results, wall_s }
    }

    /// Task runs judged a success.
    pub fn succeeded(&self) -> usize {
        self.results.iter().filter(|r| r.success).count()
    }

    /// Successes per task kind, in the order `single`, `chain`, `no_tool`.
    pub fn succeeded_by_kind(&self) -> [(&'static str, usize); 3] {
        crate::tasks::KINDS.map(|kind| (kind, self.results.iter().filter(|r| r.success && r.kind == kind).count()))
    }

    /// Runs whose last reply carried no text.
    pub fn runs_without_answer(&self) -> usize {
        self.results.iter().filter(|r| !r.answered).count()
    }

    /// Runs that called `tool_search` at least once.
    pub fn searched_runs(&self) -> usize {
        self.results.iter().filter(|r| r.search_calls > 0).count()
    }

    /// Mean first-call prompt tokens over runs that reported them.
    pub fn mean_first_call_tokens(&self) -> Option<f64> {
        mean(self.results.iter().filter_map(|r| r.first_call_prompt_tokens).map(|t| t as f64))
    }

    /// Mean first-request tool bytes.
    pub fn mean_first_call_tool_bytes(&self) -> f64 {
        mean(self.results.iter().map(|r| r.first_call_tool_bytes as f64)).unwrap_or(0.0)
    }

    /// Prompt tokens over every run.
    pub fn total_prompt_tokens(&self) -> u64 {
        self.results.iter().map(|r| r.total_prompt_tokens).sum()
    }

    /// Streamed runs: the median of how long before its run ended the model's first text
    /// arrived (`None` when no run streamed text).
    pub fn text_ahead_p50(&self) -> Option<f64> {
        let mut ahead: Vec<f64> =
            self.results.iter().filter_map(|r| r.first_text_ms.map(|first| r.wall_ms - first)).collect();
        ahead.sort_by(f64::total_cmp);
        ahead.get(ahead.len() / 2).copied()
    }

    /// The report as one JSON object; `transcripts` includes every run's messages.
    pub fn to_json(&self, transcripts: bool) -> Value {
        let results: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                let mut value = json!({
                    "id": r.id, "kind": r.kind, "success": r.success, "answered": r.answered,
                    "reason": r.reason, "calls": r.calls,
                    "search_calls": r.search_calls, "pre_promoted": r.pre_promoted, "model_calls": r.model_calls,
                    "keyword_calls": r.keyword_calls, "keyword_tokens": r.keyword_tokens,
                    "first_call_prompt_tokens": r.first_call_prompt_tokens,
                    "first_call_tool_bytes": r.first_call_tool_bytes,
                    "total_prompt_tokens": r.total_prompt_tokens,
                    "completion_tokens": r.completion_tokens, "wall_ms": r.wall_ms.round(), "error": r.error,
                    "first_text_ms": r.first_text_ms.map(f64::round), "aids_acted": r.aids_acted,
                });
                if transcripts {
                    value["messages"] = serde_json::to_value(&r.messages).unwrap_or(Value::Null);
                }
                value
            })
            .collect();
        json!({
            "arm": self.arm,
            "tools": self.tools,
            "runs": self.results.len(),
            "succeeded": self.succeeded(),
            "succeeded_by_kind": self
                .succeeded_by_kind()
                .into_iter()
                .map(|(kind, n)| (kind.to_owned(), json!(n)))
                .collect::<serde_json::Map<_, _>>(),
            "runs_without_answer": self.runs_without_answer(),
            "model_calls": self.results.iter().map(|r| r.model_calls).sum::<usize>(),
            "keyword_calls": self.results.iter().map(|r| r.keyword_calls).sum::<usize>(),
            "keyword_tokens": self.results.iter().map(|r| r.keyword_tokens).sum::<u64>(),
            "searched_runs": self.searched_runs(),
            "search_calls": self.results.iter().map(|r| r.search_calls).sum::<usize>(),
            "pre_promoted_runs": self.results.iter().filter(|r| !r.pre_promoted.is_empty()).count(),
            "mean_first_call_prompt_tokens": self.mean_first_call_tokens().map(f64::round),
            "mean_first_call_tool_bytes": self.mean_first_call_tool_bytes().round(),
            "total_prompt_tokens": self.total_prompt_tokens(),
            "completion_tokens": self.results.iter().map(|r| r.completion_tokens).sum::<u64>(),
            "run_errors": self.results.iter().filter(|r| r.error.is_some()).count(),
            "wall_s": (self.wall_s * 10.0).round() / 10.0,
            "streamed_text_ahead_ms_p50": self.text_ahead_p50().map(f64::round),
            "results": results,
        })
    }
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0_usize), |(sum, n), v| (sum + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The per-arm summary table, first-call tokens also as a share of the all-Direct arm's.
pub fn table(reports: &[ArmReport]) -> String {
    let baseline = reports.iter().find(|r| r.arm == "all-direct").and_then(ArmReport::mean_first_call_tokens);
    let mut out = format!(
        "{:<11} {:>6} {:>10} {:>9} {:>8} {:>18} {:>11} {:>12} {:>8}\n",
        "arm",
        "tools",
        "succeeded",
        "searched",
        "searches",
        "first-call tokens",
        "tool bytes",
        "total tokens",
        "wall s"
    );
    for report in reports {
        let first = report.mean_first_call_tokens().map_or_else(
            || "?".to_owned(),
            |t| match baseline {
                Some(b) if b > 0.0 && report.arm != "all-direct" => format!("{t:.0} ({:.0}%)", 100.0 * t / b),
                _ => format!("{t:.0}"),
            },
        );
        out.push_str(&format!(
            "{:<11} {:>6} {:>10} {:>9} {:>8} {:>18} {:>11.0} {:>12} {:>8.1}\n",
            report.arm,
            report.tools,
            format!("{}/{}", report.succeeded(), report.results.len()),
            report.searched_runs(),
            report.results.iter().map(|r| r.search_calls).sum::<usize>(),
            first,
            report.mean_first_call_tool_bytes(),
            report.total_prompt_tokens(),
            report.wall_s,
        ));
    }
    out
}
