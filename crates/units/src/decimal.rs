//! Decimal numbers as written, and their exact scaling by a unit.
//!
//! A [`Decimal`] borrows its digits from the input; [`Decimal::scale`] multiplies it by a whole
//! number and divides it by a power of ten without floating point, so `0.1ns` is exactly 100ps and
//! `1.5KiB` exactly 1536 bytes.

/// A decimal number as written: an optional sign, integer and fraction digits, and a decimal
/// exponent (`2.5`, `16`, `.5`, `1e-3`, `-0`).
#[derive(Clone, Copy, Debug)]
pub struct Decimal<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    exp: i64,
}

/// Exponents beyond this are clamped: any non-zero number scaled by them overflows or rounds to 0.
const EXP_LIMIT: i64 = 1_000_000_000;
/// A fraction whose first non-zero digit comes this late is below 10⁻⁶⁰: it only decides whether a
/// value is whole, never its rounding.
const TINY_DIGITS: i64 = 60;
const TOP_DIGITS: u128 = 10_000_000_000_000_000_000; // 10^19: the fraction digits kept exactly

fn digits_at(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && b[p].is_ascii_digit() {
        p += 1;
    }
    p
}

/// Scans `[0-9]+ ( "." [0-9]+ )?` at `p` (the GOAL text form: no sign, no exponent, a point only
/// between digits). Returns the number and the position after it.
pub fn scan_decimal(b: &[u8], p: usize) -> Option<(Decimal<'_>, usize)> {
    let ie = digits_at(b, p);
    if ie == p {
        return None;
    }
    let mut frac: &[u8] = &[];
    let mut q = ie;
    if ie + 1 < b.len() && b[ie] == b'.' && b[ie + 1].is_ascii_digit() {
        q = digits_at(b, ie + 1);
        frac = &b[ie + 1..q];
    }
    let d = Decimal {
        negative: false,
        int: &b[p..ie],
        frac,
        exp: 0,
    };
    Some((d, q))
}

impl<'a> Decimal<'a> {
    /// Scans a number at the start of `s` in the form Rust and C read floating-point numbers:
    /// `[+-]? ( digits [ "." digits? ] | "." digits ) ( [eE] [+-]? digits )?`. Returns the number
    /// and the byte length it takes.
    pub fn scan(s: &'a str) -> Option<(Decimal<'a>, usize)> {
        let b = s.as_bytes();
        let mut p = 0;
        let negative = matches!(b.first(), Some(b'-'));
        if matches!(b.first(), Some(b'-' | b'+')) {
            p = 1;
        }
        let ie = digits_at(b, p);
        let int = &b[p..ie];
        let mut q = ie;
        let mut frac: &[u8] = &[];
        if b.get(ie) == Some(&b'.') {
            q = digits_at(b, ie + 1);
            frac = &b[ie + 1..q];
        }
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let mut exp = 0i64;
        if matches!(b.get(q), Some(b'e' | b'E')) {
            let mut e = q + 1;
            let eneg = b.get(e) == Some(&b'-');
            if matches!(b.get(e), Some(b'-' | b'+')) {
                e += 1;
            }
            let ee = digits_at(b, e);
            if ee > e {
                for &c in &b[e..ee] {
                    exp = (exp * 10 + (c - b'0') as i64).min(EXP_LIMIT);
                }
                if eneg {
                    exp = -exp;
                }
                q = ee;
            }
        }
        let d = Decimal {
            negative,
            int,
            frac,
            exp,
        };
        Some((d, q))
    }

    /// Whether a minus sign was written (`-0` is negative and zero).
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Whether every digit is zero.
    pub fn is_zero(&self) -> bool {
        self.int.iter().chain(self.frac).all(|&c| c == b'0')
    }

    fn digit(&self, j: i64) -> u8 {
        let n = self.int.len() as i64;
        if j < 0 {
            0
        } else if j < n {
            self.int[j as usize] - b'0'
        } else {
            self.frac[(j - n) as usize] - b'0'
        }
    }

