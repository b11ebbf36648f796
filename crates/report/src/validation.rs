//! Measured against simulated: one [`Comparison`] per benchmark and a [`Tally`] over all.
//!
//! # Definitions
//! * Both sides are summarised with [`Summary`] (type-7 quantiles, see [`crate::stats`]): the
//!   measured side over the benchmark's iterations (each the maximum over ranks), the simulated
//!   side over the repetitions (each the maximum finishing time over ranks).
//! * **Ratio** of a statistic: simulated / measured (`1.00x` is a perfect prediction).
//! * **Error of the means** (the paper's metric, its Sec. V-A): `|mean_sim − mean_meas| /
//!   mean_meas`.
//! * **Within tolerance**: mean and median within ±10 % ([`MEAN_TOL`], [`P50_TOL`]), p95 within
//!   ±20 % ([`P95_TOL`]) of the measured value, i.e. `|ratio − 1| <= tol` (p99 is reported,
//!   not judged).
//! * **Spread**: p95 / p50 of each side; a simulated spread narrower than the measured one means
//!   the model's noise averages out where the system's does not.
//! * **Paper cells**: the benchmarks the paper validated (its Fig. 14: the dissemination
//!   allreduce of 16 B and the pipelined ring of 16 MiB). The caller marks them; the paper
//!   claims an error of the means below 10 % at 16 nodes.
//!
//! # Output
//! * Human ([`render_validation_table`]): one aligned line per benchmark, times with units,
//!   ratios as `1.02x`, errors as `+3.1%` (signed: simulated above measured is positive), then
//!   the [`Tally`] line.
//! * JSON ([`validation_json`]): `{"schema": "loggops-report/validation/1", "status":
//!   "complete", "benchmarks": [...], "summary": {...}}`; times are integer picoseconds in keys
//!   ending `_ps`; `status` is `interrupted` when Ctrl-C stopped the run (the benchmarks not
//!   reached are then in `not_simulated`).
//! * CSV ([`validation_csv`]): a header of [`VALIDATION_COLUMNS`], one row per benchmark;
//!   `file` is the measured file as given (runs of several days share benchmark names).
//! * Benchmarks that could not be simulated ([`NotSimulated`], `validate` lists them instead of
//!   stopping): in the table after the tally line (`not simulated:`, one line each, with the
//!   reason), in JSON as `not_simulated: [{"file", "benchmark", "reason"}]` (and
//!   `summary.not_simulated`, their count), in CSV as rows with only `benchmark` (and what the
//!   file name says) and `note` = `not simulated: <reason>` filled in
//!   ([`render_validation_table_with`], [`validation_json_with`], [`validation_csv_with`]).
//! * A profile with latency episodes (a state of their own): the simulated side is the state
//!   outside episodes, where a measured run (well under a second) most likely lay; the
//!   episodes' share and their simulated mean, median and maximum are `episode_weight`,
//!   `episode_mean_ps`, `episode_p50_ps` and `episode_max_ps` (`null` without), and a
//!   measurement lies outside the profile only when it lies outside both states.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::fmt::{fmt_pct, fmt_ratio, fmt_time_ps_f64};
use crate::stats::{StatsError, Summary};
use crate::table::{layout, Align, Column};

/// Tolerance of the mean (relative).
pub const MEAN_TOL: f64 = 0.10;
/// Tolerance of the median (relative).
pub const P50_TOL: f64 = 0.10;
/// Tolerance of the 95th percentile (relative).
pub const P95_TOL: f64 = 0.20;

/// A statistic compared between the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    Mean,
    P50,
    P95,
    P99,
}

impl Stat {
    pub const ALL: [Stat; 4] = [Stat::Mean, Stat::P50, Stat::P95, Stat::P99];

