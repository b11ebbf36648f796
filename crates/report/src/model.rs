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
//!
//! # Shards
//!
//! `--shard I/N` runs one slice of a plan ([`Plan::shares`]): the plan's *units of work* are
//! numbered in cell order, and unit `k` belongs to shard `k mod N + 1`. A unit is one
//! repetition of a noisy cell when the plan has a fixed repetition count, else a whole cell
//! (noiseless cells, and every cell under `--reps auto`, whose stopping rule needs all of the
//! cell's repetitions). So shards of a fixed-count run share every cell's repetitions round
//! robin, and shards of an auto run take whole cells. A shard's result is an ordinary
//! [`RunResult`] with [`RunResult::shard`] set and only its units' samples;
//! [`crate::merge::merge`] puts the shards back together into the unsharded result.

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
    /// Spot capacity in force (the run's `--spot-*` flags over the profile's values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_usd_per_node_hour: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_interruptions_per_node_hour: Option<f64>,
    /// Where the spot price and rate come from, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_source: Option<String>,
}

impl Prices {
    /// Whether any spot value is known.
    pub fn has_spot(&self) -> bool {
        self.spot_usd_per_node_hour.is_some() || self.spot_interruptions_per_node_hour.is_some()
    }
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
    /// `polled` when rendezvous messages advanced only outside computation (`--mpi-progress`,
    /// the profile's `mpi_progress`); absent with asynchronous progress, the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi_progress: Option<String>,
    /// The share of repetitions run inside the profile's latency episodes (a state of their
    /// own, `calibrate --latency-episodes state`); absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_episodes: Option<f64>,
    /// The profile's extra one-way latency by message size, on top of L and G, at a few sizes
    /// (`1KiB 120ns, 4KiB 310ns, ...`; near, then far when it has its own); absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_by_size: Option<String>,
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
    /// SHA-256 of the file's bytes, lower-case hex. Empty for an explicit file of a run whose
    /// only output is the human table, which does not show it (every JSON and CSV output and
    /// every shard has it).
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
    /// Who shared a bandwidth level (`--bandwidth-levels`: `run`, `link` or `off`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_levels: Option<String>,
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
    /// What one job is (`--job-runs`, `--job-node-hours`): the extra cost of noise per job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Job>,
    /// Repetitions whose critical paths are attributed in each cell the verdict speaks of
    /// (`--why-reps`; the first ones, a random sample since draws are keyed by repetition).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub why_reps: u64,
    /// Spot capacity's job settings (issue 47), when a spot flag is given or a profile has
    /// spot values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot: Option<crate::spot::SpotSettings>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A job: several runs of the workload on the cell's nodes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Job {
    /// This many runs (`--job-runs`).
    Runs(u64),
    /// Runs worth this many node-hours without noise (`--job-node-hours`): at `n` nodes and a
    /// noiseless run time `t`, `node_hours / (n t)` runs.
    NodeHours(f64),
}

impl Job {
    /// Runs per job at `nodes` nodes whose noiseless run takes `noiseless_ps`.
    pub fn runs(&self, nodes: u64, noiseless_ps: f64) -> f64 {
        match *self {
            Job::Runs(r) => r as f64,
            Job::NodeHours(h) => {
                if noiseless_ps > 0.0 && nodes > 0 {
                    h * crate::cost::PS_PER_HOUR / (nodes as f64 * noiseless_ps)
                } else {
                    0.0
                }
            }
        }
    }

