//! The simulator as library calls: a sweep, its repetitions, `validate`, `profile show` and
//! critical paths, each from a request to the results the command line renders, for front ends
//! other than the CLI (the Python module `loggops_sim`, `crates/python`).
//!
//! A request is turned into the command line that makes the same result
//! ([`SweepRequest::command_line`]) and goes through the CLI's own flag parser, checks and
//! resolution into one [`crate::request::Request`], then through the same plan and execution as `loggops-sim` ([`crate::mc`]); only the writing of
//! outputs is left to the caller. So the numbers are the CLI's for the same flags, a refused
//! flag or a bad file gives the CLI's message (file, line and column where the CLI names them:
//! [`Error`]), and the result records the CLI command that reproduces it
//! (`RunResult::command`).
//!
//! The simulator's Ctrl-C state is one per process (`mc::HOOK`), so calls run one at a time
//! (a second caller waits). A front end that catches Ctrl-C itself passes a poll to
//! [`Runner::stop_when`]: the call then runs on a worker thread while the poll is asked every
//! [`Runner::POLL`] on the calling thread; once it says stop, no new repetition starts, the
//! ones in progress finish and the call returns what finished (a sweep's result is marked
//! interrupted, as the CLI's after Ctrl-C).

pub(crate) mod profile;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex, PoisonError};
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};
use loggops_report::{Comparison, RunResult, Status};

use crate::cli::{self, Cli};
use crate::request::Request;

/// An error as the command line reports it: the message it prints after `error: ` (or the whole
/// line when it is located, `file:line:col: error: ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
    interrupted: bool,
}

impl Error {
    /// The CLI's message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// True when the call stopped because the [`Runner`]'s poll asked it to.
    pub fn interrupted(&self) -> bool {
        self.interrupted
    }

    fn from_anyhow(err: &anyhow::Error) -> Error {
        Error {
            message: crate::chain_message(err),
            interrupted: crate::mc::interrupted(),
        }
    }

