//! The discrete-event simulation: LogGOPSim's event rules (LOGGOPSIM.md §6) with compact state.
//!
//! Events are ordered by `(time, ts)`, `ts` being a global insertion counter, exactly as in
//! LogGOPSim built with `STRICT_ORDER`. What differs is only how state is kept:
//! * ops freed together with the same start time are one queue entry (a *batch*) holding the
//!   consecutive `ts` range they would have had, processed in order while nothing else comes
//!   first; the initial roots of a rank are a lazy batch that is never materialised in stable
//!   order (a ring rank has ~2P roots), and when the program lists them in type order already
//!   they are just a queue entry holding the next root's index;
//! * the posted-receive queue stores a run of consecutive posts whose op ids form an arithmetic
//!   progression as one entry (its (src, tag) stored once when equal, else read back from the
//!   program), so a ring rank's 2(P−1) receives or a dissemination rank's ⌈log2 P⌉ are one entry;
//! * dependency counters are dense for explicit schedules and sparse (only partially satisfied
//!   ops, two slots per rank plus a map) for generated ones;
//! * what nearly every event reads of a rank (clocks of CPU 0 and NIC 0, queue heads) shares
//!   one 32-byte `RankState`, because noisy runs visit ranks in random order.
//!
//! None of this changes the order in which anything happens, so results equal LogGOPSim's.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};

use crate::counters::Counters;
use crate::matching::{Arrived, Lists, Posted, MIXED, NIL};
use crate::noise::{communicated, idle_time, MsgCosts, Noise, NEVER_COMMUNICATED};
use crate::params::{or_overflow, Params, Time};
use crate::program::{DepKind, Op, OpKind, Program, Tabled};
use crate::queue::{EventQueue, HeapQueue, QueueItem, RadixQueue};
use crate::record::{
    CalcRecord, MessageRecord, NoRecord, PostRecord, ReceivedRecord, Recorder, SendRecord,
};
use crate::stdsort;

mod polled;
pub use polled::MpiProgress;
use polled::{Polled, STEP};

/// How ops freed by the same event are ordered before they are enqueued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// By type (send, recv, calc), in program order within a type: LogGOPSim with
    /// `std::stable_sort`, the intended semantics.
    #[default]
    Stable,
    /// By type with libstdc++'s unstable `std::sort` permutation: upstream LogGOPSim exactly,
    /// including its deadlocks on Schedgen's ring and recursive-doubling allreduce.
    Libstdcxx,
}

/// How a rank's CPU and NIC are shared between its sends, receives and computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Model {
    /// LogGOPSim's rules (LOGGOPSIM.md §6): a send waits until its CPU *and* its NIC are free;
    /// a message arriving at a rank waits for the rank's CPU and receive NIC, then holds the
    /// CPU for `o + (s−1)·max(O, G)` and the NIC for `g + (s−1)·G`, in arrival order; a
    /// rendezvous send completes when its receive is matched and holds the sender's CPU and
    /// NIC until then. The answer is LogGOPSim's to the tick, but it is not monotone: a message
    /// that arrives early (because its link is faster) takes a CPU or NIC that a more urgent
    /// send or message then waits for, so a faster link can make a run slower (see
    /// [`Model::Queued`]).
    #[default]
    LogGOPSim,
    /// The same costs, shared so that a faster resource never makes a run slower:
    /// * a rank starts its sends in program (op id) order, as an MPI process issues them;
    /// * a send needs only its CPU: it pays `o + (s−1)·O` when the CPU is free and then waits
    ///   in its NIC's queue, which sends one message at a time for `g + (s−1)·G`; the message
    ///   arrives `o + L` after it leaves the NIC (plus the rendezvous latencies);
    /// * receiving takes neither the CPU nor the NIC away from other work: a message is
    ///   received `o + (s−1)·max(O, G)` after it arrives (plus an OS detour in progress at its
    ///   arrival), and its receive completes then, or when it is posted if that is later;
    /// * a rendezvous send completes when its message is received; it holds nothing meanwhile;
    /// * an op starts no earlier than the event that frees it, and a rank finishes when its
    ///   CPU is free and its last receive has completed.
    ///
    /// Every start time is then a maximum of sums of the parameters over a fixed set of
    /// chains whenever the order of sends, the matching of messages and the order of calcs
    /// and sends on a CPU do not depend on timing (for Schedgen's collectives the first two
    /// hold by construction), so making a parameter smaller never makes such a run slower.
    /// If program order would stall a run (a send waits for a lower-numbered one that can
    /// only run after it), the lowest waiting send of the lowest rank starts anyway.
    Queued,
}

/// How a run is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub params: Params,
    pub order: Order,
    /// How CPUs and NICs are shared ([`Model`]). Compat mode requires [`Model::LogGOPSim`].
    pub model: Model,
    /// LogGOPSim compatibility: u64 wrapping arithmetic, `(s-1)` wraps for 0-byte messages
    /// (they cost `o - G` at the receiver), per-byte costs in whole ticks. Otherwise every
    /// addition is checked and `s-1` saturates at 0.
    pub compat: bool,
    /// A progress hook the caller owns (see [`Progress`]); `None` costs nothing.
    pub progress: Option<&'static Progress>,
    /// Whether a rendezvous message advances while its sender or receiver computes
    /// ([`MpiProgress`]; [`MpiProgress::Async`], the default, is LogGOPSim's behaviour).
    pub mpi_progress: MpiProgress,
}

impl Config {
    pub fn new(params: Params) -> Config {
        Config {
            params,
            order: Order::Stable,
            model: Model::LogGOPSim,
            compat: false,
            progress: None,
            mpi_progress: MpiProgress::Async,
        }
    }
}

/// A caller-owned progress hook for long runs of the global engine ([`simulate_global`], and so
/// every noiseless run): the engine adds the number of ops it has started to
/// [`Progress::ops_started`] about every [`Progress::EVERY`] events (and the rest when the run
/// ends, so a completed run adds exactly `Program::total_ops`), and stops with
/// [`EngineError::Stopped`] at the next such point once [`Progress::request_stop`] was called.
/// The engine does no I/O: a caller polls the counter from another thread (e.g. to draw a
/// progress bar). Several runs may share one hook; their counts add up. The hot loop pays one
/// comparison per event for it, with or without a hook. The windowed engine (noisy runs)
/// does not report.
#[derive(Debug, Default)]
pub struct Progress {
    ops: AtomicU64,
    stop: AtomicBool,
}

impl Progress {
    /// Events between two reports.
    pub const EVERY: u64 = 1 << 14;

    pub const fn new() -> Progress {
        Progress {
            ops: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        }
    }
    /// Ops started so far by the runs using this hook.
    pub fn ops_started(&self) -> u64 {
        self.ops.load(AtomicOrdering::Relaxed)
    }
    /// Sets the counter back to 0 (between runs).
    pub fn reset(&self) {
        self.ops.store(0, AtomicOrdering::Relaxed);
    }
    /// Asks every run using this hook to stop at its next report.
    pub fn request_stop(&self) {
        self.stop.store(true, AtomicOrdering::Relaxed);
    }
    pub fn stop_requested(&self) -> bool {
        self.stop.load(AtomicOrdering::Relaxed)
    }
    /// Withdraws [`Progress::request_stop`], for the next run of a process that runs several
    /// (a library front end whose user pressed Ctrl-C once).
    pub fn clear_stop(&self) {
        self.stop.store(false, AtomicOrdering::Relaxed);
    }
}

