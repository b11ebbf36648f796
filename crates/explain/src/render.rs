//! Critical-path reports as tables (every number with its unit), JSON and CSV.
//!
//! # One run ([`RunReport`])
//! Both kinds go into one JSON document ([`report_json`]): `{"schema":
//! "loggops-explain/report/1", "runs": [...], "cells": [...]}`.
//!
//! JSON: one object per run with
//! `workload`, `nodes`, `finish_ps`, `last_rank`, `parts` (`<part>_ps` for every part of
//! [`Part::ALL`] and `total_ps`), `shares` (fractions of the finishing time),
//! `sensitivity` (`dT_dL`, `dT_do`, `dT_dg` in ps per ps, `dT_dG_per_byte`, `dT_dO_per_byte`
//! in ps per ps/B), `ties`, `tolerance` (a list of `{pct, runtime_ps, limit_ps,
//! extra_latency_ps, runs}`; `extra_latency_ps` null when unbounded), `ranks` (`{rank,
//! time_ps}`, largest first), `messages` (`{src, dst, send_op, size_bytes, time_ps}`,
//! largest first) and `steps` (the path's length in steps). A path attributed as the run went
//! ([`crate::Carrier`], for runs whose full log would not fit in memory) has `steps` null and
//! empty `ranks` and `messages`.
//! CSV: one row per run: `workload,nodes,finish_ps,last_rank,<part>_ps...,dT_dL,dT_do,dT_dg,
//! dT_dG_per_byte,dT_dO_per_byte,ties,tolerance_1pct_ps,tolerance_5pct_ps` (tolerance columns
//! empty when not computed or unbounded).
//!
//! # Monte-Carlo cells ([`CellPaths`])
//! JSON: one object per cell with the cell's labels, `n`,
//! `p95_band` (`first_rank`, `last_rank`, `reps`), `sentence`, and `parts`: per part and for
//! `total` (the finishing time) `mean_ps`, `p50_ps`, `p95_ps`, `noiseless_ps`,
//! `p95_inflation_ps` and `p95_inflation_share` (null when there is no inflation), and the
//! noiseless run's `noiseless_sensitivity` and `noiseless_tolerance`.
//! CSV: tidy, one row per cell and part: `workload,system,nodes,noise_mode,n,part,mean_ps,
//! p50_ps,p95_ps,noiseless_ps,p95_inflation_ps,p95_inflation_share`, then the noiseless run's
//! `noiseless_dT_dL,noiseless_dT_do,noiseless_dT_dg,noiseless_dT_dG_per_byte,
//! noiseless_dT_dO_per_byte,tolerance_1pct_ps,tolerance_5pct_ps` (repeated on every row).

use std::fmt::Write as _;

use loggops_report::{fmt_bytes, fmt_time_ps, fmt_time_ps_f64};
use serde_json::{json, Map, Value};

use crate::path::{CriticalPath, Part, TermCounts};
use crate::sensitivity::Tolerance;
use crate::summary::CellPaths;

/// A critical path with what it is of, and the latency tolerances when computed.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub workload: String,
    pub nodes: u32,
    /// The noise profile's system and mode, when the run had one.
    pub system: Option<String>,
    pub path: CriticalPath,
    /// Base latency of the run (for "L may grow to ..."), ps.
    pub latency_ps: u64,
    pub tolerance: Vec<Tolerance>,
}

fn pct(part: i64, total: u64) -> String {
    if total == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / total as f64)
    }
}

fn signed(ps: i64) -> String {
    fmt_time_ps_f64(ps as f64)
}

