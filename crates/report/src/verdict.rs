//! The answer in one place: per workload and system, at the largest node count, how much
//! slower and how much more expensive noise makes a run, and why; and, with several
//! systems, how they rank.
//!
//! Every number is derived from the [`RunResult`] alone ([`facts`] per cell, [`verdicts`] for
//! the cells the verdict speaks of), so the table, the JSON and CSV outputs and the HTML
//! report say the same:
//!
//! * **slowdown**: mean / noiseless time, with the image of the mean's 95 % CI; when that
//!   interval holds 1× but the median's exact 95 % CI lies wholly on one side of the
//!   noiseless time (a heavy tail widens the mean's), the sentence gives the median's ratio
//!   and both intervals instead of "no slower";
//! * **extra cost per run**: (mean − noiseless) × nodes × price per node-hour, on demand and
//!   committed, with its 95 % CI; **per job** ([`Job`]): times the job's runs;
//! * **why**: the part with the largest share of the extra time on the critical paths of the
//!   attributed repetitions ([`crate::why`]);
//! * **ranking** ([`Rank`]): within every (workload, nodes, noise mode) run on several
//!   systems, by mean time and by mean on-demand cost per run (1 = best), with each system's
//!   ratio to the best.
//!
//! The verdict's cell of a workload and system is the one with the noise mode that has all
//! the noise the sweep ran (`os+net`, else the last noisy mode of `--noise-mode`) at the
//! largest node count that ran.

use crate::cell::Cell;
use crate::fmt::{fmt_time_ps_f64, signed_time, signed_usd};
use crate::model::{Job, RunResult};
use crate::why::{ExtraTime, PARTS};

/// How a cell ranks among the systems of its (workload, nodes, noise mode).
#[derive(Debug, Clone, PartialEq)]
pub struct Rank {
    /// Systems in the group.
    pub of: usize,
    /// 1 = the fastest by mean time.
    pub by_time: usize,
    /// Mean time / the fastest system's mean time.
    pub time_ratio: f64,
    /// The fastest system.
    pub fastest: String,
    /// This system's mean time minus the fastest's, paired by repetition (`None` for the
    /// fastest itself).
    pub vs_fastest: Option<crate::paired::Paired>,
    /// 1 = the cheapest by mean on-demand cost per run (`None` without an on-demand price).
    pub by_cost: Option<usize>,
    /// Systems in the group with an on-demand price (those `by_cost` ranks).
    pub priced: usize,
    pub cost_ratio: Option<f64>,
    pub cheapest: Option<String>,
}

/// Extra cost of noise for one price kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Extra {
    /// USD per node-hour.
    pub price: f64,
    /// (mean − noiseless) USD per run, and its 95 % CI.
    pub per_run: f64,
    pub per_run_ci95: Option<(f64, f64)>,
    /// Per job (with `--job-runs` / `--job-node-hours`).
    pub per_job: Option<f64>,
}

/// Why the cell's runs are slower: the main part of the attributed repetitions' extra time.
#[derive(Debug, Clone, PartialEq)]
pub struct Why {
    pub extra: ExtraTime,
    /// Index into [`PARTS`] of the part with the largest share, and that share (`None` when
    /// the attributed repetitions are no slower than the noiseless run).
    pub main: Option<(usize, f64)>,
    /// The repetitions attributed (`0-3`).
    pub reps: String,
}

/// What the outputs say of one cell beyond its statistics.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Facts {
    /// Mean / noiseless and its 95 % CI.
    pub slowdown: Option<f64>,
    pub slowdown_ci95: Option<(f64, f64)>,
    pub on_demand: Option<Extra>,
    pub committed: Option<Extra>,
    /// Runs per job.
    pub job_runs: Option<f64>,
    pub rank: Option<Rank>,
    pub why: Option<Why>,
    /// The verdict's sentence, for the cells the verdict speaks of.
    pub verdict: Option<String>,
}

/// The noise mode the verdict speaks of: `os+net`, else the last noisy mode of the sweep.
pub fn verdict_mode(run: &RunResult) -> Option<&str> {
    verdict_mode_of(&run.plan.noise_modes)
}

/// [`verdict_mode`] of a list of noise modes.
pub fn verdict_mode_of(modes: &[String]) -> Option<&str> {
    if modes.iter().any(|m| m == "os+net") {
        return Some("os+net");
    }
    modes
        .iter()
        .rev()
        .find(|m| m.as_str() != "none")
        .map(String::as_str)
}

/// The indices of the cells the verdict speaks of: per workload and system, the verdict mode
/// at the largest node count that ran.
pub fn verdict_cells(run: &RunResult) -> Vec<usize> {
    let Some(mode) = verdict_mode(run) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for w in &run.plan.workloads {
        for s in &run.plan.systems {
            let best = run
                .cells
                .iter()
                .enumerate()
                .filter(|(_, c)| c.workload == w.name && c.system == s.name && c.noise_mode == mode)
                .max_by_key(|(_, c)| c.nodes)
                .map(|(i, _)| i);
            out.extend(best);
        }
    }
    out
}

