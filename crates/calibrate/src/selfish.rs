//! Selfish-detour traces (`-x noise`, default `-e selfish`) and the FWQ/FTQ variants
//! (`-e fwq`, `-e ftq`) of Netgauge's noise pattern.
//!
//! Selfish rows are `"%.2f\t%.2f"`: the start of the interrupted loop iteration in ns, relative to
//! the first recorded detour, and its length minus t_min in ns. t_min, the threshold and the
//! iteration count are in the `#` header; `# CPU overhead due to noise: x%` and
//! `# Measurement period: x s` close a run. `run.sh` appends runs, so a file may hold several
//! runs, each restarting at 0.

use std::path::Path;

use crate::error::{CalibError, Tally, Warning, WarningKind};
use crate::format::{expect_header, sniff_header, Format};
use crate::input::{lines_from_reader, lines_of, Line, Lines};
use crate::units::{excerpt, fmt_ns, fmt_us, parse_c_double};

/// Longest detour accepted, ns (one hour): a longer one is a corrupt row.
pub const MAX_DETOUR_NS: f64 = 3.6e12;
/// Latest detour start accepted within a run, ns (11.6 days; stitched traces must stay
/// below the noise model's 2^62 ps).
pub const MAX_START_NS: f64 = 1e15;

/// One detour: the interrupted iteration's start and its length beyond t_min, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detour {
    pub start_ns: f64,
    pub duration_ns: f64,
}

/// A detour series on one time axis: starts strictly increasing, `period_ns` at least the end of
/// the last detour.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Detours {
    pub detours: Vec<Detour>,
    /// Length of the measured period, ns.
    pub period_ns: f64,
}

impl Detours {
    /// Starts, durations and period in integer picoseconds (rounded to the nearest ps), the units
    /// of the noise profile. Starts stay strictly increasing as long as detours are at least 1 ps
    /// apart (Netgauge prints 10 ps resolution).
    pub fn to_ps(&self) -> (Vec<u64>, Vec<u64>, u64) {
        let starts = self
            .detours
            .iter()
            .map(|d| (d.start_ns * 1e3).round() as u64)
            .collect();
        let durs = self
            .detours
            .iter()
            .map(|d| (d.duration_ns * 1e3).round() as u64)
            .collect();
        (starts, durs, (self.period_ns * 1e3).round() as u64)
    }

    /// Sum of detour durations divided by the period (the fraction of CPU time lost).
    pub fn overhead_fraction(&self) -> f64 {
        if self.period_ns <= 0.0 {
            return 0.0;
        }
        self.detours.iter().map(|d| d.duration_ns).sum::<f64>() / self.period_ns
    }
}

/// One selfish run (one Netgauge invocation) of a file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SelfishRun {
    /// Line of the run's first header (or first row when it has none).
    pub first_line: u64,
    /// `# Nodename:` of the preamble.
    pub host: Option<String>,
    /// `# Minimal cycle length [ns]:`, t_min in ns.
    pub t_min_ns: Option<f64>,
    /// `# Threshold: [% minimal cycle length]:`, percent of t_min (900 = 9 t_min).
    pub threshold_pct: Option<f64>,
    /// `# Number of iterations (recorded+unrecorded):`.
    pub iterations: Option<u64>,
    /// `# Number of Cycles/Detours:` (the `-s` sample slots; a full run has (s-2)/2 detours).
    pub samples: Option<u64>,
    /// `# CPU overhead due to noise:` in percent, from the trailer.
    pub overhead_pct: Option<f64>,
    /// `# Measurement period:` in seconds, from the trailer (printed with 10 ms resolution).
    pub period_s: Option<f64>,
    /// Detours as reported: start relative to the run's first detour, duration minus t_min.
    pub detours: Vec<Detour>,
}

impl SelfishRun {
    /// End of the last detour, ns (0 without detours).
    pub fn last_end_ns(&self) -> f64 {
        self.detours
            .last()
            .map(|d| d.start_ns + d.duration_ns)
            .unwrap_or(0.0)
    }

