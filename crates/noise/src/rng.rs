//! Counter-based random numbers: a keyed hash of a 128-bit counter built from SplitMix64's
//! output function.
//!
//! A counter-based generator is a keyed function `(counter) -> random bits`. Every random
//! number of a repetition is addressed by *what it is for* (the counter) under a key derived
//! from `(seed, rep)`, so values do not depend on the order in which they are requested, need
//! no storage, and any number of threads can draw independently.
//!
//! # The function
//! [`mix64`] is the output function ("finalizer") of SplitMix64 (Steele, Lea & Flood,
//! OOPSLA 2014, "Fast splittable pseudorandom number generators"; the constants are Stafford's
//! "Mix13" variant of the MurmurHash3 finalizer): two multiply–xorshift rounds, a bijection of
//! `u64` with full avalanche. SplitMix64 (`mix64(seed + i·0x9E3779B97F4A7C15)`) passes
//! TestU01's BigCrush; its published reference outputs are pinned below.
//!
//! A counter is two u64 `(a, b)`; under the key `(k0, k1)` its 64 random bits are
//!
//! ```text
//! at(a, b) = mix64(row(a) ^ col(b)),   row(a) = mix64(a ^ k0),   col(b) = mix64(b ^ k1)
//! ```
//!
//! Each input goes through a full mixing round before the two are combined and mixed again,
//! so structured counters (neighbouring ranks, consecutive ops, small purpose tags) give
//! unrelated outputs; for a fixed `b`, `at(·, b)` is a bijection (distinct messages never share
//! a value by construction). `row` and `col` can be computed once and reused ([`CounterRng::row`],
//! [`CounterRng::col`], [`CounterRng::join`]): a message's draws share its `row`, and the
//! per-purpose `col` values are constants of a repetition, so a draw costs one `mix64`
//! (about 3 ns) after the first. The tests below check avalanche, uniformity, bit balance,
//! pairwise independence of the draws of one message and of neighbouring messages, and
//! decorrelation across neighbouring seeds and repetitions.
//!
//! # Stream layout (pinned by the known-answer tests)
//! * Key: `CounterRng::new(seed, rep)` has `k0 = KEY_DERIVATION.at(seed, rep)` (the function
//!   above under the fixed key [`KEY_DERIVATION_KEY`]) and `k1 = mix64(k0 + 0x9E3779B97F4A7C15)`.
//! * `b`'s top 8 bits are a *domain* tag (`DOMAIN_*`) so different uses never share a counter;
//!   the other bits are laid out per domain (see the constants and the users in `model.rs` /
//!   `os.rs`).
//! * A u64 becomes a uniform f64 in `[0, 1)` by its top 53 bits ([`unit_f64`]).

/// SplitMix64's increment (the golden ratio, odd).
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// Key under which `(seed, rep)` is hashed into a repetition's key (hex digits of pi).
pub const KEY_DERIVATION_KEY: [u64; 2] = [0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344];

/// Domain of per-message draws: `a = src << 32 | send_op`, `b = DOMAIN_MSG << 56 | purpose`
/// (purposes in `model.rs`).
pub const DOMAIN_MSG: u64 = 0x01;
/// Domain of per-rank OS-noise phases: `a = rank`, `b = DOMAIN_PHASE << 56`.
pub const DOMAIN_PHASE: u64 = 0x02;
/// Domain of the co-scheduled phase (one for all ranks): `a = 0`, `b = DOMAIN_PHASE_COSCHED << 56`.
pub const DOMAIN_PHASE_COSCHED: u64 = 0x03;
/// Domain of the fitted detour process: `a = bucket`,
/// `b = DOMAIN_PROCESS << 56 | arrival << 32 | stream` (see [`crate::os::DetourProcessGen`]).
pub const DOMAIN_PROCESS: u64 = 0x04;
/// Domain of the capture day a repetition runs on (profiles with several days): `a = 0`,
/// `b = DOMAIN_DAY << 56`.
pub const DOMAIN_DAY: u64 = 0x06;
/// Domain of bandwidth levels: `a = 0` (one level per repetition) or `a = lo << 32 | hi` (one
/// per pair of ranks, `lo < hi`), `b = DOMAIN_LEVEL << 56`.
pub const DOMAIN_LEVEL: u64 = 0x07;
/// Domain of the phase of a rank's clock against its ticks (measurements read a clock of finite
/// resolution): `a = rank`, `b = DOMAIN_CLOCK << 56`.
pub const DOMAIN_CLOCK: u64 = 0x08;
/// Domain of sequential [`Stream`]s: `a = index`, `b = DOMAIN_STREAM << 56 | id` (id < 2^56).
pub const DOMAIN_STREAM: u64 = 0x05;

