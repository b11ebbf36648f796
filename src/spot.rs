//! Issue 47: spot and preemptible capacity. What a *job* of many runs costs when its nodes can
//! be taken away, computed here and attached to the result ([`attach`], called by `mc.rs`
//! after a sweep and after `merge`) as `loggops_report::spot::SpotResult`, which every output
//! renders: the job's work is drawn from the simulated run-time distribution (noise
//! included), checkpointed every τ seconds of work (a checkpoint costs δ), and interrupted by a
//! Poisson process of rate N·λ over its N nodes (λ per node-hour); an interruption loses the
//! work since the last checkpoint and costs a restart of R seconds. Spot is priced only when
//! its price and its interruption rate are both known: nothing is assumed.
//!
//! The closed form ([`expected_time_s`]) is the textbook one for exponential failures with
//! restart cost (no failure during a restart): a segment of length `s` (work plus its
//! checkpoint) takes on average `(e^{Λs} − 1)(1/Λ + R)`. Young's `τ = √(2δ/Λ)` and Daly's
//! higher-order optimum ([`daly_tau_s`]) are shown beside the numerical optimum
//! ([`best_tau_s`]); the Monte-Carlo draws ([`draw_job_s`]) are keyed by (seed, job), so they
//! do not depend on the thread count, and agree with the closed form on constant run times
//! (a test).

use loggops_noise::rng::CounterRng;

/// The stream of spot draws: apart from the noise model's streams of the same seed.
const SPOT_STREAM: u64 = 0x5350_4f54; // "SPOT"

/// A job: `runs` runs on `nodes` nodes, checkpointed every `tau_s` seconds of work, or, with
/// `segments`, in that many equal segments of each drawn job's own work (the optimum's policy:
/// a drawn job slightly longer than the mean does not pay one more checkpoint).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Job {
    pub nodes: u64,
    pub runs: u64,
    pub tau_s: f64,
    pub segments: Option<u64>,
    pub checkpoint_s: f64,
    pub restart_s: f64,
}

impl Job {
    /// The checkpoint interval of a drawn job of `work_s` seconds: its own work over
    /// `segments`, else `tau_s`.
    pub fn tau_for(&self, work_s: f64) -> f64 {
        match self.segments {
            Some(k) => work_s / k.max(1) as f64,
            None => self.tau_s,
        }
    }
}

/// Interruptions per second of the whole job: `nodes` × λ per node-hour / 3600.
pub fn job_rate_per_s(nodes: u64, per_node_hour: f64) -> f64 {
    nodes as f64 * per_node_hour / 3600.0
}

/// Expected time to finish one segment of `s` seconds (work and checkpoint) under Poisson
/// interruptions of rate `lambda` per second, each costing `restart_s` before the segment
/// starts again.
pub fn segment_time_s(s: f64, lambda: f64, restart_s: f64) -> f64 {
    if lambda <= 0.0 {
        return s;
    }
    (lambda * s).exp_m1() * (1.0 / lambda + restart_s)
}

/// Expected wall time of `work_s` seconds of work checkpointed every `tau_s` (each checkpoint
/// but the last costs `checkpoint_s`) under interruptions of rate `lambda` per second.
pub fn expected_time_s(
    work_s: f64,
    tau_s: f64,
    checkpoint_s: f64,
    restart_s: f64,
    lambda: f64,
) -> f64 {
    if work_s <= 0.0 {
        return 0.0;
    }
    let tau = tau_s.min(work_s).max(f64::MIN_POSITIVE);
    let full = (work_s / tau).floor();
    let rest = work_s - full * tau;
    let (full, last) = if rest <= 1e-12 * work_s {
        (full - 1.0, tau)
    } else {
        (full, rest)
    };
    // `0 × ∞` would be NaN (negative on x86, which `total_cmp` orders below every time).
    let head = if full > 0.0 {
        full * segment_time_s(tau + checkpoint_s, lambda, restart_s)
    } else {
        0.0
    };
    head + segment_time_s(last, lambda, restart_s)
}

/// Young's optimum checkpoint interval, `√(2δ/Λ)` (`None` without interruptions).
pub fn young_tau_s(checkpoint_s: f64, lambda: f64) -> Option<f64> {
    (lambda > 0.0).then(|| (2.0 * checkpoint_s / lambda).sqrt())
}

/// Daly's (2006) higher-order optimum: with `M = 1/Λ`, `√(2δM)·(1 + √(δ/2M)/3 + δ/(18M)) − δ`
/// for `δ < 2M`, else `M`.
pub fn daly_tau_s(checkpoint_s: f64, lambda: f64) -> Option<f64> {
    if lambda <= 0.0 {
        return None;
    }
    let (d, m) = (checkpoint_s, 1.0 / lambda);
    Some(if d < 2.0 * m {
        (2.0 * d * m).sqrt() * (1.0 + (d / (2.0 * m)).sqrt() / 3.0 + d / (18.0 * m)) - d
    } else {
        m
    })
}

