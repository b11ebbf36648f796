//! Event queues ordered by `(time, ts)`.
//!
//! [`HeapQueue`] is a binary heap and works for any schedule. [`RadixQueue`] is a radix heap:
//! it needs a *monotone* queue (nothing is ever pushed earlier than the last popped time), which
//! holds whenever every rank has a single CPU: an op freed onto an idle second CPU is the only
//! way LogGOPSim schedules into the past (LOGGOPSIM.md §6.2). The engine picks the radix heap
//! exactly then.
//!
//! Both give the same pop order. The radix heap pops from `now`, a short run sorted by
//! `(time, ts)` that precedes everything else: all entries of the new minimum time (a bucket of
//! equal times), a whole small bucket, sorted, or one slice of a *rung*, sorted. A large bucket
//! with several times becomes a rung (as in a ladder queue): about `len / 16` slices of equal,
//! power-of-two width, so each entry moves once more before it is sorted, instead of about three
//! times through the lower radix buckets; a slice that has grown large by the time it is reached
//! becomes a deeper rung the same way. A push at a time inside the run is inserted in order (a
//! fresh event has the largest `ts` so far, so with equal times it goes last); later times go
//! to the rungs' slices or to the buckets. A run that grows past 256 entries by insertions hands
//! its later half back to the slice or buckets it came from.

use std::collections::{BinaryHeap, VecDeque};

use crate::params::Time;

pub(crate) trait EventQueue<E: QueueItem> {
    fn push(&mut self, e: E);
    fn pop(&mut self) -> Option<E>;
    /// Is there an entry with key `< (time, ts)`? Only asked with `time` = the last popped time.
    fn has_before(&self, time: Time, ts: u64) -> bool;
    /// Is every entry later than `time`? May answer `false` when it cannot tell cheaply.
    fn all_after(&self, time: Time) -> bool;
}

pub(crate) trait QueueItem: Copy + Ord {
    fn time(&self) -> Time;
    fn ts(&self) -> u64;
    /// `(time, ts)` as one integer (cheaper to compare than the pair).
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time() as u128) << 64 | self.ts() as u128
    }
}

pub(crate) struct HeapQueue<E>(BinaryHeap<E>);

impl<E: QueueItem> HeapQueue<E> {
    pub fn new() -> Self {
        HeapQueue(BinaryHeap::new())
    }
}

impl<E: QueueItem> EventQueue<E> for HeapQueue<E> {
    #[inline]
    fn push(&mut self, e: E) {
        self.0.push(e)
    }
    #[inline]
    fn pop(&mut self) -> Option<E> {
        self.0.pop()
    }
    #[inline]
    fn has_before(&self, time: Time, ts: u64) -> bool {
        self.0
            .peek()
            .is_some_and(|t| (t.time(), t.ts()) < (time, ts))
    }
    #[inline]
    fn all_after(&self, time: Time) -> bool {
        self.0.peek().is_none_or(|t| t.time() > time)
    }
}

pub(crate) struct RadixQueue<E> {
    /// A lower bound of every time in the queue: the minimum of the last bucket emptied.
    last: Time,
    /// The entries that pop next, ascending by `(time, ts)`; each precedes every other entry.
    /// After a split these all have time `last`; after a small bucket or a rung slice is
    /// sorted they span it.
    now: VecDeque<E>,
    /// `buckets[i]` holds entries whose time differs from `last` first in bit `i`.
    buckets: Vec<Vec<E>>,
    /// Bit `i` set when `buckets[i]` is non-empty.
    mask: u64,
    /// One large emptied bucket allocation, handed to the next bucket that fills from empty:
    /// lock-step runs move their whole front (one entry per rank) from bucket to bucket, and
    /// without this every bucket would keep an allocation of that size.
    spare: Vec<E>,
    /// Every entry with a time `<= front_max` belongs in `now` (everything in the rungs and
    /// the buckets is later).
    front_max: Time,
    /// The rungs of a ladder queue: `rungs[0]` splits a large bucket into equal slices of
    /// time instead of over the lower radix buckets (where its entries would move about three
    /// times each), and `rungs[k + 1]` splits a large slice of `rungs[k]` the same way. Only
    /// `rungs[..depth]` are in use; the others keep their allocations.
    rungs: Vec<Rung<E>>,
    depth: usize,
}

/// Equal slices of time: `slices[j]` (for `cur <= j < n`) holds the entries with time in
/// `lo + [j, j+1) << shift`, up to `max`. Every entry of a deeper rung is earlier than every
/// entry of this one, and every bucket entry is later.
struct Rung<E> {
    slices: Vec<Vec<E>>,
    lo: Time,
    max: Time,
    shift: u32,
    cur: usize,
    n: usize,
}

