//! Results of loggops-sim: statistics, costs, tables and output files.
//!
//! A *cell* is one point of a sweep (workload, system, node count, noise mode) with its Monte-Carlo
//! samples: the simulated schedule time of every repetition, in integer picoseconds. This crate
//! summarises the samples ([`Summary`]: mean, std, quantiles, confidence intervals, boxplot
//! whiskers; definitions in [`stats`]), compares them with the noiseless time (runtime inflation),
//! prices them the way the paper does ([`CostModel`], see [`cost`]), and renders a list of cells as
//! a human table, JSON or tidy CSV. Files are written atomically ([`write_atomic`]).
//!
//! It depends on no other loggops crate but `loggops-units` (times and sizes as text): callers
//! pass plain labels and sample vectors.
//!
//! ```
//! use loggops_report::{Cell, CostModel, Format, Labels};
//!
//! // Two cells of a sweep, with the noiseless time (20 us) as baseline.
//! let cost = CostModel::new(64).with_on_demand(1.73);
//! let os = Cell::new(
//!     Labels::new("dissemination 16B", "daint", 64, "os"),
//!     &[21_000_000, 22_000_000, 25_000_000, 21_500_000],
//!     Some(20_000_000),
//!     Some(&cost),
//! )?;
//! assert_eq!(os.summary.median, 21_750_000.0);
//! assert_eq!(os.inflation_mean(), Some(1.11875)); // mean 22.375us / 20us
//! let table = Format::Table.render_to_string(&[os]);
//! assert!(table.contains("21.75us"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Output formats
//!
//! * **Table** ([`render_table`]): aligned columns, every number with a unit (times via
//!   [`fmt_time_ps`], e.g. `2.50us`; USD as `$0.0123`; inflation as `1.93x`; cost increase as
//!   `+118.0%`).
//! * **JSON** ([`write_json`]): `{"schema": "loggops-report/cells/1", "cells": [...]}`, one object
//!   per cell whose keys are exactly [`CELL_COLUMNS`], in that order. Every time is an integer
//!   number of picoseconds (rounded half away from zero) in a key ending `_ps`; missing values are
//!   `null`.
//! * **CSV** ([`write_csv`]): a header row of [`CELL_COLUMNS`] and one row per cell; missing
//!   values are empty fields.
//! * **Samples CSV** ([`write_samples_csv`]): one row per repetition,
//!   `workload,system,nodes,noise_mode,rep,time_ps`, plus cost columns when a cost model is given.
//!
//! # Columns of the JSON and CSV outputs
//!
//! | key | meaning |
//! |---|---|
//! | `workload`, `system`, `nodes`, `noise_mode` | the cell's labels ([`Labels`]) |
//! | `n` | number of samples (repetitions) |
//! | `mean_ps`, `std_ps` | mean and sample standard deviation (`n-1`); `std_ps` null if `n < 2` |
//! | `min_ps`, `p1_ps`, `p5_ps`, `q1_ps`, `median_ps`, `q3_ps`, `p95_ps`, `p99_ps`, `max_ps` | order statistics; quantiles by numpy's default linear interpolation (type 7) |
//! | `mean_ci95_lo_ps`, `mean_ci95_hi_ps` | 95 % CI of the mean, Student t; null if `n < 2`; `lo` may be negative |
//! | `median_ci95_lo_ps`, `median_ci95_hi_ps`, `median_ci95_coverage` | distribution-free 95 % CI of the median (two order statistics) and its exact coverage; null if `n <= 5` |
//! | `notch_lo_ps`, `notch_hi_ps` | matplotlib's boxplot notch, `median ± 1.57 IQR/sqrt(n)` |
//! | `whisker_lo_ps`, `whisker_hi_ps` | boxplot whiskers, matplotlib's 1.5 IQR rule |
//! | `outliers_lo`, `outliers_hi` | samples below / above the whiskers |
//! | `noiseless_ps` | noiseless time of the same workload, system and nodes |
//! | `inflation_mean`, `inflation_median` | `mean / noiseless`, `median / noiseless` |
//! | `cost_nodes`, `extra_ps_per_run`, `comm_repeats` | the [`CostModel`] (null without one) |
//! | `run_mean_ps`, `run_noiseless_ps` | iteration time `comm_repeats * time + extra_ps_per_run`, mean and noiseless |
//! | `on_demand_usd_per_node_hour`, `on_demand_usd_per_run_mean`, `on_demand_usd_per_run_noiseless` | on-demand price and USD per run |
//! | `committed_usd_per_node_hour`, `committed_usd_per_run_mean`, `committed_usd_per_run_noiseless` | the same for the committed price |
//! | `cost_increase_pct_mean`, `cost_increase_pct_ci95_lo`, `cost_increase_pct_ci95_hi`, `cost_increase_pct_median` | cost increase over noiseless in percent, as in the paper's Figs. 16/17 (mean over samples), its 95 % CI, and that of the median run |

