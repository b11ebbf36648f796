//! Errors and warnings of the importers.

use std::fmt;
use std::io;

use crate::format::Format;
use crate::pingpong::PingPongKind;
use crate::units::{fmt_bytes, fmt_lines, fmt_ns, fmt_us};

/// Why a capture could not be imported. Every message names the file, the line where that makes
/// sense, what was expected and what was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibError {
    #[error("{path}: cannot open: {source}")]
    Open {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("{path}: read error after line {line}: {source} (is the file truncated or corrupt?)")]
    Read {
        path: String,
        line: u64,
        #[source]
        source: io::Error,
    },
    #[error("{path}: {what}-compressed; decompress it first (only xz and plain text are read)")]
    UnsupportedCompression { path: String, what: &'static str },
    #[error("{path}: the file is empty (0 lines); expected {expected}")]
    Empty { path: String, expected: String },
    #[error("{path}: {detail}")]
    NoData { path: String, detail: String },
    #[error("{path}:{line}: expected {expected}, found `{found}`")]
    Parse {
        path: String,
        line: u64,
        expected: String,
        found: String,
    },
    #[error(
        "{path}:{line}: expected {} {} file, found `{found}`, which belongs to {} {} file{}",
        .expected.article(), .expected.description(), .actual.article(), .actual.description(), wrong_format_hint(*.actual)
    )]
    WrongFormat {
        path: String,
        line: u64,
        expected: Format,
        actual: Format,
        found: String,
    },
    #[error("{path}: unknown capture format: {detail}")]
    UnknownFormat { path: String, detail: String },
    #[error(
        "{path}: mixed message sizes: {}; choose one with {flag} (e.g. {flag} {})",
        fmt_size_counts(.sizes), fmt_bytes(.sizes.first().map(|s| s.size_bytes).unwrap_or(1))
    )]
    MixedSizes {
        path: String,
        sizes: Vec<SizeCount>,
        /// The `loggops-sim calibrate` flag that picks a size (`--latency-size`,
        /// `--bandwidth-size`), or `a size filter` for a capture of no particular kind.
        flag: &'static str,
    },
    #[error(
        "{path}: no samples of {} (the size filter); sizes in the file: {}",
        fmt_bytes(*.size), fmt_size_counts(.available)
    )]
    SizeNotFound {
        path: String,
        size: u64,
        available: Vec<SizeCount>,
    },
    #[error(
        "{path}:{line}: expected a {} capture ({}), found {} messages (median RTT/2 {}): this looks like a {} capture",
        .expected.name(), .expected.size_rule(), fmt_bytes(*.size), fmt_us(*.median_us), .looks_like.name()
    )]
    WrongKind {
        path: String,
        line: u64,
        expected: PingPongKind,
        looks_like: PingPongKind,
        size: u64,
        median_us: f64,
    },
    #[error(
        "{path}:{line}: detour start {} is not after the previous start {} (line {prev_line}) of the run that begins at line {run_line}; starts must increase within a run",
        fmt_ns_exact(*.found_ns), fmt_ns_exact(*.prev_ns)
    )]
    NonMonotonic {
        path: String,
        line: u64,
        prev_line: u64,
        run_line: u64,
        prev_ns: f64,
        found_ns: f64,
    },
    #[error("{path}:{line}: negative detour duration {} (durations are iteration length minus t_min and cannot be below 0)", fmt_ns_exact(*.duration_ns))]
    NegativeDuration {
        path: String,
        line: u64,
        duration_ns: f64,
    },
    #[error(
        "{path}: {bad} of {total} data rows could not be used (more than {max_pct}%), first at line {}: {first_reason}; is this the right format?",
        .first_line
    )]
    TooManyBadRows {
        path: String,
        bad: u64,
        total: u64,
        max_pct: f64,
        first_line: u64,
        first_reason: String,
    },
    #[error("{path}:{line}: cycle number {found} out of order, expected {expected} (rows must number the quanta 0, 1, 2, …)")]
    CycleOrder {
        path: String,
        line: u64,
        expected: u64,
        found: u64,
    },
    #[error("{path}: {what}")]
    Missing { path: String, what: String },
    /// A value no measurement can produce (a corrupt row): importing it would put an absurd
    /// time into the profile and overflow the simulator's clock.
    #[error("{path}:{line}: {what} {found} is not a plausible measurement: expected at most {max}; fix or delete the row")]
    Implausible {
        path: String,
        line: u64,
        what: &'static str,
        found: String,
        max: &'static str,
    },
    /// Too few samples survive warm-up removal to describe a distribution.
    #[error(
        "{path}: only {kept} {quantity} sample(s) left ({detail}); a distribution needs at least {min}: \
         with {kept} the empirical distribution may be {:.2} off the true one (95 % DKW bound, {:.3} at {min}); \
         capture more, or give --min-samples {kept} to build it anyway",
        dkw(*.kept), dkw(*.min as u64)
    )]
    TooFewSamples {
        path: String,
        quantity: &'static str,
        kept: u64,
        min: usize,
        detail: String,
    },
    /// A base parameter has no source (no explicit value, no table row, no LogGP fit giving it).
    #[error("cannot build the profile: no value for {}; {hint}", .missing.join(", "))]
    MissingParams { missing: Vec<String>, hint: String },
    /// A parameter or price table has no row for the requested key.
    #[error("{path}: no row for {wanted}; the table has {} rows: {}", .available.len(), .available.join("; "))]
    TableRow {
        path: String,
        wanted: String,
        available: Vec<String>,
    },
    /// The profile built from the inputs breaks a rule of the profile schema.
    #[error("the calibrated profile is invalid: {detail}")]
    InvalidProfile { detail: String },
}

