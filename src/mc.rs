//! Sweeps: the `--goal` × `--noise` × `--nodes` × `--noise-mode` runs, noisy (Monte-Carlo
//! repetitions with noise profiles) or noiseless, in three separate steps:
//!
//! 1. **plan** ([`plan`]): expand the input lists, load and hash the profiles, resolve the
//!    parameters near and far, and describe everything in a [`loggops_report::Plan`];
//! 2. **execute** ([`execute`]): fill one [`CellResult`] per planned cell. Repetitions run in
//!    parallel (rayon) and are collected by repetition index, so the result never depends on
//!    the thread count. The threads are shared between repetitions and windows
//!    ([`threads_per_rep`]): while a batch has at least as many repetitions as threads each
//!    repetition runs on one thread; fewer repetitions (one huge one) split their ranks between
//!    the threads left (`WindowOdds::simulate_on`, the windowed engine's parallel windows). The
//!    noiseless baseline is computed once per (workload, system, nodes); with a profile it runs
//!    alongside the first chunk of noisy repetitions, never alone before them;
//! 3. **render** ([`write_outputs`]): every output (table or JSON or CSV, `--samples`, `--plot`,
//!    `--report`) is drawn from the [`RunResult`] alone.
//!
//! Ctrl-C (SIGINT) sets a flag: no new repetition starts, repetitions in progress finish
//! (a noiseless run of the global engine stops at once through the engine's progress hook), the
//! finished repetitions are written to every output marked partial, and the exit status is 130.
//! A second Ctrl-C ends the process at once.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use loggops_engine::{Config, EngineError, NoNoise, Params, Program, Progress, WindowOdds};
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel, ScaleMode};
use loggops_profile::Profile;
use loggops_report::{
    CellResult, EngineParams, Format, NoiseSettings, Plan, Prices, ProfileRef, Provenance, RepSet,
    RepsRule, RunFacts, RunResult, Settings, ShardBy, Share, Status, SystemInfo, Tool,
    WorkloadInfo,
};
use rayon::prelude::*;

use crate::cli::{EngineArg, FormatArg, MergeArgs, OrderArg, Reps};
use crate::inputs;
use crate::request::{Outputs, Request};
use crate::schedule::{self, with_program, Schedule};

/// The engine's progress hook for every run of this process (its stop flag is Ctrl-C's).
pub static HOOK: Progress = Progress::new();
/// A hook nobody stops: the noiseless baseline that runs alongside noisy repetitions finishes
/// even after Ctrl-C, so that the repetitions finished with it are kept.
static UNSTOPPED: Progress = Progress::new();
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// What the first Ctrl-C of a sweep does (the words after "interrupted: ").
pub const SWEEP_STOPS: &str =
    "finishing the repetitions in progress, then writing what finished (marked partial)";

/// Installs the Ctrl-C handler (once): the first Ctrl-C asks the run to stop and keep what
/// finished (`what` says how), the second ends the process.
pub fn install_interrupt_handler(what: &'static str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(move || {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                crate::out::errln!("\ninterrupted again: quitting without writing results");
                std::process::exit(EXIT_INTERRUPTED as i32);
            }
            HOOK.request_stop();
            crate::out::errln!("\ninterrupted: {what}; Ctrl-C again to quit at once");
        });
    });
}

/// The error of a run that Ctrl-C stopped (and of nothing else): callers that list what Ctrl-C
/// left out tell it from a failure that happened at the same moment by its type.
#[derive(Debug)]
pub(crate) struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} was interrupted (Ctrl-C)", self.0)
    }
}

impl std::error::Error for Interrupted {}

/// Whether `e` (or an error it wraps) is [`Interrupted`].
pub(crate) fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Interrupted>())
}

/// True once Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// What Ctrl-C does, for a front end that catches it itself (the Python module): no new
/// repetition starts, a noiseless run stops at its next report.
pub(crate) fn request_interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    HOOK.request_stop();
}

/// Clears [`request_interrupt`] before the next run of a process that runs several.
pub(crate) fn clear_interrupt() {
    INTERRUPTED.store(false, Ordering::SeqCst);
    HOOK.clear_stop();
    HOOK.reset();
}

/// A system of the plan with what its cells need to run.
struct System {
    info: SystemInfo,
    /// `None`: a noiseless run with the parameters of the flags.
    profile: Option<Profile>,
    base_cfg: NoiseConfig,
    /// The parameters of a noiseless run without a profile.
    flag_params: Params,
}

/// The `--noise-mode` list. Without a profile only `none`. With profiles: as given, each mode
/// checked against every profile; by default the noise every profile holds (`os+net`, or `net`
/// or `os` when a profile lacks the other kind; see `checks::noise_modes`).
fn modes(raw: &[String], profiles: &[(&std::path::Path, &Profile)]) -> Result<Vec<NoiseMode>> {
    if profiles.is_empty() {
        if raw.iter().any(|m| m != "none") {
            bail!(
                "--noise-mode {} needs a noise profile: give --noise FILE.h5",
                raw.join(",")
            );
        }
        return Ok(vec![NoiseMode::None]);
    }
    if raw.is_empty() {
        let (os, net) = profiles.iter().fold((true, true), |(os, net), (_, p)| {
            let (o, n) = crate::checks::profile_noise(p);
            (os && o, net && n)
        });
        // Systems side by side run the same modes: the noise every profile holds. Say what
        // that leaves out of the profiles that hold more.
        for (kind, common, has) in [("OS", os, 0usize), ("network", net, 1usize)] {
            if common {
                continue;
            }
            let holds = |p: &Profile| {
                let (o, n) = crate::checks::profile_noise(p);
                [o, n][has]
            };
            let (with, without): (Vec<_>, Vec<_>) = profiles.iter().partition(|(_, p)| holds(p));
            if let (Some(_), Some((lacks, _))) = (with.first(), without.first()) {
                crate::out::errln!(
                    "note: {} has no {kind} noise, so the {kind} noise of {} is left out (systems side by side run the same noise modes, the noise every profile holds; run a profile alone to see all of its noise)",
                    lacks.display(),
                    with.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>().join(", ")
                );
            }
        }
        return Ok(vec![match (os, net) {
            (true, true) => NoiseMode::OsNet,
            (false, true) => NoiseMode::Net,
            (true, false) => NoiseMode::Os,
            (false, false) => NoiseMode::None,
        }]);
    }
    let mut modes = Vec::new();
    for (path, p) in profiles {
        modes = crate::checks::noise_modes(raw, p, path)?;
    }
    // A mode given twice runs once (as a node count or a profile given twice does).
    let mut seen = Vec::new();
    modes.retain(|m| {
        let first = !seen.contains(m);
        seen.push(*m);
        first
    });
    Ok(modes)
}

