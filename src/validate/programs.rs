//! The programs `validate` simulates by default (`--simulate program`): what each measured
//! benchmark program did per iteration, as a schedule in program order.
//!
//! Per rank: `usleep(1)` (a 1 µs wait outside MPI; the real sleep is longer, and the same for
//! every rank), the `MPI_Barrier` (a dissemination barrier of 1-byte messages on tags of its
//! own), the first `MPI_Wtime` (a calc of length 0, or of the `--call-overhead`), the calls
//! `goal2mpi.py` wrote for the rank's part of the Schedgen schedule
//! ([`loggops_schedgen::goal2mpi`], with the options of the benchmark's variant), and the second
//! `MPI_Wtime` (a calc of length 0). The iteration's time on a rank is the second `MPI_Wtime`
//! minus the first; the first is found by running the program up to it alone (the same ops
//! come first in both, so they draw the same noise).
//!
//! One benchmark of the paper's data has no schedule: `pipelinedring` with fewer bytes than
//! ranks (⌊16/32⌋ = 0-byte segments). The fork's Schedgen divides by the segment size 0
//! (`ceil(16.0 / 0.0)` rounds), its output holds no op, and the generated program times an
//! empty region: the measured files hold nothing but the clock's resolution (0 or 0.238 µs =
//! 2⁻²² s, one step of `MPI_Wtime`'s double at 2022's epoch seconds). It is simulated as that
//! program ran: the barrier, then nothing.

use loggops_calibrate::{BenchmarkName, MeasuredPattern, Variant};
use loggops_engine::{DepKind, Op};
use loggops_goal::{ExplicitProgram, ProgramBuilder};
use loggops_schedgen::check::Line;
use loggops_schedgen::goal2mpi::{ops_of, rank_program, Goal2Mpi};
use loggops_schedgen::schedgen_text::emit_rank;
use loggops_schedgen::{Collective, GenError, GenOptions, Generated};

/// `usleep(1)`: at least 1 µs outside MPI before the barrier.
pub const USLEEP_PS: u64 = 1_000_000;
/// Tags of the simulated `MPI_Barrier` (above every tag of the collectives).
pub const BARRIER_TAG: u32 = 1_000_000;

/// A benchmark's programs: the iteration as simulated, the same up to its first `MPI_Wtime`
/// (whose per-rank finishing times are the ranks' start times; `None` without the barrier), and
/// a remark on how it was made, if any.
pub struct Programs {
    pub iteration: ExplicitProgram,
    pub start: Option<ExplicitProgram>,
    pub note: Option<String>,
}

/// `goal2mpi.py`'s options for the benchmark (`convert_all.sh`).
pub fn options(name: &BenchmarkName) -> Goal2Mpi {
    Goal2Mpi {
        prioritize_receive: true,
        nb_send: name.variant == Variant::NbSend,
        use_tests: name.variant == Variant::Test,
        skip_compute: name.pattern == MeasuredPattern::NwayDisseminationNocompute,
    }
}

/// The Schedgen schedule the benchmark's program was generated from (the paper's fork:
/// `pipelinedring` with segments of ⌊bytes/nodes⌋, `binomialtreebcast` with its sends
/// chained); each `calc` of `nwaydissemination` lasts its value in ns. `Ok(None)` when the
/// fork's Schedgen wrote no ops (see the module docs).
pub fn schedule(name: &BenchmarkName) -> Result<Option<Generated>, GenError> {
    let (pattern, opts) = match name.pattern {
        MeasuredPattern::NwayDissemination | MeasuredPattern::NwayDisseminationNocompute => (
            Collective::NwayDissemination,
            GenOptions {
                reduce_calc: Some(name.bytes.saturating_mul(1000)),
                ..GenOptions::default()
            },
        ),
        MeasuredPattern::PipelinedRing => (Collective::PipelinedRing, GenOptions::default()),
        MeasuredPattern::BinomialTreeBcast => (
            Collective::BinomialTreeBcast,
            GenOptions {
                chain_sends: true,
                ..GenOptions::default()
            },
        ),
        MeasuredPattern::BinaryTreeBcast => (Collective::BinaryTreeBcast, GenOptions::default()),
        MeasuredPattern::LinearAlltoall => (Collective::LinearAlltoall, GenOptions::default()),
    };
    match Generated::with_options(pattern, name.nodes, name.bytes, opts) {
        Err(GenError::ZeroSegment { derived: true, .. }) => Ok(None),
        r => r.map(Some),
    }
}

