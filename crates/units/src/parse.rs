//! Unit tables and the parsers of sizes, durations and per-byte costs.

use std::fmt;
use std::str::FromStr;

use crate::decimal::{Decimal, ScaleError, Scaled};
use crate::error::{Quantity, UnitError};

/// A time unit. The simulator counts integer ticks of one of these (ps in normal mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimeUnit {
    Ps,
    Ns,
    Us,
    Ms,
    S,
}

impl TimeUnit {
    /// Picoseconds in one unit.
    pub fn picos(self) -> u64 {
        10u64.pow(self.exp10())
    }

    /// The power of ten of [`TimeUnit::picos`].
    pub fn exp10(self) -> u32 {
        match self {
            TimeUnit::Ps => 0,
            TimeUnit::Ns => 3,
            TimeUnit::Us => 6,
            TimeUnit::Ms => 9,
            TimeUnit::S => 12,
        }
    }

    /// The unit's symbol (`ps`, `ns`, `us`, `ms`, `s`).
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Ps => "ps",
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }

    /// The unit's name in the plural (`picoseconds`, …), as messages use it.
    pub fn plural(self) -> &'static str {
        match self {
            TimeUnit::Ps => "picoseconds",
            TimeUnit::Ns => "nanoseconds",
            TimeUnit::Us => "microseconds",
            TimeUnit::Ms => "milliseconds",
            TimeUnit::S => "seconds",
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl FromStr for TimeUnit {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<TimeUnit, UnitError> {
        match time_unit_prefix(s.as_bytes()) {
            Some((u, len)) if len == s.len() => Ok(u),
            _ => Err(UnitError::UnknownUnit {
                unit: s.to_string(),
                text: s.to_string(),
                what: Quantity::Duration,
            }),
        }
    }
}

const TIME_UNITS: &[(&str, TimeUnit)] = &[
    ("ps", TimeUnit::Ps),
    ("ns", TimeUnit::Ns),
    ("us", TimeUnit::Us),
    ("\u{b5}s", TimeUnit::Us),
    // The Greek small letter mu, which looks the same as the micro sign.
    ("\u{3bc}s", TimeUnit::Us),
    ("ms", TimeUnit::Ms),
    ("s", TimeUnit::S),
];

/// The time unit that `b` starts with, and its length in bytes (`µs` is two bytes).
pub fn time_unit_prefix(b: &[u8]) -> Option<(TimeUnit, usize)> {
    TIME_UNITS
        .iter()
        .find(|(u, _)| b.starts_with(u.as_bytes()))
        .map(|&(u, t)| (t, u.len()))
}

/// Which size units a syntax accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizeUnits {
    /// GOAL text files: LogGOPSim's `b`, `B`, IEC `KiB MiB GiB TiB` (powers of 1024) and SI
    /// `kB MB GB TB` (powers of 1000). `KB` is rejected, as LogGOPSim rejects it.
    Goal,
    /// The command line and schedule files: the GOAL units, `KB` (= `kB`, 1000 bytes), and the
    /// binary prefixes alone: `k`/`K` (= KiB), `M` (= MiB), `G` (= GiB).
    Lenient,
}

/// Size units, longest first so that prefix matching picks `KiB` over `K`; `true` if GOAL
/// accepts it.
const SIZE_UNITS: &[(&str, u64, bool)] = &[
    ("KiB", 1 << 10, true),
    ("MiB", 1 << 20, true),
    ("GiB", 1 << 30, true),
    ("TiB", 1 << 40, true),
    ("kB", 1_000, true),
    ("KB", 1_000, false),
    ("MB", 1_000_000, true),
    ("GB", 1_000_000_000, true),
    ("TB", 1_000_000_000_000, true),
    ("b", 1, true),
    ("B", 1, true),
    ("k", 1 << 10, false),
    ("K", 1 << 10, false),
    ("M", 1 << 20, false),
    ("G", 1 << 30, false),
];

