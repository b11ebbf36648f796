//! Measured collectives: the per-iteration, per-rank times of real MPI runs of Schedgen
//! schedules, as the "Noise in the Clouds" artifact wrote them (its validation data).
//!
//! # Format
//! One file per benchmark, named `<pattern>_<nodes>_<bytes>.csv` ([`BenchmarkName`]), plain
//! text or xz:
//!
//! ```text
//! #MessageSize Rank0Time(us) Rank1Time(us) Rank2Time(us) Rank3Time(us)
//! 16 3.200000 2.700000 4.600000 3.600000
//! 16 3.500000 3.000000 3.100000 3.700000
//! ```
//!
//! Fields are separated by blanks (trailing blanks are allowed). The header names one column
//! per rank, `Rank0Time(us)` … `Rank<P-1>Time(us)`, P being the file name's node count; every
//! following row is one iteration: the message size (the file name's bytes) and the time each
//! rank spent in the collective, in µs (decimal, converted to whole picoseconds exactly: the
//! programs print `%f`, i.e. 6 decimals). Blank lines are skipped.
//!
//! What the programs measured (the paper's `goal2mpi.py`): per iteration `usleep(1)`,
//! `MPI_Barrier`, `MPI_Wtime`, the schedule's sends (`MPI_Send`), receives (`MPI_Irecv` posted
//! up front, `MPI_Wait` before what depends on them) and calcs (a busy wait of the calc's
//! value in ns), `MPI_Wtime`. An iteration's time is the **maximum over ranks** of its row
//! ([`MeasuredCollective::iteration_max_ps`]), as the paper compared it.
//!
//! Every problem is a [`MeasuredError`] naming the file, line and column and what was expected
//! there; a file in another known format (a Netgauge capture, say) is named as such.

use std::fmt;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use loggops_units::Decimal;

use crate::error::CalibError;
use crate::format::{detect, Format};

/// The benchmark programs of the measured data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MeasuredPattern {
    /// Schedgen `nwaydissemination` (fan-out 1) with its reduction calcs: each `calc D` is a
    /// busy wait of D ns in the program.
    NwayDissemination,
    /// The same schedule with the calcs skipped (`goal2mpi --skip_compute`): the paper's small
    /// allreduce.
    NwayDisseminationNocompute,
    /// The paper's Schedgen `pipelinedring`, one pass, segments of ⌊bytes/nodes⌋ bytes.
    PipelinedRing,
    /// The paper's Schedgen `binomialtreebcast` from rank 0 (its sends serialised).
    BinomialTreeBcast,
    /// Schedgen `binarytreebcast` from rank 0.
    BinaryTreeBcast,
    /// Schedgen `linear_alltoall`.
    LinearAlltoall,
}

impl MeasuredPattern {
    pub const ALL: [MeasuredPattern; 6] = [
        MeasuredPattern::NwayDissemination,
        MeasuredPattern::NwayDisseminationNocompute,
        MeasuredPattern::PipelinedRing,
        MeasuredPattern::BinomialTreeBcast,
        MeasuredPattern::BinaryTreeBcast,
        MeasuredPattern::LinearAlltoall,
    ];

    /// The name in file names.
    pub fn name(self) -> &'static str {
        match self {
            MeasuredPattern::NwayDissemination => "nwaydissemination",
            MeasuredPattern::NwayDisseminationNocompute => "nwaydissemination_nocompute",
            MeasuredPattern::PipelinedRing => "pipelinedring",
            MeasuredPattern::BinomialTreeBcast => "binomialtreebcast",
            MeasuredPattern::BinaryTreeBcast => "binarytreebcast",
            MeasuredPattern::LinearAlltoall => "linear_alltoall",
        }
    }

    /// The known names, comma separated (for messages).
    pub fn known_names() -> String {
        MeasuredPattern::ALL.map(|p| p.name()).join(", ")
    }

    fn from_name(s: &str) -> Option<MeasuredPattern> {
        MeasuredPattern::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl fmt::Display for MeasuredPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the paper's programs implemented a schedule (`goal2mpi.py`): the same schedule in all
/// three, so a simulation answers all three (as the paper compared them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Variant {
    /// `MPI_Send`, receives posted with `MPI_Irecv` and completed with `MPI_Wait`.
    #[default]
    Blocking,
    /// `_test`: completions polled with `MPI_Test`.
    Test,
    /// `_nbsend`: sends with `MPI_Isend` and `MPI_Wait`.
    NbSend,
}

