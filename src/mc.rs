//! Monte-Carlo runs with a noise profile: repetitions in parallel (rayon), collected in
//! repetition order, so the result never depends on the thread count.
//!
//! The threads are shared between repetitions and windows ([`threads_per_rep`]): while a
//! batch has at least as many repetitions as threads each repetition runs on one thread;
//! fewer repetitions (one huge one) split their ranks between the threads left
//! (`WindowOdds::simulate_on`, the windowed engine's parallel windows). The noiseless
//! baseline (global engine, one thread) runs alongside the first batch of repetitions of
//! each rank count, never alone before them.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use loggops_engine::{simulate, Config, NoNoise, Params, PerByte, Program, WindowOdds};
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel, ScaleMode};
use loggops_profile::{BaseParams, Profile};
use loggops_report::{Cell, CellSamples, CostModel, Format, Labels};
use rayon::prelude::*;

use crate::cli::{FormatArg, Reps, RunArgs};
use crate::schedule::{self, with_program};
use loggops_goal::ParseOptions;

/// Applies explicit `-L -o -g -G -O -S` flags to both placements of the profile.
pub(crate) fn override_params(args: &RunArgs, profile: &mut Profile) -> Result<()> {
    let near = profile.near.params.clone();
    let as_engine = |b: &BaseParams| Params {
        l: b.l_ps.round() as u64,
        o: b.o_ps.round() as u64,
        g: b.g_ps.round() as u64,
        big_g: PerByte::from_f64(b.big_g_ps_per_byte).unwrap_or_default(),
        big_o: PerByte::from_f64(b.big_o_ps_per_byte).unwrap_or_default(),
        s: b.s_bytes,
        rndv_extra_latencies: 0,
    };
    let flagged = crate::run::resolve_params(args, as_engine(&near))?;
    let apply = |b: &mut BaseParams| {
        if args.l.is_some() {
            b.l_ps = flagged.l as f64;
        }
        if args.o.is_some() {
            b.o_ps = flagged.o as f64;
        }
        if args.g.is_some() {
            b.g_ps = flagged.g as f64;
        }
        if args.big_g.is_some() {
            b.big_g_ps_per_byte = flagged.big_g.as_f64();
        }
        if args.big_o.is_some() {
            b.big_o_ps_per_byte = flagged.big_o.as_f64();
        }
        if args.s.is_some() {
            b.s_bytes = flagged.s;
        }
    };
    apply(&mut profile.near.params);
    if let Some(far) = &mut profile.far {
        apply(&mut far.params);
    }
    Ok(())
}

/// One simulated time (max over ranks), ps, or an error naming what did not complete.
pub(crate) fn one_run<P: Program>(
    prog: &P,
    model: &NoiseModel,
    seed: u64,
    rep: u64,
    odds: &WindowOdds,
    engine_model: loggops_engine::Model,
    explain: Option<&crate::explain::McPaths>,
    threads: usize,
) -> Result<u64> {
    // Issue 30 hook: a repetition that --critical-path/--timeline record runs there (on the
    // global engine, same answer).
    if let Some(r) = explain.and_then(|x| x.run(prog, model, engine_model, seed, rep)) {
        return r;
    }
    Ok(
        one_outcome(prog, model, seed, rep, odds, engine_model, threads)?
            .max()
            .0,
    )
}

/// One simulated repetition's outcome (every rank's finishing time), or an error naming what
/// did not complete; a noisy windowed run uses up to `threads` threads (the same answer).
pub(crate) fn one_outcome<P: Program>(
    prog: &P,
    model: &NoiseModel,
    seed: u64,
    rep: u64,
    odds: &WindowOdds,
    engine_model: loggops_engine::Model,
    threads: usize,
) -> Result<loggops_engine::Outcome> {
    let mut cfg = Config::new(model.engine_params());
    cfg.model = engine_model;
    let out = if model.needs_noise_run() {
        let mut n = model.instance(seed, rep, prog.num_ranks());
        odds.simulate_on(prog, &cfg, &mut n, threads)?
    } else {
        simulate(prog, &cfg, &mut NoNoise)?
    };
    if !out.completed() {
        bail!(
            "the schedule did not complete (repetition {rep}): {} rank(s) have unmatched messages or ops that never ran; run it without --noise for details",
            out.leftovers.len()
        );
    }
    Ok(out)
}

