//! Differences between two cells of one run, paired by repetition.
//!
//! The cells of a run draw their noise from the same counters: repetition `r` of every cell
//! uses the generator keyed by `(seed, r)`, and a draw is addressed by the message (sender and
//! send op), or the rank, and its purpose, never by the cell (`loggops-noise`'s `rng` module).
//! Two cells that share a message therefore share its uniform draws: two systems turn the same
//! uniforms into their own latencies, `net` and `os+net` draw the same network noise, `os` and
//! `os+net` the same detours, and two node counts share the draws of the messages they have in
//! common (common random numbers). Their repetition `r` results are correlated, so the
//! difference of their means is best estimated from the per-repetition differences: its
//! variance is `Var(A) + Var(B) - 2 Cov(A, B)`, not `Var(A) + Var(B)`.
//!
//! [`paired`] gives that estimate and its Student's t 95 % confidence interval over the
//! repetitions both cells ran (`--reps auto` may stop two cells at different counts; a
//! repetition index means the same draws in both). The unpaired interval (Welch's) is given
//! beside it, so that an output can say how much the pairing narrowed it. Nothing here changes
//! a cell's own statistics.

use crate::model::CellResult;
use crate::stats::{t_interval, t_quantile, Interval};

/// The difference `a - b` of two cells' mean times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Repetitions both cells ran (the pairs).
    pub reps: usize,
    /// Mean of `a(r) - b(r)` over the pairs, ps.
    pub diff_mean_ps: f64,
    /// Its 95 % confidence interval from the paired differences (`None` below 2 pairs), ps.
    pub diff_ci95_ps: Option<Interval>,
    /// Welch's 95 % interval of the same difference over the same repetitions, as if the cells
    /// had drawn independently (`None` below 2 pairs), ps.
    pub unpaired_ci95_ps: Option<Interval>,
}

impl Paired {
    /// Whether the paired interval excludes 0: `Some(true)` when the cells' means differ at
    /// the 95 % level.
    pub fn differs(&self) -> Option<bool> {
        self.diff_ci95_ps.map(|i| i.lo > 0.0 || i.hi < 0.0)
    }

    /// `+118.7ms (+118.6ms to +118.8ms)`: the mean difference and its paired 95 % interval
    /// (the difference alone below 2 pairs, which have no interval).
    pub fn brief(&self) -> String {
        let mean = crate::fmt::signed_time(self.diff_mean_ps);
        match self.diff_ci95_ps {
            Some(ci) => format!("{mean} ({})", span(ci)),
            None => mean,
        }
    }
}

/// An interval of signed times: `+118.6ms to +118.8ms`.
pub fn span(ci: Interval) -> String {
    use crate::fmt::signed_time;
    format!("{} to {}", signed_time(ci.lo), signed_time(ci.hi))
}

/// Mean and sample standard deviation (`None` for fewer than 2 values).
fn mean_std(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let std = (v.len() >= 2).then(|| {
        let ss: f64 = v.iter().map(|x| (x - mean) * (x - mean)).sum();
        (ss / (n - 1.0)).sqrt()
    });
    (mean, std)
}

/// `a - b` over the repetitions both ran (matched by repetition index); `None` when they
/// share none.
pub fn paired(a: &CellResult, b: &CellResult) -> Option<Paired> {
    let (mut xa, mut xb) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < a.reps.len() && j < b.reps.len() {
        match a.reps[i].cmp(&b.reps[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                xa.push(a.samples_ps[i] as f64);
                xb.push(b.samples_ps[j] as f64);
                i += 1;
                j += 1;
            }
        }
    }
    if xa.is_empty() {
        return None;
    }
    let n = xa.len();
    let diffs: Vec<f64> = xa.iter().zip(&xb).map(|(x, y)| x - y).collect();
    let (diff_mean_ps, std) = mean_std(&diffs);
    let diff_ci95_ps = std.map(|s| t_interval(diff_mean_ps, s, n));
    let unpaired_ci95_ps = match (mean_std(&xa), mean_std(&xb)) {
        ((ma, Some(sa)), (mb, Some(sb))) => {
            let (va, vb) = (sa * sa / n as f64, sb * sb / n as f64);
            let se = (va + vb).sqrt();
            // Welch–Satterthwaite degrees of freedom (n - 1 when both variances vanish).
            let df = if va + vb > 0.0 {
                (va + vb).powi(2) / (va * va / (n as f64 - 1.0) + vb * vb / (n as f64 - 1.0))
            } else {
                n as f64 - 1.0
            };
            let half = t_quantile(0.975, (df.floor() as u64).max(1)) * se;
            Some(Interval {
                lo: ma - mb - half,
                hi: ma - mb + half,
            })
        }
        _ => None,
    };
    Some(Paired {
        reps: n,
        diff_mean_ps,
        diff_ci95_ps,
        unpaired_ci95_ps,
    })
}

/// Two cells of a run compared: `a` minus `b`, where they differ in one dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// Indices into the run's cells.
    pub a: usize,
    pub b: usize,
    /// `"noise_mode"` or `"nodes"`: what differs between the two cells.
    pub varies: &'static str,
    pub paired: Paired,
}

