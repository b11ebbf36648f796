//! Drawing a figure with plotters on any backend: the banner, section titles and legends, and
//! the panels (boxes, bars, curves) with their axes.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{fmt_axis, keyed, label_nodes, pct_tick, tick_decimals, Axis, Keyed, NodesAxis};
use super::figure::{hue_color, AxisUnit, BarItem, BoxItem, CurvePanel, Panel, Section};
use super::layout::{
    columns_for, figure_width, section_height, title_lines, BANNER_H, LEGEND_H, PANEL_H,
    SECTION_TITLE_H, TITLE_LINE_H, TITLE_SIZE,
};
use super::text::{text_width, FONT};
use super::{err, DrawResult};
use crate::fmt::fmt_pct;

pub(super) fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    sections: &[Section],
    banner: Option<&str>,
) -> DrawResult<()> {
    root.fill(&WHITE).map_err(err)?;
    let mut rest = root.clone();
    if let Some(text) = banner {
        let (area, below) = rest.split_vertically(BANNER_H);
        rest = below;
        area.fill(&RGBColor(255, 243, 205)).map_err(err)?;
        area.draw(&Text::new(
            text.to_string(),
            (12, 9),
            (FONT, 16).into_font().color(&RGBColor(150, 0, 0)),
        ))
        .map_err(err)?;
    }
    let width = figure_width(sections);
    for s in sections {
        let (area, below) = rest.split_vertically(section_height(s, width));
        rest = below;
        draw_section(&area, s, width)?;
    }
    root.present().map_err(err)
}

fn draw_section<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &Section,
    width: u32,
) -> DrawResult<()> {
    let lines = title_lines(s, width);
    let title_h = SECTION_TITLE_H + (lines.len() as u32 - 1) * TITLE_LINE_H;
    let (head, body) = area.split_vertically(title_h + LEGEND_H);
    for (k, line) in lines.iter().enumerate() {
        head.draw(&Text::new(
            line.clone(),
            (12, 8 + k as i32 * TITLE_LINE_H as i32),
            (FONT, TITLE_SIZE).into_font().color(&BLACK),
        ))
        .map_err(err)?;
    }
    // Legend: a coloured square and the hue's name for each hue.
    let mut x = 14;
    let y = title_h as i32 + 4;
    let style = (FONT, 14).into_font().color(&BLACK);
    for (i, h) in s.hues.iter().enumerate() {
        let c = hue_color(h, i);
        head.draw(&Rectangle::new([(x, y), (x + 14, y + 14)], c.filled()))
            .map_err(err)?;
        head.draw(&Text::new(h.clone(), (x + 20, y), style.clone()))
            .map_err(err)?;
        let (w, _) = head.estimate_text_size(h, &style).map_err(err)?;
        x += 20 + w as i32 + 24;
    }
    let cols = columns_for(s.panels.len());
    let rows = s.panels.len().div_ceil(cols).max(1);
    let cells = body.split_evenly((rows, cols));
    for (p, a) in s.panels.iter().zip(cells.iter()) {
        match p {
            Panel::Boxes { title, items } => draw_boxes(a, title, items, &s.hues)?,
            Panel::Bars { title, items } => draw_bars(a, title, items, &s.hues)?,
            // Without section hues (a profile's distributions) each panel has its own legend.
            Panel::Curves(c) => {
                draw_curves(a, c, (!s.hues.is_empty()).then_some(s.hues.as_slice()))?
            }
        }
    }
    Ok(())
}
/// What a panel's axes say.
struct AxesText<'a> {
    x_desc: &'a str,
    y_desc: &'a str,
    x_fmt: &'a dyn Fn(&f64) -> String,
    y_fmt: &'a dyn Fn(&f64) -> String,
    /// Vertical grid lines (off for node counts, whose groups stand between them).
    x_grid: bool,
}

