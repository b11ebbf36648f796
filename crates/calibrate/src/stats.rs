//! Statistics for the calibration fit report: quantiles, Kolmogorov–Smirnov distances, and a
//! compact quantile table that keeps both tails (the largest samples exactly).

/// Sorted copy of `samples` (NaN sorts last).
pub fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_unstable_by(|a, b| a.total_cmp(b));
    v
}

/// The `p` quantile of sorted data with linear interpolation between order statistics
/// (R's type 7, numpy's default): position `p·(n-1)`. `p` is clamped to [0, 1]; NaN for empty data.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let pos = p.clamp(0.0, 1.0) * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Several quantiles of unsorted data (see [`quantile_sorted`]).
pub fn quantiles(samples: &[f64], probs: &[f64]) -> Vec<f64> {
    let s = sorted(samples);
    probs.iter().map(|&p| quantile_sorted(&s, p)).collect()
}

/// One-sample Kolmogorov–Smirnov distance sup |F_n(x) - F(x)| between the empirical distribution
/// of `samples` and a **continuous** CDF `cdf` (ties in the samples are handled: the empirical CDF
/// jumps by the whole run of equal values). For a CDF with atoms use
/// [`QuantileTable::ks_to_samples`]. 0 for empty samples.
pub fn ks_distance(samples: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let s = sorted(samples);
    let n = s.len() as f64;
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < s.len() {
        let v = s[i];
        let mut j = i;
        while j < s.len() && s[j] == v {
            j += 1;
        }
        let f = cdf(v);
        d = d
            .max((f - i as f64 / n).abs())
            .max((f - j as f64 / n).abs());
        i = j;
    }
    d
}

/// Two-sample Kolmogorov–Smirnov distance sup |F_a(x) - F_b(x)|. 0 when either is empty.
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let a = sorted(a);
    let b = sorted(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j) = (0usize, 0usize);
    let mut d: f64 = 0.0;
    while i < a.len() && j < b.len() {
        let v = a[i].min(b[j]);
        while i < a.len() && a[i] <= v {
            i += 1;
        }
        while j < b.len() && b[j] <= v {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

/// A distribution kept as a quantile table: `values[k]` is the `probs[k]` quantile; `probs` rises
/// strictly from 0 and `values` never falls. Sampling maps a uniform `u` through the
/// piecewise-linear inverse CDF ([`QuantileTable::quantile`]); equal neighbouring values make an
/// atom (a jump of the CDF), which discrete timer readings need.
///
/// An exact tail keeps the K largest of the `sample_count` = N samples as they are, each a
/// point mass of probability 1/N; the table then ends at probability (N − K)/N with the largest
/// sample below the tail. Without a tail (`tail` empty) `probs` ends at 1. This is
/// `loggops_profile::Distribution::Quantiles` with its `ExactTail`.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantileTable {
    pub probs: Vec<f64>,
    pub values: Vec<f64>,
    /// The K largest samples in increasing order (empty: no exact tail).
    pub tail: Vec<f64>,
    /// Number of samples N the table was built from (each tail value has probability 1/N).
    pub sample_count: u64,
}

/// Options of [`QuantileTable::compress_with`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompressOptions {
    /// Evenly spaced body quantiles (default 200).
    pub n_body: usize,
    /// Tail points per decade of probability, log-spaced from 1/n_body down to 1/n in each tail
    /// (default 10).
    pub tail_density: usize,
    /// Knots are added where the table's KS distance to the samples exceeds this (default
    /// 0.5/n_body, i.e. 0.0025 for 200 body points).
    pub max_ks: f64,
    /// Upper bound on the table size (default 2000), not counting the exact tail.
    pub max_points: usize,
    /// Fraction of the samples kept exactly as the exact tail: the ⌈`exact_tail_fraction`·n⌉
    /// largest (default 0.001: every sample above the 99.9th percentile). 0 disables the tail.
    pub exact_tail_fraction: f64,
    /// Upper bound on the exact tail (default 2048 samples, 16 KiB).
    pub max_exact_tail: usize,
}

impl Default for CompressOptions {
    fn default() -> Self {
        CompressOptions {
            n_body: 200,
            tail_density: 10,
            max_ks: 0.0025,
            max_points: 2000,
            exact_tail_fraction: 0.001,
            max_exact_tail: 2048,
        }
    }
}