/// The differences a run's cells invite, paired by repetition: within a workload, system and
/// node count, every two noisy modes (a later mode of the plan minus an earlier one: `os+net`
/// minus `net` is what OS noise adds to network noise); within a workload, system and noisy
/// mode, every node count minus the one before it in the plan. Systems are compared by the
/// verdict's ranking ([`crate::verdict`]). Cells without samples are left out.
pub fn differences(run: &crate::model::RunResult) -> Vec<Difference> {
    let cells = &run.cells;
    let noisy = |i: &usize| cells[*i].noise_mode != "none" && !cells[*i].samples_ps.is_empty();
    let mut out = Vec::new();
    let mut push = |a: usize, b: usize, varies| {
        if let Some(paired) = paired(&cells[a], &cells[b]) {
            out.push(Difference {
                a,
                b,
                varies,
                paired,
            });
        }
    };
    let order = |i: usize| {
        let c = &cells[i];
        let mode = run.plan.noise_modes.iter().position(|m| *m == c.noise_mode);
        let nodes = run.plan.nodes.iter().position(|&n| n as u64 == c.nodes);
        (mode, nodes)
    };
    let idx: Vec<usize> = (0..cells.len()).filter(noisy).collect();
    for (k, &a) in idx.iter().enumerate() {
        for &b in &idx[..k] {
            let (ca, cb) = (&cells[a], &cells[b]);
            if ca.workload != cb.workload || ca.system != cb.system {
                continue;
            }
            let ((ma, na), (mb, nb)) = (order(a), order(b));
            if ca.nodes == cb.nodes && ma != mb {
                let (late, early) = if ma > mb { (a, b) } else { (b, a) };
                push(late, early, "noise_mode");
            } else if ca.noise_mode == cb.noise_mode {
                if let (Some(na), Some(nb)) = (na, nb) {
                    if na.abs_diff(nb) == 1 {
                        let (late, early) = if na > nb { (a, b) } else { (b, a) };
                        push(late, early, "nodes");
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(reps: &[u64], samples: &[u64]) -> CellResult {
        CellResult {
            id: 0,
            workload: "w".into(),
            system: "s".into(),
            nodes: 2,
            noise_mode: "net".into(),
            complete: true,
            noiseless_ps: None,
            reps: reps.to_vec(),
            samples_ps: samples.to_vec(),
            run: None,
            why: None,
            engine: None,
        }
    }

    #[test]
    fn a_shared_offset_is_known_exactly_when_paired() {
        // b = a + 7 in every repetition: the paired difference has no spread, the unpaired
        // interval is as wide as the cells' own spread.
        let a = cell(&[0, 1, 2, 3, 4], &[10, 30, 20, 50, 40]);
        let b = cell(&[0, 1, 2, 3, 4], &[17, 37, 27, 57, 47]);
        let p = paired(&b, &a).unwrap();
        assert_eq!(p.reps, 5);
        assert_eq!(p.diff_mean_ps, 7.0);
        assert_eq!(p.diff_ci95_ps, Some(Interval { lo: 7.0, hi: 7.0 }));
        assert_eq!(p.differs(), Some(true));
        let u = p.unpaired_ci95_ps.unwrap();
        assert!(u.lo < 0.0 && u.hi > 14.0, "{u:?}");
    }

    #[test]
    fn pairs_are_matched_by_repetition_index() {
        // Repetitions 1 and 3 are in both; the others are ignored.
        let a = cell(&[0, 1, 3], &[100, 5, 9]);
        let b = cell(&[1, 2, 3, 4], &[2, 1000, 4, 1000]);
        let p = paired(&a, &b).unwrap();
        assert_eq!(p.reps, 2);
        assert_eq!(p.diff_mean_ps, 4.0);
        // Differences 3 and 5: mean 4, sd sqrt(2), t(0.975, 1) = 12.706...
        let half = t_quantile(0.975, 1) * 2f64.sqrt() / 2f64.sqrt();
        let ci = p.diff_ci95_ps.unwrap();
        assert!((ci.lo - (4.0 - half)).abs() < 1e-9 && (ci.hi - (4.0 + half)).abs() < 1e-9);
        assert!(paired(&cell(&[0], &[1]), &cell(&[1], &[1])).is_none());
        assert_eq!(
            paired(&cell(&[0], &[3]), &cell(&[0], &[1]))
                .unwrap()
                .diff_ci95_ps,
            None
        );
    }

    #[test]
    fn paired_interval_covers_the_true_difference_at_its_level() {
        // Correlated pairs (a shared part plus independent parts) from a fixed-seed
        // generator: over 2000 trials of 20 pairs, the paired 95 % interval covers the true
        // difference (3) in 95 % of trials (binomial 99.9 % band 93.4-96.6 %), and is
        // narrower than Welch's in every trial.
        let mut s = 0x5eed_u64;
        let mut next = || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut covered, trials) = (0, 2000);
        for _ in 0..trials {
            let (mut ra, mut rb) = (Vec::new(), Vec::new());
            for _ in 0..20 {
                // Normal-ish shared part (sum of 12 uniforms), small independent parts.
                let shared: f64 = (0..12).map(|_| next()).sum::<f64>() * 100.0;
                let ea: f64 = (0..12).map(|_| next()).sum::<f64>() - 6.0;
                let eb: f64 = (0..12).map(|_| next()).sum::<f64>() - 6.0;
                ra.push((shared + 1000.0 + ea).round() as u64);
                rb.push((shared + 1003.0 + eb).round() as u64);
            }
            let reps: Vec<u64> = (0..20).collect();
            let p = paired(&cell(&reps, &rb), &cell(&reps, &ra)).unwrap();
            let ci = p.diff_ci95_ps.unwrap();
            let u = p.unpaired_ci95_ps.unwrap();
            assert!(ci.half_width() < u.half_width());
            // Rounding to integers adds a uniform error of sd 0.41 per sample, inside the model.
            if ci.lo <= 3.0 && 3.0 <= ci.hi {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.934..=0.966).contains(&rate), "coverage {rate}");
    }
}
