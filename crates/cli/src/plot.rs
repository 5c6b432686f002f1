//! Overlaid histograms of a score for positive and negative pairs (`neardup eval --plot`), drawn
//! with plotters to SVG (no system libraries, no font files: text is left to the viewer).

use plotters::coord::Shift;
use plotters::prelude::*;

/// Two histograms over the same bins, and the decision threshold.
#[derive(Debug, Clone)]
pub struct Histograms {
    /// Title line.
    pub title: String,
    /// What the x axis measures.
    pub x_label: String,
    /// Lower edge of the first bin.
    pub low: f64,
    /// Upper edge of the last bin.
    pub high: f64,
    /// Counts of positive pairs per bin.
    pub positives: Vec<u32>,
    /// Counts of negative pairs per bin.
    pub negatives: Vec<u32>,
    /// Where the decision threshold falls on the x axis, if anywhere.
    pub threshold: Option<f64>,
}

impl Histograms {
    /// Empty histograms of `bins` equal bins over `[low, high]`.
    pub fn new(title: String, x_label: &str, low: f64, high: f64, bins: usize) -> Self {
        let bins = bins.max(1);
        Histograms {
            title,
            x_label: x_label.to_string(),
            low,
            high,
            positives: vec![0; bins],
            negatives: vec![0; bins],
            threshold: None,
        }
    }

    /// Counts one value; values outside the range go to the first or last bin.
    pub fn add(&mut self, positive: bool, value: f64) {
        let bins = self.positives.len();
        let width = (self.high - self.low) / bins as f64;
        let bin = ((value - self.low) / width).floor();
        let bin = if bin.is_nan() || bin < 0.0 {
            0
        } else {
            (bin as usize).min(bins - 1)
        };
        let counts = if positive {
            &mut self.positives
        } else {
            &mut self.negatives
        };
        counts[bin] = counts[bin].saturating_add(1);
    }
}

/// Draws `h` as an SVG document.
pub fn draw_svg(h: &Histograms) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, (900, 540)).into_drawing_area();
        draw(&area, h)?;
        area.present()?;
    }
    Ok(svg)
}

fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, h: &Histograms) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
    area.fill(&WHITE).map_err(err)?;
    let top = h
        .positives
        .iter()
        .chain(&h.negatives)
        .copied()
        .max()
        .unwrap_or(0)
        .max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(&h.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(h.low..h.high, 0u32..top + top / 10 + 1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(h.x_label.as_str())
        .y_desc("pairs")
        .disable_x_mesh()
        .draw()
        .map_err(err)?;
    let width = (h.high - h.low) / h.positives.len() as f64;
    let series = [
        ("positives", &h.positives, BLUE.mix(0.45)),
        ("negatives", &h.negatives, RED.mix(0.45)),
    ];
    for (name, counts, color) in series {
        let bars = counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let x0 = h.low + i as f64 * width;
                Rectangle::new([(x0, 0), (x0 + width, c)], color.filled())
            });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    if let Some(t) = h.threshold {
        let line = PathElement::new(vec![(t, 0), (t, top + top / 10 + 1)], BLACK.stroke_width(2));
        chart
            .draw_series(std::iter::once(line))
            .map_err(err)?
            .label("decision threshold")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], BLACK.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    Ok(())
}
