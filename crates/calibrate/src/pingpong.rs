//! Per-sample ping-pong files of the cloud_noise Netgauge fork (`-x one_one -f FILE`).
//!
//! Format: a `#size\trtt` header, then one `"%d\t%lf"` row per sample: the message size in bytes
//! and **RTT/2 in µs** (the column is called `rtt` but holds half the round trip). The paper's
//! "1-hour" traces are concatenations of 1000-sample runs, each with its own header.
//!
//! Blocks and warm-up: a block is one Netgauge run. A block starts at every `#size\trtt` header,
//! at every change of message size, and (with [`PingPongOptions::block_len`], 1000 by default)
//! after every `block_len` rows of one header-delimited run. The first
//! [`PingPongOptions::warmup`] rows of every block (21 by default) are dropped. For files made of
//! full 1000-row runs this is exactly the paper's filter `index % 1000 <= 20` over the data rows,
//! including the Azure HC44rs bandwidth file whose 161 runs share one header. Rows that cannot be
//! used (NaN, garbage, a cut-off last line) still occupy their position in the block.

use std::path::Path;

use crate::error::{CalibError, SizeCount, Tally, Warning, WarningKind};
use crate::format::{sniff_header, Format};
use crate::input::{lines_from_reader, lines_of, Line, Lines};
use crate::units::{excerpt, fmt_bytes, fmt_ratio, fmt_us};

/// Largest message size accepted as a latency capture.
pub const LATENCY_MAX_BYTES: u64 = 4096;
/// Smallest message size accepted as a bandwidth capture.
pub const BANDWIDTH_MIN_BYTES: u64 = 65536;
/// Largest RTT/2 sample accepted, µs (one hour): a larger value is a corrupt row, not a
/// measurement (`1e300` would become 18,446,744 s in the profile and overflow every run).
pub const MAX_RTT2_US: f64 = 3.6e9;

/// What a ping-pong capture is expected to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PingPongKind {
    /// No expectation.
    #[default]
    Any,
    /// Small messages: size at most [`LATENCY_MAX_BYTES`].
    Latency,
    /// Bandwidth-saturating messages: size at least [`BANDWIDTH_MIN_BYTES`].
    Bandwidth,
}

impl PingPongKind {
    pub fn name(self) -> &'static str {
        match self {
            PingPongKind::Any => "ping-pong",
            PingPongKind::Latency => "latency",
            PingPongKind::Bandwidth => "bandwidth",
        }
    }

    pub(crate) fn size_rule(self) -> String {
        match self {
            PingPongKind::Any => "any message size".into(),
            PingPongKind::Latency => {
                format!("messages of at most {}", fmt_bytes(LATENCY_MAX_BYTES))
            }
            PingPongKind::Bandwidth => {
                format!("messages of at least {}", fmt_bytes(BANDWIDTH_MIN_BYTES))
            }
        }
    }

    fn accepts(self, size: u64) -> bool {
        match self {
            PingPongKind::Any => true,
            PingPongKind::Latency => size <= LATENCY_MAX_BYTES,
            PingPongKind::Bandwidth => size >= BANDWIDTH_MIN_BYTES,
        }
    }
}

/// Options of [`read_pingpong`].
#[derive(Clone, Debug, PartialEq)]
pub struct PingPongOptions {
    /// Rows dropped at the start of every block. Default 21, the paper's `index % 1000 <= 20`
    /// (its comment says 20, the code drops 21).
    pub warmup: usize,
    /// Rows per Netgauge run (`-c`; `loggops-sim calibrate --block-len`): a header-delimited run
    /// longer than this is cut into blocks of this many rows. Default `Some(1000)` (the paper's `-c 1000`); `None` = blocks end only at
    /// headers and size changes (e.g. for one long `-c 300000` run).
    pub block_len: Option<usize>,
    /// Keep only rows of this message size (needed for size sweeps). `None` = the file must hold
    /// a single size.
    pub size: Option<u64>,
    /// Expected kind; a mismatch is an error (e.g. a 16 MiB file read as latency).
    pub kind: PingPongKind,
    /// Largest tolerated fraction of unusable rows before the file is rejected (default 0.1).
    pub max_bad_fraction: f64,
    /// Warn when p99.9 / median exceeds this (default 10).
    pub heavy_tail_p999_ratio: f64,
    /// Warn when max / median exceeds this (default 100).
    pub heavy_tail_max_ratio: f64,
}

