//! Why is it slow, and what would help (issue 30): the command-line side of
//! `--critical-path`, `--sensitivity` and `--timeline`. The work is done by `loggops-explain`;
//! this module parses the flags, checks sizes before a run, records runs on the global engine
//! (same answers) and writes the reports.
//!
//! Hooks: `run.rs` runs each noiseless simulation through [`Noiseless::simulate`], and
//! `mc.rs` each Monte-Carlo repetition through [`McPaths::run`] (marked "issue 30 hook").

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use std::sync::Mutex;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use loggops_engine::{simulate, Config, NoNoise, Noise, Outcome, Program, Time};
use loggops_explain::render::{self, RunReport};
use loggops_explain::{
    critical_path, record, timeline, tolerance, ActivityLog, CellPaths, CriticalPath, PathSummary,
    Shifted, TimelineOptions, Tolerance,
};
use loggops_noise::{NoiseMode, NoiseModel};

use crate::cli::FormatArg;
use crate::request::{Outputs, Request};
use crate::units::{fmt_bytes, parse_size, parse_time_ps};

/// Flags of issue 30 (flattened into the run flags).
#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "Why is it slow (critical path, sensitivity, timelines)")]
pub struct ExplainArgs {
    /// Show the critical path: the chain of ops, messages and waits that set the finishing
    /// time, every picosecond of it attributed to compute, CPU overhead (o, O·size), NIC gap
    /// (g, G·size), latency (L, rendezvous round trips included), waiting for a busy CPU or
    /// NIC, OS detours and network noise (drawn minus noiseless L, G, o, g), with the ranks and
    /// the top messages on it and dT/dL, dT/do, dT/dg, dT/dG read from it. With --noise: per
    /// cell the mean, p50 and p95 of every part over the repetitions and which part the slow
    /// repetitions (around the p95) spend their extra time on. Printed after the results, or
    /// written to FILE (--critical-path=FILE) in --format. Runs are recorded on the exact
    /// global engine (same answers, slower, about 140 bytes of memory per event).
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "-"
    )]
    pub critical_path: Option<PathBuf>,
    /// Also find the latency tolerance of the noiseless run: the largest extra latency per
    /// message for which the runtime grows by at most 1 % and 5 %, by bisection on exact runs
    /// (about 20-40 more runs), next to the derivatives read from the critical path. Implies
    /// --critical-path.
    #[arg(long)]
    pub sensitivity: bool,
    /// Ranks and messages listed per critical path.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub critical_path_top: usize,
    /// Write one run as a Chrome trace-event JSON timeline for ui.perfetto.dev or
    /// chrome://tracing: per rank a CPU track with the ops, send/receive NIC tracks, the
    /// receives posted and the critical path; messages as flow arrows, OS detours as slices.
    /// With --noise: repetition --timeline-rep of the first node count and the first noisy
    /// mode.
    #[arg(long, value_name = "FILE.json")]
    pub timeline: Option<PathBuf>,
    /// Repetition written by --timeline (with --noise).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub timeline_rep: u64,
    /// Only these ranks in the timeline, e.g. 0-15,100.
    #[arg(long, value_name = "RANKS")]
    pub timeline_ranks: Option<String>,
    /// Only slices overlapping this window of simulated time, e.g. 1ms..2ms (either end may be
    /// left open: ..2ms).
    #[arg(long, value_name = "FROM..TO")]
    pub timeline_window: Option<String>,
    /// Refuse timelines larger than this (checked before the run from the op count of the
    /// chosen ranks, and while writing: nothing is written when it is exceeded).
    #[arg(long, value_name = "SIZE", default_value = "1GiB")]
    pub timeline_max_size: String,
}

/// Memory the full activity logs of the runs recorded at once may take. A run whose log would
/// not fit is attributed on a streaming log instead ([`loggops_explain::Carrier`]: the same
/// parts, derivatives and ties, a few KiB per rank), without the list of the path's steps,
/// ranks and messages.
const LOG_BUDGET: u64 = 2 << 30;

