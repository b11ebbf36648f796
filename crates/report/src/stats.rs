//! Summary statistics of a set of simulated run times (integer picoseconds).
//!
//! # Definitions
//!
//! Let `x_0 <= x_1 <= ... <= x_(n-1)` be the sorted samples.
//!
//! * **Quantiles** use Hyndman & Fan "type 7", the default of `numpy.percentile`/`numpy.quantile`
//!   (`method="linear"`) and of `pandas.Series.quantile`, which the paper's plots used: with
//!   `h = (n-1) p`, `q(p) = x_floor(h) + (h - floor(h)) (x_(floor(h)+1) - x_floor(h))`.
//!   The fixed quantiles of [`Summary`] (p1, p5, q1 = p25, median = p50, q3 = p75, p95, p99) have
//!   `p = k/100`, and are computed in exact integer arithmetic as `100 q` before one final division,
//!   so they are the correctly rounded value of the exact rational (numpy evaluates `h` in floating
//!   point and can differ in the last ulp). [`quantile_sorted`] handles any `p` in `f64`.
//! * **Mean** is `sum / n` (the sum is exact in `u128`); **std** is the sample standard deviation
//!   (`n - 1` in the denominator, like pandas' `std()`), `None` for `n < 2`.
//! * **Mean CI95** is `mean ± t(0.975, n-1) std / sqrt(n)` with statrs' Student t quantile
//!   ([`t_quantile`]). `None` for `n < 2`.
//! * **Median CI95** is distribution free: the order statistics `[x_(j-1), x_(n-j)]` (0-based) whose
//!   ranks come from the Binomial(n, 1/2) distribution (statrs), see [`median_ci_ranks`].
//!   Its actual coverage (at least 95 %) is reported. `None` for `n <= 5`.
//! * **Notch** is what matplotlib/seaborn draw as the notch of a boxplot (`notch=True`, the paper's
//!   "95 % confidence interval" of the median in its boxplots): `median ± 1.57 IQR / sqrt(n)`
//!   (McGill, Tukey & Larsen 1978).
//! * **Whiskers** follow matplotlib's `boxplot_stats` (`whis=1.5`), which seaborn's boxplot uses:
//!   the upper whisker is the largest sample `<= q3 + 1.5 IQR`, the lower one the smallest sample
//!   `>= q1 - 1.5 IQR` (`IQR = q3 - q1`); if no sample qualifies, or the sample lies inside the box,
//!   the whisker is the quartile itself (which can then be fractional). The comparisons are made in
//!   exact integer arithmetic. **Outliers** ("fliers") are the samples strictly beyond the whiskers.
//!   (The paper's text says "smallest sample > Q1 − 1.5 IQR"; its plots used matplotlib, whose
//!   bounds are inclusive, which is what we follow.)

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};
use thiserror::Error;

/// Degrees of freedom from which [`t_quantile`] corrects the normal quantile instead of
/// inverting statrs' t: statrs' inversion drifts there (1.6e-7 relative at 50,000, 6e-5 at
/// 500,000 and no answer at 10^9), while the expansion's error is below 1e-13 from here on.
const T_EXPANSION_DF: u64 = 10_000;

/// The `p` quantile of Student's t with `df` degrees of freedom: statrs' t below
/// [`T_EXPANSION_DF`], above it the Cornish–Fisher expansion in 1/df of statrs' normal quantile
/// (Abramowitz & Stegun 26.7.5, three terms).
pub fn t_quantile(p: f64, df: u64) -> f64 {
    if df < T_EXPANSION_DF {
        return StudentsT::new(0.0, 1.0, df as f64)
            .expect("df >= 1")
            .inverse_cdf(p);
    }
    let z = Normal::new(0.0, 1.0)
        .expect("standard normal")
        .inverse_cdf(p);
    let nu = df as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * nu)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * nu * nu)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * nu * nu * nu)
}

