//! The windowed engine: a noisy run processed rank by rank, one window of simulated time at a
//! time, with the global engine's exact answers.
//!
//! In a noisy run almost every event has its own time, so the global engine's queue orders
//! every event against every other and each event lands on a random rank. But ranks only
//! influence each other through messages, and a message arrives at least
//! [`Noise::min_message_delay`] (`o + L` at their smallest) after the event that sends it, or
//! `o + 3L` when every message is a rendezvous message (paying the paper's three latencies:
//! `rndv_extra_latencies` more smallest latencies, [`Noise::min_latency`], when every send of
//! the program is larger than S; [`Program::min_send_size`] tells, exact for GOAL files,
//! generated collectives and workload files, 0 by default): the *lookahead*. So time is cut
//! into windows of that width: whatever a rank does inside a window depends only on its own
//! earlier events and on messages sent in earlier windows (a message sent sooner makes the run
//! give up). The engine takes the events of one window (messages and deferred ops, kept in a
//! ring of per-window buffers), groups them by rank and runs each rank's events in order with
//! a per-rank heap (a conservative parallel discrete-event simulation, run on one thread or,
//! with `threads` above 1, its ranks split between threads: `parallel.rs`).
//!
//! # Same answers as the global engine, or none
//! The event rules are the global engine's ([`crate::sim`]); only the order in which events of
//! *different* ranks are processed changes, and nothing observes that. Within a rank, events
//! run in LogGOPSim's `(time, ts)` order, rebuilt from where each event was queued. Where this
//! engine cannot be sure of the global engine's answer it gives up ([`GiveUp`]): on a
//! rendezvous send that frees ops, on a message faster than the lookahead, on a tie that only
//! the global insertion order decides (with [`Ancestry::Recent`]; with [`Ancestry::Full`]
//! beyond [`FULL_RECORDS`] records), on overflow and on runs that do not complete;
//! [`crate::sim::simulate`] then runs the global engine on the repetition. So `simulate` never
//! returns anything else than `simulate_global` would. A repetition given up on is started over
//! with the same noise instance, so [`Noise`] implementations may keep only caches between
//! calls.
//!
//! A program with an op table runs on the table without the `requires` that a chain of
//! `requires` implies (`reduce.rs`: the same ops are freed by the same completions, in the
//! same places), which saves dependency counters; the global engine reads the table as it is,
//! and `tests/windowed.rs` compares the two on every shipped profile.
//!
//! # The files, one concern each
//! - this file: the entry points, the lookahead, and the engine's state (`Win`);
//! - `entry.rs`: what a pending event is (an entry of 8-byte fields), the stamps it carries of
//!   where it was queued, and the per-rank heap order;
//! - `ties.rs`: which of a rank's pending events runs next, LogGOPSim's order of events that
//!   tie, the ancestry records that order the deepest ties, large tie groups set aside;
//! - `buffers.rs`: the ring of per-window buffers, entries beyond it, grouping a window by
//!   rank, and the allocations kept from run to run;
//! - `driver.rs`: the run: the roots, then window by window and rank by rank, and the outcome;
//! - `events.rs`: the event rules: ops, sends, messages, and the ops an event frees;
//! - `rendezvous.rs`: rendezvous sends, released when a receive matches their message;
//! - `parallel.rs`: one run's ranks split between threads, messages handed over at each
//!   window's end ([`simulate_windowed_on`], [`WindowOdds::simulate_on`]); the same answer
//!   for any thread count;
//! - `odds.rs`: [`WindowOdds`], which engine and ancestry to try first;
//! - `tests.rs`: randomized comparisons with the global engine.
//!
//! # The state of a run
//! `Win` holds everything a run touches. The running rank's clocks and queue heads are copied
//! into the engine (`Win::me`) while it runs and written back after, so no event indexes the
//! rank array; the event being run stays in place (`Win::next`) instead of being passed around
//! by value (a copy of a whole entry read back at once stalls store-to-load forwarding, see
//! `entry.rs`). A rank's clocks and match-queue heads fit in 32 bytes (`Rank`).

