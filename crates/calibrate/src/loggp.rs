//! Netgauge's LogGP fit (`-x loggp`, the `-o` file).
//!
//! Rows are `"%lu %i %lf %lf %lf %lf %lf %lf %lf %lf %lf"`: size, n, PRTT(1,0,s), PRTT(n,0,s),
//! PRTT(n,PRTT(1,0,s),s), L, o_s, o_r, g, G, lsqu(g,G). Times are µs (medians over `-c` tests),
//! G is µs/byte. The first row has `-nan` g, G and lsqu, the second an `inf`/`-nan` lsqu; a size
//! can appear twice where Netgauge detected a protocol change.

use std::path::Path;

use crate::error::{CalibError, Tally, Warning, WarningKind};
use crate::format::{expect_header, Format};
use crate::input::{lines_from_reader, lines_of, Line, Lines};
use crate::stats::{quantile_sorted, sorted};
use crate::units::{excerpt, fmt_us, parse_c_double};

/// One row of the LogGP file, values as printed (µs; G in µs/byte; NaN/inf kept).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogGpRow {
    pub line: u64,
    pub size_bytes: u64,
    /// Messages per train (10 in Netgauge).
    pub n: u32,
    /// PRTT(1,0,s), µs.
    pub prtt_1: f64,
    /// PRTT(n,0,s), µs.
    pub prtt_n: f64,
    /// PRTT(n,PRTT(1,0,s),s), µs.
    pub prtt_n_d: f64,
    /// L = PRTT(1,0,1)/2, µs (constant over rows).
    pub l_us: f64,
    pub o_s_us: f64,
    pub o_r_us: f64,
    pub g_us: f64,
    pub big_g_us_per_byte: f64,
    /// Residual of Netgauge's least-squares fit of g, G.
    pub lsqu: f64,
}

impl LogGpRow {
    fn gap_valid(&self) -> bool {
        self.g_us.is_finite() && self.big_g_us_per_byte.is_finite() && self.lsqu.is_finite()
    }
}

/// A LogGP fit file.
#[derive(Clone, Debug, PartialEq)]
pub struct LogGpFit {
    pub source: String,
    /// Every row in file order, duplicates included.
    pub rows: Vec<LogGpRow>,
    pub warnings: Vec<Warning>,
}

/// Sizes either side of a step must number this many for [`LogGpFit::latency_step`].
pub const STEP_WINDOW: usize = 4;
/// A step's first size over the line of the sizes before it, at least.
pub const STEP_JUMP: f64 = 1.5;
/// The median of a step's sizes after over that line, at least.
pub const STEP_PERSISTS: f64 = 1.4;

/// A step up of the LogGP run's ping-pong between two neighbouring sizes
/// ([`LogGpFit::latency_step`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyStep {
    /// The last size before the step, bytes.
    pub before_bytes: u64,
    /// The first size after it, bytes.
    pub after_bytes: u64,
    /// PRTT(1,0,s) at those two sizes, µs.
    pub before_us: f64,
    pub after_us: f64,
    /// PRTT(1,0,s) of the first size after over the line of the sizes before.
    pub jump: f64,
}

impl LatencyStep {
    /// The eager threshold S the step suggests (messages of at most S bytes are eager): the
    /// largest power of two from the last size before the step up to the first after it
    /// (exclusive), else the last size before.
    pub fn eager_threshold(&self) -> u64 {
        match self.after_bytes.saturating_sub(1).checked_ilog2() {
            Some(e) if 1u64 << e >= self.before_bytes => 1 << e,
            _ => self.before_bytes,
        }
    }

    /// One line for the fit report: `the LogGP run's ping-pong steps up 1.9× from 7169 B
    /// (PRTT(1,0,s) 7.87 us) to 8193 B (15.74 us)`.
    pub fn describe(&self) -> String {
        format!(
            "the LogGP run's ping-pong steps up {:.1}x from {} B (PRTT(1,0,s) {:.2} us) to {} B ({:.2} us)",
            self.jump, self.before_bytes, self.before_us, self.after_bytes, self.after_us
        )
    }
}

