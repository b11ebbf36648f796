//! Dependency counters: how many `requires`/`irequires` of each op are still unsatisfied,
//! shared by both engines.

use std::collections::HashMap as StdHashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::matching::NIL;
use crate::program::{DepKind, Program};

/// Keys are `rank << 32 | op`, made by the engine, not by an adversary: one multiply-xorshift
/// round instead of SipHash (the map is probed on every dependency of a partially satisfied
/// op).
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let x = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^ (x >> 29)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).rotate_left(5);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type HashMap<K, V> = StdHashMap<K, V, BuildHasherDefault<KeyHasher>>;

pub(crate) enum Counters {
    /// One byte per op; counts of 255 and more live in `big` (keyed like the sparse map).
    Dense {
        base: Vec<u64>,
        left: Vec<u8>,
        big: HashMap<u64, u32>,
    },
    /// Only partially satisfied ops (an op with one dependency is released without a counter):
    /// two (op, remaining) slots per rank, which is all a generated collective ever needs, and a
    /// map for the rest.
    Sparse {
        slot: Vec<[(u32, u32); 2]>,
        map: HashMap<u64, u32>,
    },
}

impl Counters {
    /// Dense counters when the program asks for them ([`Program::dense_counters`]), else sparse.
    pub fn new<P: Program>(prog: &P) -> Counters {
        Self::for_ranks(prog, 0..prog.num_ranks())
    }

    /// [`Self::new`] for the ops of `ranks` only (a windowed engine's thread, which runs only
    /// those ranks): dense counters hold no bytes for the other ranks, which must never be
    /// released.
    pub fn for_ranks<P: Program>(prog: &P, ranks: std::ops::Range<u32>) -> Counters {
        let all = prog.num_ranks();
        if !prog.dense_counters() {
            return Counters::Sparse {
                slot: vec![[(NIL, 0); 2]; all as usize],
                map: HashMap::default(),
            };
        }
        let mut base = vec![0; ranks.start as usize];
        base.reserve(all as usize + 1 - ranks.start as usize);
        let ops = if ranks == (0..all) {
            prog.total_ops()
        } else {
            ranks.clone().map(|r| prog.num_ops(r) as u64).sum()
        };
        let mut left = Vec::with_capacity(ops as usize);
        let mut big = HashMap::default();
        let mut acc = 0u64;
        for r in ranks.clone() {
            base.push(acc);
            let n = prog.num_ops(r);
            acc += n as u64;
            let count = |i: u32, big: &mut HashMap<u64, u32>| {
                let c = prog.depcount(r, i);
                if c >= u8::MAX as u32 {
                    big.insert((r as u64) << 32 | i as u64, c);
                    u8::MAX
                } else {
                    c as u8
                }
            };
            match prog.depcount_bytes(r) {
                // Copied; only the saturated entries need the exact count.
                Some(b) => {
                    debug_assert_eq!(b.len(), n as usize);
                    left.extend_from_slice(b);
                    for (i, _) in b.iter().enumerate().filter(|(_, &c)| c == u8::MAX) {
                        count(i as u32, &mut big);
                    }
                }
                None => left.extend((0..n).map(|i| count(i, &mut big))),
            }
        }
        base.resize(all as usize + 1, acc);
        Counters::Dense { base, left, big }
    }

    /// `(host, op)` reached `kind`: satisfies one dependency of each of its dependents of that
    /// kind and calls `freed` with each one that became executable, in declaration order.
    #[inline(always)]
    pub fn release<P: Program>(
        &mut self,
        prog: &P,
        host: u32,
        op: u32,
        kind: DepKind,
        mut freed: impl FnMut(u32),
    ) {
        match self {
            Counters::Dense { base, left, big } => {
                let b = base[host as usize];
                prog.for_each_dependent(host, op, kind, |d| {
                    let i = (b + d as u64) as usize;
                    // A decrement below zero cannot happen for a consistent schedule (the
                    // front ends check depcounts).
                    let done = if left[i] == u8::MAX {
                        Self::satisfy_big(&mut left[i], big, host, d)
                    } else {
                        left[i] = left[i].wrapping_sub(1);
                        left[i] == 0
                    };
                    if done {
                        freed(d);
                    }
                });
            }
            Counters::Sparse { slot, map } => {
                prog.for_each_dependent_counted(host, op, kind, |d, initial| {
                    if initial <= 1 || Self::satisfy_sparse(slot, map, host, d, initial) {
                        freed(d);
                    }
                });
            }
        }
    }

    /// One dependency of `(host, op)`, which has `initial >= 2`, is satisfied; returns true
    /// if it became executable.
    #[inline(always)]
    fn satisfy_sparse(
        slot: &mut [[(u32, u32); 2]],
        map: &mut HashMap<u64, u32>,
        host: u32,
        op: u32,
        initial: u32,
    ) -> bool {
        let s = &mut slot[host as usize];
        for c in s.iter_mut() {
            if c.0 == op {
                c.1 -= 1;
                if c.1 == 0 {
                    c.0 = NIL;
                    return true;
                }
                return false;
            }
        }
        if map.is_empty() {
            if let Some(c) = s.iter_mut().find(|c| c.0 == NIL) {
                // First satisfied dependency of an op with at least two.
                *c = (op, initial - 1);
                return false;
            }
        }
        Self::satisfy_mapped(s, map, host, op, initial)
    }

    /// [`Self::release`]'s decrement of a dense counter of 255 or more.
    #[cold]
    #[inline(never)]
    fn satisfy_big(left: &mut u8, big: &mut HashMap<u64, u32>, host: u32, op: u32) -> bool {
        let key = (host as u64) << 32 | op as u64;
        if let Some(c) = big.get_mut(&key) {
            *c -= 1;
            if *c < u8::MAX as u32 {
                *left = *c as u8;
                big.remove(&key);
            }
            return *left == 0;
        }
        *left = left.wrapping_sub(1);
        *left == 0
    }

    /// [`Self::satisfy_sparse`] of a counter that is not in the rank's slots.
    #[cold]
    #[inline(never)]
    fn satisfy_mapped(
        s: &mut [(u32, u32); 2],
        map: &mut HashMap<u64, u32>,
        host: u32,
        op: u32,
        initial: u32,
    ) -> bool {
        let key = (host as u64) << 32 | op as u64;
        if let Some(e) = map.get_mut(&key) {
            *e -= 1;
            if *e == 0 {
                map.remove(&key);
                return true;
            }
            return false;
        }
        // First satisfied dependency of an op with at least two.
        match s.iter_mut().find(|c| c.0 == NIL) {
            Some(c) => *c = (op, initial - 1),
            None => {
                map.insert(key, initial - 1);
            }
        }
        false
    }

    /// Up to `most` ops of rank `r` (of `n`) still waiting for a dependency, ascending: every
    /// such op with dense counters, the partially satisfied ones with sparse counters.
    pub fn waiting_ops(&self, r: u32, n: u32, most: usize) -> Vec<u32> {
        match self {
            Counters::Dense { base, left, .. } => {
                let b = base[r as usize] as usize;
                (0..n as usize)
                    .filter(|&i| left[b + i] != 0)
                    .map(|i| i as u32)
                    .take(most)
                    .collect()
            }
            Counters::Sparse { slot, map } => {
                let mut ops: Vec<u32> = map
                    .keys()
                    .filter(|k| (*k >> 32) as u32 == r)
                    .map(|k| *k as u32)
                    .chain(slot[r as usize].iter().map(|c| c.0).filter(|&op| op != NIL))
                    .collect();
                ops.sort_unstable();
                ops.truncate(most);
                ops
            }
        }
    }
}
