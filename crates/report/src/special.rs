//! The few distribution functions the statistics need, implemented here so that the crate has no
//! numerical dependency and every result is reproducible bit for bit on every platform.
//!
//! * [`normal_quantile`]: inverse of the standard normal CDF, found by safeguarded Newton iteration
//!   on an `erfc` with relative error about 1e-15 (series below 1.5, continued fraction above).
//! * [`t_quantile`]: inverse of Student's t CDF. For `df <= 1000` the CDF is the exact finite series of
//!   Abramowitz & Stegun 26.7.3/26.7.4 (a closed form for integer degrees of freedom), inverted by
//!   bisection to the last bit. For `df > 1000` the Cornish–Fisher expansion of A&S 26.7.5 to order
//!   `1/df^4` is used; its truncation error there is below `1e-13`.
//!   Overall the relative error is below about `3e-13` (the exact series loses a little to rounding
//!   as `df` grows; checked against a 50-digit evaluation).
//! * [`median_ci_ranks`]: the distribution-free binomial confidence interval for a median.

use std::f64::consts::{FRAC_2_SQRT_PI, PI, SQRT_2};

/// Above this many degrees of freedom [`t_quantile`] switches from the exact series to the
/// Cornish–Fisher expansion.
pub const T_EXACT_MAX_DF: u64 = 1000;

/// Complementary error function, `erfc(x) = 1 - erf(x)`.
///
/// For `|x| < 1.5` it sums the everywhere-positive series
/// `erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n (2x^2)^n x / (1*3*...*(2n+1))`; for `x >= 1.5` it
/// evaluates the Laplace continued fraction with the modified Lentz method (at most ~90 terms),
/// which keeps the *relative* error small deep in the tail. Relative error is about 1e-15
/// throughout (checked against the C library's `erfc`).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 1.5 {
        let x2 = x * x;
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        loop {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
            if term <= sum * 1e-17 {
                break;
            }
        }
        return 1.0 - FRAC_2_SQRT_PI * (-x2).exp() * sum;
    }
    if x > 27.3 {
        return 0.0; // exp(-x^2) underflows
    }
    // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..1000 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = x + a / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    FRAC_2_SQRT_PI / 2.0 * (-x * x).exp() / f
}

/// Standard normal CDF, `Phi(z) = erfc(-z/sqrt(2))/2`.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / SQRT_2)
}

/// Standard normal quantile `Phi^-1(p)` for `0 < p < 1` (NaN outside).
///
/// Safeguarded Newton iteration on the tail probability (bisection when a Newton step leaves the
/// bracket), stopped when the bracket no longer shrinks: the result is within a few ulps.
pub fn normal_quantile(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -upper_normal_quantile(p);
    }
    upper_normal_quantile(1.0 - p)
}

/// z > 0 with `Q(z) = 1 - Phi(z) = q`, for `0 < q < 0.5`.
fn upper_normal_quantile(q: f64) -> f64 {
    let tail = |z: f64| 0.5 * erfc(z / SQRT_2);
    let (mut lo, mut hi) = (0.0_f64, 40.0_f64);
    let mut z = (-2.0 * q.ln()).sqrt().min(39.0);
    for _ in 0..200 {
        let g = tail(z) - q;
        if g > 0.0 {
            lo = z; // tail too big: z too small
        } else {
            hi = z;
        }
        let density = (-0.5 * z * z).exp() / (2.0 * PI).sqrt();
        let mut next = z + g / density;
        if !(next > lo && next < hi && next.is_finite()) {
            next = 0.5 * (lo + hi);
        }
        if next == z || hi - lo <= f64::EPSILON * hi {
            return next;
        }
        z = next;
    }
    z
}

