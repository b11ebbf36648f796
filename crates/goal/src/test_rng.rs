//! A tiny deterministic generator (splitmix64) for the crate's randomised tests.

pub(crate) struct SplitMix(pub u64);

impl SplitMix {
    /// A value in `0..n` (modulo bias is irrelevant for test inputs).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}
