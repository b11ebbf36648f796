//! Collectives as Schedgen's trace conversion writes them inside `mpi { }` blocks: the Schedgen
//! patterns ([`Generated`]), and MPICH's recursive-doubling allreduce, which spcl/atlahs'
//! Schedgen (`goal_gen/hpc`, `create_allreduce_recdoub_rank`) writes for every `MPI_Allreduce`.
//!
//! # `recdoub_mpich` on rank r (P ranks, D bytes)
//!
//! With `pof2` the largest power of two ≤ P and `rem = P − pof2`:
//! * ranks below `2·rem` pair up: an even rank sends D to r+1 (stage 1) and at the end receives
//!   D from r+1 (stage 3); it takes no part in between. Its two ops have no dependencies.
//! * an odd rank below `2·rem` receives from r−1 (stage 1), then takes part in stage 2 as
//!   `r/2`, then sends to r−1 (stage 3, after its last receive);
//! * the other ranks take part in stage 2 as `r − rem`.
//!
//! Stage 2: for `mask = 1, 2, …, pof2/2`, send D to and receive D from the real rank of
//! `new_rank ^ mask` (`d < rem ? 2d + 1 : d + rem`); each send requires the previous receive
//! (the stage-1 receive for the first send of an odd rank). All tags are 0 (plus the
//! collective's tag offset).

use loggops_engine::{DepKind, Op, Program};

use crate::collective::Generated;

/// MPICH's recursive-doubling allreduce as spcl/atlahs' Schedgen writes it (any P ≥ 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecdoubMpich {
    p: u32,
    size: u64,
    pof2: u32,
    rem: u32,
    /// log2(pof2): stage-2 rounds.
    rounds: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Even rank below 2·rem: send to r+1, receive from r+1.
    Even,
    /// Odd rank below 2·rem: receive, stage 2 as r/2, send.
    Odd,
    /// Stage 2 only, as r − rem.
    Other,
}

impl RecdoubMpich {
    /// The pattern on `p` ranks with `size` bytes per message.
    pub fn new(p: u32, size: u64) -> RecdoubMpich {
        let pof2 = 1u32 << (31 - p.max(1).leading_zeros());
        RecdoubMpich {
            p,
            size,
            pof2,
            rem: p - pof2,
            rounds: pof2.trailing_zeros(),
        }
    }

    fn role(&self, r: u32) -> Role {
        if r < 2 * self.rem {
            if r.is_multiple_of(2) {
                Role::Even
            } else {
                Role::Odd
            }
        } else {
            Role::Other
        }
    }

    /// The real rank of stage-2 round `k`'s partner of rank `r`.
    fn partner(&self, r: u32, k: u32) -> u32 {
        let nr = if r < 2 * self.rem {
            r / 2
        } else {
            r - self.rem
        };
        let d = nr ^ (1 << k);
        if d < self.rem {
            2 * d + 1
        } else {
            d + self.rem
        }
    }

    /// Ops of rank `r`.
    pub fn num_ops(&self, r: u32) -> u32 {
        match self.role(r) {
            Role::Even => 2,
            Role::Odd => 2 * self.rounds + 2,
            Role::Other => 2 * self.rounds,
        }
    }

    /// Op `i` of rank `r` (tag 0).
    pub fn op(&self, r: u32, i: u32) -> Op {
        let d = self.size;
        match self.role(r) {
            Role::Even => {
                if i == 0 {
                    Op::send(d, r + 1, 0)
                } else {
                    Op::recv(d, r + 1, 0)
                }
            }
            Role::Odd => {
                if i == 0 {
                    Op::recv(d, r - 1, 0)
                } else if i == 2 * self.rounds + 1 {
                    Op::send(d, r - 1, 0)
                } else if i % 2 == 1 {
                    Op::send(d, self.partner(r, (i - 1) / 2), 0)
                } else {
                    Op::recv(d, self.partner(r, (i - 1) / 2), 0)
                }
            }
            Role::Other => {
                let peer = self.partner(r, i / 2);
                if i.is_multiple_of(2) {
                    Op::send(d, peer, 0)
                } else {
                    Op::recv(d, peer, 0)
                }
            }
        }
    }

