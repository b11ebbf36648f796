//! Human-readable numbers with units: times, sizes, money, ratios and percentages.
//!
//! Times and sizes come from `loggops-units` (integer arithmetic, round half up, so the text
//! depends only on the integer input); money, ratios and percentages are formatted here.

pub use loggops_units::{fmt_bytes, fmt_time_ps, fmt_time_ps_f64};

/// `+$0.41`, `-$0.0042`.
pub(crate) fn signed_usd(v: f64) -> String {
    if v < 0.0 {
        format!("-{}", fmt_usd(-v))
    } else {
        format!("+{}", fmt_usd(v))
    }
}

/// `+1.23us`, `-0.5ms`.
pub(crate) fn signed_time(ps: f64) -> String {
    if ps < 0.0 {
        format!("-{}", fmt_time_ps_f64(-ps))
    } else {
        format!("+{}", fmt_time_ps_f64(ps))
    }
}

/// A price per node-hour as given, to the tenth of a cent: `$1.475`, `$3.88`, `$0.70` (rounding
/// it to cents would make a reader's own arithmetic disagree with the costs shown).
pub fn fmt_price(usd: f64) -> String {
    if !usd.is_finite() || usd.abs() < 0.01 {
        return fmt_usd(usd);
    }
    let text = format!("{:.3}", usd.abs());
    let text = text.strip_suffix('0').unwrap_or(&text);
    let sign = if usd < 0.0 { "-" } else { "" };
    let (whole, frac) = text.split_once('.').unwrap_or((text, "00"));
    format!("{sign}${}.{frac}", thousands(whole))
}

/// Formats US dollars as people write them, never in scientific notation: cents with
/// thousands separators from one dollar (`$12.35`, `$1,234.56`, `$4,560,000.00`), two
/// significant digits below (`$0.42`, `$0.0042`, `$0.0000069`). Exact values are in the JSON
/// and CSV outputs.
pub fn fmt_usd(usd: f64) -> String {
    if !usd.is_finite() {
        return "-".to_string();
    }
    let sign = if usd < 0.0 { "-" } else { "" };
    let a = usd.abs();
    if a == 0.0 {
        "$0".to_string()
    } else if a >= 0.995 {
        let cents = format!("{a:.2}");
        let (whole, frac) = cents.split_once('.').unwrap_or((&cents, "00"));
        format!("{sign}${}.{frac}", thousands(whole))
    } else {
        // Two significant digits: 0.42 -> 2 decimals, 0.0042 -> 4.
        let decimals = (1 - a.log10().floor() as i32).max(2) as usize;
        let text = format!("{a:.decimals$}");
        // 0.0995 rounds to 0.10: one zero too many.
        let text = if text.trim_start_matches(['0', '.']).len() > 2 {
            text[..text.len() - 1].to_string()
        } else {
            text
        };
        format!("{sign}${text}")
    }
}

/// `1234567` -> `1,234,567`.
fn thousands(digits: &str) -> String {
    let n = digits.len();
    let mut out = String::with_capacity(n + n / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
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

/// Formats a percentage with a sign and one decimal (`+118.0%`), or two significant digits
/// below 0.1 % (`-0.042%`), so that a small change never reads as `-0.0%`.
pub fn fmt_pct(pct: f64) -> String {
    if !pct.is_finite() {
        return "-".to_string();
    }
    let a = pct.abs();
    if a == 0.0 {
        "0.0%".to_string()
    } else if a < 0.095 {
        let decimals = (1 - a.log10().floor() as i32).max(2) as usize;
        format!("{pct:+.decimals$}%")
    } else {
        format!("{pct:+.1}%")
    }
}

pub use loggops_units::fmt_rate;

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
    fn prices_show_what_was_given() {
        assert_eq!(fmt_price(1.475), "$1.475");
        assert_eq!(fmt_price(3.88), "$3.88");
        assert_eq!(fmt_price(0.7), "$0.70");
        assert_eq!(fmt_price(1234.5), "$1,234.50");
    }

    #[test]
    fn money_ratios_percent() {
        assert_eq!(fmt_usd(0.0123), "$0.012");
        assert_eq!(fmt_usd(0.0042), "$0.0042");
        assert_eq!(fmt_usd(0.5), "$0.50");
        assert_eq!(fmt_usd(0.999), "$1.00");
        assert_eq!(fmt_usd(1.234), "$1.23");
        assert_eq!(fmt_usd(12.345_6), "$12.35");
        assert_eq!(fmt_usd(12_345.6), "$12,345.60");
        assert_eq!(fmt_usd(1_234.56), "$1,234.56");
        assert_eq!(fmt_usd(999.999), "$1,000.00");
        assert_eq!(fmt_usd(4_560_000.0), "$4,560,000.00");
        assert_eq!(fmt_usd(0.001), "$0.0010");
        assert_eq!(fmt_usd(0.0995), "$0.10");
        assert_eq!(fmt_usd(0.000_006_9), "$0.0000069");
        assert_eq!(fmt_usd(0.0), "$0");
        assert_eq!(fmt_usd(-0.25), "-$0.25");
        assert_eq!(fmt_usd(6.9e-8), "$0.000000069");
        for v in [1e-9, 3.3e-5, 0.5, 7.0, 1e7] {
            assert!(!fmt_usd(v).contains('e'), "{v}: {}", fmt_usd(v));
        }
        assert_eq!(fmt_per_byte(79.0), "79ps/B");
        assert_eq!(fmt_per_byte(86.3), "86.3ps/B");
        assert_eq!(fmt_per_byte(6000.0), "6ns/B");
        assert_eq!(fmt_per_byte(0.0), "0ps/B");
        assert_eq!(fmt_per_byte(182.044), "182ps/B");
        assert_eq!(fmt_per_byte(0.17), "0.17ps/B");
        assert_eq!(fmt_per_byte(6543.0), "6.543ns/B");
        assert_eq!(fmt_pct(117.96), "+118.0%");
        assert_eq!(fmt_pct(-2.5), "-2.5%");
        assert_eq!(fmt_pct(-0.042), "-0.042%");
        assert_eq!(fmt_pct(0.0051), "+0.0051%");
        assert_eq!(fmt_pct(0.0), "0.0%");
        assert_eq!(fmt_pct(-0.1), "-0.1%");
        assert_eq!(fmt_ratio(1.934), "1.93x");
        assert_eq!(fmt_ratio(16.84), "16.8x");
        assert_eq!(fmt_ratio(154.2), "154x");
        assert_eq!(fmt_ratio(f64::INFINITY), "-");
    }
}
