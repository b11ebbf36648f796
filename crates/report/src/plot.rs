//! Plots of a run, drawn with `plotters` into SVG or PNG.
//!
//! * **runtime** ([`PlotKind::Runtime`]): boxplots of the simulated time per node count, one
//!   panel per workload and system (hue: noise mode), or, when a run has one noise mode and
//!   several systems, one panel per workload (hue: system), as in the paper's Figs. 14 and 15.
//!   Boxes span the quartiles, notches the median's 95 % interval `median ± 1.57 IQR / sqrt(n)`,
//!   whiskers follow the 1.5 IQR rule and dots beyond them are the outliers, all as
//!   [`crate::Summary`] computes them; the white square is the mean, and a dashed line marks
//!   the noiseless time of the same workload, system and nodes. A cell of one run (noiseless)
//!   is a diamond, not a box. The time axis is logarithmic when the values span more than a
//!   factor of five.
//! * **cost** ([`PlotKind::Cost`]): the cost increase over the noiseless run against the node
//!   count (the paper's Figs. 16 and 17): bars of the mean, with its 95 % confidence interval
//!   and its value written at the bar (a bar too small to see is drawn two pixels high).
//! * **ecdf** ([`PlotKind::Ecdf`]): the empirical distribution function of the cells at the
//!   largest node count of each panel (left out when every cell is a single run).
//!
//! A partial result (interrupted, or a shard missing) carries a `PARTIAL RESULT` banner above
//! its plots. Section titles wrap to the figure's width.
//! * **all**: the three, one above the other.
//!
//! Node counts are on a logarithmic axis (log2). Text is set in DejaVu Sans, embedded in the
//! binary (`fonts/DejaVuSans.ttf`, licence in `fonts/LICENSE`), so PNG output needs no system
//! fonts, and set glyph by glyph with its side bearings and kerning ([`Typeset`]); SVG output
//! names the `sans-serif` family and lets the viewer draw the text.

use crate::cell::Cell;
use crate::fmt::fmt_pct;
use crate::model::RunResult;
use loggops_units::fmt_time_ps_f64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendColor, BackendCoord, DrawingErrorKind};
use std::path::Path;
use std::str::FromStr;
use std::sync::Once;

/// A plot that cannot be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot draw the plot: {0}")]
    Draw(String),
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}: the plot file must end in .svg or .png")]
    Extension(String),
    #[error("nothing to plot: {0}")]
    Empty(String),
}

/// Which figure to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotKind {
    /// Runtime, cost and ECDF figures, one above the other.
    All,
    Runtime,
    Cost,
    Ecdf,
}

impl PlotKind {
    pub const NAMES: &'static str = "all, runtime, cost, ecdf";
}

impl FromStr for PlotKind {
    type Err = String;
    fn from_str(s: &str) -> Result<PlotKind, String> {
        match s {
            "all" => Ok(PlotKind::All),
            "runtime" => Ok(PlotKind::Runtime),
            "cost" => Ok(PlotKind::Cost),
            "ecdf" => Ok(PlotKind::Ecdf),
            other => Err(format!(
                "unknown plot `{other}`: expected one of {}",
                PlotKind::NAMES
            )),
        }
    }
}

/// Reads `--plot [KIND=]FILE.svg|png` (KIND defaults to `all`).
pub fn parse_plot_arg(arg: &str) -> Result<(PlotKind, std::path::PathBuf), String> {
    let (kind, file) = match arg.split_once('=') {
        Some((k, f)) if !k.contains('/') => (k.parse()?, f),
        _ => (PlotKind::All, arg),
    };
    let path = std::path::PathBuf::from(file);
    match image_format(&path) {
        Some(_) => Ok((kind, path)),
        None => Err(format!(
            "{file}: a plot file must end in .svg or .png (e.g. runtime.svg, or cost=cost.png)"
        )),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ImageFormat {
    Svg,
    Png,
}

fn image_format(path: &Path) -> Option<ImageFormat> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => Some(ImageFormat::Svg),
        Some("png") => Some(ImageFormat::Png),
        _ => None,
    }
}

// --- figure description (independent of the backend) -------------------------------------------

