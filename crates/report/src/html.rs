//! A one-file HTML report of a run: first the verdict (per workload and system at the largest
//! node count: how much slower, how much more expensive, and why; with several systems, how
//! they rank), then the command, the settings (seed, repetitions, noise options), every system
//! with its profile, SHA-256, provenance and parameters near and far, the workloads, the table
//! of results, why (the critical-path attribution of every cell that has one, as a table and
//! stacked bars), the plots inline (SVG) and a guide to the columns.
//!
//! The file is self-contained: styles are inline, plots are inline SVG, and nothing is loaded
//! from anywhere else, so it opens offline and can be mailed as it is. Every text taken from the
//! run (paths, names, notes, the command) is escaped.

use crate::fmt::fmt_usd;
use crate::fmt::{signed_time, signed_usd};
use crate::guide::TABLE_COLUMNS;
use crate::model::{RunResult, Status, SystemInfo};
use crate::plot::{render_svg, PlotError, PlotKind};
use crate::table::{columns, describe_params, Align};
use crate::verdict::Facts;
use crate::why::PARTS;
use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font-family: 'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif; margin: 2em auto;
       max-width: 1320px; padding: 0 1.5em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.sub { color: #555; margin-top: 0; }
.partial { background: #fff3cd; border: 1px solid #e0b000; padding: 0.7em 1em;
           border-radius: 4px; font-weight: bold; }
pre, code { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.88em; }
pre { background: #f5f5f5; padding: 0.7em 1em; border-radius: 4px; white-space: pre-wrap;
      word-break: break-all; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; font-size: 0.86em; }
table.results { font-size: 0.8em; }
table.results th, table.results td { padding: 0.2em 0.45em; }
.wide { overflow-x: auto; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f0f0f0; text-align: left; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.hash { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.8em; word-break: break-all; }
td.hash { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.85em; word-break: break-all; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1.2em; }
dl.kv dt { font-weight: bold; }
dl.kv dd { margin: 0; }
.plot { margin: 1em 0; overflow-x: auto; }
.plot svg { max-width: 100%; height: auto; border: 1px solid #eee; }
.small { font-size: 0.85em; color: #444; }
.verdict { background: #eef6ee; border: 1px solid #7bb07b; border-radius: 4px;
           padding: 0.6em 1em; }
.verdict li { margin: 0.3em 0; }
.bars svg { max-width: 100%; height: auto; }
td.good { background: #e3f3e3; }
td.bad { background: #f8e4e4; }
.why { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0.5em 2em;
       align-items: start; }
@media (max-width: 1000px) { .why { grid-template-columns: 1fr; } }
footer { margin-top: 3em; color: #666; font-size: 0.85em; }
";

fn params_cell(s: &SystemInfo) -> (String, String) {
    let near = describe_params(&s.near);
    let far = match &s.far {
        Some(f) => describe_params(f),
        None if s.profile.is_some() => "same as near".into(),
        None => "(no placements without a profile)".into(),
    };
    (near, far)
}

fn price(p: Option<f64>) -> String {
    p.map(|v| format!("{} per node-hour", crate::fmt::fmt_price(v)))
        .unwrap_or_else(|| "unknown".into())
}

fn systems_html(run: &RunResult, out: &mut String) {
    out.push_str(
        "<h2>Systems</h2>\n<div class=\"wide\"><table>\n<tr><th>system</th><th>near \
         (same switch)</th><th>far (across switches)</th><th>nodes per switch</th>\
         <th>prices per node-hour</th><th>profile and SHA-256</th></tr>\n",
    );
    for s in &run.plan.systems {
        let (near, far) = params_cell(s);
        let prices = if s.profile.is_some() {
            format!(
                "on-demand {}<br>committed {}",
                price(s.prices.on_demand_usd_per_node_hour),
                price(s.prices.committed_usd_per_node_hour)
            )
        } else {
            "-".into()
        };
        let profile = match &s.profile {
            Some(p) => format!(
                "<code>{}</code><br><span class=\"hash\">{}</span>",
                esc(&p.path),
                esc(&p.sha256)
            ),
            None => "parameters from the command line".into(),
        };
        let _ = writeln!(
            out,
            "<tr><td><b>{}</b><br><span class=\"small\">{}</span></td><td>{}</td><td>{}</td>\
             <td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.name),
            esc(&s.description),
            esc(&near),
            esc(&far),
            s.nodes_per_switch
                .map_or("-".to_string(), |n| n.to_string()),
            prices,
            profile
        );
    }
    out.push_str("</table></div>\n");
}

/// Where each profile came from: date, tool, captures, the calibrate command and notes.
fn provenance_html(run: &RunResult, out: &mut String) {
    if run.plan.systems.iter().all(|s| s.profile.is_none()) {
        return;
    }
    out.push_str("<h2>Provenance of the profiles</h2>\n");
    for s in &run.plan.systems {
        let Some(p) = &s.profile else { continue };
        let pv = &p.provenance;
        let _ = writeln!(
            out,
            "<h3>{} <span class=\"small\">(<code>{}</code>)</span></h3>",
            esc(&s.name),
            esc(&p.path)
        );
        out.push_str("<dl class=\"kv small\">\n");
        let mut kv = |k: &str, v: String| {
            let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
        };
        kv(
            "made",
            format!(
                "{} by loggops-sim {}",
                esc(&pv.created),
                esc(&pv.tool_version)
            ),
        );
        if !pv.sources.is_empty() {
            let list: Vec<String> = pv
                .sources
                .iter()
                .map(|x| format!("<code>{}</code>", esc(x)))
                .collect();
            kv("sources", list.join("<br>"));
        }
        if !pv.command.is_empty() {
            kv("command", format!("<code>{}</code>", esc(&pv.command)));
        }
        for n in &pv.notes {
            kv("note", esc(n));
        }
        out.push_str("</dl>\n");
    }
}

fn workloads_html(run: &RunResult, out: &mut String) {
    out.push_str("<h2>Workloads</h2>\n<table>\n<tr><th>workload</th><th>file</th><th>SHA-256</th><th>parameters</th></tr>\n");
    for w in &run.plan.workloads {
        let params: Vec<String> = w
            .params
            .iter()
            .map(|(k, v)| format!("{}={}", esc(k), esc(v)))
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"hash\">{}</td><td>{}</td></tr>",
            esc(&w.name),
            esc(&w.path),
            esc(&w.sha256),
            if params.is_empty() {
                "as in the file".into()
            } else {
                params.join(", ")
            }
        );
    }
    out.push_str("</table>\n");
}

fn results_html(run: &RunResult, facts: &[Facts], out: &mut String) {
    out.push_str("<h2>Results</h2>\n");
    let Ok(cells) = run.cells_summarised() else {
        out.push_str("<p>No cell has samples.</p>\n");
        return;
    };
    // One table per workload (the workload column would repeat on every row).
    for w in &run.plan.workloads {
        let rows: Vec<usize> = (0..cells.len())
            .filter(|&i| run.cells[i].workload == w.name)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let these: Vec<_> = rows.iter().map(|&i| cells[i].clone()).collect();
        let partial: Vec<bool> = rows.iter().map(|&i| !run.cells[i].complete).collect();
        let these_facts: Vec<Facts> = rows.iter().map(|&i| facts[i].clone()).collect();
        let cols: Vec<_> = columns(&these, &partial, &these_facts)
            .into_iter()
            .filter(|c| c.title != "workload")
            .collect();
        let _ = writeln!(out, "<h3>{}</h3>", esc(&w.name));
        out.push_str("<div class=\"wide\"><table class=\"results\">\n<tr>");
        for c in &cols {
            let _ = write!(out, "<th>{}</th>", esc(c.title));
        }
        out.push_str("</tr>\n");
        for row in 0..these.len() {
            out.push_str("<tr>");
            for c in &cols {
                let v = c.cells[row].as_deref().unwrap_or("-");
                let class = if c.align == Align::Right {
                    " class=\"num\""
                } else {
                    ""
                };
                let _ = write!(out, "<td{class}>{}</td>", esc(v));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></div>\n");
    }
    out.push_str(
        "<p class=\"small\">Times are simulated times of the whole collective (the latest rank), \
         with units. The JSON output (<code>--format json</code>) holds every number exactly and \
         every repetition.</p>\n",
    );
}

fn plots_html(run: &RunResult, out: &mut String) -> Result<(), PlotError> {
    out.push_str("<h2>Plots</h2>\n");
    for (kind, what) in [
        (PlotKind::Runtime, "Runtime"),
        (PlotKind::Cost, "Cost inflation"),
        (PlotKind::Ecdf, "Distributions"),
    ] {
        match render_svg(run, kind) {
            Ok(svg) => {
                let _ = writeln!(
                    out,
                    "<div class=\"plot\" aria-label=\"{what}\">{}</div>",
                    responsive(&svg)
                );
            }
            Err(PlotError::Empty(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The verdict: one sentence per workload and system at the largest node count.
fn verdict_html(run: &RunResult, facts: &[Facts], out: &mut String) {
    let lines: Vec<&str> = facts.iter().filter_map(|f| f.verdict.as_deref()).collect();
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h2>Verdict</h2>\n<div class=\"verdict\"><p class=\"small\">Noise {}, at the largest \
         node count: mean time against the noiseless run, extra cost of noise, and the part of \
         the extra time the critical paths spend most on.</p>\n<ul>",
        esc(crate::verdict::verdict_mode(run).unwrap_or(""))
    );
    for l in lines {
        let _ = writeln!(out, "<li>{}</li>", esc(l));
    }
    out.push_str("</ul></div>\n");
}

/// Spot capacity (issue 47): per workload and system, the job on demand, committed and on
/// spot at every node count, where spot stops paying, and the checkpoint interval.
fn spot_html(run: &RunResult, out: &mut String) {
    use crate::spot::{describe_inputs, fmt_secs};
    let Some(spot) = &run.spot else {
        return;
    };
    let set = run.plan.settings.spot.as_ref();
    let _ = writeln!(
        out,
        "<h2>Spot capacity</h2>\n<p class=\"small\">A job = {}, noise {}; every cost is the \
         job's (nodes × time × price per node-hour) over {} drawn jobs (runs drawn from the \
         cell's simulated run times, interruptions as a Poisson process over the job's nodes): \
         the p95 of the drawn jobs, the mean of their expected costs over the interruptions \
         (rare, costly interruptions count even when no drawn job meets one). On spot, the job checkpoints every <i>τ</i> of work (a checkpoint \
         costs {}) and loses the work since the last checkpoint plus a restart of {} at each \
         interruption; on demand and committed it is never interrupted. The closed form is the \
         expected spot time for runs of the mean run time; Young's and Daly's <i>τ</i> are \
         shown beside the one used.</p>",
        esc(&run
            .plan
            .settings
            .job
            .map_or("1 run".into(), |j| j.describe())),
        esc(&spot.noise_mode),
        set.map_or(0, |x| x.jobs_drawn),
        set.map_or("-".into(), |x| fmt_secs(x.checkpoint_s)),
        set.map_or("-".into(), |x| fmt_secs(x.restart_s)),
    );
    let money = |v: Option<f64>| v.map_or("-".to_string(), fmt_usd);
    for sys in &spot.systems {
        let _ = writeln!(
            out,
            "<h3>{}, {}</h3>\n<p>{}</p>",
            esc(&sys.workload),
            esc(&sys.system),
            esc(&describe_inputs(sys))
        );
        if let Some(why) = &sys.not_priced {
            let _ = writeln!(out, "<p><b>Spot not priced:</b> {}</p>", esc(why));
            continue;
        }
        let _ = writeln!(
            out,
            "<div class=\"wide\"><table class=\"results\">\n<tr><th>nodes</th><th>runs</th>\
             <th>on demand mean</th><th>p95</th><th>committed mean</th><th>p95</th>\
             <th>time</th><th>spot mean</th><th>p95</th><th>spot time</th>\
             <th>closed form</th><th>interr.</th><th>τ used</th><th>Young / Daly</th></tr>"
        );
        for r in &sys.rows {
            let base = r.on_demand.or(r.committed);
            let cheaper = base.is_some_and(|b| r.spot.mean_usd < b.mean_usd);
            let mark = if cheaper {
                " class=\"num good\""
            } else {
                " class=\"num bad\""
            };
            let _ = writeln!(
                out,
                "<tr><td class=\"num\">{}</td><td class=\"num\">{:.0}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td{mark}>{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{:.2}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 </tr>",
                r.nodes,
                r.runs,
                money(r.on_demand.map(|j| j.mean_usd)),
                money(r.on_demand.map(|j| j.p95_usd)),
                money(r.committed.map(|j| j.mean_usd)),
                money(r.committed.map(|j| j.p95_usd)),
                fmt_secs(base.map_or(r.work_s, |j| j.mean_time_s)),
                fmt_usd(r.spot.mean_usd),
                fmt_usd(r.spot.p95_usd),
                fmt_secs(r.spot.mean_time_s),
                fmt_secs(r.closed_form_time_s),
                r.interruptions_mean,
                r.checkpoint_text(),
                match (r.young_s, r.daly_s) {
                    (Some(y), Some(d)) => format!("{} / {}", fmt_secs(y), fmt_secs(d)),
                    _ => "-".into(),
                },
            );
        }
        let _ = match &sys.compared_with {
            Some(with) => writeln!(
                out,
                "</table></div>\n<p><b>Spot {}</b> (against {}).</p>",
                esc(&sys.where_it_pays()),
                esc(&with.replace('_', "-"))
            ),
            None => writeln!(
                out,
                "</table></div>\n<p><b>Spot {}</b>.</p>",
                esc(&sys.where_it_pays())
            ),
        };
    }
}

/// With several systems: per workload, the verdict cells side by side, ranked by mean time.
fn ranking_html(run: &RunResult, facts: &[Facts], out: &mut String) {
    if run.plan.systems.len() < 2 {
        return;
    }
    let Ok(stats) = run.cells_summarised() else {
        return;
    };
    let cells = crate::verdict::verdict_cells(run);
    if cells.len() < 2 {
        return;
    }
    out.push_str("<h2>Systems side by side</h2>\n");
    for w in &run.plan.workloads {
        let mut rows: Vec<usize> = cells
            .iter()
            .copied()
            .filter(|&i| run.cells[i].workload == w.name && facts[i].rank.is_some())
            .collect();
        if rows.is_empty() {
            continue;
        }
        rows.sort_by_key(|&i| facts[i].rank.as_ref().map(|r| r.by_time));
        let c0 = &run.cells[rows[0]];
        let _ = writeln!(
            out,
            "<h3>{} at {} nodes, noise {}</h3>\n<div class=\"wide\"><table class=\"results\">\n\
             <tr><th>rank by time</th><th>system</th><th>mean</th><th>x fastest</th>\
             <th title=\"this system's mean minus the fastest's, with the 95 % confidence \
             interval of the difference paired by repetition (the systems share their draws)\">\
             vs fastest (95 % CI)</th><th>noiseless</th><th>x-mean</th><th>$/run-od</th><th>rank by cost</th>\
             <th>x cheapest</th><th>$+/run-od</th></tr>",
            esc(&w.name),
            c0.nodes,
            esc(&c0.noise_mode)
        );
        for i in rows {
            let (c, f, st) = (&run.cells[i], &facts[i], &stats[i]);
            let r = f.rank.as_ref().expect("ranked");
            let od = st.cost.as_ref().and_then(|k| k.on_demand.as_ref());
            let _ = writeln!(
                out,
                "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                r.by_time,
                esc(&c.system),
                esc(&crate::fmt_time_ps_f64(st.summary.mean)),
                esc(&crate::fmt_ratio(r.time_ratio)),
                r.vs_fastest.map_or("-".into(), |p| esc(&p.brief())),
                c.noiseless_ps.map_or("-".into(), crate::fmt_time_ps),
                st.inflation_mean().map_or("-".into(), crate::fmt_ratio),
                od.map_or("-".into(), |p| esc(&crate::fmt_usd(p.usd_per_run_mean))),
                r.by_cost.map_or("-".into(), |k| k.to_string()),
                r.cost_ratio.map_or("-".into(), crate::fmt_ratio),
                f.on_demand
                    .as_ref()
                    .map_or("-".into(), |e| esc(&signed_usd(e.per_run))),
            );
        }
        out.push_str("</table></div>\n");
    }
}

/// The differences between noise modes and node counts, paired by repetition.
fn differences_html(run: &RunResult, out: &mut String) {
    let diffs = crate::paired::differences(run);
    if diffs.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Differences, paired by repetition</h2>\n<p>The cells of a run draw the same noise \
         where they share a message or a rank (common random numbers), so the difference of two \
         cells' means is estimated from the differences of their repetitions. Its 95 % \
         confidence interval is beside the one of independent draws (Welch's).</p>\n",
    );
    // A long list (a sweep of many systems, modes and node counts) starts folded.
    let folded = diffs.len() > DIFFERENCES_SHOWN;
    if folded {
        let _ = writeln!(
            out,
            "<details><summary>{} differences (click to show)</summary>",
            diffs.len()
        );
    }
    out.push_str(
        "<div class=\"wide\"><table class=\"results\">\n<tr><th>workload</th><th>system</th>\
         <th>cell</th><th>minus</th><th>reps</th><th>difference (95 % CI, paired)</th>\
         <th>95 % CI, unpaired</th></tr>\n",
    );
    for d in &diffs {
        let (a, b, p) = (&run.cells[d.a], &run.cells[d.b], &d.paired);
        let label = |c: &crate::model::CellResult| match d.varies {
            "nodes" => format!("{} nodes, {}", c.nodes, c.noise_mode),
            _ => format!("{}, {} nodes", c.noise_mode, c.nodes),
        };
        let unpaired = p.unpaired_ci95_ps.map_or("-".into(), crate::paired::span);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&a.workload),
            esc(&a.system),
            esc(&label(a)),
            esc(&label(b)),
            p.reps,
            esc(&p.brief()),
            esc(&unpaired),
        );
    }
    out.push_str("</table></div>\n");
    if folded {
        out.push_str("</details>\n");
    }
}

/// Differences the report shows unfolded.
const DIFFERENCES_SHOWN: usize = 24;

/// A colour per part of the critical path.
const PART_COLORS: [&str; 8] = [
    "#0072b2", "#56b4e9", "#009e73", "#e69f00", "#cc79a7", "#d55e00", "#785ef0", "#999933",
];

/// Horizontal stacked bars: per bar a label and values per part (negative ones to the left
/// of zero), drawn on one scale, each segment with a tooltip.
fn stacked_bars(bars: &[(String, [f64; 8])], unit: &dyn Fn(f64) -> String) -> String {
    let (w, label_w, h, gap) = (640.0, 190.0, 26.0, 12.0);
    let plot_w = w - label_w - 20.0;
    let neg: f64 = bars
        .iter()
        .map(|(_, v)| v.iter().filter(|x| **x < 0.0).sum::<f64>())
        .fold(0.0, f64::min);
    let pos: f64 = bars
        .iter()
        .map(|(_, v)| v.iter().filter(|x| **x > 0.0).sum::<f64>())
        .fold(0.0, f64::max);
    let span = (pos - neg).max(f64::MIN_POSITIVE);
    let x = |v: f64| label_w + (v - neg) / span * plot_w;
    let height = bars.len() as f64 * (h + gap) + 22.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height}\" \
         viewBox=\"0 0 {w} {height}\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"12\">"
    );
    for (k, (label, v)) in bars.iter().enumerate() {
        let y = k as f64 * (h + gap) + 4.0;
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            label_w - 8.0,
            y + h / 2.0 + 4.0,
            esc(label)
        );
        let (mut right, mut left) = (0.0f64, 0.0f64);
        for (i, &val) in v.iter().enumerate() {
            if val == 0.0 {
                continue;
            }
            let (a, b) = if val > 0.0 {
                right += val;
                (right - val, right)
            } else {
                left += val;
                (left, left - val)
            };
            // At least a pixel, so that a small part is seen.
            let width = (x(b) - x(a)).max(1.0);
            let _ = write!(
                svg,
                "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{h}\" \
                 fill=\"{}\"><title>{}: {}</title></rect>",
                x(a),
                PART_COLORS[i],
                esc(PARTS[i].1),
                esc(&unit(val))
            );
        }
        let total: f64 = v.iter().sum();
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" fill=\"#333\">{}</text>",
            (x(right) + 4.0).min(w - 60.0),
            y + h / 2.0 + 4.0,
            esc(&unit(total))
        );
    }
    // The zero line.
    let _ = write!(
        svg,
        "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"0\" y2=\"{1}\" stroke=\"#333\" \
         stroke-width=\"1\"/>",
        x(0.0),
        height - 18.0
    );
    svg.push_str("</svg>");
    svg
}

/// The legend of the parts' colours.
fn parts_legend() -> String {
    let mut s = String::from("<p class=\"small\">");
    for (i, (_, label, _)) in PARTS.iter().enumerate() {
        let _ = write!(
            s,
            "<span style=\"display:inline-block;width:0.9em;height:0.9em;background:{};\
             vertical-align:middle\"></span> {}&nbsp;&nbsp; ",
            PART_COLORS[i],
            esc(label)
        );
    }
    s.push_str("</p>\n");
    s
}

/// Why: per cell with an attribution, its parts (noiseless, the attributed repetitions' mean,
/// the extra time and its share) as a table and stacked bars.
fn why_html(run: &RunResult, facts: &[Facts], out: &mut String) {
    let rows: Vec<usize> = (0..run.cells.len())
        .filter(|&i| facts[i].why.is_some())
        .collect();
    out.push_str("<h2>Why: the critical path</h2>\n");
    if rows.is_empty() {
        out.push_str(
            "<p class=\"small\">No cell was attributed (noiseless run, or --why-reps 0). \
             <code>--critical-path</code> attributes every repetition.</p>\n",
        );
        return;
    }
    out.push_str(
        "<p class=\"small\">Every picosecond of a run's critical path (the chain of ops, \
         messages and waits that sets its finishing time) is one of these parts; they sum to \
         the finishing time. Time moving bytes is bandwidth (NIC gap), whichever op waits for \
         it; network noise is drawn minus noiseless L, G, o and g, negative where the draws \
         fell below the base. The extra time is the attributed repetitions' mean minus the \
         noiseless run, per part; repetitions' draws are keyed by repetition, so the first \
         ones are a random sample.</p>\n",
    );
    out.push_str(&parts_legend());
    for i in rows {
        let c = &run.cells[i];
        let w = facts[i].why.as_ref().expect("filtered");
        let e = &w.extra;
        let _ = writeln!(
            out,
            "<h3>{} · {} · {} nodes · {} <span class=\"small\">(repetitions {} of {} \
             attributed)</span></h3>\n<div class=\"why\"><div class=\"wide\"><table \
             class=\"results\">\n<tr><th>part</th><th>noiseless</th><th>mean</th>\
             <th>extra</th><th>share of the extra</th></tr>",
            esc(&c.workload),
            esc(&c.system),
            c.nodes,
            esc(&c.noise_mode),
            esc(&w.reps),
            c.samples_ps.len()
        );
        let base = c
            .why
            .as_ref()
            .and_then(|x| x.noiseless)
            .map(|p| p.parts.to_array())
            .unwrap_or_default();
        for (k, (_, label, _)) in PARTS.iter().enumerate() {
            let _ = writeln!(
                out,
                "<tr><td><span style=\"color:{}\">&#9632;</span> {}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                PART_COLORS[k],
                esc(label),
                esc(&crate::fmt_time_ps_f64(base[k] as f64)),
                esc(&crate::fmt_time_ps_f64(e.mean_parts_ps[k])),
                esc(&signed_time(e.extra_ps[k])),
                e.share(k)
                    .map_or("-".into(), |s| format!("{:.1}%", 100.0 * s)),
            );
        }
        let _ = writeln!(
            out,
            "<tr><th>total</th><th class=\"num\">{}</th><th class=\"num\">{}</th>\
             <th class=\"num\">{}</th><th class=\"num\">{}</th></tr>\n</table></div>",
            esc(&crate::fmt_time_ps(e.noiseless_ps)),
            esc(&crate::fmt_time_ps_f64(e.mean_ps)),
            esc(&signed_time(e.total_ps)),
            if e.total_ps > 0.0 { "100%" } else { "-" }
        );
        let unit = |v: f64| crate::fmt_time_ps_f64(v);
        let composition = stacked_bars(
            &[
                ("noiseless".to_string(), base.map(|v| v as f64)),
                (format!("mean of reps {}", w.reps), e.mean_parts_ps),
            ],
            &unit,
        );
        let extra = stacked_bars(&[("extra time".to_string(), e.extra_ps)], &signed_time);
        let _ = writeln!(
            out,
            "<div class=\"bars\"><p class=\"small\">The path's parts:</p>{composition}\
             <p class=\"small\">The extra time, per part (to the left of the line: parts the \
             noisy runs spend less on):</p>{extra}</div></div>"
        );
    }
}

/// `` `x` `` spans of escaped text as `<code>x</code>`.
fn code_spans(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// Gives an inline SVG a viewBox so that it scales with the page.
fn responsive(svg: &str) -> String {
    if svg.contains("viewBox") {
        return svg.to_string();
    }
    let attr = |name: &str| -> Option<String> {
        let key = format!("{name}=\"");
        let start = svg.find(&key)? + key.len();
        let end = svg[start..].find('"')? + start;
        Some(svg[start..end].to_string())
    };
    match (attr("width"), attr("height")) {
        (Some(w), Some(h)) => svg.replacen("<svg ", &format!("<svg viewBox=\"0 0 {w} {h}\" "), 1),
        _ => svg.to_string(),
    }
}

fn guide_html(out: &mut String) {
    out.push_str("<h2>Columns</h2>\n<dl class=\"kv\">\n");
    for (c, m) in TABLE_COLUMNS {
        let _ = writeln!(
            out,
            "<dt><code>{}</code></dt><dd>{}</dd>",
            esc(c),
            code_spans(&esc(m))
        );
    }
    out.push_str("</dl>\n");
    out.push_str(
        "<p class=\"small\">Quantiles follow numpy's default (linear) rule. The noiseless time \
         is one deterministic run of the same workload, system and node count. Costs price the \
         simulated time of the collective on all nodes; cost inflation does not depend on the \
         price.</p>\n",
    );
}

/// The report as one HTML document.
pub fn render_html(run: &RunResult) -> Result<String, PlotError> {
    let plan = &run.plan;
    let mut out = String::new();
    let title = {
        let w: Vec<&str> = plan.workloads.iter().map(|w| w.name.as_str()).collect();
        let s: Vec<&str> = plan.systems.iter().map(|s| s.name.as_str()).collect();
        format!("{} on {}", w.join(", "), s.join(", "))
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&run.tool.name),
        esc(&title)
    );
    let _ = writeln!(out, "<h1>{}</h1>", esc(&title));
    let _ = writeln!(
        out,
        "<p class=\"sub\">Simulated with {} {} (LogGOPS discrete-event simulation with measured \
         noise); results schema {}.</p>",
        esc(&run.tool.name),
        esc(&run.tool.version),
        run.schema_version
    );
    let facts = match run.cells_summarised() {
        Ok(stats) => crate::verdict::facts(run, &stats),
        Err(_) => vec![Facts::default(); run.cells.len()],
    };
    if run.is_partial() {
        let (complete, partial, missing) = run.cell_counts();
        let why = if run.status == Status::Interrupted {
            "The run was interrupted (Ctrl-C)"
        } else {
            "The run is incomplete"
        };
        let _ = writeln!(
            out,
            "<p class=\"partial\">PARTIAL RESULT. {why}: {complete} cell(s) complete, {partial} \
             cut short (their n is marked *), {missing} not run. The finished repetitions are \
             all shown.</p>"
        );
    }
    verdict_html(run, &facts, &mut out);
    ranking_html(run, &facts, &mut out);
    differences_html(run, &mut out);
    spot_html(run, &mut out);
    out.push_str("<h2>Run</h2>\n");
    let _ = writeln!(out, "<pre>{}</pre>", esc(&run.command));
    out.push_str("<dl class=\"kv\">\n");
    let st = &plan.settings;
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
    };
    kv("seed", st.seed.to_string());
    kv("repetitions", esc(&st.reps.describe()));
    if let Some(n) = &st.noise {
        kv("noise modes", esc(&plan.noise_modes.join(", ")));
        kv(
            "latency and G draws",
            if n.latency_scaling == "absolute" {
                "used as measured (--absolute-latency)".into()
            } else {
                "scaled so that their median is the system's L resp. G (the paper's convention)"
                    .into()
            },
        );
        kv(
            "OS noise",
            if n.cosched {
                "co-scheduled: every rank replays the trace in the same phase".into()
            } else {
                "every rank replays the trace from its own random phase".into()
            },
        );
    }
    kv(
        "node counts",
        if plan.nodes.is_empty() {
            "as in each schedule file".into()
        } else {
            plan.nodes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        },
    );
    if !st.param_flags.is_empty() {
        kv(
            "parameter flags",
            format!(
                "<code>{}</code> (override every system)",
                esc(&st.param_flags.join(" "))
            ),
        );
    }
    kv("order of freed ops", esc(&st.order));
    kv(
        "engine model",
        format!(
            "<code>{}</code> (how a rank's CPU and NIC are shared; <code>--model</code>)",
            esc(&st.model)
        ),
    );
    kv(
        "tick",
        format!(
            "{} (what a plain calc number of an explicit GOAL file means; <code>--tick</code>)",
            esc(&loggops_units::format_duration(st.tick_ps))
        ),
    );
    kv(
        "time unit",
        format!("{} (all JSON/CSV times are integers)", esc(&st.time_unit)),
    );
    out.push_str("</dl>\n");
    systems_html(run, &mut out);
    workloads_html(run, &mut out);
    results_html(run, &facts, &mut out);
    if run.plan.settings.noise.is_some() {
        why_html(run, &facts, &mut out);
    }
    plots_html(run, &mut out)?;
    guide_html(&mut out);
    provenance_html(run, &mut out);
    let _ = writeln!(
        out,
        "<footer>{} {} · results schema {} · status {}</footer>\n</body>\n</html>",
        esc(&run.tool.name),
        esc(&run.tool.version),
        run.schema_version,
        match run.status {
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
        }
    );
    Ok(out)
}

/// Writes [`render_html`] to `path`, atomically.
pub fn write_html(path: &std::path::Path, run: &RunResult) -> Result<(), PlotError> {
    let html = render_html(run)?;
    loggops_output::write_atomic(path, |w| w.write_all(html.as_bytes())).map_err(|source| {
        PlotError::Io {
            path: path.display().to_string(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<a href=\"x\">O'Neil & co</a>"),
            "&lt;a href=&quot;x&quot;&gt;O&#39;Neil &amp; co&lt;/a&gt;"
        );
    }

    #[test]
    fn svg_gets_a_view_box() {
        assert_eq!(
            responsive("<svg width=\"620\" height=\"380\" xmlns=\"x\"></svg>"),
            "<svg viewBox=\"0 0 620 380\" width=\"620\" height=\"380\" xmlns=\"x\"></svg>"
        );
    }
}