/// Ranks of the distribution-free confidence interval for the median.
///
/// With `n` i.i.d. samples of a continuous distribution, the number `B` of samples below the
/// true median is `Binomial(n, 1/2)`, so the order statistics `x_(j) <= median <= x_(k)`
/// (1-based ranks) hold with probability `P(j <= B <= k-1)`. This is the symmetric interval
/// `k = n + 1 - j` with the **largest** `j` such that `P(B <= j-1) <= alpha/2`; its coverage
/// `1 - 2 P(B <= j-1)` is therefore at least `1 - alpha` and as tight as the discrete
/// distribution allows. `None` when even `[min, max]` does not reach the confidence
/// (`2^(1-n) > alpha`, i.e. `n <= 5` for 95 %).
///
/// Returns `(j, k, coverage)`; the binomial CDF is statrs' (bisection on the rank: O(log n)).
pub fn median_ci_ranks(n: usize, alpha: f64) -> Option<(usize, usize, f64)> {
    if n == 0 || !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let b = Binomial::new(0.5, n as u64).ok()?;
    let half = alpha / 2.0;
    if b.cdf(0) > half {
        return None;
    }
    // The largest i with F(i) <= alpha/2 (F increases; F(n/2) >= 1/2 > alpha/2).
    let (mut lo, mut hi) = (0u64, n as u64 / 2);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if b.cdf(mid) <= half {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let j = lo as usize + 1;
    Some((j, n + 1 - j, 1.0 - 2.0 * b.cdf(lo)))
}

/// Errors from computing statistics.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StatsError {
    /// The sample set was empty.
    #[error("no samples: a summary needs at least 1 sample, found 0")]
    Empty,
}

/// A closed interval of times in picoseconds (fractional where interpolated).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end, ps.
    pub lo: f64,
    /// Upper end, ps.
    pub hi: f64,
}

impl Interval {
    /// Half the width, `(hi - lo) / 2`.
    pub fn half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }
}

/// Student's t 95 % confidence interval of a mean from `n >= 2` samples of standard deviation
/// `std`.
pub fn t_interval(mean: f64, std: f64, n: usize) -> Interval {
    let half = t_quantile(0.975, (n - 1) as u64) * std / (n as f64).sqrt();
    Interval {
        lo: mean - half,
        hi: mean + half,
    }
}

/// Distribution-free 95 % confidence interval of the median: two order statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MedianCi {
    /// Lower end: the sample of 1-based rank `lo_rank`, ps.
    pub lo: u64,
    /// Upper end: the sample of 1-based rank `hi_rank`, ps.
    pub hi: u64,
    /// 1-based rank of `lo` among the sorted samples.
    pub lo_rank: usize,
    /// 1-based rank of `hi` among the sorted samples (`n + 1 - lo_rank`).
    pub hi_rank: usize,
    /// Exact coverage probability of the interval (at least 0.95).
    pub coverage: f64,
}

/// Summary of one cell's samples; all times in picoseconds. See the module docs for definitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean, ps.
    pub mean: f64,
    /// Sample standard deviation (`n - 1`), ps; `None` if `n < 2`.
    pub std: Option<f64>,
    /// Smallest sample, ps.
    pub min: u64,
    /// 1st percentile, ps.
    pub p1: f64,
    /// 5th percentile, ps.
    pub p5: f64,
    /// First quartile (25th percentile), ps.
    pub q1: f64,
    /// Median, ps.
    pub median: f64,
    /// Third quartile (75th percentile), ps.
    pub q3: f64,
    /// 95th percentile, ps.
    pub p95: f64,
    /// 99th percentile, ps.
    pub p99: f64,
    /// Largest sample, ps.
    pub max: u64,
    /// 95 % confidence interval of the mean (Student t); `None` if `n < 2`.
    pub mean_ci95: Option<Interval>,
    /// 95 % distribution-free confidence interval of the median; `None` if `n <= 5`.
    pub median_ci95: Option<MedianCi>,
    /// matplotlib's boxplot notch, `median ± 1.57 IQR / sqrt(n)`.
    pub notch: Interval,
    /// Lower boxplot whisker (matplotlib rule), ps.
    pub whisker_lo: f64,
    /// Upper boxplot whisker (matplotlib rule), ps.
    pub whisker_hi: f64,
    /// Samples below `whisker_lo`.
    pub outliers_lo: usize,
    /// Samples above `whisker_hi`.
    pub outliers_hi: usize,
}

