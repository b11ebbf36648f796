//! The result model of a run: what was planned, with which settings, and what each cell
//! measured. Every renderer (table, JSON, CSV, samples CSV, plots, HTML) takes a [`RunResult`]
//! and nothing else, and the JSON document is its faithful serialisation
//! ([`RunResult::from_json`] reads it back to an equal value), so results can be written by one
//! process and merged or rendered by another.
//!
//! * A [`Plan`] is the cross product *workloads × systems × node counts × noise modes*; each
//!   point is a cell ([`Plan::cells`], numbered in that order). The plan also holds the
//!   [`Settings`] every cell shares (seed, repetition rule, time unit, noise options, explicit
//!   parameter flags) and, per system, the parameters near and far, the profile's path,
//!   content hash (SHA-256 of the file's bytes) and provenance.
//! * Executing a plan fills one [`CellResult`] per cell: its samples (simulated schedule time of
//!   each repetition, integer ps, with the repetition index of each), the noiseless baseline and
//!   whether the cell ran all its repetitions.
//! * [`RunResult`] is both, plus the tool's version, the command line and whether the run was
//!   interrupted. [`RunResult::cells_summarised`] gives the statistics of every cell
//!   ([`crate::Cell`]) that the renderers print.
//!
//! Nothing here depends on how the repetitions were scheduled: a cell's samples are ordered by
//! repetition index, so results of different thread counts, or of a plan split into shards,
//! compare equal.

use crate::cell::{Cell, CellError, Labels};
use crate::cost::CostModel;
use serde::{Deserialize, Serialize};

/// Version of the result model and of its JSON and CSV forms; bumped whenever a key or column is
/// renamed, removed or changes meaning.
pub const SCHEMA_VERSION: u32 = 2;
/// Name of the JSON schema (`schema` key).
pub const SCHEMA: &str = "loggops-report/run/2";

/// The engine's LogGOPS parameters of one placement, as simulated (integer ps, per-byte costs
/// in ps per byte with sub-picosecond precision).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineParams {
    #[serde(rename = "L_ps")]
    pub l_ps: u64,
    pub o_ps: u64,
    pub g_ps: u64,
    #[serde(rename = "G_ps_per_byte")]
    pub big_g_ps_per_byte: f64,
    #[serde(rename = "O_ps_per_byte")]
    pub big_o_ps_per_byte: f64,
    #[serde(rename = "S_bytes")]
    pub s_bytes: u64,
    /// Rendezvous messages (larger than S) pay three latencies.
    pub rndv_3l: bool,
}

/// Where a profile came from, as recorded in the profile.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// Capture files, relative to where `calibrate` ran.
    pub sources: Vec<String>,
    pub command: String,
    pub created: String,
    pub tool_version: String,
    pub notes: Vec<String>,
}

/// The noise profile a system's cells were run with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRef {
    /// The path as given on the command line.
    pub path: String,
    /// SHA-256 of the file's bytes, lower-case hex.
    pub sha256: String,
    pub provenance: Provenance,
}

/// Instance prices, USD per node-hour.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Prices {
    pub on_demand_usd_per_node_hour: Option<f64>,
    pub committed_usd_per_node_hour: Option<f64>,
}

/// One system: a noise profile (or, without one, the parameters of the flags).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemInfo {
    /// The label of its cells (the profile's system name).
    pub name: String,
    pub description: String,
    /// `None` for noiseless runs without a profile.
    pub profile: Option<ProfileRef>,
    /// Parameters of messages within a switch (all messages without a profile).
    pub near: EngineParams,
    /// Parameters of messages across switches; `None` when equal to `near`.
    pub far: Option<EngineParams>,
    /// Ranks `r / nodes_per_switch` share a switch (`None` without a profile).
    pub nodes_per_switch: Option<u32>,
    pub prices: Prices,
}

impl SystemInfo {
    /// The far parameters, or the near ones when they are the same.
    pub fn far_or_near(&self) -> &EngineParams {
        self.far.as_ref().unwrap_or(&self.near)
    }
}

/// One schedule file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    /// The label of its cells (the file's stem, or its path when stems repeat).
    pub name: String,
    /// The path as given on the command line.
    pub path: String,
    /// SHA-256 of the file's bytes, lower-case hex.
    pub sha256: String,
    /// `--param NAME=VALUE` overrides applied to it.
    pub params: Vec<(String, String)>,
    /// An explicit GOAL file (text or binary), whose plain calc numbers are ticks of
    /// [`Settings::tick_ps`]; false for rank-parametric schedules (durations always have units).
    pub explicit: bool,
}

