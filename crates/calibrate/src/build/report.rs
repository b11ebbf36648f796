//! The fit report of `calibrate`: what each table was fitted from, what was dropped, the checks,
//! as text and JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::stats::quantile_sorted;
use crate::units::fmt_bytes;

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

    pub(super) fn of_sorted(s: &[f64]) -> Quantiles {
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

    pub(super) fn values(&self) -> [f64; 10] {
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
    /// The clock the capture read (`None`: its runs do not state it): `resolution_ps`,
    /// `read_ps`.
    #[serde(serialize_with = "clock_json")]
    pub clock: Option<loggops_profile::Clock>,
    pub warnings: Vec<String>,
}

fn clock_json<S: serde::Serializer>(
    c: &Option<loggops_profile::Clock>,
    s: S,
) -> Result<S::Ok, S::Error> {
    c.map(|c| serde_json::json!({"resolution_ps": c.resolution_ps, "read_ps": c.read_ps}))
        .serialize(s)
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
    /// The latency capture's episodes as a state of their own (`--latency-episodes state`);
    /// `closure` then simulates both states against the whole capture.
    pub states: Option<StatesReport>,
}

/// The latency states of a profile whose latency capture has episodes.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StatesReport {
    /// Netgauge runs of the latency capture flagged as episodes, and all its runs.
    pub episode_runs: usize,
    pub runs: usize,
    /// The share of repetitions in the episode state: the episodes' share of the samples.
    pub episode_weight: f64,
    /// Each state's closure against its own runs (and the bandwidth capture).
    pub quiet_closure: Vec<crate::closure::ClosureRow>,
    pub episode_closure: Vec<crate::closure::ClosureRow>,
    /// The episode state's latency parameters and distribution.
    pub episode_l_us: f64,
    pub episode_latency: DistReport,
}

/// A number with about 4 significant digits, no exponent.
pub(super) fn sig(v: f64) -> String {
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

pub(super) fn fmt_opt_price(p: Option<f64>) -> String {
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
        if let Some(st) = &self.states {
            text_states(&mut o, st);
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
                if let Some(c) = n.clock {
                    let _ = writeln!(
                        o,
                        "  clock: steps of {}ns (the loop's shortest iteration), {}ns per read (its mean iteration); validate reads every simulated region on it",
                        sig(c.resolution_ps / 1e3),
                        sig(c.read_ps / 1e3)
                    );
                }
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
                sp.interruptions_per_node_hour.map_or(
                    "interruption rate unknown".into(),
                    |r| format!("{} interruptions per node-hour", loggops_units::fmt_rate(r))
                ),
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

pub(super) fn text_idle(o: &mut String, r: &crate::idle::IdleReport) {
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

pub(super) fn text_closure(o: &mut String, c: &crate::closure::ClosureReport) {
    use crate::closure::{P50_TOLERANCE, TAIL_TOLERANCE};
    let _ = writeln!(
        o,
        "closure: each capture's own ping-pong simulated with this profile (noise mode net, queued model, {} repetitions); targets: p50 within {:.0} %, p95 and p99 within {:.0} %",
        crate::closure::CLOSURE_REPS,
        100.0 * P50_TOLERANCE,
        100.0 * TAIL_TOLERANCE
    );
    text_closure_rows(o, &c.rows);
    let _ = writeln!(
        o,
        "  far tail of the latency capture (not drawn by back-to-back messages; see L): {:.2} % of the samples",
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

pub(super) fn text_states(o: &mut String, st: &StatesReport) {
    let _ = writeln!(
        o,
        "latency states: {} of the latency capture's {} runs are episodes (a heavier tail than independent samples give); a repetition runs in the episode state with their share of the samples, {:.2} %, else in the state of the other runs; the closure above simulates both",
        st.episode_runs,
        st.runs,
        100.0 * st.episode_weight
    );
    let _ = writeln!(o, "  the other runs alone, against their own samples:");
    text_closure_rows(o, &st.quiet_closure);
    let _ = writeln!(
        o,
        "  the episodes alone (L {}us), against their own latency samples (the bandwidth capture was not taken during them):",
        sig(st.episode_l_us)
    );
    text_closure_rows(o, &st.episode_closure[..st.episode_closure.len().min(1)]);
    text_dist(o, "episode", &st.episode_latency);
}

fn text_closure_rows(o: &mut String, rows: &[crate::closure::ClosureRow]) {
    use crate::closure::{BAND_SIGMAS, QUANTILE_NAMES, TOLERANCES};
    let _ = writeln!(
        o,
        "  {:<34} {:>27} {:>27} {:>24}  closes",
        "benchmark", "captured RTT/2 p50/p95/p99", "simulated p50/p95/p99", "error p50/p95/p99"
    );
    for r in rows {
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
            match (r.closes, r.closes_by_band) {
                (true, false) => "yes",
                (true, true) => "yes*",
                _ => "NO",
            }
        );
    }
    for r in rows.iter().filter(|r| r.closes_by_band) {
        let spans: Vec<String> = (0..3)
            .filter(|&i| r.error[i].abs() > TOLERANCES[i])
            .map(|i| {
                let [lo, hi] = r.captured_band_us[i];
                format!("{} {}-{}us", QUANTILE_NAMES[i], sig(lo), sig(hi))
            })
            .collect();
        let _ = writeln!(
            o,
            "  * {}: a quantile lies on a gap or a step of the capture, where the simulation's sampling error ({} standard errors of its probability) spans {}; the simulated value is within the tolerance of that span",
            r.benchmark,
            BAND_SIGMAS,
            spans.join(", ")
        );
    }
}

pub(super) fn text_placement(o: &mut String, name: &str, p: &PlacementReport) {
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

pub(super) fn text_dist(o: &mut String, placement: &str, d: &DistReport) {
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
pub(super) fn tail_text(k: usize, from: f64, range: Option<String>) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::closure::ClosureRow;

    /// A row that closes only on its band is marked and footnoted with the span of the
    /// quantile that misses strictly (AWS's second half: p99 −59.6 %), not the others.
    #[test]
    fn a_row_closed_by_its_band_is_marked_with_its_span() {
        let row = |closes_by_band| ClosureRow {
            benchmark: "1 B ping-pong".into(),
            size_bytes: 1,
            stripes: 1,
            captured_us: [19.05, 20.56, 80.33],
            simulated_us: [19.05, 20.53, 32.42],
            error: [0.0, -0.001, -0.596],
            captured_band_us: [[19.0, 19.1], [20.5, 20.6], [24.22, 83.12]],
            closes: true,
            closes_by_band,
        };
        let mut o = String::new();
        text_closure_rows(&mut o, &[row(true)]);
        assert!(o.contains("-59.6%  yes*\n"), "{o}");
        assert!(
            o.contains("  * 1 B ping-pong: a quantile lies on a gap"),
            "{o}"
        );
        assert!(o.contains("spans p99 24.22-83.12us;"), "{o}");
        assert!(!o.contains("p50 19"), "{o}");
        let mut o = String::new();
        text_closure_rows(&mut o, &[row(false)]);
        assert!(o.contains("-59.6%  yes\n") && !o.contains('*'), "{o}");
    }
}