/// Whether `unit` is a size unit when case is ignored (`mb`, `gib`): messages then say that case
/// matters.
pub(crate) fn is_size_unit_ignoring_case(unit: &str) -> bool {
    SIZE_UNITS
        .iter()
        .any(|(u, _, _)| u.len() > 1 && u.eq_ignore_ascii_case(unit))
}

impl SizeUnits {
    fn accepts(self, goal: bool) -> bool {
        goal || self == SizeUnits::Lenient
    }

    /// The size unit that `b` starts with: (bytes per unit, length).
    pub fn prefix(self, b: &[u8]) -> Option<(u64, usize)> {
        SIZE_UNITS
            .iter()
            .find(|&&(u, _, goal)| self.accepts(goal) && b.starts_with(u.as_bytes()))
            .map(|&(u, m, _)| (m, u.len()))
    }

    /// Bytes per `unit`, if it is a size unit of this syntax.
    pub fn bytes(self, unit: &str) -> Option<u64> {
        SIZE_UNITS
            .iter()
            .find(|&&(u, _, goal)| self.accepts(goal) && u == unit)
            .map(|&(_, m, _)| m)
    }
}

/// How a size is written in one context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SizeRules {
    /// The accepted units.
    pub units: SizeUnits,
    /// Whether a number without a unit is a byte count (otherwise it is an error).
    pub bare_is_bytes: bool,
}

impl SizeRules {
    /// Command-line flags: lenient units; a bare number is bytes.
    pub const COMMAND_LINE: SizeRules = SizeRules {
        units: SizeUnits::Lenient,
        bare_is_bytes: true,
    };
    /// GOAL files: GOAL units; a bare number is bytes.
    pub const GOAL: SizeRules = SizeRules {
        units: SizeUnits::Goal,
        bare_is_bytes: true,
    };
    /// Schedule files: lenient units; a unit is required.
    pub const SCHEDULE: SizeRules = SizeRules {
        units: SizeUnits::Lenient,
        bare_is_bytes: false,
    };
}

/// How a duration that is not a whole number of the target unit is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// It is an error.
    Exact,
    /// It is rounded to the nearest unit (halves up) when that changes it by at most one part per
    /// million (or by at most 10⁻⁶ units below 1 unit); otherwise it is an error. The command
    /// line's rule, so that `1.2345678us` is 1234568ps but `0.5ps` is refused.
    WithinPpm,
}

/// How a duration is written in one context and what it is converted to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeRules {
    /// The unit of a number written without one; `None`: a unit is required.
    pub bare: Option<TimeUnit>,
    /// The unit of the result.
    pub target: TimeUnit,
    /// What to do with a fraction of `target`.
    pub rounding: Rounding,
}

impl TimeRules {
    /// Command-line flags: picoseconds; a bare number is nanoseconds (LogGOPSim's customary
    /// unit); rounded within one part per million.
    pub const COMMAND_LINE: TimeRules = TimeRules {
        bare: Some(TimeUnit::Ns),
        target: TimeUnit::Ps,
        rounding: Rounding::WithinPpm,
    };
    /// Schedule files: exact picoseconds; a unit is required.
    pub const SCHEDULE: TimeRules = TimeRules {
        bare: None,
        target: TimeUnit::Ps,
        rounding: Rounding::Exact,
    };

    /// Exact `target` units; bare numbers are in `bare` (or refused).
    pub const fn exact(bare: Option<TimeUnit>, target: TimeUnit) -> TimeRules {
        TimeRules {
            bare,
            target,
            rounding: Rounding::Exact,
        }
    }
}

/// `text` trimmed, as a number and the unit after it (blanks between them are allowed).
fn number_and_unit(text: &str, what: Quantity) -> Result<(Decimal<'_>, &str), UnitError> {
    let Some((d, end)) = Decimal::scan(text) else {
        return Err(UnitError::NotANumber {
            text: text.to_string(),
            what,
        });
    };
    if d.is_negative() && !d.is_zero() {
        return Err(UnitError::Negative {
            text: text.to_string(),
            what,
        });
    }
    Ok((d, text[end..].trim_start()))
}

