//! The results pages' charts drawn from the committed run records alone (`records_chart`), so
//! a chart can be redrawn, and checked, without running anything:
//! - `external-livemcp.svg`: LiveMCPBench recall per ranker and family context, from
//!   `bench/records/livemcp/` (the records at the default family-description weight);
//! - `external-bfcl-{record}.svg`: for each BFCL record of a live model (`bench/records/bfcl/`,
//!   not the scripted model's), the tool categories' accuracy per arm, BFCL's and
//!   twin-tolerant, and irrelevance's.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde_json::Value;

use crate::chart::grouped_bars;

/// The LiveMCPBench figures drawn, as (label, path in a record's `output`).
pub const LIVEMCP_FIGURES: [(&str, &[&str]); 6] = [
    ("aligned R@10", &["step_level", "aligned", "scores", "recall@10"]),
    ("any-step R@10", &["step_level", "union", "recall@10"]),
    ("any-step R@20", &["step_level", "union", "recall@20"]),
    ("chain R@10", &["step_level", "chain", "recall@10"]),
    ("chain R@20", &["step_level", "chain", "recall@20"]),
    ("task R@10", &["task_level", "recall@10"]),
];

/// The family-description weight whose LiveMCPBench records are drawn (the default).
const DEFAULT_WEIGHT: f64 = 0.3;

/// Draws every chart the records under `records` allow into `out`; returns the files written.
///
/// # Errors
/// A record that cannot be read or parsed, or a chart that cannot be written.
pub fn draw_from_records(records: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(out).map_err(|err| format!("cannot create {}: {err}", out.display()))?;
    let mut written = Vec::new();
    let livemcp = read_dir(&records.join("livemcp"))?;
    if !livemcp.is_empty() {
        let path = out.join("external-livemcp.svg");
        livemcp_chart(&livemcp, &path)?;
        written.push(path);
    }
    for (stem, record) in read_dir(&records.join("bfcl"))? {
        // The scripted model's records measure retrieval, not accuracy: no accuracy chart.
        let scripted = record["output"]["model"].as_str().is_some_and(|model| model.starts_with("scripted"));
        if !scripted && record["output"]["arms"].as_object().is_some_and(|arms| !arms.is_empty()) {
            let path = out.join(format!("external-bfcl-{stem}.svg"));
            bfcl_chart(&record, &path)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Every `*.json` record in `dir` (none when it does not exist), by file stem, sorted.
fn read_dir(dir: &Path) -> Result<Vec<(String, Value)>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(&path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
            let record = serde_json::from_str(&text).map_err(|err| format!("{} is not JSON: {err}", path.display()))?;
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            Ok((stem, record))
        })
        .collect()
}

fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(value, |node, key| &node[*key])
}

/// One series per LiveMCPBench record at the default weight, labelled ranker and context.
fn livemcp_chart(records: &[(String, Value)], path: &Path) -> Result<(), String> {
    let mut series = Vec::new();
    for (_, record) in records {
        let output = &record["output"];
        let weight = output["family_description_weight"].as_f64().unwrap_or(DEFAULT_WEIGHT);
        if (weight - DEFAULT_WEIGHT).abs() > 1e-6 || output["ranker"].as_str().is_some_and(|r| r.contains("expand")) {
            continue;
        }
        let context = output["family_context"].as_str().unwrap_or("none").trim_start_matches("server_");
        let label = format!("{} {context}", output["ranker"].as_str().unwrap_or("?"));
        let values = LIVEMCP_FIGURES.iter().map(|(_, p)| 100.0 * at(output, p).as_f64().unwrap_or(0.0)).collect();
        series.push((label, values));
    }
    let groups: Vec<&str> = LIVEMCP_FIGURES.iter().map(|(label, _)| *label).collect();
    let root = SVGBackend::new(path, (1000, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    grouped_bars(&root, "LiveMCPBench retrieval: recall per ranker and family context (records)", &groups, &series)?;
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// BFCL's accuracy per arm: the tool categories by BFCL's checker and twin-tolerantly, and
/// the irrelevance categories.
fn bfcl_chart(record: &Value, path: &Path) -> Result<(), String> {
    let output = &record["output"];
    let groups = ["tools: BFCL", "tools: twin-tolerant", "irrelevance"];
    let mut series = Vec::new();
    for (arm, figures) in output["arms"].as_object().into_iter().flatten() {
        let pct = |group: &str, key: &str| 100.0 * figures[group][key].as_f64().unwrap_or(0.0);
        series.push((
            arm.clone(),
            vec![
                pct("tools (all)", "accuracy"),
                pct("tools (all)", "twin_tolerant_accuracy"),
                pct("irrelevance (all)", "accuracy"),
            ],
        ));
    }
    let title = format!(
        "BFCL dev sample, {} queries, {} ({} aids), {}",
        output["queries"],
        output["model"].as_str().unwrap_or("?"),
        output["aids"].as_str().unwrap_or("?"),
        record["date"].as_str().unwrap_or("?")
    );
    let root = SVGBackend::new(path, (900, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    grouped_bars(&root, &title, &groups, &series)?;
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))
}
