//! The discrete-event simulation: LogGOPSim's event rules (LOGGOPSIM.md §6) with compact state.
//!
//! Events are ordered by `(time, ts)`, `ts` being a global insertion counter, exactly as in
//! LogGOPSim built with `STRICT_ORDER`. What differs is only how state is kept:
//! * ops freed together with the same start time are one queue entry (a *batch*) holding the
//!   consecutive `ts` range they would have had, processed in order while nothing else comes
//!   first; the initial roots of a rank are a lazy batch that is never materialised in stable
//!   order (a ring rank has ~2P roots);
//! * the posted-receive queue stores runs of consecutive posts with equal (src, tag) as one entry;
//! * dependency counters are dense for explicit schedules and sparse (only partially satisfied
//!   ops) for generated ones.
//!
//! None of this changes the order in which anything happens, so results equal LogGOPSim's.

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};

use crate::noise::Noise;
use crate::params::{Params, Time};
use crate::program::{DepKind, Op, OpKind, Program, ANY};
use crate::queue::{EventQueue, HeapQueue, QueueItem, RadixQueue};
use crate::stdsort;

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

/// How a run is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub params: Params,
    pub order: Order,
    /// LogGOPSim compatibility: u64 wrapping arithmetic, `(s-1)` wraps for 0-byte messages
    /// (they cost `o - G` at the receiver), per-byte costs in whole ticks. Otherwise every
    /// addition is checked and `s-1` saturates at 0.
    pub compat: bool,
}

impl Config {
    pub fn new(params: Params) -> Config {
        Config {
            params,
            order: Order::Stable,
            compat: false,
        }
    }
}

/// An entry left in a match queue at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueEntry {
    /// Source rank ([`ANY`] for an ANY_SOURCE receive).
    pub src: u32,
    /// Tag ([`ANY`] for ANY_TAG).
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

/// A run of consecutive posted receives with the same (src, tag): ops `first + i*stride`.
#[derive(Clone, Copy, Debug)]
struct PostedRun {
    src: u32,
    tag: u32,
    first: u32,
    stride: u32,
    count: u32,
}

#[derive(Clone, Copy, Debug)]
struct Unexpected {
    src: u32,
    tag: u32,
    send_op: u32,
}

#[inline]
fn matches(want_src: u32, want_tag: u32, src: u32, tag: u32) -> bool {
    (want_src == ANY || src == ANY || src == want_src)
        && (want_tag == ANY || tag == ANY || tag == want_tag)
}

enum Counters {
    /// One byte per op; counts of 255 and more live in `big` (keyed like the sparse map).
    Dense {
        base: Vec<u64>,
        left: Vec<u8>,
        big: HashMap<u64, u32>,
    },
    Sparse(HashMap<u64, u32>),
}

// ---------------------------------------------------------------------------------------------

/// Runs `prog` to completion (or until nothing can run) and returns per-rank finishing times.
pub fn simulate<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
) -> Result<Outcome, EngineError> {
    // The radix heap needs a monotone queue: one CPU per rank and no wrapping arithmetic.
    if cfg.compat {
        Sim::<P, N, HeapQueue<Ev>, true>::new(prog, cfg, noise, HeapQueue::new())?.run()
    } else if prog.num_cpus() <= 1 {
        Sim::<P, N, RadixQueue<Ev>, false>::new(prog, cfg, noise, RadixQueue::new())?.run()
    } else {
        Sim::<P, N, HeapQueue<Ev>, false>::new(prog, cfg, noise, HeapQueue::new())?.run()
    }
}

struct Sim<'a, P: Program, N: Noise, Q: EventQueue<Ev>, const COMPAT: bool> {
    prog: &'a P,
    p: Params,
    order: Order,
    noise: &'a mut N,
    ranks: u32,
    ncpu: usize,
    nnic: usize,
    nexto: Vec<Time>,
    nextgs: Vec<Time>,
    nextgr: Vec<Time>,
    rq: Vec<VecDeque<PostedRun>>,
    uq: Vec<VecDeque<Unexpected>>,
    counters: Counters,
    enqueued: Vec<u32>,
    heap: Q,
    batches: Vec<Batch>,
    free_batches: Vec<u32>,
    ts: u64,
    messages: u64,
    /// (host, op) released during the current event, in release order.
    freed: Vec<(u32, u32)>,
    scratch: Vec<u32>,
    overflow: bool,
    // Whole-tick per-byte costs for compat mode.
    g_ticks: u64,
    o_ticks: u64,
}

