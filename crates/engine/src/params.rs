//! LogGOPS parameters and the time arithmetic the engine uses.
//!
//! Times are integers: picoseconds in normal mode, LogGOPSim's unit-less ticks in compat mode.
//! Per-byte costs (G, O) are fixed point with [`PerByte::FRAC_BITS`] fractional bits, so
//! `G = 0.086 ns/B` is exactly 86 ps/B and `G = 0.1234 ps/B` keeps its sub-picosecond part.

/// A point in time or a duration: picoseconds (normal mode) or ticks (compat mode).
pub type Time = u64;

/// A per-byte cost in time units per byte, fixed point with 16 fractional bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PerByte(u64);

impl PerByte {
    pub const FRAC_BITS: u32 = 16;
    pub const ONE: u64 = 1 << Self::FRAC_BITS;

    /// A whole number of time units per byte.
    pub const fn from_units(units: u64) -> PerByte {
        PerByte(units << Self::FRAC_BITS)
    }
    /// From a real number of time units per byte, rounded to the nearest 2^-16.
    /// Returns `None` for negative, NaN or too large values.
    pub fn from_f64(units: f64) -> Option<PerByte> {
        if !units.is_finite() || units < 0.0 {
            return None;
        }
        let raw = (units * Self::ONE as f64).round();
        if raw >= u64::MAX as f64 {
            return None;
        }
        Some(PerByte(raw as u64))
    }
    pub const fn from_raw(raw: u64) -> PerByte {
        PerByte(raw)
    }
    pub const fn raw(self) -> u64 {
        self.0
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / Self::ONE as f64
    }
    /// The integer part (what LogGOPSim's `int` option would hold in compat mode).
    pub const fn whole_units(self) -> u64 {
        self.0 >> Self::FRAC_BITS
    }
    pub const fn is_whole(self) -> bool {
        self.0 & (Self::ONE - 1) == 0
    }
    /// Cost of `bytes` bytes, rounded to the nearest time unit (half up); `None` on overflow.
    pub fn cost(self, bytes: u64) -> Option<Time> {
        let prod = bytes as u128 * self.0 as u128 + (1u128 << (Self::FRAC_BITS - 1));
        u64::try_from(prod >> Self::FRAC_BITS).ok()
    }
}

/// `v`, or (when the checked arithmetic that made it overflowed) `Time::MAX` with `overflow`
/// set: both engines carry on to the end of the event and then report the overflow.
#[inline(always)]
pub(crate) fn or_overflow(v: Option<Time>, overflow: &mut bool) -> Time {
    match v {
        Some(v) => v,
        None => {
            *overflow = true;
            Time::MAX
        }
    }
}

/// The LogGOPS parameters of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Latency L.
    pub l: Time,
    /// CPU overhead per message o.
    pub o: Time,
    /// NIC gap per message g.
    pub g: Time,
    /// Gap per byte G (NIC send/receive and receive CPU).
    pub big_g: PerByte,
    /// CPU overhead per byte O.
    pub big_o: PerByte,
    /// Eager threshold S: messages of at most S bytes are eager, larger ones rendezvous.
    pub s: u64,
    /// Extra latencies a rendezvous message pays on top of L: 0 in LogGOPSim (its "TODO: ACK
    /// latency"), 2 in the paper's simulator (request-to-send and clear-to-send, with the same
    /// latency draw: 3L in total).
    pub rndv_extra_latencies: u8,
}

impl Params {
    /// LogGOPSim's defaults, read as nanoseconds and converted to picoseconds:
    /// L=2500ns o=1500ns g=1000ns G=6ns/B O=0 S=65535B.
    pub const fn loggopsim_defaults_ps() -> Params {
        Params {
            l: 2_500_000,
            o: 1_500_000,
            g: 1_000_000,
            big_g: PerByte::from_units(6_000),
            big_o: PerByte::from_units(0),
            s: 65535,
            rndv_extra_latencies: 0,
        }
    }
    /// LogGOPSim's defaults as unit-less ticks (compat mode).
    pub const fn loggopsim_defaults_ticks() -> Params {
        Params {
            l: 2500,
            o: 1500,
            g: 1000,
            big_g: PerByte::from_units(6),
            big_o: PerByte::from_units(0),
            s: 65535,
            rndv_extra_latencies: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_byte_cost_is_exact_for_whole_units() {
        let g = PerByte::from_units(6);
        assert_eq!(g.cost(1_048_575), Some(6_291_450));
        assert_eq!(
            PerByte::from_f64(86.0).unwrap().cost(1 << 20),
            Some(86 << 20)
        );
    }

    #[test]
    fn per_byte_cost_keeps_sub_unit_precision() {
        // 0.25 ps/B over 10 bytes is 2.5 ps, rounded half up to 3.
        let g = PerByte::from_f64(0.25).unwrap();
        assert_eq!(g.cost(10), Some(3));
        assert_eq!(g.cost(1_000_000), Some(250_000));
        assert!(PerByte::from_f64(-1.0).is_none());
        assert!(PerByte::from_f64(f64::NAN).is_none());
    }

    #[test]
    fn per_byte_cost_reports_overflow() {
        assert_eq!(PerByte::from_units(u32::MAX as u64).cost(u64::MAX), None);
    }
}