mod buffers;
mod driver;
mod entry;
mod events;
mod odds;
mod parallel;
mod rendezvous;
#[cfg(test)]
mod tests;
mod ties;

use std::collections::BinaryHeap;

use crate::counters::Counters;
use crate::matching::Lists;
use crate::noise::Noise;
use crate::params::{Params, Time};
use crate::program::{Program, Tabled};
use crate::sim::{Config, Model, MpiProgress, Order, Outcome};
use buffers::{Far, Groups, Slot, SCRATCH};
use entry::{Ent, Min, Stamp};
use parallel::Part;
use ties::Rec;

pub use odds::WindowOdds;

/// Why the windowed engine handed a run to the global engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// The run or the noise is outside what the windowed engine handles: compat mode, the
    /// libstdc++ order, [`MpiProgress::Polled`](crate::MpiProgress::Polled), several CPUs or
    /// NICs per rank, or no positive lookahead.
    Unsupported,
    /// A rendezvous send with completion dependents (a match frees them on its sender with no
    /// delay).
    Rendezvous,
    /// A message arrived sooner than the lookahead promised.
    Lookahead,
    /// Two events of a rank that only the global insertion order can order (with
    /// [`Ancestry::Recent`], or beyond [`FULL_RECORDS`] records with [`Ancestry::Full`]).
    Tie,
    /// Overflow, a bad peer, or a run that did not complete: the global engine reports it.
    Error,
}

/// How far back the windowed engine follows the events that queued two simultaneous events
/// of a rank to order them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ancestry {
    /// Up to the parents' parents (what entries carry): nothing is recorded per event, and
    /// the ties that need more give up.
    Recent,
    /// As far back as it takes: every event that queues others leaves a 24-byte record, for
    /// noise with few distinct values, where whole histories of different ranks coincide.
    /// At most [`FULL_RECORDS`] records per run, beyond which it gives up.
    Full,
}

/// The most event records an [`Ancestry::Full`] run keeps (96 MiB; 4096 in this crate's
/// unit tests, which run past it).
pub const FULL_RECORDS: usize = if cfg!(test) { 1 << 12 } else { 1 << 22 };

/// Runs `prog` with the windowed engine, or says why it cannot give the global engine's answer.
/// `noise` may be left holding caches of a partial run.
pub fn simulate_windowed<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
) -> Result<Outcome, GiveUp> {
    simulate_windowed_with(prog, cfg, noise, Ancestry::Recent)
}

/// [`simulate_windowed`], ordering simultaneous events as far back as `ancestry` says.
pub fn simulate_windowed_with<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    ancestry: Ancestry,
) -> Result<Outcome, GiveUp> {
    windowed(prog, cfg, noise, ancestry, 1).map(|(out, _)| out)
}

/// [`simulate_windowed_with`] on up to `threads` threads (the calling one and `threads - 1`
/// scoped ones), the ranks split between them (see `parallel.rs`); the answer is the same
/// for every thread count. [`Ancestry::Full`] runs on one thread (its records are shared by
/// every rank).
pub fn simulate_windowed_on<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    ancestry: Ancestry,
    threads: usize,
) -> Result<Outcome, GiveUp> {
    windowed(prog, cfg, noise, ancestry, threads).map(|(out, _)| out)
}

