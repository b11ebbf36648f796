//! Sizes and times as text, in one style: no space before the unit, `B KiB MiB GiB TiB PiB` for
//! sizes, `ps ns us ms s` for times.
//!
//! Two precisions:
//! * `format_*` ([`format_size`], [`format_duration`]) are exact and parse back to the same number
//!   ([`crate::parse_size`], [`crate::parse_time`]): for values a reader may type again (schedule
//!   descriptions, message sizes in error messages).
//! * `fmt_*` ([`fmt_time_ps`], [`fmt_time_ps_f64`], [`fmt_bytes`]) round to 3–4 significant digits
//!   with integer arithmetic (halves up), for tables and summaries.

/// Formats a byte count with the largest binary unit that divides it exactly: `512MiB`, `16B`,
/// `1000B`. Exact; parses back with any [`crate::SizeRules`].
///
/// ```
/// use loggops_units::format_size;
/// assert_eq!(format_size(16 << 20), "16MiB");
/// assert_eq!(format_size(1536), "1536B");
/// ```
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

/// Formats picoseconds exactly, in the largest unit that keeps an integer part: `21.064us`,
/// `416.705549ms`, `5ns`, `999ps`. Parses back to the same number.
///
/// ```
/// use loggops_units::format_duration;
/// assert_eq!(format_duration(21_064_000), "21.064us");
/// assert_eq!(format_duration(0), "0ps");
/// ```
pub fn format_duration(ps: u64) -> String {
    for (unit, mult) in [
        ("s", 1_000_000_000_000u64),
        ("ms", 1_000_000_000),
        ("us", 1_000_000),
        ("ns", 1_000),
    ] {
        if ps >= mult {
            let (whole, frac) = (ps / mult, ps % mult);
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

const POW10: [u64; 5] = [1, 10, 100, 1_000, 10_000];

fn digits(mut v: u128) -> u32 {
    let mut d = 1;
    while v >= 10 {
        v /= 10;
        d += 1;
    }
    d
}

/// `value / unit` with 3–4 significant digits: four, then a trailing zero of the fraction dropped.
/// Returns `(integer part, fraction digits as text)`.
fn sig4(value: u128, unit: u128) -> (u128, String) {
    let d = digits(value / unit);
    let mut decimals = 4u32.saturating_sub(d);
    let scale = POW10[decimals as usize] as u128;
    let q = (value * scale + unit / 2) / unit;
    let mut int = q / scale;
    let mut frac = q % scale;
    if digits(int) > d && decimals > 0 {
        // Rounding carried into a new digit (9.9996 -> 10.000): one decimal fewer, still exact.
        decimals -= 1;
        frac = 0;
        int = q / scale;
    }
    if decimals == 0 {
        return (int, String::new());
    }
    let mut text = format!("{frac:0width$}", width = decimals as usize);
    if frac.is_multiple_of(10) {
        text.pop();
    }
    (int, text)
}

/// Formats a time given in picoseconds with a unit (`ps`, `ns`, `us`, `ms`, `s`) and 3–4 significant
/// digits: four, or three when the fourth would be a trailing zero.
///
/// ```
/// use loggops_units::fmt_time_ps;
/// assert_eq!(fmt_time_ps(2_500_000), "2.50us");
/// assert_eq!(fmt_time_ps(1_234_000_000_000), "1.234s");
/// assert_eq!(fmt_time_ps(999_960_000), "1.00ms");
/// assert_eq!(fmt_time_ps(750), "750ps");
/// ```
pub fn fmt_time_ps(ps: u64) -> String {
    if ps < 1_000 {
        return format!("{ps}ps");
    }
    const UNITS: [(&str, u64); 4] = [
        ("ns", 1_000),
        ("us", 1_000_000),
        ("ms", 1_000_000_000),
        ("s", 1_000_000_000_000),
    ];
    let mut u = UNITS.iter().rposition(|&(_, s)| ps >= s).unwrap_or(0);
    loop {
        let (name, scale) = UNITS[u];
        let (int, frac) = sig4(ps as u128, scale as u128);
        if int >= 1_000 && u + 1 < UNITS.len() {
            u += 1; // 999.96us rounds to 1000us: say 1.00ms instead
            continue;
        }
        return if frac.is_empty() {
            format!("{int}{name}")
        } else {
            format!("{int}.{frac}{name}")
        };
    }
}

/// Formats a fractional picosecond value (rounded to the nearest ps) like [`fmt_time_ps`];
/// negative values get a leading `-`, non-finite ones are shown as `-`.
pub fn fmt_time_ps_f64(ps: f64) -> String {
    if !ps.is_finite() {
        return "-".to_string();
    }
    let r = ps.round();
    if r < 0.0 {
        format!("-{}", fmt_time_ps((-r) as u64))
    } else {
        fmt_time_ps(r as u64)
    }
}

/// Formats a byte count with binary units (`B`, `KiB`, `MiB`, `GiB`, `TiB`, `PiB`): exact multiples
/// as integers, others with up to 4 significant digits and trailing zeros dropped.
///
/// ```
/// use loggops_units::fmt_bytes;
/// assert_eq!(fmt_bytes(512 << 20), "512MiB");
/// assert_eq!(fmt_bytes(1536), "1.5KiB");
/// assert_eq!(fmt_bytes(16), "16B");
/// ```
pub fn fmt_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut u = 0;
    while u + 1 < UNITS.len() && bytes >= 1u64 << (10 * (u + 1)) {
        u += 1;
    }
    let unit = 1u128 << (10 * u);
    if (bytes as u128).is_multiple_of(unit) {
        return format!("{}{}", bytes as u128 / unit, UNITS[u]);
    }
    let (int, mut frac) = sig4(bytes as u128, unit);
    while frac.ends_with('0') {
        frac.pop();
    }
    if frac.is_empty() {
        format!("{int}{}", UNITS[u])
    } else {
        format!("{int}.{frac}{}", UNITS[u])
    }
}

/// Formats a rate (interruptions per node-hour, say) with at most six significant digits and
/// no trailing zeros: `7.2`, `0.002`, `1250`, so that a rate derived from a duration never
/// prints as `7.199999999999999`.
pub fn fmt_rate(r: f64) -> String {
    if !r.is_finite() {
        return "-".to_string();
    }
    if r == 0.0 {
        return "0".to_string();
    }
    let decimals = (5 - r.abs().log10().floor() as i32).clamp(0, 17) as usize;
    let t = format!("{r:.decimals$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let cases = [
            (0, "0ps"),
            (999, "999ps"),
            (1_000, "1.00ns"),
            (1_234, "1.234ns"),
            (2_500_000, "2.50us"),
            (12_345_000, "12.35us"), // half up
            (12_344_999, "12.34us"),
            (100_000_000, "100us"),
            (123_400_000, "123.4us"),
            (999_949_999, "999.9us"),
            (999_950_000, "1.00ms"),
            (9_999_600, "10.0us"),
            (99_996_000, "100us"),
            (1_234_000_000_000, "1.234s"),
            (65_195_187_700_000, "65.2s"),
            (12_345_678_000_000_000, "12346s"),
            (u64::MAX, "18446744s"),
        ];
        for (ps, want) in cases {
            assert_eq!(fmt_time_ps(ps), want, "{ps} ps");
        }
        assert_eq!(fmt_time_ps_f64(2_499_999.5), "2.50us");
        assert_eq!(fmt_time_ps_f64(-1500.0), "-1.50ns");
        assert_eq!(fmt_time_ps_f64(f64::NAN), "-");
    }

    #[test]
    fn bytes() {
        let cases = [
            (0, "0B"),
            (1023, "1023B"),
            (1024, "1KiB"),
            (1536, "1.5KiB"),
            (131_072, "128KiB"),
            (16 << 20, "16MiB"),
            (536_870_912, "512MiB"),
            ((1 << 30) + 1, "1GiB"),
            (1_000_000, "976.6KiB"),
            (1 << 50, "1PiB"),
        ];
        for (b, want) in cases {
            assert_eq!(fmt_bytes(b), want, "{b} B");
        }
    }

    #[test]
    fn exact() {
        assert_eq!(format_size(16 << 20), "16MiB");
        assert_eq!(format_size(1000), "1000B");
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(3 << 40), "3TiB");
        assert_eq!(format_size(1025), "1025B");
        assert_eq!(format_size((1 << 30) + 1), "1073741825B");
        assert_eq!(format_duration(21_064_000), "21.064us");
        assert_eq!(format_duration(416_705_549_000), "416.705549ms");
        assert_eq!(format_duration(5_000), "5ns");
        assert_eq!(format_duration(999), "999ps");
        assert_eq!(format_duration(0), "0ps");
        assert_eq!(format_duration(7_000_000_000_000), "7s");
    }

    #[test]
    fn rates_drop_binary_noise_and_trailing_zeros() {
        assert_eq!(fmt_rate(3600.0 / 500.0), "7.2");
        assert_eq!(fmt_rate(1.0 / (3600.0 * 500.0 / 3600.0)), "0.002");
        assert_eq!(fmt_rate(0.001), "0.001");
        assert_eq!(fmt_rate(1250.0), "1250");
        assert_eq!(fmt_rate(1.0 / 3.0), "0.333333");
        assert_eq!(fmt_rate(2.0e-7), "0.0000002");
        assert_eq!(fmt_rate(0.0), "0");
    }
}
