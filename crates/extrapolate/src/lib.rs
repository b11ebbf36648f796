//! loggops-extrapolate: an MPI application traced at a few small scales, as a rank-parametric
//! schedule that runs at any rank count its pattern allows.
//!
//! Input: traces of the same program at two or more rank counts, as Schedgen's trace
//! conversion writes them (`schedgen -p trace`, GOAL text or LogGOPSim binary, optionally xz).
//! [`extrapolate`]:
//! 1. decodes every rank back into MPI calls ([`trace`]) and recognises the collectives
//!    ([`coll`]);
//! 2. detects the process grid from who talks to whom ([`grid`]);
//! 3. merges every rank's calls into one *template* with partners as grid offsets, and checks
//!    that every rank of every trace makes exactly the template's calls that happen on it
//!    ([`template`]); anything else is refused, naming the first rank, op and scale;
//! 4. fits sizes and computation in P ([`fit`]), finds the repetitions ([`loops`]) and writes
//!    an `mpi { }` block ([`write`]) in the format of `goal/README.md`;
//! 5. instantiates the schedule at every traced size and compares it op for op with the trace
//!    (computation aside), then reports messages, bytes and noiseless times side by side
//!    ([`report`]).
//!
//! [`replicate`] is Schedgen's `--traces-extr k`: k copies of one trace, collectives rebuilt.

pub mod coll;
pub mod error;
pub mod fit;
pub mod grid;
pub mod loops;
pub mod replicate;
pub mod report;
pub mod template;
pub mod trace;
pub mod write;

use std::path::PathBuf;

use loggops_engine::{DepKind, OpKind, Params, Program};

pub use error::{ExtrapError, Refusal};
pub use fit::ComputeMode;
pub use replicate::{program_of, replicate};
pub use report::Report;

use crate::error::refuse;
use crate::trace::Trace;

/// What to extrapolate and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The rank count the user asks about (checked against the grid, counted in the report).
    pub nodes: Option<u32>,
    pub compute: ComputeMode,
    /// Picoseconds per tick of the traces' plain calc numbers (1000: Schedgen's ns).
    pub tick_ps: u64,
    /// LogGOPS parameters of the report's noiseless times.
    pub params: Params,
    /// Traces to compare the schedule with that are not used to infer it (leave-one-out).
    pub compare: Vec<PathBuf>,
    /// The command line, for the schedule's header.
    pub command: String,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            nodes: None,
            compute: ComputeMode::Best,
            tick_ps: 1000,
            params: Params::loggopsim_defaults_ps(),
            compare: Vec::new(),
            command: String::new(),
        }
    }
}

/// A schedule and what was inferred.
#[derive(Debug)]
pub struct Extrapolation {
    /// The rank-parametric schedule (goal/README.md format).
    pub schedule: String,
    pub report: Report,
}