/// SplitMix64's output function: a bijection of u64 with full avalanche.
#[inline(always)]
pub const fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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

/// The keyed counter hash of one `(seed, repetition)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CounterRng {
    key: [u64; 2],
}

impl CounterRng {
    /// The generator of repetition `rep` of a run with master seed `seed`.
    pub fn new(seed: u64, rep: u64) -> CounterRng {
        let k0 = CounterRng::from_key(KEY_DERIVATION_KEY).at(seed, rep);
        CounterRng {
            key: [k0, mix64(k0.wrapping_add(GOLDEN_GAMMA))],
        }
    }

    /// A generator with an explicit key.
    pub const fn from_key(key: [u64; 2]) -> CounterRng {
        CounterRng { key }
    }

    pub const fn key(&self) -> [u64; 2] {
        self.key
    }

    /// The first half of [`Self::at`]: depends on `a` only.
    #[inline(always)]
    pub fn row(&self, a: u64) -> u64 {
        mix64(a ^ self.key[0])
    }

    /// The second half of [`Self::at`]: depends on `b` only.
    #[inline(always)]
    pub fn col(&self, b: u64) -> u64 {
        mix64(b ^ self.key[1])
    }

    /// `at(a, b)` from `row(a)` and `col(b)`.
    #[inline(always)]
    pub fn join(row: u64, col: u64) -> u64 {
        mix64(row ^ col)
    }

    /// The 64 random bits at counter `(a, b)`.
    #[inline(always)]
    pub fn at(&self, a: u64, b: u64) -> u64 {
        Self::join(self.row(a), self.col(b))
    }

    /// The uniform f64 in `[0, 1)` at counter `(a, b)` (53 bits).
    #[inline(always)]
    pub fn unit_at(&self, a: u64, b: u64) -> f64 {
        unit_f64(self.at(a, b))
    }

    /// A sequential stream of numbers identified by `id < 2^56` (for uses without a natural
    /// address): value `i` is `at(i, DOMAIN_STREAM << 56 | id)`.
    pub fn stream(&self, id: u64) -> Stream {
        assert!(id < 1 << 56, "stream id {id} is not below 2^56");
        Stream {
            rng: *self,
            col: self.col(DOMAIN_STREAM << 56 | id),
            index: 0,
        }
    }
}

/// A sequential generator over the counters `(i, DOMAIN_STREAM << 56 | id)`, `i = 0, 1, ...`.
/// Jumpable: [`Stream::seek`] moves to any index.
#[derive(Clone, Debug)]
pub struct Stream {
    rng: CounterRng,
    col: u64,
    index: u64,
}