    /// The run's length on the stitched time axis: the reported measurement period, or the end of
    /// the last detour when the period is absent or (through its 10 ms rounding) shorter.
    pub fn effective_period_ns(&self) -> f64 {
        let end = self.last_end_ns();
        match self.period_s {
            Some(p) => (p * 1e9).max(end),
            None => end,
        }
    }
}

/// A selfish-detour file: its runs as reported, see [`SelfishTrace::stitched`] for one time axis.
#[derive(Clone, Debug, PartialEq)]
pub struct SelfishTrace {
    pub source: String,
    pub runs: Vec<SelfishRun>,
    /// Data rows skipped (NaN/garbage, a cut-off last line).
    pub skipped: u64,
    pub warnings: Vec<Warning>,
}

impl SelfishTrace {
    /// All runs on one time axis: run k is shifted by the sum of the effective periods of runs
    /// 0..k ([`SelfishRun::effective_period_ns`]), so time never restarts at 0 and starts stay
    /// increasing. Durations are kept as reported (already minus t_min). The period is the sum of
    /// the effective periods.
    pub fn stitched(&self) -> Detours {
        let mut out = Vec::with_capacity(self.detour_count());
        let mut offset = 0.0;
        for run in &self.runs {
            out.extend(run.detours.iter().map(|d| Detour {
                start_ns: d.start_ns + offset,
                duration_ns: d.duration_ns,
            }));
            offset += run.effective_period_ns();
        }
        Detours {
            detours: out,
            period_ns: offset,
        }
    }

    /// Detours over all runs.
    pub fn detour_count(&self) -> usize {
        self.runs.iter().map(|r| r.detours.len()).sum()
    }
}

/// Reads a selfish-detour file (plain or xz), streaming.
pub fn read_selfish(path: impl AsRef<Path>) -> Result<SelfishTrace, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    parse_selfish(&mut lines)
}

/// [`read_selfish`] over any buffered reader; `name` is used in messages.
pub fn read_selfish_from<R: std::io::BufRead + 'static>(
    reader: R,
    name: &str,
) -> Result<SelfishTrace, CalibError> {
    let mut lines = lines_from_reader(reader, name)?;
    parse_selfish(&mut lines)
}

/// Header keys of the selfish preamble; any of them after data starts a new run.
fn is_preamble(body: &str) -> bool {
    const KEYS: [&str; 10] = [
        "Benchmark Method:",
        "Compute-Cycle Duration:",
        "Number of Cycles/Detours:",
        "Sysname",
        "Nodename",
        "Release",
        "Selfish Benchmark",
        "Minimal cycle length",
        "Number of iterations",
        "Threshold:",
    ];
    KEYS.iter().any(|k| body.starts_with(k))
}

fn header_value(body: &str) -> Option<&str> {
    // "Threshold: [% minimal cycle length]: 900" has two colons; the value follows the last one.
    body.rsplit_once(':').map(|(_, v)| v.trim())
}

/// The run being read.
#[derive(Default)]
struct RunBuilder {
    run: SelfishRun,
    started: bool,
    has_data: bool,
    /// Its trailer has been seen.
    closed: bool,
}

impl RunBuilder {
    /// Marks the run as started at `line` unless it already is.
    fn start(&mut self, line: u64) {
        if !self.started {
            self.started = true;
            self.run.first_line = line;
        }
    }

    /// Moves a started run to `runs` and resets the builder.
    fn close(&mut self, runs: &mut Vec<SelfishRun>) {
        let b = std::mem::take(self);
        if b.started {
            runs.push(b.run);
        }
    }
}

