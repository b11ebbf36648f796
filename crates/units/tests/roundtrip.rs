//! Property tests: exact formats parse back to the same number, rounded formats to a number
//! within their precision, decimal texts to their exact value, and the command line accepts
//! everything its former floating-point parser accepted, with the same value.

use loggops_units::{
    fmt_bytes, fmt_time_ps, format_duration, format_size, parse_per_byte, parse_size, parse_time,
    Decimal, SizeRules, SizeUnits, TimeRules, TimeUnit,
};
use proptest::prelude::*;

const ALL_SIZE_RULES: [SizeRules; 3] = [
    SizeRules::COMMAND_LINE,
    SizeRules::GOAL,
    SizeRules::SCHEDULE,
];
const TIME_UNITS: [TimeUnit; 5] = [
    TimeUnit::Ps,
    TimeUnit::Ns,
    TimeUnit::Us,
    TimeUnit::Ms,
    TimeUnit::S,
];

/// Byte counts of every magnitude, with many exact multiples of binary units.
fn bytes() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        (0u64..1 << 24, 0u32..41).prop_map(|(m, s)| m << s),
        0u64..100_000,
    ]
}

/// Picosecond counts of every magnitude, with many round decimal values.
fn picos() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        (0u64..1_000_000, 0u32..14).prop_map(|(m, e)| m * 10u64.pow(e)),
        0u64..10_000_000,
    ]
}

/// A number read back from a rounded format: `12.35us` -> 12350000 (`None` beyond `u64::MAX`:
/// `16384PiB`).
fn read_rounded(text: &str, unit_value: impl Fn(&str) -> Option<u64>) -> Option<u64> {
    let (d, end) = Decimal::scan(text).expect("a number");
    let unit = unit_value(&text[end..]).expect("a unit");
    d.scale(unit, 0).round().ok()
}

/// Whether `back` (read from the rounded text of `v`) is within 4 significant digits of `v`.
fn close(v: u64, back: Option<u64>) -> bool {
    let tolerance = v as f64 * 5e-4 + 0.5;
    match back {
        Some(b) => b.abs_diff(v) as f64 <= tolerance,
        None => (u64::MAX - v) as f64 <= tolerance,
    }
}

