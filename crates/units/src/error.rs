//! Why a size, duration or per-byte cost does not parse.

use std::fmt;

/// What a text was meant to be; it words the error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// A size in bytes (`512MiB`).
    Size,
    /// A duration (`21.064us`).
    Duration,
    /// A time per byte (`0.1ns`, `86ps/B`).
    PerByte,
}

impl Quantity {
    fn noun(self) -> &'static str {
        match self {
            Quantity::Size => "size",
            Quantity::Duration => "duration",
            Quantity::PerByte => "time per byte",
        }
    }

    fn example(self) -> &'static str {
        match self {
            Quantity::Size => "512MiB",
            Quantity::Duration => "21.064us",
            Quantity::PerByte => "0.1ns",
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// The size units every syntax accepts, as messages list them.
pub(crate) const SIZE_UNIT_LIST: &str = "b, B, KiB, MiB, GiB, TiB, kB, MB, GB or TB";
/// The time units, as messages list them.
pub(crate) const TIME_UNIT_LIST: &str = "ps, ns, us, ms or s";

/// Why a size, duration or per-byte cost could not be parsed. Every message quotes the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The text does not start with a number.
    #[error("`{text}` is not a {what} (a number and a unit, such as `{}`)", what.example())]
    NotANumber { text: String, what: Quantity },
    /// A number without a unit where a unit is required.
    #[error("`{text}` has no unit; write it as {}", no_unit_example(.text, *.what))]
    NoUnit { text: String, what: Quantity },
    /// A unit that is not known (or not accepted in this syntax).
    #[error("unknown {} unit `{unit}` in `{text}` ({})", unit_kind(*.what), unit_hint(.unit, *.what))]
    UnknownUnit {
        unit: String,
        text: String,
        what: Quantity,
    },
    /// A negative number.
    #[error("{what} `{text}` is negative")]
    Negative { text: String, what: Quantity },
    /// A value that is not a whole number of the unit it is counted in.
    #[error("`{text}` is not a whole number of {target}")]
    NotWhole { text: String, target: &'static str },
    /// A value beyond `u64::MAX` of the unit it is counted in.
    #[error("`{text}` is too large (at most {limit})")]
    Overflow { text: String, limit: String },
}

fn no_unit_example(text: &str, what: Quantity) -> String {
    match what {
        Quantity::Size => format!("`{text}B` (units: B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)"),
        _ => format!("`{text}ns` or `{text}us` (units: ps, ns, us, ms, s)"),
    }
}

fn unit_kind(what: Quantity) -> &'static str {
    match what {
        Quantity::Size => "size",
        _ => "time",
    }
}

fn unit_hint(unit: &str, what: Quantity) -> String {
    if what != Quantity::Size {
        return format!("use {TIME_UNIT_LIST}");
    }
    if unit.eq_ignore_ascii_case("kb") || unit.eq_ignore_ascii_case("kib") {
        "ambiguous: write `kB` for 1000 bytes or `KiB` for 1024 bytes".to_string()
    } else if crate::parse::is_size_unit_ignoring_case(unit) {
        format!("prefixes are case sensitive; use {SIZE_UNIT_LIST}")
    } else {
        format!("use {SIZE_UNIT_LIST}")
    }
}
