//! Loading a schedule file: explicit GOAL (text or LogGOPSim binary) or a rank-parametric file.

use std::path::Path;

use anyhow::{bail, Result};
use loggops_engine::Program;
use loggops_goal::ExplicitProgram;

/// A loaded schedule; both kinds implement [`Program`].
pub enum Schedule {
    Explicit(ExplicitProgram),
}

/// Runs `$body` with `$p` bound to the concrete program inside `$sched` (the engine is generic,
/// so each kind gets its own monomorphised copy).
macro_rules! with_program {
    ($sched:expr, |$p:ident| $body:expr) => {
        match $sched {
            $crate::schedule::Schedule::Explicit($p) => $body,
        }
    };
}
pub(crate) use with_program;

impl Schedule {
    pub fn num_ranks(&self) -> u32 {
        with_program!(self, |p| p.num_ranks())
    }
}

/// Loads `path`. A rank-parametric file needs `nodes`; an explicit file must agree with it.
pub fn load(path: &Path, nodes: Option<u32>, overrides: &[(String, String)]) -> Result<Schedule> {
    if !overrides.is_empty() {
        bail!(
            "--param only applies to rank-parametric schedules; {} is explicit GOAL",
            path.display()
        );
    }
    let p = loggops_goal::load(path)?;
    if let Some(n) = nodes {
        if n != p.num_ranks() {
            bail!(
                "{} is an explicit GOAL schedule for {} ranks (num_ranks), but --nodes {} was given; \
                 explicit files cannot be resized (use a rank-parametric schedule, see goal/README.md)",
                path.display(),
                p.num_ranks(),
                n
            );
        }
    }
    Ok(Schedule::Explicit(p))
}