/// The human report of one or more runs; `top` ranks and messages each.
pub fn runs_table(runs: &[RunReport], top: usize) -> String {
    let mut s = String::new();
    for (k, r) in runs.iter().enumerate() {
        if k > 0 {
            s.push('\n');
        }
        let p = &r.path;
        let sys = r
            .system
            .as_deref()
            .map(|x| format!(" on {x}"))
            .unwrap_or_default();
        let listed = p.is_listed();
        let _ = writeln!(
            s,
            "critical path of {} at {} rank{}{sys}: {} (ends on rank {}; {}{})",
            r.workload,
            r.nodes,
            if r.nodes == 1 { "" } else { "s" },
            fmt_time_ps(p.finish),
            p.rank,
            if listed {
                format!("{} steps", p.steps.len())
            } else {
                "attributed as the run went: its steps, ranks and messages are listed for \
                 runs whose full log fits in memory"
                    .to_string()
            },
            if p.ties > 0 {
                format!(", {} ties", p.ties)
            } else {
                String::new()
            }
        );
        let w = Part::ALL
            .iter()
            .map(|x| x.label().chars().count())
            .max()
            .unwrap_or(0);
        let _ = writeln!(s, "  {:<w$}  {:>10}  {:>6}", "part", "time", "share");
        for part in Part::ALL {
            let v = p.parts.get(part);
            let _ = writeln!(
                s,
                "  {:<w$}  {:>10}  {:>6}",
                part.label(),
                signed(v),
                pct(v, p.finish)
            );
        }
        let _ = writeln!(
            s,
            "  {:<w$}  {:>10}  {:>6}",
            "total (finishing time)",
            fmt_time_ps(p.finish),
            pct(p.finish as i64, p.finish)
        );
        let c = &p.counts;
        let _ = writeln!(
            s,
            "  sensitivity (from the path{}): dT/dL = {} ps/ps, dT/do = {} ps/ps, dT/dg = {} ps/ps, dT/dG = {} ps per ps/B, dT/dO = {} ps per ps/B",
            if p.ties > 0 { "; one-sided at its ties" } else { "" },
            c.latency,
            c.o,
            c.g,
            c.big_g_bytes,
            c.big_o_bytes
        );
        for t in &r.tolerance {
            let _ = match t.extra_latency_ps {
                Some(x) => writeln!(
                    s,
                    "  latency tolerance +{}%: L may grow by {} per message (to {}) before the runtime exceeds {} ({} exact runs)",
                    t.pct,
                    fmt_time_ps(x),
                    fmt_time_ps(r.latency_ps.saturating_add(x)),
                    fmt_time_ps(t.limit_ps),
                    t.runs
                ),
                None => writeln!(
                    s,
                    "  latency tolerance +{}%: the runtime stays within {} for any extra latency up to {} ({} exact runs)",
                    t.pct,
                    fmt_time_ps(t.limit_ps),
                    fmt_time_ps(crate::sensitivity::MAX_EXTRA_LATENCY),
                    t.runs
                ),
            };
        }
        if !listed {
            continue;
        }
        let ranks: Vec<String> = p
            .ranks
            .iter()
            .take(top)
            .map(|&(rank, t)| format!("{rank} ({}, {})", fmt_time_ps(t), pct(t as i64, p.finish)))
            .collect();
        let more = p.ranks.len().saturating_sub(top);
        let listed_ranks = match (ranks.is_empty(), more) {
            (true, 0) => ": none".to_string(),
            (false, 0) => format!(": {}", ranks.join(", ")),
            (true, _) => ", none listed".to_string(),
            (false, m) => format!(": {}, ... {m} more", ranks.join(", ")),
        };
        let _ = writeln!(s, "  ranks on the path ({}){listed_ranks}", p.ranks.len());
        if !p.messages.is_empty() {
            let _ = writeln!(
                s,
                "  top messages on the path ({} in all):",
                p.messages.len()
            );
            for m in p.messages.iter().take(top) {
                let _ = writeln!(
                    s,
                    "    {:>6} -> {:<6} {:>8}  send op #{:<8} {:>10}  {:>6}",
                    m.src,
                    m.dst,
                    fmt_bytes(m.size),
                    m.send_op,
                    fmt_time_ps(m.time_ps),
                    pct(m.time_ps as i64, p.finish)
                );
            }
        }
    }
    s
}

fn parts_obj(p: &CriticalPath) -> (Value, Value) {
    let mut parts = Map::new();
    let mut shares = Map::new();
    for part in Part::ALL {
        let v = p.parts.get(part);
        parts.insert(format!("{}_ps", part.key()), json!(v));
        let share = if p.finish > 0 {
            json!(v as f64 / p.finish as f64)
        } else {
            Value::Null
        };
        shares.insert(part.key().to_string(), share);
    }
    parts.insert("total_ps".into(), json!(p.parts.total()));
    (Value::Object(parts), Value::Object(shares))
}

fn sensitivity_json(c: &TermCounts) -> Value {
    json!({
        "dT_dL": c.latency,
        "dT_do": c.o,
        "dT_dg": c.g,
        "dT_dG_per_byte": c.big_g_bytes,
        "dT_dO_per_byte": c.big_o_bytes,
    })
}

fn tolerance_json(t: &Tolerance) -> Value {
    json!({
        "pct": t.pct,
        "runtime_ps": t.runtime_ps,
        "limit_ps": t.limit_ps,
        "extra_latency_ps": t.extra_latency_ps,
        "runs": t.runs,
    })
}

