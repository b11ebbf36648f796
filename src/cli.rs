//! Command-line flags (stage one: raw flags as clap parses them). `request.rs` turns a run's
//! flags into one validated request; nothing here does real work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const ABOUT: &str = "How much slower, and how much more expensive, does a parallel job get at \
1K-16K nodes because of network and OS noise? loggops-sim simulates a GOAL schedule under the \
LogGOPS model (exactly like LogGOPSim when noise is off) and, with a noise profile measured on two \
nodes, runs Monte-Carlo repetitions to give runtime and cost distributions.";

const AFTER_HELP: &str = "\
Examples:
  loggops-sim --goal goal/ring_512MiB.goal --nodes 1024 --noise calibration/aws.h5
      512 MiB ring allreduce on 1024 nodes with AWS noise: runtime and cost distribution, and
      the verdict under the table: how much slower, the extra dollars per run, and why (the
      critical paths of the first --why-reps repetitions).
  loggops-sim --goal goal/ring_512MiB.goal --nodes 16384 --noise calibration/aws.h5 --dry-run
      What that run would take at 16K nodes (cells, engines, CPU time, memory); runs nothing.
  loggops-sim --goal goal/ring_512MiB.goal --nodes 64,1024 --noise calibration/ \
              --job-runs 1000 --report report.html
      Every shipped system ranked by time and cost, the extra cost of noise per job of 1000
      runs, and why, in one HTML page.
  loggops-sim --goal goal/dissemination_16B.goal --nodes 4,64,1024,16384 \\
              --noise calibration/alps.h5 --noise-mode none,os,net,os+net --reps 1000
      The paper's Fig. 14 sweep for Alps, one tidy table.
  loggops-sim --goal schedule.goal -L 2.5us -o 1.5us -g 1us -G 6ns -S 64KiB
      One noiseless run of an explicit GOAL file with explicit LogGOPS parameters.
  loggops-sim --compat loggopsim --goal case.bin -L 2500 -o 1500
      LogGOPSim's exact stdout (integer ticks), for conformance checks.
  loggops-sim gen allreduce_ring --nodes 16 --size 16MiB -o ring.goal
      Write Schedgen-compatible explicit GOAL text.
  loggops-sim --goal goal/dissemination_16B.goal --nodes 4,64,1024 --noise calibration/ \\
              --noise-mode none,os+net --plot runtime.svg --report report.html
      Every shipped system side by side: one table, boxplots, and a one-file HTML report.
  loggops-sim profile show calibration/aws.h5 --plot aws.png
      What a noise profile holds: parameters, quantiles, OS noise, provenance.
  loggops-sim --goal app.goal --noise calibration/aws.h5
      A traced application (liballprof + Schedgen, calc in ns) under AWS noise.

Units: times take ps, ns, us, ms, s (a bare number is ns); per-byte costs take the same units
(meaning per byte: -G 0.1ns is 0.1 ns/B); sizes take B, KiB, MiB, GiB (kB, MB, GB are powers
of 1000). Without --noise, the LogGOPS parameters default to LogGOPSim's defaults read as ns:
L=2.5us o=1.5us g=1us G=6ns/B O=0 S=65535B.

Ticks: a plain number in a GOAL file (text `calc 1500`, every calc of binary GOAL) is a number
of ticks, 1 ns each unless --tick says otherwise, so that LogGOPSim's files and Schedgen's
traces mean what they meant there. A duration with a unit (`calc 2.5us`) means what it says;
rank-parametric schedules always have units. `gen` writes calc in ticks of its --tick.

Verdict: with --noise the table is followed by one line per workload and system at the
largest node count (noise os+net, or the last noisy mode): the slowdown with its 95% CI, the
extra cost of noise per run (and per job with --job-runs or --job-node-hours), the part of
the extra time the critical paths spend most on, and with several systems their ranks. JSON
has it under `verdicts`, CSV in the columns from `inflation_mean_ci95_lo` to `verdict`.

Outputs: the table (default) ends with the settings: seed, engine model, tick, repetition
rule, every system's profile path, SHA-256 and parameters near and far, every workload's file
(and SHA-256 for a rank-parametric one: an explicit file, which can be GBs, is hashed only for
JSON, CSV, --report and --shard), the tool and results-schema version. --format json holds the
same plus every
repetition's time (integer ps); --format csv has one row per cell with the settings in its
last columns (the same columns with and without --noise). Dollar amounts in the table are
rounded for reading; JSON and CSV keep the exact values. Ctrl-C during a run stops it after the
repetitions in progress: what finished is written to every output, marked partial, and the
exit status is 130.";

/// The help's closing text: examples, units, outputs and the meaning of every table column.
fn after_help() -> String {
    format!(
        "{AFTER_HELP}\n\nColumns of the table:\n{}",
        loggops_report::guide::table_columns_text()
    )
}

#[derive(Parser, Debug)]
#[command(name = "loggops-sim", version, about = ABOUT, after_help = after_help())]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Write a generated collective (or a rank-parametric schedule) as explicit GOAL text that
    /// LogGOPSim's txt2bin accepts.
    Gen(GenArgs),
    /// Turn Netgauge captures into an HDF5 noise profile, with a fit report.
    Calibrate(Box<CalibrateArgs>),
    /// Look into noise profiles (`profile show FILE.h5`).
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Put the shards of a run (the JSON outputs of --shard 1/N ... N/N) together into the
    /// whole run's result and write it like a run does (table, JSON, CSV, samples, plots,
    /// report). Refuses shards of different runs, and missing or repeated shards.
    Merge(MergeArgs),
    /// Compare the model with measured collectives: simulate the schedule each measured file
    /// names, with a noise profile, and print measured vs simulated mean, p50, p95 and p99.
    Validate(Box<ValidateArgs>),
    /// Turn traces of an application at two or more small rank counts into a rank-parametric
    /// schedule for any rank count its process grid allows (or replicate one trace, like
    /// Schedgen's --traces-extr).
    Extrapolate(Box<crate::extrapolate::ExtrapolateArgs>),
}