fn parse_selfish(lines: &mut Lines) -> Result<SelfishTrace, CalibError> {
    let path = lines.path().to_string();
    let mut runs: Vec<SelfishRun> = Vec::new();
    let mut cur = RunBuilder::default();
    let mut prev_line = 0u64;
    let mut skipped = Tally::default();
    let mut no_header = Tally::default();
    let mut overlaps = Tally::default();
    let mut data_rows = 0u64;

    while let Some(Line {
        no: ln,
        text: t,
        unterminated,
    }) = lines.next_nonblank()?
    {
        if let Some(rest) = t.strip_prefix('#') {
            let body = rest.trim();
            expect_header(&path, ln, t, Format::Selfish)?;
            if is_preamble(body) {
                if cur.has_data || cur.closed {
                    cur.close(&mut runs);
                }
                cur.start(ln);
                let run = &mut cur.run;
                let v = header_value(body);
                if body.starts_with("Nodename") {
                    run.host = v.map(str::to_string);
                } else if body.starts_with("Minimal cycle length") {
                    run.t_min_ns = v.and_then(parse_c_double);
                } else if body.starts_with("Number of iterations") {
                    run.iterations = v.and_then(|v| v.parse().ok());
                } else if body.starts_with("Threshold:") {
                    run.threshold_pct = v.and_then(parse_c_double);
                } else if body.starts_with("Number of Cycles/Detours:") {
                    run.samples = v.and_then(|v| v.parse().ok());
                }
            } else if let Some(v) = body.strip_prefix("CPU overhead due to noise:") {
                cur.run.overhead_pct = parse_c_double(v.trim().trim_end_matches('%').trim());
                cur.closed = true;
            } else if let Some(v) = body.strip_prefix("Measurement period:") {
                cur.run.period_s = parse_c_double(v.trim().trim_end_matches('s').trim());
                cur.closed = true;
            }
            continue;
        }
        data_rows += 1;
        let fields: Vec<&str> = t.split_whitespace().collect();
        let parsed = if unterminated {
            Err(format!(
                "`{}` has no line end: the file was cut off in the middle of this row",
                excerpt(t)
            ))
        } else if fields.len() != 2 {
            Err(format!(
                "expected 2 fields (start ns, detour ns), found {} in `{}`",
                fields.len(),
                excerpt(t)
            ))
        } else {
            match (parse_c_double(fields[0]), parse_c_double(fields[1])) {
                (Some(s), Some(d)) if s.is_finite() && d.is_finite() => Ok((s, d)),
                (Some(_), Some(_)) => Err(format!("non-finite value in `{}`", excerpt(t))),
                _ => Err(format!("not two numbers: `{}`", excerpt(t))),
            }
        };
        let (start, dur) = match parsed {
            Ok(v) => v,
            Err(reason) => {
                skipped.add(ln, || reason);
                continue;
            }
        };
        if dur < 0.0 {
            return Err(CalibError::NegativeDuration {
                path,
                line: ln,
                duration_ns: dur,
            });
        }
        if dur > MAX_DETOUR_NS {
            return Err(CalibError::Implausible {
                path,
                line: ln,
                what: "detour duration",
                found: format!("{}ns", excerpt(fields[1])),
                max: "3600 s (one hour)",
            });
        }
        if start > MAX_START_NS {
            return Err(CalibError::Implausible {
                path,
                line: ln,
                what: "detour start",
                found: format!("{}ns", excerpt(fields[0])),
                max: "1e15 ns (11.6 days) into a run",
            });
        }
        if cur.closed || (cur.has_data && start == 0.0) {
            // Data after a trailer, or a restart at 0, without a new header block.
            no_header.add(ln, String::new);
            let (t_min, thr) = (cur.run.t_min_ns, cur.run.threshold_pct);
            cur.close(&mut runs);
            cur.start(ln);
            cur.run.t_min_ns = t_min;
            cur.run.threshold_pct = thr;
        }
        // A headerless file is a bare `start\tduration` list: one run from its first row.
        cur.start(ln);
        let run = &mut cur.run;
        if let Some(prev) = run.detours.last() {
            if start <= prev.start_ns {
                return Err(CalibError::NonMonotonic {
                    path,
                    line: ln,
                    prev_line,
                    run_line: run.first_line,
                    prev_ns: prev.start_ns,
                    found_ns: start,
                });
            }
            if start < prev.start_ns + prev.duration_ns {
                overlaps.add(ln, String::new);
            }
        }
        run.detours.push(Detour {
            start_ns: start,
            duration_ns: dur,
        });
        cur.has_data = true;
        prev_line = ln;
    }
    if lines.lines_read() == 0 {
        return Err(CalibError::Empty {
            path,
            expected: "a selfish-detour file (`# Selfish Benchmark` header, `<start ns>\\t<detour ns>` rows)".into(),
        });
    }
    cur.close(&mut runs);

    let mut warnings = Vec::new();
    let empty: Vec<u64> = runs
        .iter()
        .filter(|r| r.detours.is_empty())
        .map(|r| r.first_line)
        .collect();
    runs.retain(|r| !r.detours.is_empty());
    if runs.is_empty() {
        return Err(CalibError::NoData {
            path,
            detail: skipped.no_usable("detour", || {
                "no detour rows; expected `<start ns>\\t<detour ns>` rows after the `#` header"
                    .into()
            }),
        });
    }
    if data_rows > 0 && skipped.count as f64 > 0.1 * data_rows as f64 {
        return Err(CalibError::TooManyBadRows {
            path,
            bad: skipped.count,
            total: data_rows,
            max_pct: 10.0,
            first_line: skipped.lines[0],
            first_reason: skipped.first_reason.unwrap_or_default(),
        });
    }
    warnings.extend(skipped.skipped_warning(&format!(" of {data_rows} data rows")));
    if !empty.is_empty() {
        warnings.push(Warning::new(
            WarningKind::EmptyRun,
            empty.len() as u64,
            empty.iter().take(Warning::MAX_LINES).copied().collect(),
            format!("{} run(s) without detour rows were dropped", empty.len()),
        ));
    }
    if no_header.count > 0 {
        warnings.push(Warning::new(
            WarningKind::RunWithoutHeader,
            no_header.count,
            no_header.lines.clone(),
            format!(
                "{} run(s) start without a header block (time restarts at 0 or rows follow a trailer); treated as new runs with the previous run's t_min and threshold",
                no_header.count
            ),
        ));
    }
    if overlaps.count > 0 {
        warnings.push(Warning::new(
            WarningKind::OverlappingDetours,
            overlaps.count,
            overlaps.lines.clone(),
            format!(
                "{} detour(s) start before the previous detour ends; kept as reported",
                overlaps.count
            ),
        ));
    }
    for r in &runs {
        if r.period_s.is_none() || r.overhead_pct.is_none() {
            warnings.push(Warning::new(
                WarningKind::MissingTrailer,
                1,
                vec![r.first_line],
                format!(
                    "the run with {} detours has no `# Measurement period` trailer (cut short?); its period is taken as the end of its last detour, {}",
                    r.detours.len(),
                    fmt_ns(r.last_end_ns())
                ),
            ));
        }
        if let Some(s) = r.samples {
            let expected = s.saturating_sub(2) / 2;
            if (r.detours.len() as u64) < expected {
                warnings.push(Warning::new(
                    WarningKind::ShortRun,
                    expected - r.detours.len() as u64,
                    vec![r.first_line],
                    format!(
                        "the run has {} detours, but `-s {s}` makes Netgauge record {expected}: {} missing (truncated file?)",
                        r.detours.len(),
                        expected - r.detours.len() as u64
                    ),
                ));
            }
        }
        if let Some(p) = r.period_s {
            let end = r.last_end_ns();
            // The period is printed with 2 decimals in seconds: up to 5 ms below the true value.
            if p * 1e9 + 5e6 < end {
                warnings.push(Warning::new(
                    WarningKind::PeriodRounding,
                    1,
                    vec![r.first_line],
                    format!(
                        "the run's measurement period {p} s is shorter than its last detour end {}; the detour end is used",
                        fmt_ns(end)
                    ),
                ));
            }
        }
    }
    Ok(SelfishTrace {
        source: path,
        runs,
        skipped: skipped.count,
        warnings,
    })
}