/// Ordinal for people: 1st, 2nd, 3rd, 4th, 11th, 21st.
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A ratio as people read a slowdown: three decimals near 1 (`1.006×`), else two.
pub fn fmt_times(r: f64) -> String {
    times_with(r, times_decimals(r))
}

fn times_with(r: f64, decimals: usize) -> String {
    if r.is_finite() {
        format!("{r:.decimals$}×")
    } else {
        "-".into()
    }
}

/// The decimals of [`fmt_times`]: three within 10 % of 1×, two below 100×, none above.
fn times_decimals(r: f64) -> usize {
    if !r.is_finite() {
        0
    } else if (r - 1.0).abs() < 0.1 {
        3
    } else if r < 100.0 {
        2
    } else {
        0
    }
}

/// An interval of ratios, both ends with the same decimals (those of the finer end):
/// `1.030×–1.170×`, never `1.030×–1.17×`.
pub fn fmt_times_interval(lo: f64, hi: f64) -> String {
    let d = times_decimals(lo).max(times_decimals(hi));
    format!("{}–{}", times_with(lo, d), times_with(hi, d))
}

fn ranks(run: &RunResult, stats: &[Cell]) -> Vec<Option<Rank>> {
    let mut out = vec![None; run.cells.len()];
    let cells = &run.cells;
    let mut done = vec![false; cells.len()];
    for i in 0..cells.len() {
        if done[i] {
            continue;
        }
        let group: Vec<usize> = (0..cells.len())
            .filter(|&j| {
                cells[j].workload == cells[i].workload
                    && cells[j].nodes == cells[i].nodes
                    && cells[j].noise_mode == cells[i].noise_mode
            })
            .collect();
        for &j in &group {
            done[j] = true;
        }
        if group.len() < 2 {
            continue;
        }
        let mean = |j: usize| stats[j].summary.mean;
        let cost = |j: usize| {
            stats[j]
                .cost
                .as_ref()
                .and_then(|c| c.on_demand.as_ref())
                .map(|p| p.usd_per_run_mean)
        };
        let mut by_time = group.clone();
        by_time.sort_by(|&a, &b| mean(a).total_cmp(&mean(b)).then(a.cmp(&b)));
        let fastest = by_time[0];
        let mut by_cost: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&j| cost(j).is_some())
            .collect();
        by_cost.sort_by(|&a, &b| {
            cost(a)
                .unwrap_or(f64::INFINITY)
                .total_cmp(&cost(b).unwrap_or(f64::INFINITY))
                .then(a.cmp(&b))
        });
        for &j in &group {
            let t = by_time.iter().position(|&k| k == j).expect("in the group") + 1;
            let c = by_cost.iter().position(|&k| k == j).map(|p| p + 1);
            let cheapest = by_cost.first().copied();
            out[j] = Some(Rank {
                of: group.len(),
                by_time: t,
                time_ratio: mean(j) / mean(fastest),
                fastest: cells[fastest].system.clone(),
                vs_fastest: (j != fastest)
                    .then(|| crate::paired::paired(&cells[j], &cells[fastest]))
                    .flatten(),
                by_cost: c,
                priced: by_cost.len(),
                cost_ratio: match (cost(j), cheapest.and_then(cost)) {
                    (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                    _ => None,
                },
                cheapest: cheapest.map(|k| cells[k].system.clone()),
            });
        }
    }
    out
}

