//! Issue 47: spot and preemptible capacity. What a *job* of many runs costs when its nodes can
//! be taken away: the job's work is drawn from the simulated run-time distribution (noise
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

/// A job: `runs` runs on `nodes` nodes, checkpointed every `tau_s` seconds of work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Job {
    pub nodes: u64,
    pub runs: u64,
    pub tau_s: f64,
    pub checkpoint_s: f64,
    pub restart_s: f64,
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
    full * segment_time_s(tau + checkpoint_s, lambda, restart_s)
        + segment_time_s(last, lambda, restart_s)
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

/// The τ that minimises [`expected_time_s`] (golden-section search on a log scale between a
/// millisecond and the whole work); the whole work without interruptions.
pub fn best_tau_s(work_s: f64, checkpoint_s: f64, restart_s: f64, lambda: f64) -> f64 {
    if lambda <= 0.0 || work_s <= 0.0 {
        return work_s;
    }
    let f = |x: f64| expected_time_s(work_s, x.exp(), checkpoint_s, restart_s, lambda);
    let (mut a, mut b) = (1e-3f64.ln(), work_s.max(1e-3).ln());
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
    for _ in 0..200 {
        if f(c) < f(d) {
            b = d;
        } else {
            a = c;
        }
        c = b - r * (b - a);
        d = a + r * (b - a);
    }
    ((a + b) / 2.0).exp()
}

/// One job's wall time, drawn: its runs drawn from `samples_s` (with replacement) and its
/// interruptions as exponential gaps at `lambda` per second, all keyed by (seed, job).
pub fn draw_job_s(samples_s: &[f64], job: &Job, lambda: f64, seed: u64, index: u64) -> f64 {
    let mut s = CounterRng::new(seed, index).stream(SPOT_STREAM);
    let n = samples_s.len();
    let work: f64 = if n == 0 {
        0.0
    } else {
        (0..job.runs)
            .map(|_| samples_s[((s.next_f64() * n as f64) as usize).min(n - 1)])
            .sum()
    };
    let gap = |s: &mut loggops_noise::rng::Stream| {
        if lambda > 0.0 {
            -(1.0 - s.next_f64()).ln() / lambda
        } else {
            f64::INFINITY
        }
    };
    let tau = job.tau_s.max(f64::MIN_POSITIVE);
    let (mut t, mut left) = (0.0, work);
    let mut next = gap(&mut s);
    while left > 1e-12 * work.max(1.0) {
        let w = tau.min(left);
        let seg = if left > tau { w + job.checkpoint_s } else { w };
        if next >= seg {
            t += seg;
            next -= seg;
            left -= w;
        } else {
            t += next + job.restart_s;
            next = gap(&mut s);
        }
    }
    t
}

/// A job's time and cost under interruptions, over `draws` drawn jobs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobSpot {
    pub mean_time_s: f64,
    pub p95_time_s: f64,
    pub mean_usd: f64,
    pub p95_usd: f64,
}

/// The distribution of a job's time and spot cost (`price` USD per node-hour).
pub fn job_spot(
    samples_s: &[f64],
    job: &Job,
    per_node_hour: f64,
    price: f64,
    seed: u64,
    draws: u64,
) -> JobSpot {
    let lambda = job_rate_per_s(job.nodes, per_node_hour);
    let mut t: Vec<f64> = (0..draws)
        .map(|i| draw_job_s(samples_s, job, lambda, seed, i))
        .collect();
    t.sort_by(f64::total_cmp);
    let mean = t.iter().sum::<f64>() / t.len().max(1) as f64;
    let p95 = t
        .get(((t.len() as f64 * 0.95).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0.0);
    let usd = |s: f64| s / 3600.0 * job.nodes as f64 * price;
    JobSpot {
        mean_time_s: mean,
        p95_time_s: p95,
        mean_usd: usd(mean),
        p95_usd: usd(p95),
    }
}

/// `--spot-*`, `--checkpoint-*`, `--restart-cost`: spot capacity (issue 47).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SpotArgs {
    /// Spot (preemptible) price in USD per node-hour, e.g. 0.70. Spot is priced only when
    /// both this and an interruption rate (--spot-interruptions or --spot-mtbi) are given:
    /// nothing is assumed.
    #[arg(long, value_name = "USD", help_heading = "Spot capacity")]
    pub spot_price: Option<f64>,
    /// Where the spot price and rate come from, and when (printed with them), e.g. "AWS Spot
    /// Instance Advisor, c5n.18xlarge us-east-1, 2026-11-20".
    #[arg(long, value_name = "TEXT", help_heading = "Spot capacity")]
    pub spot_source: Option<String>,
    /// Interruptions per node-hour (a node's spot capacity taken away), e.g. 0.002.
    #[arg(
        long,
        value_name = "RATE",
        conflicts_with = "spot_mtbi",
        help_heading = "Spot capacity"
    )]
    pub spot_interruptions: Option<f64>,
    /// Mean time between interruptions of one node (the rate is its inverse), e.g. 500h.
    #[arg(long, value_name = "DURATION", help_heading = "Spot capacity")]
    pub spot_mtbi: Option<String>,
    /// Checkpoint every this much work (default: the best interval for each node count).
    #[arg(long, value_name = "DURATION", help_heading = "Spot capacity")]
    pub checkpoint_every: Option<String>,
    /// Time to write one checkpoint.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "30s",
        help_heading = "Spot capacity"
    )]
    pub checkpoint_cost: String,
    /// Time lost to restart after an interruption (new nodes, reload the checkpoint).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "120s",
        help_heading = "Spot capacity"
    )]
    pub restart_cost: String,
}

