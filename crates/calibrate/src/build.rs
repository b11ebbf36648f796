//! Building a noise profile from captures (`loggops-sim calibrate`) and its fit report.
//!
//! [`build_profile`] reads a latency and a bandwidth ping-pong capture (and optionally far-placement
//! ones), a selfish-detour (or FWQ/FTQ) trace and a LogGP fit, takes the base parameters from
//! explicit values, a row of a parameter table ([`read_params_table`], the format of the paper's
//! `loggp_params.csv`) or the LogGP fit, in that order of precedence, and returns a
//! [`Profile`] plus a [`FitReport`] ([`FitReport::to_text`], [`FitReport::to_json`]).
//!
//! What goes into the profile:
//! * **latency**: a quantile table ([`QuantileTable::compress_with`]) of the kept RTT/2 samples in
//!   ps; **bandwidth**: a quantile table of the per-byte time (RTT/2 / message size) in ps/byte,
//!   with `bandwidth_block_bytes` = the capture's message size. The table's 0.5 point is pinned to
//!   the samples' median (numpy's rule), so a sampler that scales draws to a base median
//!   reproduces the paper's `x * param / median(x)` exactly. Every table ends in an exact tail:
//!   the ⌈N/1000⌉ largest of the N samples (at most 2048) kept as they are, each of probability
//!   1/N, as the paper's bootstrap of the raw samples draws them; the report says how many and
//!   from which quantile.
//! * **far placement**: far captures when given, otherwise the near distributions (the paper's
//!   convention: same shape, the sampler pins the median to the far base parameters). A far
//!   placement identical to the near one is stored as near only (`far = None` means "same as
//!   near"). The notes say which.
//! * **OS noise**: the stitched trace (all runs on one time axis) as one [`DetourTrace`], cut to
//!   at most [`CalibrateInputs::max_trace_detours`] detours, and a fitted [`DetourProcess`] (rate =
//!   detours / stitched period over the whole trace, durations as a quantile table).
//! * **provenance**: source paths relative to the current directory (never absolute, see
//!   [`relative_to_cwd`]), the command, the UTC date, the tool version, notes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use loggops_profile::{
    BaseParams, Calibration, DetourProcess, DetourTrace, Distribution, ExactTail, OsNoise,
    Placement, Prices, Profile, Provenance,
};
use serde::Serialize;

use crate::error::{CalibError, Warning, WarningKind};
use crate::format::{detect, Format};
use crate::input::lines_of;
use crate::loggp::{read_loggp, LogGpSummary};
use crate::pingpong::{read_pingpong, PingPong, PingPongKind, PingPongOptions};
use crate::selfish::{read_quanta, read_selfish, Detours, QuantumOptions};
use crate::stats::{ks_two_sample, quantile_sorted, sorted, CompressOptions, QuantileTable};
use crate::units::{excerpt, fmt_bytes};

/// Draws of the Monte-Carlo KS check of every quantile table.
pub const MC_DRAWS: usize = 100_000;
/// Seed of the Monte-Carlo KS check (SplitMix64 over the draw index).
pub const MC_SEED: u64 = 0x6C6F_6767_6F70_7321;
/// Fewest latency or bandwidth samples (after warm-up removal) a distribution is built from,
/// unless [`CalibrateInputs::min_samples`] says otherwise: with 500 samples the empirical
/// distribution is within 0.061 of the true one everywhere with 95 % confidence (the
/// Dvoretzky–Kiefer–Wolfowitz bound), and one full Netgauge run (`-c 1000`, 979 samples after
/// the warm-up) passes. A truncated 25-row capture (4 samples) does not.
pub const DEFAULT_MIN_SAMPLES: usize = 500;
/// Default cap on the detours kept raw in the profile's OS-noise trace.
pub const DEFAULT_MAX_TRACE_DETOURS: usize = 65_000;
/// Warn when detours take more than this percentage of the CPU time.
pub const OS_OVERHEAD_WARN_PCT: f64 = 2.0;
/// Detours longer than this many µs are "long" for the heavy-tail warning of OS noise.
pub const OS_LONG_DETOUR_US: f64 = 1000.0;
/// Warn when long detours take more than this fraction of the total detour time (the paper's
/// systems: at most 0.025; a loaded 2-vCPU VM: 0.68).
pub const OS_LONG_SHARE_WARN: f64 = 0.25;

/// Base parameters given explicitly; each one set here wins over every other source.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamOverrides {
    /// L, ps.
    pub l_ps: Option<f64>,
    /// o, ps.
    pub o_ps: Option<f64>,
    /// g, ps.
    pub g_ps: Option<f64>,
    /// G, ps/byte.
    pub big_g_ps_per_byte: Option<f64>,
    /// O, ps/byte.
    pub big_o_ps_per_byte: Option<f64>,
    /// S, bytes.
    pub s_bytes: Option<u64>,
}

impl ParamOverrides {
    /// True when no parameter is set.
    pub fn is_empty(&self) -> bool {
        *self == ParamOverrides::default()
    }
}

/// Placement name of the paper's table for nodes on one switch.
pub const SAME_RACK: &str = "Same Rack";
/// Placement name of the paper's table for nodes on different switches.
pub const DIFFERENT_RACKS: &str = "Different Racks";

/// A row of a parameter table in the format of the paper's `loggp_params.csv`.
///
/// `placement` = `Different Racks` selects the paper's pair: near = the `Same Rack` row, far =
/// the `Different Racks` row (the paper's simulate.py does the same). Any other placement
/// selects that single row for the near placement.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamsTableRow {
    pub path: PathBuf,
    pub provider: String,
    pub instance: String,
    pub placement: String,
}

/// Where the base parameters come from: `explicit` values win, then the table row, then the LogGP
/// fit ([`CalibrateInputs::loggp`]). O defaults to 0 ps/byte (the paper ran with `-O 0`); every
/// other parameter missing from all sources is an error naming it.
///
/// Explicit values apply to both placements; [`CalibrateInputs::far_params`] wins over them for
/// the far one. The far placement's other parameters come from the table's far row, else from
/// the near placement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamSource {
    pub explicit: ParamOverrides,
    pub table: Option<ParamsTableRow>,
}

/// A row of a price table in the format of the paper's `systems.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct PricesTableRow {
    pub path: PathBuf,
    /// `system` column, e.g. `aws`.
    pub system: String,
    /// `class` column, e.g. `hpc-metal`.
    pub class: String,
}

/// Everything [`build_profile`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrateInputs {
    /// Short system name, e.g. `aws`.
    pub system: String,
    /// Human description.
    pub description: String,
    /// Latency ping-pong capture (per-sample file, small messages).
    pub latency: PathBuf,
    /// Bandwidth ping-pong capture (per-sample file, bandwidth-saturating messages).
    pub bandwidth: PathBuf,
    /// Selfish-detour (or FWQ/FTQ) trace; `None` = no OS noise in the profile.
    pub os_noise: Option<PathBuf>,
    /// Netgauge LogGP fit: the last source of L, o, g and G.
    pub loggp: Option<PathBuf>,
    /// Far-placement latency capture; `None` = the near distribution.
    pub far_latency: Option<PathBuf>,
    /// Far-placement bandwidth capture; `None` = the near distribution.
    pub far_bandwidth: Option<PathBuf>,
    /// Near (and, through a `Different Racks` table row, far) base parameters.
    pub params: ParamSource,
    /// Explicit far parameters; they win over the explicit (near) values, the table's far row
    /// and the near parameters. Any value here makes a far placement.
    pub far_params: ParamOverrides,
    /// Nodes per switch; wins over the table's `nodes_per_switch_in_simulate_py`. Needed when the
    /// profile has a far placement; 1 otherwise.
    pub nodes_per_switch: Option<u32>,
    /// Explicit prices; each one set wins over the price table.
    pub prices: Prices,
    /// Price table row filling the prices not given explicitly (empty cell = unknown).
    pub prices_table: Option<PricesTableRow>,
    /// Ping-pong import options (warm-up, block length, bad-row limit, heavy-tail limits). `kind`
    /// and `size` are set per capture.
    pub pingpong: PingPongOptions,
    /// Message size to keep from the latency capture(s) (for size sweeps); `None` = the file
    /// must hold one size.
    pub latency_size: Option<u64>,
    /// Message size to keep from the bandwidth capture(s).
    pub bandwidth_size: Option<u64>,
    /// Fewest samples a latency or bandwidth capture must keep after warm-up removal (default
    /// [`DEFAULT_MIN_SAMPLES`]); fewer is a [`CalibError::TooFewSamples`].
    pub min_samples: usize,
    /// Quantile-table compression of every distribution.
    pub table: CompressOptions,
    /// Detours kept raw in the OS-noise trace (at most 65,000 by default: h5py cannot read the
    /// chunked datasets hdf5-pure writes above 65,536 elements) (the first ones of the stitched trace); the
    /// detour process is fitted on all of them.
    pub max_trace_detours: usize,
    /// Command line recorded in the provenance.
    pub command: String,
    /// ISO-8601 creation date to record; `None` = now (UTC).
    pub created: Option<String>,
    /// Extra provenance notes (e.g. "substitute capture").
    pub notes: Vec<String>,
    /// Whether the system's rendezvous messages progress during computation (the profile's
    /// `mpi_progress`); `None` writes none (the simulator then assumes asynchronous progress).
    /// Not measurable from the captures: `calibrate --mpi-progress` states it.
    pub mpi_progress: Option<loggops_profile::MpiProgress>,
    /// Called with a short description of each step as it starts (e.g. for a progress
    /// display); it never changes the result.
    pub progress: Option<StepHook>,
    /// Concurrent messages the bandwidth capture's message was striped over (`libstripe`,
    /// Netgauge's `--concurrent`): the closure simulates its ping-pong so (default 1).
    pub bandwidth_stripes: u32,
    /// How the profile is made: [`Calibration::Captures`] (the default) closes it against the
    /// captures ([`crate::closure`]); [`Calibration::PaperTable`] takes the base parameters from
    /// explicit values, a table row or the LogGP fit and pins the captured distributions'
    /// medians to them (the paper's convention).
    pub calibration: Calibration,
    /// Label of the capture day recorded in the profile (empty: none).
    pub day: String,
    /// Hoverboard capture (1 MiB ping-pongs after 0 … 1 s of sleep): the profile's idle table
    /// ([`crate::idle`]); `None`: none beyond the latency capture's 10 µs step.
    pub idle_latency: Option<PathBuf>,
}

/// A callback told about each step of [`build_profile`] (see [`CalibrateInputs::progress`]).
/// Two hooks always compare equal: a hook does not change what is built.
#[derive(Clone, Copy)]
pub struct StepHook(pub fn(&str));

impl PartialEq for StepHook {
    fn eq(&self, _: &StepHook) -> bool {
        true
    }
}

impl std::fmt::Debug for StepHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StepHook")
    }
}