fn engine_params(p: &Params) -> EngineParams {
    EngineParams {
        l_ps: p.l,
        o_ps: p.o,
        g_ps: p.g,
        big_g_ps_per_byte: p.big_g.as_f64(),
        big_o_ps_per_byte: p.big_o.as_f64(),
        s_bytes: p.s,
        rndv_3l: p.rndv_extra_latencies > 0,
    }
}

/// What the outputs say of a system's MPI progress: only `polled`, which differs from
/// LogGOPSim's behaviour.
/// The settings' words for a profile's latency by size (near, then far when it has its own).
fn size_latency(profile: &loggops_profile::Profile) -> Option<String> {
    let points = |pl: &loggops_profile::Placement| {
        pl.latency_by_size
            .as_ref()
            .map(|t| crate::profile_show::size_latency_points(t, pl.params.s_bytes))
    };
    let near = points(&profile.near);
    match profile.far.as_ref().and_then(points) {
        Some(far) if Some(&far) != near.as_ref() => Some(format!(
            "near {}; far {far}",
            near.as_deref().unwrap_or("none")
        )),
        _ => near,
    }
}

fn polled_name(m: loggops_engine::MpiProgress) -> Option<String> {
    (m == loggops_engine::MpiProgress::Polled).then(|| m.name().to_string())
}

/// Step 1: what to run, described completely.
fn plan(req: &Request) -> Result<(Plan, Vec<System>)> {
    let (st, goals, profiles) = (&req.settings, &req.inputs.goals, &req.inputs.profiles);
    let noisy = req.noisy();
    let base_cfg = NoiseConfig {
        scaling: if st.absolute_latency {
            ScaleMode::Absolute
        } else {
            ScaleMode::MedianToBase
        },
        cosched: st.cosched,
        rndv_triple_latency: st.params.rndv_3l.unwrap_or(true),
        nodes_per_switch: st.nodes_per_switch,
        mpi_progress: st.mpi_progress.map(Into::into),
        bandwidth_levels: st.bandwidth_levels.map_or(Default::default(), Into::into),
        ..NoiseConfig::default()
    };

    let mut systems = Vec::new();
    if noisy {
        let mut loaded = Vec::new();
        for path in profiles {
            let bytes = std::fs::read(path)
                .with_context(|| format!("cannot read noise profile {}", path.display()))?;
            let mut profile = loggops_profile::read_profile(path)?;
            st.params.apply_to_profile(&mut profile);
            loaded.push((inputs::sha256_bytes(&bytes), profile));
        }
        let names = inputs::unique_names(profiles, |i| loaded[i].1.system.clone());
        for ((path, (sha256, profile)), name) in profiles.iter().zip(loaded).zip(names) {
            let model = NoiseModel::new(
                &profile,
                &NoiseConfig {
                    mode: NoiseMode::None,
                    ..base_cfg.clone()
                },
            )?;
            let p = &profile.provenance;
            let info = SystemInfo {
                name,
                description: profile.description.clone(),
                profile: Some(ProfileRef {
                    path: path.display().to_string(),
                    sha256,
                    provenance: Provenance {
                        sources: p.sources.clone(),
                        command: p.command.clone(),
                        created: p.created.clone(),
                        tool_version: p.tool_version.clone(),
                        notes: p.notes.clone(),
                    },
                }),
                near: engine_params(&model.near_params()),
                far: profile
                    .far
                    .as_ref()
                    .map(|_| engine_params(&model.far_params())),
                nodes_per_switch: Some(model.nodes_per_switch()),
                prices: Prices {
                    on_demand_usd_per_node_hour: profile.prices.on_demand_usd_per_node_hour,
                    committed_usd_per_node_hour: profile.prices.committed_usd_per_node_hour,
                    ..crate::spot::prices_in_force(&st.spot.inputs, &profile.prices.spot)
                },
                mpi_progress: polled_name(model.mpi_progress()),
                latency_episodes: profile.has_episodes().then(|| profile.episode_weight()),
                latency_by_size: size_latency(&profile),
            };
            systems.push(System {
                info,
                profile: Some(profile),
                base_cfg: base_cfg.clone(),
                flag_params: Params::loggopsim_defaults_ps(),
            });
        }
    } else {
        let params = st.params.apply(Params::loggopsim_defaults_ps());
        systems.push(System {
            info: SystemInfo {
                name: "flags".into(),
                description: "LogGOPS parameters of the command line (LogGOPSim's defaults \
                              read as ns where none is given)"
                    .into(),
                profile: None,
                near: engine_params(&params),
                far: None,
                nodes_per_switch: None,
                prices: crate::spot::prices_in_force(
                    &st.spot.inputs,
                    &loggops_profile::SpotPrices::default(),
                ),
                mpi_progress: polled_name(st.mpi_progress.map(Into::into).unwrap_or_default()),
                latency_episodes: None,
                latency_by_size: None,
            },
            profile: None,
            base_cfg,
            flag_params: params,
        });
    }

    let modes = modes(
        &st.noise_modes,
        &profiles
            .iter()
            .zip(&systems)
            .filter_map(|(path, s)| Some((path.as_path(), s.profile.as_ref()?)))
            .collect::<Vec<_>>(),
    )?;
    let names = inputs::unique_names(goals, |i| inputs::stem(&goals[i]));
    let mut workloads = Vec::new();
    for (path, name) in goals.iter().zip(names) {
        let explicit = !schedule::is_parametric(path)?;
        workloads.push(WorkloadInfo {
            name,
            path: path.display().to_string(),
            // An explicit file (the large ones) is hashed as it is parsed ([`execute`]).
            sha256: if explicit {
                String::new()
            } else {
                inputs::sha256_file(path)
                    .with_context(|| format!("cannot read schedule {}", path.display()))?
            },
            params: req.inputs.params.clone(),
            explicit,
        });
    }
    let plan = Plan {
        workloads,
        systems: systems.iter().map(|s| s.info.clone()).collect(),
        nodes: req.inputs.nodes.clone(),
        noise_modes: modes.iter().map(|m| m.as_str().to_string()).collect(),
        settings: Settings {
            seed: st.seed,
            reps: if !noisy || modes.iter().all(|m| m.as_str() == "none") {
                // No noisy cell: every cell is one deterministic run.
                RepsRule::Single
            } else {
                match st.reps {
                    Reps::Fixed(n) => RepsRule::Fixed { count: n as u64 },
                    Reps::Auto => RepsRule::Auto {
                        first: Reps::AUTO_FIRST as u64,
                        max: Reps::AUTO_MAX as u64,
                        precision: Reps::AUTO_PRECISION,
                    },
                }
            },
            time_unit: "ps".into(),
            order: match st.order {
                OrderArg::Stable => "stable".into(),
                OrderArg::Libstdcxx => "libstdcxx".into(),
            },
            model: crate::run::model_name(st.model).into(),
            tick_ps: st.goal_opts.tick_ps,
            noise: noisy.then(|| NoiseSettings {
                latency_scaling: if st.absolute_latency {
                    "absolute".into()
                } else {
                    "median".into()
                },
                cosched: st.cosched,
                bandwidth_levels: st
                    .bandwidth_levels
                    .map(|l| loggops_noise::LevelScope::from(l).as_str().into()),
            }),
            param_flags: st.params.typed.clone(),
            job: st.job,
            why_reps: if noisy { st.why_reps } else { 0 },
            spot: crate::spot::settings(&st.spot, systems.iter().map(|s| &s.info.prices)), // issue 47
        },
    };
    Ok((plan, systems))
}

