//! Netgauge's `one_one` per-size summary (`-o`, columns A..Q) and upstream `-x distrtt` output.

use std::path::Path;

use crate::error::{CalibError, Tally, Warning, WarningKind};
use crate::format::{expect_header, sniff_header, Format};
use crate::input::{lines_from_reader, lines_of, Line, Lines};
use crate::units::{excerpt, parse_c_double};

/// Min/avg/median/max/stddev of a time, µs, and the number of values outside avg ± 2σ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeStats {
    pub min_us: f64,
    pub avg_us: f64,
    pub median_us: f64,
    pub max_us: f64,
    pub stddev_us: f64,
    /// Netgauge calls them values "bigger than avg + 2 * stddev"; it counts both sides.
    pub outliers: u64,
}

/// Throughput columns N..Q, Mbit/s, computed by Netgauge from RTT/2: N from the maximum RTT/2,
/// O from the average, P from the median, Q from the minimum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throughput {
    pub from_max_rtt: f64,
    pub from_avg_rtt: f64,
    pub from_median_rtt: f64,
    pub from_min_rtt: f64,
}

/// One row `A - B C D E (F G) - H I J K (L M) - N O P Q`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SummaryRow {
    pub line: u64,
    /// A: message size, bytes.
    pub size_bytes: u64,
    /// B..G: send blocking time.
    pub send: TimeStats,
    /// H..M: RTT/2.
    pub rtt_half: TimeStats,
    /// N..Q.
    pub throughput_mbit_s: Throughput,
}

/// A `one_one` summary file; appended runs give several rows per size.
#[derive(Clone, Debug, PartialEq)]
pub struct OneOneSummary {
    pub source: String,
    pub rows: Vec<SummaryRow>,
    /// `## Netgauge v…` banners, i.e. runs in the file.
    pub runs: usize,
    pub warnings: Vec<Warning>,
}

/// Reads a `one_one` summary (`-o`) file.
pub fn read_summary(path: impl AsRef<Path>) -> Result<OneOneSummary, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    parse_summary(&mut lines)
}

/// [`read_summary`] over any buffered reader; `name` is used in messages.
pub fn read_summary_from<R: std::io::BufRead + 'static>(
    reader: R,
    name: &str,
) -> Result<OneOneSummary, CalibError> {
    let mut lines = lines_from_reader(reader, name)?;
    parse_summary(&mut lines)
}

fn parse_row(t: &str, line: u64) -> Result<SummaryRow, String> {
    let cleaned: String = t
        .chars()
        .map(|c| if c == '(' || c == ')' { ' ' } else { c })
        .collect();
    let tok: Vec<&str> = cleaned.split_whitespace().collect();
    if tok.len() != 20 || tok[1] != "-" || tok[8] != "-" || tok[15] != "-" {
        return Err(format!(
            "expected `A - B C D E (F G) - H I J K (L M) - N O P Q` (20 fields), found {} fields",
            tok.len()
        ));
    }
    let size: u64 = tok[0]
        .parse()
        .map_err(|_| format!("size `{}` is not a whole number", tok[0]))?;
    let num = |i: usize| -> Result<f64, String> {
        parse_c_double(tok[i]).ok_or_else(|| format!("field {} `{}` is not a number", i, tok[i]))
    };
    let count = |i: usize| -> Result<u64, String> {
        tok[i]
            .parse::<u64>()
            .map_err(|_| format!("outlier count `{}` is not a whole number", tok[i]))
    };
    let stats = |b: usize| -> Result<TimeStats, String> {
        Ok(TimeStats {
            min_us: num(b)?,
            avg_us: num(b + 1)?,
            median_us: num(b + 2)?,
            max_us: num(b + 3)?,
            stddev_us: num(b + 4)?,
            outliers: count(b + 5)?,
        })
    };
    Ok(SummaryRow {
        line,
        size_bytes: size,
        send: stats(2)?,
        rtt_half: stats(9)?,
        throughput_mbit_s: Throughput {
            from_max_rtt: num(16)?,
            from_avg_rtt: num(17)?,
            from_median_rtt: num(18)?,
            from_min_rtt: num(19)?,
        },
    })
}

