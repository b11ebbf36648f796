//! loggops-calibrate: importers for Netgauge captures and the statistics of the calibration fit.
//!
//! `loggops-sim calibrate` turns real measurements into a noise profile. This crate reads them:
//!
//! | format ([`Format`]) | tool | reader | result |
//! |---|---|---|---|
//! | `pingpong` | cloud_noise Netgauge fork, `-x one_one -f FILE` | [`read_pingpong`] | [`PingPong`]: RTT/2 samples (µs and ps) after warm-up removal |
//! | `selfish` | `-x noise` (selfish detour), appended runs | [`read_selfish`] | [`SelfishTrace`]: runs, and [`SelfishTrace::stitched`] on one time axis |
//! | `fwq`, `ftq` | `-x noise -e fwq / -e ftq` | [`read_quanta`] | [`QuantumTrace`], [`QuantumTrace::to_detours`] |
//! | `loggp` | `-x loggp` | [`read_loggp`] | [`LogGpFit`], [`LogGpFit::summary`] in ps |
//! | `summary` | `-x one_one -o FILE` (A..Q columns) | [`read_summary`] | [`OneOneSummary`] |
//! | `sysjitter` | `sysjitter --raw` | [`read_sysjitter_raw`] | [`SysjitterTrace`] |
//! | `distrtt` | upstream `-x distrtt` stdout | [`read_distrtt`] | [`DistRtt`] (timer ticks) |
//!
//! Every reader streams its input line by line (multi-GB captures are never loaded whole), reads
//! xz-compressed files transparently (recognised by their magic bytes, not their name), and
//! returns a result with a list of [`Warning`]s (what, how many, which lines) for everything it
//! skipped or found suspicious. Input it cannot trust is a [`CalibError`] naming the file, line,
//! what was expected and what was found. [`detect`] guesses the format from the first lines;
//! [`read_capture`] dispatches on a detected or explicit (`--format`) format.
//!
//! The [`stats`] module has the fit-report statistics: [`stats::quantiles`],
//! [`stats::ks_distance`], [`stats::ks_two_sample`] and [`stats::QuantileTable::compress`].
//!
//! [`build_profile`] turns captures into a noise profile (`loggops_profile::Profile`) and a
//! [`FitReport`]: latency and bandwidth as compact quantile tables that end in the exact largest
//! samples (every sample above the 99.9th percentile, see [`stats::CompressOptions`]), the
//! stitched OS-noise trace and a fitted detour process, base parameters from explicit values, a
//! row of a parameter table
//! ([`read_params_table`], the format of the paper's `loggp_params.csv`) or a LogGP fit, prices
//! ([`read_prices_table`]) and provenance:
//!
//! ```no_run
//! use loggops_calibrate::{build_profile, CalibrateInputs, ParamsTableRow};
//!
//! let mut inp = CalibrateInputs::new("daint", "ng_netnoise_mpi_lat.out.xz", "ng_netnoise_mpi_bw.out.xz");
//! inp.os_noise = Some("ng_osnoise.out.xz".into());
//! inp.params.table = Some(ParamsTableRow {
//!     path: "loggp_params.csv".into(),
//!     provider: "Daint".into(),
//!     instance: "HPC (Metal)".into(),
//!     placement: "Different Racks".into(), // near = Same Rack row, far = Different Racks row
//! });
//! let (profile, report) = build_profile(&inp)?;
//! print!("{}", report.to_text());
//! loggops_profile::write_profile("daint.h5", &profile).expect("written");
//! # Ok::<(), loggops_calibrate::CalibError>(())
//! ```
//!
//! ```no_run
//! use loggops_calibrate::{detect, read_pingpong, Format, PingPongOptions};
//! use loggops_calibrate::stats::QuantileTable;
//!
//! let path = "ng_netnoise_mpi_lat.out.xz";
//! assert_eq!(detect(path)?, Format::PingPong);
//! let lat = read_pingpong(path, &PingPongOptions::latency())?;
//! for w in &lat.warnings {
//!     eprintln!("{}: warning: {w}", lat.source);
//! }
//! println!(
//!     "{} samples of {} B in {} blocks ({} warm-up rows dropped)",
//!     lat.samples_us.len(), lat.size_bytes, lat.blocks, lat.warmup_dropped
//! );
//! let table = QuantileTable::compress(&lat.samples_us, 200, 10).expect("samples");
//! println!("KS distance of the table: {}", table.ks_to_samples(&lat.samples_us));
//! # Ok::<(), loggops_calibrate::CalibError>(())
//! ```

mod build;
pub mod closure;
pub mod deconvolve;
pub mod episodes;
mod error;
mod format;
pub mod idle;
mod input;
mod loggp;
pub mod measured;
mod pingpong;
mod selfish;
pub mod stats;
mod summary;
mod sysjitter;
pub mod units;