/// The number of equal segments (checkpoints + 1) that minimises [`expected_time_s`] for
/// `work_s` of work: 1 (no checkpoint) without interruptions. Equal segments are optimal for a
/// given count (a segment's expected time is convex in its length), so the search runs over the
/// count: a golden-section search of the smooth relaxation on a log scale (segments of a
/// millisecond at the most), then the whole counts on either side and 1 compared exactly. (A
/// search over τ itself meets the jumps of `⌊work/τ⌋` and can end on an extra checkpoint.)
pub fn best_segments(work_s: f64, checkpoint_s: f64, restart_s: f64, lambda: f64) -> u64 {
    if lambda <= 0.0 || work_s <= 0.0 {
        return 1;
    }
    let relaxed = |k: f64| {
        let head = if k > 1.0 {
            (k - 1.0) * segment_time_s(work_s / k + checkpoint_s, lambda, restart_s)
        } else {
            0.0
        };
        head + segment_time_s(work_s / k, lambda, restart_s)
    };
    let k_max = (work_s / 1e-3).clamp(1.0, 1e15);
    let (mut a, mut b) = (0.0f64, k_max.ln());
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
    for _ in 0..200 {
        if relaxed(c.exp()) < relaxed(d.exp()) {
            b = d;
        } else {
            a = c;
        }
        c = b - r * (b - a);
        d = a + r * (b - a);
    }
    let k = ((a + b) / 2.0).exp();
    let exact = |k: f64| expected_time_s(work_s, work_s / k, checkpoint_s, restart_s, lambda);
    [1.0, k.floor().max(1.0), k.ceil().min(k_max)]
        .into_iter()
        .min_by(|x, y| exact(*x).total_cmp(&exact(*y)))
        .map_or(1, |k| k as u64)
}

/// The τ that minimises [`expected_time_s`]: the work over [`best_segments`]; the whole work
/// without interruptions.
pub fn best_tau_s(work_s: f64, checkpoint_s: f64, restart_s: f64, lambda: f64) -> f64 {
    work_s / best_segments(work_s, checkpoint_s, restart_s, lambda) as f64
}

/// One drawn job: its work (runs drawn from the samples), its wall time under interruptions,
/// and how many interruptions it met.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drawn {
    pub work_s: f64,
    pub time_s: f64,
    pub interruptions: u64,
}

/// Runs per job above which a job's work is drawn as the normal sum of its runs (mean `R·μ`,
/// variance `R·σ²` of the samples: the central limit theorem) instead of run by run.
pub const EXACT_RUNS: u64 = 1024;

/// The work of one job: `runs` run times drawn from `samples_s` with replacement (above
/// [`EXACT_RUNS`], their normal sum).
fn draw_work(samples_s: &[f64], runs: u64, s: &mut loggops_noise::rng::Stream) -> f64 {
    let n = samples_s.len();
    if n == 0 {
        return 0.0;
    }
    if runs <= EXACT_RUNS {
        return (0..runs)
            .map(|_| samples_s[((s.next_f64() * n as f64) as usize).min(n - 1)])
            .sum();
    }
    let mean = samples_s.iter().sum::<f64>() / n as f64;
    let var = samples_s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    // Box-Muller.
    let (u1, u2) = (1.0 - s.next_f64(), s.next_f64());
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    (runs as f64 * mean + (runs as f64 * var).sqrt() * z).max(0.0)
}

/// A job's wall time for `work` seconds of work, checkpointed every `job.tau_s` (each
/// checkpoint but the last costs `job.checkpoint_s`), interrupted at exponential gaps of rate
/// `lambda` per second drawn from `s`; each interruption loses the work since the last
/// checkpoint and costs `job.restart_s`. Whole runs of segments between two interruptions are
/// taken at once, so the loop is as long as the number of interruptions.
fn spot_time(work: f64, job: &Job, lambda: f64, s: &mut loggops_noise::rng::Stream) -> (f64, u64) {
    let gap = |s: &mut loggops_noise::rng::Stream| {
        if lambda > 0.0 {
            -(1.0 - s.next_f64()).ln() / lambda
        } else {
            f64::INFINITY
        }
    };
    let tau = job.tau_for(work).max(f64::MIN_POSITIVE);
    let full = tau + job.checkpoint_s;
    let eps = 1e-12 * work.max(1.0);
    let (mut t, mut left, mut hits) = (0.0, work, 0u64);
    let mut next = gap(s);
    while left > eps {
        // Segments followed by a checkpoint (work left beyond them) that end before the next
        // interruption.
        let before_last = ((left - eps) / tau).floor().max(0.0);
        let k = before_last.min((next / full).floor());
        if k >= 1.0 {
            t += k * full;
            next -= k * full;
            left -= k * tau;
            continue;
        }
        let w = tau.min(left);
        let seg = if left - w > eps {
            w + job.checkpoint_s
        } else {
            w
        };
        if next >= seg {
            t += seg;
            next -= seg;
            left -= w;
        } else {
            t += next + job.restart_s;
            hits += 1;
            next = gap(s);
        }
    }
    (t, hits)
}

/// One job, drawn: its runs drawn from `samples_s` and its interruptions as exponential gaps
/// at `lambda` per second, all keyed by (seed, job index), so that no draw depends on the
/// thread count or the order jobs are drawn in.
pub fn draw_job(samples_s: &[f64], job: &Job, lambda: f64, seed: u64, index: u64) -> Drawn {
    let mut s = CounterRng::new(seed, index).stream(SPOT_STREAM);
    let work = draw_work(samples_s, job.runs, &mut s);
    let (time_s, interruptions) = spot_time(work, job, lambda, &mut s);
    Drawn {
        work_s: work,
        time_s,
        interruptions,
    }
}

