//! Spot (preemptible) capacity, issue 47: what a *job* costs on demand, committed and on spot
//! capacity that can be taken away, side by side. The binary computes the section
//! (`src/spot.rs`: jobs drawn over the cell's simulated run times with Poisson interruptions
//! across its nodes, keyed by (seed, job)) and attaches it to the result ([`RunResult::spot`]);
//! every renderer reads it from there: the text under the verdict ([`render_spot`]), the JSON
//! key `spot`, the CSV's [`SPOT_COLUMNS`], the HTML report and the verdict's clause
//! ([`verdict_clause`]).
//!
//! Spot is priced only when its price and interruption rate are both known (the run's flags
//! override the profile's values); otherwise the section says what is missing and nothing is
//! assumed. Times are seconds (`_s`), money US dollars (`_usd`).

use crate::fmt::fmt_usd;
use crate::model::RunResult;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The job settings of the spot section (`--checkpoint-every`, `--checkpoint-cost`,
/// `--restart-cost`), recorded in the plan's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpotSettings {
    /// Time to write one checkpoint, s.
    pub checkpoint_s: f64,
    /// Time lost after an interruption before work resumes, s.
    pub restart_s: f64,
    /// A fixed checkpoint interval (of work), s; absent: the best one at each node count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_every_s: Option<f64>,
    /// Jobs drawn per cell.
    pub jobs_drawn: u64,
}

/// A job's cost and time at one price.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JobCost {
    pub usd_per_node_hour: f64,
    pub mean_usd: f64,
    pub p95_usd: f64,
    pub mean_time_s: f64,
    pub p95_time_s: f64,
}

/// One node count of a (workload, system): the job priced three ways.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpotRow {
    pub nodes: u64,
    /// Runs per job.
    pub runs: f64,
    /// Expected work of the job without interruptions: runs × mean run time, s.
    pub work_s: f64,
    /// Without interruptions (on demand, committed): the drawn jobs' work.
    pub on_demand: Option<JobCost>,
    pub committed: Option<JobCost>,
    /// On spot capacity: the drawn jobs' time with checkpoints, lost work and restarts.
    pub spot: JobCost,
    /// Interruptions per job, mean of the drawn jobs.
    pub interruptions_mean: f64,
    /// The checkpoint interval used (of work), s.
    pub checkpoint_every_s: f64,
    /// Young's `√(2δ/Λ)` and Daly's optimum, s (absent without interruptions).
    pub young_s: Option<f64>,
    pub daly_s: Option<f64>,
    /// Expected spot job time by the closed form at `checkpoint_every_s` (each run taking the
    /// mean run time), s (at most 1e30).
    pub closed_form_time_s: f64,
    /// False when interruptions dominate (the closed form's time above 100 × the work, or
    /// above 1e5 interruptions per job): the spot job's mean and p95 are then the closed form's,
    /// not drawn.
    #[serde(default = "yes")]
    pub drawn: bool,
}

fn yes() -> bool {
    true
}

/// Spot capacity of one workload on one system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpotSystem {
    pub workload: String,
    pub system: String,
    pub spot_usd_per_node_hour: Option<f64>,
    pub interruptions_per_node_hour: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Why spot is not priced (absent when it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_priced: Option<String>,
    /// Per node count run, ascending.
    pub rows: Vec<SpotRow>,
    /// What spot is compared with: `on_demand`, else `committed` (absent: neither price known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compared_with: Option<String>,
    /// The largest node count run up to which spot's expected job cost stays below the
    /// compared price's (absent: not even at the smallest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pays_up_to_nodes: Option<u64>,
    /// The least node count run at which spot's expected job cost is at least the compared
    /// price's (absent: spot pays at every node count run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stops_paying_at_nodes: Option<u64>,
    /// The least node count at which it stops paying by the closed form, each run taking the
    /// mean run time of the largest node count run (an extrapolation; absent: never below
    /// 2^40 nodes, or nothing to compare with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stops_paying_nodes_closed_form: Option<u64>,
}

/// The spot section of a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpotResult {
    /// The noise mode whose cells are priced (the verdict's).
    pub noise_mode: String,
    pub systems: Vec<SpotSystem>,
}

/// Columns that follow [`crate::RUN_COLUMNS`] in the CSV of a run that has a spot section:
/// filled on the rows of the priced cells (the verdict's noise mode), empty elsewhere.
pub const SPOT_COLUMNS: [&str; 22] = [
    "spot_usd_per_node_hour",
    "spot_interruptions_per_node_hour",
    "spot_job_runs",
    "job_work_s",
    "on_demand_job_usd_mean",
    "on_demand_job_usd_p95",
    "committed_job_usd_mean",
    "committed_job_usd_p95",
    "job_time_s_mean",
    "job_time_s_p95",
    "spot_job_usd_mean",
    "spot_job_usd_p95",
    "spot_job_time_s_mean",
    "spot_job_time_s_p95",
    "spot_job_time_s_closed_form",
    "spot_interruptions_per_job_mean",
    "checkpoint_every_s",
    "checkpoint_every_s_young",
    "checkpoint_every_s_daly",
    "spot_pays_up_to_nodes",
    "spot_stops_paying_at_nodes",
    "spot_not_priced",
];

