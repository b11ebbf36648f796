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
//! * **OS noise**: the stitched trace (all runs on one time axis) as one [`DetourTrace`](loggops_profile::DetourTrace), cut to
//!   at most [`CalibrateInputs::max_trace_detours`] detours, and a fitted [`DetourProcess`](loggops_profile::DetourProcess) (rate =
//!   detours / stitched period over the whole trace, durations as a quantile table).
//! * **provenance**: source paths relative to the current directory (never absolute, see
//!   [`relative_to_cwd`]), the command, the UTC date, the tool version, notes.

use std::path::PathBuf;
use std::time::SystemTime;

use loggops_profile::{Calibration, OsNoise, Placement, Prices, Profile, Provenance};

use crate::error::CalibError;
use crate::loggp::read_loggp;
use crate::pingpong::{PingPongKind, PingPongOptions};
use crate::stats::CompressOptions;

mod fit;
mod report;
mod states;
mod tables;

pub use fit::*;
pub use report::*;
pub use tables::*;

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
    /// Fit bandwidth levels when the bandwidth capture's runs differ by more than their
    /// samples explain ([`crate::closure`], "Bandwidth levels"; default true).
    pub bandwidth_levels: bool,
    /// What to do with a latency capture's episodes: the runs that hold far more of its tail
    /// than independent samples would ([`crate::episodes`]); `None`: [`EpisodeMode::State`]
    /// with [`Calibration::Captures`], [`EpisodeMode::Keep`] with the paper's table
    /// ([`CalibrateInputs::episode_mode`]).
    pub latency_episodes: Option<EpisodeMode>,
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

/// What `calibrate` does with a latency capture's episodes ([`crate::episodes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpisodeMode {
    /// Pool every run: each message may draw the episodes' latencies.
    Keep,
    /// Leave the episodes' runs out.
    Separate,
    /// The other runs make the profile; the episodes' runs make a state of their own (a
    /// weighted day marked as an episode, their share of the samples), so that a repetition
    /// runs wholly inside an episode or outside, and the states together reproduce the whole
    /// capture.
    State,
}

/// Which runs of the near latency capture a build uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Runs {
    All,
    /// Without the episodes (all of them when the capture is not episodic).
    Quiet,
    /// Only the episodes.
    Episodes,
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
    /// What is done with a latency capture's episodes (see [`Self::latency_episodes`]).
    pub fn episode_mode(&self) -> EpisodeMode {
        self.latency_episodes.unwrap_or(match self.calibration {
            Calibration::Captures => EpisodeMode::State,
            Calibration::PaperTable => EpisodeMode::Keep,
        })
    }

    /// The runs of a far latency capture (a state of its own only for the near one).
    pub(super) fn far_runs(&self) -> Runs {
        match self.episode_mode() {
            EpisodeMode::Separate => Runs::Quiet,
            EpisodeMode::Keep | EpisodeMode::State => Runs::All,
        }
    }

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
            bandwidth_levels: true,
            latency_episodes: None,
            calibration: Calibration::PaperTable,
            day: String::new(),
            idle_latency: None,
        }
    }
}

/// How far the profile's back-to-back round trip may lie from the idle capture's before
/// calibrate warns (the closure's tail tolerance).
const IDLE_BASELINE_TOLERANCE: f64 = 0.10;

/// How far a parameter may lie from what the capture beside it shows before calibrate warns:
/// a value given in µs without its unit is read as ns, 1000× too small.
const SCALE_MISMATCH: f64 = 100.0;