/// The JSON objects of runs (see the module docs).
pub fn runs_json(runs: &[RunReport]) -> Vec<Value> {
    runs
        .iter()
        .map(|r| {
            let p = &r.path;
            let (parts, shares) = parts_obj(p);
            json!({
                "workload": r.workload,
                "nodes": r.nodes,
                "system": r.system,
                "finish_ps": p.finish,
                "last_rank": p.rank,
                "parts": parts,
                "shares": shares,
                "sensitivity": sensitivity_json(&p.counts),
                "ties": p.ties,
                "tolerance": r.tolerance.iter().map(tolerance_json).collect::<Vec<_>>(),
                "ranks": p.ranks.iter().map(|&(rank, t)| json!({"rank": rank, "time_ps": t})).collect::<Vec<_>>(),
                "messages": p.messages.iter().map(|m| json!({
                    "src": m.src, "dst": m.dst, "send_op": m.send_op,
                    "size_bytes": m.size, "time_ps": m.time_ps,
                })).collect::<Vec<_>>(),
                "steps": if p.is_listed() { json!(p.steps.len()) } else { Value::Null },
            })
        })
        .collect()
}

/// One JSON document: `{"schema": "loggops-explain/report/1", "runs": [...], "cells": [...]}`.
pub fn report_json(runs: &[RunReport], cells: &[CellPaths]) -> String {
    let mut s = serde_json::to_string_pretty(&json!({
        "schema": "loggops-explain/report/1",
        "runs": runs_json(runs),
        "cells": cells_json(cells),
    }))
    .expect("JSON values serialise");
    s.push('\n');
    s
}

/// The CSV report of runs (see the module docs).
pub fn runs_csv(runs: &[RunReport]) -> String {
    let mut s = String::from("workload,nodes,finish_ps,last_rank");
    for part in Part::ALL {
        let _ = write!(s, ",{}_ps", part.key());
    }
    s.push_str(",dT_dL,dT_do,dT_dg,dT_dG_per_byte,dT_dO_per_byte,ties,tolerance_1pct_ps,tolerance_5pct_ps\n");
    for r in runs {
        let p = &r.path;
        let _ = write!(
            s,
            "{},{},{},{}",
            csv_field(&r.workload),
            r.nodes,
            p.finish,
            p.rank
        );
        for part in Part::ALL {
            let _ = write!(s, ",{}", p.parts.get(part));
        }
        let c = &p.counts;
        let tol = |pct: u32| tolerance_cell(&r.tolerance, pct);
        let _ = writeln!(
            s,
            ",{},{},{},{},{},{},{},{}",
            c.latency,
            c.o,
            c.g,
            c.big_g_bytes,
            c.big_o_bytes,
            p.ties,
            tol(1),
            tol(5)
        );
    }
    s
}

/// The tolerance for `pct` as a CSV field (empty when not computed or unbounded).
fn tolerance_cell(t: &[Tolerance], pct: u32) -> String {
    t.iter()
        .find(|t| t.pct == pct)
        .and_then(|t| t.extra_latency_ps)
        .map(|x| x.to_string())
        .unwrap_or_default()
}

fn csv_field(v: &str) -> String {
    if v.contains([',', '"', '\n']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

/// One row per part and the total: (label, key, mean, p50, p95, noiseless, inflation, share).
fn cell_rows(c: &CellPaths) -> Vec<(&'static str, &'static str, [f64; 5], f64)> {
    let mut rows: Vec<_> = Part::ALL
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let d = c.parts[i];
            (
                p.label(),
                p.key(),
                [
                    d.mean,
                    d.p50,
                    d.p95,
                    c.noiseless.parts.get(p) as f64,
                    c.p95_inflation[i],
                ],
                c.share(p),
            )
        })
        .collect();
    let f = c.finish;
    let total_share = if c.p95_inflation_total > 0.0 {
        1.0
    } else {
        f64::NAN
    };
    rows.push((
        "total (finishing time)",
        "total",
        [
            f.mean,
            f.p50,
            f.p95,
            c.noiseless.finish as f64,
            c.p95_inflation_total,
        ],
        total_share,
    ));
    rows
}

/// The repetitions of the p95 band, named (`repetitions 7, 12: the 15th-16th of 16 by
/// runtime`), at most 8 of them.
pub fn band_text(c: &CellPaths) -> String {
    let mut reps: Vec<String> = c.band_reps.iter().take(8).map(|r| r.to_string()).collect();
    if c.band_reps.len() > 8 {
        reps.push(format!("and {} more", c.band_reps.len() - 8));
    }
    let what = if c.band_reps.len() == 1 {
        "repetition"
    } else {
        "repetitions"
    };
    let pos = if c.band.0 == c.band.1 && c.band.1 == c.n {
        "the slowest".to_string()
    } else if c.band.0 == c.band.1 {
        format!(
            "the {} slowest",
            loggops_report::verdict::ordinal(c.n + 1 - c.band.0)
        )
    } else {
        format!(
            "the {} to {} slowest",
            loggops_report::verdict::ordinal(c.n + 1 - c.band.1),
            loggops_report::verdict::ordinal(c.n + 1 - c.band.0)
        )
    };
    format!("{what} {}, {pos} of {}", reps.join(", "), c.n)
}