/// The facts of every cell, in the order of [`RunResult::cells`] (`stats` is
/// [`RunResult::cells_summarised`]).
pub fn facts(run: &RunResult, stats: &[Cell]) -> Vec<Facts> {
    let ranks = ranks(run, stats);
    let job = run.plan.settings.job;
    let mut out: Vec<Facts> = run
        .cells
        .iter()
        .zip(stats)
        .zip(ranks)
        .map(|((c, s), rank)| {
            let base = c.noiseless_ps.filter(|&b| b > 0).map(|b| b as f64);
            let noisy = c.noise_mode != "none";
            let slowdown = base.filter(|_| noisy).map(|b| s.summary.mean / b);
            let slowdown_ci95 = base
                .filter(|_| noisy)
                .and_then(|b| s.summary.mean_ci95.map(|i| (i.lo / b, i.hi / b)));
            let model = run.cost_model(c);
            let job_runs = job
                .zip(base)
                .map(|(j, b)| j.runs(c.nodes, model.run_time_ps(b)));
            let extra = |price: Option<f64>| -> Option<Extra> {
                let (p, b) = (price?, base?);
                if !noisy {
                    return None;
                }
                let usd = |t: f64| model.usd_per_run(p, t) - model.usd_per_run(p, b);
                let per_run = usd(s.summary.mean);
                Some(Extra {
                    price: p,
                    per_run,
                    per_run_ci95: s.summary.mean_ci95.map(|i| (usd(i.lo), usd(i.hi))),
                    per_job: job_runs.map(|r| r * per_run),
                })
            };
            let why = c.why.as_ref().filter(|_| noisy).and_then(|w| {
                let extra = w.extra()?;
                let main = extra
                    .main_part()
                    .and_then(|p| extra.share(p).map(|s| (p, s)));
                Some(Why {
                    extra,
                    main,
                    reps: w.reps_text(),
                })
            });
            Facts {
                slowdown,
                slowdown_ci95,
                on_demand: extra(model.on_demand_usd_per_node_hour),
                committed: extra(model.committed_usd_per_node_hour),
                job_runs: job_runs.filter(|_| noisy),
                rank,
                why,
                verdict: None,
            }
        })
        .collect();
    for i in verdict_cells(run) {
        let text = sentence(run, i, &stats[i], &out[i], job);
        out[i].verdict = Some(text);
    }
    out
}

/// Whether `system` ran with polled MPI progress (its runs with rendezvous messages are not
/// attributed).
fn polled(run: &RunResult, system: &str) -> bool {
    run.plan
        .systems
        .iter()
        .any(|s| s.name == system && s.mpi_progress.as_deref() == Some("polled"))
}

/// The verdict's sentence for cell `i`.
fn sentence(run: &RunResult, i: usize, s: &Cell, f: &Facts, job: Option<Job>) -> String {
    let c = &run.cells[i];
    let mut t = format!(
        "{} node{}, {}",
        c.nodes,
        if c.nodes == 1 { "" } else { "s" },
        c.system
    );
    if run.plan.workloads.len() > 1 {
        t = format!("{}, {t}", c.workload);
    }
    match (f.slowdown, c.noiseless_ps) {
        (Some(x), Some(b)) => {
            let mean_undecided = f
                .slowdown_ci95
                .is_some_and(|(lo, hi)| lo <= 1.0 && 1.0 <= hi);
            // A heavy tail widens the mean's interval past 1× while the median's (exact,
            // distribution-free) lies wholly on one side: the median then decides.
            let by_median = s
                .summary
                .median_ci95
                .as_ref()
                .map(|m| (m.lo as f64 / b as f64, m.hi as f64 / b as f64))
                .filter(|&(lo, hi)| mean_undecided && (lo > 1.0 || hi < 1.0));
            if let Some((lo, hi)) = by_median {
                let m = s.summary.median / b as f64;
                let (how, shown) = if lo > 1.0 {
                    ("slower", m)
                } else {
                    ("faster", 1.0 / m)
                };
                t.push_str(&format!(
                    ": {} {how} by the median (median {} against {} noiseless; 95 % CI {}; \
                     the mean, {}, 95 % CI {}, is widened by a heavy tail)",
                    fmt_times(shown),
                    fmt_time_ps_f64(s.summary.median),
                    fmt_time_ps_f64(b as f64),
                    fmt_times_interval(lo, hi),
                    fmt_time_ps_f64(s.summary.mean),
                    fmt_times_interval(
                        f.slowdown_ci95.map_or(x, |c| c.0),
                        f.slowdown_ci95.map_or(x, |c| c.1)
                    ),
                ));
            } else {
                if mean_undecided {
                    t.push_str(": no slower than noiseless within the 95 % CI");
                } else {
                    let how = if x >= 1.0 { "slower" } else { "faster" };
                    let shown = if x >= 1.0 { x } else { 1.0 / x };
                    // Below 0.1 % a ratio rounds to 1.000×: say the percentage.
                    if (shown - 1.0).abs() < 0.0005 {
                        t.push_str(&format!(": {:.2} % {how}", 100.0 * (shown - 1.0)));
                    } else {
                        t.push_str(&format!(": {} {how}", fmt_times(shown)));
                    }
                }
                let ci = match f.slowdown_ci95 {
                    Some((lo, hi)) => format!("; 95 % CI {}", fmt_times_interval(lo, hi)),
                    None => String::new(),
                };
                t.push_str(&format!(
                    " (mean {} against {} noiseless{ci})",
                    fmt_time_ps_f64(s.summary.mean),
                    fmt_time_ps_f64(b as f64)
                ));
            }
        }
        _ => t.push_str(&format!(": mean {}", fmt_time_ps_f64(s.summary.mean))),
    }
    match (&f.on_demand, &f.committed) {
        (Some(e), _) | (None, Some(e)) => {
            let kind = if f.on_demand.is_some() {
                "on demand"
            } else {
                "committed"
            };
            t.push_str(&format!(", {} per run {kind}", signed_usd(e.per_run)));
            if let (Some(j), Some(runs)) = (e.per_job, job) {
                t.push_str(&format!(
                    " ({} per job of {})",
                    signed_usd(j),
                    describe_job(runs, f)
                ));
            }
        }
        (None, None) => {
            let priced = s
                .cost
                .as_ref()
                .is_some_and(|k| k.on_demand.is_some() || k.committed.is_some());
            if !priced {
                t.push_str(", no on-demand or committed price (the profile has none)");
            } else if c.noiseless_ps == Some(0) {
                t.push_str(", nothing to price (the noiseless run takes 0ps)");
            }
        }
    }
    match &f.why {
        Some(w) => match w.main {
            // Over 100 %: the path moved, and other parts shrank; say by how much.
            Some((p, share)) if share > 1.0 => t.push_str(&format!(
                "; {} on the critical path adds {}, {:.0} % of the extra time, while the other \
                 parts shrink by {} (repetitions {} attributed)",
                PARTS[p].2,
                fmt_time_ps_f64(w.extra.extra_ps[p]),
                100.0 * share,
                fmt_time_ps_f64(w.extra.extra_ps[p] - w.extra.total_ps),
                w.reps
            )),
            Some((p, share)) => t.push_str(&format!(
                "; {:.0} % of the extra time is {} on the critical path (repetitions {} \
                 attributed)",
                100.0 * share,
                PARTS[p].2,
                w.reps
            )),
            None => t.push_str(&format!(
                "; the attributed repetitions ({}) are no slower than the noiseless run",
                w.reps
            )),
        },
        None if run.plan.settings.why_reps == 0 && c.why.is_none() => {
            t.push_str("; why: not attributed (--why-reps 0)")
        }
        None if polled(run, &c.system) => t.push_str(
            "; why: not attributed (with polled MPI progress the critical path does not yet \
             follow a rendezvous message's wait for a calc)",
        ),
        None => {}
    }
    if let Some(r) = &f.rank {
        let time = if r.by_time == 1 {
            format!("fastest of {} systems", r.of)
        } else {
            format!(
                "{} fastest of {} ({} the time of {}{})",
                ordinal(r.by_time),
                r.of,
                fmt_times(r.time_ratio),
                r.fastest,
                r.vs_fastest.map(describe_paired).unwrap_or_default()
            )
        };
        t.push_str(&format!("; {time}"));
        match (r.by_cost, r.cost_ratio, &r.cheapest) {
            (Some(1), _, _) if r.priced == 1 => {
                t.push_str(", the only one with an on-demand price")
            }
            (Some(1), _, _) => t.push_str(&format!(
                ", cheapest per run on demand of the {} priced",
                r.priced
            )),
            (Some(k), Some(x), Some(name)) => t.push_str(&format!(
                ", {} cheapest per run on demand of the {} priced ({} the cost of {name})",
                ordinal(k),
                r.priced,
                fmt_times(x)
            )),
            _ => {}
        }
    }
    if let Some(spot) = crate::spot::verdict_clause(run, &c.workload, &c.system, c.nodes) {
        t.push_str(&format!("; {spot}"));
    }
    t
}

