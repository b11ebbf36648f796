//! Human-readable numbers with units: times, sizes, money, ratios and percentages.
//!
//! Times and sizes come from `loggops-units` (integer arithmetic, round half up, so the text
//! depends only on the integer input); money, ratios and percentages are formatted here.

pub use loggops_units::{fmt_bytes, fmt_time_ps, fmt_time_ps_f64};

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