/// [`simulate_windowed_on`], and whether a tie took more ancestry than recent ancestry
/// follows (only full ancestry answers such runs).
fn windowed<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    ancestry: Ancestry,
    threads: usize,
) -> Result<(Outcome, bool), GiveUp> {
    let width = lookahead(prog, &cfg.params, noise);
    if !N::ACTIVE
        || cfg.compat
        || cfg.order != Order::Stable
        || cfg.mpi_progress != MpiProgress::Async
        || width == 0
        || prog.num_cpus() > 1
        || prog.num_nics() > 1
    {
        return Err(GiveUp::Unsupported);
    }
    match prog.op_table() {
        Some(t) => match crate::reduce::reduce(&t) {
            Some(r) => {
                let prog = Tabled::with_own_counts(prog, r.table(t.ranks));
                run_windowed(&prog, cfg, noise, width, false, ancestry, threads)
            }
            None => run_windowed(
                &Tabled::new(prog, t),
                cfg,
                noise,
                width,
                false,
                ancestry,
                threads,
            ),
        },
        None => run_windowed(prog, cfg, noise, width, false, ancestry, threads),
    }
}

/// The width of the windows: how long after its send a message arrives at the earliest
/// ([`Noise::min_message_delay`]; 0 when the noise gives no bound), plus
/// `rndv_extra_latencies` smallest latencies when every send of the program is larger than S
/// (each message a rendezvous message).
fn lookahead<P: Program, N: Noise>(prog: &P, p: &Params, noise: &N) -> Time {
    let delay = noise.min_message_delay();
    if delay > 0 && prog.min_send_size() > p.s {
        let extra = noise
            .min_latency()
            .saturating_mul(p.rndv_extra_latencies as Time);
        delay.saturating_add(extra)
    } else {
        delay
    }
}

/// The windowed run; `written_order`: visit the ranks of every window in the order their
/// first entries were written, even where the engine would visit them in ascending order
/// (the answer is the same: tests compare both). `threads` above 1 splits the ranks between
/// threads ([`Ancestry::Recent`] only).
fn run_windowed<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    width: Time,
    written_order: bool,
    ancestry: Ancestry,
    threads: usize,
) -> Result<(Outcome, bool), GiveUp> {
    let queued = cfg.model == Model::Queued;
    if threads > 1 && ancestry == Ancestry::Recent && prog.num_ranks() > 1 {
        return if queued {
            parallel::run::<P, N, true>(prog, cfg, noise, width, written_order, threads)
        } else {
            parallel::run::<P, N, false>(prog, cfg, noise, width, written_order, threads)
        };
    }
    fn run<P: Program, N: Noise, const FULL: bool, const QUEUED: bool>(
        prog: &P,
        cfg: &Config,
        noise: &mut N,
        width: Time,
        written_order: bool,
    ) -> Result<(Outcome, bool), GiveUp> {
        let scratch = SCRATCH.with(|s| s.take()).unwrap_or_default();
        let part = Part::whole(prog.num_ranks());
        let mut win = Win::<P, N, FULL, QUEUED>::new(prog, cfg.params, noise, width, scratch, part);
        win.written_order = written_order;
        let out = win.run();
        let deep = win.deep_tie;
        SCRATCH.with(|s| s.set(Some(win.into_scratch())));
        out.map(|out| (out, deep))
    }
    match (ancestry, queued) {
        (Ancestry::Recent, false) => {
            run::<P, N, false, false>(prog, cfg, noise, width, written_order)
        }
        (Ancestry::Full, false) => run::<P, N, true, false>(prog, cfg, noise, width, written_order),
        (Ancestry::Recent, true) => {
            run::<P, N, false, true>(prog, cfg, noise, width, written_order)
        }
        (Ancestry::Full, true) => run::<P, N, true, true>(prog, cfg, noise, width, written_order),
    }
}

/// A rank's clocks and match-queue heads (one CPU and one NIC).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Rank {
    o: Time,
    gs: Time,
    gr: Time,
    rq: u32,
    uq: u32,
}

