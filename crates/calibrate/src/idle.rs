//! Messages after long idle periods: the *hoverboard* capture (`calibrate --idle-latency`)
//! and the idle table it adds to a profile.
//!
//! # The benchmark
//! The cloud_noise repository's `hoverboard.c` runs 30 iterations of one ping-pong of `size`
//! bytes between two ranks; rank 0 times each round trip and then busy-waits `sleep_time`
//! before the next (rank 1 waits in its receive meanwhile). Each run prints a header
//! `# Hoverboard test (SIZE REPETITIONS SLEEP_NS)`, then `# time(ns),sleep_time(ns),repetitions`
//! and one row per iteration. A run's first round trip follows `MPI_Init`, not a sleep: it is
//! dropped (on Piz Daint it is 20× the others in every run, whatever the sleep). Runs are
//! grouped by their sleep time (to the microsecond: the capture sets run every sleep twice,
//! as `S` and `S + 1 ns`).
//!
//! # What the capture says, and what the profile stores
//! The round trip after a sleep, over the back-to-back one (sleep 0), is the *ratio* of that
//! sleep. On GCP 2022-06-08 (1 MiB) it grows from 1.12 at 0.2 s to 2.9 at 1 s; on Piz Daint
//! it stays at or below 1 (VALIDATION.md, "Idle links"). A 1 MiB round trip is 97 % per-byte
//! time on GCP, so what grows after idle is the transfer, not the small-message latency: the
//! profile stores a factor on the per-byte time per sleep ([`loggops_profile::IdleLevel`]),
//! applied from that idle time on, and leaves the latency to the capture's 10 µs step.
//!
//! Only effects the capture resolves are kept: a sleep whose round trips are not longer than
//! the back-to-back ones (one-sided Mann–Whitney test at [`SIGNIFICANCE`]) has ratio 1, and
//! the ratios are made non-decreasing in the idle time (pool-adjacent-violators, weighted by
//! samples): a longer idle period never makes a message faster. Each level's factor is then
//! solved so that the simulated hoverboard (the engine, noise mode `net`, the queued model,
//! [`IDLE_REPS`] repetitions) reproduces the ratio: in the model a message's idle time is its
//! sender's time since it last started a send or completed a receive, so only rank 0's ping
//! is after idle (rank 1 answers at once) and carries the whole increase of the round trip.

use std::path::Path;

use loggops_engine::testing::VecProgram;
use loggops_engine::{simulate, Config, Model, Op};
use loggops_noise::NoiseModel;
use loggops_profile::{AfterIdle, IdleLevel, Placement};
use serde::Serialize;

use crate::closure::closure_model;
use crate::error::CalibError;
use crate::input::open_capture;
use crate::stats::quantile_sorted;

/// One-sided significance level of "the round trips after this sleep are longer".
pub const SIGNIFICANCE: f64 = 0.01;
/// Repetitions of the simulated hoverboard per sleep time.
pub const IDLE_REPS: u64 = 2000;
/// Seed of the simulated hoverboard.
pub const IDLE_SEED: u64 = 0x686f_7665_7262_6f61;
/// The largest factor the solver tries.
const MAX_FACTOR: f64 = 1000.0;

/// A hoverboard capture: round trips grouped by the sleep before them.
#[derive(Clone, Debug, PartialEq)]
pub struct Hoverboard {
    /// Bytes of each message of the ping-pong.
    pub size_bytes: u64,
    /// Groups in increasing sleep time; the first is the back-to-back one (sleep 0) when the
    /// capture has it.
    pub groups: Vec<SleepGroup>,
    /// Rows dropped as their run's first round trip.
    pub dropped_first: usize,
}

/// The round trips after one sleep time.
#[derive(Clone, Debug, PartialEq)]
pub struct SleepGroup {
    /// The sleep before each round trip, ps (rounded to the microsecond).
    pub sleep_ps: u64,
    /// Round trips, ps, sorted.
    pub rtt_ps: Vec<f64>,
    /// Runs (header blocks) the group pools.
    pub runs: usize,
}