fn unknown_unit(unit: &str, text: &str, what: Quantity) -> UnitError {
    UnitError::UnknownUnit {
        unit: unit.to_string(),
        text: text.to_string(),
        what,
    }
}

/// A [`ScaleError`] as the [`UnitError`] for `text` counted in `target` (`bytes`,
/// `picoseconds`, …).
pub fn scale_error(e: ScaleError, text: &str, target: &'static str) -> UnitError {
    match e {
        ScaleError::NotWhole => UnitError::NotWhole {
            text: text.to_string(),
            target,
        },
        ScaleError::Overflow => UnitError::Overflow {
            text: text.to_string(),
            limit: format!("{} {target}", u64::MAX),
        },
    }
}

/// Parses a size in bytes: `512MiB`, `16KiB`, `1.5KiB`, `4 kB`, `16B`, `16b`, `1e3B`, or (if
/// `rules` allow) a bare number of bytes. Exact: `1.5b` is an error.
///
/// ```
/// use loggops_units::{parse_size, SizeRules, UnitError};
/// assert_eq!(parse_size("1.5KiB", SizeRules::GOAL), Ok(1536));
/// assert_eq!(parse_size("16KB", SizeRules::COMMAND_LINE), Ok(16_000));
/// assert!(matches!(parse_size("16KB", SizeRules::GOAL), Err(UnitError::UnknownUnit { .. })));
/// ```
pub fn parse_size(text: &str, rules: SizeRules) -> Result<u64, UnitError> {
    let text = text.trim();
    let (d, unit) = number_and_unit(text, Quantity::Size)?;
    let mult = if unit.is_empty() {
        if !rules.bare_is_bytes {
            return Err(UnitError::NoUnit {
                text: text.to_string(),
                what: Quantity::Size,
            });
        }
        1
    } else {
        rules
            .units
            .bytes(unit)
            .ok_or_else(|| unknown_unit(unit, text, Quantity::Size))?
    };
    d.scale(mult, 0)
        .exact()
        .map_err(|e| scale_error(e, text, "bytes"))
}

/// Parses a duration into `rules.target` units: `2.5us`, `100ns`, `3 ms`, `1s`, `1µs`, `1e-3us`,
/// or (if `rules` allow) a bare number in `rules.bare` units.
///
/// ```
/// use loggops_units::{parse_time, TimeRules, TimeUnit};
/// assert_eq!(parse_time("2.5us", TimeRules::SCHEDULE), Ok(2_500_000));
/// assert_eq!(parse_time("1500", TimeRules::COMMAND_LINE), Ok(1_500_000));
/// assert_eq!(parse_time("3ms", TimeRules::exact(None, TimeUnit::Us)), Ok(3_000));
/// ```
pub fn parse_time(text: &str, rules: TimeRules) -> Result<u64, UnitError> {
    let text = text.trim();
    let (d, unit) = number_and_unit(text, Quantity::Duration)?;
    let from = if unit.is_empty() {
        rules.bare.ok_or_else(|| UnitError::NoUnit {
            text: text.to_string(),
            what: Quantity::Duration,
        })?
    } else {
        time_unit(unit).ok_or_else(|| unknown_unit(unit, text, Quantity::Duration))?
    };
    let target = rules.target;
    let scaled = convert_time(&d, from, target);
    match rules.rounding {
        Rounding::Exact => scaled.exact(),
        Rounding::WithinPpm => scaled.round_within_ppm(),
    }
    .map_err(|e| scale_error(e, text, target.plural()))
}

/// `d` `from` units in `to` units, exactly.
pub fn convert_time(d: &Decimal<'_>, from: TimeUnit, to: TimeUnit) -> Scaled {
    if from >= to {
        d.scale(10u64.pow(from.exp10() - to.exp10()), 0)
    } else {
        d.scale(1, to.exp10() - from.exp10())
    }
}

fn time_unit(unit: &str) -> Option<TimeUnit> {
    match time_unit_prefix(unit.as_bytes()) {
        Some((u, len)) if len == unit.len() => Some(u),
        _ => None,
    }
}

