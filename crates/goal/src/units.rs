//! Sizes and durations with units, as GOAL files write them: the rules of `loggops-units`
//! ([`SizeRules::GOAL`]: `b`, `B`, `KiB`…`TiB`, `kB`…`TB`, but not LogGOPSim's rejected `KB`;
//! durations `ps ns us µs ms s`; a plain `calc` integer is a number of ticks, see
//! [`ParseOptions::tick_ps`](crate::ParseOptions::tick_ps)).

use loggops_units::{SizeRules, TimeRules};

pub(crate) use loggops_units::{
    convert_time, scale_error, scan_decimal, time_unit_prefix, Quantity, SizeUnits,
};
pub use loggops_units::{format_size, ScaleError, TimeUnit, UnitError};

/// Parses a size in bytes: `512MiB`, `16KiB`, `1.5KiB`, `4 kB`, `16B`, `16b`, or a plain integer
/// (bytes).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    loggops_units::parse_size(s, SizeRules::GOAL)
}

/// Parses a duration and returns it in `unit`: `2.5us`, `100ns`, `3 ms`, `1s`; a plain integer is
/// already in `unit`. Fails if the value is not a whole number of `unit`.
pub fn parse_time(s: &str, unit: TimeUnit) -> Result<u64, UnitError> {
    loggops_units::parse_time(s, TimeRules::exact(Some(unit), unit))
}