impl Default for PingPongOptions {
    fn default() -> Self {
        PingPongOptions {
            warmup: 21,
            block_len: Some(1000),
            size: None,
            kind: PingPongKind::Any,
            max_bad_fraction: 0.1,
            heavy_tail_p999_ratio: 10.0,
            heavy_tail_max_ratio: 100.0,
        }
    }
}

impl PingPongOptions {
    /// Defaults for a latency capture.
    pub fn latency() -> Self {
        PingPongOptions {
            kind: PingPongKind::Latency,
            ..Default::default()
        }
    }
    /// Defaults for a bandwidth capture.
    pub fn bandwidth() -> Self {
        PingPongOptions {
            kind: PingPongKind::Bandwidth,
            ..Default::default()
        }
    }
    /// These options restricted to one message size.
    pub fn with_size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

/// A per-sample ping-pong capture after warm-up removal.
#[derive(Clone, Debug, PartialEq)]
pub struct PingPong {
    /// The file as given.
    pub source: String,
    /// Message size of the samples, bytes.
    pub size_bytes: u64,
    /// RTT/2 per kept sample, µs, in file order.
    pub samples_us: Vec<f64>,
    /// The same samples in picoseconds, rounded to the nearest ps.
    pub samples_ps: Vec<u64>,
    /// Blocks (Netgauge runs) of this size, after cutting long runs at `block_len`.
    pub blocks: usize,
    /// Index into the samples of each block's first kept sample (`blocks` entries, in file
    /// order; a block without kept samples starts where the next one does).
    pub block_starts: Vec<usize>,
    /// `#size\trtt` header lines in the whole file.
    pub headers: usize,
    /// Data rows of this size (kept + warm-up + skipped).
    pub rows: u64,
    /// Rows dropped as warm-up.
    pub warmup_dropped: u64,
    /// Rows skipped because they could not be used (garbage, NaN/inf, non-positive RTT/2, cut-off
    /// last line), including rows whose size could not be read.
    pub skipped: u64,
    /// Line numbers of the first few skipped rows.
    pub skipped_lines: Vec<u64>,
    /// Rows of other sizes that the size filter left out.
    pub other_sizes: Vec<SizeCount>,
    pub warnings: Vec<Warning>,
}

impl PingPong {
    /// Time per byte of each sample, ps/byte (RTT/2 divided by the message size), as the paper's
    /// G samples (before its median normalisation).
    pub fn per_byte_ps(&self) -> Vec<f64> {
        let s = self.size_bytes as f64;
        self.samples_us.iter().map(|us| us * 1e6 / s).collect()
    }

    /// The samples of each block (Netgauge run), with the block's index, in capture order;
    /// blocks without kept samples are left out.
    pub fn runs(&self) -> Vec<(usize, &[u64])> {
        self.block_ranges()
            .enumerate()
            .map(|(i, (a, b))| (i, &self.samples_ps[a..b]))
            .filter(|(_, r)| !r.is_empty())
            .collect()
    }

    /// Each block's range of samples, in block order.
    fn block_ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let ends = self.block_starts.iter().skip(1).copied();
        self.block_starts
            .iter()
            .copied()
            .zip(ends.chain([self.samples_ps.len()]))
    }

