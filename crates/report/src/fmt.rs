//! Human-readable numbers with units: times, sizes, money, ratios and percentages.
//!
//! Times and sizes come from `loggops-units` (integer arithmetic, round half up, so the text
//! depends only on the integer input); money, ratios and percentages are formatted here.

pub use loggops_units::{fmt_bytes, fmt_time_ps, fmt_time_ps_f64};

/// Formats US dollars as people write them: thousands and millions with a suffix (`$12.3k`,
/// `$4.56M`), cents from one dollar (`$12.35`), two significant digits below (`$0.42`,
/// `$0.0042`), and, below a tenth of a cent, two significant digits in scientific notation
/// (`$6.9e-6`) rather than a row of zeros. Exact values are in the JSON and CSV outputs.
pub fn fmt_usd(usd: f64) -> String {
    if !usd.is_finite() {
        return "-".to_string();
    }
    let sign = if usd < 0.0 { "-" } else { "" };
    let a = usd.abs();
    if a == 0.0 {
        "$0".to_string()
    } else if a >= 999_500.0 {
        format!("{sign}${}M", three_digits(a / 1e6))
    } else if a >= 999.995 {
        format!("{sign}${}k", three_digits(a / 1e3))
    } else if a >= 1.0 {
        format!("{sign}${a:.2}")
    } else if a >= 1e-3 {
        // Two significant digits: 0.42 -> 2 decimals, 0.0042 -> 4.
        let decimals = (1 - a.log10().floor() as i32).max(2) as usize;
        format!("{sign}${a:.decimals$}")
    } else {
        let text = format!("{a:.1e}");
        format!("{sign}${text}")
    }
}

/// 3 significant digits, for values in [1, 1000): `12.3`, `1.23`, `123`.
fn three_digits(v: f64) -> String {
    if v >= 99.95 {
        format!("{v:.0}")
    } else if v >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Formats a per-byte cost given in ps per byte with up to four significant digits:
/// `79ps/B`, `86.3ps/B`, `182ps/B`, `0.17ps/B`, `6ns/B`.
pub fn fmt_per_byte(ps_per_byte: f64) -> String {
    if !ps_per_byte.is_finite() {
        return "-".to_string();
    }
    let trim = |v: f64| {
        let decimals = if v == 0.0 {
            0
        } else {
            (3 - v.abs().log10().floor() as i32).clamp(0, 4) as usize
        };
        let t = format!("{v:.decimals$}");
        let t = if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.')
        } else {
            &t
        };
        if t.is_empty() || t == "-" || t == "-0" {
            "0".to_string()
        } else {
            t.to_string()
        }
    };
    if ps_per_byte.abs() >= 1000.0 {
        format!("{}ns/B", trim(ps_per_byte / 1000.0))
    } else {
        format!("{}ps/B", trim(ps_per_byte))
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
    fn money_ratios_percent() {
        assert_eq!(fmt_usd(0.0123), "$0.012");
        assert_eq!(fmt_usd(0.0042), "$0.0042");
        assert_eq!(fmt_usd(0.5), "$0.50");
        assert_eq!(fmt_usd(0.999), "$1.00");
        assert_eq!(fmt_usd(1.234), "$1.23");
        assert_eq!(fmt_usd(12.345_6), "$12.35");
        assert_eq!(fmt_usd(12_345.6), "$12.3k");
        assert_eq!(fmt_usd(999.999), "$1.00k");
        assert_eq!(fmt_usd(4_560_000.0), "$4.56M");
        assert_eq!(fmt_usd(0.001), "$0.0010");
        assert_eq!(fmt_usd(0.000_006_9), "$6.9e-6");
        assert_eq!(fmt_usd(0.0), "$0");
        assert_eq!(fmt_usd(-0.25), "-$0.25");
        assert_eq!(fmt_usd(6.9e-8), "$6.9e-8");
        assert_eq!(fmt_per_byte(79.0), "79ps/B");
        assert_eq!(fmt_per_byte(86.3), "86.3ps/B");
        assert_eq!(fmt_per_byte(6000.0), "6ns/B");
        assert_eq!(fmt_per_byte(0.0), "0ps/B");
        assert_eq!(fmt_per_byte(182.044), "182ps/B");
        assert_eq!(fmt_per_byte(0.17), "0.17ps/B");
        assert_eq!(fmt_per_byte(6543.0), "6.543ns/B");
        assert_eq!(fmt_pct(117.96), "+118.0%");
        assert_eq!(fmt_pct(-2.5), "-2.5%");
        assert_eq!(fmt_ratio(1.934), "1.93x");
        assert_eq!(fmt_ratio(16.84), "16.8x");
        assert_eq!(fmt_ratio(154.2), "154x");
        assert_eq!(fmt_ratio(f64::INFINITY), "-");
    }
}
