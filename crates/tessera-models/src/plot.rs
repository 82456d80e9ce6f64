//! Loss and accuracy curves as an SVG picture (plotters' SVG backend: no fonts or system
//! libraries needed).

use std::path::Path;

use plotters::prelude::*;

use crate::Report;

/// Writes one row of panels per report: the training loss (smoothed over 20 steps) and the
/// held-out accuracy with the chance level.
pub fn write_svg(path: &Path, reports: &[&Report]) -> Result<(), Box<dyn std::error::Error>> {
    let rows = reports.len().max(1) as u32;
    let root = SVGBackend::new(path, (960, 320 * rows)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((reports.len().max(1), 2));
    for (r, report) in reports.iter().enumerate() {
        let smooth: Vec<(usize, f64)> = (0..report.loss.len())
            .map(|i| {
                let lo = i.saturating_sub(19);
                let w = &report.loss[lo..=i];
                (i + 1, w.iter().sum::<f64>() / w.len() as f64)
            })
            .collect();
        let ymax = smooth.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-3) * 1.05;
        let mut chart = ChartBuilder::on(&panels[2 * r])
            .caption(
                format!("{}: training loss", report.name),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0usize..smooth.len().max(1), 0.0..ymax)?;
        chart.configure_mesh().x_desc("step").draw()?;
        chart.draw_series(LineSeries::new(smooth, &BLUE))?;
        let last = report.accuracy.last().map_or(1, |a| a.0).max(1);
        let mut chart = ChartBuilder::on(&panels[2 * r + 1])
            .caption("held-out accuracy (dashed: chance)", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0usize..last, 0.0..1.0f64)?;
        chart.configure_mesh().x_desc("step").draw()?;
        chart.draw_series(LineSeries::new(report.accuracy.iter().copied(), &RED))?;
        chart.draw_series(DashedLineSeries::new(
            [(0, report.chance), (last, report.chance)],
            5,
            5,
            BLACK.into(),
        ))?;
    }
    root.present()?;
    Ok(())
}