/// How many repetitions each cell runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "lowercase")]
pub enum RepsRule {
    /// One deterministic run per cell (noiseless runs).
    Single,
    /// Exactly `count` repetitions.
    Fixed { count: u64 },
    /// `first` repetitions, doubled up to `max` until the 95 % confidence intervals of the mean,
    /// median and p95 are within `precision` (relative) of the median.
    Auto {
        first: u64,
        max: u64,
        precision: f64,
    },
}

impl RepsRule {
    /// `auto`, `1000`, `single`: as the flag is written.
    pub fn short(&self) -> String {
        match self {
            RepsRule::Single => "single".into(),
            RepsRule::Fixed { count } => count.to_string(),
            RepsRule::Auto { .. } => "auto".into(),
        }
    }

    /// A sentence for people.
    pub fn describe(&self) -> String {
        match self {
            RepsRule::Single => "one deterministic run per cell".into(),
            RepsRule::Fixed { count } => format!("{count} repetitions per noisy cell"),
            RepsRule::Auto {
                first,
                max,
                precision,
            } => format!(
                "--reps auto: {first} repetitions per noisy cell, doubled up to {max} until the \
                 95% CIs of mean, median and p95 are within ±{}% of the median",
                (precision * 1000.0).round() / 10.0
            ),
        }
    }
}

/// Options of the noise model shared by every noisy cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseSettings {
    /// `median` (draws scaled so their median is L resp. G, the paper's convention) or
    /// `absolute` (`--absolute-latency`).
    pub latency_scaling: String,
    /// All ranks replay OS noise in phase (`--cosched`).
    pub cosched: bool,
}

/// What every cell of a plan shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub seed: u64,
    pub reps: RepsRule,
    /// Unit of every `*_ps` value and sample: `ps` (picoseconds).
    pub time_unit: String,
    /// Order of ops freed together: `stable` or `libstdcxx`.
    pub order: String,
    /// How a rank's CPU and NIC are shared (`--model`): `loggopsim` (LogGOPSim's rules) or
    /// `queued` (sends queue at the NIC in program order; receiving holds nothing).
    pub model: String,
    /// Length of one tick, ps (`--tick`): what a plain calc number of an explicit GOAL file
    /// means (workloads with `explicit: true`).
    pub tick_ps: u64,
    /// `None` for noiseless runs.
    pub noise: Option<NoiseSettings>,
    /// Explicit parameter flags as given (`-G 79ps`); they override every system's parameters.
    pub param_flags: Vec<String>,
}

/// What to run: workloads × systems × node counts × noise modes, and the shared settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub workloads: Vec<WorkloadInfo>,
    pub systems: Vec<SystemInfo>,
    /// Node counts; empty means each workload's own rank count (explicit GOAL files).
    pub nodes: Vec<u32>,
    /// Noise modes (`none`, `os`, `net`, `os+net`).
    pub noise_modes: Vec<String>,
    pub settings: Settings,
}

/// One planned cell: indices into the plan's lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellKey {
    /// Position in [`Plan::cells`].
    pub id: usize,
    pub workload: usize,
    pub system: usize,
    /// `None`: the workload's own rank count.
    pub nodes: Option<u32>,
    pub noise_mode: usize,
}

impl Plan {
    /// Every cell, in output order: workload, then system, then node count, then noise mode.
    pub fn cells(&self) -> Vec<CellKey> {
        let nodes: Vec<Option<u32>> = if self.nodes.is_empty() {
            vec![None]
        } else {
            self.nodes.iter().map(|&n| Some(n)).collect()
        };
        let mut out = Vec::new();
        for w in 0..self.workloads.len() {
            for s in 0..self.systems.len() {
                for &n in &nodes {
                    for m in 0..self.noise_modes.len() {
                        out.push(CellKey {
                            id: out.len(),
                            workload: w,
                            system: s,
                            nodes: n,
                            noise_mode: m,
                        });
                    }
                }
            }
        }
        out
    }

    /// The system a cell's label names.
    pub fn system(&self, name: &str) -> Option<&SystemInfo> {
        self.systems.iter().find(|s| s.name == name)
    }
}

