//! A run's cells prepared per plot kind: grouped into panels with their hues, and turned into
//! the runtime (boxes), cost (bars) and ECDF (curves) sections; the banner of a partial run.

use super::figure::{AxisUnit, BarItem, BoxItem, Curve, CurvePanel, Panel, Section};
use super::{DrawResult, PlotError, PlotKind};
use crate::cell::Cell;
use crate::model::RunResult;

/// How cells are grouped into panels, and what the hue is.
struct Grouping {
    /// `(panel title, cell indices)`.
    panels: Vec<(String, Vec<usize>)>,
    hues: Vec<String>,
    hue_of: Vec<usize>,
}

fn grouping(run: &RunResult, skip_none: bool) -> Grouping {
    let plan = &run.plan;
    let by_system = plan.noise_modes.len() == 1 && plan.systems.len() > 1;
    let keep = |i: usize| !(skip_none && run.cells[i].noise_mode == "none");
    let hues: Vec<String> = if by_system {
        plan.systems.iter().map(|s| s.name.clone()).collect()
    } else {
        plan.noise_modes
            .iter()
            .filter(|m| !(skip_none && m.as_str() == "none"))
            .cloned()
            .collect()
    };
    let hue_of: Vec<usize> = run
        .cells
        .iter()
        .map(|c| {
            let key = if by_system { &c.system } else { &c.noise_mode };
            hues.iter().position(|h| h == key).unwrap_or(0)
        })
        .collect();
    let mut panels: Vec<(String, Vec<usize>)> = Vec::new();
    for w in &plan.workloads {
        if by_system {
            let idx: Vec<usize> = (0..run.cells.len())
                .filter(|&i| run.cells[i].workload == w.name && keep(i))
                .collect();
            if !idx.is_empty() {
                panels.push((w.name.clone(), idx));
            }
        } else {
            for s in &plan.systems {
                let idx: Vec<usize> = (0..run.cells.len())
                    .filter(|&i| {
                        run.cells[i].workload == w.name && run.cells[i].system == s.name && keep(i)
                    })
                    .collect();
                if !idx.is_empty() {
                    // Without a profile there is one system, the flags' parameters.
                    let title = if s.profile.is_none() && plan.systems.len() == 1 {
                        w.name.clone()
                    } else {
                        format!("{} · {}", w.name, s.name)
                    };
                    panels.push((title, idx));
                }
            }
        }
    }
    Grouping {
        panels,
        hues,
        hue_of,
    }
}

fn runtime_section(run: &RunResult, stats: &[Cell]) -> Section {
    let g = grouping(run, false);
    let panels = g
        .panels
        .iter()
        .map(|(title, idx)| Panel::Boxes {
            title: title.clone(),
            items: idx
                .iter()
                .map(|&i| {
                    let s = &stats[i].summary;
                    let outliers = run.cells[i]
                        .samples_ps
                        .iter()
                        .map(|&t| t as f64)
                        .filter(|&t| t < s.whisker_lo || t > s.whisker_hi)
                        .collect();
                    let c = &run.cells[i];
                    BoxItem {
                        nodes: c.nodes,
                        hue: g.hue_of[i],
                        n: c.samples_ps.len(),
                        noiseless: c
                            .noiseless_ps
                            .filter(|_| c.noise_mode != "none")
                            .map(|t| t as f64),
                        q1: s.q1,
                        median: s.median,
                        q3: s.q3,
                        notch: (s.notch.lo, s.notch.hi),
                        whiskers: (s.whisker_lo, s.whisker_hi),
                        mean: s.mean,
                        outliers,
                    }
                })
                .collect(),
        })
        .collect();
    Section {
        title: if run.cells.iter().all(|c| c.samples_ps.len() == 1) {
            "Runtime per node count (one run per cell, noiseless: diamonds)".into()
        } else {
            "Runtime per node count (boxes: quartiles; notches: 95% CI of the median; \
             whiskers: 1.5 IQR; dots: outliers; white square: mean; dashed line: noiseless \
             time; diamond: a single run)"
                .into()
        },
        hues: g.hues,
        panels,
    }
}

