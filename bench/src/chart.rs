//! What the benchmarks' charts share (plotters, to SVG): the colours, and a panel of one bar
//! per run or arm with its label under it.

use plotters::coord::Shift;
use plotters::prelude::*;

/// The bars' colours, in order.
pub const COLOURS: [RGBColor; 6] = [
    RGBColor(70, 110, 180),
    RGBColor(220, 130, 50),
    RGBColor(90, 160, 90),
    RGBColor(160, 90, 160),
    RGBColor(150, 150, 150),
    RGBColor(200, 80, 80),
];

/// One bar per `(label, value)` on `area`, under `caption`, the y axis from 0 to `top`.
///
/// # Errors
/// What plotters says when the panel cannot be drawn.
pub fn bar_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: &str,
    bars: &[(String, f64)],
    top: f64,
) -> Result<(), String> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 14))
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..bars.len().max(1) as f64, 0f64..top)
        .map_err(|e| e.to_string())?;
    let label =
        |x: &f64| bars.get(x.floor() as usize).filter(|_| x.fract() == 0.5).map_or(String::new(), |bar| bar.0.clone());
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * bars.len() + 1)
        .x_label_formatter(&label)
        .draw()
        .map_err(|e| e.to_string())?;
    let rectangles = bars.iter().enumerate().map(|(i, (_, value))| {
        Rectangle::new([(i as f64 + 0.2, 0.0), (i as f64 + 0.8, *value)], COLOURS[i % COLOURS.len()].filled())
    });
    chart.draw_series(rectangles).map_err(|e| e.to_string())?;
    Ok(())
}

/// Grouped bars on `area`: one group per `groups` label, one bar per series in each (the
/// series' values in group order, a percentage from 0 to 100), a legend of the series.
///
/// # Errors
/// What plotters says when the panel cannot be drawn.
pub fn grouped_bars(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: &str,
    groups: &[&str],
    series: &[(String, Vec<f64>)],
) -> Result<(), String> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 14))
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(40)
        .build_cartesian_2d(0f64..groups.len().max(1) as f64, 0f64..100f64)
        .map_err(|e| e.to_string())?;
    let label = |x: &f64| {
        groups.get(x.floor() as usize).filter(|_| x.fract() == 0.5).map_or(String::new(), |g| (*g).to_owned())
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * groups.len() + 1)
        .x_label_formatter(&label)
        .y_desc("%")
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.8 / series.len().max(1) as f64;
    for (i, (name, values)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let bars = values.iter().enumerate().map(|(g, value)| {
            let x = g as f64 + 0.1 + i as f64 * width;
            Rectangle::new([(x, 0.0), (x + width * 0.9, *value)], colour.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}
