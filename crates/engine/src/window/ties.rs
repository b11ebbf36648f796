//! The order of a rank's events: which pending entry runs next ([`Win::select`]), and
//! LogGOPSim's order of entries that tie on `(time, pt, gpt)`.
//!
//! Within a rank, the global engine orders events by `(time, ts)`, `ts` being a global
//! insertion counter. That counter orders insertions the way their parent events were
//! processed: an event queued while processing an event at time `a` precedes one queued at
//! time `b > a`, and two events queued by events of the same rank at the same time keep that
//! rank's order. So each entry carries a stamp of where it was queued and its parent's stamp
//! ([`super::entry`]), and a rank's events run in the order `(time, pt, gpt, seq)` (`pt`: when
//! the entry was queued, `gpt`: when its parent was). Two entries with equal `time`, `pt` and
//! `gpt` but queued by different ranks (two messages sent at one instant by two ranks that
//! arrive at one instant) are in the order their parents ran, which ran at one instant and so
//! in the order they were queued: by the roots' order when the parents are roots (queued rank
//! by rank before the run), else by when the parents' parents were queued (`ggpt`: lock-step
//! ranks whose sends each follow a zero-length calc tie down to there); see
//! [`Ent::order_tied`]. Queued by the same rank, they keep that rank's order (`seq`).
//!
//! Beyond that only the global insertion order could tell them apart (noise with few distinct
//! values makes whole histories of different ranks coincide). With [`super::Ancestry::Recent`]
//! the engine then gives up ([`GiveUp::Tie`]). With [`super::Ancestry::Full`] every event that
//! queues others leaves a 24-byte record ([`Rec`]: its `pt`, rank, `seq` and its parent's
//! record; an entry's `g2` then holds its parent's record), and [`Win::order`] follows both
//! entries' ancestries back until two ancestors were queued at different times, by one rank
//! (in its order) or before the run (rank by rank), which always decides: records are made
//! before their children's, so the walk ends, at the roots at the latest. A run keeps at most
//! [`FULL_RECORDS`] records and gives up as on a tie beyond them. A full-ancestry run also
//! notes whether it met a tie that recent ancestry gives up on (`Win::deep_tie`), which
//! [`super::WindowOdds`] counts and the tests check against the recent-ancestry run.
//!
//! A tie group of [`TIE_ASIDE`] or more entries is sorted once by that order and set aside
//! (`Win::tie`), its next entry in the heap (a new entry tying with it puts the group back):
//! picked from the heap one by one, g tied sends deferred in turn by their NIC cost about g³
//! heap operations.
//!
//! Invariants: every order decided here is LogGOPSim's, and where it cannot be decided the run
//! gives up, never guesses. The randomized tests (`tests.rs`:
//! `windowed_engine_gives_the_global_answer_or_gives_up`, `full_ancestry_orders_lock_step_ties`,
//! `large_tie_groups_give_the_global_answer` and the tests of simultaneous messages) fail when
//! the order, the walk or the tie check is changed.

use std::cmp::Ordering;

use super::entry::{Ent, Min, Stamp, MSG_BIT};
use super::{GiveUp, Win, FULL_RECORDS};
use crate::noise::Noise;
use crate::params::Time;
use crate::program::Program;

/// "No record": queued before the run.
pub(super) const NO_REC: u32 = u32::MAX;

/// What [`super::Ancestry::Full`] keeps of an event that queued others: the stamp it was
/// queued with (`pt`, `seq`, `src`) and the record of the event that queued it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rec {
    pt: Time,
    seq: u64,
    src: u32,
    parent: u32,
}

/// A tie group of at least this many entries is sorted once and kept aside
/// ([`Win::first_of_tie`]).
const TIE_ASIDE: usize = 8;

impl Ent {
    /// LogGOPSim's order of two entries of one rank that tie on `(time, pt, gpt)`, or `None`
    /// when it would take more history: queued by the same rank, they keep that rank's order
    /// (`seq`). Queued by different ranks, they are in the order their parents ran, which ran
    /// at the same time and so in the order they were queued, which was at the same time too:
    /// before the run (roots, queued rank by rank: by `gsrc`, then the parent's `seq`), or
    /// while their own parents ran, in the order those were queued: by when (`ggpt`), if that
    /// differs.
    #[inline]
    fn order_tied(&self, other: &Ent) -> Option<Ordering> {
        if self.src() == other.src() {
            Some((self.seq & !MSG_BIT).cmp(&(other.seq & !MSG_BIT)))
        } else if self.gpt == 0 {
            // `g2` is the parent's `seq`.
            Some((self.gsrc(), self.g2).cmp(&(other.gsrc(), other.g2)))
        } else if self.g2 != other.g2 {
            // `g2` is `ggpt`.
            Some(self.g2.cmp(&other.g2))
        } else {
            None
        }
    }
}

