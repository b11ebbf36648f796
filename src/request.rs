//! Stage two of the command line: the run flags ([`RunArgs`], as clap parsed them and
//! `checks::RUN_RULES` let them through) resolved once into one validated [`Request`]:
//! [`Settings`] (how to simulate), [`Inputs`] (what to simulate) and [`Outputs`] (what to write
//! where). Every string becomes a typed value here (the LogGOPS flags picoseconds, or
//! LogGOPSim's ticks with `--compat loggopsim`; `--param` pairs; the tick; the job), and
//! everything downstream (`run.rs`, `mc.rs`, `budget.rs`, `dry_run.rs`, `explain.rs`, `src/api`)
//! sees the request, never the raw flags. Only `cli.rs` (the flags), `checks.rs` (the one table
//! of which flags apply) and this module name `RunArgs` (ARCHITECTURE.md invariant 19; guard:
//! `only_the_command_line_names_run_args` below).

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use loggops_engine::{Params, PerByte};
use loggops_goal::{ParseOptions, DEFAULT_TICK_PS};
use loggops_profile::{BaseParams, Profile};

use crate::cli::{FormatArg, LevelsArg, MpiProgressArg, OrderArg, OutputArgs, Reps, RunArgs};
use crate::inputs::{self, Kind};
use crate::units::{parse_per_byte_ps, parse_size, parse_tick_ps, parse_ticks, parse_time_ps};

/// One run of the command line (or of a library request), resolved and checked.
#[derive(Clone, Debug)]
pub struct Request {
    pub settings: Settings,
    pub inputs: Inputs,
    pub outputs: Outputs,
}

/// What is simulated.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// The schedules: `--goal`'s files, globs and directories expanded (as given with
    /// `--compat loggopsim`, which runs one file).
    pub goals: Vec<PathBuf>,
    /// The noise profiles, `--noise` expanded; empty for a noiseless run.
    pub profiles: Vec<PathBuf>,
    /// `--nodes`, each count once, in the order given.
    pub nodes: Vec<u32>,
    /// True when `--nodes` repeated a count (the command line says it ran once).
    pub repeated_nodes: bool,
    /// `--param NAME=VALUE` pairs.
    pub params: Vec<(String, String)>,
}

/// How it is simulated.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `-L -o -g -G -O -S --rndv-3l`, typed.
    pub params: ParamFlags,
    /// `--compat loggopsim`: integer ticks in, LogGOPSim's stdout out.
    pub compat: bool,
    /// `-b` (compat mode).
    pub batchmode: bool,
    /// The sharing model: `--model`, else queued with `--noise` and LogGOPSim's without.
    pub model: loggops_engine::Model,
    pub mpi_progress: Option<MpiProgressArg>,
    /// `--engine`: which engine runs the repetitions of noisy runs.
    pub engine: crate::cli::EngineArg,
    pub order: OrderArg,
    /// How GOAL files are read: plain calc numbers in ticks of `--tick` (as they are with
    /// `--compat loggopsim`).
    pub goal_opts: ParseOptions,
    /// `--noise-mode` as given (checked against the profiles when they are loaded).
    pub noise_modes: Vec<String>,
    pub reps: Reps,
    pub seed: u64,
    pub threads: Option<usize>,
    pub absolute_latency: bool,
    pub cosched: bool,
    pub bandwidth_levels: Option<LevelsArg>,
    pub nodes_per_switch: Option<u32>,
    pub force_large: bool,
    pub why_reps: u64,
    /// `--job-runs` or `--job-node-hours`.
    pub job: Option<loggops_report::Job>,
    pub dry_run: bool,
    pub shard: Option<loggops_report::Shard>,
    pub explain: crate::explain::ExplainArgs,
    /// What `--timeline` writes (`--timeline-ranks`, `--timeline-window`,
    /// `--timeline-max-size`), typed; `None` without `--timeline`.
    pub timeline: Option<loggops_explain::TimelineOptions>,
    pub spot: crate::spot::SpotArgs,
}