    pub fn name(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P95 => "p95",
            Stat::P99 => "p99",
        }
    }

    /// The relative tolerance a prediction of this statistic is judged by (`None`: not judged).
    pub fn tolerance(self) -> Option<f64> {
        match self {
            Stat::Mean => Some(MEAN_TOL),
            Stat::P50 => Some(P50_TOL),
            Stat::P95 => Some(P95_TOL),
            Stat::P99 => None,
        }
    }

    fn of(self, s: &Summary) -> f64 {
        match self {
            Stat::Mean => s.mean,
            Stat::P50 => s.median,
            Stat::P95 => s.p95,
            Stat::P99 => s.p99,
        }
    }
}

/// One benchmark: what was measured and what the model predicts.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Benchmark name, e.g. `nwaydissemination_16_16`.
    pub benchmark: String,
    /// Its pattern, e.g. `nwaydissemination`.
    pub pattern: String,
    pub nodes: u64,
    pub bytes: u64,
    /// One of the paper's validation cells (see the module docs).
    pub paper_cell: bool,
    /// How the simulator shared each rank's CPU and NIC (`queued` or `loggopsim`, `--model`).
    pub model: String,
    /// Summary of the measured iterations (ps).
    pub measured: Summary,
    /// Summary of the simulated repetitions (ps).
    pub simulated: Summary,
    /// The model's noiseless time, ps.
    pub noiseless_ps: Option<u64>,
    /// Whether rendezvous messages progressed during computation (`async` or `polled`).
    pub mpi_progress: Option<String>,
    /// A remark on how the benchmark was simulated.
    pub note: Option<String>,
    /// The measured file, as given (benchmarks of several runs may share a name).
    pub file: Option<String>,
    /// The profile's latency episodes (a state of their own, `calibrate --latency-episodes
    /// state`): their share of the repetitions and the repetitions simulated in them (ps).
    /// `simulated` is then the state outside episodes, where a measured run most likely lay.
    pub episodes: Option<(f64, Summary)>,
}

/// A benchmark `validate` could not simulate, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotSimulated {
    /// The measured file as given.
    pub file: String,
    /// The benchmark its name describes, when it does.
    pub benchmark: Option<BenchmarkId>,
    pub reason: String,
}

/// What a measured file's name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchmarkId {
    pub benchmark: String,
    pub pattern: String,
    pub nodes: u64,
    pub bytes: u64,
}

impl Comparison {
    /// Summarises both sides; fails if either is empty.
    pub fn new(
        benchmark: impl Into<String>,
        pattern: impl Into<String>,
        nodes: u64,
        bytes: u64,
        measured_ps: &[u64],
        simulated_ps: &[u64],
    ) -> Result<Comparison, StatsError> {
        Ok(Comparison {
            benchmark: benchmark.into(),
            pattern: pattern.into(),
            nodes,
            bytes,
            paper_cell: false,
            model: "queued".into(),
            measured: Summary::try_from_samples(measured_ps)?,
            simulated: Summary::try_from_samples(simulated_ps)?,
            noiseless_ps: None,
            mpi_progress: None,
            note: None,
            file: None,
            episodes: None,
        })
    }

    /// Simulated / measured of `stat`.
    pub fn ratio(&self, stat: Stat) -> f64 {
        stat.of(&self.simulated) / stat.of(&self.measured)
    }

    /// The paper's metric: `|mean_sim − mean_meas| / mean_meas`.
    pub fn mean_error(&self) -> f64 {
        (self.simulated.mean - self.measured.mean).abs() / self.measured.mean
    }

    /// Whether `stat` is within its tolerance (`None` for statistics not judged).
    pub fn within(&self, stat: Stat) -> Option<bool> {
        stat.tolerance()
            .map(|tol| (self.ratio(stat) - 1.0).abs() <= tol + 1e-12)
    }

