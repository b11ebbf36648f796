//! The flat, machine-readable record of a cell, shared by the JSON and CSV writers so that both
//! carry exactly the same columns in the same order (documented in the crate docs).

use crate::cell::Cell;

/// One value of a record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    Str(&'a str),
    Owned(String),
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Null,
}

/// Rounds a fractional picosecond value to the nearest integer (half away from zero).
pub(crate) fn round_ps(ps: f64) -> Value<'static> {
    if ps.is_finite() {
        Value::I64(ps.round() as i64)
    } else {
        Value::Null
    }
}

fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> Value<'static>) -> Value<'static> {
    v.map(f).unwrap_or(Value::Null)
}

/// Column names, in output order.
pub const CELL_COLUMNS: [&str; 68] = [
    "workload",
    "system",
    "nodes",
    "noise_mode",
    "n",
    "mean_ps",
    "std_ps",
    "min_ps",
    "p1_ps",
    "p5_ps",
    "q1_ps",
    "median_ps",
    "q3_ps",
    "p95_ps",
    "p99_ps",
    "max_ps",
    "mean_ci95_lo_ps",
    "mean_ci95_hi_ps",
    "median_ci95_lo_ps",
    "median_ci95_hi_ps",
    "median_ci95_coverage",
    "notch_lo_ps",
    "notch_hi_ps",
    "whisker_lo_ps",
    "whisker_hi_ps",
    "outliers_lo",
    "outliers_hi",
    "noiseless_ps",
    "inflation_mean",
    "inflation_median",
    "cost_nodes",
    "extra_ps_per_run",
    "comm_repeats",
    "run_mean_ps",
    "run_noiseless_ps",
    "on_demand_usd_per_node_hour",
    "on_demand_usd_per_run_mean",
    "on_demand_usd_per_run_noiseless",
    "committed_usd_per_node_hour",
    "committed_usd_per_run_mean",
    "committed_usd_per_run_noiseless",
    "cost_increase_pct_mean",
    "cost_increase_pct_ci95_lo",
    "cost_increase_pct_ci95_hi",
    "cost_increase_pct_median",
    "inflation_mean_ci95_lo",
    "inflation_mean_ci95_hi",
    "on_demand_extra_usd_per_run",
    "on_demand_extra_usd_per_run_ci95_lo",
    "on_demand_extra_usd_per_run_ci95_hi",
    "committed_extra_usd_per_run",
    "committed_extra_usd_per_run_ci95_lo",
    "committed_extra_usd_per_run_ci95_hi",
    "job_runs",
    "on_demand_extra_usd_per_job",
    "committed_extra_usd_per_job",
    "systems_ranked",
    "rank_by_time",
    "ratio_to_best_time",
    "diff_to_best_ps",
    "diff_to_best_ci95_lo_ps",
    "diff_to_best_ci95_hi_ps",
    "rank_by_cost",
    "ratio_to_best_cost",
    "why_reps",
    "why_part",
    "why_share",
    "verdict",
];

/// The values of a cell, in [`CELL_COLUMNS`] order (`f`: its [`crate::verdict::facts`]).
pub(crate) fn cell_values<'a>(cell: &'a Cell, f: &'a crate::verdict::Facts) -> [Value<'a>; 68] {
    let s = &cell.summary;
    let l = &cell.labels;
    let c = cell.cost.as_ref();
    let od = c.and_then(|c| c.on_demand.as_ref());
    let cm = c.and_then(|c| c.committed.as_ref());
    [
        Value::Str(&l.workload),
        Value::Str(&l.system),
        Value::U64(l.nodes),
        Value::Str(&l.noise_mode),
        Value::U64(s.n as u64),
        round_ps(s.mean),
        opt(s.std, round_ps),
        Value::U64(s.min),
        round_ps(s.p1),
        round_ps(s.p5),
        round_ps(s.q1),
        round_ps(s.median),
        round_ps(s.q3),
        round_ps(s.p95),
        round_ps(s.p99),
        Value::U64(s.max),
        opt(s.mean_ci95, |i| round_ps(i.lo)),
        opt(s.mean_ci95, |i| round_ps(i.hi)),
        opt(s.median_ci95, |m| Value::U64(m.lo)),
        opt(s.median_ci95, |m| Value::U64(m.hi)),
        opt(s.median_ci95, |m| Value::F64(m.coverage)),
        round_ps(s.notch.lo),
        round_ps(s.notch.hi),
        round_ps(s.whisker_lo),
        round_ps(s.whisker_hi),
        Value::U64(s.outliers_lo as u64),
        Value::U64(s.outliers_hi as u64),
        opt(cell.noiseless_ps, Value::U64),
        opt(cell.inflation_mean(), Value::F64),
        opt(cell.inflation_median(), Value::F64),
        opt(c, |c| Value::U64(c.model.nodes)),
        opt(c, |c| Value::U64(c.model.extra_ps_per_run)),
        opt(c, |c| Value::U64(c.model.comm_repeats as u64)),
        opt(c, |c| round_ps(c.run_mean_ps)),
        opt(c.and_then(|c| c.run_noiseless_ps), round_ps),
        opt(od, |p| Value::F64(p.usd_per_node_hour)),
        opt(od, |p| Value::F64(p.usd_per_run_mean)),
        opt(od.and_then(|p| p.usd_per_run_noiseless), Value::F64),
        opt(cm, |p| Value::F64(p.usd_per_node_hour)),
        opt(cm, |p| Value::F64(p.usd_per_run_mean)),
        opt(cm.and_then(|p| p.usd_per_run_noiseless), Value::F64),
        opt(c.and_then(|c| c.increase_pct_mean), Value::F64),
        opt(c.and_then(|c| c.increase_pct_ci95), |i| Value::F64(i.lo)),
        opt(c.and_then(|c| c.increase_pct_ci95), |i| Value::F64(i.hi)),
        opt(c.and_then(|c| c.increase_pct_median), Value::F64),
        opt(f.slowdown_ci95, |i| Value::F64(i.0)),
        opt(f.slowdown_ci95, |i| Value::F64(i.1)),
        opt(f.on_demand.as_ref(), |e| Value::F64(e.per_run)),
        opt(f.on_demand.as_ref().and_then(|e| e.per_run_ci95), |i| {
            Value::F64(i.0)
        }),
        opt(f.on_demand.as_ref().and_then(|e| e.per_run_ci95), |i| {
            Value::F64(i.1)
        }),
        opt(f.committed.as_ref(), |e| Value::F64(e.per_run)),
        opt(f.committed.as_ref().and_then(|e| e.per_run_ci95), |i| {
            Value::F64(i.0)
        }),
        opt(f.committed.as_ref().and_then(|e| e.per_run_ci95), |i| {
            Value::F64(i.1)
        }),
        opt(f.job_runs, Value::F64),
        opt(f.on_demand.as_ref().and_then(|e| e.per_job), Value::F64),
        opt(f.committed.as_ref().and_then(|e| e.per_job), Value::F64),
        opt(f.rank.as_ref(), |r| Value::U64(r.of as u64)),
        opt(f.rank.as_ref(), |r| Value::U64(r.by_time as u64)),
        opt(f.rank.as_ref(), |r| Value::F64(r.time_ratio)),
        opt(f.rank.as_ref().and_then(|r| r.vs_fastest), |p| {
            round_ps(p.diff_mean_ps)
        }),
        opt(
            f.rank.as_ref().and_then(|r| r.vs_fastest?.diff_ci95_ps),
            |i| round_ps(i.lo),
        ),
        opt(
            f.rank.as_ref().and_then(|r| r.vs_fastest?.diff_ci95_ps),
            |i| round_ps(i.hi),
        ),
        opt(f.rank.as_ref().and_then(|r| r.by_cost), |k| {
            Value::U64(k as u64)
        }),
        opt(f.rank.as_ref().and_then(|r| r.cost_ratio), Value::F64),
        opt(f.why.as_ref(), |w| Value::U64(w.extra.n as u64)),
        opt(f.why.as_ref().and_then(|w| w.main), |(p, _)| {
            Value::Str(crate::why::PARTS[p].0)
        }),
        opt(f.why.as_ref().and_then(|w| w.main), |(_, s)| Value::F64(s)),
        match &f.verdict {
            Some(v) => Value::Str(v),
            None => Value::Null,
        },
    ]
}

