//! Samplers over measured distributions.
//!
//! A [`Sampler`] turns a uniform number `u ∈ [0, 1)` into a draw:
//! * raw samples ([`Distribution::Samples`]): uniform bootstrap, as the paper's simulator did
//!   (`vec[rand() % n]`), every sample equally likely: the draw is the `floor(u·n)`-th smallest
//!   sample. The samples are kept as distinct values with their cumulative counts plus a guide
//!   table, so a draw touches a few cache lines of a table that is usually small (measured
//!   latencies have 100–25,000 distinct values among 10^5–10^6 samples);
//! * a quantile table ([`Distribution::Quantiles`]): inverse CDF with linear interpolation
//!   between neighbouring `(prob, value)` points: in the segment `p_i <= u < p_{i+1}` the draw
//!   is `v_i + (u − p_i)·s_i` with the segment's slope `s_i = (v_{i+1} − v_i)/(p_{i+1} − p_i)`
//!   (computed once), capped at `v_{i+1}`; exactly `v_i` at `u = p_i`. The segment is found in
//!   O(1) through a guide table of about two slots per segment.
//!   A table with an exact tail ([`ExactTail`]: the K largest of N samples) interpolates only
//!   below its last probability `b = (N − K)/N`; `u >= b` draws tail sample
//!   `floor((u − b)·N)` exactly (capped at K − 1), so each of them has probability 1/N as in a
//!   bootstrap of the raw samples. That is one well-predicted comparison per draw (taken with
//!   probability K/N ≈ 0.1 %).
//!
//! [`Scaling::MedianTo`] multiplies every value by `base / median` at construction (the paper's
//! convention: only the *shape* of the measurement is kept, its median is pinned to the LogGP
//! parameter). The source value equal to the median maps to exactly `base`.

use loggops_profile::{Distribution, ExactTail};
use thiserror::Error;

/// How draws relate to the measured values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scaling {
    /// Draws are the measured values.
    Absolute,
    /// Every draw is multiplied by `base / median(distribution)`.
    MedianTo(f64),
    /// Every draw is multiplied by `base / of`: another distribution's [`Scaling::MedianTo`]
    /// factor (`of` its median), so two distributions of one quantity move together.
    Ratio { base: f64, of: f64 },
}

