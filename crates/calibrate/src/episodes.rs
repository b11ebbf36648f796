//! Episodes: Netgauge runs of a latency capture that hold far more of its tail than
//! independent samples would.
//!
//! A latency capture is a sequence of runs (blocks of about a thousand ping-pongs, each a
//! few tens of milliseconds, spread over an hour). When every sample is an independent draw
//! of one distribution, each run holds about 1 % of its samples above the capture's p99.
//! Some captures hold most of their tail in a few runs instead (Piz Daint 2022-05-13: 15 of
//! 287 runs hold 78 % of the samples above its p99, most of them in its first minutes): the
//! network was in another state for a while. Drawn for every message, such a tail reaches
//! every simulated collective, while a real run of a collective lasts well under a second
//! and falls inside or, far more often, outside such a stretch (VALIDATION.md, "Latency
//! episodes").
//!
//! [`detect`] flags a run when its count above the pooled p99 is improbable under independent
//! samples (binomial, `P(X ≥ k) < 10⁻³ / runs`, Bonferroni over the runs), and calls the
//! capture *episodic* when the flagged runs hold at least [`MIN_TAIL_SHARE`] of the samples
//! above the p99. `calibrate --latency-episodes separate` then leaves the flagged runs out of
//! the latency distributions (and out of the closure's target); the default keeps them.

use statrs::distribution::{Binomial, DiscreteCDF};

/// The pooled quantile whose exceedances are counted per run.
pub const TAIL_QUANTILE: f64 = 0.99;
/// Family-wise false-alarm rate of the per-run tests (Bonferroni over the runs).
pub const ALPHA: f64 = 1e-3;
/// The flagged runs must hold at least this share of the samples above the p99 for the
/// capture to be called episodic (a run or two flagged at random hold almost none of it).
pub const MIN_TAIL_SHARE: f64 = 0.25;

/// What [`detect`] found in a capture's runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Episodes {
    /// Runs examined (non-empty blocks, in capture order) and their samples.
    pub runs: usize,
    pub samples: usize,
    /// Indices (into those runs) of the runs whose tail count is improbable.
    pub flagged: Vec<usize>,
    /// The pooled p99 the counts are taken above, in the samples' unit.
    pub threshold: f64,
    /// Samples above the threshold, in all runs and in the flagged ones.
    pub tail_samples: usize,
    pub tail_in_flagged: usize,
    /// The largest count above the threshold in a run the test did not flag, and the count
    /// of the least extreme flagged run (for the report).
    pub max_unflagged: usize,
    pub min_flagged: Option<usize>,
}

impl Episodes {
    /// Share of the samples above the threshold that the flagged runs hold.
    pub fn tail_share(&self) -> f64 {
        if self.tail_samples == 0 {
            0.0
        } else {
            self.tail_in_flagged as f64 / self.tail_samples as f64
        }
    }

    /// Samples above the threshold a run of independent samples holds on average (the
    /// runs' mean length times `1 − TAIL_QUANTILE`).
    pub fn expected_per_run(&self) -> f64 {
        self.samples as f64 / self.runs.max(1) as f64 * (1.0 - TAIL_QUANTILE)
    }

    /// Whether the capture is episodic: flagged runs holding at least [`MIN_TAIL_SHARE`] of
    /// the tail.
    pub fn episodic(&self) -> bool {
        !self.flagged.is_empty() && self.tail_share() >= MIN_TAIL_SHARE
    }
}