/// [`draw_job`]'s wall time.
#[cfg(test)]
pub fn draw_job_s(samples_s: &[f64], job: &Job, lambda: f64, seed: u64, index: u64) -> f64 {
    draw_job(samples_s, job, lambda, seed, index).time_s
}

/// Mean and p95 (the smallest value with at least 95 % at or below it) of `v`, sorted here.
fn mean_p95(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let p95 = v
        .get(((v.len() as f64 * 0.95).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0.0);
    (mean, p95)
}

/// The drawn jobs of one cell: work and spot time, mean and p95, and interruptions per job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobSpot {
    pub work_mean_s: f64,
    pub work_p95_s: f64,
    pub mean_time_s: f64,
    pub p95_time_s: f64,
    pub interruptions_mean: f64,
}

/// `draws` jobs drawn (job indices `0..draws`) at `per_node_hour` interruptions per node-hour.
pub fn job_spot(
    samples_s: &[f64],
    job: &Job,
    per_node_hour: f64,
    seed: u64,
    draws: u64,
) -> JobSpot {
    let lambda = job_rate_per_s(job.nodes, per_node_hour);
    let drawn: Vec<Drawn> = (0..draws)
        .map(|i| draw_job(samples_s, job, lambda, seed, i))
        .collect();
    let (work_mean_s, work_p95_s) =
        mean_p95(&mut drawn.iter().map(|d| d.work_s).collect::<Vec<_>>());
    let (_, p95_time_s) = mean_p95(&mut drawn.iter().map(|d| d.time_s).collect::<Vec<_>>());
    // The mean over the interruptions is exact given a job's work (the closed form); only the
    // work is drawn. The drawn times' own mean misses interruptions too rare to meet in a few
    // thousand jobs that still dominate the expectation (a 63 us job, a restart of 2 min every
    // few seconds: one job in 20,000 is hit, each hit 2 million times the job).
    let mut expected: Vec<f64> = drawn
        .iter()
        .map(|d| {
            let tau = job.tau_for(d.work_s);
            expected_time_s(d.work_s, tau, job.checkpoint_s, job.restart_s, lambda)
        })
        .collect();
    // Summed in sorted order, as `mean_p95` sums (without interruptions: the same mean).
    let (mean_time_s, _) = mean_p95(&mut expected);
    // Interruptions per segment of s seconds: e^{Λs} − 1, the segment's expected time over
    // 1/Λ + R.
    let interruptions_mean = if lambda > 0.0 {
        mean_time_s * lambda / (1.0 + lambda * job.restart_s)
    } else {
        0.0
    };
    JobSpot {
        work_mean_s,
        work_p95_s,
        mean_time_s,
        p95_time_s,
        interruptions_mean,
    }
}

/// Work draws only (no interruptions): for rows whose spot jobs are not drawn.
fn work_only(samples_s: &[f64], job: &Job, seed: u64, draws: u64) -> (f64, f64) {
    let mut w: Vec<f64> = (0..draws)
        .map(|i| {
            let mut s = CounterRng::new(seed, i).stream(SPOT_STREAM);
            draw_work(samples_s, job.runs, &mut s)
        })
        .collect();
    mean_p95(&mut w)
}

/// A spot job is drawn only when its expected time by the closed form is below this many
/// times its work, and its expected interruptions below [`MAX_INTERRUPTIONS`]; beyond, the
/// closed form stands for mean and p95 (interruptions dominate: spot does not pay).
pub const MAX_SLOWDOWN: f64 = 100.0;
/// See [`MAX_SLOWDOWN`].
pub const MAX_INTERRUPTIONS: f64 = 1e5;

/// Spot (preemptible) capacity's price and interruption rate: `loggops-sim` flags that override
/// every system's profile values, and `loggops-sim calibrate` flags that record them in the
/// profile (schema version 5).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SpotInputs {
    /// Spot (preemptible) price, USD per node-hour, e.g. 0.70. On a run it overrides every
    /// system's profile value; `calibrate` records it in the profile. Spot is priced only
    /// when a price and an interruption rate are both known [default: the profile's; none:
    /// spot is not priced and nothing is assumed].
    #[arg(
        long,
        value_name = "USD",
        value_parser = usd,
        allow_hyphen_values = true,
        help_heading = "Spot capacity"
    )]
    pub spot_price: Option<f64>,
    /// Where the spot price and rate come from, printed and recorded with them, e.g. "AWS
    /// Spot Instance Advisor, c5n.18xlarge us-east-1" (README "Spot capacity").
    #[arg(long, value_name = "TEXT", help_heading = "Spot capacity")]
    pub spot_source: Option<String>,
    /// When the spot price and rate were read, e.g. 2026-11-20 (they change).
    #[arg(long, value_name = "DATE", help_heading = "Spot capacity")]
    pub spot_date: Option<String>,
    /// Interruptions per node-hour: how often the provider takes one node's spot capacity
    /// away, e.g. 0.002 (one per 500 node-hours); 0: never. A rate the user supplies (the
    /// providers publish bands or nothing: README "Spot capacity") [default: the profile's;
    /// none: spot is not priced].
    #[arg(
        long,
        value_name = "PER_NODE_HOUR",
        value_parser = rate,
        allow_hyphen_values = true,
        conflicts_with = "spot_mtbi",
        help_heading = "Spot capacity"
    )]
    pub spot_interruptions: Option<f64>,
    /// Mean time between interruptions of one node, the inverse of --spot-interruptions,
    /// e.g. 500h or 20d (units ns, us, ms, s, min, h, d; a bare number is seconds).
    #[arg(long, value_name = "DURATION", value_parser = mtbi_rate, allow_hyphen_values = true,
          help_heading = "Spot capacity")]
    pub spot_mtbi: Option<f64>,
}