fn parse_summary(lines: &mut Lines) -> Result<OneOneSummary, CalibError> {
    let path = lines.path().to_string();
    let mut rows = Vec::new();
    let mut runs = 0;
    let mut skipped = Tally::default();
    let mut data_rows = 0u64;
    while let Some(Line {
        no: ln,
        text: t,
        unterminated,
    }) = lines.next_nonblank()?
    {
        if t.starts_with('#') {
            match sniff_header(t) {
                Some(Format::Summary)
                    if t.trim_start_matches('#').trim().starts_with("Netgauge v") =>
                {
                    runs += 1;
                }
                Some(Format::Summary) => {}
                Some(other) => {
                    return Err(CalibError::WrongFormat {
                        path,
                        line: ln,
                        expected: Format::Summary,
                        actual: other,
                        found: excerpt(t),
                    })
                }
                None => {}
            }
            continue;
        }
        data_rows += 1;
        if unterminated {
            skipped.add(ln, || {
                format!(
                    "`{}` has no line end: the file was cut off in the middle of this row",
                    excerpt(t)
                )
            });
            continue;
        }
        match parse_row(t, ln) {
            Ok(r) => rows.push(r),
            Err(reason) => skipped.add(ln, || format!("{reason} in `{}`", excerpt(t))),
        }
    }
    if lines.lines_read() == 0 {
        return Err(CalibError::Empty {
            path,
            expected: "a one_one summary (`A - B C D E (F G) - H I J K (L M) - N O P Q` rows)"
                .into(),
        });
    }
    if rows.is_empty() {
        return Err(CalibError::NoData {
            path,
            detail: skipped.no_usable("summary", || "no summary rows after the header".into()),
        });
    }
    let mut warnings = Vec::new();
    warnings.extend(skipped.skipped_warning(&format!(" of {data_rows}")));
    Ok(OneOneSummary {
        source: path,
        rows,
        runs,
        warnings,
    })
}

/// One sample of upstream `-x distrtt`: `index roundtrip clockdiff localtime`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistRttRow {
    pub index: u64,
    /// Full round trip, timer ticks.
    pub roundtrip_ticks: u64,
    /// `t2_remote - t1_local`, ticks, as printed with `%llu` (a negative difference wraps).
    pub clockdiff_ticks: u64,
    /// `MPI_Wtime()` seconds since the start.
    pub local_time_s: f64,
}

/// Standard output of upstream Netgauge's `-x distrtt`: round trips in timer ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct DistRtt {
    pub source: String,
    /// Timer named by the `# initializing … timer` line (e.g. `x86-64`, `MPI_Wtime`).
    pub timer: Option<String>,
    pub rows: Vec<DistRttRow>,
    pub warnings: Vec<Warning>,
}

impl DistRtt {
    /// RTT/2 per sample, µs, given the timer frequency in ticks per µs (1000 for `MPI_Wtime`,
    /// whose ticks are ns; the TSC frequency in MHz for the x86-64 timer).
    pub fn rtt_half_us(&self, ticks_per_us: f64) -> Vec<f64> {
        self.rows
            .iter()
            .map(|r| r.roundtrip_ticks as f64 / ticks_per_us / 2.0)
            .collect()
    }
}

/// Reads the standard output of `-x distrtt`.
pub fn read_distrtt(path: impl AsRef<Path>) -> Result<DistRtt, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    parse_distrtt(&mut lines)
}

fn parse_distrtt(lines: &mut Lines) -> Result<DistRtt, CalibError> {
    let path = lines.path().to_string();
    let mut rows = Vec::new();
    let mut timer = None;
    let mut skipped = Tally::default();
    while let Some(Line {
        no: ln,
        text: t,
        unterminated,
    }) = lines.next_nonblank()?
    {
        if let Some(rest) = t.strip_prefix('#') {
            let body = rest.trim();
            expect_header(&path, ln, t, Format::DistRtt)?;
            if let Some(x) = body.strip_prefix("initializing ") {
                if let Some((name, _)) = x.split_once(" timer") {
                    timer = Some(name.to_string());
                }
            }
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let parsed = if unterminated {
            None
        } else if f.len() == 4 {
            match (
                f[0].parse::<u64>(),
                f[1].parse::<u64>(),
                f[2].parse::<u64>(),
                parse_c_double(f[3]),
            ) {
                (Ok(index), Ok(rt), Ok(cd), Some(lt)) => Some(DistRttRow {
                    index,
                    roundtrip_ticks: rt,
                    clockdiff_ticks: cd,
                    local_time_s: lt,
                }),
                _ => None,
            }
        } else {
            None
        };
        match parsed {
            Some(r) => rows.push(r),
            None => skipped.add(ln, || {
                format!(
                    "expected `index roundtrip_ticks clockdiff_ticks seconds`, found `{}`",
                    excerpt(t)
                )
            }),
        }
    }
    if lines.lines_read() == 0 {
        return Err(CalibError::Empty {
            path,
            expected: "distrtt output (`index roundtrip clockdiff time` rows)".into(),
        });
    }
    if rows.is_empty() {
        return Err(CalibError::NoData {
            path,
            detail: "no `index roundtrip clockdiff time` rows".into(),
        });
    }
    let mut warnings = Vec::new();
    warnings.extend(skipped.skipped_warning(""));
    warnings.push(Warning::new(
        WarningKind::Timebase,
        rows.len() as u64,
        Vec::new(),
        format!(
            "round trips are in ticks of the {} timer, whose frequency the output does not record; convert with DistRtt::rtt_half_us(ticks_per_us)",
            timer.as_deref().unwrap_or("unnamed")
        ),
    ));
    Ok(DistRtt {
        source: path,
        timer,
        rows,
        warnings,
    })
}