/// A colour per hue: the Okabe–Ito palette (distinguishable with colour-blindness; a violet
/// instead of its black, on which the median line would vanish), grey for the noiseless mode.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(120, 94, 240),
];
const GREY: RGBColor = RGBColor(150, 150, 150);

fn hue_color(label: &str, index: usize) -> RGBColor {
    match label {
        "none" => GREY,
        "os" => PALETTE[0],
        "net" => PALETTE[1],
        "os+net" => PALETTE[5],
        _ => PALETTE[index % PALETTE.len()],
    }
}

struct BoxItem {
    nodes: u64,
    hue: usize,
    /// Samples; a single run is drawn as a diamond.
    n: usize,
    /// The noiseless time of the same workload, system and nodes (a dashed line).
    noiseless: Option<f64>,
    q1: f64,
    median: f64,
    q3: f64,
    notch: (f64, f64),
    whiskers: (f64, f64),
    mean: f64,
    outliers: Vec<f64>,
}

struct BarItem {
    nodes: u64,
    hue: usize,
    value: f64,
    ci: Option<(f64, f64)>,
}

/// One line of a curve panel: `(x, y)` points drawn in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// How the numbers of an axis are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisUnit {
    /// Picoseconds, written as times (`2.50us`).
    TimePs,
    /// Picoseconds per byte (`86ps/B`).
    PsPerByte,
    /// Plain numbers.
    Plain,
    /// A fraction in [0, 1], written as a percentage.
    Fraction,
}

/// A panel of lines (ECDFs, quantile functions).
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePanel {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_unit: AxisUnit,
    pub y_unit: AxisUnit,
    /// Logarithmic x axis (when the data span more than a factor of five).
    pub x_log: bool,
    /// Logarithmic y axis (tails: `1 − CDF`).
    pub y_log: bool,
    pub curves: Vec<Curve>,
}

enum Panel {
    Boxes { title: String, items: Vec<BoxItem> },
    Bars { title: String, items: Vec<BarItem> },
    Curves(CurvePanel),
}

struct Section {
    title: String,
    hues: Vec<String>,
    panels: Vec<Panel>,
}

/// How cells are grouped into panels, and what the hue is.
struct Grouping {
    /// `(panel title, cell indices)`.
    panels: Vec<(String, Vec<usize>)>,
    hues: Vec<String>,
    hue_of: Vec<usize>,
}

fn grouping(run: &RunResult, skip_none: bool) -> Grouping {
    let plan = &run.plan;
    let by_system = plan.noise_modes.len() == 1 && plan.systems.len() > 1;
    let keep = |i: usize| !(skip_none && run.cells[i].noise_mode == "none");
    let hues: Vec<String> = if by_system {
        plan.systems.iter().map(|s| s.name.clone()).collect()
    } else {
        plan.noise_modes
            .iter()
            .filter(|m| !(skip_none && m.as_str() == "none"))
            .cloned()
            .collect()
    };
    let hue_of: Vec<usize> = run
        .cells
        .iter()
        .map(|c| {
            let key = if by_system { &c.system } else { &c.noise_mode };
            hues.iter().position(|h| h == key).unwrap_or(0)
        })
        .collect();
    let mut panels: Vec<(String, Vec<usize>)> = Vec::new();
    for w in &plan.workloads {
        if by_system {
            let idx: Vec<usize> = (0..run.cells.len())
                .filter(|&i| run.cells[i].workload == w.name && keep(i))
                .collect();
            if !idx.is_empty() {
                panels.push((w.name.clone(), idx));
            }
        } else {
            for s in &plan.systems {
                let idx: Vec<usize> = (0..run.cells.len())
                    .filter(|&i| {
                        run.cells[i].workload == w.name && run.cells[i].system == s.name && keep(i)
                    })
                    .collect();
                if !idx.is_empty() {
                    // Without a profile there is one system, the flags' parameters.
                    let title = if s.profile.is_none() && plan.systems.len() == 1 {
                        w.name.clone()
                    } else {
                        format!("{} · {}", w.name, s.name)
                    };
                    panels.push((title, idx));
                }
            }
        }
    }
    Grouping {
        panels,
        hues,
        hue_of,
    }
}

