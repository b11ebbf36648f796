//! [`WindowOdds`]: which engine, and which ancestry, to try first over many repetitions of one
//! program under one noise model.
//!
//! It only chooses what is tried: a run the windowed engine gives up on is run by the global
//! engine; a run that gives up on a tie is retried with full ancestry, and runs start with full
//! ancestry once more than one in [`WindowOdds::TIES_FOR_FULL`] needed it (its records cost
//! memory traffic on runs that never need them). So results never depend on it, on the order
//! in which parallel repetitions finish, or on the thread count.

use super::{windowed, Ancestry, GiveUp};
use crate::noise::Noise;
use crate::program::Program;
use crate::sim::{Config, Outcome};

/// The engine choice for many repetitions of one program under one noise model: the windowed
/// engine while it mostly answers, the global engine alone once it has given up on more than
/// half of at least [`WindowOdds::TRIALS`] runs (a run it gives up on costs its partial
/// windowed run on top of the global one). A run that gives up on a tie is run again with
/// [`Ancestry::Full`]; once more than one in [`WindowOdds::TIES_FOR_FULL`] of at least
/// [`WindowOdds::TRIALS`] runs needed full ancestry, runs start with it (its records cost
/// about 13 % on runs that never need them; those runs still tell whether they needed it),
/// until a run needs more than [`FULL_RECORDS`](super::FULL_RECORDS) records. Answers never
/// depend on these choices, so they may follow the order in which parallel repetitions happen
/// to finish.
#[derive(Debug, Default)]
pub struct WindowOdds {
    answered: std::sync::atomic::AtomicU64,
    gave_up: std::sync::atomic::AtomicU64,
    /// Windowed runs, and how many of them needed full ancestry.
    runs: std::sync::atomic::AtomicU64,
    deep: std::sync::atomic::AtomicU64,
    /// A full-ancestry run needed more than [`super::FULL_RECORDS`] records.
    too_deep: std::sync::atomic::AtomicBool,
}

impl WindowOdds {
    /// Runs judged before the windowed engine may be dropped, or full ancestry tried first.
    pub const TRIALS: u64 = 8;
    /// Runs start with full ancestry when more than one in this many needed it.
    pub const TIES_FOR_FULL: u64 = 8;

    /// [`crate::sim::simulate`], skipping the windowed engine when it has not paid off.
    pub fn simulate<P: Program, N: Noise>(
        &self,
        prog: &P,
        cfg: &Config,
        noise: &mut N,
    ) -> Result<Outcome, crate::sim::EngineError> {
        self.simulate_on(prog, cfg, noise, 1)
    }

    /// [`Self::simulate`], the windowed engine on up to `threads` threads
    /// ([`super::simulate_windowed_on`]; the global engine runs on one). The answer is the
    /// same for every thread count.
    pub fn simulate_on<P: Program, N: Noise>(
        &self,
        prog: &P,
        cfg: &Config,
        noise: &mut N,
        threads: usize,
    ) -> Result<Outcome, crate::sim::EngineError> {
        use std::sync::atomic::Ordering::Relaxed;
        let (answered, gave_up) = (self.answered.load(Relaxed), self.gave_up.load(Relaxed));
        if N::ACTIVE && (answered + gave_up < Self::TRIALS || gave_up <= answered) {
            let mut full = self.full_ancestry();
            let first = if full {
                Ancestry::Full
            } else {
                Ancestry::Recent
            };
            let mut res = windowed(prog, cfg, noise, first, threads);
            let deep = match res {
                Err(GiveUp::Tie) if !full => {
                    if !self.too_deep.load(Relaxed) {
                        full = true;
                        res = windowed(prog, cfg, noise, Ancestry::Full, threads);
                    }
                    true
                }
                Ok((_, deep)) => deep,
                Err(_) => false,
            };
            self.runs.fetch_add(1, Relaxed);
            if deep {
                self.deep.fetch_add(1, Relaxed);
            }
            if full && res == Err(GiveUp::Tie) {
                // Full ancestry gives up on a tie only beyond its records.
                self.too_deep.store(true, Relaxed);
            }
            match res {
                Ok((out, _)) => {
                    self.answered.fetch_add(1, Relaxed);
                    return Ok(out);
                }
                Err(_) => {
                    self.gave_up.fetch_add(1, Relaxed);
                }
            }
        }
        crate::sim::simulate_global(prog, cfg, noise)
    }

    /// Whether runs start with [`Ancestry::Full`].
    pub fn full_ancestry(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let (runs, deep) = (self.runs.load(Relaxed), self.deep.load(Relaxed));
        !self.too_deep.load(Relaxed) && runs >= Self::TRIALS && deep * Self::TIES_FOR_FULL > runs
    }

    /// `(answered, gave up)` so far.
    pub fn counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.answered.load(Relaxed), self.gave_up.load(Relaxed))
    }
}
