//! sysjitter raw files (`sysjitter --raw PREFIX` writes `PREFIX.<core>`).
//!
//! Header lines `# cpu_mhz: N`, `# threshold: Nns`, `# n_interruptions: N`, `# total_runtime: x
//! seconds`, …; rows `"%16lu %10lu %10ld %10lu"` = timestamp (ns since start), delta since the
//! previous interruption (µs), interruption length (cycles), interruption length (ns). With
//! `--sort` the delta column is absent and rows are sorted by length. The interruption length is
//! the whole gap, not gap minus the loop's own time as in selfish.

use std::path::Path;

use crate::error::{CalibError, Tally, Warning, WarningKind};
use crate::format::{sniff_header, Format};
use crate::input::{lines_of, Line, Lines};
use crate::selfish::{Detour, Detours};
use crate::units::{excerpt, parse_c_double};

/// One interruption.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SysjitterRow {
    pub line: u64,
    pub timestamp_ns: u64,
    /// Time since the previous interruption, µs (absent in `--sort` files).
    pub delta_us: Option<u64>,
    pub length_cycles: i64,
    pub length_ns: u64,
}

/// A sysjitter raw file of one core.
#[derive(Clone, Debug, PartialEq)]
pub struct SysjitterTrace {
    pub source: String,
    pub cpu_mhz: Option<f64>,
    pub threshold_ns: Option<f64>,
    /// `# n_interruptions:` as printed.
    pub n_interruptions: Option<u64>,
    /// `# total_runtime: x seconds`.
    pub runtime_s: Option<f64>,
    /// True for `--sort` files (no delta column, rows sorted by length).
    pub sorted: bool,
    pub rows: Vec<SysjitterRow>,
    pub warnings: Vec<Warning>,
}

impl SysjitterTrace {
    /// The interruptions as detours in time order (start = timestamp, duration = full length);
    /// period = the total runtime, or the end of the last interruption when it is absent.
    pub fn to_detours(&self) -> Detours {
        let mut d: Vec<Detour> = self
            .rows
            .iter()
            .map(|r| Detour {
                start_ns: r.timestamp_ns as f64,
                duration_ns: r.length_ns as f64,
            })
            .collect();
        d.sort_by(|a, b| a.start_ns.total_cmp(&b.start_ns));
        let end = d.last().map(|x| x.start_ns + x.duration_ns).unwrap_or(0.0);
        Detours {
            period_ns: self.runtime_s.map(|s| s * 1e9).unwrap_or(0.0).max(end),
            detours: d,
        }
    }
}

/// Reads a sysjitter `--raw` file.
pub fn read_sysjitter_raw(path: impl AsRef<Path>) -> Result<SysjitterTrace, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    parse_sysjitter(&mut lines)
}

fn parse_sysjitter(lines: &mut Lines) -> Result<SysjitterTrace, CalibError> {
    let path = lines.path().to_string();
    let mut tr = SysjitterTrace {
        source: path.clone(),
        cpu_mhz: None,
        threshold_ns: None,
        n_interruptions: None,
        runtime_s: None,
        sorted: false,
        rows: Vec::new(),
        warnings: Vec::new(),
    };
    let mut skipped = Tally::default();
    let mut seen_header = false;
    while let Some(Line {
        no: ln,
        text: t,
        unterminated,
    }) = lines.next_nonblank()?
    {
        if let Some(rest) = t.strip_prefix('#') {
            let body = rest.trim();
            match sniff_header(t) {
                Some(Format::SysjitterRaw) => seen_header = true,
                Some(other) => {
                    return Err(CalibError::WrongFormat {
                        path,
                        line: ln,
                        expected: Format::SysjitterRaw,
                        actual: other,
                        found: excerpt(t),
                    })
                }
                None => {}
            }
            if let Some(v) = body.strip_prefix("cpu_mhz:") {
                tr.cpu_mhz = parse_c_double(v.trim());
            } else if let Some(v) = body.strip_prefix("threshold:") {
                tr.threshold_ns = parse_c_double(v.trim().trim_end_matches("ns"));
            } else if let Some(v) = body.strip_prefix("n_interruptions:") {
                tr.n_interruptions = v.trim().parse().ok();
            } else if let Some(v) = body.strip_prefix("total_runtime:") {
                if let Some(s) = v.trim().strip_suffix("seconds") {
                    tr.runtime_s = parse_c_double(s.trim());
                }
            }
            continue;
        }
        if !seen_header {
            return Err(CalibError::Parse {
                path,
                line: ln,
                expected: "a `# cpu_mhz:` header before the rows".into(),
                found: excerpt(t),
            });
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let parsed = if unterminated {
            None
        } else {
            match f.len() {
                4 => match (
                    f[0].parse::<u64>(),
                    f[1].parse::<u64>(),
                    f[2].parse::<i64>(),
                    f[3].parse::<u64>(),
                ) {
                    (Ok(ts), Ok(dl), Ok(cy), Ok(ns)) => Some((ts, Some(dl), cy, ns)),
                    _ => None,
                },
                3 => match (
                    f[0].parse::<u64>(),
                    f[1].parse::<i64>(),
                    f[2].parse::<u64>(),
                ) {
                    (Ok(ts), Ok(cy), Ok(ns)) => {
                        tr.sorted = true;
                        Some((ts, None, cy, ns))
                    }
                    _ => None,
                },
                _ => None,
            }
        };
        match parsed {
            Some((ts, dl, cy, ns)) => tr.rows.push(SysjitterRow {
                line: ln,
                timestamp_ns: ts,
                delta_us: dl,
                length_cycles: cy,
                length_ns: ns,
            }),
            None => skipped.add(ln, || {
                format!(
                    "expected `timestamp_ns delta_us cycles ns` (or 3 fields with --sort), found `{}`",
                    excerpt(t)
                )
            }),
        }
    }
    if lines.lines_read() == 0 {
        return Err(CalibError::Empty {
            path,
            expected: "a sysjitter raw file (`# cpu_mhz:` header)".into(),
        });
    }
    if !seen_header {
        return Err(CalibError::NoData {
            path,
            detail: "no `# cpu_mhz:` header and no rows".into(),
        });
    }
    tr.warnings.extend(skipped.skipped_warning(""));
    if let Some(n) = tr.n_interruptions {
        if n != tr.rows.len() as u64 {
            tr.warnings.push(Warning::new(
                WarningKind::ShortRun,
                n.abs_diff(tr.rows.len() as u64),
                Vec::new(),
                format!(
                    "the header announces {n} interruptions, the file has {} rows",
                    tr.rows.len()
                ),
            ));
        }
    }
    Ok(tr)
}