/// What the execution step reports on and how it runs repetitions.
struct Exec<'a> {
    req: &'a Request,
    /// Issue 30: records repetitions for --critical-path/--timeline.
    explain: Option<&'a crate::explain::McPaths>,
    /// `None` without noise.
    pool: Option<rayon::ThreadPool>,
    bar: ProgressBar,
    /// `--engine`, and what ran the current cell's repetitions.
    engines: crate::lanes::Engines,
}

/// One simulated time (max over ranks), ps; `Ok(None)` when the run was stopped by Ctrl-C
/// (through `hook`: [`HOOK`], or [`UNSTOPPED`] for a run whose result must not be lost).
#[allow(clippy::too_many_arguments)]
fn one_run<P: Program>(
    prog: &P,
    model: &NoiseModel,
    seed: u64,
    rep: u64,
    odds: &WindowOdds,
    engine_model: loggops_engine::Model,
    explain: Option<&crate::explain::McPaths>,
    why: &crate::why::Target,
    threads: usize,
    hook: &'static Progress,
    choice: EngineArg,
) -> Result<Option<u64>> {
    // Issue 30 hook: a repetition that --critical-path/--timeline record runs there (on the
    // global engine, same answer).
    if let Some(r) = explain.and_then(|x| x.run(prog, model, engine_model, seed, rep)) {
        let (t, path) = r?;
        why.keep(&path); // issue 42 hook
        return Ok(Some(t));
    }
    // Issue 42 hook: the verdict's repetitions carry their critical path's attribution
    // forward (global engine, same answer).
    // Not with polled MPI progress and rendezvous messages: the attribution does not follow
    // a rendezvous message's wait for a calc yet (the verdict says so); without rendezvous
    // messages polled progress is asynchronous progress.
    if why.wants(rep) && !polled_rendezvous(prog, model.mpi_progress(), model.engine_params().s) {
        return why.run(prog, model, engine_model, seed, rep).map(Some);
    }
    match outcome(
        prog,
        model,
        seed,
        rep,
        odds,
        engine_model,
        threads,
        hook,
        choice,
    )? {
        Some(out) => Ok(Some(out.max().0)),
        None => Ok(None),
    }
}

/// Whether a run has polled MPI progress that can matter: a message above the eager
/// threshold `s` (the only kind whose progress polling decides).
pub(crate) fn polled_rendezvous<P: Program>(
    prog: &P,
    progress: loggops_engine::MpiProgress,
    s: u64,
) -> bool {
    progress == loggops_engine::MpiProgress::Polled && prog.any_send_above(s)
}

/// One simulated repetition's outcome (every rank's finishing time), or an error naming what
/// did not complete (`validate` runs its repetitions through it too); a noisy windowed run uses
/// up to `threads` threads (the same answer).
pub(crate) fn one_outcome<P: Program>(
    prog: &P,
    model: &NoiseModel,
    seed: u64,
    rep: u64,
    odds: &WindowOdds,
    engine_model: loggops_engine::Model,
    threads: usize,
) -> Result<loggops_engine::Outcome> {
    outcome(
        prog,
        model,
        seed,
        rep,
        odds,
        engine_model,
        threads,
        &HOOK,
        EngineArg::Auto,
    )?
    .ok_or_else(|| Interrupted(format!("repetition {rep}")).into())
}

/// [`one_outcome`], or `Ok(None)` when Ctrl-C stopped the run (`hook`'s flag).
#[allow(clippy::too_many_arguments)]
fn outcome<P: Program>(
    prog: &P,
    model: &NoiseModel,
    seed: u64,
    rep: u64,
    odds: &WindowOdds,
    engine_model: loggops_engine::Model,
    threads: usize,
    hook: &'static Progress,
    choice: EngineArg,
) -> Result<Option<loggops_engine::Outcome>> {
    let cfg = Config {
        progress: Some(hook),
        model: engine_model,
        mpi_progress: model.mpi_progress(),
        ..Config::new(model.engine_params())
    };
    let out = if model.needs_noise_run() {
        let mut n = model.instance(seed, rep, prog.num_ranks());
        crate::lanes::run_alone(choice, prog, &cfg, &mut n, odds, threads)
    } else {
        loggops_engine::simulate(prog, &cfg, &mut NoNoise)
    };
    let out = match out {
        Err(EngineError::Stopped) => return Ok(None),
        r => r?,
    };
    if !out.completed() {
        return Err(Incomplete { rep, out }.into());
    }
    Ok(Some(out))
}

/// A repetition that did not complete, with what was left over (the sweep names it as a
/// noiseless run does, [`crate::run::describe_leftovers`]).
#[derive(Debug)]
pub(crate) struct Incomplete {
    pub(crate) rep: u64,
    pub(crate) out: loggops_engine::Outcome,
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the schedule did not complete (repetition {}): {} rank(s) have unmatched messages or ops that never ran; run it without --noise for details",
            self.rep,
            self.out.leftovers.len()
        )
    }
}

impl std::error::Error for Incomplete {}

/// Threads per repetition when `reps` repetitions share `threads` threads, one of them kept
/// for the noiseless baseline when `baseline`: one each while there are at least as many
/// repetitions as threads, else the free threads split evenly (never more in all than
/// `threads`: a chunk of `reps` runs at most `reps` repetitions at once).
fn threads_per_rep(threads: usize, reps: usize, baseline: bool) -> usize {
    let free = threads.saturating_sub(baseline as usize).max(1);
    (free / reps.max(1)).max(1)
}

/// Repetitions to run: one alone, or up to [`crate::lanes::LANES`] in one walk.
enum Work {
    One(u64),
    Walk(Vec<u64>),
}

