//! Sizes and durations in schedule files: the rules of `loggops-units` for schedules, where a
//! unit is always required (`16B`, `128KiB`, `1.5MB`; `21.064us`, `500ns`), parsed exactly.

use loggops_units::{SizeRules, TimeRules};

pub use loggops_units::{format_duration, format_size, UnitError};

/// Parses a size with a unit into bytes: `16B`, `128KiB`, `1.5MB`.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    loggops_units::parse_size(text, SizeRules::SCHEDULE)
}

/// Parses a duration with a unit into picoseconds: `21.064us`, `500ns`, `2ms`.
pub fn parse_duration(text: &str) -> Result<u64, UnitError> {
    loggops_units::parse_time(text, TimeRules::SCHEDULE)
}