/// LogGP parameters summarised from a fit file, in picoseconds (G in ps/byte).
///
/// * `l_ps`: the `L` column, PRTT(1,0,1)/2 (the same in every row).
/// * `o_s_ps`, `o_r_ps`: o_s and o_r at the smallest size with finite values (1 byte in
///   Netgauge's grid): LogGP's o is a per-message cost, and larger sizes add per-byte costs.
/// * `o_ps`: the mean of those two, (o_s + o_r)/2.
/// * `g_ps`, `big_g_ps_per_byte`: from the last row with finite g, G and lsqu, which is
///   Netgauge's own least-squares fit over the sizes since the last protocol change (the large
///   messages). A negative value is clamped to 0 with a warning. [`LogGpFit::fit_gap`] gives an
///   independent fit over a chosen size range.
#[derive(Clone, Debug, PartialEq)]
pub struct LogGpSummary {
    pub l_ps: f64,
    pub o_ps: f64,
    pub o_s_ps: f64,
    pub o_r_ps: f64,
    pub g_ps: f64,
    pub big_g_ps_per_byte: f64,
    /// Line the o values came from.
    pub o_line: u64,
    /// Line g and G came from.
    pub gap_line: u64,
    pub warnings: Vec<Warning>,
}

/// A least-squares fit of g and G.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GapFit {
    pub g_us: f64,
    pub big_g_us_per_byte: f64,
    pub rows_used: usize,
    /// Root-mean-square residual, µs.
    pub rms_us: f64,
}

/// The gap between back-to-back eager messages, by Netgauge's own fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EagerGap {
    /// g, ps: the intercept of Netgauge's least-squares fit of `(PRTT(n,0,s) − PRTT(1,0,s))/(n−1)`
    /// over the sizes `first_size..=last_size`.
    pub g_ps: f64,
    pub first_size: u64,
    pub last_size: u64,
    /// The line Netgauge printed it on (0: fitted here, [`LogGpFit::fit_gap`], because no row
    /// of the range has a finite fit).
    pub line: u64,
}

impl LogGpFit {
    /// g of eager messages (at most `s_bytes`): Netgauge prints, on each row, its fit over the
    /// sizes since the last protocol change it detected, so the fit over the eager sizes is
    /// the one printed on the last row of at most `s_bytes` (when no change was detected
    /// before it); otherwise the same fit made here. A negative intercept is clamped to 0.
    /// `None` when fewer than two rows are eager.
    pub fn eager_gap(&self, s_bytes: u64) -> Option<EagerGap> {
        let rows: Vec<LogGpRow> = self
            .rows_by_size()
            .into_iter()
            .filter(|r| r.size_bytes <= s_bytes)
            .collect();
        let first = rows.first()?.size_bytes;
        let changed = self.rows.len() != self.rows_by_size().len();
        match rows.last() {
            Some(r) if r.gap_valid() && !changed => Some(EagerGap {
                g_ps: r.g_us.max(0.0) * 1e6,
                first_size: first,
                last_size: r.size_bytes,
                line: r.line,
            }),
            Some(r) => {
                let f = self.fit_gap(first, r.size_bytes)?;
                Some(EagerGap {
                    g_ps: f.g_us.max(0.0) * 1e6,
                    first_size: first,
                    last_size: r.size_bytes,
                    line: 0,
                })
            }
            None => None,
        }
    }

    /// The first size at which Netgauge detected a protocol change (a size printed twice).
    pub fn first_protocol_change(&self) -> Option<u64> {
        let mut seen = std::collections::BTreeSet::new();
        self.rows
            .iter()
            .find(|r| !seen.insert(r.size_bytes))
            .map(|r| r.size_bytes)
    }