/// A profile's noiseless baseline, run alongside the first chunk of noisy repetitions.
struct Pending<'a> {
    /// Runs it (one thread) with the given stop hook; `Ok(None)` when stopped.
    run: &'a (dyn Fn(&'static Progress) -> Result<Option<u64>> + Sync),
    /// `None` until it ran.
    time: Option<Option<u64>>,
}

impl Exec<'_> {
    /// Repetitions `set` of a cell in parallel; the finished ones as (rep, time), in order.
    /// They run in chunks (a bounded amount of memory per chunk), and none starts once Ctrl-C
    /// was pressed. The noiseless baseline in `pending` runs alongside the first chunk when it
    /// has not run yet.
    fn reps(
        &self,
        sched: &Schedule,
        model: &NoiseModel,
        set: RepSet,
        pending: &mut Pending,
        why: &crate::why::Target,
    ) -> Result<Vec<(u64, u64)>> {
        const CHUNK: u64 = 4096;
        let pool = self.pool.as_ref().expect("noisy runs have worker threads");
        let odds = WindowOdds::default();
        let seed = self.req.settings.seed;
        let engine_model = self.req.settings.model;
        let batched = with_program!(sched, |p| self.engines.batched(p, model, engine_model))?;
        let mut got = Vec::new();
        let total = set.len();
        let mut start = 0;
        while start < total && !interrupted() {
            let end = (start + CHUNK).min(total);
            let with_baseline = pending.time.is_none();
            let per_rep = threads_per_rep(
                pool.current_num_threads(),
                (end - start) as usize,
                with_baseline,
            );
            let single = |rep: u64| -> Result<Option<(u64, u64)>> {
                if interrupted() {
                    return Ok(None);
                }
                let t = with_program!(sched, |p| one_run(
                    p,
                    model,
                    seed,
                    rep,
                    &odds,
                    engine_model,
                    self.explain,
                    why,
                    per_rep,
                    &HOOK,
                    self.engines.choice
                ))?;
                if t.is_some() {
                    self.bar.inc(1);
                }
                Ok(t.map(|t| (rep, t)))
            };
            let work = self.work(sched, model, why, (start..end).map(|i| set.nth(i)), batched);
            let chunk = || {
                work.par_iter()
                    .map(|w| match w {
                        Work::One(rep) => Ok(vec![single(*rep)?]),
                        Work::Walk(reps) => self.walk(sched, model, reps, &odds),
                    })
                    .collect::<Result<Vec<Vec<Option<(u64, u64)>>>>>()
                    .map(|v| v.into_iter().flatten().collect::<Vec<_>>())
            };
            let run = pending.run;
            let (baseline, done) = pool.install(|| {
                if with_baseline {
                    let (b, done) = rayon::join(|| run(&UNSTOPPED), chunk);
                    (Some(b), done)
                } else {
                    (None, chunk())
                }
            });
            if let Some(b) = baseline {
                pending.time = Some(b?);
            }
            let done = done?;
            got.extend(done.into_iter().flatten());
            start = end;
        }
        got.sort_unstable_by_key(|&(rep, _)| rep);
        Ok(got)
    }

    /// The repetitions `reps` as work items: in walks of up to [`crate::lanes::LANES`] when
    /// `batched`, except those recorded for `--critical-path`, `--timeline` or the verdict's
    /// why (which run alone, recorded); one at a time otherwise.
    fn work(
        &self,
        sched: &Schedule,
        model: &NoiseModel,
        why: &crate::why::Target,
        reps: impl Iterator<Item = u64>,
        batched: bool,
    ) -> Vec<Work> {
        if !batched {
            return reps.map(Work::One).collect();
        }
        let ranks = sched.num_ranks();
        let rndv_polled = with_program!(sched, |p| polled_rendezvous(
            p,
            model.mpi_progress(),
            model.engine_params().s
        ));
        let recorded = |rep: u64| {
            self.explain
                .is_some_and(|x| x.records(ranks, model.mode(), rep))
                || (why.wants(rep) && !rndv_polled)
        };
        let (alone, walked): (Vec<u64>, Vec<u64>) = reps.partition(|&rep| recorded(rep));
        let mut work: Vec<Work> = alone.into_iter().map(Work::One).collect();
        work.extend(
            walked
                .chunks(crate::lanes::LANES)
                .map(|c| Work::Walk(c.to_vec())),
        );
        work
    }

    /// One walk of repetitions `reps`; those it gives up run alone.
    fn walk(
        &self,
        sched: &Schedule,
        model: &NoiseModel,
        reps: &[u64],
        odds: &WindowOdds,
    ) -> Result<Vec<Option<(u64, u64)>>> {
        if interrupted() {
            return Ok(Vec::new());
        }
        let seed = self.req.settings.seed;
        let engine_model = self.req.settings.model;
        let choice = self.engines.choice;
        let got = with_program!(sched, |p| self.engines.walk(
            p,
            model,
            engine_model,
            seed,
            reps,
            &HOOK,
            |rep| {
                let out = outcome(p, model, seed, rep, odds, engine_model, 1, &HOOK, choice)?;
                Ok(out.map(|o| o.max().0))
            }
        ))?;
        Ok(got
            .into_iter()
            .map(|(rep, t)| {
                if t.is_some() {
                    self.bar.inc(1);
                }
                t.map(|t| (rep, t))
            })
            .collect())
    }

    /// A noisy cell's repetitions by the repetition rule, or those of `share` (a shard's);
    /// `complete` is false when Ctrl-C cut it short.
    fn noisy_cell(
        &self,
        sched: &Schedule,
        model: &NoiseModel,
        share: Share,
        pending: &mut Pending,
        why: &crate::why::Target,
    ) -> Result<(Vec<(u64, u64)>, bool)> {
        let fixed = match (share, self.req.settings.reps) {
            (Share::Reps(set), _) => Some(set),
            (_, Reps::Fixed(n)) => Some(RepSet::all(n as u64)),
            (_, Reps::Auto) => None,
        };
        match fixed {
            Some(set) => {
                let got = self.reps(sched, model, set, pending, why)?;
                let complete = got.len() as u64 == set.len();
                Ok((got, complete))
            }
            None => {
                // Checkpoints 32, 64, ..., 1000: the same repetitions whatever the thread
                // count, so the stopping point is reproducible.
                let first = Reps::AUTO_FIRST as u64;
                let mut got = self.reps(sched, model, RepSet::all(first), pending, why)?;
                let mut planned = first;
                loop {
                    if got.len() as u64 != planned {
                        return Ok((got, false));
                    }
                    let times: Vec<u64> = got.iter().map(|&(_, t)| t).collect();
                    if planned >= Reps::AUTO_MAX as u64
                        || loggops_report::precise(&times, Reps::AUTO_PRECISION)
                    {
                        return Ok((got, true));
                    }
                    let next = (2 * planned).min(Reps::AUTO_MAX as u64);
                    self.bar.inc_length(next - planned);
                    got.extend(self.reps(
                        sched,
                        model,
                        RepSet {
                            first: planned,
                            step: 1,
                            end: next,
                        },
                        pending,
                        why,
                    )?);
                    planned = next;
                }
            }
        }
    }
}