/// Seconds of a duration flag (`30s`, `2min`, `500h`, or bare seconds).
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a duration such as 30s, 2min or 500h"))?;
    let mult = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        u => return Err(format!("`{s}`: unknown unit `{u}` (s, min, h, d)")),
    };
    let secs = v * mult;
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("`{s}`: a duration is finite and not negative"));
    }
    Ok(secs)
}

/// The spot settings in force: price and interruption rate known.
#[derive(Clone, Debug, PartialEq)]
pub struct Spot {
    pub price: f64,
    pub per_node_hour: f64,
    pub source: Option<String>,
    pub tau_s: Option<f64>,
    pub checkpoint_s: f64,
    pub restart_s: f64,
}

impl SpotArgs {
    /// `None` unless both the price and a rate are known.
    pub fn spot(&self) -> anyhow::Result<Option<Spot>> {
        let rate = match (&self.spot_interruptions, &self.spot_mtbi) {
            (Some(r), _) => Some(*r),
            (None, Some(m)) => {
                let h = parse_seconds(m).map_err(anyhow::Error::msg)? / 3600.0;
                anyhow::ensure!(h > 0.0, "--spot-mtbi {m}: must be longer than 0");
                Some(1.0 / h)
            }
            (None, None) => None,
        };
        let (Some(price), Some(rate)) = (self.spot_price, rate) else {
            return Ok(None);
        };
        anyhow::ensure!(
            price.is_finite() && price >= 0.0,
            "--spot-price {price}: a price is finite and not negative"
        );
        anyhow::ensure!(
            rate.is_finite() && rate >= 0.0,
            "--spot-interruptions {rate}: a rate is finite and not negative"
        );
        Ok(Some(Spot {
            price,
            per_node_hour: rate,
            source: self.spot_source.clone(),
            tau_s: self
                .checkpoint_every
                .as_deref()
                .map(parse_seconds)
                .transpose()
                .map_err(anyhow::Error::msg)?,
            checkpoint_s: parse_seconds(&self.checkpoint_cost).map_err(anyhow::Error::msg)?,
            restart_s: parse_seconds(&self.restart_cost).map_err(anyhow::Error::msg)?,
        }))
    }
}

/// Jobs drawn per cell.
pub const DRAWS: u64 = 2000;

/// One line of the spot table: a (workload, system, nodes) cell priced three ways.
#[derive(Clone, Debug, PartialEq)]
pub struct SpotRow {
    pub workload: String,
    pub system: String,
    pub nodes: u64,
    pub runs: f64,
    /// Work of the job without interruptions, s (runs × mean run time).
    pub work_s: f64,
    pub on_demand_usd: Option<f64>,
    pub committed_usd: Option<f64>,
    pub spot: JobSpot,
    pub tau_s: f64,
    pub daly_tau_s: Option<f64>,
    pub young_tau_s: Option<f64>,
    /// Expected time by the closed form at `tau_s` (mean run time, no noise in it).
    pub closed_time_s: f64,
}