/// What is written where.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    pub format: FormatArg,
    /// `--output` (stdout without it).
    pub output: Option<PathBuf>,
    pub samples: Option<PathBuf>,
    pub plot: Vec<(loggops_report::plot::PlotKind, PathBuf)>,
    pub report: Option<PathBuf>,
    /// `-q`: no progress bar, no notes.
    pub quiet: bool,
}

impl Outputs {
    /// The output flags of a run or of `merge`.
    pub fn new(o: &OutputArgs, quiet: bool) -> Outputs {
        Outputs {
            format: o.format,
            output: o.output.clone(),
            samples: o.samples.clone(),
            plot: o.plot.clone(),
            report: o.report.clone(),
            quiet,
        }
    }
}

/// The explicit LogGOPS parameter flags, parsed: picoseconds (per byte for G and O, bytes for
/// S), or LogGOPSim's integer ticks with `--compat loggopsim`. `None`: not given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamFlags {
    pub l: Option<u64>,
    pub o: Option<u64>,
    pub g: Option<u64>,
    pub big_g: Option<PerByte>,
    pub big_o: Option<PerByte>,
    pub s: Option<u64>,
    pub rndv_3l: Option<bool>,
    /// The flags as typed (`-G 79ps`), for the record.
    pub typed: Vec<String>,
}

const PARAM_FLAGS: [&str; 6] = ["-L", "-o", "-g", "-G", "-O", "-S"];

impl ParamFlags {
    /// `-L -o -g -G -O -S` (in that order) and `--rndv-3l` with units.
    pub fn parse(values: [&Option<String>; 6], rndv_3l: Option<bool>) -> Result<ParamFlags> {
        let [l, o, g, big_g, big_o, s] = values;
        Ok(ParamFlags {
            l: flag("-L", l, parse_time_ps)?,
            o: flag("-o", o, parse_time_ps)?,
            g: flag("-g", g, parse_time_ps)?,
            big_g: flag("-G", big_g, parse_per_byte_ps)?,
            big_o: flag("-O", big_o, parse_per_byte_ps)?,
            s: flag("-S", s, parse_size)?,
            rndv_3l,
            typed: typed(values, rndv_3l),
        })
    }

    /// The same flags as LogGOPSim reads them: plain integer ticks (`--rndv-3l` is not one of
    /// LogGOPSim's and is left out).
    fn parse_ticks(values: [&Option<String>; 6]) -> Result<ParamFlags> {
        let mut t = [None; 6];
        for ((name, v), out) in PARAM_FLAGS.iter().zip(values).zip(&mut t) {
            *out = flag(name, v, parse_ticks)?;
        }
        let per_byte = |v: Option<u64>| v.map(|v| PerByte::from_raw(v << PerByte::FRAC_BITS));
        Ok(ParamFlags {
            l: t[0],
            o: t[1],
            g: t[2],
            big_g: per_byte(t[3]),
            big_o: per_byte(t[4]),
            // LogGOPSim stores S in a uint32_t.
            s: t[5].map(|v| v as u32 as u64),
            rndv_3l: None,
            typed: typed(values, None),
        })
    }

    /// `p` with the given flags in place of its values.
    pub fn apply(&self, mut p: Params) -> Params {
        p.l = self.l.unwrap_or(p.l);
        p.o = self.o.unwrap_or(p.o);
        p.g = self.g.unwrap_or(p.g);
        p.big_g = self.big_g.unwrap_or(p.big_g);
        p.big_o = self.big_o.unwrap_or(p.big_o);
        p.s = self.s.unwrap_or(p.s);
        if let Some(b) = self.rndv_3l {
            p.rndv_extra_latencies = if b { 2 } else { 0 };
        }
        p
    }