impl Variant {
    /// The suffix after the pattern in file names (empty for the blocking programs).
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Blocking => "",
            Variant::Test => "_test",
            Variant::NbSend => "_nbsend",
        }
    }
}

/// What a measured file's name says: `<pattern>[_test|_nbsend]_<nodes>_<bytes>.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BenchmarkName {
    pub pattern: MeasuredPattern,
    pub variant: Variant,
    pub nodes: u32,
    pub bytes: u64,
}

impl BenchmarkName {
    /// Parses a file name (with or without directories, `.csv` and `.xz` suffixes).
    pub fn parse(file_name: &str) -> Result<BenchmarkName, String> {
        let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
        let stem = base.strip_suffix(".xz").unwrap_or(base);
        let Some(stem) = stem.strip_suffix(".csv") else {
            return Err("the name does not end in `.csv`".into());
        };
        let mut parts = stem.rsplitn(3, '_');
        let (Some(bytes), Some(nodes), Some(pattern)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err("expected two `_`-separated numbers after the pattern".into());
        };
        let (base, variant) = [Variant::Test, Variant::NbSend]
            .into_iter()
            .find_map(|v| pattern.strip_suffix(v.suffix()).map(|b| (b, v)))
            .unwrap_or((pattern, Variant::Blocking));
        let pattern = MeasuredPattern::from_name(base).ok_or_else(|| {
            format!(
                "unknown pattern `{pattern}`; known patterns: {} (each optionally followed by `_test` or `_nbsend`)",
                MeasuredPattern::known_names()
            )
        })?;
        let nodes: u32 = match nodes.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(format!(
                    "`{nodes}` is not a node count (a whole number ≥ 1)"
                ))
            }
        };
        let bytes: u64 = match bytes.parse() {
            Ok(b) if b > 0 => b,
            _ => {
                return Err(format!(
                    "`{bytes}` is not a message size (a whole number of bytes ≥ 1)"
                ))
            }
        };
        Ok(BenchmarkName {
            pattern,
            variant,
            nodes,
            bytes,
        })
    }
}

impl fmt::Display for BenchmarkName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}_{}_{}",
            self.pattern,
            self.variant.suffix(),
            self.nodes,
            self.bytes
        )
    }
}

/// Why a measured file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeasuredError {
    /// Opening or reading the file (as for captures: missing, unreadable, compressed with
    /// something other than xz).
    #[error(transparent)]
    Io(#[from] CalibError),
    #[error("{path}: file name `{found}` is not `<pattern>_<nodes>_<bytes>.csv`: {detail}")]
    Name {
        path: String,
        found: String,
        detail: String,
    },
    #[error("{path}: the file is empty; expected a header `#MessageSize Rank0Time(us) ...` and one row per iteration")]
    Empty { path: String },
    #[error("{path}:{line}:{col}: expected {expected}, found {found}")]
    At {
        path: String,
        line: u64,
        col: usize,
        expected: String,
        found: String,
    },
    #[error("{path}:{line}:1: this is {article} {description} file, not a measured-collective CSV (expected a header `#MessageSize Rank0Time(us) ...`)", article = .format.article(), description = .format.description())]
    Foreign {
        path: String,
        line: u64,
        format: Format,
    },
    #[error(
        "{path}: a header but no iterations; expected one row per iteration after line {line}"
    )]
    NoIterations { path: String, line: u64 },
    #[error("{path}: a directory without `*.csv` files; expected measured files named `<pattern>_<nodes>_<bytes>.csv`{}", subdirs_hint(subdirs))]
    EmptyDirectory { path: String, subdirs: Vec<String> },
}

/// Names the subdirectories that hold measured files (a parent of run directories was given).
fn subdirs_hint(subdirs: &[String]) -> String {
    match subdirs {
        [] => String::new(),
        [one] => format!(" (its subdirectory {one} has them: give it)"),
        many => format!(
            " (its subdirectories have them: give one or several, e.g. {})",
            many.iter().take(3).cloned().collect::<Vec<_>>().join(" ")
        ),
    }
}