impl<'a, P: Program, N: Noise, const FULL: bool, const QUEUED: bool> Win<'a, P, N, FULL, QUEUED> {
    /// Records the time of the heap's first entry, after the heap changed.
    #[inline(always)]
    pub(super) fn heap_changed(&mut self) {
        self.heap_first = self.heap.peek().map_or(Time::MAX, |Min(m)| m.time);
    }

    /// Makes the event queued with `stamp` by the event of record `queued_by` the one being run.
    #[inline(always)]
    pub(super) fn set_parent(&mut self, stamp: Stamp, queued_by: u32) {
        self.parent = stamp;
        if FULL {
            self.parent_in = queued_by;
            self.parent_rec = NO_REC;
        }
    }

    /// With `FULL`, the record of the event being run, made when it first queues something;
    /// else [`NO_REC`].
    #[inline(always)]
    pub(super) fn parent_record(&mut self) -> u32 {
        if FULL && self.parent_rec == NO_REC {
            self.new_record();
        }
        self.parent_rec
    }

    fn new_record(&mut self) {
        if self.records.len() >= FULL_RECORDS {
            // The run is abandoned at the next check; record 0 stands in until then.
            self.too_deep = true;
            self.overflow = true;
            self.parent_rec = 0;
            return;
        }
        self.parent_rec = self.records.len() as u32;
        self.records.push(Rec {
            pt: self.parent.pt,
            seq: self.parent.seq,
            src: self.parent.src,
            parent: self.parent_in,
        });
    }

    /// An entry queued by the event being run.
    #[inline(always)]
    pub(super) fn child(
        &mut self,
        time: Time,
        pt: Time,
        seq: u64,
        gap: Time,
        rank: u32,
        item: u32,
    ) -> Ent {
        let mut e = Ent::new(time, pt, seq, gap, rank, self.host, item, self.parent);
        if FULL {
            e.g2 = self.parent_record() as u64;
        }
        e
    }

    /// LogGOPSim's order of two entries of the current rank that tie on `(time, pt, gpt)`, or
    /// `None` when it takes more history than the entries carry (never with `FULL`).
    #[inline]
    fn order(&mut self, x: &Ent, y: &Ent) -> Option<Ordering> {
        if !FULL {
            return x.order_tied(y);
        }
        // Where `Ent::order_tied` gives up (`g2` holds records here, so it is asked what it
        // would read: the parents' parents' `pt`).
        let ggpt = |e: &Ent| self.records[self.records[e.g2 as usize].parent as usize].pt;
        if x.src() != y.src() && x.gpt != 0 && ggpt(x) == ggpt(y) {
            self.deep_tie = true;
        }
        // Two events queued at one instant by events of different ranks are in the order
        // those ran, which ran at one instant too, so in the order they were queued: walk
        // up both ancestries until two ancestors were queued at different times, by one rank
        // (in its order) or before the run (rank by rank). Records are made before their
        // children's, so the walk ends, at the roots at the latest; ancestors queued by one
        // event have one rank, so it never reaches a common ancestor.
        let of = |e: &Ent| Rec {
            pt: e.pt,
            seq: e.seq & !MSG_BIT,
            src: e.src(),
            parent: e.g2 as u32,
        };
        let (mut a, mut b) = (of(x), of(y));
        while a.src != b.src && a.pt == b.pt && a.pt != 0 {
            a = self.records[a.parent as usize];
            b = self.records[b.parent as usize];
        }
        Some((a.pt, a.src, a.seq).cmp(&(b.pt, b.src, b.seq)))
    }

    /// Makes `next` the current rank's next event: `next` itself (the last event's own entry
    /// for this window) or the heap's minimum, whichever LogGOPSim would run first; false when
    /// the rank has nothing left in this window, `Tie` if only the global insertion order could
    /// choose.
    #[inline(always)]
    pub(super) fn select(&mut self) -> Result<bool, GiveUp> {
        let e = match (self.has_next, self.heap.peek()) {
            (true, None) => return Ok(true),
            (true, Some(Min(m))) if self.next.key() < m.key() && !self.next.tied(m) => {
                return Ok(true)
            }
            // The heap's first comes first, or ties with `next` (then the tie rule below picks
            // among them): `next` takes its place (one sift instead of a push and a pop).
            (true, Some(_)) => {
                let mut first = self.heap.peek_mut().expect("peeked");
                Some(std::mem::replace(&mut *first, Min(self.next)))
            }
            // Not a call to `pop` only to learn the heap is empty (once per rank and window).
            (false, None) => return Ok(false),
            (false, Some(_)) => self.heap.pop(),
        };
        let Some(Min(e)) = e else { return Ok(false) };
        self.next = match self.heap.peek() {
            Some(Min(m)) if e.tied(m) => self.first_of_tie(e)?,
            _ => {
                if !self.tie.is_empty() {
                    self.next_aside(&e);
                }
                e
            }
        };
        self.heap_changed();
        self.has_next = true;
        Ok(true)
    }