    /// Whether the measurement lies outside anything the profile produced: its median above
    /// the largest simulated iteration or below the smallest, with how far (measured median /
    /// that bound: above 1 for a measurement too slow, below 1 for one too fast). A
    /// two-node capture does not see what a collective on a busy day meets (other jobs' traffic
    /// on a shared network): such rows say so instead of only printing a ratio.
    pub fn outside_profile(&self) -> Option<Outside> {
        // The simulated range of a few repetitions says nothing about what the profile can
        // produce.
        if (self.simulated.n as u64) < OUTSIDE_MIN_REPS {
            return None;
        }
        // Nor does a simulation without spread (no noise drawn, or nothing to draw it on):
        // one value is not a range.
        let fixed = |s: &Summary| s.min == s.max && s.min == self.simulated.min;
        if fixed(&self.simulated) && self.episodes.as_ref().is_none_or(|(_, e)| fixed(e)) {
            return None;
        }
        let m = self.measured.median;
        let (mut lo, mut hi) = (self.simulated.min as f64, self.simulated.max as f64);
        if let Some((_, e)) = &self.episodes {
            lo = lo.min(e.min as f64);
            hi = hi.max(e.max as f64);
        }
        // Within one part in a hundred of the range is inside: the clocks that timed the
        // measurement and the capture agree no better (Piz Daint's steps of 2^-22 s =
        // 238.42 ns read as 237.98 ns by the selfish capture's calibrated ticks).
        let slack = 1.0 + OUTSIDE_SLACK;
        if m > hi * slack && hi > 0.0 {
            Some(Outside::Above(m / hi))
        } else if m * slack < lo && lo > 0.0 {
            Some(Outside::Below(m / lo))
        } else {
            None
        }
    }

    /// p95 / p50 of the measured and of the simulated side.
    pub fn spreads(&self) -> (f64, f64) {
        (
            self.measured.p95 / self.measured.median,
            self.simulated.p95 / self.simulated.median,
        )
    }
}

/// How far beyond the simulated range a measured median must lie to be outside it (a share).
pub const OUTSIDE_SLACK: f64 = 0.01;

/// The simulated repetitions from which [`Comparison::outside_profile`] judges.
pub const OUTSIDE_MIN_REPS: u64 = 100;

/// A measurement outside the simulated range ([`Comparison::outside_profile`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outside {
    /// Measured median / the largest simulated iteration (> 1).
    Above(f64),
    /// Measured median / the smallest simulated iteration (< 1).
    Below(f64),
}

impl Outside {
    /// How far, as measured median / the nearest simulated bound.
    pub fn factor(self) -> f64 {
        match self {
            Outside::Above(f) | Outside::Below(f) => f,
        }
    }

    /// `above` or `below`.
    pub fn side(self) -> &'static str {
        match self {
            Outside::Above(_) => "above",
            Outside::Below(_) => "below",
        }
    }

    /// In words, for the table.
    pub fn describe(self) -> String {
        // Near 1 three decimals, so that a flag never reads "1.00x".
        let f = |r: f64| {
            if (0.99..1.01).contains(&r) {
                format!("{r:.3}x")
            } else {
                fmt_ratio(r)
            }
        };
        match self {
            Outside::Above(r) => format!("meas p50 {} sim max", f(r)),
            Outside::Below(r) => format!("meas p50 {} sim min", f(r)),
        }
    }
}

/// Counts over a set of comparisons.
#[derive(Clone, Debug, PartialEq)]
pub struct Tally {
    pub benchmarks: usize,
    pub mean_within: usize,
    pub p50_within: usize,
    pub p95_within: usize,
    /// Median over benchmarks of the error of the means.
    pub median_mean_error: f64,
    /// Paper cells, and how many of them have an error of the means below 10 %.
    pub paper_cells: usize,
    pub paper_within: usize,
    /// The same at 16 nodes (the paper's claim).
    pub paper_cells_16: usize,
    pub paper_within_16: usize,
    /// Benchmarks whose measurement lies outside anything the profile produced.
    pub outside_profile: usize,
}

