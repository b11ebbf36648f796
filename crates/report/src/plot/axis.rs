//! Axes: value ranges (linear or log10), their ticks, and how tick labels are written (times,
//! percentages, node counts).

use loggops_units::fmt_time_ps_f64;
use plotters::prelude::*;

use super::figure::AxisUnit;

/// An axis: its range and labelled points, possibly in log10 space.
pub(super) struct Axis {
    pub(super) log: bool,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<f64>,
}

impl Axis {
    pub(super) fn tf(&self, v: f64) -> f64 {
        if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        }
    }
    pub(super) fn inv(&self, t: f64) -> f64 {
        if self.log {
            10f64.powf(t)
        } else {
            t
        }
    }

    /// An axis over the values `[lo, hi]` (with a margin), logarithmic when asked and the
    /// values are positive.
    pub(super) fn new(lo: f64, hi: f64, log: bool, include_zero: bool) -> Axis {
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
pub(super) fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
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
pub(super) fn log_ticks(a: f64, b: f64) -> Vec<f64> {
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

pub(super) fn fmt_axis(unit: AxisUnit, v: f64) -> String {
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
pub(super) struct Keyed {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

pub(super) fn keyed(lo: f64, hi: f64, ticks: &[f64]) -> Keyed {
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
pub(super) struct NodesAxis {
    pub(super) positions: Vec<f64>,
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// Width available to one node count's group.
    group: f64,
}

impl NodesAxis {
    pub(super) fn new(nodes: impl Iterator<Item = u64>) -> NodesAxis {
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
    pub(super) fn slot(&self, nodes: u64, h: usize, hues: usize) -> (f64, f64) {
        let w = self.group / hues.max(1) as f64;
        (self.x(nodes) - self.group / 2.0 + w * (h as f64 + 0.5), w)
    }
}

pub(super) fn label_nodes(u: f64) -> String {
    format!("{}", 2f64.powf(u).round() as u64)
}
/// The fewest decimals (at most 6) that write every tick exactly: ticks 0.25 apart need two
/// (`+0.25%`, `+0.75%`; one decimal wrote `+0.2%` and `+0.8%`).
pub(super) fn tick_decimals(ticks: &[f64]) -> usize {
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
pub(super) fn pct_tick(v: f64, decimals: usize) -> String {
    if v == 0.0 {
        format!("{:.decimals$}%", 0.0)
    } else {
        format!("{v:+.decimals$}%")
    }
}