impl ExplainArgs {
    fn wants_path(&self) -> bool {
        self.critical_path.is_some() || self.sensitivity
    }

    /// Whether any of these flags was given.
    pub fn any(&self) -> bool {
        self.wants_path() || self.timeline.is_some()
    }

    /// Where the report goes: `None` for stdout.
    pub(crate) fn destination(&self) -> Option<&Path> {
        self.critical_path
            .as_deref()
            .filter(|p| p.as_os_str() != "-")
    }

    fn timeline_options(&self) -> Result<Option<TimelineOptions>> {
        if self.timeline.is_none() {
            return Ok(None);
        }
        let ranks = self
            .timeline_ranks
            .as_deref()
            .map(parse_ranks)
            .transpose()
            .map_err(|e| anyhow!("--timeline-ranks: {e}"))?;
        let window = self
            .timeline_window
            .as_deref()
            .map(parse_window)
            .transpose()
            .map_err(|e| anyhow!("--timeline-window: {e}"))?;
        let max_bytes = parse_size(&self.timeline_max_size)
            .map_err(|e| anyhow!("--timeline-max-size {}: {e}", self.timeline_max_size))?;
        Ok(Some(TimelineOptions {
            ranks,
            window,
            max_bytes,
        }))
    }
}

/// `0-15,100` → sorted, merged inclusive ranges.
fn parse_ranks(s: &str) -> Result<Vec<(u32, u32)>, String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |x: &str| {
            x.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{x}` is not a rank (expected e.g. 0-15,100)"))
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if a > b {
            return Err(format!("`{part}`: the range is empty"));
        }
        v.push((a, b));
    }
    if v.is_empty() {
        return Err("no ranks given (expected e.g. 0-15,100)".into());
    }
    v.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (a, b) in v {
        match merged.last_mut() {
            Some(l) if a <= l.1.saturating_add(1) => l.1 = l.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Ok(merged)
}

/// `1ms..2ms`, `..2ms`, `1ms..` → ps.
fn parse_window(s: &str) -> Result<(Time, Time), String> {
    let Some((a, b)) = s.split_once("..") else {
        return Err(format!("`{s}`: expected FROM..TO, e.g. 1ms..2ms"));
    };
    let t = |x: &str, open: Time| {
        if x.trim().is_empty() {
            Ok(open)
        } else {
            parse_time_ps(x.trim()).map_err(|e| format!("`{x}`: {e}"))
        }
    };
    let (a, b) = (t(a, 0)?, t(b, Time::MAX)?);
    if a > b {
        return Err(format!("`{s}`: the window ends before it starts"));
    }
    Ok((a, b))
}

/// Whether the full activity logs of `at_once` runs of `prog` fit in [`LOG_BUDGET`].
fn log_fits<P: Program>(prog: &P, at_once: u64) -> bool {
    ActivityLog::estimate_bytes(prog).saturating_mul(at_once.max(1)) <= LOG_BUDGET
}

/// Refuses a timeline whose run's activity log would not fit in memory (`at_once` logs in
/// parallel): a timeline needs every activity.
fn check_log<P: Program>(prog: &P, at_once: u64) -> Result<()> {
    let bytes = ActivityLog::estimate_bytes(prog).saturating_mul(at_once.max(1));
    if bytes > LOG_BUDGET {
        bail!(
            "recording this run for --timeline needs about {} of memory ({} ops{}), more than \
             the {} allowed: simulate fewer --nodes, or use --threads 1 with --noise \
             (--critical-path and --sensitivity alone work at any size)",
            fmt_bytes(bytes),
            prog.total_ops(),
            if at_once > 1 {
                format!(", {at_once} repetitions at once")
            } else {
                String::new()
            },
            fmt_bytes(LOG_BUDGET)
        );
    }
    Ok(())
}

fn check_timeline<P: Program>(prog: &P, opts: &TimelineOptions) -> Result<()> {
    let n = prog.num_ranks();
    if let Some(ranks) = &opts.ranks {
        if let Some(&(a, b)) = ranks.iter().find(|r| r.1 >= n) {
            let from = a.max(n);
            let what = if from == b {
                format!("rank {b} is")
            } else {
                format!("ranks {from}-{b} are")
            };
            bail!(
                "--timeline-ranks: {what} not in the run, which has {n} rank(s) (0-{}): \
                 choose among those",
                n.saturating_sub(1)
            );
        }
    }
    let est = timeline::estimate_bytes(prog, opts);
    if est > opts.max_bytes {
        bail!(
            "the timeline would take about {} ({} ops on the chosen ranks), more than \
             --timeline-max-size {}: keep fewer ranks (--timeline-ranks 0-15,100), a time \
             window (--timeline-window 1ms..2ms), or raise --timeline-max-size",
            fmt_bytes(est),
            match &opts.ranks {
                None => prog.total_ops(),
                Some(_) => est / timeline::BYTES_PER_OP,
            },
            fmt_bytes(opts.max_bytes)
        );
    }
    Ok(())
}

fn write_timeline(
    path: &Path,
    log: &ActivityLog,
    cp: &CriticalPath,
    opts: &TimelineOptions,
    title: &str,
) -> Result<()> {
    let mut stats = None;
    loggops_output::write_atomic(path, |w| {
        stats = Some(timeline::write(w, log, Some(cp), opts, title)?);
        Ok(())
    })
    .map_err(|e| {
        if e.get_ref().is_some_and(|i| i.is::<timeline::TooLarge>()) {
            anyhow!(
                "{e}: nothing was written to {}; keep fewer ranks (--timeline-ranks), a \
                 shorter --timeline-window, or raise --timeline-max-size",
                path.display()
            )
        } else {
            anyhow!("cannot write {}: {e}", path.display())
        }
    })?;
    if let Some(s) = stats {
        crate::out::errln!(
            "wrote {} ({}: {} op slices, {} message slices, {} flows, {} critical-path steps){}",
            path.display(),
            fmt_bytes(s.bytes),
            s.op_slices,
            s.message_slices,
            s.flows,
            s.path_slices,
            window_after_end(opts, cp.finish)
        );
    }
    Ok(())
}

/// A word when `--timeline-window` starts after the run's end (the timeline is then empty;
/// a window starting at the end still shows what ends there): where the run ended, so that
/// the next window can be chosen.
fn window_after_end(opts: &TimelineOptions, finish: Time) -> String {
    match opts.window {
        Some((start, _)) if start > finish => format!(
            "; the --timeline-window starts at {}, after the run's end ({}): nothing happens \
             in it, choose a window within 0..{}",
            loggops_units::fmt_time_ps(start),
            loggops_units::fmt_time_ps(finish),
            loggops_units::fmt_time_ps(finish)
        ),
        _ => String::new(),
    }
}

fn workload_name(goal: &Path) -> String {
    goal.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A run's critical path without its history: the attribution carried forward on a streaming
/// log (the steps, ranks and messages are not listed). `None` when the run did not complete.
fn carried<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
) -> Result<(Outcome, Option<CriticalPath>)> {
    let (out, path) = loggops_explain::attribute(prog, cfg, noise)?;
    Ok((out, path.transpose()?))
}

/// Records a run and reads its critical path; errors name what did not complete.
fn recorded<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    keep_posts: bool,
) -> Result<(Outcome, Option<ActivityLog>, Option<CriticalPath>)> {
    if crate::mc::polled_rendezvous(prog, cfg.mpi_progress, cfg.params.s) {
        bail!(
            "--critical-path, --sensitivity and --timeline cannot explain runs with polled MPI \
             progress and rendezvous messages (above S) yet (the time a rendezvous message \
             waits for a calc is not attributed); \
             add --mpi-progress async to explain the run with asynchronous progress"
        );
    }
    let (out, log) = record(prog, cfg, noise, keep_posts)?;
    if !out.completed() {
        return Ok((out, Some(log), None));
    }
    let cp = critical_path(&log, prog, &out.finish, cfg.params.big_o)?;
    Ok((out, Some(log), Some(cp)))
}

const TOLERANCES: [u32; 2] = [1, 5];

/// Writes the report to its destination, or prints it.
fn emit(req: &Request, runs: &[RunReport], cells: &[CellPaths]) -> Result<()> {
    let x = &req.settings.explain;
    let format = req.outputs.format;
    let text = match format {
        FormatArg::Human => {
            let mut s = render::runs_table(runs, x.critical_path_top);
            if !cells.is_empty() {
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(&render::cells_table(cells));
            }
            s
        }
        FormatArg::Json => render::report_json(runs, cells),
        FormatArg::Csv => csv(runs, cells),
    };
    match x.destination() {
        Some(p) => loggops_output::write_atomic(p, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", p.display())),
        None => {
            let mut out = std::io::stdout().lock();
            if format == FormatArg::Human {
                out.write_all(b"\n")?;
            }
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

/// The CSV report: one row per noiseless run, or with noise one per cell and part.
pub(crate) fn csv(runs: &[RunReport], cells: &[CellPaths]) -> String {
    if cells.is_empty() {
        render::runs_csv(runs)
    } else {
        render::cells_csv(cells)
    }
}

/// Common checks of the flags (`compat`: with `--compat loggopsim`); what `--timeline` asks
/// for, typed (`request.rs` resolves the flags through it).
pub(crate) fn check_flags(
    x: &ExplainArgs,
    compat: bool,
    out: &Outputs,
) -> Result<Option<TimelineOptions>> {
    if !x.wants_path() && x.timeline.is_none() {
        return Ok(None);
    }
    if compat {
        bail!(
            "--critical-path, --sensitivity and --timeline work in picoseconds: leave out \
             --compat loggopsim"
        );
    }
    if x.wants_path()
        && x.destination().is_none()
        && out.output.is_none()
        && out.format != FormatArg::Human
    {
        bail!(
            "--critical-path with --format json or csv needs a file of its own: \
             --critical-path=FILE (the results go to stdout, or to --output)"
        );
    }
    x.timeline_options()
}

// ---------------------------------------------------------------------------------------------
// Noiseless runs

/// Noiseless runs of `run.rs`, recorded when a flag asks for it.
pub struct Noiseless {
    req: Request,
    workload: String,
    timeline: Option<TimelineOptions>,
    runs: Vec<RunReport>,
}

impl Noiseless {
    /// `None` without the flags (or with --noise, which [`McPaths`] handles).
    pub fn new(req: &Request, goal: &Path) -> Result<Option<Noiseless>> {
        let x = &req.settings.explain;
        if req.noisy() || (!x.wants_path() && x.timeline.is_none()) {
            return Ok(None);
        }
        if x.timeline.is_some() && req.inputs.nodes.len() > 1 {
            bail!("--timeline writes one run: give one --nodes value");
        }
        Ok(Some(Noiseless {
            req: req.clone(),
            workload: workload_name(goal),
            timeline: req.settings.timeline.clone(),
            runs: Vec::new(),
        }))
    }

    /// Simulates `prog` (recording it), keeps its critical path and writes its timeline.
    pub fn simulate<P: Program>(&mut self, prog: &P, cfg: &Config) -> Result<Outcome> {
        if let Some(t) = &self.timeline {
            check_timeline(prog, t)?;
            check_log(prog, 1)?;
        }
        let (out, cp) = if self.timeline.is_some() || log_fits(prog, 1) {
            let (out, log, cp) = recorded(prog, cfg, &mut NoNoise, self.timeline.is_some())?;
            if let (Some(t), Some(path), Some(cp), Some(log)) = (
                &self.timeline,
                &self.req.settings.explain.timeline,
                &cp,
                &log,
            ) {
                let title = format!("{} at {} ranks", self.workload, prog.num_ranks());
                write_timeline(path, log, cp, t, &title)?;
            }
            (out, cp)
        } else {
            carried(prog, cfg, &mut NoNoise)?
        };
        let Some(cp) = cp else { return Ok(out) };
        let mut tol = Vec::new();
        if self.req.settings.explain.sensitivity {
            for pct in TOLERANCES {
                tol.push(tolerance(cp.finish, cp.counts.latency, pct, |x| {
                    let p = loggops_engine::Params {
                        l: cfg.params.l.saturating_add(x),
                        ..cfg.params
                    };
                    simulate(prog, &Config { params: p, ..*cfg }, &mut NoNoise).map(|o| o.max().0)
                })?);
            }
        }
        self.runs.push(RunReport {
            workload: self.workload.clone(),
            nodes: prog.num_ranks(),
            system: None,
            path: cp,
            latency_ps: cfg.params.l,
            tolerance: tol,
        });
        Ok(out)
    }

    /// The reports of the recorded runs (what [`Noiseless::finish`] prints).
    pub(crate) fn reports(self) -> Vec<RunReport> {
        self.runs
    }

    /// Prints or writes the report.
    pub fn finish(self) -> Result<()> {
        if self.req.settings.explain.wants_path() {
            emit(&self.req, &self.runs, &[])?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Monte-Carlo runs

#[derive(Default)]
struct McState {
    /// Cells that ran, in the order they first ran: (ranks, mode). Reported in the sweep's
    /// order (`--nodes`, then `--noise-mode`), whatever ran first.
    order: Vec<(u32, NoiseMode)>,
    reps: HashMap<(u32, NoiseMode), Vec<PathSummary>>,
    /// The noiseless run of each rank count.
    baselines: HashMap<u32, (PathSummary, RunReport)>,
    timeline_written: bool,
    /// Rank counts whose memory need was checked.
    checked: HashSet<u32>,
}

/// Records the repetitions of `mc.rs` when a flag asks for it.
pub struct McPaths {
    req: Request,
    workload: String,
    timeline: Option<TimelineOptions>,
    /// The cell whose repetition --timeline writes: (first node count, first noisy mode).
    timeline_cell: (Option<u32>, Option<NoiseMode>),
    /// The sweep's noise modes, in the order its cells are reported.
    modes: Vec<NoiseMode>,
    threads: u64,
    state: Mutex<McState>,
}

impl McPaths {
    /// `None` without the flags.
    pub fn new(req: &Request, goal: &Path, modes: &[NoiseMode]) -> Result<Option<McPaths>> {
        let x = &req.settings.explain;
        if !x.wants_path() && x.timeline.is_none() {
            return Ok(None);
        }
        let mode = modes
            .iter()
            .copied()
            .find(|&m| m != NoiseMode::None)
            .or(modes.first().copied());
        Ok(Some(McPaths {
            req: req.clone(),
            workload: workload_name(goal),
            timeline: req.settings.timeline.clone(),
            timeline_cell: (req.inputs.nodes.first().copied(), mode),
            modes: modes.to_vec(),
            threads: req.threads() as u64,
            state: Mutex::new(McState::default()),
        }))
    }

    /// One repetition (`rep` of the model's mode; the noiseless baseline is mode `none`,
    /// repetition 0), recorded when the flags need it: `None` to run it as usual.
    pub fn run<P: Program>(
        &self,
        prog: &P,
        model: &NoiseModel,
        engine_model: loggops_engine::Model,
        seed: u64,
        rep: u64,
    ) -> Option<Result<(u64, PathSummary)>> {
        if !self.records(prog.num_ranks(), model.mode(), rep) {
            return None;
        }
        let timeline = self
            .timeline
            .as_ref()
            .filter(|_| self.timeline_rep(prog.num_ranks(), model.mode(), rep));
        Some(self.record_rep(prog, model, engine_model, seed, rep, timeline))
    }

    /// Whether repetition `rep` of `ranks` ranks in `mode` is recorded ([`Self::run`] records
    /// it rather than answering `None`).
    pub fn records(&self, ranks: u32, mode: NoiseMode, rep: u64) -> bool {
        self.req.settings.explain.wants_path() || self.timeline_rep(ranks, mode, rep)
    }

    /// Whether `--timeline` draws repetition `rep` of `ranks` ranks in `mode`.
    fn timeline_rep(&self, ranks: u32, mode: NoiseMode, rep: u64) -> bool {
        let (nodes, m) = self.timeline_cell;
        self.timeline.is_some()
            && nodes.is_none_or(|n| n == ranks)
            && m == Some(mode)
            && rep == self.req.settings.explain.timeline_rep
    }

    fn record_rep<P: Program>(
        &self,
        prog: &P,
        model: &NoiseModel,
        engine_model: loggops_engine::Model,
        seed: u64,
        rep: u64,
        timeline: Option<&TimelineOptions>,
    ) -> Result<(u64, PathSummary)> {
        let ranks = prog.num_ranks();
        let mode = model.mode();
        if let Some(t) = timeline {
            check_timeline(prog, t)?;
            let first = self.state.lock().expect("no panics").checked.insert(ranks);
            if first {
                check_log(prog, self.threads)?;
            }
        }
        let cfg = Config {
            model: engine_model,
            mpi_progress: model.mpi_progress(),
            ..Config::new(model.engine_params())
        };
        let baseline = mode == NoiseMode::None && rep == 0;
        // The full log for a timeline, and for the noiseless run's listing of its path when
        // it fits; the attribution alone otherwise.
        let full = timeline.is_some() || (baseline && log_fits(prog, self.threads));
        let keep = timeline.is_some();
        let (out, log, cp) = match (full, model.needs_noise_run()) {
            (true, true) => recorded(prog, &cfg, &mut model.instance(seed, rep, ranks), keep)?,
            (true, false) => recorded(prog, &cfg, &mut NoNoise, keep)?,
            (false, true) => {
                let (out, cp) = carried(prog, &cfg, &mut model.instance(seed, rep, ranks))?;
                (out, None, cp)
            }
            (false, false) => {
                let (out, cp) = carried(prog, &cfg, &mut NoNoise)?;
                (out, None, cp)
            }
        };
        let Some(cp) = cp else {
            return Err(crate::mc::Incomplete { rep, out }.into());
        };
        if let (Some(t), Some(path), Some(log)) =
            (timeline, &self.req.settings.explain.timeline, &log)
        {
            let title = format!(
                "{} at {ranks} ranks, noise {mode}, repetition {rep}",
                self.workload
            );
            write_timeline(path, log, &cp, t, &title)?;
            self.state.lock().expect("no panics").timeline_written = true;
        }
        drop(log);
        let summary = PathSummary::of(rep, &cp);
        let mut tol = Vec::new();
        if baseline && self.req.settings.explain.sensitivity {
            for pct in TOLERANCES {
                tol.push(self.tolerance(prog, model, &cfg, seed, &cp, pct)?);
            }
        }
        let mut st = self.state.lock().expect("no panics");
        if baseline {
            st.baselines.insert(
                ranks,
                (
                    summary,
                    RunReport {
                        workload: self.workload.clone(),
                        nodes: ranks,
                        system: None,
                        path: cp,
                        latency_ps: cfg.params.l,
                        tolerance: tol,
                    },
                ),
            );
        }
        if !st.order.contains(&(ranks, mode)) {
            st.order.push((ranks, mode));
        }
        st.reps.entry((ranks, mode)).or_default().push(summary);
        Ok((out.max().0, summary))
    }

    fn tolerance<P: Program>(
        &self,
        prog: &P,
        model: &NoiseModel,
        cfg: &Config,
        seed: u64,
        cp: &CriticalPath,
        pct: u32,
    ) -> Result<Tolerance> {
        let ranks = prog.num_ranks();
        let t = tolerance(cp.finish, cp.counts.latency, pct, |x| {
            let out = if model.needs_noise_run() {
                let mut n = Shifted {
                    inner: model.instance(seed, 0, ranks),
                    extra: x,
                };
                simulate(prog, cfg, &mut n)
            } else {
                let mut n = Shifted {
                    inner: NoNoise,
                    extra: x,
                };
                simulate(prog, cfg, &mut n)
            };
            out.map(|o| o.max().0)
        })?;
        Ok(t)
    }

    /// Prints or writes the report once every cell has run; `system` labels the cells.
    pub fn finish(self, system: &str) -> Result<()> {
        let req = self.req.clone();
        let (runs, cells) = self.reports(system)?;
        if req.settings.explain.wants_path() {
            emit(&req, &runs, &cells)?;
        }
        Ok(())
    }

    /// The reports once every cell has run (what [`McPaths::finish`] prints): the noiseless
    /// run of each node count and the cells; `system` labels them.
    pub(crate) fn reports(self, system: &str) -> Result<(Vec<RunReport>, Vec<CellPaths>)> {
        let mut st = self.state.into_inner().expect("no panics");
        // A noiseless baseline may run alongside the noisy repetitions; the report follows the
        // sweep's order.
        let nodes = &self.req.inputs.nodes;
        let modes = &self.modes;
        st.order.sort_by_key(|&(ranks, mode)| {
            (
                nodes.iter().position(|&n| n == ranks),
                modes.iter().position(|&m| m == mode),
            )
        });
        let x = &self.req.settings.explain;
        if x.timeline.is_some() && !st.timeline_written {
            bail!(
                "--timeline-rep {}: that repetition did not run (the cell ran fewer; see --reps)",
                x.timeline_rep
            );
        }
        if !x.wants_path() {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut cells = Vec::new();
        let mut runs = Vec::new();
        let mut seen = Vec::new();
        for &(ranks, mode) in &st.order {
            let Some((base, report)) = st.baselines.get(&ranks) else {
                continue;
            };
            if !seen.contains(&ranks) {
                seen.push(ranks);
                runs.push(RunReport {
                    system: Some(system.to_string()),
                    ..report.clone()
                });
            }
            let reps = &st.reps[&(ranks, mode)];
            // The noiseless cell's only sample is the baseline itself.
            let reps: Vec<PathSummary> = if mode == NoiseMode::None {
                vec![*base]
            } else {
                reps.clone()
            };
            let mut c = CellPaths::new(
                self.workload.clone(),
                system.to_string(),
                ranks as u64,
                mode.as_str(),
                *base,
                &reps,
            );
            c.tolerance = report.tolerance.clone();
            // The noiseless cell is listed when the sweep asked for mode none.
            if mode != NoiseMode::None || self.req.settings.noise_modes.iter().any(|m| m == "none")
            {
                cells.push(c);
            }
        }
        Ok((runs, cells))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_windows() {
        assert_eq!(
            parse_ranks("0-15,100, 3-4,16"),
            Ok(vec![(0, 16), (100, 100)])
        );
        assert!(parse_ranks("5-2").is_err());
        assert!(parse_ranks("x").is_err());
        assert_eq!(parse_window("1ms..2ms"), Ok((1_000_000_000, 2_000_000_000)));
        assert_eq!(parse_window("..2us"), Ok((0, 2_000_000)));
        assert_eq!(parse_window("3us.."), Ok((3_000_000, Time::MAX)));
        assert!(parse_window("2us..1us").is_err());
        assert!(parse_window("2us").is_err());
    }
}