    /// When `select` takes `e` from the heap without a tie: if it is the set-aside group's
    /// entry in the heap (an entry of the group's `(time, pt, gpt)` taken without a tie is
    /// that one: any other would have tied with it), the group's next entry takes its place.
    #[cold]
    #[inline(never)]
    fn next_aside(&mut self, e: &Ent) {
        let aside = self.tie.last().expect("not empty");
        if e.tied(aside) {
            let e = self.tie.pop().expect("not empty");
            self.heap.push(Min(e));
        }
    }

    /// Of `e` and the heap entries tied with it, the one LogGOPSim runs first. The others go
    /// back to the heap; or, for a large group, are sorted once and kept aside in `tie`
    /// (picked again from the heap one by one, g tied sends deferred by their NIC in turn
    /// cost g³ heap operations: more than 10 minutes per repetition of a 1024-rank 255-way
    /// dissemination, 25 s set aside).
    #[cold]
    #[inline(never)]
    fn first_of_tie(&mut self, e: Ent) -> Result<Ent, GiveUp> {
        if self.tie.last().is_some_and(|t| e.tied(t)) {
            // A new entry ties with the group set aside (whose next entry is in the heap):
            // the whole group is picked from again.
            self.heap.extend(self.tie.drain(..).map(Min));
        }
        let mut group = vec![e];
        while let Some(Min(m)) = self.heap.peek() {
            if !e.tied(m) {
                break;
            }
            group.push(self.heap.pop().expect("peeked").0);
        }
        if group.len() >= TIE_ASIDE && self.tie.is_empty() {
            let mut sorted = self.sort_tied(group)?;
            let first = sorted.pop().expect("a group of several");
            self.heap
                .push(Min(sorted.pop().expect("a group of several")));
            self.tie = sorted;
            return Ok(first);
        }
        // Every order `order` decides is LogGOPSim's, so the first is found by comparing each
        // entry with the best so far (pairs of later entries are compared when one of them is
        // picked, not now: checking every pair made a rank's g tied sends cost g³).
        let mut best = 0;
        for i in 1..group.len() {
            if self.order(&group[i], &group[best]).ok_or(GiveUp::Tie)? == Ordering::Less {
                best = i;
            }
        }
        let first = group.swap_remove(best);
        self.heap.extend(group.into_iter().map(Min));
        Ok(first)
    }

    /// `group` (tied entries) sorted by `order`, the first last: a merge sort, so that an
    /// order that gives up stops it without a panic.
    fn sort_tied(&mut self, mut group: Vec<Ent>) -> Result<Vec<Ent>, GiveUp> {
        // The heap gives the group by `seq`, often LogGOPSim's order already (one rank's
        // sends deferred together by the NIC, window after window).
        let mut sorted = true;
        for i in 1..group.len() {
            if self.order(&group[i - 1], &group[i]).ok_or(GiveUp::Tie)? != Ordering::Less {
                sorted = false;
                break;
            }
        }
        if sorted {
            group.reverse();
            return Ok(group);
        }
        let mut buf = Vec::with_capacity(group.len());
        let mut width = 1;
        while width < group.len() {
            buf.clear();
            for lo in (0..group.len()).step_by(2 * width) {
                let mid = (lo + width).min(group.len());
                let hi = (lo + 2 * width).min(group.len());
                let (mut i, mut j) = (lo, mid);
                while i < mid && j < hi {
                    // Later first: the earliest ends up last.
                    if self.order(&group[i], &group[j]).ok_or(GiveUp::Tie)? == Ordering::Less {
                        buf.push(group[j]);
                        j += 1;
                    } else {
                        buf.push(group[i]);
                        i += 1;
                    }
                }
                buf.extend_from_slice(&group[i..mid]);
                buf.extend_from_slice(&group[j..hi]);
            }
            std::mem::swap(&mut group, &mut buf);
            width *= 2;
        }
        Ok(group)
    }
}
