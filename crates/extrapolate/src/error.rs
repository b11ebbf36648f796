//! Errors: a trace that cannot be read, or a refusal that names the first rank, op and scale
//! that disagree and says what would make extrapolation work.

use std::fmt;
use std::path::PathBuf;

/// Why traces cannot be extrapolated.
#[derive(Debug, thiserror::Error)]
pub enum ExtrapError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Goal {
        path: PathBuf,
        source: Box<loggops_goal::GoalError>,
    },
    #[error("{0}")]
    Refused(Box<Refusal>),
    #[error("{0}")]
    Usage(String),
    #[error("the extrapolated schedule does not instantiate at {p} ranks: {source}")]
    Schedule {
        p: u32,
        source: Box<loggops_schedgen::SchedError>,
    },
}

/// A refusal: the first place where the traces do not follow one pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The rank count of the trace that disagrees.
    pub scale: u32,
    pub file: PathBuf,
    pub rank: u32,
    /// The op id in that rank (label `l{op + 1}` in Schedgen's text), if one op is to blame.
    pub op: Option<u32>,
    pub what: String,
    /// What would make it work.
    pub fix: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot extrapolate: {} (P = {}), rank {}",
            self.file.display(),
            self.scale,
            self.rank
        )?;
        if let Some(op) = self.op {
            write!(f, ", op l{}", op + 1)?;
        }
        write!(
            f,
            ": {}\n  what would make it work: {}",
            self.what, self.fix
        )
    }
}

pub(crate) fn refuse(
    scale: u32,
    file: &std::path::Path,
    rank: u32,
    op: Option<u32>,
    what: impl Into<String>,
    fix: impl Into<String>,
) -> ExtrapError {
    ExtrapError::Refused(Box::new(Refusal {
        scale,
        file: file.to_path_buf(),
        rank,
        op,
        what: what.into(),
        fix: fix.into(),
    }))
}
