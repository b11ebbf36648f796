//! Sizes with byte units (`16B`, `128KiB`, `512MiB`, `1.5GB`) and durations with time units
//! (`21.064us`, `500ns`, `2ms`), parsed exactly (decimal arithmetic, no floating point).

/// Why a size or duration does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("`{text}` is not a {what} (a number and a unit, such as `{example}`)", example = if *what == "size" { "512MiB" } else { "21.064us" })]
    NotANumber { text: String, what: &'static str },
    #[error("`{text}` has no unit; write it as {example}")]
    NoUnit { text: String, example: String },
    #[error("`{unit}` is not a {what} unit; expected one of {expected}")]
    UnknownUnit {
        unit: String,
        what: &'static str,
        expected: &'static str,
    },
    #[error("{what} `{text}` is negative")]
    Negative { text: String, what: &'static str },
    #[error("{what} `{text}` is not a whole number of {base}")]
    Fraction {
        text: String,
        what: &'static str,
        base: &'static str,
    },
    #[error("{what} `{text}` is too large (the limit is {limit})")]
    Overflow {
        text: String,
        what: &'static str,
        limit: &'static str,
    },
}

pub(crate) const SIZE_UNITS: &str = "B, KB, KiB, MB, MiB, GB, GiB, TB, TiB";
pub(crate) const TIME_UNITS: &str = "ps, ns, us, ms, s";

fn size_unit(u: &str) -> Option<u128> {
    Some(match u {
        "B" | "b" => 1,
        "KB" | "kB" => 1000,
        "KiB" => 1 << 10,
        "MB" => 1_000_000,
        "MiB" => 1 << 20,
        "GB" => 1_000_000_000,
        "GiB" => 1 << 30,
        "TB" => 1_000_000_000_000,
        "TiB" => 1 << 40,
        _ => return None,
    })
}

fn time_unit(u: &str) -> Option<u128> {
    Some(match u {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "µs" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        _ => return None,
    })
}

/// Splits `12.5MiB` into (mantissa 125, decimals 1, unit "MiB").
fn split(text: &str, what: &'static str) -> Result<(u128, u32, String), UnitError> {
    if text.starts_with('-') {
        return Err(UnitError::Negative {
            text: text.to_string(),
            what,
        });
    }
    let num_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(num_end);
    let bad = || UnitError::NotANumber {
        text: text.to_string(),
        what,
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() || frac.contains('.') || (num.contains('.') && frac.is_empty()) {
        return Err(bad());
    }
    let overflow = || UnitError::Overflow {
        text: text.to_string(),
        what,
        limit: if what == "size" {
            "18446744073709551615B"
        } else {
            "18446744073709551615ps"
        },
    };
    let mut mant: u128 = 0;
    for c in int.chars().chain(frac.chars()) {
        mant = mant
            .checked_mul(10)
            .and_then(|m| m.checked_add(c as u128 - '0' as u128))
            .ok_or_else(overflow)?;
        if mant > u64::MAX as u128 * 1_000_000_000_000 {
            return Err(overflow());
        }
    }
    Ok((mant, frac.len() as u32, unit.to_string()))
}

fn scale(
    text: &str,
    mant: u128,
    decimals: u32,
    unit: u128,
    what: &'static str,
    base: &'static str,
) -> Result<u64, UnitError> {
    let overflow = || UnitError::Overflow {
        text: text.to_string(),
        what,
        limit: if what == "size" {
            "18446744073709551615B"
        } else {
            "18446744073709551615ps"
        },
    };
    let num = mant.checked_mul(unit).ok_or_else(overflow)?;
    let den = 10u128.checked_pow(decimals).ok_or_else(overflow)?;
    if num % den != 0 {
        return Err(UnitError::Fraction {
            text: text.to_string(),
            what,
            base,
        });
    }
    u64::try_from(num / den).map_err(|_| overflow())
}

/// Parses a size with a unit into bytes: `16B`, `128KiB`, `1.5MB`.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let (mant, dec, unit) = split(text, "size")?;
    if unit.is_empty() {
        return Err(UnitError::NoUnit {
            text: text.to_string(),
            example: format!("`{text}B` (units: {SIZE_UNITS})"),
        });
    }
    let mult = size_unit(&unit).ok_or(UnitError::UnknownUnit {
        unit,
        what: "size",
        expected: SIZE_UNITS,
    })?;
    scale(text, mant, dec, mult, "size", "bytes")
}

/// Parses a duration with a unit into picoseconds: `21.064us`, `500ns`, `2ms`.
pub fn parse_duration(text: &str) -> Result<u64, UnitError> {
    let (mant, dec, unit) = split(text, "duration")?;
    if unit.is_empty() {
        return Err(UnitError::NoUnit {
            text: text.to_string(),
            example: format!("`{text}ns` or `{text}us` (units: {TIME_UNITS})"),
        });
    }
    let mult = time_unit(&unit).ok_or(UnitError::UnknownUnit {
        unit,
        what: "time",
        expected: TIME_UNITS,
    })?;
    scale(text, mant, dec, mult, "duration", "picoseconds")
}

/// Formats bytes with the largest binary unit that divides them exactly (`512MiB`, `16B`).
pub fn format_size(bytes: u64) -> String {
    for (unit, mult) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= mult && bytes.is_multiple_of(mult) {
            return format!("{}{unit}", bytes / mult);
        }
    }
    format!("{bytes}B")
}