#[derive(Args, Debug)]
#[command(
    after_help = "Example (four shards, e.g. the tasks of a Slurm job array):
  for i in 1 2 3 4; do
    loggops-sim --goal goal/dissemination_16B.goal --nodes 64,1024 --noise calibration/ \\
      --reps 1000 --shard $i/4 --output shard-$i.json
  done
  loggops-sim merge shard-*.json --format csv --output result.csv --report report.html"
)]
pub struct MergeArgs {
    /// The shard files (JSON, any order).
    #[arg(value_name = "SHARD.json", required = true)]
    pub shards: Vec<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Fewer notes on stderr (a run's -q, so that one script can pass it to both): the note
    /// that some shards were interrupted is left out (the result still says so, `status`);
    /// where a partial result went is still said.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Where and how a result is written (a run's flags, shared with `merge`).
#[derive(Args, Debug, Default)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: FormatArg,
    /// Write the result to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write one row per repetition to FILE (CSV, atomically), with the columns workload,
    /// system, nodes, noise_mode, rep (0-based repetition index), time_ps (simulated time),
    /// noiseless_ps, run_ps (the time one run is billed for), on_demand_usd, committed_usd
    /// (empty without a price), cost_increase_pct (over noiseless) and partial (true when the
    /// run was interrupted before this cell finished).
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// Draw plots into FILE (.svg or .png; repeatable): `[KIND=]FILE` with KIND one of runtime
    /// (boxplots of the time per node count; hue: noise mode, or system when one mode runs on
    /// several systems), cost (cost increase over noiseless against nodes, the paper's Fig.
    /// 17), ecdf (distribution at the largest node count) or all (the default: all three).
    #[arg(long, value_name = "[KIND=]FILE", value_parser = parse_plot)]
    pub plot: Vec<(loggops_report::plot::PlotKind, PathBuf)>,
    /// Write a one-file HTML report to FILE: the command, settings, systems with their
    /// profiles' hashes and provenance, the table, the plots and a guide to the columns. It
    /// loads nothing from elsewhere (opens offline).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    /// Print what a profile holds: parameters near and far, quantiles of each distribution,
    /// the OS-noise summary, prices, provenance and the file's SHA-256; --plot draws the
    /// distributions.
    Show(ProfileShowArgs),
    /// Put profiles of one system captured on several days into one: each repetition of a
    /// run then runs on one of the days (chosen uniformly), so predictions show the spread
    /// between days. The profiles share one system, one calibration and one MPI progress;
    /// the first gives the prices and the placements' layout.
    Combine(ProfileCombineArgs),
}

#[derive(Args, Debug)]
#[command(after_help = "Example (two Piz Daint capture days):
  loggops-sim calibrate --system daint --day 2022-03-30 ... -o daint-0330.h5
  loggops-sim calibrate --system daint --day 2022-05-13 ... -o daint-0513.h5
  loggops-sim profile combine daint-0330.h5 daint-0513.h5 -o daint-days.h5
  loggops-sim validate MEASURED_DIR --noise daint-days.h5")]
pub struct ProfileCombineArgs {
    /// Profiles of the same system, one per capture day (their own days too, if they hold
    /// several).
    #[arg(value_name = "FILE.h5", required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
    /// The combined profile (HDF5, written atomically).
    #[arg(short = 'o', long = "output", value_name = "FILE.h5")]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct ProfileShowArgs {
    /// The profile(s) (HDF5), e.g. calibration/aws.h5 or calibration/*.h5: each shown in turn
    /// (JSON: one object, or an array of them for several files).
    #[arg(value_name = "FILE.h5", required = true, num_args = 1..)]
    pub file: Vec<PathBuf>,
    /// Also draw the distributions (latency, per-byte time, OS detours: each CDF beside its
    /// tail, 1 - CDF on a log scale) into FILE (.svg or .png; repeatable; one profile only).
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub plot: Vec<PathBuf>,
    /// Output format: the text for people, or JSON with every number the text shows (times in
    /// ps, per-byte costs in ps/B, sizes in bytes, prices in USD per node-hour).
    #[arg(long, value_enum, default_value = "human")]
    pub format: ProfileFormat,
    /// Write the output to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `profile show --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum ProfileFormat {
    /// Text for people.
    #[default]
    Human,
    /// JSON.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum OrderArg {
    /// Freed ops in program order within each type (LogGOPSim with std::stable_sort).
    #[default]
    Stable,
    /// LogGOPSim's exact unstable std::sort permutation (reproduces its deadlocks).
    Libstdcxx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    /// LogGOPSim's rules, to the tick: a send waits until its CPU and NIC are both free, and
    /// an arriving message holds the receiver's CPU for o + (s-1)·G and its NIC for
    /// g + (s-1)·G in arrival order. A message that arrives early because its link is fast
    /// can then delay a more urgent one, so with near and far links a run can be slower than
    /// with every link slow. What the paper's simulator did (use it to reproduce its cells).
    Loggopsim,
    /// The same LogGOPS costs, shared so that a faster link or a smaller parameter never makes
    /// a run slower: sends start in program order and queue at the NIC (the CPU is free after
    /// o), receiving does not hold the CPU or NIC from other work, a rendezvous send completes
    /// when its data is received. Answers sit between all-near and all-far placement.
    Queued,
}

impl From<ModelArg> for loggops_engine::Model {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Loggopsim => loggops_engine::Model::LogGOPSim,
            ModelArg::Queued => loggops_engine::Model::Queued,
        }
    }
}

/// `--mpi-progress`: whether a message above the eager threshold S advances while its sender
/// or receiver computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MpiProgressArg {
    /// It does: an MPI with asynchronous progress (a progress thread, or RDMA that completes
    /// without the CPU). LogGOPSim's behaviour, and what a profile without `mpi_progress`
    /// means.
    Async,
    /// It advances only while both ranks are inside MPI: the handshake waits for the end of a
    /// calc either rank is executing, and the receive completes only when the sender is
    /// outside a calc after its send completed (Cray MPICH's default; measured on Piz Daint).
    /// Noisy runs use the global engine.
    Polled,
}