    /// The first step up of the run's ping-pong time, PRTT(1,0,s), between two neighbouring
    /// sizes: where an MPI changes protocol without Netgauge marking it (Netgauge repeats a
    /// size only when its g, G fit breaks down, which a rendezvous' extra round trip need
    /// not do). The line through the [`STEP_WINDOW`] sizes before (the median of their pairwise
    /// slopes, at least 0) predicts the next size and the median of the [`STEP_WINDOW`] sizes
    /// after; a step is a next size at least [`STEP_JUMP`] times its prediction, sizes after
    /// at least [`STEP_PERSISTS`] times theirs and every one of them above every size
    /// before. Only over evenly spaced sizes (Netgauge's default grid), where the line is
    /// a fair prediction; `None` when no size steps up so.
    pub fn latency_step(&self) -> Option<LatencyStep> {
        const K: usize = STEP_WINDOW;
        let rows: Vec<(f64, f64)> = self
            .rows_by_size()
            .iter()
            .filter(|r| r.prtt_1.is_finite() && r.prtt_1 > 0.0)
            .map(|r| (r.size_bytes as f64, r.prtt_1))
            .collect();
        let median = |v: Vec<f64>| quantile_sorted(&sorted(&v), 0.5);
        (K - 1..rows.len().saturating_sub(K)).find_map(|i| {
            let (before, after) = (&rows[i + 1 - K..=i], &rows[i + 1..=i + K]);
            let spacing = rows[i + 1].0 - rows[i].0;
            let even = rows[i + 1 - K..=i + K]
                .windows(2)
                .all(|w| w[1].0 - w[0].0 == spacing);
            let highest_before = before.iter().map(|r| r.1).fold(f64::MIN, f64::max);
            if !even || after.iter().any(|r| r.1 <= highest_before) {
                return None;
            }
            let mut slopes = Vec::with_capacity(K * (K - 1) / 2);
            for (a, p) in before.iter().enumerate() {
                for q in &before[a + 1..] {
                    slopes.push((q.1 - p.1) / (q.0 - p.0));
                }
            }
            let slope = median(slopes).max(0.0);
            let (x0, y0) = (
                median(before.iter().map(|r| r.0).collect()),
                median(before.iter().map(|r| r.1).collect()),
            );
            let line = |x: f64| y0 + slope * (x - x0);
            let jump = rows[i + 1].1 / line(rows[i + 1].0);
            let persists = median(after.iter().map(|r| r.1).collect())
                / line(median(after.iter().map(|r| r.0).collect()));
            (jump >= STEP_JUMP && persists >= STEP_PERSISTS).then(|| LatencyStep {
                before_bytes: rows[i].0 as u64,
                after_bytes: rows[i + 1].0 as u64,
                before_us: rows[i].1,
                after_us: rows[i + 1].1,
                jump,
            })
        })
    }

    /// Rows with one entry per size: the last row of each duplicated size (Netgauge writes the
    /// second one after resetting its fit at a protocol change), in size order.
    pub fn rows_by_size(&self) -> Vec<LogGpRow> {
        let mut out: Vec<LogGpRow> = Vec::with_capacity(self.rows.len());
        for r in &self.rows {
            match out.iter_mut().find(|o| o.size_bytes == r.size_bytes) {
                Some(o) => *o = *r,
                None => out.push(*r),
            }
        }
        out.sort_by_key(|r| r.size_bytes);
        out
    }