/// Extra facts of a noiseless run (the engine's counters), when the cell is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFacts {
    /// First rank with the latest finishing time.
    pub max_rank: u32,
    /// LogGOPSim's event count: ops started + messages sent.
    pub events: u64,
    pub ops: u64,
    pub messages: u64,
    /// Finishing time of every rank, ps (rank order).
    pub finish_ps: Vec<u64>,
    /// Wall-clock seconds the simulation took (not reproducible).
    pub wall_s: f64,
    /// Peak resident memory of the process after this run (Linux), bytes (not reproducible).
    pub peak_rss_bytes: Option<u64>,
}

/// What one cell measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    /// Position in [`Plan::cells`].
    pub id: usize,
    pub workload: String,
    pub system: String,
    /// Nodes (ranks) simulated.
    pub nodes: u64,
    pub noise_mode: String,
    /// False when the run was interrupted before the cell ran all its repetitions.
    pub complete: bool,
    /// Noiseless time of the same workload, system and node count, ps.
    pub noiseless_ps: Option<u64>,
    /// Repetition index of each sample, ascending (`0..n` unless the cell is partial).
    pub reps: Vec<u64>,
    /// Simulated schedule time of each repetition (maximum over ranks), ps.
    pub samples_ps: Vec<u64>,
    /// Engine counters of a noiseless run.
    pub run: Option<RunFacts>,
}

impl CellResult {
    /// The cell's labels.
    pub fn labels(&self) -> Labels {
        Labels::new(
            self.workload.clone(),
            self.system.clone(),
            self.nodes,
            self.noise_mode.clone(),
        )
    }
}

/// Whether the run ended as planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Complete,
    /// Stopped by Ctrl-C (SIGINT): the finished repetitions are kept, cells not reached are
    /// absent, and cells cut short have `complete: false`.
    Interrupted,
}

/// The program that made a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// A whole result: plan, settings and the cells that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub schema_version: u32,
    pub tool: Tool,
    /// The command that makes this result: `loggops-sim` and the arguments that decide it, as
    /// typed (output files, `--format`, `--threads`, `-q` and `--shard` left out, so that runs
    /// that differ only in those record the same result).
    pub command: String,
    pub status: Status,
    pub plan: Plan,
    /// The cells that have at least one sample, ordered by id.
    pub cells: Vec<CellResult>,
}

impl RunResult {
    /// A result for `plan` with no cells yet.
    pub fn new(tool: Tool, command: String, plan: Plan) -> RunResult {
        RunResult {
            schema: SCHEMA.to_string(),
            schema_version: SCHEMA_VERSION,
            tool,
            command,
            status: Status::Complete,
            plan,
            cells: Vec::new(),
        }
    }

    /// True when some planned repetitions did not run.
    pub fn is_partial(&self) -> bool {
        self.status == Status::Interrupted
            || self.cells.iter().any(|c| !c.complete)
            || self.cells.len() < self.plan.cells().len()
    }

    /// The cost model of a cell: its node count and its system's prices.
    pub fn cost_model(&self, c: &CellResult) -> CostModel {
        let mut m = CostModel::new(c.nodes);
        if let Some(s) = self.plan.system(&c.system) {
            if let Some(p) = s.prices.on_demand_usd_per_node_hour {
                m = m.with_on_demand(p);
            }
            if let Some(p) = s.prices.committed_usd_per_node_hour {
                m = m.with_committed(p);
            }
        }
        m
    }

    /// The statistics of every cell, in the order of [`RunResult::cells`].
    pub fn cells_summarised(&self) -> Result<Vec<Cell>, CellError> {
        self.cells
            .iter()
            .map(|c| {
                Cell::new(
                    c.labels(),
                    &c.samples_ps,
                    c.noiseless_ps,
                    Some(&self.cost_model(c)),
                )
            })
            .collect()
    }

    /// Reads a result back from its JSON form ([`crate::write_run_json`]); the statistics in it
    /// are ignored (they follow from the samples).
    pub fn from_json(text: &str) -> Result<RunResult, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Counts of complete, partial and missing cells.
    pub fn cell_counts(&self) -> (usize, usize, usize) {
        let complete = self.cells.iter().filter(|c| c.complete).count();
        let partial = self.cells.len() - complete;
        let missing = self.plan.cells().len().saturating_sub(self.cells.len());
        (complete, partial, missing)
    }
}
