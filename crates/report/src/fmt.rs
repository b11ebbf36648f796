//! Human-readable numbers with units: times, sizes, money, ratios and percentages.
//!
//! Times and sizes are formatted with integer arithmetic (round half up), so the text depends only
//! on the integer input.

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
/// use loggops_report::fmt_time_ps;
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
/// use loggops_report::fmt_bytes;
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

/// Formats US dollars: cents for amounts of a dollar or more (`$12.35`), three significant digits
/// below (`$0.0123`), scientific notation below a hundredth of a cent (`$6.90e-8`).
pub fn fmt_usd(usd: f64) -> String {
    if !usd.is_finite() {
        return "-".to_string();
    }
    let sign = if usd < 0.0 { "-" } else { "" };
    let a = usd.abs();
    if a == 0.0 {
        "$0".to_string()
    } else if a >= 1.0 {
        format!("{sign}${a:.2}")
    } else if a >= 1e-4 {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        format!("{sign}${a:.decimals$}")
    } else {
        format!("{sign}${a:.2e}")
    }
}

/// Formats a percentage with a sign and one decimal: `+118.0%`.
pub fn fmt_pct(pct: f64) -> String {
    if !pct.is_finite() {
        return "-".to_string();
    }
    format!("{pct:+.1}%")
}

/// Formats a ratio with three significant digits and an `x`: `1.93x`, `16.8x`, `154x`.
pub fn fmt_ratio(r: f64) -> String {
    if !r.is_finite() {
        return "-".to_string();
    }
    let a = r.abs();
    if a < 10.0 {
        format!("{r:.2}x")
    } else if a < 100.0 {
        format!("{r:.1}x")
    } else {
        format!("{r:.0}x")
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
    fn money_ratios_percent() {
        assert_eq!(fmt_usd(0.0123), "$0.0123");
        assert_eq!(fmt_usd(0.5), "$0.500");
        assert_eq!(fmt_usd(12.345_6), "$12.35");
        assert_eq!(fmt_usd(0.0), "$0");
        assert_eq!(fmt_usd(6.9e-8), "$6.90e-8");
        assert_eq!(fmt_pct(117.96), "+118.0%");
        assert_eq!(fmt_pct(-2.5), "-2.5%");
        assert_eq!(fmt_ratio(1.934), "1.93x");
        assert_eq!(fmt_ratio(16.84), "16.8x");
        assert_eq!(fmt_ratio(154.2), "154x");
        assert_eq!(fmt_ratio(f64::INFINITY), "-");
    }
}
