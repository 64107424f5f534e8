//! Draws a results page's chart from `live_tasks --json` outputs: per run, the share of tasks
//! solved and the mean prompt tokens of the first model call, side by side.
//!
//! ```sh
//! cargo run --release -p tinytools-bench --bin live_chart -- --svg docs/chart.svg \
//!     --title "gateway arm at 281 tools" "1.5B count=count.json" "1.5B grouped=grouped.json"
//! ```
//!
//! Each `LABEL=FILE` is one bar in each panel; a file with several arms gives one bar per arm,
//! labelled `LABEL arm`.

use std::path::PathBuf;

use plotters::prelude::*;
use serde_json::Value;
use tinytools_bench::chart::bar_panel;

/// One bar: a run of one arm.
struct Bar {
    label: String,
    solved_percent: f64,
    first_call_tokens: f64,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("live_chart: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let (mut svg, mut title, mut bars) = (None, String::from("live suite"), Vec::new());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--svg" => svg = Some(PathBuf::from(args.next().ok_or("--svg needs a file")?)),
            "--title" => title = args.next().ok_or("--title needs a text")?,
            run => bars.extend(read(run)?),
        }
    }
    let svg = svg.ok_or("give --svg FILE and one or more LABEL=FILE.json")?;
    if bars.is_empty() {
        return Err("no runs: give one or more LABEL=FILE.json (live_tasks --json outputs)".into());
    }
    draw(&bars, &title, &svg)
}

/// The bars of one `LABEL=FILE` argument.
fn read(argument: &str) -> Result<Vec<Bar>, String> {
    let (label, path) = argument.split_once('=').ok_or_else(|| format!("`{argument}` is not LABEL=FILE.json"))?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let output: Value = serde_json::from_str(&text).map_err(|e| format!("{path} is not live_tasks JSON: {e}"))?;
    let arms = output["arms"].as_array().ok_or_else(|| format!("{path} has no `arms`"))?;
    arms.iter()
        .map(|arm| {
            let number = |key: &str| arm[key].as_f64().ok_or_else(|| format!("{path}: an arm has no `{key}`"));
            let name = if arms.len() == 1 {
                label.to_owned()
            } else {
                format!("{label} {}", arm["arm"].as_str().unwrap_or("?"))
            };
            Ok(Bar {
                label: name,
                solved_percent: 100.0 * number("succeeded")? / number("runs")?.max(1.0),
                first_call_tokens: number("mean_first_call_prompt_tokens")?,
            })
        })
        .collect()
}

fn draw(bars: &[Bar], title: &str, path: &std::path::Path) -> Result<(), String> {
    // Room for each bar's label under it in both panels.
    let width = u32::try_from(bars.len()).unwrap_or(u32::MAX).saturating_mul(240).max(900);
    let root = SVGBackend::new(path, (width, 380)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root.titled(title, ("sans-serif", 18)).map_err(|e| e.to_string())?;
    let (left, right) = root.split_horizontally(width / 2);
    let solved: Vec<(String, f64)> = bars.iter().map(|bar| (bar.label.clone(), bar.solved_percent)).collect();
    bar_panel(&left, "tasks solved (%)", &solved, 100.0)?;
    let tokens: Vec<(String, f64)> = bars.iter().map(|bar| (bar.label.clone(), bar.first_call_tokens)).collect();
    let top = tokens.iter().map(|bar| bar.1).fold(1.0, f64::max) * 1.15;
    bar_panel(&right, "first model call: prompt tokens", &tokens, top)?;
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))
}