    /// Whether op `i` is a send that requires the receive just before it.
    fn chained(&self, r: u32, i: u32) -> bool {
        match self.role(r) {
            Role::Even => false,
            Role::Odd => i % 2 == 1,
            Role::Other => i.is_multiple_of(2) && i > 0,
        }
    }

    /// Dependencies of op `i` of rank `r`.
    pub fn depcount(&self, r: u32, i: u32) -> u32 {
        self.chained(r, i) as u32
    }

    /// Calls `f` with the ops that require op `i` (completion).
    pub fn dependents(&self, r: u32, i: u32, f: &mut dyn FnMut(u32)) {
        if i + 1 < self.num_ops(r) && self.chained(r, i + 1) {
            f(i + 1);
        }
    }

    /// Ops of rank `r` without dependencies.
    pub fn num_roots(&self, r: u32) -> u32 {
        match self.role(r) {
            Role::Even => 2,
            // every receive
            Role::Odd => self.rounds + 1,
            // the first send and every receive
            Role::Other => self.rounds + (self.rounds > 0) as u32,
        }
    }

    /// The `k`-th op of rank `r` without dependencies.
    pub fn root(&self, r: u32, k: u32) -> u32 {
        match self.role(r) {
            Role::Even => k,
            Role::Odd => 2 * k,
            Role::Other => {
                if k == 0 {
                    0
                } else {
                    2 * k - 1
                }
            }
        }
    }

    /// Whether no op requires op `i`.
    pub fn is_sink(&self, r: u32, i: u32) -> bool {
        !(i + 1 < self.num_ops(r) && self.chained(r, i + 1))
    }

    /// Ops of rank `r` that no op requires.
    pub fn num_sinks(&self, r: u32) -> u32 {
        match self.role(r) {
            Role::Even => 2,
            // every send (the last receive feeds the stage-3 send)
            Role::Odd => self.rounds + 1,
            // every send and the last receive
            Role::Other => self.rounds + (self.rounds > 0) as u32,
        }
    }
}

/// A collective of an `mpi { }` block, generated with tag offset 0 (the block adds each
/// instance's tag).
#[derive(Clone, Debug)]
pub(crate) enum TColl {
    Gen(Generated),
    Mpich(RecdoubMpich),
}