/// A panel's chart with its caption, axes, labels and grid drawn.
fn panel_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    x: Keyed,
    y: Keyed,
    text: AxesText<'_>,
) -> DrawResult<ChartContext<'a, DB, Cartesian2d<Keyed, Keyed>>> {
    // A caption wider than the panel is set smaller (down to 11 px) and then cut.
    let room = area.dim_in_pixel().0 as f64 - 24.0;
    let mut size = 16.0;
    while size > 11.0 && text_width(title, size) > room {
        size -= 1.0;
    }
    let mut title = title.to_string();
    while text_width(&title, size) > room && title.chars().count() > 4 {
        title.pop();
        while title.ends_with(' ') {
            title.pop();
        }
        title = format!("{}…", title.trim_end_matches('…'));
    }
    let mut chart = ChartBuilder::on(area)
        .caption(&title, (FONT, size).into_font().color(&BLACK))
        .margin(10)
        .margin_right(22)
        .x_label_area_size(46)
        .y_label_area_size(78)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    if !text.x_grid {
        mesh.disable_x_mesh();
    }
    mesh.light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .x_labels(64)
        .y_labels(64)
        .x_label_formatter(text.x_fmt)
        .y_label_formatter(text.y_fmt)
        .x_desc(text.x_desc)
        .y_desc(text.y_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

fn draw_boxes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    items: &[BoxItem],
    hues: &[String],
) -> DrawResult<()> {
    let xa = NodesAxis::new(items.iter().map(|b| b.nodes));
    let vals = items.iter().flat_map(|b| {
        [b.whiskers.0, b.whiskers.1, b.q1, b.q3, b.mean]
            .into_iter()
            .chain(b.noiseless)
            .chain(b.outliers.iter().copied())
    });
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let ya = Axis::new(lo, hi, lo > 0.0 && hi / lo > 5.0, false);
    let yfmt = |t: &f64| fmt_axis(AxisUnit::TimePs, ya.inv(*t));
    let mut chart = panel_chart(
        area,
        title,
        keyed(xa.lo, xa.hi, &xa.positions),
        keyed(ya.lo, ya.hi, &ya.ticks),
        AxesText {
            x_desc: "nodes (log scale)",
            y_desc: if ya.log {
                "time per run (log scale)"
            } else {
                "time per run"
            },
            x_fmt: &|u| label_nodes(*u),
            y_fmt: &yfmt,
            x_grid: false,
        },
    )?;
    for b in items {
        let c = hue_color(&hues[b.hue], b.hue);
        let (cx, w) = xa.slot(b.nodes, b.hue, hues.len());
        let half = w * 0.4;
        let (x0, x1) = (cx - half, cx + half);
        let y = |v: f64| ya.tf(v);
        if let Some(t) = b.noiseless {
            // Dashed: ten dashes across the slot.
            let (yt, step) = (y(t), 2.0 * half / 19.0);
            chart
                .draw_series((0..10).map(|k| {
                    let a = x0 + 2.0 * k as f64 * step;
                    PathElement::new(vec![(a, yt), (a + step, yt)], BLACK.stroke_width(2))
                }))
                .map_err(err)?;
        }
        if b.n == 1 {
            // One run: a diamond at its time, no box.
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((cx, y(b.median)))
                        + Polygon::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0)], c.filled()),
                ))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((cx, y(b.median)))
                        + PathElement::new(
                            vec![(0, -7), (7, 0), (0, 7), (-7, 0), (0, -7)],
                            BLACK.stroke_width(1),
                        ),
                ))
                .map_err(err)?;
            continue;
        }
        let (q1, q3, med) = (y(b.q1), y(b.q3), y(b.median));
        let nlo = y(b.notch.0.max(b.q1));
        let nhi = y(b.notch.1.min(b.q3));
        let ind = half * 0.45;
        let outline = vec![
            (x0, q1),
            (x1, q1),
            (x1, nlo),
            (x1 - ind, med),
            (x1, nhi),
            (x1, q3),
            (x0, q3),
            (x0, nhi),
            (x0 + ind, med),
            (x0, nlo),
        ];
        let fill = c.mix(0.55);
        chart
            .draw_series(std::iter::once(Polygon::new(
                outline.clone(),
                fill.filled(),
            )))
            .map_err(err)?;
        let mut closed = outline;
        closed.push((x0, q1));
        let edge = c.stroke_width(1);
        chart
            .draw_series(std::iter::once(PathElement::new(closed, edge)))
            .map_err(err)?;
        let dark = BLACK.stroke_width(2);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x0 + ind, med), (x1 - ind, med)],
                dark,
            )))
            .map_err(err)?;
        // Whiskers with caps.
        let cap = half * 0.5;
        for (from, to) in [(b.q3, b.whiskers.1), (b.q1, b.whiskers.0)] {
            let (f, t) = (y(from), y(to));
            chart
                .draw_series([
                    PathElement::new(vec![(cx, f), (cx, t)], c.stroke_width(1)),
                    PathElement::new(vec![(cx - cap, t), (cx + cap, t)], c.stroke_width(1)),
                ])
                .map_err(err)?;
        }
        // Mean: a small white square; outliers: small dots.
        let m = y(b.mean);
        chart
            .draw_series(
                std::iter::once(
                    EmptyElement::at((cx, m)) + Rectangle::new([(-3, -3), (3, 3)], WHITE.filled()),
                )
                .chain(std::iter::once(
                    EmptyElement::at((cx, m))
                        + Rectangle::new([(-3, -3), (3, 3)], BLACK.stroke_width(1)),
                )),
            )
            .map_err(err)?;
        chart
            .draw_series(
                b.outliers
                    .iter()
                    .map(|&o| Circle::new((cx, y(o)), 2, BLACK.mix(0.7).filled())),
            )
            .map_err(err)?;
    }
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    items: &[BarItem],
    hues: &[String],
) -> DrawResult<()> {
    let xa = NodesAxis::new(items.iter().map(|b| b.nodes));
    let vals = items.iter().flat_map(|b| {
        [Some(b.value), b.ci.map(|c| c.0), b.ci.map(|c| c.1)]
            .into_iter()
            .flatten()
    });
    let (lo, hi) = vals.fold((0f64, 0f64), |(a, b), v| (a.min(v), b.max(v)));
    // Room for the values written at the bars' ends.
    let pad = (hi - lo).max(f64::MIN_POSITIVE) * 0.08;
    let ya = Axis::new(
        if lo < 0.0 { lo - pad } else { lo },
        if hi > 0.0 { hi + pad } else { hi },
        false,
        true,
    );
    let decimals = tick_decimals(&ya.ticks);
    let mut chart = panel_chart(
        area,
        title,
        keyed(xa.lo, xa.hi, &xa.positions),
        keyed(ya.lo, ya.hi, &ya.ticks),
        AxesText {
            x_desc: "nodes (log scale)",
            y_desc: "cost increase over noiseless",
            x_fmt: &|u| label_nodes(*u),
            y_fmt: &|v| pct_tick(*v, decimals),
            x_grid: false,
        },
    )?;
    // Two pixels of the plot's height (about PANEL_H - 110 pixels), the least a bar is drawn.
    let least = (ya.hi - ya.lo) * 2.0 / (PANEL_H as f64 - 110.0);
    for b in items {
        let c = hue_color(&hues[b.hue], b.hue);
        let (cx, w) = xa.slot(b.nodes, b.hue, hues.len());
        let half = w * 0.42;
        let top = if b.value.abs() < least {
            if b.value < 0.0 {
                -least
            } else {
                least
            }
        } else {
            b.value
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(cx - half, 0.0), (cx + half, top)],
                c.mix(0.8).filled(),
            )))
            .map_err(err)?;
        // The value, beside the bar's end (above a rising bar, below a falling one).
        let label = fmt_pct(b.value);
        let anchor = if b.value < 0.0 {
            Pos::new(HPos::Left, VPos::Top)
        } else {
            Pos::new(HPos::Left, VPos::Bottom)
        };
        let offset = if b.value < 0.0 { 3 } else { -3 };
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((cx + half * 0.1, top))
                    + Text::new(
                        label,
                        (2, offset),
                        (FONT, 12).into_font().color(&BLACK).pos(anchor),
                    ),
            ))
            .map_err(err)?;
        if let Some((l, h)) = b.ci {
            let cap = half * 0.4;
            chart
                .draw_series([
                    PathElement::new(vec![(cx, l), (cx, h)], BLACK.stroke_width(2)),
                    PathElement::new(vec![(cx - cap, h), (cx + cap, h)], BLACK.stroke_width(2)),
                    PathElement::new(vec![(cx - cap, l), (cx + cap, l)], BLACK.stroke_width(2)),
                ])
                .map_err(err)?;
        }
    }
    Ok(())
}