impl CalibrateInputs {
    fn step(&self, what: &str) {
        if let Some(h) = self.progress {
            (h.0)(what);
        }
    }

    /// Inputs with defaults for everything but the system name and the two captures.
    pub fn new(
        system: impl Into<String>,
        latency: impl Into<PathBuf>,
        bandwidth: impl Into<PathBuf>,
    ) -> CalibrateInputs {
        CalibrateInputs {
            system: system.into(),
            description: String::new(),
            latency: latency.into(),
            bandwidth: bandwidth.into(),
            os_noise: None,
            loggp: None,
            far_latency: None,
            far_bandwidth: None,
            params: ParamSource::default(),
            far_params: ParamOverrides::default(),
            nodes_per_switch: None,
            prices: Prices::default(),
            prices_table: None,
            pingpong: PingPongOptions::default(),
            latency_size: None,
            bandwidth_size: None,
            min_samples: DEFAULT_MIN_SAMPLES,
            table: CompressOptions::default(),
            max_trace_detours: DEFAULT_MAX_TRACE_DETOURS,
            command: String::new(),
            created: None,
            notes: Vec::new(),
            mpi_progress: None,
            progress: None,
            bandwidth_stripes: 1,
            calibration: Calibration::PaperTable,
            day: String::new(),
            idle_latency: None,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Tables

/// One data row of a CSV file: 1-based line number and fields.
struct CsvRow {
    line: u64,
    fields: Vec<String>,
}

/// Reads a small CSV file (plain or xz): header fields and data rows. Fields may be quoted with
/// `"` (doubled inside quotes); blank lines are skipped.
fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<CsvRow>), CalibError> {
    let name = path.display().to_string();
    let mut lines = lines_of(path)?;
    let mut header: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    while let Some(l) = lines.next_line()? {
        let t = l.text.trim_end_matches('\r');
        if t.trim().is_empty() {
            continue;
        }
        let fields = split_csv(t).ok_or_else(|| CalibError::Parse {
            path: name.clone(),
            line: l.no,
            expected: "comma-separated fields with balanced quotes".into(),
            found: excerpt(t),
        })?;
        if header.is_none() {
            header = Some(fields.iter().map(|f| f.trim().to_string()).collect());
        } else {
            rows.push(CsvRow { line: l.no, fields });
        }
    }
    match header {
        Some(h) => Ok((h, rows)),
        None => Err(CalibError::Empty {
            path: name,
            expected: "a CSV header line and data rows".into(),
        }),
    }
}

fn split_csv(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if cur.trim().is_empty() => {
                cur.clear();
                quoted = true;
            }
            (false, ',') => out.push(std::mem::take(&mut cur)),
            (_, c) => cur.push(c),
        }
    }
    if quoted {
        return None;
    }
    out.push(cur);
    Some(out)
}

/// Column indices of `wanted` in `header`, or a parse error naming the missing ones.
fn columns(path: &Path, header: &[String], wanted: &[&str]) -> Result<Vec<usize>, CalibError> {
    let mut idx = Vec::with_capacity(wanted.len());
    let mut missing = Vec::new();
    for w in wanted {
        match header.iter().position(|h| h == w) {
            Some(i) => idx.push(i),
            None => missing.push(*w),
        }
    }
    if missing.is_empty() {
        Ok(idx)
    } else {
        Err(CalibError::Parse {
            path: path.display().to_string(),
            line: 1,
            expected: format!(
                "a header with the column(s) {} (of {})",
                missing.join(", "),
                wanted.join(",")
            ),
            found: excerpt(&header.join(",")),
        })
    }
}

fn field(row: &CsvRow, i: usize) -> &str {
    row.fields.get(i).map(|s| s.trim()).unwrap_or("")
}

fn same_key(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// A decimal number in µs (or µs/byte) as ps (ps/byte), scaled in decimal so `0.00017` becomes
/// exactly `170.0`.
fn us_text_to_ps(s: &str) -> Option<f64> {
    let s = s.trim();
    s.parse::<f64>().ok()?;
    let scaled = match s.find(['e', 'E']) {
        Some(i) => {
            let exp: i32 = s[i + 1..].parse().ok()?;
            format!("{}e{}", &s[..i], exp + 6)
        }
        None => format!("{s}e6"),
    };
    let v: f64 = scaled.parse().ok()?;
    v.is_finite().then_some(v)
}

const PARAM_COLUMNS: [&str; 9] = [
    "provider",
    "instance",
    "placement",
    "L_us",
    "o_us",
    "g_us",
    "G_us_per_byte",
    "S_bytes_eager_threshold",
    "nodes_per_switch_in_simulate_py",
];

/// All rows of a parameter table: (line, provider, instance, placement, params, nodes per switch).
type ParamRow = (u64, String, String, String, BaseParams, u32);

fn read_param_rows(path: &Path) -> Result<Vec<ParamRow>, CalibError> {
    let (header, rows) = read_csv(path)?;
    let c = columns(path, &header, &PARAM_COLUMNS)?;
    let name = path.display().to_string();
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let num = |k: usize, unit: &str| -> Result<f64, CalibError> {
            let t = field(row, c[k]);
            match us_text_to_ps(t) {
                Some(v) if v >= 0.0 => Ok(v),
                _ => Err(CalibError::Parse {
                    path: name.clone(),
                    line: row.line,
                    expected: format!(
                        "a non-negative number of {unit} in column {}",
                        PARAM_COLUMNS[k]
                    ),
                    found: excerpt(t),
                }),
            }
        };
        let int = |k: usize, what: &str| -> Result<u64, CalibError> {
            let t = field(row, c[k]);
            t.parse::<u64>().map_err(|_| CalibError::Parse {
                path: name.clone(),
                line: row.line,
                expected: format!("a whole number of {what} in column {}", PARAM_COLUMNS[k]),
                found: excerpt(t),
            })
        };
        let params = BaseParams {
            l_ps: num(3, "us")?,
            o_ps: num(4, "us")?,
            g_ps: num(5, "us")?,
            big_g_ps_per_byte: num(6, "us/byte")?,
            big_o_ps_per_byte: 0.0,
            s_bytes: int(7, "bytes")?,
        };
        let nps = int(8, "nodes")?;
        let nps = u32::try_from(nps)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| CalibError::Parse {
                path: name.clone(),
                line: row.line,
                expected: format!("at least 1 node per switch in column {}", PARAM_COLUMNS[8]),
                found: nps.to_string(),
            })?;
        out.push((
            row.line,
            field(row, c[0]).to_string(),
            field(row, c[1]).to_string(),
            field(row, c[2]).to_string(),
            params,
            nps,
        ));
    }
    Ok(out)
}

fn row_not_found(path: &Path, wanted: String, rows: &[ParamRow]) -> CalibError {
    CalibError::TableRow {
        path: path.display().to_string(),
        wanted,
        available: rows
            .iter()
            .map(|r| format!("{} / {} / {}", r.1, r.2, r.3))
            .collect(),
    }
}

/// Reads one row of a parameter table in the exact format of the paper's `loggp_params.csv`
/// (`provider,instance,placement,L_us,o_us,g_us,G_us_per_byte,S_bytes_eager_threshold,
/// nodes_per_switch_in_simulate_py,…`; µs and µs/byte are converted to ps and ps/byte in decimal,
/// O is 0 as in the paper). Keys match case-insensitively. Returns the parameters and the
/// table's nodes per switch; an unknown row is an error listing every row of the table.
pub fn read_params_table(
    path: impl AsRef<Path>,
    provider: &str,
    instance: &str,
    placement: &str,
) -> Result<(BaseParams, u32), CalibError> {
    let path = path.as_ref();
    let rows = read_param_rows(path)?;
    rows.iter()
        .find(|r| same_key(&r.1, provider) && same_key(&r.2, instance) && same_key(&r.3, placement))
        .map(|r| (r.4.clone(), r.5))
        .ok_or_else(|| {
            row_not_found(
                path,
                format!("provider `{provider}`, instance `{instance}`, placement `{placement}`"),
                &rows,
            )
        })
}

/// The paper's "Different Racks" parameter pair of one system: near = the `Same Rack` row, far =
/// the `Different Racks` row, and the nodes per switch (of the `Different Racks` row).
pub fn read_params_table_placement_pair(
    path: impl AsRef<Path>,
    provider: &str,
    instance: &str,
) -> Result<(BaseParams, BaseParams, u32), CalibError> {
    let path = path.as_ref();
    let rows = read_param_rows(path)?;
    let find = |placement: &str| {
        rows.iter().find(|r| {
            same_key(&r.1, provider) && same_key(&r.2, instance) && same_key(&r.3, placement)
        })
    };
    match (find(SAME_RACK), find(DIFFERENT_RACKS)) {
        (Some(near), Some(far)) => Ok((near.4.clone(), far.4.clone(), far.5)),
        (near, _) => Err(row_not_found(
            path,
            format!(
                "provider `{provider}`, instance `{instance}`, placement `{}` (the paper's Different Racks runs use the Same Rack row for near and the Different Racks row for far messages)",
                if near.is_none() { SAME_RACK } else { DIFFERENT_RACKS }
            ),
            &rows,
        )),
    }
}

/// Reads the prices of one row of a price table in the exact format of the paper's `systems.csv`
/// (`system,class,…,usd_per_hour_committed,usd_per_hour_on_demand,…`; USD per node-hour; an empty
/// cell is an unknown price). Keys match case-insensitively; an unknown row is an error listing
/// every row.
pub fn read_prices_table(
    path: impl AsRef<Path>,
    system: &str,
    class: &str,
) -> Result<Prices, CalibError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    const COLS: [&str; 4] = [
        "system",
        "class",
        "usd_per_hour_committed",
        "usd_per_hour_on_demand",
    ];
    let (header, rows) = read_csv(path)?;
    let c = columns(path, &header, &COLS)?;
    let Some(row) = rows
        .iter()
        .find(|r| same_key(field(r, c[0]), system) && same_key(field(r, c[1]), class))
    else {
        return Err(CalibError::TableRow {
            path: name,
            wanted: format!("system `{system}`, class `{class}`"),
            available: rows
                .iter()
                .map(|r| format!("{} / {}", field(r, c[0]), field(r, c[1])))
                .collect(),
        });
    };
    let price = |k: usize| -> Result<Option<f64>, CalibError> {
        let t = field(row, c[k]);
        if t.is_empty() {
            return Ok(None);
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
            _ => Err(CalibError::Parse {
                path: name.clone(),
                line: row.line,
                expected: format!(
                    "a non-negative price in USD per hour (or nothing) in column {}",
                    COLS[k]
                ),
                found: excerpt(t),
            }),
        }
    };
    Ok(Prices {
        committed_usd_per_node_hour: price(2)?,
        on_demand_usd_per_node_hour: price(3)?,
        spot: Default::default(),
    })
}