/// `--engine`: how the repetitions of a noisy run are simulated (every engine gives the same
/// answer to the picosecond).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// The windowed engine for now: the batched one costs more CPU than the windowed one on
    /// the runs measured (BENCHMARKS.md), so it runs only on request.
    #[default]
    Auto,
    /// Up to 16 repetitions walked at once through the schedule (queued model, one CPU and
    /// NIC per rank, no irequires or wildcard receives, asynchronous progress); a repetition
    /// whose order of events may differ from the walk's runs alone, and after a walk that
    /// gives up more than half, the cell's next repetitions do. An error on a run it does not
    /// take.
    Batched,
    /// One repetition at a time, its ranks in time windows (parallel when there are fewer
    /// repetitions than threads); the global engine where windows do not apply.
    Windowed,
    /// One repetition at a time through one event queue, exactly as LogGOPSim orders events.
    Global,
}

/// `calibrate --bandwidth-levels`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FitLevelsArg {
    /// When the runs differ by more than their samples explain.
    Auto,
    /// Never: one per-byte distribution of all samples.
    Off,
}

/// `calibrate --latency-episodes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EpisodesArg {
    /// Pool every run of the latency capture.
    Keep,
    /// Leave the runs that hold the capture's tail out of the profile's latencies.
    Separate,
    /// The other runs make the profile, the episodes' runs a weighted state of their own.
    State,
}

impl From<EpisodesArg> for loggops_calibrate::EpisodeMode {
    fn from(a: EpisodesArg) -> Self {
        match a {
            EpisodesArg::Keep => Self::Keep,
            EpisodesArg::Separate => Self::Separate,
            EpisodesArg::State => Self::State,
        }
    }
}

/// `--bandwidth-levels`: who shares the bandwidth level of a profile fitted with levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LevelsArg {
    /// One level per repetition for every message: the network's state during the run (the
    /// capture's runs each kept their own bandwidth).
    Run,
    /// One level per repetition and pair of ranks: each connection its own state.
    Link,
    /// No levels: every bandwidth block draws from the within-run distribution alone.
    Off,
}

impl From<LevelsArg> for loggops_noise::LevelScope {
    fn from(m: LevelsArg) -> Self {
        match m {
            LevelsArg::Run => loggops_noise::LevelScope::Run,
            LevelsArg::Link => loggops_noise::LevelScope::Link,
            LevelsArg::Off => loggops_noise::LevelScope::Off,
        }
    }
}

impl From<MpiProgressArg> for loggops_engine::MpiProgress {
    fn from(m: MpiProgressArg) -> Self {
        match m {
            MpiProgressArg::Async => loggops_engine::MpiProgress::Async,
            MpiProgressArg::Polled => loggops_engine::MpiProgress::Polled,
        }
    }
}