/// Reads a hoverboard capture (plain or xz).
pub fn read_hoverboard(path: &Path) -> Result<Hoverboard, CalibError> {
    let p = path.display().to_string();
    let reader = open_capture(path)?;
    let parse_err = |line: u64, expected: &str, found: &str| CalibError::Parse {
        path: p.clone(),
        line,
        expected: expected.to_string(),
        found: found.to_string(),
    };
    let mut size: Option<u64> = None;
    // (sleep_ns, rtt_ns) of kept rows, and run counts per sleep.
    let mut rows: Vec<(u64, u64)> = Vec::new();
    let mut runs: Vec<u64> = Vec::new();
    let mut dropped_first = 0;
    let mut at_run_start = true;
    let mut run_sleep: Option<u64> = None;
    for (i, line) in std::io::BufRead::lines(reader).enumerate() {
        let n = i as u64 + 1;
        let line = line.map_err(|source| CalibError::Read {
            path: p.clone(),
            line: n,
            source,
        })?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(h) = t.strip_prefix('#') {
            let h = h.trim();
            if let Some(args) = h.strip_prefix("Hoverboard test") {
                let inner = args.trim().trim_start_matches('(').trim_end_matches(')');
                let v: Vec<u64> = inner
                    .split_whitespace()
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|_| {
                        parse_err(n, "`# Hoverboard test (SIZE REPETITIONS SLEEP_NS)`", t)
                    })?;
                let [s, _reps, _sleep] = v[..] else {
                    return Err(parse_err(
                        n,
                        "`# Hoverboard test (SIZE REPETITIONS SLEEP_NS)`",
                        t,
                    ));
                };
                match size {
                    Some(old) if old != s => {
                        return Err(CalibError::NoData {
                            path: p.clone(),
                            detail: format!(
                                "line {n}: message size {s} B, but earlier runs used {old} B; one capture holds one size"
                            ),
                        })
                    }
                    _ => size = Some(s),
                }
                at_run_start = true;
                run_sleep = None;
            }
            continue;
        }
        let f: Vec<&str> = t.split(',').map(str::trim).collect();
        let nums: Option<Vec<u64>> = f.iter().map(|x| x.parse().ok()).collect();
        let Some([rtt, sleep, reps]) = nums.as_deref().and_then(|v| <[u64; 3]>::try_from(v).ok())
        else {
            return Err(parse_err(
                n,
                "a row `time(ns),sleep_time(ns),repetitions` of three whole numbers",
                t,
            ));
        };
        if reps != 1 {
            return Err(parse_err(
                n,
                "repetitions 1 (with more, a row's time mixes the round trip after the sleep with back-to-back ones)",
                t,
            ));
        }
        if rtt == 0 || rtt > 3_600_000_000_000 {
            return Err(CalibError::Implausible {
                path: p.clone(),
                line: n,
                what: "round trip",
                found: format!("{rtt} ns"),
                max: "1 hour",
            });
        }
        // A run without its header starts where the sleep time changes.
        if run_sleep.is_some_and(|s| s != sleep) {
            at_run_start = true;
        }
        run_sleep = Some(sleep);
        let key = (sleep + 500) / 1000;
        if at_run_start {
            at_run_start = false;
            dropped_first += 1;
            runs.push(key);
            continue;
        }
        rows.push((key, rtt));
    }
    let Some(size_bytes) = size else {
        return Err(CalibError::Missing {
            path: p,
            what: "no `# Hoverboard test (SIZE REPETITIONS SLEEP_NS)` header: the message size is unknown (is this a hoverboard capture?)".into(),
        });
    };
    let mut keys: Vec<u64> = rows.iter().map(|r| r.0).collect();
    keys.sort_unstable();
    keys.dedup();
    let groups: Vec<SleepGroup> = keys
        .into_iter()
        .map(|k| {
            let mut v: Vec<f64> = rows
                .iter()
                .filter(|r| r.0 == k)
                .map(|r| r.1 as f64 * 1e3)
                .collect();
            v.sort_by(f64::total_cmp);
            SleepGroup {
                sleep_ps: k * 1_000_000,
                rtt_ps: v,
                runs: runs.iter().filter(|&&r| r == k).count(),
            }
        })
        .collect();
    if groups.first().is_none_or(|g| g.sleep_ps != 0) {
        return Err(CalibError::Missing {
            path: p,
            what: "no back-to-back round trips (rows with sleep_time 0 after each run's first): the ratio after idle needs them".into(),
        });
    }
    if groups.len() < 2 {
        return Err(CalibError::Missing {
            path: p,
            what: "no round trips after a sleep (sleep_time above 0)".into(),
        });
    }
    Ok(Hoverboard {
        size_bytes,
        groups,
        dropped_first,
    })
}

/// One row of the idle fit: a sleep time of the capture.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdleRow {
    pub sleep_s: f64,
    pub samples: usize,
    pub runs: usize,
    /// Captured median round trip, µs.
    pub captured_rtt_us: f64,
    /// Captured median over the back-to-back median.
    pub captured_ratio: f64,
    /// One-sided Mann–Whitney p-value of "longer than back to back".
    pub p_value: f64,
    /// The ratio the profile reproduces (1 where not significant; non-decreasing).
    pub target_ratio: f64,
    /// The factor on the per-byte time stored for this idle time.
    pub per_byte_factor: f64,
    /// Simulated median round trip over the simulated back-to-back one.
    pub simulated_ratio: f64,
}

