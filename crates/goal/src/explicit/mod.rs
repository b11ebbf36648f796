//! [`ExplicitProgram`]: a materialised GOAL schedule in compact arrays, and its
//! [`ProgramBuilder`].
//!
//! Ranks whose data is identical share one copy. Peers are stored relative to the rank, so in
//! collectives (dissemination, ring allreduce, …) most or all ranks are the same: each rank
//! points at a storage *slot*, and a rank equal to an earlier one (every array below compared
//! exactly, after a hash lookup) reuses that rank's slot instead of adding one.
//!
//! Layout (all slots concatenated; `g` = stored op index = first op of the slot + id):
//! * `rank_slot`: per rank the `u32` index of its slot; `slots`: `num_slots + 1` starts
//!   `(op, edge, root)` as `u64`, so slot `s` spans `slots[s]..slots[s + 1]` in each array.
//! * `recs`: per slot one 24-byte [`Rec`] per op (kind, peer relative to the rank, tag, size,
//!   cpu, nic, and where its dependents start), then a sentinel whose `dep` ends the last op's
//!   dependents; slot `s`'s records start at `slots[s].op + s`. An event reads its op and the
//!   bounds of its dependents from two adjacent records, with no further indirection.
//! * `depcount[g]`: `u8`; the value 255 means "look it up in a sorted overflow table" keyed by
//!   `g` (so shared slots share their entries too).
//! * `edges`: per slot the dependents of its ops, op by op (`Rec::dep` is relative to the slot's
//!   first edge); an edge is the dependent's id, with bit 31 set for `irequires` (start) edges.
//!   Per op, completion (`requires`) dependents come first, then start dependents, each in
//!   declaration order — the layout of txt2bin's appendix.
//! * `roots`: per slot the ids with no dependencies, ascending.
//!
//! A rank of its own costs its data (25 bytes per op and 4 per dependency) plus 24 + 4 + 24
//! bytes; a shared rank costs 4 bytes. Ring allreduce files (4(P−1) ops, 2(P−1)−1 edges and
//! 2P−1 roots per rank, all ranks alike) thus need one rank's data, against ≈43 bytes per op for
//! LogGOPSim's binary format.
//!
//! Files, one concern each: `record` (the stored op and slot bounds), `builder`
//! ([`ProgramBuilder`]: laying out ranks, the cycle check), `sharing` (ranks identical to an
//! earlier one reuse its slot), `program` (the [`Program`] implementation the engine reads),
//! `compare` ([`first_difference`] and `==`).

use loggops_engine::{DepKind, Program};

use crate::error::BuildError;

mod builder;
mod compare;
mod program;
mod record;
mod sharing;
#[cfg(test)]
mod tests;

pub use builder::ProgramBuilder;
pub use compare::first_difference;
pub(crate) use record::Rec;
use record::SlotBase;

/// Edge flag: the dependent waits for the start (`irequires`), not the completion.
pub(crate) const START: u32 = 1 << 31;
/// Largest number of ops in one rank (ids must leave bit 31 free for the edge flag).
pub const MAX_OPS_PER_RANK: u32 = START;
/// Largest cpu or nic index: the [`Program`] trait reports `max + 1` as a `u8`.
pub const MAX_CPU_NIC_INDEX: u8 = 254;
const DEPCOUNT_OVERFLOW: u8 = u8::MAX;
// `depcount_bytes` hands the array to the engine, which reads 255 as "ask `depcount`".
const _: () = assert!(DEPCOUNT_OVERFLOW == u8::MAX);

