//! `loggops-sim extrapolate`: traces taken at a few small scales as a rank-parametric schedule
//! for any scale (crates/extrapolate), or Schedgen's replication (`--replicate`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use loggops_extrapolate::{ComputeMode, Options};

use crate::out::{err_text, errln};

const AFTER_HELP: &str = "\
Examples:
  loggops-sim extrapolate lulesh_p8.goal lulesh_p27.goal --nodes 64 --output lulesh.goal
  loggops-sim --goal lulesh.goal --nodes 64
      LULESH traced at 8 and 27 ranks, as a schedule for any cube; run at 64 ranks.
  loggops-sim --goal lulesh.goal --nodes 15625 --noise calibration/aws.h5
      The same schedule at 25^3 ranks, under AWS noise.
  loggops-sim extrapolate lulesh_p8.goal lulesh_p27.goal lulesh_p64.goal \\
              --compare lulesh_p125.goal --tick 1ps --nodes 125 --output x.goal
      Leave one out: infer from three scales, compare with the fourth; --tick 1ps reads the
      traces' calc numbers as ps, so the noiseless times compare communication (traces taken
      with more ranks than cores carry inflated computation).
  loggops-sim extrapolate --replicate lulesh_p8.goal --nodes 64 --output x8.goal
      Schedgen's --traces-extr 8: eight independent copies, collectives over all 64 ranks.

What it reads: traces of one program at two or more rank counts as Schedgen's trace conversion
writes them (schedgen -p trace; GOAL text or LogGOPSim binary, optionally .xz).
What it infers: the process grid (1-, 2- or 3-D, from who talks to whom: the layout in which
every partner is a near neighbour, and which dimensions wrap around), one sequence of calls for
every rank with partners as grid offsets (a call happens where its partner exists), the
collectives (rebuilt for any P), message sizes as exact functions of P where one exists,
computation per call fitted in P (--compute), and repetitions (time steps).
What it writes: an mpi { } block of the rank-parametric format (goal/README.md), readable and
editable; `--goal OUT --nodes N` runs it at any N its grid allows, with or without --noise.
Checks: the schedule evaluated at every traced size gives back the trace op for op (computation
aside); the report puts messages, bytes, computation and noiseless time side by side.
Refusals: traces that do not follow one pattern (ranks making different calls, partners that are
not fixed grid offsets, wildcard receives, collectives that differ between ranks) are refused,
naming the first rank, op and scale that disagree, and what would make it work.";

/// How computation is fitted in P.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ComputeArg {
    /// Constant in P (weak scaling).
    Weak,
    /// Proportional to 1/P (strong scaling).
    Strong,
    /// Per call: with two traced sizes, whichever of the two fits better; with three or more,
    /// the form (constant, a/P, a + b/P, a + b·P, a + b·P²) that best predicts the largest
    /// traced size from the smaller ones (a second parameter only where it halves the error),
    /// fitted again to all; the report says how many of each.
    Best,
}

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ExtrapolateArgs {
    /// Traces of one program at two or more rank counts (GOAL text or binary, optionally .xz);
    /// with --replicate, one trace.
    #[arg(value_name = "TRACE", required = true)]
    pub traces: Vec<PathBuf>,
    /// The rank count you ask about: checked against the inferred grid, and the report counts
    /// messages and bytes there. With --replicate: the ranks of the copies (a multiple of the
    /// trace's).
    #[arg(long, value_name = "N", value_parser = rank_count)]
    pub nodes: Option<u32>,
    /// Write the schedule to FILE (atomically) [default: stdout, and the report to stderr].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// How computation follows P.
    #[arg(long, value_enum, default_value = "best")]
    pub compute: ComputeArg,
    /// What a plain calc number of the traces lasts (Schedgen writes ns). --tick 1ps reads them
    /// as ps, making computation 1000x shorter: the noiseless times then compare communication.
    #[arg(long, value_name = "TIME", default_value = "1ns")]
    pub tick: String,
    /// A trace to compare the schedule with, not used to infer it (e.g. the largest scale, left
    /// out); repeatable.
    #[arg(long, value_name = "TRACE")]
    pub compare: Vec<PathBuf>,
    /// Schedgen's --traces-extr: copy the one trace --nodes/P times (no traffic between copies,
    /// collectives rebuilt over all ranks) and write explicit GOAL text.
    #[arg(long)]
    pub replicate: bool,
    /// No progress messages.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

fn rank_count(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("the rank count must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "`{s}` is not a rank count (a whole number from 1 to {})",
            u32::MAX
        )),
    }
}

pub fn run(args: ExtrapolateArgs) -> Result<ExitCode> {
    let tick = crate::units::parse_tick_ps(&args.tick)
        .map_err(|e| anyhow::anyhow!("--tick {}: {e}", args.tick))?;
    let quiet = args.quiet;
    let mut progress = |m: &str| {
        if !quiet {
            errln!("{m}");
        }
    };
    if args.replicate {
        if args.traces.len() != 1 {
            bail!("--replicate copies one trace; got {}", args.traces.len());
        }
        if !args.compare.is_empty() {
            bail!("--compare does not apply with --replicate (the copies are the trace itself)");
        }
        let Some(n) = args.nodes else {
            bail!("--replicate needs --nodes N, a multiple of the trace's rank count");
        };
        progress(&format!(
            "replicating {} to {n} ranks",
            args.traces[0].display()
        ));
        let prog = loggops_extrapolate::replicate(&args.traces[0], n, tick)?;
        let emit = |w: &mut dyn Write| loggops_goal::write_goal_with(&prog, w, tick);
        match &args.output {
            Some(p) => loggops_output::write_atomic(p, emit)
                .with_context(|| format!("cannot write {}", p.display()))?,
            None => {
                let out = std::io::stdout();
                let mut lock = out.lock();
                emit(&mut lock)?;
                lock.flush()?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let opts = Options {
        nodes: args.nodes,
        compute: match args.compute {
            ComputeArg::Weak => ComputeMode::Weak,
            ComputeArg::Strong => ComputeMode::Strong,
            ComputeArg::Best => ComputeMode::Best,
        },
        tick_ps: tick,
        compare: args.compare.clone(),
        command: std::env::args()
            .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
            .collect::<Vec<_>>()
            .join(" "),
        ..Options::default()
    };
    let x = loggops_extrapolate::extrapolate(&args.traces, &opts, &mut progress)?;
    let report = x.report.render();
    match &args.output {
        Some(p) => {
            loggops_output::write_atomic(p, |w| w.write_all(x.schedule.as_bytes()))
                .with_context(|| format!("cannot write {}", p.display()))?;
            crate::run::emit(
                None,
                &format!("{report}schedule written to {}\n", p.display()),
            )?;
        }
        None => {
            crate::run::emit(None, &x.schedule)?;
            err_text(&report);
        }
    }
    Ok(ExitCode::SUCCESS)
}
