//! `--dry-run` (issue 42): the plan of a sweep, each cell with its size, engine and
//! repetitions, the estimated CPU time and peak memory, and nothing run.
//!
//! The estimate needs only each schedule's rank and op counts (loaded as the run would load
//! them; generated collectives and rank-parametric schedules in O(ranks), explicit files by
//! parsing them). Events are about 1.5 per op (an op, and a message per send). Rates are the
//! ranges measured on the shipped collectives (BENCHMARKS.md) on 2 shared vCPUs, so the
//! figures tell minutes from hours, not more:
//!
//! * noiseless runs (the global engine): [`NOISELESS_EVENTS_PER_S`] events per second;
//! * noisy repetitions (the windowed engine, noise draws, OS detours): [`NOISY_EVENTS_PER_S`];
//! * repetitions whose critical path is attributed (`--why-reps`, `--critical-path`: the
//!   global engine with the attribution carried forward): [`ATTRIBUTED_EVENTS_PER_S`].
//!
//! Memory follows [`crate::budget`] (the engine's per-rank state, one noisy repetition in
//! flight per worker thread) plus the attribution's few KiB per rank
//! ([`loggops_explain::Carrier`]).

use std::fmt::Write as _;

use anyhow::Result;
use loggops_engine::Program as _;
use loggops_report::{Plan, RepsRule};

use crate::request::Request;
use crate::schedule::{self, with_program};

/// Events per second of a noiseless run, slowest and fastest measured.
pub const NOISELESS_EVENTS_PER_S: (f64, f64) = (20e6, 85e6);
/// Events per second of a noisy repetition.
pub const NOISY_EVENTS_PER_S: (f64, f64) = (8e6, 45e6);
/// Events per second of a repetition whose critical path is attributed.
pub const ATTRIBUTED_EVENTS_PER_S: (f64, f64) = (3e6, 12e6);

/// `19 s`, `4.2 min`, `3.1 h`.
fn fmt_secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

fn range(lo: f64, hi: f64) -> String {
    let (a, b) = (fmt_secs(lo), fmt_secs(hi));
    if a == b {
        a
    } else {
        format!("{a} to {b}")
    }
}

