//! Checks that run before any work: which flags apply, and which output files would clash.
//!
//! A flag that does not apply to a run used to be ignored silently (`--reps 10` without
//! `--noise` ran once; `--root 9` on a dissemination changed nothing). Every such rule is one row
//! of a table below ([`RUN_RULES`], [`GEN_RULES`], [`CALIBRATE_RULES`]): the flag's clap id, how
//! it is written, and a function that says why it does not apply (or `None` when it does). A
//! rule fires only for flags given on the command line, never for defaults. A new flag that only
//! makes sense with another one gets a new row; nothing else changes.
//!
//! [`flags`] also refuses output paths that cannot be written (a read-only file, a directory, a
//! missing directory) or that would overwrite an input or each other (`--output` =
//! `--samples`, `--output` = the schedule being read), before the run rather than after it, and
//! [`noise_modes`] picks the noise modes a profile can run.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::parser::ValueSource;
use clap::ArgMatches;
use loggops_noise::NoiseMode;
use loggops_profile::Profile;

use crate::cli::{
    CalibrateArgs, Cli, Command, FormatArg, GenArgs, ModelArg, MpiProgressArg, RunArgs,
};

/// A flag that applies only in some situations: `why_not` explains, for the parsed arguments,
/// why it does not apply here (`None`: it applies).
pub struct Rule<A> {
    /// clap's id of the argument (the field name in `cli.rs`).
    pub id: &'static str,
    /// The flag as a user writes it.
    pub flag: &'static str,
    pub why_not: fn(&A) -> Option<String>,
}

fn needs_noise(a: &RunArgs, what: &str) -> Option<String> {
    a.noise.is_empty().then(|| {
        format!("without --noise: it {what}, and a run without a noise profile is noiseless; add --noise FILE.h5 (e.g. calibration/aws.h5) or leave the flag out")
    })
}

/// `--noise-mode none` alone: a flag about the extra time noise adds has nothing to do.
fn needs_noisy_mode(a: &RunArgs, what: &str) -> Option<String> {
    needs_noise(a, what).or_else(|| {
        (!a.noise_mode.is_empty() && a.noise_mode.iter().all(|m| m.trim() == "none")).then(|| {
            format!("with --noise-mode none alone: it {what}, and no cell runs with noise; add a noisy mode (e.g. --noise-mode none,os+net) or leave the flag out")
        })
    })
}

fn in_compat(a: &RunArgs, what: &str) -> Option<String> {
    a.compat
        .is_some()
        .then(|| format!("with --compat loggopsim, which {what}"))
}

