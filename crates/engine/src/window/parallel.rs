//! Parallel windows: one run's ranks split between threads, which meet at every window's end.
//!
//! Within a window no rank can affect another (a message arrives at least a window width
//! after its send), so the ranks of a window can run on different threads. Each thread runs
//! a contiguous block of ranks ([`Part`]) with an engine of its own (`Win`: its own ring of
//! window buffers, heaps, match lists, dependency counters, noise instance, insertion counter)
//! and touches no other rank's state. A message to another thread's rank is kept aside
//! (`Win::hand_over`) and handed over at the end of the window, through a mailbox per pair of
//! threads. Then every thread publishes the earliest window in which it holds entries or has
//! handed some over; after a barrier each reads all of them, so all agree on the next window
//! (the earliest) and take their mail; the run ends when none is left, or when a thread gave
//! up (every thread then stops at that barrier, and the run gives up as the one-thread run
//! would, so the global engine answers).
//!
//! # Why the answer does not depend on the thread count
//! A rank always runs on the same thread, and the order in which ranks run within a window
//! never matters (the randomized tests also visit them in written order). Entries of one rank
//! are ordered by `(time, pt, gpt, seq)` and the tie rules of `ties.rs`, which compare `seq`
//! (an insertion counter, one per thread here) only between entries queued by one rank:
//! increasing in the order that rank queued them on any thread. Two entries of different
//! ranks may now share a `seq`; they tie on `(time, pt, gpt)` whenever their keys are equal,
//! and the tie rules order them without `seq`. A rendezvous match raises the *sender's*
//! final clock (`Win::late`, a maximum), which may be another thread's rank: each thread
//! keeps its own maxima, merged at the end. [`super::Ancestry::Full`] runs on one thread
//! (its records are shared by every rank).
//!
//! Invariant: with `threads` threads the windows, entries and events are the one-thread
//! run's; only which thread runs a rank changes. Guarded by
//! `parallel_windows_give_the_one_thread_answer` (`tests.rs`, 1, 2, 3 and 8 threads on the
//! random programs) and `tests/windowed.rs` (every shipped profile).
//!
//! # Cost
//! A thread's window costs its ranks' events plus one barrier and a look at `threads − 1`
//! mailboxes; the barrier spins briefly, then yields (the machine may be shared). Memory per
//! thread is a full engine's per-rank arrays (32 bytes of clocks and 4 of list tails, group
//! heads and bitmap per rank) but dependency counters for its own ranks only.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::buffers::{Scratch, HELPERS_SCRATCH, SCRATCH};
use super::entry::Ent;
use super::{GiveUp, Win};
use crate::noise::Noise;
use crate::params::Time;
use crate::program::Program;
use crate::sim::{Config, Outcome};

/// "No window": nothing left.
pub(super) const NONE: u64 = u64::MAX - 1;
/// Published instead of a window by a thread that gave up.
const FAILED: u64 = u64::MAX;

/// The ranks a thread runs, `lo..hi`: block `me` of `threads` blocks of `block` ranks (the
/// last may be shorter).
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    pub(super) lo: u32,
    pub(super) hi: u32,
    pub(super) block: u32,
    pub(super) threads: u32,
    pub(super) me: u32,
}

impl Part {
    /// Every rank, on one thread.
    pub(super) fn whole(ranks: u32) -> Part {
        Part {
            lo: 0,
            hi: ranks,
            block: ranks.max(1),
            threads: 1,
            me: 0,
        }
    }

    /// `ranks` split into at most `threads` blocks of equal size (none empty).
    pub(super) fn split(ranks: u32, threads: usize) -> Vec<Part> {
        let t = (threads.max(1) as u32).min(ranks.max(1));
        let block = ranks.div_ceil(t).max(1);
        let t = ranks.div_ceil(block).max(1);
        (0..t)
            .map(|me| Part {
                lo: me * block,
                hi: ((me + 1) * block).min(ranks),
                block,
                threads: t,
                me,
            })
            .collect()
    }
}

/// A barrier that spins briefly, then yields; it panics when another thread panicked (see
/// [`Poison`]) instead of waiting forever.
struct Barrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    poisoned: AtomicBool,
}

/// Spins before a waiting thread yields: about 10 µs.
const SPINS: u32 = 1 << 12;

impl Barrier {
    fn new(n: usize) -> Self {
        Barrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
        }
    }

    /// Waits until all `n` threads called it; what each wrote before is visible to all after.
    fn wait(&self) {
        let g = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(g.wrapping_add(1), Ordering::Release);
            return;
        }
        let mut spins = 0;
        while self.generation.load(Ordering::Acquire) == g {
            if self.poisoned.load(Ordering::Relaxed) {
                panic!("another thread of a parallel windowed run panicked");
            }
            if spins < SPINS {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Poisons the barrier when its thread unwinds, so the others stop waiting.
struct Poison<'a>(&'a Barrier);

impl Drop for Poison<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::Relaxed);
        }
    }
}

/// What the threads share: mailboxes (by window parity, sender and receiver: a thread fills
/// the other parity's while the last window's mail is being taken), each thread's next window
/// (by parity), and the barrier.
pub(super) struct Shared {
    threads: usize,
    mail: Vec<Mutex<Vec<Ent>>>,
    next: Vec<AtomicU64>,
    barrier: Barrier,
}

impl Shared {
    fn new(threads: usize) -> Self {
        Shared {
            threads,
            mail: (0..2 * threads * threads)
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
            next: (0..2 * threads).map(|_| AtomicU64::new(NONE)).collect(),
            barrier: Barrier::new(threads),
        }
    }

