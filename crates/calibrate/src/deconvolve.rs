//! Undoing an average: the distribution of one draw when only the mean of `n` independent
//! draws was measured.
//!
//! A Netgauge ping-pong sample is half a round trip: the mean of the two directions' one-way
//! times (and, for a message striped over K connections, of 2K per-byte times). A simulator
//! that draws every message independently must draw from a distribution whose mean of `n`
//! draws is the captured one, not from the captured one itself: that has the right mean but,
//! drawn per message, too wide a spread and tails twice as frequent and half as large.
//!
//! [`mean_deconvolve`] finds it by expectation maximisation on a grid (the maximum-likelihood
//! "self-deconvolution"): the draw's distribution `w` on a grid of [`GRID`] points, the
//! distribution of the sum of `n` draws `w^{*n}` by FFT, and the multiplicative update
//! `w_i ← w_i · Σ_k (g_k / w^{*n}_k) · w^{*(n−1)}_{k−i}` that never lowers the likelihood of
//! the captured histogram `g`. The body (up to the 98th percentile) is deconvolved so; each
//! sample above it is a rare event that one of the `n` draws carried alone: its excess over the
//! body's median is `n` times larger and it is `n` times rarer per draw.

use rustfft::num_complex::Complex;
use rustfft::FftPlanner;

use crate::stats::quantile_sorted;

/// Grid points of the distribution of a sum of draws (one draw's grid has `GRID / n` points,
/// at least [`MIN_GRID`], one per sample of a body of fewer samples): fine enough to
/// resolve a latency body of a few µs under a tail of tens of µs (Piz Daint: 65,536 points of
/// 2 ns for two draws).
pub const GRID: usize = 1 << 17;
/// Fewest grid points of one draw's distribution.
pub const MIN_GRID: usize = 4096;
/// Fewest grid points of one draw's distribution for a body of fewer samples than
/// [`MIN_GRID`] (which gets one point per sample).
pub const MIN_SPARSE_GRID: usize = 64;
/// EM iterations.
pub const ITERATIONS: usize = 150;
/// Samples above this quantile are rare events carried by one draw.
pub const BODY_QUANTILE: f64 = 0.98;

/// A sorted sample of one draw whose mean of `n` independent draws has the distribution of the
/// sorted, non-negative `target` (as many values as `target`, so a quantile table built from
/// it has the same resolution). `n <= 1` returns `target`.
pub fn mean_deconvolve(target: &[f64], n: usize) -> Vec<f64> {
    if n <= 1 {
        return target.to_vec();
    }
    deconvolve(target, n, None)
}

/// A sorted sample of `D` such that the mean of one draw of `D` and one draw of `other` (sorted
/// sample of another distribution, drawn independently) has the distribution of `target`: a
/// round trip whose two directions are drawn from different distributions.
pub fn mean_deconvolve_with(target: &[f64], other: &[f64]) -> Vec<f64> {
    deconvolve(target, 2, Some(other))
}