/// The former command line's split of `2.5 us` into number and unit.
fn old_split(s: &str) -> (&str, &str) {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// The former command line's number: a finite, non-negative `f64`.
fn old_number(num: &str) -> Option<f64> {
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// The command line's former parser of times (floating point), as the oracle of what it accepted.
fn old_cli_time(s: &str) -> Option<u64> {
    let (num, unit) = old_split(s);
    let scale = match unit {
        "" | "ns" => 1e3,
        "ps" => 1.0,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => return None,
    };
    let v = old_number(num)?;
    let ps = v * scale;
    if ps.fract().abs() > 1e-6 * ps.max(1.0) || ps >= u64::MAX as f64 {
        return None;
    }
    Some(ps.round() as u64)
}

/// The command line's former parser of sizes (floating point).
fn old_cli_size(s: &str) -> Option<u64> {
    let (num, unit) = old_split(s);
    let mult: u64 = match unit {
        "" | "b" | "B" => 1,
        "KiB" | "k" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "TiB" => 1 << 40,
        "kB" | "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    let v = old_number(num)?;
    let b = v * mult as f64;
    if b.fract() != 0.0 || b >= u64::MAX as f64 {
        return None;
    }
    Some(b as u64)
}

/// `n / 10^k` written out in decimal (`k` fraction digits, possibly with trailing zeros).
fn decimal_text(n: u64, k: u32) -> String {
    if k == 0 {
        return n.to_string();
    }
    let p = 10u64.pow(k);
    format!("{}.{:0width$}", n / p, n % p, width = k as usize)
}

const SIZE_UNIT_TEXTS: [(&str, u64); 16] = [
    ("", 1),
    ("b", 1),
    ("B", 1),
    ("KiB", 1 << 10),
    ("k", 1 << 10),
    ("K", 1 << 10),
    ("MiB", 1 << 20),
    ("M", 1 << 20),
    ("GiB", 1 << 30),
    ("G", 1 << 30),
    ("TiB", 1 << 40),
    ("kB", 1000),
    ("KB", 1000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn sizes_round_trip_exactly(b in bytes()) {
        let text = format_size(b);
        for rules in ALL_SIZE_RULES {
            prop_assert_eq!(parse_size(&text, rules), Ok(b), "{}", text);
        }
    }

    #[test]
    fn durations_round_trip_exactly(ps in picos()) {
        let text = format_duration(ps);
        prop_assert_eq!(parse_time(&text, TimeRules::SCHEDULE), Ok(ps), "{}", &text);
        prop_assert_eq!(parse_time(&text, TimeRules::COMMAND_LINE), Ok(ps), "{}", &text);
        prop_assert_eq!(
            parse_time(&text, TimeRules::exact(None, TimeUnit::Ps)),
            Ok(ps),
            "{}",
            &text
        );
    }

    #[test]
    fn durations_convert_between_units(v in 0u64..1 << 40, from in 0usize..5, to in 0usize..5) {
        let (from, to) = (TIME_UNITS[from], TIME_UNITS[to]);
        let text = format!("{v}{from}");
        let (ps, unit) = (v as u128 * from.picos() as u128, to.picos() as u128);
        let want = if ps.is_multiple_of(unit) && ps / unit <= u64::MAX as u128 {
            Ok((ps / unit) as u64)
        } else {
            Err(())
        };
        prop_assert_eq!(parse_time(&text, TimeRules::exact(Some(to), to)).map_err(|_| ()), want);
    }

    #[test]
    fn rounded_bytes_read_back_within_precision(b in bytes()) {
        let text = fmt_bytes(b);
        let back = read_rounded(&text, |u| {
            SizeUnits::Lenient.bytes(u).or((u == "PiB").then_some(1 << 50))
        });
        prop_assert!(close(b, back), "{} -> {} -> {:?}", b, text, back);
        if b.is_power_of_two() || b < 1024 {
            prop_assert_eq!(back, Some(b));
        }
    }

    #[test]
    fn rounded_times_read_back_within_precision(ps in picos()) {
        let text = fmt_time_ps(ps);
        let back = read_rounded(&text, |u| {
            let u: TimeUnit = u.parse().ok()?;
            Some(u.picos())
        });
        prop_assert!(close(ps, back), "{} -> {} -> {:?}", ps, text, back);
        if ps < 1000 {
            prop_assert_eq!(back, Some(ps));
        }
    }

    #[test]
    fn per_byte_costs_round_trip(raw in any::<u64>()) {
        // raw / 65536 ps is exact with 16 decimals: (raw % 65536) * 5^16 / 10^16.
        let frac = (raw % 65536) as u128 * 5u128.pow(16);
        let text = format!("{}.{frac:016}ps/B", raw >> 16);
        prop_assert_eq!(parse_per_byte(&text, TimeUnit::Ns, 16), Ok(raw), "{}", text);
    }

    #[test]
    fn decimal_sizes_are_exact(
        n in 0u64..1_000_000_000_000_000_000,
        k in 0u32..8,
        unit in 0usize..16,
    ) {
        let (u, mult) = SIZE_UNIT_TEXTS[unit];
        let text = format!("{}{u}", decimal_text(n, k));
        let num = n as u128 * mult as u128;
        let den = 10u128.pow(k);
        let got = parse_size(&text, SizeRules::COMMAND_LINE);
        if num.is_multiple_of(den) && num / den <= u64::MAX as u128 {
            prop_assert_eq!(got, Ok((num / den) as u64), "{}", text);
        } else {
            prop_assert!(got.is_err(), "{} -> {:?}", text, got);
        }
    }

    #[test]
    fn command_line_sizes_accept_what_floats_accepted(
        n in 0u64..1 << 30,
        k in 0u32..5,
        unit in 0usize..15,
    ) {
        let (u, _) = SIZE_UNIT_TEXTS[unit];
        let text = format!("{}{u}", decimal_text(n, k));
        // Beyond 2^36 bytes floating point could call a fraction of 10^-4 whole (`997254.693GiB`
        // is 1070794073054380.032 bytes).
        if let Some(old) = old_cli_size(&text).filter(|&b| b < 1 << 36) {
            prop_assert_eq!(parse_size(&text, SizeRules::COMMAND_LINE), Ok(old), "{}", text);
        }
    }

    #[test]
    fn command_line_times_accept_what_floats_accepted(
        n in 0u64..1 << 40,
        k in 0u32..10,
        e in prop_oneof![Just(None), (-6i32..7).prop_map(Some)],
        unit in prop::sample::select(vec!["", "ps", "ns", "us", "µs", "ms", "s", " ns"]),
    ) {
        let exp = e.map(|e| format!("e{e}")).unwrap_or_default();
        let text = format!("{}{exp}{unit}", decimal_text(n, k));
        if let Some(old) = old_cli_time(&text) {
            let new = parse_time(&text, TimeRules::COMMAND_LINE);
            prop_assert!(new.is_ok(), "{} was {} ps, now {:?}", text, old, new);
            // Floating point may round an exact half either way, and is off by its precision.
            let slack = (old as f64 * 4.0 * f64::EPSILON).max(1.0);
            let diff = new.clone().unwrap().abs_diff(old) as f64;
            prop_assert!(diff <= slack, "{} was {} ps, now {:?}", text, old, new);
        }
    }
}