    fn mailbox(&self, parity: usize, from: usize, to: usize) -> &Mutex<Vec<Ent>> {
        &self.mail[(parity * self.threads + from) * self.threads + to]
    }
}

/// What a thread's run leaves for the merge.
struct Done {
    res: Result<(), GiveUp>,
    /// The CPU clocks of the thread's ranks, and its rendezvous and receive maxima (`late`,
    /// by rank, empty when it has none).
    clocks: Vec<Time>,
    late: Vec<Time>,
    enqueued: u64,
    messages: u64,
    open: u64,
    parked: bool,
}

/// The windowed run on up to `threads` threads (see the module documentation).
pub(super) fn run<P: Program, N: Noise, const QUEUED: bool>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    width: Time,
    written_order: bool,
    threads: usize,
) -> Result<(Outcome, bool), GiveUp> {
    let parts = Part::split(prog.num_ranks(), threads);
    let t = parts.len();
    let shared = Shared::new(t);
    let mut helpers = HELPERS_SCRATCH.with(|s| s.take());
    helpers.resize_with(t - 1, Scratch::default);
    let mut noises: Vec<N> = (1..t).map(|_| noise.clone()).collect();
    let scratch = SCRATCH.with(|s| s.take()).unwrap_or_default();
    let p = cfg.params;
    let one = |noise: &mut N, part: Part, scratch: Box<Scratch>| {
        let mut win = Win::<P, N, false, QUEUED>::new(prog, p, noise, width, scratch, part);
        win.written_order = written_order;
        let done = win.run_part(&shared);
        (done, win.into_scratch())
    };
    let mut done = Vec::with_capacity(t);
    std::thread::scope(|s| {
        let others: Vec<_> = (parts[1..].iter())
            .zip(noises.iter_mut())
            .zip(helpers.drain(..))
            .map(|((&part, noise), scratch)| s.spawn(move || one(noise, part, Box::new(scratch))))
            .collect();
        let (first, scratch) = one(noise, parts[0], scratch);
        SCRATCH.with(|s| s.set(Some(scratch)));
        done.push(first);
        for h in others {
            let (d, scratch) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            helpers.push(*scratch);
            done.push(d);
        }
    });
    HELPERS_SCRATCH.with(|s| s.set(helpers));
    merge(prog, done)
}

/// The outcome of the threads' runs: the first that gave up (by thread) gives up for all.
fn merge<P: Program>(prog: &P, done: Vec<Done>) -> Result<(Outcome, bool), GiveUp> {
    if let Some(Err(e)) = done.iter().map(|d| d.res).find(Result::is_err) {
        return Err(e);
    }
    let enqueued: u64 = done.iter().map(|d| d.enqueued).sum();
    let messages: u64 = done.iter().map(|d| d.messages).sum();
    // Queued model: sends left waiting for lower-numbered ones would stall the run; the
    // global engine starts them out of order.
    if done.iter().any(|d| d.open != 0 || d.parked) || enqueued != prog.total_ops() {
        return Err(GiveUp::Error);
    }
    let mut finish: Vec<Time> = done.iter().flat_map(|d| d.clocks.iter().copied()).collect();
    for d in &done {
        for (f, &l) in finish.iter_mut().zip(&d.late) {
            *f = (*f).max(l);
        }
    }
    Ok((
        Outcome {
            finish,
            // LogGOPSim's count: ops enqueued and messages.
            events: enqueued + messages,
            messages,
            leftovers: Vec::new(),
        },
        false,
    ))
}

impl<'a, P: Program, N: Noise, const FULL: bool, const QUEUED: bool> Win<'a, P, N, FULL, QUEUED> {
    /// This thread's part of a parallel run: its ranks' roots, then window after window as
    /// all threads agree, handing messages over at every window's end.
    fn run_part(&mut self, sh: &Shared) -> Done {
        let _poison = Poison(&sh.barrier);
        let (t, me) = (sh.threads, self.part.me as usize);
        let mut res = self.run_roots();
        let mut parity = 0;
        loop {
            let mine = if res.is_err() {
                FAILED
            } else {
                self.local_next().min(self.out_min)
            };
            for to in 0..t {
                if to == me || self.out[to].is_empty() {
                    continue;
                }
                // The mailbox was emptied two windows ago; its buffer is reused here.
                let mut m = sh
                    .mailbox(parity, me, to)
                    .lock()
                    .expect("no thread panicked");
                std::mem::swap(&mut *m, &mut self.out[to]);
            }
            self.out_min = NONE;
            sh.next[parity * t + me].store(mine, Ordering::Relaxed);
            sh.barrier.wait();
            let all = &sh.next[parity * t..(parity + 1) * t];
            let all = all.iter().map(|n| n.load(Ordering::Relaxed));
            let (w, failed) = all.fold((NONE, false), |(w, f), n| {
                (if n == FAILED { w } else { w.min(n) }, f || n == FAILED)
            });
            if failed || w == NONE {
                break;
            }
            self.enter(w);
            for from in (0..t).filter(|&from| from != me) {
                let mut m = sh
                    .mailbox(parity, from, me)
                    .lock()
                    .expect("no thread panicked");
                for e in m.drain(..) {
                    self.take_over(e);
                }
            }
            if res.is_ok()
                && !self.ring[(w % super::buffers::RING) as usize]
                    .ents
                    .is_empty()
            {
                res = self.run_at(w);
            }
            parity ^= 1;
        }
        let (lo, hi) = (self.part.lo as usize, self.part.hi as usize);
        Done {
            res,
            clocks: self.rs[lo..hi].iter().map(|r| r.o).collect(),
            late: std::mem::take(&mut self.late),
            enqueued: self.enqueued,
            messages: self.messages,
            open: self.open,
            parked: !self.parked.is_empty(),
        }
    }
}