/// The noiseless run of a schedule (the global engine, with the progress hook polled from this
/// thread for a bar when it takes long); `None` when Ctrl-C stopped it.
fn noiseless_run(
    sched: &Schedule,
    cfg: &Config,
    quiet: bool,
    what: &str,
) -> Result<Option<(loggops_engine::Outcome, f64)>> {
    let total = with_program!(sched, |p| p.total_ops());
    HOOK.reset();
    let show = !quiet && std::io::stderr().is_terminal();
    // Without a bar to draw, the run needs no second thread.
    let (out, wall) = if !show {
        let start = Instant::now();
        let out = with_program!(sched, |p| loggops_engine::simulate(p, cfg, &mut NoNoise));
        (out, start.elapsed().as_secs_f64())
    } else {
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            s.spawn(move || {
                // The wall time is the simulation's own, not the polling's.
                let start = Instant::now();
                let out = with_program!(sched, |p| loggops_engine::simulate(p, cfg, &mut NoNoise));
                let _ = tx.send((out, start.elapsed().as_secs_f64()));
            });
            let start = Instant::now();
            let mut bar: Option<ProgressBar> = None;
            loop {
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(done) => {
                        if let Some(b) = bar {
                            b.finish_and_clear();
                        }
                        return done;
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        panic!("the simulation thread ended without a result")
                    }
                }
                if bar.is_none() && start.elapsed() > Duration::from_millis(700) {
                    let b = ProgressBar::new(total);
                    b.set_style(
                        ProgressStyle::with_template(
                            "{spinner} [{elapsed_precise}] {bar:40} {percent}% of {human_len} ops \
                         (eta {eta}) {msg}",
                        )
                        .expect("valid template"),
                    );
                    b.set_message(what.to_string());
                    bar = Some(b);
                }
                if let Some(b) = &bar {
                    b.set_position(HOOK.ops_started().min(total));
                }
            }
        })
    };
    match out {
        Err(EngineError::Stopped) => Ok(None),
        Err(e) => Err(e.into()),
        Ok(o) => Ok(Some((o, wall))),
    }
}