/// Formats picoseconds with the largest unit that keeps it exact (`21.064us`, `5ns`).
pub fn format_duration(ps: u64) -> String {
    if ps == 0 {
        return "0ns".to_string();
    }
    for (unit, mult) in [
        ("s", 1_000_000_000_000u64),
        ("ms", 1_000_000_000),
        ("us", 1_000_000),
        ("ns", 1_000),
    ] {
        if ps >= mult {
            let whole = ps / mult;
            let frac = ps % mult;
            if frac == 0 {
                return format!("{whole}{unit}");
            }
            let digits = mult.ilog10() as usize;
            let f = format!("{frac:0digits$}");
            return format!("{whole}.{}{unit}", f.trim_end_matches('0'));
        }
    }
    format!("{ps}ps")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_exactly() {
        assert_eq!(parse_size("16B"), Ok(16));
        assert_eq!(parse_size("128KiB"), Ok(131072));
        assert_eq!(parse_size("512MiB"), Ok(536870912));
        assert_eq!(parse_size("1.5MB"), Ok(1_500_000));
        assert_eq!(
            parse_size("16EiB").unwrap_err().to_string(),
            "`EiB` is not a size unit; expected one of B, KB, KiB, MB, MiB, GB, GiB, TB, TiB"
        );
        assert_eq!(
            parse_size("16").unwrap_err().to_string(),
            "`16` has no unit; write it as `16B` (units: B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)"
        );
        assert_eq!(
            parse_size("-16B").unwrap_err().to_string(),
            "size `-16B` is negative"
        );
        assert_eq!(
            parse_size("0.5B").unwrap_err().to_string(),
            "size `0.5B` is not a whole number of bytes"
        );
        assert_eq!(
            parse_size("16777216TiB").unwrap_err().to_string(),
            "size `16777216TiB` is too large (the limit is 18446744073709551615B)"
        );
        assert_eq!(parse_size("18446744073709551615B"), Ok(u64::MAX));
        assert!(parse_size("18446744073709551616B").is_err());
        assert!(parse_size("1.2.3B").is_err());
        assert!(parse_size("MiB").is_err());
    }

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(parse_duration("21.064us"), Ok(21_064_000));
        assert_eq!(parse_duration("416705.549us"), Ok(416_705_549_000));
        assert_eq!(parse_duration("5ns"), Ok(5_000));
        assert_eq!(parse_duration("1s"), Ok(1_000_000_000_000));
        assert_eq!(
            parse_duration("0.5ps").unwrap_err().to_string(),
            "duration `0.5ps` is not a whole number of picoseconds"
        );
        assert_eq!(
            parse_duration("3h").unwrap_err().to_string(),
            "`h` is not a time unit; expected one of ps, ns, us, ms, s"
        );
    }

    #[test]
    fn formats_round_trip() {
        for s in [16, 131072, 536870912, 1000, 3 << 30] {
            assert_eq!(parse_size(&format_size(s)), Ok(s));
        }
        assert_eq!(format_size(536870912), "512MiB");
        assert_eq!(format_size(1000), "1000B");
        assert_eq!(format_duration(21_064_000), "21.064us");
        assert_eq!(format_duration(416_705_549_000), "416.705549ms");
        for d in [0, 1, 999, 21_064_000, 416_705_549_000, 7_000_000_000_000] {
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
    }
}