/// `--spot-*`, `--checkpoint-*`, `--restart-cost`: spot capacity of a run (issue 47).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SpotArgs {
    #[command(flatten)]
    pub inputs: SpotInputs,
    /// Checkpoint the job every this much work, e.g. 20min (units ns, us, ms, s, min, h, d;
    /// a bare number is seconds)
    /// [default: the interval that minimises the expected spot job time at each node count,
    /// shown beside Young's and Daly's].
    #[arg(long, value_name = "DURATION", value_parser = positive_seconds, allow_hyphen_values = true,
          help_heading = "Spot capacity")]
    pub checkpoint_every: Option<f64>,
    /// Time to write one checkpoint, e.g. 30s or 2min; the job's nodes are billed meanwhile
    /// [default: 30s].
    #[arg(long, value_name = "DURATION", value_parser = seconds, allow_hyphen_values = true,
          help_heading = "Spot capacity")]
    pub checkpoint_cost: Option<f64>,
    /// Time lost after each interruption before work resumes from the last checkpoint
    /// (replacement nodes, job restart, checkpoint reload); billed [default: 120s].
    #[arg(long, value_name = "DURATION", value_parser = seconds, allow_hyphen_values = true,
          help_heading = "Spot capacity")]
    pub restart_cost: Option<f64>,
}

/// Default `--checkpoint-cost`, s.
pub const CHECKPOINT_COST_S: f64 = 30.0;
/// Default `--restart-cost`, s.
pub const RESTART_COST_S: f64 = 120.0;

fn usd(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a price in USD per node-hour (e.g. 0.70)"
        )),
    }
}

fn rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a rate per node-hour (a number at least 0, e.g. 0.002)"
        )),
    }
}

fn seconds(s: &str) -> Result<f64, String> {
    parse_seconds(s)
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    let v = parse_seconds(s)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("`{s}`: a checkpoint interval is longer than 0"))
    }
}

/// `--spot-mtbi`: interruptions per node-hour.
fn mtbi_rate(s: &str) -> Result<f64, String> {
    let h = parse_seconds(s)? / 3600.0;
    if h > 0.0 {
        Ok(1.0 / h)
    } else {
        Err(format!(
            "`{s}`: a mean time between interruptions is longer than 0"
        ))
    }
}

/// Seconds of a duration (`30s`, `2min`, `500h`, `20d`, or bare seconds).
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a duration such as 30s, 2min or 500h"))?;
    // ps ... s (and their spellings, µs included) from the one table of time units.
    let secs = match unit.trim() {
        "" => v,
        "min" => v * 60.0,
        "h" => v * 3600.0,
        "d" => v * 86400.0,
        u => match u.parse::<loggops_units::TimeUnit>() {
            Ok(t) => v * t.picos() as f64 / 1e12,
            Err(_) => {
                return Err(format!(
                    "`{s}`: unknown unit `{u}` (ns, us, ms, s, min, h, d)"
                ))
            }
        },
    };
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("`{s}`: a duration is finite and not negative"));
    }
    Ok(secs)
}

impl SpotInputs {
    /// The interruption rate given, per node-hour.
    pub fn rate(&self) -> Option<f64> {
        self.spot_interruptions.or(self.spot_mtbi)
    }

    /// Whether any spot flag is given.
    pub fn any(&self) -> bool {
        self.spot_price.is_some()
            || self.rate().is_some()
            || self.spot_source.is_some()
            || self.spot_date.is_some()
    }

    /// The profile's spot values as `calibrate` records them.
    pub fn to_profile(&self) -> loggops_profile::SpotPrices {
        loggops_profile::SpotPrices {
            usd_per_node_hour: self.spot_price,
            interruptions_per_node_hour: self.rate(),
            source: self.spot_source.clone().unwrap_or_default(),
            date: self.spot_date.clone().unwrap_or_default(),
        }
    }
}

impl SpotArgs {
    /// Whether any spot flag is given (the job's settings included).
    pub fn any(&self) -> bool {
        self.inputs.any()
            || self.checkpoint_every.is_some()
            || self.checkpoint_cost.is_some()
            || self.restart_cost.is_some()
    }
}

