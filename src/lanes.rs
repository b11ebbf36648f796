//! The batched engine in a sweep (`--engine`): whether a noisy cell's repetitions are walked
//! through the schedule up to [`LANES`] at a time ([`loggops_engine::simulate_lanes`]) or run
//! one at a time, the walks themselves, and what the output says of it (a cell's `engine`).
//!
//! A repetition the walk gives up (its order of events may differ from the walk's) runs alone
//! with the same draws, so every repetition's time is the one-at-a-time engines' to the
//! picosecond whichever engine ran it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Result};
use loggops_engine::{Config, LaneError, Program, Progress, WindowOdds};
use loggops_noise::NoiseModel;

use crate::cli::EngineArg;

/// Why `--engine auto` does not choose the batched engine.
const AUTO_SKIPS: &str = "--engine auto does not choose it yet: it costs more CPU than the \
     windowed engine on the runs measured (BENCHMARKS.md); --engine batched asks for it";

/// Repetitions walked at once.
pub(crate) const LANES: usize = 16;

/// How a cell's repetitions run, and what ran them.
pub(crate) struct Engines {
    pub(crate) choice: EngineArg,
    /// Why the batched engine did not take the cell (`None` while it did).
    refused: Mutex<Option<&'static str>>,
    walked: AtomicU64,
    /// The batched engine took the cell.
    tried: AtomicBool,
    /// A walk of the cell gave up more than half its repetitions: the rest run alone.
    abandoned: AtomicBool,
}

impl Engines {
    pub(crate) fn new(choice: EngineArg) -> Engines {
        Engines {
            choice,
            refused: Mutex::new(None),
            walked: AtomicU64::new(0),
            tried: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
        }
    }

    /// Whether the repetitions of `model` on `prog` are walked in batches: with `--engine
    /// auto` when the batched engine takes the run; an error with `--engine batched` when it
    /// does not, saying why.
    pub(crate) fn batched<P: Program>(
        &self,
        prog: &P,
        model: &NoiseModel,
        engine_model: loggops_engine::Model,
    ) -> Result<bool> {
        match self.choice {
            EngineArg::Batched => {}
            EngineArg::Auto => {
                // Measured slower than the windowed engine (BENCHMARKS.md): not chosen
                // automatically until it is faster.
                *self.refused.lock().expect("no panics while held") = Some(AUTO_SKIPS);
                return Ok(false);
            }
            EngineArg::Windowed | EngineArg::Global => return Ok(false),
        }
        let why = if !model.needs_noise_run() {
            Some("nothing is drawn in this noise mode: every repetition is the same run")
        } else {
            loggops_engine::batch_refusal(prog, &config(model, engine_model, &UNSTOPPED))
        };
        match why {
            None => {
                self.tried.store(true, Ordering::Relaxed);
                Ok(true)
            }
            Some(w) => self.refuse(w).map(|_| false),
        }
    }

    /// Records why the batched engine does not take the cell; an error with `--engine
    /// batched`.
    fn refuse(&self, why: &'static str) -> Result<()> {
        if self.choice == EngineArg::Batched {
            bail!("--engine batched does not apply to this run: {why}; use --engine auto (or windowed)");
        }
        *self.refused.lock().expect("no panics while held") = Some(why);
        Ok(())
    }

    /// What ran the cell's repetitions, for the output; the counts start again for the next
    /// cell.
    pub(crate) fn describe(&self) -> String {
        let walked = self.walked.swap(0, Ordering::Relaxed);
        let tried = self.tried.swap(false, Ordering::Relaxed);
        self.abandoned.store(false, Ordering::Relaxed);
        let refused = self.refused.lock().expect("no panics while held").take();
        let one_at_a_time = match self.choice {
            EngineArg::Global => "global",
            _ => "windowed",
        };
        match refused {
            Some(why) if walked == 0 => {
                format!("{one_at_a_time}: the batched engine does not apply ({why})")
            }
            _ if !tried && self.choice != EngineArg::Auto => {
                format!("{one_at_a_time} (--engine {one_at_a_time})")
            }
            _ if !tried => one_at_a_time.to_string(),
            // No counts: the shards of a run say what the whole run says.
            _ => format!(
                "batched (walks of up to {LANES} repetitions; a repetition recorded for the why \
                 or the critical path, or whose order of events may differ from the walk's, runs \
                 alone; after a walk that gives up more than half its repetitions, the cell's \
                 next ones run alone)"
            ),
        }
    }