fn runtime_section(run: &RunResult, stats: &[Cell]) -> Section {
    let g = grouping(run, false);
    let panels = g
        .panels
        .iter()
        .map(|(title, idx)| Panel::Boxes {
            title: title.clone(),
            items: idx
                .iter()
                .map(|&i| {
                    let s = &stats[i].summary;
                    let outliers = run.cells[i]
                        .samples_ps
                        .iter()
                        .map(|&t| t as f64)
                        .filter(|&t| t < s.whisker_lo || t > s.whisker_hi)
                        .collect();
                    let c = &run.cells[i];
                    BoxItem {
                        nodes: c.nodes,
                        hue: g.hue_of[i],
                        n: c.samples_ps.len(),
                        noiseless: c
                            .noiseless_ps
                            .filter(|_| c.noise_mode != "none")
                            .map(|t| t as f64),
                        q1: s.q1,
                        median: s.median,
                        q3: s.q3,
                        notch: (s.notch.lo, s.notch.hi),
                        whiskers: (s.whisker_lo, s.whisker_hi),
                        mean: s.mean,
                        outliers,
                    }
                })
                .collect(),
        })
        .collect();
    Section {
        title: if run.cells.iter().all(|c| c.samples_ps.len() == 1) {
            "Runtime per node count (one run per cell, noiseless: diamonds)".into()
        } else {
            "Runtime per node count (boxes: quartiles; notches: 95% CI of the median; \
             whiskers: 1.5 IQR; dots: outliers; white square: mean; dashed line: noiseless \
             time; diamond: a single run)"
                .into()
        },
        hues: g.hues,
        panels,
    }
}

fn cost_section(run: &RunResult, stats: &[Cell]) -> Section {
    let g = grouping(run, true);
    let panels = g
        .panels
        .iter()
        .map(|(title, idx)| Panel::Bars {
            title: title.clone(),
            items: idx
                .iter()
                .filter_map(|&i| {
                    let c = stats[i].cost.as_ref()?;
                    Some(BarItem {
                        nodes: run.cells[i].nodes,
                        hue: g.hue_of[i],
                        value: c.increase_pct_mean?,
                        ci: c.increase_pct_ci95.map(|ci| (ci.lo, ci.hi)),
                    })
                })
                .collect(),
        })
        .collect();
    Section {
        title: "Cost inflation: mean cost increase over the noiseless run (bars), with its 95% CI"
            .into(),
        hues: g.hues,
        panels,
    }
}

/// The ECDF of samples as a step line.
pub fn ecdf_points(samples: &[u64]) -> Vec<(f64, f64)> {
    let mut s: Vec<u64> = samples.to_vec();
    s.sort_unstable();
    let n = s.len() as f64;
    let mut pts = Vec::with_capacity(2 * s.len());
    for (i, &x) in s.iter().enumerate() {
        pts.push((x as f64, i as f64 / n));
        pts.push((x as f64, (i + 1) as f64 / n));
    }
    pts
}

fn spans(curves: &[Curve]) -> bool {
    let xs = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(x), b.max(x)));
    lo > 0.0 && hi / lo > 5.0
}

fn ecdf_section(run: &RunResult) -> Section {
    let g = grouping(run, false);
    let panels = g
        .panels
        .iter()
        .map(|(title, idx)| {
            let top = idx.iter().map(|&i| run.cells[i].nodes).max().unwrap_or(0);
            let curves: Vec<Curve> = idx
                .iter()
                .filter(|&&i| run.cells[i].nodes == top)
                .map(|&i| Curve {
                    label: g.hues[g.hue_of[i]].clone(),
                    points: ecdf_points(&run.cells[i].samples_ps),
                })
                .collect();
            Panel::Curves(CurvePanel {
                title: format!("{title} · {top} nodes"),
                x_desc: "time per run".into(),
                y_desc: "fraction of repetitions".into(),
                x_unit: AxisUnit::TimePs,
                y_unit: AxisUnit::Fraction,
                x_log: spans(&curves),
                y_log: false,
                curves,
            })
        })
        .collect();
    Section {
        title: "Distribution (ECDF) at the largest node count".into(),
        hues: g.hues,
        panels,
    }
}

// --- drawing ----------------------------------------------------------------------------------