impl CompressOptions {
    /// Number of samples kept exactly out of `n`: ⌈`exact_tail_fraction`·n⌉, at most
    /// `max_exact_tail`, and 0 unless that is fewer than half of them (the table must hold
    /// the median).
    pub fn exact_tail_len(&self, n: usize) -> usize {
        // (NaN disables it too.)
        if self.exact_tail_fraction.is_nan()
            || self.exact_tail_fraction <= 0.0
            || self.max_exact_tail == 0
        {
            return 0;
        }
        let k = ((self.exact_tail_fraction * n as f64).ceil() as usize).min(self.max_exact_tail);
        if 2 * k < n {
            k
        } else {
            0
        }
    }
}

impl QuantileTable {
    /// Compresses samples into a table of at most ~2000 points: `n_body + 1` evenly spaced body
    /// quantiles, `tail_density` log-spaced points per decade in each tail down to probability
    /// 1/n (so the minimum, the maximum and the extreme order statistics are kept), knots at the
    /// edges of heavy atoms (repeated timer values), then knots added where the KS distance to
    /// the samples is above 0.5/n_body. The largest ⌈n/1000⌉ samples (at most 2048; see
    /// [`CompressOptions::exact_tail_len`]) are kept exactly as the exact tail and the table
    /// covers the rest. `None` for empty samples or samples with NaN.
    pub fn compress(samples: &[f64], n_body: usize, tail_density: usize) -> Option<QuantileTable> {
        QuantileTable::compress_with(
            samples,
            &CompressOptions {
                n_body,
                tail_density,
                max_ks: 0.5 / n_body.max(1) as f64,
                ..Default::default()
            },
        )
    }

    /// [`QuantileTable::compress`] with all options.
    pub fn compress_with(samples: &[f64], opts: &CompressOptions) -> Option<QuantileTable> {
        if samples.is_empty() || samples.iter().any(|x| x.is_nan()) {
            return None;
        }
        let x = sorted(samples);
        let n = x.len();
        // The table covers sample ranks 0..m; x[m..] is the exact tail.
        let m = n - opts.exact_tail_len(n);
        let nb = opts.n_body.max(1);
        // Knots are sample ranks j in 0..=m: probability j/n, value x[max(j,1)-1].
        let mut knots: Vec<usize> = vec![0, m];
        knots.extend((1..nb).map(|i| ((i as f64) * m as f64 / nb as f64).round() as usize));
        if opts.tail_density > 0 {
            let step = 10f64.powf(-1.0 / opts.tail_density as f64);
            let mut p = 1.0 / nb as f64;
            while p * m as f64 >= 1.0 {
                let j = (p * m as f64).round() as usize;
                knots.push(j);
                knots.push(m - j);
                p *= step;
            }
            knots.push(1.min(m));
            knots.push(m.saturating_sub(1));
        }
        // Heavy atoms: runs of equal values holding a noticeable share of the samples.
        let atom_min = ((opts.max_ks * n as f64) / 4.0).max(2.0) as usize;
        let mut i = 0;
        while i < n {
            let mut j = i + 1;
            while j < n && x[j] == x[i] {
                j += 1;
            }
            if j - i >= atom_min && i < m {
                knots.extend([i, i + 1, j.min(m)]);
            }
            i = j;
        }
        knots.sort_unstable();
        knots.dedup();

        let build = |knots: &[usize]| QuantileTable {
            probs: knots.iter().map(|&j| j as f64 / n as f64).collect(),
            values: knots.iter().map(|&j| x[j.max(1) - 1]).collect(),
            tail: x[m..].to_vec(),
            sample_count: n as u64,
        };
        let mut table = build(&knots);
        for _ in 0..64 {
            if knots.len() >= opts.max_points {
                break;
            }
            // Worst error per segment (segment k = knots[k]..knots[k+1]).
            let mut seg_err = vec![0.0f64; knots.len() - 1];
            let mut i = 0;
            // Runs starting in the tail are exact.
            while i < m {
                let v = x[i];
                let mut j = i + 1;
                while j < n && x[j] == v {
                    j += 1;
                }
                let e_right = (table.cdf(v) - j as f64 / n as f64).abs();
                let e_left = (table.cdf_left(v) - i as f64 / n as f64).abs();
                // Sample ranks i+1..=j lie in the segments that end at or after rank i+1.
                let seg_of = |rank: usize| {
                    knots
                        .partition_point(|&k| k < rank)
                        .saturating_sub(1)
                        .min(knots.len() - 2)
                };
                let (sl, sr) = (seg_of(i + 1), seg_of(j));
                seg_err[sl] = seg_err[sl].max(e_left);
                seg_err[sr] = seg_err[sr].max(e_right);
                i = j;
            }
            let mut bad: Vec<(f64, usize)> = seg_err
                .iter()
                .enumerate()
                .filter(|(k, &e)| e > opts.max_ks && knots[k + 1] - knots[*k] >= 2)
                .map(|(k, &e)| (e, k))
                .collect();
            if bad.is_empty() {
                break;
            }
            bad.sort_by(|a, b| b.0.total_cmp(&a.0));
            let room = opts.max_points - knots.len();
            let new: Vec<usize> = bad
                .iter()
                .take(room)
                .map(|&(_, k)| (knots[k] + knots[k + 1]) / 2)
                .collect();
            knots.extend(new);
            knots.sort_unstable();
            knots.dedup();
            table = build(&knots);
        }
        Some(table)
    }

