//! Fitting: captures into quantile tables with their checks, the placements from captures or a
//! parameter table, the OS noise from a detour trace, and the small helpers they share.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use loggops_profile::{
    BaseParams, DetourProcess, DetourTrace, Distribution, ExactTail, OsNoise, Placement,
};

use crate::error::{CalibError, Warning, WarningKind};
use crate::format::{detect, Format};
use crate::loggp::LogGpSummary;
use crate::pingpong::{read_pingpong, PingPong, PingPongKind, PingPongOptions};
use crate::selfish::{read_quanta, read_selfish, Detours, QuantumOptions};
use crate::stats::{ks_two_sample, quantile_sorted, sorted, CompressOptions, QuantileTable};
use crate::units::{fmt_bytes, fmt_us};

use super::*;

/// SplitMix64 finaliser.
pub(super) fn splitmix64(mut z: u64) -> u64 {
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
pub(super) fn pin_median(t: &mut QuantileTable, median: f64) {
    let k = t.probs.partition_point(|&p| p < 0.5);
    if k < t.probs.len() && t.probs[k] == 0.5 {
        t.values[k] = median;
    } else {
        t.probs.insert(k, 0.5);
        t.values.insert(k, median);
    }
}

pub(super) fn median_sorted(s: &[f64]) -> f64 {
    quantile_sorted(s, 0.5)
}

/// A quantile table of the samples with its median pinned, and the table's KS distances.
pub(super) struct Fitted {
    pub(super) table: QuantileTable,
    pub(super) ks_exact: f64,
    pub(super) ks_mc: f64,
}

pub(super) fn fit(
    samples: &[f64],
    sorted_samples: &[f64],
    opts: &CompressOptions,
) -> Option<Fitted> {
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

pub(super) fn to_dist(t: QuantileTable) -> Distribution {
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
    pub(super) fn norm(q: &Path) -> Vec<Component<'_>> {
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
pub(super) struct CaptureFit {
    pub(super) dist: Distribution,
    pub(super) report: DistReport,
    pub(super) size: u64,
    /// The kept RTT/2 samples, ps, sorted (what the closure reproduces).
    pub(super) rtt2_ps: Vec<f64>,
    /// The same samples by block (Netgauge run), in capture order.
    pub(super) runs_ps: Vec<Vec<f64>>,
    /// A latency capture's episodes in a line of the profile's notes (`None`: not episodic).
    pub(super) episodes: Option<String>,
    /// Every run's RTT/2 samples, ps, sorted (the capture as read, episodes included).
    pub(super) all_rtt2_ps: Vec<f64>,
    /// The episodes found: (runs flagged, runs); `None`: not episodic.
    pub(super) episode_runs: Option<(usize, usize)>,
}

pub(super) fn warning_strings(ws: &[Warning]) -> Vec<String> {
    ws.iter().map(|w| w.to_string()).collect()
}

pub(super) fn capture_fit(
    path: &Path,
    kind: PingPongKind,
    size: Option<u64>,
    inp: &CalibrateInputs,
    runs: Runs,
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
    let all_rtt2_ps = sorted(&pp.samples_ps.iter().map(|&p| p as f64).collect::<Vec<_>>());
    let mode = match runs {
        Runs::All => EpisodeMode::Keep,
        Runs::Quiet if inp.episode_mode() == EpisodeMode::State => EpisodeMode::State,
        Runs::Quiet => EpisodeMode::Separate,
        Runs::Episodes => EpisodeMode::State,
    };
    let (pp, episodes, episodes_note, episode_runs) = latency_episodes(pp, kind, runs, mode);
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
    warnings.extend(episodes);
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
        runs_ps: runs_f64(&pp).into_iter().map(|(_, r)| r).collect(),
        episodes: episodes_note,
        all_rtt2_ps,
        episode_runs,
    })
}

/// The capture's non-empty runs as floats, with their block indices.
fn runs_f64(pp: &PingPong) -> Vec<(usize, Vec<f64>)> {
    pp.runs()
        .into_iter()
        .map(|(i, r)| (i, r.iter().map(|&p| p as f64).collect()))
        .collect()
}

/// A latency capture's episodes ([`crate::episodes`]): the capture's `runs` (all of them when
/// it is not episodic, except that [`Runs::Episodes`] then keeps none), what the fit report
/// says of them under `mode`, the profile's note, and (flagged runs, runs).
#[allow(clippy::type_complexity)]
fn latency_episodes(
    pp: PingPong,
    kind: PingPongKind,
    runs: Runs,
    mode: EpisodeMode,
) -> (
    PingPong,
    Option<String>,
    Option<String>,
    Option<(usize, usize)>,
) {
    if kind == PingPongKind::Bandwidth {
        return (pp, None, None, None);
    }
    let found_runs = runs_f64(&pp);
    let e = crate::episodes::detect(
        &found_runs
            .iter()
            .map(|(_, r)| r.as_slice())
            .collect::<Vec<_>>(),
    );
    if !e.episodic() {
        let pp = match runs {
            Runs::Episodes => pp.without_blocks(&(0..pp.blocks).collect::<Vec<_>>()),
            Runs::All | Runs::Quiet => pp,
        };
        return (pp, None, None, None);
    }
    let profile_note = format!(
        "latency episodes: {} of the latency capture's {} runs hold {:.0} % of its samples \
         above its p99; {} (calibrate --latency-episodes)",
        e.flagged.len(),
        e.runs,
        100.0 * e.tail_share(),
        match mode {
            EpisodeMode::Separate => "left out of the latency distributions",
            EpisodeMode::Keep => "pooled with the other runs",
            EpisodeMode::State =>
                "a state of their own: a repetition runs inside an episode (their share of the \
                 samples) or outside",
        }
    );
    let found = format!(
        "{} of {} Netgauge runs hold {:.0} % of the samples above the capture's p99 ({}): at \
         least {} each, where a run of independent samples holds about {:.0} (binomial test, \
         {} % over all runs; the other runs hold at most {})",
        e.flagged.len(),
        e.runs,
        100.0 * e.tail_share(),
        fmt_us(e.threshold / 1e6),
        e.min_flagged.unwrap_or(0),
        e.expected_per_run(),
        100.0 * crate::episodes::ALPHA,
        e.max_unflagged,
    );
    let flagged: Vec<usize> = e.flagged.iter().map(|&i| found_runs[i].0).collect();
    let counts = Some((e.flagged.len(), e.runs));
    let note = match mode {
        EpisodeMode::Separate => format!(
            "episodes left out: {found}; the profile draws the latencies of the other {} runs, \
             and its closure reproduces them (--latency-episodes keep pools every run, state \
             holds them as a state of their own)",
            e.runs - e.flagged.len()
        ),
        EpisodeMode::State => format!(
            "the tail comes in episodes: {found}; they are a state of their own (a repetition \
             runs wholly inside an episode, with their share of the samples, or outside), \
             since a real run of a collective lasts well under a second and mostly falls \
             between such stretches (VALIDATION.md, \"Latency episodes\"); the closure table \
             simulates both states together against the whole capture"
        ),
        EpisodeMode::Keep => format!(
            "the tail comes in episodes: {found}; drawn for every message it reaches every \
             simulated collective, while a real run of one lasts well under a second and mostly \
             falls between such stretches (VALIDATION.md, \"Latency episodes\"): \
             --latency-episodes state holds those runs as a state of their own"
        ),
    };
    let pp = match runs {
        Runs::All => pp,
        Runs::Quiet => pp.without_blocks(&flagged),
        Runs::Episodes => {
            let drop: Vec<usize> = (0..pp.blocks).filter(|b| !flagged.contains(b)).collect();
            pp.without_blocks(&drop)
        }
    };
    (pp, Some(note), Some(profile_note), counts)
}

/// The bandwidth report, its time-correlation warning saying what the levels model.
fn with_levels_note(r: &DistReport, levels: bool) -> DistReport {
    let mut r = r.clone();
    if levels {
        for w in &mut r.warnings {
            if w.starts_with("consecutive samples are correlated in time") {
                if let Some(i) = w.find(": the simulator draws every message independently") {
                    w.truncate(i);
                    w.push_str(": the profile keeps the runs' bandwidth levels (one per simulated repetition); correlation within a run beyond its level is not modelled");
                }
            }
        }
    }
    r
}

pub(super) fn dropped_of(pp: &PingPong, opts: &PingPongOptions) -> Dropped {
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
pub(super) struct Partial {
    pub(super) l: Option<(f64, String)>,
    pub(super) o: Option<(f64, String)>,
    pub(super) g: Option<(f64, String)>,
    pub(super) big_g: Option<(f64, String)>,
    pub(super) big_o: Option<(f64, String)>,
    pub(super) s: Option<(u64, String)>,
}

impl Partial {
    pub(super) fn from_params(p: &BaseParams, src: &str) -> Partial {
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
    pub(super) fn from_table(p: &BaseParams, src: &str) -> Partial {
        let mut t = Partial::from_params(p, src);
        t.big_o = Some((0.0, format!("{src}: no O column, 0 as the paper's -O 0")));
        t
    }

    /// Fills every unknown parameter from `other`.
    pub(super) fn or(self, other: Partial) -> Partial {
        Partial {
            l: self.l.or(other.l),
            o: self.o.or(other.o),
            g: self.g.or(other.g),
            big_g: self.big_g.or(other.big_g),
            big_o: self.big_o.or(other.big_o),
            s: self.s.or(other.s),
        }
    }

    pub(super) fn explicit(e: &ParamOverrides, src: &str) -> Partial {
        Partial {
            l: e.l_ps.map(|v| (v, src.into())),
            o: e.o_ps.map(|v| (v, src.into())),
            g: e.g_ps.map(|v| (v, src.into())),
            big_g: e.big_g_ps_per_byte.map(|v| (v, src.into())),
            big_o: e.big_o_ps_per_byte.map(|v| (v, src.into())),
            s: e.s_bytes.map(|v| (v, src.into())),
        }
    }

    pub(super) fn finish(self, placement: &str) -> Result<(BaseParams, ParamSources), CalibError> {
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
            // A LogGP fit provides L, o, g and G, never S: suggested only for what it gives.
            let only_s = missing.len() == 1 && self.s.is_none();
            let hint = if only_s {
                "give --set-S SIZE (the MPI's eager threshold), or choose a row of a parameter table (the format of the paper's loggp_params.csv)"
            } else {
                "give them explicitly, choose a row of a parameter table (the format of the paper's loggp_params.csv), or give a Netgauge LogGP fit (which provides L, o, g and G but not S)"
            };
            return Err(CalibError::MissingParams {
                missing,
                hint: hint.into(),
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

pub(super) fn params_report(p: &BaseParams, sources: ParamSources) -> ParamsReport {
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
pub(super) struct TableParams {
    pub(super) near: BaseParams,
    pub(super) far: Option<BaseParams>,
    pub(super) nps: u32,
    pub(super) near_label: String,
    pub(super) far_label: Option<String>,
}

pub(super) fn table_params(t: &ParamsTableRow) -> Result<TableParams, CalibError> {
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

pub(super) fn loggp_partial(s: &LogGpSummary, file: &str) -> Partial {
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
pub(super) struct Placements {
    pub(super) near: Placement,
    pub(super) near_report: PlacementReport,
    pub(super) far: Option<Placement>,
    pub(super) far_report: Option<PlacementReport>,
    /// The far placement equals the near one and is stored as near only.
    pub(super) far_stored_as_near: bool,
    pub(super) nodes_per_switch: u32,
    /// Where `nodes_per_switch` came from.
    pub(super) nps_source: String,
    /// The LogGP fit's parameters used.
    pub(super) loggp_used: Vec<String>,
    /// The closure table (captures calibration only).
    pub(super) closure: Option<crate::closure::ClosureReport>,
}

/// The captures calibration (no parameter table): one placement per pair of captures, closed
/// against them ([`crate::closure`]); a far placement only from far captures of its own.
pub(super) fn captures_placements(
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
            bandwidth_runs: if inp.bandwidth_levels {
                &bw.runs_ps
            } else {
                &[]
            },
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
            bandwidth: with_levels_note(&bw.report, c.placement.bandwidth_levels.is_some()),
        }
    };
    let near = one(lat, bw, "near")?;
    let near_report = report_of(&near, lat, bw);
    let (far, far_report) = match (&inp.far_latency, &inp.far_bandwidth) {
        (Some(fl), Some(fb)) => {
            let flat = capture_fit(
                fl,
                PingPongKind::Latency,
                inp.latency_size,
                inp,
                inp.far_runs(),
            )?;
            let fbw = capture_fit(
                fb,
                PingPongKind::Bandwidth,
                inp.bandwidth_size,
                inp,
                Runs::All,
            )?;
            sources.push(flat.report.source.clone());
            sources.push(fbw.report.source.clone());
            notes.extend(flat.episodes.iter().map(|n| format!("far: {n}")));
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
    let idle = format!(
        "messages sent after {} us of idleness draw the captured latency, others the back-to-back one (the fit report's L)",
        crate::closure::CAPTURE_IDLE_PS / 1e6
    );
    notes.push(if closure.closes() {
        format!("captures calibration: simulating the captures' own ping-pongs with this profile reproduces them (every row of the closure table closes); {idle}")
    } else {
        format!(
            "captures calibration: simulating the captures' own ping-pongs with this profile does NOT reproduce them ({}: see the closure table and its notes); {idle}",
            closure.misses()
        )
    });
    Ok(Placements {
        near: near.placement,
        near_report,
        far: far.map(|f| f.placement),
        far_report,
        far_stored_as_near: false,
        nodes_per_switch: nps.0,
        nps_source: nps.1,
        loggp_used: vec!["o".into(), "g".into()],
        closure: Some(closure),
    })
}

/// See [`clock_of`]: the captures' mean iterations are 0.1 to 1.3 shortest ones.
const MAX_READ_PER_STEP: f64 = 10.0;

/// The clock the selfish loop read (it does nothing else): its resolution, the loop's shortest
/// iteration (`# Minimal cycle length [ns]:`), and the cost of a read, its mean iteration
/// (`# Measurement period:` over `# Number of iterations`), each the median over the runs that
/// state both plausibly (a mean iteration at most [`MAX_READ_PER_STEP`] shortest ones: the
/// loop's iterations are alike but for detours, below 1 % of the time in every capture). `None`
/// when no run does.
fn clock_of(runs: &[crate::selfish::SelfishRun]) -> Option<loggops_profile::Clock> {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[(v.len() - 1) / 2]
    };
    let (res, read): (Vec<f64>, Vec<f64>) = runs
        .iter()
        .filter_map(|r| {
            let t = r.t_min_ns?;
            let read = r.period_s? * 1e9 / r.iterations? as f64;
            (t.is_finite() && t >= 0.0 && read.is_finite() && read >= 0.0)
                .then_some((t * 1e3, read * 1e3))
                .filter(|(t, read)| *read <= MAX_READ_PER_STEP * t.max(1.0))
        })
        .unzip();
    if res.is_empty() {
        return None;
    }
    Some(loggops_profile::Clock {
        resolution_ps: median(res),
        read_ps: median(read),
    })
}

/// The OS-noise part: profile data and report.
pub(super) fn os_noise_fit(
    path: &Path,
    inp: &CalibrateInputs,
) -> Result<(OsNoise, OsNoiseReport, Vec<String>), CalibError> {
    inp.step(&format!(
        "reading and fitting the OS-noise capture {}",
        relative_to_cwd(path)
    ));
    let format = detect(path).unwrap_or(Format::Selfish);
    let (detours, runs, skipped, mut warnings, format, clock): (
        Detours,
        usize,
        u64,
        Vec<Warning>,
        Format,
        Option<loggops_profile::Clock>,
    ) = match format {
        Format::Fwq | Format::Ftq => {
            let q = read_quanta(path)?;
            let d = q.to_detours(&QuantumOptions::default())?;
            (d, 1, 0, q.warnings, format, None)
        }
        _ => {
            let t = read_selfish(path)?;
            (
                t.stitched(),
                t.runs.len(),
                t.skipped,
                t.warnings,
                Format::Selfish,
                clock_of(&t.runs),
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
        clock,
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