// ------------------------------------------------------------------------------------------------
// Report

/// Order statistics of a distribution (linear interpolation, numpy's default), in the unit of the
/// field that holds them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quantiles {
    pub min: f64,
    pub p1: f64,
    pub p5: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

impl Quantiles {
    const PROBS: [f64; 10] = [0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 0.999, 1.0];
    const NAMES: [&'static str; 10] = [
        "min", "p1", "p5", "p25", "p50", "p75", "p95", "p99", "p99.9", "max",
    ];

    fn of_sorted(s: &[f64]) -> Quantiles {
        let q = Self::PROBS.map(|p| quantile_sorted(s, p));
        Quantiles {
            min: q[0],
            p1: q[1],
            p5: q[2],
            p25: q[3],
            p50: q[4],
            p75: q[5],
            p95: q[6],
            p99: q[7],
            p99_9: q[8],
            max: q[9],
        }
    }

    fn values(&self) -> [f64; 10] {
        [
            self.min, self.p1, self.p5, self.p25, self.p50, self.p75, self.p95, self.p99,
            self.p99_9, self.max,
        ]
    }
}

/// Rows of another message size left out of a ping-pong capture.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OtherSize {
    pub size_bytes: u64,
    pub rows: u64,
}

/// What the import dropped, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dropped {
    /// Rows dropped as warm-up.
    pub warmup: u64,
    /// Warm-up rows per block.
    pub warmup_per_block: usize,
    /// Rows that could not be used (garbage, NaN, non-positive, cut-off last line).
    pub bad_rows: u64,
    /// Lines of the first few bad rows.
    pub bad_lines: Vec<u64>,
    /// Rows of other message sizes left out.
    pub other_sizes: Vec<OtherSize>,
    /// One sentence per reason, with counts.
    pub reasons: Vec<String>,
}

/// Fit of one measured distribution (latency or bandwidth) of one placement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DistReport {
    /// `latency` or `bandwidth`.
    pub quantity: String,
    /// Absolute path of the capture.
    pub source: String,
    /// Capture format (`pingpong`).
    pub format: String,
    /// True when this (far) distribution is the near one (no far capture given).
    pub shared_with_near: bool,
    pub message_size_bytes: u64,
    /// Data rows read (all sizes, kept or not).
    pub rows_read: u64,
    /// Netgauge runs (blocks) of the kept size.
    pub blocks: usize,
    /// Samples kept in the distribution.
    pub kept: u64,
    pub dropped: Dropped,
    /// Unit of `quantiles`, `median` and `mean`: `us` (RTT/2) or `ps/byte`.
    pub unit: String,
    pub quantiles: Quantiles,
    /// Bandwidth only: one-way bandwidth per sample (size·8 / RTT/2), Gbit/s.
    pub quantiles_gbit_s: Option<Quantiles>,
    /// Median of the samples (numpy's rule), also the table's 0.5 point.
    pub median: f64,
    pub mean: f64,
    /// Points of the quantile table stored in the profile.
    pub table_points: usize,
    /// The largest samples kept exactly after the table (its exact tail, each of probability
    /// 1/`kept`); 0 = no tail.
    pub tail_samples: usize,
    /// Probability where the exact tail begins, (kept − tail_samples)/kept: the table holds the
    /// quantiles below it (1 without a tail).
    pub tail_from_quantile: f64,
    /// Smallest and largest exact-tail sample, in `unit`; `None` without a tail.
    pub tail_min: Option<f64>,
    pub tail_max: Option<f64>,
    /// Exact KS distance between the samples and the table's inverse-CDF distribution.
    pub ks_exact: f64,
    /// Two-sample KS distance between the samples and `mc_draws` draws through the table's
    /// inverse CDF (SplitMix64 uniforms, seed `mc_seed`).
    pub ks_monte_carlo: f64,
    pub mc_draws: usize,
    pub mc_seed: u64,
    /// How much consecutive samples depend on each other (the model draws them independently).
    pub time_correlation: crate::stats::TimeCorrelation,
    pub warnings: Vec<String>,
}

/// Where each base parameter came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamSources {
    pub l: String,
    pub o: String,
    pub g: String,
    pub big_g: String,
    pub big_o: String,
    pub s: String,
}

/// Base parameters of one placement, in report units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamsReport {
    pub l_us: f64,
    pub o_us: f64,
    pub g_us: f64,
    pub big_g_ps_per_byte: f64,
    pub big_o_ps_per_byte: f64,
    pub s_bytes: u64,
    /// 8 / G, Gbit/s (infinite for G = 0).
    pub implied_bandwidth_gbit_s: f64,
    pub sources: ParamSources,
}

/// One placement of the profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlacementReport {
    pub params: ParamsReport,
    pub latency: DistReport,
    pub bandwidth: DistReport,
}

/// The LogGP fit file, summarised.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogGpReport {
    pub source: String,
    pub l_us: f64,
    pub o_us: f64,
    pub g_us: f64,
    pub big_g_ps_per_byte: f64,
    /// Lines the o and the g/G values came from.
    pub o_line: u64,
    pub gap_line: u64,
    /// Near parameters taken from the fit (`L`, `o`, `g`, `G`); empty when other sources won.
    pub used_for: Vec<String>,
    pub warnings: Vec<String>,
}

/// Fitted detour process.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProcessReport {
    pub rate_per_s: f64,
    pub duration_table_points: usize,
    /// Longest detours kept exactly after the duration table (0 = none).
    pub duration_tail_samples: usize,
    /// Probability where that exact tail begins (1 without a tail).
    pub duration_tail_from_quantile: f64,
    pub ks_exact: f64,
    pub ks_monte_carlo: f64,
}

/// The OS-noise trace, summarised.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OsNoiseReport {
    pub source: String,
    /// `selfish`, `fwq` or `ftq`.
    pub format: String,
    /// Runs in the file (1 for FWQ/FTQ).
    pub runs: usize,
    pub detours: usize,
    /// Data rows skipped by the import.
    pub skipped_rows: u64,
    /// Length of the stitched trace, s.
    pub period_s: f64,
    /// Detours per second of the stitched trace.
    pub rate_per_s: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Detour time / period, percent.
    pub overhead_pct: f64,
    /// Detours stored raw in the profile's trace.
    pub trace_detours: usize,
    /// Period of the stored trace, s.
    pub trace_period_s: f64,
    /// Raw size of the stored trace (16 bytes per detour), bytes.
    pub trace_bytes: u64,
    pub process: Option<ProcessReport>,
    pub warnings: Vec<String>,
}

/// Prices recorded in the profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PricesReport {
    pub on_demand_usd_per_node_hour: Option<f64>,
    pub committed_usd_per_node_hour: Option<f64>,
    pub source: String,
    /// Spot capacity (`--spot-*`), absent when none is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot: Option<SpotReport>,
}

/// Spot capacity recorded in the profile (schema version 5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpotReport {
    pub usd_per_node_hour: Option<f64>,
    pub interruptions_per_node_hour: Option<f64>,
    pub source: String,
    pub date: String,
}

/// The calibration fit report: what was read, what was dropped and why, and how well the profile's
/// compact tables reproduce the captured samples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitReport {
    pub system: String,
    pub description: String,
    pub near: PlacementReport,
    /// The far placement; `None` when the profile has none.
    pub far: Option<PlacementReport>,
    /// The far placement equals the near one and is stored as near only.
    pub far_stored_as_near: bool,
    pub nodes_per_switch: u32,
    pub nodes_per_switch_source: String,
    pub loggp: Option<LogGpReport>,
    pub os_noise: Option<OsNoiseReport>,
    pub prices: PricesReport,
    /// The provenance notes written into the profile.
    pub notes: Vec<String>,
    /// Every warning of the import, prefixed with its capture.
    pub warnings: Vec<String>,
    /// `captures` (closed against the captures, the default) or `paper-table`.
    pub calibration: String,
    /// The closure table: the captures' own ping-pongs simulated with the profile (captures
    /// calibration only).
    pub closure: Option<crate::closure::ClosureReport>,
    /// The idle table solved from the hoverboard capture (`--idle-latency`).
    pub idle: Option<crate::idle::IdleReport>,
}

/// A number with about 4 significant digits, no exponent.
fn sig(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    let dec = if a == 0.0 {
        0
    } else {
        (3 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    format!("{v:.dec$}")
}

fn fmt_opt_price(p: Option<f64>) -> String {
    match p {
        Some(v) => format!("{v} USD/node-hour"),
        None => "unknown".into(),
    }
}

impl FitReport {
    /// The report as pretty-printed JSON (non-finite numbers become `null`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report serialises")
    }

    /// The report for humans, with a unit on every number.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "calibration fit report: {}", self.system);
        if !self.description.is_empty() {
            let _ = writeln!(o, "  {}", self.description);
        }
        let _ = writeln!(o, "calibration: {}", self.calibration);
        if let Some(c) = &self.closure {
            text_closure(&mut o, c);
        }
        if let Some(i) = &self.idle {
            text_idle(&mut o, i);
        }
        text_placement(&mut o, "near", &self.near);
        match &self.far {
            Some(f) => {
                text_placement(&mut o, "far", f);
                if self.far_stored_as_near {
                    let _ = writeln!(
                        o,
                        "  (identical to near: stored as the near placement only)"
                    );
                }
            }
            None => {
                let _ = writeln!(o, "far: none (every message uses the near placement)");
            }
        }
        let _ = writeln!(
            o,
            "nodes per switch: {} [{}]",
            self.nodes_per_switch, self.nodes_per_switch_source
        );
        if let Some(l) = &self.loggp {
            let _ = writeln!(o, "LogGP fit: {}", l.source);
            let _ = writeln!(
                o,
                "  L {}us, o {}us (line {}), g {}us, G {}ps/byte (line {}); used for: {}",
                sig(l.l_us),
                sig(l.o_us),
                l.o_line,
                sig(l.g_us),
                sig(l.big_g_ps_per_byte),
                l.gap_line,
                if l.used_for.is_empty() {
                    "nothing (other sources win)".to_string()
                } else {
                    l.used_for.join(", ")
                }
            );
            for w in &l.warnings {
                let _ = writeln!(o, "  warning: {w}");
            }
        }
        match &self.os_noise {
            Some(n) => {
                let _ = writeln!(o, "OS noise: {} ({})", n.source, n.format);
                let _ = writeln!(
                    o,
                    "  {} run(s), {} detours over {}s stitched ({} rows skipped): {}/s",
                    n.runs,
                    n.detours,
                    sig(n.period_s),
                    n.skipped_rows,
                    sig(n.rate_per_s)
                );
                let _ = writeln!(
                    o,
                    "  detour mean {}us, p50 {}us, p99 {}us, max {}us; overhead {}%",
                    sig(n.mean_us),
                    sig(n.p50_us),
                    sig(n.p99_us),
                    sig(n.max_us),
                    sig(n.overhead_pct)
                );
                let _ = writeln!(
                    o,
                    "  trace kept raw: {} detours over {}s ({} bytes uncompressed)",
                    n.trace_detours,
                    sig(n.trace_period_s),
                    n.trace_bytes
                );
                if let Some(p) = &n.process {
                    let _ = writeln!(
                        o,
                        "  detour process: Poisson {}/s, durations as {} table points{}; KS {:.5} exact, {:.5} Monte Carlo",
                        sig(p.rate_per_s),
                        p.duration_table_points,
                        tail_text(
                            p.duration_tail_samples,
                            p.duration_tail_from_quantile,
                            None
                        ),
                        p.ks_exact,
                        p.ks_monte_carlo
                    );
                }
                for w in &n.warnings {
                    let _ = writeln!(o, "  warning: {w}");
                }
            }
            None => {
                let _ = writeln!(o, "OS noise: none");
            }
        }
        let _ = writeln!(
            o,
            "prices: on-demand {}, committed {} [{}]",
            fmt_opt_price(self.prices.on_demand_usd_per_node_hour),
            fmt_opt_price(self.prices.committed_usd_per_node_hour),
            self.prices.source
        );
        if let Some(sp) = &self.prices.spot {
            let _ = writeln!(
                o,
                "spot: {}, {} [{}{}]",
                fmt_opt_price(sp.usd_per_node_hour),
                sp.interruptions_per_node_hour
                    .map_or("interruption rate unknown".into(), |r| format!(
                        "{r} interruptions per node-hour"
                    )),
                if sp.source.is_empty() {
                    "source not recorded"
                } else {
                    &sp.source
                },
                if sp.date.is_empty() {
                    String::new()
                } else {
                    format!(", {}", sp.date)
                }
            );
        }
        if !self.notes.is_empty() {
            let _ = writeln!(o, "notes:");
            for n in &self.notes {
                let _ = writeln!(o, "  - {n}");
            }
        }
        let _ = writeln!(o, "warnings: {}", self.warnings.len());
        for w in &self.warnings {
            let _ = writeln!(o, "  - {w}");
        }
        o
    }
}