/// The human report of Monte-Carlo cells: the distribution of every part and its share of the
/// p95 inflation, and the cell's sentence.
pub fn cells_table(cells: &[CellPaths]) -> String {
    let mut s = String::new();
    for (k, c) in cells.iter().enumerate() {
        if k > 0 {
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "critical path of {} on {}, {} nodes, noise {}: {} repetitions (p95 band: {})",
            c.workload,
            c.system,
            c.nodes,
            c.mode,
            c.n,
            band_text(c)
        );
        let rows = cell_rows(c);
        let w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let _ = writeln!(
            s,
            "  {:<w$}  {:>10}  {:>10}  {:>10}  {:>10}  {:>13}  {:>6}",
            "part", "mean", "p50", "p95", "noiseless", "p95 inflation", "share"
        );
        for (label, _, v, share) in rows {
            let share = if share.is_finite() {
                format!("{:.1}%", 100.0 * share)
            } else {
                "-".into()
            };
            let _ = writeln!(
                s,
                "  {:<w$}  {:>10}  {:>10}  {:>10}  {:>10}  {:>13}  {:>6}",
                label,
                fmt_time_ps_f64(v[0]),
                fmt_time_ps_f64(v[1]),
                fmt_time_ps_f64(v[2]),
                fmt_time_ps_f64(v[3]),
                fmt_time_ps_f64(v[4]),
                share
            );
        }
        let _ = writeln!(s, "  {}.", c.sentence());
    }
    if !cells.is_empty() {
        s.push_str(
            "(p95: a part's own 95th percentile over the repetitions; p95 inflation: its mean \
             over the p95 band, the repetitions whose runtimes lie around the p95, minus its \
             noiseless value)\n",
        );
    }
    s
}

fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The JSON objects of Monte-Carlo cells (see the module docs).
pub fn cells_json(cells: &[CellPaths]) -> Vec<Value> {
    cells
        .iter()
        .map(|c| {
            let mut parts = Map::new();
            for (_, key, v, share) in cell_rows(c) {
                parts.insert(
                    key.to_string(),
                    json!({
                        "mean_ps": num(v[0]),
                        "p50_ps": num(v[1]),
                        "p95_ps": num(v[2]),
                        "noiseless_ps": num(v[3]),
                        "p95_inflation_ps": num(v[4]),
                        "p95_inflation_share": num(share),
                    }),
                );
            }
            json!({
                "workload": c.workload,
                "system": c.system,
                "nodes": c.nodes,
                "noise_mode": c.mode,
                "n": c.n,
                "p95_band": {"first_rank": c.band.0, "last_rank": c.band.1, "reps": c.band_reps},
                "sentence": c.sentence(),
                "parts": Value::Object(parts),
                "noiseless_sensitivity": sensitivity_json(&c.noiseless.counts),
                "noiseless_tolerance": c.tolerance.iter().map(tolerance_json).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The tidy CSV of Monte-Carlo cells (see the module docs).
pub fn cells_csv(cells: &[CellPaths]) -> String {
    let mut s = String::from(
        "workload,system,nodes,noise_mode,n,part,mean_ps,p50_ps,p95_ps,noiseless_ps,p95_inflation_ps,p95_inflation_share,\
         noiseless_dT_dL,noiseless_dT_do,noiseless_dT_dg,noiseless_dT_dG_per_byte,noiseless_dT_dO_per_byte,\
         tolerance_1pct_ps,tolerance_5pct_ps\n",
    );
    let f = |v: f64| {
        if v.is_finite() {
            format!("{v}")
        } else {
            String::new()
        }
    };
    for c in cells {
        let k = &c.noiseless.counts;
        let tail = format!(
            "{},{},{},{},{},{},{}",
            k.latency,
            k.o,
            k.g,
            k.big_g_bytes,
            k.big_o_bytes,
            tolerance_cell(&c.tolerance, 1),
            tolerance_cell(&c.tolerance, 5)
        );
        for (_, key, v, share) in cell_rows(c) {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{key},{},{},{},{},{},{},{tail}",
                csv_field(&c.workload),
                csv_field(&c.system),
                c.nodes,
                c.mode,
                c.n,
                f(v[0]),
                f(v[1]),
                f(v[2]),
                f(v[3]),
                f(v[4]),
                f(share)
            );
        }
    }
    s
}
