//! Capture formats and their detection from the first lines of a file.

use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::str::FromStr;

use crate::error::CalibError;
use crate::input::{head_lines, lines_of, Lines};
use crate::units::{excerpt, parse_c_double};

/// The capture formats the importers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Per-sample ping-pong file of the cloud_noise Netgauge fork (`-f FILE`): `#size\trtt` header
    /// repeated per run, rows `<size bytes>\t<RTT/2 us>`. Read with [`crate::read_pingpong`].
    PingPong,
    /// Selfish-detour output of `-x noise` (`-o FILE`), possibly several appended runs. Read with
    /// [`crate::read_selfish`].
    Selfish,
    /// Fixed Work Quantum output of `-x noise -e fwq`. Read with [`crate::read_quanta`].
    Fwq,
    /// Fixed Time Quantum output of `-x noise -e ftq`. Read with [`crate::read_quanta`].
    Ftq,
    /// LogGP fit of `-x loggp` (`-o FILE`). Read with [`crate::read_loggp`].
    LogGp,
    /// Per-size summary of the `one_one` pattern (`-o FILE`, columns A..Q). Read with
    /// [`crate::read_summary`].
    Summary,
    /// Raw per-core file of sysjitter (`--raw PREFIX` writes `PREFIX.<core>`). Read with
    /// [`crate::read_sysjitter_raw`].
    SysjitterRaw,
    /// Standard output of upstream Netgauge's `-x distrtt` (round trips in timer ticks). Read with
    /// [`crate::read_distrtt`].
    DistRtt,
}

impl Format {
    /// Every format, in the order `--format` help lists them.
    pub const ALL: [Format; 8] = [
        Format::PingPong,
        Format::Selfish,
        Format::Fwq,
        Format::Ftq,
        Format::LogGp,
        Format::Summary,
        Format::SysjitterRaw,
        Format::DistRtt,
    ];

