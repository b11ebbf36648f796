//! OS noise: replaying selfish-detour traces and a fitted detour process.
//!
//! # Semantics (LogGOPSim's `get_noise`, with its quirks corrected)
//! The detour time injected into a CPU window `[a, a + len)` (trace time) is
//! * the *remainder* `max(0, end − a)` of the last detour that started at or before `a`
//!   (carry-in; it may exceed `len`: the CPU is away until that detour ends), plus
//! * the *full duration* of every detour that starts inside `(a, a + len)`.
//!
//! The window is not extended by the noise it absorbs (no iteration), as in LogGOPSim.
//! Corrections over LogGOPSim: the trace repeats with its full measured period (LogGOPSim wraps
//! at `last_start − len`, so the tail of the trace and the first detour are lost and the
//! mapping depends on the window length); windows longer than the period count whole periods;
//! lookups are a bucket index plus a binary search (O(log n) worst case, O(1) typical); there
//! is no duplicated last entry; concatenated traces are stitched end to end (each shifted by
//! the periods of the traces before it), never restarting at 0.

use crate::dist::{Sampler, Scaling};
use crate::rng::{below, CounterRng, DOMAIN_PROCESS};
use crate::NoiseError;
use loggops_engine::Time;
use loggops_profile::{DetourProcess, DetourTrace};

#[derive(Clone, Copy, Debug)]
struct Detour {
    start: u64,
    end: u64,
    /// Total duration of all detours before this one.
    before: u64,
}

/// One cyclic detour trace (all traces of a profile stitched end to end).
#[derive(Clone, Debug)]
pub struct DetourTable {
    ev: Box<[Detour]>,
    /// Total duration of all detours (one period).
    total: u64,
    period: u64,
    /// `index[j]` = number of detours with `start < j << shift`, for `j in 0..=period >> shift + 1`.
    index: Box<[u32]>,
    shift: u32,
}

impl DetourTable {
    /// Stitches `traces` into one cyclic trace: trace `k` is shifted by the sum of the periods of
    /// traces `0..k`; the period is the sum of all periods.
    pub fn stitch(traces: &[DetourTrace]) -> Result<DetourTable, NoiseError> {
        let mut ev = Vec::with_capacity(traces.iter().map(|t| t.start_ps.len()).sum());
        let mut offset: u64 = 0;
        let mut total: u64 = 0;
        for (k, t) in traces.iter().enumerate() {
            if t.start_ps.len() != t.duration_ps.len() {
                return Err(NoiseError::TraceLengths {
                    trace: k,
                    starts: t.start_ps.len(),
                    durations: t.duration_ps.len(),
                });
            }
            // Checked first: every detour ends within the period, so `offset + end` cannot
            // overflow once `offset + period` does not (a trace starting near 2^64 ps used to
            // overflow below).
            let next = offset
                .checked_add(t.period_ps)
                .filter(|&o| o < 1 << 62)
                .ok_or(NoiseError::TraceTooLong)?;
            for i in 0..t.start_ps.len() {
                let (s, d) = (t.start_ps[i], t.duration_ps[i]);
                if i > 0 && s <= t.start_ps[i - 1] {
                    return Err(NoiseError::TraceUnsorted {
                        trace: k,
                        index: i,
                        start: s,
                        prev: t.start_ps[i - 1],
                    });
                }
                let end = s.checked_add(d).filter(|&e| e <= t.period_ps);
                let Some(end) = end else {
                    return Err(NoiseError::TracePeriod {
                        trace: k,
                        index: i,
                        end: s as u128 + d as u128,
                        period: t.period_ps,
                    });
                };
                ev.push(Detour {
                    start: offset + s,
                    end: offset + end,
                    before: total,
                });
                // Overlapping detours can add up to more than the period; the total (times a
                // number of cycles) must stay as far from overflowing as the period.
                total = total
                    .checked_add(d)
                    .filter(|&t| t < 1 << 62)
                    .ok_or(NoiseError::TraceTooLong)?;
            }
            offset = next;
        }
        if offset == 0 {
            return Err(NoiseError::TraceEmpty {
                traces: traces.len(),
            });
        }
        let n = ev.len().max(1) as u64;
        if n > u32::MAX as u64 / 2 {
            return Err(NoiseError::TraceTooLong);
        }
        // Buckets of 2^shift ps, about one detour per bucket.
        let shift = 64 - (offset / n).max(1).leading_zeros() - 1;
        let buckets = (offset >> shift) as usize + 2;
        let mut index = Vec::with_capacity(buckets);
        let mut i = 0usize;
        for j in 0..buckets as u64 {
            let t = j << shift;
            while i < ev.len() && ev[i].start < t {
                i += 1;
            }
            index.push(i as u32);
        }
        Ok(DetourTable {
            ev: ev.into(),
            total,
            period: offset,
            index: index.into(),
            shift,
        })
    }