/// Extrapolates traces of one program at two or more scales. `progress` hears what is being
/// done (for long runs).
pub fn extrapolate(
    paths: &[PathBuf],
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Extrapolation, ExtrapError> {
    if paths.len() < 2 {
        return Err(ExtrapError::Usage(format!(
            "extrapolation needs traces of the same program at two or more rank counts, got {}; to copy one trace k times use --replicate",
            paths.len()
        )));
    }
    let mut traces: Vec<Trace> = Vec::with_capacity(paths.len());
    for p in paths {
        progress(&format!("reading {}", p.display()));
        let t = trace::load(p, opts.tick_ps)?;
        template::refuse_wildcards(&t)?;
        if let Some(prev) = traces.iter().find(|x| x.p == t.p) {
            return Err(ExtrapError::Usage(format!(
                "{} and {} both have {} ranks; give traces at different rank counts",
                prev.path.display(),
                p.display(),
                t.p
            )));
        }
        if t.p < 2 {
            return Err(refuse(
                t.p,
                p,
                0,
                None,
                "a trace of one rank says nothing about who talks to whom",
                "trace at 2 ranks or more",
            ));
        }
        traces.push(t);
    }
    traces.sort_by_key(|t| t.p);
    progress("detecting the process grid");
    let scales: Vec<(u32, Vec<(u32, u32)>)> = traces
        .iter()
        .map(|t| (t.p, template::partner_pairs(t)))
        .collect();
    let any_p2p = scales.iter().any(|s| !s.1.is_empty());
    let grid = if any_p2p {
        grid::detect(&scales).ok_or_else(|| {
            ExtrapError::Usage("no 1-, 2- or 3-D grid lays out every traced rank count".to_string())
        })?
    } else {
        grid::Grid::none()
    };
    if let Some(n) = opts.nodes {
        if any_p2p && grid.rule.dims(n).is_none() {
            // A property of every trace together, not of one trace's rank.
            return Err(ExtrapError::Usage(format!(
                "--nodes {n}: the traces' process grid is {}, which cannot lay out {n} ranks; \
                 ask for a rank count it allows: {}",
                grid.rule.describe(),
                grid.rule.allows()
            )));
        }
    }
    progress("building the call template");
    let tmpl = template::build(&traces, grid)?;
    progress("fitting sizes and computation, finding repetitions");
    let tick = opts.tick_ps.max(1);
    let model = write::model(&tmpl, opts.compute, tick);
    let mut schedule = report::header(&traces, &tmpl, &model, opts);
    schedule.push_str(&write::body_text(&tmpl, &model));
    // the schedule must give back every trace (computation aside)
    let exact = model
        .stmts
        .iter()
        .all(|s| s.size.as_ref().is_none_or(|f| f.is_exact()));
    for t in &traces {
        progress(&format!(
            "checking the schedule against {} (P = {})",
            t.name(),
            t.p
        ));
        let s = instantiate(&schedule, t.p)?;
        // the trace as decoded (waits on requests completed before dropped)
        let decoded = replicate::program_of(&t.ranks)?;
        if let Some((r, op, what)) = difference(&decoded, &s, exact) {
            return Err(refuse(
                t.p,
                &t.path,
                r,
                Some(op),
                format!("the inferred schedule does not give back this trace: {what}"),
                "this is a limit of the extrapolator: the traces follow one pattern by every check it makes, yet the schedule it wrote differs; please report it with the traces",
            ));
        }
    }
    progress("comparing noiseless runs");
    let report = report::build(&traces, &tmpl, &model, &schedule, opts, progress)?;
    Ok(Extrapolation { schedule, report })
}

/// Instantiates schedule text at `p` ranks.
pub fn instantiate(text: &str, p: u32) -> Result<loggops_schedgen::Schedule, ExtrapError> {
    loggops_schedgen::parse_schedule_str(text, "extrapolated schedule", p, &[] as &[(&str, &str)])
        .map_err(|e| ExtrapError::Schedule {
            p,
            source: Box::new(e),
        })
}

/// The first difference between a trace and a schedule: ops (a computation's duration aside;
/// sizes too unless `sizes`), dependencies, roots. `(rank, op, what)`.
pub fn difference<A: Program, B: Program>(
    trace: &A,
    sched: &B,
    sizes: bool,
) -> Option<(u32, u32, String)> {
    if trace.num_ranks() != sched.num_ranks() {
        return Some((
            0,
            0,
            format!("{} ranks vs {}", trace.num_ranks(), sched.num_ranks()),
        ));
    }
    fn deps<P: Program>(p: &P, r: u32, i: u32, kind: DepKind) -> Vec<u32> {
        let mut v = Vec::new();
        p.for_each_dependent(r, i, kind, |x| v.push(x));
        v
    }
    for r in 0..trace.num_ranks() {
        let (n, m) = (trace.num_ops(r), sched.num_ops(r));
        for i in 0..n.min(m) {
            let (a, b) = (trace.op(r, i), sched.op(r, i));
            let same = a.kind == b.kind
                && (a.kind == OpKind::Calc
                    || (a.peer == b.peer && a.tag == b.tag && (!sizes || a.size == b.size)));
            if !same {
                return Some((
                    r,
                    i,
                    format!("op l{} is {a:?} in the trace, {b:?} in the schedule", i + 1),
                ));
            }
            if trace.depcount(r, i) != sched.depcount(r, i) {
                return Some((
                    r,
                    i,
                    format!(
                        "op l{} waits for {} ops in the trace, {} in the schedule",
                        i + 1,
                        trace.depcount(r, i),
                        sched.depcount(r, i)
                    ),
                ));
            }
            for kind in [DepKind::Done, DepKind::Start] {
                let (x, y) = (deps(trace, r, i, kind), deps(sched, r, i, kind));
                if x != y {
                    return Some((
                        r,
                        i,
                        format!(
                            "op l{} releases {:?} in the trace, {:?} in the schedule ({kind:?})",
                            i + 1,
                            x.iter().map(|q| q + 1).collect::<Vec<_>>(),
                            y.iter().map(|q| q + 1).collect::<Vec<_>>()
                        ),
                    ));
                }
            }
        }
        if n != m {
            return Some((
                r,
                n.min(m),
                format!("the rank has {n} ops in the trace, {m} in the schedule"),
            ));
        }
    }
    None
}