/// Step 2: runs every planned cell. Returns the result and, for a noiseless schedule that did
/// not complete, the schedule and outcome to describe (exit status 1).
#[allow(clippy::too_many_arguments)]
fn execute(
    req: &Request,
    noiseless_explain: &mut Option<crate::explain::Noiseless>,
    mc_explain: Option<&crate::explain::McPaths>,
    why: &crate::why::Why,
    plan: Plan,
    systems: &[System],
    budget: &crate::budget::Plan,
    hash: Hashing,
) -> Result<(RunResult, Option<String>)> {
    let (st, goals) = (&req.settings, &req.inputs.goals);
    let (ov, goal_opts) = (&req.inputs.params, &st.goal_opts);
    let tool = Tool {
        name: "loggops-sim".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    let mut result = RunResult::new(tool, inputs::command_line(), plan.clone());
    result.shard = st.shard;
    let keys = plan.cells();
    // What this process runs of each cell: everything, or a shard's share.
    let shares: Vec<Share> = match st.shard {
        Some(shard) => plan.shares(shard),
        None => vec![Share::Whole; keys.len()],
    };
    let noisy = plan.settings.noise.is_some();
    let show = !req.outputs.quiet && std::io::stderr().is_terminal();
    let bar = if !show || !noisy {
        ProgressBar::hidden()
    } else {
        let per_cell = match st.reps {
            Reps::Fixed(n) => n as u64,
            Reps::Auto => Reps::AUTO_FIRST as u64,
        };
        let planned_reps: u64 = keys
            .iter()
            .filter(|k| plan.noise_modes[k.noise_mode] != "none")
            .map(|k| match shares[k.id] {
                Share::Nothing => 0,
                Share::Whole => per_cell,
                Share::Reps(set) => set.len(),
            })
            .sum();
        let b = ProgressBar::new(planned_reps);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} reps (eta {eta}) {msg}",
            )
            .expect("valid template"),
        );
        b
    };
    let exec = Exec {
        req,
        explain: mc_explain,
        // Worker threads only for noisy repetitions (a noiseless sweep runs on this thread).
        pool: if noisy {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(st.threads.unwrap_or(0))
                    .build()
                    .context("cannot start worker threads")?,
            )
        } else {
            None
        },
        bar,
        engines: crate::lanes::Engines::new(st.engine),
    };
    let node_list: Vec<Option<u32>> = if plan.nodes.is_empty() {
        vec![None]
    } else {
        plan.nodes.iter().map(|&n| Some(n)).collect()
    };
    let mut cells: Vec<CellResult> = Vec::new();
    'outer: for (w, goal) in goals.iter().enumerate() {
        let wl = &plan.workloads[w];
        for &n in &node_list {
            if interrupted() {
                break 'outer;
            }
            // A shard loads only what it has a share of.
            if !keys
                .iter()
                .any(|k| k.workload == w && k.nodes == n && shares[k.id] != Share::Nothing)
            {
                continue;
            }
            let sched = if result.plan.workloads[w].sha256.is_empty() && hash == Hashing::Always {
                let (sched, sha) = schedule::load_hashed(goal, n, ov, goal_opts)?;
                result.plan.workloads[w].sha256 = sha;
                sched
            } else {
                schedule::load(goal, n, ov, goal_opts)?
            };
            crate::budget::check(&sched, &crate::budget::what(goal, n), budget)?;
            let ranks = sched.num_ranks();
            for (s, sys) in systems.iter().enumerate() {
                let here = |m: usize| {
                    keys.iter()
                        .find(|k| {
                            k.workload == w && k.system == s && k.nodes == n && k.noise_mode == m
                        })
                        .map(|k| k.id)
                        .expect("a planned cell")
                };
                if (0..plan.noise_modes.len()).all(|m| shares[here(m)] == Share::Nothing) {
                    continue;
                }
                let cell = |m: usize, reps: Vec<(u64, u64)>, complete, base, run| CellResult {
                    id: here(m),
                    workload: wl.name.clone(),
                    system: sys.info.name.clone(),
                    nodes: ranks as u64,
                    noise_mode: plan.noise_modes[m].clone(),
                    complete,
                    noiseless_ps: base,
                    reps: reps.iter().map(|r| r.0).collect(),
                    samples_ps: reps.iter().map(|r| r.1).collect(),
                    run,
                    why: None,
                    engine: None,
                };
                // The noiseless baseline, once per (workload, system, nodes). With a profile
                // it runs through the noise model in mode `none`, which places messages near
                // or far, alongside the first chunk of the noisy repetitions (never alone
                // before them); without one, with the flags' parameters.
                let Some(profile) = &sys.profile else {
                    exec.bar.set_message(format!(
                        "{}, {}, {ranks} nodes, noiseless",
                        wl.name, sys.info.name
                    ));
                    let cfg = Config {
                        order: crate::run::order(st.order),
                        model: st.model,
                        progress: Some(&HOOK),
                        mpi_progress: st.mpi_progress.map(Into::into).unwrap_or_default(),
                        ..Config::new(sys.flag_params)
                    };
                    let what = format!("{} on {ranks} ranks", wl.name);
                    let (out, wall) = match noiseless_explain.as_mut() {
                        // Issue 30 hook: recorded on the global engine (same answer).
                        Some(x) => {
                            let start = Instant::now();
                            let out = with_program!(&sched, |p| x.simulate(p, &cfg))
                                .with_context(|| format!("simulating {}", goal.display()))?;
                            (out, start.elapsed().as_secs_f64())
                        }
                        None => {
                            let Some(run) = noiseless_run(&sched, &cfg, req.outputs.quiet, &what)?
                            else {
                                break 'outer;
                            };
                            run
                        }
                    };
                    if !out.completed() {
                        let text = crate::run::describe_leftovers(goal, &sched, &out);
                        return Ok((result, Some(text)));
                    }
                    // Without a profile every mode is `none` (the plan says so).
                    let base = out.max().0;
                    for m in 0..plan.noise_modes.len() {
                        if shares[here(m)] == Share::Nothing {
                            continue;
                        }
                        let facts = RunFacts {
                            max_rank: out.max().1,
                            events: out.events,
                            ops: with_program!(&sched, |p| p.total_ops()),
                            messages: out.messages,
                            finish_ps: out.finish.clone(),
                            wall_s: wall,
                            peak_rss_bytes: crate::run::peak_rss_bytes(),
                        };
                        cells.push(cell(m, vec![(0, base)], true, Some(base), Some(facts)));
                    }
                    continue;
                };
                let none = NoiseModel::new(
                    profile,
                    &NoiseConfig {
                        mode: NoiseMode::None,
                        ..sys.base_cfg.clone()
                    },
                )?;
                let base_why = why.target(&wl.name, &sys.info.name, ranks as u64, "none");
                let baseline_run = |hook: &'static Progress| {
                    with_program!(&sched, |p| one_run(
                        p,
                        &none,
                        st.seed,
                        0,
                        &WindowOdds::default(),
                        st.model,
                        exec.explain,
                        &base_why,
                        1,
                        hook,
                        st.engine
                    ))
                    .with_context(|| format!("{}, the noiseless baseline", goal.display()))
                };
                let mut pending = Pending {
                    run: &baseline_run,
                    time: None,
                };
                // A run that did not complete is named as a noiseless run names it (exit
                // status 1); other errors pass.
                let leftovers = |e: anyhow::Error| match e.downcast_ref::<Incomplete>() {
                    Some(i) => Ok(crate::run::describe_leftovers(goal, &sched, &i.out)),
                    None => Err(e),
                };
                // Noisy modes first (the baseline runs with the first chunk), then the cells.
                let mut noisy = Vec::new();
                for (m, mode) in plan.noise_modes.iter().enumerate() {
                    let share = shares[here(m)];
                    if share == Share::Nothing || mode == "none" {
                        continue;
                    }
                    if interrupted() {
                        break;
                    }
                    let model = NoiseModel::new(
                        profile,
                        &NoiseConfig {
                            mode: mode.parse().map_err(|e| anyhow!("{e}"))?,
                            ..sys.base_cfg.clone()
                        },
                    )?;
                    exec.bar.set_message(format!(
                        "{}, {}, {ranks} nodes, {mode}",
                        wl.name, sys.info.name
                    ));
                    let target = why.target(&wl.name, &sys.info.name, ranks as u64, mode);
                    let (reps, complete) =
                        match exec.noisy_cell(&sched, &model, share, &mut pending, &target) {
                            Ok(r) => r,
                            Err(e) => return Ok((result, Some(leftovers(e)?))),
                        };
                    noisy.push((m, reps, complete, exec.engines.describe()));
                    if !complete {
                        break;
                    }
                }
                let base = match pending.time {
                    Some(t) => t,
                    None if interrupted() => None,
                    None => {
                        exec.bar.set_message(format!(
                            "{}, {}, {ranks} nodes, noiseless",
                            wl.name, sys.info.name
                        ));
                        match baseline_run(&HOOK) {
                            Ok(t) => t,
                            Err(e) => return Ok((result, Some(leftovers(e)?))),
                        }
                    }
                };
                // A baseline stopped by Ctrl-C leaves these cells out.
                let Some(base) = base else { break 'outer };
                for (m, mode) in plan.noise_modes.iter().enumerate() {
                    if mode == "none" && shares[here(m)] != Share::Nothing {
                        cells.push(cell(m, vec![(0, base)], true, Some(base), None));
                    }
                }
                let mut stop = false;
                for (m, reps, complete, engine) in noisy {
                    if !reps.is_empty() {
                        let mut c = cell(m, reps, complete, Some(base), None);
                        c.engine = Some(engine);
                        cells.push(c);
                    }
                    stop |= !complete;
                }
                if stop || interrupted() {
                    break 'outer;
                }
            }
        }
    }
    exec.bar.finish_and_clear();
    // Explicit files this process did not load (a shard's, or after Ctrl-C) are hashed here.
    for (wl, goal) in result.plan.workloads.iter_mut().zip(goals) {
        if wl.sha256.is_empty() && hash == Hashing::Always {
            wl.sha256 = inputs::sha256_file(goal)
                .with_context(|| format!("cannot read schedule {}", goal.display()))?;
        }
    }
    cells.sort_by_key(|c| c.id);
    result.cells = cells;
    if interrupted() {
        result.status = Status::Interrupted;
    }
    Ok((result, None))
}

