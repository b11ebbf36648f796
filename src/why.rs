//! Issue 42: the "why" behind the verdict. The sweep attributes the critical paths of the
//! first `--why-reps` repetitions of every cell the verdict speaks of (per workload and system,
//! the noise mode with all the sweep's noise at the largest node count) and of their noiseless
//! runs, carrying the attribution forward while the repetition runs
//! ([`loggops_explain::Carrier`]: the exact global engine, a few KiB per rank, any run length),
//! and keeps every repetition `--critical-path` records. [`Why::attach`] puts them into the
//! result's cells ([`loggops_report::why::CellWhy`]), from which the verdict, the JSON and CSV
//! outputs and the HTML report read them.
//!
//! Hooks: `mc.rs` runs each repetition through [`Target::run`] (marked "issue 42 hook").

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use anyhow::Result;
use loggops_engine::{Config, NoNoise, Program};
use loggops_explain::PathSummary;
use loggops_noise::NoiseModel;
use loggops_report::why::{CellWhy, PartsPs, PathParts, Sensitivity};
use loggops_report::{Plan, RunResult};

/// (workload, system, nodes, noise mode) of a cell.
type Key = (String, String, u64, String);

/// The attributed runs of a sweep.
pub struct Why {
    /// Repetitions attributed per verdict cell.
    reps: u64,
    /// The verdict's noise mode and node count (`None`: each workload's own).
    mode: Option<String>,
    nodes: Option<u32>,
    got: Mutex<HashMap<Key, BTreeMap<u64, PathParts>>>,
}

/// One run's attribution as the result model keeps it.
pub fn path_parts(s: &PathSummary) -> PathParts {
    PathParts {
        rep: s.rep,
        finish_ps: s.finish,
        parts: PartsPs::from_array(s.parts.0),
        sensitivity: Sensitivity {
            dT_dL: s.counts.latency,
            dT_do: s.counts.o,
            dT_dg: s.counts.g,
            dT_dG_per_byte: s.counts.big_g_bytes,
            dT_dO_per_byte: s.counts.big_o_bytes,
        },
        ties: s.ties,
    }
}

/// A cell whose repetitions [`Why`] may attribute.
pub struct Target<'a> {
    why: &'a Why,
    key: Key,
    /// Attribute repetitions below this.
    below: u64,
}

impl Why {
    /// For `plan`, attributing `reps` repetitions per verdict cell (0: none).
    pub fn new(plan: &Plan, reps: u64) -> Why {
        let mode = loggops_report::verdict::verdict_mode_of(&plan.noise_modes).map(String::from);
        Why {
            reps,
            mode: mode.filter(|_| plan.settings.noise.is_some()),
            nodes: plan.nodes.iter().copied().max(),
            got: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the verdict speaks of (workload, system) at `nodes` ranks in `mode`.
    fn is_verdict_cell(&self, nodes: u64, mode: &str) -> bool {
        self.reps > 0
            && self.mode.as_deref() == Some(mode)
            && self.nodes.is_none_or(|n| n as u64 == nodes)
    }

    /// The cell (workload, system, `nodes` ranks, `mode`): a target when the verdict speaks
    /// of it; `mode` `none` is the noiseless baseline, a target when its verdict cell is.
    pub fn target(&self, workload: &str, system: &str, nodes: u64, mode: &str) -> Target<'_> {
        let wanted = match (mode, &self.mode) {
            ("none", Some(m)) => self.is_verdict_cell(nodes, m) as u64,
            (m, _) if self.is_verdict_cell(nodes, m) => self.reps,
            _ => 0,
        };
        Target {
            why: self,
            key: (workload.into(), system.into(), nodes, mode.into()),
            below: wanted,
        }
    }

    /// Fills the `why` of every cell that has attributed repetitions, with its noiseless
    /// run's attribution.
    pub fn attach(self, result: &mut RunResult) {
        let got = self.got.into_inner().expect("no panics");
        for c in &mut result.cells {
            let key: Key = (
                c.workload.clone(),
                c.system.clone(),
                c.nodes,
                c.noise_mode.clone(),
            );
            let base_key: Key = (c.workload.clone(), c.system.clone(), c.nodes, "none".into());
            let noiseless = got.get(&base_key).and_then(|m| m.get(&0).copied());
            let reps: Vec<PathParts> = if c.noise_mode == "none" {
                Vec::new()
            } else {
                got.get(&key)
                    .map(|m| {
                        m.values()
                            .filter(|p| c.reps.contains(&p.rep))
                            .copied()
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let attributed = !reps.is_empty() || (c.noise_mode == "none" && got.contains_key(&key));
            if attributed && noiseless.is_some() {
                c.why = Some(CellWhy { noiseless, reps });
            }
        }
    }
}

impl Target<'_> {
    /// Keeps a repetition's attribution (one `--critical-path` or `--timeline` recorded) when
    /// it is one the verdict attributes: what else those flags record never changes the
    /// verdict.
    pub fn keep(&self, s: &PathSummary) {
        if !self.wants(s.rep) {
            return;
        }
        self.why
            .got
            .lock()
            .expect("no panics")
            .entry(self.key.clone())
            .or_default()
            .insert(s.rep, path_parts(s));
    }

    /// Whether repetition `rep` is attributed here.
    pub fn wants(&self, rep: u64) -> bool {
        rep < self.below
    }

    /// Runs repetition `rep` on the global engine carrying the attribution forward, keeps it,
    /// and returns the time (the windowed engine's answer, ARCHITECTURE invariant 6).
    pub fn run<P: Program>(
        &self,
        prog: &P,
        model: &NoiseModel,
        engine_model: loggops_engine::Model,
        seed: u64,
        rep: u64,
    ) -> Result<u64> {
        let cfg = Config {
            model: engine_model,
            mpi_progress: model.mpi_progress(),
            ..Config::new(model.engine_params())
        };
        let (out, path) = if model.needs_noise_run() {
            let mut n = model.instance(seed, rep, prog.num_ranks());
            loggops_explain::attribute(prog, &cfg, &mut n)?
        } else {
            loggops_explain::attribute(prog, &cfg, &mut NoNoise)?
        };
        let Some(path) = path else {
            return Err(crate::mc::Incomplete { rep, out }.into());
        };
        let path = path?;
        self.keep(&PathSummary::of(rep, &path));
        Ok(out.max().0)
    }
}
