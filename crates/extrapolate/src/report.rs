//! What was inferred, and the schedule beside the traces it came from.

use std::fmt::Write as _;

use loggops_engine::{simulate, Config, NoNoise, OpKind, Params, Program};
use loggops_units::{fmt_time_ps, format_duration};

use crate::error::ExtrapError;
use crate::fit::{DurFit, SizeFit};
use crate::loops::Node;
use crate::template::{Key, Template};
use crate::trace::Trace;
use crate::write::Model;
use crate::Options;

/// Messages, bytes, computation and noiseless time of a program.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    pub messages: u64,
    pub bytes: u128,
    /// Mean computation per rank (ps).
    pub compute: f64,
    /// Noiseless finishing time (ps), when simulated and complete.
    pub time: Option<u64>,
    /// The same with every computation removed: communication alone.
    pub comm_time: Option<u64>,
}

/// A program with every computation made zero-length.
struct NoCompute<'a, P: Program>(&'a P);

impl<P: Program> Program for NoCompute<'_, P> {
    fn num_ranks(&self) -> u32 {
        self.0.num_ranks()
    }
    fn num_cpus(&self) -> u8 {
        self.0.num_cpus()
    }
    fn num_nics(&self) -> u8 {
        self.0.num_nics()
    }
    fn num_ops(&self, rank: u32) -> u32 {
        self.0.num_ops(rank)
    }
    fn op(&self, rank: u32, id: u32) -> loggops_engine::Op {
        let mut o = self.0.op(rank, id);
        if o.kind == OpKind::Calc {
            o.size = 0;
        }
        o
    }
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        self.0.depcount(rank, id)
    }
    fn num_roots(&self, rank: u32) -> u32 {
        self.0.num_roots(rank)
    }
    fn root(&self, rank: u32, k: u32) -> u32 {
        self.0.root(rank, k)
    }
    fn for_each_dependent<F: FnMut(u32)>(
        &self,
        rank: u32,
        id: u32,
        kind: loggops_engine::DepKind,
        f: F,
    ) {
        self.0.for_each_dependent(rank, id, kind, f)
    }
    fn dense_counters(&self) -> bool {
        self.0.dense_counters()
    }
    fn has_start_dependents(&self) -> bool {
        self.0.has_start_dependents()
    }
}

fn run_time<P: Program>(p: &P, params: &Params) -> Option<u64> {
    let out = simulate(p, &Config::new(*params), &mut NoNoise).ok()?;
    out.leftovers.is_empty().then(|| out.max().0)
}

/// One row of the side-by-side table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub p: u32,
    pub file: String,
    /// Used to infer the schedule (or only compared with it).
    pub input: bool,
    pub trace: Counts,
    /// `None` when the schedule cannot run at P (the grid does not allow it).
    pub schedule: Option<Counts>,
}

/// What was inferred.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub inputs: Vec<(String, u32)>,
    pub grid: String,
    pub wraps: String,
    pub allows: String,
    pub template_calls: usize,
    pub collectives: usize,
    pub classes_at_largest: usize,
    pub phases: Vec<String>,
    pub sizes: Vec<String>,
    pub compute_mode: String,
    pub compute_kinds: String,
    pub rows: Vec<Row>,
    /// At --nodes: P, messages, bytes, computation per rank in ps (no time: run the schedule
    /// for that).
    pub target: Option<(u32, u64, u128, f64)>,
    pub params: String,
    pub notes: Vec<String>,
}

fn counts<P: Program>(p: &P, params: Option<&Params>) -> Counts {
    let mut c = Counts::default();
    let mut comp: u128 = 0;
    for r in 0..p.num_ranks() {
        for i in 0..p.num_ops(r) {
            let o = p.op(r, i);
            match o.kind {
                OpKind::Send => {
                    c.messages += 1;
                    c.bytes += o.size as u128;
                }
                OpKind::Calc => comp += o.size as u128,
                OpKind::Recv => {}
            }
        }
    }
    c.compute = comp as f64 / p.num_ranks().max(1) as f64;
    if let Some(params) = params {
        c.time = run_time(p, params);
        c.comm_time = run_time(&NoCompute(p), params);
    }
    c
}

fn dims_text(rule: crate::grid::GridRule, p: u32) -> String {
    match rule.dims(p) {
        Some(d) => d[..rule.ndims()]
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" × "),
        None => "-".to_string(),
    }
}