/// Threads per repetition when `reps` repetitions share `threads` threads, one of them kept
/// for the noiseless baseline when `baseline`: one each while there are at least as many
/// repetitions as threads, else the free threads split evenly (never more in all than
/// `threads`: a batch of `reps` runs at most `reps` repetitions at once).
fn threads_per_rep(threads: usize, reps: usize, baseline: bool) -> usize {
    let free = threads.saturating_sub(baseline as usize).max(1);
    (free / reps.max(1)).max(1)
}

pub fn monte_carlo(
    args: &RunArgs,
    goal: &Path,
    ov: &[(String, String)],
    goal_opts: &ParseOptions,
) -> Result<ExitCode> {
    let path = args.noise.as_deref().expect("called with --noise");
    let mut profile = loggops_profile::read_profile(path)?;
    override_params(args, &mut profile)?;
    let modes = crate::checks::noise_modes(&args.noise_mode, &profile, path)?;
    let explain = crate::explain::McPaths::new(args, goal, &modes)?; // issue 30 hook
    let nodes: Vec<Option<u32>> = if args.nodes.is_empty() {
        vec![None]
    } else {
        args.nodes.iter().map(|&n| Some(n)).collect()
    };
    let threads = args.threads.unwrap_or(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;

    let base_cfg = NoiseConfig {
        scaling: if args.absolute_latency {
            ScaleMode::Absolute
        } else {
            ScaleMode::MedianToBase
        },
        cosched: args.cosched,
        rndv_triple_latency: args.rndv_3l.unwrap_or(true),
        nodes_per_switch: args.nodes_per_switch,
        ..NoiseConfig::default()
    };
    let noisy_cells = nodes.len() * modes.iter().filter(|m| **m != NoiseMode::None).count();
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let per_cell = match args.reps {
            Reps::Fixed(n) => n,
            Reps::Auto => Reps::AUTO_FIRST,
        };
        let b = ProgressBar::new(noisy_cells as u64 * per_cell as u64);
        b.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} reps ({per_sec}, eta {eta}) {msg}")
                .expect("valid template"),
        );
        b
    };

    let workload = goal
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let plan = crate::budget::plan(args);
    crate::budget::precheck(goal, &args.nodes, ov, &plan)?;
    let mut cells: Vec<(Cell, Vec<u64>)> = Vec::new();
    let mut explicit = false;
    for n in nodes {
        let sched = schedule::load(goal, n, ov, goal_opts)?;
        crate::budget::check(&sched, &crate::budget::what(goal, n), &plan)?;
        explicit = sched.is_explicit();
        let ranks = sched.num_ranks();
        let none_model = NoiseModel::new(
            &profile,
            &NoiseConfig {
                mode: NoiseMode::None,
                ..base_cfg.clone()
            },
        )?;
        // The noiseless baseline, computed once per rank count: alongside the first batch
        // of the first noisy mode, or alone when every mode is `none`.
        let baseline_run = || {
            with_program!(&sched, |p| one_run(
                p,
                &none_model,
                args.seed,
                0,
                &WindowOdds::default(),
                crate::run::model(args),
                explain.as_ref(),
                1
            ))
        };
        let mut baseline: Option<u64> = None;
        let mut cost = CostModel::new(ranks as u64);
        if let Some(p) = profile.prices.on_demand_usd_per_node_hour {
            cost = cost.with_on_demand(p);
        }
        if let Some(p) = profile.prices.committed_usd_per_node_hour {
            cost = cost.with_committed(p);
        }
        // Noisy modes first (the baseline runs with the first), then the cells in order.
        let mut noisy: Vec<Option<Vec<u64>>> = vec![None; modes.len()];
        for (i, &mode) in modes.iter().enumerate() {
            if mode == NoiseMode::None {
                continue;
            }
            noisy[i] = Some({
                let model = NoiseModel::new(
                    &profile,
                    &NoiseConfig {
                        mode,
                        ..base_cfg.clone()
                    },
                )?;
                bar.set_message(format!("{ranks} nodes, {mode}"));
                let odds = WindowOdds::default();
                // Repetitions `range`, with the baseline alongside when it is still missing.
                let run = |range: std::ops::Range<u64>, baseline: &mut Option<u64>| {
                    let with_baseline = baseline.is_none();
                    let per_rep = threads_per_rep(
                        pool.current_num_threads(),
                        (range.end - range.start) as usize,
                        with_baseline,
                    );
                    let reps = || {
                        range
                            .into_par_iter()
                            .map(|rep| {
                                let t = with_program!(&sched, |p| one_run(
                                    p,
                                    &model,
                                    args.seed,
                                    rep,
                                    &odds,
                                    crate::run::model(args),
                                    explain.as_ref(),
                                    per_rep
                                ));
                                bar.inc(1);
                                t
                            })
                            .collect::<Result<Vec<u64>>>()
                    };
                    pool.install(|| {
                        if with_baseline {
                            let (b, samples) = rayon::join(baseline_run, reps);
                            *baseline = Some(b?);
                            samples
                        } else {
                            reps()
                        }
                    })
                };
                match args.reps {
                    Reps::Fixed(n) => run(0..n as u64, &mut baseline)?,
                    Reps::Auto => {
                        // Checkpoints 32, 64, ..., 1000: the same repetitions whatever the
                        // thread count, so the stopping point is reproducible.
                        let mut samples = run(0..Reps::AUTO_FIRST as u64, &mut baseline)?;
                        while samples.len() < Reps::AUTO_MAX as usize
                            && !loggops_report::precise(&samples, Reps::AUTO_PRECISION)
                        {
                            let next = (2 * samples.len()).min(Reps::AUTO_MAX as usize);
                            bar.inc_length((next - samples.len()) as u64);
                            samples.extend(run(samples.len() as u64..next as u64, &mut baseline)?);
                        }
                        samples
                    }
                }
            });
        }
        let baseline = match baseline {
            Some(b) => b,
            None => baseline_run()?,
        };
        for (&mode, samples) in modes.iter().zip(noisy) {
            let samples = samples.unwrap_or_else(|| vec![baseline]);
            let labels = Labels::new(
                workload.clone(),
                profile.system.clone(),
                ranks as u64,
                mode.as_str(),
            );
            let cell = Cell::new(labels, &samples, Some(baseline), Some(&cost))?;
            cells.push((cell, samples));
        }
    }
    bar.finish_and_clear();

    let only_cells: Vec<Cell> = cells.iter().map(|(c, _)| c.clone()).collect();
    let format = match args.format {
        FormatArg::Human => Format::Table,
        FormatArg::Json => Format::Json,
        FormatArg::Csv => Format::Csv,
    };
    if let Some(path) = &args.samples {
        let groups: Vec<CellSamples> = cells
            .iter()
            .map(|(c, s)| CellSamples {
                cell: c,
                samples: s,
            })
            .collect();
        loggops_report::write_samples(path, &groups)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let text = match format {
        Format::Json => {
            loggops_report::to_json_string_with(&only_cells, &[("tick_ps", goal_opts.tick_ps)])
        }
        Format::Table if explicit => format!(
            "{}\n{}",
            crate::run::tick_note(goal, goal_opts),
            format.render_to_string(&only_cells)
        ),
        _ => format.render_to_string(&only_cells),
    };
    crate::run::emit(args.output.as_deref(), &text)?;
    if let Some(x) = explain {
        x.finish(&profile.system)?; // issue 30 hook
    }
    Ok(ExitCode::SUCCESS)
}
