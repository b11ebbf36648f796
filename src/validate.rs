//! `loggops-sim validate`: measured collectives against the model.
//!
//! Wiring only: `loggops_calibrate::measured` reads the files, `loggops_schedgen` generates the
//! schedule each file name describes, [`crate::mc::one_outcome`] simulates it with the profile's
//! noise, and `loggops_report::validation` compares and renders. Repetitions run in parallel and
//! are collected in order, so the answer never depends on `--threads`.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use loggops_calibrate::{BenchmarkName, MeasuredPattern};
use loggops_engine::{MpiProgress, WindowOdds};
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
use loggops_report::validation::{
    render_validation_table_with, tally, validation_csv_with, validation_json_settings,
    BenchmarkId, Comparison, NotSimulated, Tally,
};
use rayon::prelude::*;

use crate::cli::{FormatArg, MeasureArg, SimulateArg, ValidateArgs};
use crate::mc::one_outcome;
use crate::schedule::{with_program, Schedule};

mod programs;

/// The schedule statement of a measured benchmark, in the rank-parametric schedule language
/// (goal/README.md): what the paper's programs ran (`goal2mpi.py` over the cloud_noise fork's
/// Schedgen).
pub fn pattern_statement(name: &BenchmarkName) -> String {
    let d = name.bytes;
    match name.pattern {
        // The programs busy-wait each `calc D` for D ns.
        MeasuredPattern::NwayDissemination => format!("nwaydissemination {d}B nway 1 calc {d}ns"),
        MeasuredPattern::NwayDisseminationNocompute => {
            format!("nwaydissemination {d}B nway 1 calc 0ns")
        }
        // Segments of ⌊D/P⌋ bytes (the default).
        MeasuredPattern::PipelinedRing => format!("pipelinedring {d}B"),
        MeasuredPattern::BinomialTreeBcast => format!("binomialtreebcast {d}B chain 1"),
        MeasuredPattern::BinaryTreeBcast => format!("binarytreebcast {d}B"),
        MeasuredPattern::LinearAlltoall => format!("linear_alltoall {d}B"),
    }
}

/// The programs' `MPI_Barrier`: a dissemination barrier of 1-byte messages, on tags of its own.
const BARRIER: &str = "dissemination 1B tag 1000000";

/// What one simulated iteration includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// Simulate the barrier before the collective and time each rank from its own exit.
    pub barrier: bool,
    /// CPU time each rank spends entering the collective before its first op, ps.
    pub call_overhead_ps: u64,
    /// Simulate the benchmark program's calls (`--simulate program`), not the bare schedule.
    pub program: bool,
}

/// A benchmark's schedules: the iteration as simulated, and the part before the collective
/// alone (whose per-rank finishing times are the ranks' start times).
pub struct Bench {
    pub iteration: Schedule,
    pub barrier: Option<Schedule>,
    /// A remark on how it was simulated (shown with its row).
    pub note: Option<String>,
}

fn parse(text: &str, name: &BenchmarkName) -> Result<Schedule> {
    let none: &[(&str, &str)] = &[];
    let s = loggops_schedgen::parse_schedule_str(text, &name.to_string(), name.nodes, none)
        .map_err(|e| anyhow!("{e}"))?;
    Ok(match s.single_collective() {
        Some(g) => Schedule::Generated(g.clone()),
        None => Schedule::Parametric(s),
    })
}

/// The schedules of benchmark `name` under `it`; `Err` says why it cannot be simulated.
pub fn bench_for(name: &BenchmarkName, it: Iteration) -> Result<Bench, String> {
    if it.program {
        let p = programs::programs(name, it.barrier, it.call_overhead_ps)?;
        return Ok(Bench {
            iteration: Schedule::Explicit(p.iteration),
            barrier: p.start.map(Schedule::Explicit),
            note: p.note,
        });
    }
    let mut text = String::from("loggops-schedule 1\n");
    if it.barrier {
        text += BARRIER;
        text.push('\n');
    }
    if it.call_overhead_ps > 0 {
        text += &format!("calc {}ps\n", it.call_overhead_ps);
    }
    text += &pattern_statement(name);
    text.push('\n');
    let cannot = |e: anyhow::Error| format!("its schedule cannot be generated: {e}");
    let barrier = if it.barrier {
        Some(parse(&format!("loggops-schedule 1\n{BARRIER}\n"), name).map_err(cannot)?)
    } else {
        None
    };
    Ok(Bench {
        iteration: parse(&text, name).map_err(cannot)?,
        barrier,
        note: None,
    })
}

