//! `--compat loggopsim`: LogGOPSim's stdout, line for line, minus its wall-clock
//! `PERFORMANCE:` line (LOGGOPSIM.md §9). This output is a contract used to check conformance.

use std::fmt::Write;

use loggops_engine::{Outcome, Params, Program};

/// Renders a run the way LogGOPSim prints it.
pub fn render<P: Program>(prog: &P, params: &Params, out: &Outcome, batchmode: bool) -> String {
    let p = prog.num_ranks();
    let mut s = String::new();
    // LogGOPSim's parameters are C ints; negative values given on the command line print as such.
    let int = |v: u64| v as i64 as i32;
    let _ = writeln!(
        s,
        "LogGP network backend; size: {p} ({} CPUs, {} NICs); L={}, o={} g={}, G={}, O={}, P={p}, S={}",
        prog.num_cpus().max(1),
        prog.num_nics().max(1),
        int(params.l),
        int(params.o),
        int(params.g),
        int(params.big_g.whole_units()),
        int(params.big_o.whole_units()),
        params.s as u32,
    );
    if out.has_queue_leftovers() {
        for l in &out.leftovers {
            if !l.unexpected.is_empty() {
                let _ = writeln!(
                    s,
                    "unexpected queue on host {} contains {} elements!",
                    l.rank,
                    l.unexpected.len()
                );
                for e in &l.unexpected {
                    let _ = writeln!(s, " src: {}, tag: {}", e.src as i32, e.tag as i32);
                }
            }
            if !l.posted.is_empty() {
                let _ = writeln!(
                    s,
                    "receive queue on host {} contains {} elements!",
                    l.rank,
                    l.posted.len()
                );
                for e in &l.posted {
                    let _ = writeln!(s, " src: {}, tag: {}", e.src as i32, e.tag as i32);
                }
            }
        }
        return s;
    }
    if p <= 16 && !batchmode {
        s.push_str("Times: \n");
        for (h, t) in out.finish.iter().enumerate() {
            let _ = writeln!(s, "Host {h}: {t}");
        }
    } else {
        let (max, host) = out.max();
        let _ = writeln!(
            s,
            "Maximum finishing time at host {host}: {max} ({} s)",
            fmt_g(max as f64 / 1e9)
        );
    }
    s
}

/// C's `%g` (and C++ ostream's default float format): 6 significant digits, trailing zeros
/// removed, exponent form when the exponent is below -4 or at least 6.
pub fn fmt_g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    // The exponent after rounding to 6 significant digits.
    let sci = format!("{:.5e}", v);
    let (mant, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("integer exponent");
    if !(-4..6).contains(&exp) {
        let mant = trim_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::fmt_g;

    #[test]
    fn percent_g() {
        assert_eq!(fmt_g(55900.0 / 1e9), "5.59e-05");
        assert_eq!(fmt_g(188908500.0 / 1e9), "0.188909");
        assert_eq!(fmt_g(4831871172.0 / 1e9), "4.83187");
        assert_eq!(fmt_g(80649376200.0 / 1e9), "80.6494");
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_g(0.0001), "0.0001");
        assert_eq!(fmt_g(999999.5), "1e+06");
    }
}