/// `: +2.1us, 95 % CI +1.9us to +2.3us paired over 32 repetitions`, or that the paired
/// interval holds 0.
fn describe_paired(p: crate::paired::Paired) -> String {
    let Some(ci) = p.diff_ci95_ps else {
        return String::new();
    };
    let range = format!(
        "95 % CI {} paired over {} repetitions",
        crate::paired::span(ci),
        p.reps
    );
    if p.differs() == Some(true) {
        format!(": {}, {range}", signed_time(p.diff_mean_ps))
    } else {
        format!(": no clear difference, {range}")
    }
}

fn describe_job(job: Job, f: &Facts) -> String {
    match job {
        Job::Runs(_) => job.describe(),
        Job::NodeHours(h) => format!("{h} node-hours ({:.0} runs)", f.job_runs.unwrap_or(0.0)),
    }
}

/// The verdict lines of a run (one per workload and system), for under the table.
pub fn render_verdicts(run: &RunResult, facts: &[Facts]) -> String {
    let lines: Vec<&str> = facts.iter().filter_map(|f| f.verdict.as_deref()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mode = verdict_mode(run).unwrap_or("");
    let mut out = format!("Verdict (noise {mode}, largest node count):\n");
    for l in lines {
        out.push_str("  ");
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(ordinal(1), "1st");
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(3), "3rd");
        assert_eq!(ordinal(11), "11th");
        assert_eq!(ordinal(22), "22nd");
        assert_eq!(fmt_times(1.0064), "1.006×");
        assert_eq!(fmt_times(1.93), "1.93×");
        assert_eq!(fmt_times(154.2), "154×");
    }
}