impl From<MpiProgressArg> for loggops_profile::MpiProgress {
    fn from(m: MpiProgressArg) -> Self {
        match m {
            MpiProgressArg::Async => loggops_profile::MpiProgress::Async,
            MpiProgressArg::Polled => loggops_profile::MpiProgress::Polled,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompatArg {
    /// Integer ticks in and LogGOPSim's stdout out (minus its PERFORMANCE line).
    Loggopsim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum FormatArg {
    #[default]
    Human,
    Json,
    Csv,
}

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Schedule(s) to simulate: explicit GOAL text, LogGOPSim binary GOAL, or a rank-parametric
    /// schedule (see goal/README.md). Several run as one sweep (a `workload` column): a comma
    /// list, the flag repeated, a quoted glob ('goal/paper_*.goal') or a directory (every
    /// *.goal and *.bin in it, sorted).
    #[arg(long, value_name = "FILE", value_delimiter = ',')]
    pub goal: Vec<PathBuf>,
    /// Rank counts: binds a rank-parametric schedule; must equal num_ranks of an explicit file.
    /// A comma list sweeps (4,64,1024,16384).
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', allow_hyphen_values = true,
          value_parser = rank_count)]
    pub nodes: Vec<u32>,
    /// How long one tick is: plain numbers in GOAL files (text `calc 1500`, every calc of
    /// binary GOAL) are ticks. LogGOPSim has no time unit (calc, L, o and g are all ticks);
    /// its users, Schedgen's trace conversion (--timemult 1000 per us) and this command line's
    /// bare numbers mean ns, hence the default. The paper's simulator wrote ps: read its files
    /// with --tick 1ps. Needs a unit (1ns, 1ps, 10ns). Durations with a unit (`calc 2.5us`)
    /// are not affected. Not with a rank-parametric schedule (every time in it has a unit) nor
    /// with --compat loggopsim, which reads every number as a tick as it is [default: 1ns].
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub tick: Option<String>,
    /// Latency L [default: 2.5us, or the profile's].
    #[arg(short = 'L', value_name = "TIME", allow_hyphen_values = true)]
    pub l: Option<String>,
    /// CPU overhead per message o [default: 1.5us].
    #[arg(short = 'o', value_name = "TIME", allow_hyphen_values = true)]
    pub o: Option<String>,
    /// NIC gap per message g [default: 1us].
    #[arg(short = 'g', value_name = "TIME", allow_hyphen_values = true)]
    pub g: Option<String>,
    /// Gap per byte G, e.g. 0.1ns (per byte) [default: 6ns].
    #[arg(short = 'G', value_name = "TIME/B", allow_hyphen_values = true)]
    pub big_g: Option<String>,
    /// CPU overhead per byte O [default: 0].
    #[arg(short = 'O', value_name = "TIME/B", allow_hyphen_values = true)]
    pub big_o: Option<String>,
    /// Eager threshold S: larger messages use rendezvous [default: 65535B].
    #[arg(short = 'S', value_name = "SIZE", allow_hyphen_values = true)]
    pub s: Option<String>,
    /// Rendezvous messages pay 3L (request, clear-to-send, data) as in the paper's simulator
    /// [default: on with --noise, off otherwise, as in LogGOPSim].
    #[arg(long, value_name = "BOOL")]
    pub rndv_3l: Option<bool>,
    /// How a rank's CPU and NIC are shared (see the values) [default: queued with --noise,
    /// loggopsim otherwise, as LogGOPSim].
    #[arg(long, value_enum)]
    pub model: Option<ModelArg>,
    /// Whether a message above S advances while its sender or receiver computes (see the
    /// values) [default: the profile's `mpi_progress`; async without one, as LogGOPSim].
    #[arg(long, value_enum)]
    pub mpi_progress: Option<MpiProgressArg>,
    /// How the repetitions of a noisy run are simulated (see the values; the answers are the
    /// same to the picosecond).
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineArg,
    /// Order of ops freed together.
    #[arg(long, value_enum, default_value = "stable")]
    pub order: OrderArg,
    /// Compatibility mode.
    #[arg(long, value_enum)]
    pub compat: Option<CompatArg>,
    /// Compat mode: never print per-host times (LogGOPSim's -b).
    #[arg(short = 'b', long)]
    pub batchmode: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Set a parameter of a rank-parametric schedule (e.g. --param dgemm=21us).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Noise profile(s) (HDF5), e.g. calibration/aws.h5. Its base parameters replace the
    /// defaults (explicit -L/-o/... still win, for every profile). Several systems run side by
    /// side (a `system` column): a comma list, the flag repeated, a quoted glob
    /// ('calibration/*.h5') or a directory (every *.h5 in it, sorted).
    #[arg(long, value_name = "FILE.h5", value_delimiter = ',')]
    pub noise: Vec<PathBuf>,
    /// Noise variants to run: none, os, net, os+net (comma list sweeps) [default: the noise
    /// every profile holds: os+net; net when a profile has no OS noise (calibrated without
    /// --os-noise); os when one has no network distributions; systems side by side run the same
    /// modes, and a note says what that leaves out].
    #[arg(long, value_name = "MODE[,MODE...]", value_delimiter = ',')]
    pub noise_mode: Vec<String>,
    /// Monte-Carlo repetitions per cell: a number, or `auto` (the default): 32 repetitions,
    /// doubled (64, 128, ... up to 1000, the paper's count) until the 95% confidence intervals
    /// of the mean, the median and the p95 are all within ±0.5% of the median. A quiet system
    /// stops at 32; a heavy-tailed one runs to 1000. Which repetitions run depends only on
    /// their results, never on --threads. Use a number (e.g. 1000) for stable p99s.
    #[arg(long, value_name = "N|auto", default_value = "auto", value_parser = parse_reps,
          allow_hyphen_values = true)]
    pub reps: Reps,
    /// Master seed; a repetition's result depends only on (schedule, parameters, profile, seed,
    /// repetition).
    #[arg(long, value_name = "N", default_value_t = 1, allow_hyphen_values = true,
          value_parser = seed)]
    pub seed: u64,
    /// Worker threads (results do not depend on it) [default: all cores].
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = thread_count)]
    pub threads: Option<usize>,
    /// Draw one-way latencies as the profile's samples are, in absolute time, instead of
    /// scaling each draw by L / median (the paper's convention, the default: the profile gives
    /// the shape of the noise, -L or the profile's base parameters its level). Use it with
    /// profiles that hold a system's own latency distribution, e.g. to replay the paper's noise
    /// files, and leave -L alone then: it no longer moves the latencies.
    #[arg(long)]
    pub absolute_latency: bool,
    /// All ranks replay OS noise with the same phase (co-scheduled noise).
    #[arg(long)]
    pub cosched: bool,
    /// Who shares a bandwidth level, on profiles calibrated with levels (`profile show` lists
    /// them: the per-byte time of every message is its level times its own draws) [default:
    /// run].
    #[arg(long, value_enum, value_name = "WHO")]
    pub bandwidth_levels: Option<LevelsArg>,
    /// With --noise: ranks r/N share a switch (their messages use the profile's near
    /// parameters, the others its far ones), instead of the profile's own nodes per switch.
    /// E.g. --nodes 5 --nodes-per-switch 4 puts rank 4 behind another switch.
    #[arg(long, value_name = "N", requires = "noise", value_parser = clap::value_parser!(u32).range(1..))]
    pub nodes_per_switch: Option<u32>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Run only slice I of N of the work (1 <= I <= N), e.g. as task I of a Slurm job array
    /// (examples/slurm/), and write its JSON result for `loggops-sim merge`, which puts the N
    /// slices together into exactly what the whole run writes. Every shard needs the same
    /// command apart from --shard and the output flags. With a fixed --reps N the shards split
    /// every noisy cell's repetitions (round robin); with --reps auto, the default, the
    /// stopping rule needs all of a cell's repetitions, so the shards split whole cells and
    /// more shards than cells leave some idle: use a fixed --reps to spread few cells over
    /// many tasks. --samples, --plot, --report and --format csv or human belong to the merge.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<loggops_report::Shard>,
    /// Run even when the up-front estimate says the run needs more memory than this machine
    /// has available or more than an hour per repetition (the estimate is printed).
    #[arg(long)]
    pub force_large: bool,
    /// Issue 30: --critical-path, --sensitivity, --timeline (see src/explain.rs).
    #[command(flatten)]
    pub explain: crate::explain::ExplainArgs,
    /// With --noise: attribute the critical paths of the first N repetitions of each cell the
    /// verdict speaks of (per workload and system, the noise mode with all the sweep's noise at
    /// the largest node count) and of their noiseless runs, for the verdict's "why" and the
    /// report's tables and stacked bars. Those repetitions run on the exact global engine with
    /// the attribution carried forward (same answers, a few KiB per rank, 5-16 times the CPU
    /// of a windowed repetition, more with more ranks: the 512 MiB ring's at 16K nodes took
    /// 1,550 of the 2,605 CPU seconds of its default 32 repetitions); 0 turns it off,
    /// --critical-path attributes every repetition.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = why_reps)]
    pub why_reps: u64,
    /// What one job is, for the extra cost of noise per job ($+/job-od): N runs of the
    /// workload.
    #[arg(long, value_name = "N", value_parser = job_runs, conflicts_with = "job_node_hours")]
    pub job_runs: Option<u64>,
    /// What one job is: runs worth H node-hours without noise (at each node count, H / (nodes
    /// x noiseless time) runs). The noiseless time is each system's own, so systems side by
    /// side run different numbers of runs per job (a faster system more); to compare systems
    /// on the same work, use --job-runs.
    #[arg(long, value_name = "H", value_parser = node_hours)]
    pub job_node_hours: Option<f64>,
    /// Print the plan (cells, repetitions, engines) with the estimated CPU time and peak
    /// memory, and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Issue 47: spot capacity.
    #[command(flatten)]
    pub spot: crate::spot::SpotArgs,
}