    /// Number of points (not counting the exact tail).
    pub fn len(&self) -> usize {
        self.probs.len()
    }

    /// Probability where the exact tail begins, (N − K)/N (the table's last probability; 1
    /// without a tail).
    pub fn tail_start(&self) -> f64 {
        self.probs.last().copied().unwrap_or(1.0)
    }

    pub fn is_empty(&self) -> bool {
        self.probs.is_empty()
    }

    /// Inverse CDF: the value at probability `u` (clamped to [0, 1]), interpolating linearly
    /// between neighbouring points. This is how a sampler draws from the table.
    pub fn quantile(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        if !self.tail.is_empty() && u >= self.tail_start() {
            let i = ((u - self.tail_start()) * self.sample_count as f64) as usize;
            return self.tail[i.min(self.tail.len() - 1)];
        }
        let k = self.probs.partition_point(|&p| p <= u);
        if k == 0 {
            return self.values[0];
        }
        if k >= self.probs.len() {
            return *self.values.last().expect("non-empty table");
        }
        let (p0, p1) = (self.probs[k - 1], self.probs[k]);
        let (v0, v1) = (self.values[k - 1], self.values[k]);
        v0 + (v1 - v0) * (u - p0) / (p1 - p0)
    }

    /// CDF of the table's distribution, P(X <= x).
    pub fn cdf(&self, x: f64) -> f64 {
        let k = self.values.partition_point(|&v| v <= x);
        self.body_cdf(k, x) + self.tail_mass(self.tail.partition_point(|&t| t <= x))
    }

    /// Left limit of the CDF, P(X < x).
    pub fn cdf_left(&self, x: f64) -> f64 {
        let k = self.values.partition_point(|&v| v < x);
        self.body_cdf(k, x) + self.tail_mass(self.tail.partition_point(|&t| t < x))
    }

    /// The table's part of the CDF at `x`, `k` points at or below it.
    fn body_cdf(&self, k: usize, x: f64) -> f64 {
        if k == 0 {
            return 0.0;
        }
        if k >= self.values.len() {
            return self.tail_start();
        }
        let (v0, v1) = (self.values[k - 1], self.values[k]);
        let (p0, p1) = (self.probs[k - 1], self.probs[k]);
        p0 + (p1 - p0) * (x - v0) / (v1 - v0)
    }

    /// Probability of `count` exact-tail samples.
    fn tail_mass(&self, count: usize) -> f64 {
        if count == 0 {
            0.0
        } else {
            count as f64 / self.sample_count as f64
        }
    }