    /// The given `-L -o -g -G -O -S` in place of both placements' parameters of `profile`.
    pub fn apply_to_profile(&self, profile: &mut Profile) {
        let apply = |b: &mut BaseParams| {
            if let Some(v) = self.l {
                b.l_ps = v as f64;
            }
            if let Some(v) = self.o {
                b.o_ps = v as f64;
            }
            if let Some(v) = self.g {
                b.g_ps = v as f64;
            }
            if let Some(v) = self.big_g {
                b.big_g_ps_per_byte = v.as_f64();
            }
            if let Some(v) = self.big_o {
                b.big_o_ps_per_byte = v.as_f64();
            }
            if let Some(v) = self.s {
                b.s_bytes = v;
            }
        };
        apply(&mut profile.near.params);
        if let Some(far) = &mut profile.far {
            apply(&mut far.params);
        }
    }
}

/// A flag's value parsed by `parse`; its error names the flag and the value (`-o 2 parsecs: ...`).
fn flag<T, E: std::fmt::Display>(
    name: &str,
    v: &Option<String>,
    parse: impl Fn(&str) -> std::result::Result<T, E>,
) -> Result<Option<T>> {
    v.as_deref()
        .map(|s| {
            parse(s).map_err(|e| {
                // `-o FILE` names the output in gen, calibrate and extrapolate, not here.
                if name == "-o" && looks_like_file(s) {
                    anyhow!("{name} {s}: {e}; -o is the CPU overhead o here: write the result with --output {s}")
                } else {
                    anyhow!("{name} {s}: {e}")
                }
            })
        })
        .transpose()
}

/// A path (`out/x.json`) or a file name with an extension (`x.json`), not a number (`2.5us`).
fn looks_like_file(s: &str) -> bool {
    let ext = s.rsplit_once('.').map_or("", |(_, ext)| ext);
    s.contains(['/', '\\']) || (!ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphabetic()))
}

/// The flags as typed, for the record.
fn typed(values: [&Option<String>; 6], rndv_3l: Option<bool>) -> Vec<String> {
    let mut out: Vec<String> = PARAM_FLAGS
        .iter()
        .zip(values)
        .filter_map(|(flag, v)| v.as_ref().map(|v| format!("{flag} {v}")))
        .collect();
    if let Some(b) = rndv_3l {
        out.push(format!("--rndv-3l {b}"));
    }
    out
}

/// `NAME=VALUE` pairs of `--param` (`gen` reads them too).
pub fn param_pairs(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| anyhow!("--param {kv}: expected NAME=VALUE"))
        })
        .collect()
}

/// The tick of `--tick` in ps (1 ns by default).
pub fn tick_ps(flag: &Option<String>) -> Result<u64> {
    match flag {
        Some(s) => parse_tick_ps(s).map_err(|e| anyhow!("--tick {s}: {e}")),
        None => Ok(DEFAULT_TICK_PS),
    }
}

