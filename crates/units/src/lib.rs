//! Numbers with units for loggops-sim: sizes (`512MiB`), durations (`2.5us`) and per-byte costs
//! (`0.1ns/B`), parsed exactly and formatted in one style.
//!
//! Parsing is decimal arithmetic, never floating point: `0.1ns` is exactly 100ps, `1.5KiB` exactly
//! 1536 bytes, and a value that is not a whole number of the unit it is counted in is an error
//! (except where [`Rounding::WithinPpm`] or per-byte rounding is asked for). What differs between
//! the places numbers are read is a rule set, not a parser:
//!
//! | where | sizes | durations |
//! |---|---|---|
//! | command line | [`SizeRules::COMMAND_LINE`]: bare = bytes, `KB`, `k`, `M`, … too | [`TimeRules::COMMAND_LINE`]: bare = ns, → ps, rounded within 1 ppm |
//! | GOAL files | [`SizeRules::GOAL`]: `KB` refused (as LogGOPSim does) | with a unit: exact in the simulator's unit; a plain number is a count of ticks (1 ns unless told otherwise), which `loggops-goal` scales |
//! | schedule files | [`SizeRules::SCHEDULE`]: unit required | [`TimeRules::SCHEDULE`]: unit required, exact ps |
//!
//! Numbers are written `[+-]? digits [. digits] [e[+-]digits]` (a minus only with a zero value);
//! streaming parsers scan the plain `digits [. digits]` form with [`scan_decimal`] and the unit
//! tables with [`SizeUnits::prefix`] and [`time_unit_prefix`], then scale with
//! [`Decimal::scale`].
//!
//! Formatting: `format_*` is exact and parses back; `fmt_*` rounds to 3–4 significant digits for
//! tables (see [`mod@format`]).
//!
//! ```
//! use loggops_units::{fmt_time_ps, format_size, parse_size, parse_time, SizeRules, TimeRules};
//!
//! let bytes = parse_size("1.5KiB", SizeRules::SCHEDULE)?;
//! assert_eq!(bytes, 1536);
//! assert_eq!(format_size(bytes << 10), "1536KiB");
//! let ps = parse_time("2.5us", TimeRules::COMMAND_LINE)?;
//! assert_eq!(fmt_time_ps(ps), "2.50us");
//! assert_eq!(
//!     parse_size("1.5b", SizeRules::GOAL).unwrap_err().to_string(),
//!     "`1.5b` is not a whole number of bytes"
//! );
//! # Ok::<(), loggops_units::UnitError>(())
//! ```

pub mod decimal;
mod error;
mod excerpt;
pub mod format;
mod parse;

pub use decimal::{scan_decimal, Decimal, ScaleError, Scaled};
pub use error::{Quantity, UnitError};
pub use excerpt::{excerpt, EXCERPT_MAX_CHARS};
pub use format::{fmt_bytes, fmt_rate, fmt_time_ps, fmt_time_ps_f64, format_duration, format_size};
pub use parse::{
    convert_time, parse_per_byte, parse_size, parse_time, scale_error, time_unit_prefix, Rounding,
    SizeRules, SizeUnits, TimeRules, TimeUnit,
};
