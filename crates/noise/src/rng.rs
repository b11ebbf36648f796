//! Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11, "Parallel random numbers:
//! as easy as 1, 2, 3").
//!
//! A counter-based generator is a keyed bijection `(counter, key) -> 128 random bits`. Every
//! random number of a repetition is addressed by *what it is for* (the counter) under a key
//! derived from `(seed, rep)`, so values do not depend on the order in which they are requested,
//! need no storage, and any number of threads can draw independently.
//!
//! # Stream layout (pinned forever by the known-answer tests)
//! * Key: `CounterRng::new(seed, rep)` uses the first two output words of
//!   `philox4x32_10([seed_lo, seed_hi, rep_lo, rep_hi], KEY_DERIVATION_KEY)` as its key.
//! * Counter `[a, b, c, d]`: the top 8 bits of `d` are a *domain* tag (`DOMAIN_*`) so
//!   different uses never share a counter. The remaining bits are laid out per domain (see the
//!   constants and the users in `model.rs` / `os.rs`).
//! * A 128-bit block gives two u64 (`w0 | w1 << 32`, `w2 | w3 << 32`); a u64 becomes a uniform
//!   f64 in `[0, 1)` by its top 53 bits.

/// Philox multiplier for word 0.
const PHILOX_M0: u32 = 0xD251_1F53;
/// Philox multiplier for word 2.
const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Key increment (Weyl sequence) for key word 0: golden ratio.
const PHILOX_W0: u32 = 0x9E37_79B9;
/// Key increment for key word 1: sqrt(3) - 1.
const PHILOX_W1: u32 = 0xBB67_AE85;

/// Key under which `(seed, rep)` is hashed into a repetition's key (first digits of pi).
pub const KEY_DERIVATION_KEY: [u32; 2] = [0x243F_6A88, 0x85A3_08D3];

/// Domain of per-message draws: `[src, send_op, index, DOMAIN_MSG << 24 | purpose]`.
pub const DOMAIN_MSG: u32 = 0x01;
/// Domain of per-rank OS-noise phases: `[rank, 0, 0, DOMAIN_PHASE << 24]`.
pub const DOMAIN_PHASE: u32 = 0x02;
/// Domain of the co-scheduled phase (one for all ranks): `[0, 0, 0, DOMAIN_PHASE_COSCHED << 24]`.
pub const DOMAIN_PHASE_COSCHED: u32 = 0x03;
/// Domain of the fitted detour process:
/// `[rank, bucket_lo, arrival, DOMAIN_PROCESS << 24 | bucket_hi]` (bucket < 2^56).
pub const DOMAIN_PROCESS: u32 = 0x04;
/// Domain of sequential [`Stream`]s: `[id_lo, id_hi, block_lo, DOMAIN_STREAM << 24 | block_hi]`.
pub const DOMAIN_STREAM: u32 = 0x05;

#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = a as u64 * b as u64;
    ((p >> 32) as u32, p as u32)
}

#[inline(always)]
fn round(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (hi0, lo0) = mulhilo(PHILOX_M0, ctr[0]);
    let (hi1, lo1) = mulhilo(PHILOX_M1, ctr[2]);
    [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0]
}

/// The Philox4x32-10 bijection (Random123's `philox4x32(ctr, key)` with 10 rounds).
#[inline]
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = round(ctr, key);
    let mut k = key;
    for _ in 1..10 {
        k = [k[0].wrapping_add(PHILOX_W0), k[1].wrapping_add(PHILOX_W1)];
        c = round(c, k);
    }
    c
}

/// The top 53 bits of `x` as a uniform f64 in `[0, 1)` (every multiple of 2^-53 equally likely).
#[inline(always)]
pub fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `[0, n)` from 64 random bits (multiply-high; bias below n/2^64).
#[inline(always)]
pub fn below(x: u64, n: u64) -> u64 {
    ((x as u128 * n as u128) >> 64) as u64
}

/// Philox4x32-10 under the key of one `(seed, repetition)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CounterRng {
    key: [u32; 2],
}

