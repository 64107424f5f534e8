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

const COLOURS: [RGBColor; 4] =
    [RGBColor(70, 110, 180), RGBColor(220, 130, 50), RGBColor(90, 160, 90), RGBColor(160, 90, 160)];

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
    panel(&left, bars, "tasks solved (%)", 100.0, |bar| bar.solved_percent)?;
    let top = bars.iter().map(|bar| bar.first_call_tokens).fold(1.0, f64::max) * 1.15;
    panel(&right, bars, "first model call: prompt tokens", top, |bar| bar.first_call_tokens)?;
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    bars: &[Bar],
    caption: &str,
    top: f64,
    value: impl Fn(&Bar) -> f64,
) -> Result<(), String> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 14))
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..bars.len() as f64, 0f64..top)
        .map_err(|e| e.to_string())?;
    let label = |x: &f64| {
        bars.get(x.floor() as usize).filter(|_| x.fract() == 0.5).map_or(String::new(), |bar| bar.label.clone())
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * bars.len() + 1)
        .x_label_formatter(&label)
        .draw()
        .map_err(|e| e.to_string())?;
    let rectangles = bars.iter().enumerate().map(|(i, bar)| {
        Rectangle::new([(i as f64 + 0.15, 0.0), (i as f64 + 0.85, value(bar))], COLOURS[i % COLOURS.len()].filled())
    });
    chart.draw_series(rectangles).map_err(|e| e.to_string())?;
    Ok(())
}