/// Flags of a simulation run. Compat-mode rows come first: with `--compat`, the first problem
/// is the mode itself.
pub const RUN_RULES: &[Rule<RunArgs>] = &[
    Rule {
        id: "noise",
        flag: "--noise",
        why_not: |a| {
            in_compat(a, "reproduces LogGOPSim, and LogGOPSim has no noise model; leave out --compat to run with noise")
        },
    },
    Rule {
        id: "format",
        flag: "--format",
        why_not: |a| {
            let compat = (a.out.format != FormatArg::Human).then(|| {
                in_compat(
                    a,
                    "prints LogGOPSim's own text output; leave out --compat for JSON or CSV",
                )
            });
            let shard = (a.out.format != FormatArg::Json).then(|| in_shard(a));
            compat.flatten().or(shard.flatten())
        },
    },
    Rule {
        id: "tick",
        flag: "--tick",
        why_not: |a| {
            in_compat(a, "reads every number (calc, -L, -o, -g, ...) as one of LogGOPSim's unit-less ticks, as LogGOPSim does, so there is nothing to convert; drop --tick, or drop --compat to simulate in time units")
        },
    },
    Rule {
        id: "model",
        flag: "--model queued",
        why_not: |a| {
            if a.model != Some(ModelArg::Queued) {
                return None;
            }
            in_compat(a, "runs LogGOPSim's own rules exactly (--model loggopsim); drop --compat to run the queued model")
        },
    },
    Rule {
        id: "mpi_progress",
        flag: "--mpi-progress polled",
        why_not: |a| {
            if a.mpi_progress != Some(MpiProgressArg::Polled) {
                return None;
            }
            in_compat(a, "runs LogGOPSim's own rules exactly (rendezvous messages progress during computation); drop --compat to model polled progress")
        },
    },
    Rule {
        id: "rndv_3l",
        flag: "--rndv-3l",
        why_not: |a| in_compat(a, "charges rendezvous messages as LogGOPSim does"),
    },
    Rule {
        id: "critical_path",
        flag: "--critical-path",
        why_not: |a| {
            in_compat(a, "counts LogGOPSim's unit-less ticks, and the critical path is attributed in picoseconds; leave out --compat")
        },
    },
    Rule {
        id: "sensitivity",
        flag: "--sensitivity",
        why_not: |a| {
            in_compat(a, "counts LogGOPSim's unit-less ticks, and the sensitivity is found in picoseconds; leave out --compat")
        },
    },
    Rule {
        id: "timeline",
        flag: "--timeline",
        why_not: |a| {
            in_compat(a, "counts LogGOPSim's unit-less ticks, and the timeline is written in picoseconds; leave out --compat")
        },
    },
    Rule {
        id: "shard",
        flag: "--shard",
        why_not: |a| {
            in_compat(
                a,
                "runs one schedule once: there is nothing to split between shards",
            )
        },
    },
    Rule {
        id: "batchmode",
        flag: "-b/--batchmode",
        why_not: |a| {
            a.compat
                .is_none()
                .then(|| "without --compat loggopsim: it is LogGOPSim's -b (no per-host times), and only LogGOPSim's output has per-host times".to_string())
        },
    },
    Rule {
        id: "noise_mode",
        flag: "--noise-mode",
        why_not: |a| needs_noise(a, "chooses which noise to inject"),
    },
    Rule {
        id: "reps",
        flag: "--reps",
        why_not: |a| {
            needs_noise(
                a,
                "sets the number of Monte-Carlo repetitions, which only differ with noise",
            )
        },
    },
    Rule {
        id: "seed",
        flag: "--seed",
        why_not: |a| needs_noise(a, "seeds the noise draws"),
    },
    Rule {
        id: "samples",
        flag: "--samples",
        why_not: |a| {
            in_compat(a, "prints LogGOPSim's own text output and nothing else; leave out --compat for the samples CSV")
                .or_else(|| in_shard(a))
        },
    },
    Rule {
        id: "plot",
        flag: "--plot",
        why_not: |a| {
            in_compat(
                a,
                "prints LogGOPSim's own text output and nothing else; leave out --compat for plots",
            )
            .or_else(|| in_shard(a))
        },
    },
    Rule {
        id: "report",
        flag: "--report",
        why_not: |a| {
            in_compat(a, "prints LogGOPSim's own text output and nothing else; leave out --compat for the HTML report")
                .or_else(|| in_shard(a))
        },
    },
    Rule {
        id: "cosched",
        flag: "--cosched",
        why_not: |a| needs_noise(a, "sets the phase of OS noise"),
    },
    Rule {
        id: "bandwidth_levels",
        flag: "--bandwidth-levels",
        why_not: |a| needs_noise(a, "chooses who shares a profile's bandwidth levels"),
    },
    Rule {
        id: "absolute_latency",
        flag: "--absolute-latency",
        why_not: |a| needs_noise(a, "changes how the profile's latencies are drawn"),
    },
    Rule {
        id: "critical_path_top",
        flag: "--critical-path-top",
        why_not: |a| {
            (a.explain.critical_path.is_none() && !a.explain.sensitivity).then(|| {
                "without --critical-path or --sensitivity: it sets how many ranks and messages a critical path lists".to_string()
            })
        },
    },
    Rule {
        id: "timeline_rep",
        flag: "--timeline-rep",
        why_not: |a| {
            needs_timeline(a, "picks the repetition the timeline shows")
                .or_else(|| needs_noise(a, "picks which noisy repetition --timeline writes"))
        },
    },
    Rule {
        id: "timeline_ranks",
        flag: "--timeline-ranks",
        why_not: |a| needs_timeline(a, "picks the ranks the timeline shows"),
    },
    Rule {
        id: "timeline_window",
        flag: "--timeline-window",
        why_not: |a| needs_timeline(a, "picks the stretch of time the timeline shows"),
    },
    Rule {
        id: "timeline_max_size",
        flag: "--timeline-max-size",
        why_not: |a| needs_timeline(a, "limits the size of the timeline file"),
    },
    // Issue 42.
    Rule {
        id: "why_reps",
        flag: "--why-reps",
        why_not: |a| {
            needs_noise(
                a,
                "attributes the critical paths of noisy repetitions for the verdict",
            )
        },
    },
    Rule {
        id: "job_runs",
        flag: "--job-runs",
        why_not: |a| needs_noisy_mode(a, "prices the extra time noise adds to a job"),
    },
    Rule {
        id: "job_node_hours",
        flag: "--job-node-hours",
        why_not: |a| needs_noisy_mode(a, "prices the extra time noise adds to a job"),
    },
    Rule {
        id: "dry_run",
        flag: "--dry-run",
        why_not: |a| {
            in_compat(
                a,
                "runs one schedule at once; leave out --compat to see the plan",
            )
        },
    },
    // Issue 47: spot capacity prices a job over the run times of a noisy sweep. Refused with
    // --compat (no noise, no prices) and without --noise (one noiseless time, no profile);
    // allowed with --shard (the plan records the inputs and `merge` prices the merged
    // samples) and with --dry-run.
    Rule {
        id: "spot_price",
        flag: "--spot-price",
        why_not: |a| spot_needs(a, "prices the job on spot capacity"),
    },
    Rule {
        id: "spot_interruptions",
        flag: "--spot-interruptions",
        why_not: |a| spot_needs(a, "sets how often spot capacity is interrupted"),
    },
    Rule {
        id: "spot_mtbi",
        flag: "--spot-mtbi",
        why_not: |a| spot_needs(a, "sets how often spot capacity is interrupted"),
    },
    Rule {
        id: "spot_source",
        flag: "--spot-source",
        why_not: |a| spot_needs(a, "says where the spot price and rate come from"),
    },
    Rule {
        id: "spot_date",
        flag: "--spot-date",
        why_not: |a| spot_needs(a, "says when the spot price and rate were read"),
    },
    Rule {
        id: "checkpoint_every",
        flag: "--checkpoint-every",
        why_not: |a| spot_needs(a, "sets the spot job's checkpoint interval"),
    },
    Rule {
        id: "checkpoint_cost",
        flag: "--checkpoint-cost",
        why_not: |a| spot_needs(a, "sets the spot job's checkpoint cost"),
    },
    Rule {
        id: "restart_cost",
        flag: "--restart-cost",
        why_not: |a| spot_needs(a, "sets the spot job's restart cost"),
    },
];

