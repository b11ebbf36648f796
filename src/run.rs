//! Stage two of the CLI: validated settings and the calls into the libraries.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use loggops_engine::{simulate as engine_run, Config, NoNoise, Order, Outcome, Params, Program};

use crate::cli::{CalibrateArgs, FormatArg, GenArgs, ModelArg, OrderArg, RunArgs};
use crate::schedule::{self, with_program, Schedule};
use crate::units::{
    fmt_bytes, fmt_ps, format_duration, format_size, parse_per_byte_ps, parse_size, parse_tick_ps,
    parse_ticks, parse_time_ps,
};
use loggops_goal::{ParseOptions, DEFAULT_TICK_PS};

/// The engine's sharing model: `--model`, else queued with `--noise` and LogGOPSim's without.
pub fn model(args: &RunArgs) -> loggops_engine::Model {
    match args.model {
        Some(m) => m.into(),
        None if args.noise.is_some() => loggops_engine::Model::Queued,
        None => loggops_engine::Model::LogGOPSim,
    }
}

fn order(o: OrderArg) -> Order {
    match o {
        OrderArg::Stable => Order::Stable,
        OrderArg::Libstdcxx => Order::Libstdcxx,
    }
}

/// `NAME=VALUE` pairs of `--param`.
fn overrides(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| anyhow!("--param {kv}: expected NAME=VALUE"))
        })
        .collect()
}

/// Parameters in picoseconds from the flags on top of `base`.
pub fn resolve_params(args: &RunArgs, mut p: Params) -> Result<Params> {
    let time = |flag: &str, v: &Option<String>, into: &mut u64| -> Result<()> {
        if let Some(s) = v {
            *into = parse_time_ps(s).map_err(|e| anyhow!("-{flag} {s}: {e}"))?;
        }
        Ok(())
    };
    time("L", &args.l, &mut p.l)?;
    time("o", &args.o, &mut p.o)?;
    time("g", &args.g, &mut p.g)?;
    if let Some(s) = &args.big_g {
        p.big_g = parse_per_byte_ps(s).map_err(|e| anyhow!("-G {s}: {e}"))?;
    }
    if let Some(s) = &args.big_o {
        p.big_o = parse_per_byte_ps(s).map_err(|e| anyhow!("-O {s}: {e}"))?;
    }
    if let Some(s) = &args.s {
        p.s = parse_size(s).map_err(|e| anyhow!("-S {s}: {e}"))?;
    }
    if let Some(b) = args.rndv_3l {
        p.rndv_extra_latencies = if b { 2 } else { 0 };
    }
    Ok(p)
}

/// Parameters as LogGOPSim's integer ticks (compat mode).
fn compat_params(args: &RunArgs) -> Result<Params> {
    let mut p = Params::loggopsim_defaults_ticks();
    let tick = |flag: &str, v: &Option<String>| -> Result<Option<u64>> {
        v.as_deref()
            .map(|s| parse_ticks(s).map_err(|e| anyhow!("-{flag} {s}: {e}")))
            .transpose()
    };
    if let Some(v) = tick("L", &args.l)? {
        p.l = v;
    }
    if let Some(v) = tick("o", &args.o)? {
        p.o = v;
    }
    if let Some(v) = tick("g", &args.g)? {
        p.g = v;
    }
    if let Some(v) = tick("G", &args.big_g)? {
        p.big_g = loggops_engine::PerByte::from_raw(v << loggops_engine::PerByte::FRAC_BITS);
    }
    if let Some(v) = tick("O", &args.big_o)? {
        p.big_o = loggops_engine::PerByte::from_raw(v << loggops_engine::PerByte::FRAC_BITS);
    }
    if let Some(v) = tick("S", &args.s)? {
        // LogGOPSim stores S in a uint32_t.
        p.s = v as u32 as u64;
    }
    Ok(p)
}

/// The tick of `--tick` in ps (1 ns by default).
fn tick_ps(flag: &Option<String>) -> Result<u64> {
    match flag {
        Some(s) => parse_tick_ps(s).map_err(|e| anyhow!("--tick {s}: {e}")),
        None => Ok(DEFAULT_TICK_PS),
    }
}