    /// The summary documented on [`LogGpSummary`].
    pub fn summary(&self) -> Result<LogGpSummary, CalibError> {
        let mut warnings = Vec::new();
        let l_row = self
            .rows
            .iter()
            .find(|r| r.l_us.is_finite() && r.l_us >= 0.0)
            .ok_or_else(|| self.missing("no row with a finite, non-negative L"))?;
        let o_row = self
            .rows_by_size()
            .into_iter()
            .find(|r| r.o_s_us.is_finite() && r.o_r_us.is_finite())
            .ok_or_else(|| self.missing("no row with finite o_s and o_r"))?;
        let g_row = self
            .rows
            .iter()
            .rev()
            .find(|r| r.gap_valid())
            .ok_or_else(|| self.missing("no row with finite g, G and lsqu(g,G)"))?;
        let mut clamp = |name: &str, v: f64, line: u64, unit: &str| -> f64 {
            if v < 0.0 {
                warnings.push(Warning::new(
                    WarningKind::NegativeParameter,
                    1,
                    vec![line],
                    format!("{name} = {v}{unit} is negative; clamped to 0"),
                ));
                0.0
            } else {
                v
            }
        };
        let o_s = clamp("o_s", o_row.o_s_us, o_row.line, "us");
        let o_r = clamp("o_r", o_row.o_r_us, o_row.line, "us");
        let g = clamp("g", g_row.g_us, g_row.line, "us");
        let big_g = clamp("G", g_row.big_g_us_per_byte, g_row.line, "us/B");
        Ok(LogGpSummary {
            l_ps: l_row.l_us * 1e6,
            o_ps: (o_s + o_r) / 2.0 * 1e6,
            o_s_ps: o_s * 1e6,
            o_r_ps: o_r * 1e6,
            g_ps: g * 1e6,
            big_g_ps_per_byte: big_g * 1e6,
            o_line: o_row.line,
            gap_line: g_row.line,
            warnings,
        })
    }

    /// Least-squares fit of `(PRTT(n,0,s) - PRTT(1,0,s)) / (n-1) = g + G·s` over the rows with
    /// `min_size <= s <= max_size` and finite PRTT values (one row per size, see
    /// [`LogGpFit::rows_by_size`]), the relation Netgauge fits. `None` with fewer than 2 rows.
    pub fn fit_gap(&self, min_size: u64, max_size: u64) -> Option<GapFit> {
        let pts: Vec<(f64, f64)> = self
            .rows_by_size()
            .into_iter()
            .filter(|r| r.size_bytes >= min_size && r.size_bytes <= max_size && r.n > 1)
            .filter(|r| r.prtt_1.is_finite() && r.prtt_n.is_finite())
            .map(|r| {
                (
                    r.size_bytes as f64,
                    (r.prtt_n - r.prtt_1) / (r.n as f64 - 1.0),
                )
            })
            .collect();
        if pts.len() < 2 {
            return None;
        }
        let k = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        if sxx == 0.0 {
            return None;
        }
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let slope = sxy / sxx;
        let icpt = my - slope * mx;
        let rss: f64 = pts.iter().map(|p| (p.1 - icpt - slope * p.0).powi(2)).sum();
        Some(GapFit {
            g_us: icpt,
            big_g_us_per_byte: slope,
            rows_used: pts.len(),
            rms_us: (rss / k).sqrt(),
        })
    }

    fn missing(&self, what: &str) -> CalibError {
        CalibError::NoData {
            path: self.source.clone(),
            detail: format!("cannot summarise the LogGP fit: {what}"),
        }
    }
}

/// Reads a LogGP fit file (plain or xz).
pub fn read_loggp(path: impl AsRef<Path>) -> Result<LogGpFit, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    parse_loggp(&mut lines)
}

/// [`read_loggp`] over any buffered reader; `name` is used in messages.
pub fn read_loggp_from<R: std::io::BufRead + 'static>(
    reader: R,
    name: &str,
) -> Result<LogGpFit, CalibError> {
    let mut lines = lines_from_reader(reader, name)?;
    parse_loggp(&mut lines)
}