impl<E> Rung<E> {
    #[inline(always)]
    fn slice_of(&self, t: Time) -> usize {
        ((t - self.lo) >> self.shift) as usize
    }
}

/// A bucket or rung slice of at most this many entries is sorted into `now` at once instead
/// of being split further (its entries would take several more moves each on the way down).
/// (128: 20 % faster than splitting on noisy 1024-rank rings, 9 % on the 16K dissemination;
/// 32 and 512 do worse.)
const SORT_AT_MOST: usize = 128;

/// An insertion into the middle of a `now` of more entries than this first moves its later
/// half back to the rung or the buckets ([`RadixQueue::shed`]).
const NOW_MOST: usize = 256;

/// Emptied buckets keep allocations up to this many entries; larger ones go to `spare`.
const KEEP_AT_MOST: usize = 1024;

/// A bucket or slice of more than [`SORT_AT_MOST`] entries is split into slices of about
/// this many.
const RUNG_FILL: usize = 16;

/// Emptied runs handed to a rung slice keep allocations up to this many entries.
const SLICE_KEEP_AT_MOST: usize = 4 * RUNG_FILL;

impl<E: QueueItem> RadixQueue<E> {
    pub fn new() -> Self {
        RadixQueue {
            last: 0,
            now: VecDeque::new(),
            buckets: (0..64).map(|_| Vec::new()).collect(),
            mask: 0,
            spare: Vec::new(),
            front_max: 0,
            rungs: Vec::new(),
            depth: 0,
        }
    }

    #[inline]
    fn insert_now(&mut self, e: E) {
        let key = e.key();
        match self.now.back() {
            Some(b) if b.key() > key => {
                if self.now.len() > NOW_MOST && self.shed() {
                    // `e` may now be later than everything left in `now`.
                    return self.push(e);
                }
                let at = self.now.partition_point(|x| x.key() < key);
                self.now.insert(at, e);
            }
            _ => self.now.push_back(e),
        }
    }

    /// Moves the later half of `now` (from its first time after the middle entry's) back to
    /// the rung or the buckets; `false` when there is no such time. Without this, a rung slice
    /// or a small bucket sorted into `now` that spans a long time takes every push before its
    /// last entry, `now` grows to hold most of the queue, and each insertion moves hundreds of
    /// entries (noisy rendezvous rings at 1024 ranks: about 250 per push).
    #[cold]
    #[inline(never)]
    fn shed(&mut self) -> bool {
        let mid = self.now[self.now.len() / 2].time();
        let keep_max = if self.depth > 0 {
            mid
        } else {
            mid.max(self.front_max)
        };
        let cut = self.now.partition_point(|x| x.time() <= keep_max);
        if cut == self.now.len() {
            return false;
        }
        if let Some(r) = self.depth.checked_sub(1).map(|d| &mut self.rungs[d]) {
            // `now` is the top rung's last slice sorted, with the pushes into its range, so
            // every time in `now` is in that slice: the later entries go back to it, and it is
            // the next to sort again.
            r.cur = r.slice_of(keep_max);
            self.front_max = keep_max;
        }
        let mut later = self.now.split_off(cut);
        for e in later.drain(..) {
            self.push_later(e);
        }
        true
    }

    /// Pushes `e`, later than every entry of `now` and than `front_max`, to a rung or the
    /// buckets.
    #[inline(always)]
    fn push_later(&mut self, e: E) {
        let t = e.time();
        for r in self.rungs[..self.depth].iter_mut().rev() {
            if t <= r.max {
                let j = r.slice_of(t);
                r.slices[j].push(e);
                return;
            }
        }
        let b = 63 - (t ^ self.last).leading_zeros() as usize;
        let bucket = &mut self.buckets[b];
        if bucket.capacity() == 0 {
            *bucket = std::mem::take(&mut self.spare);
        }
        bucket.push(e);
        self.mask |= 1 << b;
    }
}

