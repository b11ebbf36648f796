//! Stage three of the CLI: the calls into the libraries for a resolved request
//! (`request.rs`), and the `gen` and `calibrate` commands.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use loggops_engine::{simulate as engine_run, Config, NoNoise, Order, Outcome, Params, Program};

use crate::cli::{CalibrateArgs, GenArgs, OrderArg};
use crate::request::{param_pairs, tick_ps, Request};
use crate::schedule::{self, with_program, Schedule};
use crate::units::{fmt_bytes, format_duration, parse_per_byte_ps, parse_size, parse_time_ps};
use loggops_goal::ParseOptions;

/// The `--model` value naming `m`.
pub fn model_name(m: loggops_engine::Model) -> &'static str {
    match m {
        loggops_engine::Model::LogGOPSim => "loggopsim",
        loggops_engine::Model::Queued => "queued",
    }
}

pub fn order(o: OrderArg) -> Order {
    match o {
        OrderArg::Stable => Order::Stable,
        OrderArg::Libstdcxx => Order::Libstdcxx,
    }
}

/// `(file): plain calc numbers are ticks of 1ns (--tick)`, said where a run read an explicit
/// file.
pub fn tick_note(goal: &str, tick_ps: u64) -> String {
    format!(
        "{goal}: plain calc numbers are ticks of {} (--tick)",
        format_duration(tick_ps)
    )
}