    /// The capture without the blocks `drop` (indices of [`PingPong::block_starts`]): their
    /// samples are gone and the other blocks keep their order. What the file held (rows,
    /// warm-up, skipped rows) is unchanged.
    pub fn without_blocks(&self, drop: &[usize]) -> PingPong {
        let mut out = PingPong {
            source: self.source.clone(),
            samples_us: Vec::new(),
            samples_ps: Vec::new(),
            block_starts: Vec::new(),
            skipped_lines: self.skipped_lines.clone(),
            other_sizes: self.other_sizes.clone(),
            warnings: self.warnings.clone(),
            ..*self
        };
        for (i, (a, b)) in self.block_ranges().enumerate() {
            if drop.contains(&i) {
                continue;
            }
            out.block_starts.push(out.samples_ps.len());
            out.samples_us.extend_from_slice(&self.samples_us[a..b]);
            out.samples_ps.extend_from_slice(&self.samples_ps[a..b]);
        }
        out.blocks = out.block_starts.len();
        out
    }

    /// One-way bandwidth per sample, Gbit/s (`size*8 / RTT/2`), as `plot.py` computes it.
    pub fn bandwidth_gbit_s(&self) -> Vec<f64> {
        let bits = self.size_bytes as f64 * 8.0;
        self.samples_us.iter().map(|us| bits / (us * 1e3)).collect()
    }
}

/// Reads a per-sample ping-pong file (plain or xz), streaming.
pub fn read_pingpong(
    path: impl AsRef<Path>,
    opts: &PingPongOptions,
) -> Result<PingPong, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    parse_pingpong(&mut lines, opts)
}

/// [`read_pingpong`] over any buffered reader (plain or xz); `name` is used in messages.
pub fn read_pingpong_from<R: std::io::BufRead + 'static>(
    reader: R,
    name: &str,
    opts: &PingPongOptions,
) -> Result<PingPong, CalibError> {
    let mut lines = lines_from_reader(reader, name)?;
    parse_pingpong(&mut lines, opts)
}

/// Accumulated rows of one message size.
struct SizeAcc {
    size: u64,
    first_line: u64,
    rows: u64,
    samples: Vec<f64>,
    blocks: usize,
    block_starts: Vec<usize>,
    warmup_dropped: u64,
    skipped: Tally,
    /// Blocks that started without a header because the run exceeded `block_len`.
    split: Tally,
    /// Header-delimited runs that were cut at least once.
    runs_split: u64,
    /// Blocks shorter than `block_len`: (start line, rows).
    short: Tally,
    short_lens: Vec<usize>,
}

impl SizeAcc {
    fn new(size: u64, line: u64) -> SizeAcc {
        SizeAcc {
            size,
            first_line: line,
            rows: 0,
            samples: Vec::new(),
            blocks: 0,
            block_starts: Vec::new(),
            warmup_dropped: 0,
            skipped: Tally::default(),
            split: Tally::default(),
            runs_split: 0,
            short: Tally::default(),
            short_lens: Vec::new(),
        }
    }
}