    /// Length of one cycle, ps.
    pub fn period(&self) -> u64 {
        self.period
    }

    /// Number of detours in one cycle.
    pub fn len(&self) -> usize {
        self.ev.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ev.is_empty()
    }

    /// Total detour time in one cycle, ps.
    pub fn total_detour(&self) -> u64 {
        self.total
    }

    /// Number of detours with `start <= x`, for `x < period`.
    #[inline]
    fn count_le(&self, x: u64) -> usize {
        let (lo, hi) = self.bucket(x);
        self.count_le_in(x, lo, hi)
    }

    /// The detours `lo..hi` that can start at or before `x < period` (its index bucket).
    #[inline]
    pub(crate) fn bucket(&self, x: u64) -> (usize, usize) {
        let j = (x >> self.shift) as usize;
        (self.index[j] as usize, self.index[j + 1] as usize)
    }

    /// `count_le(x)` given `x`'s bucket.
    #[inline]
    pub(crate) fn count_le_in(&self, x: u64, lo: usize, hi: usize) -> usize {
        // Usually 0 or 1 candidates.
        let mut i = lo;
        if hi - lo <= 4 {
            while i < hi && self.ev[i].start <= x {
                i += 1;
            }
            i
        } else {
            lo + self.ev[lo..hi].partition_point(|e| e.start <= x)
        }
    }

    /// Total duration of the detours with `start < x`, for any `x` (the trace repeats).
    #[inline]
    fn cum_lt(&self, x: u64) -> u64 {
        let (q, r) = if x < self.period {
            (0, x)
        } else {
            (x / self.period, x % self.period)
        };
        // count_le(r - 1) = number with start < r.
        let i = if r == 0 { 0 } else { self.count_le(r - 1) };
        let partial = match self.ev.get(i) {
            Some(e) => e.before,
            None => self.total,
        };
        q.saturating_mul(self.total).saturating_add(partial)
    }

    /// Detour time in the window `[a, a + len)` of trace time, `a < period` (module semantics).
    #[inline]
    pub fn detour_in(&self, a: u64, len: u64) -> u64 {
        debug_assert!(a < self.period);
        self.detour_from(self.count_le(a), a, len)
    }

    /// [`Self::detour_in`] given `i` = the number of detours with `start <= a`.
    #[inline]
    fn detour_from(&self, i: usize, a: u64, len: u64) -> u64 {
        let carry = if i > 0 {
            self.ev[i - 1].end.saturating_sub(a)
        } else {
            0 // the last detour ends by the end of the period (checked in `stitch`)
        };
        if len <= 1 {
            return carry;
        }
        let b = a.saturating_add(len);
        // Fast path: the next detour starts at or after the window's end.
        if b <= self.period && self.ev.get(i).is_none_or(|e| e.start >= b) {
            return carry;
        }
        // Detours with start in (a, b) = those with start < b minus the i with start <= a.
        let before_a = match self.ev.get(i) {
            Some(e) => e.before,
            None => self.total,
        };
        carry + (self.cum_lt(b) - before_a)
    }

