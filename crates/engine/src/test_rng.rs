//! A tiny deterministic generator (xorshift64) for the crate's randomised tests, and the
//! helpers their test noises share.

/// Successive xorshift64 values from a nonzero `seed`.
pub(crate) fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// A 64-bit mix of `a` and `b` (the test noises' draws).
pub(crate) fn hash(a: u64, b: u64) -> u64 {
    let mut x = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x.wrapping_mul(0x94D0_49BB_1331_11EB) ^ (x >> 29)
}

/// OS detour time in `[t0, t1]` when detours of `detour` start at `phase + k·period`.
pub(crate) fn periodic_detour(phase: u64, period: u64, detour: u64, t0: u64, t1: u64) -> u64 {
    let upto = |t: u64| {
        if t < phase {
            0
        } else {
            (t - phase) / period + 1
        }
    };
    let before = if t0 == 0 { 0 } else { upto(t0 - 1) };
    (upto(t1) - before) * detour
}