/// `A(t|df) = P(|T| <= t)` for `t >= 0`, by the exact finite series (A&S 26.7.3 and 26.7.4).
fn t_central_prob(t: f64, df: u64) -> f64 {
    let nu = df as f64;
    let theta = t.atan2(nu.sqrt());
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df.is_multiple_of(2) {
        // sin(theta) * (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ... + 1*3*..*(df-3)/(2*4*..*(df-2)) c^(df-2))
        let mut term = 1.0;
        let mut sum = 1.0;
        for k in 1..df / 2 {
            let k = k as f64;
            term *= c2 * (2.0 * k - 1.0) / (2.0 * k);
            sum += term;
        }
        s * sum
    } else {
        // 2/pi * (theta + sin cos (1 + 2/3 c^2 + 2*4/(3*5) c^4 + ... + 2*4..(df-3)/(3*5..(df-2)) c^(df-3)))
        let mut inner = 0.0;
        if df > 1 {
            let mut term = 1.0;
            inner = 1.0;
            for k in 1..(df - 1) / 2 {
                let k = k as f64;
                term *= c2 * (2.0 * k) / (2.0 * k + 1.0);
                inner += term;
            }
        }
        2.0 / PI * (theta + s * c * inner)
    }
}

/// Student's t CDF with `df >= 1` degrees of freedom (exact series; cost grows with `df`).
pub fn t_cdf(t: f64, df: u64) -> f64 {
    assert!(df >= 1, "t distribution needs at least 1 degree of freedom");
    if t.is_nan() {
        return f64::NAN;
    }
    let a = t_central_prob(t.abs(), df);
    if t >= 0.0 {
        0.5 + 0.5 * a
    } else {
        0.5 - 0.5 * a
    }
}

/// Quantile of Student's t distribution with `df >= 1` degrees of freedom, `0 < p < 1` (NaN outside).
///
/// `df <= 1000`: the exact CDF series inverted by bisection until the bracket stops shrinking.
/// `df > 1000`: `z + g1/df + g2/df^2 + g3/df^3 + g4/df^4` (A&S 26.7.5) with `z = Phi^-1(p)`.
///
/// # Panics
/// If `df == 0`.
pub fn t_quantile(p: f64, df: u64) -> f64 {
    assert!(df >= 1, "t distribution needs at least 1 degree of freedom");
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    if df > T_EXACT_MAX_DF {
        let z = normal_quantile(p);
        let z2 = z * z;
        let z3 = z2 * z;
        let z5 = z3 * z2;
        let z7 = z5 * z2;
        let z9 = z7 * z2;
        let g1 = (z3 + z) / 4.0;
        let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
        let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
        let g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
        let nu = df as f64;
        return z + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu;
    }
    let target = 2.0 * p - 1.0;
    let mut lo = 0.0_f64;
    let mut hi = 1.0_f64;
    while t_central_prob(hi, df) < target {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return f64::INFINITY;
        }
    }
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            // No representable point strictly inside: pick the closer end.
            let dlo = target - t_central_prob(lo, df);
            let dhi = t_central_prob(hi, df) - target;
            return if dlo <= dhi { lo } else { hi };
        }
        if t_central_prob(mid, df) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// Ranks of the distribution-free confidence interval for the median.
