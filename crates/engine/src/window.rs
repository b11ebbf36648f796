//! The windowed engine: a noisy run processed rank by rank, one window of simulated time at a
//! time, with the global engine's exact answers.
//!
//! In a noisy run almost every event has its own time, so the global engine's queue orders
//! every event against every other and each event lands on a random rank. But ranks only
//! influence each other through messages, and a message arrives at least
//! [`Noise::min_message_delay`] (`o + L` at their smallest) after the event that sends it, or
//! `o + 3L` when every message is a rendezvous message (paying the paper's three latencies;
//! [`Program::min_send_size`] tells): the *lookahead*. So time is cut into windows of that
//! width: whatever a rank does inside a window depends only on its own earlier events and on
//! messages sent in earlier windows (a message sent sooner makes the run give up). The
//! engine takes the events of one window (messages and deferred ops, kept in a ring of
//! per-window buffers), groups them by rank and runs each rank's events in order with a
//! per-rank heap (a conservative parallel discrete-event simulation, run sequentially). The
//! ranks of a dense window are visited in ascending order (read off a bitmap), so state is
//! touched in memory order; those of a sparse one in the order their first entries were
//! written (scanning the bitmap would cost more than the window).
//!
//! # Same answers as the global engine
//! The event rules are the global engine's ([`crate::sim`]); only the order in which events of
//! *different* ranks are processed changes, and nothing observes that. Within a rank, the
//! global engine orders events by `(time, ts)`, `ts` being a global insertion counter. That
//! counter orders insertions the way their parent events were processed: an event queued
//! while processing an event at time `a` precedes one queued at time `b > a`, and two events
//! queued by events of the same rank at the same time keep that rank's order. So each entry
//! carries a `Stamp` of where it was queued (the time `pt` and rank `src` of that event,
//! and this engine's insertion counter `seq`, which agrees with `ts` for events queued by one
//! rank) and its parent's stamp. A rank's events run in the order `(time, pt, gpt, seq)`
//! (`gpt` the parent's `pt`): two entries with equal `time` and `pt` but queued by different
//! ranks (two messages sent at one instant by two ranks that arrive at one instant) are
//! ordered by when their parents were queued, and if that ties too, by the roots' order when
//! the parents are roots (queued rank by rank before the run), else by when the parents'
//! parents were queued (`ggpt`: lock-step ranks whose sends each follow a zero-length calc
//! tie down to there). Beyond that, with [`Ancestry::Recent`], the engine gives up; with
//! [`Ancestry::Full`] it keeps a record of every event that queued others (its `pt`, rank,
//! `seq` and the record of the event that queued it) and follows both entries' ancestries
//! back until two ancestors were queued at different times, by one rank, or before the run,
//! which always decides.
//!
//! A rendezvous send completes when a receive matches its message: the global engine then
//! raises the sender's CPU and NIC clocks to the match time and frees the send's dependents,
//! on another rank and with no delay. The raise changes nothing the sender does later (every
//! later event of the sender is due at the match or after and compares the clocks with its own
//! time, and every clock value set later is at least that time), only the sender's final CPU
//! clock, so this engine keeps the latest match per sender and takes the maximum at the end
//! (`Win::release_late`). A rendezvous send that frees ops cannot be handled so: the engine
//! gives up on it, as on a message faster than the lookahead, on overflow and on runs that do
//! not complete; [`crate::sim::simulate`] then runs the global engine. A given input thus
//! always gets the global engine's answer; the randomized tests below compare both engines on
//! programs and noise built to produce ties, and fail when the order or the tie rules are
//! changed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::counters::Counters;
use crate::matching::{Arrived, Lists, Posted, NIL};
use crate::noise::Noise;
use crate::params::{or_overflow, Params, Time};
use crate::program::{DepKind, Op, OpKind, Program, Tabled};
use crate::sim::{Config, Order, Outcome};

/// Why the windowed engine handed a run to the global engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// The run or the noise is outside what the windowed engine handles: compat mode, the
    /// libstdc++ order, several CPUs or NICs per rank, or no positive lookahead.
    Unsupported,
    /// A rendezvous send with completion dependents (a match frees them on its sender with no
    /// delay).
    Rendezvous,
    /// A message arrived sooner than the lookahead promised.
    Lookahead,
    /// Two events of a rank that only the global insertion order can order (see the module
    /// documentation).
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

/// "No record": queued before the run.
const NO_REC: u32 = u32::MAX;

/// What [`Ancestry::Full`] keeps of an event that queued others: the stamp it was queued with
/// (`pt`, `seq`, `src`) and the record of the event that queued it.
#[derive(Clone, Copy, Debug)]
struct Rec {
    pt: Time,
    seq: u64,
    src: u32,
    parent: u32,
}

/// `Ent::seq`'s top bit: the entry is a message.
const MSG_BIT: u64 = 1 << 63;

/// Where an entry was queued: while the event at time `pt − 1` (`pt` 0: before the run) of
/// rank `src` ran, as this engine's `seq`-th insertion; `gpt` is the `pt` of that event. The
/// stamp of the event that queued an entry is that entry's parent stamp.
#[derive(Clone, Copy, Debug, Default)]
struct Stamp {
    pt: Time,
    src: u32,
    seq: u64,
    gpt: Time,
}

/// An event: an op of `rank` to run, or a message to `rank` from `src`.
#[derive(Clone, Copy, Debug)]
struct Ent {
    time: Time,
    /// 1 + the time of the event during which this entry was first queued (0 for the roots,
    /// queued before the run starts).
    pt: Time,
    /// Messages: the `gap_bytes` drawn at the send.
    gap: Time,
    /// This engine's insertion counter, with [`MSG_BIT`] set for messages.
    seq: u64,
    /// `rank | src << 32`: whose event it is (the receiver for messages), and the rank of the
    /// event that queued it (the sender for messages, else `rank`).
    who: u64,
    /// `item | gsrc << 32`: the op id (op events) or the sender's send op (messages), and the
    /// `src` of the event that queued this one's parent.
    item: u64,
    /// The `pt` of the event that queued this one (its parent's [`Stamp`]).
    gpt: Time,
    /// When the parent is a root (`gpt` 0): the parent's `seq`. Else the parent's own `gpt`
    /// (when the event that queued the parent was queued: `ggpt`). With [`Ancestry::Full`]:
    /// the parent's record ([`NO_REC`] for the roots).
    g2: u64,
}

// Every field is 8 bytes, so copies of an entry are made of loads as wide as the stores that
// wrote it (narrower fields made the compiler read two 4-byte stores with one 8-byte load,
// which stalls store-to-load forwarding on every event). For the same reason `pt` and `seq`,
// read together into the parent stamp of every event, are not neighbours: the compiler read
// them with one 16-byte load of two 8-byte stores.
impl Ent {
    /// An entry queued by the event whose stamp is `parent`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn new(
        time: Time,
        pt: Time,
        seq: u64,
        gap: Time,
        rank: u32,
        src: u32,
        item: u32,
        parent: Stamp,
    ) -> Ent {
        Ent {
            time,
            pt,
            seq,
            gap,
            who: rank as u64 | (src as u64) << 32,
            item: item as u64 | (parent.src as u64) << 32,
            gpt: parent.pt,
            g2: if parent.pt == 0 {
                parent.seq
            } else {
                parent.gpt
            },
        }
    }
    #[inline(always)]
    fn rank(&self) -> u32 {
        self.who as u32
    }
    #[inline(always)]
    fn src(&self) -> u32 {
        (self.who >> 32) as u32
    }
    #[inline(always)]
    fn item(&self) -> u32 {
        self.item as u32
    }
    #[inline(always)]
    fn gsrc(&self) -> u32 {
        (self.item >> 32) as u32
    }
    #[inline(always)]
    fn stamp(&self) -> Stamp {
        Stamp {
            pt: self.pt,
            src: self.src(),
            seq: self.seq & !MSG_BIT,
            gpt: self.gpt,
        }
    }
    /// The heap order: `(time, pt, gpt)` is the global order whenever they differ; among
    /// entries equal on them, see [`Ent::order_tied`].
    #[inline(always)]
    fn key(&self) -> (Time, Time, Time, u64) {
        (self.time, self.pt, self.gpt, self.seq & !MSG_BIT)
    }
    #[inline(always)]
    fn tied(&self, other: &Ent) -> bool {
        (self.time, self.pt, self.gpt) == (other.time, other.pt, other.gpt)
    }
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
    #[inline(always)]
    fn is_msg(&self) -> bool {
        self.seq & MSG_BIT != 0
    }
}

/// A heap entry: the min-heap order of [`Ent::key`].
#[derive(Clone, Copy, Debug)]
struct Min(Ent);

impl PartialEq for Min {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}
impl Eq for Min {}
impl PartialOrd for Min {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Min {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key().cmp(&self.0.key())
    }
}

/// An entry beyond the ring, ordered by window.
#[derive(Clone, Copy, Debug)]
struct Far(u64, Ent);

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

/// Windows held in the ring (a power of two); later entries wait in `far`.
const RING: u64 = 64;

