//! loggops-schedgen: LogGOPSim's Schedgen collectives as lazy [`Program`]s, and
//! rank-parametric schedule files.

pub mod check;
pub mod closed_form;
pub mod collective;
pub mod error;
pub mod schedgen_text;
pub mod schedule;
pub mod units;

pub use collective::{Collective, GenOptions, Generated};
pub use error::{Diagnostic, GenError, SchedError};
pub use loggops_engine::Program;
pub use schedule::{parse_schedule, parse_schedule_str, sniff, FileKind, Schedule, ScheduleFile};