/// Two hooks are equal only when they are the same object.
impl PartialEq for Progress {
    fn eq(&self, other: &Progress) -> bool {
        std::ptr::eq(self, other)
    }
}
impl Eq for Progress {}

/// An entry left in a match queue at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueEntry {
    /// Source rank ([`ANY`](crate::ANY) for an ANY_SOURCE receive).
    pub src: u32,
    /// Tag ([`ANY`](crate::ANY) for ANY_TAG).
    pub tag: u32,
    /// The receive op (posted-receive queue) or the sender's send op (unexpected queue).
    pub op: u32,
}

/// What was left over on one rank when the event queue ran dry.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RankLeftovers {
    pub rank: u32,
    /// Messages that arrived but were never received (LogGOPSim's "unexpected queue").
    pub unexpected: Vec<QueueEntry>,
    /// Receives that were posted but never matched.
    pub posted: Vec<QueueEntry>,
    /// Number of ops that never became executable.
    pub never_ran: u64,
    /// Some of those ops (all of them for explicit schedules, up to a limit).
    pub never_ran_ops: Vec<u32>,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Per rank: the time its last CPU became free (LogGOPSim's reported host time).
    pub finish: Vec<Time>,
    /// LogGOPSim's event count: ops enqueued + messages sent.
    pub events: u64,
    /// Messages sent.
    pub messages: u64,
    /// Ranks with unmatched messages, unmatched receives or ops that never ran. Empty when the
    /// schedule completed.
    pub leftovers: Vec<RankLeftovers>,
}

impl Outcome {
    /// The latest finishing time and the first rank that has it.
    pub fn max(&self) -> (Time, u32) {
        let mut best = (0, 0);
        for (r, &t) in self.finish.iter().enumerate() {
            if t > best.0 {
                best = (t, r as u32);
            }
        }
        best
    }
    /// True when every op ran and every message was received.
    pub fn completed(&self) -> bool {
        self.leftovers.is_empty()
    }
    /// True when a match queue is non-empty (what LogGOPSim reports).
    pub fn has_queue_leftovers(&self) -> bool {
        self.leftovers
            .iter()
            .any(|l| !l.unexpected.is_empty() || !l.posted.is_empty())
    }
}

/// A run that cannot produce a meaningful time.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum EngineError {
    #[error(
        "time overflow at rank {rank}, op #{op}: the simulated time exceeds {max} ps (about 213 \
         days); check the parameters and sizes (use --compat loggopsim for LogGOPSim's wrapping \
         arithmetic)",
        max = u64::MAX
    )]
    Overflow { rank: u32, op: u32 },
    #[error("the schedule uses {what} {value} but the engine supports at most {max}")]
    TooLarge {
        what: &'static str,
        value: u64,
        max: u64,
    },
    #[error("the run was stopped by its caller before it ended (interrupted)")]
    Stopped,
    #[error(
        "rank {rank}, op #{op}: {what} {peer} does not exist (the schedule has {ranks} ranks)"
    )]
    BadPeer {
        rank: u32,
        op: u32,
        what: &'static str,
        peer: u32,
        ranks: u32,
    },
}

// ---------------------------------------------------------------------------------------------
// Queue entries

const KIND_SHIFT: u32 = 30;
const HOST_MASK: u32 = (1 << KIND_SHIFT) - 1;
const K_OP: u32 = 0;
const K_MSG: u32 = 1;
const K_BATCH: u32 = 2;
/// A rank's initial roots, already in type order (see [`Program::roots_in_type_order`]): the
/// entry's item is the index of the next root to run; nothing is allocated for it.
const K_ROOTS: u32 = 3;
/// Queued model: `next_send` of a rank whose first send has not been looked for yet.
pub(crate) const NOT_YET: u32 = u32::MAX;
/// Queued model: set in the `item` of a message event that was deferred by an OS detour at
/// its arrival, so that the detour is not applied again (op ids stay below it).
pub(crate) const DETOURED: u32 = 1 << 31;

/// One entry of the event queue: 24 bytes. `tag` packs the kind (2 bits) and the rank; `item`
/// is the op id (op events), the sender's op id (message events, `tag` holding the sender), or
/// the batch slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ev {
    time: Time,
    ts: u64,
    tag: u32,
    item: u32,
}

impl QueueItem for Ev {
    #[inline]
    fn time(&self) -> Time {
        self.time
    }
    #[inline]
    fn ts(&self) -> u64 {
        self.ts
    }
}

impl Ord for Ev {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on (time, ts).
        (other.time, other.ts).cmp(&(self.time, self.ts))
    }
}
impl PartialOrd for Ev {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Ops freed together with the same start time, holding consecutive ts values.
#[derive(Debug, Default)]
struct Batch {
    host: u32,
    /// Materialised ops (already ordered); empty for a lazy root batch.
    ops: Vec<u32>,
    /// Next position in `ops`, or in the lazy root walk.
    pos: u32,
    /// Lazy stable-order walk over the roots: current type pass (1..=3) and root index.
    lazy_pass: u8,
    lazy_k: u32,
    lazy: bool,
    /// Roots of each kind not yet returned (counted during the first pass), so later passes
    /// stop as soon as their kind is exhausted.
    lazy_left: [u32; 4],
}

/// The three kinds of per-rank clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clock {
    /// When a CPU is next free (`nexto`).
    Cpu,
    /// When a NIC may next send (`nextgs`) / receive (`nextgr`).
    Send,
    Recv,
}

/// What the engine touches for a rank on almost every event, in half a cache line: the clocks
/// of CPU 0 and NIC 0 (others live in [`Sim::extra`]) and the heads of the match queues.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct RankState {
    /// Next time CPU 0 is free (LogGOPSim's `nexto`).
    o: Time,
    /// Next time NIC 0 may send (`nextgs`) / receive (`nextgr`).
    gs: Time,
    gr: Time,
    /// Heads of the posted-receive and unexpected-message lists.
    rq: u32,
    uq: u32,
}

impl RankState {
    #[inline(always)]
    fn clock(&self, kind: Clock) -> &Time {
        match kind {
            Clock::Cpu => &self.o,
            Clock::Send => &self.gs,
            Clock::Recv => &self.gr,
        }
    }
    #[inline(always)]
    fn clock_mut(&mut self, kind: Clock) -> &mut Time {
        match kind {
            Clock::Cpu => &mut self.o,
            Clock::Send => &mut self.gs,
            Clock::Recv => &mut self.gr,
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// Runs `prog` to completion (or until nothing can run) and returns per-rank finishing times.
///
/// A noisy run goes to the windowed engine ([`crate::window`]) first, which gives the same
/// answer faster or gives up early (on a tie, it tries again with full ancestry); the global
/// engine ([`simulate_global`]) runs everything else, and the runs the windowed engine gave
/// up on.
pub fn simulate<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
) -> Result<Outcome, EngineError> {
    // A first run's choice of engine and ancestry, as for one repetition of many.
    crate::window::WindowOdds::default().simulate(prog, cfg, noise)
}

/// Runs `prog` with the global engine: every event through one queue ordered by `(time, ts)`,
/// exactly as LogGOPSim.
pub fn simulate_global<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
) -> Result<Outcome, EngineError> {
    simulate_global_recorded(prog, cfg, noise, &mut NoRecord)
}

/// [`simulate_global`], telling `rec` about every activity (see [`crate::record`]). The
/// answer is the same as without recording, and as [`simulate`]'s.
pub fn simulate_global_recorded<P: Program, N: Noise, R: Recorder>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    rec: &mut R,
) -> Result<Outcome, EngineError> {
    match prog.op_table() {
        Some(t) => run_global(&Tabled::new(prog, t), cfg, noise, rec),
        None => run_global(prog, cfg, noise, rec),
    }
}