impl<'a, P: Program, N: Noise, Q: EventQueue<Ev>, const COMPAT: bool> Sim<'a, P, N, Q, COMPAT> {
    fn new(prog: &'a P, cfg: &Config, noise: &'a mut N, heap: Q) -> Result<Self, EngineError> {
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
        let counters = if prog.dense_counters() {
            let mut base = Vec::with_capacity(ranks as usize + 1);
            let mut left = Vec::new();
            let mut big = HashMap::new();
            let mut acc = 0u64;
            for r in 0..ranks {
                base.push(acc);
                let n = prog.num_ops(r);
                acc += n as u64;
                left.extend((0..n).map(|i| {
                    let c = prog.depcount(r, i);
                    if c >= u8::MAX as u32 {
                        big.insert((r as u64) << 32 | i as u64, c);
                        u8::MAX
                    } else {
                        c as u8
                    }
                }));
            }
            base.push(acc);
            Counters::Dense { base, left, big }
        } else {
            Counters::Sparse(HashMap::new())
        };
        let n = ranks as usize;
        Ok(Sim {
            prog,
            p: cfg.params,
            order: cfg.order,
            noise,
            ranks,
            ncpu,
            nnic,
            nexto: vec![0; n * ncpu],
            nextgs: vec![0; n * nnic],
            nextgr: vec![0; n * nnic],
            rq: (0..n).map(|_| VecDeque::new()).collect(),
            uq: (0..n).map(|_| VecDeque::new()).collect(),
            counters,
            enqueued: vec![0; n],
            heap,
            batches: Vec::new(),
            free_batches: Vec::new(),
            ts: 0,
            messages: 0,
            freed: Vec::new(),
            scratch: Vec::new(),
            overflow: false,
            g_ticks: cfg.params.big_g.whole_units(),
            o_ticks: cfg.params.big_o.whole_units(),
        })
    }

    // --- arithmetic -------------------------------------------------------------------------

    #[inline]
    fn add(&mut self, a: Time, b: Time) -> Time {
        if COMPAT {
            a.wrapping_add(b)
        } else {
            match a.checked_add(b) {
                Some(v) => v,
                None => {
                    self.overflow = true;
                    Time::MAX
                }
            }
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
            match self.p.big_g.cost(Self::s1(size)) {
                Some(v) => v,
                None => {
                    self.overflow = true;
                    Time::MAX
                }
            }
        }
    }

    /// `(s-1)·O`.
    #[inline]
    fn overhead_bytes(&mut self, size: u64) -> Time {
        if COMPAT {
            Self::s1(size).wrapping_mul(self.o_ticks)
        } else {
            match self.p.big_o.cost(Self::s1(size)) {
                Some(v) => v,
                None => {
                    self.overflow = true;
                    Time::MAX
                }
            }
        }
    }

    // --- dependencies ------------------------------------------------------------------------

    /// One dependency of `(host, op)` is satisfied; returns true if it became executable.
    #[inline]
    fn satisfy(&mut self, host: u32, op: u32) -> bool {
        match &mut self.counters {
            Counters::Dense { base, left, big } => {
                let i = (base[host as usize] + op as u64) as usize;
                // A decrement below zero cannot happen for a consistent schedule (the front ends
                // check depcounts).
                if left[i] == u8::MAX {
                    let key = (host as u64) << 32 | op as u64;
                    if let Some(c) = big.get_mut(&key) {
                        *c -= 1;
                        if *c < u8::MAX as u32 {
                            left[i] = *c as u8;
                            big.remove(&key);
                        }
                        return left[i] == 0;
                    }
                }
                left[i] = left[i].wrapping_sub(1);
                left[i] == 0
            }
            Counters::Sparse(map) => {
                let initial = self.prog.depcount(host, op);
                if initial <= 1 {
                    return true;
                }
                let key = (host as u64) << 32 | op as u64;
                let e = map.entry(key).or_insert(initial);
                *e -= 1;
                if *e == 0 {
                    map.remove(&key);
                    true
                } else {
                    false
                }
            }
        }
    }

