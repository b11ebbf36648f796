//! How much memory and time a run will take, estimated before it starts, and the refusal of
//! runs that cannot fit.
//!
//! `--goal goal/dissemination_16B.goal --nodes 99999999` used to allocate for a minute (13.7 GB
//! and climbing) before anything could tell it would never fit. The estimate here needs only
//! the schedule's rank and op counts ([`Program::num_ranks`], [`Program::total_ops`], both
//! cheap: O(1) for generated collectives, one pass over the ranks for parametric schedules), so
//! a hopeless run is refused within seconds, before the engine allocates anything.
//!
//! The model (peak RSS of the 16 B dissemination, `/usr/bin/time`, 64 Ki to 4 Mi ranks; rounded
//! up):
//!
//! * the global engine (noiseless runs, compat mode, and the noiseless baseline and fallback of
//!   noisy runs) keeps [`GLOBAL_BYTES_PER_RANK`] per rank (clocks, queue heads, list tails,
//!   counters, about one queued event per rank): measured 135-150 B (579 MB at 4 Mi ranks);
//! * explicit (GOAL file) programs add dense dependency counters, one byte per op
//!   ([`DENSE_BYTES_PER_OP`]); the program itself is already loaded when the estimate is made;
//! * every noisy repetition in flight (one per worker thread) keeps
//!   [`WINDOWED_BYTES_PER_RANK`] per rank in the windowed engine and the noise state (window
//!   buffers, per-rank OS-noise phases, ancestry records; the records are capped at 96 MiB per
//!   run): measured 1.4-1.8 KB per rank and thread.
//!
//! Time: about [`EVENTS_PER_SECOND`] events per second (one event per op and one per message,
//! at most 1.5 per op). Small rank counts run at 50-100 M events/s (BENCHMARKS.md); at a
//! million ranks and more the engine's state no longer fits the caches, and the release build
//! measured 12.2 M/s at 1 Mi ranks and 10.9 M/s at 4 Mi ranks of the dissemination on a busy
//! 2-core machine: a rough figure, on the slow side, to tell minutes from days. A run is refused when it needs more than
//! [`MEMORY_SHARE`] of the memory the kernel reports as available (`MemAvailable` in
//! `/proc/meminfo`; no memory limit where that is unknown) or when one repetition would take
//! more than [`MAX_SECONDS_PER_REPETITION`]; `--force-large` runs it anyway.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Result};
use loggops_engine::Program;

use crate::cli::Reps;
use crate::request::Request;
use crate::schedule::{with_program, Schedule};

/// Global-engine state per rank, bytes.
pub const GLOBAL_BYTES_PER_RANK: u64 = 160;
/// Windowed-engine and noise state per rank and noisy repetition in flight, bytes.
pub const WINDOWED_BYTES_PER_RANK: u64 = 1600;
/// Dense dependency counters of explicit programs, bytes per op.
pub const DENSE_BYTES_PER_OP: u64 = 1;
/// Events simulated per second and core, for the time estimate.
pub const EVENTS_PER_SECOND: f64 = 10e6;
/// Share of the available memory a run may plan to use: the estimate is rough (within about
/// ±20 % on the measured schedules, more on others), and a run that swaps or is killed for
/// lack of memory takes the machine's other work down with it.
pub const MEMORY_SHARE: f64 = 0.5;
/// Longest estimated repetition run without `--force-large`, seconds.
pub const MAX_SECONDS_PER_REPETITION: f64 = 3600.0;

/// What kind of run the estimate is for.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Noisy repetitions run concurrently (worker threads, at most the repetitions of a
    /// cell); 0 for a noiseless run.
    pub noisy_in_flight: u64,
    /// `--force-large`: report the estimate and go on.
    pub force: bool,
}

/// The estimate for one schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub ranks: u64,
    /// `None` for the estimate from the rank count alone (a lower bound).
    pub ops: Option<u64>,
    pub bytes: u64,
    /// One repetition (or the noiseless run), seconds (0 without ops).
    pub seconds: f64,
}

/// The estimate for `ranks` ranks and `ops` ops.
pub fn estimate(ranks: u64, ops: u64, explicit: bool, plan: &Plan) -> Estimate {
    let dense = if explicit { DENSE_BYTES_PER_OP } else { 0 };
    let bytes = ranks
        .saturating_mul(GLOBAL_BYTES_PER_RANK)
        .saturating_add(ops.saturating_mul(dense))
        .saturating_add(
            ranks
                .saturating_mul(WINDOWED_BYTES_PER_RANK)
                .saturating_mul(plan.noisy_in_flight),
        );
    Estimate {
        ranks,
        ops: Some(ops),
        bytes,
        seconds: ops as f64 * 1.5 / EVENTS_PER_SECOND,
    }
}

