//! `live_chart` draws a bar per run from `live_tasks --json` outputs, and refuses what is not one.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const CHART: &str = env!("CARGO_BIN_EXE_live_chart");

fn output(dir: &std::path::Path, name: &str, arms: serde_json::Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::json!({ "arms": arms }).to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_bar_per_run_and_a_clear_error_for_anything_else() {
    let dir = std::env::temp_dir().join(format!("tinytools-live-chart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let arm = |name: &str, solved: u32, tokens: f64| serde_json::json!({"arm": name, "succeeded": solved, "runs": 62, "mean_first_call_prompt_tokens": tokens});
    let one = output(&dir, "one.json", serde_json::json!([arm("gateway", 23, 1067.0)]));
    let two = output(&dir, "two.json", serde_json::json!([arm("direct", 31, 5675.0), arm("deferred", 40, 900.0)]));
    let svg = dir.join("chart.svg");
    let status = Command::new(CHART)
        .arg("--svg")
        .arg(&svg)
        .args(["--title", "a test chart", &format!("first run={one}"), &format!("second={two}")])
        .status()
        .unwrap();
    assert!(status.success());
    let drawn = std::fs::read_to_string(&svg).unwrap();
    for label in ["a test chart", "first run", "second direct", "second deferred", "tasks solved"] {
        assert!(drawn.contains(label), "{label} is not in the chart");
    }

    let missing = output(&dir, "missing.json", serde_json::json!([{"arm": "gateway", "runs": 62}]));
    for (argument, problem) in [
        (format!("x={missing}"), "an arm has no `succeeded`"),
        ("no-equals-sign".to_owned(), "is not LABEL=FILE.json"),
        (format!("x={}", dir.join("absent.json").display()), "cannot read"),
    ] {
        let out = Command::new(CHART).arg("--svg").arg(&svg).arg(&argument).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let message = String::from_utf8_lossy(&out.stderr);
        assert!(message.contains(problem), "{message}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