/// `n` draws whose mean is `target`: all of one unknown distribution (`other = None`), or one
/// of it and one of `other` (`n = 2`).
fn deconvolve(target: &[f64], n: usize, other: Option<&[f64]>) -> Vec<f64> {
    let len = target.len();
    if len < 2 {
        return target.to_vec();
    }
    let cap = quantile_sorted(target, BODY_QUANTILE);
    if cap <= 0.0 || !cap.is_finite() {
        return target.to_vec();
    }
    let body_len = target.partition_point(|&x| x <= cap);
    let (body, tail) = target.split_at(body_len);
    // One draw's grid: widened around the body, as deconvolving widens a spread by about √n
    // (and, against another distribution, by its spread).
    let range = match other {
        Some(_) => 2.0 * cap,
        None => cap * (1.0 + (n as f64).sqrt()),
    };
    // A body of fewer samples than [`MIN_GRID`] gets one grid point per sample: on a histogram
    // that sparse the EM's maximum-likelihood solution collapses onto the few points where
    // samples happen to cluster (a 2,937-sample bandwidth capture of a loaded VM: 45 % of the
    // mass in one point, the pairs' median 15 % above the capture's).
    let m = if body.len() < MIN_GRID {
        body.len().max(MIN_SPARSE_GRID)
    } else {
        (GRID / n).max(MIN_GRID)
    };
    let h = range / m as f64;
    let sum_len = n * m;
    let fft_len = (sum_len + m).next_power_of_two();
    let bin = |x: f64, len: usize| (((x / h) + 0.5) as usize).min(len - 1);
    // The captured histogram of the sum of n draws.
    let mut g = vec![0.0f64; sum_len];
    for &x in body {
        g[bin(n as f64 * x, sum_len)] += 1.0;
    }
    normalise(&mut g);
    // Start from the captured distribution itself (against another one: shifted by its
    // median, so the start's mean is right).
    let other_med = other.map_or(0.0, |o| quantile_sorted(o, 0.5));
    let mut w = vec![1e-12f64; m];
    for &x in body {
        let start = match other {
            Some(_) => (2.0 * x - other_med).max(0.0),
            None => x,
        };
        w[bin(start, m)] += 1.0;
    }
    normalise(&mut w);
    let mut planner = FftPlanner::<f64>::new();
    let fwd = planner.plan_fft_forward(fft_len);
    let inv = planner.plan_fft_inverse(fft_len);
    let zero = Complex::new(0.0, 0.0);
    let spectrum = |v: &[f64], out: &mut Vec<Complex<f64>>| {
        out.clear();
        out.extend(v.iter().map(|&x| Complex::new(x, 0.0)));
        out.resize(fft_len, zero);
        fwd.process(out);
    };
    // The fixed kernel of `other` (the sum's other draw), if any.
    let mut fixed = Vec::new();
    if let Some(o) = other {
        let mut k = vec![0.0f64; m];
        for &x in o {
            k[bin(x, m)] += 1.0;
        }
        normalise(&mut k);
        spectrum(&k, &mut fixed);
    }
    let mut pw = Vec::with_capacity(fft_len);
    let mut kern = vec![zero; fft_len];
    let mut buf = vec![zero; fft_len];
    let mut rbuf = vec![zero; fft_len];
    let scale = 1.0 / fft_len as f64;
    for _ in 0..ITERATIONS {
        spectrum(&w, &mut pw);
        // The kernel: the other n−1 draws' distribution (w^{*(n−1)}, or `other`).
        if other.is_some() {
            kern.copy_from_slice(&fixed);
        } else {
            kern.copy_from_slice(&pw);
            for _ in 2..n {
                for (a, &b) in kern.iter_mut().zip(pw.iter()) {
                    *a *= b;
                }
            }
        }
        // The model's sum: IFFT(W · K).
        for ((b, &a), &c) in buf.iter_mut().zip(kern.iter()).zip(pw.iter()) {
            *b = a * c;
        }
        inv.process(&mut buf);
        // r_k = g_k / model_k; the FFT's rounding leaves the model near 0 (even below) far
        // from its mass, so it is floored well above that noise.
        let floor = 1e-9 / sum_len as f64;
        for (k, r) in rbuf.iter_mut().enumerate() {
            *r = if k < sum_len && g[k] > 0.0 {
                Complex::new(g[k] / (buf[k].re * scale).max(floor), 0.0)
            } else {
                zero
            };
        }
        // corr_i = Σ_k r_k · kernel_{k−i} = IFFT(R · conj(K))_i.
        fwd.process(&mut rbuf);
        for (r, &a) in rbuf.iter_mut().zip(kern.iter()) {
            *r *= a.conj();
        }
        inv.process(&mut rbuf);
        for (i, wi) in w.iter_mut().enumerate() {
            *wi *= (rbuf[i].re * scale).max(0.0);
        }
        normalise(&mut w);
    }
    // The draw's quantile function: the body from `w`, then the rare events.
    let cdf: Vec<f64> = w
        .iter()
        .scan(0.0, |c, &v| {
            *c += v;
            Some(*c)
        })
        .collect();
    let body_quantile = |u: f64| -> f64 {
        let i = cdf.partition_point(|&c| c < u).min(m - 1);
        let lo = if i == 0 { 0.0 } else { cdf[i - 1] };
        let frac = if cdf[i] > lo {
            (u - lo) / (cdf[i] - lo)
        } else {
            0.5
        };
        ((i as f64 - 0.5 + frac) * h).max(0.0)
    };
    // A rare event is carried by one draw: its excess over the other draws' median, n times.
    let rest_med = other.map_or_else(|| body_quantile(0.5), |_| other_med);
    let events: Vec<f64> = match other {
        // Against a known other draw, every tail sample is this draw's event.
        Some(_) => tail
            .iter()
            .map(|&x| (2.0 * x - rest_med).max(0.0))
            .collect(),
        None => tail
            .iter()
            .skip(n - 1)
            .step_by(n)
            .map(|&x| (n as f64 * x - (n - 1) as f64 * rest_med).max(0.0))
            .collect(),
    };
    let body_out = len - events.len();
    let mut out: Vec<f64> = (0..body_out)
        .map(|k| body_quantile((k as f64 + 0.5) / body_out as f64))
        .collect();
    out.extend(events);
    out.sort_by(f64::total_cmp);
    out
}

