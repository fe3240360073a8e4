//! The report's three charts, drawn as SVG from a report's JSON (so that
//! every report in `results/` has them, and CI can check they are current):
//! each operation against the Go reference on the same CPU model and the
//! Rust peers; where an unwrap's time goes; the tail of an unwrap's
//! latency. Every bar and point carries its own label, so no chart needs
//! colour or a legend to be read.

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

use crate::units::{count, seconds};

/// The charts of one report, by file-name suffix: `(suffix, title, svg)`.
pub(crate) fn all(report: &Value) -> Vec<(&'static str, &'static str, String)> {
    let mut out = Vec::new();
    if let Some(svg) = operations(report) {
        out.push((
            "operations",
            "each operation against the Go reference and the Rust peers",
            svg,
        ));
    }
    if let Some(svg) = unwrap_parts(report) {
        out.push(("unwrap", "where an unwrap's time goes", svg));
    }
    if let Some(svg) = latency(report) {
        out.push(("latency", "the tail of an unwrap's latency", svg));
    }
    out
}

const WIDTH: u32 = 1100;
/// Room for the row labels, left of the bars.
const LABELS: u32 = 470;
const ROW: u32 = 26;
const FONT: (&str, u32) = ("sans-serif", 14);
/// kemsphinx, the Go reference, the peers: told apart by the labels, the
/// colours only help.
const OURS: RGBColor = RGBColor(31, 119, 180);
const GO: RGBColor = RGBColor(200, 200, 200);
const PEER: RGBColor = RGBColor(255, 187, 120);

/// One labelled horizontal bar from `start` to `end` seconds.
struct Bar {
    label: String,
    start: f64,
    end: f64,
    note: String,
    color: RGBColor,
}

fn median_s(v: &Value) -> Option<f64> {
    v.get("median_ns")
        .and_then(Value::as_f64)
        .map(|ns| ns * 1e-9)
        .or_else(|| v.get("median_s").and_then(Value::as_f64))
}

fn name(v: &Value) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("?")
}

/// The Go reference's seconds for `op` on this report's CPU model.
fn reference(report: &Value, op: &str) -> Option<f64> {
    let figures = report.pointer("/go_reference_this_cpu_model/figures")?;
    let row = figures.as_array()?.iter().find(|f| name(f) == op)?;
    let s = row.get("seconds")?;
    s.as_f64().or_else(|| {
        let mut all: Vec<f64> = s.as_array()?.iter().filter_map(Value::as_f64).collect();
        all.sort_by(f64::total_cmp);
        all.get(all.len() / 2).copied()
    })
}

/// Operations with a reference figure (kemsphinx, then Go, row by row),
/// then the peers' create and unwrap.
fn operations(report: &Value) -> Option<String> {
    let mut bars = Vec::new();
    let mut compared = false;
    for op in report.get("operations")?.as_array()? {
        let ours = median_s(op)?;
        let go = reference(report, name(op));
        bars.push(Bar {
            label: format!("{} — kemsphinx", name(op)),
            start: 0.0,
            end: ours,
            note: match go {
                Some(go) => format!("{} ({:.1}× faster)", seconds(ours), go / ours),
                None => seconds(ours),
            },
            color: OURS,
        });
        if let Some(go) = go {
            compared = true;
            bars.push(Bar {
                label: format!("{} — Go reference", name(op)),
                start: 0.0,
                end: go,
                note: seconds(go),
                color: GO,
            });
        }
    }
    for p in report.get("peers")?.as_array()? {
        let who = p.get("implementation").and_then(Value::as_str)?;
        let what = p.get("operation").and_then(Value::as_str)?;
        let bytes = p.get("payload_bytes").and_then(Value::as_u64)?;
        let s = median_s(p)?;
        bars.push(Bar {
            label: format!("{what} — {who}, {} B payload", count(bytes)),
            start: 0.0,
            end: s,
            note: seconds(s),
            color: if who.starts_with("kemsphinx") {
                OURS
            } else {
                PEER
            },
        });
    }
    let title = format!(
        "Median time per operation (log scale), {} — {}",
        cpu(report),
        if compared {
            "Go reference as measured on this CPU model"
        } else {
            "the Go reference has not been measured on this CPU model"
        }
    );
    (!bars.is_empty()).then(|| bar_chart(&title, &bars, true))
}