/// A shard writes the JSON result that `merge` reads: the other outputs come from the merge.
fn in_shard(a: &RunArgs) -> Option<String> {
    a.shard.map(|shard| {
        format!(
            "with --shard {shard}: a shard writes its JSON result for `loggops-sim merge`; give \
             --format, --samples, --plot and --report to the merge instead (loggops-sim merge \
             SHARD.json... --format csv --samples FILE --report FILE.html)"
        )
    })
}

fn spot_needs(a: &RunArgs, what: &str) -> Option<String> {
    in_compat(
        a,
        "reproduces LogGOPSim (no noise, no prices); leave out --compat",
    )
    .or_else(|| needs_noise(a, &format!("{what} over the run times of a noisy sweep")))
}

fn needs_timeline(a: &RunArgs, what: &str) -> Option<String> {
    a.explain
        .timeline
        .is_none()
        .then(|| format!("without --timeline FILE.json: it {what}, and no timeline is written"))
}

/// The `gen` pattern, when it names a known collective (unknown names are reported by `gen`).
fn pattern(a: &GenArgs) -> Option<loggops_schedgen::Collective> {
    a.pattern.as_deref().and_then(|p| p.parse().ok())
}

fn only_for(
    a: &GenArgs,
    what: &str,
    applies: fn(loggops_schedgen::Collective) -> bool,
) -> Option<String> {
    if a.goal.is_some() {
        return Some(format!(
            "with --goal: it {what} of a generated collective, and a rank-parametric schedule sets its own (change them with --param NAME=VALUE)"
        ));
    }
    let p = pattern(a)?;
    (!applies(p)).then(|| format!("to {p}: it {what}"))
}

