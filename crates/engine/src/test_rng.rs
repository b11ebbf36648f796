//! A tiny deterministic generator (xorshift64) for the crate's randomised tests.

/// Successive xorshift64 values from a nonzero `seed`.
pub(crate) fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