impl<E: QueueItem> EventQueue<E> for RadixQueue<E> {
    #[inline(always)]
    fn push(&mut self, e: E) {
        let t = e.time();
        debug_assert!(t >= self.last, "radix queue needs monotone times");
        // Entries up to the last time in `now` belong in `now`; so does every time up to
        // `front_max` (`last` itself, or the end of the rung slice last sorted into `now`).
        if t <= self.front_max || self.now.back().is_some_and(|b| t <= b.time()) {
            self.insert_now(e);
        } else {
            self.push_later(e);
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<E> {
        if let Some(e) = self.now.pop_front() {
            return Some(e);
        }
        self.refill()
    }

    #[inline]
    fn has_before(&self, time: Time, ts: u64) -> bool {
        self.now
            .front()
            .is_some_and(|e| (e.time(), e.ts()) < (time, ts))
    }

    /// `now` precedes everything else, so its first entry decides; an empty `now` tells only
    /// when the whole queue is empty.
    #[inline]
    fn all_after(&self, time: Time) -> bool {
        match self.now.front() {
            Some(e) => e.time() > time,
            None => self.mask == 0 && self.depth == 0,
        }
    }
}

impl<E: QueueItem> RadixQueue<E> {
    /// Refills `now` from the next slice of the rungs, or else from the lowest non-empty
    /// bucket (its entries of the smallest time, or all of them, sorted, if it is small; a
    /// large one becomes a rung first), and returns the first.
    #[inline(never)]
    fn refill(&mut self) -> Option<E> {
        if self.depth > 0 {
            if let Some(e) = self.next_slice() {
                return Some(e);
            }
        }
        if self.mask == 0 {
            return None;
        }
        let b = self.mask.trailing_zeros() as usize;
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        self.mask &= !(1 << b);
        let (min, max) = time_range(&bucket);
        self.last = min;
        self.front_max = min;
        if min == max {
            // Every entry has the new minimum time (lock-step phases of noiseless runs, often
            // thousands of entries): the bucket becomes `now` as it is, without copying, and the
            // empty `now` gives its allocation to the bucket.
            if !bucket.is_sorted_by_key(|e| e.ts()) {
                bucket.sort_unstable_by_key(|e| e.ts());
            }
            let empty = std::mem::replace(&mut self.now, VecDeque::from(bucket));
            self.give_back(b, Vec::from(empty));
            return self.now.pop_front();
        }
        if bucket.len() <= SORT_AT_MOST {
            // Sorted in place, it becomes `now` (no copy), as above.
            bucket.sort_unstable_by_key(|e| e.key());
            let empty = std::mem::replace(&mut self.now, VecDeque::from(bucket));
            self.give_back(b, Vec::from(empty));
            return self.now.pop_front();
        }
        // A rung over [min, max]: every other bucket's entries are later than `max` (they
        // differ from `last` in a higher bit), and so is every later push that does not land
        // in the rung.
        self.add_rung(&mut bucket, min, max);
        self.give_back(b, bucket);
        self.next_slice()
    }

    /// Moves `entries` (times in `[min, max]`, `min < max`) into a new top rung over
    /// `[min, max]` of about `len / RUNG_FILL` slices of a power-of-two width.
    fn add_rung(&mut self, entries: &mut Vec<E>, min: Time, max: Time) {
        let span = max - min;
        let width = span / (entries.len() / RUNG_FILL) as u64 + 1;
        let shift = 64 - (width - 1).leading_zeros();
        let n = (span >> shift) as usize + 1;
        if self.rungs.len() == self.depth {
            self.rungs.push(Rung {
                slices: Vec::new(),
                lo: 0,
                max: 0,
                shift: 0,
                cur: 0,
                n: 0,
            });
        }
        let r = &mut self.rungs[self.depth];
        if r.slices.len() < n {
            r.slices.resize_with(n, Vec::new);
        }
        for e in entries.drain(..) {
            r.slices[((e.time() - min) >> shift) as usize].push(e);
        }
        (r.lo, r.max, r.shift, r.cur, r.n) = (min, max, shift, 0, n);
        self.depth += 1;
    }

    /// Sorts the top rung's next non-empty slice into `now` (a large one becomes a deeper rung
    /// first) and returns its first entry; `None` (and no rung) once every rung is empty.
    fn next_slice(&mut self) -> Option<E> {
        while let Some(d) = self.depth.checked_sub(1) {
            let r = &mut self.rungs[d];
            let Some(j) = (r.cur..r.n).find(|&j| !r.slices[j].is_empty()) else {
                self.depth = d;
                continue;
            };
            r.cur = j + 1;
            // The slice's end: every later push up to it lands in this slice's place.
            let end = if r.cur == r.n {
                r.max
            } else {
                r.lo + ((r.cur as u64) << r.shift) - 1
            };
            let mut slice = std::mem::take(&mut r.slices[j]);
            if slice.len() > SORT_AT_MOST {
                let (min, max) = time_range(&slice);
                if min < max {
                    // Split again over [min, end]: pushes up to `end` belong below this rung.
                    self.add_rung(&mut slice, min, end);
                    self.rungs[d].slices[j] = self.keep_small(slice, SLICE_KEEP_AT_MOST);
                    continue;
                }
            }
            self.front_max = end;
            if !slice.is_sorted_by_key(|e| e.key()) {
                slice.sort_unstable_by_key(|e| e.key());
            }
            // The emptied `now` goes to the slice only if small: a rung has up to `len / 16`
            // slices, and each keeping the largest run it ever swapped with held megabytes.
            let empty = Vec::from(std::mem::replace(&mut self.now, VecDeque::from(slice)));
            self.rungs[d].slices[j] = self.keep_small(empty, SLICE_KEEP_AT_MOST);
            return self.now.pop_front();
        }
        None
    }

    /// Returns an empty allocation to bucket `b` (or to `spare`, if large).
    #[inline]
    fn give_back(&mut self, b: usize, v: Vec<E>) {
        debug_assert!(v.is_empty() && self.buckets[b].is_empty());
        self.buckets[b] = self.keep_small(v, KEEP_AT_MOST);
    }

    /// An empty allocation to keep: `v` itself if it holds at most `most` entries; otherwise
    /// a fresh one, and `v` becomes the spare if it is larger than the current one.
    #[inline]
    fn keep_small(&mut self, mut v: Vec<E>, most: usize) -> Vec<E> {
        if v.capacity() > most {
            if v.capacity() > self.spare.capacity() {
                std::mem::swap(&mut v, &mut self.spare);
            }
            v = Vec::new();
        }
        v
    }
}

/// The smallest and the largest time of `entries`.
fn time_range<E: QueueItem>(entries: &[E]) -> (Time, Time) {
    let (mut min, mut max) = (Time::MAX, 0);
    for e in entries {
        min = min.min(e.time());
        max = max.max(e.time());
    }
    (min, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::xorshift;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Item(Time, u64);
    impl QueueItem for Item {
        fn time(&self) -> Time {
            self.0
        }
        fn ts(&self) -> u64 {
            self.1
        }
    }
    impl Ord for Item {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            (o.0, o.1).cmp(&(self.0, self.1))
        }
    }
    impl PartialOrd for Item {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }

    /// A lock-step front of 5000 entries moves through ten different buckets: the emptied
    /// buckets do not each keep an allocation of the front's size.
    #[test]
    fn lock_step_fronts_share_one_spare_allocation() {
        let mut q = RadixQueue::new();
        let (n, mut ts) = (5000u64, 0);
        for _ in 0..n {
            q.push(Item(1, ts));
            ts += 1;
        }
        let mut time = 1;
        for round in 0..10 {
            let next = time + (1 << (3 * round + 2));
            for _ in 0..n {
                let e = q.pop().unwrap();
                assert_eq!(e.0, time);
                q.push(Item(next, ts));
                ts += 1;
            }
            time = next;
        }
        let held: usize = q.buckets.iter().map(Vec::capacity).sum::<usize>()
            + q.now.capacity()
            + q.spare.capacity()
            + q.rungs
                .iter()
                .flat_map(|r| &r.slices)
                .map(Vec::capacity)
                .sum::<usize>();
        // The front itself (in `now` or a bucket), one spare, small buckets.
        assert!(held <= 3 * 8192, "queue holds {held} entries of capacity");
        let mut left = 0;
        while q.pop().is_some() {
            left += 1;
        }
        assert_eq!(left, n);
    }

    /// A large bucket whose entries are mostly at one time with a few far outliers becomes a
    /// rung with one crowded slice; pushes land in slices already sorted into `now`, in later
    /// slices, and beyond the rung.
    #[test]
    fn a_skewed_rung_pops_in_heap_order() {
        let (mut r, mut h) = (RadixQueue::new(), HeapQueue::new());
        let mut ts = 0;
        let mut push = |r: &mut RadixQueue<Item>, h: &mut HeapQueue<Item>, t: Time| {
            r.push(Item(t, ts));
            h.push(Item(t, ts));
            ts += 1;
        };
        push(&mut r, &mut h, 0);
        assert_eq!(r.pop(), h.pop());
        for i in 0..4000 {
            push(&mut r, &mut h, 1000 + i % 3);
        }
        for i in 0..200 {
            push(&mut r, &mut h, 1000 + i * 7919 * 7919);
        }
        let mut n = 0;
        while let Some(a) = r.pop() {
            assert_eq!(Some(a), h.pop());
            n += 1;
            if n % 5 == 0 && n < 8000 {
                for d in [0, 1, 500, 7919 * 7919, 1 << 40] {
                    push(&mut r, &mut h, a.0 + d);
                }
            }
        }
        assert_eq!(h.pop(), None);
        assert!(n > 8000);
    }

    /// A front of 20,000 entries with clustered times (runs of equal times, as lock-step phases
    /// make, become `now` with large allocations) goes through many rungs; once drained, no
    /// slice keeps more than a small allocation from the runs it was swapped with.
    #[test]
    fn rung_slices_keep_small_allocations() {
        let mut q = RadixQueue::new();
        let mut rnd = xorshift(88172645463325252);
        let mut ts = 0;
        for _ in 0..20_000 {
            q.push(Item(rnd() % 1_000 * 1_000, ts));
            ts += 1;
        }
        for _ in 0..400_000 {
            let e = q.pop().unwrap();
            q.push(Item(e.0 + 500_000 + rnd() % 1_000 * 1_000, ts));
            ts += 1;
        }
        while q.pop().is_some() {}
        let most = q
            .rungs
            .iter()
            .flat_map(|r| &r.slices)
            .map(Vec::capacity)
            .max()
            .unwrap_or(0);
        assert!(
            most <= SLICE_KEEP_AT_MOST,
            "a slice holds {most} entries of capacity"
        );
        assert!(!q.rungs.is_empty());
    }

    /// A front of 1000 entries spread over a long time, each pop pushing one entry a short
    /// time later (noisy rendezvous rings): the pushes land in the slice being popped, which
    /// is split again into a deeper rung instead of growing `now` (each insertion into `now`
    /// moves the entries after it).
    #[test]
    fn pushes_into_the_current_slice_go_to_a_deeper_rung() {
        let (mut r, mut h) = (RadixQueue::new(), HeapQueue::new());
        let mut rnd = xorshift(7);
        let mut ts = 0;
        for _ in 0..1000 {
            let e = Item(1 + rnd() % (1 << 24), ts);
            ts += 1;
            r.push(e);
            h.push(e);
        }
        let (mut most_now, mut deepest) = (0, 0);
        for _ in 0..200_000 {
            let a = r.pop().unwrap();
            assert_eq!(Some(a), h.pop());
            let e = Item(a.0 + rnd() % (1 << 14), ts);
            ts += 1;
            r.push(e);
            h.push(e);
            most_now = most_now.max(r.now.len());
            deepest = deepest.max(r.depth);
        }
        while let Some(a) = r.pop() {
            assert_eq!(Some(a), h.pop());
        }
        assert_eq!(h.pop(), None);
        assert!(most_now <= 2 * NOW_MOST, "`now` grew to {most_now} entries");
        assert!(deepest >= 2, "no slice was split again");
    }

    /// A monotone random workload: each pop pushes 0-3 entries at or after the popped time,
    /// with fresh ts, and sometimes an old ts (a re-queued batch remainder) at the same time.
    #[test]
    fn radix_pops_in_the_same_order_as_the_binary_heap() {
        for (seed, spread, start) in [
            (1u64, 4u64, 50),
            (2, 1000, 50),
            (3, 1 << 40, 50),
            (4, 1, 50),
            (5, 1 << 20, 3000),
            (6, 100, 3000),
            (7, 1 << 30, 20_000),
        ] {
            let mut rnd = xorshift(seed);
            let (mut r, mut h) = (RadixQueue::new(), HeapQueue::new());
            let mut ts = 0;
            for _ in 0..start {
                let e = Item(rnd() % spread, ts);
                ts += 1;
                r.push(e);
                h.push(e);
            }
            let mut popped = 0;
            while let Some(a) = r.pop() {
                assert_eq!(Some(a), h.pop());
                popped += 1;
                if popped > 20_000 {
                    continue;
                }
                assert_eq!(r.has_before(a.0, a.1 + 1), h.has_before(a.0, a.1 + 1));
                for _ in 0..rnd() % 4 {
                    let e = Item(a.0 + rnd() % spread, ts);
                    ts += 1;
                    r.push(e);
                    h.push(e);
                }
                if rnd().is_multiple_of(16) {
                    let e = Item(a.0, a.1 + 1);
                    if !r.has_before(a.0, a.1 + 1) {
                        r.push(e);
                        h.push(e);
                    }
                }
            }
            assert_eq!(h.pop(), None);
        }
    }
}