fn run_global<P: Program, N: Noise, R: Recorder>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
    rec: &mut R,
) -> Result<Outcome, EngineError> {
    // The radix heap needs a monotone queue: one CPU per rank (or the queued model, which
    // never schedules an op before the event that frees it) and no wrapping arithmetic. It
    // pays off with many pending events; a few ranks (an application trace) keep few, and a
    // binary heap of them is cheaper.
    let queued = cfg.model == Model::Queued;
    let radix = prog.num_ranks() > FEW_RANKS;
    if cfg.compat {
        Sim::<P, N, R, HeapQueue<Ev>, true, false>::new(prog, cfg, noise, rec, HeapQueue::new())?
            .run()
    } else if queued && radix {
        Sim::<P, N, R, RadixQueue<Ev>, false, true>::new(prog, cfg, noise, rec, RadixQueue::new())?
            .run()
    } else if queued {
        Sim::<P, N, R, HeapQueue<Ev>, false, true>::new(prog, cfg, noise, rec, HeapQueue::new())?
            .run()
    } else if prog.num_cpus() <= 1 && radix {
        Sim::<P, N, R, RadixQueue<Ev>, false, false>::new(prog, cfg, noise, rec, RadixQueue::new())?
            .run()
    } else {
        Sim::<P, N, R, HeapQueue<Ev>, false, false>::new(prog, cfg, noise, rec, HeapQueue::new())?
            .run()
    }
}

/// Up to this many ranks the global engine queues events in a binary heap, not a radix heap
/// (both pop in the same order).
const FEW_RANKS: u32 = 64;

struct Sim<
    'a,
    P: Program,
    N: Noise,
    R: Recorder,
    Q: EventQueue<Ev>,
    const COMPAT: bool,
    const QUEUED: bool,
> {
    prog: &'a P,
    p: Params,
    order: Order,
    noise: &'a mut N,
    /// Told about every activity when `R::ACTIVE` (see [`crate::record`]).
    rec: &'a mut R,
    ranks: u32,
    ncpu: usize,
    nnic: usize,
    rs: Vec<RankState>,
    /// The match lists (their heads are in `rs`).
    lists: Lists,
    /// Per rank: ops enqueued so far (the rest never ran).
    enqueued: Vec<u32>,
    /// Clocks of CPUs 1.. and NICs 1.. per rank: `ncpu-1` CPU clocks, then `nnic-1` send and
    /// `nnic-1` receive clocks (empty when every rank has one CPU and one NIC).
    extra: Vec<Time>,
    xstride: usize,
    counters: Counters,
    heap: Q,
    batches: Vec<Batch>,
    free_batches: Vec<u32>,
    ts: u64,
    messages: u64,
    /// (host, op) released during the current event, in release order.
    freed: Vec<(u32, u32)>,
    /// The time of the event being processed (a direct op's own time while it runs).
    now: Time,
    /// Whether an op freed by the event being processed may run at once (only inside a plain
    /// op or message event, not in a batch or root run that still holds reserved `ts` values).
    direct_on: bool,
    direct_ok: bool,
    /// An op freed with a start time before every queued entry's (and a `ts` after all of
    /// theirs): it would pop next, so it runs next without the queue (`(time, ts, host, op)`).
    direct: Option<(Time, u64, u32, u32)>,
    overflow: bool,
    /// Queued model: per rank, the lowest-numbered send that has not started ([`NOT_YET`]
    /// before the rank's first send event), the sends waiting for it (`(rank, op) → ts`), and
    /// the latest time a receive of the rank completed.
    next_send: Vec<u32>,
    parked: std::collections::BTreeSet<(u32, u32)>,
    recv_end: Vec<Time>,
    /// Per rank, when it last communicated (started a send or completed a receive;
    /// [`NEVER_COMMUNICATED`] before), kept only when the noise asks for senders' idle times
    /// ([`Noise::uses_idle`]; empty otherwise).
    last_active: Vec<Time>,
    /// Queued model: `ts` values taken by sends queued again when they stopped waiting (not
    /// events of LogGOPSim's count).
    requeued: u64,
    /// The program has `irequires` links (else start releases are skipped).
    start_deps: bool,
    // Whole-tick per-byte costs for compat mode.
    g_ticks: u64,
    o_ticks: u64,
    /// The caller's progress hook, the `ts` of its next report (`u64::MAX` without a hook) and
    /// the ops already reported.
    progress: Option<&'static Progress>,
    next_report: u64,
    reported: u64,
    /// [`MpiProgress::Polled`]: what the rendezvous rules of `polled.rs` keep (`None` with
    /// [`MpiProgress::Async`], which never looks at it).
    polled: Option<Box<Polled>>,
}