impl TColl {
    pub(crate) fn num_ops(&self, r: u32) -> u32 {
        match self {
            TColl::Gen(g) => g.num_ops(r),
            TColl::Mpich(m) => m.num_ops(r),
        }
    }
    pub(crate) fn op(&self, r: u32, i: u32) -> Op {
        match self {
            TColl::Gen(g) => g.op(r, i),
            TColl::Mpich(m) => m.op(r, i),
        }
    }
    pub(crate) fn depcount(&self, r: u32, i: u32) -> u32 {
        match self {
            TColl::Gen(g) => g.depcount(r, i),
            TColl::Mpich(m) => m.depcount(r, i),
        }
    }
    pub(crate) fn num_roots(&self, r: u32) -> u32 {
        match self {
            TColl::Gen(g) => g.num_roots(r),
            TColl::Mpich(m) => m.num_roots(r),
        }
    }
    pub(crate) fn root(&self, r: u32, k: u32) -> u32 {
        match self {
            TColl::Gen(g) => Program::root(g, r, k),
            TColl::Mpich(m) => m.root(r, k),
        }
    }
    pub(crate) fn num_sinks(&self, r: u32) -> u32 {
        match self {
            TColl::Gen(g) => g.num_sinks(r),
            TColl::Mpich(m) => m.num_sinks(r),
        }
    }
    pub(crate) fn is_sink(&self, r: u32, i: u32) -> bool {
        match self {
            TColl::Gen(g) => g.is_sink(r, i),
            TColl::Mpich(m) => m.is_sink(r, i),
        }
    }
    pub(crate) fn for_each_dependent(&self, r: u32, i: u32, kind: DepKind, f: &mut dyn FnMut(u32)) {
        match self {
            TColl::Gen(g) => g.for_each_dependent(r, i, kind, f),
            TColl::Mpich(m) => {
                if kind == DepKind::Done {
                    m.dependents(r, i, f)
                }
            }
        }
    }
    /// The largest tag the pattern uses itself (before the instance's offset).
    pub(crate) fn max_tag(&self) -> u64 {
        match self {
            TColl::Gen(g) => {
                let mut max = 0u64;
                // Only pipelinedring uses tags other than 0 (segment i has tag i).
                if g.pattern() == crate::Collective::PipelinedRing {
                    max = g.rounds().saturating_sub(1) as u64;
                }
                max
            }
            TColl::Mpich(_) => 0,
        }
    }
    pub(crate) fn min_send_size(&self) -> u64 {
        match self {
            TColl::Gen(g) => g.min_send_size(),
            TColl::Mpich(m) => {
                if m.p > 1 {
                    m.size
                } else {
                    u64::MAX
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ops of rank r built the way atlahs' Schedgen loops emit them: (op, requires).
    fn reference(p: u32, r: u32, d: u64) -> Vec<(Op, Vec<u32>)> {
        let pof2 = 1u32 << (31 - p.leading_zeros());
        let rem = p - pof2;
        let mut ops: Vec<(Op, Vec<u32>)> = Vec::new();
        let mut prev_recv: Option<u32> = None;
        let new_rank: Option<u32>;
        if r < 2 * rem {
            if r.is_multiple_of(2) {
                ops.push((Op::send(d, r + 1, 0), vec![]));
                new_rank = None;
            } else {
                ops.push((Op::recv(d, r - 1, 0), vec![]));
                prev_recv = Some(0);
                new_rank = Some(r / 2);
            }
        } else {
            new_rank = Some(r - rem);
        }
        if let Some(nr) = new_rank {
            let mut mask = 1;
            while mask < pof2 {
                let nd = nr ^ mask;
                let dst = if nd < rem { nd * 2 + 1 } else { nd + rem };
                let s = ops.len() as u32;
                ops.push((Op::send(d, dst, 0), prev_recv.into_iter().collect()));
                prev_recv = Some(s + 1);
                ops.push((Op::recv(d, dst, 0), vec![]));
                mask <<= 1;
            }
        }
        if r < 2 * rem {
            if r % 2 == 1 {
                ops.push((Op::send(d, r - 1, 0), prev_recv.into_iter().collect()));
            } else {
                ops.push((Op::recv(d, r + 1, 0), vec![]));
            }
        }
        ops
    }

    #[test]
    fn recdoub_mpich_is_atlahs_schedgen_op_for_op() {
        for p in 1..=70u32 {
            let m = RecdoubMpich::new(p, 24);
            for r in 0..p {
                let want = reference(p, r, 24);
                assert_eq!(m.num_ops(r) as usize, want.len(), "P={p} r={r}");
                let mut roots = Vec::new();
                let mut sinks = 0;
                for (i, (op, reqs)) in want.iter().enumerate() {
                    let i = i as u32;
                    assert_eq!(m.op(r, i), *op, "P={p} r={r} op {i}");
                    assert_eq!(m.depcount(r, i) as usize, reqs.len(), "P={p} r={r} op {i}");
                    let mut deps = Vec::new();
                    m.dependents(r, i, &mut |d| deps.push(d));
                    let expect: Vec<u32> = want
                        .iter()
                        .enumerate()
                        .filter(|(_, (_, q))| q.contains(&i))
                        .map(|(j, _)| j as u32)
                        .collect();
                    assert_eq!(deps, expect, "P={p} r={r} op {i}");
                    assert_eq!(m.is_sink(r, i), expect.is_empty());
                    sinks += expect.is_empty() as u32;
                    if reqs.is_empty() {
                        roots.push(i);
                    }
                }
                assert_eq!(m.num_sinks(r), sinks, "P={p} r={r}");
                assert_eq!(m.num_roots(r) as usize, roots.len(), "P={p} r={r}");
                for (k, &x) in roots.iter().enumerate() {
                    assert_eq!(m.root(r, k as u32), x);
                }
            }
            // every send has a matching receive
            let mut msgs = std::collections::HashMap::<(u32, u32), i64>::new();
            for r in 0..p {
                for i in 0..m.num_ops(r) {
                    let op = m.op(r, i);
                    match op.kind {
                        loggops_engine::OpKind::Send => *msgs.entry((r, op.peer)).or_default() += 1,
                        loggops_engine::OpKind::Recv => *msgs.entry((op.peer, r)).or_default() -= 1,
                        _ => {}
                    }
                }
            }
            assert!(msgs.values().all(|&v| v == 0), "P={p}");
        }
    }
}
