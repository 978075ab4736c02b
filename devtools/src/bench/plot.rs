//! PNG line charts of the benchmark results, drawn with `plotters`' bitmap backend. Text uses
//! Noto Sans embedded in the binary (the `ttf-noto-sans` crate, registered with plotters'
//! `ab_glyph` font table), so plots render the same on a machine without any system font.

use std::{path::Path, sync::Once};

use plotters::{
    prelude::*,
    style::{FontStyle, register_font},
};

/// One named line of points.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// `(x, y)` points, drawn in order.
    pub points: Vec<(f64, f64)>,
    /// Runs that did not finish, at a lower bound of their value (where they were stopped):
    /// drawn as crosses in the series' colour, never dropped.
    pub unfinished: Vec<(f64, f64)>,
}

/// What a chart shows.
#[derive(Clone, Debug)]
pub struct Chart<'a> {
    /// Caption.
    pub title: &'a str,
    /// X axis label.
    pub x_label: &'a str,
    /// Y axis label.
    pub y_label: &'a str,
    /// The lines.
    pub series: Vec<Series>,
    /// A horizontal target line `(label, y)`, if any.
    pub target: Option<(&'a str, f64)>,
}

const WIDTH: u32 = 900;
const HEIGHT: u32 = 540;
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn register_embedded_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped by the crate; an error would only mean
        // text is missing from the plots, never a wrong number, so it is ignored.
        let _ = register_font("sans-serif", FontStyle::Normal, ttf_noto_sans::REGULAR);
    });
}

/// Axis range covering `values` (and zero), with 10% headroom.
pub fn axis_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((0.0_f64, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let hi = if hi <= lo { lo + 1.0 } else { hi };
    (lo, hi + (hi - lo) * 0.1)
}

/// Draws `chart` into the PNG file `path`.
///
/// # Errors
/// The file cannot be written or drawing failed.
pub fn line_chart(path: &Path, chart: &Chart<'_>) -> Result<(), String> {
    register_embedded_font();
    let fail = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let points = || {
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().chain(&s.unfinished).copied())
    };
    let x = axis_range(points().map(|p| p.0));
    let y = axis_range(points().map(|p| p.1).chain(chart.target.map(|t| t.1)));
    let mut ctx = ChartBuilder::on(&root)
        .caption(chart.title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(|e| fail(&e))?;
    ctx.configure_mesh()
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| fail(&e))?;
    for (i, series) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        ctx.draw_series(LineSeries::new(series.points.clone(), color.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(series.name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        ctx.draw_series(series.points.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(|e| fail(&e))?;
        if !series.unfinished.is_empty() {
            ctx.draw_series(
                series
                    .unfinished
                    .iter()
                    .map(|&p| Cross::new(p, 7, color.stroke_width(3))),
            )
            .map_err(|e| fail(&e))?
            .label(format!("{} unfinished (at least)", series.name))
            .legend(move |(x, y)| Cross::new((x + 10, y), 5, color.stroke_width(2)));
        }
    }
    if let Some((label, value)) = chart.target {
        let style = RGBColor(120, 120, 120).stroke_width(1);
        ctx.draw_series(LineSeries::new([(x.0, value), (x.1, value)], style))
            .map_err(|e| fail(&e))?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
    }
    ctx.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ranges_should_include_zero_and_leave_headroom() {
        assert_eq!(axis_range([2.0, 10.0].into_iter()), (0.0, 11.0));
        assert_eq!(axis_range(std::iter::empty()), (0.0, 1.1));
        assert_eq!(axis_range([f64::NAN, 5.0].into_iter()), (0.0, 5.5));
    }

    #[test]
    fn a_chart_should_render_to_a_png_with_text_from_the_embedded_font() {
        let dir = std::env::temp_dir().join(format!("ferrvault-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chart.png");
        let chart = Chart {
            title: "title",
            x_label: "x",
            y_label: "y",
            series: vec![Series {
                name: "a".into(),
                points: vec![(1.0, 1.0), (2.0, 3.0)],
                unfinished: vec![(3.0, 9.0)],
            }],
            target: Some(("target", 2.0)),
        };
        line_chart(&path, &chart).expect("the chart renders");
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
