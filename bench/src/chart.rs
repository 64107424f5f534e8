//! What the benchmarks' charts share (plotters, to SVG): the colours, and a panel of one bar
//! per run or arm with its label under it.

use plotters::coord::Shift;
use plotters::prelude::*;

/// The bars' colours, in order.
pub const COLOURS: [RGBColor; 4] =
    [RGBColor(70, 110, 180), RGBColor(220, 130, 50), RGBColor(90, 160, 90), RGBColor(160, 90, 160)];

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
