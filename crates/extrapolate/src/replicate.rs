//! Schedgen's `--traces-extr k`: the traced ranks copied k times. Copy c's rank r runs trace
//! rank r's calls with the same computation; its point-to-point partners are shifted by c·P
//! (a wildcard receive stays a wildcard); there is no traffic between copies; collectives are
//! rebuilt over all k·P ranks (same pattern, size and numbering). Weak scaling by whole
//! multiples only, as in the paper's tool. The result is explicit GOAL, like Schedgen's.

use std::path::Path;

use loggops_engine::{DepKind, Op, ANY};
use loggops_goal::{ExplicitProgram, ProgramBuilder};

use crate::coll::CollPattern;
use crate::error::ExtrapError;
use crate::trace::{CallKind, Peer, Trace};

/// Replicates the trace at `path` to `nodes` ranks (a multiple of its rank count).
pub fn replicate(path: &Path, nodes: u32, tick_ps: u64) -> Result<ExplicitProgram, ExtrapError> {
    let t = crate::trace::load(path, tick_ps)?;
    let p0 = t.p;
    if nodes == 0 || !nodes.is_multiple_of(p0) {
        return Err(ExtrapError::Usage(format!(
            "--replicate copies the {p0} traced ranks a whole number of times: --nodes must be a multiple of {p0} (e.g. {} or {}), got {nodes}",
            p0 * (nodes / p0).max(1),
            p0 * (nodes / p0 + 1)
        )));
    }
    let pats = patterns(&t)?;
    emit(&t.ranks, nodes, Some(&pats))
}

/// The GOAL program Schedgen's trace conversion writes for these calls (collectives as
/// given): what [`crate::trace::decode`] reads back.
pub fn program_of(ranks: &[crate::trace::RankCalls]) -> Result<ExplicitProgram, ExtrapError> {
    emit(ranks, ranks.len() as u32, None)
}

/// The pattern and size of every collective instance of a trace (the same on every rank).
pub(crate) fn patterns(t: &Trace) -> Result<Vec<(CollPattern, u64)>, ExtrapError> {
    Ok(crate::template::collectives(t)?
        .into_iter()
        .map(|(c, size)| {
            // at small P several patterns give the same ops: a 1-byte dissemination is a barrier
            let pat = if size == 1 && c.contains(&CollPattern::Dissemination) {
                CollPattern::Dissemination
            } else {
                c[0]
            };
            (pat, size)
        })
        .collect())
}

/// Writes the decoded calls of `t` back as Schedgen would, copied to `nodes` ranks: with
/// `pats`, collectives are rebuilt over `nodes` ranks; without, they are copied as traced
/// (`nodes` must then be the trace's rank count).
pub(crate) fn emit(
    ranks: &[crate::trace::RankCalls],
    nodes: u32,
    pats: Option<&[(CollPattern, u64)]>,
) -> Result<ExplicitProgram, ExtrapError> {
    let p0 = ranks.len() as u32;
    let mut b = ProgramBuilder::new(nodes);
    for copy in 0..nodes / p0 {
        for r in 0..p0 {
            let rank = copy * p0 + r;
            b.start_rank(rank);
            let calls = &ranks[r as usize];
            let mut prev: Vec<(u32, DepKind)> = Vec::new();
            let mut req_op: Vec<u32> = vec![u32::MAX; calls.calls.len()];
            let mut k = 0usize;
            let link = |b: &mut ProgramBuilder, g: u32, prev: &[(u32, DepKind)]| {
                for &(e, kind) in prev {
                    b.add_dep(g, e, kind);
                }
            };
            for (ci, c) in calls.calls.iter().enumerate() {
                match &c.kind {
                    CallKind::P2p {
                        send,
                        nb,
                        peer,
                        size,
                        tag,
                    } => {
                        let q = match peer {
                            Peer::Rank(q) => q + copy * p0,
                            Peer::Any => ANY,
                        };
                        let id = b.add_op(if *send {
                            Op::send(*size, q, *tag)
                        } else {
                            Op::recv(*size, q, *tag)
                        });
                        let g = b.add_op(Op::calc(c.gap));
                        b.add_dep(id, g, DepKind::Done);
                        link(&mut b, g, &prev);
                        prev = vec![(id, if *nb { DepKind::Start } else { DepKind::Done })];
                        req_op[ci] = id;
                    }
                    CallKind::Wait { reqs, .. } => {
                        let id = b.add_op(Op::calc(0));
                        for &q in reqs {
                            b.add_dep(id, req_op[q as usize], DepKind::Done);
                        }
                        let g = b.add_op(Op::calc(c.gap));
                        b.add_dep(id, g, DepKind::Done);
                        link(&mut b, g, &prev);
                        prev = vec![(id, DepKind::Done)];
                    }
                    CallKind::Coll { ops, reqs } => {
                        let tag = ops.first().map_or(0, |o| o.tag);
                        let built: Vec<(Op, Vec<u32>)> = match pats {
                            Some(p) => {
                                let (pat, size) = p[k];
                                pat.ops_with_deps(nodes, rank, size)
                            }
                            None => ops.iter().copied().zip(reqs.iter().cloned()).collect(),
                        };
                        k += 1;
                        let first = b.rank_ops();
                        for (o, _) in &built {
                            let mut o = *o;
                            o.tag = tag;
                            b.add_op(o);
                        }
                        let mut has_dep = vec![false; built.len()];
                        for (i, (_, reqs)) in built.iter().enumerate() {
                            for &q in reqs {
                                b.add_dep(first + i as u32, first + q, DepKind::Done);
                                has_dep[q as usize] = true;
                            }
                        }
                        let close = b.add_op(Op::calc(0));
                        for (i, d) in has_dep.iter().enumerate() {
                            if !d {
                                b.add_dep(close, first + i as u32, DepKind::Done);
                            }
                        }
                        let g = b.add_op(Op::calc(c.gap));
                        for (i, (_, reqs)) in built.iter().enumerate() {
                            if reqs.is_empty() {
                                b.add_dep(first + i as u32, g, DepKind::Done);
                            }
                        }
                        link(&mut b, g, &prev);
                        prev = vec![(close, DepKind::Done)];
                    }
                }
            }
            if let Some(tr) = calls.trailing {
                let id = b.add_op(Op::calc(tr));
                link(&mut b, id, &prev);
            }
            b.end_rank()
                .map_err(|e| ExtrapError::Usage(format!("replicating rank {rank}: {e}")))?;
        }
    }
    Ok(b.finish())
}