fn text_idle(o: &mut String, r: &crate::idle::IdleReport) {
    let _ = writeln!(
        o,
        "after idle: {} ({} B ping-pong; {} first round trips of runs dropped); back to back: captured {}us, simulated {}us",
        r.source,
        r.size_bytes,
        r.dropped_first,
        sig(r.back_to_back_rtt_us),
        sig(r.simulated_back_to_back_rtt_us)
    );
    let _ = writeln!(
        o,
        "  {:>8} {:>7} {:>12} {:>9} {:>9} {:>9} {:>11} {:>9}",
        "sleep", "samples", "captured RTT", "ratio", "p-value", "target", "per-byte x", "simulated"
    );
    for row in &r.rows {
        let _ = writeln!(
            o,
            "  {:>7}s {:>7} {:>10}us {:>9.3} {:>9.2e} {:>9.3} {:>11.3} {:>9.3}",
            sig(row.sleep_s),
            row.samples,
            sig(row.captured_rtt_us),
            row.captured_ratio,
            row.p_value,
            row.target_ratio,
            row.per_byte_factor,
            row.simulated_ratio
        );
    }
    let _ = writeln!(
        o,
        "  ratio = median round trip after the sleep / back to back; target: 1 where not significantly longer (one-sided Mann-Whitney, p < {}), made non-decreasing in the idle time",
        crate::idle::SIGNIFICANCE
    );
}

fn text_closure(o: &mut String, c: &crate::closure::ClosureReport) {
    use crate::closure::{P50_TOLERANCE, TAIL_TOLERANCE};
    let _ = writeln!(
        o,
        "closure: each capture's own ping-pong simulated with this profile (noise mode net, queued model, {} repetitions); targets: p50 within {:.0} %, p95 and p99 within {:.0} %",
        crate::closure::CLOSURE_REPS,
        100.0 * P50_TOLERANCE,
        100.0 * TAIL_TOLERANCE
    );
    let _ = writeln!(
        o,
        "  {:<34} {:>27} {:>27} {:>24}  closes",
        "benchmark", "captured RTT/2 p50/p95/p99", "simulated p50/p95/p99", "error p50/p95/p99"
    );
    for r in &c.rows {
        let f = |v: [f64; 3]| format!("{}/{}/{}us", sig(v[0]), sig(v[1]), sig(v[2]));
        let _ = writeln!(
            o,
            "  {:<34} {:>27} {:>27} {:>24}  {}",
            r.benchmark,
            f(r.captured_us),
            f(r.simulated_us),
            format!(
                "{:+.1}/{:+.1}/{:+.1}%",
                100.0 * r.error[0],
                100.0 * r.error[1],
                100.0 * r.error[2]
            ),
            if r.closes { "yes" } else { "NO" }
        );
    }
    let _ = writeln!(
        o,
        "  far tail of the latency capture (above {} x its median, not drawn by back-to-back messages): {:.2} % of the samples",
        crate::closure::FAR_TAIL_FACTOR,
        100.0 * c.far_tail_share
    );
    let _ = writeln!(o, "  parameters:");
    for l in &c.sources {
        let _ = writeln!(o, "    {l}");
    }
    for n in &c.notes {
        let _ = writeln!(o, "  note: {n}");
    }
}

fn text_placement(o: &mut String, name: &str, p: &PlacementReport) {
    let q = &p.params;
    let _ = writeln!(o, "{name} parameters:");
    let bw = if q.implied_bandwidth_gbit_s.is_finite() {
        format!(" (1/G = {}Gbit/s)", sig(q.implied_bandwidth_gbit_s))
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "  L {}us [{}]\n  o {}us [{}]\n  g {}us [{}]\n  G {}ps/byte{bw} [{}]\n  O {}ps/byte [{}]\n  S {} [{}]",
        sig(q.l_us),
        q.sources.l,
        sig(q.o_us),
        q.sources.o,
        sig(q.g_us),
        q.sources.g,
        sig(q.big_g_ps_per_byte),
        q.sources.big_g,
        sig(q.big_o_ps_per_byte),
        q.sources.big_o,
        fmt_bytes(q.s_bytes),
        q.sources.s
    );
    text_dist(o, name, &p.latency);
    text_dist(o, name, &p.bandwidth);
}

fn text_dist(o: &mut String, placement: &str, d: &DistReport) {
    if d.shared_with_near {
        let _ = writeln!(
            o,
            "{placement} {}: the near distribution (no far capture; same shape, median pinned to the far base by the sampler)",
            d.quantity
        );
        return;
    }
    let _ = writeln!(
        o,
        "{placement} {}: {} ({}, {} messages)",
        d.quantity,
        d.source,
        d.format,
        fmt_bytes(d.message_size_bytes)
    );
    let _ = writeln!(
        o,
        "  rows read {}, blocks {}, kept {} samples",
        d.rows_read, d.blocks, d.kept
    );
    for r in &d.dropped.reasons {
        let _ = writeln!(o, "  dropped: {r}");
    }
    let what = if d.quantity == "latency" {
        "RTT/2"
    } else {
        "per-byte time"
    };
    let mut line = format!("  {what}:");
    for (n, v) in Quantiles::NAMES.iter().zip(d.quantiles.values()) {
        let _ = write!(line, " {n} {}{}", sig(v), d.unit);
    }
    let _ = writeln!(o, "{line}");
    if let Some(g) = &d.quantiles_gbit_s {
        let mut line = "  bandwidth:".to_string();
        for (n, v) in Quantiles::NAMES.iter().zip(g.values()) {
            let _ = write!(line, " {n} {}Gbit/s", sig(v));
        }
        let _ = writeln!(o, "{line}");
    }
    let range = d.tail_min.zip(d.tail_max).map(|(a, b)| {
        if a == b {
            format!("{}{}", sig(a), d.unit)
        } else {
            format!("{}{u} to {}{u}", sig(a), sig(b), u = d.unit)
        }
    });
    let _ = writeln!(
        o,
        "  median {}{u}, mean {}{u}; quantile table of {} points{}; KS distance to the samples {:.5} exact, {:.5} Monte Carlo ({} draws, seed {:#x})",
        sig(d.median),
        sig(d.mean),
        d.table_points,
        tail_text(d.tail_samples, d.tail_from_quantile, range),
        d.ks_exact,
        d.ks_monte_carlo,
        d.mc_draws,
        d.mc_seed,
        u = d.unit
    );
    let c = &d.time_correlation;
    if c.measurable() {
        let _ = writeln!(
            o,
            "  in capture order: autocorrelation of log values {:.3} (lag 1), {:.3} (lag 10); P(next above p95 | above p95) {:.3} (0.05 if independent)",
            c.lag1, c.lag10, c.tail_after_tail
        );
    } else {
        let _ = writeln!(
            o,
            "  in capture order: too few samples ({}) to measure their correlation in time",
            c.samples
        );
    }
    for w in &d.warnings {
        let _ = writeln!(o, "  warning: {w}");
    }
}

/// ` + the K largest samples exactly (above the 99.900th percentile[, range])`, or nothing.
fn tail_text(k: usize, from: f64, range: Option<String>) -> String {
    if k == 0 {
        return String::new();
    }
    let what = if k == 1 {
        "the largest sample".to_string()
    } else {
        format!("the {k} largest samples")
    };
    let range = range.map(|r| format!(", {r}")).unwrap_or_default();
    format!(
        " + {what} exactly (above the {:.3}th percentile{range})",
        100.0 * from
    )
}

// ------------------------------------------------------------------------------------------------
// Statistics helpers