/// Whether a quantum trace is FWQ (fixed work, durations measured) or FTQ (fixed time, work
/// measured).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantumKind {
    /// Fixed Work Quantum: each value is the duration of one quantum in whole µs (truncated).
    Fwq,
    /// Fixed Time Quantum: each value is the work (loop iterations) done in one quantum of
    /// `-d` µs.
    Ftq,
}

/// An FWQ or FTQ trace of Netgauge's noise pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantumTrace {
    pub source: String,
    pub kind: QuantumKind,
    /// `# Compute-Cycle Duration:` (`-d`), µs: the FTQ quantum; for FWQ the intended work size.
    pub quantum_us: Option<f64>,
    /// `# Number of Cycles/Detours:` (`-s`).
    pub samples: Option<u64>,
    pub host: Option<String>,
    /// One value per quantum, in order: µs (FWQ) or iterations (FTQ).
    pub values: Vec<u64>,
    pub warnings: Vec<Warning>,
}

/// Options of [`QuantumTrace::to_detours`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantumOptions {
    /// Lost time per quantum at or below this many ns is not a detour (default 1000 ns, the 1 µs
    /// resolution of FWQ output). 0 keeps every quantum with any lost time.
    pub threshold_ns: f64,
}

impl Default for QuantumOptions {
    fn default() -> Self {
        QuantumOptions {
            threshold_ns: 1000.0,
        }
    }
}

