//! Sizes and durations with units, shared by the GOAL parser, the CLI and the generators.
//!
//! Sizes (bytes): `b` and `B` (bytes), IEC `KiB MiB GiB TiB` (powers of 1024) and SI
//! `kB MB GB TB` (powers of 1000). `KB` is rejected as ambiguous (write `kB` or `KiB`).
//!
//! Durations: `ps ns us µs ms s`. A plain integer is taken in the caller's unit (the simulator's
//! time unit for GOAL `calc`). Decimals are allowed when a unit is given and the value is a whole
//! number of the target unit (`1.5KiB` = 1536 bytes, `2.5us` = 2500 ns; `1.5b` is an error).

use std::fmt;
use std::str::FromStr;

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
        match self {
            TimeUnit::Ps => 1,
            TimeUnit::Ns => 1_000,
            TimeUnit::Us => 1_000_000,
            TimeUnit::Ms => 1_000_000_000,
            TimeUnit::S => 1_000_000_000_000,
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
            _ => Err(UnitError::UnknownTimeUnit {
                unit: s.to_string(),
            }),
        }
    }
}

/// Why a size or duration could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("expected a number, found {found:?}")]
    NotANumber { found: String },
    #[error("unknown size unit {unit:?}{}: expected b, B, KiB, MiB, GiB, TiB, kB, MB, GB or TB", size_hint(.unit))]
    UnknownSizeUnit { unit: String },
    #[error("unknown time unit {unit:?}: expected ps, ns, us, ms or s")]
    UnknownTimeUnit { unit: String },
    #[error("{text} is not a whole number of {target}")]
    NotWhole { text: String, target: String },
    #[error("{text} is too large (at most {max} {target})")]
    Overflow {
        text: String,
        max: u64,
        target: String,
    },
    #[error("{text} has too many decimal places (at most 18)")]
    TooPrecise { text: String },
    #[error("{text}: a fractional value needs a unit")]
    FractionWithoutUnit { text: String },
}

pub(crate) fn size_hint(unit: &str) -> &'static str {
    if unit.eq_ignore_ascii_case("kb") || unit.eq_ignore_ascii_case("kib") {
        " (ambiguous: write \"kB\" for 1000 bytes or \"KiB\" for 1024 bytes)"
    } else if unit.len() <= 3 && matches!(unit.as_bytes().last(), Some(b'b' | b'B')) {
        " (prefixes are case sensitive)"
    } else {
        ""
    }
}

/// A decimal number as written: integer part and fraction digits (trailing zeros removed).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decimal<'a> {
    /// `None` if the integer part overflows u64.
    pub int: Option<u64>,
    pub frac: &'a [u8],
}

impl Decimal<'_> {
    pub fn is_integer(&self) -> bool {
        self.frac.is_empty()
    }
}

/// Scans `[0-9]+ ( "." [0-9]+ )?` at `p`. Returns the number and the end position.
pub(crate) fn scan_decimal(b: &[u8], p: usize) -> Option<(Decimal<'_>, usize)> {
    let mut q = p;
    let mut v: Option<u64> = Some(0);
    while q < b.len() && b[q].is_ascii_digit() {
        v = v
            .and_then(|v| v.checked_mul(10))
            .and_then(|v| v.checked_add((b[q] - b'0') as u64));
        q += 1;
    }
    if q == p {
        return None;
    }
    let mut frac: &[u8] = &[];
    if q + 1 < b.len() && b[q] == b'.' && b[q + 1].is_ascii_digit() {
        let fs = q + 1;
        q = fs;
        while q < b.len() && b[q].is_ascii_digit() {
            q += 1;
        }
        let mut fe = q;
        while fe > fs && b[fe - 1] == b'0' {
            fe -= 1;
        }
        frac = &b[fs..fe];
    }
    Some((Decimal { int: v, frac }, q))
}

/// Size units, longest first so that prefix matching picks `KiB` over `K...`.
const SIZE_UNITS: &[(&str, u64)] = &[
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("b", 1),
    ("B", 1),
];

