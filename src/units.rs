//! Numbers with units on the command line: times (`2.5us`), per-byte costs (`0.1ns`) and sizes
//! (`64KiB`). A number without a unit is read as nanoseconds, LogGOPSim's customary unit, except
//! in `--compat loggopsim` mode where numbers are LogGOPSim's unit-less integer ticks.

use loggops_engine::PerByte;

const TIME_UNITS: &[(&str, f64)] = &[
    ("ps", 1.0),
    ("ns", 1e3),
    ("us", 1e6),
    ("µs", 1e6),
    ("ms", 1e9),
    ("s", 1e12),
];

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|&(_, c)| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // `1e` followed by a unit letter: keep the exponent only if digits follow it.
    (&s[..end], s[end..].trim())
}

fn number(s: &str, what: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number ({what})"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!(
            "`{s}` must be a finite, non-negative number ({what})"
        ));
    }
    Ok(v)
}

/// A duration in picoseconds: `2.5us`, `1500ns`, `1500` (= ns), `3ps`, `0.2ms`, `1s`.
pub fn parse_time_ps(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = split_number(s);
    let scale = if unit.is_empty() {
        1e3
    } else {
        TIME_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                format!("unknown time unit `{unit}` in `{s}` (use ps, ns, us, ms or s)")
            })?
    };
    let ps = number(num, "a time")? * scale;
    if ps.fract().abs() > 1e-6 * ps.max(1.0) {
        return Err(format!("`{s}` is not a whole number of picoseconds"));
    }
    if ps >= u64::MAX as f64 {
        return Err(format!("`{s}` is too large"));
    }
    Ok(ps.round() as u64)
}

/// A per-byte cost in picoseconds per byte: `0.1ns` (= `0.1ns/B`), `86ps`, `6` (= 6 ns/B).
/// Keeps sub-picosecond precision.
pub fn parse_per_byte_ps(s: &str) -> Result<PerByte, String> {
    let s = s.trim();
    let t = s
        .strip_suffix("/B")
        .or_else(|| s.strip_suffix("/byte"))
        .unwrap_or(s);
    let (num, unit) = split_number(t);
    let scale = if unit.is_empty() {
        1e3
    } else {
        TIME_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                format!("unknown unit `{unit}` in `{s}` (a time per byte: ps, ns, us)")
            })?
    };
    PerByte::from_f64(number(num, "a time per byte")? * scale)
        .ok_or_else(|| format!("`{s}` is out of range"))
}

/// A size in bytes: `64KiB`, `512MiB`, `1GiB`, `16B`, `16b`, `1000` (bytes), `1kB` (= 1000 B).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = split_number(s);
    let mult: u64 = match unit {
        "" | "b" | "B" => 1,
        "KiB" | "k" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "TiB" => 1 << 40,
        "kB" | "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => {
            return Err(format!(
                "unknown size unit `{unit}` in `{s}` (use B, KiB, MiB, GiB, kB, MB, GB)"
            ))
        }
    };
    let v = number(num, "a size")?;
    let bytes = v * mult as f64;
    if bytes.fract() != 0.0 {
        return Err(format!("`{s}` is not a whole number of bytes"));
    }
    if bytes >= u64::MAX as f64 {
        return Err(format!("`{s}` is too large"));
    }
    Ok(bytes as u64)
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

/// `2.5us`-style rendering of a picosecond time, 4 significant digits.
pub fn fmt_ps(ps: u64) -> String {
    let v = ps as f64;
    let (scaled, unit) = if ps < 1_000 {
        return format!("{ps}ps");
    } else if v < 1e6 {
        (v / 1e3, "ns")
    } else if v < 1e9 {
        (v / 1e6, "us")
    } else if v < 1e12 {
        (v / 1e9, "ms")
    } else {
        (v / 1e12, "s")
    };
    let digits = if scaled >= 100.0 {
        1
    } else if scaled >= 10.0 {
        2
    } else {
        3
    };
    format!("{scaled:.digits$}{unit}")
}

/// Bytes with a binary unit when exact: `512MiB`, `16B`, `1.5KiB`.
pub fn fmt_bytes(b: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if b >= 1 << shift {
            let v = b as f64 / (1u64 << shift) as f64;
            return if b % (1 << shift) == 0 {
                format!("{}{unit}", b >> shift)
            } else {
                format!("{v:.2}{unit}")
            };
        }
    }
    format!("{b}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time_ps("2.5us"), Ok(2_500_000));
        assert_eq!(parse_time_ps("1500"), Ok(1_500_000));
        assert_eq!(parse_time_ps("3ps"), Ok(3));
        assert_eq!(parse_time_ps("0.2ms"), Ok(200_000_000));
        assert!(parse_time_ps("0.5ps").is_err());
        assert!(parse_time_ps("3 parsecs").is_err());
        assert!(parse_time_ps("-1ns").is_err());
    }

    #[test]
    fn per_byte() {
        assert_eq!(
            parse_per_byte_ps("0.1ns").unwrap(),
            PerByte::from_units(100)
        );
        assert_eq!(
            parse_per_byte_ps("86ps/B").unwrap(),
            PerByte::from_units(86)
        );
        assert_eq!(parse_per_byte_ps("6").unwrap(), PerByte::from_units(6000));
        assert!((parse_per_byte_ps("0.0001ns").unwrap().as_f64() - 0.1).abs() < 1e-4);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("512MiB"), Ok(536_870_912));
        assert_eq!(parse_size("16b"), Ok(16));
        assert_eq!(parse_size("1kB"), Ok(1000));
        assert!(parse_size("1.5B").is_err());
        assert!(parse_size("99999999999TiB").is_err());
    }

    #[test]
    fn rendering() {
        assert_eq!(fmt_ps(2_500_000), "2.500us");
        assert_eq!(fmt_ps(999), "999ps");
        assert_eq!(fmt_ps(188_908_500_000), "188.9ms");
        assert_eq!(fmt_bytes(536_870_912), "512MiB");
        assert_eq!(fmt_bytes(16), "16B");
    }
}
