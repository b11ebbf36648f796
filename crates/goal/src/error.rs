//! Errors and warnings of the GOAL front ends.
//!
//! Text errors point at a source position and render like a compiler diagnostic:
//!
//! ```text
//! KB.goal:3:9: error: unknown size unit "KB" (ambiguous: write "kB" for 1000 bytes or "KiB" for 1024 bytes): expected b, B, KiB, MiB, GiB, TiB, kB, MB, GB or TB
//!   |
//! 3 | send 16KB to 1
//!   |         ^
//! ```

use std::fmt;
use std::io;

use loggops_engine::DepKind;

use crate::units::UnitError;

/// A position in a GOAL text file, with the text of its line for the caret display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File name as given to the parser.
    pub file: String,
    /// 1-based line number.
    pub line: u64,
    /// 1-based column, in characters.
    pub column: u32,
    /// The source line (without the line break).
    pub source_line: String,
}

impl Location {
    /// The `   |` / `12 | text` / `   |    ^` block under a message.
    pub fn snippet(&self) -> String {
        let num = self.line.to_string();
        let pad = " ".repeat(num.len());
        // A long line is cut to a window around the column.
        let (shown, column) = loggops_units::excerpt(&self.source_line, self.column as usize);
        let caret: String = shown
            .chars()
            .take(column.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        format!("{pad} |\n{num} | {shown}\n{pad} | {caret}^")
    }

    fn render(
        &self,
        f: &mut fmt::Formatter<'_>,
        severity: &str,
        msg: fmt::Arguments<'_>,
    ) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {severity}: {msg}\n{}",
            self.file,
            self.line,
            self.column,
            self.snippet()
        )
    }
}

/// One declaration of a dependency cycle found by [`ProgramBuilder::end_rank`](crate::ProgramBuilder::end_rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleEdge {
    pub dependent: u32,
    pub on: u32,
    pub kind: DepKind,
    /// Index of the `add_dep` call within the rank.
    pub decl_index: usize,
}

/// Errors of [`ProgramBuilder`](crate::ProgramBuilder).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The dependencies of a rank contain a cycle, so its ops can never run.
    #[error("dependency cycle in rank {rank}: {}; these ops can never run", fmt_cycle(.cycle))]
    Cycle { rank: u32, cycle: Vec<CycleEdge> },
}

fn kind_word(kind: DepKind) -> &'static str {
    match kind {
        DepKind::Done => "requires",
        DepKind::Start => "irequires",
    }
}

fn fmt_cycle(c: &[CycleEdge]) -> String {
    c.iter()
        .map(|e| format!("op {} {} op {}", e.dependent, kind_word(e.kind), e.on))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One dependency declaration of a cycle in a GOAL text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleStep {
    /// Line of the `a requires b` declaration.
    pub line: u64,
    pub dependent: String,
    pub on: String,
    pub kind: DepKind,
}

/// Everything that can go wrong reading a GOAL file (text or binary).
#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    /// The file could not be opened or read.
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    /// A token other than the expected one.
    Expected {
        loc: Location,
        expected: String,
        found: String,
    },
    /// A size or duration with a bad unit or value.
    Unit {
        loc: Location,
        #[source]
        source: UnitError,
    },
    /// A number too large for its field (u32 ranks and tags, u8 cpu/nic, u64 sizes).
    NumberTooLarge {
        loc: Location,
        what: &'static str,
        text: String,
        max: u64,
    },
    /// A statement that does not start with a known keyword, a label or a dependency.
    UnknownKeyword { loc: Location, word: String },
    /// A statement in the wrong place (operation outside a rank block, `num_ranks` twice, …).
    Misplaced { loc: Location, message: String },
    /// A dependency names a label not defined earlier in the same rank block.
    UndefinedLabel { loc: Location, label: String },
    /// `rank N {` where another rank was expected.
    RankOrder {
        loc: Location,
        found: u32,
        expected: u32,
    },
    /// `rank N {` with N >= num_ranks.
    RankOutOfRange {
        loc: Location,
        rank: u32,
        num_ranks: u32,
    },
    /// The file ended before the block of rank `num_ranks - 1`.
    MissingRanks {
        file: String,
        line: u64,
        next: u32,
        num_ranks: u32,
    },
    /// No `num_ranks` before the end of the file.
    NoNumRanks { file: String },
    /// `/*` without `*/`.
    UnterminatedComment { loc: Location },
    /// `rank N {` without `}`.
    UnterminatedBlock { loc: Location, rank: u32 },
    /// A send/recv peer >= num_ranks.
    PeerOutOfRange {
        loc: Location,
        peer: u32,
        num_ranks: u32,
    },
    /// `send … to -1`.
    SendToAny { loc: Location },
    /// `calc … nic N`.
    CalcNic { loc: Location },
    /// More than 2^31 operations in one rank.
    TooManyOps { loc: Location, rank: u32 },
    /// Dependencies that form a cycle (the ops on it and after it can never run).
    Cycle {
        file: String,
        rank: u32,
        steps: Vec<CycleStep>,
    },
    /// A binary file without the magic cookie 4223.
    BadMagic {
        path: String,
        found: u64,
        /// The first 8 bytes are printable text (GOAL text read as binary?).
        text: bool,
    },
    /// A binary file invalidated by `LogGOPSim --save-mem` (magic 2342).
    Invalidated { path: String },
    /// A malformed binary file.
    Binary {
        path: String,
        offset: u64,
        message: String,
    },
    /// A binary file whose dependencies form a cycle.
    BinaryCycle {
        path: String,
        #[source]
        source: BuildError,
    },
}