/// Counts what is within tolerance.
pub fn tally(rows: &[Comparison]) -> Tally {
    let count = |f: &dyn Fn(&Comparison) -> bool| rows.iter().filter(|c| f(c)).count();
    let mut errs: Vec<f64> = rows.iter().map(Comparison::mean_error).collect();
    errs.sort_by(f64::total_cmp);
    let median_mean_error = match errs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => errs[n / 2],
        n => (errs[n / 2 - 1] + errs[n / 2]) / 2.0,
    };
    let paper_ok = |c: &Comparison| c.paper_cell && c.mean_error() < MEAN_TOL;
    Tally {
        benchmarks: rows.len(),
        mean_within: count(&|c| c.within(Stat::Mean) == Some(true)),
        p50_within: count(&|c| c.within(Stat::P50) == Some(true)),
        p95_within: count(&|c| c.within(Stat::P95) == Some(true)),
        median_mean_error,
        paper_cells: count(&|c| c.paper_cell),
        paper_within: count(&paper_ok),
        paper_cells_16: count(&|c| c.paper_cell && c.nodes == 16),
        paper_within_16: count(&|c| paper_ok(c) && c.nodes == 16),
        outside_profile: count(&|c| c.outside_profile().is_some()),
    }
}

impl Tally {
    /// The summary line, e.g. `54 benchmarks: mean within 10%: 20/54, ...`.
    pub fn line(&self) -> String {
        let n = self.benchmarks;
        let mut s = format!(
            "{n} benchmark{}: mean within 10%: {}/{n}, p50 within 10%: {}/{n}, p95 within 20%: {}/{n}; median error of the means {:.1}%",
            if n == 1 { "" } else { "s" },
            self.mean_within,
            self.p50_within,
            self.p95_within,
            100.0 * self.median_mean_error
        );
        if self.outside_profile > 0 {
            let _ = write!(
                s,
                "; {}/{n} measured outside anything the profile produced (their medians beyond every simulated iteration: slower, another machine state than the captures'; faster, a model too slow there)",
                self.outside_profile
            );
        }
        if self.paper_cells > 0 {
            let _ = write!(
                s,
                "; the paper's cells (16B dissemination, 16MiB pipelined ring) with an error of the means below 10%: {}/{}",
                self.paper_within, self.paper_cells
            );
            if self.paper_cells_16 > 0 {
                let _ = write!(
                    s,
                    ", at 16 nodes {}/{}",
                    self.paper_within_16, self.paper_cells_16
                );
            }
        }
        s
    }
}

fn signed_pct(c: &Comparison) -> String {
    fmt_pct(100.0 * (c.simulated.mean - c.measured.mean) / c.measured.mean)
}

/// A ratio beside its verdict: as [`fmt_ratio`], with more decimals (up to 6) where the
/// rounded value would read as the other side of the tolerance (10.04 % off prints `0.8996x`,
/// not `0.90x`, which reads as exactly the 10 % that counts as within).
fn judged_ratio(r: f64, stat: Stat) -> String {
    let (Some(tol), true) = (stat.tolerance(), r.is_finite() && r.abs() < 10.0) else {
        return fmt_ratio(r);
    };
    let within = |x: f64| (x - 1.0).abs() <= tol + 1e-12;
    (2..=6)
        .map(|d| format!("{r:.d$}"))
        .find(|s| s.parse::<f64>().is_ok_and(|x| within(x) == within(r)))
        .map_or_else(|| fmt_ratio(r), |s| format!("{s}x"))
}

fn mark(ok: Option<bool>) -> &'static str {
    match ok {
        Some(false) => "*",
        _ => "",
    }
}