fn why_reps(s: &str) -> Result<u64, String> {
    whole(s, "repetition counts")
}

fn job_runs(s: &str) -> Result<u64, String> {
    match whole(s, "run counts")? {
        0 => Err("a job has at least one run".into()),
        n => Ok(n),
    }
}

fn node_hours(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err("node-hours cannot be negative".into());
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a positive number of node-hours (e.g. 5000)"
        )),
    }
}

fn parse_shard(s: &str) -> Result<loggops_report::Shard, String> {
    loggops_report::Shard::parse(s)
}

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Collective: dissemination, nwaydissemination, allreduce_ring, pipelinedring,
    /// allreduce_recdoub, binomialtreebcast, binarytreebcast, binomialtreereduce,
    /// linear_alltoall.
    pub pattern: Option<String>,
    /// A rank-parametric schedule to expand instead of a pattern.
    #[arg(long, value_name = "FILE", conflicts_with = "pattern")]
    pub goal: Option<PathBuf>,
    /// Number of ranks.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = rank_count)]
    pub nodes: u32,
    /// Data size per rank (e.g. 16MiB).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Segment size for pipelinedring.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub segmentsize: Option<String>,
    /// Fan-out of nwaydissemination.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = fan_out)]
    pub nway: Option<u32>,
    /// Root rank of binomialtreebcast, binomialtreereduce and pipelinedring.
    #[arg(long, value_name = "RANK", allow_hyphen_values = true, value_parser = rank)]
    pub root: Option<u32>,
    /// binomialtreebcast as the paper's Schedgen writes it: each send also requires the rank's
    /// previous send (what the measured benchmarks ran).
    #[arg(long)]
    pub chain_sends: bool,
    /// Set a parameter of a rank-parametric schedule.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Write each calc as a plain number of ticks of this length, LogGOPSim's and Schedgen's
    /// form; read the file back with the same --tick (1ns is both defaults, so `calc 18.883us`
    /// becomes `calc 18883`). A duration that is not a whole number of ticks is an error: use
    /// a finer tick (e.g. 1ps) [default: 1ns].
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub tick: Option<String>,
    /// Output file (written atomically) [default: stdout].
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Example (the small synthetic captures in calibration/example; run it from the
repository root):
  loggops-sim calibrate --system demo \\
    --latency calibration/example/lat.txt \\
    --bandwidth calibration/example/bw.txt \\
    --os-noise calibration/example/osnoise.txt \\
    --set-L 2us --set-o 1us --set-g 1us --set-G 0.1ns \\
    --set-S 64KiB -o demo.h5
calibration/README.md has the commands that made the shipped profiles from
the paper's captures (with --params-table and --prices-table).