    /// `count_le(x)`, trying `hint` (the previous answer for this rank) and the next few
    /// detours first; times of a rank mostly advance by less than the gap between detours.
    #[inline]
    fn count_le_hinted(&self, x: u64, hint: usize) -> usize {
        let n = self.ev.len();
        let mut h = hint.min(n);
        if h == 0 || self.ev[h - 1].start <= x {
            for _ in 0..4 {
                if h == n || self.ev[h].start > x {
                    return h;
                }
                h += 1;
            }
        }
        self.count_le(x)
    }

    /// [`Self::detour_in`] for a window starting at absolute time `t0` on a rank whose replay
    /// starts `phase` (< period) into the trace.
    #[inline]
    pub fn detour_at(&self, phase: u64, t0: Time, len: u64) -> u64 {
        let mut hint = 0;
        self.detour_at_hinted(phase, &mut hint, t0, len)
    }

    /// The trace position `a` of absolute time `t0` for a rank with `phase`, and the number of
    /// detours starting at or before it (updating the rank's search `hint`).
    #[inline]
    fn locate(&self, phase: u64, hint: &mut u32, t0: Time) -> (usize, u64) {
        let t = if t0 < self.period {
            t0
        } else {
            t0 % self.period
        };
        let mut a = t + phase;
        if a >= self.period {
            a -= self.period;
        }
        let i = self.count_le_hinted(a, *hint as usize);
        *hint = i as u32;
        (i, a)
    }

    /// [`Self::detour_at`] with a per-rank search hint (any value is correct; the result does
    /// not depend on it, only the speed).
    #[inline]
    pub fn detour_at_hinted(&self, phase: u64, hint: &mut u32, t0: Time, len: u64) -> u64 {
        let (i, a) = self.locate(phase, hint, t0);
        self.detour_from(i, a, len)
    }

    /// [`Self::detour_at_hinted`], also returning the *quiet stretch* `[lo, hi)` of absolute
    /// time at `t0`: the stretch from the end of the last detour that starts at or before `t0`
    /// to the start of the next one. Every window `[t0', t1')` with `lo <= t0' < hi` and
    /// `t1' <= hi` gets 0 ps of detour, so callers can answer such windows without a lookup.
    /// (`lo > t0` when `t0` is inside a detour: the stretch after it.)
    #[inline]
    pub fn detour_at_quiet(
        &self,
        phase: u64,
        hint: &mut u32,
        t0: Time,
        len: u64,
    ) -> (u64, [u64; 2]) {
        let (i, a) = self.locate(phase, hint, t0);
        (self.detour_from(i, a, len), self.quiet_stretch(i, a, t0))
    }

    /// The quiet stretch (see [`Self::detour_at_quiet`]) around trace time `a` (with `i` the
    /// number of detours starting at or before `a`), in the absolute time of a rank at `t0`.
    pub(crate) fn quiet_stretch(&self, i: usize, a: u64, t0: Time) -> [u64; 2] {
        let n = self.ev.len();
        if n == 0 {
            return [0, u64::MAX];
        }
        let period = self.period as i128;
        // Absolute time of trace time 0 of the cycle holding `t0`.
        let base = t0 as i128 - a as i128;
        let prev_end = match i {
            0 => self.ev[n - 1].end as i128 - period,
            _ => self.ev[i - 1].end as i128,
        };
        let next_start = match self.ev.get(i) {
            Some(e) => e.start as i128,
            None => self.ev[0].start as i128 + period,
        };
        let abs = |x: i128| x.clamp(0, u64::MAX as i128) as u64;
        [abs(base + prev_end), abs(base + next_start)]
    }

    /// A phase uniform in `[0, period)` from 64 random bits.
    pub fn phase(&self, bits: u64) -> u64 {
        below(bits, self.period)
    }
}