/// How explicit GOAL files are read in the default and noisy modes: plain calc numbers in
/// ticks of `--tick`.
pub fn goal_options(args: &RunArgs) -> Result<ParseOptions> {
    Ok(ParseOptions::with_tick(tick_ps(&args.tick)?))
}

/// `(file): plain calc numbers are ticks of 1ns`, said where a run read an explicit file.
pub fn tick_note(goal: &Path, opts: &ParseOptions) -> String {
    format!(
        "{}: plain calc numbers are ticks of {} (--tick)",
        goal.display(),
        opts.tick_text()
    )
}

/// Writes `text` to `--output` atomically, or to stdout.
pub fn emit(output: Option<&Path>, text: &str) -> Result<()> {
    match output {
        Some(path) => loggops_report::write_atomic(path, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

pub fn simulate(args: RunArgs) -> Result<ExitCode> {
    let Some(goal) = args.goal.clone() else {
        bail!("no schedule given: use --goal FILE (try --help for examples)");
    };
    if args.nodes.contains(&0) {
        bail!("--nodes 0: a schedule needs at least one rank");
    }
    let ov = overrides(&args.params)?;
    if args.compat.is_some() {
        if let Some(t) = &args.tick {
            bail!(
                "--tick {t} does not apply to --compat loggopsim: compat mode reads every number \
                 (calc, -L, -o, -g, ...) as one of LogGOPSim's unit-less ticks, as LogGOPSim \
                 does, so there is nothing to convert; drop --tick, or drop --compat to simulate \
                 in time units"
            );
        }
        return compat_run(&args, &goal, &ov);
    }
    let goal_opts = goal_options(&args)?;
    if args.noise.is_some() {
        return crate::mc::monte_carlo(&args, &goal, &ov, &goal_opts);
    }
    let params = resolve_params(&args, Params::loggopsim_defaults_ps())?;
    let cfg = Config {
        model: model(&args),
        params,
        order: order(args.order),
        compat: false,
    };
    let node_list: Vec<Option<u32>> = if args.nodes.is_empty() {
        vec![None]
    } else {
        args.nodes.iter().map(|&n| Some(n)).collect()
    };
    let mut runs = Vec::new();
    let mut explicit = false;
    for nodes in node_list {
        let sched = schedule::load(&goal, nodes, &ov, &goal_opts)?;
        explicit = sched.is_explicit();
        let start = Instant::now();
        let out = with_program!(&sched, |p| engine_run(p, &cfg, &mut NoNoise))
            .with_context(|| format!("simulating {}", goal.display()))?;
        let wall = start.elapsed().as_secs_f64();
        if !out.completed() {
            eprint!("{}", describe_leftovers(&goal, &sched, &out));
            return Ok(ExitCode::from(1));
        }
        runs.push((sched.num_ranks(), total_ops(&sched), out, wall));
    }
    let text = match args.format {
        FormatArg::Human => {
            let tick = explicit.then(|| goal_opts.tick_text());
            human_summary(
                &goal,
                &cfg.params,
                cfg.order,
                cfg.model,
                tick.as_deref(),
                &runs,
            )
        }
        FormatArg::Json => json_summary(&goal, &cfg.params, cfg.model, goal_opts.tick_ps, &runs),
        FormatArg::Csv => csv_summary(&runs),
    };
    emit(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

fn total_ops(s: &Schedule) -> u64 {
    with_program!(s, |p| p.total_ops())
}

type Run = (u32, u64, Outcome, f64);

/// The `--model` value naming `m`.
pub fn model_name(m: loggops_engine::Model) -> &'static str {
    match m {
        loggops_engine::Model::LogGOPSim => "loggopsim",
        loggops_engine::Model::Queued => "queued",
    }
}

/// `tick`: the tick of an explicit file's plain calc numbers, said in the first line.
fn human_summary(
    goal: &Path,
    p: &Params,
    order: Order,
    model: loggops_engine::Model,
    tick: Option<&str>,
    runs: &[Run],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: L={} o={} g={} G={}/B O={}/B S={} ({} order, {} model{})",
        goal.display(),
        fmt_ps(p.l),
        fmt_ps(p.o),
        fmt_ps(p.g),
        fmt_per_byte(p.big_g),
        fmt_per_byte(p.big_o),
        format_size(p.s),
        if order == Order::Stable {
            "stable"
        } else {
            "libstdcxx"
        },
        model_name(model),
        tick.map(|t| format!("; plain calc numbers are ticks of {t}"))
            .unwrap_or_default(),
    );
    for (ranks, ops, out, wall) in runs {
        let (max, host) = out.max();
        let _ = writeln!(
            s,
            "{ranks} ranks: finishes at {} (last rank: {host}); {} events ({ops} ops + {} messages), simulated in {:.3}s ({:.1} M events/s)",
            fmt_ps(max),
            out.events,
            out.messages,
            wall,
            out.events as f64 / wall.max(1e-9) / 1e6
        );
    }
    s
}

fn fmt_per_byte(g: loggops_engine::PerByte) -> String {
    if g.is_whole() {
        fmt_ps(g.whole_units())
    } else {
        format!("{:.4}ps", g.as_f64())
    }
}

/// `tick_ps`: the tick plain calc numbers of an explicit file are read in.
fn json_summary(
    goal: &Path,
    p: &Params,
    model: loggops_engine::Model,
    tick_ps: u64,
    runs: &[Run],
) -> String {
    let items: Vec<serde_json::Value> = runs
        .iter()
        .map(|(ranks, ops, out, wall)| {
            let (max, host) = out.max();
            serde_json::json!({
                "ranks": ranks,
                "max_time_ps": max,
                "max_rank": host,
                "finish_ps": out.finish,
                "events": out.events,
                "ops": ops,
                "messages": out.messages,
                "wall_s": wall,
            })
        })
        .collect();
    let v = serde_json::json!({
        "goal": goal.display().to_string(),
        "tick_ps": tick_ps,
        "params": {
            "L_ps": p.l, "o_ps": p.o, "g_ps": p.g,
            "G_ps_per_byte": p.big_g.as_f64(), "O_ps_per_byte": p.big_o.as_f64(), "S_bytes": p.s,
        },
        "model": model_name(model),
        "runs": items,
        "peak_rss_bytes": peak_rss_bytes(),
    });
    let mut s = serde_json::to_string_pretty(&v).expect("JSON values serialise");
    s.push('\n');
    s
}

fn csv_summary(runs: &[Run]) -> String {
    let mut s = String::from("ranks,max_time_ps,max_rank,events,ops,messages\n");
    for (ranks, ops, out, _) in runs {
        let (max, host) = out.max();
        let _ = writeln!(
            s,
            "{ranks},{max},{host},{},{ops},{}",
            out.events, out.messages
        );
    }
    s
}

/// Names what was left over: ranks, sources, tags and op labels.
fn describe_leftovers(goal: &Path, sched: &Schedule, out: &Outcome) -> String {
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

fn compat_run(args: &RunArgs, goal: &Path, ov: &[(String, String)]) -> Result<ExitCode> {
    if args.model == Some(ModelArg::Queued) {
        bail!("--model queued does not apply with --compat loggopsim, which runs LogGOPSim's rules exactly");
    }
    let params = compat_params(args)?;
    let cfg = Config {
        model: loggops_engine::Model::LogGOPSim,
        params,
        order: order(args.order),
        compat: true,
    };
    let nodes = match args.nodes.as_slice() {
        [] => None,
        [n] => Some(*n),
        _ => bail!("--compat loggopsim runs one schedule: give at most one --nodes value"),
    };
    // LogGOPSim's ticks as they are.
    let sched = schedule::load(goal, nodes, ov, &ParseOptions::ticks_as_is())?;
    let out = with_program!(&sched, |p| engine_run(p, &cfg, &mut NoNoise))?;
    let text = with_program!(&sched, |p| crate::compat::render(
        p,
        &params,
        &out,
        args.batchmode
    ));
    emit(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

pub fn gen(args: GenArgs) -> Result<ExitCode> {
    if args.nodes == 0 {
        bail!("--nodes 0: a schedule needs at least one rank");
    }
    let tick = tick_ps(&args.tick)?;
    let sched: Schedule = if let Some(path) = &args.goal {
        let ov = overrides(&args.params)?;
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
        let g = loggops_schedgen::Generated::with_options(coll, args.nodes, size, opts)?;
        Schedule::Generated(g)
    };
    // Checked before anything is written (stdout cannot be taken back).
    with_program!(&sched, |p| whole_ticks(p, tick))?;
    let emit_goal = |w: &mut dyn Write| -> std::io::Result<()> {
        let mut bw = std::io::BufWriter::with_capacity(1 << 20, w);
        with_program!(&sched, |p| loggops_goal::write_goal_with(p, &mut bw, tick))?;
        bw.flush()
    };
    match &args.output {
        Some(path) => loggops_report::write_atomic(path, |w| emit_goal(w))
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => emit_goal(&mut std::io::stdout().lock())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Fails, naming the op and a tick that works, if a calc of `p` is not a whole number of ticks
/// of `tick` ps (`gen` writes calc durations as plain numbers of ticks).
fn whole_ticks<P: Program>(p: &P, tick: u64) -> Result<()> {
    for r in 0..p.num_ranks() {
        for i in 0..p.num_ops(r) {
            let op = p.op(r, i);
            if op.kind == loggops_engine::OpKind::Calc && !op.size.is_multiple_of(tick) {
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
    Ok(())
}

pub fn calibrate(a: CalibrateArgs) -> Result<ExitCode> {
    use loggops_calibrate::{CalibrateInputs, ParamsTableRow, PricesTableRow};
    let mut inp = CalibrateInputs::new(a.system.clone(), a.latency.clone(), a.bandwidth.clone());
    inp.description = a.description.clone();
    inp.os_noise = a.os_noise.clone();
    inp.loggp = a.loggp.clone();
    inp.far_latency = a.far_latency.clone();
    inp.far_bandwidth = a.far_bandwidth.clone();
    inp.nodes_per_switch = a.nodes_per_switch;
    inp.pingpong.warmup = a.warmup;
    inp.notes = a.notes.clone();
    inp.command = std::env::args().collect::<Vec<_>>().join(" ");
    let t = |flag: &str, v: &Option<String>| -> Result<Option<f64>> {
        v.as_deref()
            .map(|s| {
                parse_time_ps(s)
                    .map(|x| x as f64)
                    .map_err(|e| anyhow!("-{flag} {s}: {e}"))
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
                .map_err(|e| anyhow!("-G {s}: {e}"))
        })
        .transpose()?;
    e.big_o_ps_per_byte = a
        .big_o
        .as_deref()
        .map(|s| {
            parse_per_byte_ps(s)
                .map(|g| g.as_f64())
                .map_err(|e| anyhow!("-O {s}: {e}"))
        })
        .transpose()?;
    e.s_bytes =
        a.s.as_deref()
            .map(|s| parse_size(s).map_err(|e| anyhow!("-S {s}: {e}")))
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
    let (profile, report) = loggops_calibrate::build_profile(&inp)?;
    loggops_profile::write_profile(&a.output, &profile)?;
    let text = report.to_text();
    match &a.report {
        Some(p) => loggops_report::write_atomic(p, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", p.display()))?,
        None => eprint!("{text}"),
    }
    if let Some(p) = &a.report_json {
        let json = report.to_json();
        loggops_report::write_atomic(p, |w| w.write_all(json.as_bytes()))
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    eprintln!(
        "wrote {} ({})",
        a.output.display(),
        fmt_bytes(std::fs::metadata(&a.output)?.len())
    );
    Ok(ExitCode::SUCCESS)
}

/// Peak resident set size of this process (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