pub const GEN_RULES: &[Rule<GenArgs>] = &[
    Rule {
        id: "size",
        flag: "--size",
        why_not: |a| only_for(a, "sets the data size", |_| true),
    },
    Rule {
        id: "segmentsize",
        flag: "--segmentsize",
        why_not: |a| {
            only_for(a, "sets the segment size of pipelinedring", |p| {
                p == loggops_schedgen::Collective::PipelinedRing
            })
        },
    },
    Rule {
        id: "nway",
        flag: "--nway",
        why_not: |a| {
            only_for(a, "sets the fan-out of nwaydissemination", |p| {
                p == loggops_schedgen::Collective::NwayDissemination
            })
        },
    },
    Rule {
        id: "root",
        flag: "--root",
        why_not: |a| {
            only_for(
                a,
                "sets the root rank of binomialtreebcast, binomialtreereduce and pipelinedring",
                |p| p.has_root(),
            )
        },
    },
    Rule {
        id: "params",
        flag: "--param",
        why_not: |a| {
            a.goal.is_none().then(|| {
                "without --goal: it sets a parameter of a rank-parametric schedule (gen --goal FILE --param NAME=VALUE)".to_string()
            })
        },
    },
];

pub const CALIBRATE_RULES: &[Rule<CalibrateArgs>] = &[
    // Issue 47: the source and date of spot values describe a price or a rate.
    Rule {
        id: "spot_source",
        flag: "--spot-source",
        why_not: |a| {
            no_spot_values(
                a,
                "says where the spot price and interruption rate come from",
            )
        },
    },
    Rule {
        id: "spot_date",
        flag: "--spot-date",
        why_not: |a| {
            no_spot_values(
                a,
                "says when the spot price and interruption rate were read",
            )
        },
    },
    Rule {
        id: "provider",
        flag: "--provider",
        why_not: |a| no_params_table(a),
    },
    Rule {
        id: "instance",
        flag: "--instance",
        why_not: |a| no_params_table(a),
    },
    Rule {
        id: "placement",
        flag: "--placement",
        why_not: |a| no_params_table(a),
    },
    Rule {
        id: "price_system",
        flag: "--price-system",
        why_not: |a| no_prices_table(a),
    },
    Rule {
        id: "price_class",
        flag: "--price-class",
        why_not: |a| no_prices_table(a),
    },
];

fn no_params_table(a: &CalibrateArgs) -> Option<String> {
    a.params_table
        .is_none()
        .then(|| "without --params-table: it picks a row of the parameter table given with --params-table CSV".to_string())
}

fn no_spot_values(a: &CalibrateArgs, what: &str) -> Option<String> {
    (a.spot.spot_price.is_none() && a.spot.rate().is_none()).then(|| {
        format!("without --spot-price, --spot-interruptions or --spot-mtbi: it {what}, and none is recorded")
    })
}

fn no_prices_table(a: &CalibrateArgs) -> Option<String> {
    a.prices_table
        .is_none()
        .then(|| "without --prices-table: it picks a row of the price table given with --prices-table CSV".to_string())
}

fn apply<A>(rules: &[Rule<A>], args: &A, m: &ArgMatches) -> Result<()> {
    for r in rules {
        let given = matches!(
            m.try_get_raw(r.id).ok().flatten().and(m.value_source(r.id)),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        );
        if given {
            if let Some(why) = (r.why_not)(args) {
                bail!("{} does not apply {why}", r.flag);
            }
        }
    }
    Ok(())
}