/// A fitted detour process: Poisson arrivals of `rate_per_s`, durations from a distribution.
///
/// Deterministic without state: time is cut into buckets of `bucket` ps (about one expected
/// arrival each); bucket `k` of rank `r` has `Poisson(rate · bucket)` arrivals, each at a
/// uniform position in the bucket with a drawn duration, all taken from the counter RNG at
/// `a = k`, `b = DOMAIN_PROCESS << 56 | j << 32 | r` (`j = 0`: the count; `j = 2m + 1` and
/// `j = 2m + 2`: position and duration of arrival `m`). The injected time follows the module's semantics
/// (carry-in of the last arrival at or before the window start, plus every arrival inside).
#[derive(Clone, Debug)]
pub struct DetourProcessGen {
    bucket: u64,
    /// exp(−rate · bucket)
    p0: f64,
    mu: f64,
    duration: Sampler,
    max_duration: u64,
}

/// At most this many arrivals per bucket (the expected number is about 1).
const MAX_PER_BUCKET: u32 = 64;

impl DetourProcessGen {
    pub fn new(p: &DetourProcess) -> Result<DetourProcessGen, NoiseError> {
        if !p.rate_per_s.is_finite() || p.rate_per_s <= 0.0 {
            return Err(NoiseError::ProcessRate { rate: p.rate_per_s });
        }
        let duration = Sampler::new(&p.duration_ps, Scaling::Absolute, "ps").map_err(|source| {
            NoiseError::Distribution {
                what: "detour-process duration distribution".into(),
                source,
            }
        })?;
        let rate_per_ps = p.rate_per_s * 1e-12;
        let bucket = (1.0 / rate_per_ps).round().clamp(1e3, 1e15) as u64;
        let mu = rate_per_ps * bucket as f64;
        Ok(DetourProcessGen {
            bucket,
            p0: (-mu).exp(),
            mu,
            max_duration: duration.max().ceil() as u64,
            duration,
        })
    }

    /// Arrivals `(start, duration)` of bucket `k` of `stream` (unsorted).
    fn bucket_arrivals(
        &self,
        rng: &CounterRng,
        stream: u32,
        k: u64,
        out: &mut [(u64, u64)],
    ) -> usize {
        let row = rng.row(k);
        let at =
            |j: u64| CounterRng::join(row, rng.col(DOMAIN_PROCESS << 56 | j << 32 | stream as u64));
        let u = crate::rng::unit_f64(at(0));
        // Inverse-CDF Poisson.
        let (mut n, mut p, mut cdf) = (0u32, self.p0, self.p0);
        while u >= cdf && n < MAX_PER_BUCKET {
            n += 1;
            p *= self.mu / n as f64;
            cdf += p;
        }
        for m in 0..n {
            let (x, y) = (at(2 * m as u64 + 1), at(2 * m as u64 + 2));
            let start = k * self.bucket + below(x, self.bucket);
            let d = self.duration.sample_bits(y);
            out[m as usize] = (start, (d + 0.5) as u64);
        }
        n as usize
    }

    /// Detour time in `[a, a + len)` from arrivals at times `>= origin` of `stream`.
    pub fn detour(&self, rng: &CounterRng, stream: u32, origin: u64, a: u64, len: u64) -> u64 {
        let mut buf = [(0u64, 0u64); MAX_PER_BUCKET as usize];
        let b = a.saturating_add(len);
        let ka = a / self.bucket;
        let k_origin = origin / self.bucket;
        // Carry-in: the last arrival at or before a.
        let mut carry = 0;
        let mut k = ka;
        loop {
            let n = self.bucket_arrivals(rng, stream, k, &mut buf);
            let last = buf[..n]
                .iter()
                .filter(|&&(s, _)| s <= a && s >= origin)
                .max_by_key(|&&(s, _)| s);
            if let Some(&(s, d)) = last {
                carry = (s + d).saturating_sub(a);
                break;
            }
            // Nothing earlier can reach a, or the process has not started.
            if k == 0 || k <= k_origin || (k * self.bucket).saturating_add(self.max_duration) <= a {
                break;
            }
            k -= 1;
        }
        let mut sum = carry;
        if len > 1 {
            let kb = (b - 1) / self.bucket;
            for k in ka..=kb {
                let n = self.bucket_arrivals(rng, stream, k, &mut buf);
                sum += buf[..n]
                    .iter()
                    .filter(|&&(s, _)| s > a && s < b && s >= origin)
                    .map(|&(_, d)| d)
                    .sum::<u64>();
            }
        }
        sum
    }

