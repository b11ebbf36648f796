//! Results of loggops-sim: the result model, statistics, costs, and every way to show them.
//!
//! A *cell* is one point of a sweep (workload, system, node count, noise mode) with its Monte-Carlo
//! samples: the simulated schedule time of every repetition, in integer picoseconds. A run's
//! result is a [`RunResult`] ([`model`]): the plan (workloads × systems × node counts × noise
//! modes, and the settings they share: parameters near and far, seed, repetition rule, profile
//! name, path and SHA-256, tool and schema version) and one [`CellResult`] per cell. This crate
//! summarises the samples ([`Summary`]: mean, std, quantiles, confidence intervals, boxplot
//! whiskers; definitions in [`stats`]), compares them with the noiseless time (runtime inflation),
//! prices them the way the paper does ([`CostModel`], see [`cost`]), and renders a run as a human
//! table with its settings below it, JSON, tidy CSV, a samples CSV, plots ([`plot`]: SVG or PNG)
//! and a self-contained HTML report ([`html`]). Every renderer takes only the [`RunResult`].
//! Files are written atomically (`loggops_output::write_atomic`).
//!
//! It depends on no other loggops crate but `loggops-units` (times and sizes as text): callers
//! pass plain labels and sample vectors.
//!
//! ```
//! use loggops_report::{Cell, CostModel, Labels};
//!
//! // One cell of a sweep, with the noiseless time (20 us) as baseline.
//! let cost = CostModel::new(64).with_on_demand(1.73);
//! let os = Cell::new(
//!     Labels::new("dissemination 16B", "daint", 64, "os"),
//!     &[21_000_000, 22_000_000, 25_000_000, 21_500_000],
//!     Some(20_000_000),
//!     Some(&cost),
//! )?;
//! assert_eq!(os.summary.median, 21_750_000.0);
//! assert_eq!(os.inflation_mean(), Some(1.11875)); // mean 22.375us / 20us
//! let table = loggops_report::render_table(&[os]);
//! assert!(table.contains("21.75us"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Output formats
//!
//! * **Table** ([`render_run_table`]): aligned columns, every number with a unit (times via
//!   [`fmt_time_ps`], e.g. `2.50us`; USD as people write them, [`fmt_usd`]: `$0.0042`, `$12.3k`;
//!   inflation as `1.93x`; cost increase as `+118.0%`), then the settings ([`render_footer`]).
//!   The columns are explained in [`guide::TABLE_COLUMNS`].
//! * **JSON** ([`write_run_json`]): the [`RunResult`] itself (see [`json`]); each cell also has
//!   the keys of [`CELL_COLUMNS`]. Every time is an integer number of picoseconds (rounded half
//!   away from zero) in a key ending `_ps`; missing values are `null`.
//! * **CSV** ([`write_run_csv`]): a header row of [`CELL_COLUMNS`] and [`RUN_COLUMNS`] and one row
//!   per cell; missing values are empty fields. Noiseless and noisy runs have the same columns.
//! * **Samples CSV** ([`write_run_samples_csv`]): one row per repetition, the columns
//!   [`SAMPLE_COLUMNS`].
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
//! | `systems_ranked`, `rank_by_time`, `ratio_to_best_time`, `rank_by_cost`, `ratio_to_best_cost` | with several systems, the cell's rank among those of its workload, nodes and noise mode ([`verdict::Rank`]) |
//! | `diff_to_best_ps`, `diff_to_best_ci95_lo_ps`, `diff_to_best_ci95_hi_ps` | the cell's mean minus the fastest system's, and its 95 % CI paired by repetition ([`paired`]: the cells share their random draws); null for the fastest |
//!
//! Then, in the CSV only ([`RUN_COLUMNS`]; the JSON has them once, in `plan`):
//!
//! | key | meaning |
//! |---|---|
//! | `partial` | `true` when the run was interrupted before this cell ran all its repetitions |
//! | `run_status` | `complete` or `interrupted` (then some cells may be missing) |
//! | `seed`, `reps_rule` | the master seed and `--reps` (`auto`, a count, or `single` for noiseless runs) |
//! | `model`, `tick_ps` | the engine's sharing model (`--model`: `loggopsim` or `queued`) and the length of a tick of plain GOAL calc numbers (`--tick`), ps |
//! | `profile`, `profile_sha256` | the noise profile's path as given and the SHA-256 of its bytes (empty without one) |
//! | `L_near_ps` … `S_near_bytes`, `L_far_ps` … `S_far_bytes` | the LogGOPS parameters simulated within and across switches (far = near when the profile has one placement) |
//! | `rndv_3l`, `nodes_per_switch` | rendezvous messages pay 3L; ranks per switch |
//! | `workload_path`, `workload_sha256` | the schedule file and the SHA-256 of its bytes |
//! | `tool_version`, `schema_version` | the loggops-sim version and [`SCHEMA_VERSION`] |