/// The noiseless table: per workload its parameters, per node count its time and the engine's
/// counters, then the settings.
fn noiseless_text(run: &RunResult) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let sys = &run.plan.systems[0];
    for w in &run.plan.workloads {
        let st = &run.plan.settings;
        let _ = writeln!(
            s,
            "{}: {} ({} order, {} model{}{})",
            w.path,
            loggops_report::table::describe_params(&sys.near),
            st.order,
            st.model,
            match &sys.mpi_progress {
                Some(m) => format!(", MPI progress {m}"),
                None => String::new(),
            },
            if w.explicit {
                format!(
                    "; plain calc numbers are ticks of {}",
                    crate::units::format_duration(st.tick_ps)
                )
            } else {
                String::new()
            }
        );
        for c in run.cells.iter().filter(|c| c.workload == w.name) {
            let t = c.samples_ps[0];
            match &c.run {
                Some(f) => {
                    let _ = writeln!(
                        s,
                        "{} rank{}: finishes at {} (last rank: {}); {} events ({} ops + {} messages), simulated in {:.3}s ({:.1} M events/s)",
                        c.nodes,
                        if c.nodes == 1 { "" } else { "s" },
                        loggops_report::fmt_time_ps(t),
                        f.max_rank,
                        f.events,
                        f.ops,
                        f.messages,
                        f.wall_s,
                        f.events as f64 / f.wall_s.max(1e-9) / 1e6
                    );
                }
                None => {
                    let _ = writeln!(
                        s,
                        "{} rank{}: finishes at {}",
                        c.nodes,
                        if c.nodes == 1 { "" } else { "s" },
                        loggops_report::fmt_time_ps(t)
                    );
                }
            }
        }
    }
    s.push('\n');
    s.push_str(&loggops_report::render_footer(run));
    s
}

/// Where a partial result goes: beside an existing regular file `path` (`out.json` ->
/// `out.partial.json`), which is kept, so that Ctrl-C never replaces a complete result with a
/// partial one; else `path`.
pub(crate) fn partial_target(path: &std::path::Path, partial: bool) -> PathBuf {
    if !partial || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(e) => format!("{stem}.partial.{}", e.to_string_lossy()),
        None => format!("{stem}.partial"),
    };
    let beside = path.with_file_name(name);
    crate::out::errln!(
        "{} exists and is kept: the partial result went to {}",
        path.display(),
        beside.display()
    );
    beside
}

/// Step 3: every output the flags ask for, from the result alone.
fn write_outputs(args: &Outputs, run: &RunResult) -> Result<()> {
    let format = match args.format {
        FormatArg::Human => Format::Table,
        FormatArg::Json => Format::Json,
        FormatArg::Csv => Format::Csv,
    };
    // Everything that can fail short of the disk is done before anything is written: a plot
    // with nothing to draw does not leave the samples of a run whose table was never written.
    for (kind, path) in &args.plot {
        loggops_report::plot::check_plot(path, run, *kind)
            .with_context(|| format!("--plot {}", path.display()))?;
    }
    let html = match &args.report {
        Some(path) => Some(
            loggops_report::html::render_html(run)
                .with_context(|| format!("--report {}", path.display()))?,
        ),
        None => None,
    };
    let text = if format == Format::Table && run.plan.settings.noise.is_none() {
        noiseless_text(run)
    } else if format == Format::Table {
        // Above the table, what plain calc numbers of explicit files were read as.
        let mut t = String::new();
        for w in run.plan.workloads.iter().filter(|w| w.explicit) {
            t.push_str(&crate::run::tick_note(&w.path, run.plan.settings.tick_ps));
            t.push('\n');
        }
        if !t.is_empty() {
            t.push('\n');
        }
        t.push_str(&format.render_to_string(run));
        t
    } else {
        format.render_to_string(run)
    };
    if let Some(path) = &args.samples {
        let path = partial_target(path, run.is_partial());
        loggops_report::write_samples(&path, run)
            .with_context(|| format!("--samples: cannot write {}", path.display()))?;
    }
    for (kind, path) in &args.plot {
        loggops_report::plot::write_plot(&partial_target(path, run.is_partial()), run, *kind)
            .with_context(|| format!("--plot {}", path.display()))?;
    }
    if let (Some(path), Some(html)) = (&args.report, html) {
        let path = partial_target(path, run.is_partial());
        loggops_output::write_atomic(&path, |w| std::io::Write::write_all(w, html.as_bytes()))
            .with_context(|| format!("--report: cannot write {}", path.display()))?;
    }
    let output = args
        .output
        .as_deref()
        .map(|p| partial_target(p, run.is_partial()));
    crate::run::emit(output.as_deref(), &text).with_context(|| match &output {
        Some(p) => format!("--output {}", p.display()),
        None => "stdout".into(),
    })
}