/// Summaries of the template's phases: runs of calls between repetitions.
fn phases(t: &Template, m: &Model) -> Vec<String> {
    fn describe(idx: &[usize], t: &Template, m: &Model) -> String {
        let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
        let mut colls: Vec<String> = Vec::new();
        let mut offs = std::collections::BTreeSet::new();
        for &i in idx {
            match &t.entries[i].key {
                Key::P2p { send, nb, off, .. } => {
                    let verb = match (send, nb) {
                        (true, false) => "send",
                        (true, true) => "isend",
                        (false, false) => "recv",
                        (false, true) => "irecv",
                    };
                    let size = m.stmts[i]
                        .size
                        .as_ref()
                        .map(|s| s.text())
                        .unwrap_or_default();
                    *kinds.entry(format!("{verb} {size}")).or_default() += 1;
                    if let crate::template::Off::Grid(o) = off {
                        offs.insert(*o);
                    }
                }
                Key::Wait => {
                    *kinds
                        .entry(if t.entries[i].all { "waitall" } else { "wait" }.to_string())
                        .or_default() += 1
                }
                Key::Coll(_) => colls.push(m.stmts[i].text.clone()),
            }
        }
        let mut parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} × {k}")).collect();
        if !offs.is_empty() {
            parts.push(format!("{} partner offsets", offs.len()));
        }
        if !colls.is_empty() {
            parts.push(colls.join(", "));
        }
        parts.join("; ")
    }
    let mut out = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let flush = |run: &mut Vec<usize>, out: &mut Vec<String>| {
        if !run.is_empty() {
            out.push(format!(
                "calls {}–{}: {}",
                run[0] + 1,
                run[run.len() - 1] + 1,
                describe(run, t, m)
            ));
            run.clear();
        }
    };
    for nd in &m.nodes {
        match nd {
            Node::Call(i) => run.push(*i),
            Node::Repeat { n, start, len, .. } => {
                flush(&mut run, &mut out);
                let body: Vec<usize> = (*start..start + len).collect();
                out.push(format!(
                    "repeat {n} × calls {}–{} (each repetition: {})",
                    start + 1,
                    start + len,
                    describe(&body, t, m)
                ));
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

fn size_lines(m: &Model) -> Vec<String> {
    let mut constant = std::collections::BTreeSet::new();
    let mut forms = std::collections::BTreeSet::new();
    let mut approx = Vec::new();
    for s in &m.stmts {
        match &s.size {
            Some(SizeFit::Const(v)) => {
                constant.insert(*v);
            }
            Some(f @ SizeFit::Approx { err, .. }) => {
                approx.push(format!(
                    "{} (closest form, off by up to {:.1} % on the traced means)",
                    f.text(),
                    err * 100.0
                ));
            }
            Some(f) => {
                forms.insert(f.text());
            }
            None => {}
        }
    }
    let mut out = Vec::new();
    if !constant.is_empty() {
        let v: Vec<String> = constant.iter().map(|b| format!("{b}B")).collect();
        out.push(format!("constant in P: {}", v.join(", ")));
    }
    if !forms.is_empty() {
        out.push(format!(
            "functions of P, exact at every traced size: {}",
            forms.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    for a in approx {
        out.push(format!("not exact: {a}"));
    }
    out
}

fn compute_kinds(m: &Model) -> String {
    let mut c = [0usize; 5];
    let all = m
        .gaps
        .iter()
        .map(|g| &g.0)
        .chain(m.trailing.iter().map(|t| &t.0));
    let mut zero = 0;
    for f in all {
        match f {
            DurFit::Const(0) => zero += 1,
            DurFit::Const(_) => c[0] += 1,
            DurFit::Inv(_) => c[1] += 1,
            DurFit::Affine(..) => c[2] += 1,
            DurFit::Linear(..) => c[3] += 1,
            DurFit::Square(..) => c[4] += 1,
        }
    }
    format!(
        "{} computations fitted: {} constant, {} ∝ 1/P, {} a + b/P, {} a + b·P, {} a + b·P² ({} zero)",
        c.iter().sum::<usize>() + zero,
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        zero
    )
}

/// The grid dimensions that wrap around (`x`, `y`, `z`).
fn wrapping(t: &Template, m: &Model) -> Vec<&'static str> {
    ["x", "y", "z"][..m.grid_rule.ndims()]
        .iter()
        .zip(t.grid.periodic)
        .filter(|(_, w)| *w)
        .map(|(n, _)| *n)
        .collect()
}

/// The schedule's header comments.
pub fn header(traces: &[Trace], t: &Template, m: &Model, opts: &Options) -> String {
    let mut h = String::from("loggops-schedule 1\n");
    let _ = writeln!(
        h,
        "# Extrapolated by `loggops-sim extrapolate` ({}) from:",
        env!("CARGO_PKG_VERSION")
    );
    for tr in traces {
        let _ = writeln!(h, "#   {} (P = {})", tr.path.display(), tr.p);
    }
    if !opts.command.is_empty() {
        let _ = writeln!(h, "# Command: {}", opts.command);
    }
    let _ = writeln!(
        h,
        "# Plain calc numbers of the traces were read as ticks of {}.",
        format_duration(opts.tick_ps)
    );
    if t.entries.iter().any(|e| matches!(e.key, Key::P2p { .. })) {
        let wrap = wrapping(t, m);
        let _ = writeln!(
            h,
            "# Process grid: {}; {}; rank = x + nx*(y + ny*z). Runs at P = {}.",
            m.grid_rule.describe(),
            if wrap.is_empty() {
                "no dimension wraps around".to_string()
            } else {
                format!("{} wrap around", wrap.join(", "))
            },
            m.grid_rule.allows()
        );
    } else {
        let _ = writeln!(
            h,
            "# No point-to-point calls: collectives only; runs at any P ≥ 2."
        );
    }
    let _ = writeln!(
        h,
        "# {} calls per rank in the template ({}); a point-to-point call happens where its partner exists.",
        t.entries.len(),
        compute_kinds(m)
    );
    let _ = writeln!(
        h,
        "# Computation: --compute {}, fitted per call on each traced size's mean over ranks.",
        match opts.compute {
            crate::ComputeMode::Weak => "weak (constant in P)",
            crate::ComputeMode::Strong => "strong (∝ 1/P)",
            crate::ComputeMode::Best if traces.len() < 3 => {
                "best (per call, constant or ∝ 1/P, whichever fits the traced sizes better)"
            }
            crate::ComputeMode::Best => "best (per call, the form that best predicts the largest traced size from the smaller ones)",
        }
    );
    let _ = writeln!(
        h,
        "# The mpi {{ }} block's meaning: goal/README.md, \"MPI calls\".\n"
    );
    h
}

/// Builds the report: runs the traces and the schedule at every traced size.
pub fn build(
    traces: &[Trace],
    t: &Template,
    m: &Model,
    schedule: &str,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, ExtrapError> {
    let mut rows = Vec::new();
    let row =
        |tr: &Trace, input: bool, progress: &mut dyn FnMut(&str)| -> Result<Row, ExtrapError> {
            progress(&format!(
                "simulating {} and the schedule at P = {}",
                tr.name(),
                tr.p
            ));
            let tc = counts(&tr.program, Some(&opts.params));
            let sc = match crate::instantiate(schedule, tr.p) {
                Ok(s) => Some(counts(&s, Some(&opts.params))),
                Err(_) => None,
            };
            Ok(Row {
                p: tr.p,
                file: tr.name(),
                input,
                trace: tc,
                schedule: sc,
            })
        };
    for tr in traces {
        rows.push(row(tr, true, progress)?);
    }
    for path in &opts.compare {
        progress(&format!("reading {}", path.display()));
        let tr = crate::trace::load(path, opts.tick_ps)?;
        rows.push(row(&tr, false, progress)?);
    }
    let target = match opts.nodes {
        Some(n) => {
            progress(&format!("counting messages at {n} ranks"));
            let s = crate::instantiate(schedule, n)?;
            let c = counts(&s, None);
            Some((n, c.messages, c.bytes, c.compute))
        }
        None => None,
    };
    let mut notes = t.notes.clone();
    notes.extend(growth_note(traces, m, &rows, target));
    let largest = traces.iter().max_by_key(|x| x.p).expect("traces");
    let classes_at_largest = {
        let mut seen = std::collections::HashSet::new();
        for r in &largest.ranks {
            let shape: Vec<u8> = r
                .calls
                .iter()
                .map(|c| match c.kind {
                    crate::trace::CallKind::P2p { .. } => 0,
                    crate::trace::CallKind::Wait { .. } => 1,
                    crate::trace::CallKind::Coll { .. } => 2,
                })
                .collect();
            seen.insert(shape);
        }
        seen.len()
    };
    let wrap = wrapping(t, m);
    let has_p2p = t.entries.iter().any(|e| matches!(e.key, Key::P2p { .. }));
    let p = opts.params;
    Ok(Report {
        inputs: traces.iter().map(|x| (x.name(), x.p)).collect(),
        grid: if has_p2p {
            format!(
                "{} ({})",
                m.grid_rule.describe(),
                traces
                    .iter()
                    .map(|x| format!("{} at P = {}", dims_text(m.grid_rule, x.p), x.p))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            "none (no point-to-point calls)".to_string()
        },
        wraps: if wrap.is_empty() {
            "none".to_string()
        } else {
            wrap.join(", ")
        },
        allows: if has_p2p {
            m.grid_rule.allows().to_string()
        } else {
            "any ≥ 2".to_string()
        },
        template_calls: t.entries.len(),
        collectives: t
            .entries
            .iter()
            .filter(|e| matches!(e.key, Key::Coll(_)))
            .count(),
        classes_at_largest,
        phases: phases(t, m),
        sizes: size_lines(m),
        compute_mode: format!("{:?}", opts.compute).to_lowercase(),
        compute_kinds: compute_kinds(m),
        rows,
        target,
        params: format!(
            "L={} o={} g={} G={:.3}ns/B O={:.3}ns/B S={}B",
            fmt_time_ps(p.l),
            fmt_time_ps(p.o),
            fmt_time_ps(p.g),
            p.big_g.as_f64() / 1000.0,
            p.big_o.as_f64() / 1000.0,
            p.s
        ),
        notes,
    })
}

/// A warning when computation fitted as growing with P multiplies the computation per rank at
/// --nodes beyond the largest traced size's: traces taken with more ranks than cores grow this
/// way, and the growth is then extrapolated with the rest.
fn growth_note(
    traces: &[Trace],
    m: &Model,
    rows: &[Row],
    target: Option<(u32, u64, u128, f64)>,
) -> Option<String> {
    let (n, _, _, at_n) = target?;
    let growing = m
        .gaps
        .iter()
        .map(|g| &g.0)
        .chain(m.trailing.iter().map(|t| &t.0))
        .filter(|f| matches!(f, DurFit::Linear(..) | DurFit::Square(..)))
        .count();
    let largest = traces.iter().map(|x| x.p).max()?;
    let traced = rows
        .iter()
        .find(|r| r.input && r.p == largest)?
        .schedule
        .as_ref()?
        .compute;
    if growing == 0 || n <= largest || at_n <= 2.0 * traced {
        return None;
    }
    Some(format!(
        "{growing} computations grow with P (a + b·P, a + b·P²): at --nodes {n} the computation \
         per rank is {} ({:.0}× the schedule's at P = {largest}); traces taken with more ranks \
         than cores grow this way, and --compute weak (constant) or strong (∝ 1/P) states the \
         scaling instead",
        fmt_time_ps(at_n as u64),
        at_n / traced
    ))
}

fn pct(a: f64, b: f64) -> String {
    if a == 0.0 {
        if b == 0.0 {
            "0.0%".to_string()
        } else {
            "-".to_string()
        }
    } else {
        format!("{:+.1}%", (b - a) / a * 100.0)
    }
}

impl Report {
    /// The report as text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .map(|(n, p)| format!("{n} (P = {p})"))
            .collect();
        let _ = writeln!(s, "extrapolated from {}", inputs.join(", "));
        let _ = writeln!(
            s,
            "grid: {}; wraps around: {}; runs at P = {}",
            self.grid, self.wraps, self.allows
        );
        let _ = writeln!(
            s,
            "template: {} calls per rank ({} collectives); {} kind{} of ranks at the largest traced size",
            self.template_calls,
            self.collectives,
            self.classes_at_largest,
            if self.classes_at_largest == 1 { "" } else { "s" }
        );
        for ph in &self.phases {
            let _ = writeln!(s, "  {ph}");
        }
        for l in &self.sizes {
            let _ = writeln!(s, "message sizes: {l}");
        }
        let _ = writeln!(
            s,
            "computation (--compute {}): {}",
            self.compute_mode, self.compute_kinds
        );
        let _ = writeln!(
            s,
            "\n{:>7}  {:<28} {:>22} {:>7}  {:>26} {:>7}  {:>22} {:>7}  {:>22} {:>7}  {:>22} {:>7}",
            "P",
            "trace",
            "messages trace/sched",
            "diff",
            "bytes trace/sched",
            "diff",
            "compute/rank tr/sched",
            "diff",
            "noiseless tr/sched",
            "diff",
            "comm. only tr/sched",
            "diff"
        );
        for r in &self.rows {
            let name = format!("{}{}", r.file, if r.input { "" } else { " (left out)" });
            match &r.schedule {
                None => {
                    let _ = writeln!(
                        s,
                        "{:>7}  {:<28} the schedule's grid cannot lay out P = {}",
                        r.p, name, r.p
                    );
                }
                Some(c) => {
                    let t = &r.trace;
                    let time = |x: Option<u64>| x.map_or("incomplete".to_string(), fmt_time_ps);
                    let _ = writeln!(
                        s,
                        "{:>7}  {:<28} {:>22} {:>7}  {:>26} {:>7}  {:>22} {:>7}  {:>22} {:>7}  {:>22} {:>7}",
                        r.p,
                        name,
                        format!("{}/{}", t.messages, c.messages),
                        pct(t.messages as f64, c.messages as f64),
                        format!("{}/{}", t.bytes, c.bytes),
                        pct(t.bytes as f64, c.bytes as f64),
                        format!("{}/{}", fmt_time_ps(t.compute as u64), fmt_time_ps(c.compute as u64)),
                        pct(t.compute, c.compute),
                        format!("{}/{}", time(t.time), time(c.time)),
                        match (t.time, c.time) {
                            (Some(a), Some(b)) => pct(a as f64, b as f64),
                            _ => "-".to_string(),
                        },
                        format!("{}/{}", time(t.comm_time), time(c.comm_time)),
                        match (t.comm_time, c.comm_time) {
                            (Some(a), Some(b)) => pct(a as f64, b as f64),
                            _ => "-".to_string(),
                        }
                    );
                }
            }
        }
        let _ = writeln!(
            s,
            "(noiseless runs with {}, LogGOPSim's rules; comm. only: every computation removed)",
            self.params
        );
        // A traced size the schedule was fitted to, or a trace left out to check it, that the
        // schedule does not reproduce: say so, and why.
        for r in &self.rows {
            let at = if r.input {
                format!("at the traced size P = {}", r.p)
            } else {
                format!("at the left-out trace {} (P = {})", r.file, r.p)
            };
            let Some(c) = &r.schedule else {
                if !r.input {
                    let _ = writeln!(
                        s,
                        "warning: {at} the schedule cannot be laid out: nothing is compared"
                    );
                }
                continue;
            };
            if !r.input && c.messages != r.trace.messages {
                let _ = writeln!(
                    s,
                    "warning: {at} the schedule sends {} messages where the trace sends {} ({}): a trace of another program, or of the same program run with other parameters (time steps, problem size), does not follow the schedule",
                    c.messages,
                    r.trace.messages,
                    pct(r.trace.messages as f64, c.messages as f64)
                );
                continue;
            }
            let off = |a: Option<u64>, b: Option<u64>| match (a, b) {
                (Some(a), Some(b)) if a > 0 => Some((b as f64 - a as f64) / a as f64),
                _ => None,
            };
            let Some(e) = off(r.trace.time, c.time).filter(|e| e.abs() > 0.10) else {
                continue;
            };
            let compute_off = r.trace.compute > 0.0
                && ((c.compute - r.trace.compute) / r.trace.compute).abs() > 0.10;
            let cause = match off(r.trace.comm_time, c.comm_time) {
                Some(ce) if ce.abs() <= 0.10 && compute_off => format!(
                    "communication alone matches ({:+.1} %); the computation fit (--compute {}) misses the trace's mean computation per rank by {}",
                    100.0 * ce,
                    self.compute_mode,
                    pct(r.trace.compute, c.compute)
                ),
                Some(ce) if ce.abs() <= 0.10 => format!(
                    "communication alone ({:+.1} %) and the mean computation per rank ({}) match: the computation fit (--compute {}) gives each call one value for all ranks, while the trace's critical path follows the ranks that compute most",
                    100.0 * ce,
                    pct(r.trace.compute, c.compute),
                    self.compute_mode
                ),
                _ => "communication alone differs too".to_string(),
            };
            let _ = writeln!(
                s,
                "warning: {at} the schedule's noiseless time is {:+.1} % off the trace's; {cause}",
                100.0 * e
            );
        }
        if let Some((n, msgs, bytes, compute)) = self.target {
            let _ = writeln!(
                s,
                "at --nodes {n}: {msgs} messages, {bytes} bytes, computation {} per rank; simulate it with `loggops-sim --goal SCHEDULE --nodes {n}`",
                fmt_time_ps(compute as u64)
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }
}