/// The note of a benchmark whose schedule is empty.
fn empty_note(name: &BenchmarkName) -> String {
    format!(
        "simulated as its program ran: the paper's Schedgen wrote no ops for segments of \
         {}/{} = 0 bytes, so the program timed an empty region (the measured times are the \
         resolution of MPI_Wtime)",
        name.bytes, name.nodes
    )
}

/// The programs of benchmark `name`; `barrier`: with `usleep(1)` and the barrier before the
/// first `MPI_Wtime` (`--measure barrier`). `Err` says why it cannot be simulated.
pub fn programs(
    name: &BenchmarkName,
    barrier: bool,
    call_overhead_ps: u64,
) -> Result<Programs, String> {
    let p = name.nodes;
    let sched = schedule(name)
        .map_err(|e| format!("the schedule of its program cannot be generated: {e}"))?;
    let note = sched.is_none().then(|| empty_note(name));
    let bar = if barrier {
        Some(
            Generated::with_options(
                Collective::Dissemination,
                p,
                1,
                GenOptions {
                    tag_offset: BARRIER_TAG,
                    ..GenOptions::default()
                },
            )
            .map_err(|e| format!("its barrier cannot be generated: {e}"))?,
        )
    } else {
        None
    };
    let opts = options(name);
    let mut full = ProgramBuilder::new(p);
    let mut start = bar.as_ref().map(|_| ProgramBuilder::new(p));
    let built = |e: loggops_goal::BuildError| format!("its program is not a schedule: {e}");
    for r in 0..p {
        let mut lines = Vec::new();
        if let Some(g) = &sched {
            emit_rank(g, r, &mut |l: Line| lines.push(l));
        }
        let ops = ops_of(&lines);
        let seq = rank_program(&lines, opts).sequence(&ops).map_err(|e| {
            format!(
                "the generated `{}` program cannot be simulated: {e}",
                name.variant.suffix()
            )
        })?;
        full.start_rank(r);
        let entry = match &bar {
            Some(g) => prelude(&mut full, g, r),
            None => Vec::new(),
        };
        // The first `MPI_Wtime` (with the call overhead), after everything before it.
        let base = full.rank_ops();
        for (i, op) in seq.ops.iter().enumerate() {
            let op = if i == 0 {
                Op::calc(call_overhead_ps)
            } else {
                *op
            };
            let id = full.add_op(op);
            if i == 0 {
                for &e in &entry {
                    full.add_dep(id, e, DepKind::Done);
                }
            }
            for &(on, kind) in &seq.deps[i] {
                full.add_dep(id, base + on, kind);
            }
        }
        full.end_rank().map_err(built)?;
        if let (Some(b), Some(g)) = (start.as_mut(), &bar) {
            b.start_rank(r);
            let entry = prelude(b, g, r);
            let id = b.add_op(Op::calc(0));
            for e in entry {
                b.add_dep(id, e, DepKind::Done);
            }
            b.end_rank().map_err(built)?;
        }
    }
    Ok(Programs {
        iteration: full.finish(),
        start: start.map(ProgramBuilder::finish),
        note,
    })
}

/// Adds `usleep(1)` and rank `r`'s part of the barrier `g` (which starts after it) to the open
/// rank of `b`; returns every op added (what the first `MPI_Wtime` waits for).
fn prelude(b: &mut ProgramBuilder, g: &Generated, r: u32) -> Vec<u32> {
    let sleep = b.add_op(Op::calc(USLEEP_PS));
    let base = b.rank_ops();
    let mut ids = vec![sleep];
    let mut lines = Vec::new();
    emit_rank(g, r, &mut |l: Line| lines.push(l));
    for l in &lines {
        match *l {
            Line::Op(op) => {
                let id = b.add_op(op);
                b.add_dep(id, sleep, DepKind::Done);
                ids.push(id);
            }
            Line::Requires { tail, head } => b.add_dep(base + tail, base + head, DepKind::Done),
            Line::Irequires { tail, head } => b.add_dep(base + tail, base + head, DepKind::Start),
        }
    }
    ids
}
