//! Event queues ordered by `(time, ts)`.
//!
//! [`HeapQueue`] is a binary heap and works for any schedule. [`RadixQueue`] is a radix heap:
//! it needs a *monotone* queue (nothing is ever pushed earlier than the last popped time), which
//! holds whenever every rank has a single CPU: an op freed onto an idle second CPU is the only
//! way LogGOPSim schedules into the past (LOGGOPSIM.md §6.2). The engine picks the radix heap
//! exactly then.
//!
//! Both give the same pop order. The radix heap pops from `now`, a short run sorted by
//! `(time, ts)` that precedes everything in the buckets: either all entries of the new minimum
//! time (split off the lowest bucket) or a whole small bucket, sorted. A push at a time inside
//! that run is inserted in order (a fresh event has the largest `ts` so far, so with equal times
//! it goes last); later times go to the buckets.

use std::collections::{BinaryHeap, VecDeque};

use crate::params::Time;

pub(crate) trait EventQueue<E: QueueItem> {
    fn push(&mut self, e: E);
    fn pop(&mut self) -> Option<E>;
    /// Is there an entry with key `< (time, ts)`? Only asked with `time` = the last popped time.
    fn has_before(&self, time: Time, ts: u64) -> bool;
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
    /// Scratch for the entries with the new minimum time.
    ties: Vec<E>,
    /// One large emptied bucket allocation, handed to the next bucket that fills from empty:
    /// lock-step runs move their whole front (one entry per rank) from bucket to bucket, and
    /// without this every bucket would keep an allocation of that size.
    spare: Vec<E>,
}

/// A bucket of at most this many entries is sorted into `now` at once instead of being split
/// over the lower buckets (its entries would take several more moves each on the way down).
/// (128: 20 % faster than splitting on noisy 1024-rank rings, 9 % on the 16K dissemination;
/// 32 and 512 do worse.)
const SORT_AT_MOST: usize = 128;

/// Emptied buckets keep allocations up to this many entries; larger ones go to `spare`.
const KEEP_AT_MOST: usize = 1024;

impl<E: QueueItem> RadixQueue<E> {
    pub fn new() -> Self {
        RadixQueue {
            last: 0,
            now: VecDeque::new(),
            buckets: (0..64).map(|_| Vec::new()).collect(),
            mask: 0,
            ties: Vec::new(),
            spare: Vec::new(),
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
        // Entries up to the last time in `now` belong in `now`; so does the time `last` itself
        // (no bucket holds it).
        if t == self.last || self.now.back().is_some_and(|b| t <= b.time()) {
            self.insert_now(e);
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
}

impl<E: QueueItem> RadixQueue<E> {
    /// Refills `now` from the lowest non-empty bucket (its entries of the smallest time, or all
    /// of them, sorted, if it is small) and returns the first.
    #[inline(never)]
    fn refill(&mut self) -> Option<E> {
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
        let mut ties = std::mem::take(&mut self.ties);
        for e in bucket.drain(..) {
            let t = e.time();
            if t == min {
                ties.push(e);
            } else {
                // Every other entry differs from `min` first in a bit below `b`.
                let nb = 63 - (t ^ min).leading_zeros() as usize;
                self.buckets[nb].push(e);
                self.mask |= 1 << nb;
            }
        }
        self.give_back(b, bucket);
        let first = if ties.len() == 1 {
            ties.pop()
        } else {
            ties.sort_unstable_by_key(|e| e.ts());
            let mut it = ties.drain(..);
            let first = it.next();
            self.now.extend(it);
            first
        };
        self.ties = ties;
        first
    }

    /// Returns an empty allocation to bucket `b` (or to `spare`, if large).
    #[inline]
    fn give_back(&mut self, b: usize, mut v: Vec<E>) {
        debug_assert!(v.is_empty() && self.buckets[b].is_empty());
        if v.capacity() > KEEP_AT_MOST {
            if v.capacity() > self.spare.capacity() {
                std::mem::swap(&mut v, &mut self.spare);
            }
            v = Vec::new();
        }
        self.buckets[b] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            + q.ties.capacity();
        // The front itself (in `now` or a bucket), one spare, small buckets.
        assert!(held <= 3 * 8192, "queue holds {held} entries of capacity");
        let mut left = 0;
        while q.pop().is_some() {
            left += 1;
        }
        assert_eq!(left, n);
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
        ] {
            let mut x = seed;
            let mut rnd = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
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