Base parameters come, per parameter, from the --set-* flags (e.g. --set-L
28us), then the table row, then the LogGP fit. A 'Different Racks' row uses
the 'Same Rack' row of the same system for near messages and the 'Different
Racks' row for messages across switches (as the paper's simulator did)."
)]
pub struct CalibrateArgs {
    /// Short system name stored in the profile (e.g. aws).
    #[arg(long)]
    pub system: String,
    /// Human description of the system.
    #[arg(long, default_value = "")]
    pub description: String,
    /// 1-byte ping-pong capture (Netgauge per-sample file, plain or .xz), same switch.
    #[arg(long, value_name = "FILE")]
    pub latency: PathBuf,
    /// Bandwidth-saturating ping-pong capture, same switch.
    #[arg(long, value_name = "FILE")]
    pub bandwidth: PathBuf,
    /// Selfish-detour (or FWQ/FTQ) OS-noise capture. Without it the profile has no OS noise
    /// and runs default to --noise-mode net.
    #[arg(long, value_name = "FILE")]
    pub os_noise: Option<PathBuf>,
    /// Netgauge LogGP fit (-x loggp) for base parameters (o, g, S). With the captures
    /// calibration it also gives the latency by size: what a message of 1–128 KiB takes one
    /// way beyond L and G, measured from the run's ping-pong at every size (PRTT(1,0,s)/2).
    #[arg(long, value_name = "FILE")]
    pub loggp: Option<PathBuf>,
    /// Latency capture across switches.
    #[arg(long, value_name = "FILE")]
    pub far_latency: Option<PathBuf>,
    /// Bandwidth capture across switches.
    #[arg(long, value_name = "FILE")]
    pub far_bandwidth: Option<PathBuf>,
    /// Parameter table in the format of the paper's loggp_params.csv.
    #[arg(long, value_name = "CSV")]
    pub params_table: Option<PathBuf>,
    /// Provider column of the parameter table (e.g. AWS).
    #[arg(long)]
    pub provider: Option<String>,
    /// Instance column of the parameter table (e.g. "HPC (Metal)").
    #[arg(long)]
    pub instance: Option<String>,
    /// Placement row of the parameter table.
    #[arg(long, default_value = "Different Racks")]
    pub placement: String,
    /// Latency L (e.g. 28us; a bare number is ns). Implies --calibration paper-table.
    #[arg(long = "set-L", allow_hyphen_values = true, value_name = "TIME")]
    pub l: Option<String>,
    /// CPU overhead o (e.g. 1.2us; a bare number is ns).
    #[arg(long = "set-o", allow_hyphen_values = true, value_name = "TIME")]
    pub o: Option<String>,
    /// NIC gap g (e.g. 3us; a bare number is ns).
    #[arg(long = "set-g", allow_hyphen_values = true, value_name = "TIME")]
    pub g: Option<String>,
    /// Gap per byte G (e.g. 0.17ns, per byte; a bare number is ns). Implies --calibration
    /// paper-table.
    #[arg(long = "set-G", allow_hyphen_values = true, value_name = "TIME/B")]
    pub big_g: Option<String>,
    /// CPU overhead per byte O (e.g. 0.05ns, per byte; a bare number is ns).
    #[arg(long = "set-O", allow_hyphen_values = true, value_name = "TIME/B")]
    pub big_o: Option<String>,
    /// Eager threshold S (e.g. 64KiB; a bare number is bytes): larger messages use the
    /// rendezvous protocol. Default: from --loggp, below the first protocol change (a size
    /// Netgauge printed twice, else the first step up of its ping-pong times).
    #[arg(long = "set-S", allow_hyphen_values = true, value_name = "SIZE")]
    pub s: Option<String>,
    /// Nodes per switch (ranks r/N share a switch).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = per_switch)]
    pub nodes_per_switch: Option<u32>,
    /// Price table in the format of the paper's systems.csv.
    #[arg(long, value_name = "CSV")]
    pub prices_table: Option<PathBuf>,
    /// System column of the price table.
    #[arg(long)]
    pub price_system: Option<String>,
    /// Class column of the price table (e.g. hpc-metal).
    #[arg(long)]
    pub price_class: Option<String>,
    /// On-demand price, USD per node-hour.
    #[arg(long, value_name = "USD", allow_hyphen_values = true, value_parser = price)]
    pub price_on_demand: Option<f64>,
    /// Committed (reserved) price, USD per node-hour.
    #[arg(long, value_name = "USD", allow_hyphen_values = true, value_parser = price)]
    pub price_committed: Option<f64>,
    /// Issue 47: spot capacity recorded in the profile (schema version 5).
    #[command(flatten)]
    pub spot: crate::spot::SpotInputs,
    /// Warm-up samples dropped at the start of every block (the paper: 21).
    #[arg(long, value_name = "N", default_value_t = 21, allow_hyphen_values = true,
          value_parser = row_count)]
    pub warmup: usize,
    /// Rows per Netgauge run (its -c): a run longer than this without a header is cut into
    /// blocks of this many rows, each losing its warm-up; `none` for a file that is one long
    /// run.
    #[arg(long, value_name = "N|none", default_value = "1000", allow_hyphen_values = true,
          value_parser = block_len)]
    pub block_len: BlockLen,
    /// Keep only rows of this message size from the latency captures (for size sweeps).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub latency_size: Option<String>,
    /// Keep only rows of this message size from the bandwidth captures.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub bandwidth_size: Option<String>,
    /// Fewest samples (after warm-up) a latency or bandwidth distribution is built from: with
    /// 500 the empirical distribution is within 0.061 of the true one (95 % DKW bound).
    #[arg(long, value_name = "N", default_value_t = loggops_calibrate::DEFAULT_MIN_SAMPLES,
          allow_hyphen_values = true, value_parser = row_count)]
    pub min_samples: usize,
    /// A note recorded in the provenance (repeatable).
    #[arg(long = "note", value_name = "TEXT")]
    pub notes: Vec<String>,
    /// Whether the system's MPI moves a message above S while a rank computes, recorded as
    /// the profile's `mpi_progress` (the captures cannot tell: measure a collective with
    /// compute, e.g. the 16 MiB `nwaydissemination`, and compare `validate` with each value).
    /// `polled`: only inside MPI calls (Cray MPICH's default); `async`: also during
    /// computation [default: none recorded; the simulator then assumes async].
    #[arg(long, value_enum)]
    pub mpi_progress: Option<MpiProgressArg>,
    /// Write the fit report (text) to FILE instead of stderr.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Write the fit report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub report_json: Option<PathBuf>,
    /// How the profile is made. `captures`: base parameters by Netgauge's definitions and
    /// distributions solved so that simulating each capture's own ping-pong reproduces it
    /// (the fit report prints the closure table). `paper-table`: the paper's convention, base
    /// parameters from --set-*, a --params-table row or the LogGP fit, the captured
    /// distributions' medians pinned to them. [default: paper-table with --params-table,
    /// --set-L or --set-G; captures otherwise]
    #[arg(long, value_enum, value_name = "KIND")]
    pub calibration: Option<CalibrationArg>,
    /// Concurrent messages each bandwidth sample was striped over (libstripe's
    /// LIBSTRIPE_FACTOR or Netgauge's --concurrent): the closure simulates the capture's
    /// ping-pong with that many messages.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub bandwidth_stripes: u32,
    /// Bandwidth levels (captures calibration): `auto` fits them when the bandwidth capture's
    /// runs differ by more than their samples explain (each Netgauge run keeps its own
    /// bandwidth: the profile then stores the runs' levels and the within-run per-byte
    /// distribution, and each simulated repetition draws a level); `off` never.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub bandwidth_levels: FitLevelsArg,
    /// Latency episodes: Netgauge runs of the latency capture that hold far more of its tail
    /// than independent samples would (each run's count above the capture's p99 improbable
    /// by a binomial test at 0.1 % over all runs, the flagged runs together holding at least
    /// a quarter of that tail). `state` (the default with `--calibration captures`): the other
    /// runs make the profile and the episodes' runs a state of their own, weighted by their
    /// share of the samples; a simulated repetition runs wholly inside an episode or outside,
    /// as a real run of a collective (well under a second) does, `validate` compares measured
    /// runs with the state outside episodes and reports the episodes' mean beside it, and
    /// the closure table simulates both states against the whole capture (VALIDATION.md,
    /// "Latency episodes"). `keep` (the default with `--calibration paper-table`) pools every
    /// run: each message may draw the episodes' latencies. `separate` leaves them out of the
    /// profile and of its closure's target.
    #[arg(long, value_enum, value_name = "HOW")]
    pub latency_episodes: Option<EpisodesArg>,
    /// Hoverboard capture (cloud_noise's `hoverboard_reps_1.out`, plain or .xz: `# Hoverboard
    /// test (SIZE 1 SLEEP_NS)` runs of `time(ns),sleep_time(ns),repetitions` rows, a ping-pong
    /// of SIZE bytes after 0 … 1 s of sleep). The profile then stores, per sleep time of the
    /// capture, a factor on the per-byte time of a message whose sender has been idle (not
    /// started a send nor completed a receive) at least that long, solved so that the
    /// simulated benchmark reproduces the captured ratio after-idle / back-to-back; sleeps
    /// whose round trips are not significantly longer than back to back keep factor 1. The
    /// fit report prints the table (`profile show` too).
    #[arg(long, value_name = "FILE")]
    pub idle_latency: Option<PathBuf>,
    /// Label of the capture day recorded in the profile (e.g. 2022-05-13): `profile combine`
    /// names its days so.
    #[arg(long, value_name = "LABEL", default_value = "")]
    pub day: String,
    /// Output profile.
    #[arg(short = 'o', long = "output", value_name = "FILE.h5")]
    pub output: PathBuf,
}

