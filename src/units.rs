//! Numbers with units on the command line: times (`2.5us`), per-byte costs (`0.1ns`) and sizes
//! (`64KiB`), read with the command-line rules of `loggops-units`. A number without a unit is read
//! as nanoseconds, LogGOPSim's customary unit, except in `--compat loggopsim` mode where numbers
//! are LogGOPSim's unit-less integer ticks ([`parse_ticks`]).

use loggops_engine::PerByte;
use loggops_units::{SizeRules, TimeRules, TimeUnit, UnitError};

pub use loggops_units::{fmt_bytes, fmt_time_ps as fmt_ps, format_duration, format_size};

/// A duration in picoseconds: `2.5us`, `1500ns`, `1500` (= ns), `3ps`, `0.2ms`, `1s`, `1e-3us`;
/// rounded to the nearest ps when that is off by at most one part per million.
pub fn parse_time_ps(s: &str) -> Result<u64, UnitError> {
    loggops_units::parse_time(s, TimeRules::COMMAND_LINE)
}

/// A per-byte cost in picoseconds per byte: `0.1ns` (= `0.1ns/B`), `86ps`, `6` (= 6 ns/B).
/// Keeps sub-picosecond precision (rounded to the nearest 2^-16 ps).
pub fn parse_per_byte_ps(s: &str) -> Result<PerByte, UnitError> {
    loggops_units::parse_per_byte(s, TimeUnit::Ns, PerByte::FRAC_BITS).map(PerByte::from_raw)
}

/// A size in bytes: `64KiB`, `512MiB`, `1GiB`, `16B`, `16b`, `1000` (bytes), `1kB` (= 1000 B).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    loggops_units::parse_size(s, SizeRules::COMMAND_LINE)
}

/// The tick of `--tick`, in picoseconds: a duration with a unit (`1ns`, `1ps`, `10ns`), at
/// least 1 ps and whole. A bare number is refused: `--tick 1000` could mean 1000 ns or Schedgen's
/// `--timemult 1000` (ticks per us, i.e. 1 ns).
pub fn parse_tick_ps(s: &str) -> Result<u64, String> {
    let ps = loggops_units::parse_time(s, TimeRules::exact(None, TimeUnit::Ps)).map_err(|e| {
        if matches!(e, UnitError::NoUnit { .. }) {
            format!(
                "`{}` has no unit: write the length of one tick, e.g. 1ns (LogGOPSim's users, \
                 Schedgen's traces) or 1ps (the paper's simulator)",
                s.trim()
            )
        } else {
            e.to_string()
        }
    })?;
    if ps == 0 {
        return Err(format!("`{}`: a tick must last at least 1ps", s.trim()));
    }
    Ok(ps)
}

/// A plain non-negative integer (compat mode: LogGOPSim's ticks).
pub fn parse_ticks(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if let Some(neg) = s.strip_prefix('-') {
        // LogGOPSim reads these into `int`; negative values wrap in its u64 arithmetic.
        let v: i64 = neg.parse().map_err(|_| {
            format!("`{s}` is not an integer (compat mode takes LogGOPSim's integer ticks)")
        })?;
        if v > i32::MAX as i64 + 1 {
            return Err(format!("`{s}` does not fit LogGOPSim's int"));
        }
        return Ok((-v) as u64);
    }
    let v: u64 = s.parse().map_err(|_| {
        format!(
            "`{s}` is not an integer (compat mode takes LogGOPSim's integer ticks, without units)"
        )
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_byte_costs_are_engine_fixed_point() {
        assert_eq!(
            parse_per_byte_ps("0.1ns").unwrap(),
            PerByte::from_units(100)
        );
        assert_eq!(
            parse_per_byte_ps("86ps/B").unwrap(),
            PerByte::from_units(86)
        );
        assert_eq!(parse_per_byte_ps("6").unwrap(), PerByte::from_units(6000));
        assert_eq!(
            parse_per_byte_ps("0.0001ns").unwrap(),
            PerByte::from_f64(0.1).unwrap()
        );
    }

    #[test]
    fn tick_lengths() {
        assert_eq!(parse_tick_ps("1ns"), Ok(1_000));
        assert_eq!(parse_tick_ps("1ps"), Ok(1));
        assert_eq!(parse_tick_ps("0.01us"), Ok(10_000));
        assert!(parse_tick_ps("1000").unwrap_err().contains("has no unit"));
        assert!(parse_tick_ps("0ns").unwrap_err().contains("at least 1ps"));
        assert!(parse_tick_ps("0.5ps").is_err());
    }

    #[test]
    fn ticks() {
        assert_eq!(parse_ticks("2500"), Ok(2500));
        assert_eq!(parse_ticks("-1"), Ok(u64::MAX));
        assert!(parse_ticks("2.5us").is_err());
        assert!(parse_ticks("-2147483649").is_err());
    }
}