impl QuantumTrace {
    /// Converts the quanta into detours on one time axis.
    ///
    /// * FWQ: quantum i lasts q_i µs; the fastest quantum q_min is taken as noise-free. A quantum
    ///   longer than q_min by more than the threshold is a detour of length (q_i - q_min), placed at
    ///   the end of the quantum: start = (q_0 + … + q_{i-1}) + q_min. Period = Σ q_i.
    /// * FTQ: quantum i lasts d = `-d` µs and did w_i work; the largest w_max is taken as
    ///   noise-free. A quantum that lost d·(1 - w_i/w_max) > threshold is a detour of that length,
    ///   placed at the end of the quantum: start = i·d + d·w_i/w_max. Period = n·d.
    ///
    /// Both are lower bounds of the noise (the best quantum may itself be slowed), and FWQ values
    /// are truncated to whole µs by Netgauge.
    pub fn to_detours(&self, opts: &QuantumOptions) -> Result<Detours, CalibError> {
        let mut detours = Vec::new();
        match self.kind {
            QuantumKind::Fwq => {
                let min = *self.values.iter().min().unwrap_or(&0) as f64 * 1e3;
                let mut t = 0.0;
                for &q in &self.values {
                    let q_ns = q as f64 * 1e3;
                    let lost = q_ns - min;
                    if lost > opts.threshold_ns {
                        detours.push(Detour {
                            start_ns: t + min,
                            duration_ns: lost,
                        });
                    }
                    t += q_ns;
                }
                Ok(Detours {
                    detours,
                    period_ns: t,
                })
            }
            QuantumKind::Ftq => {
                let d_us = self.quantum_us.ok_or_else(|| CalibError::Missing {
                    path: self.source.clone(),
                    what: "no `# Compute-Cycle Duration: N usec` header: the FTQ quantum length is unknown, so work counts cannot be turned into time".into(),
                })?;
                let d = d_us * 1e3;
                let max = *self.values.iter().max().unwrap_or(&0) as f64;
                if max <= 0.0 {
                    return Ok(Detours {
                        detours,
                        period_ns: d * self.values.len() as f64,
                    });
                }
                for (i, &w) in self.values.iter().enumerate() {
                    let frac = w as f64 / max;
                    let lost = d * (1.0 - frac);
                    if lost > opts.threshold_ns {
                        detours.push(Detour {
                            start_ns: i as f64 * d + d * frac,
                            duration_ns: lost,
                        });
                    }
                }
                Ok(Detours {
                    detours,
                    period_ns: d * self.values.len() as f64,
                })
            }
        }
    }
}

/// Reads an FWQ or FTQ file of Netgauge's noise pattern (`-x noise -e fwq|ftq`).
pub fn read_quanta(path: impl AsRef<Path>) -> Result<QuantumTrace, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    parse_quanta(&mut lines)
}

/// [`read_quanta`] over any buffered reader; `name` is used in messages.
pub fn read_quanta_from<R: std::io::BufRead + 'static>(
    reader: R,
    name: &str,
) -> Result<QuantumTrace, CalibError> {
    let mut lines = lines_from_reader(reader, name)?;
    parse_quanta(&mut lines)
}