/// The measured unwrap, then its primitives laid end to end (a stacked
/// bar, unfolded so that each part has room for its label).
fn unwrap_parts(report: &Value) -> Option<String> {
    let rows = report.get("unwrap_and_primitives")?.as_array()?;
    let (whole, parts) = rows.split_first()?;
    let total = median_s(whole)?;
    let mut bars = vec![Bar {
        label: format!("{} (measured)", name(whole)),
        start: 0.0,
        end: total,
        note: seconds(total),
        color: OURS,
    }];
    let mut at = 0.0;
    for p in parts {
        let s = median_s(p)?;
        bars.push(Bar {
            label: name(p).to_owned(),
            start: at,
            end: at + s,
            note: format!("{} ({:.0} %)", seconds(s), 100.0 * s / total),
            color: PEER,
        });
        at += s;
    }
    bars.push(Bar {
        label: "sum of the parts".to_owned(),
        start: 0.0,
        end: at,
        note: format!(
            "{} ({:.0} % of the unwrap)",
            seconds(at),
            100.0 * at / total
        ),
        color: GO,
    });
    let title = format!(
        "Where one unwrap's time goes: its primitives, medians end to end, {}",
        cpu(report)
    );
    Some(bar_chart(&title, &bars, false))
}

/// Latency percentiles of one unwrap, on a log time axis.
fn latency(report: &Value) -> Option<String> {
    let tail = report.get("unwrap_tail_latency")?;
    let pct = tail.get("percentiles_ns")?.as_object()?;
    let mut points: Vec<(String, f64)> = ["p50", "p95", "p99", "p99.9", "p100"]
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), pct.get(*k)?.as_f64()? * 1e-9)))
        .collect();
    points.retain(|p| p.1 > 0.0);
    if points.len() < 2 {
        return None;
    }
    let count = count(tail.get("unwraps").and_then(Value::as_u64).unwrap_or(0));
    let title = format!(
        "Latency of one unwrap over {count} unwraps (log scale; p100 is the slowest), {}",
        cpu(report)
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 420)).into_drawing_area();
        draw_latency(&root, &title, &points).ok()?;
    }
    Some(svg)
}

