//! Error types: [`GenError`] for generated collectives, [`SchedError`] for schedule files.

use std::fmt;
use std::path::PathBuf;

use crate::collective::Collective;
use crate::units::format_size;

/// Why a collective cannot be generated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    #[error("unknown collective `{name}`; known collectives: {known}")]
    UnknownCollective { name: String, known: String },
    #[error("the number of ranks must be at least 1, got 0")]
    ZeroRanks,
    #[error("{pattern} needs a data size of at least 1B, got 0B")]
    ZeroSize { pattern: Collective },
    #[error("{pattern} needs a power-of-two number of ranks, got {p} (nearest: {below} or {above})", below = prev_pow2(*p), above = next_pow2(*p))]
    NotPowerOfTwo { pattern: Collective, p: u32 },
    #[error("{pattern} root {root} is not a rank: the ranks are 0 to {}", .p.saturating_sub(1))]
    RootOutOfRange {
        pattern: Collective,
        root: u32,
        p: u32,
    },
    #[error("{pattern} root {root}: Schedgen's {pattern} compares real ranks with virtual ones, which only agree for root 0 (rank 0 would send to itself); give root 0")]
    RootUnsupported { pattern: Collective, root: u32 },
    #[error("nwaydissemination needs a fan-out (nway) of at least 1, got 0")]
    ZeroNway,
    #[error("{}", zero_segment_message(*size, *p, *derived))]
    ZeroSegment { size: u64, p: u32, derived: bool },
    #[error("{pattern} on {p} ranks has {ops} ops per rank, more than the 4294967295 an engine rank can hold")]
    TooManyOps {
        pattern: Collective,
        p: u32,
        ops: u128,
    },
    #[error("tags overflow: tag offset {offset} plus the largest tag {max_tag} reaches 4294967295 (the wildcard tag)")]
    TagOverflow { offset: u32, max_tag: u64 },
}

fn zero_segment_message(size: u64, p: u32, derived: bool) -> String {
    if derived {
        format!(
            "pipelinedring segment size defaults to ⌊D/P⌋ = ⌊{}/{p}⌋ = 0B; give a segment size of at least 1B",
            format_size(size)
        )
    } else {
        "pipelinedring needs a segment size of at least 1B, got 0B".to_string()
    }
}

fn prev_pow2(p: u32) -> u32 {
    if p == 0 {
        1
    } else {
        1 << (31 - p.leading_zeros())
    }
}

fn next_pow2(p: u32) -> u64 {
    (p as u64).next_power_of_two()
}

/// A problem at a place in a schedule file: rendered like a compiler diagnostic with the
/// offending line and a caret under the column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// File name as given (or `<string>` for in-memory text).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub col: usize,
    /// Width of the underlined text in characters (at least 1).
    pub width: usize,
    /// The text of the line.
    pub source_line: String,
    pub message: String,
    /// What was expected or how to fix it.
    pub help: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )?;
        let num = self.line.to_string();
        let pad = " ".repeat(num.len());
        writeln!(f, "{pad} |")?;
        // A long line is cut to a window around the column, the underline to what is shown.
        let (shown, col) = loggops_units::excerpt(&self.source_line, self.col);
        writeln!(f, "{num} | {shown}")?;
        let lead: String = shown
            .chars()
            .take(col.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let room = (shown.chars().count() + 1).saturating_sub(col).max(1);
        write!(f, "{pad} | {lead}{}", "^".repeat(self.width.clamp(1, room)))?;
        if let Some(help) = &self.help {
            write!(f, "\n{pad} = {help}")?;
        }
        Ok(())
    }
}

/// Why a schedule file cannot be read or instantiated.
#[derive(Debug, thiserror::Error)]
pub enum SchedError {
    #[error("cannot read schedule file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    At(Box<Diagnostic>),
    #[error("--nodes must be at least 1, got 0")]
    ZeroNodes,
    #[error(
        "unknown parameter `{name}` given on the command line; {}",
        known_params(known)
    )]
    UnknownParam { name: String, known: Vec<String> },
    #[error("{file}: not a loggops schedule (the first statement must be `loggops-schedule 1`); explicit GOAL files start with `num_ranks` and are read by the GOAL parser")]
    NotASchedule { file: String },
    #[error("{file}: rank {rank} has {ops} ops, more than the 4294967295 an engine rank can hold")]
    TooManyOps { file: String, rank: u32, ops: u128 },
}

fn known_params(known: &[String]) -> String {
    if known.is_empty() {
        "the schedule defines no parameters".to_string()
    } else {
        format!("the schedule defines: {}", known.join(", "))
    }
}

impl SchedError {
    /// The diagnostic, if the error points at a place in the file.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            SchedError::At(d) => Some(d),
            _ => None,
        }
    }
}
