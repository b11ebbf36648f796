//! The human-readable table: aligned columns, a unit on every number.
//!
//! Columns: `workload system nodes noise n mean ±ci95 median median-ci95 p95 p99 max outliers
//! noiseless x-mean x-median $/run-od $/run-cm cost+ $+/run-od $+/job-od rank-time rank-$`
//! ([`crate::guide::TABLE_COLUMNS`] says what each means). Optional columns (`±ci95`,
//! `median-ci95`, the noiseless time, inflation, prices, `cost+`, the extra cost of noise per
//! run and per job, the ranks among systems) are left out when no cell has a value for them.
//! With noise, the verdict ([`crate::verdict`]) follows the table.

use crate::cell::Cell;
use crate::fmt::{
    fmt_pct, fmt_per_byte, fmt_ratio, fmt_time_ps, fmt_time_ps_f64, fmt_usd, signed_usd,
};
use crate::model::{EngineParams, RepsRule, RunResult, Status, SystemInfo};
use crate::verdict::Facts;
use loggops_units::format_size;
use std::fmt::Write as _;
use std::io::{self, Write};

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// One column of an aligned table: a title and one optional text per row (`-` when absent).
pub(crate) struct Column {
    pub(crate) title: &'static str,
    pub(crate) align: Align,
    pub(crate) cells: Vec<Option<String>>,
}

impl Column {
    pub(crate) fn new(title: &'static str, align: Align, cells: Vec<Option<String>>) -> Column {
        Column {
            title,
            align,
            cells,
        }
    }
}

/// Renders the cells as an aligned text table (header, rule, one line per cell).
pub fn render_table(cells: &[Cell]) -> String {
    let facts = vec![Facts::default(); cells.len()];
    layout(
        &columns(cells, &vec![false; cells.len()], &facts),
        cells.len(),
    )
}

/// The table's columns (those with a value in some cell), `n` marked `*` on the cells flagged
/// in `partial`; `facts` are [`crate::verdict::facts`] of the cells.
pub(crate) fn columns(cells: &[Cell], partial: &[bool], facts: &[Facts]) -> Vec<Column> {
    let col = |title, align, f: &dyn Fn(&Cell) -> Option<String>| {
        Column::new(title, align, cells.iter().map(f).collect())
    };
    let fcol = |title, f: &dyn Fn(&Facts) -> Option<String>| {
        Column::new(title, Align::Right, facts.iter().map(f).collect())
    };
    let noisy = cells.iter().any(|c| c.labels.noise_mode != "none");
    use Align::{Left, Right};
    let columns = vec![
        col("workload", Left, &|c| Some(c.labels.workload.clone())),
        col("system", Left, &|c| Some(c.labels.system.clone())),
        col("nodes", Right, &|c| Some(c.labels.nodes.to_string())),
        col("noise", Left, &|c| Some(c.labels.noise_mode.clone())),
        Column::new(
            "n",
            Right,
            cells
                .iter()
                .zip(partial)
                .map(|(c, &p)| Some(format!("{}{}", c.summary.n, if p { "*" } else { "" })))
                .collect(),
        ),
        col("mean", Right, &|c| Some(fmt_time_ps_f64(c.summary.mean))),
        col("±ci95", Right, &|c| {
            c.summary
                .mean_ci95
                .map(|i| format!("±{}", fmt_time_ps_f64(i.half_width())))
        }),
        col("median", Right, &|c| {
            Some(fmt_time_ps_f64(c.summary.median))
        }),
        col("median-ci95", Right, &|c| {
            c.summary
                .median_ci95
                .map(|m| format!("{}..{}", fmt_time_ps(m.lo), fmt_time_ps(m.hi)))
        }),
        col("p95", Right, &|c| Some(fmt_time_ps_f64(c.summary.p95))),
        col("p99", Right, &|c| Some(fmt_time_ps_f64(c.summary.p99))),
        col("max", Right, &|c| Some(fmt_time_ps(c.summary.max))),
        col("outliers", Right, &|c| {
            Some(c.summary.outliers().to_string())
        }),
        col("noiseless", Right, &|c| {
            c.noiseless_ps.filter(|_| noisy).map(fmt_time_ps)
        }),
        col("x-mean", Right, &|c| c.inflation_mean().map(fmt_ratio)),
        col("x-median", Right, &|c| c.inflation_median().map(fmt_ratio)),
        col("$/run-od", Right, &|c| {
            c.cost
                .as_ref()
                .and_then(|k| k.on_demand.as_ref())
                .map(|p| fmt_usd(p.usd_per_run_mean))
        }),
        col("$/run-cm", Right, &|c| {
            c.cost
                .as_ref()
                .and_then(|k| k.committed.as_ref())
                .map(|p| fmt_usd(p.usd_per_run_mean))
        }),
        col("cost+", Right, &|c| {
            let k = c.cost.as_ref()?;
            // 0/0 (a noiseless run of 0 ps) shows as one "-", not "- ±-".
            let mean = k.increase_pct_mean.filter(|m| m.is_finite())?;
            Some(match k.increase_pct_ci95 {
                Some(ci) if c.labels.noise_mode != "none" => format!(
                    "{} ±{}",
                    fmt_pct(mean),
                    fmt_pct((ci.hi - ci.lo) / 2.0).trim_start_matches('+')
                ),
                _ => fmt_pct(mean),
            })
        }),
        fcol("$+/run-od", &|f| {
            f.on_demand.as_ref().map(|e| signed_usd(e.per_run))
        }),
        fcol("$+/job-od", &|f| {
            f.on_demand.as_ref().and_then(|e| e.per_job).map(signed_usd)
        }),
        fcol("rank-time", &|f| {
            f.rank
                .as_ref()
                .map(|r| format!("{}/{} {}", r.by_time, r.of, fmt_ratio(r.time_ratio)))
        }),
        fcol("rank-$", &|f| {
            let r = f.rank.as_ref()?;
            Some(format!(
                "{}/{} {}",
                r.by_cost?,
                r.priced,
                fmt_ratio(r.cost_ratio?)
            ))
        }),
    ];
    const ALWAYS: [&str; 11] = [
        "workload", "system", "nodes", "noise", "n", "mean", "median", "p95", "p99", "max",
        "outliers",
    ];
    columns
        .into_iter()
        .filter(|c| ALWAYS.contains(&c.title) || c.cells.iter().any(Option::is_some))
        .collect()
}