/// The state of a windowed run (see the module documentation); `FULL`: [`Ancestry::Full`].
struct Win<'a, P: Program, N: Noise, const FULL: bool, const QUEUED: bool> {
    prog: &'a P,
    p: Params,
    noise: &'a mut N,
    ranks: u32,
    /// The ranks this engine runs (all of them on one thread) and, with several threads,
    /// where messages to the others' ranks wait for the window's end (`out`, by thread, with
    /// the earliest window they are due in, `out_min`; see `parallel.rs`).
    part: Part,
    out: Vec<Vec<Ent>>,
    out_min: u64,
    /// Every rank's state, except the current rank's while it runs: that is `me`.
    rs: Vec<Rank>,
    me: Rank,
    /// The match lists (their heads are in `rs`).
    lists: Lists,
    counters: Counters,
    start_deps: bool,
    /// Window width (the lookahead), `floor(2^64 / width)`, the current window and its end.
    width: Time,
    recip: u64,
    cur: u64,
    w_end: Time,
    /// Entries of windows `cur..cur + RING`, by `window % RING`, and how many there are.
    ring: Vec<Slot>,
    in_ring: usize,
    far: BinaryHeap<Far>,
    /// The current rank's events of this window: `next` (when `has_next`), the one run next
    /// unless the heap holds an earlier one, and the rest. The event being run is `next`: its
    /// fields are read where they were written, with no copies of the whole entry.
    heap: BinaryHeap<Min>,
    /// The time of the heap's first entry (`Time::MAX` when it is empty), set after every
    /// change of the heap: an event due earlier is the rank's next one whatever the stamps.
    heap_first: Time,
    /// The rest of a large tie group (see [`Self::first_of_tie`]), last the first in
    /// LogGOPSim's order; all share one `(time, pt, gpt)`. Pending like the heap's entries;
    /// while it is not empty, the group's next entry is in the heap, so the heap speaks for it.
    tie: Vec<Ent>,
    next: Ent,
    has_next: bool,
    host: u32,
    now: Time,
    /// The stamp of the event being run (the parent of what it queues).
    parent: Stamp,
    /// With `FULL`: the record of the event that queued it, and its own record once it has
    /// queued something ([`ties::NO_REC`] before).
    parent_in: u32,
    parent_rec: u32,
    records: Vec<Rec>,
    /// `FULL` and more than [`FULL_RECORDS`] records (`overflow` is set too).
    too_deep: bool,
    /// `FULL` and a tie that recent ancestry would have given up on.
    deep_tie: bool,
    seq: u64,
    /// Ops of `host` freed by the current event, in release order.
    freed: Vec<u32>,
    /// Large emptied window buffers (see [`buffers::SLOT_KEEP`]).
    spares: Vec<Slot>,
    /// The entries of the window being run, grouped by rank.
    groups: Groups,
    messages: u64,
    enqueued: u64,
    /// Posted receives plus unexpected messages not yet matched.
    open: u64,
    overflow: bool,
    /// See [`run_windowed`].
    written_order: bool,
    /// [`Noise::fixed_recv_overheads`].
    recv_og: Option<(Time, Time)>,
    /// Per rank, the latest time a receive matched one of its rendezvous sends (empty until
    /// the first): see [`Self::release_late`]. In the queued model ([`Model::Queued`]): the
    /// latest time one of its receives completed, which its finishing time includes too.
    late: Vec<Time>,
    /// Queued model: per rank, the lowest-numbered send that has not started
    /// ([`crate::sim::NOT_YET`] before the rank's first send event; empty until the first),
    /// and the sends that wait for it (see `events.rs`).
    next_send: Vec<u32>,
    parked: std::collections::BTreeSet<(u32, u32)>,
    /// Per rank, its lowest parked send (`NOT_YET`: none), sized with `next_send`: a send
    /// looks the set up only when it may release one.
    parked_min: Vec<u32>,
    /// Per rank, when it last communicated (started a send or completed a receive;
    /// [`crate::noise::NEVER_COMMUNICATED`] before), kept only when the noise asks for senders'
    /// idle times (empty otherwise).
    last_active: Vec<Time>,
}