/// The size unit that `b` starts with: (bytes per unit, length).
pub(crate) fn size_unit_prefix(b: &[u8]) -> Option<(u64, usize)> {
    SIZE_UNITS
        .iter()
        .find(|(u, _)| b.starts_with(u.as_bytes()))
        .map(|&(u, m)| (m, u.len()))
}

const TIME_UNITS: &[(&str, TimeUnit)] = &[
    ("ps", TimeUnit::Ps),
    ("ns", TimeUnit::Ns),
    ("us", TimeUnit::Us),
    ("\u{b5}s", TimeUnit::Us),
    ("ms", TimeUnit::Ms),
    ("s", TimeUnit::S),
];

/// The time unit that `b` starts with, and its length in bytes.
pub(crate) fn time_unit_prefix(b: &[u8]) -> Option<(TimeUnit, usize)> {
    TIME_UNITS
        .iter()
        .find(|(u, _)| b.starts_with(u.as_bytes()))
        .map(|&(u, t)| (t, u.len()))
}

/// Why scaling failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScaleError {
    NotWhole,
    Overflow,
    TooPrecise,
}

/// `d * numer / denom`, exactly, as u64.
pub(crate) fn scale(d: &Decimal<'_>, numer: u64, denom: u64) -> Result<u64, ScaleError> {
    let int = d.int.ok_or(ScaleError::Overflow)? as u128;
    let k = d.frac.len();
    if k > 18 {
        return Err(ScaleError::TooPrecise);
    }
    let mut frac: u128 = 0;
    for &c in d.frac {
        frac = frac * 10 + (c - b'0') as u128;
    }
    let (numer, denom) = (numer as u128, denom as u128);
    let a = int * numer; // < 2^64 * 2^64
    let (qa, ra) = (a / denom, a % denom);
    let pow = 10u128.pow(k as u32);
    // ra < denom <= 1e12, pow <= 1e18, frac < pow, numer <= 2^40: all products fit in u128.
    let num2 = ra * pow + frac * numer;
    let den2 = pow * denom;
    if !num2.is_multiple_of(den2) {
        return Err(ScaleError::NotWhole);
    }
    let total = qa + num2 / den2;
    u64::try_from(total).map_err(|_| ScaleError::Overflow)
}

fn number_of(s: &str) -> Result<(Decimal<'_>, &str), UnitError> {
    let b = s.as_bytes();
    match scan_decimal(b, 0) {
        Some((d, end)) => Ok((d, s[end..].trim_start())),
        None => Err(UnitError::NotANumber {
            found: s.to_string(),
        }),
    }
}

/// Parses a size in bytes: `512MiB`, `16KiB`, `1.5KiB`, `4 kB`, `16B`, `16b`, or a plain integer
/// (bytes).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let s = s.trim();
    let (d, rest) = number_of(s)?;
    let mult = if rest.is_empty() {
        if !d.is_integer() {
            return Err(UnitError::FractionWithoutUnit {
                text: s.to_string(),
            });
        }
        1
    } else {
        match size_unit_prefix(rest.as_bytes()) {
            Some((m, len)) if len == rest.len() => m,
            _ => {
                return Err(UnitError::UnknownSizeUnit {
                    unit: rest.to_string(),
                })
            }
        }
    };
    scale(&d, mult, 1).map_err(|e| scale_error(e, s, "bytes"))
}

/// Parses a duration and returns it in `unit`: `2.5us`, `100ns`, `3 ms`, `1s`; a plain integer is
/// already in `unit`. Fails if the value is not a whole number of `unit`.
pub fn parse_time(s: &str, unit: TimeUnit) -> Result<u64, UnitError> {
    let s = s.trim();
    let (d, rest) = number_of(s)?;
    let from = if rest.is_empty() {
        if !d.is_integer() {
            return Err(UnitError::FractionWithoutUnit {
                text: s.to_string(),
            });
        }
        unit
    } else {
        match time_unit_prefix(rest.as_bytes()) {
            Some((u, len)) if len == rest.len() => u,
            _ => {
                return Err(UnitError::UnknownTimeUnit {
                    unit: rest.to_string(),
                })
            }
        }
    };
    scale(&d, from.picos(), unit.picos()).map_err(|e| scale_error(e, s, unit.symbol()))
}