/// A system's spot values in force: each flag given overrides the profile's value (`profile`).
pub fn prices_in_force(
    flags: &SpotInputs,
    profile: &loggops_profile::SpotPrices,
) -> loggops_report::Prices {
    let text = |flag: &Option<String>, prof: &str| {
        flag.clone()
            .or_else(|| (!prof.is_empty()).then(|| prof.to_string()))
    };
    let (price, rate) = (
        flags.spot_price.or(profile.usd_per_node_hour),
        flags.rate().or(profile.interruptions_per_node_hour),
    );
    let source = text(&flags.spot_source, &profile.source);
    let date = text(&flags.spot_date, &profile.date);
    let source = match (source, date) {
        (Some(s), Some(d)) => Some(format!("{s}, {d}")),
        (s, d) => s.or(d),
    };
    loggops_report::Prices {
        spot_usd_per_node_hour: price,
        spot_interruptions_per_node_hour: rate,
        spot_source: source.filter(|_| price.is_some() || rate.is_some()),
        ..Default::default()
    }
}

/// The plan's spot settings: set when a spot flag is given or a system has spot values.
pub fn settings<'a>(
    args: &SpotArgs,
    mut prices: impl Iterator<Item = &'a loggops_report::Prices>,
) -> Option<loggops_report::spot::SpotSettings> {
    if !args.any() && !prices.any(|p| p.has_spot()) {
        return None;
    }
    Some(loggops_report::spot::SpotSettings {
        checkpoint_s: args.checkpoint_cost.unwrap_or(CHECKPOINT_COST_S),
        restart_s: args.restart_cost.unwrap_or(RESTART_COST_S),
        checkpoint_every_s: args.checkpoint_every,
        jobs_drawn: DRAWS,
    })
}

/// `profile show`'s line of a profile's spot values.
pub fn profile_line(s: &loggops_profile::SpotPrices) -> String {
    if s.is_empty() {
        return "spot: not recorded (a run prices spot only with a spot price and an interruption \
                rate: --spot-price, --spot-interruptions; nothing is assumed)"
            .into();
    }
    let price = s.usd_per_node_hour.map_or("price unknown".into(), |p| {
        format!("{} per node-hour", loggops_report::fmt_usd(p))
    });
    let rate = s.interruptions_per_node_hour.map_or(
        "interruption rate unknown (spot is not priced without one)".into(),
        |r| {
            if r > 0.0 {
                format!(
                    "{} interruptions per node-hour (one per {} per node)",
                    loggops_report::fmt_rate(r),
                    loggops_report::spot::fmt_secs(3600.0 / r)
                )
            } else {
                "never interrupted (rate 0)".into()
            }
        },
    );
    let from = match (s.source.as_str(), s.date.as_str()) {
        ("", "") => "source not recorded".to_string(),
        (src, "") => src.to_string(),
        ("", d) => format!("source not recorded, {d}"),
        (src, d) => format!("{src}, {d}"),
    };
    format!("spot: {price}, {rate} [{from}]")
}

/// `profile show --format json`'s `prices.spot` (`null` when none is recorded).
pub fn profile_json(s: &loggops_profile::SpotPrices) -> serde_json::Value {
    if s.is_empty() {
        return serde_json::Value::Null;
    }
    let opt = |v: &str| (!v.is_empty()).then(|| v.to_string());
    serde_json::json!({
        "usd_per_node_hour": s.usd_per_node_hour,
        "interruptions_per_node_hour": s.interruptions_per_node_hour,
        "mtbi_node_hours": s.interruptions_per_node_hour.filter(|r| *r > 0.0).map(|r| 1.0 / r),
        "source": opt(&s.source),
        "date": opt(&s.date),
    })
}

/// Jobs drawn per cell.
pub const DRAWS: u64 = 2000;

/// Why a system's spot is not priced (`None`: it is).
fn not_priced(p: &loggops_report::Prices, noisy: bool) -> Option<String> {
    let missing = match (p.spot_usd_per_node_hour, p.spot_interruptions_per_node_hour) {
        (Some(_), Some(_)) if noisy => return None,
        (Some(_), Some(_)) => {
            return Some(
                "a noiseless run: spot is priced over the run times of a noisy sweep (--noise)"
                    .into(),
            )
        }
        (Some(_), None) => "no interruption rate (--spot-interruptions or --spot-mtbi)",
        (None, Some(_)) => "no spot price (--spot-price)",
        (None, None) => {
            "no spot price and no interruption rate (--spot-price and --spot-interruptions, \
             or a profile with them)"
        }
    };
    Some(format!("{missing}; nothing is assumed"))
}