/// The Dvoretzky–Kiefer–Wolfowitz bound: with probability 95 % the empirical CDF of `n`
/// samples is within this distance of the true CDF everywhere.
pub fn dkw(n: u64) -> f64 {
    ((2.0f64 / 0.05).ln() / (2.0 * n.max(1) as f64)).sqrt()
}

/// Where `calibrate` takes a file of the kind found.
fn wrong_format_hint(actual: Format) -> String {
    match actual {
        Format::PingPong => " (`calibrate` takes it as `--latency` or `--bandwidth`)".into(),
        Format::Selfish | Format::Fwq | Format::Ftq => {
            " (`calibrate` takes it as `--os-noise`)".into()
        }
        Format::LogGp => " (`calibrate` takes it as `--loggp`)".into(),
        Format::Summary | Format::SysjitterRaw | Format::DistRtt => format!(
            " (`calibrate` does not take {} {}: it needs per-sample captures)",
            actual.article(),
            actual.description()
        ),
    }
}

fn fmt_ns_exact(ns: f64) -> String {
    if ns.abs() < 1000.0 {
        format!("{ns:.2}ns")
    } else {
        format!("{ns:.2}ns ({})", fmt_ns(ns))
    }
}

/// How many rows of one message size a ping-pong file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeCount {
    pub size_bytes: u64,
    /// Data rows of this size (every row, valid or not).
    pub rows: u64,
    /// Line of the first row of this size.
    pub first_line: u64,
}

fn fmt_size_counts(sizes: &[SizeCount]) -> String {
    const SHOWN: usize = 6;
    let mut parts: Vec<String> = sizes
        .iter()
        .take(SHOWN)
        .map(|s| {
            format!(
                "{} ({} rows from line {})",
                fmt_bytes(s.size_bytes),
                s.rows,
                s.first_line
            )
        })
        .collect();
    if sizes.len() > SHOWN {
        parts.push(format!("and {} more sizes", sizes.len() - SHOWN));
    }
    parts.join(", ")
}

/// What a [`Warning`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// Rows that could not be parsed or held NaN/inf/non-positive values were skipped.
    SkippedRows,
    /// The distribution has a heavy tail (p99.9 or max far above the median).
    HeavyTail,
    /// Ping-pong blocks of unexpected length (truncated runs, or runs longer than the block length
    /// that were split for warm-up removal).
    BlockLength,
    /// A selfish run lacks its `# CPU overhead` / `# Measurement period` trailer.
    MissingTrailer,
    /// A selfish run has fewer detours than its `# Number of Cycles/Detours` header promises.
    ShortRun,
    /// Detour times restarted (or data followed a trailer) without a new header block.
    RunWithoutHeader,
    /// A detour starts before the previous one ended.
    OverlappingDetours,
    /// A run or block with no data rows.
    EmptyRun,
    /// Non-finite values in places where the format does not produce them.
    NonFiniteValues,
    /// The same message size appears in several rows.
    DuplicateSizes,
    /// A value that should be constant is not (e.g. the LogGP `L` column).
    Inconsistent,
    /// A fitted parameter came out negative and was clamped to 0.
    NegativeParameter,
    /// Values are in timer ticks whose frequency the file does not record.
    Timebase,
    /// The measurement period printed in the trailer is shorter than the trace.
    PeriodRounding,
}

/// A problem that did not stop the import: what happened, how many times, and where (the first
/// few line numbers). Every result type carries a `warnings` list.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    pub kind: WarningKind,
    /// How many rows / blocks / runs / values the warning is about.
    pub count: u64,
    /// Line numbers of the first few occurrences (at most [`Warning::MAX_LINES`]).
    pub lines: Vec<u64>,
    /// Human-readable explanation with units.
    pub message: String,
}

impl Warning {
    /// How many line numbers a warning keeps.
    pub const MAX_LINES: usize = 5;

    pub(crate) fn new(kind: WarningKind, count: u64, lines: Vec<u64>, message: String) -> Warning {
        Warning {
            kind,
            count,
            lines,
            message,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if !self.lines.is_empty() {
            let word = if self.lines.len() == 1 && self.count <= 1 {
                "line"
            } else {
                "lines"
            };
            write!(f, " ({word} {})", fmt_lines(&self.lines, self.count))?;
        }
        Ok(())
    }
}

/// Collects occurrences of one problem: a count and the first few line numbers with reasons.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    pub count: u64,
    pub lines: Vec<u64>,
    pub first_reason: Option<String>,
}

impl Tally {
    /// A reader's message when no row was usable: the count and the first skipped row, or
    /// `none()` when no row was skipped either.
    pub fn no_usable(&self, what: &str, none: impl FnOnce() -> String) -> String {
        match &self.first_reason {
            Some(r) => format!(
                "no usable {what} rows ({} skipped, first at line {}: {r})",
                self.count, self.lines[0]
            ),
            None => none(),
        }
    }

    /// The warning for the skipped rows (`None` when none was); `of` follows "unusable
    /// row(s)", e.g. " of 1000".
    pub fn skipped_warning(&self, of: &str) -> Option<Warning> {
        (self.count > 0).then(|| {
            Warning::new(
                WarningKind::SkippedRows,
                self.count,
                self.lines.clone(),
                format!(
                    "skipped {} unusable row(s){of}; first: {}",
                    self.count,
                    self.first_reason.clone().unwrap_or_default()
                ),
            )
        })
    }

    pub fn add(&mut self, line: u64, reason: impl FnOnce() -> String) {
        self.count += 1;
        if self.lines.len() < Warning::MAX_LINES {
            self.lines.push(line);
        }
        if self.first_reason.is_none() {
            self.first_reason = Some(reason());
        }
    }
}