const PANEL_W: u32 = 620;
const PANEL_H: u32 = 380;
/// A section title's first line; every further line adds [`TITLE_LINE_H`].
const SECTION_TITLE_H: u32 = 34;
const TITLE_LINE_H: u32 = 22;
const TITLE_SIZE: f64 = 17.0;
const LEGEND_H: u32 = 30;
/// The `PARTIAL RESULT` banner.
const BANNER_H: u32 = 36;
const FONT: &str = "sans-serif";

static FONT_INIT: Once = Once::new();

/// Registers the embedded font with plotters (once per process).
fn register_font() {
    FONT_INIT.call_once(|| {
        static BYTES: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
        // The font is part of the binary; if it did not parse, every text would be missing.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, BYTES);
    });
}

fn columns_for(panels: usize) -> usize {
    panels.clamp(1, 2)
}

/// The lines of a section's title in a figure `width` pixels wide.
fn title_lines(s: &Section, width: u32) -> Vec<String> {
    wrap(&s.title, TITLE_SIZE, width as f64 - 24.0)
}

fn section_height(s: &Section, width: u32) -> u32 {
    let cols = columns_for(s.panels.len());
    let rows = s.panels.len().div_ceil(cols).max(1);
    let extra = (title_lines(s, width).len() as u32 - 1) * TITLE_LINE_H;
    SECTION_TITLE_H + extra + LEGEND_H + rows as u32 * PANEL_H
}

fn figure_width(sections: &[Section]) -> u32 {
    let cols = sections
        .iter()
        .map(|s| columns_for(s.panels.len()))
        .max()
        .unwrap_or(1);
    cols as u32 * PANEL_W
}

fn figure_size(sections: &[Section], banner: bool) -> (u32, u32) {
    let w = figure_width(sections);
    let h: u32 = sections.iter().map(|s| section_height(s, w)).sum();
    (w, h.max(PANEL_H) + if banner { BANNER_H } else { 0 })
}

type DrawResult<T> = Result<T, PlotError>;

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
}

fn draw_figure<DB: DrawingBackend>(
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

/// An axis: its range and labelled points, possibly in log10 space.
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Axis {
    fn tf(&self, v: f64) -> f64 {
        if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        }
    }
    fn inv(&self, t: f64) -> f64 {
        if self.log {
            10f64.powf(t)
        } else {
            t
        }
    }

    /// An axis over the values `[lo, hi]` (with a margin), logarithmic when asked and the
    /// values are positive.
    fn new(lo: f64, hi: f64, log: bool, include_zero: bool) -> Axis {
        let (mut lo, mut hi) = (lo, hi);
        if include_zero {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if !(lo.is_finite() && hi.is_finite()) {
            (lo, hi) = (0.0, 1.0);
        }
        let log = log && lo > 0.0;
        if log {
            let (a, b) = (lo.log10(), hi.log10());
            let pad = ((b - a) * 0.06).max(0.02);
            let (a, b) = (a - pad, b + pad);
            Axis {
                log: true,
                lo: a,
                hi: b,
                ticks: log_ticks(a, b),
            }
        } else {
            if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
                let d = if hi == 0.0 { 1.0 } else { hi.abs() * 0.05 };
                lo -= d;
                hi += d;
            }
            let pad = (hi - lo) * 0.06;
            let a = if include_zero && lo >= 0.0 {
                lo
            } else {
                lo - pad
            };
            let b = hi + pad;
            Axis {
                log: false,
                lo: a,
                hi: b,
                ticks: linear_ticks(a, b),
            }
        }
    }
}

/// Ticks at 1, 2 and 5 times powers of ten between `lo` and `hi` (linear values).
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 7.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// Ticks of a log10 axis from `a` to `b` (exponents): powers of ten, with 2 and 5 between them
/// when the axis spans few decades.
fn log_ticks(a: f64, b: f64) -> Vec<f64> {
    let decades = b - a;
    let mults: &[f64] = if decades <= 1.2 {
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
    } else if decades <= 3.5 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    let mut e = a.floor();
    while e <= b.ceil() {
        for m in mults {
            let t = e + m.log10();
            if t >= a && t <= b {
                out.push(t);
            }
        }
        e += 1.0;
    }
    out
}

