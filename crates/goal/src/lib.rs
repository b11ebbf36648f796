//! GOAL schedules for loggops-sim: LogGOPSim-compatible readers and writers and a compact
//! in-memory program.
//!
//! * [`text`]: streaming GOAL text parser, exact w.r.t. LogGOPSim's `txt2bin` on everything
//!   txt2bin accepts (without its whitespace bug), with size and time units as extensions and
//!   precise errors (file, line, column, caret, expected/found).
//! * [`binary`]: txt2bin's binary format, read with full validation (a rank whose section
//!   repeats the previous rank's, peers relative, is shared without being parsed again) and
//!   written byte-identically.
//! * [`write`](mod@write): GOAL text in Schedgen's style.
//! * [`explicit`]: [`ExplicitProgram`], the compact [`Program`](loggops_engine::Program) the
//!   readers produce (identical ranks share one copy, so a collective's file costs about one
//!   rank's data; distinct ranks 25 bytes per op and 4 per dependency), and the [`ProgramBuilder`] generators
//!   use.
//! * [`units`]: `512MiB` / `2.5us` parsing shared with the CLI and the generators.
//!
//! # Time: ticks
//!
//! Programs count time in picoseconds, the engine's unit. A `calc` duration written as a plain
//! number (`calc 1500` in text, every calc in binary GOAL) is a number of *ticks*, LogGOPSim's
//! unit-less time unit; one tick is 1 ns unless [`ParseOptions::tick_ps`] says otherwise,
//! because Schedgen's trace conversion writes `calc` in ns and LogGOPSim's users pass L, o, g
//! in ns (the paper's simulator used ps: read its files with a 1 ps tick). A duration with a
//! unit (`calc 2.5us`) means what it says whatever the tick. The writers write calc durations
//! in ticks again (1 ns unless told otherwise: [`write_goal_with`], [`write_binary_with`]), so
//! a file reads back to the same durations with the same tick; a duration that is not a whole
//! number of ticks cannot be written. Scaling by the tick never wraps: a calc whose duration
//! does not fit `u64` picoseconds is an error at its line and column (text) or byte offset
//! (binary).
//!
//! ```
//! use loggops_engine::{DepKind, Op, Program};
//!
//! let text = "num_ranks 2\nrank 0 {\nl1: send 4KiB to 1 tag 7\nl2: calc 2us\nl2 requires l1\n\
//!             l3: calc 1500\n}\nrank 1 {\nl1: recv 4096b from -1 tag 7\n}\n";
//! let p = loggops_goal::parse_str("example.goal", text).unwrap();
//! assert_eq!(p.op(0, 0), Op::send(4096, 1, 7));
//! assert_eq!(p.op(0, 1), Op::calc(2_000_000)); // ps
//! assert_eq!(p.op(0, 2), Op::calc(1_500_000)); // 1500 ticks of 1 ns
//! let mut deps = Vec::new();
//! p.for_each_dependent(0, 0, DepKind::Done, |d| deps.push(d));
//! assert_eq!(deps, [1]);
//!
//! let mut out = Vec::new();
//! loggops_goal::write_goal(&p, &mut out).unwrap();
//! assert!(String::from_utf8(out).unwrap().contains("l1: send 4096b to 1 tag 7\nl2: calc 2000\nl2 requires l1\nl3: calc 1500\n"));
//!
//! // The paper's simulator wrote ps: a 1 ps tick.
//! let ps = loggops_goal::ParseOptions::with_tick(1);
//! let q = loggops_goal::parse_str_with("paper.goal", text, &ps).unwrap().program;
//! assert_eq!(q.op(0, 2), Op::calc(1500));
//!
//! let err = loggops_goal::parse_str("bad.goal", "num_ranks 1\nrank 0 {\ncalc 5 nic 1\n}\n").unwrap_err();
//! assert!(err.to_string().starts_with("bad.goal:3:8: error: \"calc\" takes no \"nic\" clause"));
//! ```

pub mod binary;
pub mod error;
pub mod explicit;
mod fxhash;
#[cfg(test)]
mod test_rng;
pub mod text;
pub mod units;
pub mod write;

use std::fs::File;
use std::io::Read;
use std::path::Path;

pub use binary::{
    read_binary, read_binary_from, read_binary_from_with, read_binary_with, write_binary,
    write_binary_with,
};
pub use error::{BuildError, CycleEdge, CycleStep, GoalError, GoalWarning, Location};
pub use explicit::{first_difference, ExplicitProgram, ProgramBuilder};
pub use text::{
    describe_op, describe_op_in, parse_file, parse_file_with, parse_reader, parse_reader_with,
    parse_str, parse_str_with, OpDescription, ParseOptions, Parsed, DEFAULT_TICK_PS,
};
pub use units::{format_size, parse_size, parse_time, TimeUnit, UnitError};
pub use write::{write_goal, write_goal_with, NotWholeTicks};

/// Whether `path` starts with a binary GOAL magic cookie (valid or invalidated).
pub fn is_binary(path: impl AsRef<Path>) -> Result<bool, GoalError> {
    let path = path.as_ref();
    let io = |source| GoalError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut f = File::open(path).map_err(io)?;
    let mut magic = [0u8; 8];
    let mut got = 0;
    while got < 8 {
        match f.read(&mut magic[got..]).map_err(io)? {
            0 => return Ok(false),
            k => got += k,
        }
    }
    let m = u64::from_le_bytes(magic);
    Ok(m == binary::MAGIC || m == binary::MAGIC_INVALIDATED)
}

/// Loads a GOAL file, binary or text (detected by the magic cookie), with default options
/// (plain calc numbers in ticks of 1 ns).
pub fn load(path: impl AsRef<Path>) -> Result<ExplicitProgram, GoalError> {
    load_with(path, &ParseOptions::default()).map(|p| p.program)
}

/// [`load`] with parsing options (the tick applies to binary files too); binary files give no
/// warnings.
pub fn load_with(path: impl AsRef<Path>, opts: &ParseOptions) -> Result<Parsed, GoalError> {
    let path = path.as_ref();
    if is_binary(path)? {
        Ok(Parsed {
            program: read_binary_with(path, opts)?,
            warnings: Vec::new(),
            duplicate_labels: 0,
        })
    } else {
        parse_file_with(path, opts)
    }
}