///
/// With `n` i.i.d. samples of a continuous distribution, the number `B` of samples below the true
/// median is `Binomial(n, 1/2)`, so the order statistics `x_(j) <= median <= x_(k)` (1-based ranks)
/// hold with probability `P(j <= B <= k-1)`. We take the symmetric interval `k = n + 1 - j` with the
/// **largest** `j` such that `P(B <= j-1) <= alpha/2`; its coverage `1 - 2 P(B <= j-1)` is therefore
/// at least `1 - alpha` and as tight as the discrete distribution allows. Returns `None` when even
/// `[min, max]` does not reach the confidence (`2^(1-n) > alpha`, i.e. `n <= 5` for 95 %).
///
/// Returns `(j, k, coverage)`. For `n <= 120` the binomial sums are exact integers; above, they are
/// accumulated in log space (relative error around `n * 1e-16`).
pub fn median_ci_ranks(n: usize, alpha: f64) -> Option<(usize, usize, f64)> {
    if n == 0 || !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let half = alpha / 2.0;
    // Largest i with F(i) <= alpha/2 (F = Binomial(n, 1/2) CDF), and F(i).
    let mut best: Option<(usize, f64)> = None;
    if n <= 120 {
        let total = 1u128 << n;
        let mut binom: u128 = 1; // C(n, i)
        let mut cum: u128 = 0;
        for i in 0..n {
            cum += binom;
            // cum / 2^n <= half, evaluated exactly as far as half is exact in f64.
            let f = cum as f64 / total as f64;
            if (cum as f64) <= half * total as f64 {
                best = Some((i, f));
            } else {
                break;
            }
            binom = binom * (n - i) as u128 / (i + 1) as u128;
        }
    } else {
        let mut log_pmf = -(n as f64) * std::f64::consts::LN_2;
        let mut cum = 0.0_f64;
        for i in 0..n {
            cum += log_pmf.exp();
            if cum <= half {
                best = Some((i, cum));
            } else {
                break;
            }
            log_pmf += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
    }
    best.map(|(i, f)| {
        let j = i + 1;
        (j, n + 1 - j, 1.0 - 2.0 * f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn erfc_matches_known_values() {
        // Reference values: C99 libm erfc (via Python's math.erfc).
        let cases = [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_265),
            (3.0, 2.209_049_699_858_543_8e-5),
            (5.0, 1.537_459_794_428_035_1e-12),
            (-1.0, 1.842_700_792_949_715),
        ];
        for (x, want) in cases {
            let got = erfc(x);
            assert!(
                close(got, want, 1e-14),
                "erfc({x}) = {got:e}, want {want:e}"
            );
        }
    }

    #[test]
    fn normal_quantile_known_values() {
        // Reference values: Wichura's AS241 (Python's statistics.NormalDist.inv_cdf).
        let cases = [
            (0.975, 1.959_963_984_540_053_6),
            (0.95, 1.644_853_626_951_471_5),
            (0.5, 0.0),
            (0.025, -1.959_963_984_540_053_6),
            (0.999, 3.090_232_306_167_813),
            (1e-10, -6.361_340_902_404_056),
        ];
        for (p, want) in cases {
            let got = normal_quantile(p);
            assert!(
                (got - want).abs() <= 4e-15 * want.abs().max(1.0),
                "Phi^-1({p}) = {got:.17}, want {want:.17}"
            );
        }
        assert!(normal_quantile(0.0).is_nan());
        assert!(normal_quantile(1.0).is_nan());
    }

    #[test]
    fn t_quantile_closed_forms() {
        // df = 1 (Cauchy): tan(pi (p - 1/2)).
        for p in [0.6f64, 0.9, 0.975, 0.995] {
            let want = (PI * (p - 0.5)).tan();
            assert!(close(t_quantile(p, 1), want, 1e-13), "p={p}");
        }
        // df = 2: (2p - 1) / sqrt(2 p (1 - p)).
        for p in [0.6f64, 0.9, 0.975, 0.995] {
            let want = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
            assert!(close(t_quantile(p, 2), want, 1e-13), "p={p}");
        }
        // df = 4: a = 4p(1-p), t = 2 sqrt(cos(acos(sqrt a)/3)/sqrt a - 1).
        for p in [0.6f64, 0.9, 0.975, 0.995] {
            let a: f64 = 4.0 * p * (1.0 - p);
            let want = 2.0 * ((a.sqrt().acos() / 3.0).cos() / a.sqrt() - 1.0).sqrt();
            assert!(close(t_quantile(p, 4), want, 1e-13), "p={p}");
        }
    }

    #[test]
    fn t_quantile_975_table() {
        // Reference values: the same closed-form series evaluated in 50-digit decimal arithmetic
        // (Python `decimal`, an independent implementation) at the exact binary value of 0.975.
        let cases = [
            (1, 12.706_204_736_174_694),
            (2, 4.302_652_729_749_462),
            (3, 3.182_446_305_283_708_6),
            (4, 2.776_445_105_197_793_4),
            (5, 2.570_581_835_636_314_6),
            (9, 2.262_157_162_798_205),
            (10, 2.228_138_851_986_274_4),
            (30, 2.042_272_456_301_237_8),
            (100, 1.983_971_518_523_551_8),
            (1000, 1.962_339_080_826_408),
            (1001, 1.962_336_705_280_879_6),
            (5000, 1.960_438_551_706_507_5),
        ];
        for (df, want) in cases {
            let got = t_quantile(0.975, df);
            assert!(
                close(got, want, 1e-13),
                "t(0.975, {df}) = {got:.17}, want {want:.17}"
            );
            assert_eq!(t_quantile(0.025, df), -got);
        }
        // Far tail, where conditioning is worst: 50-digit references again.
        assert!(close(t_quantile(0.995, 1), 63.656_741_162_871_526, 1e-12));
        assert!(close(
            t_quantile(0.995, 1000),
            2.580_754_698_065_950_6,
            1e-13
        ));
    }

    #[test]
    fn cornish_fisher_agrees_with_exact_series_at_the_switch() {
        // Above T_EXACT_MAX_DF the expansion is used; check it against the exact series near there.
        for df in [200u64, 1000, 1001] {
            for p in [0.9, 0.975, 0.995] {
                let target = 2.0 * p - 1.0;
                // Exact: invert the series by bisection directly.
                let (mut lo, mut hi) = (0.0_f64, 10.0_f64);
                for _ in 0..200 {
                    let mid = 0.5 * (lo + hi);
                    if t_central_prob(mid, df) < target {
                        lo = mid
                    } else {
                        hi = mid
                    }
                }
                let exact = 0.5 * (lo + hi);
                let z = normal_quantile(p);
                let nu = df as f64;
                let z3 = z * z * z;
                let z5 = z3 * z * z;
                let z7 = z5 * z * z;
                let z9 = z7 * z * z;
                let cf = z
                    + (z3 + z) / 4.0 / nu
                    + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0 / nu.powi(2)
                    + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0 / nu.powi(3)
                    + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z)
                        / 92160.0
                        / nu.powi(4);
                // The double-precision series itself is off by ~1.5e-13 at df = 1000.
                let tol = if df >= 1000 { 3e-13 } else { 1e-10 };
                assert!(
                    (cf - exact).abs() < tol,
                    "df={df} p={p}: cf {cf} exact {exact}"
                );
            }
        }
        let a = t_quantile(0.975, 1000);
        let b = t_quantile(0.975, 1001);
        assert!(a > b && a - b < 3e-6, "{a} {b}");
    }

    #[test]
    fn t_cdf_inverts_quantile() {
        for df in [1u64, 2, 3, 7, 30, 999] {
            for p in [0.01, 0.2, 0.5, 0.8, 0.975] {
                let t = t_quantile(p, df);
                assert!((t_cdf(t, df) - p).abs() < 1e-14, "df={df} p={p}");
            }
        }
    }

    #[test]
    fn median_ci_ranks_known_values() {
        assert_eq!(median_ci_ranks(5, 0.05), None); // 2/32 = 0.0625 > 0.05
                                                    // n = 6: P(B = 0) = 1/64 <= 0.025; coverage 1 - 2/64.
        assert_eq!(median_ci_ranks(6, 0.05), Some((1, 6, 1.0 - 2.0 / 64.0)));
        // n = 10: F(1) = 11/1024 <= 0.025 < F(2) = 56/1024.
        assert_eq!(median_ci_ranks(10, 0.05), Some((2, 9, 1.0 - 22.0 / 1024.0)));
        // n = 100: the textbook (40, 61) interval, coverage 0.9648.
        let (j, k, cov) = median_ci_ranks(100, 0.05).unwrap();
        assert_eq!((j, k), (40, 61));
        assert!((cov - 0.964_799_799_782_295_2).abs() < 1e-15, "{cov}");
        // Exact path (n = 120) and log-space path (n = 121) agree with their neighbours' pattern.
        // (Reference values: exact rational binomial sums.)
        let (j120, k120, c120) = median_ci_ranks(120, 0.05).unwrap();
        let (j121, k121, c121) = median_ci_ranks(121, 0.05).unwrap();
        assert_eq!((j120, k120), (49, 72));
        assert_eq!((j121, k121), (50, 72));
        assert!((c120 - 0.964_676_317_462_230_4).abs() < 1e-15, "{c120}");
        assert!((c121 - 0.954_948_260_274_264).abs() < 1e-12, "{c121}");
        let (j, k, cov) = median_ci_ranks(10_000, 0.05).unwrap();
        assert_eq!((j, k), (4902, 5099));
        assert!((cov - 0.951_167_050_103_618_1).abs() < 1e-10, "{cov}");
    }
}
