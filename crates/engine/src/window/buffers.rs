//! Where entries wait for their window: a ring of [`RING`] per-window buffers ([`Slot`]), a
//! heap of entries due beyond the ring ([`Far`]), the grouping of a window's entries by rank
//! ([`Groups`]), and the allocations a thread keeps from run to run ([`Scratch`]).
//!
//! An entry due after the current window is appended to the buffer of its window (the window
//! index is a multiplication, [`div_width`]); entries due within the current window go to the
//! running rank's heap instead, so nothing is queued into the ring slot of the window being
//! run, which is taken out while it runs. A buffer keeps entries and their ranks apart:
//! grouping a window by rank reads 4 bytes per entry instead of a cache line, and each entry is
//! then read once, when it runs.
//!
//! Memory follows the live entries, not the largest window: an emptied buffer stays in its
//! slot up to [`SLOT_KEEP`] entries; a larger one (a lock-step front: one entry per rank)
//! becomes one of at most [`SPARES`] spares for the next slot that fills (with four spares,
//! buffers were freed and regrown every window); `Win::run` applies this as each window ends.
//! The global engine's radix heap keeps its buckets the same way (`queue.rs`).

use std::cell::Cell;
use std::cmp::Ordering;

use super::entry::{Ent, Min};
use super::parallel::NONE;
use super::ties::Rec;
use super::{Rank, Win};
use crate::matching::{Lists, NIL};
use crate::noise::Noise;
use crate::params::Time;
use crate::program::Program;

/// Windows held in the ring (a power of two); later entries wait in `far`.
pub(super) const RING: u64 = 64;

/// A window's emptied buffer stays in its slot up to this many entries; a larger one (a
/// lock-step front: one entry per rank) is kept as one of at most [`SPARES`] spares for the
/// next slot that fills, so memory follows the live entries rather than the largest window.
/// Sixteen spares cover the windows a 16K-rank dissemination keeps busy at once (with four,
/// buffers were freed and grown again all the time: 660 page faults per repetition instead
/// of 35, and 10% of the run time).
pub(super) const SLOT_KEEP: usize = 1024;
pub(super) const SPARES: usize = 16;

/// The entries of one window, and their ranks apart: grouping a window by rank reads 4 bytes
/// per entry instead of a cache line, and each entry is then read once, when it runs.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) ents: Vec<Ent>,
    pub(super) ranks: Vec<u32>,
}

impl Slot {
    pub(super) fn clear(&mut self) {
        self.ents.clear();
        self.ranks.clear();
    }
}

/// An entry beyond the ring, ordered by window.
#[derive(Clone, Copy, Debug)]
pub(super) struct Far(u64, Ent);

impl PartialEq for Far {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl Eq for Far {}
impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Far {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.cmp(&self.0)
    }
}

/// The entries of a window grouped by rank: one chain per rank (`heads[rank]`, then
/// `links[entry]`), and a bitmap of the ranks that have entries. Heads and bitmap are left
/// clear (all `NIL`, all zero) for the next window as the chains are consumed.
#[derive(Default)]
pub(super) struct Groups {
    pub(super) heads: Vec<u32>,
    pub(super) links: Vec<u32>,
    pub(super) bits: Vec<u64>,
}

impl Groups {
    /// Clears the groups for `ranks` ranks.
    pub(super) fn reset(&mut self, ranks: usize) {
        self.heads.clear();
        self.heads.resize(ranks, NIL);
        self.bits.clear();
        self.bits.resize(ranks.div_ceil(64), 0);
        self.links.clear();
    }

    /// Groups entries `0..ranks.len()` by their `ranks` (whose heads must be `NIL`).
    pub(super) fn group(&mut self, ranks: &[u32]) {
        self.links.clear();
        self.links.resize(ranks.len(), NIL);
        for ((i, &r), link) in ranks.iter().enumerate().zip(&mut self.links) {
            *link = std::mem::replace(&mut self.heads[r as usize], i as u32);
            self.bits[r as usize / 64] |= 1 << (r % 64);
        }
    }
}