fn fmt_axis(unit: AxisUnit, v: f64) -> String {
    match unit {
        AxisUnit::TimePs => fmt_time_ps_f64(v),
        AxisUnit::PsPerByte => crate::fmt::fmt_per_byte((v * 1000.0).round() / 1000.0),
        AxisUnit::Plain => {
            let t = format!("{v:.3}");
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        AxisUnit::Fraction => {
            let pct = v * 100.0;
            if pct >= 1.0 || pct == 0.0 {
                format!("{pct:.0}%")
            } else {
                // 0.1%, 0.01%, 0.001%: enough decimals for the first digit.
                let decimals = (-pct.log10().floor()) as usize;
                format!("{pct:.decimals$}%")
            }
        }
    }
}

/// A linear f64 axis from `lo` to `hi` whose labels and grid lines are exactly `ticks` (the
/// caller's formatter writes them; logarithmic axes pass log values).
#[derive(Clone)]
struct Keyed {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

fn keyed(lo: f64, hi: f64, ticks: &[f64]) -> Keyed {
    Keyed {
        lo,
        hi,
        ticks: ticks.to_vec(),
    }
}

impl Ranged for Keyed {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        if self.hi == self.lo {
            return (limit.1 - limit.0) / 2;
        }
        let frac = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (frac * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The node-count axis: log2 of the node counts, labelled with the counts.
struct NodesAxis {
    positions: Vec<f64>,
    lo: f64,
    hi: f64,
    /// Width available to one node count's group.
    group: f64,
}

impl NodesAxis {
    fn new(nodes: impl Iterator<Item = u64>) -> NodesAxis {
        let mut pos: Vec<f64> = nodes.map(|n| (n.max(1) as f64).log2()).collect();
        pos.sort_by(f64::total_cmp);
        pos.dedup();
        let gap = pos
            .windows(2)
            .map(|w| w[1] - w[0])
            .fold(f64::INFINITY, f64::min);
        let gap = if gap.is_finite() { gap } else { 2.0 };
        let (lo, hi) = match (pos.first(), pos.last()) {
            (Some(&a), Some(&b)) => (a - 0.6 * gap, b + 0.6 * gap),
            _ => (0.0, 1.0),
        };
        NodesAxis {
            positions: pos,
            lo,
            hi,
            group: 0.8 * gap,
        }
    }
    fn x(&self, nodes: u64) -> f64 {
        (nodes.max(1) as f64).log2()
    }
    /// Centre of hue `h` of `hues` at `nodes`, and the slot width.
    fn slot(&self, nodes: u64, h: usize, hues: usize) -> (f64, f64) {
        let w = self.group / hues.max(1) as f64;
        (self.x(nodes) - self.group / 2.0 + w * (h as f64 + 0.5), w)
    }
}

fn label_nodes(u: f64) -> String {
    format!("{}", 2f64.powf(u).round() as u64)
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

// --- text in PNGs -----------------------------------------------------------------------------

static FONT_BYTES: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// The embedded font for measuring and setting text ourselves.
fn font() -> Option<ab_glyph::FontRef<'static>> {
    ab_glyph::FontRef::try_from_slice(FONT_BYTES).ok()
}

/// Width of `text` in pixels at `size` (plotters' size: pixels per line), with kerning.
fn text_width(text: &str, size: f64) -> f64 {
    use ab_glyph::{Font, ScaleFont};
    let Some(f) = font() else {
        return text.chars().count() as f64 * size * 0.55;
    };
    let f = f.as_scaled(size as f32);
    let mut w = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let g = f.glyph_id(c);
        if let Some(p) = prev {
            w += f.kern(p, g);
        }
        w += f.h_advance(g);
        prev = Some(g);
    }
    w as f64
}

/// The fewest decimals (at most 6) that write every tick exactly: ticks 0.25 apart need two
/// (`+0.25%`, `+0.75%`; one decimal wrote `+0.2%` and `+0.8%`).
fn tick_decimals(ticks: &[f64]) -> usize {
    (0..=6)
        .find(|&d| {
            let m = 10f64.powi(d as i32);
            ticks
                .iter()
                .all(|&v| ((v * m).round() / m - v).abs() <= 1e-9 * v.abs().max(1e-12))
        })
        .unwrap_or(6)
}

/// A percent tick with `decimals` decimals and its sign (`0%` unsigned).
fn pct_tick(v: f64, decimals: usize) -> String {
    if v == 0.0 {
        format!("{:.decimals$}%", 0.0)
    } else {
        format!("{v:+.decimals$}%")
    }
}

/// `text` broken into lines of at most `width` pixels at `size` (at word boundaries).
fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let trial = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && text_width(&trial, size) > width {
            lines.push(std::mem::take(&mut cur));
            cur = word.to_string();
        } else {
            cur = trial;
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A backend that sets text itself, glyph by glyph at its pen position with its side bearing
/// and kerning, and passes everything else on. plotters' own bitmap text drops the side
/// bearings (every glyph's ink starts at the pen), which spaced PNG text unevenly
/// (`+500. 0%`, `l og`).
struct Typeset<B>(B);

impl<B: DrawingBackend> DrawingBackend for Typeset<B> {
    type ErrorType = B::ErrorType;
    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }
    fn draw_text<TStyle: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        use ab_glyph::{point, Font, ScaleFont};
        let color = style.color();
        let Some(f) = font().filter(|_| color.alpha > 0.0) else {
            return self.0.draw_text(text, style, pos);
        };
        let size = style.size();
        let sf = f.as_scaled(size as f32);
        // The box plotters lays out: the advances' width, `size / 1.24` high, the baseline at
        // `size / 2` (as its own glyph placement has it).
        let width = text_width(text, size).round() as i32;
        let height = (size / 1.24) as i32;
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        let mut pen = 0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = sf.glyph_id(c);
            if let Some(p) = prev {
                pen += sf.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(sf.scale(), point(pen, size as f32 / 2.0));
            pen += sf.h_advance(id);
            let Some(outline) = f.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            let mut px = Vec::new();
            outline.draw(|x, y, cov| px.push((x, y, cov)));
            for (x, y, cov) in px {
                let (lx, ly) = (b.min.x as i32 + x as i32, b.min.y as i32 + y as i32);
                let (tx, ty) = trans.transform(lx + dx, ly + dy);
                let (x, y) = (pos.0 + tx, pos.1 + ty);
                if x >= 0 && y >= 0 && x < w as i32 && y < h as i32 && cov > 0.0 {
                    self.0.draw_pixel(
                        (x, y),
                        BackendColor {
                            alpha: color.alpha * cov.min(1.0) as f64,
                            rgb: color.rgb,
                        },
                    )?;
                }
            }
        }
        Ok(())
    }
}

// --- entry points -----------------------------------------------------------------------------

fn sections(run: &RunResult, kind: PlotKind) -> DrawResult<Vec<Section>> {
    if run.cells.is_empty() {
        return Err(PlotError::Empty("the run has no cells with samples".into()));
    }
    let stats = run
        .cells_summarised()
        .map_err(|e| PlotError::Draw(e.to_string()))?;
    let mut out = Vec::new();
    if matches!(kind, PlotKind::All | PlotKind::Runtime) {
        out.push(runtime_section(run, &stats));
    }
    if matches!(kind, PlotKind::All | PlotKind::Cost) {
        let s = cost_section(run, &stats);
        if !s.panels.is_empty() || kind == PlotKind::Cost {
            out.push(s);
        }
    }
    let distributions = run.cells.iter().any(|c| c.samples_ps.len() > 1);
    if matches!(kind, PlotKind::All | PlotKind::Ecdf) && (distributions || kind == PlotKind::Ecdf) {
        if !distributions {
            return Err(PlotError::Empty(
                "every cell is a single (noiseless) run: a distribution needs --noise".into(),
            ));
        }
        out.push(ecdf_section(run));
    }
    out.retain(|s| !s.panels.is_empty());
    if out.is_empty() {
        return Err(PlotError::Empty(
            "no noisy cell has a cost increase (run with --noise and --noise-mode)".into(),
        ));
    }
    Ok(out)
}

fn render(
    sections: &[Section],
    banner: Option<&str>,
    path: Option<&Path>,
) -> DrawResult<Option<String>> {
    register_font();
    let size = figure_size(sections, banner.is_some());
    match path.map(image_format) {
        None | Some(Some(ImageFormat::Svg)) => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                draw_figure(&root, sections, banner)?;
            }
            if let Some(p) = path {
                loggops_output::write_atomic(p, |w| w.write_all(svg.as_bytes())).map_err(
                    |source| PlotError::Io {
                        path: p.display().to_string(),
                        source,
                    },
                )?;
                return Ok(None);
            }
            Ok(Some(svg))
        }
        Some(Some(ImageFormat::Png)) => {
            let p = path.expect("a path");
            write_png(p, size, |root| draw_figure(root, sections, banner))?;
            Ok(None)
        }
        Some(None) => Err(PlotError::Extension(
            path.map(|p| p.display().to_string()).unwrap_or_default(),
        )),
    }
}