/// A materialised GOAL schedule (parsed text or binary, or a generator's output).
///
/// Equality (`==`) compares the schedules, not the storage: two programs are equal if they have
/// the same ranks, CPU/NIC counts, ops, dependency counts, roots and dependents lists.
#[derive(Clone, Debug)]
pub struct ExplicitProgram {
    num_ranks: u32,
    num_cpus: u8,
    num_nics: u8,
    /// Per slot `num_ops + 1` records; slot s's start at `slots[s].op + s`.
    recs: Vec<Rec>,
    depcount: Vec<u8>,
    /// `(stored op index, depcount)` for depcounts >= 255, ascending.
    depcount_big: Vec<(u64, u32)>,
    edges: Vec<u32>,
    roots: Vec<u32>,
    /// Every rank's roots are in LogGOPSim's type order (sends, receives, calcs).
    roots_in_type_order: bool,
    /// Per rank: its slot.
    rank_slot: Vec<u32>,
    /// `num_slots + 1` entries.
    slots: Vec<SlotBase>,
    /// Over all ranks (shared slots counted once per rank).
    total_ops: u64,
    total_edges: u64,
    /// The smallest size of any send (`u64::MAX` without sends), set by `finish`.
    min_send: u64,
    /// Some op has `irequires` dependents, set by `finish`.
    start_edges: bool,
}

impl ExplicitProgram {
    /// Materialises any [`Program`] (e.g. a generated collective).
    ///
    /// Returns an error if a rank's dependencies contain a cycle.
    ///
    /// # Panics
    /// If the program breaks the [`Program`] contract (peers out of range, ids out of range).
    pub fn from_program<P: Program + ?Sized>(p: &P) -> Result<ExplicitProgram, BuildError> {
        let mut b = ProgramBuilder::new(p.num_ranks());
        b.require_cpus(p.num_cpus());
        b.require_nics(p.num_nics());
        for r in 0..p.num_ranks() {
            b.start_rank(r);
            let n = p.num_ops(r);
            for i in 0..n {
                b.add_op(p.op(r, i));
            }
            for i in 0..n {
                p.for_each_dependent(r, i, DepKind::Done, |d| b.add_dep(d, i, DepKind::Done));
                p.for_each_dependent(r, i, DepKind::Start, |d| b.add_dep(d, i, DepKind::Start));
            }
            b.end_rank()?;
        }
        Ok(b.finish())
    }

    /// Total number of dependency edges (`requires` and `irequires`) over all ranks.
    pub fn num_edges(&self) -> u64 {
        self.total_edges
    }

    /// Number of distinct ranks stored (ranks identical to an earlier one share its storage).
    pub fn num_distinct_ranks(&self) -> u32 {
        (self.slots.len() - 1) as u32
    }

    /// Heap memory held by this program, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.recs.capacity() * std::mem::size_of::<Rec>()
            + self.depcount.capacity()
            + self.depcount_big.capacity() * 16
            + self.edges.capacity() * 4
            + self.roots.capacity() * 4
            + self.rank_slot.capacity() * 4
            + self.slots.capacity() * std::mem::size_of::<SlotBase>()
    }

    #[inline(always)]
    fn slot(&self, rank: u32) -> usize {
        self.rank_slot[rank as usize] as usize
    }

    /// Stored index of op `id` of `rank` (in `depcount`).
    #[inline(always)]
    fn global(&self, rank: u32, id: u32) -> usize {
        let s = self.slot(rank);
        let b = &self.slots[s];
        debug_assert!(
            (id as u64) < self.slots[s + 1].op - b.op,
            "op id out of range"
        );
        (b.op + id as u64) as usize
    }

    /// The record of op `id` of `rank`.
    #[inline(always)]
    fn rec(&self, rank: u32, id: u32) -> &Rec {
        let s = self.slot(rank);
        let b = &self.slots[s];
        debug_assert!(
            (id as u64) < self.slots[s + 1].op - b.op,
            "op id out of range"
        );
        &self.recs[b.op as usize + s + id as usize]
    }

    /// The dependents of `id` (both kinds, completion first; bit 31 marks start edges).
    #[inline(always)]
    fn dependents(&self, rank: u32, id: u32) -> &[u32] {
        let s = self.slot(rank);
        let b = &self.slots[s];
        let i = b.op as usize + s + id as usize;
        let (lo, hi) = (self.recs[i].dep as usize, self.recs[i + 1].dep as usize);
        &self.edges[b.edge as usize + lo..b.edge as usize + hi]
    }
}
