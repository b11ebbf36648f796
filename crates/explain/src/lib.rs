//! loggops-explain: why a simulated run takes as long as it does, and what would help.
//!
//! * [`log`]: [`ActivityLog`], the [`Recorder`](loggops_engine::Recorder) that keeps every
//!   activity of a run with what set its start time (the engine itself only reports);
//! * [`path`]: the critical path from the finishing time back to 0, every picosecond of it
//!   attributed to compute, CPU overhead, NIC gap, latency, waiting for a busy CPU or NIC,
//!   OS detours or network noise, with the ranks and messages on it and the derivatives
//!   `dT/dL`, `dT/do`, `dT/dg`, `dT/dG`, `dT/dO` read from it;
//! * [`sensitivity`]: the latency tolerance (bisection on exact runs) and [`Shifted`];
//! * [`summary`]: the parts' distribution over Monte-Carlo repetitions and the share of the
//!   p95 inflation each part takes;
//! * [`render`]: tables, JSON and CSV;
//! * [`timeline`]: a run as Chrome trace-event JSON (Perfetto, chrome://tracing).
//!
//! ```
//! use loggops_engine::{testing::VecProgram, Config, NoNoise, Op, Params};
//! use loggops_explain::{critical_path, record, Part};
//!
//! // Rank 0 computes 10us, then sends 1 KiB to rank 1, which receives it.
//! let mut p = VecProgram::new(2);
//! let c = p.op(0, Op::calc(10_000_000));
//! let s = p.op(0, Op::send(1024, 1, 0));
//! p.requires(0, s, c);
//! p.op(1, Op::recv(1024, 0, 0));
//! let cfg = Config::new(Params::loggopsim_defaults_ps());
//! let (out, log) = record(&p, &cfg, &mut NoNoise, false).unwrap();
//! let path = critical_path(&log, &p, &out.finish, cfg.params.big_o).unwrap();
//! assert_eq!(path.finish, out.max().0);
//! assert_eq!(path.parts.get(Part::Compute), 10_000_000);
//! assert_eq!(path.parts.get(Part::Latency), 2_500_000);
//! assert_eq!(path.parts.get(Part::CpuOverhead), 2 * 1_500_000);
//! assert_eq!(path.parts.get(Part::NicGap), 1023 * 6_000); // G·(s−1) at the receiver's CPU
//! assert_eq!(path.parts.total(), path.finish as i64);
//! assert_eq!(path.counts.latency, 1); // dT/dL = 1
//! ```

pub mod carry;
pub mod log;
pub mod path;
pub mod render;
pub mod sensitivity;
pub mod summary;
pub mod timeline;

pub use carry::{attribute, Carrier};
pub use log::{Activity, ActivityLog, Exit, Kind, NONE};
pub use path::{
    critical_path, Binding, CriticalPath, Part, Parts, PathError, PathMessage, Step, TermCounts,
};
pub use sensitivity::{tolerance, Shifted, Tolerance, MAX_EXTRA_LATENCY};
pub use summary::{CellPaths, Dist, PathSummary};
pub use timeline::{TimelineOptions, TimelineStats};

use loggops_engine::{simulate_global_recorded, Config, EngineError, Noise, Outcome, Program};

/// Runs `prog` on the global engine, recording every activity (`keep_posts`: every posted
/// receive too, as timelines need). The outcome is the one [`loggops_engine::simulate`]
/// gives.
pub fn record<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    keep_posts: bool,
) -> Result<(Outcome, ActivityLog), EngineError> {
    let mut log = ActivityLog::new(prog)
        .keep_posts(keep_posts)
        .model(cfg.model);
    let out = simulate_global_recorded(prog, cfg, noise, &mut log)?;
    Ok((out, log))
}