/// Writes `text` to `--output` atomically, or to stdout.
pub fn emit(output: Option<&Path>, text: &str) -> Result<()> {
    match output {
        Some(path) => loggops_output::write_atomic(path, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

/// The run command (its flags resolved once, [`Request::resolve`]): LogGOPSim's run
/// (`--compat loggopsim`) or a sweep.
pub fn simulate(req: &Request) -> Result<ExitCode> {
    if req.inputs.repeated_nodes && !req.outputs.quiet {
        crate::out::errln!(
            "note: --nodes repeats a node count; each runs once ({})",
            req.inputs
                .nodes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    if req.settings.compat {
        return compat_run(req);
    }
    crate::mc::sweep(req)
}

/// Names what was left over: ranks, sources, tags and op labels.
pub fn describe_leftovers(goal: &Path, sched: &Schedule, out: &Outcome) -> String {
    let label = |rank: u32, op: u32| -> String {
        match sched {
            Schedule::Explicit(_) => match loggops_goal::describe_op(goal, rank, op) {
                Ok(Some(d)) => d.to_string(),
                _ => format!("op #{op}"),
            },
            Schedule::Parametric(_) | Schedule::Generated(_) => format!("op #{op}"),
        }
    };
    let any = |v: u32| {
        if v == loggops_engine::ANY {
            "any".to_string()
        } else {
            v.to_string()
        }
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "error: the schedule did not complete: {} rank(s) have unmatched messages, unmatched receives or ops that never ran; no time is reported",
        out.leftovers.len()
    );
    const SHOW: usize = 5;
    for l in out.leftovers.iter().take(20) {
        for e in l.unexpected.iter().take(SHOW) {
            let _ = writeln!(
                s,
                "  rank {}: message from rank {} (tag {}, sent by {}) was never received",
                l.rank,
                e.src,
                any(e.tag),
                label(e.src, e.op)
            );
        }
        for e in l.posted.iter().take(SHOW) {
            let _ = writeln!(
                s,
                "  rank {}: receive {} (from {}, tag {}) was never matched",
                l.rank,
                label(l.rank, e.op),
                any(e.src),
                any(e.tag)
            );
        }
        let hidden = l.unexpected.len().saturating_sub(SHOW) + l.posted.len().saturating_sub(SHOW);
        if hidden > 0 {
            let _ = writeln!(s, "  rank {}: ... and {hidden} more queue entries", l.rank);
        }
        if l.never_ran > 0 {
            let names: Vec<String> = l
                .never_ran_ops
                .iter()
                .take(SHOW)
                .map(|&o| label(l.rank, o))
                .collect();
            let _ = writeln!(
                s,
                "  rank {}: {} op(s) never ran{}{}",
                l.rank,
                l.never_ran,
                if names.is_empty() {
                    String::new()
                } else {
                    format!(": {}", names.join(", "))
                },
                if l.never_ran as usize > names.len() && !names.is_empty() {
                    ", ..."
                } else {
                    ""
                }
            );
        }
    }
    if out.leftovers.len() > 20 {
        let _ = writeln!(s, "  ... and {} more ranks", out.leftovers.len() - 20);
    }
    s
}

fn compat_run(req: &Request) -> Result<ExitCode> {
    let goal = &req.inputs.goals[0];
    let params = req
        .settings
        .params
        .apply(Params::loggopsim_defaults_ticks());
    let cfg = Config {
        model: loggops_engine::Model::LogGOPSim,
        params,
        order: order(req.settings.order),
        compat: true,
        progress: None,
        mpi_progress: loggops_engine::MpiProgress::Async,
    };
    let nodes = match req.inputs.nodes.as_slice() {
        [] => None,
        [n] => Some(*n),
        _ => bail!("--compat loggopsim runs one schedule: give at most one --nodes value"),
    };
    let sched = match schedule::load(goal, nodes, &req.inputs.params, &req.settings.goal_opts)? {
        Schedule::Explicit(p) => Schedule::Explicit(p),
        // LogGOPSim reads GOAL in ticks, and a rank-parametric schedule's durations have
        // units: it runs as the GOAL `gen` writes at the 1 ns tick (`calc 1us` is 1000 ticks,
        // as in an explicit file).
        other => {
            let tick = loggops_goal::DEFAULT_TICK_PS;
            with_program!(&other, |p| whole_ticks(p, tick))?;
            let mut text = Vec::new();
            with_program!(&other, |p| loggops_goal::write_goal_with(
                p, &mut text, tick
            ))?;
            let name = goal.display().to_string();
            let parsed =
                loggops_goal::parse_reader_with(&name, &text[..], &req.settings.goal_opts)?;
            Schedule::Explicit(parsed.program)
        }
    };
    crate::budget::check(
        &sched,
        &crate::budget::what(goal, nodes),
        &crate::budget::plan(req),
    )?;
    let out = with_program!(&sched, |p| engine_run(p, &cfg, &mut NoNoise))?;
    let text = with_program!(&sched, |p| crate::compat::render(
        p,
        &params,
        &out,
        req.settings.batchmode
    ));
    emit(req.outputs.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

pub fn gen(args: GenArgs) -> Result<ExitCode> {
    if args.nodes == 0 {
        bail!("--nodes 0: a schedule needs at least one rank");
    }
    let tick = tick_ps(&args.tick)?;
    let sched: Schedule = if let Some(path) = &args.goal {
        let ov = param_pairs(&args.params)?;
        schedule::load(path, Some(args.nodes), &ov, &ParseOptions::with_tick(tick))?
    } else {
        let Some(name) = &args.pattern else {
            bail!(
                "gen needs a PATTERN or --goal FILE (known patterns: {})",
                loggops_schedgen::Collective::known_names()
            );
        };
        let coll: loggops_schedgen::Collective = name.parse()?;
        let size = match &args.size {
            Some(s) => parse_size(s).map_err(|e| anyhow!("--size {s}: {e}"))?,
            None => bail!("gen {name} needs --size BYTES (e.g. --size 16MiB)"),
        };
        let mut opts = loggops_schedgen::GenOptions::default();
        if let Some(s) = &args.segmentsize {
            opts.segment_size = Some(parse_size(s).map_err(|e| anyhow!("--segmentsize {s}: {e}"))?);
        }
        if let Some(n) = args.nway {
            opts.nway = n;
        }
        if let Some(r) = args.root {
            opts.root = r;
        }
        if coll == loggops_schedgen::Collective::NwayDissemination {
            // Schedgen writes `calc <datasize>`: D ticks, whatever a tick is.
            opts.reduce_calc = Some(size.checked_mul(tick).ok_or_else(|| {
                anyhow!(
                    "--size {}: nwaydissemination's reduction calcs of {size} ticks of {} overflow u64 picoseconds",
                    args.size.as_deref().unwrap_or_default(),
                    format_duration(tick)
                )
            })?);
        }
        opts.chain_sends = args.chain_sends;
        use loggops_schedgen::Collective as C;
        let p = args.nodes as u64;
        if coll == C::NwayDissemination && p > 1 && opts.nway as u64 >= p {
            crate::out::errln!(
                "note: --nway {} with {p} ranks: a round's partners r+1 ... r+{} wrap around, so every rank sends to itself{} (at most {} partners are distinct)",
                opts.nway,
                opts.nway,
                if opts.nway as u64 > p {
                    " and to some ranks more than once"
                } else {
                    ""
                },
                p - 1
            );
        }
        if coll == C::AllreduceRing && size % p != 0 {
            crate::out::errln!(
                "note: --size {size}B over {p} ranks: chunks of {}B, {}B of the data not sent (Schedgen divides the data evenly, rounding down)",
                size / p,
                size % p
            );
        }
        let g = loggops_schedgen::Generated::with_options(coll, args.nodes, size, opts)?;
        Schedule::Generated(g)
    };
    // Checked before anything is written (stdout cannot be taken back).
    let has_calc = with_program!(&sched, |p| whole_ticks(p, tick))?;
    let emit_goal = |w: &mut dyn Write| -> std::io::Result<()> {
        let mut bw = std::io::BufWriter::with_capacity(1 << 20, w);
        with_program!(&sched, |p| loggops_goal::write_goal_with(p, &mut bw, tick))?;
        bw.flush()
    };
    match &args.output {
        Some(path) => loggops_output::write_atomic(path, |w| emit_goal(w))
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => emit_goal(&mut std::io::stdout().lock())?,
    }
    // A GOAL file has no place for its tick (LogGOPSim reads no header): say it once.
    if tick != 1_000 && has_calc {
        let t = format_duration(tick);
        crate::out::errln!(
            "note: calc numbers are ticks of {t}, which the file does not record: read it back \
             with --tick {t}"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Fails, naming the op and a tick that works, if a calc of `p` is not a whole number of ticks
/// of `tick` ps (`gen` writes calc durations as plain numbers of ticks); else whether `p` has
/// a calc.
fn whole_ticks<P: Program>(p: &P, tick: u64) -> Result<bool> {
    let mut has_calc = false;
    for r in 0..p.num_ranks() {
        for i in 0..p.num_ops(r) {
            let op = p.op(r, i);
            if op.kind != loggops_engine::OpKind::Calc {
                continue;
            }
            has_calc = true;
            if !op.size.is_multiple_of(tick) {
                // The largest power of ten that divides both: what a user would pick.
                let mut fine = 1u64;
                while op.size.is_multiple_of(fine * 10) && tick.is_multiple_of(fine * 10) {
                    fine *= 10;
                }
                bail!(
                    "rank {r} op {i}: a calc of {} is not a whole number of ticks of {}: pass a finer --tick (e.g. --tick {}; 1ps always works) and read the file back with the same --tick",
                    format_duration(op.size),
                    format_duration(tick),
                    format_duration(fine)
                );
            }
        }
    }
    Ok(has_calc)
}

pub fn calibrate(a: CalibrateArgs) -> Result<ExitCode> {
    use loggops_calibrate::{CalibrateInputs, ParamsTableRow, PricesTableRow};
    let mut inp = CalibrateInputs::new(a.system.clone(), a.latency.clone(), a.bandwidth.clone());
    inp.description = a.description.clone();
    inp.mpi_progress = a.mpi_progress.map(Into::into);
    inp.os_noise = a.os_noise.clone();
    inp.loggp = a.loggp.clone();
    inp.far_latency = a.far_latency.clone();
    inp.far_bandwidth = a.far_bandwidth.clone();
    inp.nodes_per_switch = a.nodes_per_switch;
    inp.pingpong.warmup = a.warmup;
    inp.pingpong.block_len = a.block_len.0;
    inp.min_samples = a.min_samples;
    inp.latency_size = a
        .latency_size
        .as_deref()
        .map(|s| parse_size(s).map_err(|e| anyhow!("--latency-size {s}: {e}")))
        .transpose()?;
    inp.bandwidth_size = a
        .bandwidth_size
        .as_deref()
        .map(|s| parse_size(s).map_err(|e| anyhow!("--bandwidth-size {s}: {e}")))
        .transpose()?;
    inp.notes = a.notes.clone();
    inp.command = portable_command();
    inp.progress = Some(loggops_calibrate::StepHook(calibrate_step));
    let t = |flag: &str, v: &Option<String>| -> Result<Option<f64>> {
        v.as_deref()
            .map(|s| {
                parse_time_ps(s)
                    .map(|x| x as f64)
                    .map_err(|e| anyhow!("--set-{flag} {s}: {e}"))
            })
            .transpose()
    };
    let e = &mut inp.params.explicit;
    e.l_ps = t("L", &a.l)?;
    e.o_ps = t("o", &a.o)?;
    e.g_ps = t("g", &a.g)?;
    e.big_g_ps_per_byte = a
        .big_g
        .as_deref()
        .map(|s| {
            parse_per_byte_ps(s)
                .map(|g| g.as_f64())
                .map_err(|e| anyhow!("--set-G {s}: {e}"))
        })
        .transpose()?;
    e.big_o_ps_per_byte = a
        .big_o
        .as_deref()
        .map(|s| {
            parse_per_byte_ps(s)
                .map(|g| g.as_f64())
                .map_err(|e| anyhow!("--set-O {s}: {e}"))
        })
        .transpose()?;
    e.s_bytes =
        a.s.as_deref()
            .map(|s| parse_size(s).map_err(|e| anyhow!("--set-S {s}: {e}")))
            .transpose()?;
    if let Some(path) = &a.params_table {
        let (Some(provider), Some(instance)) = (&a.provider, &a.instance) else {
            bail!("--params-table needs --provider and --instance to pick a row");
        };
        inp.params.table = Some(ParamsTableRow {
            path: path.clone(),
            provider: provider.clone(),
            instance: instance.clone(),
            placement: a.placement.clone(),
        });
    }
    inp.prices.on_demand_usd_per_node_hour = a.price_on_demand;
    inp.prices.committed_usd_per_node_hour = a.price_committed;
    inp.prices.spot = a.spot.to_profile(); // issue 47
    if let Some(path) = &a.prices_table {
        let (Some(system), Some(class)) = (&a.price_system, &a.price_class) else {
            bail!("--prices-table needs --price-system and --price-class to pick a row");
        };
        inp.prices_table = Some(PricesTableRow {
            path: path.clone(),
            system: system.clone(),
            class: class.clone(),
        });
    }
    inp.bandwidth_stripes = a.bandwidth_stripes;
    inp.bandwidth_levels = a.bandwidth_levels == crate::cli::FitLevelsArg::Auto;
    inp.latency_episodes = a.latency_episodes.map(Into::into);
    inp.day = a.day.clone();
    inp.idle_latency = a.idle_latency.clone();
    inp.calibration = match a.calibration {
        Some(crate::cli::CalibrationArg::Captures) => loggops_profile::Calibration::Captures,
        Some(crate::cli::CalibrationArg::PaperTable) => loggops_profile::Calibration::PaperTable,
        None if a.params_table.is_some() || a.l.is_some() || a.big_g.is_some() => {
            loggops_profile::Calibration::PaperTable
        }
        None => loggops_profile::Calibration::Captures,
    };
    let built = loggops_calibrate::build_profile(&inp);
    if let Some(b) = CALIBRATE_BAR.get() {
        b.finish_and_clear();
    }
    let (profile, report) = built?;
    // The fit reports first: a report that cannot be written leaves no profile behind, and a
    // profile that cannot be written still leaves its fit report.
    let text = report.to_text();
    if let Some(p) = &a.report {
        loggops_output::write_atomic(p, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(p) = &a.report_json {
        let json = report.to_json();
        loggops_output::write_atomic(p, |w| w.write_all(json.as_bytes()))
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    if a.report.is_none() {
        crate::out::err_text(&text);
    }
    loggops_profile::write_profile(&a.output, &profile)?;
    match std::fs::metadata(&a.output) {
        Ok(m) if m.is_file() => {
            crate::out::errln!("wrote {} ({})", a.output.display(), fmt_bytes(m.len()))
        }
        _ => crate::out::errln!("wrote {}", a.output.display()),
    }
    Ok(ExitCode::SUCCESS)
}

/// The spinner of `calibrate` (shown on a terminal only).
static CALIBRATE_BAR: std::sync::OnceLock<indicatif::ProgressBar> = std::sync::OnceLock::new();

fn calibrate_step(what: &str) {
    use std::io::IsTerminal;
    let bar = CALIBRATE_BAR.get_or_init(|| {
        if !std::io::stderr().is_terminal() {
            return indicatif::ProgressBar::hidden();
        }
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] calibrate: {msg}",
            )
            .expect("valid template"),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    });
    bar.set_message(what.to_string());
}

/// The command line for a profile's provenance: `loggops-sim` and the arguments, each path
/// made relative to the current directory (a machine's absolute paths are never recorded),
/// quoted for a POSIX shell where needed.
fn portable_command() -> String {
    std::iter::once("loggops-sim".to_string())
        .chain(std::env::args().skip(1).map(|a| {
            let p = Path::new(&a);
            if p.is_absolute() {
                loggops_calibrate::relative_to_cwd(p)
            } else {
                a
            }
        }))
        .map(|a| crate::inputs::shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Peak resident set size of this process (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