pub mod atomic;
pub mod cell;
pub mod cost;
pub mod csv;
pub mod fmt;
pub mod json;
mod record;
pub mod special;
pub mod stats;
pub mod table;
pub mod validation;

pub use atomic::write_atomic;
pub use cell::{Cell, CellError, CellSamples, Labels};
pub use cost::{CellCost, CostError, CostModel, PriceCost, SampleCost, PS_PER_HOUR};
pub use csv::{to_csv_string, write_csv, write_samples_csv};
pub use fmt::{fmt_bytes, fmt_pct, fmt_ratio, fmt_time_ps, fmt_time_ps_f64, fmt_usd};
pub use json::{to_json_string, to_json_string_with, write_json, write_json_with, JSON_SCHEMA};
pub use record::CELL_COLUMNS;
pub use stats::{precise, quantile_sorted, Interval, MedianCi, StatsError, Summary};
pub use table::{render_table, write_table};
pub use validation::{
    render_validation_table, tally, validation_csv, validation_json, Comparison, Stat, Tally,
};

use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;

/// Output format of the per-cell results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Aligned human-readable table (the default).
    #[default]
    Table,
    /// JSON document (see the crate docs).
    Json,
    /// Tidy CSV, one row per cell.
    Csv,
}

/// An unknown `--format` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown output format `{0}`: expected one of table, json, csv")]
pub struct ParseFormatError(pub String);

impl FromStr for Format {
    type Err = ParseFormatError;
    fn from_str(s: &str) -> Result<Format, ParseFormatError> {
        match s {
            "table" | "human" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            other => Err(ParseFormatError(other.to_string())),
        }
    }
}

impl Format {
    /// Writes the cells in this format.
    pub fn render<W: Write + ?Sized>(self, w: &mut W, cells: &[Cell]) -> io::Result<()> {
        match self {
            Format::Table => write_table(w, cells),
            Format::Json => write_json(w, cells),
            Format::Csv => write_csv(w, cells),
        }
    }

    /// The cells in this format, as a string.
    pub fn render_to_string(self, cells: &[Cell]) -> String {
        match self {
            Format::Table => render_table(cells),
            Format::Json => to_json_string(cells),
            Format::Csv => to_csv_string(cells),
        }
    }
}

/// Writes the cells to `path` in `format`, atomically.
pub fn write_report(path: impl AsRef<Path>, format: Format, cells: &[Cell]) -> io::Result<()> {
    write_atomic(path, |w| format.render(w, cells))
}

/// Writes the per-repetition samples CSV to `path`, atomically (see [`write_samples_csv`]).
pub fn write_samples(path: impl AsRef<Path>, groups: &[CellSamples<'_>]) -> io::Result<()> {
    write_atomic(path, |w| write_samples_csv(w, groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_parsing() {
        assert_eq!("json".parse(), Ok(Format::Json));
        assert_eq!("csv".parse(), Ok(Format::Csv));
        assert_eq!("human".parse(), Ok(Format::Table));
        assert_eq!(Format::default(), Format::Table);
        assert_eq!(
            "xml".parse::<Format>().unwrap_err().to_string(),
            "unknown output format `xml`: expected one of table, json, csv"
        );
    }
}