impl SpotResult {
    /// The spot entry of (workload, system).
    pub fn system(&self, workload: &str, system: &str) -> Option<&SpotSystem> {
        self.systems
            .iter()
            .find(|s| s.workload == workload && s.system == system)
    }
}

impl SpotRow {
    /// The checkpoint interval as shown: `none` when it is at least the job's work (the job
    /// runs in one segment and never checkpoints), else the interval.
    pub fn checkpoint_text(&self) -> String {
        if self.checkpoint_every_s >= self.work_s {
            "none".into()
        } else {
            fmt_secs(self.checkpoint_every_s)
        }
    }
}

impl SpotSystem {
    /// The row of `nodes`.
    pub fn row(&self, nodes: u64) -> Option<&SpotRow> {
        self.rows.iter().find(|r| r.nodes == nodes)
    }

    /// `pays up to 4096 nodes`, `stops paying at 64 nodes`, …: where spot stops paying.
    pub fn where_it_pays(&self) -> String {
        if self.compared_with.is_none() {
            return "is not compared: the profile has no on-demand or committed price".into();
        }
        let est = self
            .stops_paying_nodes_closed_form
            .map(|n| format!("; by the closed form it stops paying at about {n} nodes"))
            .unwrap_or_default();
        match (self.pays_up_to_nodes, self.stops_paying_at_nodes) {
            (_, None) => format!(
                "pays at every node count run (up to {}){est}",
                self.rows.last().map_or(0, |r| r.nodes)
            ),
            (Some(n), Some(m)) => format!("pays up to {n} nodes, stops paying at {m}"),
            (None, Some(m)) => format!("does not pay even at {m} nodes"),
        }
    }
}

/// The CSV values of [`SPOT_COLUMNS`] for cell `c` (empty strings where nothing applies).
pub(crate) fn csv_values(run: &RunResult, c: &crate::model::CellResult) -> Vec<String> {
    let f = |v: Option<f64>| {
        v.filter(|x| x.is_finite())
            .map(|x| x.to_string())
            .unwrap_or_default()
    };
    let u = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    let Some(spot) = run.spot.as_ref().filter(|s| s.noise_mode == c.noise_mode) else {
        return vec![String::new(); SPOT_COLUMNS.len()];
    };
    let Some(sys) = spot.system(&c.workload, &c.system) else {
        return vec![String::new(); SPOT_COLUMNS.len()];
    };
    let row = sys.row(c.nodes);
    let job = |k: Option<&JobCost>, g: fn(&JobCost) -> f64| f(k.map(g));
    vec![
        f(sys.spot_usd_per_node_hour),
        f(sys.interruptions_per_node_hour),
        f(row.map(|r| r.runs)),
        f(row.map(|r| r.work_s)),
        job(row.and_then(|r| r.on_demand.as_ref()), |j| j.mean_usd),
        job(row.and_then(|r| r.on_demand.as_ref()), |j| j.p95_usd),
        job(row.and_then(|r| r.committed.as_ref()), |j| j.mean_usd),
        job(row.and_then(|r| r.committed.as_ref()), |j| j.p95_usd),
        f(row
            .and_then(|r| r.on_demand.or(r.committed))
            .map(|j| j.mean_time_s)),
        f(row
            .and_then(|r| r.on_demand.or(r.committed))
            .map(|j| j.p95_time_s)),
        job(row.map(|r| &r.spot), |j| j.mean_usd),
        job(row.map(|r| &r.spot), |j| j.p95_usd),
        job(row.map(|r| &r.spot), |j| j.mean_time_s),
        job(row.map(|r| &r.spot), |j| j.p95_time_s),
        f(row.map(|r| r.closed_form_time_s)),
        f(row.map(|r| r.interruptions_mean)),
        f(row.map(|r| r.checkpoint_every_s)),
        f(row.and_then(|r| r.young_s)),
        f(row.and_then(|r| r.daly_s)),
        u(sys.pays_up_to_nodes),
        u(sys.stops_paying_at_nodes),
        sys.not_priced.clone().unwrap_or_default(),
    ]
}

/// A duration for people: `12.5 s`, `3.2 min`, `4.10 h`.
pub fn fmt_secs(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s < 0.1 {
        // A job of one short run: "0.0 s" would hide it.
        loggops_units::fmt_time_ps_f64(s * 1e12)
    } else if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.2} h", s / 3600.0)
    }
}

/// `$0.70/node-hour, 0.002 interruptions per node-hour (source)`.
pub fn describe_inputs(s: &SpotSystem) -> String {
    let price = s
        .spot_usd_per_node_hour
        .map_or("price unknown".into(), |p| {
            format!("{}/node-hour", crate::fmt::fmt_price(p))
        });
    let rate = s
        .interruptions_per_node_hour
        .map_or("interruption rate unknown".into(), |r| {
            if r > 0.0 {
                format!(
                    "{} interruptions per node-hour (one per {} per node)",
                    crate::fmt::fmt_rate(r),
                    fmt_secs(3600.0 / r)
                )
            } else {
                "never interrupted".into()
            }
        });
    let src = s
        .source
        .as_deref()
        .map(|x| format!("; {x}"))
        .unwrap_or_else(|| "; source not given".into());
    format!("{price}, {rate}{src}")
}