impl Stream {
    /// Continue at value `index`.
    pub fn seek(&mut self, index: u64) {
        self.index = index;
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let x = CounterRng::join(self.rng.row(self.index), self.col);
        self.index = self.index.wrapping_add(1);
        x
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

    /// SplitMix64's published reference outputs (Rosetta Code "Pseudo-random numbers/
    /// Splitmix64", seed 1234567; Vigna's splitmix64.c seeded with 0): `mix64` is exactly
    /// SplitMix64's output function.
    #[test]
    fn mix64_is_splitmix64() {
        let splitmix = |seed: u64, n: u64| -> Vec<u64> {
            (1..=n)
                .map(|i| mix64(seed.wrapping_add(i.wrapping_mul(GOLDEN_GAMMA))))
                .collect()
        };
        assert_eq!(
            splitmix(1234567, 5),
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
        assert_eq!(splitmix(0, 2), [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4]);
        assert_eq!(mix64(0), 0);
    }

    /// Pins this crate's key derivation, counter hash and conversions: changing any of them
    /// changes every simulated result. The values were cross-checked with an independent
    /// Python implementation of the documented formulas.
    #[test]
    fn derived_streams_are_pinned() {
        let r = CounterRng::new(0, 0);
        assert_eq!(r.key(), [0x89e281b9bedb4db6, 0x26df3fea9c132954]);
        let r = CounterRng::new(42, 7);
        assert_eq!(r.key(), [0xc845cfd88322ef94, 0x220b0e4266c6314b]);
        let a = 1u64 << 32 | 2;
        assert_eq!(r.at(a, DOMAIN_MSG << 56), 0x5315f958790cedf6);
        assert_eq!(r.at(a, DOMAIN_MSG << 56 | 1), 0xb8a0a98883bec6f9);
        assert_eq!(
            CounterRng::join(r.row(a), r.col(DOMAIN_MSG << 56)),
            r.at(a, DOMAIN_MSG << 56)
        );
        assert_eq!(r.unit_at(a, DOMAIN_MSG << 56), 0.3245540467260529);
        assert_eq!(r.unit_at(a, DOMAIN_MSG << 56 | 1), 0.7212015112197561);
        let mut s = r.stream(9);
        assert_eq!(
            [s.next_u64(), s.next_u64(), s.next_u64()],
            [0xea91329df80d8068, 0x72f685c4687a2bbe, 0xfea7c1329f7f26c3]
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
        t.seek(6);
        assert_eq!(t.next_u64(), v[6]);
        assert_eq!(t.next_u64(), v[7]);
        assert_eq!(v[4], r.at(4, DOMAIN_STREAM << 56 | 3));
        assert_ne!(r.stream(4).next_u64(), v[0]);
    }

    /// Moments, a 256-bin chi-square, per-bit balance and lag-1 correlation of 2^20 uniforms
    /// along one counter coordinate.
    fn check_uniforms(name: &str, xs: impl Iterator<Item = u64>) {
        let mut n = 0usize;
        let mut sum = 0.0;
        let mut sum2 = 0.0;
        let mut lag = 0.0;
        let mut prev = 0.5;
        let mut bins = [0u64; 256];
        let mut bits = [0u64; 64];
        for x in xs {
            n += 1;
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
        assert_eq!(n, 1 << 20);
        let nf = n as f64;
        let mean = sum / nf;
        let var = sum2 / nf - mean * mean;
        // sd of the mean: sqrt(1/12/n) = 2.8e-4.
        assert!((mean - 0.5).abs() < 1.2e-3, "{name}: mean {mean}");
        assert!((var - 1.0 / 12.0).abs() < 1e-3, "{name}: variance {var}");
        // Correlation of neighbours: sd 1/sqrt(n) ≈ 1e-3.
        let corr = lag / nf * 12.0;
        assert!(corr.abs() < 5e-3, "{name}: lag-1 correlation {corr}");
        let expected = nf / 256.0;
        let chi2: f64 = bins
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // 255 degrees of freedom: p = 1e-4 bounds are about 180 and 350.
        assert!((180.0..350.0).contains(&chi2), "{name}: chi-square {chi2}");
        for (b, &c) in bits.iter().enumerate() {
            // sd of a bit count is sqrt(n)/2 = 512.
            assert!(
                (c as f64 - nf / 2.0).abs() < 2600.0,
                "{name}: bit {b}: {c} ones"
            );
        }
    }

    #[test]
    fn uniforms_pass_sanity_statistics() {
        let r = CounterRng::new(20240601, 0);
        let n = 1u64 << 20;
        // Consecutive send ops of one rank, consecutive ranks (the high half of `a`), and
        // consecutive purposes of one message.
        check_uniforms("ops", (0..n).map(|i| r.at(5 << 32 | i, DOMAIN_MSG << 56)));
        check_uniforms("ranks", (0..n).map(|i| r.at(i << 32, DOMAIN_MSG << 56)));
        check_uniforms("purposes", (0..n).map(|i| r.at(77, DOMAIN_MSG << 56 | i)));
        let mut s = r.stream(1);
        check_uniforms("stream", (0..n).map(|_| s.next_u64()));
    }

    /// Flipping any one input bit (of `a` or `b`) flips every output bit with probability 1/2.
    #[test]
    fn strict_avalanche() {
        let r = CounterRng::new(3, 1);
        let mut src = r.stream(2);
        let trials = 4000;
        let mut worst = 0.0f64;
        for bit in 0..128 {
            let mut flips = [0u32; 64];
            for _ in 0..trials {
                let (a, b) = (src.next_u64(), src.next_u64());
                let (a2, b2) = if bit < 64 {
                    (a ^ 1 << bit, b)
                } else {
                    (a, b ^ 1 << (bit - 64))
                };
                let d = r.at(a, b) ^ r.at(a2, b2);
                for (o, f) in flips.iter_mut().enumerate() {
                    *f += (d >> o & 1) as u32;
                }
            }
            for &f in &flips {
                worst = worst.max((f as f64 / trials as f64 - 0.5).abs());
            }
        }
        // sd of one frequency: sqrt(0.25 / 4000) = 0.0079; 8192 cells → max about 4.5 sd.
        assert!(worst < 0.05, "worst avalanche bias {worst}");
    }

    /// 2-D chi-square over 16×16 cells of pairs of draws that the model uses together: the
    /// latency and G draws of one message, the same purpose of neighbouring messages, and the
    /// same counter under neighbouring repetitions.
    #[test]
    fn related_counters_are_pairwise_independent() {
        let r = CounterRng::new(11, 0);
        let r2 = CounterRng::new(11, 1);
        let n = 1u64 << 18;
        type Pair<'a> = Box<dyn Fn(u64) -> (u64, u64) + 'a>;
        let pairs: [(&str, Pair); 4] = [
            (
                "purposes 0/16 of a message",
                Box::new(|i| (r.at(i, DOMAIN_MSG << 56), r.at(i, DOMAIN_MSG << 56 | 16))),
            ),
            (
                "ops i/i+1",
                Box::new(|i| (r.at(i, DOMAIN_MSG << 56), r.at(i + 1, DOMAIN_MSG << 56))),
            ),
            (
                "ranks r/r+1",
                Box::new(|i| {
                    let a = i << 32 | 3;
                    (
                        r.at(a, DOMAIN_MSG << 56),
                        r.at(a + (1 << 32), DOMAIN_MSG << 56),
                    )
                }),
            ),
            (
                "reps 0/1",
                Box::new(|i| (r.at(i, DOMAIN_MSG << 56), r2.at(i, DOMAIN_MSG << 56))),
            ),
        ];
        for (name, f) in pairs.iter() {
            let mut cells = [0u64; 256];
            let mut agree = 0u64;
            for i in 0..n {
                let (x, y) = f(i);
                cells[((x >> 60) << 4 | y >> 60) as usize] += 1;
                agree += (x ^ y).count_zeros() as u64;
            }
            let e = n as f64 / 256.0;
            let chi2: f64 = cells.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
            assert!((180.0..350.0).contains(&chi2), "{name}: chi-square {chi2}");
            // 64 n bit comparisons: sd = sqrt(64 n) / 2 = 2048.
            let dev = agree as f64 - 32.0 * n as f64;
            assert!(dev.abs() < 10_000.0, "{name}: {agree} agreeing bits");
        }
    }

    /// Neighbouring seeds and repetitions give unrelated keys and values.
    #[test]
    fn nearby_counters_and_seeds_are_decorrelated() {
        let n = 1usize << 16;
        let mut agree = 0u32;
        for i in 0..n as u64 {
            let a = CounterRng::new(i, 0).at(0, 0);
            let b = CounterRng::new(i + 1, 0).at(0, 0);
            let c = CounterRng::new(i, 1).at(0, 0);
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
