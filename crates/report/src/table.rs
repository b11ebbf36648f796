//! The human-readable table: aligned columns, a unit on every number.
//!
//! Columns: `workload system nodes noise n mean ±ci95 median median-ci95 p95 p99 max outliers
//! x-mean x-median $/run-od $/run-cm cost+`. Optional columns (`±ci95`, `median-ci95`,
//! inflation, the two prices, `cost+`) are left out when no cell has a value for them. `±ci95` is
//! the half-width of the mean's 95 % CI, `x-mean`/`x-median` the inflation over noiseless, `cost+`
//! the mean cost increase over noiseless.

use crate::cell::Cell;
use crate::fmt::{fmt_pct, fmt_ratio, fmt_time_ps, fmt_time_ps_f64, fmt_usd};
use std::io::{self, Write};

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// One column of an aligned table: a title and one optional text per row (`-` when absent).
pub(crate) struct Column {
    pub(crate) title: &'static str,
    pub(crate) align: Align,
    pub(crate) cells: Vec<Option<String>>,
}

impl Column {
    pub(crate) fn new(title: &'static str, align: Align, cells: Vec<Option<String>>) -> Column {
        Column {
            title,
            align,
            cells,
        }
    }
}

/// Renders the cells as an aligned text table (header, rule, one line per cell).
pub fn render_table(cells: &[Cell]) -> String {
    let col = |title, align, f: &dyn Fn(&Cell) -> Option<String>| {
        Column::new(title, align, cells.iter().map(f).collect())
    };
    use Align::{Left, Right};
    let columns = vec![
        col("workload", Left, &|c| Some(c.labels.workload.clone())),
        col("system", Left, &|c| Some(c.labels.system.clone())),
        col("nodes", Right, &|c| Some(c.labels.nodes.to_string())),
        col("noise", Left, &|c| Some(c.labels.noise_mode.clone())),
        col("n", Right, &|c| Some(c.summary.n.to_string())),
        col("mean", Right, &|c| Some(fmt_time_ps_f64(c.summary.mean))),
        col("±ci95", Right, &|c| {
            c.summary
                .mean_ci95
                .map(|i| format!("±{}", fmt_time_ps_f64(i.half_width())))
        }),
        col("median", Right, &|c| {
            Some(fmt_time_ps_f64(c.summary.median))
        }),
        col("median-ci95", Right, &|c| {
            c.summary
                .median_ci95
                .map(|m| format!("{}..{}", fmt_time_ps(m.lo), fmt_time_ps(m.hi)))
        }),
        col("p95", Right, &|c| Some(fmt_time_ps_f64(c.summary.p95))),
        col("p99", Right, &|c| Some(fmt_time_ps_f64(c.summary.p99))),
        col("max", Right, &|c| Some(fmt_time_ps(c.summary.max))),
        col("outliers", Right, &|c| {
            Some(c.summary.outliers().to_string())
        }),
        col("x-mean", Right, &|c| c.inflation_mean().map(fmt_ratio)),
        col("x-median", Right, &|c| c.inflation_median().map(fmt_ratio)),
        col("$/run-od", Right, &|c| {
            c.cost
                .as_ref()
                .and_then(|k| k.on_demand.as_ref())
                .map(|p| fmt_usd(p.usd_per_run_mean))
        }),
        col("$/run-cm", Right, &|c| {
            c.cost
                .as_ref()
                .and_then(|k| k.committed.as_ref())
                .map(|p| fmt_usd(p.usd_per_run_mean))
        }),
        col("cost+", Right, &|c| {
            c.cost
                .as_ref()
                .and_then(|k| k.increase_pct_mean)
                .map(fmt_pct)
        }),
    ];
    const ALWAYS: [&str; 11] = [
        "workload", "system", "nodes", "noise", "n", "mean", "median", "p95", "p99", "max",
        "outliers",
    ];
    let columns: Vec<Column> = columns
        .into_iter()
        .filter(|c| ALWAYS.contains(&c.title) || c.cells.iter().any(Option::is_some))
        .collect();
    layout(&columns, cells.len())
}

/// The columns as aligned text: the titles, a rule, then `rows` lines.
pub(crate) fn layout(columns: &[Column], rows: usize) -> String {
    let widths: Vec<usize> = columns
        .iter()
        .map(|c| {
            c.cells
                .iter()
                .map(|v| v.as_deref().unwrap_or("-").chars().count())
                .chain(std::iter::once(c.title.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();

    let mut out = String::new();
    let line = |out: &mut String, texts: &mut dyn Iterator<Item = &str>| {
        let mut parts = Vec::new();
        for ((text, col), &w) in texts.zip(columns).zip(&widths) {
            let pad = w - text.chars().count();
            parts.push(match col.align {
                Align::Left => format!("{text}{}", " ".repeat(pad)),
                Align::Right => format!("{}{text}", " ".repeat(pad)),
            });
        }
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut out, &mut columns.iter().map(|c| c.title));
    let rules: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&mut out, &mut rules.iter().map(String::as_str));
    for row in 0..rows {
        line(
            &mut out,
            &mut columns
                .iter()
                .map(|c| c.cells[row].as_deref().unwrap_or("-")),
        );
    }
    out
}

/// Writes [`render_table`] to `w`.
pub fn write_table<W: Write + ?Sized>(w: &mut W, cells: &[Cell]) -> io::Result<()> {
    w.write_all(render_table(cells).as_bytes())
}