impl GoalError {
    /// The source location, for text errors that have one.
    pub fn location(&self) -> Option<&Location> {
        use GoalError::*;
        match self {
            Expected { loc, .. }
            | Unit { loc, .. }
            | NumberTooLarge { loc, .. }
            | UnknownKeyword { loc, .. }
            | Misplaced { loc, .. }
            | UndefinedLabel { loc, .. }
            | RankOrder { loc, .. }
            | RankOutOfRange { loc, .. }
            | UnterminatedComment { loc }
            | UnterminatedBlock { loc, .. }
            | PeerOutOfRange { loc, .. }
            | SendToAny { loc }
            | CalcNic { loc }
            | TooManyOps { loc, .. } => Some(loc),
            _ => None,
        }
    }
}

impl fmt::Display for GoalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use GoalError::*;
        const E: &str = "error";
        match self {
            Io { path, source } => write!(f, "{path}: {source}"),
            Expected { loc, expected, found } => loc.render(f, E, format_args!("expected {expected}, found {found}")),
            Unit { loc, source } => loc.render(f, E, format_args!("{source}")),
            NumberTooLarge { loc, what, text, max } => {
                loc.render(f, E, format_args!("{what} {text} is too large (at most {max})"))
            }
            UnknownKeyword { loc, word } => loc.render(
                f,
                E,
                format_args!(
                    "unknown statement \"{word}\": expected \"send\", \"recv\", \"calc\", \"rank\", \"num_ranks\", \"}}\", \
                     a label (\"{word}: calc 1\") or a dependency (\"{word} requires other\")"
                ),
            ),
            Misplaced { loc, message } => loc.render(f, E, format_args!("{message}")),
            UndefinedLabel { loc, label } => loc.render(
                f,
                E,
                format_args!("undefined label \"{label}\": a dependency may only name labels defined above it in the same rank block"),
            ),
            RankOrder { loc, found, expected } => loc.render(
                f,
                E,
                format_args!("rank block {found} out of order: expected the block of rank {expected} (blocks must appear as rank 0, 1, 2, …)"),
            ),
            RankOutOfRange { loc, rank, num_ranks } => loc.render(
                f,
                E,
                format_args!("rank {rank} does not exist: num_ranks is {num_ranks} (ranks 0 to {})", num_ranks - 1),
            ),
            MissingRanks { file, line, next, num_ranks } => {
                write!(f, "{file}:{line}: error: end of file before the block of rank {next}: num_ranks is {num_ranks}, so ")?;
                if *next + 1 == *num_ranks {
                    write!(f, "the block of rank {next} is missing")
                } else {
                    write!(f, "the blocks of ranks {next} to {} are missing", num_ranks - 1)
                }
            }
            NoNumRanks { file } => write!(f, "{file}: error: no \"num_ranks N\" line before the end of the file"),
            UnterminatedComment { loc } => loc.render(f, E, format_args!("comment \"/*\" is never closed by \"*/\"")),
            UnterminatedBlock { loc, rank } => {
                loc.render(f, E, format_args!("the block of rank {rank} is never closed by \"}}\""))
            }
            PeerOutOfRange { loc, peer, num_ranks } => loc.render(
                f,
                E,
                format_args!("rank {peer} does not exist: num_ranks is {num_ranks} (ranks 0 to {})", num_ranks - 1),
            ),
            SendToAny { loc } => loc.render(
                f,
                E,
                format_args!("a send needs a destination rank: -1 (any source) is only allowed in \"recv … from -1\""),
            ),
            CalcNic { loc } => loc.render(
                f,
                E,
                format_args!("\"calc\" takes no \"nic\" clause: only send and recv use a NIC (calc accepts \"cpu N\")"),
            ),
            TooManyOps { loc, rank } => loc.render(
                f,
                E,
                format_args!("rank {rank} has more than {} operations", crate::explicit::MAX_OPS_PER_RANK),
            ),
            Cycle { file, rank, steps } => {
                let last = steps.iter().map(|s| s.line).max().unwrap_or(0);
                write!(f, "{file}:{last}: error: dependency cycle in rank {rank}: these operations can never run")?;
                for s in steps {
                    write!(f, "\n  line {}: {} {} {}", s.line, s.dependent, kind_word(s.kind), s.on)?;
                }
                Ok(())
            }
            BadMagic { path, found, text } => {
                write!(f, "{path}: not a binary GOAL file: the magic cookie is {found}, expected 4223")?;
                if *text {
                    write!(f, " (the file starts with text: is it GOAL text?)")?;
                }
                Ok(())
            }
            Invalidated { path } => write!(
                f,
                "{path}: this binary GOAL file was invalidated by a LogGOPSim --save-mem run (magic cookie 2342): \
                 its dependency counters were consumed in place; convert the GOAL text again"
            ),
            Binary { path, offset, message } => write!(f, "{path}: byte offset {offset}: {message}"),
            BinaryCycle { path, source } => write!(f, "{path}: {source}"),
        }
    }
}

/// Non-fatal findings of the text parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalWarning {
    /// A label defined twice in one rank block: like txt2bin, dependencies keep naming the first
    /// definition (the second op is created but cannot be referenced).
    DuplicateLabel {
        loc: Location,
        label: String,
        first_line: u64,
    },
    /// Text after the block of the last rank, which txt2bin never reads.
    TrailingText { loc: Location, num_ranks: u32 },
}

impl fmt::Display for GoalWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const W: &str = "warning";
        match self {
            GoalWarning::DuplicateLabel { loc, label, first_line } => loc.render(
                f,
                W,
                format_args!(
                    "label \"{label}\" is already defined on line {first_line}; dependencies refer to the first definition"
                ),
            ),
            GoalWarning::TrailingText { loc, num_ranks } => loc.render(
                f,
                W,
                format_args!("text after the block of the last rank ({}) is ignored", num_ranks - 1),
            ),
        }
    }
}
