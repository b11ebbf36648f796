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
//! times through the lower radix buckets. A push at a time inside the run is inserted in order
//! (a fresh event has the largest `ts` so far, so with equal times it goes last); later times go
//! to the rung's slices or to the buckets.

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
    /// The entries that pop next, ascending by `(time, ts)`; each precedes every bucket entry.
    /// After a split these all have time `last`; after a small bucket is sorted they span it.
    now: VecDeque<E>,
    /// `buckets[i]` holds entries whose time differs from `last` first in bit `i`.
    buckets: Vec<Vec<E>>,
    /// Bit `i` set when `buckets[i]` is non-empty.
    mask: u64,
    /// One large emptied bucket allocation, handed to the next bucket that fills from empty:
    /// lock-step runs move their whole front (one entry per rank) from bucket to bucket, and
    /// without this every bucket would keep an allocation of that size.
    spare: Vec<E>,
    /// Every entry with a time `<= front_max` belongs in `now` (everything in the rung and the
    /// buckets is later).
    front_max: Time,
    /// A large bucket split once into equal slices of time (a ladder queue's rung) instead of
    /// over the lower radix buckets, where its entries would move about three times each.
    /// `rung[j]` (for `rung_cur <= j < rung_n`) holds the entries with time in
    /// `rung_lo + [j, j+1) << rung_shift`, up to `rung_max`; every bucket entry is later.
    rung: Vec<Vec<E>>,
    rung_lo: Time,
    rung_max: Time,
    rung_shift: u32,
    rung_cur: usize,
    /// Slices in the current rung; 0 when there is none.
    rung_n: usize,
}

/// A bucket of at most this many entries is sorted into `now` at once instead of being split
/// over the lower buckets (its entries would take several more moves each on the way down).
/// (128: 20 % faster than splitting on noisy 1024-rank rings, 9 % on the 16K dissemination;
/// 32 and 512 do worse.)
const SORT_AT_MOST: usize = 128;

/// Emptied buckets keep allocations up to this many entries; larger ones go to `spare`.
const KEEP_AT_MOST: usize = 1024;

/// A bucket of more than [`SORT_AT_MOST`] entries is split into slices of about this many.
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
            rung: Vec::new(),
            rung_lo: 0,
            rung_max: 0,
            rung_shift: 0,
            rung_cur: 0,
            rung_n: 0,
        }
    }

    #[inline]
    fn insert_now(&mut self, e: E) {
        let key = e.key();
        match self.now.back() {
            Some(b) if b.key() > key => {
                let at = self.now.partition_point(|x| x.key() < key);
                self.now.insert(at, e);
            }
            _ => self.now.push_back(e),
        }
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
        } else if t <= self.rung_max && self.rung_n > 0 {
            self.rung[((t - self.rung_lo) >> self.rung_shift) as usize].push(e);
        } else {
            let b = 63 - (t ^ self.last).leading_zeros() as usize;
            let bucket = &mut self.buckets[b];
            if bucket.capacity() == 0 {
                *bucket = std::mem::take(&mut self.spare);
            }
            bucket.push(e);
            self.mask |= 1 << b;
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
            None => self.mask == 0 && self.rung_n == 0,
        }
    }
}

impl<E: QueueItem> RadixQueue<E> {
    /// Refills `now` from the next slice of the rung, or else from the lowest non-empty bucket
    /// (its entries of the smallest time, or all of them, sorted, if it is small; a large one
    /// becomes a rung first), and returns the first.
    #[inline(never)]
    fn refill(&mut self) -> Option<E> {
        if self.rung_n > 0 {
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
        let (mut min, mut max) = (Time::MAX, 0);
        for e in &bucket {
            min = min.min(e.time());
            max = max.max(e.time());
        }
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
        // A rung of about `len / RUNG_FILL` slices of a power-of-two width over [min, max].
        // Every other bucket's entries are later than `max` (they differ from `last` in a
        // higher bit), and so is every later push that does not land in the rung.
        let span = max - min;
        let width = span / (bucket.len() / RUNG_FILL) as u64 + 1;
        let shift = 64 - (width - 1).leading_zeros();
        let n = (span >> shift) as usize + 1;
        if self.rung.len() < n {
            self.rung.resize_with(n, Vec::new);
        }
        for e in bucket.drain(..) {
            self.rung[((e.time() - min) >> shift) as usize].push(e);
        }
        self.give_back(b, bucket);
        (self.rung_lo, self.rung_max, self.rung_shift) = (min, max, shift);
        (self.rung_cur, self.rung_n) = (0, n);
        self.next_slice()
    }

    /// Sorts the rung's next non-empty slice into `now` and returns its first entry; `None`
    /// (and no rung) once the rung is empty.
    fn next_slice(&mut self) -> Option<E> {
        while self.rung_cur < self.rung_n {
            let j = self.rung_cur;
            self.rung_cur += 1;
            if self.rung[j].is_empty() {
                continue;
            }
            self.front_max = if self.rung_cur == self.rung_n {
                self.rung_max
            } else {
                self.rung_lo + ((self.rung_cur as u64) << self.rung_shift) - 1
            };
            let mut slice = std::mem::take(&mut self.rung[j]);
            if !slice.is_sorted_by_key(|e| e.key()) {
                slice.sort_unstable_by_key(|e| e.key());
            }
            // The emptied `now` goes to the slice only if small: a rung has up to `len / 16`
            // slices, and each keeping the largest run it ever swapped with held megabytes.
            let empty = Vec::from(std::mem::replace(&mut self.now, VecDeque::from(slice)));
            self.rung[j] = self.keep_small(empty, SLICE_KEEP_AT_MOST);
            return self.now.pop_front();
        }
        self.rung_n = 0;
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
            + q.rung.iter().map(Vec::capacity).sum::<usize>();
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
        let most = q.rung.iter().map(Vec::capacity).max().unwrap_or(0);
        assert!(
            most <= SLICE_KEEP_AT_MOST,
            "a slice holds {most} entries of capacity"
        );
        assert!(!q.rung.is_empty());
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
                if rnd() % 16 == 0 {
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