impl<
        'a,
        P: Program,
        N: Noise,
        R: Recorder,
        Q: EventQueue<Ev>,
        const COMPAT: bool,
        const QUEUED: bool,
    > Sim<'a, P, N, R, Q, COMPAT, QUEUED>
{
    fn new(
        prog: &'a P,
        cfg: &Config,
        noise: &'a mut N,
        rec: &'a mut R,
        heap: Q,
    ) -> Result<Self, EngineError> {
        let ranks = prog.num_ranks();
        if ranks > HOST_MASK {
            return Err(EngineError::TooLarge {
                what: "ranks",
                value: ranks as u64,
                max: HOST_MASK as u64,
            });
        }
        let ncpu = prog.num_cpus().max(1) as usize;
        let nnic = prog.num_nics().max(1) as usize;
        let counters = Counters::new(prog);
        let n = ranks as usize;
        let uses_idle = noise.uses_idle();
        Ok(Sim {
            prog,
            p: cfg.params,
            order: cfg.order,
            noise,
            rec,
            ranks,
            ncpu,
            nnic,
            rs: vec![
                RankState {
                    o: 0,
                    gs: 0,
                    gr: 0,
                    rq: NIL,
                    uq: NIL,
                };
                n
            ],
            lists: {
                let mut l = Lists::default();
                l.reset(n);
                l
            },
            enqueued: vec![0; n],
            extra: vec![0; n * (ncpu - 1 + 2 * (nnic - 1))],
            xstride: ncpu - 1 + 2 * (nnic - 1),
            counters,
            heap,
            batches: Vec::new(),
            free_batches: Vec::new(),
            ts: 0,
            messages: 0,
            freed: Vec::new(),
            now: 0,
            direct_on: direct_path_on(),
            direct_ok: false,
            direct: None,
            overflow: false,
            next_send: if QUEUED { vec![NOT_YET; n] } else { Vec::new() },
            parked: Default::default(),
            recv_end: if QUEUED || cfg.mpi_progress == MpiProgress::Polled {
                vec![0; n]
            } else {
                Vec::new()
            },
            last_active: if N::ACTIVE && uses_idle {
                vec![NEVER_COMMUNICATED; n]
            } else {
                Vec::new()
            },
            requeued: 0,
            start_deps: prog.has_start_dependents(),
            g_ticks: cfg.params.big_g.whole_units(),
            o_ticks: cfg.params.big_o.whole_units(),
            progress: cfg.progress,
            next_report: if cfg.progress.is_some() { 0 } else { u64::MAX },
            reported: 0,
            polled: Polled::new(cfg.mpi_progress, n),
        })
    }

    // --- clocks ------------------------------------------------------------------------------

    /// Position in `extra` of clock `i` ≥ 1 of `kind` of rank `h` (CPUs 1.., then send NICs
    /// 1.., then receive NICs 1..); index 0 lives in the rank's hot [`RankState`].
    #[inline]
    fn extra_index(&self, h: usize, kind: Clock, i: u8) -> usize {
        let first = match kind {
            Clock::Cpu => 0,
            Clock::Send => self.ncpu - 1,
            Clock::Recv => self.ncpu - 1 + self.nnic - 1,
        };
        h * self.xstride + first + i as usize - 1
    }
    #[inline(always)]
    fn clock(&self, h: usize, kind: Clock, i: u8) -> Time {
        if i == 0 {
            *self.rs[h].clock(kind)
        } else {
            self.extra[self.extra_index(h, kind, i)]
        }
    }
    #[inline(always)]
    fn set_clock(&mut self, h: usize, kind: Clock, i: u8, v: Time) {
        if i == 0 {
            *self.rs[h].clock_mut(kind) = v
        } else {
            let j = self.extra_index(h, kind, i);
            self.extra[j] = v
        }
    }
    // --- arithmetic -------------------------------------------------------------------------

    #[inline]
    fn add(&mut self, a: Time, b: Time) -> Time {
        if COMPAT {
            a.wrapping_add(b)
        } else {
            or_overflow(a.checked_add(b), &mut self.overflow)
        }
    }

    /// `s - 1` as LogGOPSim computes it (wrapping) or saturating at 0.
    #[inline]
    fn s1(size: u64) -> u64 {
        if COMPAT {
            size.wrapping_sub(1)
        } else {
            size.saturating_sub(1)
        }
    }

    /// `(s-1)·G`.
    #[inline]
    fn gap_bytes(&mut self, size: u64) -> Time {
        if COMPAT {
            Self::s1(size).wrapping_mul(self.g_ticks)
        } else {
            or_overflow(self.p.big_g.cost(Self::s1(size)), &mut self.overflow)
        }
    }

    /// `(s-1)·O`.
    #[inline]
    fn overhead_bytes(&mut self, size: u64) -> Time {
        if COMPAT {
            Self::s1(size).wrapping_mul(self.o_ticks)
        } else {
            or_overflow(self.p.big_o.cost(Self::s1(size)), &mut self.overflow)
        }
    }

    // --- dependencies ------------------------------------------------------------------------

    #[inline]
    fn mark(&mut self, host: u32, op: u32, kind: DepKind) {
        if kind == DepKind::Start && !self.start_deps {
            return;
        }
        let freed = &mut self.freed;
        self.counters
            .release(self.prog, host, op, kind, |d| freed.push((host, d)));
    }

    // --- queue ---------------------------------------------------------------------------------

    #[inline]
    fn push(&mut self, time: Time, ts: u64, kind: u32, host: u32, item: u32) {
        self.heap.push(Ev {
            time,
            ts,
            tag: kind << KIND_SHIFT | host,
            item,
        });
    }

    fn new_batch(&mut self, b: Batch) -> u32 {
        if let Some(i) = self.free_batches.pop() {
            self.batches[i as usize] = b;
            i
        } else {
            self.batches.push(b);
            (self.batches.len() - 1) as u32
        }
    }

    /// Orders `ops` (one host's freed ops, in release order) by type.
    fn order_by_type(&self, host: u32, ops: &mut [u32]) {
        let prog = self.prog;
        let kind = |op: &u32| prog.op(host, *op).kind;
        match self.order {
            Order::Stable => ops.sort_by_key(kind),
            Order::Libstdcxx => stdsort::sort_by(ops, |a, b| kind(a) < kind(b)),
        }
    }

    /// Start time LogGOPSim gives a freed op: its CPU's clock (and the NIC send clock for sends).
    #[inline]
    fn start_time(&self, host: u32, op: &Op) -> Time {
        let o = self.clock(host as usize, Clock::Cpu, op.cpu);
        if QUEUED {
            // Never before the event that frees it; a send does not wait for its NIC.
            return o.max(self.now);
        }
        if op.kind == OpKind::Send {
            o.max(self.clock(host as usize, Clock::Send, op.nic))
        } else {
            o
        }
    }

    /// Enqueues the ops freed during the last event, host by host, each host's ops by type.
    #[inline(always)]
    fn flush_freed(&mut self) {
        if self.freed.len() == 1 {
            // The common case, inline: one op freed.
            let (host, op) = self.freed[0];
            self.freed.clear();
            self.enqueued[host as usize] += 1;
            let o = self.prog.op(host, op);
            let t = self.start_time(host, &o);
            if R::ACTIVE {
                self.rec.ready(host, op, &o, t, self.now);
            }
            let ts = self.ts;
            self.ts += 1;
            if self.direct_ok && self.heap.all_after(t) {
                // It is the next pop: (t, ts) precedes every queued entry (whether `t` is the
                // current time, later, or earlier on another CPU).
                self.direct_ok = false;
                self.direct = Some((t, ts, host, op));
            } else {
                self.push(t, ts, K_OP, host, op);
            }
        } else if !self.freed.is_empty() {
            self.flush_freed_many();
        }
    }

    #[inline(never)]
    fn flush_freed_many(&mut self) {
        let mut freed = std::mem::take(&mut self.freed);
        if freed.len() > 1 && freed.windows(2).any(|w| w[0].0 != w[1].0) {
            freed.sort_by_key(|&(h, _)| h); // stable: keeps release order within a host
        }
        let mut i = 0;
        while i < freed.len() {
            let host = freed[i].0;
            let mut j = i;
            while j < freed.len() && freed[j].0 == host {
                j += 1;
            }
            let mut ops: Vec<u32> = freed[i..j].iter().map(|&(_, o)| o).collect();
            if ops.len() > 1 {
                self.order_by_type(host, &mut ops);
            }
            self.enqueue_ordered(host, ops);
            i = j;
        }
        freed.clear();
        self.freed = freed;
    }

    /// Enqueues already ordered ops of `host` with consecutive ts values; consecutive ops with
    /// equal start times share one batch entry.
    fn enqueue_ordered(&mut self, host: u32, ops: Vec<u32>) {
        self.enqueued[host as usize] += ops.len() as u32;
        let n = ops.len();
        let mut i = 0;
        while i < n {
            let t = self.start_time(host, &self.prog.op(host, ops[i]));
            let mut j = i + 1;
            while j < n && self.start_time(host, &self.prog.op(host, ops[j])) == t {
                j += 1;
            }
            if R::ACTIVE {
                for &id in &ops[i..j] {
                    let o = self.prog.op(host, id);
                    self.rec.ready(host, id, &o, t, self.now);
                }
            }
            let ts = self.ts;
            self.ts += (j - i) as u64;
            if j - i == 1 {
                self.push(t, ts, K_OP, host, ops[i]);
            } else {
                let b = Batch {
                    host,
                    ops: ops[i..j].to_vec(),
                    ..Default::default()
                };
                let slot = self.new_batch(b);
                self.push(t, ts, K_BATCH, host, slot);
            }
            i = j;
        }
    }

    /// Enqueues every rank's roots at time 0, as LogGOPSim does before the first event.
    fn enqueue_roots(&mut self) {
        for host in 0..self.ranks {
            let n = self.prog.num_roots(host);
            if n == 0 {
                continue;
            }
            self.enqueued[host as usize] += n;
            let ts = self.ts;
            self.ts += n as u64;
            if n == 1 {
                let op = self.prog.root(host, 0);
                self.push(0, ts, K_OP, host, op);
                continue;
            }
            if self.order == Order::Stable && self.prog.roots_in_type_order(host) {
                self.push(0, ts, K_ROOTS, host, 0);
                continue;
            }
            let slot = self.new_batch(Batch {
                host,
                lazy: true,
                lazy_pass: 1,
                ..Default::default()
            });
            self.push(0, ts, K_BATCH, host, slot);
        }
    }

    /// The next op of a batch, or None when it is exhausted.
    fn batch_next(&mut self, slot: u32) -> Option<u32> {
        let prog = self.prog;
        let order = self.order;
        let b = &mut self.batches[slot as usize];
        if b.lazy {
            let host = b.host;
            if order == Order::Libstdcxx {
                // Materialise and permute exactly like std::sort on the root list.
                let n = prog.num_roots(host);
                let mut ops: Vec<u32> = (0..n).map(|k| prog.root(host, k)).collect();
                stdsort::sort_by(&mut ops, |a, c| {
                    prog.op(host, *a).kind < prog.op(host, *c).kind
                });
                b.ops = ops;
                b.lazy = false;
                b.pos = 0;
            } else {
                let n = prog.num_roots(host);
                while b.lazy_pass <= 3 {
                    let pass = b.lazy_pass as usize;
                    if pass == 1 || b.lazy_left[pass] > 0 {
                        while b.lazy_k < n {
                            let op = prog.root(host, b.lazy_k);
                            b.lazy_k += 1;
                            let k = prog.op(host, op).kind as usize;
                            if pass == 1 && k != 1 {
                                b.lazy_left[k] += 1;
                            }
                            if k == pass {
                                if pass > 1 {
                                    b.lazy_left[pass] -= 1;
                                }
                                return Some(op);
                            }
                        }
                    }
                    b.lazy_pass += 1;
                    b.lazy_k = 0;
                }
                return None;
            }
        }
        let op = b.ops.get(b.pos as usize).copied();
        b.pos += 1;
        op
    }

    fn batch_done(&self, slot: u32) -> bool {
        let b = &self.batches[slot as usize];
        if b.lazy {
            b.lazy_pass > 3
        } else {
            b.pos as usize >= b.ops.len()
        }
    }

    // --- the main loop ------------------------------------------------------------------------

    fn run(mut self) -> Result<Outcome, EngineError> {
        self.enqueue_roots();
        loop {
            self.run_queue()?;
            if !QUEUED || !self.unstall(self.now) {
                break;
            }
        }
        Ok(self.finish())
    }

    fn run_queue(&mut self) -> Result<(), EngineError> {
        while let Some(ev) = self.heap.pop() {
            if self.ts >= self.next_report {
                self.report()?;
            }
            let kind = ev.tag >> KIND_SHIFT;
            let host = ev.tag & HOST_MASK;
            self.now = ev.time;
            match kind {
                K_OP | K_MSG => {
                    self.direct_ok = self.direct_on;
                    if kind == K_OP {
                        self.op_event(ev.time, ev.ts, host, ev.item)?;
                    } else {
                        self.msg_event(ev.time, ev.ts, host, ev.item)?;
                    }
                    while let Some((t, ts, host, op)) = self.direct.take() {
                        self.direct_ok = self.direct_on;
                        self.now = t;
                        self.op_event(t, ts, host, op)?;
                    }
                    self.direct_ok = false;
                }
                K_ROOTS => {
                    // Roots in type order, from root `item` on, while nothing else comes first.
                    let n = self.prog.num_roots(host);
                    let h = host as usize;
                    let (mut k, mut ts) = (ev.item, ev.ts);
                    loop {
                        let id = self.prog.root(host, k);
                        let op = self.prog.op(host, id);
                        let mut done = 1;
                        if op.kind == OpKind::Recv && !self.start_deps && self.rs[h].uq == NIL {
                            // What `op_event` does for such a receive, without the event
                            // overhead: a ring rank has 2(P−1) of them. A run of them is
                            // posted at once when nothing in the queue comes between.
                            let (run, stride) = self.prog.root_recv_run(host, k);
                            let (ids, id_stride) = if run > 1 {
                                (1, 0)
                            } else {
                                self.prog.root_recv_ids(host, k)
                            };
                            if run > 1 && !self.heap.has_before(ev.time, ts + run as u64 - 1) {
                                self.posted(h).post_run(op.peer, op.tag, id, stride, run);
                                done = run;
                            } else if ids > 1 && !self.heap.has_before(ev.time, ts + ids as u64 - 1)
                            {
                                self.posted(h).post_mixed(id, id_stride, ids);
                                done = ids;
                            } else {
                                self.posted(h).post(op.peer, op.tag, id);
                            }
                            if R::ACTIVE {
                                let step = if run > 1 { stride } else { id_stride };
                                for i in 0..done {
                                    self.rec.post(&PostRecord {
                                        rank: host,
                                        op: id + i * step,
                                        start: ev.time,
                                        matched: None,
                                    });
                                }
                            }
                        } else {
                            self.op_event(ev.time, ts, host, id)?;
                        }
                        k += done;
                        ts += done as u64;
                        if k == n {
                            break;
                        }
                        if self.heap.has_before(ev.time, ts) {
                            self.push(ev.time, ts, K_ROOTS, host, k);
                            break;
                        }
                    }
                }
                _ if ev.item & STEP != 0 => {
                    // A step of a rendezvous message (`polled.rs`).
                    self.direct_ok = false;
                    self.step_event(ev.time, ev.item & !STEP)?;
                }
                _ => {
                    // K_BATCH, a batch: process its ops in ts order while nothing else comes first.
                    let slot = ev.item;
                    let mut ts = ev.ts;
                    while let Some(op) = self.batch_next(slot) {
                        self.op_event(ev.time, ts, host, op)?;
                        ts += 1;
                        if self.batch_done(slot) {
                            break;
                        }
                        if self.heap.has_before(ev.time, ts) {
                            self.push(ev.time, ts, K_BATCH, host, slot);
                            break;
                        }
                    }
                    if self.batch_done(slot) {
                        let b = &mut self.batches[slot as usize];
                        b.ops.clear();
                        b.lazy = false;
                        self.free_batches.push(slot);
                    }
                }
            }
        }
        Ok(())
    }

    /// Adds the ops started since the last report to the hook, or stops when asked to.
    #[cold]
    #[inline(never)]
    fn report(&mut self) -> Result<(), EngineError> {
        if let Some(p) = self.progress {
            let started = self.ts - self.messages - self.extra_ts();
            p.ops
                .fetch_add(started - self.reported, AtomicOrdering::Relaxed);
            self.reported = started;
            if p.stop_requested() {
                return Err(EngineError::Stopped);
            }
        }
        self.next_report = self.ts.saturating_add(Progress::EVERY);
        Ok(())
    }

    #[inline(always)]
    fn check(&mut self, host: u32, op: u32) -> Result<(), EngineError> {
        if self.overflow {
            return Err(EngineError::Overflow { rank: host, op });
        }
        self.flush_freed();
        Ok(())
    }

    fn op_event(&mut self, t: Time, ts: u64, host: u32, id: u32) -> Result<(), EngineError> {
        let op = self.prog.op(host, id);
        let h = host as usize;
        match op.kind {
            OpKind::Calc => {
                let o = self.clock(h, Clock::Cpu, op.cpu);
                if o <= t {
                    let end = self.add(t, op.size);
                    let noise = if N::ACTIVE {
                        self.noise.os_detour(host, t, end)
                    } else {
                        0
                    };
                    let v = self.add(end, noise);
                    self.set_clock(h, Clock::Cpu, op.cpu, v);
                    self.calc_ran(h, t, v);
                    if R::ACTIVE {
                        self.rec.calc(&CalcRecord {
                            rank: host,
                            op: id,
                            cpu: op.cpu,
                            start: t,
                            cpu_free: o,
                            duration: op.size,
                            detour: noise,
                            cpu_end: v,
                        });
                    }
                    self.mark(host, id, DepKind::Start);
                    self.mark(host, id, DepKind::Done);
                } else {
                    self.push(o, ts, K_OP, host, id);
                }
            }
            OpKind::Send => {
                if op.peer >= self.ranks {
                    return Err(EngineError::BadPeer {
                        rank: host,
                        op: id,
                        what: "send destination",
                        peer: op.peer,
                        ranks: self.ranks,
                    });
                }
                if QUEUED {
                    return self.queued_send(t, ts, host, id, op);
                }
                let cpu_free = self.clock(h, Clock::Cpu, op.cpu);
                let nic_free = self.clock(h, Clock::Send, op.nic);
                let ready = cpu_free.max(nic_free);
                if ready <= t {
                    self.mark(host, id, DepKind::Start);
                    let (lat, o, g, gap) = if N::ACTIVE {
                        let idle = idle_time(self.last_active.get_mut(h), t);
                        let c = self
                            .noise
                            .send_costs_idle(&self.p, host, op.peer, id, op.size, idle);
                        (c.latency, c.o, c.g, c.gap_bytes)
                    } else {
                        let gap = self.gap_bytes(op.size);
                        (self.p.l, self.p.o, self.p.g, gap)
                    };
                    let t_o = self.add(t, o);
                    let noise = if N::ACTIVE {
                        self.noise.os_detour(host, t, t_o)
                    } else {
                        0
                    };
                    let ob = self.overhead_bytes(op.size);
                    let v = self.add(t_o, ob);
                    let cpu_end = self.add(v, noise);
                    self.set_clock(h, Clock::Cpu, op.cpu, cpu_end);
                    let v = self.add(t, g);
                    let nic_end = self.add(v, gap);
                    self.set_clock(h, Clock::Send, op.nic, nic_end);
                    let mut arrival = self.add(t_o, lat);
                    if op.size > self.p.s {
                        for _ in 0..self.p.rndv_extra_latencies {
                            arrival = self.add(arrival, lat);
                        }
                    }
                    if R::ACTIVE {
                        let drawn = MsgCosts {
                            latency: lat,
                            o,
                            g,
                            gap_bytes: gap,
                        };
                        let r = SendRecord {
                            start: t,
                            cpu_free,
                            nic_free,
                            overhead_bytes: ob,
                            detour: noise,
                            cpu_end,
                            nic_end,
                            nic_start: t,
                            arrival,
                            ..self.send_record(host, id, &op, drawn)
                        };
                        self.rec.send(&r);
                    }
                    let mts = self.ts;
                    self.ts += 1;
                    self.messages += 1;
                    self.push(arrival, mts, K_MSG, host, id);
                    if op.size <= self.p.s {
                        self.mark(host, id, DepKind::Done);
                    }
                } else {
                    self.push(ready, ts, K_OP, host, id);
                }
            }
            OpKind::Recv => {
                self.mark(host, id, DepKind::Start);
                let matched = self.arrived(h).take_match(op.peer, op.tag);
                if R::ACTIVE {
                    self.rec.post(&PostRecord {
                        rank: host,
                        op: id,
                        start: t,
                        matched: matched.map(|u| (u.src, u.send_op)),
                    });
                }
                if let Some(u) = matched {
                    if op.size > self.p.s {
                        if self.rndv_matched(t, t, u.src, u.send_op, host, id, op.cpu, op.nic) {
                            return self.check(host, id);
                        }
                        self.mark(u.src, u.send_op, DepKind::Done);
                        self.release_sender(u.src as usize, op.cpu, op.nic, t);
                    }
                    if QUEUED {
                        self.recv_end[h] = self.recv_end[h].max(t);
                    }
                    communicated(self.last_active.get_mut(h), t);
                    self.mark(host, id, DepKind::Done);
                } else {
                    self.posted(h).post(op.peer, op.tag, id);
                }
            }
        }
        self.check(host, id)
    }

    /// A rendezvous send completes when its receive is matched at `t`: the sender's CPU and NIC
    /// cannot be free before (LogGOPSim indexes them with the receive's CPU and NIC).
    #[inline]
    fn release_sender(&mut self, s: usize, cpu: u8, nic: u8, t: Time) {
        if QUEUED {
            // The queued model holds nothing of the sender while it waits.
            return;
        }
        let o0 = self.clock(s, Clock::Cpu, cpu);
        self.set_clock(s, Clock::Cpu, cpu, o0.max(t));
        let g0 = self.clock(s, Clock::Send, nic);
        self.set_clock(s, Clock::Send, nic, g0.max(t));
        if R::ACTIVE {
            self.rec.raise(s as u32, cpu, nic, t, o0, g0);
        }
    }

    /// A [`SendRecord`] of op `id` of `host` with its costs (`drawn`, and the noiseless ones)
    /// and its times still 0, for the caller to fill in.
    #[inline(never)]
    fn send_record(&mut self, host: u32, id: u32, op: &Op, drawn: MsgCosts) -> SendRecord {
        let base = if N::ACTIVE {
            self.noise.base_costs(&self.p, host, op.peer, op.size)
        } else {
            drawn
        };
        let rndv = op.size > self.p.s;
        SendRecord {
            rank: host,
            op: id,
            dst: op.peer,
            size: op.size,
            cpu: op.cpu,
            nic: op.nic,
            start: 0,
            cpu_free: 0,
            nic_free: 0,
            drawn,
            base,
            overhead_bytes: 0,
            detour: 0,
            cpu_end: 0,
            nic_end: 0,
            nic_start: 0,
            arrival: 0,
            latencies: 1 + if rndv { self.p.rndv_extra_latencies } else { 0 },
        }
    }

    /// Rank `h`'s posted-receive list.
    #[inline(always)]
    fn posted(&mut self, h: usize) -> Posted<'_> {
        self.lists.posted(&mut self.rs[h].rq, h)
    }

    /// Rank `h`'s unexpected-message list.
    #[inline(always)]
    fn arrived(&mut self, h: usize) -> Arrived<'_> {
        self.lists.arrived(&mut self.rs[h].uq, h)
    }

    fn msg_event(
        &mut self,
        t: Time,
        ts: u64,
        sender: u32,
        send_id: u32,
    ) -> Result<(), EngineError> {
        if QUEUED {
            return self.queued_msg(t, ts, sender, send_id);
        }
        let op = self.prog.op(sender, send_id);
        let host = op.peer;
        let h = host as usize;
        // LogGOPSim charges the message to the receiver's CPU and NIC with the *sender's* indices.
        let cpu_free = self.clock(h, Clock::Cpu, op.cpu);
        let nic_free = self.clock(h, Clock::Recv, op.nic);
        let ready = cpu_free.max(nic_free);
        let ready = ready.max(self.sender_holds(sender, op.size, t));
        if ready <= t {
            let (o, g, gap) = if N::ACTIVE {
                let c = self
                    .noise
                    .recv_costs(&self.p, sender, host, send_id, op.size);
                (c.o, c.g, c.gap_bytes)
            } else {
                let gap = self.gap_bytes(op.size);
                (self.p.o, self.p.g, gap)
            };
            let t_o = self.add(t, o);
            let noise = if N::ACTIVE {
                self.noise.os_detour(host, t, t_o)
            } else {
                0
            };
            let ob = self.overhead_bytes(op.size);
            let v = self.add(t_o, noise);
            let cpu_end = self.add(v, ob.max(gap));
            self.set_clock(h, Clock::Cpu, op.cpu, cpu_end);
            let v = self.add(t, g);
            let nic_end = self.add(v, gap);
            self.set_clock(h, Clock::Recv, op.nic, nic_end);
            let prog = self.prog;
            let matched = self.posted(h).take_match(prog, host, sender, op.tag);
            if R::ACTIVE {
                let drawn = MsgCosts {
                    latency: self.p.l,
                    o,
                    g,
                    gap_bytes: gap,
                };
                let base = if N::ACTIVE {
                    self.noise.base_costs(&self.p, sender, host, op.size)
                } else {
                    drawn
                };
                self.rec.message(&MessageRecord {
                    src: sender,
                    send_op: send_id,
                    dst: host,
                    size: op.size,
                    cpu: op.cpu,
                    nic: op.nic,
                    start: t,
                    cpu_free,
                    nic_free,
                    drawn,
                    base,
                    overhead_bytes: ob,
                    detour: noise,
                    cpu_end,
                    nic_end,
                    matched,
                });
            }
            if let Some(recv) = matched {
                if op.size > self.p.s {
                    let data_in = cpu_end;
                    if self.rndv_matched(t, data_in, sender, send_id, host, recv, op.cpu, op.nic) {
                        return self.check(sender, send_id);
                    }
                    self.mark(sender, send_id, DepKind::Done);
                    self.release_sender(sender as usize, op.cpu, op.nic, t);
                }
                communicated(self.last_active.get_mut(h), t);
                self.mark(host, recv, DepKind::Done);
            } else {
                self.arrived(h).push(sender, op.tag, send_id);
            }
        } else {
            self.push(ready, ts, K_MSG, sender, send_id);
        }
        self.check(sender, send_id)
    }

    // --- the queued model ---------------------------------------------------------------------

    /// The first send of `host` with an id of at least `from`, or [`NOT_YET`] when none is
    /// left.
    fn send_from(&self, host: u32, from: u32) -> u32 {
        let n = self.prog.num_ops(host);
        (from..n)
            .find(|&i| self.prog.op(host, i).kind == OpKind::Send)
            .unwrap_or(NOT_YET - 1)
    }

    /// A send event of the queued model ([`Model::Queued`]): in program order, on a free CPU,
    /// then through the NIC's queue.
    fn queued_send(
        &mut self,
        t: Time,
        ts: u64,
        host: u32,
        id: u32,
        op: Op,
    ) -> Result<(), EngineError> {
        let h = host as usize;
        if self.next_send[h] == NOT_YET {
            self.next_send[h] = self.send_from(host, 0);
        }
        if id > self.next_send[h] {
            // A lower-numbered send has not started: wait for it.
            self.parked.insert((host, id));
            return self.check(host, id);
        }
        if op.peer >= self.ranks {
            return Err(EngineError::BadPeer {
                rank: host,
                op: id,
                what: "send destination",
                peer: op.peer,
                ranks: self.ranks,
            });
        }
        if id >= DETOURED {
            return Err(EngineError::TooLarge {
                what: "ops per rank",
                value: id as u64 + 1,
                max: DETOURED as u64,
            });
        }
        let ready = self.clock(h, Clock::Cpu, op.cpu);
        if ready > t {
            self.push(ready, ts, K_OP, host, id);
            return self.check(host, id);
        }
        self.mark(host, id, DepKind::Start);
        let (lat, o, g, gap, o_r) = if N::ACTIVE {
            let idle = idle_time(self.last_active.get_mut(h), t);
            let c = self
                .noise
                .send_costs_idle(&self.p, host, op.peer, id, op.size, idle);
            let r = self.noise.recv_costs(&self.p, host, op.peer, id, op.size);
            (c.latency, c.o, c.g, c.gap_bytes, r.o)
        } else {
            let gap = self.gap_bytes(op.size);
            (self.p.l, self.p.o, self.p.g, gap, self.p.o)
        };
        let t_o = self.add(t, o);
        let noise = if N::ACTIVE {
            self.noise.os_detour(host, t, t_o)
        } else {
            0
        };
        let ob = self.overhead_bytes(op.size);
        let v = self.add(t_o, ob);
        let cpu_end = self.add(v, noise);
        let cpu_free = self.clock(h, Clock::Cpu, op.cpu);
        self.set_clock(h, Clock::Cpu, op.cpu, cpu_end);
        let nic_free = self.clock(h, Clock::Send, op.nic);
        let tn = t.max(nic_free);
        let v = self.add(tn, g);
        let nic_end = self.add(v, gap);
        self.set_clock(h, Clock::Send, op.nic, nic_end);
        let mut arrival = self.add(tn, o);
        arrival = self.add(arrival, lat);
        if op.size > self.p.s {
            for _ in 0..self.p.rndv_extra_latencies {
                arrival = self.add(arrival, lat);
            }
        }
        if R::ACTIVE {
            let drawn = MsgCosts {
                latency: lat,
                o,
                g,
                gap_bytes: gap,
            };
            let r = SendRecord {
                start: t,
                cpu_free,
                nic_free,
                overhead_bytes: ob,
                detour: noise,
                cpu_end,
                nic_end,
                nic_start: tn,
                arrival,
                ..self.send_record(host, id, &op, drawn)
            };
            self.rec.send(&r);
        }
        // The message is received `o + (s-1)·max(O, G)` after it arrives.
        let received = self.add(arrival, o_r);
        let received = self.add(received, ob.max(gap));
        let mts = self.ts;
        self.ts += 1;
        self.messages += 1;
        if !self.rndv_arrives(arrival, host, id, &op) {
            self.push(received, mts, K_MSG, host, id);
        }
        if op.size <= self.p.s {
            self.mark(host, id, DepKind::Done);
        }
        if id == self.next_send[h] {
            let next = self.send_from(host, id + 1);
            self.next_send[h] = next;
            if self.parked.remove(&(host, next)) {
                // Queued again by this event, as any op it would free.
                self.requeue(t, host, next);
            }
        }
        self.check(host, id)
    }

    /// A message event of the queued model, at the time the message is received: it takes no
    /// resource; an OS detour in progress at its arrival defers it once.
    fn queued_msg(&mut self, t: Time, ts: u64, sender: u32, item: u32) -> Result<(), EngineError> {
        let send_id = item & !DETOURED;
        let op = self.prog.op(sender, send_id);
        let host = op.peer;
        let h = host as usize;
        if N::ACTIVE && item & DETOURED == 0 {
            let c = self
                .noise
                .recv_costs(&self.p, sender, host, send_id, op.size);
            let ob = self.overhead_bytes(op.size);
            let arrival = t.saturating_sub(c.o).saturating_sub(ob.max(c.gap_bytes));
            let t_o = self.add(arrival, c.o);
            let d = self.noise.os_detour(host, arrival, t_o);
            if d > 0 {
                if R::ACTIVE {
                    self.rec.deferred(sender, send_id, d);
                }
                let later = self.add(t, d);
                self.push(later, ts, K_MSG, sender, send_id | DETOURED);
                return self.check(sender, send_id);
            }
        }
        let prog = self.prog;
        let matched = self.posted(h).take_match(prog, host, sender, op.tag);
        if R::ACTIVE {
            let (drawn, base) = if N::ACTIVE {
                let c = self
                    .noise
                    .recv_costs(&self.p, sender, host, send_id, op.size);
                (c, self.noise.base_costs(&self.p, sender, host, op.size))
            } else {
                let c = MsgCosts {
                    latency: self.p.l,
                    o: self.p.o,
                    g: self.p.g,
                    gap_bytes: self.gap_bytes(op.size),
                };
                (c, c)
            };
            let overhead_bytes = self.overhead_bytes(op.size);
            self.rec.received(&ReceivedRecord {
                src: sender,
                send_op: send_id,
                dst: host,
                size: op.size,
                time: t,
                drawn,
                base,
                overhead_bytes,
                matched,
            });
        }
        if let Some(recv) = matched {
            if op.size > self.p.s {
                if self.rndv_matched(t, t, sender, send_id, host, recv, op.cpu, op.nic) {
                    return self.check(sender, send_id);
                }
                self.mark(sender, send_id, DepKind::Done);
            }
            self.recv_end[h] = self.recv_end[h].max(t);
            communicated(self.last_active.get_mut(h), t);
            self.mark(host, recv, DepKind::Done);
        } else {
            self.arrived(h).push(sender, op.tag, send_id);
        }
        self.check(sender, send_id)
    }

    /// Queued model: when nothing is left to run but sends wait for lower-numbered ones that
    /// never started, the lowest waiting send of the lowest rank starts anyway (the ones it
    /// skips may start whenever they are ready). `false` when none waits.
    fn unstall(&mut self, now: Time) -> bool {
        let Some(&(host, id)) = self.parked.iter().next() else {
            return false;
        };
        self.parked.remove(&(host, id));
        self.next_send[host as usize] = id;
        self.requeue(now, host, id);
        true
    }

    /// Queues a send that stopped waiting at `t`, with a new `ts`.
    fn requeue(&mut self, t: Time, host: u32, id: u32) {
        if R::ACTIVE {
            let o = self.prog.op(host, id);
            self.rec.ready(host, id, &o, t, t);
        }
        let ts = self.ts;
        self.ts += 1;
        self.requeued += 1;
        self.push(t, ts, K_OP, host, id);
    }

    fn finish(self) -> Outcome {
        if let Some(p) = self.progress {
            let started = self.ts - self.messages - self.extra_ts();
            p.ops
                .fetch_add(started - self.reported, AtomicOrdering::Relaxed);
        }
        let finish: Vec<Time> = (0..self.ranks as usize)
            .map(|h| {
                let cpu = (0..self.ncpu as u8)
                    .map(|c| self.clock(h, Clock::Cpu, c))
                    .max()
                    .unwrap_or(0);
                if QUEUED || self.polled.is_some() {
                    // The polled rules may complete a receive after its CPU work.
                    cpu.max(self.recv_end[h])
                } else {
                    cpu
                }
            })
            .collect();
        let mut leftovers = Vec::new();
        for r in 0..self.ranks {
            let h = r as usize;
            let unexpected: Vec<QueueEntry> = self
                .lists
                .uq
                .iter(self.rs[h].uq)
                .map(|u| QueueEntry {
                    src: u.src,
                    tag: u.tag,
                    op: u.send_op,
                })
                .collect();
            let prog = self.prog;
            let posted: Vec<QueueEntry> = self
                .lists
                .rq
                .iter(self.rs[h].rq)
                .flat_map(|run| {
                    (0..run.count).map(move |i| {
                        let op = run.first + i * run.stride;
                        let (src, tag) = if run.src == MIXED {
                            let o = prog.op(r, op);
                            (o.peer, o.tag)
                        } else {
                            (run.src, run.tag)
                        };
                        QueueEntry { src, tag, op }
                    })
                })
                .collect();
            let never_ran = self.prog.num_ops(r) as u64 - self.enqueued[h] as u64;
            let never_ran_ops = if never_ran > 0 {
                self.counters.waiting_ops(r, self.prog.num_ops(r), 1000)
            } else {
                Vec::new()
            };
            if !unexpected.is_empty() || !posted.is_empty() || never_ran > 0 {
                leftovers.push(RankLeftovers {
                    rank: r,
                    unexpected,
                    posted,
                    never_ran,
                    never_ran_ops,
                });
            }
        }
        Outcome {
            finish,
            events: self.ts - self.requeued - self.extra_ts(),
            messages: self.messages,
            leftovers,
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Tests turn the direct path off to check that it changes nothing.
    static NO_DIRECT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a freed op that would pop next runs without the queue (always, outside tests).
fn direct_path_on() -> bool {
    #[cfg(test)]
    return !NO_DIRECT.with(|c| c.get());
    #[cfg(not(test))]
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::NoNoise;
    use crate::test_rng::xorshift;
    use crate::testing::VecProgram;
    use crate::{Op, Params};

    fn both(p: &VecProgram, params: Params, compat: bool) -> [(Vec<Time>, u64, u64); 2] {
        [false, true].map(|off| {
            NO_DIRECT.with(|c| c.set(off));
            let mut cfg = Config::new(params);
            cfg.compat = compat;
            let out = simulate(p, &cfg, &mut NoNoise).unwrap();
            NO_DIRECT.with(|c| c.set(false));
            assert!(out.completed(), "{:?}", out.leftovers);
            (out.finish, out.events, out.messages)
        })
    }

    /// Random exchange rounds with calcs of random length (many of them 0, so ops are freed to
    /// start at the time of the event that frees them, the others later) under parameters that
    /// make ties common (L = o = g, 1-byte messages): the direct path gives the same finishing
    /// times and event counts as the queue, with the radix queue (more than `FEW_RANKS` ranks)
    /// and with the heap (fewer ranks, and compat mode).
    #[test]
    fn ops_run_without_the_queue_exactly_when_they_would_pop_next() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let mut rnd = move |n: u64| next() % n;
        let lgs = Params::loggopsim_defaults_ticks();
        let ties = Params {
            l: 1000,
            o: 1000,
            g: 1000,
            ..lgs
        };
        for _ in 0..300 {
            // Few ranks run on the binary heap, more than `FEW_RANKS` on the radix heap.
            let ranks = if rnd(4) == 0 {
                FEW_RANKS + 1 + rnd(8) as u32
            } else {
                2 + rnd(9) as u32
            };
            let mut p = VecProgram::new(ranks);
            p.sparse_counters = rnd(2) == 0;
            let rounds = 1 + rnd(5);
            let mut last: Vec<Option<u32>> = vec![None; ranks as usize];
            for k in 0..rounds {
                let d = 1 + (k as u32 % (ranks - 1));
                for r in 0..ranks {
                    let size = [0, 1, 1, 16][rnd(4) as usize];
                    let s = VecProgram::op(&mut p, r, Op::send(size, (r + d) % ranks, k as u32));
                    let v = VecProgram::op(
                        &mut p,
                        r,
                        Op::recv(size, (r + ranks - d) % ranks, k as u32),
                    );
                    let c =
                        VecProgram::op(&mut p, r, Op::calc([0, 0, 1000, 2000][rnd(4) as usize]));
                    p.requires(r, c, v);
                    if rnd(2) == 0 {
                        p.requires(r, c, s);
                    }
                    if let Some(prev) = last[r as usize] {
                        p.requires(r, s, prev);
                        if rnd(3) == 0 {
                            p.requires(r, v, prev);
                        }
                    }
                    last[r as usize] = Some(c);
                }
            }
            for (params, compat) in [(ties, false), (ties, true), (lgs, false)] {
                let [queued, direct] = both(&p, params, compat);
                assert_eq!(queued, direct, "compat {compat}: {p:?}");
            }
        }
    }
}