/// The human table: one line per benchmark, then the tally line. A `*` after a ratio marks a
/// statistic outside its tolerance.
pub fn render_validation_table(rows: &[Comparison]) -> String {
    use Align::{Left, Right};
    let col = |title, align, f: &dyn Fn(&Comparison) -> String| {
        Column::new(title, align, rows.iter().map(|c| Some(f(c))).collect())
    };
    let t = fmt_time_ps_f64;
    let mut columns = vec![
        col("benchmark", Left, &|c| c.benchmark.clone()),
        col("n meas/sim", Right, &|c| {
            format!("{}/{}", c.measured.n, c.simulated.n)
        }),
        col("noiseless", Right, &|c| {
            c.noiseless_ps
                .map(|x| t(x as f64))
                .unwrap_or_else(|| "-".into())
        }),
    ];
    for stat in Stat::ALL {
        let (m, s, r): (&'static str, &'static str, &'static str) = match stat {
            Stat::Mean => ("mean meas", "mean sim", "x mean"),
            Stat::P50 => ("p50 meas", "p50 sim", "x p50"),
            Stat::P95 => ("p95 meas", "p95 sim", "x p95"),
            Stat::P99 => ("p99 meas", "p99 sim", "x p99"),
        };
        columns.push(col(m, Right, &|c| t(stat.of(&c.measured))));
        columns.push(col(s, Right, &|c| t(stat.of(&c.simulated))));
        columns.push(col(r, Right, &|c| {
            format!(
                "{}{}",
                judged_ratio(c.ratio(stat), stat),
                mark(c.within(stat))
            )
        }));
    }
    columns.push(col("p95/p50 meas/sim", Right, &|c| {
        // An undefined spread (a median of 0, as an empty timed region's) prints as `-`.
        let f = |x: f64| {
            if x.is_finite() {
                format!("{x:.2}")
            } else {
                "-".into()
            }
        };
        let (m, s) = c.spreads();
        format!("{}/{}", f(m), f(s))
    }));
    columns.push(col("mean error", Right, &signed_pct));
    if rows.iter().any(|c| c.episodes.is_some()) {
        // The latency episodes' state, simulated apart (the prediction is the state outside).
        columns.push(col("mean sim, episodes", Right, &|c| {
            c.episodes
                .as_ref()
                .map(|(_, e)| t(e.mean))
                .unwrap_or_else(|| "-".into())
        }));
    }
    if rows.iter().any(|c| c.outside_profile().is_some()) {
        columns.push(col("outside the profile", Left, &|c| {
            c.outside_profile()
                .map(|o| o.describe())
                .unwrap_or_default()
        }));
    }
    let mut out = layout(&columns, rows.len());
    out.push_str(&tally(rows).line());
    out.push('\n');
    out
}

/// [`render_validation_table`], then a line per benchmark with a note (`note: ...`) and the
/// benchmarks that could not be simulated (`not simulated: ...`).
pub fn render_validation_table_with(rows: &[Comparison], skipped: &[NotSimulated]) -> String {
    let mut out = render_validation_table(rows);
    for c in rows {
        if let Some(n) = &c.note {
            let _ = writeln!(out, "note: {}: {n}", c.benchmark);
        }
    }
    if !skipped.is_empty() {
        let _ = writeln!(out, "not simulated: {}", skipped.len());
        for s in skipped {
            let _ = writeln!(out, "  {}: {}", s.file, s.reason);
        }
    }
    out
}

/// The CSV columns of [`validation_csv`].
pub const VALIDATION_COLUMNS: [&str; 36] = [
    "benchmark",
    "pattern",
    "nodes",
    "bytes",
    "paper_cell",
    "model",
    "measured_n",
    "measured_mean_ps",
    "measured_p50_ps",
    "measured_p95_ps",
    "measured_p99_ps",
    "measured_max_ps",
    "simulated_n",
    "simulated_mean_ps",
    "simulated_p50_ps",
    "simulated_p95_ps",
    "simulated_p99_ps",
    "simulated_max_ps",
    "noiseless_ps",
    "ratio_mean",
    "ratio_p50",
    "ratio_p95",
    "ratio_p99",
    "mean_error",
    "mean_within_10pct",
    "p50_within_10pct",
    "p95_within_20pct",
    "outside_profile",
    "outside_factor",
    "mpi_progress",
    "episode_weight",
    "episode_mean_ps",
    "episode_p50_ps",
    "episode_max_ps",
    "file",
    "note",
];