/// A tie group of at least this many entries is sorted once and kept aside
/// ([`Win::first_of_tie`]).
const TIE_ASIDE: usize = 8;

/// A window's emptied buffer stays in its slot up to this many entries; a larger one (a
/// lock-step front: one entry per rank) is kept as one of at most [`SPARES`] spares for the
/// next slot that fills, so memory follows the live entries rather than the largest window.
/// Sixteen spares cover the windows a 16K-rank dissemination keeps busy at once (with four,
/// buffers were freed and grown again all the time: 660 page faults per repetition instead
/// of 35, and 10% of the run time).
const SLOT_KEEP: usize = 1024;
const SPARES: usize = 16;

/// The entries of one window, and their ranks apart: grouping a window by rank reads 4 bytes
/// per entry instead of a cache line, and each entry is then read once, when it runs.
#[derive(Default)]
struct Slot {
    ents: Vec<Ent>,
    ranks: Vec<u32>,
}

impl Slot {
    fn clear(&mut self) {
        self.ents.clear();
        self.ranks.clear();
    }
}

/// The allocations of a run, kept per thread for the next one (a Monte-Carlo worker runs
/// thousands of repetitions; growing the buffers again each time costs page faults).
#[derive(Default)]
struct Scratch {
    rs: Vec<Rank>,
    lists: Lists,
    ring: Vec<Slot>,
    far: Vec<Far>,
    heap: Vec<Min>,
    freed: Vec<u32>,
    spares: Vec<Slot>,
    groups: Groups,
    records: Vec<Rec>,
    late: Vec<Time>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

/// `floor(t / width)` by a multiplication: `recip = floor(2^64 / width)` gives the quotient or
/// one less.
#[inline(always)]
fn div_width(t: Time, width: Time, recip: u64) -> u64 {
    let q = ((t as u128 * recip as u128) >> 64) as u64;
    q + ((q + 1).saturating_mul(width) <= t) as u64
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

/// A freed op run at once (see `Win::flush_freed`): its id, the op, its start and its stamp.
struct Direct {
    id: u32,
    op: Op,
    time: Time,
    stamp: Stamp,
}

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
    windowed(prog, cfg, noise, ancestry).map(|(out, _)| out)
}

/// [`simulate_windowed_with`], and whether a tie took more ancestry than recent ancestry
/// follows (only full ancestry answers such runs).
fn windowed<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    ancestry: Ancestry,
) -> Result<(Outcome, bool), GiveUp> {
    let width = lookahead(prog, &cfg.params, noise);
    if !N::ACTIVE
        || cfg.compat
        || cfg.order != Order::Stable
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
                run_windowed(&prog, cfg, noise, width, false, ancestry)
            }
            None => run_windowed(&Tabled::new(prog, t), cfg, noise, width, false, ancestry),
        },
        None => run_windowed(prog, cfg, noise, width, false, ancestry),
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
/// (the answer is the same: tests compare both).
fn run_windowed<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    width: Time,
    written_order: bool,
    ancestry: Ancestry,
) -> Result<(Outcome, bool), GiveUp> {
    fn run<P: Program, N: Noise, const FULL: bool>(
        prog: &P,
        cfg: &Config,
        noise: &mut N,
        width: Time,
        written_order: bool,
    ) -> Result<(Outcome, bool), GiveUp> {
        let scratch = SCRATCH.with(|s| s.take()).unwrap_or_default();
        let mut win = Win::<P, N, FULL>::new(prog, cfg.params, noise, width, scratch);
        win.written_order = written_order;
        let out = win.run();
        let deep = win.deep_tie;
        SCRATCH.with(|s| s.set(Some(win.into_scratch())));
        out.map(|out| (out, deep))
    }
    match ancestry {
        Ancestry::Recent => run::<P, N, false>(prog, cfg, noise, width, written_order),
        Ancestry::Full => run::<P, N, true>(prog, cfg, noise, width, written_order),
    }
}

/// The engine choice for many repetitions of one program under one noise model: the windowed
/// engine while it mostly answers, the global engine alone once it has given up on more than
/// half of at least [`WindowOdds::TRIALS`] runs (a run it gives up on costs its partial
/// windowed run on top of the global one). A run that gives up on a tie is run again with
/// [`Ancestry::Full`]; once more than one in [`WindowOdds::TIES_FOR_FULL`] of at least
/// [`WindowOdds::TRIALS`] runs needed full ancestry, runs start with it (its records cost
/// about 13 % on runs that never need them; those runs still tell whether they needed it),
/// until a run needs more than [`FULL_RECORDS`] records. Answers never depend on these
/// choices, so they may follow the order in which parallel repetitions happen to finish.
#[derive(Debug, Default)]
pub struct WindowOdds {
    answered: std::sync::atomic::AtomicU64,
    gave_up: std::sync::atomic::AtomicU64,
    /// Windowed runs, and how many of them needed full ancestry.
    runs: std::sync::atomic::AtomicU64,
    deep: std::sync::atomic::AtomicU64,
    /// A full-ancestry run needed more than [`FULL_RECORDS`] records.
    too_deep: std::sync::atomic::AtomicBool,
}

impl WindowOdds {
    /// Runs judged before the windowed engine may be dropped, or full ancestry tried first.
    pub const TRIALS: u64 = 8;
    /// Runs start with full ancestry when more than one in this many needed it.
    pub const TIES_FOR_FULL: u64 = 8;

    /// [`crate::sim::simulate`], skipping the windowed engine when it has not paid off.
    pub fn simulate<P: Program, N: Noise>(
        &self,
        prog: &P,
        cfg: &Config,
        noise: &mut N,
    ) -> Result<Outcome, crate::sim::EngineError> {
        use std::sync::atomic::Ordering::Relaxed;
        let (answered, gave_up) = (self.answered.load(Relaxed), self.gave_up.load(Relaxed));
        if N::ACTIVE
            && cfg.model == crate::sim::Model::LogGOPSim
            && (answered + gave_up < Self::TRIALS || gave_up <= answered)
        {
            let mut full = self.full_ancestry();
            let first = if full {
                Ancestry::Full
            } else {
                Ancestry::Recent
            };
            let mut res = windowed(prog, cfg, noise, first);
            let deep = match res {
                Err(GiveUp::Tie) if !full => {
                    if !self.too_deep.load(Relaxed) {
                        full = true;
                        res = windowed(prog, cfg, noise, Ancestry::Full);
                    }
                    true
                }
                Ok((_, deep)) => deep,
                Err(_) => false,
            };
            self.runs.fetch_add(1, Relaxed);
            if deep {
                self.deep.fetch_add(1, Relaxed);
            }
            if full && res == Err(GiveUp::Tie) {
                // Full ancestry gives up on a tie only beyond its records.
                self.too_deep.store(true, Relaxed);
            }
            match res {
                Ok((out, _)) => {
                    self.answered.fetch_add(1, Relaxed);
                    return Ok(out);
                }
                Err(_) => {
                    self.gave_up.fetch_add(1, Relaxed);
                }
            }
        }
        crate::sim::simulate_global(prog, cfg, noise)
    }

    /// Whether runs start with [`Ancestry::Full`].
    pub fn full_ancestry(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let (runs, deep) = (self.runs.load(Relaxed), self.deep.load(Relaxed));
        !self.too_deep.load(Relaxed) && runs >= Self::TRIALS && deep * Self::TIES_FOR_FULL > runs
    }

    /// `(answered, gave up)` so far.
    pub fn counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.answered.load(Relaxed), self.gave_up.load(Relaxed))
    }
}

/// `FULL`: [`Ancestry::Full`].
struct Win<'a, P: Program, N: Noise, const FULL: bool> {
    prog: &'a P,
    p: Params,
    noise: &'a mut N,
    ranks: u32,
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
    /// queued something ([`NO_REC`] before).
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
    /// Large emptied window buffers (see [`SLOT_KEEP`]).
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
    /// the first): see [`Self::release_late`].
    late: Vec<Time>,
}

impl<'a, P: Program, N: Noise, const FULL: bool> Win<'a, P, N, FULL> {
    fn new(prog: &'a P, p: Params, noise: &'a mut N, width: Time, s: Box<Scratch>) -> Self {
        let n = prog.num_ranks() as usize;
        let Scratch {
            mut rs,
            mut lists,
            mut ring,
            mut far,
            mut heap,
            mut freed,
            spares,
            mut groups,
            mut records,
            mut late,
        } = *s;
        let idle = Rank {
            o: 0,
            gs: 0,
            gr: 0,
            rq: NIL,
            uq: NIL,
        };
        rs.clear();
        rs.resize(n, idle);
        lists.reset(n);
        ring.resize_with(RING as usize, Slot::default);
        ring.iter_mut().for_each(Slot::clear);
        far.clear();
        heap.clear();
        freed.clear();
        groups.reset(n);
        records.clear();
        late.clear();
        let recv_og = noise.fixed_recv_overheads();
        Win {
            prog,
            p,
            noise,
            ranks: prog.num_ranks(),
            rs,
            me: idle,
            lists,
            counters: Counters::new(prog),
            start_deps: prog.has_start_dependents(),
            width,
            recip: (u64::MAX / width).max(1),
            cur: 0,
            w_end: width,
            ring,
            in_ring: 0,
            far: BinaryHeap::from(far),
            heap: BinaryHeap::from(heap),
            heap_first: Time::MAX,
            tie: Vec::new(),
            next: Ent::new(0, 0, 0, 0, 0, 0, 0, Stamp::default()),
            has_next: false,
            host: 0,
            now: 0,
            parent: Stamp::default(),
            parent_in: NO_REC,
            parent_rec: NO_REC,
            records,
            too_deep: false,
            deep_tie: false,
            seq: 0,
            freed,
            spares,
            groups,
            messages: 0,
            enqueued: 0,
            open: 0,
            overflow: false,
            written_order: false,
            recv_og,
            late,
        }
    }