/// `1.07G`, `6.29M`, `3,200`.
fn count(n: f64) -> String {
    if n >= 1e9 {
        format!("{:.2}G", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if n >= 1e4 {
        format!("{:.0}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

/// `, and --output, --plot are not written (the plan is printed for people)` for the outputs
/// the command line names: a dry run is the command about to be run, with `--dry-run` added.
fn unwritten(o: &crate::request::Outputs) -> String {
    let mut given = Vec::new();
    if o.output.is_some() {
        given.push("--output");
    }
    if o.samples.is_some() {
        given.push("--samples");
    }
    if !o.plot.is_empty() {
        given.push("--plot");
    }
    if o.report.is_some() {
        given.push("--report");
    }
    let format = o.format != crate::cli::FormatArg::Human;
    if given.is_empty() && !format {
        return String::new();
    }
    let mut s = String::new();
    if !given.is_empty() {
        s = format!(" and {} not written", given.join(", "));
    }
    if format {
        s.push_str(" (the plan is printed for people, whatever --format)");
    }
    s
}

/// Receives from more peers than this make matching, not events, the cost of a run.
const FAN_IN_NOTE: usize = 64;

/// The most distinct peers one rank receives from, over up to 64 ranks spread over the
/// schedule (a dry run stays quick on 16K ranks).
fn widest_fan_in<P: loggops_engine::Program>(p: &P) -> usize {
    let n = p.num_ranks();
    let step = (n / 64).max(1);
    (0..n)
        .step_by(step as usize)
        .map(|r| {
            let mut peers: Vec<u32> = (0..p.num_ops(r))
                .map(|i| p.op(r, i))
                .filter(|op| op.kind == loggops_engine::OpKind::Recv)
                .map(|op| op.peer)
                .collect();
            peers.sort_unstable();
            peers.dedup();
            peers.len()
        })
        .max()
        .unwrap_or(0)
}

/// Prints the plan of the sweep and its estimates.
pub fn print(req: &Request, plan: &Plan) -> Result<()> {
    let (goals, ov, goal_opts) = (
        &req.inputs.goals,
        &req.inputs.params,
        &req.settings.goal_opts,
    );
    let noisy = plan.settings.noise.is_some();
    let threads = req.threads().max(1) as f64;
    let (first, max) = match plan.settings.reps {
        RepsRule::Single => (1, 1),
        RepsRule::Fixed { count } => (count, count),
        RepsRule::Auto { first, max, .. } => (first, max),
    };
    let why_reps = plan.settings.why_reps;
    let x = &req.settings.explain;
    let all_paths = x.critical_path.is_some() || x.sensitivity;
    let verdict_nodes = plan.nodes.iter().copied().max();
    let verdict_mode = loggops_report::verdict::verdict_mode_of(&plan.noise_modes);
    let mut s = String::new();
    let cells = plan.cells();
    let _ = writeln!(
        s,
        "dry run: {} workload(s) x {} system(s) x {} node count(s) x {} noise mode(s) = {} cells; \
         {}; {} worker thread(s); nothing is run{}",
        plan.workloads.len(),
        plan.systems.len(),
        plan.nodes.len().max(1),
        plan.noise_modes.len(),
        cells.len(),
        plan.settings.reps.describe(),
        threads as u64,
        unwritten(&req.outputs)
    );
    let _ = writeln!(s);
    let mut rows = vec![[
        "workload".to_string(),
        "system".into(),
        "nodes".into(),
        "noise".into(),
        "ops".into(),
        "events/run".into(),
        "engine".into(),
        "reps".into(),
        "CPU per rep".into(),
        "CPU".into(),
    ]];
    let (mut cpu_lo, mut cpu_hi) = (0f64, 0f64);
    let mut peak = 0u64;
    let mut fan_in = 0usize;
    let node_list: Vec<Option<u32>> = if plan.nodes.is_empty() {
        vec![None]
    } else {
        plan.nodes.iter().map(|&n| Some(n)).collect()
    };
    for (w, goal) in goals.iter().enumerate() {
        for &n in &node_list {
            let sched = schedule::load(goal, n, ov, goal_opts)?;
            let (ranks, ops) = with_program!(&sched, |p| (p.num_ranks() as u64, p.total_ops()));
            fan_in = fan_in.max(with_program!(&sched, |p| widest_fan_in(p)));
            let events = ops as f64 * 1.5;
            let budget = crate::budget::plan(req);
            let e = crate::budget::estimate(
                ranks,
                ops,
                matches!(sched, schedule::Schedule::Explicit(_)),
                &budget,
            );
            let carrier = if noisy && (why_reps > 0 || all_paths) {
                ranks
                    * loggops_explain::carry::BYTES_PER_RANK
                    * (threads as u64).min(why_reps.max(1))
            } else {
                0
            };
            peak = peak.max(e.bytes + carrier);
            for sys in &plan.systems {
                for mode in &plan.noise_modes {
                    let verdict = noisy
                        && Some(mode.as_str()) == verdict_mode
                        && verdict_nodes.is_none_or(|v| Some(v) == n);
                    let (engine, reps_lo, reps_hi, rate) = if mode == "none" || !noisy {
                        ("global".to_string(), 1, 1, NOISELESS_EVENTS_PER_S)
                    } else {
                        ("windowed".to_string(), first, max, NOISY_EVENTS_PER_S)
                    };
                    let attributed = if !noisy {
                        0
                    } else if all_paths {
                        reps_hi
                    } else if verdict {
                        why_reps.min(reps_lo)
                    } else {
                        0
                    };
                    let engine = match attributed {
                        0 => engine,
                        a if a >= reps_hi => "global, attributed".to_string(),
                        a => format!("{engine}; {a} attributed"),
                    };
                    let per = |r: (f64, f64)| (events / r.1, events / r.0);
                    let (lo, hi) = per(rate);
                    let (alo, ahi) = per(ATTRIBUTED_EVENTS_PER_S);
                    let plain_lo = reps_lo.saturating_sub(attributed.min(reps_lo)) as f64;
                    let plain_hi = reps_hi.saturating_sub(attributed.min(reps_hi)) as f64;
                    let a_lo = attributed.min(reps_lo) as f64;
                    let a_hi = attributed.min(reps_hi) as f64;
                    let (c_lo, c_hi) = (plain_lo * lo + a_lo * alo, plain_hi * hi + a_hi * ahi);
                    cpu_lo += c_lo;
                    cpu_hi += c_hi;
                    rows.push([
                        plan.workloads[w].name.clone(),
                        sys.name.clone(),
                        ranks.to_string(),
                        mode.clone(),
                        count(ops as f64),
                        count(events),
                        engine,
                        if reps_lo == reps_hi {
                            reps_lo.to_string()
                        } else {
                            format!("{reps_lo}-{reps_hi}")
                        },
                        range(lo, hi),
                        range(c_lo, c_hi),
                    ]);
                }
            }
        }
    }
    let widths: Vec<usize> = (0..10)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for (k, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let pad = widths[i] - t.chars().count();
                if i < 4 || i == 6 {
                    format!("{t}{}", " ".repeat(pad))
                } else {
                    format!("{}{t}", " ".repeat(pad))
                }
            })
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
        if k == 0 {
            let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
            let _ = writeln!(s, "{}", rule.join("  "));
        }
    }
    let _ = writeln!(s);
    let wall = |cpu: f64| if noisy { cpu / threads } else { cpu };
    let _ = writeln!(
        s,
        "estimated CPU time: {} (wall time on {} thread(s): about {}); peak memory: about {}",
        range(cpu_lo, cpu_hi),
        threads as u64,
        range(wall(cpu_lo), wall(cpu_hi)),
        loggops_report::fmt_bytes(peak)
    );
    let _ = writeln!(
        s,
        "(rates measured on the shipped collectives, 2 shared vCPUs: noiseless {:.0}-{:.0} M \
         events/s, noisy {:.0}-{:.0} M, attributed {:.0}-{:.0} M; --reps auto runs between its \
         first and last count; see BENCHMARKS.md)",
        NOISELESS_EVENTS_PER_S.0 / 1e6,
        NOISELESS_EVENTS_PER_S.1 / 1e6,
        NOISY_EVENTS_PER_S.0 / 1e6,
        NOISY_EVENTS_PER_S.1 / 1e6,
        ATTRIBUTED_EVENTS_PER_S.0 / 1e6,
        ATTRIBUTED_EVENTS_PER_S.1 / 1e6,
    );
    if fan_in > FAN_IN_NOTE {
        let _ = writeln!(
            s,
            "note: ranks receive from up to {fan_in} peers (an all-to-all): a message's match \
             searches the receiver's queues one entry after the other (LogGOPSim's rule), so \
             the time and memory above can be 10-300x too low at this size"
        );
    }
    // Always on stdout: a plan never replaces a result --output names.
    crate::run::emit(None, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts() {
        assert_eq!(fmt_secs(0.031), "31 ms");
        assert_eq!(fmt_secs(19.0), "19 s");
        assert_eq!(fmt_secs(570.0), "10 min");
        assert_eq!(fmt_secs(38_000.0), "10.6 h");
        assert_eq!(range(19.0, 19.4), "19 s");
        assert_eq!(count(1.07e9), "1.07G");
        assert_eq!(count(3200.0), "3200");
    }
}