/// The lower bound from the rank count alone (no schedule needed).
pub fn estimate_ranks(ranks: u64, plan: &Plan) -> Estimate {
    Estimate {
        ops: None,
        ..estimate(ranks, 0, false, plan)
    }
}

/// The plan of a run from its flags: noisy repetitions in flight are the worker threads
/// (`--threads`, default all cores), at most the repetitions of a cell (32 for `--reps auto`'s
/// first round).
pub fn plan(req: &Request) -> Plan {
    let st = &req.settings;
    let noisy_in_flight = if req.noisy() && !st.compat {
        let threads = st
            .threads
            .filter(|&t| t > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            as u64;
        let reps = match st.reps {
            Reps::Fixed(n) => n as u64,
            Reps::Auto => Reps::AUTO_FIRST as u64,
        };
        threads.min(reps)
    } else {
        0
    };
    Plan {
        noisy_in_flight,
        force: st.force_large,
    }
}

/// Checks before anything is loaded: every rank count of `--nodes` by its per-rank state alone
/// (ranks x bytes per rank, a lower bound that needs no schedule), so a huge `--nodes` fails at
/// once, before even the schedule is instantiated for it (which takes time in proportion to the
/// ranks). Then, for a sweep of a rank-parametric schedule, every rank count with its op count
/// (each is loaded once more; parametric schedules load in O(ranks) time and tiny memory), so
/// `--nodes 16384,99999999` fails at once instead of after the 16384-rank cells. Explicit files
/// are checked where they are loaded ([`check`]).
pub fn precheck(goal: &Path, nodes: &[u32], ov: &[(String, String)], plan: &Plan) -> Result<()> {
    let available = available_memory();
    for &n in nodes {
        let e = estimate_ranks(n as u64, plan);
        if available.is_some_and(|a| e.bytes as f64 > a as f64 * MEMORY_SHARE) {
            judge(&e, &format!("--nodes {n}"), plan, available)?;
        }
    }
    if nodes.len() < 2 || !crate::schedule::is_parametric(goal)? {
        return Ok(());
    }
    for &n in nodes {
        check(
            // Rank-parametric: no plain ticks, so the GOAL options do not matter.
            &crate::schedule::load(goal, Some(n), ov, &loggops_goal::ParseOptions::default())?,
            &format!("--nodes {n}"),
            plan,
        )?;
    }
    Ok(())
}

/// What a check message calls a run: `--nodes N`, or the file for an explicit schedule.
pub fn what(goal: &Path, nodes: Option<u32>) -> String {
    match nodes {
        Some(n) => format!("--nodes {n}"),
        None => goal.display().to_string(),
    }
}

/// Memory the kernel could give this process without swapping (`MemAvailable`), bytes.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// Refuses `sched` when it cannot fit (see the module docs); `what` names the run in the
/// message (e.g. `--nodes 99999999`).
pub fn check(sched: &Schedule, what: &str, plan: &Plan) -> Result<()> {
    let (ranks, ops) = with_program!(sched, |p| (p.num_ranks() as u64, p.total_ops()));
    let e = estimate(ranks, ops, matches!(sched, Schedule::Explicit(_)), plan);
    judge(&e, what, plan, available_memory())
}

/// The decision, given the available memory (separate for tests).
pub fn judge(e: &Estimate, what: &str, plan: &Plan, available: Option<u64>) -> Result<()> {
    let limit = available.map(|a| (a as f64 * MEMORY_SHARE) as u64);
    let too_big = limit.is_some_and(|l| e.bytes > l);
    let too_long = e.seconds > MAX_SECONDS_PER_REPETITION;
    if !too_big && !too_long {
        return Ok(());
    }
    let mut m = match e.ops {
        Some(ops) => format!(
            "{what}: {} ranks and {} ops need about {} of memory",
            group(e.ranks),
            group(ops),
            fmt_gb(e.bytes)
        ),
        None => format!(
            "{what}: {} ranks need at least {} of memory for the engine's per-rank state alone",
            group(e.ranks),
            fmt_gb(e.bytes)
        ),
    };
    if plan.noisy_in_flight > 0 {
        let _ = write!(
            m,
            " ({} noisy repetition(s) in flight, one per worker thread)",
            plan.noisy_in_flight
        );
    }
    if e.ops.is_some() {
        let _ = write!(
            m,
            " and roughly {} per {}",
            fmt_duration(e.seconds),
            if plan.noisy_in_flight > 0 {
                "repetition"
            } else {
                "run"
            }
        );
    }
    if let (Some(a), Some(l)) = (available, limit) {
        let _ = write!(
            m,
            "; this machine has {} available (MemAvailable), and runs may plan to use {:.0} % of it ({})",
            fmt_gb(a),
            MEMORY_SHARE * 100.0,
            fmt_gb(l)
        );
    }
    if too_long && !too_big {
        let _ = write!(
            m,
            "; more than the {} a repetition may take without asking",
            fmt_duration(MAX_SECONDS_PER_REPETITION)
        );
    }
    if plan.force {
        crate::out::errln!("note: {m}; going on (--force-large)");
        return Ok(());
    }
    let fewer = if plan.noisy_in_flight > 1 {
        "fewer --nodes or --threads"
    } else {
        "fewer --nodes"
    };
    bail!("{m}. Use {fewer}, or --force-large to run it anyway (estimates are rough)")
}

/// `99,999,999`.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in decimal units with one decimal: `16.2 GB`, `850.0 MB`.
fn fmt_gb(b: u64) -> String {
    let b = b as f64;
    if b >= 1e12 {
        format!("{:.1} TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.1} MB", b / 1e6)
    }
}

/// `45 s`, `12 min`, `4.5 h`, `3.2 days`.
fn fmt_duration(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOISELESS: Plan = Plan {
        noisy_in_flight: 0,
        force: false,
    };

    #[test]
    fn the_model_adds_engine_counters_and_repetitions_in_flight() {
        let e = estimate(1000, 50_000, false, &NOISELESS);
        assert_eq!(e.bytes, 160_000);
        assert_eq!(e.seconds, 50_000.0 * 1.5 / 10e6);
        let e = estimate(1000, 50_000, true, &NOISELESS);
        assert_eq!(e.bytes, 160_000 + 50_000);
        let two = Plan {
            noisy_in_flight: 2,
            force: false,
        };
        assert_eq!(
            estimate(1000, 0, false, &two).bytes,
            160_000 + 2 * 1_600_000
        );
        assert_eq!(estimate(u64::MAX, u64::MAX, true, &two).bytes, u64::MAX);
        let lower = estimate_ranks(1000, &two);
        assert_eq!((lower.bytes, lower.ops), (160_000 + 2 * 1_600_000, None));
        let msg = judge(&lower, "--nodes 1000", &two, Some(1_000_000))
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("--nodes 1000: 1,000 ranks need at least 3.4 MB of memory for the engine's per-rank state alone (2 noisy repetition(s) in flight, one per worker thread); this machine"),
            "{msg}"
        );
        assert!(msg.ends_with("Use fewer --nodes or --threads, or --force-large to run it anyway (estimates are rough)"), "{msg}");
    }

    #[test]
    fn refuses_what_does_not_fit_and_forcing_goes_on() {
        // 99,999,999 ranks of the 16 B dissemination (27 rounds of 3 ops).
        let e = estimate(99_999_999, 99_999_999 * 81, false, &NOISELESS);
        let msg = judge(&e, "--nodes 99999999", &NOISELESS, Some(20_000_000_000))
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "--nodes 99999999: 99,999,999 ranks and 8,099,999,919 ops need about 16.0 GB of memory \
             and roughly 20 min per run; this machine has 20.0 GB available (MemAvailable), and runs \
             may plan to use 50 % of it (10.0 GB). Use fewer --nodes, or --force-large to run it \
             anyway (estimates are rough)"
        );
        let forced = Plan {
            force: true,
            ..NOISELESS
        };
        assert!(judge(&e, "x", &forced, Some(20_000_000_000)).is_ok());
        assert!(judge(&e, "x", &NOISELESS, Some(40_000_000_000)).is_ok());
        // Fits: 1024 ranks.
        let small = estimate(1024, 1024 * 30, false, &NOISELESS);
        assert!(judge(&small, "x", &NOISELESS, Some(1 << 30)).is_ok());
        // Unknown memory: only the time limit applies.
        assert!(judge(&e, "x", &NOISELESS, None).is_ok());
        let slow = estimate(1 << 20, 1 << 40, false, &NOISELESS);
        let msg = judge(&slow, "x", &NOISELESS, None).unwrap_err().to_string();
        assert!(
            msg.contains(
                "roughly 45.8 h per run; more than the 60 min a repetition may take without asking"
            ),
            "{msg}"
        );
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(12_345_678), "12,345,678");
        assert_eq!(fmt_duration(45.0), "45 s");
        assert_eq!(fmt_duration(720.0), "12 min");
        assert_eq!(fmt_duration(16200.0), "4.5 h");
        assert_eq!(fmt_gb(850_000_000), "850.0 MB");
    }
}