/// Draws into an RGB buffer, encodes it as PNG and writes the file through
/// [`loggops_output::write_atomic`] (like every other output).
fn write_png(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<Typeset<BitMapBackend<'_>>, Shift>) -> DrawResult<()>,
) -> DrawResult<()> {
    let io = |source: std::io::Error| PlotError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = Typeset(BitMapBackend::with_buffer(&mut rgb, size)).into_drawing_area();
        draw(&root)?;
    }
    let image = image::RgbImage::from_raw(size.0, size.1, rgb).expect("the buffer fits the size");
    let mut png = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut png, image::ImageOutputFormat::Png)
        .map_err(|e| io(std::io::Error::other(e)))?;
    loggops_output::write_atomic(path, |w| w.write_all(png.get_ref())).map_err(io)
}

/// The figure `kind` of `run` as an SVG document.
pub fn render_svg(run: &RunResult, kind: PlotKind) -> Result<String, PlotError> {
    let s = sections(run, kind)?;
    Ok(render(&s, banner(run).as_deref(), None)?.unwrap_or_default())
}

/// The `PARTIAL RESULT` banner of a partial run.
fn banner(run: &RunResult) -> Option<String> {
    if !run.is_partial() {
        return None;
    }
    let (complete, partial, missing) = run.cell_counts();
    let why = match run.status {
        crate::model::Status::Interrupted => "interrupted (Ctrl-C)",
        crate::model::Status::Complete => "incomplete",
    };
    Some(format!(
        "PARTIAL RESULT, {why}: {complete} cell(s) complete, {partial} cut short, {missing} \
         not run"
    ))
}