/// The idle fit's report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdleReport {
    pub source: String,
    pub size_bytes: u64,
    pub dropped_first: usize,
    pub back_to_back_rtt_us: f64,
    pub simulated_back_to_back_rtt_us: f64,
    pub rows: Vec<IdleRow>,
}

/// The one-sided p-value of the Mann–Whitney test that `a` tends to exceed `b` (normal
/// approximation with tie correction).
pub fn mann_whitney_greater(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let (mut r1, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        r1 += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let u = r1 - n1 * (n1 + 1.0) / 2.0;
    let nn = n1 + n2;
    let var = n1 * n2 / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = (u - n1 * n2 / 2.0 - 0.5) / var.sqrt();
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' `erfcc`, relative error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Pool-adjacent-violators: the non-decreasing sequence closest to `y` (weights `w`).
fn isotonic(y: &[f64], w: &[f64]) -> Vec<f64> {
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for (&v, &wt) in y.iter().zip(w) {
        blocks.push((v, wt, 1));
        while blocks.len() > 1 {
            let (b, a) = (blocks[blocks.len() - 1], blocks[blocks.len() - 2]);
            if a.0 <= b.0 {
                break;
            }
            blocks.pop();
            let last = blocks.last_mut().expect("two blocks");
            let wt = a.1 + b.1;
            *last = ((a.0 * a.1 + b.0 * b.1) / wt, wt, a.2 + b.2);
        }
    }
    blocks
        .into_iter()
        .flat_map(|(v, _, n)| std::iter::repeat_n(v, n))
        .collect()
}

/// The simulated hoverboard round trips (ps, sorted) after `sleep_ps` of computation on rank
/// 0: `calc sleep; send size to 1; recv size from 1` against `recv; send`.
pub fn simulate_hoverboard(
    model: &NoiseModel,
    size: u64,
    sleep_ps: u64,
    reps: u64,
) -> Result<Vec<f64>, String> {
    let mut prog = VecProgram::new(2);
    let slept = (sleep_ps > 0).then(|| prog.op(0, Op::calc(sleep_ps)));
    let s = prog.op(0, Op::send(size, 1, 0));
    if let Some(c) = slept {
        prog.requires(0, s, c);
    }
    let r = prog.op(0, Op::recv(size, 1, 0));
    prog.requires(0, r, s);
    let r1 = prog.op(1, Op::recv(size, 0, 0));
    let s1 = prog.op(1, Op::send(size, 0, 0));
    prog.requires(1, s1, r1);
    let cfg = Config {
        model: Model::Queued,
        ..Config::new(model.engine_params())
    };
    let mut out = Vec::with_capacity(reps as usize);
    for rep in 0..reps {
        let mut run = model.instance(IDLE_SEED, rep, 2);
        let o = simulate(&prog, &cfg, &mut run).map_err(|e| e.to_string())?;
        out.push(o.finish[0].saturating_sub(sleep_ps) as f64);
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

fn median(v: &[f64]) -> f64 {
    quantile_sorted(v, 0.5)
}

/// `placement` with the idle levels `(from_ps, factor)` added to its idle table (its existing
/// levels, such as the capture's 10 µs latency step, kept; a level at the same idle time
/// takes the factor).
pub fn with_levels(placement: &Placement, levels: &[(f64, f64)]) -> Placement {
    let mut all: Vec<IdleLevel> = placement
        .after_idle
        .as_ref()
        .map(|a| a.levels.clone())
        .unwrap_or_default();
    for &(from_ps, factor) in levels {
        match all.iter_mut().find(|l| l.from_ps == from_ps) {
            Some(l) => l.per_byte_factor = factor,
            None => all.push(IdleLevel {
                from_ps,
                latency: None,
                per_byte_factor: factor,
            }),
        }
    }
    all.sort_by(|a, b| a.from_ps.total_cmp(&b.from_ps));
    // A level carries on the factor below it unless it sets its own: the latency-only levels
    // below the first hoverboard level keep 1, those above take the factor in force.
    let mut f = 1.0;
    for l in &mut all {
        if levels.iter().any(|&(from, _)| from == l.from_ps) {
            f = l.per_byte_factor;
        } else {
            l.per_byte_factor = f;
        }
    }
    let mut p = placement.clone();
    p.after_idle = (!all.is_empty()).then_some(AfterIdle { levels: all });
    p
}

/// Idle levels as `(from_ps, per_byte_factor)`, in increasing idle time.
pub type Levels = Vec<(f64, f64)>;

/// Fits the idle table of `placement` to the capture: see the module documentation. Returns
/// the placement with its table, the levels added and the report.
pub fn fit_idle(
    placement: &Placement,
    hb: &Hoverboard,
    source: &str,
) -> Result<(Placement, Levels, IdleReport), String> {
    let b2b = &hb.groups[0];
    let m0 = median(&b2b.rtt_ps);
    let after = &hb.groups[1..];
    let raw: Vec<f64> = after.iter().map(|g| median(&g.rtt_ps) / m0).collect();
    let pv: Vec<f64> = after
        .iter()
        .map(|g| mann_whitney_greater(&g.rtt_ps, &b2b.rtt_ps))
        .collect();
    let sig: Vec<f64> = raw
        .iter()
        .zip(&pv)
        .map(|(&r, &p)| if p < SIGNIFICANCE { r.max(1.0) } else { 1.0 })
        .collect();
    let w: Vec<f64> = after.iter().map(|g| g.rtt_ps.len() as f64).collect();
    let target = isotonic(&sig, &w);

    let sim_b2b = |pl: &Placement| -> Result<f64, String> {
        let m = closure_model(pl)?;
        Ok(median(&simulate_hoverboard(
            &m,
            hb.size_bytes,
            0,
            IDLE_REPS,
        )?))
    };
    let sim_ratio = |pl: &Placement, sleep: u64, base: f64| -> Result<f64, String> {
        let m = closure_model(pl)?;
        Ok(median(&simulate_hoverboard(&m, hb.size_bytes, sleep, IDLE_REPS)?) / base)
    };
    // Back to back nothing changes (idle 0 is below every level).
    let base = sim_b2b(placement)?;
    let mut levels: Vec<(f64, f64)> = Vec::new();
    let mut factors = Vec::with_capacity(after.len());
    for (g, &t) in after.iter().zip(&target) {
        let from = g.sleep_ps as f64;
        // Without a level of its own, this sleep sees the level below it.
        let below = levels.last().map_or(1.0, |l| l.1);
        let ratio_at = |f: f64| -> Result<f64, String> {
            let mut lv = levels.clone();
            lv.push((from, f));
            sim_ratio(&with_levels(placement, &lv), g.sleep_ps, base)
        };
        let f = if t <= 1.0 {
            1.0
        } else {
            let (mut lo, mut hi) = (1.0f64, MAX_FACTOR);
            if ratio_at(hi)? < t {
                return Err(format!(
                    "the ratio {t:.3} after {} s idle needs a per-byte factor above {MAX_FACTOR}",
                    from / 1e12
                ));
            }
            for _ in 0..40 {
                let mid = (lo * hi).sqrt();
                if ratio_at(mid)? < t {
                    lo = mid;
                } else {
                    hi = mid;
                }
                if hi / lo < 1.0 + 1e-4 {
                    break;
                }
            }
            (lo * hi).sqrt()
        };
        if f != below {
            levels.push((from, f));
        }
        factors.push(f);
    }
    let fitted = with_levels(placement, &levels);
    let mut rows = Vec::with_capacity(after.len());
    for (i, g) in after.iter().enumerate() {
        rows.push(IdleRow {
            sleep_s: g.sleep_ps as f64 / 1e12,
            samples: g.rtt_ps.len(),
            runs: g.runs,
            captured_rtt_us: median(&g.rtt_ps) / 1e6,
            captured_ratio: raw[i],
            p_value: pv[i],
            target_ratio: target[i],
            per_byte_factor: factors[i],
            simulated_ratio: sim_ratio(&fitted, g.sleep_ps, base)?,
        });
    }
    Ok((
        fitted,
        levels,
        IdleReport {
            source: source.to_string(),
            size_bytes: hb.size_bytes,
            dropped_first: hb.dropped_first,
            back_to_back_rtt_us: m0 / 1e6,
            simulated_back_to_back_rtt_us: base / 1e6,
            rows,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isotonic_pools_violators() {
        let v = isotonic(&[1.0, 3.0, 2.0, 4.0], &[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(v, vec![1.0, 2.5, 2.5, 4.0]);
        assert_eq!(isotonic(&[2.0, 1.0], &[3.0, 1.0]), vec![1.75, 1.75]);
    }

    #[test]
    fn mann_whitney_separates_shifted_samples() {
        let a: Vec<f64> = (0..30).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| 50.0 + i as f64).collect();
        assert!(mann_whitney_greater(&a, &b) < 1e-6);
        assert!(mann_whitney_greater(&b, &a) > 0.999);
        let p = mann_whitney_greater(&a, &a);
        assert!((p - 0.5).abs() < 0.1, "{p}");
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
    }
}
