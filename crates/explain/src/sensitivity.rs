//! Sensitivities and latency tolerance.
//!
//! The derivatives of the finishing time with respect to L, o, g, G and O are read from the
//! critical path ([`TermCounts`](crate::TermCounts): how many of each term lie on it). The
//! *latency tolerance* is the largest extra latency per message for which the noiseless
//! runtime grows by at most a given percentage, found by bisection on exact runs
//! ([`tolerance`]); [`Shifted`] adds such an extra latency to every message of a noise model.

use loggops_engine::{MsgCosts, Noise, Params, Time};

/// The largest extra latency searched for: beyond it, the tolerance is reported as unbounded
/// (about 1126 s per message).
pub const MAX_EXTRA_LATENCY: Time = 1 << 50;

/// How much latency a run tolerates for a given runtime growth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Tolerance {
    /// Allowed growth of the noiseless runtime, percent.
    pub pct: u32,
    /// The noiseless runtime and the largest runtime allowed, ps.
    pub runtime_ps: Time,
    pub limit_ps: Time,
    /// The largest extra latency per message with a runtime within `limit_ps`, ps: `T(x) ≤
    /// limit` and `T(x + 1) > limit`. `None` when no extra latency up to
    /// [`MAX_EXTRA_LATENCY`] exceeds the limit.
    pub extra_latency_ps: Option<Time>,
    /// Exact runs the search took.
    pub runs: u32,
}

/// Finds the latency tolerance for `pct` percent by bisection: `run(x)` is the noiseless
/// runtime with `x` ps added to every latency, `t0 = run(0)` and `slope` the number of
/// latency terms on the critical path at `x = 0` (the first guess of the bracket: the path
/// alone grows by `slope · x`).
///
/// When the runtime is non-decreasing in the latency (it is unless raising latencies
/// reorders competing events), this is the largest such `x`; otherwise it is a crossing
/// point: `T(x) ≤ limit < T(x + 1)` holds either way.
pub fn tolerance<E>(
    t0: Time,
    slope: u64,
    pct: u32,
    mut run: impl FnMut(Time) -> Result<Time, E>,
) -> Result<Tolerance, E> {
    let limit = (t0 as u128 * (100 + pct as u128) / 100).min(Time::MAX as u128) as Time;
    let mut runs = 0;
    let mut over = |x: Time, runs: &mut u32| -> Result<bool, E> {
        *runs += 1;
        Ok(run(x)? > limit)
    };
    let budget = limit - t0;
    let mut lo: Time = 0;
    let mut hi: Time = match budget.checked_div(slope) {
        Some(x) => x + 1,
        None => budget.max(1),
    };
    loop {
        if hi > MAX_EXTRA_LATENCY {
            // Check the cap itself before calling it unbounded.
            if !over(MAX_EXTRA_LATENCY, &mut runs)? {
                return Ok(Tolerance {
                    pct,
                    runtime_ps: t0,
                    limit_ps: limit,
                    extra_latency_ps: None,
                    runs,
                });
            }
            hi = MAX_EXTRA_LATENCY;
            break;
        }
        if over(hi, &mut runs)? {
            break;
        }
        lo = hi;
        hi = hi.saturating_mul(2);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if over(mid, &mut runs)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Tolerance {
        pct,
        runtime_ps: t0,
        limit_ps: limit,
        extra_latency_ps: Some(lo),
        runs,
    })
}

/// A noise model with `extra` ps added to every message's latency (drawn and noiseless
/// alike, so the network noise is unchanged). Wrapping [`NoNoise`](loggops_engine::NoNoise)
/// gives the engine's parameters with `L + extra`.
#[derive(Clone, Debug)]
pub struct Shifted<N> {
    pub inner: N,
    pub extra: Time,
}

impl<N: Noise> Shifted<N> {
    fn shift(&self, mut c: MsgCosts) -> MsgCosts {
        c.latency = c.latency.saturating_add(self.extra);
        c
    }
    fn plain(&self, p: &Params, src: u32, dst: u32, size: u64) -> MsgCosts {
        self.shift(self.inner.base_costs(p, src, dst, size))
    }
}

impl<N: Noise> Noise for Shifted<N> {
    const ACTIVE: bool = true;
    fn send_costs(&mut self, p: &Params, src: u32, dst: u32, send_op: u32, size: u64) -> MsgCosts {
        if !N::ACTIVE {
            return self.plain(p, src, dst, size);
        }
        let c = self.inner.send_costs(p, src, dst, send_op, size);
        self.shift(c)
    }
    fn uses_idle(&self) -> bool {
        N::ACTIVE && self.inner.uses_idle()
    }
    fn send_costs_idle(
        &mut self,
        p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        idle: Time,
    ) -> MsgCosts {
        if !N::ACTIVE {
            return self.plain(p, src, dst, size);
        }
        let c = self.inner.send_costs_idle(p, src, dst, send_op, size, idle);
        self.shift(c)
    }
    fn recv_costs(&mut self, p: &Params, src: u32, dst: u32, send_op: u32, size: u64) -> MsgCosts {
        if !N::ACTIVE {
            return self.plain(p, src, dst, size);
        }
        let c = self.inner.recv_costs(p, src, dst, send_op, size);
        self.shift(c)
    }
    fn os_detour(&mut self, rank: u32, t0: Time, t1: Time) -> Time {
        self.inner.os_detour(rank, t0, t1)
    }
    fn min_message_delay(&self) -> Time {
        match self.inner.min_message_delay() {
            0 => 0,
            d => d.saturating_add(self.extra),
        }
    }
    fn min_latency(&self) -> Time {
        match self.inner.min_latency() {
            0 => 0,
            d => d.saturating_add(self.extra),
        }
    }
    fn base_costs(&self, p: &Params, src: u32, dst: u32, size: u64) -> MsgCosts {
        self.plain(p, src, dst, size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A convex piecewise-linear runtime: the bisection lands on the exact crossing point.
    #[test]
    fn bisection_finds_the_exact_crossing() {
        // T(x) = max(1000 + 3x, 1200 + 5x): 1 % of 1200 is 12 → 5x ≤ 12 → x = 2.
        let t = |x: Time| Ok::<_, ()>((1000 + 3 * x).max(1200 + 5 * x));
        let tol = tolerance(1200, 5, 1, t).unwrap();
        assert_eq!(tol.limit_ps, 1212);
        assert_eq!(tol.extra_latency_ps, Some(2));
        // A wrong first guess of the slope only costs runs.
        let tol0 = tolerance(1200, 0, 5, t).unwrap();
        assert_eq!(tol0.extra_latency_ps, Some(12));
        // A runtime that never grows is unbounded.
        let flat = tolerance(1200, 0, 1, |_| Ok::<_, ()>(1200)).unwrap();
        assert_eq!(flat.extra_latency_ps, None);
    }
}