/// Writes the figure `kind` of `run` to `path` (`.svg` or `.png`), atomically.
pub fn write_plot(path: &Path, run: &RunResult, kind: PlotKind) -> Result<(), PlotError> {
    if image_format(path).is_none() {
        return Err(PlotError::Extension(path.display().to_string()));
    }
    let s = sections(run, kind)?;
    render(&s, banner(run).as_deref(), Some(path)).map(|_| ())
}

/// A figure of curve panels (e.g. a profile's distributions), `title` above them; written to
/// `path` (`.svg` or `.png`), or returned as SVG when `path` is `None`.
pub fn write_curves(
    path: Option<&Path>,
    title: &str,
    panels: Vec<CurvePanel>,
) -> Result<Option<String>, PlotError> {
    if panels.is_empty() {
        return Err(PlotError::Empty("no distributions to plot".into()));
    }
    let s = [Section {
        title: title.to_string(),
        hues: Vec::new(),
        panels: panels.into_iter().map(Panel::Curves).collect(),
    }];
    render(&s, None, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_arguments() {
        assert_eq!(
            parse_plot_arg("out.svg").unwrap(),
            (PlotKind::All, "out.svg".into())
        );
        assert_eq!(
            parse_plot_arg("cost=x/c.PNG").unwrap(),
            (PlotKind::Cost, "x/c.PNG".into())
        );
        assert_eq!(
            parse_plot_arg("dir=a/b.svg").unwrap_err(),
            "unknown plot `dir`: expected one of all, runtime, cost, ecdf"
        );
        assert_eq!(
            parse_plot_arg("out.pdf").unwrap_err(),
            "out.pdf: a plot file must end in .svg or .png (e.g. runtime.svg, or cost=cost.png)"
        );
        // A `=` after a `/` is part of the path.
        assert_eq!(
            parse_plot_arg("out/a=b.svg").unwrap(),
            (PlotKind::All, "out/a=b.svg".into())
        );
    }

    #[test]
    fn ticks() {
        assert_eq!(
            linear_ticks(0.0, 100.0),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        let t = log_ticks(6.0, 9.0);
        let back: Vec<f64> = t.iter().map(|e| (10f64.powf(*e)).round()).collect();
        assert_eq!(back, vec![1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9]);
    }

    /// Titles wrap inside a 620 px panel: no line wider than the figure.
    #[test]
    fn long_titles_wrap_inside_the_figure() {
        let title = "Runtime of ring_512MiB and dissemination_16B on aws, azure, gcp and \
                     alps at 4, 64, 1024 and 16384 nodes, every noise mode";
        let lines = wrap(title, TITLE_SIZE, PANEL_W as f64 - 24.0);
        assert!(lines.len() > 1, "{lines:?}");
        for l in &lines {
            assert!(text_width(l, TITLE_SIZE) <= PANEL_W as f64 - 24.0, "{l}");
        }
        assert_eq!(lines.join(" "), title);
    }

    /// PNG text is set glyph by glyph at its pen with its side bearing: every glyph's ink
    /// starts where the font puts it (within a pixel), so `+500.0%` has no gap after the
    /// point (plotters' own bitmap text started every glyph's ink at the pen).
    #[test]
    fn png_glyphs_sit_at_their_side_bearings() {
        use ab_glyph::{Font, ScaleFont};
        let (w, h) = (400u32, 80u32);
        let size = 40.0;
        let text = "+500.0%";
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let root = Typeset(BitMapBackend::with_buffer(&mut buf, (w, h))).into_drawing_area();
            root.draw_text(text, &(FONT, size).into_font().color(&BLACK), (10, 10))
                .unwrap();
            root.present().unwrap();
        }
        // Columns with ink, grouped into runs (one per glyph: none of these touch).
        let ink = |x: u32| (0..h).any(|y| buf[((y * w + x) * 3) as usize] < 128);
        let mut runs = Vec::new();
        let mut x = 0;
        while x < w {
            if ink(x) {
                let a = x;
                while x < w && ink(x) {
                    x += 1;
                }
                runs.push(a as f32);
            }
            x += 1;
        }
        // Where the font puts each glyph's ink.
        let f = font().unwrap();
        let sf = f.as_scaled(size as f32);
        let mut pen = 0f32;
        let mut prev = None;
        let mut want = Vec::new();
        for c in text.chars() {
            let id = sf.glyph_id(c);
            if let Some(p) = prev {
                pen += sf.kern(p, id);
            }
            prev = Some(id);
            want.push(10.0 + pen + sf.h_side_bearing(id));
            pen += sf.h_advance(id);
        }
        assert_eq!(runs.len(), want.len(), "{runs:?} against {want:?}");
        for (got, want) in runs.iter().zip(&want) {
            assert!((got - want).abs() <= 1.5, "{runs:?} against {want:?}");
        }
    }

    /// Tail panels (`1 − CDF`, log y) label small probabilities with their first digit.
    #[test]
    fn small_fractions_keep_a_digit() {
        assert_eq!(fmt_axis(AxisUnit::Fraction, 0.5), "50%");
        assert_eq!(fmt_axis(AxisUnit::Fraction, 0.001), "0.1%");
        assert_eq!(fmt_axis(AxisUnit::Fraction, 0.00001), "0.001%");
        assert_eq!(fmt_axis(AxisUnit::Fraction, 0.0), "0%");
    }

    #[test]
    fn percent_ticks_are_exact() {
        let t = [0.0, 0.25, 0.5, 0.75, 1.0];
        let d = tick_decimals(&t);
        let l: Vec<String> = t.iter().map(|&v| pct_tick(v, d)).collect();
        assert_eq!(l, ["0.00%", "+0.25%", "+0.50%", "+0.75%", "+1.00%"]);
        assert_eq!(tick_decimals(&[-10.0, 0.0, 10.0, 20.0]), 0);
        assert_eq!(tick_decimals(&[-0.02, 0.0, 0.02]), 2);
    }

    #[test]
    fn ecdf_steps() {
        assert_eq!(
            ecdf_points(&[3, 1]),
            vec![(1.0, 0.0), (1.0, 0.5), (3.0, 0.5), (3.0, 1.0)]
        );
    }
}