/// All checks that need no file contents: flag applicability and clashing output paths.
pub fn flags(cli: &Cli, m: &ArgMatches) -> Result<()> {
    match &cli.command {
        None => {
            apply(RUN_RULES, &cli.run, m)?;
            let a = &cli.run;
            let inputs: Vec<(&str, Option<PathBuf>)> = (a.goal.iter().map(|p| ("--goal", p)))
                .chain(a.noise.iter().map(|p| ("--noise", p)))
                .map(|(f, p)| (f, Some(p.clone())))
                .collect();
            let mut outputs = output_paths(&a.out);
            outputs.push((
                "--critical-path",
                a.explain.destination().map(Path::to_path_buf),
            ));
            outputs.push(("--timeline", a.explain.timeline.clone()));
            clashes(&refs(&inputs), &refs(&outputs))
        }
        Some(Command::Merge(g)) => {
            let inputs: Vec<(&str, Option<PathBuf>)> = g
                .shards
                .iter()
                .map(|p| ("SHARD", Some(p.clone())))
                .collect();
            clashes(&refs(&inputs), &refs(&output_paths(&g.out)))
        }
        Some(Command::Profile(crate::cli::ProfileCommand::Show(p))) => {
            let outputs: Vec<(&str, Option<PathBuf>)> =
                p.plot.iter().map(|f| ("--plot", Some(f.clone()))).collect();
            let inputs: Vec<(&str, Option<PathBuf>)> = p
                .file
                .iter()
                .map(|f| ("FILE.h5", Some(f.clone())))
                .collect();
            clashes(&refs(&inputs), &refs(&outputs))
        }
        Some(Command::Profile(crate::cli::ProfileCommand::Combine(c))) => {
            let inputs: Vec<(&str, Option<PathBuf>)> = c
                .files
                .iter()
                .map(|p| ("FILE.h5", Some(p.clone())))
                .collect();
            clashes(&refs(&inputs), &[("--output", &Some(c.output.clone()))])
        }
        Some(Command::Gen(g)) => {
            let sub = m.subcommand_matches("gen").expect("gen was parsed");
            apply(GEN_RULES, g, sub)?;
            clashes(&[("--goal", &g.goal)], &[("--output", &g.output)])
        }
        Some(Command::Calibrate(c)) => {
            let sub = m
                .subcommand_matches("calibrate")
                .expect("calibrate was parsed");
            apply(CALIBRATE_RULES, c.as_ref(), sub)?;
            let inputs = [
                ("--latency", &Some(c.latency.clone())),
                ("--bandwidth", &Some(c.bandwidth.clone())),
                ("--os-noise", &c.os_noise),
                ("--loggp", &c.loggp),
                ("--far-latency", &c.far_latency),
                ("--far-bandwidth", &c.far_bandwidth),
                ("--params-table", &c.params_table),
                ("--prices-table", &c.prices_table),
            ];
            let outputs = [
                ("--output", &Some(c.output.clone())),
                ("--report", &c.report),
                ("--report-json", &c.report_json),
            ];
            clashes(&inputs, &outputs)
        }
        Some(Command::Extrapolate(x)) => {
            let ins: Vec<(&str, Option<PathBuf>)> = (x.traces.iter().map(|p| ("TRACE", p)))
                .chain(x.compare.iter().map(|p| ("--compare", p)))
                .map(|(f, p)| (f, Some(p.clone())))
                .collect();
            clashes(&refs(&ins), &[("--output", &x.output)])
        }
        Some(Command::Validate(v)) => {
            let noise = Some(v.noise.clone());
            let measured: Vec<Option<PathBuf>> = v.measured.iter().cloned().map(Some).collect();
            let mut inputs = vec![("--noise", &noise)];
            inputs.extend(measured.iter().map(|p| ("MEASURED", p)));
            clashes(&inputs, &[("--output", &v.output)])
        }
    }
}

/// Refuses an output that would replace an input, and two outputs that name one file.
fn clashes(
    inputs: &[(&str, &Option<PathBuf>)],
    outputs: &[(&str, &Option<PathBuf>)],
) -> Result<()> {
    let (ins, outs) = (given(inputs), given(outputs));
    for (of, op) in &outs {
        // A read-only file, a directory or a missing directory is found now, not after the run.
        match loggops_output::output_target(op) {
            Err(e) => bail!("{of} {}: {e}", op.display()),
            Ok(loggops_output::OutputTarget::Replace(t)) => {
                let dir = match t.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                if !dir.is_dir() {
                    bail!(
                        "{of} {}: the directory {} does not exist",
                        op.display(),
                        dir.display()
                    );
                }
                // A directory this process cannot write to (permissions, a read-only file
                // system): found before the run, not after it.
                if let Err(e) = loggops_output::check_output(&t) {
                    bail!("{of} {}: {e}", op.display());
                }
            }
            Ok(loggops_output::OutputTarget::Stream(_)) => {}
        }
    }
    for (i, (of, op)) in outs.iter().enumerate() {
        for (inf, ip) in &ins {
            if loggops_output::overwrites_input(op, ip) {
                bail!(
                    "{of} {} is the file read with {inf}: writing it would destroy the input; choose another output file",
                    op.display()
                );
            }
        }
        for (of2, op2) in &outs[i + 1..] {
            if loggops_output::same_output(op, op2) {
                bail!(
                    "{of} {} and {of2} {} name the same file: one would overwrite the other; give them different names",
                    op.display(),
                    op2.display()
                );
            }
        }
    }
    Ok(())
}