fn parse_pingpong(lines: &mut Lines, opts: &PingPongOptions) -> Result<PingPong, CalibError> {
    let path = lines.path().to_string();
    let mut accs: Vec<SizeAcc> = Vec::new();
    let mut cur: Option<usize> = None; // index into accs of the current block's size
    let mut pos: usize = 0; // rows seen in the current block
    let mut block_start: u64 = 0;
    let mut header_pending = true; // the next row starts a block because a header preceded it
    let mut block_is_cut = false; // the current block started at a cut, not at a header/size change
    let mut headers = 0usize;
    let mut data_rows: u64 = 0;
    let mut bad_size = Tally::default();

    let finish_block = |accs: &mut Vec<SizeAcc>, cur: Option<usize>, pos: usize, start: u64| {
        if let (Some(i), Some(len)) = (cur, opts.block_len) {
            if pos < len {
                accs[i].short.add(start, String::new);
                if accs[i].short_lens.len() < Warning::MAX_LINES {
                    accs[i].short_lens.push(pos);
                }
            }
        }
    };

    while let Some(Line {
        no: ln,
        text: t,
        unterminated,
    }) = lines.next_nonblank()?
    {
        if t.starts_with('#') {
            match sniff_header(t) {
                Some(Format::PingPong) => {
                    headers += 1;
                    if !header_pending {
                        finish_block(&mut accs, cur, pos, block_start);
                    }
                    header_pending = true;
                    cur = None;
                    pos = 0;
                }
                Some(other) => {
                    return Err(CalibError::WrongFormat {
                        path,
                        line: ln,
                        expected: Format::PingPong,
                        actual: other,
                        found: excerpt(t),
                    })
                }
                None => {}
            }
            continue;
        }
        data_rows += 1;
        let mut fields = t.split_whitespace();
        let size_tok = fields.next().unwrap_or("");
        let size: u64 = match size_tok.parse() {
            Ok(s) => s,
            Err(_) => {
                if let Some(other) = data_shape_of_other_format(t) {
                    if data_rows == 1 && headers == 0 {
                        return Err(CalibError::WrongFormat {
                            path,
                            line: ln,
                            expected: Format::PingPong,
                            actual: other,
                            found: excerpt(t),
                        });
                    }
                }
                bad_size.add(ln, || {
                    format!(
                        "message size `{}` is not a whole number of bytes in `{}`",
                        excerpt(size_tok),
                        excerpt(t)
                    )
                });
                if cur.is_some() {
                    pos += 1;
                }
                continue;
            }
        };
        // Which block does this row belong to?
        let same_size = cur.map(|i| accs[i].size == size).unwrap_or(false);
        let full = opts.block_len.is_some_and(|len| pos >= len);
        if header_pending || !same_size || full {
            if !header_pending {
                finish_block(&mut accs, cur, pos, block_start);
            }
            let idx = match accs.iter().position(|a| a.size == size) {
                Some(i) => i,
                None => {
                    accs.push(SizeAcc::new(size, ln));
                    accs.len() - 1
                }
            };
            let cut = !header_pending && same_size && full;
            if cut {
                accs[idx].split.add(ln, String::new);
                if !block_is_cut {
                    accs[idx].runs_split += 1;
                }
            }
            block_is_cut = cut;
            accs[idx].blocks += 1;
            let start = accs[idx].samples.len();
            accs[idx].block_starts.push(start);
            cur = Some(idx);
            pos = 0;
            block_start = ln;
            header_pending = false;
        }
        let acc = &mut accs[cur.expect("block started above")];
        let idx_in_block = pos;
        pos += 1;
        acc.rows += 1;
        let rtt_tok = fields.next();
        let extra = fields.next();
        let reason: Option<String> = if unterminated {
            Some(format!(
                "`{}` has no line end: the file was cut off in the middle of this row",
                excerpt(t)
            ))
        } else {
            match (rtt_tok, extra) {
                (None, _) => Some(format!(
                    "expected 2 fields (size, RTT/2 in us), found 1 in `{}`",
                    excerpt(t)
                )),
                (Some(_), Some(_)) => Some(format!(
                    "expected 2 fields (size, RTT/2 in us), found {} in `{}`",
                    t.split_whitespace().count(),
                    excerpt(t)
                )),
                (Some(r), None) => match crate::units::parse_c_double(r) {
                    None => Some(format!("RTT/2 `{}` is not a number", excerpt(r))),
                    Some(v) if !v.is_finite() => {
                        Some(format!("RTT/2 `{}` is not a finite number", excerpt(r)))
                    }
                    Some(v) if v <= 0.0 => Some(format!("RTT/2 {r}us is not positive")),
                    Some(v) if v > MAX_RTT2_US => {
                        return Err(CalibError::Implausible {
                            path,
                            line: ln,
                            what: "RTT/2",
                            found: format!("{}us", excerpt(r)),
                            max: "3600 s (one hour) per sample",
                        })
                    }
                    Some(v) => {
                        if idx_in_block < opts.warmup {
                            acc.warmup_dropped += 1;
                        } else {
                            acc.samples.push(v);
                        }
                        None
                    }
                },
            }
        };
        if let Some(r) = reason {
            acc.skipped.add(ln, || r);
        }
    }
    if lines.lines_read() == 0 {
        return Err(CalibError::Empty {
            path,
            expected: "a `#size\\trtt` header and `<size>\\t<RTT/2 us>` rows".into(),
        });
    }
    if !header_pending {
        finish_block(&mut accs, cur, pos, block_start);
    }
    if data_rows == 0 {
        return Err(CalibError::NoData {
            path,
            detail: format!(
                "no data rows after {headers} header line(s); expected `<size>\\t<RTT/2 us>` rows"
            ),
        });
    }

    let counts: Vec<SizeCount> = accs
        .iter()
        .map(|a| SizeCount {
            size_bytes: a.size,
            rows: a.rows,
            first_line: a.first_line,
        })
        .collect();
    let chosen = match opts.size {
        Some(s) => match accs.iter().position(|a| a.size == s) {
            Some(i) => i,
            None => {
                return Err(CalibError::SizeNotFound {
                    path,
                    size: s,
                    available: counts,
                })
            }
        },
        None if accs.len() > 1 => {
            return Err(CalibError::MixedSizes {
                path,
                sizes: counts,
                flag: match opts.kind {
                    PingPongKind::Latency => "--latency-size",
                    PingPongKind::Bandwidth => "--bandwidth-size",
                    PingPongKind::Any => "a size filter",
                },
            })
        }
        None if accs.is_empty() => {
            return Err(CalibError::NoData {
                path,
                detail: format!(
                    "none of the {data_rows} data rows has a readable message size; first at line {}: {}",
                    bad_size.lines.first().copied().unwrap_or(0),
                    bad_size.first_reason.clone().unwrap_or_default()
                ),
            })
        }
        None => 0,
    };
    let acc = accs.swap_remove(chosen);
    let other_sizes: Vec<SizeCount> = counts
        .into_iter()
        .filter(|c| c.size_bytes != acc.size)
        .collect();

    // Unusable rows: those of the chosen size plus those whose size could not be read.
    let mut skipped_lines: Vec<u64> = acc
        .skipped
        .lines
        .iter()
        .chain(&bad_size.lines)
        .copied()
        .collect();
    skipped_lines.sort_unstable();
    skipped_lines.truncate(Warning::MAX_LINES);
    let skipped_count = acc.skipped.count + bad_size.count;
    let considered = acc.rows + bad_size.count;
    if considered > 0 && skipped_count as f64 > opts.max_bad_fraction * considered as f64 {
        let (first_line, first_reason) = first_bad(&acc.skipped, &bad_size);
        return Err(CalibError::TooManyBadRows {
            path,
            bad: skipped_count,
            total: considered,
            max_pct: opts.max_bad_fraction * 100.0,
            first_line,
            first_reason,
        });
    }
    if acc.samples.is_empty() {
        return Err(CalibError::NoData {
            path,
            detail: format!(
                "no samples of {} left: {} rows, {} dropped as warm-up ({} per block), {} unusable",
                fmt_bytes(acc.size),
                acc.rows,
                acc.warmup_dropped,
                opts.warmup,
                skipped_count
            ),
        });
    }

    let median = median_of(&acc.samples);
    if !opts.kind.accepts(acc.size) {
        let looks_like = if acc.size > LATENCY_MAX_BYTES {
            PingPongKind::Bandwidth
        } else {
            PingPongKind::Latency
        };
        return Err(CalibError::WrongKind {
            path,
            line: acc.first_line,
            expected: opts.kind,
            looks_like,
            size: acc.size,
            median_us: median,
        });
    }

    let mut warnings = Vec::new();
    if skipped_count > 0 {
        let (_, first_reason) = first_bad(&acc.skipped, &bad_size);
        warnings.push(Warning::new(
            WarningKind::SkippedRows,
            skipped_count,
            skipped_lines.clone(),
            format!(
                "skipped {skipped_count} unusable row(s) of {considered} data rows; first: {first_reason}"
            ),
        ));
    }
    if acc.split.count > 0 {
        let len = opts.block_len.unwrap_or(0);
        warnings.push(Warning::new(
            WarningKind::BlockLength,
            acc.split.count,
            acc.split.lines.clone(),
            format!(
                "{} run(s) longer than {len} rows without a header between them: cut into blocks of {len} rows, {} more blocks each losing {} warm-up rows (the paper's index%1000 filter does the same; use --block-len none if the file is one long run)",
                acc.runs_split,
                acc.split.count,
                opts.warmup
            ),
        ));
    }
    if acc.short.count > 0 {
        let lens = acc
            .short_lens
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        warnings.push(Warning::new(
            WarningKind::BlockLength,
            acc.short.count,
            acc.short.lines.clone(),
            format!(
                "{} block(s) shorter than {} rows (rows: {lens}{}): truncated runs, or runs made with another -c (give that run length with --block-len N)",
                acc.short.count,
                opts.block_len.unwrap_or(0),
                if acc.short.count as usize > acc.short_lens.len() { ", …" } else { "" }
            ),
        ));
    }
    warnings.extend(heavy_tail_warning(&acc.samples, median, opts));

    let samples_ps = acc
        .samples
        .iter()
        .map(|&us| (us * 1e6).round() as u64)
        .collect();
    Ok(PingPong {
        source: path,
        size_bytes: acc.size,
        samples_ps,
        blocks: acc.blocks,
        block_starts: acc.block_starts,
        headers,
        rows: acc.rows,
        warmup_dropped: acc.warmup_dropped,
        skipped: skipped_count,
        skipped_lines,
        other_sizes,
        warnings,
        samples_us: acc.samples,
    })
}