    /// `self × numer / 10^denom_exp`, exactly: the integer part and what is needed to decide
    /// whether the value is whole and how it rounds. The sign is ignored.
    pub fn scale(&self, numer: u64, denom_exp: u32) -> Scaled {
        let n_int = self.int.len() as i64;
        let len = n_int + self.frac.len() as i64;
        // Fast path: a plain integer (every GOAL message size).
        if self.frac.is_empty() && self.exp == 0 && denom_exp == 0 && self.int.len() <= 19 {
            let mut v: u128 = 0;
            for &c in self.int {
                v = v * 10 + (c - b'0') as u128;
            }
            return Scaled::whole(v * numer as u128);
        }
        let Some(first) = (0..len).find(|&j| self.digit(j) != 0) else {
            return Scaled::whole(0);
        };
        // Digits before the decimal point once the exponent and the divisor are applied.
        let point = n_int + self.exp - denom_exp as i64;
        let mut int: u128 = 0;
        for j in first..point {
            int = int * 10 + if j < len { self.digit(j) as u128 } else { 0 };
            if int > u64::MAX as u128 {
                return Scaled::OVERFLOW;
            }
        }
        let mut s = Scaled::whole(int * numer as u128);
        if point >= len {
            return s;
        }
        if first - point >= TINY_DIGITS {
            s.sticky = true;
            return s;
        }
        // The fraction digits times `numer`, right to left with carry; keep the first 19 digits.
        let (mut carry, mut top) = (0u128, 0u128);
        for j in (point.max(first)..len).rev() {
            let t = self.digit(j) as u128 * numer as u128 + carry;
            carry = t / 10;
            s.sticky |= top % 10 != 0;
            top = (t % 10) * (TOP_DIGITS / 10) + top / 10;
        }
        // Leading zeros of the fraction (between the point and the first non-zero digit).
        for _ in point..point.max(first) {
            s.sticky |= top % 10 != 0;
            top = carry % 10 * (TOP_DIGITS / 10) + top / 10;
            carry /= 10;
        }
        s.floor += carry;
        s.top = top as u64;
        s
    }
}

/// A scaled [`Decimal`]: its integer part and a summary of its fraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaled {
    /// The integer part (`u128::MAX` if it exceeds `u64::MAX`).
    floor: u128,
    /// The first 19 fraction digits, as an integer (the fraction is about `top / 10^19`).
    top: u64,
    /// Whether any fraction digit after the 19th is non-zero.
    sticky: bool,
}

/// Why a scaled value is not a `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleError {
    /// It has a fractional part.
    NotWhole,
    /// It exceeds `u64::MAX`.
    Overflow,
}

impl Scaled {
    const OVERFLOW: Scaled = Scaled {
        floor: u128::MAX,
        top: 0,
        sticky: false,
    };

    fn whole(v: u128) -> Scaled {
        Scaled {
            floor: v,
            top: 0,
            sticky: false,
        }
    }

    fn fits(v: u128) -> Result<u64, ScaleError> {
        u64::try_from(v).map_err(|_| ScaleError::Overflow)
    }

    /// The value if it is a whole number that fits a `u64`.
    pub fn exact(self) -> Result<u64, ScaleError> {
        let v = Self::fits(self.floor)?;
        if self.top != 0 || self.sticky {
            return Err(ScaleError::NotWhole);
        }
        Ok(v)
    }

    /// The value rounded to the nearest integer, halves up.
    pub fn round(self) -> Result<u64, ScaleError> {
        Self::fits(self.floor + u128::from(self.round_up()))
    }

    fn round_up(&self) -> bool {
        self.top as u128 >= TOP_DIGITS / 2
    }

    /// The value rounded to the nearest integer (halves up) if that changes it by at most one
    /// part per million of the value (of 1 for values below 1): `1.0000004us` is 1000000ps,
    /// `0.5ps` is not whole.
    pub fn round_within_ppm(self) -> Result<u64, ScaleError> {
        let w = Self::fits(self.floor)? as u128;
        if self.top == 0 && !self.sticky {
            return Ok(w as u64);
        }
        // The fraction f lies in [top, top + sticky] / 10^19; the rounding error is f or 1 - f.
        let lo = self.top as u128;
        let hi = lo + u128::from(self.sticky);
        const M: u128 = 1_000_000;
        let ok = if w >= M / 2 {
            true // the error is at most 0.5 <= value / 10^6
        } else if self.round_up() {
            // 10^6 (1 - f) <= max(w + f, 1)
            if w == 0 {
                lo * M >= (M - 1) * TOP_DIGITS
            } else {
                (M - w) * TOP_DIGITS <= (M + 1) * lo
            }
        } else if w == 0 {
            hi * M <= TOP_DIGITS // 10^6 f <= 1
        } else {
            (M - 1) * hi <= w * TOP_DIGITS // 10^6 f <= w + f
        };
        if !ok {
            return Err(ScaleError::NotWhole);
        }
        self.round()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Decimal<'_> {
        let (d, n) = Decimal::scan(s).unwrap();
        assert_eq!(n, s.len(), "{s}");
        d
    }