pub(crate) fn scale_error(e: ScaleError, text: &str, target: &str) -> UnitError {
    match e {
        ScaleError::NotWhole => UnitError::NotWhole {
            text: text.to_string(),
            target: target.to_string(),
        },
        ScaleError::Overflow => UnitError::Overflow {
            text: text.to_string(),
            max: u64::MAX,
            target: target.to_string(),
        },
        ScaleError::TooPrecise => UnitError::TooPrecise {
            text: text.to_string(),
        },
    }
}

/// Formats a byte count with the largest IEC unit that divides it exactly: `16MiB`, `1000B`.
pub fn format_size(bytes: u64) -> String {
    for (unit, m) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{unit}", bytes / m);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("16"), Ok(16));
        assert_eq!(parse_size("16b"), Ok(16));
        assert_eq!(parse_size("16B"), Ok(16));
        assert_eq!(parse_size("4 KiB"), Ok(4096));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("2TiB"), Ok(2 << 40));
        assert_eq!(parse_size("3kB"), Ok(3000));
        assert_eq!(parse_size("3MB"), Ok(3_000_000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("0.5kB"), Ok(500));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_size("16KB").unwrap_err().to_string(),
            "unknown size unit \"KB\" (ambiguous: write \"kB\" for 1000 bytes or \"KiB\" for 1024 bytes): \
             expected b, B, KiB, MiB, GiB, TiB, kB, MB, GB or TB"
        );
        assert_eq!(
            parse_size("1.5b").unwrap_err().to_string(),
            "1.5b is not a whole number of bytes"
        );
        assert_eq!(
            parse_size("18446744073709551616").unwrap_err().to_string(),
            "18446744073709551616 is too large (at most 18446744073709551615 bytes)"
        );
        assert_eq!(
            parse_size("16777216TiB").unwrap_err().to_string(),
            "16777216TiB is too large (at most 18446744073709551615 bytes)"
        );
        assert_eq!(
            parse_size("1.5").unwrap_err().to_string(),
            "1.5: a fractional value needs a unit"
        );
        assert_eq!(
            parse_size("x").unwrap_err().to_string(),
            "expected a number, found \"x\""
        );
        assert_eq!(
            parse_size("16 MiBx").unwrap_err(),
            UnitError::UnknownSizeUnit {
                unit: "MiBx".into()
            }
        );
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("2.5us", TimeUnit::Ps), Ok(2_500_000));
        assert_eq!(parse_time("2.5us", TimeUnit::Ns), Ok(2_500));
        assert_eq!(parse_time("7", TimeUnit::Ns), Ok(7));
        assert_eq!(parse_time("1s", TimeUnit::Ps), Ok(1_000_000_000_000));
        assert_eq!(parse_time("3 ms", TimeUnit::Us), Ok(3_000));
        assert_eq!(parse_time("1\u{b5}s", TimeUnit::Ps), Ok(1_000_000));
        assert_eq!(
            parse_time("0.001ps", TimeUnit::Ps).unwrap_err().to_string(),
            "0.001ps is not a whole number of ps"
        );
        assert_eq!(
            parse_time("1500ps", TimeUnit::Ns).unwrap_err().to_string(),
            "1500ps is not a whole number of ns"
        );
        assert_eq!(parse_time("2000ps", TimeUnit::Ns), Ok(2));
        assert_eq!(
            parse_time("1h", TimeUnit::Ps).unwrap_err().to_string(),
            "unknown time unit \"h\": expected ps, ns, us, ms or s"
        );
        assert_eq!(
            parse_time("18446745s", TimeUnit::Ps)
                .unwrap_err()
                .to_string(),
            "18446745s is too large (at most 18446744073709551615 ps)"
        );
        assert_eq!("us".parse::<TimeUnit>(), Ok(TimeUnit::Us));
    }

    #[test]
    fn format() {
        assert_eq!(format_size(16 << 20), "16MiB");
        assert_eq!(format_size(1000), "1000B");
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(3 << 40), "3TiB");
    }
}