/// A sweep: plan, execute, write. Exit status 0, 1 for a schedule that did not complete
/// (noiseless), 130 when interrupted.
pub fn sweep(req: &Request) -> Result<ExitCode> {
    install_interrupt_handler(SWEEP_STOPS);
    let Swept {
        result,
        stalled,
        noiseless_explain,
        mc_explain,
        system,
    } = match run(req, Hashing::shown(req))? {
        Some(swept) => swept,
        None => return Ok(ExitCode::SUCCESS),
    };
    if let Some(text) = stalled {
        crate::out::err_text(&text);
        return Ok(ExitCode::from(1));
    }
    if req.settings.shard.is_some() {
        // The shard's result for `merge`: always the JSON document.
        let text = Format::Json.render_to_string(&result);
        crate::run::emit(req.outputs.output.as_deref(), &text)?;
    } else {
        write_outputs(&req.outputs, &result)?;
    }
    if let Some(x) = noiseless_explain {
        x.finish()?; // issue 30 hook
    }
    if let Some(x) = mc_explain {
        x.finish(&system)?; // issue 30 hook
    }
    if result.status == Status::Interrupted {
        let (complete, partial, missing) = result.cell_counts();
        crate::out::errln!(
            "interrupted: wrote a partial result ({complete} cell(s) complete, {partial} cut \
             short, {missing} not run)"
        );
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a sweep computes the SHA-256 of its explicit schedule files (rank-parametric ones,
/// a few lines each, are always hashed). Hashing a large binary file costs about as much CPU as
/// simulating it noiselessly, so it is done only for the outputs that show the hash: JSON, CSV,
/// the HTML report and a shard's result (which `merge` checks). The human table then names the
/// file without a hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hashing {
    Always,
    WhenShown,
}

impl Hashing {
    /// What the command line's outputs need.
    pub(crate) fn shown(req: &Request) -> Hashing {
        let out = &req.outputs;
        if req.settings.shard.is_some() || out.format != FormatArg::Human || out.report.is_some() {
            Hashing::Always
        } else {
            Hashing::WhenShown
        }
    }
}

/// What steps 1 and 2 of a sweep hand on: the result, and what the explain hooks recorded.
pub(crate) struct Swept {
    pub result: RunResult,
    /// A noiseless schedule that did not complete: what was left over (exit status 1).
    pub stalled: Option<String>,
    pub noiseless_explain: Option<crate::explain::Noiseless>,
    pub mc_explain: Option<crate::explain::McPaths>,
    /// The first system's name (an explain report labels its cells with it).
    pub system: String,
}

/// Steps 1 and 2 of a sweep, writing nothing (`None`: a `--dry-run`, which printed its plan):
/// the command line's [`sweep`] and the library's `api::sweep` both run this. Ctrl-C is the caller's business ([`install_interrupt_handler`],
/// or [`request_interrupt`]).
pub(crate) fn run(req: &Request, hash: Hashing) -> Result<Option<Swept>> {
    let (plan, systems) = plan(req)?;
    let (st, goals) = (&req.settings, &req.inputs.goals);
    let budget = crate::budget::plan(req);
    for goal in goals {
        crate::budget::precheck(goal, &req.inputs.nodes, &req.inputs.params, &budget)?;
    }
    if let Some(shard) = st.shard {
        check_shard(req, &plan, shard)?;
    }
    check_plots(req, &plan)?;
    if st.dry_run {
        crate::dry_run::print(req, &plan)?; // issue 42 hook
        return Ok(None);
    }
    // Issue 30 hooks: --critical-path, --sensitivity and --timeline explain one workload on
    // one system.
    let (mut noiseless_explain, mc_explain) = if st.explain.any() {
        if goals.len() > 1 || systems.len() > 1 || st.shard.is_some() {
            bail!(
                "--critical-path, --sensitivity and --timeline explain one workload on one \
                 system in one process: give one --goal, at most one --noise and no --shard"
            );
        }
        let modes: Vec<NoiseMode> = plan
            .noise_modes
            .iter()
            .map(|m| m.parse().map_err(|e| anyhow!("{e}")))
            .collect::<Result<_>>()?;
        (
            crate::explain::Noiseless::new(req, &goals[0])?,
            if plan.settings.noise.is_some() {
                crate::explain::McPaths::new(req, &goals[0], &modes)?
            } else {
                None
            },
        )
    } else {
        (None, None)
    };
    let why = crate::why::Why::new(&plan, st.why_reps);
    let (mut result, stalled) = execute(
        req,
        &mut noiseless_explain,
        mc_explain.as_ref(),
        &why,
        plan,
        &systems,
        &budget,
        hash,
    )?;
    why.attach(&mut result); // issue 42 hook
    if st.shard.is_none() {
        crate::spot::attach(&mut result); // issue 47 hook (a shard's: merge's)
    }
    Ok(Some(Swept {
        result,
        stalled,
        noiseless_explain,
        mc_explain,
        system: systems[0].info.name.clone(),
    }))
}

/// A plot of noisy cells (`cost=`, `ecdf=`) refused before a run that has none, rather than
/// after the run, with other outputs already written.
fn check_plots(req: &Request, plan: &Plan) -> Result<()> {
    use loggops_report::plot::PlotKind;
    if plan.noise_modes.iter().any(|m| m != "none") {
        return Ok(());
    }
    let why = if plan.settings.noise.is_none() {
        "this run has no --noise profile"
    } else {
        "this run's only noise mode is none"
    };
    for (kind, path) in &req.outputs.plot {
        let what = match kind {
            PlotKind::Cost => "the cost increase of noisy cells",
            PlotKind::Ecdf => "the distributions of noisy repetitions",
            _ => continue,
        };
        bail!(
            "--plot {}: it draws {what}, and {why}; give --noise FILE.h5 and a noisy --noise-mode \
             (os, net, os+net), or plot runtime= instead",
            path.display()
        );
    }
    Ok(())
}

/// A word on how the work is split when it leaves the shard idle (the outputs a shard
/// refuses are in `checks::RUN_RULES`).
fn check_shard(req: &Request, plan: &Plan, shard: loggops_report::Shard) -> Result<()> {
    let o = &req.outputs;
    let shares = plan.shares(shard);
    if shares.iter().all(|s| *s == Share::Nothing) && !o.quiet {
        let cells = plan.cells().len();
        match plan.shard_by() {
            ShardBy::Cells => crate::out::errln!(
                "shard {shard}: nothing to run: {} the shards split whole cells and this run has \
                 {cells} cell(s); a fixed --reps N splits every cell's repetitions instead",
                if plan.settings.noise.is_some() {
                    "with --reps auto the stopping rule needs all of a cell's repetitions, so"
                } else {
                    "noiseless cells run once, so"
                }
            ),
            ShardBy::Repetitions => crate::out::errln!(
                "shard {shard}: nothing to run: the run has fewer repetitions than shards"
            ),
        }
    }
    Ok(())
}

/// `loggops-sim merge`: the shards' results put together, written like a run's.
pub fn merge(args: &MergeArgs) -> Result<ExitCode> {
    let mut shards = Vec::new();
    for path in &args.shards {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read shard {}", path.display()))?;
        let result = RunResult::from_json(&text).map_err(|e| {
            anyhow!(
                "{}:{}:{}: error: not a loggops-sim result ({e}); merge reads the JSON files \
                 that --shard I/N writes",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        shards.push(loggops_report::ShardInput {
            name: path.display().to_string(),
            result,
        });
    }
    let mut merged = loggops_report::merge(shards)?;
    crate::spot::attach(&mut merged); // issue 47 hook
    write_outputs(&Outputs::new(&args.out, args.quiet), &merged)?;
    if merged.is_partial() && !args.quiet {
        let (complete, partial, missing) = merged.cell_counts();
        crate::out::errln!(
            "merged a partial result: some shards were interrupted ({complete} cell(s) \
             complete, {partial} cut short, {missing} not run)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ctrl_c_is_an_interruption() {
        let stopped: anyhow::Error = Interrupted("repetition 3".into()).into();
        assert_eq!(stopped.to_string(), "repetition 3 was interrupted (Ctrl-C)");
        assert!(is_interrupted(&stopped));
        assert!(is_interrupted(&stopped.context("simulating ring_4_16")));
        // A failure is one even when its text speaks of Ctrl-C.
        assert!(!is_interrupted(&anyhow!("interrupted (Ctrl-C)")));
        assert!(!is_interrupted(
            &anyhow!("schedule stalled").context("simulating ring_4_16")
        ));
    }
}