/// `calibrate --calibration`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalibrationArg {
    Captures,
    #[value(name = "paper-table")]
    PaperTable,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  loggops-sim validate ../shared/measured/azure_hc44rs_2022_04_01_11_12_04 --noise calibration/azure.h5
      Every measured benchmark of the Azure run against the Azure profile, 1000 repetitions each.
  loggops-sim validate nwaydissemination_nocompute_16_16.csv pipelinedring_16_16777216.csv \\
              --noise calibration/daint.h5 --format csv --output daint.csv
      Two files, as CSV.

Measured files are named <pattern>[_test|_nbsend]_<nodes>_<bytes>.csv: a header
`#MessageSize Rank0Time(us) ... Rank<P-1>Time(us)` and one row per iteration, as the paper's
benchmark programs print them. Patterns: nwaydissemination (Schedgen's, its reduction calcs
busy-waiting D ns as the programs did), nwaydissemination_nocompute (no calcs),
pipelinedring (segments of bytes/nodes), binomialtreebcast (the paper's Schedgen: sends in
sequence), binarytreebcast, linear_alltoall. Each is simulated as its program ran
(--simulate program): per iteration usleep(1), the barrier, MPI_Wtime, then the calls the
paper's goal2mpi.py wrote for the schedule: receives posted first (MPI_Irecv), blocking
MPI_Send (MPI_Isend in the _nbsend programs), MPI_Wait before what depends on a request
(an MPI_Test polling loop in the _test programs), busy-wait calcs, the remaining waits,
MPI_Wtime. A file that cannot be simulated (an unknown name, a malformed row, a _test
program whose polling loop repeats statements) is listed with its reason after the table
(`not_simulated` in JSON, rows with a `note` in CSV) and the others run.
An iteration's time is the maximum over ranks; a repetition's the maximum over ranks of the
time from leaving the simulated barrier to finishing (--measure barrier) or of the finishing
time (--measure collective). Rendezvous messages progress during computation or not as the
profile's `mpi_progress` says (--mpi-progress overrides; async without one). Without
--mpi-progress, the benchmarks whose noiseless time depends on that rule (transfers above S
beside computation, as the 16 MiB `nwaydissemination`) run under the other rule too, and a
line after the table says which rule their means favour: the evidence `calibrate
--mpi-progress` records (JSON: `settings.mpi_progress_evidence`; CSV: on stderr). Ratios are
simulated / measured; the mean error is the paper's metric, |mean sim - mean meas| / mean
meas; a `*` marks a mean or p50 off by more than 10 % or a p95 off by more than 20 %. The
column `outside the profile` flags a measured median beyond every simulated repetition
(slower: another machine state than the captures', such as other jobs' load; faster: the
model is too slow there), judged from 100 repetitions on. A profile with latency episodes
predicts from the state outside them and shows the episodes' mean beside it. The
summary line counts them; VALIDATION.md explains the misses on the shipped measurements.
Ctrl-C stops at the benchmark in progress and writes the ones finished, the others listed as
not simulated (beside an existing --output FILE, as FILE.partial.EXT; exit status 130).")]
pub struct ValidateArgs {
    /// Measured CSV files, or directories of them (their *.csv files).
    #[arg(value_name = "MEASURED", required = true)]
    pub measured: Vec<PathBuf>,
    /// Noise profile (HDF5) of the measured system, e.g. calibration/azure.h5.
    #[arg(long, value_name = "FILE.h5")]
    pub noise: PathBuf,
    /// Latency L [default: the profile's].
    #[arg(short = 'L', value_name = "TIME", allow_hyphen_values = true)]
    pub l: Option<String>,
    /// CPU overhead per message o [default: the profile's].
    #[arg(short = 'o', value_name = "TIME", allow_hyphen_values = true)]
    pub o: Option<String>,
    /// NIC gap per message g [default: the profile's].
    #[arg(short = 'g', value_name = "TIME", allow_hyphen_values = true)]
    pub g: Option<String>,
    /// Gap per byte G [default: the profile's].
    #[arg(short = 'G', value_name = "TIME/B", allow_hyphen_values = true)]
    pub big_g: Option<String>,
    /// CPU overhead per byte O [default: the profile's].
    #[arg(short = 'O', value_name = "TIME/B", allow_hyphen_values = true)]
    pub big_o: Option<String>,
    /// Eager threshold S [default: the profile's].
    #[arg(short = 'S', value_name = "SIZE", allow_hyphen_values = true)]
    pub s: Option<String>,
    /// Noise variant: none, os, net or os+net [default: the noise the profile holds: os+net;
    /// net when it has no OS noise (calibrated without --os-noise); os when it has no network
    /// distributions].
    #[arg(long, value_name = "MODE")]
    pub noise_mode: Option<String>,
    /// What a simulated iteration is. `barrier` (the default): as the benchmark programs
    /// measured: the MPI_Barrier before each iteration is simulated too (a dissemination
    /// barrier of 1-byte messages under the same noise), each rank's clock starts when it
    /// leaves it, and the time is the maximum over ranks of its own finish minus its own
    /// start. `collective`: every rank starts at 0 and the time is the latest finish (the
    /// paper's comparison).
    #[arg(long, value_enum, default_value = "barrier")]
    pub measure: MeasureArg,
    /// Software overhead of entering the collective: CPU time each rank spends before its
    /// first op (OS noise can hit it) [default: 0].
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub call_overhead: Option<String>,
    /// The step of the clock the benchmark timed itself with: each rank's simulated region is
    /// read as the benchmark read it, two `MPI_Wtime` calls on a clock of this resolution (Piz
    /// Daint's shows 2^-22 s = 238 ns; an empty region then reads 0 or one step) at a random
    /// phase per rank [default: the profile's clock (`calibrate` takes it from the selfish
    /// capture), else a perfect clock].
    #[arg(long, value_name = "TIME")]
    pub clock_resolution: Option<String>,
    /// What one read of that clock costs: the region between the reads is this much longer
    /// than the simulated one [default: the profile's clock, else 0].
    #[arg(long, value_name = "TIME")]
    pub clock_read: Option<String>,
    /// How a rank's CPU and NIC are shared (see `loggops-sim --help`).
    #[arg(long, value_enum, default_value = "queued")]
    pub model: ModelArg,
    /// Whether a message above S advances while its sender or receiver computes (see
    /// `loggops-sim --help`) [default: the profile's `mpi_progress`, else async].
    #[arg(long, value_enum)]
    pub mpi_progress: Option<MpiProgressArg>,
    /// Who shares a bandwidth level, on profiles calibrated with levels (see `loggops-sim
    /// --help`) [default: run].
    #[arg(long, value_enum, value_name = "WHO")]
    pub bandwidth_levels: Option<LevelsArg>,
    /// What is simulated per benchmark. `program` (the default): what the benchmark program
    /// did, the calls `goal2mpi.py` wrote for its schedule (receives posted first, blocking
    /// sends, waits, busy-wait calcs, the `_test` and `_nbsend` variants) as a schedule in
    /// program order, after `usleep(1)` and the barrier. `schedule`: the GOAL schedule's own
    /// dependencies, as the paper's simulator ran it.
    #[arg(long, value_enum, default_value = "program")]
    pub simulate: SimulateArg,
    /// Monte-Carlo repetitions per benchmark (the measured files have 1000 iterations).
    #[arg(long, value_name = "N", default_value_t = 1000, allow_hyphen_values = true,
          value_parser = repetition_count)]
    pub reps: u32,
    /// Master seed.
    #[arg(long, value_name = "N", default_value_t = 1, allow_hyphen_values = true,
          value_parser = seed)]
    pub seed: u64,
    /// Worker threads (results do not depend on it) [default: all cores].
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = thread_count)]
    pub threads: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: FormatArg,
    /// Write the result to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// What `validate` simulates of each benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum SimulateArg {
    /// The benchmark program's MPI calls in their order.
    #[default]
    Program,
    /// The GOAL schedule's dependencies (the paper's simulation).
    Schedule,
}