/// One measured benchmark: every iteration's per-rank times.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredCollective {
    /// The file as given.
    pub path: String,
    pub name: BenchmarkName,
    /// Per-rank times, iteration by iteration (`iterations × ranks`, row major), ps.
    times_ps: Vec<u64>,
}

impl MeasuredCollective {
    /// Number of ranks (the file name's node count, which the header matched).
    pub fn ranks(&self) -> u32 {
        self.name.nodes
    }

    /// Number of iterations (data rows).
    pub fn iterations(&self) -> usize {
        self.times_ps.len() / self.name.nodes as usize
    }

    /// The per-rank times of iteration `i`, ps.
    pub fn iteration(&self, i: usize) -> &[u64] {
        let p = self.name.nodes as usize;
        &self.times_ps[i * p..(i + 1) * p]
    }

    /// Each iteration's time as the paper compared it: the maximum over ranks, ps.
    pub fn iteration_max_ps(&self) -> Vec<u64> {
        self.times_ps
            .chunks_exact(self.name.nodes as usize)
            .map(|row| row.iter().copied().max().unwrap_or(0))
            .collect()
    }
}

/// Expands the given paths: a file is taken as it is, a directory stands for its `*.csv` and
/// `*.csv.xz` files (sorted by name). A directory without any is an error; a file reached
/// twice is kept once, where it first appears.
pub fn measured_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, MeasuredError> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let entries = std::fs::read_dir(p).map_err(|source| CalibError::Open {
            path: p.display().to_string(),
            source,
        })?;
        let mut found: Vec<PathBuf> = Vec::new();
        let mut subdirs: Vec<String> = Vec::new();
        for e in entries {
            let e = e.map_err(|source| CalibError::Read {
                path: p.display().to_string(),
                line: 0,
                source,
            })?;
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            // A measured file that is not a regular file (a broken link, say) is kept: reading
            // it fails with its reason, listed with the files that cannot be simulated.
            if (name.ends_with(".csv") || name.ends_with(".csv.xz")) && !path.is_dir() {
                found.push(path);
            } else if path.is_dir() && has_measured_files(&path) {
                subdirs.push(path.display().to_string());
            }
        }
        if found.is_empty() {
            subdirs.sort();
            return Err(MeasuredError::EmptyDirectory {
                path: p.display().to_string(),
                subdirs,
            });
        }
        found.sort();
        out.extend(found);
    }
    // A file named twice (directly and through its directory, say) is one measurement.
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
    Ok(out)
}

/// Whether directory `d` holds a `*.csv` or `*.csv.xz` file.
fn has_measured_files(d: &Path) -> bool {
    std::fs::read_dir(d).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.ends_with(".csv") || n.ends_with(".csv.xz")
        })
    })
}

/// Reads one measured file (plain or xz).
pub fn read_measured(path: &Path) -> Result<MeasuredCollective, MeasuredError> {
    let shown = path.display().to_string();
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let reader = crate::input::open_capture(path)?;
    let name = BenchmarkName::parse(&file_name).map_err(|detail| MeasuredError::Name {
        path: shown.clone(),
        found: file_name.clone(),
        detail,
    })?;
    read_measured_from(reader, &shown, name, Some(path))
}