/// The clock a benchmark reads its time from: steps of `resolution_ps` (0: exact), `read_ps`
/// per read.
#[derive(Clone, Copy, Debug, Default)]
pub struct BenchClock {
    pub resolution_ps: f64,
    pub read_ps: u64,
}

impl BenchClock {
    /// What rank `rank` reads for a region of `d` ps: the region and one read, between two
    /// readings of a clock whose steps fall at a phase of its own (uniform, drawn per seed,
    /// repetition and rank).
    fn read(&self, d: u64, rng: &loggops_noise::rng::CounterRng, rank: u64) -> Result<u64> {
        let d = d
            .checked_add(self.read_ps)
            .ok_or_else(|| anyhow!("the timed region overflows the clock"))?;
        let q = self.resolution_ps;
        if q <= 0.0 {
            return Ok(d);
        }
        let phase = rng.unit_at(rank, loggops_noise::rng::DOMAIN_CLOCK << 56);
        Ok((q * (phase + d as f64 / q).floor()).round() as u64)
    }
}

/// One iteration's time as the benchmark measured it: the maximum over ranks of finish minus
/// start (start 0 without the barrier, the rank's barrier exit with it), each read on the
/// benchmark's clock, ps.
#[allow(clippy::too_many_arguments)]
fn iteration_time(
    b: &Bench,
    clock: BenchClock,
    model: &NoiseModel,
    seed: u64,
    rep: u64,
    odds: &WindowOdds,
    engine: loggops_engine::Model,
) -> Result<u64> {
    let run = |s: &crate::schedule::Schedule| {
        with_program!(s, |p| one_outcome(p, model, seed, rep, odds, engine, 1))
    };
    let fin = run(&b.iteration)?.finish;
    // The same (seed, rep) draws the barrier's messages and OS noise identically: its ops
    // come first in both programs.
    let start = match &b.barrier {
        None => vec![0; fin.len()],
        Some(barrier) => run(barrier)?.finish,
    };
    let rng = loggops_noise::rng::CounterRng::new(seed, rep);
    let mut worst = 0;
    for (r, (f, s)) in fin.iter().zip(&start).enumerate() {
        worst = worst.max(clock.read(f.saturating_sub(*s), &rng, r as u64)?);
    }
    Ok(worst)
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
    crate::mc::install_interrupt_handler(
        "dropping the benchmark in progress, then writing the ones finished (marked partial)",
    );
    let Compared {
        rows,
        skipped,
        header,
        settings,
        not_reached,
        evidence,
    } = compare(&args)?;
    let interrupted = not_reached.is_some();
    let text = match args.format {
        FormatArg::Human => format!(
            "{header}\n{}{}",
            render_validation_table_with(&rows, &skipped),
            evidence
                .as_deref()
                .map(|e| format!("{e}\n"))
                .unwrap_or_default()
        ),
        FormatArg::Json => validation_json_settings(&rows, &skipped, settings, interrupted),
        FormatArg::Csv => validation_csv_with(&rows, &skipped),
    };
    let output = args
        .output
        .as_deref()
        .map(|p| crate::mc::partial_target(p, interrupted));
    crate::run::emit(output.as_deref(), &text)?;
    // CSV has no place for it (JSON has `settings.mpi_progress_evidence`).
    if let (FormatArg::Csv, Some(e), false) = (args.format, &evidence, args.quiet) {
        crate::out::errln!("{e}");
    }
    if let Some(not_reached) = not_reached {
        crate::out::errln!(
            "interrupted: wrote a partial result ({} benchmark(s) simulated, {not_reached} not \
             reached, {} not simulatable; all listed with their reasons)",
            rows.len(),
            skipped.len() - not_reached
        );
        return Ok(ExitCode::from(crate::mc::EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}

/// Repetitions that tell whether a benchmark's time depends on the MPI progress rule.
const PROGRESS_PROBE: u64 = 8;

/// The reason given for the benchmarks that Ctrl-C left unsimulated.
const INTERRUPTED: &str = "interrupted (Ctrl-C) before it was simulated";

/// What [`compare`] found: one row per simulated benchmark, the files it could not simulate
/// with their reasons, and the settings line of the human table.
pub(crate) struct Compared {
    pub rows: Vec<Comparison>,
    pub skipped: Vec<NotSimulated>,
    pub header: String,
    /// How the comparison was made, for the JSON output (`settings`).
    pub settings: serde_json::Value,
    /// Ctrl-C stopped it: how many benchmarks it did not reach (listed in `skipped`).
    pub not_reached: Option<usize>,
    /// What the benchmarks that depend on the MPI progress rule say about it (a line).
    pub evidence: Option<String>,
}

/// The comparison of every measured benchmark, in file order, writing nothing (`validate` and
/// the library's `api::validate` render it).
pub(crate) fn compare(args: &ValidateArgs) -> Result<Compared> {
    // Flags first: a bad value fails before any file is read.
    let time_flag = |flag: &str, v: &Option<String>| -> Result<Option<u64>> {
        v.as_deref()
            .map(|t| crate::units::parse_time_ps(t).map_err(|e| anyhow!("--{flag} {t}: {e}")))
            .transpose()
    };
    let call_overhead_ps = time_flag("call-overhead", &args.call_overhead)?.unwrap_or(0);
    let resolution_flag = time_flag("clock-resolution", &args.clock_resolution)?;
    let read_flag = time_flag("clock-read", &args.clock_read)?;
    let mut profile = loggops_profile::read_profile(&args.noise)?;
    let clock = BenchClock {
        resolution_ps: resolution_flag.map_or_else(
            || profile.clock.map_or(0.0, |c| c.resolution_ps),
            |v| v as f64,
        ),
        read_ps: read_flag.unwrap_or_else(|| profile.clock.map_or(0, |c| c.read_ps.round() as u64)),
    };
    let loggops = [&args.l, &args.o, &args.g, &args.big_g, &args.big_o, &args.s];
    let flags = crate::request::ParamFlags::parse(loggops, None)?;
    flags.apply_to_profile(&mut profile);
    let mode: NoiseMode = match &args.noise_mode {
        Some(m) => m.parse().map_err(|e| anyhow!("--noise-mode {m}: {e}"))?,
        // The noise the profile holds, as the main command's default.
        None => match crate::checks::profile_noise(&profile) {
            (true, true) => NoiseMode::OsNet,
            (false, true) => NoiseMode::Net,
            (true, false) => NoiseMode::Os,
            (false, false) => NoiseMode::None,
        },
    };
    let files = loggops_calibrate::measured_files(&args.measured)?;
    let it = Iteration {
        barrier: args.measure == MeasureArg::Barrier,
        call_overhead_ps,
        program: args.simulate == SimulateArg::Program,
    };
    // Read and generate everything first; a file that cannot be simulated is listed with its
    // reason and the others run.
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    let mut errors = Vec::new();
    for f in &files {
        let shown = f.display().to_string();
        // Each reason twice: for the listing (the file is named beside it) and as a message.
        let (name, made) = match loggops_calibrate::read_measured(f) {
            Ok(m) => {
                let b = bench_for(&m.name, it).map_err(|r| (format!("{shown}: {r}"), r));
                (Some(m.name), b.map(|b| (m, b)))
            }
            Err(e) => {
                let name = f
                    .file_name()
                    .and_then(|n| BenchmarkName::parse(&n.to_string_lossy()).ok());
                let message = e.to_string();
                let reason = without_path(&message, &shown);
                (name, Err((message, reason)))
            }
        };
        match made {
            Ok(job) => jobs.push(job),
            Err((message, reason)) => {
                errors.push(message);
                skipped.push(not_simulated(&shown, name.as_ref(), reason));
            }
        }
    }
    if jobs.is_empty() {
        match errors.as_slice() {
            [one] => bail!("{one}"),
            all => bail!(
                "none of the {} measured files can be simulated:\n  {}",
                all.len(),
                all.join("\n  ")
            ),
        }
    }

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let base = NoiseConfig {
        rndv_triple_latency: true,
        mpi_progress: args.mpi_progress.map(Into::into),
        bandwidth_levels: args.bandwidth_levels.map_or(Default::default(), Into::into),
        ..NoiseConfig::default()
    };
    // A measured run lies inside a latency episode or, far more likely, outside: the
    // prediction is the state outside, the episodes are simulated beside it.
    let episode_weight = profile.episode_weight();
    let (profile, episode_profile) = profile.split_episodes();
    let model = NoiseModel::new(
        &profile,
        &NoiseConfig {
            mode,
            ..base.clone()
        },
    )?;
    let episodes = match &episode_profile {
        Some(p) if mode.net() => Some((
            episode_weight,
            NoiseModel::new(
                p,
                &NoiseConfig {
                    mode,
                    ..base.clone()
                },
            )?,
        )),
        _ => None,
    };
    let quiet_model = NoiseModel::new(
        &profile,
        &NoiseConfig {
            mode: NoiseMode::None,
            ..base.clone()
        },
    )?;
    let progress = model.mpi_progress();
    // Evidence for the progress rule when no --mpi-progress settles it: the benchmarks whose
    // time depends on it are simulated under the other rule too.
    let other_rule = match args.mpi_progress {
        Some(_) => None,
        None => Some(NoiseModel::new(
            &profile,
            &NoiseConfig {
                mode,
                mpi_progress: Some(progress.other()),
                ..base.clone()
            },
        )?),
    };
    let mut contrasts = Vec::new();
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let states = 1 + episodes.is_some() as u64;
        let b = ProgressBar::new(jobs.len() as u64 * args.reps as u64 * states);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} reps (eta {eta}) {msg}",
            )
            .expect("valid template"),
        );
        b
    };
    let engine = args.model.into();
    let mut rows = Vec::with_capacity(jobs.len());
    // Ctrl-C: the benchmark in progress, from which on the rest is listed as not reached.
    let mut stopped_at = None;
    for (i, (m, b)) in jobs.iter().enumerate() {
        if crate::mc::interrupted() {
            stopped_at = Some(i);
            break;
        }
        bar.set_message(m.name.to_string());
        // Repetitions `reps` of the benchmark under `model`.
        let reps_of = |model: &NoiseModel, reps: std::ops::Range<u64>| {
            let odds = WindowOdds::default();
            pool.install(|| {
                reps.into_par_iter()
                    .map(|rep| {
                        // Ctrl-C (the CLI's handler or a library front end's).
                        if crate::mc::interrupted() {
                            return Err(crate::mc::Interrupted(format!("repetition {rep}")).into());
                        }
                        let t = iteration_time(b, clock, model, args.seed, rep, &odds, engine);
                        bar.inc(1);
                        t
                    })
                    .collect::<Result<Vec<u64>>>()
            })
        };
        let all = 0..args.reps as u64;
        let simulated = (|| -> Result<_> {
            let noiseless = iteration_time(
                b,
                clock,
                &quiet_model,
                args.seed,
                0,
                &WindowOdds::default(),
                engine,
            )?;
            let samples = reps_of(&model, all.clone())?;
            let in_episodes = episodes
                .as_ref()
                .map(|(_, m)| reps_of(m, all.clone()))
                .transpose()?;
            // Under the other rule only where the rule matters: the mean of its first
            // repetitions (the same draws) differs by more than 1 %. A failure there leaves
            // the benchmark out of the evidence, not out of the table.
            let other = match &other_rule {
                Some(noisy) => {
                    let probe = all.end.min(PROGRESS_PROBE);
                    let other = || -> Result<Option<Vec<u64>>> {
                        bar.inc_length(probe);
                        let mut o = reps_of(noisy, 0..probe)?;
                        let sum = |s: &[u64]| s.iter().map(|&t| t as f64).sum::<f64>();
                        let (x, y) = (sum(&o), sum(&samples[..o.len()]));
                        if (x - y).abs() <= 0.01 * y {
                            return Ok(None);
                        }
                        bar.inc_length(all.end - probe);
                        o.extend(reps_of(noisy, probe..all.end)?);
                        Ok(Some(o))
                    };
                    match other() {
                        Ok(o) => o,
                        Err(e) if crate::mc::is_interrupted(&e) => return Err(e),
                        Err(_) => None,
                    }
                }
                None => None,
            };
            Ok((noiseless, samples, in_episodes, other))
        })();
        let (noiseless, samples, in_episodes, other) = match simulated {
            Ok(s) => s,
            // Only Ctrl-C's own error: a failure at the same moment is listed with its reason.
            Err(e) if crate::mc::is_interrupted(&e) => {
                stopped_at = Some(i);
                break;
            }
            Err(e) => {
                // A benchmark whose simulation fails is listed; the others run.
                let reason = format!("simulating {}: {e:#}", m.name);
                skipped.push(not_simulated(&m.path, Some(&m.name), reason));
                continue;
            }
        };
        let mut c = Comparison::new(
            m.name.to_string(),
            m.name.pattern.name(),
            m.name.nodes as u64,
            m.name.bytes,
            &m.iteration_max_ps(),
            &samples,
        )?;
        c.paper_cell = paper_cell(&m.name);
        c.model = crate::run::model_name(engine).into();
        c.noiseless_ps = Some(noiseless);
        c.mpi_progress = Some(progress.name().into());
        c.note = b.note.clone();
        c.file = Some(m.path.clone());
        if let (Some((w, _)), Some(e)) = (&episodes, &in_episodes) {
            c.episodes = Some((*w, loggops_report::stats::Summary::try_from_samples(e)?));
        }
        if let Some(o) = &other {
            let mut c = c.clone();
            c.simulated = loggops_report::stats::Summary::try_from_samples(o)?;
            contrasts.push((rows.len(), c));
        }
        rows.push(c);
    }
    bar.finish_and_clear();
    for (m, _) in &jobs[stopped_at.unwrap_or(jobs.len())..] {
        skipped.push(not_simulated(&m.path, Some(&m.name), INTERRUPTED.into()));
    }
    let not_reached = stopped_at.map(|i| jobs.len() - i);
    if !args.quiet && not_reached.is_none() && !skipped.is_empty() {
        crate::out::errln!(
            "warning: {} of {} measured files not simulated (listed with their reasons in the output)",
            skipped.len(),
            files.len()
        );
    }
    let origin = match (args.mpi_progress, profile.mpi_progress) {
        (Some(_), _) => "--mpi-progress",
        (None, Some(_)) => "the profile's",
        (None, None) => "the default: the profile has none",
    };
    let evidence = match (&other_rule, stopped_at) {
        (Some(_), None) => progress_evidence(progress, origin, &rows, &contrasts),
        _ => None,
    };
    let episodes_said = match &episodes {
        Some((w, _)) => format!(
            "; the profile's latency episodes ({:.1} % of its capture's samples) simulated apart \
             (column `mean sim, episodes`), the prediction being the state outside them",
            100.0 * w
        ),
        None => String::new(),
    };
    let overrides = &flags.typed;
    let overrides_said = if overrides.is_empty() {
        String::new()
    } else {
        format!(
            ", the profile's parameters overridden by {}",
            overrides.join(" ")
        )
    };
    let clock_said = if clock.resolution_ps == 0.0 && clock.read_ps == 0 {
        String::new()
    } else {
        let origin = match (resolution_flag.is_some(), read_flag.is_some()) {
            (true, true) => "--clock-resolution, --clock-read",
            (true, false) => "--clock-resolution; its read the profile's",
            (false, true) => "--clock-read; its steps the profile's",
            (false, false) => "the profile's",
        };
        let read = loggops_units::fmt_time_ps(clock.read_ps);
        if clock.resolution_ps == 0.0 {
            format!(", each region plus one clock read of {read} ({origin})")
        } else {
            format!(
                ", read on a clock of {} steps at {read} per read ({origin})",
                loggops_units::fmt_time_ps_f64(clock.resolution_ps)
            )
        }
    };
    let measured_said = match args.measure {
        MeasureArg::Barrier => "each rank timed from its barrier exit (--measure barrier)",
        MeasureArg::Collective => "the collective alone (--measure collective)",
    };
    let header = format!(
        "profile {} (system {}), {} model, noise mode {}, MPI progress {} ({origin}), {}, {measured_said}{clock_said}, {} repetition{} per benchmark, seed {}{overrides_said}{episodes_said}",
        args.noise.display(),
        profile.system,
        crate::run::model_name(engine),
        mode,
        progress.name(),
        if it.program {
            "the benchmark programs' calls"
        } else {
            "the bare schedules"
        },
        args.reps,
        if args.reps == 1 { "" } else { "s" },
        args.seed,
    );
    let settings = serde_json::json!({
        "line": header,
        "profile": args.noise.display().to_string(),
        "profile_sha256": crate::inputs::sha256_file(&args.noise)?,
        "seed": args.seed,
        "reps": args.reps,
        "noise_mode": mode.to_string(),
        "model": crate::run::model_name(engine),
        "mpi_progress": progress.name(),
        "simulate": if it.program { "program" } else { "schedule" },
        "measure": if it.barrier { "barrier" } else { "collective" },
        "clock_resolution_ps": clock.resolution_ps,
        "clock_read_ps": clock.read_ps,
        "overrides": overrides,
        "version": env!("CARGO_PKG_VERSION"),
        "mpi_progress_evidence": evidence.as_ref().map(|e| &e.json),
    });
    Ok(Compared {
        rows,
        skipped,
        header,
        settings,
        not_reached,
        evidence: evidence.map(|e| e.line),
    })
}