/// Every file the output flags name.
fn output_paths(o: &crate::cli::OutputArgs) -> Vec<(&'static str, Option<PathBuf>)> {
    let mut v = vec![
        ("--output", o.output.clone()),
        ("--samples", o.samples.clone()),
        ("--report", o.report.clone()),
    ];
    v.extend(o.plot.iter().map(|(_, p)| ("--plot", Some(p.clone()))));
    v
}

fn refs<'a>(l: &'a [(&'a str, Option<PathBuf>)]) -> Vec<(&'a str, &'a Option<PathBuf>)> {
    l.iter().map(|(f, p)| (*f, p)).collect()
}

fn given<'a>(l: &'a [(&'a str, &'a Option<PathBuf>)]) -> Vec<(&'a str, &'a Path)> {
    l.iter()
        .filter_map(|(f, p)| p.as_deref().map(|p| (*f, p)))
        .collect()
}

/// What noise a profile holds.
pub fn profile_noise(p: &Profile) -> (bool, bool) {
    let os = !p.os_noise.traces.is_empty() || p.os_noise.process.is_some();
    let net = std::iter::once(&p.near).chain(p.far.as_ref()).any(|pl| {
        pl.latency.is_some() || pl.bandwidth.is_some() || pl.overhead.is_some() || pl.gap.is_some()
    });
    (os, net)
}

/// The `--noise-mode` list: as given, or by default what the profile holds (`os+net` with both
/// kinds of noise, `net` without an OS-noise trace or detour process, `os` without network
/// distributions). A mode that needs noise the profile does not hold is an error naming the
/// mode that works.
pub fn noise_modes(raw: &[String], profile: &Profile, path: &Path) -> Result<Vec<NoiseMode>> {
    let (os, net) = profile_noise(profile);
    if raw.is_empty() {
        return Ok(vec![match (os, net) {
            (true, true) => NoiseMode::OsNet,
            (false, true) => NoiseMode::Net,
            (true, false) => NoiseMode::Os,
            (false, false) => NoiseMode::None,
        }]);
    }
    let works = match (os, net) {
        (true, true) => "",
        (false, true) => "; use --noise-mode net (network noise only)",
        (true, false) => "; use --noise-mode os (OS noise only)",
        (false, false) => "; it holds no noise at all, only base parameters (--noise-mode none)",
    };
    raw.iter()
        .map(|m| {
            let mode = m
                .parse::<NoiseMode>()
                .map_err(|e| anyhow::anyhow!("--noise-mode {m}: {e}"))?;
            if mode.os() && !os {
                bail!(
                    "--noise-mode {m}: profile {} (system `{}`) has no OS noise (no detour trace or detour process; it was calibrated without --os-noise){works}",
                    path.display(),
                    profile.system
                );
            }
            if mode.net() && !net {
                bail!(
                    "--noise-mode {m}: profile {} (system `{}`) has no network noise (no latency, bandwidth, o or g distribution){works}",
                    path.display(),
                    profile.system
                );
            }
            Ok(mode)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_rule_names_an_argument_that_exists() {
        let cmd = Cli::command();
        let ids = |c: &clap::Command| -> Vec<String> {
            c.get_arguments().map(|a| a.get_id().to_string()).collect()
        };
        let run = ids(&cmd);
        let gen = ids(cmd.find_subcommand("gen").unwrap());
        let cal = ids(cmd.find_subcommand("calibrate").unwrap());
        for (rules, known) in [
            (
                RUN_RULES.iter().map(|r| (r.id, r.flag)).collect::<Vec<_>>(),
                &run,
            ),
            (GEN_RULES.iter().map(|r| (r.id, r.flag)).collect(), &gen),
            (
                CALIBRATE_RULES.iter().map(|r| (r.id, r.flag)).collect(),
                &cal,
            ),
        ] {
            for (id, flag) in rules {
                assert!(
                    known.iter().any(|k| k == id),
                    "rule for {flag}: no argument `{id}`"
                );
            }
        }
    }
}
