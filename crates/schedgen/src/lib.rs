//! loggops-schedgen: LogGOPSim's Schedgen collectives as lazy [`Program`]s, and
//! rank-parametric schedule files.
//!
//! * [`Generated`] — a collective ([`Collective`]: `dissemination`, `nwaydissemination`,
//!   `allreduce_ring`, `pipelinedring`, `allreduce_recdoub`, `binomialtreebcast`, `binarytreebcast`,
//!   `binomialtreereduce`, `linear_alltoall`) on P ranks. Every op, its dependents and the
//!   roots are computed from `(rank, index)` in O(1) (binomial trees: O(log P)), so a 512 MiB
//!   ring allreduce on 16,384 ranks (1.07 G ops) costs a few dozen bytes. The structure is op for
//!   op what Schedgen (C++) writes — the paper's Schedgen for `pipelinedring` — including tags,
//!   the order of `requires` lines and Schedgen's quirks (duplicate `requires` lines in binomial
//!   trees, floating-point round counts in `nwaydissemination`);
//!   [`schedgen_text::write_schedgen`] reproduces Schedgen's text byte for byte.
//! * [`ScheduleFile`] / [`Schedule`] — the rank-parametric format of `goal/*.goal`
//!   (documented in `goal/README.md`): computation, collectives, point-to-point ops,
//!   `repeat`, `concurrent`, parameters; the rank count is bound at instantiation.
//! * [`check`] compares and validates programs through the [`Program`] trait;
//!   [`closed_form`] gives the noiseless times of the allreduces.
//!
//! ```
//! use loggops_schedgen::{parse_schedule_str, Collective, Generated, Program};
//!
//! let ring = Generated::new(Collective::AllreduceRing, 16384, 512 << 20).unwrap();
//! assert_eq!(ring.total_ops(), 1_073_676_288);
//!
//! let text = "loggops-schedule 1\nparam dgemm = 18.883us\ncalc ${dgemm}\nallreduce ring 512MiB\n";
//! let s = parse_schedule_str(text, "example.goal", 64, &[("dgemm", "9.985us")]).unwrap();
//! assert_eq!(s.num_ops(0), 1 + 4 * 63);
//! ```

pub mod check;
pub mod closed_form;
pub mod collective;
pub mod error;
pub mod goal2mpi;
pub mod schedgen_text;
pub mod schedule;
pub mod units;

pub use collective::{Collective, GenOptions, Generated};
pub use error::{Diagnostic, GenError, SchedError};
pub use loggops_engine::Program;
pub use schedule::{
    dims_create, parse_schedule, parse_schedule_str, sniff, FileKind, RecdoubMpich, Schedule,
    ScheduleFile, COLLS_BASE,
};