/// SplitMix64 finaliser.
fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform in [0, 1) for draw `i` of stream `seed` (counter-based SplitMix64, 53 bits).
pub fn uniform(seed: u64, i: u64) -> f64 {
    let x = splitmix64(seed.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Two-sample KS distance between `samples` and [`MC_DRAWS`] inverse-CDF draws of `table`.
pub fn monte_carlo_ks(table: &QuantileTable, samples: &[f64]) -> f64 {
    let draws: Vec<f64> = (0..MC_DRAWS as u64)
        .map(|i| table.quantile(uniform(MC_SEED, i)))
        .collect();
    ks_two_sample(&draws, samples)
}

/// Sets the table's value at probability 0.5 to `median` (inserting a point when the table has
/// none there). Monotonicity is kept for a table built from the samples whose median this is:
/// its points at p <= 0.5 are order statistics at or below the median, those above at or above.
fn pin_median(t: &mut QuantileTable, median: f64) {
    let k = t.probs.partition_point(|&p| p < 0.5);
    if k < t.probs.len() && t.probs[k] == 0.5 {
        t.values[k] = median;
    } else {
        t.probs.insert(k, 0.5);
        t.values.insert(k, median);
    }
}

fn median_sorted(s: &[f64]) -> f64 {
    quantile_sorted(s, 0.5)
}

/// A quantile table of the samples with its median pinned, and the table's KS distances.
struct Fitted {
    table: QuantileTable,
    ks_exact: f64,
    ks_mc: f64,
}

fn fit(samples: &[f64], sorted_samples: &[f64], opts: &CompressOptions) -> Option<Fitted> {
    let mut table = QuantileTable::compress_with(samples, opts)?;
    pin_median(&mut table, median_sorted(sorted_samples));
    let ks_exact = table.ks_to_samples(samples);
    let ks_mc = monte_carlo_ks(&table, samples);
    Some(Fitted {
        table,
        ks_exact,
        ks_mc,
    })
}

/// A quantile table (median pinned, exact tail) of sorted `samples` (at least one, no NaN).
pub(crate) fn sample_table(sorted_samples: &[f64], opts: &CompressOptions) -> Distribution {
    let mut table =
        QuantileTable::compress_with(sorted_samples, opts).expect("samples without NaN");
    pin_median(&mut table, median_sorted(sorted_samples));
    to_dist(table)
}

fn to_dist(t: QuantileTable) -> Distribution {
    let tail = (!t.tail.is_empty()).then_some(ExactTail {
        values: t.tail,
        sample_count: t.sample_count,
    });
    Distribution::Quantiles {
        probs: t.probs,
        values: t.values,
        tail,
    }
}

/// `p` as the user would name it from the current directory: a relative path as given, an
/// absolute one made relative to the current directory (`../shared/captures/...`), so that
/// provenance never holds a machine's absolute paths. Only when the current directory is
/// unknown does an absolute path stay absolute.
pub fn relative_to_cwd(p: &Path) -> String {
    use std::path::Component;
    if p.is_relative() {
        return p.display().to_string();
    }
    let Ok(cwd) = std::env::current_dir() else {
        return p.display().to_string();
    };
    fn norm(q: &Path) -> Vec<Component<'_>> {
        let mut v: Vec<Component<'_>> = Vec::new();
        for c in q.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir if matches!(v.last(), Some(Component::Normal(_))) => {
                    v.pop();
                }
                c => v.push(c),
            }
        }
        v
    }
    let (a, b) = (norm(p), norm(&cwd));
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut r = PathBuf::new();
    for _ in common..b.len() {
        r.push("..");
    }
    for c in &a[common..] {
        r.push(c.as_os_str());
    }
    if r.as_os_str().is_empty() {
        ".".to_string()
    } else {
        r.display().to_string()
    }
}

/// `2025-02-01T12:34:56Z` for a time after the Unix epoch.
pub fn iso8601_utc(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

// ------------------------------------------------------------------------------------------------
// Building

/// A ping-pong capture turned into a distribution.
struct CaptureFit {
    dist: Distribution,
    report: DistReport,
    size: u64,
    /// The kept RTT/2 samples, ps, sorted (what the closure reproduces).
    rtt2_ps: Vec<f64>,
}

fn warning_strings(ws: &[Warning]) -> Vec<String> {
    ws.iter().map(|w| w.to_string()).collect()
}

fn capture_fit(
    path: &Path,
    kind: PingPongKind,
    size: Option<u64>,
    inp: &CalibrateInputs,
) -> Result<CaptureFit, CalibError> {
    inp.step(&format!(
        "reading and fitting the {} capture {}",
        match kind {
            PingPongKind::Bandwidth => "bandwidth",
            _ => "latency",
        },
        relative_to_cwd(path)
    ));
    let opts = PingPongOptions {
        kind,
        size,
        ..inp.pingpong.clone()
    };
    let pp = read_pingpong(path, &opts)?;
    let (quantity, unit) = match kind {
        PingPongKind::Bandwidth => ("bandwidth", "ps/byte"),
        _ => ("latency", "us"),
    };
    if pp.samples_us.len() < inp.min_samples {
        return Err(CalibError::TooFewSamples {
            path: pp.source.clone(),
            quantity,
            kept: pp.samples_us.len() as u64,
            min: inp.min_samples,
            detail: format!(
                "{} rows in {} block(s), {} dropped as warm-up ({} per block), {} unusable",
                pp.rows, pp.blocks, pp.warmup_dropped, opts.warmup, pp.skipped
            ),
        });
    }
    // Samples in profile units: ps (latency) or ps/byte (bandwidth).
    let size_f = pp.size_bytes as f64;
    let samples: Vec<f64> = match kind {
        PingPongKind::Bandwidth => pp.samples_ps.iter().map(|&p| p as f64 / size_f).collect(),
        _ => pp.samples_ps.iter().map(|&p| p as f64).collect(),
    };
    let s = sorted(&samples);
    let f = fit(&samples, &s, &inp.table).ok_or_else(|| CalibError::NoData {
        path: pp.source.clone(),
        detail: "no samples to build a distribution from".into(),
    })?;
    // Report units: µs for latency, ps/byte for bandwidth.
    let to_report = |v: f64| match kind {
        PingPongKind::Bandwidth => v,
        _ => v / 1e6,
    };
    let rep_sorted: Vec<f64> = s.iter().map(|&v| to_report(v)).collect();
    let quantiles = Quantiles::of_sorted(&rep_sorted);
    let quantiles_gbit_s = (kind == PingPongKind::Bandwidth).then(|| {
        let g: Vec<f64> = s.iter().rev().map(|&v| 8000.0 / v).collect();
        Quantiles::of_sorted(&g)
    });
    let mean = rep_sorted.iter().sum::<f64>() / rep_sorted.len() as f64;
    let time_correlation = crate::stats::TimeCorrelation::of(&samples);
    let mut warnings = warning_strings(&pp.warnings);
    if time_correlation.correlated() {
        warnings.push(format!(
            "consecutive samples are correlated in time (lag-1 autocorrelation {:.2}, a sample above the p95 is followed by another {:.0} % of the time instead of 5 %): the simulator draws every message independently, so simulated runs may spread less than real ones",
            time_correlation.lag1,
            100.0 * time_correlation.tail_after_tail
        ));
    }
    let report = DistReport {
        quantity: quantity.into(),
        source: relative_to_cwd(path),
        format: Format::PingPong.name().into(),
        shared_with_near: false,
        message_size_bytes: pp.size_bytes,
        rows_read: pp.rows + pp.other_sizes.iter().map(|c| c.rows).sum::<u64>(),
        blocks: pp.blocks,
        kept: samples.len() as u64,
        dropped: dropped_of(&pp, &opts),
        unit: unit.into(),
        quantiles,
        quantiles_gbit_s,
        median: to_report(median_sorted(&s)),
        mean,
        table_points: f.table.len(),
        tail_samples: f.table.tail.len(),
        tail_from_quantile: f.table.tail_start(),
        tail_min: f.table.tail.first().map(|&v| to_report(v)),
        tail_max: f.table.tail.last().map(|&v| to_report(v)),
        ks_exact: f.ks_exact,
        ks_monte_carlo: f.ks_mc,
        mc_draws: MC_DRAWS,
        mc_seed: MC_SEED,
        time_correlation,
        warnings,
    };
    Ok(CaptureFit {
        dist: to_dist(f.table),
        report,
        size: pp.size_bytes,
        rtt2_ps: sorted(&pp.samples_ps.iter().map(|&p| p as f64).collect::<Vec<_>>()),
    })
}

fn dropped_of(pp: &PingPong, opts: &PingPongOptions) -> Dropped {
    let mut reasons = Vec::new();
    if pp.warmup_dropped > 0 {
        reasons.push(format!(
            "{} warm-up rows (the first {} rows of every block; {} blocks)",
            pp.warmup_dropped, opts.warmup, pp.blocks
        ));
    }
    if pp.skipped > 0 {
        let first = pp
            .warnings
            .iter()
            .find(|w| w.kind == WarningKind::SkippedRows)
            .map(|w| w.to_string())
            .unwrap_or_default();
        reasons.push(format!("{} unusable rows: {first}", pp.skipped));
    }
    let other_rows: u64 = pp.other_sizes.iter().map(|c| c.rows).sum();
    if other_rows > 0 {
        let sizes: Vec<String> = pp
            .other_sizes
            .iter()
            .map(|c| format!("{} ({} rows)", fmt_bytes(c.size_bytes), c.rows))
            .collect();
        reasons.push(format!(
            "{other_rows} rows of other message sizes: {}",
            sizes.join(", ")
        ));
    }
    Dropped {
        warmup: pp.warmup_dropped,
        warmup_per_block: opts.warmup,
        bad_rows: pp.skipped,
        bad_lines: pp.skipped_lines.clone(),
        other_sizes: pp
            .other_sizes
            .iter()
            .map(|c| OtherSize {
                size_bytes: c.size_bytes,
                rows: c.rows,
            })
            .collect(),
        reasons,
    }
}

/// Base parameters as far as known, with the source of each.
#[derive(Clone, Debug, Default)]
struct Partial {
    l: Option<(f64, String)>,
    o: Option<(f64, String)>,
    g: Option<(f64, String)>,
    big_g: Option<(f64, String)>,
    big_o: Option<(f64, String)>,
    s: Option<(u64, String)>,
}

impl Partial {
    fn from_params(p: &BaseParams, src: &str) -> Partial {
        Partial {
            l: Some((p.l_ps, src.into())),
            o: Some((p.o_ps, src.into())),
            g: Some((p.g_ps, src.into())),
            big_g: Some((p.big_g_ps_per_byte, src.into())),
            big_o: Some((p.big_o_ps_per_byte, src.into())),
            s: Some((p.s_bytes, src.into())),
        }
    }

    /// A table row: the table has no O column, O is 0 as in the paper.
    fn from_table(p: &BaseParams, src: &str) -> Partial {
        let mut t = Partial::from_params(p, src);
        t.big_o = Some((0.0, format!("{src}: no O column, 0 as the paper's -O 0")));
        t
    }

    /// Fills every unknown parameter from `other`.
    fn or(self, other: Partial) -> Partial {
        Partial {
            l: self.l.or(other.l),
            o: self.o.or(other.o),
            g: self.g.or(other.g),
            big_g: self.big_g.or(other.big_g),
            big_o: self.big_o.or(other.big_o),
            s: self.s.or(other.s),
        }
    }

    fn explicit(e: &ParamOverrides, src: &str) -> Partial {
        Partial {
            l: e.l_ps.map(|v| (v, src.into())),
            o: e.o_ps.map(|v| (v, src.into())),
            g: e.g_ps.map(|v| (v, src.into())),
            big_g: e.big_g_ps_per_byte.map(|v| (v, src.into())),
            big_o: e.big_o_ps_per_byte.map(|v| (v, src.into())),
            s: e.s_bytes.map(|v| (v, src.into())),
        }
    }

    fn finish(self, placement: &str) -> Result<(BaseParams, ParamSources), CalibError> {
        let mut missing = Vec::new();
        let name = |m: &mut Vec<String>, what: &str| m.push(format!("{placement} {what}"));
        if self.l.is_none() {
            name(&mut missing, "L (latency, ps)");
        }
        if self.o.is_none() {
            name(&mut missing, "o (CPU overhead per message, ps)");
        }
        if self.g.is_none() {
            name(&mut missing, "g (gap per message, ps)");
        }
        if self.big_g.is_none() {
            name(&mut missing, "G (gap per byte, ps/byte)");
        }
        if self.s.is_none() {
            name(&mut missing, "S (eager threshold, bytes)");
        }
        if !missing.is_empty() {
            return Err(CalibError::MissingParams {
                missing,
                hint: "give them explicitly, choose a row of a parameter table (the format of the paper's loggp_params.csv), or give a Netgauge LogGP fit (which provides L, o, g and G but not S)".into(),
            });
        }
        for (what, v) in [
            ("L (latency)", &self.l),
            ("o (CPU overhead per message)", &self.o),
            ("g (gap per message)", &self.g),
            ("G (gap per byte)", &self.big_g),
            ("O (CPU overhead per byte)", &self.big_o),
        ] {
            if let Some((v, src)) = v {
                if !v.is_finite() || *v < 0.0 {
                    let unit = if what.starts_with('G') || what.starts_with('O') {
                        "ps/byte"
                    } else {
                        "ps"
                    };
                    return Err(CalibError::InvalidProfile {
                        detail: format!(
                            "{placement} {what} is {v}{unit} [{src}]; expected a finite non-negative value"
                        ),
                    });
                }
            }
        }
        let (l, ls) = self.l.expect("checked");
        let (o, os) = self.o.expect("checked");
        let (g, gs) = self.g.expect("checked");
        let (bg, bgs) = self.big_g.expect("checked");
        let (bo, bos) = self
            .big_o
            .unwrap_or((0.0, "default: 0, as the paper (-O 0)".into()));
        let (s, ss) = self.s.expect("checked");
        Ok((
            BaseParams {
                l_ps: l,
                o_ps: o,
                g_ps: g,
                big_g_ps_per_byte: bg,
                big_o_ps_per_byte: bo,
                s_bytes: s,
            },
            ParamSources {
                l: ls,
                o: os,
                g: gs,
                big_g: bgs,
                big_o: bos,
                s: ss,
            },
        ))
    }
}

fn params_report(p: &BaseParams, sources: ParamSources) -> ParamsReport {
    ParamsReport {
        l_us: p.l_ps / 1e6,
        o_us: p.o_ps / 1e6,
        g_us: p.g_ps / 1e6,
        big_g_ps_per_byte: p.big_g_ps_per_byte,
        big_o_ps_per_byte: p.big_o_ps_per_byte,
        s_bytes: p.s_bytes,
        implied_bandwidth_gbit_s: if p.big_g_ps_per_byte > 0.0 {
            8000.0 / p.big_g_ps_per_byte
        } else {
            f64::INFINITY
        },
        sources,
    }
}

/// The table rows selected by [`ParamSource::table`].
struct TableParams {
    near: BaseParams,
    far: Option<BaseParams>,
    nps: u32,
    near_label: String,
    far_label: Option<String>,
}

fn table_params(t: &ParamsTableRow) -> Result<TableParams, CalibError> {
    let file = t
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| t.path.display().to_string());
    let label = |placement: &str| {
        format!(
            "table {file}: {} / {} / {placement}",
            t.provider, t.instance
        )
    };
    if same_key(&t.placement, DIFFERENT_RACKS) {
        let (near, far, nps) = read_params_table_placement_pair(&t.path, &t.provider, &t.instance)?;
        Ok(TableParams {
            near,
            far: Some(far),
            nps,
            near_label: label(SAME_RACK),
            far_label: Some(label(DIFFERENT_RACKS)),
        })
    } else {
        let (near, nps) = read_params_table(&t.path, &t.provider, &t.instance, &t.placement)?;
        Ok(TableParams {
            near,
            far: None,
            nps,
            near_label: label(&t.placement),
            far_label: None,
        })
    }
}