    /// The `--format` name.
    pub fn name(self) -> &'static str {
        match self {
            Format::PingPong => "pingpong",
            Format::Selfish => "selfish",
            Format::Fwq => "fwq",
            Format::Ftq => "ftq",
            Format::LogGp => "loggp",
            Format::Summary => "summary",
            Format::SysjitterRaw => "sysjitter",
            Format::DistRtt => "distrtt",
        }
    }

    /// The indefinite article for [`Format::description`] ("a" or "an").
    pub fn article(self) -> &'static str {
        match self {
            Format::Fwq | Format::Ftq => "an",
            _ => "a",
        }
    }

    /// A short description for messages.
    pub fn description(self) -> &'static str {
        match self {
            Format::PingPong => "per-sample ping-pong (`#size\\trtt`)",
            Format::Selfish => "selfish-detour (`-x noise`)",
            Format::Fwq => "FWQ (`-x noise -e fwq`)",
            Format::Ftq => "FTQ (`-x noise -e ftq`)",
            Format::LogGp => "LogGP fit (`-x loggp`)",
            Format::Summary => "one_one summary (`-o`, columns A..Q)",
            Format::SysjitterRaw => "sysjitter raw (`--raw`)",
            Format::DistRtt => "distrtt stdout (`-x distrtt`)",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error of [`Format::from_str`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown capture format `{0}`; expected one of: pingpong, selfish, fwq, ftq, loggp, summary, sysjitter, distrtt")]
pub struct UnknownFormatName(pub String);

impl FromStr for Format {
    type Err = UnknownFormatName;
    fn from_str(s: &str) -> Result<Format, UnknownFormatName> {
        let lower = s.trim().to_ascii_lowercase();
        Ok(match lower.as_str() {
            "pingpong" | "ping-pong" | "netgauge" | "latency" | "bandwidth" => Format::PingPong,
            "selfish" | "noise" | "osnoise" => Format::Selfish,
            "fwq" => Format::Fwq,
            "ftq" => Format::Ftq,
            "loggp" => Format::LogGp,
            "summary" | "one_one" => Format::Summary,
            "sysjitter" | "sysjitter-raw" => Format::SysjitterRaw,
            "distrtt" => Format::DistRtt,
            _ => return Err(UnknownFormatName(s.to_string())),
        })
    }
}

/// `Err(WrongFormat)` when the header (`#`) line `t`, line `line` of `path`, is one of another
/// format than `expected` (a capture of the wrong kind given to an importer).
pub(crate) fn expect_header(
    path: &str,
    line: u64,
    t: &str,
    expected: Format,
) -> Result<(), CalibError> {
    match sniff_header(t) {
        Some(actual) if actual != expected => Err(CalibError::WrongFormat {
            path: path.to_string(),
            line,
            expected,
            actual,
            found: excerpt(t),
        }),
        _ => Ok(()),
    }
}

/// What one header (`#`) line says about the format, if anything decisive.
pub(crate) fn sniff_header(line: &str) -> Option<Format> {
    let t = line.trim();
    let body = t.trim_start_matches('#').trim();
    if t.starts_with('#') {
        let mut words = body.split_whitespace();
        if words.next() == Some("size") && words.next() == Some("rtt") && words.next().is_none() {
            return Some(Format::PingPong);
        }
    }
    if let Some(m) = body.strip_prefix("Benchmark Method:") {
        return match m.trim() {
            "selfish" => Some(Format::Selfish),
            "fwq" => Some(Format::Fwq),
            "ftq" => Some(Format::Ftq),
            _ => None,
        };
    }
    if body.starts_with("Selfish Benchmark") {
        return Some(Format::Selfish);
    }
    if body.starts_with("Fixed Work Quantum Benchmark") {
        return Some(Format::Fwq);
    }
    if body.starts_with("Fixed Time Quantum Benchmark") {
        return Some(Format::Ftq);
    }
    if body.starts_with("size n PRTT(1,0,s)") {
        return Some(Format::LogGp);
    }
    if t.starts_with("##")
        && (body.starts_with("Netgauge v") || body.starts_with("A...message size"))
    {
        return Some(Format::Summary);
    }
    if body.starts_with("cpu_mhz:") {
        return Some(Format::SysjitterRaw);
    }
    if body.starts_with("Info:") && body.contains("-x distrtt") {
        return Some(Format::DistRtt);
    }
    None
}

/// The shape of a data (non-`#`) line, for headerless files.
fn sniff_data(line: &str) -> Option<Format> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let is_int = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let is_num = |s: &str| parse_c_double(s).is_some();
    match fields.len() {
        20 if fields[1] == "-" => Some(Format::Summary),
        // `A - B C D E (F G) - ...` with the parentheses glued to the numbers
        _ if fields.len() >= 18 && fields.get(1) == Some(&"-") && line.contains('(') => {
            Some(Format::Summary)
        }
        11 if is_int(fields[0]) && is_int(fields[1]) && fields[2..].iter().all(|f| is_num(f)) => {
            Some(Format::LogGp)
        }
        2 if is_int(fields[0]) && fields[1].contains('.') && is_num(fields[1]) => {
            Some(Format::PingPong)
        }
        2 if fields[0].contains('.') && is_num(fields[0]) && is_num(fields[1]) => {
            Some(Format::Selfish)
        }
        4 if is_int(fields[0])
            && is_int(fields[1])
            && is_int(fields[2])
            && fields[3].contains('.') =>
        {
            Some(Format::DistRtt)
        }
        _ => None,
    }
}

/// How many lines [`detect`] looks at.
pub const SNIFF_LINES: usize = 64;

/// Detects the format of a capture from its first lines (xz input is recognised by its magic bytes
/// and decompressed first). Header lines decide when present; headerless files are recognised by
/// the shape of their rows.
pub fn detect(path: impl AsRef<Path>) -> Result<Format, CalibError> {
    let mut lines = lines_of(path.as_ref())?;
    detect_lines(&mut lines)
}

/// [`detect`] for an already opened reader; `name` is used in messages.
pub fn detect_reader<R: BufRead + 'static>(reader: R, name: &str) -> Result<Format, CalibError> {
    let mut lines = crate::input::lines_from_reader(reader, name)?;
    detect_lines(&mut lines)
}