    /// `1000 runs`, `5000 node-hours`.
    pub fn describe(&self) -> String {
        match *self {
            Job::Runs(1) => "1 run".into(),
            Job::Runs(r) => format!("{r} runs"),
            Job::NodeHours(h) => format!("{h} node-hours of noiseless runs"),
        }
    }
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
    /// Critical-path attribution of some repetitions and of the noiseless run (the cells the
    /// verdict speaks of, or every cell with `--critical-path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<crate::why::CellWhy>,
    /// What ran a noisy cell's repetitions (the batched engine, or a one-at-a-time engine and
    /// why); the answers are the same whichever ran (not part of the result's identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
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

/// One slice of a run (`--shard INDEX/COUNT`, 1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` (1 <= I <= N).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let usage = "write the slice as I/N: shard I (1, 2, ..., N) of N, e.g. 3/8";
        let (i, n) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not I/N: {usage}"))?;
        let num = |t: &str, what: &str| -> Result<u32, String> {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{s}`: {what} `{t}` is not a whole number: {usage}"))
        };
        let (index, count) = (num(i, "the shard")?, num(n, "the count")?);
        if count == 0 || index == 0 || index > count {
            return Err(format!(
                "`{s}`: shards are numbered 1 to the count ({usage}), as Slurm's \
                 --array=1-N numbers its tasks"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The repetitions `first, first + step, ...` below `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepSet {
    pub first: u64,
    pub step: u64,
    pub end: u64,
}

impl RepSet {
    /// `0..count`.
    pub fn all(count: u64) -> RepSet {
        RepSet {
            first: 0,
            step: 1,
            end: count,
        }
    }

    /// How many repetitions the set holds.
    pub fn len(&self) -> u64 {
        if self.first >= self.end {
            0
        } else {
            (self.end - self.first).div_ceil(self.step)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th repetition of the set.
    pub fn nth(&self, i: u64) -> u64 {
        self.first + i * self.step
    }

    /// Whether `rep` is in the set.
    pub fn contains(&self, rep: u64) -> bool {
        rep >= self.first && rep < self.end && (rep - self.first).is_multiple_of(self.step)
    }
}

/// What one shard runs of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// Nothing.
    Nothing,
    /// The whole cell: its noiseless run, or every repetition by the repetition rule.
    Whole,
    /// These repetitions of a noisy cell with a fixed repetition count.
    Reps(RepSet),
}

/// How a plan's work is sliced into shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardBy {
    /// Whole cells (`--reps auto`, and noiseless runs).
    Cells,
    /// Repetitions of every noisy cell (a fixed `--reps N`).
    Repetitions,
}

impl Plan {
    /// How shards of this plan divide its work (see the module docs).
    pub fn shard_by(&self) -> ShardBy {
        match self.settings.reps {
            RepsRule::Fixed { .. } if self.settings.noise.is_some() => ShardBy::Repetitions,
            _ => ShardBy::Cells,
        }
    }

    /// What `shard` runs of every cell, indexed by cell id (see the module docs).
    pub fn shares(&self, shard: Shard) -> Vec<Share> {
        let n = shard.count as u64;
        let mine = (shard.index - 1) as u64;
        let fixed = match (self.shard_by(), &self.settings.reps) {
            (ShardBy::Repetitions, RepsRule::Fixed { count }) => Some(*count),
            _ => None,
        };
        let mut k = 0u64;
        self.cells()
            .iter()
            .map(|key| match fixed {
                Some(count) if self.noise_modes[key.noise_mode] != "none" => {
                    // Units k .. k+count are this cell's repetitions 0 .. count.
                    let first = (mine + n - k % n) % n;
                    k += count;
                    let set = RepSet {
                        first,
                        step: n,
                        end: count,
                    };
                    if set.is_empty() {
                        Share::Nothing
                    } else {
                        Share::Reps(set)
                    }
                }
                _ => {
                    let share = if k % n == mine {
                        Share::Whole
                    } else {
                        Share::Nothing
                    };
                    k += 1;
                    share
                }
            })
            .collect()
    }
}

/// A whole result: plan, settings and the cells that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub schema_version: u32,
    pub tool: Tool,
    /// The command that makes this result: `loggops-sim` and the arguments that decide it, as
    /// typed (output files, `--format`, `--threads`, `-q`, `--shard` and the critical-path and
    /// timeline flags left out, so that runs that differ only in those record the same result).
    pub command: String,
    pub status: Status,
    /// Set when this is one slice of the run (`--shard`); absent from whole results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub plan: Plan,
    /// The cells that have at least one sample, ordered by id.
    pub cells: Vec<CellResult>,
    /// Spot capacity (issue 47): the job priced on demand, committed and on spot; absent
    /// unless [`Settings::spot`] is set (and from a shard's result: `merge` computes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot: Option<crate::spot::SpotResult>,
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
            shard: None,
            plan,
            cells: Vec::new(),
            spot: None,
        }
    }

    /// How many cells this result should have: every cell of the plan, or of a shard those
    /// it has a share of.
    pub fn planned_cells(&self) -> usize {
        match self.shard {
            None => self.plan.cells().len(),
            Some(s) => self
                .plan
                .shares(s)
                .iter()
                .filter(|x| **x != Share::Nothing)
                .count(),
        }
    }

    /// True when some planned repetitions did not run.
    pub fn is_partial(&self) -> bool {
        self.status == Status::Interrupted
            || self.cells.iter().any(|c| !c.complete)
            || self.cells.len() < self.planned_cells()
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
        let missing = self.planned_cells().saturating_sub(self.cells.len());
        (complete, partial, missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(modes: &[&str], nodes: &[u32], reps: RepsRule) -> Plan {
        let params = EngineParams {
            l_ps: 1,
            o_ps: 1,
            g_ps: 1,
            big_g_ps_per_byte: 1.0,
            big_o_ps_per_byte: 0.0,
            s_bytes: 1,
            rndv_3l: false,
        };
        let system = |name: &str| SystemInfo {
            name: name.into(),
            description: String::new(),
            profile: None,
            near: params.clone(),
            far: None,
            nodes_per_switch: None,
            prices: Prices::default(),
            mpi_progress: None,
            latency_episodes: None,
            latency_by_size: None,
        };
        let workload = |name: &str| WorkloadInfo {
            name: name.into(),
            path: name.into(),
            sha256: String::new(),
            params: vec![],
            explicit: false,
        };
        Plan {
            workloads: vec![workload("a"), workload("b")],
            systems: vec![system("x"), system("y"), system("z")],
            nodes: nodes.to_vec(),
            noise_modes: modes.iter().map(|m| m.to_string()).collect(),
            settings: Settings {
                seed: 1,
                reps,
                time_unit: "ps".into(),
                order: "stable".into(),
                model: "queued".into(),
                tick_ps: 1000,
                noise: Some(NoiseSettings {
                    latency_scaling: "median".into(),
                    cosched: false,
                    bandwidth_levels: None,
                }),
                param_flags: vec![],
                job: None,
                why_reps: 0,
                spot: None,
            },
        }
    }

    /// Every unit of work (a repetition of a fixed-count noisy cell, else a whole cell) is in
    /// exactly one shard, whatever the shard count; shards differ by at most one unit.
    #[test]
    fn shards_partition_the_work() {
        for reps in [
            RepsRule::Fixed { count: 1 },
            RepsRule::Fixed { count: 7 },
            RepsRule::Fixed { count: 64 },
            RepsRule::Auto {
                first: 32,
                max: 1000,
                precision: 0.005,
            },
        ] {
            let p = plan(&["none", "os", "os+net"], &[4, 16], reps.clone());
            let cells = p.cells();
            for count in 1..=9u32 {
                let mut whole = vec![0u32; cells.len()];
                let mut reps_seen: Vec<Vec<u32>> = vec![vec![]; cells.len()];
                let mut units = Vec::new();
                for index in 1..=count {
                    let mut mine = 0u64;
                    for (id, share) in p.shares(Shard { index, count }).iter().enumerate() {
                        match share {
                            Share::Nothing => {}
                            Share::Whole => {
                                whole[id] += 1;
                                mine += 1;
                            }
                            Share::Reps(set) => {
                                for i in 0..set.len() {
                                    let r = set.nth(i) as usize;
                                    let len = reps_seen[id].len().max(r + 1);
                                    reps_seen[id].resize(len, 0);
                                    reps_seen[id][r] += 1;
                                    assert!(set.contains(r as u64));
                                }
                                mine += set.len();
                            }
                        }
                    }
                    units.push(mine);
                }
                for (k, key) in cells.iter().enumerate() {
                    let by_reps = p.noise_modes[key.noise_mode] != "none"
                        && matches!(reps, RepsRule::Fixed { .. });
                    if by_reps {
                        let RepsRule::Fixed { count: n } = reps else {
                            unreachable!()
                        };
                        assert_eq!(whole[k], 0);
                        assert_eq!(reps_seen[k], vec![1; n as usize], "{reps:?} {count}");
                    } else {
                        assert_eq!(whole[k], 1, "{reps:?} {count} cell {k}");
                    }
                }
                let (lo, hi) = (units.iter().min().unwrap(), units.iter().max().unwrap());
                assert!(hi - lo <= 1, "{reps:?} {count}: {units:?}");
            }
        }
    }

    #[test]
    fn shard_flags() {
        assert_eq!(Shard::parse("3/8"), Ok(Shard { index: 3, count: 8 }));
        assert_eq!(Shard::parse("1/1"), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/3", "4/3", "3", "a/3", "1/0", "-1/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