fn draw_curves<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &CurvePanel,
    hues: Option<&[String]>,
) -> DrawResult<()> {
    let pts = || p.curves.iter().flat_map(|c| c.points.iter());
    let (xlo, xhi) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), q| {
        (a.min(q.0), b.max(q.0))
    });
    let (ylo, yhi) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), q| {
        (a.min(q.1), b.max(q.1))
    });
    let xa = Axis::new(xlo, xhi, p.x_log, false);
    let ya = if p.y_log {
        Axis::new(ylo.max(f64::MIN_POSITIVE), yhi, true, false)
    } else if p.y_unit == AxisUnit::Fraction {
        Axis {
            log: false,
            lo: 0.0,
            hi: 1.0,
            ticks: vec![0.0, 0.25, 0.5, 0.75, 1.0],
        }
    } else {
        Axis::new(ylo, yhi, false, false)
    };
    let xfmt = |t: &f64| fmt_axis(p.x_unit, xa.inv(*t));
    let yfmt = |t: &f64| fmt_axis(p.y_unit, ya.inv(*t));
    let x_desc = if xa.log {
        format!("{} (log scale)", p.x_desc)
    } else {
        p.x_desc.clone()
    };
    let y_desc = if ya.log {
        format!("{} (log scale)", p.y_desc)
    } else {
        p.y_desc.clone()
    };
    let mut chart = panel_chart(
        area,
        &p.title,
        keyed(xa.lo, xa.hi, &xa.ticks),
        keyed(ya.lo, ya.hi, &ya.ticks),
        AxesText {
            x_desc: &x_desc,
            y_desc: &y_desc,
            x_fmt: &xfmt,
            y_fmt: &yfmt,
            x_grid: true,
        },
    )?;
    for (i, c) in p.curves.iter().enumerate() {
        let hue = hues
            .and_then(|h| h.iter().position(|x| *x == c.label))
            .unwrap_or(i);
        let color = hue_color(&c.label, hue);
        // Earlier curves wider, so that one drawn on top of an equal one leaves it visible.
        let width = (2 + 2 * (p.curves.len() - 1 - i)) as u32;
        let series = chart
            .draw_series(std::iter::once(PathElement::new(
                c.points
                    .iter()
                    .map(|&(x, y)| (xa.tf(x), ya.tf(y)))
                    .collect::<Vec<_>>(),
                color
                    .mix(if i + 1 < p.curves.len() { 0.6 } else { 1.0 })
                    .stroke_width(width),
            )))
            .map_err(err)?;
        if hues.is_none() {
            series.label(c.label.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
            });
        }
    }
    if hues.is_none() && !p.curves.is_empty() {
        chart
            .configure_series_labels()
            // A tail falls to the lower right: its legend goes above it.
            .position(if p.y_log {
                SeriesLabelPosition::UpperRight
            } else {
                SeriesLabelPosition::LowerRight
            })
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font((FONT, 13))
            .draw()
            .map_err(err)?;
    }
    Ok(())
}