fn draw_latency(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    points: &[(String, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let lo = points.iter().map(|p| p.1).fold(f64::MAX, f64::min) * 0.8;
    let hi = points.iter().map(|p| p.1).fold(0.0, f64::max) * 2.0;
    let last = points.len() as i32 - 1;
    let mut chart = ChartBuilder::on(root)
        .caption(title, FONT)
        .margin(16)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..f64::from(last) + 0.5, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_labels(points.len())
        .y_labels(6)
        .max_light_lines(0)
        .x_label_formatter(&|x| {
            let i = x.round();
            points
                .get(i as usize)
                .filter(|_| (x - i).abs() < 1e-9 && i >= 0.0)
                .map_or_else(String::new, |p| p.0.clone())
        })
        .y_label_formatter(&|y| seconds(*y))
        .x_desc("percentile")
        .y_desc("time")
        .label_style(FONT)
        .draw()?;
    let xy = || points.iter().enumerate().map(|(i, p)| (i as f64, p.1));
    chart.draw_series(LineSeries::new(xy(), OURS.stroke_width(2)))?;
    chart.draw_series(xy().map(|p| Circle::new(p, 4, OURS.filled())))?;
    chart.draw_series(points.iter().enumerate().map(|(i, p)| {
        Text::new(
            format!("  {}: {}", p.0, seconds(p.1)),
            (i as f64, p.1),
            FONT,
        )
    }))?;
    root.present()?;
    Ok(())
}

/// Horizontal bars, one per row, each labelled on the left and annotated
/// at its end.
fn bar_chart(title: &str, bars: &[Bar], log: bool) -> String {
    let mut svg = String::new();
    {
        let height = 90 + ROW * bars.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        // Drawing into a String cannot fail but for bad ranges, which the
        // callers rule out.
        let _ = draw_bars(&root, title, bars, log);
    }
    svg
}

fn draw_bars(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    bars: &[Bar],
    log: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let rows = bars.len();
    let lo = bars
        .iter()
        .map(|b| b.end - b.start)
        .fold(f64::MAX, f64::min);
    let hi = bars.iter().map(|b| b.end).fold(0.0, f64::max);
    let (title_area, plot) = root.split_vertically(36);
    title_area.titled(title, FONT)?;
    let (labels, plot) = plot.split_horizontally(LABELS);
    // The row labels, right-aligned, drawn beside the chart: plotters' own
    // axis labels would need a category axis and truncate long names.
    let left = TextStyle::from(FONT).pos(Pos::new(HPos::Left, VPos::Center));
    let right = TextStyle::from(FONT).pos(Pos::new(HPos::Right, VPos::Center));
    let axis = 36;
    let plot_height = plot.dim_in_pixel().1 as f64 - f64::from(axis);
    for (i, b) in bars.iter().enumerate() {
        let cy = plot_height * (i as f64 + 0.5) / rows as f64;
        let at = (LABELS as i32 - 8, cy.round() as i32);
        labels.draw(&Text::new(b.label.clone(), at, right.clone()))?;
    }
    let (from, to) = if log {
        decades(lo, hi)
    } else {
        (0.0, hi * 1.05)
    };
    let builder = || {
        let mut b = ChartBuilder::on(&plot);
        b.margin_right(230).x_label_area_size(axis);
        b
    };
    if log {
        let chart = builder().build_cartesian_2d((from..to).log_scale(), 0.0..rows as f64)?;
        draw_rows(chart, bars, from, &left)?;
    } else {
        let chart = builder().build_cartesian_2d(from..to, 0.0..rows as f64)?;
        draw_rows(chart, bars, from, &left)?;
    }
    root.present()?;
    Ok(())
}

/// A log axis from whole decade to whole decade, three decades at least,
/// so that its labels are powers of ten and never crowd.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let mut from = 10f64.powf(lo.log10().floor());
    let to = 10f64.powf((hi * 1.5).log10().ceil());
    while to / from < 999.0 {
        from /= 10.0;
    }
    (from, to)
}

type Rows<'a, 'b, X> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>;

/// The x axis in time units (no horizontal grid), then each bar in its row
/// (with a gap above and below, from `floor` where it starts at zero) and
/// its note after it.
fn draw_rows<X>(
    mut chart: Rows<'_, '_, X>,
    bars: &[Bar],
    floor: f64,
    note: &TextStyle<'_>,
) -> Result<(), Box<dyn std::error::Error>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_label_formatter(&|x| seconds(*x))
        .label_style(FONT)
        .draw()?;
    let rows = bars.len();
    for (i, b) in bars.iter().enumerate() {
        let row = (rows - 1 - i) as f64;
        let start = b.start.max(floor);
        let rect = Rectangle::new([(start, row + 0.15), (b.end, row + 0.85)], b.color.filled());
        chart.draw_series([rect])?;
        let text = Text::new(format!(" {}", b.note), (b.end, row + 0.5), note.clone());
        chart.draw_series([text])?;
    }
    Ok(())
}

/// The CPU model a report was measured on, as the index shows it.
pub(crate) fn cpu(report: &Value) -> String {
    let env = report.get("environment");
    let model = env
        .and_then(|e| e.get("cpu"))
        .and_then(Value::as_str)
        .unwrap_or("unknown CPU");
    match env
        .and_then(|e| e.get("family_model"))
        .and_then(Value::as_str)
    {
        Some(fm) => format!("{model} ({fm})"),
        None => model.to_owned(),
    }
}