impl Request {
    /// Resolves the run flags, which `checks::flags` (the applicability table) has already
    /// let through: the checks of every run, then of `--compat` or of a sweep, in the order
    /// the command line has always made them.
    pub fn resolve(args: &RunArgs) -> Result<Request> {
        // A node count given twice runs once (its rows would be the same).
        let mut seen = std::collections::HashSet::new();
        let mut nodes = args.nodes.clone();
        nodes.retain(|n| seen.insert(*n));
        let repeated_nodes = nodes.len() < args.nodes.len();
        if args.goal.is_empty() {
            bail!("no schedule given: use --goal FILE (try --help for examples)");
        }
        if nodes.contains(&0) {
            bail!("--nodes 0: a schedule needs at least one rank");
        }
        let params = param_pairs(&args.params)?;
        let outputs = Outputs::new(&args.out, args.quiet);
        // Issue 30: --critical-path/--sensitivity/--timeline are refused with --compat and
        // checked here; the sweep records the runs.
        let timeline = crate::explain::check_flags(&args.explain, args.compat.is_some(), &outputs)?;
        if timeline.is_some() && !args.noise.is_empty() {
            // Known before the run: a repetition the run cannot reach.
            let rep = args.explain.timeline_rep;
            let (most, said) = match args.reps {
                Reps::Fixed(n) => (
                    n,
                    format!("--reps {n} runs repetitions 0 to {}", n.max(1) - 1),
                ),
                Reps::Auto => (
                    Reps::AUTO_MAX,
                    format!("--reps auto runs at most {} repetitions", Reps::AUTO_MAX),
                ),
            };
            if rep >= u64::from(most) {
                bail!(
                    "--timeline-rep {rep}: {said}; give a repetition below {most} or raise --reps"
                );
            }
        }
        let loggops = [&args.l, &args.o, &args.g, &args.big_g, &args.big_o, &args.s];
        // --tick, --shard and --model queued with --compat are refused by `checks::RUN_RULES`.
        let (goals, profiles, flags, goal_opts) = if args.compat.is_some() {
            let [_] = args.goal.as_slice() else {
                bail!("--compat loggopsim runs one schedule: give one --goal FILE");
            };
            let flags = ParamFlags::parse_ticks(loggops)?;
            // LogGOPSim's ticks as they are.
            (
                args.goal.clone(),
                Vec::new(),
                flags,
                ParseOptions::loggopsim_ticks(),
            )
        } else {
            let goal_opts = ParseOptions::with_tick(tick_ps(&args.tick)?);
            if args.tick.is_some() {
                for goal in &args.goal {
                    if crate::schedule::is_parametric(goal)? {
                        bail!(
                            "--tick does not apply to {}: a rank-parametric schedule gives \
                             every time with a unit, so it has no plain ticks to convert; drop \
                             --tick (`gen --tick` sets the tick of the explicit GOAL file it \
                             writes)",
                            goal.display()
                        );
                    }
                }
            }
            let goals = inputs::expand(&args.goal, Kind::Schedule)?;
            let profiles = inputs::expand(&args.noise, Kind::Profile)?;
            let flags = ParamFlags::parse(loggops, args.rndv_3l)?;
            (goals, profiles, flags, goal_opts)
        };
        let model = match args.model {
            Some(m) => m.into(),
            None if !args.noise.is_empty() => loggops_engine::Model::Queued,
            None => loggops_engine::Model::LogGOPSim,
        };
        Ok(Request {
            settings: Settings {
                params: flags,
                compat: args.compat.is_some(),
                batchmode: args.batchmode,
                model,
                mpi_progress: args.mpi_progress,
                engine: args.engine,
                order: args.order,
                goal_opts,
                noise_modes: args.noise_mode.clone(),
                reps: args.reps,
                seed: args.seed,
                threads: args.threads,
                absolute_latency: args.absolute_latency,
                cosched: args.cosched,
                bandwidth_levels: args.bandwidth_levels,
                nodes_per_switch: args.nodes_per_switch,
                force_large: args.force_large,
                why_reps: args.why_reps,
                job: match (args.job_runs, args.job_node_hours) {
                    (Some(r), _) => Some(loggops_report::Job::Runs(r)),
                    (None, Some(h)) => Some(loggops_report::Job::NodeHours(h)),
                    (None, None) => None,
                },
                dry_run: args.dry_run,
                shard: args.shard,
                explain: args.explain.clone(),
                timeline,
                spot: args.spot.clone(),
            },
            inputs: Inputs {
                goals,
                profiles,
                nodes,
                repeated_nodes,
                params,
            },
            outputs,
        })
    }

    /// True with `--noise`.
    pub fn noisy(&self) -> bool {
        !self.inputs.profiles.is_empty()
    }