    /// Bucket length, ps.
    pub fn bucket_ps(&self) -> u64 {
        self.bucket
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loggops_profile::Distribution;

    /// 1000 ps detours every 100000 ps (starting at 0), period 1_000_000 ps (10 detours).
    fn periodic() -> DetourTable {
        DetourTable::stitch(&[DetourTrace {
            start_ps: (0..10).map(|i| i * 100_000).collect(),
            duration_ps: vec![1000; 10],
            period_ps: 1_000_000,
        }])
        .unwrap()
    }

    /// Brute force over the unrolled trace: carry-in of the last start <= a, plus full
    /// durations of starts in (a, a+len).
    fn brute(t: &DetourTable, a: u64, len: u64) -> u64 {
        let mut carry = 0;
        let mut sum = 0;
        let cycles = (a + len) / t.period + 2;
        for c in 0..cycles {
            for e in t.ev.iter() {
                let s = e.start + c * t.period;
                let end = e.end + c * t.period;
                if s <= a {
                    carry = end.saturating_sub(a);
                } else if s < a + len {
                    sum += end - s;
                }
            }
        }
        carry + sum
    }

    #[test]
    fn periodic_trace_hand_computed() {
        let t = periodic();
        assert_eq!(t.period(), 1_000_000);
        assert_eq!(t.total_detour(), 10_000);
        // Inside a quiet stretch.
        assert_eq!(t.detour_in(5_000, 1_000), 0);
        // Empty window inside a detour: its remainder.
        assert_eq!(t.detour_in(100_400, 0), 600);
        // Window starting inside a detour (carry-in only).
        assert_eq!(t.detour_in(100_400, 10_000), 600);
        // Window starting exactly at a detour: its full length.
        assert_eq!(t.detour_in(200_000, 10), 1000);
        // Window ending exactly at a detour start: not counted.
        assert_eq!(t.detour_in(150_000, 50_000), 0);
        // ... one ps longer: counted fully (no truncation to the window).
        assert_eq!(t.detour_in(150_000, 50_001), 1000);
        // Straddling: starts inside one detour, covers three more starts.
        assert_eq!(t.detour_in(100_999, 300_000), 1 + 3000);
        assert_eq!(t.detour_in(101_000, 300_000), 3000);
        // Wrapping around the end of the period: detours at 900000 and 0 (next cycle).
        assert_eq!(t.detour_in(850_000, 200_000), 2000);
        assert_eq!(t.detour_in(999_999, 2), 1000);
        // Longer than the period: 2.5 periods from 50000 cover 25 detour starts.
        assert_eq!(t.detour_in(50_000, 2_500_000), 25_000);
        // Exactly one period from a quiet point: every detour once.
        assert_eq!(t.detour_in(50_000, 1_000_000), 10_000);
        // Phase and absolute time: rank at phase 700000, t0 = 3_250_000 → a = 950_000.
        assert_eq!(t.detour_at(700_000, 3_250_000, 60_000), 1000);
        assert_eq!(t.detour_at(700_000, 3_200_000, 0), 1000);
        assert_eq!(t.detour_at(700_000, 3_200_500, 0), 500);
    }

    #[test]
    fn traces_beyond_2_62_ps_are_an_error_not_an_overflow() {
        // A valid profile's second trace starts near 2^64 ps: stitching it after a first trace
        // used to overflow (a panic in debug builds, wrapped starts in release).
        let first = DetourTrace {
            start_ps: vec![1_000],
            duration_ps: vec![10],
            period_ps: 1_000_000,
        };
        let far = DetourTrace {
            start_ps: vec![u64::MAX - 10],
            duration_ps: vec![10],
            period_ps: u64::MAX,
        };
        assert_eq!(
            DetourTable::stitch(&[first, far]).unwrap_err(),
            NoiseError::TraceTooLong
        );
        // Overlapping detours whose durations add up beyond 2^62 ps.
        let overlapping = DetourTrace {
            start_ps: (1..=4).collect(),
            duration_ps: vec![(1 << 62) - 10; 4],
            period_ps: (1 << 62) - 1,
        };
        assert_eq!(
            DetourTable::stitch(&[overlapping]).unwrap_err(),
            NoiseError::TraceTooLong
        );
    }

    #[test]
    fn stitched_traces_continue_instead_of_restarting() {
        let t = DetourTable::stitch(&[
            DetourTrace {
                start_ps: vec![10, 500],
                duration_ps: vec![5, 100],
                period_ps: 1000,
            },
            DetourTrace {
                start_ps: vec![0, 300],
                duration_ps: vec![7, 9],
                period_ps: 400,
            },
        ])
        .unwrap();
        assert_eq!(t.period(), 1400);
        let starts: Vec<u64> = t.ev.iter().map(|e| e.start).collect();
        assert_eq!(starts, [10, 500, 1000, 1300]);
        assert_eq!(t.detour_in(550, 500), 50 + 7);
        assert_eq!(t.detour_in(1305, 120), 4 + 5);
    }

    #[test]
    fn matches_brute_force_on_irregular_traces() {
        let mut s = CounterRng::new(5, 0).stream(1);
        let mut start = vec![];
        let mut dur = vec![];
        let mut t = 0u64;
        for i in 0..3000 {
            // Clustered gaps: some bursts of short gaps, some long quiet stretches.
            t += if i % 50 < 10 {
                1 + (s.next_u64() % 50)
            } else {
                1 + (s.next_u64() % 40_000)
            };
            let d = s.next_u64() % 3_000;
            start.push(t);
            dur.push(d);
            t += 0;
        }
        let period = t + 5_000;
        let table = DetourTable::stitch(&[DetourTrace {
            start_ps: start,
            duration_ps: dur,
            period_ps: period,
        }])
        .unwrap();
        let mut hint = 0u32;
        for _ in 0..3000 {
            let a = s.next_u64() % period;
            let len = match s.next_u64() % 4 {
                0 => 0,
                1 => s.next_u64() % 1000,
                2 => s.next_u64() % 100_000,
                _ => s.next_u64() % (3 * period),
            };
            assert_eq!(
                table.detour_in(a, len),
                brute(&table, a, len),
                "a={a} len={len}"
            );
            // Any hint gives the same answer.
            for h in [0, hint, hint + 1, 2999, 3000, u32::MAX] {
                let mut hh = h;
                assert_eq!(
                    table.detour_at_hinted(a, &mut hh, 0, len),
                    brute(&table, a, len)
                );
            }
            hint = table.count_le(a) as u32;
        }
    }

    /// Every window inside a reported quiet stretch has no detour time (checked against the
    /// brute force over random phases, times, wraps and multi-period times), and the stretches
    /// of the periodic trace are exactly the gaps between detours.
    #[test]
    fn quiet_stretches_are_detour_free() {
        let t = periodic();
        let mut hint = 0;
        // Phase 700000: absolute 3_250_000 is trace time 950_000, after the detour at 900_000.
        let (d, q) = t.detour_at_quiet(700_000, &mut hint, 3_250_000, 10);
        assert_eq!((d, q), (0, [3_201_000, 3_300_000]));
        // Inside the detour at trace 0 (absolute 3_300_000): the stretch after it.
        let (d, q) = t.detour_at_quiet(700_000, &mut hint, 3_300_400, 10);
        assert_eq!((d, q), (600, [3_301_000, 3_400_000]));
        // Before the first period, the stretch is cut at 0.
        assert_eq!(t.detour_at_quiet(950_000, &mut hint, 10, 0).1, [0, 50_000]);

        let mut s = CounterRng::new(6, 0).stream(1);
        let mut start = vec![];
        let mut dur = vec![];
        let mut x = 0u64;
        for _ in 0..500 {
            x += 1 + s.next_u64() % 20_000;
            let d = s.next_u64() % 3_000;
            start.push(x);
            dur.push(d);
            x += d;
        }
        let period = x + 1 + s.next_u64() % 5_000;
        let table = DetourTable::stitch(&[DetourTrace {
            start_ps: start,
            duration_ps: dur,
            period_ps: period,
        }])
        .unwrap();
        let mut hint = 0;
        for _ in 0..1500 {
            let phase = s.next_u64() % period;
            let t0 = s.next_u64() % (4 * period);
            let len = s.next_u64() % 30_000;
            let (d, [lo, hi]) = table.detour_at_quiet(phase, &mut hint, t0, len);
            assert_eq!(d, table.detour_at(phase, t0, len));
            assert!(lo < hi && hi > t0, "t0 {t0}: [{lo}, {hi})");
            for _ in 0..10 {
                let a = lo + s.next_u64() % (hi - lo).min(1 << 40);
                let b = a + s.next_u64() % (hi - a + 1);
                let at = (a + phase) % period;
                assert_eq!(brute(&table, at, b - a), 0, "[{a}, {b}) in [{lo}, {hi})");
            }
        }
    }

    #[test]
    fn invalid_traces_are_rejected() {
        let e = |t: Vec<DetourTrace>| DetourTable::stitch(&t).unwrap_err().to_string();
        let tr = |s: Vec<u64>, d: Vec<u64>, p: u64| DetourTrace {
            start_ps: s,
            duration_ps: d,
            period_ps: p,
        };
        insta::assert_snapshot!([
            e(vec![tr(vec![1, 2], vec![1], 10)]),
            e(vec![tr(vec![], vec![], 10), tr(vec![5, 5], vec![1, 1], 10)]),
            e(vec![tr(vec![1, 8], vec![1, 3], 10)]),
            e(vec![tr(vec![], vec![], 0)]),
            e(vec![]),
        ]
        .join("\n"));
    }

    #[test]
    fn detour_process_is_deterministic_and_has_the_fitted_rate() {
        let p = DetourProcessGen::new(&DetourProcess {
            rate_per_s: 1000.0,
            duration_ps: Distribution::Samples(vec![2_000_000.0, 4_000_000.0]),
        })
        .unwrap();
        assert_eq!(p.bucket_ps(), 1_000_000_000);
        let rng = CounterRng::new(3, 0);
        // One second of windows of 1 ms: expected 1000 detours of mean 3 us = 3 ms.
        let mut total = 0;
        let step = 1_000_000_000u64;
        for w in 0..1000u64 {
            total += p.detour(&rng, 0, 0, w * step, step);
        }
        // Poisson count sd = sqrt(1000) ≈ 32 → ±5 sd of 3us ≈ ±0.5 ms.
        assert!((2_500_000_000..3_500_000_000).contains(&total), "{total}");
        assert_eq!(
            p.detour(&rng, 0, 0, 123_456_789, 5_000_000_000),
            p.detour(&rng, 0, 0, 123_456_789, 5_000_000_000)
        );
        // Splitting a window at a point outside any detour gives the same total.
        let whole = p.detour(&rng, 7, 0, 0, 20 * step);
        let mut parts = 0;
        let mut t = 0;
        while t < 20 * step {
            let next = t + 333_333_333;
            parts += p.detour(&rng, 7, 0, t, next.min(20 * step) - t);
            t = next;
        }
        // Each split point may count a detour's remainder twice; bounded by the count of
        // split points times the max duration.
        assert!(
            parts >= whole && parts - whole <= 61 * 4_000_000,
            "{parts} vs {whole}"
        );
        // Nothing before the origin.
        assert_eq!(p.detour(&rng, 0, u64::MAX / 2, 0, 10 * step), 0);
    }
}