/// The allocations of a run, kept per thread for the next one (a Monte-Carlo worker runs
/// thousands of repetitions; growing the buffers again each time costs page faults).
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) rs: Vec<Rank>,
    pub(super) lists: Lists,
    pub(super) ring: Vec<Slot>,
    pub(super) far: Vec<Far>,
    pub(super) heap: Vec<Min>,
    pub(super) freed: Vec<u32>,
    pub(super) spares: Vec<Slot>,
    pub(super) groups: Groups,
    pub(super) records: Vec<Rec>,
    pub(super) late: Vec<Time>,
}

thread_local! {
    pub(super) static SCRATCH: Cell<Option<Box<Scratch>>> = const { Cell::new(None) };
    /// The allocations of the threads a parallel run starts (`parallel.rs`), kept by the
    /// thread that starts them for its next run.
    pub(super) static HELPERS_SCRATCH: Cell<Vec<Scratch>> = const { Cell::new(Vec::new()) };
}

/// `floor(t / width)` by a multiplication: `recip = floor(2^64 / width)` gives the quotient or
/// one less.
#[inline(always)]
fn div_width(t: Time, width: Time, recip: u64) -> u64 {
    let q = ((t as u128 * recip as u128) >> 64) as u64;
    q + ((q + 1).saturating_mul(width) <= t) as u64
}

impl<'a, P: Program, N: Noise, const FULL: bool, const QUEUED: bool> Win<'a, P, N, FULL, QUEUED> {
    /// Queues `e`, due after the current window, in the buffer of its window.
    #[inline(always)]
    pub(super) fn queue(&mut self, e: Ent) {
        debug_assert!(e.time >= self.w_end);
        let w = div_width(e.time, self.width, self.recip);
        if w < self.cur + RING {
            self.ring_push(w, e);
        } else {
            self.push_far(w, e);
        }
    }

    /// Queues message `e`, due after the current window: in the buffer of its window when
    /// this engine runs its receiver, else for the receiver's thread ([`Self::hand_over`]).
    #[inline(always)]
    pub(super) fn queue_msg(&mut self, e: Ent) {
        if e.rank().wrapping_sub(self.part.lo) < self.part.hi - self.part.lo {
            self.queue(e);
        } else {
            self.hand_over(e);
        }
    }

    /// Keeps message `e`, due after the current window, for the thread that runs its
    /// receiver, which takes it at the window's end (`parallel.rs`).
    #[cold]
    #[inline(never)]
    fn hand_over(&mut self, e: Ent) {
        let w = div_width(e.time, self.width, self.recip);
        self.out_min = self.out_min.min(w);
        self.out[(e.rank() / self.part.block) as usize].push(e);
    }

    /// Queues `e`, handed over by another thread, due in the current window or later.
    pub(super) fn take_over(&mut self, e: Ent) {
        let w = div_width(e.time, self.width, self.recip);
        debug_assert!(w >= self.cur);
        if w < self.cur + RING {
            self.ring_push(w, e);
        } else {
            self.push_far(w, e);
        }
    }

    /// The first window after the current one that holds entries of this engine
    /// ([`NONE`] when none does), leaving everything in place.
    pub(super) fn local_next(&self) -> u64 {
        if self.in_ring > 0 {
            for w in self.cur + 1..self.cur + RING {
                if !self.ring[(w % RING) as usize].ents.is_empty() {
                    return w;
                }
            }
        }
        self.far.peek().map_or(NONE, |f| f.0)
    }

    /// Makes `w` (no earlier than [`Self::local_next`]) the current window, moving the
    /// entries of `far` that come in reach into the ring.
    pub(super) fn enter(&mut self, w: u64) {
        self.cur = w;
        while let Some(&Far(fw, e)) = self.far.peek() {
            if fw >= w + RING {
                break;
            }
            self.far.pop();
            self.ring_push(fw, e);
        }
    }

    /// Queues `e`, due in window `w` beyond the ring.
    #[cold]
    #[inline(never)]
    fn push_far(&mut self, w: u64, e: Ent) {
        self.far.push(Far(w, e));
    }