    /// clap's message without its `error: ` prefix and the usage and `--help` lines after it.
    fn from_clap(err: &clap::Error) -> Error {
        let text = err.render().to_string();
        let first = text.split("\n\n").next().unwrap_or(&text).trim();
        Error {
            message: first.strip_prefix("error: ").unwrap_or(first).to_string(),
            interrupted: false,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<anyhow::Error> for Error {
    fn from(err: anyhow::Error) -> Error {
        Error::from_anyhow(&err)
    }
}

/// `-L`, `-o`, `-g`, `-G`, `-O`, `-S`: LogGOPS parameters with units, as the CLI takes them
/// (`"2.5us"`, `"0.1ns"` per byte, `"64KiB"`), replacing the profile's or the defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogGops {
    pub l: Option<String>,
    pub o: Option<String>,
    pub g: Option<String>,
    pub big_g: Option<String>,
    pub big_o: Option<String>,
    pub s: Option<String>,
}

impl LogGops {
    fn push(&self, a: &mut Argv) {
        for (flag, v) in [
            ("-L", &self.l),
            ("-o", &self.o),
            ("-g", &self.g),
            ("-G", &self.big_g),
            ("-O", &self.big_o),
            ("-S", &self.s),
        ] {
            if let Some(v) = v {
                a.0.push(flag.into());
                // Every short flag of the CLI takes values that start with `-`.
                a.0.push(v.into());
            }
        }
    }
}

/// A sweep: the flags of `loggops-sim --goal ...` that decide a result, as values. `None` and
/// empty lists are flags left out (the CLI's defaults); a flag that does not apply (`seed`
/// without `noise`) is refused with the CLI's message. Values with units are given as the CLI
/// takes them (`"2.5us"`, `"64KiB"`; a bare number is ns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepRequest {
    /// `--goal`: schedules (files, globs or directories).
    pub goal: Vec<PathBuf>,
    /// `--noise`: noise profiles (files, globs or directories).
    pub noise: Vec<PathBuf>,
    /// `--nodes`.
    pub nodes: Vec<u32>,
    /// `--noise-mode`: `none`, `os`, `net`, `os+net`.
    pub noise_mode: Vec<String>,
    /// `--reps`: a count or `auto`.
    pub reps: Option<String>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--model`: `queued` or `loggopsim`.
    pub model: Option<String>,
    /// `--threads` (results do not depend on it).
    pub threads: Option<usize>,
    /// `--param NAME=VALUE` of a rank-parametric schedule.
    pub params: Vec<(String, String)>,
    pub loggops: LogGops,
    /// `--tick`.
    pub tick: Option<String>,
    /// `--order`: `stable` or `libstdcxx`.
    pub order: Option<String>,
    /// `--rndv-3l`.
    pub rndv_3l: Option<bool>,
    /// `--absolute-latency`.
    pub absolute_latency: bool,
    /// `--cosched`.
    pub cosched: bool,
    /// `--nodes-per-switch`.
    pub nodes_per_switch: Option<u32>,
    /// `--force-large`.
    pub force_large: bool,
    /// Show the CLI's progress bar (on a terminal only); `-q` when false.
    pub progress: bool,
}

impl SweepRequest {
    /// A sweep of one schedule with every other flag at its default.
    pub fn new(goal: impl Into<PathBuf>) -> SweepRequest {
        SweepRequest {
            goal: vec![goal.into()],
            ..SweepRequest::default()
        }
    }

    /// The command line that makes this sweep (`loggops-sim` first), each value in one word
    /// (`--goal=FILE`, `-L 2.5us`).
    pub fn command_line(&self) -> Vec<OsString> {
        let mut a = Argv::new(&[]);
        for p in &self.goal {
            a.long("goal", p);
        }
        for p in &self.noise {
            a.long("noise", p);
        }
        a.list("nodes", &self.nodes);
        a.list("noise-mode", &self.noise_mode);
        a.opt("reps", &self.reps);
        a.opt("seed", &self.seed);
        a.opt("model", &self.model);
        a.opt("threads", &self.threads);
        for (k, v) in &self.params {
            a.long("param", format!("{k}={v}"));
        }
        self.loggops.push(&mut a);
        a.opt("tick", &self.tick);
        a.opt("order", &self.order);
        a.opt("rndv-3l", &self.rndv_3l);
        a.switch("absolute-latency", self.absolute_latency);
        a.switch("cosched", self.cosched);
        a.opt("nodes-per-switch", &self.nodes_per_switch);
        a.switch("force-large", self.force_large);
        a.switch("quiet", !self.progress);
        a.0
    }

    /// The parsed and checked flags; `extra` are appended (the critical-path flags).
    fn request(&self, extra: &[&str]) -> Result<Request, Error> {
        let mut argv = self.command_line();
        argv.extend(extra.iter().map(OsString::from));
        let cli = parse(&argv, |c| {
            // Paths as given, even one with a comma (clap splits values at commas).
            c.run.goal.clone_from(&self.goal);
            c.run.noise.clone_from(&self.noise);
        })?;
        if cli.command.is_some() {
            unreachable!("a sweep's command line names no subcommand");
        }
        Ok(Request::resolve(&cli.run)?)
    }
}

/// A finished sweep: the [`RunResult`] every output of the CLI is drawn from.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub result: RunResult,
}

impl Sweep {
    /// `--format csv`: one row per cell, the columns of `loggops_report::CELL_COLUMNS` and
    /// `RUN_COLUMNS`.
    pub fn cells_csv(&self) -> String {
        loggops_report::run_to_csv_string(&self.result)
    }

    /// `--samples FILE`: one row per repetition, `loggops_report::SAMPLE_COLUMNS`.
    pub fn samples_csv(&self) -> String {
        loggops_report::run_samples_to_csv_string(&self.result)
    }

    /// `--format json`: the whole result.
    pub fn json(&self) -> String {
        loggops_report::run_to_json_string(&self.result)
    }

    /// False when the runner's poll stopped the sweep (the result holds what finished).
    pub fn complete(&self) -> bool {
        self.result.status == Status::Complete
    }
}

/// A sweep whose runs were recorded for their critical paths (`--critical-path`).
#[derive(Clone, Debug)]
pub struct Explained {
    pub sweep: Sweep,
    /// What `--critical-path=FILE --format csv` writes: without noise one row per run (the
    /// parts of its critical path in columns), with noise one row per cell and part.
    pub csv: String,
}

/// `loggops-sim validate`: the flags as values (see [`SweepRequest`] for the conventions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidateRequest {
    /// Measured CSV files or directories of them.
    pub measured: Vec<PathBuf>,
    /// `--noise`: the measured system's profile.
    pub noise: PathBuf,
    pub loggops: LogGops,
    /// `--noise-mode`.
    pub noise_mode: Option<String>,
    /// `--measure`: `barrier` or `collective`.
    pub measure: Option<String>,
    /// `--call-overhead`.
    pub call_overhead: Option<String>,
    /// `--clock-resolution`.
    pub clock_resolution: Option<String>,
    /// `--clock-read`.
    pub clock_read: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--mpi-progress`: `async` or `polled`.
    pub mpi_progress: Option<String>,
    /// `--reps`.
    pub reps: Option<u32>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--threads`.
    pub threads: Option<usize>,
    /// Show the progress bar (on a terminal only).
    pub progress: bool,
}

impl ValidateRequest {
    /// The command line that makes this comparison.
    pub fn command_line(&self) -> Vec<OsString> {
        let mut a = Argv::new(&["validate"]);
        a.long("noise", &self.noise);
        self.loggops.push(&mut a);
        a.opt("noise-mode", &self.noise_mode);
        a.opt("measure", &self.measure);
        a.opt("call-overhead", &self.call_overhead);
        a.opt("clock-resolution", &self.clock_resolution);
        a.opt("clock-read", &self.clock_read);
        a.opt("model", &self.model);
        a.opt("mpi-progress", &self.mpi_progress);
        a.opt("reps", &self.reps);
        a.opt("seed", &self.seed);
        a.opt("threads", &self.threads);
        a.switch("quiet", !self.progress);
        a.0.push("--".into());
        a.0.extend(self.measured.iter().map(|p| p.as_os_str().to_owned()));
        a.0
    }
}

/// What `validate` compared, one row per measured benchmark.
#[derive(Clone, Debug)]
pub struct Validation {
    pub rows: Vec<Comparison>,
    /// How the comparison was made: `validate --format json`'s `settings` (with
    /// `mpi_progress_evidence`).
    pub settings: serde_json::Value,
    /// False when the [`Runner`]'s poll stopped it: `rows` then holds the benchmarks finished
    /// before, and the others were not simulated.
    pub complete: bool,
}

impl Validation {
    /// `validate --format csv`.
    pub fn csv(&self) -> String {
        loggops_report::validation_csv(&self.rows)
    }
}

/// Runs calls one at a time, optionally stopping them when a poll says so.
pub struct Runner<'a> {
    stop: Option<&'a mut (dyn FnMut() -> bool + 'a)>,
}

impl Default for Runner<'_> {
    fn default() -> Self {
        Runner::new()
    }
}

/// The simulator's Ctrl-C state is per process: one call at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

impl<'a> Runner<'a> {
    /// How often the poll of [`Runner::stop_when`] is asked.
    pub const POLL: Duration = Duration::from_millis(50);

    /// Calls run on the calling thread and are never stopped.
    pub fn new() -> Runner<'a> {
        Runner { stop: None }
    }

    /// Calls run on a worker thread while `stop` is asked every [`Runner::POLL`] on the
    /// calling thread; once it returns true, the call is stopped as Ctrl-C stops the CLI.
    pub fn stop_when(stop: &'a mut (dyn FnMut() -> bool + 'a)) -> Runner<'a> {
        Runner { stop: Some(stop) }
    }

    /// Runs `work` (see the type's docs).
    fn run<T: Send>(&mut self, work: impl FnOnce() -> T + Send) -> T {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        crate::mc::clear_interrupt();
        let Some(stop) = self.stop.as_mut() else {
            return work();
        };
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel::<()>();
            let worker = std::thread::Builder::new()
                .name("loggops-sim".into())
                // The main thread's usual stack: the readers' nesting limits assume it.
                .stack_size(8 << 20)
                .spawn_scoped(s, move || {
                    let r = work();
                    let _ = tx.send(());
                    r
                })
                .expect("cannot start a thread");
            let mut asked = false;
            // Ends when the worker sends, or drops the sender by panicking.
            while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(Self::POLL) {
                if !asked && stop() {
                    asked = true;
                    crate::mc::request_interrupt();
                }
            }
            worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// A sweep (`loggops-sim --goal ...`).
    pub fn sweep(&mut self, req: &SweepRequest) -> Result<Sweep, Error> {
        let request = req.request(&[])?;
        let command = command_text(&req.command_line());
        self.run(|| {
            let swept = crate::mc::run(&request, crate::mc::Hashing::Always)?
                .ok_or_else(|| anyhow::anyhow!("--dry-run runs nothing"))?;
            if let Some(text) = swept.stalled {
                return Err(stalled(&text));
            }
            let mut result = swept.result;
            result.command = command;
            Ok(Sweep { result })
        })
    }

    /// A sweep with its critical paths (`--critical-path`, and `--sensitivity` when asked).
    pub fn critical_path(
        &mut self,
        req: &SweepRequest,
        sensitivity: bool,
    ) -> Result<Explained, Error> {
        let extra: &[&str] = if sensitivity {
            &["--critical-path", "--sensitivity"]
        } else {
            &["--critical-path"]
        };
        let request = req.request(extra)?;
        let command = command_text(&req.command_line());
        self.run(|| {
            let swept = crate::mc::run(&request, crate::mc::Hashing::Always)?
                .ok_or_else(|| anyhow::anyhow!("--dry-run runs nothing"))?;
            if let Some(text) = swept.stalled {
                return Err(stalled(&text));
            }
            let runs = swept
                .noiseless_explain
                .map(crate::explain::Noiseless::reports)
                .unwrap_or_default();
            let (mc_runs, cells) = match swept.mc_explain {
                // The report of an interrupted sweep would mix finished and missing cells.
                Some(x) if swept.result.status == Status::Complete => x.reports(&swept.system)?,
                _ => (Vec::new(), Vec::new()),
            };
            let runs = if runs.is_empty() { mc_runs } else { runs };
            let mut result = swept.result;
            result.command = command;
            Ok(Explained {
                csv: crate::explain::csv(&runs, &cells),
                sweep: Sweep { result },
            })
        })
    }

    /// `loggops-sim validate`.
    pub fn validate(&mut self, req: &ValidateRequest) -> Result<Validation, Error> {
        let cli = parse(&req.command_line(), |c| {
            if let Some(cli::Command::Validate(v)) = &mut c.command {
                v.measured.clone_from(&req.measured);
            }
        })?;
        let Some(cli::Command::Validate(args)) = cli.command else {
            unreachable!("the command line names `validate`");
        };
        self.run(|| {
            let c = crate::validate::compare(&args)?;
            Ok(Validation {
                rows: c.rows,
                settings: c.settings,
                complete: c.not_reached.is_none(),
            })
        })
    }
}

/// A sweep on the calling thread ([`Runner::sweep`]).
pub fn sweep(req: &SweepRequest) -> Result<Sweep, Error> {
    Runner::new().sweep(req)
}

/// A sweep with its critical paths on the calling thread ([`Runner::critical_path`]).
pub fn critical_path(req: &SweepRequest, sensitivity: bool) -> Result<Explained, Error> {
    Runner::new().critical_path(req, sensitivity)
}

/// `loggops-sim validate` on the calling thread ([`Runner::validate`]).
pub fn validate(req: &ValidateRequest) -> Result<Validation, Error> {
    Runner::new().validate(req)
}

/// What `loggops-sim profile show FILE` prints, as a JSON object (keys in
/// [`profile::describe`]).
pub fn profile(path: &Path) -> Result<serde_json::Value, Error> {
    let (p, sha256, size) = crate::profile_show::load(path)?;
    Ok(profile::describe(
        &p,
        &path.display().to_string(),
        &sha256,
        size,
    ))
}

/// A command line, parsed and checked as `main` does; `fix` edits the parsed flags first.
fn parse(argv: &[OsString], fix: impl FnOnce(&mut Cli)) -> Result<Cli, Error> {
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .map_err(|e| Error::from_clap(&e))?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| Error::from_clap(&e))?;
    fix(&mut cli);
    crate::checks::flags(&cli, &matches)?;
    Ok(cli)
}

/// A schedule that did not complete (with or without noise): the CLI's description (its exit
/// status 1).
fn stalled(text: &str) -> Error {
    let t = text.trim_end();
    Error {
        message: t.strip_prefix("error: ").unwrap_or(t).to_string(),
        interrupted: false,
    }
}

/// The recorded command of a result (`RunResult::command`) for an argument list.
fn command_text(argv: &[OsString]) -> String {
    crate::inputs::result_command(argv.iter().map(|a| a.to_string_lossy().into_owned()))
}

/// A command line being built.
struct Argv(Vec<OsString>);

impl Argv {
    fn new(sub: &[&str]) -> Argv {
        let mut v: Vec<OsString> = vec!["loggops-sim".into()];
        v.extend(sub.iter().map(OsString::from));
        Argv(v)
    }

    /// `--name=value` (one word, so a value may start with `-`).
    fn long(&mut self, name: &str, value: impl AsRef<std::ffi::OsStr>) {
        let mut w = OsString::from(format!("--{name}="));
        w.push(value.as_ref());
        self.0.push(w);
    }

    fn opt(&mut self, name: &str, value: &Option<impl ToString>) {
        if let Some(v) = value {
            self.long(name, v.to_string());
        }
    }

    fn list(&mut self, name: &str, values: &[impl ToString]) {
        if !values.is_empty() {
            let v: Vec<String> = values.iter().map(ToString::to_string).collect();
            self.long(name, v.join(","));
        }
    }

    fn switch(&mut self, name: &str, on: bool) {
        if on {
            self.0.push(format!("--{name}").into());
        }
    }
}