/// Warnings for an L or G more than [`SCALE_MISMATCH`] times away from the latency capture's
/// median RTT/2 resp. the bandwidth capture's median per-byte time.
fn scale_mismatches(
    p: &loggops_profile::BaseParams,
    lat: &fit::CaptureFit,
    bw: &fit::CaptureFit,
) -> Vec<String> {
    let median = |v: &[f64]| v.get(v.len() / 2).copied().unwrap_or(0.0);
    let per_byte = median(&bw.rtt2_ps) / bw.size.max(1) as f64;
    let mut out = Vec::new();
    let time = |v: f64| loggops_units::fmt_time_ps_f64(v);
    let per_byte_text = |v: f64| format!("{v:.4}ps/byte");
    type Fmt<'a> = &'a dyn Fn(f64) -> String;
    for (name, value, captured, what, show, example) in [
        (
            "L",
            p.l_ps,
            median(&lat.rtt2_ps),
            "the latency capture's median RTT/2",
            &time as Fmt,
            "1.3us",
        ),
        (
            "G",
            p.big_g_ps_per_byte,
            per_byte,
            "the bandwidth capture's median time per byte",
            &per_byte_text as Fmt,
            "86ps",
        ),
    ] {
        if value <= 0.0 || captured <= 0.0 {
            continue;
        }
        let ratio = captured / value;
        if !(1.0 / SCALE_MISMATCH..=SCALE_MISMATCH).contains(&ratio) {
            out.push(format!(
                "{name} = {} is {} {what} ({}); a number without a unit is read as ns: check its unit (e.g. --set-{name} {example})",
                show(value),
                if ratio > 1.0 {
                    format!("1/{ratio:.0} of")
                } else {
                    format!("{:.0}x", 1.0 / ratio)
                },
                show(captured),
            ));
        }
    }
    out
}

/// Builds a noise profile and its fit report from captures and parameters (see the module
/// documentation). Nothing is written; store the profile with `loggops_profile::write_profile`.
pub fn build_profile(inp: &CalibrateInputs) -> Result<(Profile, FitReport), CalibError> {
    match inp.episode_mode() {
        EpisodeMode::Keep => build_with(inp, Runs::All).map(|(p, r, _)| (p, r)),
        EpisodeMode::Separate => build_with(inp, Runs::Quiet).map(|(p, r, _)| (p, r)),
        EpisodeMode::State => states::build_states(inp),
    }
}

/// What [`build_with`] read besides the profile: what the latency states need.
pub(super) struct Captured {
    /// The near latency capture's episodes: (runs flagged, runs); `None`: not episodic.
    episode_runs: Option<(usize, usize)>,
    /// Its RTT/2 samples: every run's and the ones used, ps, sorted; its message size.
    latency_all_ps: Vec<f64>,
    latency_used: usize,
    latency_size: u64,
    /// The bandwidth capture's RTT/2 samples, ps, sorted, and its message size.
    bandwidth_ps: Vec<f64>,
    bandwidth_size: u64,
}