    /// Exact KS distance between the table's distribution and the empirical distribution of
    /// `samples`, accounting for atoms on both sides.
    pub fn ks_to_samples(&self, samples: &[f64]) -> f64 {
        let s = sorted(samples);
        let n = s.len() as f64;
        let mut d: f64 = 0.0;
        let mut i = 0;
        while i < s.len() {
            let v = s[i];
            let mut j = i + 1;
            while j < s.len() && s[j] == v {
                j += 1;
            }
            d = d
                .max((self.cdf(v) - j as f64 / n).abs())
                .max((self.cdf_left(v) - i as f64 / n).abs());
            i = j;
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_type7() {
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(
            quantiles(&v, &[0.0, 0.5, 1.0, 1.0 / 3.0]),
            vec![1.0, 2.5, 4.0, 2.0]
        );
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn ks_one_sample_uniform() {
        // Samples 0.1, 0.2, ..., 1.0 against U(0,1): F_n jumps to k/10 at k/10, so D = 0.1.
        let s: Vec<f64> = (1..=10).map(|k| k as f64 / 10.0).collect();
        let d = ks_distance(&s, |x| x.clamp(0.0, 1.0));
        assert!((d - 0.1).abs() < 1e-12, "{d}");
        // Ties: all at 0.5 -> F_n jumps 0 -> 1 at 0.5, F(0.5) = 0.5.
        assert_eq!(ks_distance(&[0.5; 4], |x| x.clamp(0.0, 1.0)), 0.5);
    }

    #[test]
    fn ks_two_samples() {
        assert_eq!(ks_two_sample(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(ks_two_sample(&[1.0, 2.0], &[3.0, 4.0]), 1.0);
        // a = {1,2,3,4}, b = {3,4,5,6}: at x=2 F_a = 0.5, F_b = 0 -> 0.5.
        assert_eq!(
            ks_two_sample(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0]),
            0.5
        );
        assert_eq!(ks_two_sample(&[], &[1.0]), 0.0);
    }

    #[test]
    fn table_shape_and_atoms() {
        // Heavily discretised data: 3 values with masses 0.5, 0.3, 0.2.
        let mut s = vec![1.0; 5000];
        s.extend(vec![2.0; 3000]);
        s.extend(vec![5.0; 2000]);
        let t = QuantileTable::compress(&s, 200, 10).unwrap();
        assert_eq!(t.probs[0], 0.0);
        // The 10 largest samples (0.1 %) are the exact tail.
        assert_eq!(*t.probs.last().unwrap(), 0.999);
        assert_eq!((t.tail.clone(), t.sample_count), (vec![5.0; 10], 10_000));
        assert!(t.probs.windows(2).all(|w| w[0] < w[1]));
        assert!(t.values.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(t.values[0], 1.0);
        assert_eq!(*t.values.last().unwrap(), 5.0);
        assert!(t.ks_to_samples(&s) <= 1.0 / 10000.0 + 1e-12);
        assert_eq!(t.cdf(1.0), 0.5);
        assert_eq!(t.cdf_left(1.0), 0.0);
        assert_eq!(t.quantile(0.25), 1.0);
        assert_eq!(t.quantile(0.9), 5.0);
    }

    #[test]
    fn table_continuous_and_tails() {
        // Deterministic heavy-tailed data: x = 1 / (1 - u)^0.7 on a grid of u.
        let n = 100_000;
        let s: Vec<f64> = (0..n)
            .map(|i| 1.0 / (1.0 - (i as f64 + 0.5) / n as f64).powf(0.7))
            .collect();
        let t = QuantileTable::compress(&s, 200, 10).unwrap();
        assert!(t.len() <= 2000);
        let d = t.ks_to_samples(&s);
        assert!(d < 0.0025, "{d}");
        // Both extremes and the 1/n order statistics are kept; the largest 100 samples (0.1 %)
        // exactly, after the table's last point (p = 0.999, the 99,900th sample).
        let srt = sorted(&s);
        assert_eq!(t.values[0], srt[0]);
        assert_eq!(t.values[1], srt[0]);
        assert_eq!(t.probs[1], 1.0 / n as f64);
        assert_eq!(t.tail, srt[n - 100..]);
        assert_eq!(t.sample_count, n as u64);
        assert_eq!((t.tail_start(), *t.probs.last().unwrap()), (0.999, 0.999));
        assert_eq!(*t.values.last().unwrap(), srt[n - 101]);
        assert_eq!(t.values[t.len() - 2], srt[n - 102]);
        // The tail is drawn exactly: u in [j/n, (j+1)/n) gives the j-th smallest sample.
        for j in n - 100..n {
            assert_eq!(t.quantile((j as f64 + 0.5) / n as f64), srt[j]);
        }
        assert_eq!(t.quantile(1.0), srt[n - 1]);
        assert_eq!(t.cdf(srt[n - 1]), 1.0);
        assert_eq!(t.cdf_left(srt[n - 1]), 0.99999);
        assert_eq!(t.cdf(srt[n - 100]), 0.99901);
        // Inverse-CDF sampling on a fine grid reproduces the samples' distribution.
        let draws: Vec<f64> = (0..n)
            .map(|i| t.quantile((i as f64 + 0.5) / n as f64))
            .collect();
        assert!(ks_two_sample(&draws, &s) < 0.005);
    }

    #[test]
    fn table_rejects_bad_input() {
        assert!(QuantileTable::compress(&[], 200, 10).is_none());
        assert!(QuantileTable::compress(&[1.0, f64::NAN], 200, 10).is_none());
        let one = QuantileTable::compress(&[3.0], 200, 10).unwrap();
        assert_eq!(one.probs, vec![0.0, 1.0]);
        assert_eq!(one.values, vec![3.0, 3.0]);
        assert!(one.tail.is_empty());
    }

    #[test]
    fn exact_tail_length() {
        let o = CompressOptions::default();
        let k: Vec<usize> = [1, 2, 3, 16, 999, 1000, 1001, 514_954, 2_047_001, 10_000_000]
            .iter()
            .map(|&n| o.exact_tail_len(n))
            .collect();
        assert_eq!(k, [0, 0, 1, 1, 1, 1, 2, 515, 2048, 2048]);
        let off = CompressOptions {
            exact_tail_fraction: 0.0,
            ..o
        };
        assert_eq!(off.exact_tail_len(514_954), 0);
        // Without a tail the table ends at the maximum, as before.
        let s: Vec<f64> = (0..5000).map(|i| (i * i) as f64).collect();
        let t = QuantileTable::compress_with(&s, &off).unwrap();
        assert!(t.tail.is_empty());
        assert_eq!(
            (*t.probs.last().unwrap(), *t.values.last().unwrap()),
            (1.0, 4999.0 * 4999.0)
        );
    }

    /// One extreme outlier (300× the median) among 100,000 samples: with the exact tail, draws
    /// reach it with probability 1/n and nothing is drawn between it and the rest; the plain
    /// table spreads it over its last segment.
    #[test]
    fn exact_tail_keeps_an_outlier_a_point_mass() {
        let n = 100_000;
        let mut s: Vec<f64> = (0..n)
            .map(|i| 1000.0 + 100.0 * ((i * 7919) % n) as f64 / n as f64)
            .collect();
        s[123] = 300_000.0;
        let t = QuantileTable::compress(&s, 200, 10).unwrap();
        assert_eq!(t.tail.len(), 100);
        assert_eq!(*t.tail.last().unwrap(), 300_000.0);
        let second = t.tail[98];
        for i in 0..1000 {
            let u = 1.0 - (i as f64 + 0.5) / (1000.0 * n as f64);
            assert_eq!(t.quantile(u), 300_000.0);
        }
        assert_eq!(t.cdf(299_999.0), 1.0 - 1.0 / n as f64);
        assert_eq!(t.cdf(second), 1.0 - 1.0 / n as f64);
        let plain = QuantileTable::compress_with(
            &s,
            &CompressOptions {
                exact_tail_fraction: 0.0,
                ..Default::default()
            },
        )
        .unwrap();
        // The plain table's last segment interpolates from the second largest to the outlier.
        let mid = plain.quantile(1.0 - 0.5 / n as f64);
        assert!(mid > 1.4 * second && mid < 0.6 * 300_000.0, "{mid}");
    }
}

/// How much consecutive samples of a capture depend on each other. The noise model draws every
/// message's latency and bandwidth independently; these numbers say whether a capture supports
/// that (VALIDATION.md, "Model changes tried").
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TimeCorrelation {
    /// Samples the figures come from.
    pub samples: usize,
    /// Lag-1 autocorrelation of the logarithm of the samples in capture order (0 when they are
    /// independent; NaN for fewer than 3 samples or constant ones).
    pub lag1: f64,
    /// Lag-10 autocorrelation, the same way: persistent slow phases show here.
    pub lag10: f64,
    /// P(sample i+1 above the p95 | sample i above it); 0.05 when the samples are independent.
    pub tail_after_tail: f64,
}

/// Fewer samples than this are not judged (20 tail samples at the p95).
pub const MIN_CORRELATION_SAMPLES: usize = 400;
/// The lag-1 autocorrelation above which a capture is reported as correlated in time.
pub const CORRELATED_LAG1: f64 = 0.1;
/// The tail-after-tail probability above which a capture is reported as correlated in time
/// (three times its value for independent samples).
pub const CORRELATED_TAIL_AFTER_TAIL: f64 = 0.15;

impl TimeCorrelation {
    /// Of positive samples in capture order (non-positive ones are left out of the logarithms).
    pub fn of(samples: &[f64]) -> Self {
        let logs: Vec<f64> = samples
            .iter()
            .map(|&x| if x > 0.0 { x.ln() } else { f64::NAN })
            .collect();
        let p95 = quantile_sorted(&sorted(samples), 0.95);
        let (mut tails, mut tail_tail) = (0u64, 0u64);
        for w in samples.windows(2) {
            if w[0] > p95 {
                tails += 1;
                tail_tail += u64::from(w[1] > p95);
            }
        }
        TimeCorrelation {
            samples: samples.len(),
            lag1: autocorrelation(&logs, 1),
            lag10: autocorrelation(&logs, 10),
            tail_after_tail: if tails == 0 {
                f64::NAN
            } else {
                tail_tail as f64 / tails as f64
            },
        }
    }

    /// True when the capture is correlated enough for the independent draws to matter (never
    /// below [`MIN_CORRELATION_SAMPLES`] samples, too few to tell).
    pub fn correlated(&self) -> bool {
        self.measurable()
            && (self.lag1 > CORRELATED_LAG1 || self.tail_after_tail > CORRELATED_TAIL_AFTER_TAIL)
    }

    /// Enough samples for the figures to mean something.
    pub fn measurable(&self) -> bool {
        self.samples >= MIN_CORRELATION_SAMPLES
    }
}

/// Sample autocorrelation at `lag` of the finite values' series (pairs with a NaN are left
/// out); NaN when fewer than 3 pairs remain or the series is constant.
pub fn autocorrelation(x: &[f64], lag: usize) -> f64 {
    let finite: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.len() < 3 || lag >= x.len() {
        return f64::NAN;
    }
    let mean = finite.iter().sum::<f64>() / finite.len() as f64;
    let var = finite.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / finite.len() as f64;
    let pairs: Vec<f64> = x
        .iter()
        .zip(&x[lag..])
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .map(|(a, b)| (a - mean) * (b - mean))
        .collect();
    if pairs.len() < 3 || var <= 0.0 {
        return f64::NAN;
    }
    pairs.iter().sum::<f64>() / pairs.len() as f64 / var
}

#[cfg(test)]
mod correlation_tests {
    use super::*;

    #[test]
    fn independent_samples_have_no_correlation_and_a_persistent_series_has() {
        // SplitMix64 uniforms: independent.
        let iid: Vec<f64> = (0..20_000)
            .map(|i| 1.0 + crate::build::uniform(7, i))
            .collect();
        let c = TimeCorrelation::of(&iid);
        assert!(c.lag1.abs() < 0.03 && c.lag10.abs() < 0.03, "{c:?}");
        // 1000 tail samples: standard error 0.007.
        assert!((c.tail_after_tail - 0.05).abs() < 0.03, "{c:?}");
        assert!(!c.correlated());
        // Slow phases of 50 samples (1 in 7): every sample of a phase is 3x; the top 5 % are a third
        // of the slow samples, so a tail sample is followed by another about 35 % of the time.
        let phased: Vec<f64> = iid
            .iter()
            .enumerate()
            .map(|(i, &u)| if (i / 50) % 7 == 0 { 3.0 * u } else { u })
            .collect();
        let c = TimeCorrelation::of(&phased);
        assert!(c.lag1 > 0.5 && c.lag10 > 0.4, "{c:?}");
        assert!(c.tail_after_tail > 0.25, "{c:?}");
        assert!(c.correlated());
    }

    #[test]
    fn alternating_series_is_negatively_correlated() {
        let x: Vec<f64> = (0..100)
            .map(|i| if i % 2 == 0 { 1.0 } else { 2.0 })
            .collect();
        assert!((autocorrelation(&x, 1) + 1.0).abs() < 0.02);
        assert!((autocorrelation(&x, 10) - 1.0).abs() < 0.02);
        assert!(autocorrelation(&[1.0, 1.0, 1.0, 1.0], 1).is_nan());
    }
}