impl CounterRng {
    /// The generator of repetition `rep` of a run with master seed `seed`.
    pub fn new(seed: u64, rep: u64) -> CounterRng {
        let w = philox4x32_10(
            [
                seed as u32,
                (seed >> 32) as u32,
                rep as u32,
                (rep >> 32) as u32,
            ],
            KEY_DERIVATION_KEY,
        );
        CounterRng { key: [w[0], w[1]] }
    }

    /// A generator with an explicit Philox key.
    pub const fn from_key(key: [u32; 2]) -> CounterRng {
        CounterRng { key }
    }

    pub const fn key(&self) -> [u32; 2] {
        self.key
    }

    /// The 128-bit block at `ctr`.
    #[inline(always)]
    pub fn block(&self, ctr: [u32; 4]) -> [u32; 4] {
        philox4x32_10(ctr, self.key)
    }

    /// The block at `ctr` as two u64: `[w0 | w1 << 32, w2 | w3 << 32]`.
    #[inline(always)]
    pub fn u64x2(&self, ctr: [u32; 4]) -> [u64; 2] {
        let w = self.block(ctr);
        [
            w[0] as u64 | (w[1] as u64) << 32,
            w[2] as u64 | (w[3] as u64) << 32,
        ]
    }

    /// The block at `ctr` as two uniform f64 in `[0, 1)` (53 bits each).
    #[inline(always)]
    pub fn unit_f64x2(&self, ctr: [u32; 4]) -> [f64; 2] {
        let [a, b] = self.u64x2(ctr);
        [unit_f64(a), unit_f64(b)]
    }

    /// A sequential stream of numbers identified by `id` (for uses without a natural address).
    pub fn stream(&self, id: u64) -> Stream {
        Stream {
            rng: *self,
            id,
            block: 0,
            buf: [0; 2],
            avail: 0,
        }
    }
}

/// A sequential generator over the blocks `[id_lo, id_hi, k_lo, DOMAIN_STREAM << 24 | k_hi]`,
/// `k = 0, 1, ...` (at most 2^56 blocks). Jumpable: [`Stream::seek`] moves to any block.
#[derive(Clone, Debug)]
pub struct Stream {
    rng: CounterRng,
    id: u64,
    block: u64,
    buf: [u64; 2],
    avail: u8,
}

impl Stream {
    /// Continue at the first u64 of block `block`.
    pub fn seek(&mut self, block: u64) {
        self.block = block;
        self.avail = 0;
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        if self.avail == 0 {
            let k = self.block;
            assert!(k < 1 << 56, "stream {} exhausted (2^56 blocks)", self.id);
            self.buf = self.rng.u64x2([
                self.id as u32,
                (self.id >> 32) as u32,
                k as u32,
                DOMAIN_STREAM << 24 | (k >> 32) as u32,
            ]);
            self.block += 1;
            self.avail = 2;
        }
        self.avail -= 1;
        self.buf[1 - self.avail as usize]
    }