fn ps(x: f64) -> i64 {
    x.round() as i64
}

fn row_values(c: &Comparison) -> Vec<Value> {
    let side = |s: &Summary| {
        vec![
            json!(s.n),
            json!(ps(s.mean)),
            json!(ps(s.median)),
            json!(ps(s.p95)),
            json!(ps(s.p99)),
            json!(s.max),
        ]
    };
    let mut v = vec![
        json!(c.benchmark),
        json!(c.pattern),
        json!(c.nodes),
        json!(c.bytes),
        json!(c.paper_cell),
        json!(c.model),
    ];
    v.extend(side(&c.measured));
    v.extend(side(&c.simulated));
    v.push(json!(c.noiseless_ps));
    v.extend(Stat::ALL.map(|s| json!(c.ratio(s))));
    v.push(json!(c.mean_error()));
    v.extend([Stat::Mean, Stat::P50, Stat::P95].map(|s| json!(c.within(s))));
    let out = c.outside_profile();
    v.push(json!(out.map(|o| o.side())));
    v.push(json!(out.map(|o| o.factor())));
    v.push(json!(c.mpi_progress));
    v.push(json!(c.episodes.as_ref().map(|e| e.0)));
    v.push(json!(c.episodes.as_ref().map(|e| ps(e.1.mean))));
    v.push(json!(c.episodes.as_ref().map(|e| ps(e.1.median))));
    v.push(json!(c.episodes.as_ref().map(|e| e.1.max)));
    v.push(json!(c.file));
    v.push(json!(c.note));
    v
}

/// The CSV row of a benchmark that was not simulated: what its name says, its reason.
fn skipped_values(s: &NotSimulated) -> Vec<Value> {
    let mut v = vec![Value::Null; VALIDATION_COLUMNS.len()];
    match &s.benchmark {
        Some(b) => {
            v[0] = json!(b.benchmark);
            v[1] = json!(b.pattern);
            v[2] = json!(b.nodes);
            v[3] = json!(b.bytes);
        }
        None => v[0] = json!(s.file),
    }
    v[VALIDATION_COLUMNS.len() - 2] = json!(s.file);
    // The reason names a line and column; the file says of what.
    let reason = if s.reason.starts_with(&s.file) {
        s.reason.clone()
    } else {
        format!("{}: {}", s.file, s.reason)
    };
    v[VALIDATION_COLUMNS.len() - 1] = json!(format!("not simulated: {reason}"));
    v
}

/// The JSON document (see the module docs), pretty-printed with a final newline.
pub fn validation_json(rows: &[Comparison]) -> String {
    validation_json_with(rows, &[])
}

/// [`validation_json`] with the benchmarks that could not be simulated (`not_simulated`).
pub fn validation_json_with(rows: &[Comparison], skipped: &[NotSimulated]) -> String {
    validation_json_settings(rows, skipped, Value::Null, false)
}