/// Type-7 quantile of already **sorted** samples for any `p` in `[0, 1]`, in `f64`.
///
/// # Panics
/// If `sorted` is empty or `p` is outside `[0, 1]`.
pub fn quantile_sorted(sorted: &[u64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of an empty sample");
    assert!(
        (0.0..=1.0).contains(&p),
        "quantile probability {p} outside [0, 1]"
    );
    let h = (sorted.len() - 1) as f64 * p;
    let i = (h.floor() as usize).min(sorted.len() - 1);
    let frac = h - i as f64;
    let lo = sorted[i] as f64;
    if frac == 0.0 || i + 1 >= sorted.len() {
        return lo;
    }
    lo + frac * (sorted[i + 1] - sorted[i]) as f64
}

/// `100 * q(k/100)` of sorted samples, exactly (type 7).
fn centile_x100(sorted: &[u64], k: u64) -> u128 {
    let h100 = (sorted.len() as u128 - 1) * k as u128;
    let i = (h100 / 100) as usize;
    let rem = h100 % 100;
    let lo = sorted[i] as u128;
    if rem == 0 {
        lo * 100
    } else {
        lo * 100 + rem * (sorted[i + 1] - sorted[i]) as u128
    }
}

fn x100_to_f64(v: u128) -> f64 {
    if v.is_multiple_of(100) {
        (v / 100) as f64
    } else {
        v as f64 / 100.0
    }
}

impl Summary {
    /// Summarises the samples (any order).
    ///
    /// # Panics
    /// If `samples` is empty; use [`Summary::try_from_samples`] to get an error instead.
    pub fn from_samples(samples: &[u64]) -> Summary {
        match Summary::try_from_samples(samples) {
            Ok(s) => s,
            Err(e) => panic!("Summary::from_samples: {e}"),
        }
    }

    /// Summarises the samples (any order); fails only on an empty slice.
    pub fn try_from_samples(samples: &[u64]) -> Result<Summary, StatsError> {
        if samples.is_empty() {
            return Err(StatsError::Empty);
        }
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        Ok(Summary::from_sorted(&sorted))
    }

    /// Summarises samples that are already sorted ascending (not checked beyond a debug assertion).
    ///
    /// # Panics
    /// If `sorted` is empty.
    pub fn from_sorted(sorted: &[u64]) -> Summary {
        assert!(!sorted.is_empty(), "Summary of an empty sample");
        debug_assert!(
            sorted.windows(2).all(|w| w[0] <= w[1]),
            "samples not sorted"
        );
        let n = sorted.len();
        let nf = n as f64;

        let sum: u128 = sorted.iter().map(|&x| x as u128).sum();
        let mean = sum as f64 / nf;
        let std = (n >= 2).then(|| {
            let ss: f64 = sorted
                .iter()
                .map(|&x| {
                    let d = x as f64 - mean;
                    d * d
                })
                .sum();
            (ss / (nf - 1.0)).sqrt()
        });
        let mean_ci95 = std.map(|s| t_interval(mean, s, n));

        let c = |k| centile_x100(sorted, k);
        let (q1x, q3x) = (c(25), c(75));
        let q1 = x100_to_f64(q1x);
        let q3 = x100_to_f64(q3x);
        let median = x100_to_f64(c(50));

        let median_ci95 = median_ci_ranks(n, 0.05).map(|(j, k, coverage)| MedianCi {
            lo: sorted[j - 1],
            hi: sorted[k - 1],
            lo_rank: j,
            hi_rank: k,
            coverage,
        });

        let notch_half = 1.57 * (q3 - q1) / nf.sqrt();
        let notch = Interval {
            lo: median - notch_half,
            hi: median + notch_half,
        };

        // Whiskers, exactly: x <= q3 + 1.5 IQR  <=>  200 x <= 5 Q3 - 3 Q1  (Q = 100 q), etc.
        let (q1i, q3i) = (q1x as i128, q3x as i128);
        let hi_bound = 5 * q3i - 3 * q1i;
        let lo_bound = 5 * q1i - 3 * q3i;
        let n_le_hi = sorted.partition_point(|&x| 200 * x as i128 <= hi_bound);
        let whisker_hi_x100 = if n_le_hi == 0 || (sorted[n_le_hi - 1] as u128) * 100 < q3x {
            q3x
        } else {
            sorted[n_le_hi - 1] as u128 * 100
        };
        let first_ge_lo = sorted.partition_point(|&x| (200 * x as i128) < lo_bound);
        let whisker_lo_x100 = if first_ge_lo == n || (sorted[first_ge_lo] as u128) * 100 > q1x {
            q1x
        } else {
            sorted[first_ge_lo] as u128 * 100
        };
        let outliers_lo = sorted.partition_point(|&x| (x as u128) * 100 < whisker_lo_x100);
        let outliers_hi = n - sorted.partition_point(|&x| (x as u128) * 100 <= whisker_hi_x100);

        Summary {
            n,
            mean,
            std,
            min: sorted[0],
            p1: x100_to_f64(c(1)),
            p5: x100_to_f64(c(5)),
            q1,
            median,
            q3,
            p95: x100_to_f64(c(95)),
            p99: x100_to_f64(c(99)),
            max: sorted[n - 1],
            mean_ci95,
            median_ci95,
            notch,
            whisker_lo: x100_to_f64(whisker_lo_x100),
            whisker_hi: x100_to_f64(whisker_hi_x100),
            outliers_lo,
            outliers_hi,
        }
    }

    /// Interquartile range `q3 - q1`, ps.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }

    /// Total number of outliers (both sides).
    pub fn outliers(&self) -> usize {
        self.outliers_lo + self.outliers_hi
    }
}

/// 0-based indices of the order statistics bounding an approximate 95 % confidence interval of
/// the `q` quantile of `n` samples (normal approximation of the binomial, widened outwards).
fn quantile_ci_indices(n: usize, q: f64) -> (usize, usize) {
    let m = n as f64 * q;
    let d = 1.96 * (n as f64 * q * (1.0 - q)).sqrt();
    let last = n as i64 - 1;
    let lo = ((m - d).floor() as i64 - 1).clamp(0, last) as usize;
    let hi = ((m + d).ceil() as i64).clamp(0, last) as usize;
    (lo, hi)
}

/// Whether `samples` pin down their mean, median and 95th percentile: the 95 % confidence
/// interval of each (Student t for the mean, order statistics for the quantiles) has a
/// half-width of at most `rel` times the median. The stopping rule of `--reps auto`.
pub fn precise(samples: &[u64], rel: f64) -> bool {
    let n = samples.len();
    if n < 8 {
        return false;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let s = Summary::from_sorted(&sorted);
    let tol = rel * s.median;
    let quantile_ok = |q: f64| {
        let (lo, hi) = quantile_ci_indices(n, q);
        (sorted[hi] - sorted[lo]) as f64 / 2.0 <= tol
    };
    s.mean_ci95.is_some_and(|ci| ci.half_width() <= tol) && quantile_ok(0.5) && quantile_ok(0.95)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    /// statrs' t quantiles against 50-digit references (Python `decimal` of the closed-form
    /// series at the exact binary value of 0.975), and the expansion from T_EXPANSION_DF on.
    #[test]
    fn t_quantile_975_table() {
        let cases = [
            (1, 12.706_204_736_174_694),
            (2, 4.302_652_729_749_462),
            (3, 3.182_446_305_283_708_6),
            (5, 2.570_581_835_636_314_6),
            (10, 2.228_138_851_986_274_4),
            (30, 2.042_272_456_301_237_8),
            (100, 1.983_971_518_523_551_8),
            (1000, 1.962_339_080_826_408),
            (5000, 1.960_438_551_706_507_5),
        ];
        for (df, want) in cases {
            let got = t_quantile(0.975, df);
            assert!(
                close(got, want, 1e-9),
                "t(0.975, {df}) = {got:.17}, want {want:.17}"
            );
            assert!(close(t_quantile(0.025, df), -got, 1e-9));
        }
        assert!(close(t_quantile(0.995, 1), 63.656_741_162_871_526, 1e-9));
        // Both sides of the switch to the expansion agree, and it tends to the normal's.
        let (below, at) = (
            t_quantile(0.975, T_EXPANSION_DF - 1),
            t_quantile(0.975, T_EXPANSION_DF),
        );
        assert!(below > at && below - at < 1e-7, "{below} {at}");
        let z = 1.959_963_984_540_054;
        assert!(close(
            t_quantile(0.975, 50_000),
            1.960_011_431_093_68,
            1e-12
        ));
        assert!(close(t_quantile(0.975, u64::MAX), z, 1e-12));
    }

    /// Exact rational binomial sums as references.
    #[test]
    fn median_ci_ranks_known_values() {
        assert_eq!(median_ci_ranks(5, 0.05), None); // 2/32 = 0.0625 > 0.05
                                                    // n = 6: P(B = 0) = 1/64 <= 0.025; coverage 1 - 2/64.
        let (j, k, c) = median_ci_ranks(6, 0.05).unwrap();
        assert_eq!((j, k), (1, 6));
        assert!(close(c, 1.0 - 2.0 / 64.0, 1e-14), "{c}");
        // n = 10: F(1) = 11/1024 <= 0.025 < F(2) = 56/1024.
        let (j, k, c) = median_ci_ranks(10, 0.05).unwrap();
        assert_eq!((j, k), (2, 9));
        assert!(close(c, 1.0 - 22.0 / 1024.0, 1e-14), "{c}");
        // n = 100: the textbook (40, 61) interval, coverage 0.9648.
        let (j, k, cov) = median_ci_ranks(100, 0.05).unwrap();
        assert_eq!((j, k), (40, 61));
        assert!(close(cov, 0.964_799_799_782_295_2, 1e-12), "{cov}");
        let (j, k, c) = median_ci_ranks(120, 0.05).unwrap();
        assert_eq!((j, k), (49, 72));
        assert!(close(c, 0.964_676_317_462_230_4, 1e-12), "{c}");
        let (j, k, c) = median_ci_ranks(121, 0.05).unwrap();
        assert_eq!((j, k), (50, 72));
        assert!(close(c, 0.954_948_260_274_264, 1e-12), "{c}");
        let (j, k, cov) = median_ci_ranks(10_000, 0.05).unwrap();
        assert_eq!((j, k), (4902, 5099));
        assert!(close(cov, 0.951_167_050_103_618_1, 1e-10), "{cov}");
        // Large n: the ranks sit 1.96 sqrt(n)/2 from the middle.
        let n = 1_000_000;
        let (j, _, cov) = median_ci_ranks(n, 0.05).unwrap();
        assert!(
            (n / 2 - j) as f64 > 979.0 && ((n / 2 - j) as f64) < 981.0,
            "{j}"
        );
        assert!((0.95..0.9502).contains(&cov), "{cov}");
    }
    use proptest::prelude::*;

    #[test]
    fn one_to_ten_hand_computed() {
        // numpy: np.percentile(range(1, 11), [1, 5, 25, 50, 75, 95, 99])
        //   = [1.09, 1.45, 3.25, 5.5, 7.75, 9.55, 9.91]
        let xs: Vec<u64> = (1..=10).collect();
        let s = Summary::from_samples(&xs);
        assert_eq!(s.n, 10);
        assert_eq!(s.mean, 5.5);
        // var = sum (x - 5.5)^2 / 9 = 82.5 / 9
        assert_eq!(s.std, Some((82.5f64 / 9.0).sqrt()));
        assert_eq!((s.min, s.max), (1, 10));
        assert_eq!(s.p1, 1.09);
        assert_eq!(s.p5, 1.45);
        assert_eq!(s.q1, 3.25);
        assert_eq!(s.median, 5.5);
        assert_eq!(s.q3, 7.75);
        assert_eq!(s.p95, 9.55);
        assert_eq!(s.p99, 9.91);
        // IQR 4.5: bounds -3.5 and 14.5, so whiskers are min and max, no outliers.
        assert_eq!((s.whisker_lo, s.whisker_hi), (1.0, 10.0));
        assert_eq!(s.outliers(), 0);
        // t(0.975, 9) = 2.262157162798205 (50-digit reference); half = t * std / sqrt(10).
        let ci = s.mean_ci95.unwrap();
        let half = 2.262_157_162_798_205 * (82.5f64 / 9.0).sqrt() / 10f64.sqrt();
        assert!((ci.half_width() - half).abs() < 1e-12, "{ci:?}");
        // Binomial CI for n = 10: ranks 2 and 9.
        let m = s.median_ci95.unwrap();
        assert_eq!((m.lo, m.hi, m.lo_rank, m.hi_rank), (2, 9, 2, 9));
        assert!((m.coverage - (1.0 - 22.0 / 1024.0)).abs() < 1e-14);
        // Notch: 5.5 ± 1.57 * 4.5 / sqrt(10).
        let nh = 1.57 * 4.5 / 10f64.sqrt();
        assert_eq!(
            s.notch,
            Interval {
                lo: 5.5 - nh,
                hi: 5.5 + nh
            }
        );
    }

    #[test]
    fn outliers_and_whiskers_hand_computed() {
        // Sorted: [1, 2, 3, 4, 5, 6, 7, 8, 100]; n = 9, h = 8 p.
        // q1 = x_2 = 3, q3 = x_6 = 7, IQR = 4; bounds -3 and 13.
        let xs = [100, 3, 1, 2, 4, 5, 6, 7, 8];
        let s = Summary::from_samples(&xs);
        assert_eq!((s.q1, s.median, s.q3), (3.0, 5.0, 7.0));
        assert_eq!((s.whisker_lo, s.whisker_hi), (1.0, 8.0));
        assert_eq!((s.outliers_lo, s.outliers_hi), (0, 1));
        // p99: h = 7.92 -> 8 + 0.92 * 92 = 92.64; p95: h = 7.6 -> 8 + 0.6 * 92 = 63.2.
        assert_eq!(s.p99, 92.64);
        assert_eq!(s.p95, 63.2);
        // p1: h = 0.08 -> 1.08; p5: h = 0.4 -> 1.4.
        assert_eq!((s.p1, s.p5), (1.08, 1.4));
        assert_eq!(s.mean, 136.0 / 9.0);
    }

    #[test]
    fn whisker_bound_is_inclusive() {
        // [0, 10, 10, 10, 10, 20, 25]: n = 7, q1 = x at h=1.5 -> 10, q3 at h=4.5 -> 15;
        // IQR 5, upper bound 15 + 7.5 = 22.5 -> 20 is the whisker, 25 an outlier;
        // lower bound 10 - 7.5 = 2.5 -> 0 is an outlier, whisker 10.
        let s = Summary::from_samples(&[0, 10, 10, 10, 10, 20, 25]);
        assert_eq!((s.q1, s.q3), (10.0, 15.0));
        assert_eq!((s.whisker_lo, s.whisker_hi), (10.0, 20.0));
        assert_eq!((s.outliers_lo, s.outliers_hi), (1, 1));
        // [10, 10, 10, 10, 16]: q1 = q3 = 10, IQR 0: 16 is an outlier, whiskers 10/10.
        let s = Summary::from_samples(&[10, 10, 10, 10, 16]);
        assert_eq!((s.whisker_lo, s.whisker_hi, s.outliers_hi), (10.0, 10.0, 1));
        // [0, 4, 4, 8, 14]: q1 = 4, q3 = 8, IQR 4, upper bound 14 exactly: 14 is the whisker.
        let s = Summary::from_samples(&[0, 4, 4, 8, 14]);
        assert_eq!((s.q1, s.q3), (4.0, 8.0));
        assert_eq!((s.whisker_hi, s.outliers_hi), (14.0, 0));
        // Lower bound -2: 0 is the whisker.
        assert_eq!((s.whisker_lo, s.outliers_lo), (0.0, 0));
    }

    #[test]
    fn whisker_falls_back_to_fractional_quartile() {
        // n = 8: q1 at h = 1.75 -> 1, q3 at h = 5.25 -> 1 + 0.25 * 100 = 26; bound 26 + 37.5 = 63.5.
        // The largest sample <= 63.5 is 1 < q3, so matplotlib draws the whisker at q3 = 26.
        let s = Summary::from_samples(&[1, 1, 1, 1, 1, 1, 101, 101]);
        assert_eq!((s.q1, s.q3), (1.0, 26.0));
        assert_eq!(s.whisker_hi, 26.0);
        assert_eq!(s.outliers_hi, 2);
    }

    #[test]
    fn single_and_constant_samples() {
        let s = Summary::from_samples(&[42]);
        assert_eq!((s.n, s.mean, s.std, s.min, s.max), (1, 42.0, None, 42, 42));
        assert_eq!((s.p1, s.median, s.p99), (42.0, 42.0, 42.0));
        assert_eq!((s.mean_ci95, s.median_ci95), (None, None));
        assert_eq!((s.whisker_lo, s.whisker_hi, s.outliers()), (42.0, 42.0, 0));
        let s = Summary::from_samples(&[7; 30]);
        assert_eq!(s.std, Some(0.0));
        assert_eq!(s.mean_ci95, Some(Interval { lo: 7.0, hi: 7.0 }));
        assert_eq!(s.median_ci95.map(|m| (m.lo, m.hi)), Some((7, 7)));
        assert_eq!(Summary::try_from_samples(&[]), Err(StatsError::Empty));
    }

    #[test]
    fn exact_arithmetic_on_huge_values() {
        // Values near u64::MAX: the mean and quantiles must not overflow.
        let big = u64::MAX - 10;
        let s = Summary::from_samples(&[big, big + 10]);
        assert_eq!(s.median, (big as f64 + (big + 10) as f64) / 2.0);
        assert_eq!((s.min, s.max), (big, big + 10));
    }

    #[test]
    fn float_quantile_matches_exact_centiles() {
        let xs: Vec<u64> = (0..1000u64).map(|i| i * i % 9973 * 1_000).collect();
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        let s = Summary::from_sorted(&sorted);
        for (p, v) in [(0.01, s.p1), (0.25, s.q1), (0.5, s.median), (0.95, s.p95)] {
            let f = quantile_sorted(&sorted, p);
            assert!((f - v).abs() <= 1e-9 * v.max(1.0), "p={p}: {f} vs {v}");
        }
        assert_eq!(quantile_sorted(&sorted, 0.0), sorted[0] as f64);
        assert_eq!(quantile_sorted(&sorted, 1.0), sorted[999] as f64);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn order_invariants(xs in prop::collection::vec(0u64..2_000_000_000_000, 1..200)) {
            let s = Summary::from_samples(&xs);
            let chain = [
                s.min as f64, s.p1, s.p5, s.q1, s.median, s.q3, s.p95, s.p99, s.max as f64,
            ];
            for w in chain.windows(2) {
                prop_assert!(w[0] <= w[1], "{:?}", chain);
            }
            prop_assert!(s.min as f64 <= s.mean && s.mean <= s.max as f64);
            prop_assert!(s.whisker_lo <= s.q1 && s.q3 <= s.whisker_hi);
            prop_assert!(s.min as f64 <= s.whisker_lo && s.whisker_hi <= s.max as f64);
            prop_assert!(s.outliers() <= s.n);
            let below = xs.iter().filter(|&&x| (x as f64) < s.whisker_lo).count();
            let above = xs.iter().filter(|&&x| (x as f64) > s.whisker_hi).count();
            prop_assert_eq!((below, above), (s.outliers_lo, s.outliers_hi));
            if let Some(m) = s.median_ci95 {
                prop_assert!(m.lo as f64 <= s.median && s.median <= m.hi as f64);
                prop_assert!(m.coverage >= 0.95);
            }
            if let Some(ci) = s.mean_ci95 {
                prop_assert!(ci.lo <= s.mean && s.mean <= ci.hi);
            }
        }

        #[test]
        fn permutation_invariant(
            xs in prop::collection::vec(0u64..1_000_000, 1..100),
            seed in any::<u64>(),
        ) {
            let mut ys = xs.clone();
            // Fisher–Yates with a tiny LCG: any permutation is fine.
            let mut r = seed;
            for i in (1..ys.len()).rev() {
                r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let j = (r >> 33) as usize % (i + 1);
                ys.swap(i, j);
            }
            let a = Summary::from_samples(&xs);
            let b = Summary::from_samples(&ys);
            // Everything is computed from the sorted samples, so equality is exact.
            prop_assert_eq!(a, b);
        }

        #[test]
        fn quartiles_match_float_definition(xs in prop::collection::vec(0u64..1_000_000, 1..100)) {
            let mut sorted = xs.clone();
            sorted.sort_unstable();
            let s = Summary::from_sorted(&sorted);
            for (p, v) in [(0.25, s.q1), (0.5, s.median), (0.75, s.q3)] {
                let f = quantile_sorted(&sorted, p);
                prop_assert!((f - v).abs() <= 1e-9 * v.max(1.0));
            }
        }
    }

    #[test]
    fn precision_rule_of_auto_repetitions() {
        // Constant or nearly constant samples are precise at once.
        assert!(precise(&[1_000_000; 32], 0.005));
        let quiet: Vec<u64> = (0..32).map(|i| 1_000_000 + i * 100).collect();
        assert!(precise(&quiet, 0.005));
        // A spread of ±10 % is not, at 32 samples.
        let noisy: Vec<u64> = (0..32).map(|i| 900_000 + (i * 7919 % 32) * 6_250).collect();
        assert!(!precise(&noisy, 0.005));
        // A rare slow mode (5 of 100 runs 3× slower) keeps the p95 uncertain.
        let bimodal: Vec<u64> = (0..100)
            .map(|i| {
                if i % 20 == 0 {
                    3_000_000
                } else {
                    1_000_000 + i
                }
            })
            .collect();
        assert!(!precise(&bimodal, 0.005));
        // Too few samples never stop.
        assert!(!precise(&[5; 7], 0.005));
        // The order-statistic ranks bracket the quantile.
        assert_eq!(quantile_ci_indices(100, 0.5), (39, 60));
        assert_eq!(quantile_ci_indices(32, 0.95), (26, 31));
    }
}