    fn into_scratch(self) -> Box<Scratch> {
        Box::new(Scratch {
            rs: self.rs,
            lists: self.lists,
            ring: self.ring,
            far: self.far.into_vec(),
            heap: self.heap.into_vec(),
            freed: self.freed,
            spares: self.spares,
            groups: self.groups,
            records: self.records,
            late: self.late,
        })
    }

    #[inline(always)]
    fn add(&mut self, a: Time, b: Time) -> Time {
        or_overflow(a.checked_add(b), &mut self.overflow)
    }

    /// Records the time of the heap's first entry, after the heap changed.
    #[inline(always)]
    fn heap_changed(&mut self) {
        self.heap_first = self.heap.peek().map_or(Time::MAX, |Min(m)| m.time);
    }

    /// `(s-1)·O`.
    #[inline]
    fn overhead_bytes(&mut self, size: u64) -> Time {
        if self.p.big_o.raw() == 0 {
            // No per-byte overhead (most profiles): no multiplication.
            return 0;
        }
        or_overflow(
            self.p.big_o.cost(size.saturating_sub(1)),
            &mut self.overflow,
        )
    }

    // --- who queued what ------------------------------------------------------------------------

    /// Makes the event queued with `stamp` by the event of record `queued_by` the one being run.
    #[inline(always)]
    fn set_parent(&mut self, stamp: Stamp, queued_by: u32) {
        self.parent = stamp;
        if FULL {
            self.parent_in = queued_by;
            self.parent_rec = NO_REC;
        }
    }