pub(crate) fn detect_lines(lines: &mut Lines) -> Result<Format, CalibError> {
    let path = lines.path().to_string();
    let head = head_lines(lines, SNIFF_LINES)?;
    if head.iter().all(|l| l.trim().is_empty()) {
        return Err(CalibError::Empty {
            path,
            expected: "a Netgauge capture".into(),
        });
    }
    if head
        .iter()
        .any(|l| l.contains('\0') || l.contains('\u{FFFD}'))
    {
        return Err(CalibError::UnknownFormat {
            path,
            detail: "binary data, not text (a Netgauge capture is text, plain or xz-compressed)"
                .into(),
        });
    }
    let mut data_guess: Option<Format> = None;
    let mut stdout_log = false;
    for line in &head {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(f) = sniff_header(t) {
            return Ok(f);
        }
        if t.starts_with("# Info:") || t.starts_with("Testing ") || t.contains(" bytes \t -> ") {
            stdout_log = true;
            continue;
        }
        if t.starts_with('#') {
            continue;
        }
        if data_guess.is_none() {
            data_guess = sniff_data(t);
            if data_guess.is_none() {
                break;
            }
        }
    }
    if let Some(f) = data_guess {
        // A distrtt-shaped row inside a stdout log without the distrtt banner is still distrtt.
        return Ok(f);
    }
    let first = head
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| excerpt(l.trim()))
        .unwrap_or_default();
    let detail = if stdout_log {
        format!(
            "line 1 is `{first}`: this is Netgauge's standard output log, not a data file; the data is in the file given with -o (summary, selfish, loggp) or -f (per-sample ping-pong)"
        )
    } else {
        format!(
            "no known header or row shape in the first {} lines (line 1 is `{first}`); expected one of: {}",
            head.len(),
            Format::ALL
                .iter()
                .map(|f| f.description())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(CalibError::UnknownFormat { path, detail })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
        }
        assert_eq!(
            "xml".parse::<Format>().unwrap_err().to_string(),
            "unknown capture format `xml`; expected one of: pingpong, selfish, fwq, ftq, loggp, summary, sysjitter, distrtt"
        );
    }

    #[test]
    fn header_lines() {
        assert_eq!(sniff_header("#size\trtt"), Some(Format::PingPong));
        assert_eq!(sniff_header("# Benchmark Method: fwq"), Some(Format::Fwq));
        assert_eq!(sniff_header("# Benchmark Method: quux"), None);
        assert_eq!(
            sniff_header(
                "# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)"
            ),
            Some(Format::LogGp)
        );
        assert_eq!(
            sniff_header("## Netgauge v2.4.6 - mode mpi - 2 processes"),
            Some(Format::Summary)
        );
        assert_eq!(sniff_header("# cpu_mhz: 2000"), Some(Format::SysjitterRaw));
        assert_eq!(sniff_header("# Sysname : Linux"), None);
    }

    #[test]
    fn data_lines() {
        assert_eq!(sniff_data("1\t2.780000"), Some(Format::PingPong));
        assert_eq!(sniff_data("0.00\t5960.35"), Some(Format::Selfish));
        assert_eq!(sniff_data("0 101208 71580 0.100188"), Some(Format::DistRtt));
        assert_eq!(
            sniff_data(
                "1 10 3.814000 16.450000 49.591000 1.907000 1.272333 1.509889 -nan -nan -nan"
            ),
            Some(Format::LogGp)
        );
        assert_eq!(
            sniff_data("1 - 0.26 0.60 0.39 30.02 (2.11 1) - 0.54 1.22 0.80 35.82 (2.65 2) - 0.22 6.55 9.96 14.77"),
            Some(Format::Summary)
        );
        assert_eq!(sniff_data("hello world"), None);
    }
}
