//! Number parsing as C's `printf` writes numbers, and unit-carrying formatting for messages
//! (sizes and times come from `loggops-units`).

use loggops_units::fmt_time_ps_f64;

/// Parses a number as Netgauge prints it with `%lf`/`%f`: a Rust float, or one of C's spellings of
/// the special values (`nan`, `-nan`, `inf`, `-inf`, any case). Returns `None` for anything else.
pub fn parse_c_double(s: &str) -> Option<f64> {
    if let Ok(v) = s.parse::<f64>() {
        return Some(v);
    }
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    // glibc prints `-nan`, some C libraries `nan(0x...)` or `-nan(ind)`.
    if lower == "nan" || lower.starts_with("nan(") {
        return Some(f64::NAN);
    }
    if lower == "inf" || lower == "infinity" {
        return Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    None
}

/// A byte count for messages, exact: `1B`, `1025B`, `4KiB`, `16MiB`.
pub use loggops_units::format_size as fmt_bytes;

/// A duration given in microseconds, with a unit chosen for readability and 3–4 significant
/// digits (`950ns`, `1.431us`, `24.58ms`, `3.20s`), as every loggops time is shown
/// ([`loggops_units::fmt_time_ps_f64`]).
pub fn fmt_us(us: f64) -> String {
    if us.is_finite() {
        fmt_time_ps_f64(us * 1e6)
    } else {
        format!("{us}us")
    }
}

/// A duration given in nanoseconds (see [`fmt_us`]).
pub fn fmt_ns(ns: f64) -> String {
    if ns.is_finite() {
        fmt_time_ps_f64(ns * 1e3)
    } else {
        format!("{ns}us")
    }
}

/// A ratio with 3 significant digits (`52.6`, `1630`, `1.05`).
pub fn fmt_ratio(r: f64) -> String {
    sig3(r)
}

fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        // `3.60e9`, not ten digits (or three hundred).
        format!("{v:.2e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A line excerpt for messages: at most 60 characters, tabs shown as `\t`.
pub fn excerpt(line: &str) -> String {
    let mut out = String::new();
    for (i, c) in line.chars().enumerate() {
        if i >= 60 {
            out.push('…');
            break;
        }
        if c == '\t' {
            out.push_str("\\t");
        } else if c.is_control() {
            out.push_str(&c.escape_default().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Line numbers for messages: `3, 7, 12` or `3, 7, 12, …` when more were seen.
pub fn fmt_lines(lines: &[u64], total: u64) -> String {
    let mut s = lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if total > lines.len() as u64 {
        s.push_str(", …");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_doubles() {
        assert_eq!(parse_c_double("1.907000"), Some(1.907));
        assert!(parse_c_double("-nan").unwrap().is_nan());
        assert!(parse_c_double("nan").unwrap().is_nan());
        assert!(parse_c_double("NaN").unwrap().is_nan());
        assert_eq!(parse_c_double("inf"), Some(f64::INFINITY));
        assert_eq!(parse_c_double("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(
            parse_c_double("1449.7842210000001"),
            Some(1449.7842210000001)
        );
        assert_eq!(parse_c_double("abc"), None);
        assert_eq!(parse_c_double(""), None);
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_bytes(1), "1B");
        assert_eq!(fmt_bytes(1025), "1025B");
        assert_eq!(fmt_bytes(4096), "4KiB");
        assert_eq!(fmt_bytes(16 << 20), "16MiB");
        assert_eq!(fmt_us(1.4305), "1.431us");
        assert_eq!(fmt_us(0.95), "950ns");
        assert_eq!(fmt_us(24578.56), "24.58ms");
        assert_eq!(fmt_us(3.2e6), "3.20s");
        assert_eq!(fmt_us(0.0), "0ps");
        assert_eq!(fmt_us(-2.5), "-2.50us");
        assert_eq!(fmt_us(f64::NAN), "NaNus");
        assert_eq!(fmt_ns(20820.3), "20.82us");
        assert_eq!(fmt_lines(&[3, 7], 2), "3, 7");
        assert_eq!(fmt_lines(&[3, 7], 5), "3, 7, …");
        assert_eq!(excerpt("1\t2.5"), "1\\t2.5");
    }
}