/// What the benchmarks whose time depends on the MPI progress rule say about it.
struct ProgressEvidence {
    /// One line for the human table.
    line: String,
    json: serde_json::Value,
}

/// The errors of the benchmarks that depend on the progress rule under the rule simulated
/// (`rows`, `rule`, from `origin`) and under the other one (`others`: the row's index and its
/// comparison under the other rule); `None` when no benchmark depends on it. A rule is
/// favoured when the median error of the means is at least 5 points lower with it and no
/// fewer means are within 10 %.
fn progress_evidence(
    rule: MpiProgress,
    origin: &str,
    rows: &[Comparison],
    others: &[(usize, Comparison)],
) -> Option<ProgressEvidence> {
    if others.is_empty() {
        return None;
    }
    let other = rule.other();
    let these: Vec<Comparison> = others.iter().map(|(i, _)| rows[*i].clone()).collect();
    let those: Vec<Comparison> = others.iter().map(|(_, c)| c.clone()).collect();
    let (a, b) = (tally(&these), tally(&those));
    let better = |x: &Tally, y: &Tally| {
        x.median_mean_error + 0.05 < y.median_mean_error && x.mean_within >= y.mean_within
    };
    let favours = if better(&b, &a) {
        Some(other)
    } else if better(&a, &b) {
        Some(rule)
    } else {
        None
    };
    let names: Vec<&str> = these.iter().map(|c| c.benchmark.as_str()).collect();
    let shown = match names.len() {
        n if n <= 6 => names.join(", "),
        n => format!("{}, and {} more", names[..5].join(", "), n - 5),
    };
    let said = |t: &Tally, r: MpiProgress| {
        format!(
            "{:.1} % with {} ({} within 10 %)",
            100.0 * t.median_mean_error,
            r.name(),
            t.mean_within
        )
    };
    let verdict = match favours {
        Some(f) if f == rule => format!("the measurements favour {} ({origin})", rule.name()),
        Some(f) => format!(
            "the measurements favour {0}: `calibrate --mpi-progress {0}` records it in the \
             profile, `--mpi-progress {0}` predicts with it here",
            f.name()
        ),
        None => "the measurements do not settle it".to_string(),
    };
    let line = format!(
        "MPI progress: {} benchmark{} depend{} on it ({shown}); median error of their means {}, \
         {}: {verdict}",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        if names.len() == 1 { "s" } else { "" },
        said(&a, rule),
        said(&b, other),
    );
    let per_rule = |t: &Tally| {
        serde_json::json!({
            "median_mean_error": t.median_mean_error,
            "mean_within_10pct": t.mean_within,
        })
    };
    let benchmarks: Vec<serde_json::Value> = these
        .iter()
        .zip(&those)
        .map(|(x, y)| {
            serde_json::json!({
                "benchmark": x.benchmark,
                "measured_mean_ps": x.measured.mean.round() as u64,
                format!("{}_mean_ps", rule.name()): x.simulated.mean.round() as u64,
                format!("{}_mean_ps", other.name()): y.simulated.mean.round() as u64,
            })
        })
        .collect();
    let json = serde_json::json!({
        "line": line,
        "simulated": rule.name(),
        "favours": favours.map(MpiProgress::name),
        "benchmarks": benchmarks,
        rule.name(): per_rule(&a),
        other.name(): per_rule(&b),
    });
    Some(ProgressEvidence { line, json })
}

/// `message` without a leading `path:` (the listing names the file).
fn without_path(message: &str, path: &str) -> String {
    message
        .strip_prefix(path)
        .and_then(|m| m.strip_prefix(':'))
        .map(|m| m.trim_start().to_string())
        .unwrap_or_else(|| message.to_string())
}

fn not_simulated(file: &str, name: Option<&BenchmarkName>, reason: String) -> NotSimulated {
    NotSimulated {
        file: file.to_string(),
        benchmark: name.map(|n| BenchmarkId {
            benchmark: n.to_string(),
            pattern: n.pattern.name().to_string(),
            nodes: n.nodes as u64,
            bytes: n.bytes,
        }),
        reason,
    }
}