/// [`build_profile`] from the near latency capture's `runs`.
pub(super) fn build_with(
    inp: &CalibrateInputs,
    runs: Runs,
) -> Result<(Profile, FitReport, Captured), CalibError> {
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
    let near_lat = capture_fit(
        &inp.latency,
        PingPongKind::Latency,
        inp.latency_size,
        inp,
        runs,
    )?;
    let near_bw = capture_fit(
        &inp.bandwidth,
        PingPongKind::Bandwidth,
        inp.bandwidth_size,
        inp,
        Runs::All,
    )?;
    sources.push(near_lat.report.source.clone());
    sources.push(near_bw.report.source.clone());
    notes.extend(near_lat.episodes.clone());
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
    // Parameters that do not fit the captures beside them (a value in µs given without a
    // unit, read as ns), in the fit report's warnings.
    let mut param_warnings: Vec<String> = Vec::new();
    let Placements {
        near,
        near_report,
        far,
        far_report,
        far_stored_as_near,
        nodes_per_switch,
        nps_source,
        loggp_used,
        closure,
    } = if captures {
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
        param_warnings.extend(scale_mismatches(&near_params, &near_lat, &near_bw));
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
            latency: Some(near_lat.dist.clone()),
            bandwidth: Some(near_bw.dist.clone()),
            ..Placement::new(near_params.clone(), near_bw.size)
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
                        let f = capture_fit(
                            p,
                            PingPongKind::Latency,
                            inp.latency_size,
                            inp,
                            inp.far_runs(),
                        )?;
                        sources.push(f.report.source.clone());
                        notes.extend(f.episodes.iter().map(|n| format!("far: {n}")));
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
                        let f = capture_fit(
                            p,
                            PingPongKind::Bandwidth,
                            inp.bandwidth_size,
                            inp,
                            Runs::All,
                        )?;
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
                    latency: Some(lat.0),
                    bandwidth: Some(bw.0),
                    ..Placement::new(far_params.clone(), bw.2)
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

        Placements {
            near,
            near_report,
            far,
            far_report,
            far_stored_as_near,
            nodes_per_switch,
            nps_source,
            loggp_used,
            closure: None,
        }
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
    add("parameters", &param_warnings);
    if let Some(r) = &idle_report {
        let (cap, sim) = (r.back_to_back_rtt_us, r.simulated_back_to_back_rtt_us);
        if cap > 0.0 && ((sim - cap) / cap).abs() > IDLE_BASELINE_TOLERANCE {
            add(
                "after idle",
                &[format!(
                    "the profile's back-to-back {} B round trip ({sim:.1}us) is {:+.0} % off the idle capture's ({cap:.1}us); the idle table holds ratios to it, so times after idle periods are off as much (another size or striping than the bandwidth capture's?)",
                    r.size_bytes,
                    100.0 * (sim - cap) / cap
                )],
            );
        }
    }
    if let (Some(od), Some(c)) = (
        prices.on_demand_usd_per_node_hour,
        prices.committed_usd_per_node_hour,
    ) {
        if c > od {
            add(
                "prices",
                &[format!(
                    "the committed price ({c} USD/node-hour) is above the on-demand one ({od}): a commitment buys a discount; were they swapped?"
                )],
            );
        }
    }
    if captures && inp.loggp.is_none() {
        let e = &inp.params.explicit;
        let guessed: Vec<&str> = [
            (
                e.o_ps.is_none(),
                "o is a guess (a quarter of the latency capture's 1st percentile of RTT/2)",
            ),
            (
                e.g_ps.is_none(),
                "g is 0 (back-to-back messages leave the NIC without a gap)",
            ),
        ]
        .into_iter()
        .filter_map(|(missing, what)| missing.then_some(what))
        .collect();
        if !guessed.is_empty() {
            add(
                "parameters",
                &[format!(
                    "no LogGP fit (--loggp): {}; give Netgauge's ng_loggp.out with --loggp, or --set-o and --set-g",
                    guessed.join(", ")
                )],
            );
        }
    }
    if let Some(fit) = loggp_fit.as_ref().filter(|_| captures) {
        let s_bytes = near.params.s_bytes;
        if inp.params.explicit.g_ps.is_none() && fit.eager_gap(s_bytes).is_none() {
            let sizes: Vec<String> = fit
                .rows_by_size()
                .iter()
                .filter(|r| r.size_bytes <= s_bytes)
                .map(|r| format!("{} B", r.size_bytes))
                .collect();
            add(
                "parameters",
                &[format!(
                    "g is 0 (back-to-back messages leave the NIC without a gap): the LogGP fit has {} at or below S = {s_bytes} B ({}), and its gap needs two eager sizes; give --set-g, or a LogGP run whose sizes step below S (Netgauge's sizes are 1, 1025, 2049, ... B)",
                    match sizes.len() {
                        0 => "no size",
                        1 => "one size",
                        _ => "sizes without a fitted gap",
                    },
                    if sizes.is_empty() { "none".to_string() } else { sizes.join(", ") }
                )],
            );
        }
    }
    if let Some(c) = closure.as_ref().filter(|c| !c.closes()) {
        add(
            "closure",
            &[format!(
                "the profile does not reproduce its own captures ({}); predictions inherit the miss",
                c.misses()
            )],
        );
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
        clock: os_report.as_ref().and_then(|r| r.clock),
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
        states: None,
    };
    let captured = Captured {
        episode_runs: near_lat.episode_runs,
        latency_all_ps: near_lat.all_rtt2_ps,
        latency_used: near_lat.rtt2_ps.len(),
        latency_size: near_lat.size,
        bandwidth_ps: near_bw.rtt2_ps,
        bandwidth_size: near_bw.size,
    };
    Ok((profile, report, captured))
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::UNIX_EPOCH;

    use super::*;
    use crate::stats::sorted;

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