/// The verdict's clause for (workload, system): `spot: $X per job expected (p95 $Y), pays up
/// to N nodes`, or why spot is not priced; `None` without a spot section.
pub fn verdict_clause(run: &RunResult, workload: &str, system: &str, nodes: u64) -> Option<String> {
    let sys = run.spot.as_ref()?.system(workload, system)?;
    if let Some(why) = &sys.not_priced {
        return Some(format!("spot: not priced ({why})"));
    }
    let row = sys.row(nodes)?;
    let vs = match (&row.on_demand, &row.committed) {
        (Some(j), _) => format!("; on demand {}", fmt_usd(j.mean_usd)),
        (None, Some(j)) => format!("; committed {}", fmt_usd(j.mean_usd)),
        _ => String::new(),
    };
    let pays = if sys.compared_with.is_none() {
        String::new()
    } else {
        match (sys.pays_up_to_nodes, sys.stops_paying_at_nodes) {
            (_, None) => match sys.stops_paying_nodes_closed_form {
                Some(n) => format!(", pays at every node count run (closed form: up to about {n})"),
                None => ", pays at every node count run".into(),
            },
            (Some(n), Some(_)) => format!(", pays up to {n} nodes"),
            (None, Some(m)) => format!(", does not pay even at {m} nodes"),
        }
    };
    Some(format!(
        "spot: {} per job expected (p95 {}{vs}){pays}",
        fmt_usd(row.spot.mean_usd),
        fmt_usd(row.spot.p95_usd)
    ))
}

/// The spot section under the verdict (empty without one).
pub fn render_spot(run: &RunResult) -> String {
    let Some(spot) = &run.spot else {
        return String::new();
    };
    let mut s = String::new();
    let set = run.plan.settings.spot.as_ref();
    let _ = writeln!(
        s,
        "Spot capacity (noise {}; a job = {}; checkpoint {}, restart {}{}; {} jobs drawn per \
         cell):",
        spot.noise_mode,
        run.plan
            .settings
            .job
            .map_or("1 run".into(), |j| j.describe()),
        set.map_or("-".into(), |x| fmt_secs(x.checkpoint_s)),
        set.map_or("-".into(), |x| fmt_secs(x.restart_s)),
        set.and_then(|x| x.checkpoint_every_s)
            .map(|t| format!(", every {} of work", fmt_secs(t)))
            .unwrap_or_default(),
        set.map_or(0, |x| x.jobs_drawn)
    );
    let money = |v: Option<f64>| v.map_or("-".to_string(), fmt_usd);
    for sys in &spot.systems {
        let _ = writeln!(
            s,
            "  {}, {}: {}",
            sys.workload,
            sys.system,
            describe_inputs(sys)
        );
        if let Some(why) = &sys.not_priced {
            let _ = writeln!(s, "    not priced: {why}");
            continue;
        }
        let mut table = vec![[
            "nodes".to_string(),
            "runs".into(),
            "on-demand mean".into(),
            "p95".into(),
            "committed mean".into(),
            "p95".into(),
            "time".into(),
            "spot mean".into(),
            "p95".into(),
            "spot time".into(),
            "closed form".into(),
            "interr.".into(),
            "checkpoint every".into(),
        ]];
        for r in &sys.rows {
            let nd = r.on_demand.or(r.committed);
            table.push([
                r.nodes.to_string(),
                format!("{:.0}", r.runs),
                money(r.on_demand.map(|j| j.mean_usd)),
                money(r.on_demand.map(|j| j.p95_usd)),
                money(r.committed.map(|j| j.mean_usd)),
                money(r.committed.map(|j| j.p95_usd)),
                nd.map_or(fmt_secs(r.work_s), |j| fmt_secs(j.mean_time_s)),
                fmt_usd(r.spot.mean_usd),
                fmt_usd(r.spot.p95_usd),
                fmt_secs(r.spot.mean_time_s),
                fmt_secs(r.closed_form_time_s),
                if r.interruptions_mean > 0.0 && r.interruptions_mean < 0.01 {
                    format!("{:.1e}", r.interruptions_mean)
                } else {
                    format!("{:.2}", r.interruptions_mean)
                },
                format!(
                    "{}{}",
                    r.checkpoint_text(),
                    match (r.daly_s, r.young_s) {
                        (Some(d), Some(y)) =>
                            format!(" (Daly {}, Young {})", fmt_secs(d), fmt_secs(y)),
                        _ => String::new(),
                    }
                ),
            ]);
        }
        let w: Vec<usize> = (0..13)
            .map(|i| {
                table
                    .iter()
                    .map(|r| r[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for r in &table {
            let line: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:>w$}", w = w[i]))
                .collect();
            let _ = writeln!(s, "    {}", line.join("  ").trim_end());
        }
        let _ = writeln!(s, "    spot {}", sys.where_it_pays());
    }
    s
}