/// [`validation_json_with`] with how the comparison was made (`settings`: the seed, the
/// repetitions, the profile and its SHA-256, the model; `null` when not given) and whether
/// Ctrl-C stopped it (`status`).
pub fn validation_json_settings(
    rows: &[Comparison],
    skipped: &[NotSimulated],
    settings: Value,
    interrupted: bool,
) -> String {
    let items: Vec<Value> = rows
        .iter()
        .map(|c| {
            let obj: serde_json::Map<String, Value> = VALIDATION_COLUMNS
                .iter()
                .map(|k| k.to_string())
                .zip(row_values(c))
                .collect();
            Value::Object(obj)
        })
        .collect();
    let t = tally(rows);
    let not_simulated: Vec<Value> = skipped
        .iter()
        .map(|s| {
            json!({
                "file": s.file,
                "benchmark": s.benchmark.as_ref().map(|b| b.benchmark.clone()),
                "reason": s.reason,
            })
        })
        .collect();
    let doc = json!({
        "schema": "loggops-report/validation/1",
        "status": if interrupted { "interrupted" } else { "complete" },
        "settings": settings,
        "benchmarks": items,
        "not_simulated": not_simulated,
        "summary": {
            "benchmarks": t.benchmarks,
            "mean_within_10pct": t.mean_within,
            "p50_within_10pct": t.p50_within,
            "p95_within_20pct": t.p95_within,
            "median_mean_error": if t.median_mean_error.is_finite() { json!(t.median_mean_error) } else { Value::Null },
            "paper_cells": t.paper_cells,
            "paper_cells_mean_error_below_10pct": t.paper_within,
            "paper_cells_16_nodes": t.paper_cells_16,
            "paper_cells_16_nodes_mean_error_below_10pct": t.paper_within_16,
            "outside_profile": t.outside_profile,
            "not_simulated": skipped.len(),
            "line": t.line(),
        }
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("JSON values serialise");
    s.push('\n');
    s
}

/// The CSV table: a header of [`VALIDATION_COLUMNS`] and one row per benchmark.
pub fn validation_csv(rows: &[Comparison]) -> String {
    validation_csv_with(rows, &[])
}

/// [`validation_csv`], then a row per benchmark that could not be simulated.
pub fn validation_csv_with(rows: &[Comparison], skipped: &[NotSimulated]) -> String {
    let mut s = VALIDATION_COLUMNS.join(",");
    s.push('\n');
    let values = rows
        .iter()
        .map(row_values)
        .chain(skipped.iter().map(skipped_values));
    for row in values {
        let fields: Vec<String> = row
            .into_iter()
            .map(|v| match v {
                Value::Null => String::new(),
                Value::String(x) => crate::csv::field_text(&x),
                other => other.to_string(),
            })
            .collect();
        s.push_str(&fields.join(","));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(meas: &[u64], sim: &[u64]) -> Comparison {
        Comparison::new(
            "nwaydissemination_16_16",
            "nwaydissemination",
            16,
            16,
            meas,
            sim,
        )
        .unwrap()
    }

    #[test]
    fn ratios_and_the_papers_metric() {
        // Measured mean 20, median 20; simulated mean 21, median 19.
        let c = cmp(&[10, 20, 30], &[19, 19, 25]);
        assert_eq!(c.measured.mean, 20.0);
        assert_eq!(c.simulated.mean, 21.0);
        assert_eq!(c.ratio(Stat::Mean), 1.05);
        assert_eq!(c.ratio(Stat::P50), 0.95);
        assert!((c.mean_error() - 0.05).abs() < 1e-15);
        assert_eq!(c.within(Stat::Mean), Some(true));
        assert_eq!(c.within(Stat::P99), None);
        // p95: type 7 of [10,20,30] is 29, of [19,19,25] 24.4.
        assert_eq!(c.measured.p95, 29.0);
        assert!((c.ratio(Stat::P95) - 24.4 / 29.0).abs() < 1e-12);
        assert_eq!(c.within(Stat::P95), Some(true)); // 0.841: within 20 %
    }

    #[test]
    fn ratios_beside_a_verdict_read_as_the_verdict() {
        assert_eq!(judged_ratio(0.9004, Stat::Mean), "0.90x");
        assert_eq!(judged_ratio(0.8996, Stat::Mean), "0.8996x");
        assert_eq!(judged_ratio(1.1004, Stat::Mean), "1.1004x");
        assert_eq!(judged_ratio(1.1, Stat::Mean), "1.10x");
        assert_eq!(judged_ratio(1.934, Stat::Mean), "1.93x");
        assert_eq!(judged_ratio(16.84, Stat::Mean), "16.8x");
        // Not judged: as every other ratio.
        assert_eq!(judged_ratio(1.1004, Stat::P99), "1.10x");
    }

    #[test]
    fn tolerance_edges_count_as_within() {
        // Exactly +10 % on the mean and the median.
        let c = cmp(&[100, 100], &[110, 110]);
        assert_eq!(c.within(Stat::Mean), Some(true));
        let c = cmp(&[100, 100], &[111, 111]);
        assert_eq!(c.within(Stat::Mean), Some(false));
        assert_eq!(c.within(Stat::P95), Some(true));
    }

    #[test]
    fn tally_counts_and_the_paper_claim() {
        let mut a = cmp(&[100; 3], &[105; 3]);
        a.paper_cell = true;
        let mut b = cmp(&[100; 3], &[150; 3]);
        b.paper_cell = true;
        b.nodes = 8;
        let c = cmp(&[100; 3], &[91; 3]);
        let t = tally(&[a.clone(), b, c]);
        assert_eq!((t.benchmarks, t.mean_within, t.p50_within), (3, 2, 2));
        assert_eq!((t.paper_cells, t.paper_within), (2, 1));
        assert_eq!((t.paper_cells_16, t.paper_within_16), (1, 1));
        assert!((t.median_mean_error - 0.09).abs() < 1e-12);
        assert!(t.line().starts_with("3 benchmarks: mean within 10%: 2/3"));
        let table = render_validation_table(std::slice::from_ref(&a));
        assert!(table.contains("1.05x"), "{table}");
        assert!(table.contains("+5.0%"), "{table}");
        assert!(!table.contains("episodes"), "{table}");
        // A profile with latency episodes: their simulated mean in a column of its own.
        let mut e = a.clone();
        e.episodes = Some((
            0.08,
            Summary::try_from_samples(&[400_000, 600_000]).unwrap(),
        ));
        let table = render_validation_table(&[e, a]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].contains("mean sim, episodes"), "{table}");
        assert!(lines[2].ends_with(" 500ns"), "{table}");
        assert!(lines[3].ends_with(" -"), "{table}");
        // Outside the profile: judged from 100 simulated repetitions on, beyond one part in a
        // hundred.
        assert!(!lines[0].contains("outside"), "{table}");
        let spread: Vec<u64> = (101..201).collect();
        let near = cmp(&[98; 3], &spread);
        assert_eq!(near.outside_profile(), Some(Outside::Below(98.0 / 101.0)));
        // Within one part in a hundred is inside.
        assert_eq!(cmp(&[100; 3], &spread).outside_profile(), None);
        // A simulation without spread (nothing drawn) produces one value, not a range.
        assert_eq!(cmp(&[100; 3], &[101; 100]).outside_profile(), None);
        let table = render_validation_table(&[near]);
        let row = table.lines().nth(2).unwrap();
        assert!(row.ends_with("meas p50 0.97x sim min"), "{table}");
        assert!(table.contains("\n1 benchmark: mean within"), "{table}");
    }

    #[test]
    fn json_and_csv_have_the_same_columns() {
        let c = cmp(&[1_000_000, 3_000_000], &[2_000_000, 2_000_000]);
        let csv = validation_csv(std::slice::from_ref(&c));
        let mut lines = csv.lines();
        assert_eq!(lines.next().unwrap(), VALIDATION_COLUMNS.join(","));
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(row.len(), VALIDATION_COLUMNS.len());
        assert_eq!(row[7], "2000000"); // measured_mean_ps
        assert_eq!(row[18], ""); // noiseless_ps: unknown
        let v: Value = serde_json::from_str(&validation_json(&[c])).unwrap();
        assert_eq!(v["benchmarks"][0]["ratio_mean"], json!(1.0));
        assert_eq!(v["summary"]["mean_within_10pct"], json!(1));
    }
}
