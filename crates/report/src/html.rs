//! A one-file HTML report of a run: the command, the settings (seed, repetitions, noise
//! options), every system with its profile, SHA-256, provenance and parameters near and far,
//! the workloads, the table of results, the plots inline (SVG) and a guide to the columns.
//!
//! The file is self-contained: styles are inline, plots are inline SVG, and nothing is loaded
//! from anywhere else, so it opens offline and can be mailed as it is. Every text taken from the
//! run (paths, names, notes, the command) is escaped.

use crate::guide::TABLE_COLUMNS;
use crate::model::{RunResult, Status, SystemInfo};
use crate::plot::{render_svg, PlotError, PlotKind};
use crate::table::{columns, describe_params, Align};
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
    p.map(|v| format!("{} per node-hour", crate::fmt::fmt_usd(v)))
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

fn results_html(run: &RunResult, out: &mut String) {
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
        let cols: Vec<_> = columns(&these, &partial)
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
    results_html(run, &mut out);
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
    crate::write_atomic(path, |w| w.write_all(html.as_bytes())).map_err(|source| PlotError::Io {
        path: path.display().to_string(),
        source,
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