fn first_bad(a: &Tally, b: &Tally) -> (u64, String) {
    let la = a.lines.first().copied();
    let lb = b.lines.first().copied();
    match (la, lb) {
        (Some(x), Some(y)) if y < x => (y, b.first_reason.clone().unwrap_or_default()),
        (Some(x), _) => (x, a.first_reason.clone().unwrap_or_default()),
        (None, Some(y)) => (y, b.first_reason.clone().unwrap_or_default()),
        (None, None) => (0, String::new()),
    }
}

/// Row shapes that clearly belong to another format (for a helpful error on the first row).
fn data_shape_of_other_format(t: &str) -> Option<Format> {
    let fields: Vec<&str> = t.split_whitespace().collect();
    if fields.len() == 2
        && fields[0].contains('.')
        && fields
            .iter()
            .all(|f| crate::units::parse_c_double(f).is_some())
    {
        return Some(Format::Selfish);
    }
    None
}

pub(crate) fn median_of(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, |a, b| a.total_cmp(b));
    *m
}

/// The heavy-tail warning for positive samples in µs: p99.9 / median and max / median.
fn heavy_tail_warning(samples: &[f64], median: f64, opts: &PingPongOptions) -> Option<Warning> {
    if samples.len() < 2 || median <= 0.0 {
        return None;
    }
    let mut v = samples.to_vec();
    let n = v.len();
    let k = ((n as f64 - 1.0) * 0.999).round() as usize;
    let (_, p999, _) = v.select_nth_unstable_by(k, |a, b| a.total_cmp(b));
    let p999 = *p999;
    let max = samples.iter().copied().fold(f64::MIN, f64::max);
    let r999 = p999 / median;
    let rmax = max / median;
    let mut parts = Vec::new();
    if r999 > opts.heavy_tail_p999_ratio {
        parts.push(format!(
            "p99.9 = {} is {}x the median (limit {}x)",
            fmt_us(p999),
            fmt_ratio(r999),
            fmt_ratio(opts.heavy_tail_p999_ratio)
        ));
    }
    if rmax > opts.heavy_tail_max_ratio {
        parts.push(format!(
            "max = {} is {}x the median (limit {}x)",
            fmt_us(max),
            fmt_ratio(rmax),
            fmt_ratio(opts.heavy_tail_max_ratio)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    let over = samples
        .iter()
        .filter(|&&x| x > median * opts.heavy_tail_p999_ratio)
        .count() as u64;
    Some(Warning::new(
        WarningKind::HeavyTail,
        over,
        Vec::new(),
        format!(
            "heavy tail: median RTT/2 {}, {}; {} of {} samples exceed {}x the median (kept: the tail is real measurement, but check the capture was not disturbed)",
            fmt_us(median),
            parts.join(", "),
            over,
            n,
            fmt_ratio(opts.heavy_tail_p999_ratio)
        ),
    ))
}