pub mod cell;
pub mod cost;
pub mod csv;
pub mod fmt;
pub mod guide;
pub mod html;
pub mod json;
pub mod merge;
pub mod model;
pub mod paired;
pub mod plot;
mod record;
pub mod spot;
pub mod stats;
pub mod table;
pub mod validation;
pub mod verdict;
pub mod why;

pub use cell::{Cell, CellError, Labels};
pub use cost::{CellCost, CostError, CostModel, PriceCost, SampleCost, PS_PER_HOUR};
pub use csv::{
    run_samples_to_csv_string, run_to_csv_string, write_run_csv, write_run_samples_csv,
    SAMPLE_COLUMNS,
};
pub use fmt::{
    fmt_bytes, fmt_pct, fmt_per_byte, fmt_price, fmt_rate, fmt_ratio, fmt_time_ps, fmt_time_ps_f64,
    fmt_usd,
};
pub use json::{run_to_json_string, write_run_json};
pub use merge::{merge, MergeError, ShardInput};
pub use model::{
    CellKey, CellResult, EngineParams, Job, NoiseSettings, Plan, Prices, ProfileRef, Provenance,
    RepSet, RepsRule, RunFacts, RunResult, Settings, Shard, ShardBy, Share, Status, SystemInfo,
    Tool, WorkloadInfo, SCHEMA, SCHEMA_VERSION,
};
pub use paired::{paired, Paired};
pub use record::{CELL_COLUMNS, RUN_COLUMNS};
pub use stats::{precise, quantile_sorted, Interval, MedianCi, StatsError, Summary};
pub use table::{render_footer, render_run_table, render_table, write_run_table, write_table};
pub use validation::{
    render_validation_table, tally, validation_csv, validation_json, Comparison, Stat, Tally,
};

use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;

/// Output format of a run's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Aligned human-readable table with the settings below it (the default).
    #[default]
    Table,
    /// JSON document (see [`json`]).
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
    /// Writes the run in this format.
    pub fn render<W: Write + ?Sized>(self, w: &mut W, run: &RunResult) -> io::Result<()> {
        match self {
            Format::Table => write_run_table(w, run),
            Format::Json => write_run_json(w, run),
            Format::Csv => write_run_csv(w, run),
        }
    }

    /// The run in this format, as a string.
    pub fn render_to_string(self, run: &RunResult) -> String {
        match self {
            Format::Table => render_run_table(run),
            Format::Json => run_to_json_string(run),
            Format::Csv => run_to_csv_string(run),
        }
    }
}

/// Writes the run to `path` in `format`, atomically.
pub fn write_report(path: impl AsRef<Path>, format: Format, run: &RunResult) -> io::Result<()> {
    loggops_output::write_atomic(path, |w| format.render(w, run))
}

/// Writes the per-repetition samples CSV to `path`, atomically (see [`write_run_samples_csv`]).
pub fn write_samples(path: impl AsRef<Path>, run: &RunResult) -> io::Result<()> {
    loggops_output::write_atomic(path, |w| write_run_samples_csv(w, run))
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
