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
//! fonts, and set glyph by glyph with its side bearings and kerning
//! ([`Typeset`](text::Typeset)); SVG output names the `sans-serif` family and lets the viewer
//! draw the text.
//!
//! Files, one concern each: `figure` (what a figure shows, independent of the backend), `data`
//! (a run's cells prepared per plot kind), `layout` (the figure's geometry), `axis` (ranges,
//! ticks and their labels), `draw` (panels drawn with plotters), `text` (the embedded font and
//! PNG typesetting), `output` (SVG and PNG files).

use std::str::FromStr;

mod axis;
mod data;
mod draw;
mod figure;
mod layout;
mod output;
#[cfg(test)]
mod tests;
mod text;

pub use data::ecdf_points;
pub use figure::{AxisUnit, Curve, CurvePanel};
pub use output::{check_plot, render_svg, write_curves, write_plot};

use output::image_format;

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
type DrawResult<T> = Result<T, PlotError>;

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
}