/// Columns that follow [`CELL_COLUMNS`] in the CSV of a run: how the cell was made (so every
/// row carries its settings), then the versions.
pub const RUN_COLUMNS: [&str; 26] = [
    "partial",
    "run_status",
    "seed",
    "reps_rule",
    "model",
    "tick_ps",
    "profile",
    "profile_sha256",
    "L_near_ps",
    "o_near_ps",
    "g_near_ps",
    "G_near_ps_per_byte",
    "O_near_ps_per_byte",
    "S_near_bytes",
    "L_far_ps",
    "o_far_ps",
    "g_far_ps",
    "G_far_ps_per_byte",
    "O_far_ps_per_byte",
    "S_far_bytes",
    "rndv_3l",
    "nodes_per_switch",
    "workload_path",
    "workload_sha256",
    "tool_version",
    "schema_version",
];

/// The values of [`RUN_COLUMNS`] for one cell of `run`.
pub(crate) fn run_values<'a>(
    run: &'a crate::model::RunResult,
    cell: &'a crate::model::CellResult,
) -> Vec<Value<'a>> {
    let plan = &run.plan;
    let sys = plan.system(&cell.system);
    let wl = plan.workloads.iter().find(|w| w.name == cell.workload);
    let prof = sys.and_then(|s| s.profile.as_ref());
    let params = |p: Option<&'a crate::model::EngineParams>| -> [Value<'a>; 6] {
        match p {
            Some(p) => [
                Value::U64(p.l_ps),
                Value::U64(p.o_ps),
                Value::U64(p.g_ps),
                Value::F64(p.big_g_ps_per_byte),
                Value::F64(p.big_o_ps_per_byte),
                Value::U64(p.s_bytes),
            ],
            None => [
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
        }
    };
    let mut v = vec![
        Value::Bool(!cell.complete),
        Value::Str(match run.status {
            crate::model::Status::Complete => "complete",
            crate::model::Status::Interrupted => "interrupted",
        }),
        Value::U64(plan.settings.seed),
        Value::Owned(plan.settings.reps.short()),
        Value::Str(&plan.settings.model),
        Value::U64(plan.settings.tick_ps),
        prof.map_or(Value::Null, |p| Value::Str(&p.path)),
        prof.map_or(Value::Null, |p| Value::Str(&p.sha256)),
    ];
    v.extend(params(sys.map(|s| &s.near)));
    v.extend(params(sys.map(|s| s.far_or_near())));
    v.push(sys.map_or(Value::Null, |s| Value::Bool(s.near.rndv_3l)));
    v.push(
        sys.and_then(|s| s.nodes_per_switch)
            .map_or(Value::Null, |n| Value::U64(n as u64)),
    );
    v.push(wl.map_or(Value::Null, |w| Value::Str(&w.path)));
    v.push(wl.map_or(Value::Null, |w| Value::Str(&w.sha256)));
    v.push(Value::Str(&run.tool.version));
    v.push(Value::U64(run.schema_version as u64));
    debug_assert_eq!(v.len(), RUN_COLUMNS.len());
    v
}
