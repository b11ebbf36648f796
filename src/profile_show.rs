//! `loggops-sim profile show FILE.h5`: what a noise profile holds, for people. Parameters near
//! and far, quantiles of every distribution (as stored: the noise model scales latency and G
//! draws so that their median is the base L resp. G unless `--absolute-latency`), the OS-noise
//! summary, prices, provenance and the file's SHA-256; `--plot` draws the distributions' CDFs.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, Result};
use loggops_profile::{BaseParams, DetourTrace, Distribution, Placement, Profile};
use loggops_report::fmt::{fmt_per_byte, fmt_price};
use loggops_report::plot::{AxisUnit, Curve, CurvePanel};
use loggops_units::{fmt_time_ps_f64, format_size};

use crate::cli::ProfileShowArgs;

/// The probabilities printed for every distribution.
pub(crate) const PROBS: [(f64, &str); 10] = [
    (0.0, "min"),
    (0.01, "p1"),
    (0.05, "p5"),
    (0.25, "p25"),
    (0.5, "p50"),
    (0.75, "p75"),
    (0.95, "p95"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (1.0, "max"),
];

/// The `p` quantile of a stored distribution: numpy's linear rule for raw samples; for a
/// quantile table the inverse CDF the sampler draws from (linear between table points, the
/// exact tail's samples as point masses of 1/N each).
pub fn quantile(d: &Distribution, p: f64) -> f64 {
    match d {
        Distribution::Samples(s) => {
            let mut v: Vec<f64> = s.clone();
            v.sort_by(f64::total_cmp);
            if v.is_empty() {
                return f64::NAN;
            }
            let h = (v.len() - 1) as f64 * p;
            let i = h.floor() as usize;
            let f = h - i as f64;
            if i + 1 >= v.len() {
                v[v.len() - 1]
            } else {
                v[i] + f * (v[i + 1] - v[i])
            }
        }
        Distribution::Quantiles {
            probs,
            values,
            tail,
        } => {
            let body_end = *probs.last().unwrap_or(&1.0);
            if let Some(t) = tail {
                if p > body_end {
                    let n = t.sample_count as f64;
                    let k = (((p - body_end) * n).ceil() as usize).clamp(1, t.values.len());
                    return t.values[k - 1];
                }
            }
            let j = probs.partition_point(|&q| q < p);
            if j == 0 {
                return values[0];
            }
            if j >= probs.len() {
                return values[values.len() - 1];
            }
            let (p0, p1) = (probs[j - 1], probs[j]);
            let (v0, v1) = (values[j - 1], values[j]);
            if p1 <= p0 {
                v1
            } else {
                v0 + (p - p0) / (p1 - p0) * (v1 - v0)
            }
        }
    }
}

/// `(value, cumulative probability)` points of a stored distribution, for a CDF plot.
fn cdf_points(d: &Distribution) -> Vec<(f64, f64)> {
    match d {
        Distribution::Samples(s) => {
            let mut v = s.clone();
            v.sort_by(f64::total_cmp);
            let n = v.len() as f64;
            // At most about 2000 points: the ECDF at evenly spaced ranks.
            let step = (v.len() / 2000).max(1);
            let mut pts: Vec<(f64, f64)> = v
                .iter()
                .enumerate()
                .step_by(step)
                .map(|(i, &x)| (x, (i + 1) as f64 / n))
                .collect();
            if let Some(&last) = v.last() {
                pts.push((last, 1.0));
            }
            pts
        }
        Distribution::Quantiles {
            probs,
            values,
            tail,
        } => {
            let mut pts: Vec<(f64, f64)> =
                values.iter().copied().zip(probs.iter().copied()).collect();
            if let Some(t) = tail {
                let mut p = *probs.last().unwrap_or(&1.0);
                let step = 1.0 / t.sample_count as f64;
                for &v in &t.values {
                    pts.push((v, p));
                    p += step;
                    pts.push((v, p.min(1.0)));
                }
            }
            pts
        }
    }
}

pub(crate) fn describe_kind(d: &Distribution) -> String {
    match d {
        Distribution::Samples(s) => format!("{} raw samples", s.len()),
        Distribution::Quantiles { probs, tail, .. } => match tail {
            Some(t) => format!(
                "quantile table of {} points + the {} largest of {} samples exactly",
                probs.len(),
                t.values.len(),
                t.sample_count
            ),
            None => format!("quantile table of {} points", probs.len()),
        },
    }
}

fn quantile_line(d: &Distribution, fmt: &dyn Fn(f64) -> String) -> String {
    PROBS
        .iter()
        .map(|&(p, name)| format!("{name} {}", fmt(quantile(d, p))))
        .collect::<Vec<_>>()
        .join("  ")
}

fn time(v: f64) -> String {
    fmt_time_ps_f64(v)
}

fn per_byte(v: f64) -> String {
    fmt_per_byte(v)
}

fn params_line(b: &BaseParams) -> String {
    format!(
        "L {}, o {}, g {}, G {}, O {}, S {}",
        time(b.l_ps),
        time(b.o_ps),
        time(b.g_ps),
        per_byte(b.big_g_ps_per_byte),
        per_byte(b.big_o_ps_per_byte),
        format_size(b.s_bytes)
    )
}

/// How a distribution's values are written.
type Fmt = dyn Fn(f64) -> String;

fn placement(out: &mut String, name: &str, pl: &Placement, near: Option<&Placement>) {
    let _ = writeln!(out, "{name} parameters: {}", params_line(&pl.params));
    let dists: [(&str, &Option<Distribution>, &Fmt); 4] = [
        ("latency (one way)", &pl.latency, &time),
        ("per-byte time (G)", &pl.bandwidth, &per_byte),
        ("overhead (o)", &pl.overhead, &time),
        ("gap (g)", &pl.gap, &time),
    ];
    let same_as_near = |what: &str| -> bool {
        let Some(n) = near else { return false };
        match what {
            "latency (one way)" => n.latency == pl.latency,
            "per-byte time (G)" => n.bandwidth == pl.bandwidth,
            "overhead (o)" => n.overhead == pl.overhead,
            _ => n.gap == pl.gap,
        }
    };
    for (what, d, fmt) in dists {
        if d.is_some() && same_as_near(what) {
            let _ = writeln!(
                out,
                "  {what}: the near distribution (the model pins its median to the far base)"
            );
            continue;
        }
        if let Some(d) = d {
            let _ = writeln!(out, "  {what}: {}", describe_kind(d));
            let _ = writeln!(out, "    {}", quantile_line(d, fmt));
            if what == "latency (one way)" && quantile(d, 0.0) <= 0.0 {
                let _ = writeln!(
                    out,
                    "    (a message's time beyond o_send + o_recv: 0 where a captured RTT/2 left nothing beyond 2o)"
                );
            }
        }
    }
    if let Some(a) = &pl.after_idle {
        if let Some((threshold_ps, latency)) = a.as_step() {
            let _ = writeln!(
                out,
                "  latency after {} idle (a sender that has not sent or received for that long): {}",
                time(threshold_ps),
                describe_kind(latency)
            );
            let _ = writeln!(out, "    {}", quantile_line(latency, &time));
        } else {
            let _ = writeln!(
                out,
                "  after idle (a sender that has not sent or received for at least the idle time; schema version 4):"
            );
            for l in &a.levels {
                let lat = match &l.latency {
                    Some(d) => format!("latency {}", describe_kind(d)),
                    None => "latency of the level below".to_string(),
                };
                let _ = writeln!(
                    out,
                    "    from {:>10} idle: per-byte time x{:.3}, {lat}",
                    time(l.from_ps),
                    l.per_byte_factor
                );
                if let Some(d) = &l.latency {
                    let _ = writeln!(out, "      {}", quantile_line(d, &time));
                }
            }
        }
    }
    if pl.bandwidth.is_some() {
        let _ = writeln!(
            out,
            "  large messages draw one G per {} block",
            format_size(pl.bandwidth_block_bytes)
        );
    }
    if let Some(d) = &pl.bandwidth_levels {
        let _ = writeln!(
            out,
            "  bandwidth levels (a factor on every per-byte time, one drawn per repetition: the capture's runs each kept their own bandwidth): {}",
            describe_kind(d)
        );
        let _ = writeln!(out, "    {}", quantile_line(d, &|v| format!("x{v:.3}")));
    }
    if let Some(t) = &pl.latency_by_size {
        let _ = writeln!(
            out,
            "  latency by size (one way, on top of L and G, from the LogGP run's ping-pong; {} points): {}",
            t.sizes_bytes.len(),
            size_latency_points(t, pl.params.s_bytes)
        );
    }
}

/// A placement's extra latency by size at a few sizes: `1KiB 120ns, 4KiB 310ns, ...` (what
/// `profile show` and a run's settings say of it).
pub(crate) fn size_latency_points(t: &loggops_profile::SizeLatency, s_bytes: u64) -> String {
    [1u64, 1024, 4096, 16384, 65536, 131072]
        .iter()
        .map(|&b| {
            format!(
                "{} {}",
                format_size(b),
                fmt_time_ps_f64(t.extra_at(b, s_bytes))
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `profile show` says of a detour trace.
pub(crate) struct TraceStats {
    pub detours: usize,
    pub period_ps: u64,
    /// Fraction of the period spent in detours.
    pub busy_fraction: f64,
    pub per_second: f64,
    /// The upper median of the durations.
    pub median_ps: u64,
    pub max_ps: u64,
}

impl TraceStats {
    pub(crate) fn of(t: &DetourTrace) -> TraceStats {
        let n = t.duration_ps.len();
        let busy: u128 = t.duration_ps.iter().map(|&d| d as u128).sum();
        let mut d: Vec<u64> = t.duration_ps.clone();
        d.sort_unstable();
        TraceStats {
            detours: n,
            period_ps: t.period_ps,
            busy_fraction: busy as f64 / t.period_ps.max(1) as f64,
            per_second: n as f64 / (t.period_ps.max(1) as f64 * 1e-12),
            median_ps: if n == 0 { 0 } else { d[n / 2] },
            max_ps: d.last().copied().unwrap_or(0),
        }
    }
}

fn trace_summary(t: &DetourTrace) -> String {
    let s = TraceStats::of(t);
    format!(
        "{} detours in {} ({:.3}% of the time in detours, {:.1} per second); duration median \
         {}, max {}",
        s.detours,
        time(s.period_ps as f64),
        100.0 * s.busy_fraction,
        s.per_second,
        time(s.median_ps as f64),
        time(s.max_ps as f64)
    )
}

/// The text of `profile show`.
pub fn render(p: &Profile, path: &str, sha256: &str, size: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: noise profile of system `{}`", path, p.system);
    if !p.description.is_empty() {
        let _ = writeln!(out, "  {}", p.description);
    }
    let _ = writeln!(out, "  {} bytes, sha256 {sha256}", size);
    let _ = writeln!(
        out,
        "  ranks r / {} share a switch: messages between them are near, the others far",
        p.nodes_per_switch
    );
    // Profiles of the paper's table print as before.
    if p.calibration != loggops_profile::Calibration::PaperTable || !p.day.is_empty() {
        let _ = writeln!(
            out,
            "  calibration: {}{}",
            match p.calibration {
                loggops_profile::Calibration::Captures => {
                    "captures (simulating the captures' own ping-pongs reproduces them)"
                }
                loggops_profile::Calibration::PaperTable => {
                    "paper table (captured shapes pinned to the parameters)"
                }
            },
            if p.day.is_empty() {
                String::new()
            } else {
                format!("; captured on {}", p.day)
            }
        );
    }
    if !p.days.is_empty() {
        let w = p.state_weights();
        let weighted = p.days.iter().any(|d| d.weight.is_some());
        let labels: Vec<String> = p
            .days
            .iter()
            .zip(&w[1..])
            .map(|(d, w)| match (d.episode, weighted) {
                (true, _) => format!("{} (latency episode, {:.1} %)", d.label, 100.0 * w),
                (false, true) => format!("{} ({:.1} %)", d.label, 100.0 * w),
                (false, false) => d.label.clone(),
            })
            .collect();
        let (what, noun) = if p.has_episodes() {
            ("states", "states")
        } else {
            ("capture days", "days")
        };
        let _ = writeln!(
            out,
            "  further {what}: {} (each repetition runs on one of the {} {noun}{})",
            labels.join(", "),
            labels.len() + 1,
            if weighted {
                format!(", the profile's own {:.1} %", 100.0 * w[0])
            } else {
                String::new()
            }
        );
    }
    if let Some(m) = p.mpi_progress {
        let what = match m {
            loggops_profile::MpiProgress::Async => {
                "rendezvous messages progress during computation"
            }
            loggops_profile::MpiProgress::Polled => {
                "rendezvous messages progress only inside MPI, not during computation"
            }
        };
        let _ = writeln!(out, "  MPI progress: {} ({what})", m.name());
    }
    if let Some(c) = p.clock {
        let _ = writeln!(
            out,
            "  clock: steps of {}, {} per read (validate reads every simulated region on it)",
            loggops_units::fmt_time_ps_f64(c.resolution_ps),
            loggops_units::fmt_time_ps_f64(c.read_ps)
        );
    }
    placement(&mut out, "near", &p.near, None);
    match &p.far {
        Some(f) => placement(&mut out, "far", f, Some(&p.near)),
        None => {
            let _ = writeln!(out, "far: same as near");
        }
    }
    let _ = writeln!(
        out,
        "(the noise model scales latency and G draws so that their median is L resp. G; \
         --absolute-latency uses them as stored)"
    );
    let os = &p.os_noise;
    if os.traces.is_empty() && os.process.is_none() {
        let _ = writeln!(out, "OS noise: none");
    } else {
        let _ = writeln!(out, "OS noise:");
        for (i, t) in os.traces.iter().enumerate() {
            let cut = match captured_detours(os, t) {
                Some(n) => format!(
                    " (cut: the capture's first {} of {n} detours; the process is fitted on all)",
                    t.duration_ps.len()
                ),
                None => String::new(),
            };
            let _ = writeln!(out, "  trace {}: {}{cut}", i + 1, trace_summary(t));
        }
        if let Some(pr) = &os.process {
            let _ = writeln!(
                out,
                "  detour process: {:.1} detours per second; durations: {}",
                pr.rate_per_s,
                describe_kind(&pr.duration_ps)
            );
            let _ = writeln!(out, "    {}", quantile_line(&pr.duration_ps, &time));
        }
    }
    let price = |v: Option<f64>| {
        v.map_or("unknown".to_string(), |x| {
            format!("{} per node-hour", fmt_price(x))
        })
    };
    let _ = writeln!(
        out,
        "prices: on-demand {}, committed {}",
        price(p.prices.on_demand_usd_per_node_hour),
        price(p.prices.committed_usd_per_node_hour)
    );
    let _ = writeln!(out, "{}", crate::spot::profile_line(&p.prices.spot)); // issue 47
    let pv = &p.provenance;
    let _ = writeln!(
        out,
        "provenance: made {} by loggops-sim {}",
        pv.created, pv.tool_version
    );
    for s in &pv.sources {
        let _ = writeln!(out, "  source: {s}");
    }
    if !pv.command.is_empty() {
        let _ = writeln!(out, "  command: {}", pv.command);
    }
    for n in &pv.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out
}

/// The panels of a profile's distributions: per quantity its CDF and, beside it, its tail
/// (`1 − CDF` on a log scale, where the rare large values a CDF hides show).
pub fn panels(p: &Profile) -> Vec<CurvePanel> {
    let mut out = Vec::new();
    let mut add = |title: &str, unit: AxisUnit, desc: &str, curves: Vec<Curve>| {
        if curves.is_empty() {
            return;
        }
        let xs: Vec<f64> = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|q| q.0))
            .collect();
        let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().copied().fold(0f64, f64::max);
        let x_log = lo > 0.0 && hi / lo > 5.0;
        let tails: Vec<Curve> = curves
            .iter()
            .map(|c| Curve {
                label: c.label.clone(),
                points: c
                    .points
                    .iter()
                    .map(|&(x, q)| (x, 1.0 - q))
                    .filter(|&(_, q)| q > 1e-12)
                    .collect(),
            })
            .collect();
        out.push(CurvePanel {
            title: title.to_string(),
            x_desc: desc.to_string(),
            y_desc: "cumulative probability".into(),
            x_unit: unit,
            y_unit: AxisUnit::Fraction,
            x_log,
            y_log: false,
            curves,
        });
        out.push(CurvePanel {
            title: format!("{title}: tail"),
            x_desc: desc.to_string(),
            y_desc: "probability of a larger value".into(),
            x_unit: unit,
            y_unit: AxisUnit::Fraction,
            x_log,
            y_log: true,
            curves: tails,
        });
    };
    let place = |pl: &Placement, f: &dyn Fn(&Placement) -> &Option<Distribution>, name: &str| {
        f(pl).as_ref().map(|d| Curve {
            label: name.to_string(),
            points: cdf_points(d),
        })
    };
    let pair = |f: &dyn Fn(&Placement) -> &Option<Distribution>| -> Vec<Curve> {
        let mut v: Vec<Curve> = place(&p.near, f, "near").into_iter().collect();
        if let Some(far) = &p.far {
            v.extend(place(far, f, "far"));
        }
        v
    };
    let mut idle_lat = Vec::new();
    let mut factors = Vec::new();
    for (name, pl) in std::iter::once(("near", &p.near)).chain(p.far.as_ref().map(|f| ("far", f))) {
        let Some(a) = &pl.after_idle else { continue };
        for l in &a.levels {
            if let Some(d) = &l.latency {
                idle_lat.push(Curve {
                    label: format!("{name} after {} idle", time(l.from_ps)),
                    points: cdf_points(d),
                });
            }
        }
        if a.scales_per_byte() {
            factors.push(Curve {
                label: name.to_string(),
                points: factor_steps(a),
            });
        }
    }
    let mut lat = pair(&|pl| &pl.latency);
    if !lat.is_empty() {
        lat.extend(idle_lat);
    }
    add(
        "One-way latency (as stored)",
        AxisUnit::TimePs,
        "latency",
        lat,
    );
    let mut factor_panel = None;
    if !factors.is_empty() {
        let hi = factors
            .iter()
            .flat_map(|c| c.points.iter().map(|q| q.0))
            .fold(0f64, f64::max);
        let lo = factors
            .iter()
            .flat_map(|c| c.points.iter().map(|q| q.0))
            .fold(f64::INFINITY, f64::min);
        factor_panel = Some(CurvePanel {
            title: "Per-byte time after idle (factor on G)".into(),
            x_desc: "sender idle time".into(),
            y_desc: "factor on the per-byte time".into(),
            x_unit: AxisUnit::TimePs,
            y_unit: AxisUnit::Plain,
            x_log: lo > 0.0 && hi / lo > 5.0,
            y_log: false,
            curves: factors,
        });
    }
    add(
        "Per-byte time G (as stored)",
        AxisUnit::PsPerByte,
        "time per byte",
        pair(&|pl| &pl.bandwidth),
    );
    let mut os = Vec::new();
    for (i, t) in p.os_noise.traces.iter().enumerate() {
        os.push(Curve {
            label: format!("trace {} detours", i + 1),
            points: cdf_points(&Distribution::Samples(
                t.duration_ps.iter().map(|&d| d as f64).collect(),
            )),
        });
    }
    if let Some(pr) = &p.os_noise.process {
        os.push(Curve {
            label: "detour process".into(),
            points: cdf_points(&pr.duration_ps),
        });
    }
    add("OS detour durations", AxisUnit::TimePs, "detour length", os);
    out.extend(factor_panel);
    out
}

/// The step function of an idle table's per-byte factors, from half the first level's idle
/// time (back to back: 1) to twice the last's.
fn factor_steps(a: &loggops_profile::AfterIdle) -> Vec<(f64, f64)> {
    let first = a.levels.first().map_or(1.0, |l| l.from_ps.max(1.0));
    let mut pts = vec![(first / 2.0, 1.0)];
    let mut f = 1.0;
    for l in &a.levels {
        let x = l.from_ps.max(1.0);
        pts.push((x, f));
        f = l.per_byte_factor;
        pts.push((x, f));
    }
    let last = pts.last().map_or(1.0, |q| q.0);
    pts.push((last * 2.0, f));
    pts
}

/// A profile, the SHA-256 of its file and the file's size in bytes.
pub(crate) fn load(path: &std::path::Path) -> Result<(Profile, String, u64)> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read noise profile {}", path.display()))?;
    let profile = loggops_profile::read_profile(path)?;
    Ok((
        profile,
        crate::inputs::sha256_bytes(&bytes),
        bytes.len() as u64,
    ))
}

/// The detours of the capture `t` was cut from, when it held more than the trace keeps
/// (`calibrate` keeps a capture's first detours as its one trace and fits the detour process
/// on all of them); `None`: the trace is the whole capture, or this is not known.
pub(crate) fn captured_detours(
    os: &loggops_profile::OsNoise,
    t: &loggops_profile::DetourTrace,
) -> Option<usize> {
    let n = match os.process.as_ref().map(|p| &p.duration_ps) {
        _ if os.traces.len() != 1 => None,
        Some(Distribution::Samples(s)) => Some(s.len()),
        Some(Distribution::Quantiles { tail: Some(t), .. }) => Some(t.sample_count as usize),
        _ => None,
    }?;
    (n > t.duration_ps.len()).then_some(n)
}

pub fn show(args: &ProfileShowArgs) -> Result<ExitCode> {
    if args.file.len() > 1 && !args.plot.is_empty() {
        anyhow::bail!(
            "--plot draws one profile's distributions: give one FILE.h5 (got {})",
            args.file.len()
        );
    }
    // Every file is read before anything is written.
    let mut loaded = Vec::with_capacity(args.file.len());
    for f in &args.file {
        loaded.push((f, load(f)?));
    }
    let text = match args.format {
        crate::cli::ProfileFormat::Human => loaded
            .iter()
            .map(|(f, (p, sha, size))| render(p, &f.display().to_string(), sha, *size))
            .collect::<Vec<_>>()
            .join("\n"),
        crate::cli::ProfileFormat::Json => {
            let mut v: Vec<serde_json::Value> = loaded
                .iter()
                .map(|(f, (p, sha, size))| {
                    crate::api::profile::describe(p, &f.display().to_string(), sha, *size)
                })
                .collect();
            let v = if v.len() == 1 {
                v.remove(0)
            } else {
                serde_json::Value::Array(v)
            };
            let mut s = serde_json::to_string_pretty(&v).expect("JSON values serialise");
            s.push('\n');
            s
        }
    };
    for path in &args.plot {
        let (f, (profile, _, _)) = &loaded[0];
        loggops_report::plot::write_curves(
            Some(path),
            &format!(
                "Noise profile `{}` ({}): distributions as stored",
                profile.system,
                f.display()
            ),
            panels(profile),
        )?;
    }
    crate::run::emit(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

/// `profile combine`: the days of several profiles of one system in one profile.
pub fn combine(args: &crate::cli::ProfileCombineArgs) -> Result<ExitCode> {
    let mut profiles = Vec::with_capacity(args.files.len());
    for f in &args.files {
        profiles.push(loggops_profile::read_profile(f)?);
    }
    let label = |p: &Profile, f: &std::path::Path| {
        if p.day.is_empty() {
            crate::inputs::stem(f)
        } else {
            p.day.clone()
        }
    };
    // Each capture day once: a file named twice, or a combined file with one of its own days,
    // would weigh that day twice.
    let mut seen: Vec<(String, &std::path::Path)> = Vec::new();
    for (p, f) in profiles.iter().zip(&args.files) {
        let days = std::iter::once(label(p, f)).chain(
            p.days
                .iter()
                .filter(|d| !d.episode)
                .map(|d| d.label.clone()),
        );
        for day in days {
            if let Some((_, g)) = seen.iter().find(|(d, _)| *d == day) {
                anyhow::bail!(
                    "{}: capture day `{day}` is already in {}: each day once (a day given twice would run twice as often)",
                    f.display(),
                    g.display()
                );
            }
            seen.push((day, f));
        }
    }
    let mut out = profiles[0].clone();
    out.day = label(&profiles[0], &args.files[0]);
    for (p, f) in profiles.iter().zip(&args.files).skip(1) {
        if p.system != out.system {
            anyhow::bail!(
                "{}: system `{}`, but {} is `{}`: combine the days of one system",
                f.display(),
                p.system,
                args.files[0].display(),
                out.system
            );
        }
        if p.calibration != out.calibration {
            anyhow::bail!(
                "{}: calibration `{}`, but {} has `{}`",
                f.display(),
                p.calibration.as_str(),
                args.files[0].display(),
                out.calibration.as_str()
            );
        }
        if p.mpi_progress != out.mpi_progress {
            let name = |m: Option<loggops_profile::MpiProgress>| {
                m.map_or("not recorded (asynchronous)", |m| m.name())
            };
            anyhow::bail!(
                "{}: MPI progress {}, but {} has {}: the days of one system share how its MPI progresses (calibrate both with the same --mpi-progress)",
                f.display(),
                name(p.mpi_progress),
                args.files[0].display(),
                name(out.mpi_progress)
            );
        }
        out.days.push(loggops_profile::Day::new(
            label(p, f),
            p.near.clone(),
            p.far.clone(),
            p.os_noise.clone(),
        ));
        // Another file's latency episodes keep that file's OS noise.
        out.days.extend(p.days.iter().map(|d| loggops_profile::Day {
            os_noise: p.os_noise_of(d).clone(),
            ..d.clone()
        }));
        out.provenance
            .sources
            .extend(p.provenance.sources.iter().cloned());
    }
    // Weighted states (latency episodes): each file keeps its share 1/n, split among its own
    // states as it was; then every day carries its weight (the first file's own day takes
    // what remains).
    if profiles
        .iter()
        .any(|p| p.days.iter().any(|d| d.weight.is_some()))
    {
        let n = profiles.len() as f64;
        let shares: Vec<f64> = profiles
            .iter()
            .flat_map(|p| p.state_weights())
            .map(|w| w / n)
            .collect();
        for (d, w) in out.days.iter_mut().zip(&shares[1..]) {
            d.weight = Some(*w);
        }
    }
    out.provenance.command = crate::inputs::command_line();
    let capture_days = 1 + out.days.iter().filter(|d| !d.episode).count();
    out.provenance
        .notes
        .push(format!("combined from {capture_days} capture days"));
    // The days must share what the engine computes itself (S, O).
    loggops_noise::NoiseModel::new(&out, &loggops_noise::NoiseConfig::default())
        .with_context(|| format!("cannot combine into {}", args.output.display()))?;
    loggops_profile::write_profile(&args.output, &out)?;
    let labels = |episode: bool| {
        out.days
            .iter()
            .filter(|d| d.episode == episode)
            .map(|d| d.label.as_str())
            .collect::<Vec<_>>()
    };
    let episodes = labels(true);
    crate::out::errln!(
        "wrote {} ({capture_days} capture day{}: {}{})",
        args.output.display(),
        if capture_days == 1 { "" } else { "s" },
        std::iter::once(out.day.as_str())
            .chain(labels(false))
            .collect::<Vec<_>>()
            .join(", "),
        if episodes.is_empty() {
            String::new()
        } else {
            format!("; states of their own: {}", episodes.join(", "))
        }
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loggops_profile::ExactTail;

    /// Every distribution gets its CDF and, beside it, its tail on a log scale (so the
    /// figure's two columns are always full: no empty panel), and the tail keeps the
    /// largest values a CDF squeezes against 100 %.
    #[test]
    fn panels_come_in_cdf_and_tail_pairs() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let p = loggops_profile::read_profile(root.join("calibration/aws.h5")).unwrap();
        let panels = panels(&p);
        assert_eq!(panels.len() % 2, 0);
        for pair in panels.chunks(2) {
            assert!(!pair[0].y_log && pair[1].y_log, "{}", pair[1].title);
            assert_eq!(pair[1].title, format!("{}: tail", pair[0].title));
            for (cdf, tail) in pair[0].curves.iter().zip(&pair[1].curves) {
                let max = cdf.points.iter().map(|q| q.0).fold(0f64, f64::max);
                let tmax = tail.points.iter().map(|q| q.0).fold(0f64, f64::max);
                assert!(tmax > 0.0 && tail.points.iter().all(|q| q.1 > 0.0 && q.1 <= 1.0));
                assert!(tmax <= max);
            }
        }
    }

    #[test]
    fn quantiles_of_tables_follow_the_sampler() {
        let d = Distribution::Quantiles {
            probs: vec![0.0, 0.5, 0.8],
            values: vec![10.0, 20.0, 30.0],
            tail: Some(ExactTail {
                values: vec![100.0, 200.0],
                sample_count: 10,
            }),
        };
        assert_eq!(quantile(&d, 0.0), 10.0);
        assert_eq!(quantile(&d, 0.25), 15.0);
        assert_eq!(quantile(&d, 0.8), 30.0);
        assert_eq!(quantile(&d, 0.85), 100.0);
        assert_eq!(quantile(&d, 0.95), 200.0);
        assert_eq!(quantile(&d, 1.0), 200.0);
        let s = Distribution::Samples(vec![4.0, 1.0, 2.0, 3.0]);
        assert_eq!(quantile(&s, 0.5), 2.5);
        assert_eq!(quantile(&s, 1.0), 4.0);
    }
}