    /// With `FULL`, the record of the event being run, made when it first queues something;
    /// else [`NO_REC`].
    #[inline(always)]
    fn parent_record(&mut self) -> u32 {
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
    fn child(&mut self, time: Time, pt: Time, seq: u64, gap: Time, rank: u32, item: u32) -> Ent {
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

    /// Why a run with `overflow` set stops.
    #[cold]
    fn stopped(&self) -> GiveUp {
        if self.too_deep {
            GiveUp::Tie
        } else {
            GiveUp::Error
        }
    }

    // --- scheduling -----------------------------------------------------------------------------

    /// Queues `e`, due after the current window, in the buffer of its window.
    #[inline(always)]
    fn queue(&mut self, e: Ent) {
        debug_assert!(e.time >= self.w_end);
        let w = div_width(e.time, self.width, self.recip);
        if w < self.cur + RING {
            self.ring_push(w, e);
        } else {
            self.push_far(w, e);
        }
    }

    /// Queues `e`, due in window `w` beyond the ring.
    #[cold]
    #[inline(never)]
    fn push_far(&mut self, w: u64, e: Ent) {
        self.far.push(Far(w, e));
    }

    /// Defers the event being run (`next`) to `time`, when its CPU or NIC is free: it stays
    /// `next` if that is still in this window.
    #[inline(always)]
    fn defer(&mut self, time: Time) {
        self.next.time = time;
        if time >= self.w_end {
            self.has_next = false;
            let e = self.next;
            self.queue(e);
        }
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

    /// Makes `next` the current rank's next event: `next` itself (the last event's own entry
    /// for this window) or the heap's minimum, whichever LogGOPSim would run first; false when
    /// the rank has nothing left in this window, `Tie` if only the global insertion order could
    /// choose.
    #[inline(always)]
    fn select(&mut self) -> Result<bool, GiveUp> {
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

    /// Queues the ops freed by the current event in LogGOPSim's order (by type, release order
    /// within a type), starting when their CPU (and NIC, for sends) is free. The last one due
    /// in this window becomes `next` (which must be free); a single one due in this window,
    /// before every other pending event of the rank, is returned to be run at once instead,
    /// and a single one due after it is queued here.
    #[inline(always)]
    #[must_use]
    fn flush_freed(&mut self) -> Option<Direct> {
        let n = self.freed.len();
        if n == 0 {
            return None;
        }
        debug_assert!(!self.has_next);
        let (prog, host) = (self.prog, self.host);
        if n == 1 {
            let id = self.freed[0];
            let op = prog.op(host, id);
            let time = self.start_time(op.kind);
            if time >= self.w_end {
                // Due after this window (a send waiting for its NIC): queued for its window,
                // as `flush_queued` would.
                self.freed.clear();
                self.enqueued += 1;
                let e = self.child(time, self.now.saturating_add(1), self.seq, 0, host, id);
                self.seq += 1;
                self.queue(e);
                return None;
            }
            // Due before every other pending event of this rank: it runs now, as `select`
            // would pick it (its key starts with an earlier time), without being queued (it
            // is ready by construction: its start is when its CPU, and NIC for a send, are
            // free).
            if time < self.heap_first {
                self.freed.clear();
                self.enqueued += 1;
                let stamp = Stamp {
                    pt: self.now.saturating_add(1),
                    src: host,
                    seq: self.seq,
                    gpt: self.parent.pt,
                };
                self.seq += 1;
                return Some(Direct {
                    id,
                    op,
                    time,
                    stamp,
                });
            }
        }
        self.flush_queued();
        None
    }

    /// [`Self::flush_freed`] of ops that do not run at once: queued in LogGOPSim's order, the
    /// last one due in this window as `next`.
    #[inline(never)]
    fn flush_queued(&mut self) {
        let (prog, host, n) = (self.prog, self.host, self.freed.len());
        if n > 1 {
            self.freed.sort_by_key(|&op| prog.op(host, op).kind);
        }
        self.enqueued += n as u64;
        for i in 0..n {
            let op = self.freed[i];
            let time = self.start_time(prog.op(host, op).kind);
            let e = self.child(time, self.now.saturating_add(1), self.seq, 0, host, op);
            self.seq += 1;
            if e.time >= self.w_end {
                self.queue(e);
            } else {
                if self.has_next {
                    let prev = self.next;
                    self.heap.push(Min(prev));
                    self.heap_changed();
                }
                self.next = e;
                self.has_next = true;
            }
        }
        self.freed.clear();
    }

    /// When an op of `kind` of the current rank can start: when its CPU is free, and its NIC
    /// too for a send.
    #[inline(always)]
    fn start_time(&self, kind: OpKind) -> Time {
        let r = &self.me;
        if kind == OpKind::Send {
            r.o.max(r.gs)
        } else {
            r.o
        }
    }

    #[inline(always)]
    fn mark(&mut self, op: u32, kind: DepKind) {
        if kind == DepKind::Start && !self.start_deps {
            return;
        }
        let freed = &mut self.freed;
        self.counters
            .release(self.prog, self.host, op, kind, |d| freed.push(d));
    }

    /// Whether op `id` of `rank` has completion dependents: a rendezvous send that has some
    /// frees them when its receive matches, on another rank with no delay, which this
    /// engine cannot order (it gives up). Inlined into its two cold callers: asked at every
    /// rendezvous send, a call cost 17 instructions.
    #[inline(always)]
    fn completes_others(&self, rank: u32, id: u32) -> bool {
        let mut any = false;
        self.prog
            .for_each_dependent(rank, id, DepKind::Done, |_| any = true);
        any
    }

    /// A receive larger than S took the message of send `id` of rank `s` at `t`, which
    /// LogGOPSim takes as that send's completion, whatever its size.
    #[cold]
    #[inline(never)]
    fn receive_completes(&mut self, s: u32, id: u32, t: Time) -> Result<(), GiveUp> {
        if self.completes_others(s, id) {
            return Err(GiveUp::Rendezvous);
        }
        self.release_late(s, t);
        Ok(())
    }

    /// A receive matched at `t` a rendezvous message of rank `s` whose send frees nothing.
    /// The global engine then raises `s`'s CPU and NIC clocks to at least `t`. Nothing else
    /// of `s` sees that: every later event of `s` is due at `t` or after and compares the
    /// clocks with its own time, and every clock value set later is at least that time. So
    /// only `s`'s final CPU clock shows it, as `max(clock, t)`, which is taken at the end.
    #[inline(always)]
    fn release_late(&mut self, s: u32, t: Time) {
        match self.late.get_mut(s as usize) {
            Some(l) => *l = (*l).max(t),
            None => self.first_late(s, t),
        }
    }

    /// [`Self::release_late`] at the run's first rendezvous match, which allocates `late`.
    /// Only this stays out of line: a call per rendezvous message cost a 1024-rank Alps ring
    /// 26 instructions per message (2 % of its run).
    #[cold]
    #[inline(never)]
    fn first_late(&mut self, s: u32, t: Time) {
        self.late.resize(self.ranks as usize, 0);
        if let Some(l) = self.late.get_mut(s as usize) {
            *l = (*l).max(t);
        }
    }

    #[inline(always)]
    fn posted(&mut self, h: usize) -> Posted<'_> {
        self.lists.posted(&mut self.me.rq, h)
    }

    /// Rank `h`'s unexpected-message list.
    #[inline(always)]
    fn arrived(&mut self, h: usize) -> Arrived<'_> {
        self.lists.arrived(&mut self.me.uq, h)
    }

    // --- the run --------------------------------------------------------------------------------

    fn run(&mut self) -> Result<Outcome, GiveUp> {
        // Window 0: every rank's roots (queued before anything else), then its other events.
        for r in 0..self.ranks {
            self.host = r;
            self.me = self.rs[r as usize];
            self.roots()?;
            self.drain()?;
            self.rs[r as usize] = self.me;
        }
        let mut res = Ok(());
        while let Some(w) = self.next_window() {
            self.cur = w;
            self.w_end = (w + 1).saturating_mul(self.width);
            let slot = (w % RING) as usize;
            // Nothing is queued for window `w + RING` while `w` runs: the slot stays empty.
            let mut entries = std::mem::take(&mut self.ring[slot]);
            self.in_ring -= entries.ents.len();
            res = self.run_window(&entries);
            entries.clear();
            if entries.ents.capacity() <= SLOT_KEEP {
                self.ring[slot] = entries;
            } else if self.spares.len() < SPARES {
                self.spares.push(entries);
            }
            if res.is_err() {
                break;
            }
        }
        res?;
        if self.open != 0 || self.enqueued != self.prog.total_ops() {
            return Err(GiveUp::Error);
        }
        Ok(Outcome {
            finish: (self.rs.iter().enumerate())
                .map(|(i, r)| r.o.max(self.late.get(i).copied().unwrap_or(0)))
                .collect(),
            // LogGOPSim's count: ops enqueued and messages.
            events: self.enqueued + self.messages,
            messages: self.messages,
            leftovers: Vec::new(),
        })
    }

    /// Runs the entries of the current window, rank by rank: in ascending order (read off the
    /// bitmap) when the window has entries for more than a few ranks per bitmap word, else in
    /// the order their first entries were written.
    fn run_window(&mut self, slot: &Slot) -> Result<(), GiveUp> {
        let mut g = std::mem::take(&mut self.groups);
        g.group(&slot.ranks);
        let mut res = Ok(());
        if slot.ranks.len() >= g.bits.len() / 4 && !self.written_order {
            'words: for w in 0..g.bits.len() {
                let mut b = std::mem::take(&mut g.bits[w]);
                while b != 0 {
                    let rank = (w * 64) as u32 + b.trailing_zeros();
                    b &= b - 1;
                    res = self.run_rank(&mut g, &slot.ents, rank);
                    if res.is_err() {
                        break 'words;
                    }
                }
            }
        } else {
            for &rank in &slot.ranks {
                g.bits[rank as usize / 64] = 0;
            }
            for &rank in &slot.ranks {
                if g.heads[rank as usize] != NIL {
                    res = self.run_rank(&mut g, &slot.ents, rank);
                    if res.is_err() {
                        break;
                    }
                }
            }
        }
        if res.is_err() {
            g.reset(self.ranks as usize);
        }
        self.groups = g;
        res
    }

    /// Runs `rank`'s entries of the window (its chain in `g`, which it leaves empty).
    #[inline(always)]
    fn run_rank(&mut self, g: &mut Groups, buf: &[Ent], rank: u32) -> Result<(), GiveUp> {
        // Which of a rank's entries starts as `next` does not matter: `select` compares it
        // with the heap, and every key differs (`seq`).
        let mut i = std::mem::replace(&mut g.heads[rank as usize], NIL);
        self.host = rank;
        self.me = self.rs[rank as usize];
        self.next = buf[i as usize];
        self.has_next = true;
        i = g.links[i as usize];
        while i != NIL {
            self.heap.push(Min(buf[i as usize]));
            i = g.links[i as usize];
        }
        self.heap_changed();
        let res = self.drain();
        self.rs[rank as usize] = self.me;
        res
    }

    /// The next window holding entries (moving entries of `far` into the ring as it comes in
    /// reach), or `None` when nothing is left.
    fn next_window(&mut self) -> Option<u64> {
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

    /// Runs the current rank's events of this window in order, from `next` and the heap.
    fn drain(&mut self) -> Result<(), GiveUp> {
        while self.select()? {
            self.now = self.next.time;
            let (stamp, queued_by) = (self.next.stamp(), self.next.g2 as u32);
            self.set_parent(stamp, queued_by);
            if self.next.is_msg() {
                self.msg_event();
            } else {
                self.op_event()?;
            }
            // A deferred event frees nothing; a single freed op with nothing else pending runs
            // at once, and so on down the chain.
            loop {
                if self.overflow {
                    return Err(self.stopped());
                }
                if self.has_next {
                    break;
                }
                let Some(d) = self.flush_freed() else { break };
                self.now = d.time;
                let queued_by = self.parent_record();
                self.set_parent(d.stamp, queued_by);
                self.run_op(d.id, d.op, d.time)?;
            }
        }
        debug_assert!(self.tie.is_empty(), "a set-aside tie group was left behind");
        Ok(())
    }

    /// The current rank's roots, in LogGOPSim's stable type order (sends, receives, calcs).
    fn roots(&mut self) -> Result<(), GiveUp> {
        let (prog, host) = (self.prog, self.host);
        let n = prog.num_roots(host);
        if n == 0 {
            return Ok(());
        }
        self.enqueued += n as u64;
        let h = host as usize;
        // Root `k` as an event, and whether it is a receive (`op_event` of a receive with
        // nothing unexpected only posts it, so a run of them is posted at once).
        let root = |w: &mut Self, k: u32, runs: bool| -> Result<u32, GiveUp> {
            let id = prog.root(host, k);
            let op = prog.op(host, id);
            let mut done = 1;
            if op.kind == OpKind::Recv && !w.start_deps && w.me.uq == NIL {
                let (run, stride) = if runs {
                    prog.root_recv_run(host, k)
                } else {
                    (1, 0)
                };
                let (ids, id_stride) = if runs && run == 1 {
                    prog.root_recv_ids(host, k)
                } else {
                    (1, 0)
                };
                let mut posted = w.posted(h);
                if run > 1 {
                    posted.post_run(op.peer, op.tag, id, stride, run);
                    done = run;
                } else if ids > 1 {
                    posted.post_mixed(id, id_stride, ids);
                    done = ids;
                } else {
                    posted.post(op.peer, op.tag, id);
                    // The receives that follow (in type order), posted in one go.
                    while runs && k + done < n {
                        let id = prog.root(host, k + done);
                        let op = prog.op(host, id);
                        if op.kind != OpKind::Recv {
                            break;
                        }
                        posted.post(op.peer, op.tag, id);
                        done += 1;
                    }
                }
                w.open += done as u64;
                w.seq += done as u64;
            } else {
                let root = Stamp {
                    pt: 0,
                    src: host,
                    seq: w.seq,
                    gpt: 0,
                };
                w.next = Ent::new(0, 0, w.seq, 0, host, host, id, root);
                if FULL {
                    w.next.g2 = NO_REC as u64;
                }
                w.has_next = true;
                w.set_parent(root, NO_REC);
                w.seq += 1;
                w.now = 0;
                w.op_event()?;
                if !w.has_next {
                    if let Some(d) = w.flush_freed() {
                        // Not run at once: later roots come first.
                        w.next = w.child(d.time, d.stamp.pt, d.stamp.seq, 0, host, d.id);
                        w.has_next = true;
                    }
                }
                // Later roots come first: what is due now waits in the heap.
                if w.has_next {
                    w.has_next = false;
                    let d = w.next;
                    w.heap.push(Min(d));
                    w.heap_changed();
                }
            }
            Ok(done)
        };
        if prog.roots_in_type_order(host) {
            let mut k = 0;
            while k < n {
                k += root(self, k, true)?;
            }
        } else {
            // Three passes over the roots, one per type.
            for kind in [OpKind::Send, OpKind::Recv, OpKind::Calc] {
                for k in 0..n {
                    if prog.op(host, prog.root(host, k)).kind == kind {
                        root(self, k, false)?;
                    }
                }
            }
        }
        if self.overflow {
            return Err(self.stopped());
        }
        Ok(())
    }

    /// Runs op event `next` at its time, or defers it while the CPU or NIC is busy.
    #[inline(always)]
    fn op_event(&mut self) -> Result<(), GiveUp> {
        let (host, id, t) = (self.host, self.next.item(), self.next.time);
        let r = &self.me;
        let op: Op = self.prog.op(host, id);
        let ready = match op.kind {
            OpKind::Calc => r.o,
            OpKind::Send => r.o.max(r.gs),
            OpKind::Recv => 0,
        };
        if ready > t {
            self.defer(ready);
            return Ok(());
        }
        self.has_next = false;
        self.run_op(id, op, t)
    }

    /// Runs op `id` (`op`) of the current rank at `t`, its CPU (and NIC) being free.
    #[inline(always)]
    fn run_op(&mut self, id: u32, op: Op, t: Time) -> Result<(), GiveUp> {
        let host = self.host;
        let h = host as usize;
        match op.kind {
            OpKind::Calc => {
                let end = self.add(t, op.size);
                let noise = self.noise.os_detour(host, t, end);
                self.me.o = self.add(end, noise);
                self.mark(id, DepKind::Start);
                self.mark(id, DepKind::Done);
            }
            OpKind::Send => {
                if op.peer >= self.ranks {
                    return Err(GiveUp::Error);
                }
                if op.size > self.p.s {
                    return self.rendezvous_send(id, op, t);
                }
                self.send::<false>(id, op, t)?;
            }
            OpKind::Recv => {
                self.mark(id, DepKind::Start);
                if let Some(u) = self.arrived(h).take_match(op.peer, op.tag) {
                    // LogGOPSim completes the matched send here when the *receive* is larger
                    // than S, whatever the send's size. (If the run is abandoned, the
                    // message may be taken first.)
                    if op.size > self.p.s {
                        self.receive_completes(u.src, u.send_op, t)?;
                    }
                    self.open -= 1;
                    self.mark(id, DepKind::Done);
                } else {
                    self.posted(h).post(op.peer, op.tag, id);
                    self.open += 1;
                }
            }
        }
        Ok(())
    }

    /// Sends op `id` (`op`) of the current rank at `t` (its CPU and NIC are free); `RNDV`: a
    /// rendezvous send, which frees nothing (checked by the caller).
    #[inline(always)]
    fn send<const RNDV: bool>(&mut self, id: u32, op: Op, t: Time) -> Result<(), GiveUp> {
        let host = self.host;
        self.mark(id, DepKind::Start);
        let c = self
            .noise
            .send_costs_untracked(&self.p, host, op.peer, id, op.size);
        let t_o = self.add(t, c.o);
        let noise = self.noise.os_detour(host, t, t_o);
        let ob = self.overhead_bytes(op.size);
        let v = self.add(t_o, ob);
        self.me.o = self.add(v, noise);
        let v = self.add(t, c.g);
        self.me.gs = self.add(v, c.gap_bytes);
        let mut arrival = self.add(t_o, c.latency);
        if RNDV {
            for _ in 0..self.p.rndv_extra_latencies {
                arrival = self.add(arrival, c.latency);
            }
        }
        if arrival < self.w_end {
            return Err(GiveUp::Lookahead);
        }
        let m = self.child(
            arrival,
            t.saturating_add(1),
            self.seq | MSG_BIT,
            c.gap_bytes,
            op.peer,
            id,
        );
        self.seq += 1;
        self.messages += 1;
        self.queue(m);
        // A rendezvous send here frees nothing: marking it done now is marking it done when
        // its receive matches (see `release_late`).
        self.mark(id, DepKind::Done);
        Ok(())
    }

    /// [`Self::send`] of a rendezvous send, unless it frees ops.
    #[cold]
    #[inline(never)]
    fn rendezvous_send(&mut self, id: u32, op: Op, t: Time) -> Result<(), GiveUp> {
        if self.completes_others(self.host, id) {
            return Err(GiveUp::Rendezvous);
        }
        self.send::<true>(id, op, t)
    }

    /// Runs message event `next` at its receiver, or defers it while the CPU or NIC is busy.
    #[inline(always)]
    fn msg_event(&mut self) {
        let e = &self.next;
        let (host, sender, send_id, arrival, gap) = (self.host, e.src(), e.item(), e.time, e.gap);
        let h = host as usize;
        let ready = self.me.o.max(self.me.gr);
        // A message whose CPU or NIC is busy waits until `ready`. When that is in this window
        // and before every other pending event of the rank, it would be the rank's next event
        // anyway, so it runs now, at `ready`. Which messages wait is random, so the test is
        // one branch on a value computed without branches.
        let t = arrival.max(ready);
        let wait = (ready > arrival) & ((ready >= self.w_end) | (ready >= self.heap_first));
        if std::hint::black_box(wait) {
            self.defer(ready);
            return;
        }
        self.now = t;
        self.has_next = false;
        let op = self.prog.op(sender, send_id);
        let ob = self.overhead_bytes(op.size);
        let (o, g) = match self.recv_og {
            Some(og) => og,
            None => {
                let n = &mut self.noise;
                let c = n.recv_costs_known_gap(&self.p, sender, host, send_id, op.size, gap);
                debug_assert_eq!(c.gap_bytes, gap);
                (c.o, c.g)
            }
        };
        let t_o = self.add(t, o);
        let noise = self.noise.os_detour(host, t, t_o);
        let v = self.add(t_o, noise);
        self.me.o = self.add(v, ob.max(gap));
        let v = self.add(t, g);
        self.me.gr = self.add(v, gap);
        let prog = self.prog;
        if let Some(recv) = self.posted(h).take_match(prog, host, sender, op.tag) {
            if op.size > self.p.s {
                self.release_late(sender, t);
            }
            self.open -= 1;
            self.mark(recv, DepKind::Done);
        } else {
            self.arrived(h).push(sender, op.tag, send_id);
            self.open += 1;
        }
    }
}

/// The entries of a window grouped by rank: one chain per rank (`heads[rank]`, then
/// `links[entry]`), and a bitmap of the ranks that have entries. Heads and bitmap are left
/// clear (all `NIL`, all zero) for the next window as the chains are consumed.
#[derive(Default)]
struct Groups {
    heads: Vec<u32>,
    links: Vec<u32>,
    bits: Vec<u64>,
}

impl Groups {
    /// Clears the groups for `ranks` ranks.
    fn reset(&mut self, ranks: usize) {
        self.heads.clear();
        self.heads.resize(ranks, NIL);
        self.bits.clear();
        self.bits.resize(ranks.div_ceil(64), 0);
        self.links.clear();
    }

    /// Groups entries `0..ranks.len()` by their `ranks` (whose heads must be `NIL`).
    fn group(&mut self, ranks: &[u32]) {
        self.links.clear();
        self.links.resize(ranks.len(), NIL);
        for ((i, &r), link) in ranks.iter().enumerate().zip(&mut self.links) {
            *link = std::mem::replace(&mut self.heads[r as usize], i as u32);
            self.bits[r as usize / 64] |= 1 << (r % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::MsgCosts;
    use crate::sim::simulate_global;
    use crate::test_rng::xorshift;
    use crate::testing::VecProgram;
    use crate::{PerByte, ANY};

    /// Noise whose draws take a few values only, so that events tie often: latencies, o and
    /// G from small sets chosen by a hash of the message, and OS detours at a fixed period
    /// from a per-rank phase. Every answer is a function of the arguments.
    #[derive(Clone)]
    struct FewValues {
        lat: Vec<Time>,
        o: Vec<Time>,
        g_per_byte: Vec<u64>,
        detour: Time,
        period: Time,
        /// Reported as [`Noise::fixed_recv_overheads`] (only when `o` has one value).
        fixed_recv: Option<(Time, Time)>,
        /// Added to the true bound in [`Noise::min_latency`] (a false promise, for tests).
        overclaim: Time,
    }

    fn hash(a: u64, b: u64) -> u64 {
        let mut x = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 31;
        x.wrapping_mul(0x94D0_49BB_1331_11EB) ^ (x >> 29)
    }

    impl FewValues {
        fn pick(v: &[Time], h: u64) -> Time {
            v[(h % v.len() as u64) as usize]
        }
        fn costs(&self, p: &Params, src: u32, send_op: u32, size: u64, side: u64) -> MsgCosts {
            let h = hash((src as u64) << 32 | send_op as u64, 0);
            let side_h = hash(h, side + 1);
            MsgCosts {
                latency: Self::pick(&self.lat, h),
                o: Self::pick(&self.o, side_h),
                g: p.g,
                gap_bytes: size.saturating_sub(1) * Self::pick(&self.g_per_byte, h >> 20),
            }
        }
    }

    impl Noise for FewValues {
        const ACTIVE: bool = true;
        fn send_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
            self.costs(p, src, op, size, 0)
        }
        fn recv_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
            let mut c = self.costs(p, src, op, size, 1);
            c.latency = p.l;
            c
        }
        fn os_detour(&mut self, rank: u32, t0: Time, t1: Time) -> Time {
            // Detours start at phase + k·period; count those in [t0, t1].
            let phase = hash(rank as u64, 7) % self.period;
            let upto = |t: Time| {
                if t < phase {
                    0
                } else {
                    (t - phase) / self.period + 1
                }
            };
            let before = if t0 == 0 { 0 } else { upto(t0 - 1) };
            (upto(t1) - before) * self.detour
        }
        fn min_message_delay(&self) -> Time {
            self.o.iter().min().unwrap() + self.lat.iter().min().unwrap()
        }
        fn min_latency(&self) -> Time {
            self.lat.iter().min().unwrap() + self.overclaim
        }
        fn fixed_recv_overheads(&self) -> Option<(Time, Time)> {
            self.fixed_recv
        }
    }

    /// Random exchange rounds: sends to `r + d`, receives from `r − d` (sometimes from
    /// ANY_SOURCE, sometimes with ANY_TAG), calcs of a few lengths, `requires` and `irequires`
    /// between rounds, now and then a self-message or a rendezvous-sized one. `send_deps`:
    /// calcs may require sends (with it off no send frees ops; the draws are the same).
    fn random_program(rnd: &mut impl FnMut(u64) -> u64, send_deps: bool) -> VecProgram {
        let ranks = 2 + rnd(7) as u32;
        let mut p = VecProgram::new(ranks);
        p.sparse_counters = rnd(2) == 0;
        p.hints = rnd(2) == 0;
        let rounds = 1 + rnd(6);
        let mut last: Vec<Option<u32>> = vec![None; ranks as usize];
        for k in 0..rounds {
            let d = if rnd(8) == 0 {
                0
            } else {
                1 + rnd(ranks as u64 - 1) as u32
            };
            let kinds = if rnd(20) == 0 { 5 } else { 4 };
            let size = [1, 8, 64, 1000, 70_000][rnd(kinds) as usize];
            for r in 0..ranks {
                let s = VecProgram::op(&mut p, r, Op::send(size, (r + d) % ranks, k as u32));
                let from = if rnd(5) == 0 {
                    ANY
                } else {
                    (r + ranks - d) % ranks
                };
                let tag = if rnd(6) == 0 { ANY } else { k as u32 };
                // Now and then a receive of another size: LogGOPSim decides rendezvous by the
                // send's size when the message finds its receive, by the receive's when the
                // receive finds the message.
                let rsize = if rnd(10) == 0 {
                    [8, 70_000][rnd(2) as usize]
                } else {
                    size
                };
                let v = VecProgram::op(&mut p, r, Op::recv(rsize, from, tag));
                let c = VecProgram::op(&mut p, r, Op::calc([0, 0, 500, 1000][rnd(4) as usize]));
                p.requires(r, c, v);
                if rnd(2) == 0 && send_deps {
                    p.requires(r, c, s);
                }
                if let Some(prev) = last[r as usize] {
                    match rnd(3) {
                        0 => p.requires(r, s, prev),
                        1 => p.irequires(r, s, prev),
                        _ => {}
                    }
                    if rnd(3) == 0 {
                        p.requires(r, v, prev);
                    }
                }
                last[r as usize] = Some(c);
            }
        }
        p
    }

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

    /// Whether `p` sends or receives more than `s` bytes somewhere.
    fn has_rendezvous(p: &VecProgram, s: u64) -> bool {
        (0..p.num_ranks()).any(|r| {
            (0..p.num_ops(r)).any(|i| {
                let op = p.op(r, i);
                op.kind != OpKind::Calc && op.size > s
            })
        })
    }

    /// L = 1 us, o = 200 ns, S = 64 KiB − 1, and a random g (0 or 300 ns), O (0 or 1 ps per
    /// byte) and rendezvous latency (L or 3L, the paper's).
    fn random_params(rnd: &mut impl FnMut(u64) -> u64) -> Params {
        Params {
            l: 1000,
            o: 200,
            g: [0, 300][rnd(2) as usize],
            big_g: PerByte::from_units(1),
            big_o: PerByte::from_units(rnd(2)),
            s: 65535,
            rndv_extra_latencies: [0, 2][rnd(2) as usize],
        }
    }

    /// Full ancestry on `p`, against recent ancestry's answer `recent` and the global one: the
    /// same answer when recent ancestry answers, the global one when it gave up on a tie, the
    /// same reason when it gave up on anything else (on a tie, it may give up later for any
    /// reason); and it reports a deep tie exactly when recent ancestry gave up on one. Returns
    /// whether it answered a tie.
    fn check_full_ancestry(
        case: usize,
        p: &VecProgram,
        cfg: &Config,
        noise: &FewValues,
        recent: &Result<Outcome, GiveUp>,
        global: &Result<Outcome, crate::sim::EngineError>,
    ) -> bool {
        let full = windowed(p, cfg, &mut noise.clone(), Ancestry::Full);
        if let Ok((_, deep)) = full {
            assert_eq!(deep, *recent == Err(GiveUp::Tie), "case {case}: {p:?}");
        }
        let full = full.map(|(out, _)| out);
        match (recent, &full) {
            (Err(GiveUp::Tie), Ok(f)) => {
                assert_eq!(Ok(f), global.as_ref(), "case {case}: {p:?}");
                true
            }
            // Past the tie, full ancestry may give up later for another reason (a receive
            // that completes a rendezvous send with dependents, a run that does not complete).
            (Err(GiveUp::Tie), Err(_)) => false,
            (Ok(_), _) => {
                assert_eq!(&full, recent, "case {case}");
                false
            }
            (Err(why), _) => {
                assert_eq!(full, Err(*why), "case {case}");
                false
            }
        }
    }

    /// One to three latencies (1 us apart by 0.5 us), one or two o's, two per-byte gaps and a
    /// periodic detour: few values, so that events tie.
    fn random_noise(rnd: &mut impl FnMut(u64) -> u64) -> FewValues {
        FewValues {
            lat: (0..1 + rnd(3)).map(|i| 1000 + 500 * i).collect(),
            o: (0..1 + rnd(2))
                .map(|i| [0, 200][rnd(2) as usize] + 100 * i)
                .collect(),
            g_per_byte: vec![1, 2],
            detour: [0, 50, 700][rnd(3) as usize],
            period: 2000 + rnd(3000),
            fixed_recv: None,
            overclaim: 0,
        }
    }

    /// When every send is larger than S, every message pays `1 + rndv_extra_latencies`
    /// latencies and the windows are `rndv_extra_latencies` smallest latencies wider; with
    /// them the windowed engine still gives the global engine's answer, and no message beats
    /// the wider lookahead. One byte more of S (a message is eager) and the windows are back
    /// to `min o + L`. A noise that promises more than it draws makes runs give up on the
    /// lookahead, never answer wrongly.
    #[test]
    fn rendezvous_only_programs_run_in_wider_windows() {
        let mut next = xorshift(0x0DDB_A11C_AFE0_5EED);
        let mut rnd = move |n: u64| next() % n;
        let (mut answered, mut overclaimed) = (0, 0);
        for case in 0..1500 {
            let mut p = random_program(&mut rnd, false);
            p.hints = true;
            let min_send = p.min_send_size();
            let mut params = Params {
                s: min_send - 1,
                rndv_extra_latencies: 2,
                ..random_params(&mut rnd)
            };
            let mut noise = random_noise(&mut rnd);
            let delay = noise.min_message_delay();
            assert_eq!(lookahead(&p, &params, &noise), delay + 2 * noise.lat[0]);
            let cfg = Config::new(params);
            let global = simulate_global(&p, &cfg, &mut noise.clone());
            match simulate_windowed(&p, &cfg, &mut noise.clone()) {
                Ok(w) => {
                    assert_eq!(Ok(w), global, "case {case}: {p:?}");
                    answered += 1;
                }
                Err(why) => assert_ne!(why, GiveUp::Lookahead, "case {case}: {p:?}"),
            }
            noise.overclaim = 5000;
            match simulate_windowed(&p, &cfg, &mut noise.clone()) {
                Ok(w) => assert_eq!(Ok(w), global, "case {case}: {p:?}"),
                Err(GiveUp::Lookahead) => overclaimed += 1,
                Err(_) => {}
            }
            params.s = min_send;
            assert_eq!(lookahead(&p, &params, &noise), delay, "case {case}");
        }
        assert!(
            answered > 900 && overclaimed > 1000,
            "{answered} {overclaimed}"
        );
    }

    /// Whenever the windowed engine answers, its answer is the global engine's; over random
    /// programs and tie-prone noise it both answers and gives up (ties, rendezvous).
    #[test]
    fn windowed_engine_gives_the_global_answer_or_gives_up() {
        let mut next = xorshift(0x5DEE_CE66_D1CE_4E5B);
        let mut rnd = move |n: u64| next() % n;
        let mut tally = std::collections::HashMap::new();
        for case in 0..3000 {
            let p = random_program(&mut rnd, true);
            let params = random_params(&mut rnd);
            let mut noise = random_noise(&mut rnd);
            if noise.o.len() == 1 && rnd(2) == 0 {
                // The receiver's o and g are constants: the windowed engine takes them as such.
                noise.fixed_recv = Some((noise.o[0], params.g));
            }
            let cfg = Config::new(params);
            let global = simulate_global(&p, &cfg, &mut noise.clone());
            let windowed = simulate_windowed(&p, &cfg, &mut noise.clone());
            let width = lookahead(&p, &cfg.params, &noise);
            let written = run_windowed(&p, &cfg, &mut noise.clone(), width, true, Ancestry::Recent)
                .map(|(out, _)| out);
            assert_eq!(
                written, windowed,
                "case {case}: visiting ranks in written order"
            );
            let full_written =
                run_windowed(&p, &cfg, &mut noise.clone(), width, true, Ancestry::Full);
            assert_eq!(
                full_written,
                super::windowed(&p, &cfg, &mut noise.clone(), Ancestry::Full),
                "case {case}: full ancestry, written order"
            );
            if check_full_ancestry(case, &p, &cfg, &noise, &windowed, &global) {
                *tally.entry("answered with full ancestry").or_insert(0) += 1;
            } else if windowed == Err(GiveUp::Tie) {
                *tally.entry("gave up past a tie").or_insert(0) += 1;
            }
            let through = crate::sim::simulate(&p, &cfg, &mut noise.clone());
            assert_eq!(
                through, global,
                "case {case}: simulate differs from the global engine: {p:?} {params:?}"
            );
            match windowed {
                Ok(w) => {
                    assert_eq!(Ok(w), global, "case {case}: {p:?}");
                    *tally.entry("answered").or_insert(0) += 1;
                    if has_rendezvous(&p, params.s) {
                        *tally.entry("answered with rendezvous").or_insert(0) += 1;
                    }
                }
                Err(why) => *tally.entry(format!("{why:?}").leak()).or_insert(0) += 1,
            }
        }
        let n = |k: &str| tally.get(k).copied().unwrap_or(0);
        // Ties that need more history are rare here; `simultaneous_messages_from_two_ranks`
        // and `full_ancestry_orders_lock_step_ties` make many.
        assert!(
            n("answered") > 2000
                && n("Rendezvous") > 10
                && n("answered with rendezvous") > 10
                && n("Tie") == n("answered with full ancestry") + n("gave up past a tie")
                && n("answered with full ancestry") > 0,
            "{tally:?}"
        );
    }

    /// Rounds in which every rank runs a chain of calcs (one length per round and link, the
    /// same on every rank), then sends to several ranks and receives as many messages, mostly
    /// from ANY_SOURCE; the next round's chain waits for the receives. Message sizes grow
    /// with the sender, so the order in which simultaneous messages are taken shows.
    fn lock_step_program(rnd: &mut impl FnMut(u64) -> u64) -> VecProgram {
        let ranks = 3 + rnd(6) as u32;
        let mut p = VecProgram::new(ranks);
        p.sparse_counters = rnd(2) == 0;
        let rounds = 1 + rnd(4);
        let mut last: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
        for k in 0..rounds {
            let links: Vec<u64> = (0..1 + rnd(4))
                .map(|_| [0, 100, 250][rnd(3) as usize])
                .collect();
            let fan = 1 + rnd(3) as u32;
            // Send `i` goes to `r + i`, or to rank `i` from every rank (a gather).
            let gather = rnd(2) == 0;
            let to = |r: u32, i: u32| if gather { i % ranks } else { (r + i) % ranks };
            let any = rnd(4) != 0;
            let mut sources: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
            for r in 0..ranks {
                for i in 1..=fan {
                    sources[to(r, i) as usize].push(r);
                }
            }
            for r in 0..ranks {
                let mut prev = last[r as usize].clone();
                for &len in &links {
                    let c = VecProgram::op(&mut p, r, Op::calc(len));
                    for &q in &prev {
                        p.requires(r, c, q);
                    }
                    prev = vec![c];
                }
                for i in 1..=fan {
                    let size = 8 + 300 * r as u64 + 50 * i as u64;
                    let s = VecProgram::op(&mut p, r, Op::send(size, to(r, i), k as u32));
                    p.requires(r, s, prev[0]);
                }
                last[r as usize] = sources[r as usize]
                    .iter()
                    .map(|&from| {
                        let from = if any { ANY } else { from };
                        VecProgram::op(&mut p, r, Op::recv(8, from, k as u32))
                    })
                    .collect();
            }
        }
        p
    }

    /// A lock-step gather that needs more than [`FULL_RECORDS`] records: full ancestry gives up
    /// on it as on a tie, `simulate` and `WindowOdds` still give the global answer, and
    /// `WindowOdds` goes back to trying recent ancestry first.
    #[test]
    fn full_ancestry_gives_up_beyond_its_records() {
        let ranks = 64;
        let mut p = VecProgram::new(ranks);
        let mut prev: Vec<Option<u32>> = vec![None; ranks as usize];
        for k in 0..40 {
            for r in 0..ranks {
                let c = VecProgram::op(&mut p, r, Op::calc(100));
                if let Some(q) = prev[r as usize] {
                    p.requires(r, c, q);
                }
                let s = VecProgram::op(&mut p, r, Op::send(8 + r as u64, (k + 1) % ranks, k));
                p.requires(r, s, c);
                prev[r as usize] = Some(s);
            }
            for _ in 0..ranks {
                VecProgram::op(&mut p, (k + 1) % ranks, Op::recv(8, ANY, k));
            }
        }
        let cfg = Config::new(Params::loggopsim_defaults_ticks());
        let noise = lock_step_noise;
        let global = simulate_global(&p, &cfg, &mut noise());
        assert!(global.is_ok());
        assert_eq!(simulate_windowed(&p, &cfg, &mut noise()), Err(GiveUp::Tie));
        let full = simulate_windowed_with(&p, &cfg, &mut noise(), Ancestry::Full);
        assert_eq!(full, Err(GiveUp::Tie));
        assert_eq!(crate::sim::simulate(&p, &cfg, &mut noise()), global);
        let odds = WindowOdds::default();
        assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
        assert!(!odds.full_ancestry());
    }

    /// Lock-step noise on [`lock_step_program`]s: whole histories of different ranks coincide,
    /// so ordering simultaneous messages takes ancestries back to the roots. With full
    /// ancestry the windowed engine gives the global answer on every such tie.
    #[test]
    fn full_ancestry_orders_lock_step_ties() {
        let mut next = xorshift(0x0123_4567_89AB_CDEF);
        let mut rnd = move |n: u64| next() % n;
        let mut tally = std::collections::HashMap::new();
        for case in 0..1500 {
            let p = lock_step_program(&mut rnd);
            let params = random_params(&mut rnd);
            let mut noise = lock_step_noise();
            noise.o = vec![[100, 200][rnd(2) as usize]];
            let cfg = Config::new(params);
            let global = simulate_global(&p, &cfg, &mut noise.clone());
            let recent = simulate_windowed(&p, &cfg, &mut noise.clone());
            let tie = check_full_ancestry(case, &p, &cfg, &noise, &recent, &global);
            let what = match recent {
                _ if tie => "tie",
                Ok(_) => "answered",
                Err(why) => format!("{why:?}").leak(),
            };
            *tally.entry(what).or_insert(0) += 1;
        }
        assert!(tally.get("tie").copied().unwrap_or(0) > 100, "{tally:?}");
    }

    /// One latency, one o, no detours: messages sent at one instant arrive at one instant.
    /// Ranks sending to many peers at one instant (n-way disseminations with calcs of 0 ns):
    /// a rank's sends tie in groups of up to `fan` entries, deferred by the NIC's gap one
    /// after the other, and zero-time chains of calcs (and calcs freed by a send when o is 0)
    /// make later entries tie with a group already kept aside. Groups of [`TIE_ASIDE`] or more
    /// are sorted once and kept aside; the answer is still the global engine's, in lock step
    /// and with noise.
    #[test]
    fn large_tie_groups_give_the_global_answer() {
        let mut next = xorshift(0x7135_A51D_E000_0001);
        let mut rnd = move |n: u64| next() % n;
        for case in 0..400 {
            let ranks = 3 + rnd(12) as u32;
            let fan = 1 + rnd(ranks as u64 - 1) as u32;
            let mut p = VecProgram::new(ranks);
            let mut last: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
            for round in 0..1 + rnd(3) as u32 {
                for r in 0..ranks {
                    let c = VecProgram::op(&mut p, r, Op::calc([0, 0, 100][rnd(3) as usize]));
                    for &v in &last[r as usize] {
                        p.requires(r, c, v);
                    }
                    // A second calc of 0 ns after the first: sends after either.
                    let c2 = VecProgram::op(&mut p, r, Op::calc(0));
                    p.requires(r, c2, c);
                    let mut recvs = Vec::new();
                    let after_c2 = rnd(4);
                    for k in 1..=fan {
                        let s = VecProgram::op(&mut p, r, Op::send(8, (r + k) % ranks, round));
                        p.requires(r, s, if rnd(4) < after_c2 { c2 } else { c });
                        if rnd(3) == 0 {
                            // Freed by the send, at once when o is 0.
                            let z = VecProgram::op(&mut p, r, Op::calc(0));
                            p.requires(r, z, s);
                        }
                        let from = (r + ranks - k) % ranks;
                        recvs.push(VecProgram::op(&mut p, r, Op::recv(8, from, round)));
                    }
                    last[r as usize] = recvs;
                }
            }
            let cfg = Config::new(Params {
                g: [0, 300][rnd(2) as usize],
                ..Params::loggopsim_defaults_ticks()
            });
            let noisy = FewValues {
                lat: vec![1000, 1500],
                o: vec![200, 300],
                g_per_byte: vec![1, 2],
                detour: 50,
                period: 2500,
                fixed_recv: None,
                overclaim: 0,
            };
            let no_o = FewValues {
                o: vec![0],
                ..lock_step_noise()
            };
            let cfg = if rnd(2) == 0 {
                cfg
            } else {
                Config::new(Params {
                    o: 0,
                    g: 0,
                    ..Params::loggopsim_defaults_ticks()
                })
            };
            for noise in [lock_step_noise(), noisy, no_o] {
                let global = simulate_global(&p, &cfg, &mut noise.clone()).unwrap();
                for ancestry in [Ancestry::Recent, Ancestry::Full] {
                    let windowed = simulate_windowed_with(&p, &cfg, &mut noise.clone(), ancestry);
                    if ancestry == Ancestry::Full || windowed != Err(GiveUp::Tie) {
                        assert_eq!(windowed, Ok(global.clone()), "case {case}: {fan}-way");
                    }
                }
            }
        }
    }

    fn lock_step_noise() -> FewValues {
        FewValues {
            lat: vec![1000],
            o: vec![200],
            g_per_byte: vec![1],
            detour: 0,
            period: 1000,
            fixed_recv: None,
            overclaim: 0,
        }
    }

    /// A rendezvous send that frees nothing runs windowed, and its sender's CPU stays busy
    /// until a receive matches it (whatever else the sender does ends earlier here): o = 200,
    /// L = 1000 and 3L for rendezvous, so its message arrives at 3200.
    #[test]
    fn rendezvous_sends_without_dependents_run_windowed() {
        let params = Params {
            s: 1000,
            rndv_extra_latencies: 2,
            ..random_params(&mut |_| 0)
        };
        let cfg = Config::new(params);
        // (rank 1 computes before taking the message, rank 1 posts its receive late, matched)
        for (busy, late, matched) in [(0, false, 3200), (50_000, false, 50_000), (0, true, 51_607)]
        {
            let mut p = VecProgram::new(2);
            VecProgram::op(&mut p, 0, Op::send(4000, 1, 0));
            if late {
                // An eager message sent after a calc of 50000 (at 50200, arriving at 51400)
                // lets rank 1 post its receive once it has taken that one in (o = 200 and
                // 7 bytes at G = 1: at 51607), and the receive finds the message.
                let c = VecProgram::op(&mut p, 0, Op::calc(50_000));
                let e = VecProgram::op(&mut p, 0, Op::send(8, 1, 1));
                p.requires(0, e, c);
                let first = VecProgram::op(&mut p, 1, Op::recv(8, 0, 1));
                let r = VecProgram::op(&mut p, 1, Op::recv(4000, 0, 0));
                p.requires(1, r, first);
            } else {
                VecProgram::op(&mut p, 1, Op::recv(4000, 0, 0));
                if busy > 0 {
                    // The message waits for rank 1's CPU (the message finds its receive then).
                    VecProgram::op(&mut p, 1, Op::calc(busy));
                }
            }
            let noise = lock_step_noise();
            let global = simulate_global(&p, &cfg, &mut noise.clone()).unwrap();
            let windowed = simulate_windowed(&p, &cfg, &mut noise.clone());
            assert_eq!(windowed.as_ref(), Ok(&global), "busy {busy}, late {late}");
            assert_eq!(global.finish[0], matched, "busy {busy}, late {late}");
        }
    }

    /// Two ranks send to a third at the same instant with the same latency; it receives
    /// from ANY_SOURCE, so which message it takes first is LogGOPSim's insertion order of the
    /// two sends. When the sends are roots, that is rank order (roots are queued rank by rank
    /// before the run) and the windowed engine answers. When each send follows a calc, the
    /// order is that of the two calcs, roots queued before the run (rank order), which the
    /// messages do not carry (their grandparents' `ggpt` is 0 on both): it gives up with
    /// recent ancestry and answers with full ancestry.
    #[test]
    fn simultaneous_messages_from_two_ranks() {
        let noise = lock_step_noise;
        let cfg = Config::new(Params::loggopsim_defaults_ticks());
        // Each rank's send follows a calc (`after_calc`) or is a root; with `pause`, rank 2
        // computes between its two receives.
        let two_senders = |after_calc: bool, pause: bool| {
            let mut p = VecProgram::new(3);
            for r in 0..2 {
                let s = VecProgram::op(&mut p, r, Op::send(8, 2, 0));
                if after_calc {
                    let c = VecProgram::op(&mut p, r, Op::calc(100));
                    p.requires(r, s, c);
                }
            }
            let first = VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
            let second = VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
            if pause {
                let c = VecProgram::op(&mut p, 2, Op::calc(300));
                p.requires(2, c, first);
                p.requires(2, second, c);
            }
            p
        };
        for after_calc in [false, true] {
            let p = two_senders(after_calc, true);
            let global = simulate_global(&p, &cfg, &mut noise());
            let windowed = simulate_windowed(&p, &cfg, &mut noise());
            if after_calc {
                assert_eq!(windowed, Err(GiveUp::Tie));
            } else {
                assert_eq!(windowed.ok(), global.clone().ok());
            }
            let full = simulate_windowed_with(&p, &cfg, &mut noise(), Ancestry::Full);
            assert_eq!(full.ok(), global.clone().ok(), "full ancestry");
            assert_eq!(crate::sim::simulate(&p, &cfg, &mut noise()), global);
        }
        // Every run ties with recent ancestry and answers with full ancestry; after the
        // trials, runs start with full ancestry.
        let p = two_senders(true, false);
        let odds = WindowOdds::default();
        let global = simulate_global(&p, &cfg, &mut noise());
        for i in 0..20 {
            assert_eq!(odds.full_ancestry(), i >= WindowOdds::TRIALS, "run {i}");
            assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
        }
        assert_eq!(odds.counts(), (20, 0));
        // The first run ties and no other: recent ancestry stays first.
        let odds = WindowOdds::default();
        for i in 0..30 {
            let p = two_senders(i == 0, false);
            let global = simulate_global(&p, &cfg, &mut noise());
            assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
        }
        assert_eq!(odds.counts(), (30, 0));
        assert!(!odds.full_ancestry());
        // A rendezvous send that frees an op (when another rank's receive matches it): the
        // windowed engine is dropped after its trials.
        let mut p = VecProgram::new(2);
        let s = VecProgram::op(&mut p, 0, Op::send(1 << 20, 1, 0));
        let c = VecProgram::op(&mut p, 0, Op::calc(100));
        p.requires(0, c, s);
        VecProgram::op(&mut p, 1, Op::recv(1 << 20, 0, 0));
        let odds = WindowOdds::default();
        let global = simulate_global(&p, &cfg, &mut noise());
        for _ in 0..20 {
            assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
        }
        assert_eq!(odds.counts(), (0, WindowOdds::TRIALS));
        assert!(!odds.full_ancestry());
    }

    /// Two ranks send to a third at the same instant, each send queued at the same instant by
    /// an op that itself was queued at a different time on each rank (a chain of calcs). The
    /// message whose grandparent was queued first is first in LogGOPSim's order: the windowed
    /// engine orders the tie by `ggpt` and answers as the global engine does, both ways round,
    /// and the order shows (the messages have different sizes).
    #[test]
    fn simultaneous_messages_ordered_by_when_their_grandparents_were_queued() {
        let noise = lock_step_noise;
        let cfg = Config::new(Params::loggopsim_defaults_ticks());
        let mut finishes = Vec::new();
        for (first, second) in [((100, 200), (150, 150)), ((150, 150), (100, 200))] {
            let mut p = VecProgram::new(3);
            for (r, (c, d)) in [first, second].into_iter().enumerate() {
                let r = r as u32;
                // c → d → q → send: q is queued at c and runs at c + d = 300 on both ranks.
                let oc = VecProgram::op(&mut p, r, Op::calc(c));
                let od = VecProgram::op(&mut p, r, Op::calc(d));
                let oq = VecProgram::op(&mut p, r, Op::calc(50));
                let os = VecProgram::op(&mut p, r, Op::send(10 + 5000 * r as u64, 2, 0));
                p.requires(r, od, oc);
                p.requires(r, oq, od);
                p.requires(r, os, oq);
            }
            // Rank 2 answers rank 0 once it has the first message (whose size sets when).
            let a = VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
            VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
            let reply = VecProgram::op(&mut p, 2, Op::send(8, 0, 1));
            p.requires(2, reply, a);
            VecProgram::op(&mut p, 0, Op::recv(8, 2, 1));
            let global = simulate_global(&p, &cfg, &mut noise()).unwrap();
            let windowed = simulate_windowed(&p, &cfg, &mut noise());
            assert_eq!(windowed, Ok(global.clone()), "{first:?} {second:?}");
            finishes.push(global.finish[0]);
        }
        assert_ne!(
            finishes[0], finishes[1],
            "the order shows when rank 0 gets the reply"
        );
    }
}