    fn mark(&mut self, host: u32, op: u32, kind: DepKind) {
        let prog = self.prog;
        let mut released = std::mem::take(&mut self.scratch);
        released.clear();
        prog.for_each_dependent(host, op, kind, |d| released.push(d));
        for &d in &released {
            if self.satisfy(host, d) {
                self.freed.push((host, d));
            }
        }
        self.scratch = released;
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
        let o = self.nexto[host as usize * self.ncpu + op.cpu as usize];
        if op.kind == OpKind::Send {
            o.max(self.nextgs[host as usize * self.nnic + op.nic as usize])
        } else {
            o
        }
    }

    /// Enqueues the ops freed during the last event, host by host, each host's ops by type.
    fn flush_freed(&mut self) {
        if self.freed.is_empty() {
            return;
        }
        if self.freed.len() == 1 {
            let (host, op) = self.freed[0];
            self.freed.clear();
            self.enqueued[host as usize] += 1;
            let t = self.start_time(host, &self.prog.op(host, op));
            let ts = self.ts;
            self.ts += 1;
            self.push(t, ts, K_OP, host, op);
            return;
        }
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
        while let Some(ev) = self.heap.pop() {
            let kind = ev.tag >> KIND_SHIFT;
            let host = ev.tag & HOST_MASK;
            match kind {
                K_OP => self.op_event(ev.time, ev.ts, host, ev.item)?,
                K_MSG => self.msg_event(ev.time, ev.ts, host, ev.item)?,
                _ => {
                    // A batch: process its ops in ts order while nothing else comes first.
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
        Ok(self.finish())
    }

    #[inline]
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
        let ci = h * self.ncpu + op.cpu as usize;
        match op.kind {
            OpKind::Calc => {
                if self.nexto[ci] <= t {
                    let end = self.add(t, op.size);
                    let noise = if N::ACTIVE {
                        self.noise.os_detour(host, t, end)
                    } else {
                        0
                    };
                    self.nexto[ci] = self.add(end, noise);
                    self.mark(host, id, DepKind::Start);
                    self.mark(host, id, DepKind::Done);
                } else {
                    let at = self.nexto[ci];
                    self.push(at, ts, K_OP, host, id);
                }
            }
            OpKind::Send => {
                let ni = h * self.nnic + op.nic as usize;
                if op.peer >= self.ranks {
                    return Err(EngineError::BadPeer {
                        rank: host,
                        op: id,
                        what: "send destination",
                        peer: op.peer,
                        ranks: self.ranks,
                    });
                }
                if self.nexto[ci].max(self.nextgs[ni]) <= t {
                    self.mark(host, id, DepKind::Start);
                    let (lat, o, g, gap) = if N::ACTIVE {
                        let c = self.noise.send_costs(&self.p, host, op.peer, id, op.size);
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
                    self.nexto[ci] = self.add(v, noise);
                    let v = self.add(t, g);
                    self.nextgs[ni] = self.add(v, gap);
                    let mut arrival = self.add(t_o, lat);
                    if op.size > self.p.s {
                        for _ in 0..self.p.rndv_extra_latencies {
                            arrival = self.add(arrival, lat);
                        }
                    }
                    let mts = self.ts;
                    self.ts += 1;
                    self.messages += 1;
                    self.push(arrival, mts, K_MSG, host, id);
                    if op.size <= self.p.s {
                        self.mark(host, id, DepKind::Done);
                    }
                } else {
                    let at = self.nexto[ci].max(self.nextgs[ni]);
                    self.push(at, ts, K_OP, host, id);
                }
            }
            OpKind::Recv => {
                self.mark(host, id, DepKind::Start);
                let found = self.uq[h]
                    .iter()
                    .position(|u| matches(op.peer, op.tag, u.src, u.tag));
                if let Some(pos) = found {
                    let u = self.uq[h].remove(pos).expect("position is in range");
                    if op.size > self.p.s {
                        self.mark(u.src, u.send_op, DepKind::Done);
                        let sc = u.src as usize * self.ncpu + op.cpu as usize;
                        let sn = u.src as usize * self.nnic + op.nic as usize;
                        self.nexto[sc] = self.nexto[sc].max(t);
                        self.nextgs[sn] = self.nextgs[sn].max(t);
                    }
                    self.mark(host, id, DepKind::Done);
                } else {
                    self.post(h, op.peer, op.tag, id);
                }
            }
        }
        self.check(host, id)
    }

    fn post(&mut self, h: usize, src: u32, tag: u32, id: u32) {
        let q = &mut self.rq[h];
        if let Some(last) = q.back_mut() {
            if last.src == src && last.tag == tag && id > last.first {
                let next = if last.count == 1 {
                    Some(id - last.first)
                } else {
                    let want = last.first as u64 + last.stride as u64 * last.count as u64;
                    (want == id as u64).then_some(last.stride)
                };
                if let Some(stride) = next {
                    last.stride = stride;
                    last.count += 1;
                    return;
                }
            }
        }
        q.push_back(PostedRun {
            src,
            tag,
            first: id,
            stride: 0,
            count: 1,
        });
    }

    fn msg_event(
        &mut self,
        t: Time,
        ts: u64,
        sender: u32,
        send_id: u32,
    ) -> Result<(), EngineError> {
        let op = self.prog.op(sender, send_id);
        let host = op.peer;
        let h = host as usize;
        // LogGOPSim charges the message to the receiver's CPU and NIC with the *sender's* indices.
        let ci = h * self.ncpu + op.cpu as usize;
        let ni = h * self.nnic + op.nic as usize;
        if self.nexto[ci].max(self.nextgr[ni]) <= t {
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
            self.nexto[ci] = self.add(v, ob.max(gap));
            let v = self.add(t, g);
            self.nextgr[ni] = self.add(v, gap);
            let q = &mut self.rq[h];
            let found = q.iter().position(|r| matches(sender, op.tag, r.src, r.tag));
            if let Some(pos) = found {
                let run = &mut q[pos];
                let recv = run.first;
                run.count -= 1;
                run.first = run.first.wrapping_add(run.stride);
                if run.count == 0 {
                    q.remove(pos);
                }
                if op.size > self.p.s {
                    self.mark(sender, send_id, DepKind::Done);
                    let sc = sender as usize * self.ncpu + op.cpu as usize;
                    let sn = sender as usize * self.nnic + op.nic as usize;
                    self.nexto[sc] = self.nexto[sc].max(t);
                    self.nextgs[sn] = self.nextgs[sn].max(t);
                }
                self.mark(host, recv, DepKind::Done);
            } else {
                self.uq[h].push_back(Unexpected {
                    src: sender,
                    tag: op.tag,
                    send_op: send_id,
                });
            }
        } else {
            let at = self.nexto[ci].max(self.nextgr[ni]);
            self.push(at, ts, K_MSG, sender, send_id);
        }
        self.check(sender, send_id)
    }

    fn finish(self) -> Outcome {
        let ncpu = self.ncpu;
        let finish: Vec<Time> = (0..self.ranks as usize)
            .map(|h| {
                self.nexto[h * ncpu..(h + 1) * ncpu]
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut leftovers = Vec::new();
        for r in 0..self.ranks {
            let h = r as usize;
            let unexpected: Vec<QueueEntry> = self.uq[h]
                .iter()
                .map(|u| QueueEntry {
                    src: u.src,
                    tag: u.tag,
                    op: u.send_op,
                })
                .collect();
            let posted: Vec<QueueEntry> = self.rq[h]
                .iter()
                .flat_map(|run| {
                    (0..run.count).map(move |i| QueueEntry {
                        src: run.src,
                        tag: run.tag,
                        op: run.first.wrapping_add(run.stride.wrapping_mul(i)),
                    })
                })
                .collect();
            let never_ran = self.prog.num_ops(r) as u64 - self.enqueued[h] as u64;
            let mut never_ran_ops = Vec::new();
            if never_ran > 0 {
                match &self.counters {
                    Counters::Dense { base, left, .. } => {
                        let b = base[h] as usize;
                        let n = self.prog.num_ops(r) as usize;
                        never_ran_ops.extend(
                            (0..n)
                                .filter(|&i| left[b + i] != 0)
                                .map(|i| i as u32)
                                .take(1000),
                        );
                    }
                    Counters::Sparse(map) => {
                        let mut ops: Vec<u32> = map
                            .keys()
                            .filter(|k| (*k >> 32) as u32 == r)
                            .map(|k| *k as u32)
                            .collect();
                        ops.sort_unstable();
                        ops.truncate(1000);
                        never_ran_ops = ops;
                    }
                }
            }
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
            events: self.ts,
            messages: self.messages,
            leftovers,
        }
    }
}