    #[test]
    fn scanning() {
        for (s, len) in [
            ("12", 2),
            ("1.5x", 3),
            (".5", 2),
            ("5.", 2),
            ("5.ns", 2),
            ("-1e-3us", 5),
            ("+2E+2", 5),
            ("1e", 1),
            ("1es", 1),
            ("3 parsecs", 1),
        ] {
            assert_eq!(Decimal::scan(s).map(|d| d.1), Some(len), "{s}");
        }
        for s in ["", ".", "-", "+.e5", "e5", "ns", "inf"] {
            assert!(Decimal::scan(s).is_none(), "{s}");
        }
        assert_eq!(scan_decimal(b"x 16b", 2).map(|d| d.1), Some(4));
        assert_eq!(scan_decimal(b"1.5KiB", 0).map(|d| d.1), Some(3));
        assert_eq!(scan_decimal(b"5.b", 0).map(|d| d.1), Some(1));
        assert!(scan_decimal(b".5", 0).is_none());
    }

    #[test]
    fn exact_scaling() {
        assert_eq!(dec("1.5").scale(1024, 0).exact(), Ok(1536));
        assert_eq!(dec("2.5").scale(1_000_000, 0).exact(), Ok(2_500_000));
        assert_eq!(dec("1000").scale(1, 3).exact(), Ok(1));
        assert_eq!(dec("1500").scale(1, 2).exact(), Ok(15));
        assert_eq!(dec("1501").scale(1, 3).exact(), Err(ScaleError::NotWhole));
        assert_eq!(dec("1e-3").scale(1_000_000, 0).exact(), Ok(1000));
        assert_eq!(dec("0.000").scale(7, 5).exact(), Ok(0));
        assert_eq!(dec("0e999999999999").scale(7, 0).exact(), Ok(0));
        assert_eq!(
            dec("1e99999999999").scale(1, 0).exact(),
            Err(ScaleError::Overflow)
        );
        assert_eq!(
            dec("1e-99999999999").scale(1 << 40, 0).exact(),
            Err(ScaleError::NotWhole)
        );
        assert_eq!(
            dec("18446744073709551615").scale(1, 0).exact(),
            Ok(u64::MAX)
        );
        assert_eq!(
            dec("18446744073709551616").scale(1, 0).exact(),
            Err(ScaleError::Overflow)
        );
        assert_eq!(
            dec("16777216").scale(1 << 40, 0).exact(),
            Err(ScaleError::Overflow)
        );
        // 2^-40 TiB is one byte: 40 fraction digits, all needed.
        assert_eq!(
            dec("0.0000000000009094947017729282379150390625")
                .scale(1 << 40, 0)
                .exact(),
            Ok(1)
        );
        assert_eq!(
            dec("0.0000000000009094947017729282379150390626")
                .scale(1 << 40, 0)
                .exact(),
            Err(ScaleError::NotWhole)
        );
    }

    #[test]
    fn rounding() {
        assert_eq!(dec("0.1").scale(1 << 16, 0).round(), Ok(6554)); // 6553.6
        assert_eq!(dec("0.5").scale(1, 0).round(), Ok(1));
        assert_eq!(dec("0.4999999999999999999999").scale(1, 0).round(), Ok(0));
        assert_eq!(dec("1e-70").scale(1, 0).round(), Ok(0));
        assert_eq!(
            dec("0.0000000000000000000000001").scale(1, 0).round(),
            Ok(0)
        );
        assert_eq!(
            dec("1.0000005").scale(1_000_000, 0).round_within_ppm(),
            Ok(1_000_001)
        );
        assert_eq!(
            dec("1.2345678").scale(1_000_000, 0).round_within_ppm(),
            Ok(1_234_568)
        );
        assert_eq!(
            dec("0.5").scale(1, 0).round_within_ppm(),
            Err(ScaleError::NotWhole)
        );
        assert_eq!(dec("1.000001").scale(1, 0).round_within_ppm(), Ok(1));
        assert_eq!(
            dec("1.0000011").scale(1, 0).round_within_ppm(),
            Err(ScaleError::NotWhole)
        );
        assert_eq!(dec("0.000001").scale(1, 0).round_within_ppm(), Ok(0));
        assert_eq!(dec("0.999999").scale(1, 0).round_within_ppm(), Ok(1));
        assert_eq!(
            dec("0.999998").scale(1, 0).round_within_ppm(),
            Err(ScaleError::NotWhole)
        );
        assert_eq!(
            dec("1e-30").scale(1_000_000_000_000, 0).round_within_ppm(),
            Ok(0)
        );
    }
}