    /// The next uniform f64 in `[0, 1)` (53 bits).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's published known-answer vectors (tests/kat_vectors).
    #[test]
    fn philox_known_answers() {
        assert_eq!(
            philox4x32_10([0, 0, 0, 0], [0, 0]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    /// Pins this crate's key derivation and conversions forever: changing any of them changes
    /// every simulated result.
    #[test]
    fn derived_streams_are_pinned() {
        let r = CounterRng::new(0, 0);
        assert_eq!(r.key(), [0xaefffc8e, 0x72b6d554]);
        let r = CounterRng::new(42, 7);
        assert_eq!(r.key(), [0x3664549b, 0x8ef35fd4]);
        assert_eq!(
            r.u64x2([1, 2, 0, DOMAIN_MSG << 24]),
            [0x4ab82d336319d308, 0xee07ee6e147149a6]
        );
        let [a, b] = r.unit_f64x2([1, 2, 0, DOMAIN_MSG << 24]);
        assert_eq!(a, 0.2918728113610094);
        assert_eq!(b, 0.9298085230588572);
        let mut s = r.stream(9);
        assert_eq!(
            [s.next_u64(), s.next_u64(), s.next_u64()],
            [0x68dcf4d3ac58fa95, 0xeb3a2359b97cc5ed, 0xe8de0637a231c2bd]
        );
    }

    #[test]
    fn unit_f64_uses_53_bits_and_stays_below_one() {
        assert_eq!(unit_f64(0), 0.0);
        assert_eq!(unit_f64(u64::MAX), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(unit_f64(1 << 11), 2f64.powi(-53));
        assert_eq!(unit_f64((1 << 11) - 1), 0.0);
        assert_eq!(below(u64::MAX, 10), 9);
        assert_eq!(below(0, 10), 0);
        assert_eq!(below(1 << 63, 10), 5);
    }

    #[test]
    fn stream_seek_is_a_jump() {
        let r = CounterRng::new(1, 2);
        let mut s = r.stream(3);
        let v: Vec<u64> = (0..10).map(|_| s.next_u64()).collect();
        let mut t = r.stream(3);
        t.seek(3);
        assert_eq!(t.next_u64(), v[6]);
        assert_eq!(t.next_u64(), v[7]);
        assert_ne!(r.stream(4).next_u64(), v[0]);
    }

    /// Moments, a 256-bin chi-square, per-bit balance and lag-1 correlation of 2^20 uniforms.
    #[test]
    fn uniforms_pass_sanity_statistics() {
        let r = CounterRng::new(20240601, 0);
        let n = 1usize << 20;
        let mut sum = 0.0;
        let mut sum2 = 0.0;
        let mut lag = 0.0;
        let mut prev = 0.5;
        let mut bins = [0u64; 256];
        let mut bits = [0u64; 64];
        for i in 0..n / 2 {
            let xs = r.u64x2([i as u32, 0, 0, DOMAIN_MSG << 24]);
            for x in xs {
                for (b, c) in bits.iter_mut().enumerate() {
                    *c += x >> b & 1;
                }
                let u = unit_f64(x);
                sum += u;
                sum2 += u * u;
                lag += (u - 0.5) * (prev - 0.5);
                prev = u;
                bins[(u * 256.0) as usize] += 1;
            }
        }
        let nf = n as f64;
        let mean = sum / nf;
        let var = sum2 / nf - mean * mean;
        // sd of the mean: sqrt(1/12/n) = 2.8e-4.
        assert!((mean - 0.5).abs() < 1.2e-3, "mean {mean}");
        assert!((var - 1.0 / 12.0).abs() < 1e-3, "variance {var}");
        // Correlation of neighbours: sd 1/sqrt(n) ≈ 1e-3 (times 1/12 for the covariance).
        let corr = lag / nf * 12.0;
        assert!(corr.abs() < 5e-3, "lag-1 correlation {corr}");
        let expected = nf / 256.0;
        let chi2: f64 = bins
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // 255 degrees of freedom: p = 1e-4 bounds are about 180 and 350.
        assert!((180.0..350.0).contains(&chi2), "chi-square {chi2}");
        for (b, &c) in bits.iter().enumerate() {
            // sd of a bit count is sqrt(n)/2 = 512.
            assert!((c as f64 - nf / 2.0).abs() < 2600.0, "bit {b}: {c} ones");
        }
    }

    /// Neighbouring counters and neighbouring keys give unrelated values.
    #[test]
    fn nearby_counters_and_seeds_are_decorrelated() {
        let n = 1usize << 16;
        let mut agree = 0u32;
        for i in 0..n as u32 {
            let a = CounterRng::new(i as u64, 0).u64x2([0, 0, 0, 0])[0];
            let b = CounterRng::new(i as u64 + 1, 0).u64x2([0, 0, 0, 0])[0];
            let c = CounterRng::new(i as u64, 1).u64x2([0, 0, 0, 0])[0];
            agree += (a ^ b).count_zeros() + (a ^ c).count_zeros();
        }
        // 2 * 64 * n bit comparisons, half should agree; sd = sqrt(2*64*n)/2 ≈ 1448.
        let expected = 64.0 * n as f64;
        assert!(
            (agree as f64 - expected).abs() < 7000.0,
            "{agree} agreeing bits, expected {expected}"
        );
    }
}