/// The spot job of `samples_s` (one cell's run times, s) at `nodes` nodes, `runs` runs.
fn row(
    samples_s: &[f64],
    nodes: u64,
    runs: f64,
    prices: &loggops_report::Prices,
    set: &loggops_report::spot::SpotSettings,
    seed: u64,
) -> loggops_report::spot::SpotRow {
    use loggops_report::spot::JobCost;
    let (price, rate) = (
        prices.spot_usd_per_node_hour.unwrap_or(0.0),
        prices.spot_interruptions_per_node_hour.unwrap_or(0.0),
    );
    let mean = samples_s.iter().sum::<f64>() / samples_s.len().max(1) as f64;
    let work = runs * mean;
    let lambda = job_rate_per_s(nodes, rate);
    let segments = set
        .checkpoint_every_s
        .is_none()
        .then(|| best_segments(work, set.checkpoint_s, set.restart_s, lambda));
    let tau = match segments {
        Some(k) => work / k as f64,
        None => set.checkpoint_every_s.unwrap_or(work),
    };
    let job = Job {
        nodes,
        runs: runs as u64,
        segments,
        tau_s: tau,
        checkpoint_s: set.checkpoint_s,
        restart_s: set.restart_s,
    };
    let closed = expected_time_s(work, tau, set.checkpoint_s, set.restart_s, lambda);
    let drawn = closed.is_finite()
        && closed <= MAX_SLOWDOWN * work.max(f64::MIN_POSITIVE)
        && lambda * closed <= MAX_INTERRUPTIONS;
    let d = if drawn {
        job_spot(samples_s, &job, rate, seed, set.jobs_drawn)
    } else {
        let (work_mean_s, work_p95_s) = work_only(samples_s, &job, seed, set.jobs_drawn);
        let t = closed.min(1e30);
        JobSpot {
            work_mean_s,
            work_p95_s,
            mean_time_s: t,
            p95_time_s: t,
            interruptions_mean: (lambda * t).min(1e30),
        }
    };
    let usd = |s: f64, p: f64| s / 3600.0 * nodes as f64 * p;
    let fixed = |p: Option<f64>| {
        p.map(|p| JobCost {
            usd_per_node_hour: p,
            mean_usd: usd(d.work_mean_s, p),
            p95_usd: usd(d.work_p95_s, p),
            mean_time_s: d.work_mean_s,
            p95_time_s: d.work_p95_s,
        })
    };
    loggops_report::spot::SpotRow {
        nodes,
        runs,
        work_s: work,
        on_demand: fixed(prices.on_demand_usd_per_node_hour),
        committed: fixed(prices.committed_usd_per_node_hour),
        spot: JobCost {
            usd_per_node_hour: price,
            mean_usd: usd(d.mean_time_s, price),
            p95_usd: usd(d.p95_time_s, price),
            mean_time_s: d.mean_time_s,
            p95_time_s: d.p95_time_s,
        },
        interruptions_mean: d.interruptions_mean,
        checkpoint_every_s: tau,
        young_s: young_tau_s(set.checkpoint_s, lambda),
        daly_s: daly_tau_s(set.checkpoint_s, lambda),
        closed_form_time_s: closed.min(1e30),
        drawn,
    }
}