    /// Worker threads: `--threads`, else every core.
    pub fn threads(&self) -> usize {
        self.settings
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_flags_are_typed_once() {
        let (l, g, s) = (
            Some("2us".to_string()),
            Some("0.5ns".into()),
            Some("1KiB".into()),
        );
        let f = ParamFlags::parse([&l, &None, &None, &g, &None, &s], Some(true)).unwrap();
        assert_eq!((f.l, f.o, f.s), (Some(2_000_000), None, Some(1024)));
        assert_eq!(f.typed, ["-L 2us", "-G 0.5ns", "-S 1KiB", "--rndv-3l true"]);
        let p = f.apply(Params::loggopsim_defaults_ps());
        assert_eq!(
            (p.l, p.o, p.s),
            (2_000_000, Params::loggopsim_defaults_ps().o, 1024)
        );
        assert_eq!((p.big_g.as_f64(), p.rndv_extra_latencies), (500.0, 2));
        let bad = Some("2 parsecs".to_string());
        let e = ParamFlags::parse([&None, &bad, &None, &None, &None, &None], None).unwrap_err();
        assert!(e.to_string().starts_with("-o 2 parsecs: "), "{e}");
        assert!(!e.to_string().contains("--output"), "{e}");
        // An output file meant with -o (as gen, calibrate and extrapolate take it).
        let file = Some("out/result.json".to_string());
        let e = ParamFlags::parse([&None, &file, &None, &None, &None, &None], None).unwrap_err();
        assert!(
            e.to_string().ends_with(
                "-o is the CPU overhead o here: write the result with --output out/result.json"
            ),
            "{e}"
        );
        // LogGOPSim's ticks: S is a uint32_t.
        let (seven, big) = (Some("7".to_string()), Some("4294967297".to_string()));
        let t = ParamFlags::parse_ticks([&seven, &None, &None, &None, &None, &big]).unwrap();
        assert_eq!((t.l, t.s, t.rndv_3l), (Some(7), Some(1), None));
    }

    fn resolve(argv: &[&str]) -> Result<Request> {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(
            std::iter::once("loggops-sim").chain(argv.iter().copied()),
        )?;
        Request::resolve(&cli.run)
    }

    #[test]
    fn a_command_line_resolves_once() {
        let goal = "goal/dissemination_16B.goal";
        let r = resolve(&[
            "--goal",
            goal,
            "--nodes",
            "4,8,4",
            "-L",
            "3us",
            "--param",
            "x = 1",
            "--job-runs",
            "3",
        ])
        .unwrap();
        assert_eq!(
            (r.inputs.nodes.as_slice(), r.inputs.repeated_nodes),
            ([4, 8].as_slice(), true)
        );
        assert_eq!(r.inputs.goals, [PathBuf::from(goal)]);
        assert_eq!(r.inputs.params, [("x".to_string(), "1".to_string())]);
        assert_eq!(r.settings.params.l, Some(3_000_000));
        assert_eq!(r.settings.model, loggops_engine::Model::LogGOPSim);
        assert_eq!(r.settings.job, Some(loggops_report::Job::Runs(3)));
        assert_eq!(
            r.settings.goal_opts,
            ParseOptions::with_tick(DEFAULT_TICK_PS)
        );
        assert!(!r.noisy() && !r.settings.compat);
        // LogGOPSim's integer ticks with --compat.
        let c = resolve(&["--goal", goal, "--compat", "loggopsim", "-L", "3"]).unwrap();
        assert_eq!(c.settings.params.l, Some(3));
        assert_eq!(c.settings.goal_opts, ParseOptions::loggopsim_ticks());
        let e = resolve(&["--goal", goal, "--param", "x"]).unwrap_err();
        assert_eq!(e.to_string(), "--param x: expected NAME=VALUE");
        let e = resolve(&["--nodes", "4"]).unwrap_err();
        assert!(e.to_string().starts_with("no schedule given"), "{e}");
    }

    /// The run flags are read in one place: only the flags themselves (`cli.rs`), the table of
    /// which apply (`checks.rs`) and their resolution (this file) name `RunArgs`.
    #[test]
    fn only_the_command_line_names_run_args() {
        const ALLOWED: [&str; 3] = ["src/cli.rs", "src/checks.rs", "src/request.rs"];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stack = vec![root.join("src")];
        let mut offenders = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    let text = std::fs::read_to_string(&path).unwrap();
                    if !ALLOWED.contains(&rel.as_str()) && text.contains("RunArgs") {
                        offenders.push(rel);
                    }
                }
            }
        }
        offenders.sort();
        assert!(
            offenders.is_empty(),
            "{offenders:?} name RunArgs: take the resolved `request::Request` instead"
        );
    }
}
