//! JSON output: the faithful serialisation of a [`RunResult`] (schema [`SCHEMA`], version
//! [`SCHEMA_VERSION`]); [`RunResult::from_json`] reads it back.
//!
//! ```text
//! { "schema": "loggops-report/run/2", "schema_version": 2,
//!   "tool": {"name", "version"}, "command": "...", "status": "complete" | "interrupted",
//!   ["shard": {"index", "count"},]  (only in the output of --shard)
//!   "plan": { "workloads": [...], "systems": [...], "nodes": [...], "noise_modes": [...],
//!             "settings": {...} },
//!   "cells": [ { "id", "complete", <the keys of CELL_COLUMNS>, "run", ["engine",] ["why",] "reps",
//!                "samples_ps" } ],
//!   "verdicts": [ { "workload", "system", "nodes", "noise_mode", "n", "partial", "mean_ps",
//!                   "noiseless_ps", "slowdown", "slowdown_ci95", "on_demand", "committed",
//!                   "job_runs", "why", "rank", "text", ["spot"] } ],
//!   "differences": [ { "workload", "system", "varies", "a": {"nodes", "noise_mode"},
//!                      "b": {...}, "reps", "diff_mean_ps", "diff_ci95_ps", "unpaired_ci95_ps" } ],
//!   ["spot": { "noise_mode", "systems": [ { "workload", "system", "spot_usd_per_node_hour",
//!              "interruptions_per_node_hour", "source", "not_priced", "rows": [ { "nodes",
//!              "runs", "work_s", "on_demand", "committed", "spot", "interruptions_mean",
//!              "checkpoint_every_s", "young_s", "daly_s", "closed_form_time_s" } ],
//!              "compared_with", "pays_up_to_nodes", "stops_paying_at_nodes",
//!              "stops_paying_nodes_closed_form" } ] }] }
//! ```
//!
//! `spot` (issue 47, [`crate::spot`]) is there when the plan's settings have `spot` (a spot
//! flag, or a profile with spot values): per workload and system, the job (`--job-runs`,
//! `--job-node-hours`; else one run) at every node count of the verdict's noise mode, priced
//! on demand, committed and on spot; each of `on_demand`, `committed`, `spot` is
//! `{usd_per_node_hour, mean_usd, p95_usd, mean_time_s, p95_time_s}` (the first two null
//! without that price). `not_priced` says why spot is not priced (then `rows` is empty).
//!
//! `why` (a cell's critical-path attribution, [`crate::why::CellWhy`]) is there for the cells
//! that have one: `noiseless` and `reps`, each `{rep, finish_ps, parts: {<part>_ps...},
//! sensitivity: {dT_dL, dT_do, dT_dg, dT_dG_per_byte, dT_dO_per_byte}, ties}`. `verdicts`
//! ([`crate::verdict`]) has one entry per workload and system at the largest node count:
//! `on_demand` and `committed` are `{usd_per_node_hour, extra_usd_per_run,
//! extra_usd_per_run_ci95: [lo, hi], extra_usd_per_job}` or null without that price; `why` is
//! `{reps: [attributed repetitions], part, share, extra_ps: {<part>_ps...}, total_extra_ps}`
//! (means over those repetitions, rounded to ps like `mean_ps`) or null; `rank` is `{of,
//! by_time, time_ratio, fastest, vs_fastest, by_cost, priced, cost_ratio, cheapest}` (`priced`:
//! the systems with an on-demand price, which `by_cost` ranks) or null with one
//! system, where `vs_fastest` (null for the fastest) is this system's mean minus the fastest's,
//! paired by repetition ([`crate::paired`]): `{reps, diff_mean_ps, diff_ci95_ps: [lo, hi],
//! unpaired_ci95_ps: [lo, hi]}`;
//! `text` is the sentence printed under the table. It is derived, and ignored when the
//! document is read back, as are `differences` ([`crate::paired::differences`]: cell `a`'s mean
//! minus cell `b`'s where they differ in `varies`, `"noise_mode"` or `"nodes"`, paired by
//! repetition like `vs_fastest`).
//!
//! Each cell holds the statistics of [`crate::CELL_COLUMNS`] (derived from its samples, for
//! readers that do not want to recompute them) and the samples themselves with their
//! repetition indices. Times are integer picoseconds in keys ending `_ps`; absent values are
//! `null`.