use std::path::Path;

pub use build::{
    build_profile, iso8601_utc, monte_carlo_ks, read_params_table,
    read_params_table_placement_pair, read_prices_table, relative_to_cwd, uniform, CalibrateInputs,
    DistReport, Dropped, EpisodeMode, FitReport, LogGpReport, OsNoiseReport, OtherSize,
    ParamOverrides, ParamSource, ParamSources, ParamsReport, ParamsTableRow, PlacementReport,
    PricesReport, PricesTableRow, ProcessReport, Quantiles, SpotReport, StatesReport, StepHook,
    DEFAULT_MAX_TRACE_DETOURS, DEFAULT_MIN_SAMPLES, DIFFERENT_RACKS, MC_DRAWS, MC_SEED,
    OS_LONG_DETOUR_US, OS_LONG_SHARE_WARN, OS_OVERHEAD_WARN_PCT, SAME_RACK,
};
pub use error::{dkw, CalibError, SizeCount, Warning, WarningKind};
pub use format::{detect, detect_reader, Format, UnknownFormatName, SNIFF_LINES};
pub use input::{open_capture, wrap_reader};
pub use loggp::{
    read_loggp, read_loggp_from, GapFit, LatencyStep, LogGpFit, LogGpRow, LogGpSummary,
};
pub use measured::{
    measured_files, read_measured, read_measured_from, BenchmarkName, MeasuredCollective,
    MeasuredError, MeasuredPattern, Variant,
};
pub use pingpong::{
    read_pingpong, read_pingpong_from, PingPong, PingPongKind, PingPongOptions,
    BANDWIDTH_MIN_BYTES, LATENCY_MAX_BYTES, MAX_RTT2_US,
};
pub use selfish::{
    read_quanta, read_quanta_from, read_selfish, read_selfish_from, Detour, Detours, QuantumKind,
    QuantumOptions, QuantumTrace, SelfishRun, SelfishTrace, MAX_DETOUR_NS, MAX_START_NS,
};
pub use summary::{
    read_distrtt, read_summary, read_summary_from, DistRtt, DistRttRow, OneOneSummary, SummaryRow,
    Throughput, TimeStats,
};
pub use sysjitter::{read_sysjitter_raw, SysjitterRow, SysjitterTrace};

/// Any imported capture.
#[derive(Clone, Debug, PartialEq)]
pub enum Capture {
    PingPong(PingPong),
    Selfish(SelfishTrace),
    Quanta(QuantumTrace),
    LogGp(LogGpFit),
    Summary(OneOneSummary),
    Sysjitter(SysjitterTrace),
    DistRtt(DistRtt),
}

impl Capture {
    /// Warnings of the import.
    pub fn warnings(&self) -> &[Warning] {
        match self {
            Capture::PingPong(c) => &c.warnings,
            Capture::Selfish(c) => &c.warnings,
            Capture::Quanta(c) => &c.warnings,
            Capture::LogGp(c) => &c.warnings,
            Capture::Summary(c) => &c.warnings,
            Capture::Sysjitter(c) => &c.warnings,
            Capture::DistRtt(c) => &c.warnings,
        }
    }
}

/// Reads a capture of the given format, or of the detected one when `format` is `None`
/// (`--format auto`). `pingpong` uses `opts`. An explicit format that does not match the content
/// is reported by the reader (e.g. a selfish file read as `pingpong` is a
/// [`CalibError::WrongFormat`]).
pub fn read_capture(
    path: impl AsRef<Path>,
    format: Option<Format>,
    opts: &PingPongOptions,
) -> Result<Capture, CalibError> {
    let path = path.as_ref();
    let format = match format {
        Some(f) => f,
        None => detect(path)?,
    };
    Ok(match format {
        Format::PingPong => Capture::PingPong(read_pingpong(path, opts)?),
        Format::Selfish => Capture::Selfish(read_selfish(path)?),
        Format::Fwq | Format::Ftq => {
            let q = read_quanta(path)?;
            let actual = match q.kind {
                QuantumKind::Fwq => Format::Fwq,
                QuantumKind::Ftq => Format::Ftq,
            };
            if actual != format {
                return Err(CalibError::WrongFormat {
                    path: path.display().to_string(),
                    line: 1,
                    expected: format,
                    actual,
                    found: format!("# Benchmark Method: {}", actual.name()),
                });
            }
            Capture::Quanta(q)
        }
        Format::LogGp => Capture::LogGp(read_loggp(path)?),
        Format::Summary => Capture::Summary(read_summary(path)?),
        Format::SysjitterRaw => Capture::Sysjitter(read_sysjitter_raw(path)?),
        Format::DistRtt => Capture::DistRtt(read_distrtt(path)?),
    })
}
