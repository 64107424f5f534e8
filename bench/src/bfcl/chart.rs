//! The BFCL results page's chart, drawn by the benchmark itself (`bfcl --svg FILE`): accuracy
//! per arm on the tool and irrelevance categories, and the first request's tool bytes.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use super::report::Figures;
use crate::chart::{COLOURS, bar_panel};

const GROUPS: [&str; 2] = ["tools (all)", "irrelevance (all)"];

/// Draws the chart to `path` as SVG.
///
/// # Errors
/// When the file cannot be written.
pub fn draw(figures: &BTreeMap<String, BTreeMap<String, Figures>>, title: &str, path: &Path) -> Result<(), String> {
    let root = SVGBackend::new(path, (900, 380)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root.titled(title, ("sans-serif", 18)).map_err(|e| e.to_string())?;
    let (left, right) = root.split_horizontally(560);
    let arms: Vec<&String> = figures.keys().collect();
    accuracy(&left, figures, &arms)?;
    bytes(&right, figures, &arms)?;
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn accuracy(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    figures: &BTreeMap<String, BTreeMap<String, Figures>>,
    arms: &[&String],
) -> Result<(), String> {
    let mut chart = ChartBuilder::on(area)
        .caption("accuracy (BFCL's checker)", ("sans-serif", 14))
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(40)
        .build_cartesian_2d(0f64..GROUPS.len() as f64, 0f64..100f64)
        .map_err(|e| e.to_string())?;
    let label = |x: &f64| {
        GROUPS.get(x.floor() as usize).filter(|_| x.fract() == 0.5).map_or(String::new(), |g| (*g).to_owned())
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * GROUPS.len() + 1)
        .x_label_formatter(&label)
        .y_desc("% right")
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.8 / arms.len().max(1) as f64;
    for (i, arm) in arms.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let bars = GROUPS.iter().enumerate().filter_map(|(g, group)| {
            let f = figures.get(*arm)?.get(*group)?;
            let x = g as f64 + 0.1 + i as f64 * width;
            Some(Rectangle::new([(x, 0.0), (x + width * 0.9, 100.0 * f.accuracy())], colour.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(arm.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    chart.configure_series_labels().background_style(WHITE).border_style(BLACK).draw().map_err(|e| e.to_string())
}

fn bytes(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    figures: &BTreeMap<String, BTreeMap<String, Figures>>,
    arms: &[&String],
) -> Result<(), String> {
    let mean = |arm: &String| {
        figures.get(arm).and_then(|g| g.get(GROUPS[0])).map_or(0.0, |f| f.first_tool_bytes as f64 / f.n.max(1) as f64)
    };
    let bars: Vec<(String, f64)> = arms.iter().map(|arm| ((*arm).clone(), mean(arm))).collect();
    let top = bars.iter().map(|bar| bar.1).fold(1.0, f64::max) * 1.15;
    bar_panel(area, "first request: tools bytes", &bars, top)
}
