//! Sharing storage between identical ranks: a rank's data is hashed when it is closed, and a
//! rank equal to an earlier one (every array compared exactly, after the hash lookup) drops its
//! copy and points at that rank's slot.

use std::collections::hash_map::Entry;
use std::hash::Hasher;

use super::record::{Rec, SlotBase};
use super::{ExplicitProgram, ProgramBuilder};
use crate::fxhash::FxHasher;

impl Rec {
    #[inline(always)]
    fn hash(&self, h: &mut FxHasher) {
        h.write_u64(self.size);
        h.write_u64(self.peer as u64 | (self.tag as u64) << 32);
        h.write_u64(
            self.dep as u64
                | (self.kind as u64) << 32
                | (self.cpu as u64) << 40
                | (self.nic as u64) << 48,
        );
    }
}

/// Feeds `v` to `h` two values at a time.
fn hash_u32s(mut v: impl Iterator<Item = u32>, h: &mut FxHasher) {
    while let Some(a) = v.next() {
        match v.next() {
            Some(b) => h.write_u64(a as u64 | (b as u64) << 32),
            None => h.write_u32(a),
        }
    }
}

impl ExplicitProgram {
    /// Whether slots `a` and `b` hold the same rank data.
    fn same_slots(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        let (a0, a1, b0, b1) = (
            self.slots[a],
            self.slots[a + 1],
            self.slots[b],
            self.slots[b + 1],
        );
        let n = a1.op - a0.op;
        if n != b1.op - b0.op || a1.edge - a0.edge != b1.edge - b0.edge {
            return false;
        }
        if a1.root - a0.root != b1.root - b0.root {
            return false;
        }
        let (n, ao, bo) = (n as usize, a0.op as usize, b0.op as usize);
        let range = |lo: u64, hi: u64| lo as usize..hi as usize;
        // Overflow entries relative to the slot's first op.
        let big = |s0: SlotBase, s1: SlotBase| {
            let lo = self.depcount_big.partition_point(|&(g, _)| g < s0.op);
            let hi = self.depcount_big.partition_point(|&(g, _)| g < s1.op);
            self.depcount_big[lo..hi]
                .iter()
                .map(move |&(g, c)| (g - s0.op, c))
        };
        self.recs[ao + a..ao + a + n + 1] == self.recs[bo + b..bo + b + n + 1]
            && self.depcount[ao..ao + n] == self.depcount[bo..bo + n]
            && self.edges[range(a0.edge, a1.edge)] == self.edges[range(b0.edge, b1.edge)]
            && self.roots[range(a0.root, a1.root)] == self.roots[range(b0.root, b1.root)]
            && big(a0, a1).eq(big(b0, b1))
    }
}

impl ProgramBuilder {
    /// Makes the rank just laid out (its data starts at `start` and `depcount_big[big_base..]`)
    /// a new slot, or, if an earlier slot holds the same data, drops it and points the rank at
    /// that slot.
    pub(super) fn commit_rank(&mut self, start: SlotBase, big_base: usize) {
        let p = &mut self.p;
        let slot = p.slots.len() - 1;
        let n = (p.depcount.len() as u64 - start.op) as usize;
        let rec_base = start.op as usize + slot;
        // The depcounts, overflow entries and roots follow from the ops and the edges.
        let mut h = FxHasher::default();
        h.write_usize(n);
        for r in &p.recs[rec_base..] {
            r.hash(&mut h);
        }
        hash_u32s(p.edges[start.edge as usize..].iter().copied(), &mut h);
        p.slots.push(SlotBase {
            op: p.depcount.len() as u64,
            edge: p.edges.len() as u64,
            root: p.roots.len() as u64,
        });
        let slot = slot as u32;
        let shared = match self.slot_of_hash.entry(h.finish()) {
            Entry::Occupied(e) => Some(*e.get()).filter(|&c| p.same_slots(c, slot)),
            Entry::Vacant(e) => {
                e.insert(slot);
                None
            }
        };
        match shared {
            Some(c) => {
                p.slots.pop();
                p.recs.truncate(rec_base);
                p.depcount.truncate(start.op as usize);
                p.depcount_big.truncate(big_base);
                p.edges.truncate(start.edge as usize);
                p.roots.truncate(start.root as usize);
                p.rank_slot.push(c);
            }
            None => p.rank_slot.push(slot),
        }
    }
}