fn parse_loggp(lines: &mut Lines) -> Result<LogGpFit, CalibError> {
    let path = lines.path().to_string();
    let mut rows: Vec<LogGpRow> = Vec::new();
    let mut skipped = Tally::default();
    let mut nonfinite = Tally::default();
    let mut data_rows = 0u64;
    while let Some(Line {
        no: ln,
        text: t,
        unterminated,
    }) = lines.next_nonblank()?
    {
        if t.starts_with('#') {
            expect_header(&path, ln, t, Format::LogGp)?;
            continue;
        }
        data_rows += 1;
        let f: Vec<&str> = t.split_whitespace().collect();
        if unterminated {
            skipped.add(ln, || {
                format!(
                    "`{}` has no line end: the file was cut off in the middle of this row",
                    excerpt(t)
                )
            });
            continue;
        }
        if f.len() != 11 {
            skipped.add(ln, || {
                format!(
                    "expected 11 fields (size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,d,s) L o_s o_r g G lsqu), found {} in `{}`",
                    f.len(),
                    excerpt(t)
                )
            });
            continue;
        }
        let size = f[0].parse::<u64>();
        let n = f[1].parse::<u32>();
        let vals: Vec<Option<f64>> = f[2..].iter().map(|s| parse_c_double(s)).collect();
        let (Ok(size), Ok(n)) = (size, n) else {
            skipped.add(ln, || {
                format!("size and n must be whole numbers in `{}`", excerpt(t))
            });
            continue;
        };
        if let Some(i) = vals.iter().position(|v| v.is_none()) {
            skipped.add(ln, || {
                format!("field {} `{}` is not a number", i + 3, excerpt(f[i + 2]))
            });
            continue;
        }
        let v: Vec<f64> = vals.into_iter().map(|v| v.expect("checked")).collect();
        let row = LogGpRow {
            line: ln,
            size_bytes: size,
            n,
            prtt_1: v[0],
            prtt_n: v[1],
            prtt_n_d: v[2],
            l_us: v[3],
            o_s_us: v[4],
            o_r_us: v[5],
            g_us: v[6],
            big_g_us_per_byte: v[7],
            lsqu: v[8],
        };
        // Netgauge's first two rows have no g/G fit yet (NaN/inf); anything else is unexpected.
        let expected_nan = rows.len() < 2;
        let unexpected = if expected_nan { &v[..6] } else { &v[..] };
        if unexpected.iter().any(|x| !x.is_finite()) {
            nonfinite.add(ln, String::new);
        }
        rows.push(row);
    }
    if lines.lines_read() == 0 {
        return Err(CalibError::Empty {
            path,
            expected: "a LogGP fit (`# size n PRTT(1,0,s) …` header and 11-column rows)".into(),
        });
    }
    if rows.is_empty() {
        return Err(CalibError::NoData {
            path,
            detail: skipped.no_usable("LogGP", || "no LogGP rows after the header".into()),
        });
    }
    let mut warnings = Vec::new();
    warnings.extend(skipped.skipped_warning(&format!(" of {data_rows}")));
    if nonfinite.count > 0 {
        warnings.push(Warning::new(
            WarningKind::NonFiniteValues,
            nonfinite.count,
            nonfinite.lines.clone(),
            format!(
                "{} row(s) hold NaN/inf where Netgauge normally prints numbers; those values are ignored by the summary",
                nonfinite.count
            ),
        ));
    }
    let mut dups = Tally::default();
    let mut dup_sizes = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if rows[..i].iter().any(|p| p.size_bytes == r.size_bytes) {
            dups.add(r.line, String::new);
            if dup_sizes.len() < Warning::MAX_LINES {
                dup_sizes.push(r.size_bytes.to_string());
            }
        }
    }
    if dups.count > 0 {
        warnings.push(Warning::new(
            WarningKind::DuplicateSizes,
            dups.count,
            dups.lines.clone(),
            format!(
                "{} duplicate size row(s) (sizes {} B; Netgauge repeats a size at a protocol change): the last row per size is used",
                dups.count,
                dup_sizes.join(", ")
            ),
        ));
    }
    let ls: Vec<f64> = rows
        .iter()
        .map(|r| r.l_us)
        .filter(|l| l.is_finite())
        .collect();
    if let (Some(lo), Some(hi)) = (
        ls.iter().copied().reduce(f64::min),
        ls.iter().copied().reduce(f64::max),
    ) {
        if hi > lo {
            warnings.push(Warning::new(
                WarningKind::Inconsistent,
                1,
                Vec::new(),
                format!(
                    "the L column varies from {} to {} (Netgauge writes one value); the first is used",
                    fmt_us(lo),
                    fmt_us(hi)
                ),
            ));
        }
    }
    Ok(LogGpFit {
        source: path,
        rows,
        warnings,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fit of PRTT(1,0,s) alone, µs by size.
    pub(crate) fn fit(rows: &[(u64, f64)]) -> LogGpFit {
        LogGpFit {
            source: "t.out".into(),
            rows: rows
                .iter()
                .enumerate()
                .map(|(i, &(size_bytes, prtt_1))| LogGpRow {
                    line: i as u64 + 4,
                    size_bytes,
                    n: 10,
                    prtt_1,
                    prtt_n: f64::NAN,
                    prtt_n_d: f64::NAN,
                    l_us: 1.0,
                    o_s_us: 1.0,
                    o_r_us: 1.0,
                    g_us: f64::NAN,
                    big_g_us_per_byte: f64::NAN,
                    lsqu: f64::NAN,
                })
                .collect(),
            warnings: Vec::new(),
        }
    }

    /// Netgauge's grid 1, 1025, 2049, … with `prtt(size)`.
    pub(crate) fn grid(n: u64, prtt: impl Fn(u64) -> f64) -> LogGpFit {
        fit(&(0..n)
            .map(|i| (1 + 1024 * i, prtt(1 + 1024 * i)))
            .collect::<Vec<_>>())
    }

    #[test]
    fn a_rendezvous_step_is_found_between_its_two_sizes() {
        // Eager up to 7169 B at 0.5 us/KiB, then one more round trip of 8 us; a wobble of
        // +-3 % on every size.
        let f = grid(24, |s| {
            let wobble = if (s / 1024) % 2 == 0 { 1.03 } else { 0.97 };
            wobble * (3.3 + 0.5 * s as f64 / 1024.0 + if s > 8192 { 8.0 } else { 0.0 })
        });
        let step = f.latency_step().expect("a step");
        assert_eq!((step.before_bytes, step.after_bytes), (7169, 8193));
        assert_eq!(step.eager_threshold(), 8192);
        assert!(step.jump > 1.5, "{step:?}");
        assert!(
            step.describe().starts_with(
                "the LogGP run's ping-pong steps up 2.2x from 7169 B (PRTT(1,0,s) 6.60 us) to 8193 B (15.76 us)"
            ),
            "{}",
            step.describe()
        );
    }

    #[test]
    fn a_line_a_lone_outlier_and_a_doubling_grid_are_no_step() {
        // Bandwidth-bound from the first size: the line through the sizes before predicts
        // the ones after.
        assert_eq!(
            grid(40, |s| 0.1 + 2.0 * s as f64 / 1024.0).latency_step(),
            None
        );
        // One slow size that does not persist.
        assert_eq!(
            grid(40, |s| if s == 20481 { 30.0 } else { 10.0 }).latency_step(),
            None
        );
        // Sizes doubling: the line through uneven sizes is no prediction, so no step.
        let doubling: Vec<(u64, f64)> = (0..20).map(|i| (1 << i, 2.0 + (1 << i) as f64)).collect();
        assert_eq!(fit(&doubling).latency_step(), None);
    }

    #[test]
    fn the_suggested_threshold_is_the_power_of_two_before_the_step_or_the_last_eager_size() {
        let step = |before_bytes, after_bytes| LatencyStep {
            before_bytes,
            after_bytes,
            before_us: 1.0,
            after_us: 2.0,
            jump: 2.0,
        };
        assert_eq!(step(3073, 4097).eager_threshold(), 4096);
        assert_eq!(step(4096, 4097).eager_threshold(), 4096);
        assert_eq!(step(5000, 6000).eager_threshold(), 5000);
        assert_eq!(step(0, 1).eager_threshold(), 0);
    }
}