    /// Walks `reps` (at most [`LANES`]) at once; a repetition the walk gives up runs alone
    /// through `alone`, and so do all of them once a walk of the cell gave up more than half
    /// of its own (a walk then costs more than it saves: BENCHMARKS.md, "The windowed
    /// engine"). `(rep, time)` for each, `None` when Ctrl-C stopped it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn walk<P: Program>(
        &self,
        prog: &P,
        model: &NoiseModel,
        engine_model: loggops_engine::Model,
        seed: u64,
        reps: &[u64],
        hook: &'static Progress,
        alone: impl Fn(u64) -> Result<Option<u64>>,
    ) -> Result<Vec<(u64, Option<u64>)>> {
        if self.abandoned.load(Ordering::Relaxed) {
            return reps.iter().map(|&rep| Ok((rep, alone(rep)?))).collect();
        }
        let ranks = prog.num_ranks();
        let mut noises: Vec<_> = reps
            .iter()
            .map(|&rep| model.instance(seed, rep, ranks))
            .collect();
        let cfg = config(model, engine_model, hook);
        let lanes = match loggops_engine::simulate_lanes(prog, &cfg, &mut noises) {
            Ok(l) => l,
            Err(LaneError::Stopped) => return Ok(reps.iter().map(|&r| (r, None)).collect()),
            Err(LaneError::Refused(why)) => {
                self.refuse(why)?;
                vec![None; reps.len()]
            }
        };
        let given_up = lanes.iter().filter(|l| l.is_none()).count();
        if 2 * given_up > reps.len() {
            self.abandoned.store(true, Ordering::Relaxed);
        }
        let mut got = Vec::with_capacity(reps.len());
        for (&rep, lane) in reps.iter().zip(lanes) {
            match lane {
                Some(out) => {
                    self.walked.fetch_add(1, Ordering::Relaxed);
                    got.push((rep, Some(out.max().0)));
                }
                None => {
                    got.push((rep, alone(rep)?));
                }
            }
        }
        Ok(got)
    }
}

static UNSTOPPED: Progress = Progress::new();

/// The engine configuration of a noisy repetition (as `mc::outcome` builds it).
fn config(
    model: &NoiseModel,
    engine_model: loggops_engine::Model,
    hook: &'static Progress,
) -> Config {
    Config {
        progress: Some(hook),
        model: engine_model,
        mpi_progress: model.mpi_progress(),
        ..Config::new(model.engine_params())
    }
}

/// Runs one repetition with the chosen one-at-a-time engine: the windowed engine (global
/// where windows do not apply), or the global engine with `--engine global`.
pub(crate) fn run_alone<P: Program, N: loggops_engine::Noise>(
    choice: EngineArg,
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    odds: &WindowOdds,
    threads: usize,
) -> Result<loggops_engine::Outcome, loggops_engine::EngineError> {
    if choice == EngineArg::Global {
        loggops_engine::simulate_global(prog, cfg, noise)
    } else {
        odds.simulate_on(prog, cfg, noise, threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loggops_noise::{NoiseConfig, NoiseMode};
    use std::path::Path;

    /// Once a walk gave up more than half its repetitions, the cell's next repetitions all
    /// run alone, without a walk; `describe` starts the next cell walking again.
    #[test]
    fn a_walk_that_gives_up_most_repetitions_ends_the_cells_walks() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let sched = crate::schedule::load(
            &root.join("goal/dissemination_16B.goal"),
            Some(1024),
            &[],
            &loggops_goal::ParseOptions::default(),
        )
        .unwrap();
        let profile = loggops_profile::read_profile(root.join("calibration/alps.h5")).unwrap();
        let cfg = NoiseConfig {
            mode: NoiseMode::OsNet,
            ..NoiseConfig::default()
        };
        let model = NoiseModel::new(&profile, &cfg).unwrap();
        let engines = Engines::new(EngineArg::Batched);
        let queued = loggops_engine::Model::Queued;
        let alone = AtomicU64::new(0);
        let walk = |reps: &[u64]| {
            crate::schedule::with_program!(&sched, |p| engines.walk(
                p,
                &model,
                queued,
                5,
                reps,
                &UNSTOPPED,
                |_| {
                    alone.fetch_add(1, Ordering::Relaxed);
                    Ok(Some(0))
                }
            ))
            .unwrap()
        };
        let first: Vec<u64> = (0..16).collect();
        assert!(
            crate::schedule::with_program!(&sched, |p| engines.batched(p, &model, queued)).unwrap()
        );
        walk(&first);
        let given_up = alone.swap(0, Ordering::Relaxed);
        let walked = engines.walked.load(Ordering::Relaxed);
        // The premise (BENCHMARKS.md): at 1024 ranks most lanes are given up, not all.
        assert!(
            2 * given_up > 16 && walked > 0,
            "{given_up} given up, {walked} walked"
        );
        let next: Vec<u64> = (16..32).collect();
        assert_eq!(walk(&next).len(), 16);
        assert_eq!(alone.swap(0, Ordering::Relaxed), 16);
        assert_eq!(engines.walked.load(Ordering::Relaxed), walked);
        engines.describe();
        walk(&next);
        assert!(
            engines.walked.load(Ordering::Relaxed) > 0,
            "a new cell walks again"
        );
    }
}