use crate::cell::Cell;
use crate::model::{CellResult, RunResult};
pub use crate::model::{SCHEMA, SCHEMA_VERSION};
use crate::record::{cell_values, Value, CELL_COLUMNS};
use crate::verdict::Facts;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::io::{self, Write};

/// An interval as integer picoseconds `[lo, hi]`.
fn ps_pair(i: crate::stats::Interval) -> [i64; 2] {
    [i.lo.round() as i64, i.hi.round() as i64]
}

impl Serialize for Value<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Str(v) => s.serialize_str(v),
            Value::Owned(v) => s.serialize_str(v),
            Value::Bool(v) => s.serialize_bool(*v),
            Value::U64(v) => s.serialize_u64(*v),
            Value::I64(v) => s.serialize_i64(*v),
            Value::F64(v) if v.is_finite() => s.serialize_f64(*v),
            Value::F64(_) | Value::Null => s.serialize_none(),
        }
    }
}

struct CellOut<'a>(&'a CellResult, &'a Cell, &'a Facts);

impl Serialize for CellOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (c, stats) = (self.0, self.1);
        let values = cell_values(stats, self.2);
        let mut map = s.serialize_map(Some(values.len() + 6))?;
        map.serialize_entry("id", &c.id)?;
        map.serialize_entry("complete", &c.complete)?;
        for (k, v) in CELL_COLUMNS.iter().zip(values.iter()) {
            map.serialize_entry(k, v)?;
        }
        map.serialize_entry("run", &c.run)?;
        if let Some(e) = &c.engine {
            map.serialize_entry("engine", e)?;
        }
        if let Some(w) = &c.why {
            map.serialize_entry("why", w)?;
        }
        map.serialize_entry("reps", &c.reps)?;
        map.serialize_entry("samples_ps", &c.samples_ps)?;
        map.end()
    }
}

struct CellsOut<'a>(&'a [CellResult], &'a [Cell], &'a [Facts]);

impl Serialize for CellsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for ((c, stats), f) in self.0.iter().zip(self.1).zip(self.2) {
            seq.serialize_element(&CellOut(c, stats, f))?;
        }
        seq.end()
    }
}

/// The paired differences between cells (see the module docs).
fn differences_json(r: &RunResult) -> serde_json::Value {
    use serde_json::json;
    let list: Vec<serde_json::Value> = crate::paired::differences(r)
        .iter()
        .map(|d| {
            let (a, b, p) = (&r.cells[d.a], &r.cells[d.b], &d.paired);
            json!({
                "workload": a.workload,
                "system": a.system,
                "varies": d.varies,
                "a": {"nodes": a.nodes, "noise_mode": a.noise_mode},
                "b": {"nodes": b.nodes, "noise_mode": b.noise_mode},
                "reps": p.reps,
                "diff_mean_ps": p.diff_mean_ps.round() as i64,
                "diff_ci95_ps": p.diff_ci95_ps.map(ps_pair),
                "unpaired_ci95_ps": p.unpaired_ci95_ps.map(ps_pair),
            })
        })
        .collect();
    serde_json::Value::Array(list)
}