/// The columns as aligned text: the titles, a rule, then `rows` lines.
pub(crate) fn layout(columns: &[Column], rows: usize) -> String {
    let widths: Vec<usize> = columns
        .iter()
        .map(|c| {
            c.cells
                .iter()
                .map(|v| v.as_deref().unwrap_or("-").chars().count())
                .chain(std::iter::once(c.title.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();

    let mut out = String::new();
    let line = |out: &mut String, texts: &mut dyn Iterator<Item = &str>| {
        let mut parts = Vec::new();
        for ((text, col), &w) in texts.zip(columns).zip(&widths) {
            let pad = w - text.chars().count();
            parts.push(match col.align {
                Align::Left => format!("{text}{}", " ".repeat(pad)),
                Align::Right => format!("{}{text}", " ".repeat(pad)),
            });
        }
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut out, &mut columns.iter().map(|c| c.title));
    let rules: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&mut out, &mut rules.iter().map(String::as_str));
    for row in 0..rows {
        line(
            &mut out,
            &mut columns
                .iter()
                .map(|c| c.cells[row].as_deref().unwrap_or("-")),
        );
    }
    out
}

/// Writes [`render_table`] to `w`.
pub fn write_table<W: Write + ?Sized>(w: &mut W, cells: &[Cell]) -> io::Result<()> {
    w.write_all(render_table(cells).as_bytes())
}

/// A run as people read it: the tidy table of its cells, then the footer
/// ([`render_footer`]).
pub fn render_run_table(run: &RunResult) -> String {
    let mut out = match run.cells_summarised() {
        Ok(cells) => {
            let partial: Vec<bool> = run.cells.iter().map(|c| !c.complete).collect();
            let facts = crate::verdict::facts(run, &cells);
            let mut t = layout(&columns(&cells, &partial, &facts), cells.len());
            let v = crate::verdict::render_verdicts(run, &facts);
            if !v.is_empty() {
                t.push('\n');
                t.push_str(&v);
            }
            let spot = crate::spot::render_spot(run);
            if !spot.is_empty() {
                t.push('\n');
                t.push_str(&spot);
            }
            t
        }
        Err(e) => format!("{e}\n"),
    };
    out.push('\n');
    out.push_str(&render_footer(run));
    out
}

/// Writes [`render_run_table`] to `w`.
pub fn write_run_table<W: Write + ?Sized>(w: &mut W, run: &RunResult) -> io::Result<()> {
    w.write_all(render_run_table(run).as_bytes())
}

/// `L 1.90us, o 230ns, g 0ps, G 79ps/B, O 0ps/B, S 4KiB`.
pub fn describe_params(p: &EngineParams) -> String {
    format!(
        "L {}, o {}, g {}, G {}, O {}, S {}{}",
        fmt_time_ps(p.l_ps),
        fmt_time_ps(p.o_ps),
        fmt_time_ps(p.g_ps),
        fmt_per_byte(p.big_g_ps_per_byte),
        fmt_per_byte(p.big_o_ps_per_byte),
        format_size(p.s_bytes),
        if p.rndv_3l { ", rendezvous 3L" } else { "" }
    )
}

/// One line per system: its profile, content hash and parameters near and far.
pub fn describe_system(s: &SystemInfo) -> String {
    let mut out = String::new();
    match &s.profile {
        Some(p) => {
            let _ = write!(out, "{}: profile {} (sha256 {})", s.name, p.path, p.sha256);
        }
        None => {
            let _ = write!(out, "{}: parameters from the command line", s.name);
        }
    }
    let _ = write!(out, "; near {}", describe_params(&s.near));
    match &s.far {
        Some(f) => {
            let _ = write!(out, "; far {}", describe_params(f));
        }
        None if s.profile.is_some() => out.push_str("; far = near"),
        None => {}
    }
    if let Some(n) = s.nodes_per_switch {
        let _ = write!(
            out,
            "; {n} node{} per switch",
            if n == 1 { "" } else { "s" }
        );
    }
    if let Some(t) = &s.latency_by_size {
        let _ = write!(out, "; latency by size (one way, on top of L and G): {t}");
    }
    if let Some(m) = &s.mpi_progress {
        let _ = write!(out, "; MPI progress {m}");
    }
    if let Some(w) = s.latency_episodes {
        let _ = write!(
            out,
            "; a repetition runs inside a latency episode with probability {:.1} %",
            100.0 * w
        );
    }
    let price = |p: Option<f64>| p.map(|v| format!("{}/node-hour", crate::fmt::fmt_price(v)));
    match (
        price(s.prices.on_demand_usd_per_node_hour),
        price(s.prices.committed_usd_per_node_hour),
    ) {
        (None, None) if s.profile.is_some() => out.push_str("; no prices"),
        (None, None) => {}
        (od, cm) => {
            let _ = write!(
                out,
                "; on-demand {}, committed {}",
                od.as_deref().unwrap_or("unknown"),
                cm.as_deref().unwrap_or("unknown")
            );
        }
    }
    out
}

/// The settings under the table: status (when partial), seed and repetition rule, noise
/// options, every system and workload with its content hash, the tool and schema version.
pub fn render_footer(run: &RunResult) -> String {
    let mut out = String::new();
    let plan = &run.plan;
    if run.is_partial() {
        let (complete, partial, missing) = run.cell_counts();
        let why = match run.status {
            Status::Interrupted => "interrupted (Ctrl-C)",
            Status::Complete => "incomplete",
        };
        let _ = writeln!(
            out,
            "PARTIAL RESULT, {why}: {complete} cell(s) complete, {partial} cut short (n marked *), \
             {missing} not run"
        );
    }
    let st = &plan.settings;
    let _ = write!(
        out,
        "seed {}; {}; {} model",
        st.seed,
        st.reps.describe(),
        st.model
    );
    if let RepsRule::Auto { max, precision, .. } = st.reps {
        // Cells the rule stopped at its cap without the precision it aims at.
        let short = run
            .cells
            .iter()
            .filter(|c| {
                c.samples_ps.len() as u64 >= max && !crate::stats::precise(&c.samples_ps, precision)
            })
            .count();
        if short > 0 {
            let _ = write!(
                out,
                "; --reps auto did NOT reach its precision in {short} cell(s) by {max} repetitions \
                 (their CIs are wider; give --reps N for more)"
            );
        }
    }
    if let Some(n) = &st.noise {
        // Only the kinds of noise some cell ran (a `net` run has no OS noise to describe).
        let ran = |kind: &str| plan.noise_modes.iter().any(|m| m.contains(kind));
        if ran("net") {
            let _ = write!(
                out,
                "; latency and G draws {}",
                if n.latency_scaling == "absolute" {
                    "used as measured (--absolute-latency)"
                } else {
                    "scaled so their median is L resp. G"
                }
            );
        }
        if ran("os") {
            let _ = write!(
                out,
                "; OS noise {}",
                if n.cosched {
                    "co-scheduled (same phase on every rank)"
                } else {
                    "replayed from a random phase per rank"
                }
            );
        }
    }
    // What ran the noisy repetitions (the answers are the same whichever did).
    let mut engines: Vec<&str> = run
        .cells
        .iter()
        .filter_map(|c| c.engine.as_deref())
        .collect();
    engines.dedup();
    match engines.as_slice() {
        [] => {}
        [one] => {
            let _ = write!(out, "; engine {one}");
        }
        many => {
            let _ = write!(out, "; engines by cell: {}", many.join(" / "));
        }
    }
    if st.order != "stable" {
        let _ = write!(out, "; {} order", st.order);
    }
    if !st.param_flags.is_empty() {
        let _ = write!(out, "; parameter flags {}", st.param_flags.join(" "));
    }
    if plan.workloads.iter().any(|w| w.explicit) {
        let _ = write!(
            out,
            "; plain calc numbers are ticks of {}",
            loggops_units::format_duration(st.tick_ps)
        );
    }
    out.push('\n');
    for s in &plan.systems {
        let _ = writeln!(out, "{}", describe_system(s));
    }
    for w in &plan.workloads {
        let _ = write!(out, "{}: {}", w.name, w.path);
        // Empty when only this table shows the run (the hash costs as much as a noiseless run).
        if !w.sha256.is_empty() {
            let _ = write!(out, " (sha256 {})", w.sha256);
        }
        if !w.params.is_empty() {
            let kv: Vec<String> = w.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = write!(out, " with {}", kv.join(" "));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} {}, results schema {}; JSON and CSV times in integer {}; columns: {} --help",
        run.tool.name, run.tool.version, run.schema_version, st.time_unit, run.tool.name
    );
    out
}