/// The least node count at which spot's expected job cost reaches the compared price's by
/// the closed form, each run taking `run_s` and a job `runs_at(nodes)` runs; `None` below
/// 2^40 nodes.
pub fn stops_paying_closed_form(
    run_s: f64,
    runs_at: impl Fn(u64) -> f64,
    spot_price: f64,
    compared_price: f64,
    per_node_hour: f64,
    set: &loggops_report::spot::SpotSettings,
) -> Option<u64> {
    if compared_price <= 0.0 || run_s <= 0.0 {
        return None;
    }
    let ratio = |n: u64| {
        let work = runs_at(n).round().max(1.0) * run_s;
        let lambda = job_rate_per_s(n, per_node_hour);
        let tau = set
            .checkpoint_every_s
            .unwrap_or_else(|| best_tau_s(work, set.checkpoint_s, set.restart_s, lambda));
        let t = expected_time_s(work, tau, set.checkpoint_s, set.restart_s, lambda);
        spot_price * t / (compared_price * work)
    };
    if ratio(1) >= 1.0 {
        return Some(1);
    }
    let mut hi = 2u64;
    while ratio(hi) < 1.0 {
        if hi >= 1 << 40 {
            return None;
        }
        hi *= 2;
    }
    let mut lo = hi / 2; // ratio(lo) < 1 <= ratio(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ratio(mid) >= 1.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Computes the result's spot section (issue 47) from the result alone: per workload and
/// system, the verdict's noise mode at every node count run. Nothing without
/// [`loggops_report::Settings::spot`].
pub fn attach(result: &mut loggops_report::RunResult) {
    use loggops_report::spot::{SpotResult, SpotSystem};
    let plan = &result.plan;
    let Some(set) = plan.settings.spot.clone() else {
        return;
    };
    let mode = loggops_report::verdict::verdict_mode_of(&plan.noise_modes);
    let noisy = plan.settings.noise.is_some() && mode.is_some();
    let job = plan.settings.job.unwrap_or(loggops_report::Job::Runs(1));
    let mut systems = Vec::new();
    for w in &plan.workloads {
        for sys in &plan.systems {
            let p = &sys.prices;
            let mut out = SpotSystem {
                workload: w.name.clone(),
                system: sys.name.clone(),
                spot_usd_per_node_hour: p.spot_usd_per_node_hour,
                interruptions_per_node_hour: p.spot_interruptions_per_node_hour,
                source: p.spot_source.clone(),
                not_priced: not_priced(p, noisy),
                rows: Vec::new(),
                compared_with: None,
                pays_up_to_nodes: None,
                stops_paying_at_nodes: None,
                stops_paying_nodes_closed_form: None,
            };
            if out.not_priced.is_none() {
                let mut cells: Vec<&loggops_report::CellResult> = result
                    .cells
                    .iter()
                    .filter(|c| {
                        c.workload == w.name
                            && c.system == sys.name
                            && Some(c.noise_mode.as_str()) == mode
                            && !c.samples_ps.is_empty()
                    })
                    .collect();
                cells.sort_by_key(|c| c.nodes);
                for c in &cells {
                    let samples: Vec<f64> =
                        c.samples_ps.iter().map(|&p| p as f64 * 1e-12).collect();
                    let runs = job
                        .runs(c.nodes, c.noiseless_ps.unwrap_or(0) as f64)
                        .round()
                        .max(1.0);
                    // Keyed by the seed and the cell: cells draw apart from one another.
                    let seed =
                        plan.settings.seed ^ (c.id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    out.rows.push(row(&samples, c.nodes, runs, p, &set, seed));
                }
                let compared = p
                    .on_demand_usd_per_node_hour
                    .map(|x| ("on_demand", x))
                    .or(p.committed_usd_per_node_hour.map(|x| ("committed", x)));
                if let Some((name, price)) = compared {
                    out.compared_with = Some(name.into());
                    let cost = |r: &loggops_report::spot::SpotRow| {
                        if name == "on_demand" {
                            r.on_demand
                        } else {
                            r.committed
                        }
                        .map_or(f64::INFINITY, |j| j.mean_usd)
                    };
                    let stop = out.rows.iter().position(|r| r.spot.mean_usd >= cost(r));
                    out.stops_paying_at_nodes = stop.map(|i| out.rows[i].nodes);
                    let paying = stop.unwrap_or(out.rows.len());
                    out.pays_up_to_nodes = paying.checked_sub(1).map(|i| out.rows[i].nodes);
                    if let (Some(last), Some(c)) = (out.rows.last(), cells.last()) {
                        let run_s = last.work_s / last.runs;
                        let base = c.noiseless_ps.unwrap_or(0) as f64;
                        let base_nodes = c.nodes;
                        out.stops_paying_nodes_closed_form = stops_paying_closed_form(
                            run_s,
                            |n| match job {
                                // Runs worth H node-hours: as many as the noiseless run of the
                                // largest node count allows at n nodes.
                                loggops_report::Job::NodeHours(_) => {
                                    job.runs(base_nodes, base) * base_nodes as f64 / n as f64
                                }
                                loggops_report::Job::Runs(r) => r as f64,
                            },
                            p.spot_usd_per_node_hour.unwrap_or(0.0),
                            price,
                            p.spot_interruptions_per_node_hour.unwrap_or(0.0),
                            &set,
                        );
                    }
                }
            }
            systems.push(out);
        }
    }
    result.spot = Some(SpotResult {
        noise_mode: mode.unwrap_or("none").to_string(),
        systems,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Job durations take every time unit a simulation time takes, and minutes to days.
    #[test]
    fn job_durations_take_every_time_unit() {
        let cases = [
            ("30", 30.0),
            ("30s", 30.0),
            ("1500ms", 1.5),
            ("5us", 5e-6),
            ("5\u{3bc}s", 5e-6),
            ("250ns", 2.5e-7),
            ("2min", 120.0),
            ("500h", 1.8e6),
            ("1d", 86400.0),
        ];
        for (text, want) in cases {
            let got = parse_seconds(text).unwrap();
            assert_eq!(got, want, "{text}");
        }
        assert_eq!(
            parse_seconds("3fortnights").unwrap_err(),
            "`3fortnights`: unknown unit `fortnights` (ns, us, ms, s, min, h, d)"
        );
        assert_eq!(loggops_report::fmt_rate(mtbi_rate("500s").unwrap()), "7.2");
    }

    fn job(runs: u64, tau: f64) -> Job {
        Job {
            nodes: 1000,
            runs,
            tau_s: tau,
            segments: None,
            checkpoint_s: 10.0,
            restart_s: 60.0,
        }
    }

    /// Without interruptions a job is its work plus its checkpoints, drawn or closed.
    #[test]
    fn no_interruptions_is_work_plus_checkpoints() {
        let j = job(3600, 600.0);
        let closed = expected_time_s(3600.0, 600.0, 10.0, 60.0, 0.0);
        assert_eq!(closed, 3600.0 + 5.0 * 10.0);
        let drawn = draw_job_s(&[1.0], &j, 0.0, 1, 0);
        assert!((drawn - closed).abs() < 1e-6, "{drawn} {closed}");
    }

    /// The drawn jobs' mean is the closed form's (constant run times, 4000 jobs, fixed seed:
    /// within 3 standard errors).
    #[test]
    fn drawn_jobs_agree_with_the_closed_form() {
        let j = job(3600, 300.0);
        let lambda = job_rate_per_s(j.nodes, 0.002); // 2 per hour over the job
        let closed = expected_time_s(3600.0, 300.0, 10.0, 60.0, lambda);
        let t: Vec<f64> = (0..4000)
            .map(|i| draw_job_s(&[1.0], &j, lambda, 7, i))
            .collect();
        let mean = t.iter().sum::<f64>() / t.len() as f64;
        let var = t.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (t.len() - 1) as f64;
        let se = (var / t.len() as f64).sqrt();
        assert!(
            (mean - closed).abs() < 3.0 * se,
            "{mean} ± {se} against {closed}"
        );
        assert!(closed > 3600.0 + 11.0 * 10.0);
    }

    /// The numerical optimum is Daly's where δ ≪ M, and near Young's.
    #[test]
    fn best_tau_is_dalys() {
        let lambda = 1.0 / 3600.0;
        let best = best_tau_s(100.0 * 3600.0, 10.0, 60.0, lambda);
        let daly = daly_tau_s(10.0, lambda).unwrap();
        let young = young_tau_s(10.0, lambda).unwrap();
        assert!((best - daly).abs() < 0.05 * daly, "{best} {daly}");
        assert!((young - daly).abs() < 0.1 * daly, "{young} {daly}");
        assert_eq!(best_tau_s(10.0, 1.0, 1.0, 0.0), 10.0);
    }

    /// The mean spot time is the closed form's expectation given each drawn job's work, also
    /// where the interruptions are too rare to meet in the drawn jobs: a 63 us job on 4 nodes
    /// interrupted every 5 s per node with a 2 min restart (the drawn jobs' own mean was the
    /// work alone, and spot seemed to pay where by the closed form it never does).
    #[test]
    fn rare_interruptions_count_in_the_mean() {
        let j = Job {
            nodes: 4,
            segments: Some(1),
            checkpoint_s: 30.0,
            restart_s: 120.0,
            ..job(1, 63e-6)
        };
        let per_node_hour = 720.0;
        let lambda = job_rate_per_s(j.nodes, per_node_hour);
        let closed = expected_time_s(63e-6, 63e-6, 30.0, 120.0, lambda);
        assert!(closed > 50.0 * 63e-6, "{closed}");
        let d = job_spot(&[63e-6], &j, per_node_hour, 3, 2000);
        assert!(
            (d.mean_time_s - closed).abs() < 1e-9 * closed,
            "{d:?} {closed}"
        );
        assert_eq!(d.p95_time_s, 63e-6);
        let per_segment = (lambda * 63e-6).exp_m1();
        assert!((d.interruptions_mean - per_segment).abs() < 1e-9 * per_segment);
    }

    /// A job so long that running it without a checkpoint would never end (its expected time
    /// overflows) is checkpointed near Daly's interval: a job of 507.5 hours on 4 nodes, one
    /// interruption per 2 node-hours, δ 30 s, restart 120 s (once reported as "none" and
    /// 2.8e26 hours: `0 × ∞` for the full segments of one segment was a negative NaN).
    #[test]
    fn jobs_that_need_checkpoints_get_them() {
        let (work, lambda) = (507.5 * 3600.0, job_rate_per_s(4, 0.5));
        let tau = best_tau_s(work, 30.0, 120.0, lambda);
        let daly = daly_tau_s(30.0, lambda).unwrap();
        assert!((tau - daly).abs() < 0.05 * daly, "{tau} {daly}");
        let t = expected_time_s(work, tau, 30.0, 120.0, lambda);
        assert!(t.is_finite() && t < 1.5 * work, "{t}");
        assert_eq!(
            expected_time_s(work, work, 30.0, 120.0, lambda),
            f64::INFINITY
        );
    }

    /// A job much shorter than a checkpoint is not checkpointed (one segment), and a drawn job
    /// of the optimum's policy longer than the mean pays no extra checkpoint.
    #[test]
    fn short_jobs_are_not_checkpointed() {
        // 1000 runs of 63 us on 4 nodes, one interruption per 50 node-hours, δ 30 s, restart
        // 120 s: a search over τ ended on τ = work/2, one 30 s checkpoint in a 63 ms job.
        let lambda = job_rate_per_s(4, 0.02);
        assert_eq!(best_segments(0.063, 30.0, 120.0, lambda), 1);
        assert_eq!(best_tau_s(0.063, 30.0, 120.0, lambda), 0.063);
        let t = expected_time_s(0.063, 0.063, 30.0, 120.0, lambda);
        assert!(t < 0.063 * 1.01, "{t}");
        let j = Job {
            segments: Some(1),
            ..job(1000, 0.063e-3 * 1000.0)
        };
        for i in 0..200 {
            let d = draw_job(&[0.05e-3, 0.08e-3], &j, 0.0, 5, i);
            assert_eq!(d.time_s, d.work_s, "job {i}");
        }
        // Long jobs: the count's optimum is within a segment of the continuous one.
        let lambda = 1.0 / 3600.0;
        let k = best_segments(100.0 * 3600.0, 10.0, 60.0, lambda);
        let exact = |k: u64| expected_time_s(360_000.0, 360_000.0 / k as f64, 10.0, 60.0, lambda);
        assert!(exact(k) <= exact(k - 1) && exact(k) <= exact(k + 1), "{k}");
    }

    /// Draws are keyed: the same (seed, job) gives the same job in any order.
    #[test]
    fn draws_are_keyed() {
        let j = job(100, 30.0);
        let lambda = job_rate_per_s(j.nodes, 0.01);
        let a: Vec<f64> = (0..50)
            .map(|i| draw_job_s(&[1.0, 2.0], &j, lambda, 3, i))
            .collect();
        let b: Vec<f64> = (0..50)
            .rev()
            .map(|i| draw_job_s(&[1.0, 2.0], &j, lambda, 3, i))
            .collect();
        let b: Vec<f64> = b.into_iter().rev().collect();
        assert_eq!(a, b);
    }
}
