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
//!
//! This file holds the public entry points, the queue entries and the engine's state; the rest
//! is one concern a file: `config.rs` (how a run is simulated), `outcome.rs` (what it returns),
//! `state.rs` (clocks and arithmetic), `driver.rs` (the queue, batches, roots, direct path and
//! main loop), `send.rs` and `receive.rs` (the two models' event rules), `polled.rs` (polled
//! MPI progress).

use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtomicOrdering;

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

mod config;
mod driver;
mod outcome;
mod polled;
mod receive;
mod send;
mod state;
#[cfg(test)]
mod tests;

pub use config::{Config, Model, Order, Progress};
use driver::direct_path_on;
pub use outcome::{EngineError, Outcome, QueueEntry, RankLeftovers};
pub use polled::MpiProgress;
use polled::{Polled, STEP};

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