/// What `validate` simulates per iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum MeasureArg {
    /// The barrier before the collective too, each rank timed from its own barrier exit.
    #[default]
    Barrier,
    /// The collective alone, all ranks starting at 0 (the paper's comparison).
    Collective,
}

/// How many repetitions a Monte-Carlo cell runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reps {
    Fixed(u32),
    /// Doubling from [`Reps::AUTO_FIRST`] to [`Reps::AUTO_MAX`] until the cell is precise.
    #[default]
    Auto,
}

impl Reps {
    pub const AUTO_FIRST: u32 = 32;
    pub const AUTO_MAX: u32 = 1000;
    /// Relative half-width (of the median) the confidence intervals must reach.
    pub const AUTO_PRECISION: f64 = 0.005;
}

fn parse_plot(s: &str) -> Result<(loggops_report::plot::PlotKind, PathBuf), String> {
    loggops_report::plot::parse_plot_arg(s)
}

/// `--block-len`: rows per run, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLen(pub Option<usize>);

fn block_len(s: &str) -> Result<BlockLen, String> {
    if s == "none" {
        return Ok(BlockLen(None));
    }
    match whole(s, "block lengths")? {
        0 => Err("a block needs at least one row (or `none`)".into()),
        n => Ok(BlockLen(Some(n as usize))),
    }
}

/// A whole number; a negative one gets a message naming what cannot be negative instead of
/// clap's `-- -5` tip (the flags that use it take hyphen values).
fn whole(s: &str, what: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("{what} cannot be negative"));
    }
    t.parse::<u64>().map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => {
            format!("`{s}` is too large (at most {})", u64::MAX)
        }
        _ => match t
            .strip_suffix(['k', 'K'])
            .and_then(|d| d.parse::<u64>().ok())
            .and_then(|n| Some((n.checked_mul(1000)?, n.checked_mul(1024)?)))
        {
            // `1k`: the digits with a multiplier the flag does not take.
            Some((dec, bin)) => {
                format!("`{s}` is not a whole number: write the digits ({dec} or {bin})")
            }
            None => format!("`{s}` is not a whole number"),
        },
    })
}

/// A whole number that fits 32 bits; `plural` names what cannot be negative.
fn whole_u32(s: &str, plural: &str) -> Result<u32, String> {
    let n = whole(s, plural)?;
    u32::try_from(n).map_err(|_| format!("{n} is too large (at most {})", u32::MAX))
}

fn rank_count(s: &str) -> Result<u32, String> {
    whole_u32(s, "rank counts")
}

fn rank(s: &str) -> Result<u32, String> {
    whole_u32(s, "ranks")
}

fn fan_out(s: &str) -> Result<u32, String> {
    whole_u32(s, "fan-outs")
}

fn per_switch(s: &str) -> Result<u32, String> {
    whole_u32(s, "node counts")
}

fn seed(s: &str) -> Result<u64, String> {
    whole(s, "seeds")
}

/// A fixed number of repetitions (at least one).
fn repetition_count(s: &str) -> Result<u32, String> {
    match whole_u32(s, "repetition counts")? {
        0 => Err("at least one repetition is needed".into()),
        n => Ok(n),
    }
}

fn thread_count(s: &str) -> Result<usize, String> {
    match whole(s, "thread counts")? {
        0 => Err("at least one thread is needed (leave --threads out to use every core)".into()),
        n => Ok(n as usize),
    }
}

fn row_count(s: &str) -> Result<usize, String> {
    whole(s, "row counts").map(|n| n as usize)
}

fn price(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err("prices cannot be negative".into());
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a price in USD (e.g. 2.5)")),
    }
}

fn parse_reps(s: &str) -> Result<Reps, String> {
    if s == "auto" {
        return Ok(Reps::Auto);
    }
    if s.trim().starts_with('-') {
        return Err(
            "repetition counts cannot be negative: expected a whole number such as 1000, or `auto`"
                .into(),
        );
    }
    match s.parse::<u32>() {
        Ok(0) => Err("at least one repetition is needed (or `auto`)".into()),
        Ok(n) => Ok(Reps::Fixed(n)),
        Err(_) => Err(format!(
            "`{s}` is not a repetition count: expected a whole number such as 1000, or `auto`"
        )),
    }
}