/// The spot table of a result: per workload, system and node count, the verdict's noise mode.
pub fn rows(run: &loggops_report::RunResult, spot: &Spot, seed: u64) -> Vec<SpotRow> {
    let plan = &run.plan;
    let Some(mode) = loggops_report::verdict::verdict_mode_of(&plan.noise_modes) else {
        return Vec::new();
    };
    let job = plan.settings.job.unwrap_or(loggops_report::Job::Runs(1));
    let mut out = Vec::new();
    for c in run.cells.iter().filter(|c| c.noise_mode == mode) {
        let Some(sys) = plan.systems.iter().find(|s| s.name == c.system) else {
            continue;
        };
        if c.samples_ps.is_empty() {
            continue;
        }
        let samples: Vec<f64> = c.samples_ps.iter().map(|&p| p as f64 * 1e-12).collect();
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        let runs = job
            .runs(c.nodes, c.noiseless_ps.unwrap_or(0) as f64)
            .round()
            .max(1.0);
        let work = runs * mean;
        let lambda = job_rate_per_s(c.nodes, spot.per_node_hour);
        let tau = spot
            .tau_s
            .unwrap_or_else(|| best_tau_s(work, spot.checkpoint_s, spot.restart_s, lambda));
        let j = Job {
            nodes: c.nodes,
            runs: runs as u64,
            tau_s: tau,
            checkpoint_s: spot.checkpoint_s,
            restart_s: spot.restart_s,
        };
        let usd = |p: Option<f64>| p.map(|p| work / 3600.0 * c.nodes as f64 * p);
        out.push(SpotRow {
            workload: c.workload.clone(),
            system: c.system.clone(),
            nodes: c.nodes,
            runs,
            work_s: work,
            on_demand_usd: usd(sys.prices.on_demand_usd_per_node_hour),
            committed_usd: usd(sys.prices.committed_usd_per_node_hour),
            spot: job_spot(&samples, &j, spot.per_node_hour, spot.price, seed, DRAWS),
            tau_s: tau,
            daly_tau_s: daly_tau_s(spot.checkpoint_s, lambda),
            young_tau_s: young_tau_s(spot.checkpoint_s, lambda),
            closed_time_s: expected_time_s(work, tau, spot.checkpoint_s, spot.restart_s, lambda),
        });
    }
    out
}

fn secs(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.2} h", s / 3600.0)
    }
}

/// The spot section under the verdict.
pub fn text(rows: &[SpotRow], spot: &Spot) -> String {
    use loggops_report::fmt::fmt_usd;
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Spot capacity (${}/node-hour, {} interruptions per node-hour{}; checkpoint {}, \
         restart {}; {} jobs drawn per cell):",
        spot.price,
        spot.per_node_hour,
        spot.source
            .as_deref()
            .map(|x| format!(", {x}"))
            .unwrap_or_default(),
        secs(spot.checkpoint_s),
        secs(spot.restart_s),
        DRAWS
    );
    let money = |v: Option<f64>| v.map_or("-".to_string(), fmt_usd);
    let mut table = vec![[
        "workload".to_string(),
        "system".into(),
        "nodes".into(),
        "runs".into(),
        "on-demand".into(),
        "committed".into(),
        "spot mean".into(),
        "spot p95".into(),
        "time no int.".into(),
        "time spot".into(),
        "closed form".into(),
        "best tau".into(),
    ]];
    for r in rows {
        table.push([
            r.workload.clone(),
            r.system.clone(),
            r.nodes.to_string(),
            format!("{}", r.runs),
            money(r.on_demand_usd),
            money(r.committed_usd),
            fmt_usd(r.spot.mean_usd),
            fmt_usd(r.spot.p95_usd),
            secs(r.work_s),
            secs(r.spot.mean_time_s),
            secs(r.closed_time_s),
            format!(
                "{}{}",
                secs(r.tau_s),
                match (r.daly_tau_s, r.young_tau_s) {
                    (Some(d), Some(y)) => format!(" (Daly {}, Young {})", secs(d), secs(y)),
                    _ => String::new(),
                }
            ),
        ]);
    }
    let w: Vec<usize> = (0..12)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &table {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < 2 {
                    format!("{c:<w$}", w = w[i])
                } else {
                    format!("{c:>w$}", w = w[i])
                }
            })
            .collect();
        let _ = writeln!(s, "  {}", line.join("  "));
    }
    // Where spot stops paying: per workload and system, the least node count at which the
    // spot job's expected cost exceeds the on-demand job's.
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        let k = (r.workload.as_str(), r.system.as_str());
        if seen.contains(&k) {
            continue;
        }
        seen.push(k);
        let mine: Vec<&SpotRow> = rows
            .iter()
            .filter(|x| (x.workload.as_str(), x.system.as_str()) == k)
            .collect();
        let stop = mine
            .iter()
            .find(|x| x.on_demand_usd.is_some_and(|od| x.spot.mean_usd >= od));
        let line = match (stop, mine.iter().all(|x| x.on_demand_usd.is_none())) {
            (_, true) => "no on-demand price to compare with".to_string(),
            (Some(x), _) => format!("spot stops paying at {} nodes", x.nodes),
            (None, _) => format!(
                "spot pays at every node count run (up to {})",
                mine.last().map_or(0, |x| x.nodes)
            ),
        };
        let _ = writeln!(s, "  {}, {}: {line}", k.0, k.1);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(runs: u64, tau: f64) -> Job {
        Job {
            nodes: 1000,
            runs,
            tau_s: tau,
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