/// Reads measured text from `reader`; `path` names it in messages, `name` is what its file
/// name says. `file` (if any) is sniffed for a known foreign format when the header is wrong.
pub fn read_measured_from<R: BufRead>(
    reader: R,
    path: &str,
    name: BenchmarkName,
    file: Option<&Path>,
) -> Result<MeasuredCollective, MeasuredError> {
    let p = name.nodes as usize;
    let at = |line: u64, col: usize, expected: String, found: String| MeasuredError::At {
        path: path.to_string(),
        line,
        col,
        expected,
        found,
    };
    let mut times_ps: Vec<u64> = Vec::new();
    let mut header_line = 0u64;
    let mut line_no = 0u64;
    for line in reader.split(b'\n') {
        line_no += 1;
        let bytes = line.map_err(|source| CalibError::Read {
            path: path.to_string(),
            line: line_no - 1,
            source,
        })?;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(at(
                line_no,
                1,
                "UTF-8 text".into(),
                "bytes that are not UTF-8 (a binary file?)".into(),
            ));
        };
        let text = text.strip_suffix('\r').unwrap_or(text);
        let fields = fields_of(text);
        if fields.is_empty() {
            continue;
        }
        if header_line == 0 {
            check_header(path, line_no, text, &fields, name, file)?;
            header_line = line_no;
            continue;
        }
        let end_col = text.chars().count() + 1;
        let (col, size) = fields[0];
        if size.parse::<u64>().ok() != Some(name.bytes) {
            return Err(at(
                line_no,
                col,
                format!(
                    "the message size {} (from the file name) as the row's first field",
                    name.bytes
                ),
                format!("`{size}`"),
            ));
        }
        for r in 0..p {
            let Some(&(col, tok)) = fields.get(1 + r) else {
                return Err(at(
                    line_no,
                    end_col,
                    format!("{} rank times after the message size (one per rank of Rank0Time(us) ... Rank{}Time(us))", p, p - 1),
                    format!("the end of the line after {r} of them"),
                ));
            };
            times_ps.push(parse_us(tok).ok_or_else(|| {
                at(
                    line_no,
                    col,
                    format!("the time of rank {r} in µs (a non-negative decimal such as 3.200000)"),
                    format!("`{tok}`"),
                )
            })?);
        }
        if let Some(&(col, tok)) = fields.get(1 + p) {
            return Err(at(
                line_no,
                col,
                format!("the end of the line after {p} rank times"),
                format!("`{tok}` (a rank time more than the {p} ranks of the header)"),
            ));
        }
    }
    if header_line == 0 {
        return Err(MeasuredError::Empty {
            path: path.to_string(),
        });
    }
    if times_ps.is_empty() {
        return Err(MeasuredError::NoIterations {
            path: path.to_string(),
            line: header_line,
        });
    }
    Ok(MeasuredCollective {
        path: path.to_string(),
        name,
        times_ps,
    })
}

/// Blank-separated fields with their 1-based character columns.
fn fields_of(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte, column)
    for (col, (i, c)) in text.char_indices().enumerate() {
        if c == ' ' || c == '\t' {
            if let Some((b, k)) = start.take() {
                out.push((k, &text[b..i]));
            }
        } else if start.is_none() {
            start = Some((i, col + 1));
        }
    }
    if let Some((b, k)) = start {
        out.push((k, &text[b..]));
    }
    out
}

/// A time in µs as whole ps (exact; `None` unless a plain non-negative decimal).
fn parse_us(tok: &str) -> Option<u64> {
    let (d, len) = Decimal::scan(tok)?;
    if len != tok.len() || d.is_negative() && !d.is_zero() {
        return None;
    }
    d.scale(1_000_000, 0).round().ok()
}

fn check_header(
    path: &str,
    line: u64,
    text: &str,
    fields: &[(usize, &str)],
    name: BenchmarkName,
    file: Option<&Path>,
) -> Result<(), MeasuredError> {
    let at = |col: usize, expected: String, found: String| MeasuredError::At {
        path: path.to_string(),
        line,
        col,
        expected,
        found,
    };
    let (col0, first) = fields[0];
    if first != "#MessageSize" {
        // Another known format (a Netgauge capture given by mistake)?
        if let Some(format) = file.and_then(|f| detect(f).ok()) {
            return Err(MeasuredError::Foreign {
                path: path.to_string(),
                line,
                format,
            });
        }
        let found = if first.parse::<f64>().is_ok() {
            format!("a data row `{}` (the header is missing)", shorten(text))
        } else {
            format!("`{first}`")
        };
        return Err(at(
            col0,
            "the header `#MessageSize Rank0Time(us) ...`".into(),
            found,
        ));
    }
    let p = name.nodes as usize;
    for r in 0..p {
        let want = format!("Rank{r}Time(us)");
        match fields.get(1 + r) {
            Some(&(_, tok)) if tok == want => {}
            Some(&(col, tok)) => {
                return Err(at(col, format!("the column `{want}`"), format!("`{tok}`")));
            }
            None => {
                return Err(at(
                    text.chars().count() + 1,
                    format!(
                        "{p} rank columns Rank0Time(us) ... Rank{}Time(us) (the file name says {p} nodes)",
                        p - 1
                    ),
                    format!("the end of the header after {r} of them"),
                ));
            }
        }
    }
    if let Some(&(col, tok)) = fields.get(1 + p) {
        return Err(at(
            col,
            format!(
                "the end of the header after Rank{}Time(us) (the file name says {p} nodes)",
                p - 1
            ),
            format!("`{tok}`"),
        ));
    }
    Ok(())
}