fn normalise(w: &mut [f64]) {
    let s: f64 = w.iter().sum();
    if s > 0.0 {
        w.iter_mut().for_each(|v| *v /= s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Means of n draws of the result reproduce the target's quantiles.
    fn check(t: &[f64], n: usize) {
        let d = mean_deconvolve(t, n);
        assert_eq!(d.len(), t.len());
        let mut s = 7u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 * d.len() as f64) as usize
        };
        let mut avg: Vec<f64> = (0..400_000)
            .map(|_| (0..n).map(|_| d[next()]).sum::<f64>() / n as f64)
            .collect();
        avg.sort_by(f64::total_cmp);
        for (p, tol) in [(0.5, 0.03), (0.95, 0.1), (0.99, 0.1)] {
            let (a, b) = (quantile_sorted(&avg, p), quantile_sorted(t, p));
            assert!((a / b - 1.0).abs() < tol, "n {n} p {p}: {a} vs {b}");
        }
    }

    fn target(f: impl Fn(f64) -> f64) -> Vec<f64> {
        let mut t: Vec<f64> = (0..50_000)
            .map(|i| f((i as f64 + 0.5) / 50_000.0))
            .collect();
        t.sort_by(f64::total_cmp);
        t
    }

    /// Two draws (a ping-pong's two directions) of a multimodal target with rare large values,
    /// the shape of Piz Daint's latency capture.
    #[test]
    fn pairs_of_a_multimodal_capture() {
        let t = target(|u| {
            if u < 0.41 {
                0.12 + 0.01 * u
            } else if u < 0.78 {
                0.72 + 0.02 * u
            } else if u < 0.88 {
                1.0 + 2.0 * u
            } else if u < 0.98 {
                7.5 + u
            } else {
                30.0 * u * u
            }
        });
        check(&t, 2);
    }

    /// One draw against a known other draw (the ping after the client's sleep, the pong back to
    /// back): a narrow other distribution and a target with a 10 % mode far out.
    #[test]
    fn against_a_known_other_draw() {
        let t = target(|u| {
            if u < 0.85 {
                1.0 + 0.5 * u
            } else {
                8.0 + 5.0 * u
            }
        });
        let other = target(|u| 1.0 + 0.2 * u);
        let d = mean_deconvolve_with(&t, &other);
        let mut s = 11u64;
        let mut next = |len: usize| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 * len as f64) as usize
        };
        let mut avg: Vec<f64> = (0..400_000)
            .map(|_| (d[next(d.len())] + other[next(other.len())]) / 2.0)
            .collect();
        avg.sort_by(f64::total_cmp);
        for (p, tol) in [(0.5, 0.03), (0.95, 0.1), (0.99, 0.1)] {
            let (a, b) = (quantile_sorted(&avg, p), quantile_sorted(&t, p));
            assert!((a / b - 1.0).abs() < tol, "p {p}: {a} vs {b}");
        }
    }

    /// A capture of a thousand samples (a few runs of a 16 MiB ping-pong): with a grid finer
    /// than its samples the EM's solution collapsed onto a few points (the pairs' median 6.7 %
    /// below the capture's).
    #[test]
    fn pairs_of_a_small_random_capture() {
        let mut s = 3u64;
        let mut unit = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut t: Vec<f64> = (0..1000)
            .map(|_| {
                let (a, b) = (unit(), unit());
                let z = (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos();
                (609.0 + 190.0 * z).max(1.0)
            })
            .collect();
        t.sort_by(f64::total_cmp);
        check(&t, 2);
    }

    /// 2K draws (a striped bandwidth ping-pong): a skewed per-byte time with a tail.
    #[test]
    fn many_draws_of_a_skewed_capture() {
        let t = target(|u| 100.0 + 5.0 * u + if u > 0.9 { 100.0 * (u - 0.9) } else { 0.0 });
        check(&t, 8);
        check(&t, 32);
    }
}