/// Why a distribution cannot be sampled. `unit` is the unit of the values (e.g. `ps`).
#[derive(Clone, Debug, Error, PartialEq)]
pub enum DistError {
    #[error("has no values; expected at least one sample")]
    Empty,
    #[error("has {n} samples; at most 4294967295 are supported")]
    TooMany { n: usize },
    #[error("value {index} is {value}{unit}; expected a finite value >= 0{unit}")]
    BadValue {
        index: usize,
        value: f64,
        unit: &'static str,
    },
    #[error(
        "quantile table has {probs} probabilities but {values} values; expected two equally long \
         lists with at least 2 entries"
    )]
    QuantileLengths { probs: usize, values: usize },
    #[error("quantile table has {n} points; at most 2147483647 are supported")]
    TooManyPoints { n: usize },
    #[error("quantile probability {index} is {value}; expected {expected}")]
    QuantileProb {
        index: usize,
        value: f64,
        expected: &'static str,
    },
    #[error(
        "quantile value {index} is {value}{unit}, below the previous value {prev}{unit}; expected \
         non-decreasing values"
    )]
    QuantileDecreasing {
        index: usize,
        value: f64,
        prev: f64,
        unit: &'static str,
    },
    #[error("exact tail has no values; expected at least one sample (or no tail)")]
    TailEmpty,
    #[error(
        "exact tail holds {k} samples of a sample count of {n}; expected more samples than the \
         tail holds"
    )]
    TailCount { k: usize, n: u64 },
    #[error("exact-tail value {index} is {value}{unit}; expected a finite value >= 0{unit}")]
    TailValue {
        index: usize,
        value: f64,
        unit: &'static str,
    },
    #[error(
        "exact-tail value {index} is {value}{unit}, below the previous value {prev}{unit}; \
         expected non-decreasing values"
    )]
    TailDecreasing {
        index: usize,
        value: f64,
        prev: f64,
        unit: &'static str,
    },
    #[error(
        "exact tail starts at {first}{unit}, below the quantile table's last value {last}{unit}; \
         expected the tail to continue the table"
    )]
    TailBelowTable {
        first: f64,
        last: f64,
        unit: &'static str,
    },
    #[error(
        "quantile table ends at probability {value}; expected (N - K)/N = {expected} below an \
         exact tail of K = {k} of N = {n} samples"
    )]
    TailStart {
        value: f64,
        expected: f64,
        k: usize,
        n: u64,
    },
    #[error("median is 0{unit}, so draws cannot be scaled to a median of {base}{unit}")]
    ZeroMedian { base: f64, unit: &'static str },
    #[error("the value {base}{unit} to scale the median to is not a finite value >= 0{unit}")]
    BadBase { base: f64, unit: &'static str },
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Number of samples smaller than `value`.
    first: u64,
    value: f64,
}

fn bootstrap(sorted: &[f64]) -> Kind {
    let n = sorted.len() as u64;
    let mut entries: Vec<Entry> = Vec::new();
    for (i, &x) in sorted.iter().enumerate() {
        if entries.last().is_none_or(|e| e.value != x) {
            entries.push(Entry {
                first: i as u64,
                value: x,
            });
        }
    }
    // About one guide slot per distinct value.
    let per = (n / entries.len() as u64).max(1);
    let shift = 63 - per.leading_zeros();
    let slots = ((n - 1) >> shift) as usize + 1;
    let mut guide = Vec::with_capacity(slots);
    let mut j = 0usize;
    for b in 0..slots as u64 {
        let i = b << shift;
        while j + 1 < entries.len() && entries[j + 1].first <= i {
            j += 1;
        }
        guide.push(j as u32);
    }
    Kind::Bootstrap {
        n,
        entries: entries.into(),
        guide: guide.into(),
        shift,
    }
}

/// The segment `i` (`0..k`) of a quantile table holding `u`: the last `i < k` with
/// `probs[i] <= u` (the reference definition the guide table reproduces).
fn segment_of(probs: &[f64], u: f64) -> usize {
    let k = probs.len() - 1;
    probs.partition_point(|&p| p <= u).clamp(1, k) - 1
}

fn quantile_kind(probs: &[f64], values: &[f64], tail: Option<&ExactTail>) -> Kind {
    let k = probs.len() - 1;
    // About two guide slots per segment, a power of two (at most 2^20).
    let slots = (2 * k).next_power_of_two().min(1 << 20);
    let guide: Vec<u32> = (0..=slots)
        .map(|j| segment_of(probs, j as f64 / slots as f64) as u32)
        .collect();
    let mut points: Box<[[f64; 3]]> = probs
        .iter()
        .zip(values)
        .map(|(&p, &v)| [p, v, 0.0])
        .collect();
    set_slopes(&mut points);
    // Segment indices < k < 2^31 (checked by `Sampler::new`): shifted, they fit a u32.
    let cells = (0..=slots)
        .map(|j| {
            let span = guide.get(j + 1).map_or(0, |&next| next - guide[j]);
            guide[j] << 1 | (span > 1) as u32
        })
        .collect();
    let (body, tail, tail_n) = match tail {
        Some(t) => (probs[k], t.values.clone().into(), t.sample_count as f64),
        // Never reached: every u is below it.
        None => (f64::INFINITY, Box::default(), 0.0),
    };
    Kind::Quantiles {
        segs: segments(&points),
        points,
        cells,
        guide_scale: slots as f64,
        guide_shift: 64 - slots.trailing_zeros(),
        body,
        tail,
        tail_n,
    }
}

/// What a draw reads of segment `i`, in one 32-byte line: `[p_i, v_i, slope_i, v_{i+1}]`.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Seg([f64; 4]);

/// The segments of `points`, and a sentinel starting at infinity (so that `segs[i + 1]`
/// exists for every segment `i`).
fn segments(points: &[[f64; 3]]) -> Box<[Seg]> {
    points
        .windows(2)
        .map(|w| Seg([w[0][0], w[0][1], w[0][2], w[1][1]]))
        .chain([Seg([f64::INFINITY, 0.0, 0.0, 0.0])])
        .collect()
}

/// The quantile table's value at `u` (below the exact tail), `j` being the guide slot of `u`:
/// the last segment `i` in `lo..=hi` with `probs[i] <= u` (usually `hi <= lo + 1`), linearly
/// interpolated.
#[inline(always)]
fn quantile_draw(cells: &[u32], segs: &[Seg], j: usize, u: f64) -> f64 {
    let (c, lo) = (cells[j], (cells[j] >> 1) as usize);
    let i = if c & 1 == 0 {
        // Both candidate segments are read and interpolated at once, then one is picked: the
        // two loads do not wait for each other.
        let (a, b) = (segs[lo].0, segs[lo + 1].0);
        let va = capped(a[1] + (u - a[0]) * a[2], a[3]);
        let vb = capped(b[1] + (u - b[0]) * b[2], b[3]);
        // A select, not a branch: which segment holds `u` is a coin flip per draw.
        return std::hint::select_unpredictable(b[0] <= u, vb, va);
    } else {
        // A slot where several segments start (a dense tail).
        let hi = (cells[j + 1] >> 1) as usize;
        if hi - lo <= 8 {
            let mut i = lo;
            while i < hi && segs[i + 1].0[0] <= u {
                i += 1;
            }
            i
        } else {
            wide_slot(segs, lo, hi, u)
        }
    };
    let [p, v, slope, next] = segs[i].0;
    capped(v + (u - p) * slope, next)
}

/// `x.min(cap)` for a `cap` that is never NaN, by one comparison: `cap` when `x` is NaN (the
/// sentinel segment's value, never picked, or a zero-width segment's at its start), as `min`
/// gives; equal zeros of either sign round to the same time.
#[inline(always)]
fn capped(x: f64, cap: f64) -> f64 {
    if x < cap {
        x
    } else {
        cap
    }
}

/// [`quantile_draw`]'s segment in a slot where more than 8 segments start.
#[cold]
#[inline(never)]
fn wide_slot(segs: &[Seg], lo: usize, hi: usize, u: f64) -> usize {
    lo + segs[lo + 1..=hi].partition_point(|s| s.0[0] <= u)
}

/// Checks an exact tail against its table (`probs`, `values` already checked).
fn check_tail(
    probs: &[f64],
    values: &[f64],
    t: &ExactTail,
    unit: &'static str,
) -> Result<(), DistError> {
    let k = t.values.len();
    if k == 0 {
        return Err(DistError::TailEmpty);
    }
    if t.sample_count <= k as u64 {
        return Err(DistError::TailCount {
            k,
            n: t.sample_count,
        });
    }
    if let Some(index) = t.values.iter().position(|x| !x.is_finite() || *x < 0.0) {
        return Err(DistError::TailValue {
            index,
            value: t.values[index],
            unit,
        });
    }
    for i in 1..k {
        if t.values[i] < t.values[i - 1] {
            return Err(DistError::TailDecreasing {
                index: i,
                value: t.values[i],
                prev: t.values[i - 1],
                unit,
            });
        }
    }
    let last = values[values.len() - 1];
    if t.values[0] < last {
        return Err(DistError::TailBelowTable {
            first: t.values[0],
            last,
            unit,
        });
    }
    let end = probs[probs.len() - 1];
    if (end - t.body_mass()).abs() > t.body_mass_tolerance() {
        return Err(DistError::TailStart {
            value: end,
            expected: t.body_mass(),
            k,
            n: t.sample_count,
        });
    }
    Ok(())
}

/// Tail sample `floor(x)` (`x = (u − body)·N >= 0`), capped at the last one. Out of line: it
/// runs for a fraction K/N of the draws.
#[cold]
#[inline(never)]
fn tail_draw(tail: &[f64], x: f64) -> f64 {
    tail[(x as usize).min(tail.len() - 1)]
}

/// `points[i][2] = (v_{i+1} − v_i) / (p_{i+1} − p_i)` (0 for the last point), at most
/// `f64::MAX` (so a near-vertical segment still gives exactly `v_i` at `u = p_i`).
fn set_slopes(points: &mut [[f64; 3]]) {
    for i in 0..points.len() {
        points[i][2] = match points.get(i + 1) {
            Some(n) => ((n[1] - points[i][1]) / (n[0] - points[i][0])).min(f64::MAX),
            None => 0.0,
        };
    }
}

#[derive(Clone, Debug)]
enum Kind {
    /// Bootstrap: the distinct (scaled) sample values in increasing order, each with the
    /// number of samples below it; `guide[i >> shift]` is the entry holding sorted index
    /// `(i >> shift) << shift`.
    Bootstrap {
        n: u64,
        entries: Box<[Entry]>,
        guide: Box<[u32]>,
        shift: u32,
    },
    /// Inverse CDF: `points[i] = [probs[i], values[i], slope of segment i]`, and for draws
    /// `segs` (the same per segment, with the next value, and a sentinel) and `cells`: slot
    /// `j` of `guide_scale` (a power of two) covers `u ∈ [j, j+1) / guide_scale` (exact in f64,
    /// so `floor(u · guide_scale)` never rounds into the wrong slot); `cells[j] >> 1` is the
    /// segment holding its smallest `u`, and bit 0 is set when more than one other segment
    /// starts inside the slot (`cells[j + 1] >> 1` is the last segment that can hold one of
    /// its `u`). Usually at most one starts, so a draw reads one 4-byte cell and two adjacent
    /// segments, in about 4 bytes of guide and 32 of segment per point. Draws with
    /// `u >= body` take `tail[floor((u − body)·tail_n)]`.
    Quantiles {
        points: Box<[[f64; 3]]>,
        cells: Box<[u32]>,
        segs: Box<[Seg]>,
        /// The number of guide slots, and `64 − log2` of it: slot of `u = unit_f64(x)` is
        /// `x >> guide_shift`.
        guide_scale: f64,
        guide_shift: u32,
        /// The table's last probability when there is an exact tail; infinity otherwise.
        body: f64,
        /// The exact tail's (scaled) samples, increasing; empty without a tail.
        tail: Box<[f64]>,
        /// The number of samples N of the exact tail (probability 1/N each).
        tail_n: f64,
    },
}

/// Draws from one measured distribution. Immutable; cheap to share.
#[derive(Clone, Debug)]
pub struct Sampler {
    kind: Kind,
    median: f64,
    min: f64,
    max: f64,
}

/// Median of sorted values: the middle one, or the mean of the two middle ones (numpy's rule).
fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn check_values(v: &[f64], unit: &'static str) -> Result<(), DistError> {
    match v.iter().position(|x| !x.is_finite() || *x < 0.0) {
        Some(index) => Err(DistError::BadValue {
            index,
            value: v[index],
            unit,
        }),
        None => Ok(()),
    }
}

/// Median of a distribution (bootstrap: of the samples; quantile table: its 0.5 quantile).
pub fn median_of(d: &Distribution, unit: &'static str) -> Result<f64, DistError> {
    Ok(Sampler::new(d, Scaling::Absolute, unit)?.median())
}

impl Sampler {
    /// Validates `d` (values finite and >= 0; quantile tables well formed) and builds a sampler.
    pub fn new(
        d: &Distribution,
        scaling: Scaling,
        unit: &'static str,
    ) -> Result<Sampler, DistError> {
        let (kind, median) = match d {
            Distribution::Samples(v) => {
                if v.is_empty() {
                    return Err(DistError::Empty);
                }
                check_values(v, unit)?;
                if v.len() as u64 > u32::MAX as u64 {
                    return Err(DistError::TooMany { n: v.len() });
                }
                let mut sorted = v.clone();
                sorted.sort_by(f64::total_cmp);
                (bootstrap(&sorted), median_sorted(&sorted))
            }
            Distribution::Quantiles {
                probs,
                values,
                tail,
            } => {
                if probs.len() != values.len() || probs.len() < 2 {
                    return Err(DistError::QuantileLengths {
                        probs: probs.len(),
                        values: values.len(),
                    });
                }
                if probs.len() > i32::MAX as usize {
                    return Err(DistError::TooManyPoints { n: probs.len() });
                }
                check_values(values, unit)?;
                let k = probs.len() - 1;
                if probs[0] != 0.0 {
                    return Err(DistError::QuantileProb {
                        index: 0,
                        value: probs[0],
                        expected: "0",
                    });
                }
                if probs[k] != 1.0 && tail.is_none() {
                    return Err(DistError::QuantileProb {
                        index: k,
                        value: probs[k],
                        expected: "1",
                    });
                }
                for i in 1..=k {
                    if probs[i].partial_cmp(&probs[i - 1]) != Some(std::cmp::Ordering::Greater) {
                        return Err(DistError::QuantileProb {
                            index: i,
                            value: probs[i],
                            expected: "a value above the previous probability",
                        });
                    }
                    if values[i] < values[i - 1] {
                        return Err(DistError::QuantileDecreasing {
                            index: i,
                            value: values[i],
                            prev: values[i - 1],
                            unit,
                        });
                    }
                }
                if let Some(t) = tail {
                    check_tail(probs, values, t, unit)?;
                }
                let kind = quantile_kind(probs, values, tail.as_ref());
                let unscaled = Sampler {
                    kind,
                    median: 0.0,
                    min: 0.0,
                    max: 0.0,
                };
                let m = unscaled.sample(0.5);
                (unscaled.kind, m)
            }
        };
        let mut s = Sampler {
            kind,
            median,
            min: 0.0,
            max: 0.0,
        };
        let ratio = match scaling {
            Scaling::Absolute => None,
            Scaling::MedianTo(base) => Some((base, median)),
            Scaling::Ratio { base, of } => Some((base, of)),
        };
        if let Some((base, of)) = ratio {
            if !base.is_finite() || base < 0.0 {
                return Err(DistError::BadBase { base, unit });
            }
            if of == 0.0 || !of.is_finite() {
                return Err(DistError::ZeroMedian { base, unit });
            }
            let f = |x: f64| if x == of { base } else { x * base / of };
            match &mut s.kind {
                Kind::Bootstrap { entries, .. } => {
                    entries.iter_mut().for_each(|e| e.value = f(e.value))
                }
                Kind::Quantiles {
                    points, segs, tail, ..
                } => {
                    points.iter_mut().for_each(|p| p[1] = f(p[1]));
                    set_slopes(points);
                    *segs = segments(points);
                    tail.iter_mut().for_each(|t| *t = f(*t));
                }
            }
            s.median = match &s.kind {
                Kind::Bootstrap { n, .. } => {
                    let n = *n;
                    let at = |i: u64| s.at_index(i);
                    if n % 2 == 1 {
                        at(n / 2)
                    } else {
                        (at(n / 2 - 1) + at(n / 2)) / 2.0
                    }
                }
                Kind::Quantiles { .. } => s.sample(0.5),
            };
        }
        (s.min, s.max) = match &s.kind {
            Kind::Bootstrap { entries, .. } => (entries[0].value, entries[entries.len() - 1].value),
            Kind::Quantiles { points, tail, .. } => (
                points[0][1],
                tail.last().copied().unwrap_or(points[points.len() - 1][1]),
            ),
        };
        Ok(s)
    }

    /// The draw for 64 random bits `x`: `self.sample(unit_f64(x))`, with the guide slot read
    /// from the bits.
    #[inline(always)]
    pub fn sample_bits(&self, x: u64) -> f64 {
        self.draw(crate::rng::unit_f64(x), Some(x))
    }

    /// The draw for a uniform `u ∈ [0, 1)`.
    #[inline]
    pub fn sample(&self, u: f64) -> f64 {
        self.draw(u, None)
    }

    /// The draw for `u`, and for the random `bits` `u` came from when there are some.
    #[inline(always)]
    fn draw(&self, u: f64, bits: Option<u64>) -> f64 {
        match &self.kind {
            Kind::Bootstrap { n, .. } => {
                let i = ((u * *n as f64) as u64).min(*n - 1);
                self.at_index(i)
            }
            Kind::Quantiles {
                cells,
                segs,
                guide_scale,
                guide_shift,
                body,
                tail,
                tail_n,
                ..
            } => {
                if u >= *body {
                    return tail_draw(tail, (u - body) * tail_n);
                }
                // The guide slot, exactly: `floor(unit_f64(x) · 2^k)` is `x >> (64 − k)`, and
                // `u · 2^k` is a power-of-two scaling.
                let j = match bits {
                    Some(x) => (x >> guide_shift) as usize,
                    None => ((u * guide_scale) as usize).min(cells.len() - 2),
                };
                quantile_draw(cells, segs, j, u)
            }
        }
    }

    /// The `i`-th smallest (scaled) sample of a bootstrap sampler.
    #[inline(always)]
    fn at_index(&self, i: u64) -> f64 {
        let Kind::Bootstrap {
            entries,
            guide,
            shift,
            ..
        } = &self.kind
        else {
            unreachable!()
        };
        let b = (i >> shift) as usize;
        let lo = guide[b] as usize;
        // Entries that can hold index i: lo ..= hi (the entry of the next slot's first index).
        let hi = guide.get(b + 1).map_or(entries.len() - 1, |&h| h as usize);
        if hi - lo <= 4 {
            let mut j = lo;
            while j < hi && entries[j + 1].first <= i {
                j += 1;
            }
            entries[j].value
        } else {
            // Last entry in lo..=hi whose first sample index is <= i.
            let k = entries[lo + 1..=hi].partition_point(|e| e.first <= i);
            entries[lo + k].value
        }
    }

    /// Median of the draws (after scaling).
    pub fn median(&self) -> f64 {
        self.median
    }

    /// Smallest possible draw.
    pub fn min(&self) -> f64 {
        self.min
    }

    /// Largest possible draw.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// Number of samples (bootstrap) or table points plus exact-tail samples (quantiles).
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Bootstrap { n, .. } => *n as usize,
            Kind::Quantiles { points, tail, .. } => points.len() + tail.len(),
        }
    }

    /// Number of exact-tail samples of a quantile table (0 without a tail or for a bootstrap).
    pub fn tail_len(&self) -> usize {
        match &self.kind {
            Kind::Bootstrap { .. } => 0,
            Kind::Quantiles { tail, .. } => tail.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether this sampler bootstraps raw samples (rather than interpolating a quantile table).
    pub fn is_bootstrap(&self) -> bool {
        matches!(self.kind, Kind::Bootstrap { .. })
    }

    /// Number of distinct values a bootstrap sampler holds (table points plus exact-tail
    /// samples for quantiles).
    pub fn distinct(&self) -> usize {
        match &self.kind {
            Kind::Bootstrap { entries, .. } => entries.len(),
            Kind::Quantiles { points, tail, .. } => points.len() + tail.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::CounterRng;

    /// A Pareto(alpha = 1.5)-like heavy-tailed sample set: x = 1000 / (1-v)^(1/1.5) ps.
    fn heavy_tailed(n: usize, seed: u64) -> Vec<f64> {
        let mut s = CounterRng::new(seed, 0).stream(0);
        (0..n)
            .map(|_| 1000.0 / (1.0 - s.next_f64()).powf(1.0 / 1.5))
            .collect()
    }

    fn draws(s: &Sampler, n: usize, seed: u64) -> Vec<f64> {
        let mut st = CounterRng::new(seed, 1).stream(5);
        (0..n).map(|_| s.sample(st.next_f64())).collect()
    }

    /// Two-sample Kolmogorov-Smirnov distance.
    fn ks(a: &[f64], b: &[f64]) -> f64 {
        let mut a = a.to_vec();
        let mut b = b.to_vec();
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        let (mut i, mut j, mut d) = (0, 0, 0.0f64);
        while i < a.len() && j < b.len() {
            let x = a[i].min(b[j]);
            while i < a.len() && a[i] <= x {
                i += 1;
            }
            while j < b.len() && b[j] <= x {
                j += 1;
            }
            d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
        }
        d
    }

    /// Quantile table with `k+1` equally spaced points, linear interpolation of order statistics.
    fn quantile_table(samples: &[f64], k: usize) -> Distribution {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let probs: Vec<f64> = (0..=k).map(|i| i as f64 / k as f64).collect();
        let values = probs
            .iter()
            .map(|&p| {
                let x = p * (s.len() - 1) as f64;
                let i = x.floor() as usize;
                let j = (i + 1).min(s.len() - 1);
                s[i] + (s[j] - s[i]) * (x - i as f64)
            })
            .collect();
        Distribution::quantiles(probs, values)
    }

    /// A table of about `k` body points over the `n − tail` smallest samples (knot j at
    /// probability j/n with value `sorted[max(j,1) − 1]`, as `loggops-calibrate` builds them)
    /// followed by the `tail` largest samples kept exactly.
    fn table_with_tail(samples: &[f64], k: usize, tail: usize) -> Distribution {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let m = n - tail;
        let mut knots: Vec<usize> = (0..=k).map(|i| i * m / k).collect();
        knots.dedup();
        Distribution::Quantiles {
            probs: knots.iter().map(|&j| j as f64 / n as f64).collect(),
            values: knots.iter().map(|&j| s[j.max(1) - 1]).collect(),
            tail: Some(ExactTail {
                values: s[m..].to_vec(),
                sample_count: n as u64,
            }),
        }
    }

    /// Draws at or above the table's last probability are exactly the sorted samples a
    /// bootstrap would give (`sorted[floor(u·n)]`), below it they interpolate the table.
    #[test]
    fn exact_tail_draws_are_the_samples() {
        let src = heavy_tailed(20_000, 21);
        let mut sorted = src.clone();
        sorted.sort_by(f64::total_cmp);
        let d = table_with_tail(&src, 1000, 20);
        let s = Sampler::new(&d, Scaling::Absolute, "ps").unwrap();
        assert_eq!((s.tail_len(), s.len()), (20, 1001 + 20));
        assert_eq!((s.min(), s.max()), (sorted[0], sorted[19_999]));
        let body = 19_980.0 / 20_000.0;
        assert_eq!(s.sample(body), sorted[19_980]);
        // Just below: the top of the table's last segment, which ends at sorted[19_979].
        let below = s.sample(f64::from_bits(body.to_bits() - 1));
        assert!(below <= sorted[19_979] && (below / sorted[19_979] - 1.0).abs() < 1e-9);
        for i in 19_980..20_000 {
            for f in [0.001, 0.5, 0.999] {
                let u = (i as f64 + f) / 20_000.0;
                assert_eq!(s.sample(u), sorted[i], "i = {i}, u = {u}");
            }
        }
        assert_eq!(s.sample(1.0 - f64::EPSILON / 2.0), sorted[19_999]);
        // Below the tail, the interpolated table is unchanged by it.
        let Distribution::Quantiles { probs, values, .. } = &d else {
            unreachable!()
        };
        for (&p, &v) in probs.iter().zip(values) {
            if p < body {
                assert_eq!(s.sample(p), v);
            }
        }
        assert_eq!(s.median(), s.sample(0.5));
        assert!(sorted[9_990] <= s.median() && s.median() <= sorted[10_010]);
    }

    /// The largest sample, 500× the median, is drawn with frequency 1/N (binomial check, fixed
    /// seed), as are the other tail samples; the table without a tail never draws it.
    #[test]
    fn largest_sample_has_frequency_one_over_n() {
        let n = 1000;
        let mut src = heavy_tailed(n, 22);
        // The largest sample becomes 500× the median (about 1590 ps).
        let top = src.iter().copied().fold(0.0, f64::max);
        let i_max = src.iter().position(|&x| x == top).unwrap();
        src[i_max] = 500.0
            * median_sorted(&{
                let mut v = src.clone();
                v.sort_by(f64::total_cmp);
                v
            });
        let with_tail =
            Sampler::new(&table_with_tail(&src, 100, 5), Scaling::Absolute, "ps").unwrap();
        let without = Sampler::new(&quantile_table(&src, 100), Scaling::Absolute, "ps").unwrap();
        assert_eq!(with_tail.max(), src[i_max]);
        let draws_n = 2_000_000;
        let expected = draws_n as f64 / n as f64; // 2000
        let sd = (draws_n as f64 * (1.0 / n as f64) * (1.0 - 1.0 / n as f64)).sqrt(); // 44.7
        let mut sorted = src.clone();
        sorted.sort_by(f64::total_cmp);
        let mut counts = [0u64; 5];
        let mut top_without = 0u64;
        let mut st = CounterRng::new(23, 0).stream(7);
        for _ in 0..draws_n {
            let u = st.next_f64();
            let x = with_tail.sample(u);
            if let Some(j) = sorted[n - 5..].iter().position(|&t| t == x) {
                counts[j] += 1;
            }
            top_without += u64::from(without.sample(u) == sorted[n - 1]);
        }
        for (j, &c) in counts.iter().enumerate() {
            let z = (c as f64 - expected) / sd;
            assert!(
                z.abs() < 4.0,
                "tail sample {j}: {c} draws, expected {expected} (z = {z})"
            );
        }
        assert_eq!(top_without, 0);
    }

    /// KS distance between draws and the raw samples is as small as a bootstrap's, and every
    /// draw above the table's top is one of the tail samples.
    #[test]
    fn exact_tail_matches_source_distribution() {
        let src = heavy_tailed(20_000, 24);
        let s = Sampler::new(&table_with_tail(&src, 1000, 20), Scaling::Absolute, "ps").unwrap();
        let d = draws(&s, 200_000, 25);
        let dist = ks(&d, &src);
        assert!(dist < 0.006, "KS distance {dist}");
        let mut sorted = src.clone();
        sorted.sort_by(f64::total_cmp);
        let above: Vec<f64> = d.iter().copied().filter(|&x| x > sorted[19_979]).collect();
        assert!(above.iter().all(|x| sorted[19_980..].contains(x)));
        // 20 of 20,000 samples: about 200 of 200,000 draws.
        assert!((150..=250).contains(&above.len()), "{}", above.len());
        // Conditional on the tail, the draws are the tail samples, uniformly.
        let tail_ks = ks(&above, &sorted[19_980..]);
        assert!(tail_ks < 0.15, "tail KS distance {tail_ks}");
    }

    #[test]
    fn exact_tail_is_scaled_with_the_median() {
        let d = Distribution::Quantiles {
            probs: vec![0.0, 0.5, 0.9],
            values: vec![1.0, 4.0, 6.0],
            tail: Some(ExactTail {
                values: vec![7.0, 400.0],
                sample_count: 20,
            }),
        };
        let s = Sampler::new(&d, Scaling::MedianTo(1000.0), "ps").unwrap();
        assert_eq!(s.median(), 1000.0);
        assert_eq!(s.sample(0.9), 7.0 * 1000.0 / 4.0);
        assert_eq!(s.sample(0.97), 100_000.0);
        assert_eq!(s.max(), 100_000.0);
        assert!((s.sample(0.7) / 1250.0 - 1.0).abs() < 1e-12);
        // A tail reaching below the median: the median is a tail sample.
        let d = Distribution::Quantiles {
            probs: vec![0.0, 0.25],
            values: vec![1.0, 2.0],
            tail: Some(ExactTail {
                values: vec![3.0, 5.0, 9.0],
                sample_count: 4,
            }),
        };
        let s = Sampler::new(&d, Scaling::Absolute, "ps").unwrap();
        assert_eq!((s.median(), s.sample(0.8)), (5.0, 9.0));
        assert!((s.sample(0.1) - 1.4).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_matches_source_distribution() {
        let src = heavy_tailed(20_000, 1);
        let s = Sampler::new(&Distribution::Samples(src.clone()), Scaling::Absolute, "ps").unwrap();
        let d = draws(&s, 100_000, 2);
        let dist = ks(&d, &src);
        assert!(dist < 0.01, "KS distance {dist}");
        assert!(d.iter().all(|x| src.contains(x)));
    }

    #[test]
    fn quantile_table_matches_source_distribution() {
        let src = heavy_tailed(20_000, 3);
        let s = Sampler::new(&quantile_table(&src, 1000), Scaling::Absolute, "ps").unwrap();
        assert_eq!(s.len(), 1001);
        assert!(!s.is_bootstrap());
        let d = draws(&s, 100_000, 4);
        let dist = ks(&d, &src);
        assert!(dist < 0.01, "KS distance {dist}");
        // The same table with one point moved off the regular grid gives identical draws.
        let Distribution::Quantiles {
            mut probs,
            values,
            tail: None,
        } = quantile_table(&src, 1000)
        else {
            unreachable!()
        };
        probs[1] = 0.0005;
        let t = Sampler::new(
            &Distribution::quantiles(probs, values),
            Scaling::Absolute,
            "ps",
        )
        .unwrap();
        let e = draws(&t, 100_000, 4);
        let differ = d
            .iter()
            .zip(&e)
            .filter(|(a, b)| ((*a - *b) / *a).abs() > 1e-12)
            .count();
        // Only draws with u < 0.002 (the two segments around the moved point) change.
        assert!(differ < 400, "{differ} draws differ");
    }

    /// The guide table finds exactly the segment a binary search finds, for every kind of `u`
    /// (random, on table points, one ulp either side, on slot edges), with dense tails where
    /// hundreds of points share one guide slot.
    #[test]
    fn quantile_guide_table_equals_binary_search() {
        let mut probs: Vec<f64> = (0..=990).map(|i| i as f64 / 1000.0).collect();
        probs[17] = 0.0171; // off the grid
        probs.extend(
            (1..1000).map(|i| 0.99 + 0.01 * (1.0 - 0.5f64.powi(i / 50 + 1)) * i as f64 / 1000.0),
        );
        probs.push(1.0);
        probs.dedup();
        let values: Vec<f64> = (0..probs.len()).map(|i| (i * i) as f64 + 0.5).collect();
        let s = Sampler::new(
            &Distribution::Quantiles {
                probs: probs.clone(),
                values: values.clone(),
                tail: None,
            },
            Scaling::Absolute,
            "ps",
        )
        .unwrap();
        let reference = |u: f64| {
            let i = segment_of(&probs, u);
            let slope = (values[i + 1] - values[i]) / (probs[i + 1] - probs[i]);
            (values[i] + (u - probs[i]) * slope).min(values[i + 1])
        };
        let mut us: Vec<f64> = vec![0.0, 1.0 - f64::EPSILON / 2.0];
        for &p in &probs[..probs.len() - 1] {
            us.extend([p, f64::from_bits(p.to_bits() + 1)]);
            if p > 0.0 {
                us.push(f64::from_bits(p.to_bits() - 1));
            }
        }
        us.extend((0..=4096).map(|j| j as f64 / 4096.0).filter(|&u| u < 1.0));
        let mut st = CounterRng::new(4, 4).stream(4);
        us.extend((0..200_000).map(|_| st.next_f64()));
        us.extend((0..200_000).map(|_| 0.99 + 0.01 * st.next_f64()));
        for u in us {
            assert_eq!(s.sample(u).to_bits(), reference(u).to_bits(), "u = {u:e}");
        }
    }

    #[test]
    fn sample_bits_is_sample_of_unit_f64() {
        let src = heavy_tailed(20_000, 9);
        // Slots in which 0, 1, 2 to 8 and more than 8 segments start (a dense upper tail).
        let mut probs: Vec<f64> = (0..990).map(|i| i as f64 / 1000.0).collect();
        probs.extend((0..2000).map(|i| 0.99 + 0.01 * (i as f64 / 2000.0).powi(3)));
        probs.push(1.0);
        probs.dedup();
        let values: Vec<f64> = (0..probs.len()).map(|i| (i * i) as f64 + 0.5).collect();
        let dense = Distribution::Quantiles {
            probs,
            values,
            tail: None,
        };
        let samplers = [
            Sampler::new(&dense, Scaling::Absolute, "ps").unwrap(),
            Sampler::new(&quantile_table(&src, 1000), Scaling::Absolute, "ps").unwrap(),
            Sampler::new(&table_with_tail(&src, 1000, 20), Scaling::Absolute, "ps").unwrap(),
            Sampler::new(&Distribution::Samples(src.clone()), Scaling::Absolute, "ps").unwrap(),
        ];
        // The edges of every guide slot's bits, and random bits.
        let mut xs: Vec<u64> = vec![0, u64::MAX, 1 << 11, (1 << 11) - 1];
        for k in [44u32, 50, 54, 60, 63] {
            for j in 0..(1u64 << (64 - k)).min(4096) {
                xs.extend([j << k, (j << k).wrapping_sub(1), (j << k) | (1 << 11)]);
            }
        }
        let mut st = CounterRng::new(5, 5).stream(5);
        xs.extend((0..200_000).map(|_| st.next_u64()));
        // In the dense tail: u ≥ 0.99.
        xs.extend((0..100_000).map(|_| u64::MAX - st.next_u64() / 100));
        for s in &samplers {
            for &x in &xs {
                let u = crate::rng::unit_f64(x);
                assert_eq!(
                    s.sample_bits(x).to_bits(),
                    s.sample(u).to_bits(),
                    "x = {x:#x}"
                );
            }
        }
    }

    #[test]
    fn quantile_interpolation_is_linear_and_exact_at_points() {
        let d = Distribution::Quantiles {
            probs: vec![0.0, 0.25, 0.5, 1.0],
            values: vec![10.0, 20.0, 20.0, 100.0],
            tail: None,
        };
        let s = Sampler::new(&d, Scaling::Absolute, "ps").unwrap();
        assert_eq!(s.sample(0.0), 10.0);
        assert_eq!(s.sample(0.125), 15.0);
        assert_eq!(s.sample(0.25), 20.0);
        assert_eq!(s.sample(0.4), 20.0);
        assert_eq!(s.sample(0.5), 20.0);
        assert_eq!(s.sample(0.75), 60.0);
        assert_eq!(s.median(), 20.0);
        assert_eq!((s.min(), s.max()), (10.0, 100.0));
        let g = Distribution::Quantiles {
            probs: vec![0.0, 0.5, 1.0],
            values: vec![0.0, 4.0, 8.0],
            tail: None,
        };
        let s = Sampler::new(&g, Scaling::Absolute, "ps").unwrap();
        assert_eq!(s.sample(0.25), 2.0);
        assert_eq!(s.sample(0.875), 7.0);
        assert_eq!(s.median(), 4.0);
        // A near-vertical segment (probability step of one denormal): exact at its ends.
        let v = Distribution::Quantiles {
            probs: vec![0.0, 5e-324, 1.0],
            values: vec![1.0, 1e10, 2e10],
            tail: None,
        };
        let s = Sampler::new(&v, Scaling::Absolute, "ps").unwrap();
        assert_eq!(s.sample(0.0), 1.0);
        assert_eq!(s.sample(5e-324), 1e10);
        assert_eq!(s.sample(0.5), 1.5e10);
    }

    #[test]
    fn median_scaling_is_exact() {
        // Odd count: the median sample maps to exactly the base.
        let v = vec![3.0, 7.0, 1.1, 9.9, 5.3];
        let s = Sampler::new(
            &Distribution::Samples(v.clone()),
            Scaling::MedianTo(1_300_000.0),
            "ps",
        )
        .unwrap();
        assert_eq!(s.median(), 1_300_000.0);
        // Sorted: 1.1, 3.0, 5.3, 7.0, 9.9.
        assert_eq!(s.sample(0.5), 1_300_000.0);
        assert_eq!(s.sample(0.0), 1.1 * 1_300_000.0 / 5.3);
        assert_eq!(s.sample(0.7), 7.0 * 1_300_000.0 / 5.3);
        assert_eq!(s.max(), 9.9 * 1_300_000.0 / 5.3);
        assert_eq!(median_of(&Distribution::Samples(v), "ps").unwrap(), 5.3);
        // Even count: numpy's median (mean of the middle two), scaled to the base.
        let s = Sampler::new(
            &Distribution::Samples(vec![1.0, 2.0, 4.0, 8.0]),
            Scaling::MedianTo(86.0),
            "ps/B",
        )
        .unwrap();
        assert_eq!(s.median(), 86.0);
        // Heavy-tailed set: relative error of the scaled median at most 1 ulp-ish.
        let src = heavy_tailed(10_000, 9);
        let s = Sampler::new(&Distribution::Samples(src), Scaling::MedianTo(0.11), "ps/B").unwrap();
        assert!((s.median() / 0.11 - 1.0).abs() <= 4.0 * f64::EPSILON);
        // Quantile table with a 0.5 point: exact.
        let q = Distribution::Quantiles {
            probs: vec![0.0, 0.5, 0.9, 1.0],
            values: vec![1.0, 3.0, 4.0, 50.0],
            tail: None,
        };
        let s = Sampler::new(&q, Scaling::MedianTo(500_000.0), "ps").unwrap();
        assert_eq!(s.median(), 500_000.0);
        assert_eq!(s.max(), 50.0 * 500_000.0 / 3.0);
    }

    /// The compact table gives exactly `sorted[floor(u·n)]`, with and without duplicates.
    #[test]
    fn bootstrap_equals_sorted_lookup() {
        let mut st = CounterRng::new(12, 0).stream(3);
        for (n, distinct) in [
            (1usize, 1u64),
            (10, 3),
            (1000, 7),
            (50_000, 999),
            (30_001, 30_001),
        ] {
            let v: Vec<f64> = (0..n)
                .map(|_| (st.next_u64() % distinct) as f64 * 0.5 + 1.0)
                .collect();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let s = Sampler::new(&Distribution::Samples(v), Scaling::Absolute, "ps").unwrap();
            assert_eq!(s.len(), n);
            assert!(s.distinct() as u64 <= distinct);
            for i in 0..n {
                // u near the start and near the end of index i's interval.
                for f in [0.001, 0.999] {
                    let u = (i as f64 + f) / n as f64;
                    assert_eq!(s.sample(u), sorted[i], "n={n} i={i}");
                }
            }
            assert_eq!((s.min(), s.max()), (sorted[0], sorted[n - 1]));
        }
    }

    /// floor(u·n) over a complete grid of 2^20 equally likely u hits every index
    /// floor or ceil of 2^20/n times: the bootstrap is uniform up to 2^-53 for 53-bit u.
    #[test]
    fn bootstrap_is_uniform_over_indices() {
        for n in [1usize, 2, 3, 7, 1000, 12_345] {
            let s = Sampler::new(
                &Distribution::Samples((0..n).map(|i| i as f64).collect()),
                Scaling::Absolute,
                "ps",
            )
            .unwrap();
            let grid = 1u64 << 20;
            let mut counts = vec![0u64; n];
            for k in 0..grid {
                counts[s.sample(k as f64 / grid as f64) as usize] += 1;
            }
            let lo = grid / n as u64;
            assert!(
                counts.iter().all(|&c| c == lo || c == lo + 1),
                "n={n}: counts between {:?} and {:?}",
                counts.iter().min(),
                counts.iter().max()
            );
        }
        // Statistically: the mean of 200k draws matches the sample mean.
        let src: Vec<f64> = (0..1000).map(|i| (i * i) as f64).collect();
        let s = Sampler::new(&Distribution::Samples(src.clone()), Scaling::Absolute, "ps").unwrap();
        let d = draws(&s, 200_000, 11);
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let smean = src.iter().sum::<f64>() / src.len() as f64;
        let sd = (src.iter().map(|x| (x - smean).powi(2)).sum::<f64>() / 1000.0).sqrt();
        assert!((mean - smean).abs() < 4.0 * sd / (200_000f64).sqrt());
    }

    /// A two-point table ending at `end` (values 1 and 2) with an exact tail.
    fn tailed(values: Vec<f64>, sample_count: u64, end: f64) -> Distribution {
        Distribution::Quantiles {
            probs: vec![0.0, end],
            values: vec![1.0, 2.0],
            tail: Some(ExactTail {
                values,
                sample_count,
            }),
        }
    }

    #[test]
    fn invalid_distributions_are_rejected() {
        let e = |d: Distribution, s: Scaling| Sampler::new(&d, s, "ps").unwrap_err().to_string();
        insta::assert_snapshot!([
            e(Distribution::Samples(vec![]), Scaling::Absolute),
            e(Distribution::Samples(vec![1.0, -3.5]), Scaling::Absolute),
            e(
                Distribution::Samples(vec![1.0, f64::NAN]),
                Scaling::Absolute
            ),
            e(
                Distribution::Samples(vec![0.0, 0.0, 1.0]),
                Scaling::MedianTo(5.0)
            ),
            e(Distribution::Samples(vec![1.0]), Scaling::MedianTo(-5.0)),
            e(
                Distribution::Quantiles {
                    probs: vec![0.0, 1.0],
                    values: vec![1.0],
                    tail: None,
                },
                Scaling::Absolute
            ),
            e(
                Distribution::Quantiles {
                    probs: vec![0.1, 1.0],
                    values: vec![1.0, 2.0],
                    tail: None,
                },
                Scaling::Absolute
            ),
            e(
                Distribution::Quantiles {
                    probs: vec![0.0, 0.9],
                    values: vec![1.0, 2.0],
                    tail: None,
                },
                Scaling::Absolute
            ),
            e(
                Distribution::Quantiles {
                    probs: vec![0.0, 0.5, 0.5, 1.0],
                    values: vec![1.0, 2.0, 3.0, 4.0],
                    tail: None,
                },
                Scaling::Absolute
            ),
            e(
                Distribution::Quantiles {
                    probs: vec![0.0, 0.5, 1.0],
                    values: vec![1.0, 3.0, 2.0],
                    tail: None,
                },
                Scaling::Absolute
            ),
            e(tailed(vec![], 10, 0.9), Scaling::Absolute),
            e(tailed(vec![5.0, 6.0], 2, 0.5), Scaling::Absolute),
            e(tailed(vec![5.0, f64::INFINITY], 10, 0.8), Scaling::Absolute),
            e(tailed(vec![6.0, 5.0], 10, 0.8), Scaling::Absolute),
            e(tailed(vec![1.5, 5.0], 10, 0.8), Scaling::Absolute),
            e(tailed(vec![5.0, 6.0], 10, 0.9), Scaling::Absolute),
        ]
        .join("\n"));
    }
}