/// The verdicts (see the module docs).
fn verdicts_json(r: &RunResult, stats: &[Cell], facts: &[Facts]) -> serde_json::Value {
    use serde_json::{json, Value as J};
    let extra = |e: &Option<crate::verdict::Extra>| match e {
        Some(e) => json!({
            "usd_per_node_hour": e.price,
            "extra_usd_per_run": e.per_run,
            "extra_usd_per_run_ci95": e.per_run_ci95.map(|(a, b)| [a, b]),
            "extra_usd_per_job": e.per_job,
        }),
        None => J::Null,
    };
    let parts = |v: &[f64; 8]| {
        let mut m = serde_json::Map::new();
        for (i, (k, _, _)) in crate::why::PARTS.iter().enumerate() {
            m.insert(format!("{k}_ps"), json!(v[i].round() as i64));
        }
        J::Object(m)
    };
    let list: Vec<J> = facts
        .iter()
        .enumerate()
        .filter(|(_, f)| f.verdict.is_some())
        .map(|(i, f)| {
            let c = &r.cells[i];
            let mut entry = json!({
                "workload": c.workload,
                "system": c.system,
                "nodes": c.nodes,
                "noise_mode": c.noise_mode,
                "n": c.samples_ps.len(),
                "partial": !c.complete,
                "mean_ps": stats[i].summary.mean.round() as i64,
                "noiseless_ps": c.noiseless_ps,
                "slowdown": f.slowdown,
                "slowdown_ci95": f.slowdown_ci95.map(|(a, b)| [a, b]),
                "on_demand": extra(&f.on_demand),
                "committed": extra(&f.committed),
                "job_runs": f.job_runs,
                "why": f.why.as_ref().map(|w| json!({
                    "reps": c.why.as_ref().map(|x| x.reps.iter().map(|p| p.rep).collect::<Vec<_>>()),
                    "part": w.main.map(|(p, _)| crate::why::PARTS[p].0),
                    "share": w.main.map(|(_, s)| s),
                    "extra_ps": parts(&w.extra.extra_ps),
                    "total_extra_ps": w.extra.total_ps.round() as i64,
                })),
                "rank": f.rank.as_ref().map(|k| json!({
                    "of": k.of,
                    "by_time": k.by_time,
                    "time_ratio": k.time_ratio,
                    "fastest": k.fastest,
                    "vs_fastest": k.vs_fastest.map(|p| json!({
                        "reps": p.reps,
                        "diff_mean_ps": p.diff_mean_ps.round() as i64,
                        "diff_ci95_ps": p.diff_ci95_ps.map(ps_pair),
                        "unpaired_ci95_ps": p.unpaired_ci95_ps.map(ps_pair),
                    })),
                    "by_cost": k.by_cost,
                    "priced": k.priced,
                    "cost_ratio": k.cost_ratio,
                    "cheapest": k.cheapest,
                })),
                "text": f.verdict,
            });
            if let Some(sys) = r
                .spot
                .as_ref()
                .and_then(|s| s.system(&c.workload, &c.system))
            {
                let row = sys.row(c.nodes);
                entry["spot"] = json!({
                    "not_priced": sys.not_priced,
                    "usd_per_node_hour": sys.spot_usd_per_node_hour,
                    "interruptions_per_node_hour": sys.interruptions_per_node_hour,
                    "job_usd_mean": row.map(|x| x.spot.mean_usd),
                    "job_usd_p95": row.map(|x| x.spot.p95_usd),
                    "job_time_s_mean": row.map(|x| x.spot.mean_time_s),
                    "checkpoint_every_s": row.map(|x| x.checkpoint_every_s),
                    "pays_up_to_nodes": sys.pays_up_to_nodes,
                    "stops_paying_at_nodes": sys.stops_paying_at_nodes,
                });
            }
            entry
        })
        .collect();
    J::Array(list)
}

struct Document<'a>(&'a RunResult, &'a [Cell], &'a [Facts]);

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let extra = r.shard.is_some() as usize + r.spot.is_some() as usize;
        let mut map = s.serialize_map(Some(9 + extra))?;
        map.serialize_entry("schema", &r.schema)?;
        map.serialize_entry("schema_version", &r.schema_version)?;
        map.serialize_entry("tool", &r.tool)?;
        map.serialize_entry("command", &r.command)?;
        map.serialize_entry("status", &r.status)?;
        if let Some(shard) = &r.shard {
            map.serialize_entry("shard", shard)?;
        }
        map.serialize_entry("plan", &r.plan)?;
        map.serialize_entry("cells", &CellsOut(&r.cells, self.1, self.2))?;
        map.serialize_entry("verdicts", &verdicts_json(r, self.1, self.2))?;
        map.serialize_entry("differences", &differences_json(r))?;
        if let Some(spot) = &r.spot {
            map.serialize_entry("spot", spot)?;
        }
        map.end()
    }
}

/// Writes the result as pretty-printed JSON (two-space indent) followed by a newline.
pub fn write_run_json<W: Write + ?Sized>(w: &mut W, run: &RunResult) -> io::Result<()> {
    let stats = run.cells_summarised().map_err(io::Error::other)?;
    let facts = crate::verdict::facts(run, &stats);
    serde_json::to_writer_pretty(&mut *w, &Document(run, &stats, &facts))
        .map_err(io::Error::from)?;
    w.write_all(b"\n")
}

/// The JSON document as a string (see [`write_run_json`]).
pub fn run_to_json_string(run: &RunResult) -> String {
    let mut out = Vec::new();
    write_run_json(&mut out, run).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}
