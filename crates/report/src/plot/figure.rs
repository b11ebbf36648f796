//! The description of a figure, independent of the backend: sections of panels (boxes, bars
//! or curves) and the colour of each hue.

use plotters::prelude::*;

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

pub(super) fn hue_color(label: &str, index: usize) -> RGBColor {
    match label {
        "none" => GREY,
        "os" => PALETTE[0],
        "net" => PALETTE[1],
        "os+net" => PALETTE[5],
        _ => PALETTE[index % PALETTE.len()],
    }
}

pub(super) struct BoxItem {
    pub(super) nodes: u64,
    pub(super) hue: usize,
    /// Samples; a single run is drawn as a diamond.
    pub(super) n: usize,
    /// The noiseless time of the same workload, system and nodes (a dashed line).
    pub(super) noiseless: Option<f64>,
    pub(super) q1: f64,
    pub(super) median: f64,
    pub(super) q3: f64,
    pub(super) notch: (f64, f64),
    pub(super) whiskers: (f64, f64),
    pub(super) mean: f64,
    pub(super) outliers: Vec<f64>,
}

pub(super) struct BarItem {
    pub(super) nodes: u64,
    pub(super) hue: usize,
    pub(super) value: f64,
    pub(super) ci: Option<(f64, f64)>,
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

pub(super) enum Panel {
    Boxes { title: String, items: Vec<BoxItem> },
    Bars { title: String, items: Vec<BarItem> },
    Curves(CurvePanel),
}

pub(super) struct Section {
    pub(super) title: String,
    pub(super) hues: Vec<String>,
    pub(super) panels: Vec<Panel>,
}