fn parse_quanta(lines: &mut Lines) -> Result<QuantumTrace, CalibError> {
    let path = lines.path().to_string();
    let mut kind: Option<QuantumKind> = None;
    let mut quantum_us = None;
    let mut samples = None;
    let mut host = None;
    let mut values = Vec::new();
    let mut skipped = Tally::default();
    let mut data_rows = 0u64;
    while let Some(Line {
        no: ln,
        text: t,
        unterminated,
    }) = lines.next_nonblank()?
    {
        if let Some(rest) = t.strip_prefix('#') {
            let body = rest.trim();
            match sniff_header(t) {
                Some(Format::Fwq) => kind = Some(QuantumKind::Fwq),
                Some(Format::Ftq) => kind = Some(QuantumKind::Ftq),
                Some(other) => {
                    return Err(CalibError::WrongFormat {
                        path,
                        line: ln,
                        expected: Format::Fwq,
                        actual: other,
                        found: excerpt(t),
                    })
                }
                None => {}
            }
            if let Some(v) = body.strip_prefix("Compute-Cycle Duration:") {
                quantum_us = parse_c_double(v.trim().trim_end_matches("usec").trim());
            } else if let Some(v) = body.strip_prefix("Number of Cycles/Detours:") {
                samples = v.trim().parse().ok();
            } else if let Some(v) = body.strip_prefix("Nodename:") {
                host = Some(v.trim().to_string());
            }
            continue;
        }
        data_rows += 1;
        if kind.is_none() {
            return Err(CalibError::Parse {
                path,
                line: ln,
                expected: "a `# Benchmark Method: fwq|ftq` or `# Fixed Work/Time Quantum Benchmark` header before the rows".into(),
                found: excerpt(t),
            });
        }
        let fields: Vec<&str> = t.split_whitespace().collect();
        let parsed = if unterminated {
            Err(format!(
                "`{}` has no line end: the file was cut off in the middle of this row",
                excerpt(t)
            ))
        } else if fields.len() != 2 {
            Err(format!(
                "expected 2 fields (cycle number, value), found {} in `{}`",
                fields.len(),
                excerpt(t)
            ))
        } else {
            match (fields[0].parse::<u64>(), fields[1].parse::<u64>()) {
                (Ok(i), Ok(v)) => Ok((i, v)),
                _ => Err(format!("not two whole numbers: `{}`", excerpt(t))),
            }
        };
        match parsed {
            Ok((i, v)) => {
                let expected = values.len() as u64 + skipped.count;
                if i != expected {
                    return Err(CalibError::CycleOrder {
                        path,
                        line: ln,
                        expected,
                        found: i,
                    });
                }
                values.push(v);
            }
            Err(reason) => skipped.add(ln, || reason),
        }
    }
    if lines.lines_read() == 0 {
        return Err(CalibError::Empty {
            path,
            expected:
                "an FWQ/FTQ file (`# Benchmark Method: fwq|ftq` header, `<cycle> <value>` rows)"
                    .into(),
        });
    }
    let kind = kind.ok_or_else(|| CalibError::NoData {
        path: path.clone(),
        detail: "no `# Benchmark Method: fwq|ftq` header and no rows".into(),
    })?;
    if values.is_empty() {
        return Err(CalibError::NoData {
            path,
            detail: skipped.no_usable("quantum", || "no quantum rows after the header".into()),
        });
    }
    let mut warnings = Vec::new();
    warnings.extend(skipped.skipped_warning(&format!(" of {data_rows}")));
    if let Some(s) = samples {
        if (values.len() as u64) < s {
            warnings.push(Warning::new(
                WarningKind::ShortRun,
                s - values.len() as u64,
                Vec::new(),
                format!(
                    "{} quanta, but the header promises {s}: {} missing (truncated file?)",
                    values.len(),
                    s - values.len() as u64
                ),
            ));
        }
    }
    if kind == QuantumKind::Fwq {
        let min = *values.iter().min().expect("non-empty") as f64;
        let max = *values.iter().max().expect("non-empty") as f64;
        if min > 0.0 && max / min > 10.0 {
            warnings.push(Warning::new(
                WarningKind::HeavyTail,
                values.iter().filter(|&&v| v as f64 > 10.0 * min).count() as u64,
                Vec::new(),
                format!(
                    "heavy tail: the longest quantum {} is {:.1}x the shortest {}",
                    fmt_us(max),
                    max / min,
                    fmt_us(min)
                ),
            ));
        }
    }
    Ok(QuantumTrace {
        source: path,
        kind,
        quantum_us,
        samples,
        host,
        values,
        warnings,
    })
}