/// Flags the runs whose count above the pooled p99 is improbable under independent samples
/// (see the module docs). `runs` are the samples of each run, in any unit.
pub fn detect(runs: &[&[f64]]) -> Episodes {
    let runs: Vec<&[f64]> = runs.iter().copied().filter(|r| !r.is_empty()).collect();
    let mut all: Vec<f64> = runs.iter().flat_map(|r| r.iter().copied()).collect();
    all.sort_by(f64::total_cmp);
    let threshold = if all.is_empty() {
        0.0
    } else {
        // The smallest sample at or above the pooled p99 (nearest rank).
        let i = ((all.len() as f64 * TAIL_QUANTILE).ceil() as usize).clamp(1, all.len()) - 1;
        all[i]
    };
    let p = 1.0 - TAIL_QUANTILE;
    let alpha = ALPHA / runs.len().max(1) as f64;
    let mut e = Episodes {
        runs: runs.len(),
        samples: all.len(),
        flagged: Vec::new(),
        threshold,
        tail_samples: 0,
        tail_in_flagged: 0,
        max_unflagged: 0,
        min_flagged: None,
    };
    for (i, r) in runs.iter().enumerate() {
        let k = r.iter().filter(|&&v| v > threshold).count();
        e.tail_samples += k;
        if k > 0 && tail_probability(k as u64, r.len() as u64, p) < alpha {
            e.flagged.push(i);
            e.tail_in_flagged += k;
            e.min_flagged = Some(e.min_flagged.map_or(k, |m| m.min(k)));
        } else {
            e.max_unflagged = e.max_unflagged.max(k);
        }
    }
    e
}

/// `P(X ≥ k)` for `X ~ Binomial(n, p)`.
fn tail_probability(k: u64, n: u64, p: f64) -> f64 {
    match Binomial::new(p, n) {
        Ok(b) if k > 0 => b.sf(k - 1),
        Ok(_) => 1.0,
        Err(_) => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of uniforms in (0, 1) (a Weyl sequence scrambled by a
    /// multiply; enough to make independent-looking runs).
    fn uniforms(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
    }

    /// `runs` runs of `n` samples, each `1 / u` (a heavy tail), the runs in `bad` (the
    /// episodes) a hundred times as large for half of their samples.
    fn capture(runs: usize, n: usize, bad: &[usize]) -> Vec<Vec<f64>> {
        let mut u = uniforms(7);
        (0..runs)
            .map(|r| {
                (0..n)
                    .map(|i| {
                        let v = 1.0 / u();
                        if bad.contains(&r) && i % 2 == 0 {
                            100.0 * v
                        } else {
                            v
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn slices(c: &[Vec<f64>]) -> Vec<&[f64]> {
        c.iter().map(|r| r.as_slice()).collect()
    }

    #[test]
    fn independent_runs_are_not_episodic() {
        for seed_runs in [50, 287, 1000] {
            let c = capture(seed_runs, 979, &[]);
            let e = detect(&slices(&c));
            assert_eq!(e.runs, seed_runs);
            assert!(!e.episodic(), "{seed_runs} runs: {e:?}");
            assert!(e.tail_share() < 0.05, "{e:?}");
        }
    }

    #[test]
    fn runs_holding_the_tail_are_flagged() {
        let bad = [3, 4, 5, 40, 41];
        let c = capture(200, 979, &bad);
        let e = detect(&slices(&c));
        assert_eq!(e.flagged, bad);
        assert!(e.episodic(), "{e:?}");
        assert!(e.tail_share() > 0.5, "{e:?}");
        assert!(e.min_flagged.unwrap() > e.max_unflagged);
    }

    #[test]
    fn empty_runs_are_ignored_and_nothing_is_flagged_in_an_empty_capture() {
        let e = detect(&[&[], &[]]);
        assert_eq!((e.runs, e.flagged.len(), e.episodic()), (0, 0, false));
        let c = capture(30, 100, &[]);
        let mut s = slices(&c);
        s.insert(2, &[]);
        assert_eq!(detect(&s).runs, 30);
    }

    #[test]
    fn the_binomial_tail_is_exact_at_small_counts() {
        // P(X >= 1) = 1 - (1 - p)^n.
        let p = tail_probability(1, 10, 0.01);
        assert!((p - (1.0 - 0.99f64.powi(10))).abs() < 1e-12, "{p}");
        assert_eq!(tail_probability(0, 10, 0.01), 1.0);
    }
}