fn shorten(s: &str) -> String {
    let t: String = s.chars().take(40).collect();
    if t.len() < s.len() {
        format!("{t}...")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> Result<MeasuredCollective, MeasuredError> {
        let n = BenchmarkName::parse(name).unwrap();
        read_measured_from(text.as_bytes(), name, n, None)
    }

    #[test]
    fn names_parse() {
        let n = BenchmarkName::parse("dir/nwaydissemination_nocompute_16_16384.csv").unwrap();
        assert_eq!(n.pattern, MeasuredPattern::NwayDisseminationNocompute);
        assert_eq!((n.nodes, n.bytes), (16, 16384));
        assert_eq!(n.to_string(), "nwaydissemination_nocompute_16_16384");
        let n = BenchmarkName::parse("linear_alltoall_4_16777216.csv.xz").unwrap();
        assert_eq!(n.pattern, MeasuredPattern::LinearAlltoall);
        let n = BenchmarkName::parse("nwaydissemination_nocompute_nbsend_4_16.csv").unwrap();
        assert_eq!(n.pattern, MeasuredPattern::NwayDisseminationNocompute);
        assert_eq!(n.variant, Variant::NbSend);
        assert_eq!(n.to_string(), "nwaydissemination_nocompute_nbsend_4_16");
        assert!(BenchmarkName::parse("pipelinedring_polling_4_16.csv")
            .unwrap_err()
            .contains("unknown pattern `pipelinedring_polling`"));
        assert!(BenchmarkName::parse("ring_4_16.csv")
            .unwrap_err()
            .contains("unknown pattern `ring`"));
        assert!(BenchmarkName::parse("pipelinedring_0_16.csv").is_err());
        assert!(BenchmarkName::parse("pipelinedring_4_16.txt").is_err());
        assert!(BenchmarkName::parse("pipelinedring.csv").is_err());
    }

    #[test]
    fn rows_become_exact_picoseconds_and_the_maximum_over_ranks() {
        let m = read(
            "pipelinedring_2_16.csv",
            "#MessageSize Rank0Time(us) Rank1Time(us) \n16 3.200000 2.700000 \n\n16 0.1 12 \r\n",
        )
        .unwrap();
        assert_eq!(m.iterations(), 2);
        assert_eq!(m.iteration(0), &[3_200_000, 2_700_000]);
        assert_eq!(m.iteration(1), &[100_000, 12_000_000]);
        assert_eq!(m.iteration_max_ps(), vec![3_200_000, 12_000_000]);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = |text: &str| {
            read("pipelinedring_2_16.csv", text)
                .unwrap_err()
                .to_string()
        };
        let h = "#MessageSize Rank0Time(us) Rank1Time(us)\n";
        assert_eq!(
            e(&format!("{h}16 1.0 x\n")),
            "pipelinedring_2_16.csv:2:8: expected the time of rank 1 in µs (a non-negative decimal such as 3.200000), found `x`"
        );
        assert_eq!(
            e(&format!("{h}32 1.0 2.0\n")),
            "pipelinedring_2_16.csv:2:1: expected the message size 16 (from the file name) as the row's first field, found `32`"
        );
        assert!(e(&format!("{h}16 1.0\n"))
            .starts_with("pipelinedring_2_16.csv:2:7: expected 2 rank times"));
        assert!(e(&format!("{h}16 1 2 3\n"))
            .starts_with("pipelinedring_2_16.csv:2:8: expected the end of the line"));
        assert!(e("#MessageSize Rank0Time(us)\n16 1\n")
            .starts_with("pipelinedring_2_16.csv:1:27: expected 2 rank columns"));
        assert!(e("#MessageSize Rank0Time(us) Rank2Time(us)\n")
            .starts_with("pipelinedring_2_16.csv:1:28: expected the column `Rank1Time(us)`"));
        assert!(e("16 1.0 2.0\n").contains("found a data row `16 1.0 2.0` (the header is missing)"));
        assert!(e(h).contains("a header but no iterations"));
        assert!(e("").contains("the file is empty"));
        assert!(e(&format!("{h}16 -1.0 2\n"))
            .starts_with("pipelinedring_2_16.csv:2:4: expected the time of rank 0"));
    }
}