/// Parses a time per byte into picoseconds per byte as a fixed-point number with `frac_bits`
/// fractional bits (at most 20), rounded to the nearest (halves up): `0.1ns` (= `0.1ns/B`),
/// `86ps/B`, `6ns/byte`; a bare number is in `bare` units.
///
/// ```
/// use loggops_units::{parse_per_byte, TimeUnit};
/// assert_eq!(parse_per_byte("86ps/B", TimeUnit::Ns, 16), Ok(86 << 16));
/// assert_eq!(parse_per_byte("0.0001", TimeUnit::Ns, 16), Ok(6554)); // 0.1 ps/B
/// ```
pub fn parse_per_byte(text: &str, bare: TimeUnit, frac_bits: u32) -> Result<u64, UnitError> {
    assert!(frac_bits <= 20, "at most 20 fractional bits");
    let text = text.trim();
    let body = text
        .strip_suffix("/B")
        .or_else(|| text.strip_suffix("/byte"))
        .unwrap_or(text)
        .trim_end();
    let (d, unit) = number_and_unit(body, Quantity::PerByte).map_err(|e| match e {
        UnitError::NotANumber { what, .. } => UnitError::NotANumber {
            text: text.to_string(),
            what,
        },
        UnitError::Negative { what, .. } => UnitError::Negative {
            text: text.to_string(),
            what,
        },
        e => e,
    })?;
    let from = if unit.is_empty() {
        bare
    } else {
        time_unit(unit).ok_or_else(|| unknown_unit(unit, text, Quantity::PerByte))?
    };
    d.scale(from.picos() << frac_bits, 0)
        .round()
        .map_err(|_| UnitError::Overflow {
            text: text.to_string(),
            limit: format!("{}ps per byte", u64::MAX >> frac_bits),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLI: SizeRules = SizeRules::COMMAND_LINE;
    const GOAL: SizeRules = SizeRules::GOAL;
    const SCHED: SizeRules = SizeRules::SCHEDULE;

    fn goal_time(s: &str, unit: TimeUnit) -> Result<u64, UnitError> {
        parse_time(s, TimeRules::exact(Some(unit), unit))
    }

    fn msg<T: fmt::Debug>(r: Result<T, UnitError>) -> String {
        r.unwrap_err().to_string()
    }

    // From the command line's tests.
    #[test]
    fn command_line_times() {
        let t = |s| parse_time(s, TimeRules::COMMAND_LINE);
        assert_eq!(t("2.5us"), Ok(2_500_000));
        assert_eq!(t("1500"), Ok(1_500_000));
        assert_eq!(t("3ps"), Ok(3));
        assert_eq!(t("0.2ms"), Ok(200_000_000));
        assert_eq!(t("1e-3us"), Ok(1_000));
        assert_eq!(t("+5 ns"), Ok(5_000));
        assert_eq!(t(".5ns"), Ok(500));
        assert_eq!(t("5.ns"), Ok(5_000));
        assert_eq!(t("-0"), Ok(0));
        assert_eq!(t("1.2345678us"), Ok(1_234_568));
        assert_eq!(t("18446744073709551615ps"), Ok(u64::MAX));
        assert_eq!(
            msg(t("0.5ps")),
            "`0.5ps` is not a whole number of picoseconds"
        );
        assert_eq!(
            msg(t("3 parsecs")),
            "unknown time unit `parsecs` in `3 parsecs` (use ps, ns, us, ms or s)"
        );
        assert_eq!(msg(t("-1ns")), "duration `-1ns` is negative");
        assert_eq!(
            msg(t("ns")),
            "`ns` is not a duration (a number and a unit, such as `21.064us`)"
        );
        assert_eq!(
            msg(t("1e300s")),
            "`1e300s` is too large (at most 18446744073709551615 picoseconds)"
        );
    }

    #[test]
    fn per_byte() {
        let g = |s| parse_per_byte(s, TimeUnit::Ns, 16);
        assert_eq!(g("0.1ns"), Ok(100 << 16));
        assert_eq!(g("86ps/B"), Ok(86 << 16));
        assert_eq!(g("86 ps /B"), Ok(86 << 16));
        assert_eq!(g("6ns/byte"), Ok(6000 << 16));
        assert_eq!(g("6"), Ok(6000 << 16));
        assert_eq!(g("0.0001ns"), Ok(6554)); // 0.1 ps = 6553.6 / 65536
        assert_eq!(g("0.25ps"), Ok(16384));
        assert_eq!(
            msg(g("1x/B")),
            "unknown time unit `x` in `1x/B` (use ps, ns, us, ms or s)"
        );
        assert_eq!(msg(g("-1ns/B")), "time per byte `-1ns/B` is negative");
        assert_eq!(
            msg(g("1e9s")),
            "`1e9s` is too large (at most 281474976710655ps per byte)"
        );
    }

    #[test]
    fn command_line_sizes() {
        let s = |t| parse_size(t, CLI);
        assert_eq!(s("64KiB"), Ok(65536));
        assert_eq!(s("512MiB"), Ok(536_870_912));
        assert_eq!(s("16b"), Ok(16));
        assert_eq!(s("1kB"), Ok(1000));
        assert_eq!(s("1KB"), Ok(1000));
        assert_eq!(s("4k"), Ok(4096));
        assert_eq!(s("4K"), Ok(4096));
        assert_eq!(s("2M"), Ok(2 << 20));
        assert_eq!(s("1G"), Ok(1 << 30));
        assert_eq!(s("1TB"), Ok(1_000_000_000_000));
        assert_eq!(s("1000"), Ok(1000));
        assert_eq!(s("1e3"), Ok(1000));
        assert_eq!(msg(s("1.5B")), "`1.5B` is not a whole number of bytes");
        assert_eq!(msg(s("1.5")), "`1.5` is not a whole number of bytes");
        assert_eq!(
            msg(s("99999999999TiB")),
            "`99999999999TiB` is too large (at most 18446744073709551615 bytes)"
        );
    }

    // From the GOAL crate's tests.
    #[test]
    fn goal_sizes() {
        let s = |t| parse_size(t, GOAL);
        assert_eq!(s("512MiB"), Ok(512 << 20));
        assert_eq!(s("16"), Ok(16));
        assert_eq!(s("16b"), Ok(16));
        assert_eq!(s("16B"), Ok(16));
        assert_eq!(s("4 KiB"), Ok(4096));
        assert_eq!(s("1GiB"), Ok(1 << 30));
        assert_eq!(s("2TiB"), Ok(2 << 40));
        assert_eq!(s("3kB"), Ok(3000));
        assert_eq!(s("3MB"), Ok(3_000_000));
        assert_eq!(s("1.5KiB"), Ok(1536));
        assert_eq!(s("0.5kB"), Ok(500));
        assert_eq!(s("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            msg(s("16KB")),
            "unknown size unit `KB` in `16KB` (ambiguous: write `kB` for 1000 bytes or `KiB` for 1024 bytes)"
        );
        assert_eq!(
            msg(s("4mb")),
            "unknown size unit `mb` in `4mb` (prefixes are case sensitive; use b, B, KiB, MiB, GiB, TiB, kB, MB, GB or TB)"
        );
        assert!(s("4K").is_err());
        assert_eq!(msg(s("1.5b")), "`1.5b` is not a whole number of bytes");
        assert_eq!(
            msg(s("18446744073709551616")),
            "`18446744073709551616` is too large (at most 18446744073709551615 bytes)"
        );
        assert_eq!(
            msg(s("16777216TiB")),
            "`16777216TiB` is too large (at most 18446744073709551615 bytes)"
        );
        assert_eq!(
            msg(s("x")),
            "`x` is not a size (a number and a unit, such as `512MiB`)"
        );
        assert_eq!(
            s("16 MiBx").unwrap_err(),
            UnitError::UnknownUnit {
                unit: "MiBx".into(),
                text: "16 MiBx".into(),
                what: Quantity::Size,
            }
        );
    }

    #[test]
    fn goal_times() {
        assert_eq!(goal_time("2.5us", TimeUnit::Ps), Ok(2_500_000));
        assert_eq!(goal_time("2.5us", TimeUnit::Ns), Ok(2_500));
        assert_eq!(goal_time("7", TimeUnit::Ns), Ok(7));
        assert_eq!(goal_time("1s", TimeUnit::Ps), Ok(1_000_000_000_000));
        assert_eq!(goal_time("3 ms", TimeUnit::Us), Ok(3_000));
        assert_eq!(goal_time("1\u{b5}s", TimeUnit::Ps), Ok(1_000_000));
        assert_eq!(goal_time("1\u{3bc}s", TimeUnit::Ps), Ok(1_000_000));
        assert_eq!(goal_time("2000ps", TimeUnit::Ns), Ok(2));
        assert_eq!(
            msg(goal_time("0.001ps", TimeUnit::Ps)),
            "`0.001ps` is not a whole number of picoseconds"
        );
        assert_eq!(
            msg(goal_time("1500ps", TimeUnit::Ns)),
            "`1500ps` is not a whole number of nanoseconds"
        );
        assert_eq!(
            msg(goal_time("1h", TimeUnit::Ps)),
            "unknown time unit `h` in `1h` (use ps, ns, us, ms or s)"
        );
        assert_eq!(
            msg(goal_time("18446745s", TimeUnit::Ps)),
            "`18446745s` is too large (at most 18446744073709551615 picoseconds)"
        );
        assert_eq!("us".parse::<TimeUnit>(), Ok(TimeUnit::Us));
        assert!("u".parse::<TimeUnit>().is_err());
    }

    // From the schedule files' tests.
    #[test]
    fn schedule_sizes() {
        let s = |t| parse_size(t, SCHED);
        assert_eq!(s("16B"), Ok(16));
        assert_eq!(s("128KiB"), Ok(131072));
        assert_eq!(s("512MiB"), Ok(536870912));
        assert_eq!(s("1.5MB"), Ok(1_500_000));
        assert_eq!(s("18446744073709551615B"), Ok(u64::MAX));
        assert_eq!(
            msg(s("16EiB")),
            "unknown size unit `EiB` in `16EiB` (use b, B, KiB, MiB, GiB, TiB, kB, MB, GB or TB)"
        );
        assert_eq!(
            msg(s("16")),
            "`16` has no unit; write it as `16B` (units: B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)"
        );
        assert_eq!(msg(s("-16B")), "size `-16B` is negative");
        assert_eq!(msg(s("0.5B")), "`0.5B` is not a whole number of bytes");
        assert_eq!(
            msg(s("16777216TiB")),
            "`16777216TiB` is too large (at most 18446744073709551615 bytes)"
        );
        assert!(s("18446744073709551616B").is_err());
        assert!(s("1.2.3B").is_err());
        assert!(s("MiB").is_err());
    }

    #[test]
    fn schedule_durations() {
        let d = |t| parse_time(t, TimeRules::SCHEDULE);
        assert_eq!(d("21.064us"), Ok(21_064_000));
        assert_eq!(d("416705.549us"), Ok(416_705_549_000));
        assert_eq!(d("5ns"), Ok(5_000));
        assert_eq!(d("1s"), Ok(1_000_000_000_000));
        assert_eq!(
            msg(d("0.5ps")),
            "`0.5ps` is not a whole number of picoseconds"
        );
        assert_eq!(
            msg(d("3h")),
            "unknown time unit `h` in `3h` (use ps, ns, us, ms or s)"
        );
        assert_eq!(
            msg(d("1000")),
            "`1000` has no unit; write it as `1000ns` or `1000us` (units: ps, ns, us, ms, s)"
        );
        assert_eq!(
            msg(d("fast")),
            "`fast` is not a duration (a number and a unit, such as `21.064us`)"
        );
    }
}