fn loggp_partial(s: &LogGpSummary, file: &str) -> Partial {
    Partial {
        l: Some((s.l_ps, format!("LogGP fit {file}"))),
        o: Some((s.o_ps, format!("LogGP fit {file}, line {}", s.o_line))),
        g: Some((s.g_ps, format!("LogGP fit {file}, line {}", s.gap_line))),
        big_g: Some((
            s.big_g_ps_per_byte,
            format!("LogGP fit {file}, line {}", s.gap_line),
        )),
        big_o: None,
        s: None,
    }
}

/// What [`build_profile`] makes of the network captures.
type Placements = (
    Placement,
    PlacementReport,
    Option<Placement>,
    Option<PlacementReport>,
    bool,
    u32,
    String,
    Vec<String>,
    Option<crate::closure::ClosureReport>,
);

/// The captures calibration (no parameter table): one placement per pair of captures, closed
/// against them ([`crate::closure`]); a far placement only from far captures of its own.
fn captures_placements(
    inp: &CalibrateInputs,
    loggp: &Option<crate::loggp::LogGpFit>,
    lat: &CaptureFit,
    bw: &CaptureFit,
    sources: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<Placements, CalibError> {
    use crate::closure::{close, ClosureInputs, Explicit};
    if !inp.far_params.is_empty() && inp.far_latency.is_none() {
        return Err(CalibError::InvalidProfile {
            detail: "far parameters without far captures: the captures calibration makes a far placement only from --far-latency and --far-bandwidth (or give --params-table for the paper's convention)".into(),
        });
    }
    if let Some(p) = &inp.loggp {
        sources.push(relative_to_cwd(p));
    }
    let e = &inp.params.explicit;
    let explicit = Explicit {
        o_ps: e.o_ps,
        g_ps: e.g_ps,
        big_o_ps_per_byte: e.big_o_ps_per_byte,
        s_bytes: e.s_bytes,
    };
    let one = |lat: &CaptureFit, bw: &CaptureFit, which: &str| {
        inp.step(&format!(
            "closing the {which} placement against its captures (simulating their ping-pongs)"
        ));
        close(&ClosureInputs {
            latency_ps: &lat.rtt2_ps,
            latency_size: lat.size,
            bandwidth_ps: &bw.rtt2_ps,
            bandwidth_size: bw.size,
            stripes: inp.bandwidth_stripes.max(1),
            loggp: loggp.as_ref(),
            explicit,
            table: &inp.table,
        })
        .map_err(|detail| CalibError::InvalidProfile {
            detail: format!("cannot close the {which} placement against its captures: {detail}"),
        })
    };
    let report_of = |c: &crate::closure::Closed, lat: &CaptureFit, bw: &CaptureFit| {
        let src = |name: &str| {
            c.report
                .sources
                .iter()
                .find(|l| l.starts_with(&format!("{name} = ")))
                .cloned()
                .unwrap_or_default()
        };
        PlacementReport {
            params: params_report(
                &c.placement.params,
                ParamSources {
                    l: src("L"),
                    o: src("o"),
                    g: src("g"),
                    big_g: src("G"),
                    big_o: src("O"),
                    s: src("S"),
                },
            ),
            latency: lat.report.clone(),
            bandwidth: bw.report.clone(),
        }
    };
    let near = one(lat, bw, "near")?;
    let near_report = report_of(&near, lat, bw);
    let (far, far_report) = match (&inp.far_latency, &inp.far_bandwidth) {
        (Some(fl), Some(fb)) => {
            let flat = capture_fit(fl, PingPongKind::Latency, inp.latency_size, inp)?;
            let fbw = capture_fit(fb, PingPongKind::Bandwidth, inp.bandwidth_size, inp)?;
            sources.push(flat.report.source.clone());
            sources.push(fbw.report.source.clone());
            let f = one(&flat, &fbw, "far")?;
            let r = report_of(&f, &flat, &fbw);
            (Some(f), Some(r))
        }
        (None, None) => (None, None),
        _ => {
            return Err(CalibError::InvalidProfile {
                detail: "the captures calibration needs both --far-latency and --far-bandwidth for a far placement".into(),
            })
        }
    };
    let nps = match (inp.nodes_per_switch, &far) {
        (Some(0), _) => {
            return Err(CalibError::InvalidProfile {
                detail: "nodes per switch is 0, expected at least 1".into(),
            })
        }
        (Some(n), _) => (n, "explicit".to_string()),
        (None, Some(_)) => {
            return Err(CalibError::MissingParams {
                missing: vec![
                    "nodes_per_switch (nodes per switch, which decides near and far messages)"
                        .into(),
                ],
                hint: "give it explicitly".into(),
            })
        }
        (None, None) => (1, "default: 1 (no far placement)".to_string()),
    };
    let mut closure = near.report.clone();
    if let Some(f) = &far {
        closure.rows.extend(f.report.rows.iter().map(|r| {
            let mut r = r.clone();
            r.benchmark = format!("far: {}", r.benchmark);
            r
        }));
        closure
            .notes
            .extend(f.report.notes.iter().map(|n| format!("far: {n}")));
    }
    notes.push(format!(
        "captures calibration: simulating the captures' own ping-pongs with this profile reproduces them ({}); messages sent after {} us of idleness draw the captured latency, others the back-to-back one (the capture up to {} x its median)",
        if closure.closes() { "every row of the closure table closes" } else { "NOT every row closes, see the fit report" },
        crate::closure::CAPTURE_IDLE_PS / 1e6,
        crate::closure::FAR_TAIL_FACTOR
    ));
    let used = vec!["o".into(), "g".into()];
    Ok((
        near.placement,
        near_report,
        far.map(|f| f.placement),
        far_report,
        false,
        nps.0,
        nps.1,
        used,
        Some(closure),
    ))
}

/// The OS-noise part: profile data and report.
fn os_noise_fit(
    path: &Path,
    inp: &CalibrateInputs,
) -> Result<(OsNoise, OsNoiseReport, Vec<String>), CalibError> {
    inp.step(&format!(
        "reading and fitting the OS-noise capture {}",
        relative_to_cwd(path)
    ));
    let format = detect(path).unwrap_or(Format::Selfish);
    let (detours, runs, skipped, mut warnings, format): (
        Detours,
        usize,
        u64,
        Vec<Warning>,
        Format,
    ) = match format {
        Format::Fwq | Format::Ftq => {
            let q = read_quanta(path)?;
            let d = q.to_detours(&QuantumOptions::default())?;
            (d, 1, 0, q.warnings, format)
        }
        _ => {
            let t = read_selfish(path)?;
            (
                t.stitched(),
                t.runs.len(),
                t.skipped,
                t.warnings,
                Format::Selfish,
            )
        }
    };
    let mut notes = Vec::new();
    let (starts, durs, period) = detours.to_ps();
    let n = starts.len();
    let period_ps = period.max(
        starts
            .last()
            .zip(durs.last())
            .map(|(s, d)| s + d)
            .unwrap_or(0),
    );
    let period_s = period_ps as f64 / 1e12;
    if period_ps == 0 {
        return Err(CalibError::NoData {
            path: path.display().to_string(),
            detail: "the OS-noise trace has no measured period (no detours and no `# Measurement period` trailer)".into(),
        });
    }
    // The stored trace: the first `max_trace_detours` detours.
    let keep = n.min(inp.max_trace_detours);
    let trace = if keep < n {
        let end = starts[keep - 1] + durs[keep - 1];
        let cut = starts[keep].max(end);
        notes.push(format!(
            "OS-noise trace cut to its first {keep} of {n} detours ({}s of {}s); the detour process is fitted on all {n}",
            sig(cut as f64 / 1e12),
            sig(period_s)
        ));
        DetourTrace {
            start_ps: starts[..keep].to_vec(),
            duration_ps: durs[..keep].to_vec(),
            period_ps: cut,
        }
    } else {
        DetourTrace {
            start_ps: starts,
            duration_ps: durs.clone(),
            period_ps,
        }
    };
    let dur_f: Vec<f64> = durs.iter().map(|&d| d as f64).collect();
    let s = sorted(&dur_f);
    let rate = n as f64 / period_s;
    let (process, process_report) = match fit(&dur_f, &s, &inp.table) {
        Some(f) => {
            let rep = ProcessReport {
                rate_per_s: rate,
                duration_table_points: f.table.len(),
                duration_tail_samples: f.table.tail.len(),
                duration_tail_from_quantile: f.table.tail_start(),
                ks_exact: f.ks_exact,
                ks_monte_carlo: f.ks_mc,
            };
            (
                Some(DetourProcess {
                    rate_per_s: rate,
                    duration_ps: to_dist(f.table),
                }),
                Some(rep),
            )
        }
        None => {
            notes.push("the OS-noise trace has no detours: no detour process fitted".into());
            (None, None)
        }
    };
    let q = |p: f64| quantile_sorted(&s, p) / 1e6;
    let overhead_pct = detours.overhead_fraction() * 100.0;
    let max_us = s.last().copied().unwrap_or(0.0) / 1e6;
    if overhead_pct > OS_OVERHEAD_WARN_PCT {
        warnings.push(Warning::new(
            WarningKind::HeavyTail,
            n as u64,
            Vec::new(),
            format!(
                "heavy OS noise: detours take {}% of the CPU time (limit {}%); was the node busy with other work?",
                sig(overhead_pct),
                sig(OS_OVERHEAD_WARN_PCT)
            ),
        ));
    }
    let total: f64 = s.iter().sum();
    let long: Vec<f64> = s
        .iter()
        .copied()
        .filter(|&d| d > OS_LONG_DETOUR_US * 1e6)
        .collect();
    let long_share = if total > 0.0 {
        long.iter().sum::<f64>() / total
    } else {
        0.0
    };
    if long_share > OS_LONG_SHARE_WARN {
        warnings.push(Warning::new(
            WarningKind::HeavyTail,
            long.len() as u64,
            Vec::new(),
            format!(
                "heavy tail: {} of {n} detours are longer than {}us (up to {}us) and take {}% of the detour time (limit {}%); kept, but time slicing of a shared or virtual CPU looks like this",
                long.len(),
                sig(OS_LONG_DETOUR_US),
                sig(max_us),
                sig(long_share * 100.0),
                sig(OS_LONG_SHARE_WARN * 100.0)
            ),
        ));
    }
    let report = OsNoiseReport {
        source: relative_to_cwd(path),
        format: format.name().into(),
        runs,
        detours: n,
        skipped_rows: skipped,
        period_s,
        rate_per_s: rate,
        mean_us: if n > 0 {
            dur_f.iter().sum::<f64>() / n as f64 / 1e6
        } else {
            0.0
        },
        p50_us: if n > 0 { q(0.5) } else { 0.0 },
        p99_us: if n > 0 { q(0.99) } else { 0.0 },
        max_us,
        overhead_pct,
        trace_detours: trace.start_ps.len(),
        trace_period_s: trace.period_ps as f64 / 1e12,
        trace_bytes: 16 * trace.start_ps.len() as u64,
        process: process_report,
        warnings: warning_strings(&warnings),
    };
    Ok((
        OsNoise {
            traces: vec![trace],
            process,
        },
        report,
        notes,
    ))
}

/// Builds a noise profile and its fit report from captures and parameters (see the module
/// documentation). Nothing is written; store the profile with `loggops_profile::write_profile`.
pub fn build_profile(inp: &CalibrateInputs) -> Result<(Profile, FitReport), CalibError> {
    let mut notes: Vec<String> = inp.notes.clone();
    let mut sources: Vec<String> = Vec::new();

    // Parameters: explicit > table > LogGP fit.
    let table = inp.params.table.as_ref().map(table_params).transpose()?;
    let mut loggp_fit = None;
    let loggp = match &inp.loggp {
        Some(p) => {
            let fit = read_loggp(p)?;
            let s = fit.summary()?;
            let mut w = fit.warnings.clone();
            w.extend(s.warnings.iter().cloned());
            loggp_fit = Some(fit);
            Some((relative_to_cwd(p), s, w))
        }
        None => None,
    };
    let loggp_file = inp
        .loggp
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Measured distributions.
    let near_lat = capture_fit(&inp.latency, PingPongKind::Latency, inp.latency_size, inp)?;
    let near_bw = capture_fit(
        &inp.bandwidth,
        PingPongKind::Bandwidth,
        inp.bandwidth_size,
        inp,
    )?;
    sources.push(near_lat.report.source.clone());
    sources.push(near_bw.report.source.clone());
    let captures = inp.calibration == Calibration::Captures;
    if captures
        && (inp.params.table.is_some()
            || inp.params.explicit.l_ps.is_some()
            || inp.params.explicit.big_g_ps_per_byte.is_some())
    {
        return Err(CalibError::InvalidProfile {
            detail: "the captures calibration solves L and G from the captures: a parameter table, --set-L or --set-G belong to the paper-table calibration (--calibration paper-table)".into(),
        });
    }
    let (
        near,
        near_report,
        far,
        far_report,
        far_stored_as_near,
        nodes_per_switch,
        nps_source,
        loggp_used,
        closure,
    ) = if captures {
        captures_placements(
            inp,
            &loggp_fit,
            &near_lat,
            &near_bw,
            &mut sources,
            &mut notes,
        )?
    } else {
        let mut near_partial = Partial::explicit(&inp.params.explicit, "explicit");
        if let Some(t) = &table {
            near_partial = near_partial.or(Partial::from_table(&t.near, &t.near_label));
        }
        if let Some((_, s, _)) = &loggp {
            near_partial = near_partial.or(loggp_partial(s, &loggp_file));
        }
        let (near_params, near_sources) = near_partial.finish("near")?;
        let loggp_used: Vec<String> = [
            ("L", &near_sources.l),
            ("o", &near_sources.o),
            ("g", &near_sources.g),
            ("G", &near_sources.big_g),
        ]
        .iter()
        .filter(|(_, s)| s.starts_with("LogGP fit"))
        .map(|(n, _)| n.to_string())
        .collect();

        let want_far = table.as_ref().is_some_and(|t| t.far.is_some())
            || !inp.far_params.is_empty()
            || inp.far_latency.is_some()
            || inp.far_bandwidth.is_some();
        let far_resolved = if want_far {
            let base = match &table {
                Some(TableParams {
                    far: Some(f),
                    far_label: Some(label),
                    ..
                }) => Partial::from_table(f, label),
                _ => {
                    let mut p = Partial::from_params(&near_params, "as near");
                    p.l.as_mut().expect("set").1 = format!("as near ({})", near_sources.l);
                    p.o.as_mut().expect("set").1 = format!("as near ({})", near_sources.o);
                    p.g.as_mut().expect("set").1 = format!("as near ({})", near_sources.g);
                    p.big_g.as_mut().expect("set").1 = format!("as near ({})", near_sources.big_g);
                    p.big_o.as_mut().expect("set").1 = format!("as near ({})", near_sources.big_o);
                    p.s.as_mut().expect("set").1 = format!("as near ({})", near_sources.s);
                    p
                }
            };
            Some(
                Partial::explicit(&inp.far_params, "explicit (far)")
                    .or(Partial::explicit(&inp.params.explicit, "explicit"))
                    .or(base)
                    .finish("far")?,
            )
        } else {
            None
        };

        let (nodes_per_switch, nps_source) = match (inp.nodes_per_switch, &table) {
            (Some(0), _) => {
                return Err(CalibError::InvalidProfile {
                    detail: "nodes per switch is 0, expected at least 1".into(),
                })
            }
            (Some(n), _) => (n, "explicit".to_string()),
            (None, Some(t)) => (t.nps, t.far_label.clone().unwrap_or(t.near_label.clone())),
            (None, None) if far_resolved.is_some() => {
                return Err(CalibError::MissingParams {
                    missing: vec!["nodes_per_switch (nodes per switch, which decides near and far messages)".into()],
                    hint: "give it explicitly or choose a row of a parameter table (its nodes_per_switch_in_simulate_py column)".into(),
                })
            }
            (None, None) => (1, "default: 1 (no far placement)".to_string()),
        };
        if let Some(t) = &inp.params.table {
            sources.push(relative_to_cwd(&t.path));
        }
        if let Some((p, _, _)) = &loggp {
            sources.push(p.clone());
        }

        let near = Placement {
            params: near_params.clone(),
            latency: Some(near_lat.dist.clone()),
            bandwidth: Some(near_bw.dist.clone()),
            bandwidth_block_bytes: near_bw.size,
            overhead: None,
            gap: None,
            after_idle: None,
        };
        let near_report = PlacementReport {
            params: params_report(&near_params, near_sources),
            latency: near_lat.report.clone(),
            bandwidth: near_bw.report.clone(),
        };

        let mut far_stored_as_near = false;
        let (far, far_report) = match far_resolved {
            Some((far_params, far_sources)) => {
                let shared = |c: &CaptureFit| {
                    let mut r = c.report.clone();
                    r.shared_with_near = true;
                    r
                };
                let lat = match &inp.far_latency {
                    Some(p) => {
                        let f = capture_fit(p, PingPongKind::Latency, inp.latency_size, inp)?;
                        sources.push(f.report.source.clone());
                        notes.push(format!(
                            "far latency from its own capture {}",
                            f.report.source
                        ));
                        (f.dist, f.report)
                    }
                    None => {
                        notes.push("far latency distribution = the near capture's (the paper's convention: same shape, median pinned to the far L by the sampler)".into());
                        (near_lat.dist.clone(), shared(&near_lat))
                    }
                };
                let bw = match &inp.far_bandwidth {
                    Some(p) => {
                        let f = capture_fit(p, PingPongKind::Bandwidth, inp.bandwidth_size, inp)?;
                        sources.push(f.report.source.clone());
                        notes.push(format!(
                            "far bandwidth from its own capture {}",
                            f.report.source
                        ));
                        (f.dist, f.report, f.size)
                    }
                    None => {
                        notes.push("far bandwidth distribution = the near capture's (the paper's convention: same shape, median pinned to the far G by the sampler)".into());
                        (near_bw.dist.clone(), shared(&near_bw), near_bw.size)
                    }
                };
                let placement = Placement {
                    params: far_params.clone(),
                    latency: Some(lat.0),
                    bandwidth: Some(bw.0),
                    bandwidth_block_bytes: bw.2,
                    overhead: None,
                    gap: None,
                    after_idle: None,
                };
                let report = PlacementReport {
                    params: params_report(&far_params, far_sources),
                    latency: lat.1,
                    bandwidth: bw.1,
                };
                if placement == near {
                    far_stored_as_near = true;
                    notes.push(
                        "far placement identical to near (same parameters and distributions): stored as near only"
                            .into(),
                    );
                    (None, Some(report))
                } else {
                    (Some(placement), Some(report))
                }
            }
            None => (None, None),
        };

        (
            near,
            near_report,
            far,
            far_report,
            far_stored_as_near,
            nodes_per_switch,
            nps_source,
            loggp_used,
            None,
        )
    };
    // Messages after long idle periods.
    let (near, far, idle_report) = match &inp.idle_latency {
        None => (near, far, None),
        Some(path) => {
            inp.step("solving the per-byte time after idle periods");
            let hb = crate::idle::read_hoverboard(path)?;
            let source = relative_to_cwd(path);
            let (fitted, levels, report) =
                crate::idle::fit_idle(&near, &hb, &source).map_err(|detail| {
                    CalibError::InvalidProfile {
                        detail: format!("{source}: {detail}"),
                    }
                })?;
            sources.push(source.clone());
            notes.push(if levels.is_empty() {
                format!(
                    "per-byte time after idle periods from {source}: no sleep time slows the round trip significantly; factor 1 at every idle time"
                )
            } else {
                format!(
                    "per-byte time after idle periods from {source} (factors {}; also applied to far messages)",
                    levels
                        .iter()
                        .map(|(from, f)| format!("x{f:.3} from {} s", from / 1e12))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
            let far = far.map(|f| crate::idle::with_levels(&f, &levels));
            (fitted, far, Some(report))
        }
    };
    // OS noise.
    let (os_noise, os_report) = match &inp.os_noise {
        Some(p) => {
            let (noise, report, n) = os_noise_fit(p, inp)?;
            sources.push(report.source.clone());
            notes.extend(n);
            (noise, Some(report))
        }
        None => {
            notes.push("no OS-noise capture: the profile has no OS noise".into());
            (OsNoise::default(), None)
        }
    };

    // Prices: explicit > table.
    let mut prices = inp.prices.clone();
    let mut price_source = if prices.on_demand_usd_per_node_hour.is_none()
        && prices.committed_usd_per_node_hour.is_none()
    {
        "none given".to_string()
    } else {
        "explicit".to_string()
    };
    if let Some(t) = &inp.prices_table {
        let tp = read_prices_table(&t.path, &t.system, &t.class)?;
        let label = format!(
            "table {}: {} / {}",
            t.path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
            t.system,
            t.class
        );
        if prices.on_demand_usd_per_node_hour.is_none()
            && prices.committed_usd_per_node_hour.is_none()
        {
            price_source = label;
        } else {
            price_source = format!("explicit, then {label}");
        }
        prices.on_demand_usd_per_node_hour = prices
            .on_demand_usd_per_node_hour
            .or(tp.on_demand_usd_per_node_hour);
        prices.committed_usd_per_node_hour = prices
            .committed_usd_per_node_hour
            .or(tp.committed_usd_per_node_hour);
        sources.push(relative_to_cwd(&t.path));
    }
    if prices.on_demand_usd_per_node_hour.is_none() {
        notes.push("on-demand price unknown".into());
    }
    if prices.committed_usd_per_node_hour.is_none() {
        notes.push("committed price unknown".into());
    }
    match (
        prices.spot.usd_per_node_hour,
        prices.spot.interruptions_per_node_hour,
    ) {
        (Some(_), None) => notes.push(
            "spot interruption rate unknown: spot is not priced until a run gives \
             --spot-interruptions or --spot-mtbi"
                .into(),
        ),
        (None, Some(_)) => notes
            .push("spot price unknown: spot is not priced until a run gives --spot-price".into()),
        _ => {}
    }

    // Warnings, prefixed with their capture.
    let mut warnings = Vec::new();
    let mut add = |what: &str, ws: &[String]| {
        warnings.extend(ws.iter().map(|w| format!("{what}: {w}")));
    };
    add("near latency", &near_report.latency.warnings);
    add("near bandwidth", &near_report.bandwidth.warnings);
    if let Some(f) = &far_report {
        if !f.latency.shared_with_near {
            add("far latency", &f.latency.warnings);
        }
        if !f.bandwidth.shared_with_near {
            add("far bandwidth", &f.bandwidth.warnings);
        }
    }
    if let Some((_, _, w)) = &loggp {
        add("LogGP fit", &warning_strings(w));
    }
    if let Some(r) = &os_report {
        add("OS noise", &r.warnings);
    }
    if !warnings.is_empty() {
        notes.push(format!(
            "{} import warning(s), see the fit report",
            warnings.len()
        ));
    }

    let profile = Profile {
        system: inp.system.clone(),
        description: inp.description.clone(),
        near,
        far,
        nodes_per_switch,
        os_noise,
        prices: prices.clone(),
        provenance: Provenance {
            sources,
            command: inp.command.clone(),
            created: inp
                .created
                .clone()
                .unwrap_or_else(|| iso8601_utc(SystemTime::now())),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            notes: notes.clone(),
        },
        calibration: if captures {
            Calibration::Captures
        } else {
            Calibration::PaperTable
        },
        day: inp.day.clone(),
        days: Vec::new(),
        mpi_progress: inp.mpi_progress,
    };
    loggops_profile::validate(&profile).map_err(|e| CalibError::InvalidProfile {
        detail: e.to_string(),
    })?;
    let report = FitReport {
        system: inp.system.clone(),
        description: inp.description.clone(),
        near: near_report,
        far: far_report,
        far_stored_as_near,
        nodes_per_switch,
        nodes_per_switch_source: nps_source,
        loggp: loggp.map(|(source, s, w)| LogGpReport {
            source,
            l_us: s.l_ps / 1e6,
            o_us: s.o_ps / 1e6,
            g_us: s.g_ps / 1e6,
            big_g_ps_per_byte: s.big_g_ps_per_byte,
            o_line: s.o_line,
            gap_line: s.gap_line,
            used_for: loggp_used,
            warnings: warning_strings(&w),
        }),
        os_noise: os_report,
        prices: PricesReport {
            on_demand_usd_per_node_hour: prices.on_demand_usd_per_node_hour,
            committed_usd_per_node_hour: prices.committed_usd_per_node_hour,
            source: price_source,
            spot: (!prices.spot.is_empty()).then(|| SpotReport {
                usd_per_node_hour: prices.spot.usd_per_node_hour,
                interruptions_per_node_hour: prices.spot.interruptions_per_node_hour,
                source: prices.spot.source.clone(),
                date: prices.spot.date.clone(),
            }),
        },
        notes,
        warnings,
        calibration: profile.calibration.as_str().into(),
        closure,
        idle: idle_report,
    };
    Ok((profile, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_scaling() {
        assert_eq!(us_text_to_ps("0.00017"), Some(170.0));
        assert_eq!(us_text_to_ps("8.6e-05"), Some(86.0));
        assert_eq!(us_text_to_ps("4.6e-05"), Some(46.0));
        assert_eq!(us_text_to_ps("0.000105"), Some(105.0));
        assert_eq!(us_text_to_ps("21.7"), Some(21_700_000.0));
        assert_eq!(us_text_to_ps("3.99"), Some(3_990_000.0));
        assert_eq!(us_text_to_ps("0.0"), Some(0.0));
        assert_eq!(us_text_to_ps("x"), None);
        assert_eq!(us_text_to_ps(""), None);
    }

    #[test]
    fn dates() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(0);
        assert_eq!(iso8601_utc(t), "1970-01-01T00:00:00Z");
        // 2000-02-29 12:34:56 UTC = 951827696.
        let t = UNIX_EPOCH + std::time::Duration::from_secs(951_827_696);
        assert_eq!(iso8601_utc(t), "2000-02-29T12:34:56Z");
        // 2024-12-31 23:59:59 UTC = 1735689599.
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_735_689_599);
        assert_eq!(iso8601_utc(t), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn csv_fields() {
        assert_eq!(
            split_csv(r#"a,"b, c",,"d ""e""""#).unwrap(),
            vec!["a", "b, c", "", r#"d "e""#]
        );
        assert!(split_csv(r#"a,"b"#).is_none());
    }

    #[test]
    fn median_pinning() {
        // Even count: the table's 0.5 point becomes the mean of the middle two.
        let s: Vec<f64> = (1..=10).map(f64::from).collect();
        let f = fit(&s, &sorted(&s), &CompressOptions::default()).unwrap();
        assert_eq!(f.table.quantile(0.5), 5.5);
        assert!(f.table.values.windows(2).all(|w| w[0] <= w[1]));
        // Odd count with a point at 0.5 missing.
        let s: Vec<f64> = (1..=7).map(f64::from).collect();
        let f = fit(&s, &sorted(&s), &CompressOptions::default()).unwrap();
        assert_eq!(f.table.quantile(0.5), 4.0);
        assert!(f.table.probs.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn uniforms() {
        let u: Vec<f64> = (0..100_000).map(|i| uniform(MC_SEED, i)).collect();
        assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = u.iter().sum::<f64>() / u.len() as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        assert_eq!(uniform(MC_SEED, 7), uniform(MC_SEED, 7));
        assert_ne!(uniform(MC_SEED, 7), uniform(MC_SEED, 8));
    }

    #[test]
    fn provenance_paths_are_relative_to_the_current_directory() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            relative_to_cwd(Path::new("../shared/x.out")),
            "../shared/x.out"
        );
        assert_eq!(relative_to_cwd(&cwd.join("a/b.out")), "a/b.out");
        assert_eq!(relative_to_cwd(&cwd.join("a/../c.out")), "c.out");
        let up = cwd.parent().unwrap().join("shared/x.out");
        assert_eq!(relative_to_cwd(&up), "../shared/x.out");
        assert_eq!(relative_to_cwd(&cwd), ".");
    }
}