    /// Appends `e` to the buffer of window `w` (a large spare buffer when it has none).
    #[inline(always)]
    fn ring_push(&mut self, w: u64, e: Ent) {
        let i = (w % RING) as usize;
        if self.ring[i].ents.capacity() == 0 {
            self.take_spare(i);
        }
        let v = &mut self.ring[i];
        v.ents.push(e);
        v.ranks.push(e.rank());
        self.in_ring += 1;
    }

    /// Gives the empty slot `i` a large spare buffer, if there is one.
    #[cold]
    #[inline(never)]
    fn take_spare(&mut self, i: usize) {
        if let Some(spare) = self.spares.pop() {
            self.ring[i] = spare;
        }
    }

    /// The next window holding entries (moving entries of `far` into the ring as it comes in
    /// reach), or `None` when nothing is left.
    pub(super) fn next_window(&mut self) -> Option<u64> {
        let mut w = self.cur + 1;
        loop {
            if self.in_ring == 0 {
                // Jump to the first far window.
                w = w.max(self.far.peek()?.0);
            }
            while let Some(&Far(fw, e)) = self.far.peek() {
                if fw >= w + RING {
                    break;
                }
                self.far.pop();
                self.ring_push(fw, e);
            }
            if !self.ring[(w % RING) as usize].ents.is_empty() {
                return Some(w);
            }
            w += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::xorshift;

    /// The window index by multiplication is the quotient, at the edges too.
    #[test]
    fn window_index_is_the_quotient() {
        let mut next = xorshift(0x1234_5678_9ABC_DEF1);
        for width in [1, 2, 3, 7, 1 << 20, 1_888_031, u64::MAX / 3, u64::MAX] {
            let recip = (u64::MAX / width).max(1);
            let mut ts = vec![0, 1, width - 1, width, u64::MAX - 1, u64::MAX];
            ts.extend((0..1000).map(|_| next()));
            ts.extend((1..50).map(|k| width.saturating_mul(k)));
            ts.extend((1..50).map(|k| width.saturating_mul(k).saturating_sub(1)));
            for t in ts {
                assert_eq!(div_width(t, width, recip), t / width, "{t} / {width}");
            }
        }
    }

    /// The grouping chains exactly each rank's entries and marks exactly the ranks that have
    /// some; consuming the chains and the bitmap leaves both clear.
    #[test]
    fn groups_chain_and_mark_each_ranks_entries() {
        let mut next = xorshift(0x0F0F_1234_5555_AAAA);
        let mut g = Groups::default();
        for ranks in [2u32, 200, 16384, 100_000] {
            g.reset(ranks as usize);
            for n in [0usize, 1, 5, 64, 65, 3000] {
                let of: Vec<u32> = (0..n).map(|_| (next() % ranks as u64) as u32).collect();
                g.group(&of);
                let mut marked = Vec::new();
                for w in 0..g.bits.len() {
                    let mut b = std::mem::take(&mut g.bits[w]);
                    while b != 0 {
                        marked.push((w * 64) as u32 + b.trailing_zeros());
                        b &= b - 1;
                    }
                }
                let mut want = of.clone();
                want.sort_unstable();
                want.dedup();
                assert_eq!(marked, want, "{ranks} ranks, {n} entries");
                let mut seen = 0;
                for &r in &marked {
                    let mut i = std::mem::replace(&mut g.heads[r as usize], NIL);
                    let mut chain = Vec::new();
                    while i != NIL {
                        chain.push(i as usize);
                        i = g.links[i as usize];
                    }
                    chain.sort_unstable();
                    let of_r: Vec<usize> = (0..n).filter(|&i| of[i] == r).collect();
                    assert_eq!(chain, of_r, "{ranks} ranks, {n} entries, rank {r}");
                    seen += chain.len();
                }
                assert_eq!(seen, n);
                assert!(g.heads.iter().all(|&h| h == NIL) && g.bits.iter().all(|&b| b == 0));
            }
        }
    }
}
