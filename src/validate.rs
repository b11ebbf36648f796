//! `loggops-sim validate`: measured collectives against the model.
//!
//! Wiring only: `loggops_calibrate::measured` reads the files, `loggops_schedgen` generates the
//! schedule each file name describes, [`crate::mc::one_run`] simulates it with the profile's
//! noise, and `loggops_report::validation` compares and renders. Repetitions run in parallel and
//! are collected in order, so the answer never depends on `--threads`.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use loggops_calibrate::{BenchmarkName, MeasuredPattern};
use loggops_engine::WindowOdds;
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
use loggops_report::validation::{
    render_validation_table, validation_csv, validation_json, Comparison,
};
use loggops_schedgen::{Collective, GenOptions, Generated};
use rayon::prelude::*;

use crate::cli::{FormatArg, RunArgs, ValidateArgs};
use crate::mc::one_run;

/// The schedule a measured benchmark ran, as the paper's programs were generated from
/// Schedgen (`goal2mpi.py` over the cloud_noise fork's Schedgen).
pub fn schedule_for(name: &BenchmarkName) -> Result<Generated> {
    let d = name.bytes;
    let mut opts = GenOptions::default();
    let pattern = match name.pattern {
        // The programs busy-wait each `calc D` for D ns.
        MeasuredPattern::NwayDissemination => {
            opts.reduce_calc = Some(
                d.checked_mul(1000)
                    .ok_or_else(|| anyhow!("{name}: a calc of {d} ns does not fit in ps"))?,
            );
            Collective::NwayDissemination
        }
        MeasuredPattern::NwayDisseminationNocompute => {
            opts.reduce_calc = Some(0);
            Collective::NwayDissemination
        }
        // Segments of ⌊D/P⌋ bytes (the default).
        MeasuredPattern::PipelinedRing => Collective::PipelinedRing,
        MeasuredPattern::BinomialTreeBcast => {
            opts.chain_sends = true;
            Collective::BinomialTreeBcast
        }
        MeasuredPattern::BinaryTreeBcast => Collective::BinaryTreeBcast,
        MeasuredPattern::LinearAlltoall => Collective::LinearAlltoall,
    };
    Generated::with_options(pattern, name.nodes, d, opts).with_context(|| format!("{name}"))
}

/// One of the paper's validation cells (its Fig. 14)?
fn paper_cell(name: &BenchmarkName) -> bool {
    match name.pattern {
        MeasuredPattern::NwayDisseminationNocompute => name.bytes == 16,
        MeasuredPattern::PipelinedRing => name.bytes == 16 << 20,
        _ => false,
    }
}

pub fn validate(args: ValidateArgs) -> Result<ExitCode> {
    let mut profile = loggops_profile::read_profile(&args.noise)?;
    let flags = RunArgs {
        l: args.l.clone(),
        o: args.o.clone(),
        g: args.g.clone(),
        big_g: args.big_g.clone(),
        big_o: args.big_o.clone(),
        s: args.s.clone(),
        ..RunArgs::default()
    };
    crate::mc::override_params(&flags, &mut profile)?;
    let mode: NoiseMode = args
        .noise_mode
        .parse()
        .map_err(|e| anyhow!("--noise-mode {}: {e}", args.noise_mode))?;
    let files = loggops_calibrate::measured_files(&args.measured)?;
    // Read everything first: a bad file fails before any simulation runs.
    let measured = files
        .iter()
        .map(|f| loggops_calibrate::read_measured(f))
        .collect::<Result<Vec<_>, _>>()?;
    let schedules = measured
        .iter()
        .map(|m| schedule_for(&m.name).with_context(|| m.path.clone()))
        .collect::<Result<Vec<_>>>()?;

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let base = NoiseConfig {
        rndv_triple_latency: true,
        ..NoiseConfig::default()
    };
    let model = NoiseModel::new(
        &profile,
        &NoiseConfig {
            mode,
            ..base.clone()
        },
    )?;
    let quiet_model = NoiseModel::new(
        &profile,
        &NoiseConfig {
            mode: NoiseMode::None,
            ..base
        },
    )?;
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(measured.len() as u64 * args.reps as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} reps (eta {eta}) {msg}",
            )
            .expect("valid template"),
        );
        b
    };
    let mut rows = Vec::with_capacity(measured.len());
    for (m, g) in measured.iter().zip(&schedules) {
        bar.set_message(m.name.to_string());
        let noiseless = one_run(g, &quiet_model, args.seed, 0, &WindowOdds::default())
            .with_context(|| format!("{}: simulating {}", m.path, m.name))?;
        let odds = WindowOdds::default();
        let samples: Vec<u64> = pool
            .install(|| {
                (0..args.reps as u64)
                    .into_par_iter()
                    .map(|rep| {
                        let t = one_run(g, &model, args.seed, rep, &odds);
                        bar.inc(1);
                        t
                    })
                    .collect::<Result<Vec<u64>>>()
            })
            .with_context(|| format!("{}: simulating {}", m.path, m.name))?;
        let mut c = Comparison::new(
            m.name.to_string(),
            m.name.pattern.name(),
            m.name.nodes as u64,
            m.name.bytes,
            &m.iteration_max_ps(),
            &samples,
        )?;
        c.paper_cell = paper_cell(&m.name);
        c.noiseless_ps = Some(noiseless);
        rows.push(c);
    }
    bar.finish_and_clear();
    let text = match args.format {
        FormatArg::Human => render_validation_table(&rows),
        FormatArg::Json => validation_json(&rows),
        FormatArg::Csv => validation_csv(&rows),
    };
    crate::run::emit(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}
