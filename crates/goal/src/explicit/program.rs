//! [`ExplicitProgram`] as the engine reads it: the [`Program`] trait, answered from the compact
//! arrays (peers made absolute again, overflowing depcounts looked up).

use loggops_engine::{DepKind, Op, OpKind, Program, ANY};

use super::{ExplicitProgram, DEPCOUNT_OVERFLOW, START};

impl Program for ExplicitProgram {
    fn num_ranks(&self) -> u32 {
        self.num_ranks
    }
    fn min_send_size(&self) -> u64 {
        self.min_send
    }
    fn num_cpus(&self) -> u8 {
        self.num_cpus
    }
    fn num_nics(&self) -> u8 {
        self.num_nics
    }
    fn num_ops(&self, rank: u32) -> u32 {
        let s = self.slot(rank);
        (self.slots[s + 1].op - self.slots[s].op) as u32
    }
    #[inline(always)]
    fn op(&self, rank: u32, id: u32) -> Op {
        let r = self.rec(rank, id);
        // rank < P and the relative peer < P, so one conditional subtraction wraps.
        let x = rank as u64 + r.peer as u64;
        let p = self.num_ranks as u64;
        let abs = (if x >= p { x - p } else { x }) as u32;
        let peer = if r.kind == OpKind::Calc {
            0
        } else if r.peer == ANY {
            ANY
        } else {
            abs
        };
        Op {
            kind: r.kind,
            peer,
            tag: r.tag,
            size: r.size,
            cpu: r.cpu,
            nic: r.nic,
        }
    }
    #[inline(always)]
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        let g = self.global(rank, id);
        match self.depcount[g] {
            DEPCOUNT_OVERFLOW => {
                let i = self
                    .depcount_big
                    .binary_search_by_key(&(g as u64), |&(k, _)| k)
                    .expect("depcount overflow entry");
                self.depcount_big[i].1
            }
            d => d as u32,
        }
    }
    fn num_roots(&self, rank: u32) -> u32 {
        let s = self.slot(rank);
        (self.slots[s + 1].root - self.slots[s].root) as u32
    }
    #[inline(always)]
    fn root(&self, rank: u32, k: u32) -> u32 {
        self.roots[(self.slots[self.slot(rank)].root + k as u64) as usize]
    }
    #[inline(always)]
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, mut f: F) {
        let want = match kind {
            DepKind::Done => 0,
            DepKind::Start => START,
        };
        for &e in self.dependents(rank, id) {
            if e & START == want {
                f(e & !START);
            }
        }
    }
    fn total_ops(&self) -> u64 {
        self.total_ops
    }
    fn dense_counters(&self) -> bool {
        // Also with at most one dependency per op (the engine's sparse map would stay empty):
        // the dense counters let a stalled run name every op that never ran.
        true
    }
    fn has_start_dependents(&self) -> bool {
        self.start_edges
    }
    fn roots_in_type_order(&self, _rank: u32) -> bool {
        self.roots_in_type_order
    }
    fn depcount_bytes(&self, rank: u32) -> Option<&[u8]> {
        // The same encoding: DEPCOUNT_OVERFLOW is 255.
        let s = self.slot(rank);
        Some(&self.depcount[self.slots[s].op as usize..self.slots[s + 1].op as usize])
    }
}