fn cost_section(run: &RunResult, stats: &[Cell]) -> Section {
    let g = grouping(run, true);
    let panels = g
        .panels
        .iter()
        .map(|(title, idx)| Panel::Bars {
            title: title.clone(),
            items: idx
                .iter()
                .filter_map(|&i| {
                    let c = stats[i].cost.as_ref()?;
                    Some(BarItem {
                        nodes: run.cells[i].nodes,
                        hue: g.hue_of[i],
                        value: c.increase_pct_mean?,
                        ci: c.increase_pct_ci95.map(|ci| (ci.lo, ci.hi)),
                    })
                })
                .collect(),
        })
        .collect();
    Section {
        title: "Cost inflation: mean cost increase over the noiseless run (bars), with its 95% CI"
            .into(),
        hues: g.hues,
        panels,
    }
}

/// The ECDF of samples as a step line.
pub fn ecdf_points(samples: &[u64]) -> Vec<(f64, f64)> {
    let mut s: Vec<u64> = samples.to_vec();
    s.sort_unstable();
    let n = s.len() as f64;
    let mut pts = Vec::with_capacity(2 * s.len());
    for (i, &x) in s.iter().enumerate() {
        pts.push((x as f64, i as f64 / n));
        pts.push((x as f64, (i + 1) as f64 / n));
    }
    pts
}

fn spans(curves: &[Curve]) -> bool {
    let xs = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(x), b.max(x)));
    lo > 0.0 && hi / lo > 5.0
}

fn ecdf_section(run: &RunResult) -> Section {
    let g = grouping(run, false);
    let panels = g
        .panels
        .iter()
        .map(|(title, idx)| {
            let top = idx.iter().map(|&i| run.cells[i].nodes).max().unwrap_or(0);
            let curves: Vec<Curve> = idx
                .iter()
                .filter(|&&i| run.cells[i].nodes == top)
                .map(|&i| Curve {
                    label: g.hues[g.hue_of[i]].clone(),
                    points: ecdf_points(&run.cells[i].samples_ps),
                })
                .collect();
            Panel::Curves(CurvePanel {
                title: format!("{title} · {top} nodes"),
                x_desc: "time per run".into(),
                y_desc: "fraction of repetitions".into(),
                x_unit: AxisUnit::TimePs,
                y_unit: AxisUnit::Fraction,
                x_log: spans(&curves),
                y_log: false,
                curves,
            })
        })
        .collect();
    Section {
        title: "Distribution (ECDF) at the largest node count".into(),
        hues: g.hues,
        panels,
    }
}
pub(super) fn sections(run: &RunResult, kind: PlotKind) -> DrawResult<Vec<Section>> {
    if run.cells.is_empty() {
        return Err(PlotError::Empty("the run has no cells with samples".into()));
    }
    let stats = run
        .cells_summarised()
        .map_err(|e| PlotError::Draw(e.to_string()))?;
    let mut out = Vec::new();
    if matches!(kind, PlotKind::All | PlotKind::Runtime) {
        out.push(runtime_section(run, &stats));
    }
    if matches!(kind, PlotKind::All | PlotKind::Cost) {
        let s = cost_section(run, &stats);
        if !s.panels.is_empty() || kind == PlotKind::Cost {
            out.push(s);
        }
    }
    let distributions = run.cells.iter().any(|c| c.samples_ps.len() > 1);
    if matches!(kind, PlotKind::All | PlotKind::Ecdf) && (distributions || kind == PlotKind::Ecdf) {
        if !distributions {
            return Err(PlotError::Empty(
                "every cell is a single (noiseless) run: a distribution needs --noise".into(),
            ));
        }
        out.push(ecdf_section(run));
    }
    out.retain(|s| !s.panels.is_empty());
    if out.is_empty() {
        return Err(PlotError::Empty(
            "no noisy cell has a cost increase (run with --noise and --noise-mode)".into(),
        ));
    }
    Ok(out)
}
/// The `PARTIAL RESULT` banner of a partial run.
pub(super) fn banner(run: &RunResult) -> Option<String> {
    if !run.is_partial() {
        return None;
    }
    let (complete, partial, missing) = run.cell_counts();
    let why = match run.status {
        crate::model::Status::Interrupted => "interrupted (Ctrl-C)",
        crate::model::Status::Complete => "incomplete",
    };
    Some(format!(
        "PARTIAL RESULT, {why}: {complete} cell(s) complete, {partial} cut short, {missing} \
         not run"
    ))
}
