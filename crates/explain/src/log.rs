//! [`ActivityLog`]: a [`Recorder`] that keeps one [`Activity`] per event of a run, each with
//! the activity that set its start time (its *binding predecessor*), so that the critical
//! path can be read backwards from the finishing time ([`crate::path`]) and the run drawn
//! as a timeline ([`crate::timeline`]).
//!
//! # Binding predecessors
//! The engine reports, with every activity, the clock values it compared (see
//! [`loggops_engine::record`]). The log keeps, for every clock of every rank (CPU, send NIC,
//! receive NIC), which activity's end set its current value (its *writer*: an [`Exit`] of
//! that activity). An activity's start equals one of its candidates, and its binding
//! predecessor is that candidate's writer:
//! * a calc: its CPU clock; a send: its CPU clock or its send-NIC clock (the CPU on a tie);
//! * a posted receive: the CPU clock it was queued at (its writer is remembered when the
//!   receive is freed; a root has none and is posted at time 0);
//! * a message: its arrival (the send's [`Exit::Arrival`]), else the receiver's CPU clock,
//!   else its receive-NIC clock (in that order of preference on ties).
//!
//! In the queued model ([`loggops_engine::Model::Queued`]) an op may also start when the
//! event that freed it happened (remembered when it is freed: the end of that event's
//! activity that is at that time, e.g. a message's [`Exit::Received`] or a send's
//! [`Exit::Start`] for an op it freed on another CPU or a send that waited for program
//! order); a send's message leaves the NIC at [`Activity::nic_start`], the later of the
//! send's start and its NIC clock, whose writer is then [`Activity::nic_pred`]; a message is
//! received at `arrival + o + max(O, G)·(s−1)` (+ a detour), holding nothing
//! ([`Activity::queued`]); a rank's finishing time may be its last receive's completion
//! (a message's reception or a matched post), whose writer the log keeps too.
//!
//! A clock that was never written is 0 and has no writer ([`NONE`]): the path starts there.
//! When two candidates tie, the activity is marked ([`Activity::tie`]): another path of the
//! same length exists, and the derivatives read from the path are one-sided there.
//!
//! # Memory
//! One [`Activity`] (136 bytes) per calc, send and processed message, and per posted
//! receive that matched an already processed message (all posted receives with
//! [`ActivityLog::keep_posts`], which timelines need); plus hash maps of the ops freed and
//! not yet run, and of the messages in flight. [`ActivityLog::estimate_bytes`] bounds it
//! before a run.

use std::collections::HashMap as StdHashMap;
use std::hash::{BuildHasherDefault, Hasher};

use loggops_engine::{
    CalcRecord, MessageRecord, Model, MsgCosts, Op, OpKind, PostRecord, Program, ReceivedRecord,
    Recorder, SendRecord, Time,
};

/// A fast hasher for the log's own integer keys (ranks, ops, clock values; nothing a user
/// chooses to collide): one multiply per word, as rustc's FxHash. SipHash took a third of a
/// recorded run's instructions.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves the low bits (the table's bucket) depending on the key's low
        // bits only; rotating brings the well-mixed high bits down (as rustc-hash 2 does).
        self.0.rotate_left(26)
    }
}

/// A hash map with [`Fx`].
pub(crate) type HashMap<K, V> = StdHashMap<K, V, BuildHasherDefault<Fx>>;

/// No activity (a clock never written, a message not matched yet, ...).
pub const NONE: u32 = u32::MAX;

/// What an activity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Calc,
    Send,
    /// A message processed at its receiver.
    Message,
    /// A receive posted.
    Post,
}

/// Which end of an activity a successor waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    /// The CPU became free (`cpu_end`).
    Cpu,
    /// The NIC became free (`nic_end`: the send NIC of a send, the receive NIC of a message).
    Nic,
    /// The message of a send arrived at its receiver.
    Arrival,
    /// A rendezvous send's clocks were raised to the receiver's event (zero length).
    Raise,
    /// The activity started (zero length): the queued model's freeing of an op on another
    /// CPU or by `irequires`, and the release of a send that waited for program order.
    Start,
    /// Queued model: the message was received (`cpu_end`), completing its receive or its
    /// rendezvous send.
    Received,
}

/// One event of a run. Times are the engine's (ps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Activity {
    pub start: Time,
    /// An op: when it was freed (its last dependency satisfied; 0 for a root). A message:
    /// when it arrived.
    pub ready: Time,
    /// When it left its CPU free (`start` for a posted receive).
    pub cpu_end: Time,
    /// When it left its NIC free (`start` for a calc or a posted receive).
    pub nic_end: Time,
    /// When its NIC interval and its message's flight began: a send's `nic_start` (later
    /// than `start` when the queued model's send waited in its NIC's queue), else `start`.
    pub nic_start: Time,
    /// Drawn costs: a send's `o`, `g`, `G·(s−1)` and latency; a message's receive-side `o`,
    /// `g` and `G·(s−1)`; zero for a calc and a post.
    pub o: Time,
    pub g: Time,
    pub gap: Time,
    pub lat: Time,
    /// OS detour injected into its CPU interval.
    pub detour: Time,
    /// Message size (sends and messages) or calc duration.
    pub size: u64,
    /// `gap − base gap` (network noise of the per-byte term).
    pub gap_noise: i64,
    /// The binding predecessor and which of its ends this activity waited for.
    pub pred: u32,
    /// The binding predecessor of `nic_start` (its NIC's writer when the send waited in the
    /// NIC's queue, else `pred`), and its end.
    pub nic_pred: u32,
    pub rank: u32,
    /// The op (a message: its send op, on rank `peer`).
    pub op: u32,
    /// A send's destination, a message's source, the source of a post's matched message.
    pub peer: u32,
    /// A message: its send's activity. A post: the matched message's activity.
    pub link: u32,
    /// A message: the receive op it completed ([`NONE`] while unexpected or never matched).
    pub matched: u32,
    /// The op whose dependencies decide whether this activity waited for a busy resource
    /// (see [`crate::path`]): the op itself, or for a message the receive it completed when
    /// it was processed ([`NONE`] when it arrived unexpected: a receive matched later was not
    /// waiting for it then).
    pub target: u32,
    /// Index of the noiseless `(L, o, g)` of the message in [`ActivityLog::bases`].
    pub base: u16,
    pub kind: Kind,
    pub pred_exit: Exit,
    pub nic_pred_exit: Exit,
    pub cpu: u8,
    pub nic: u8,
    /// Latencies the message pays (1, or 1 + the rendezvous extra ones).
    pub latencies: u8,
    /// Another candidate tied with the binding one.
    pub tie: bool,
    /// A message of the queued model: received from `start` (its arrival) to `cpu_end`
    /// without holding a CPU or NIC.
    pub queued: bool,
}

impl Activity {
    /// When the given end of the activity was reached.
    pub fn exit_time(&self, exit: Exit) -> Time {
        match exit {
            Exit::Cpu => self.cpu_end,
            Exit::Nic => self.nic_end,
            Exit::Arrival => self.arrival(),
            Exit::Raise | Exit::Start => self.start,
            Exit::Received => self.cpu_end,
        }
    }

    /// When the interval that ends at `exit` began: `nic_start` for the NIC and the message's
    /// flight, else `start`.
    pub fn start_of(&self, exit: Exit) -> Time {
        match exit {
            Exit::Nic | Exit::Arrival => self.nic_start,
            _ => self.start,
        }
    }

    /// The binding predecessor of the interval that ends at `exit`, and its end.
    pub fn pred_of(&self, exit: Exit) -> (u32, Exit) {
        match exit {
            Exit::Nic | Exit::Arrival => (self.nic_pred, self.nic_pred_exit),
            _ => (self.pred, self.pred_exit),
        }
    }

    /// A send's arrival time: `nic_start + o + latencies · latency` (the engine's sum).
    pub fn arrival(&self) -> Time {
        self.nic_start
            .saturating_add(self.o)
            .saturating_add(self.lat.saturating_mul(self.latencies as u64))
    }

    /// The message's identity `(src, send_op)`: a send's own, a message's sender's.
    pub fn message_key(&self) -> Option<(u32, u32)> {
        match self.kind {
            Kind::Send => Some((self.rank, self.op)),
            Kind::Message => Some((self.peer, self.op)),
            _ => None,
        }
    }

    /// The destination of a send or a message.
    pub fn message_dst(&self) -> u32 {
        match self.kind {
            Kind::Send => self.peer,
            _ => self.rank,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    ready: Time,
    /// The CPU clock's writer when a receive was queued.
    writer: (u32, Exit),
    /// The end of the freeing event's activity at `ready` (queued model), `None` when the
    /// current activity has none at that time (then [`ActivityLog::ended_at`] finds one
    /// among the first `upto` activities).
    event: Option<(u32, Exit)>,
    upto: u32,
}

const NO_WRITER: (u32, Exit) = (NONE, Exit::Cpu);

/// Two writers that give a start time in different ways (two clocks never written are the
/// same start of the run).
fn distinct(a: (u32, Exit), b: (u32, Exit)) -> bool {
    a != b && !(a.0 == NONE && b.0 == NONE)
}

/// The ends of an activity a successor may start at, by preference (see
/// [`ActivityLog::exit_at`]).
fn exits(a: &Activity) -> &'static [Exit] {
    match a.kind {
        Kind::Message if a.queued => &[Exit::Received],
        Kind::Post => &[Exit::Cpu],
        _ => &[Exit::Start, Exit::Cpu, Exit::Nic, Exit::Arrival],
    }
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    (a as u64) << 32 | b as u64
}

/// A [`Recorder`] keeping every activity of one run (see the module docs).
#[derive(Debug)]
pub struct ActivityLog {
    pub nodes: Vec<Activity>,
    /// Noiseless `MsgCosts` (`gap_bytes` unused) by [`Activity::base`].
    pub bases: Vec<MsgCosts>,
    base_ids: HashMap<(Time, Time, Time), u16>,
    /// The last base looked up (most messages share their placement's).
    last_base: Option<((Time, Time, Time), u16)>,
    ranks: u32,
    ncpu: usize,
    nnic: usize,
    cpu_w: Vec<(u32, Exit)>,
    snd_w: Vec<(u32, Exit)>,
    rcv_w: Vec<(u32, Exit)>,
    pending: HashMap<u64, Pending>,
    inflight: HashMap<u64, u32>,
    unexpected: HashMap<u64, u32>,
    /// Queued model: per rank, the activity end that completed its latest receive.
    recv_w: Vec<(u32, Exit)>,
    /// Queued model: detours that deferred a message's reception.
    deferred: HashMap<u64, Time>,
    current: u32,
    keep_posts: bool,
    queued: bool,
    /// Ops run (calcs, sends, posted receives) and messages processed.
    pub ops: u64,
    pub messages: u64,
    /// Activities pushed so far (a push counter; in a streaming log, not `nodes.len()`).
    pushes: u64,
    /// Streaming: activities no longer referenced are collected (see [`ActivityLog::streaming`]).
    streaming: Option<Collector>,
}

/// What a streaming log needs to reuse the slots of activities nothing refers to any more.
#[derive(Debug, Default)]
struct Collector {
    /// Slots free for reuse.
    free: Vec<u32>,
    /// The push number of the activity in each slot (the latest end at a time is the one
    /// pushed last); [`FREE`] for a free slot.
    seq: Vec<u64>,
    /// Collect when the slab would grow beyond this many slots.
    next: usize,
    /// The first collection's size, the least `next`.
    first: usize,
    /// The latest event time reported: no query looks at an earlier time again.
    now: Time,
    /// Collections run, and the most slots in use after one.
    pub runs: u64,
    pub peak_live: usize,
    /// A collection's work space, kept between collections (no allocation per collection).
    live: Vec<bool>,
    latest: HashMap<Time, (u64, u32)>,
}

/// The push number of a free slot (pushes are numbered from 1).
const FREE: u64 = 0;

impl ActivityLog {
    /// A log for a run of `prog`.
    pub fn new<P: Program>(prog: &P) -> ActivityLog {
        let ranks = prog.num_ranks();
        let ncpu = prog.num_cpus().max(1) as usize;
        let nnic = prog.num_nics().max(1) as usize;
        let n = ranks as usize;
        ActivityLog {
            nodes: Vec::new(),
            bases: Vec::new(),
            base_ids: HashMap::default(),
            last_base: None,
            ranks,
            ncpu,
            nnic,
            cpu_w: vec![NO_WRITER; n * ncpu],
            snd_w: vec![NO_WRITER; n * nnic],
            rcv_w: vec![NO_WRITER; n * nnic],
            pending: HashMap::default(),
            inflight: HashMap::default(),
            unexpected: HashMap::default(),
            recv_w: vec![NO_WRITER; n],
            deferred: HashMap::default(),
            current: NONE,
            keep_posts: false,
            queued: false,
            ops: 0,
            messages: 0,
            pushes: 0,
            streaming: None,
        }
    }

    /// A *streaming* log: it keeps only the activities something may still refer to (a
    /// clock's writer, an op freed and not yet run, a message in flight or unexpected, an
    /// activity with an end not yet in the past) and reuses the others' slots, so that its
    /// memory follows the ranks and the work in flight, not the length of the run. Its
    /// `nodes` are then slots, not a history: [`crate::critical_path`] and timelines need a
    /// full log; [`crate::Carrier`] reads the attribution from a streaming one.
    pub fn streaming(mut self) -> ActivityLog {
        self.streaming = Some(Collector {
            next: 1024,
            first: 1024,
            ..Collector::default()
        });
        self
    }

    /// A streaming log collects once its slab holds `slots` slots (1024 by default; tests
    /// collect early and often).
    pub fn collect_from(mut self, slots: usize) -> ActivityLog {
        if let Some(c) = &mut self.streaming {
            c.first = slots.max(1);
            c.next = c.first;
        }
        self
    }

    /// Whether this is a streaming log.
    pub fn is_streaming(&self) -> bool {
        self.streaming.is_some()
    }

    /// Activities pushed so far.
    pub fn pushes(&self) -> u64 {
        self.pushes
    }

    /// The slot of the activity pushed last (the current event's, if it pushed one).
    pub fn current(&self) -> u32 {
        self.current
    }

    /// A streaming log's collections and the most slots in use after one.
    pub fn collections(&self) -> (u64, usize) {
        self.streaming
            .as_ref()
            .map_or((0, self.nodes.len()), |c| (c.runs, c.peak_live))
    }

    /// Keep an activity for every posted receive, not only those that matched an already
    /// processed message (timelines show every op).
    pub fn keep_posts(mut self, on: bool) -> ActivityLog {
        self.keep_posts = on;
        self
    }

    /// Record a run of `model`: the queued model needs every posted receive (one may free
    /// an op that starts when it is posted) and the receives' completions.
    pub fn model(mut self, model: Model) -> ActivityLog {
        self.queued = model == Model::Queued;
        self
    }

    /// An upper bound of the bytes a log of a run of `prog` takes: two activities per op
    /// (an op, and a message for a send) plus the bookkeeping of queued ops.
    pub fn estimate_bytes<P: Program>(prog: &P) -> u64 {
        prog.total_ops()
            .saturating_mul(2 * std::mem::size_of::<Activity>() as u64 + 16)
    }

    /// Number of ranks of the run.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// The activity whose end set the finishing time of `rank`, with that end and its time:
    /// the final CPU clock (the largest over its CPUs), or in the queued model the latest
    /// receive completion when that is later; `None` if nothing ran on the rank.
    pub fn final_writer(&self, rank: u32) -> Option<(u32, Exit, Time)> {
        let r = rank as usize;
        let at =
            |(n, e): (u32, Exit)| (n != NONE).then(|| (n, e, self.nodes[n as usize].exit_time(e)));
        let cpu = (0..self.ncpu)
            .filter_map(|c| at(self.cpu_w[r * self.ncpu + c]))
            .max_by_key(|&(n, _, t)| (t, std::cmp::Reverse(n)));
        match (cpu, at(self.recv_w[r])) {
            (Some(c), Some(v)) if v.2 > c.2 => Some(v),
            (None, v) => v,
            (c, _) => c,
        }
    }

    /// The end of activity `n` at time `t`, if it has one there, by preference: a queued
    /// message's reception, a post's (zero-length) CPU end, a start, a CPU end.
    fn exit_at(&self, n: u32, t: Time) -> Option<(u32, Exit)> {
        let a = self.nodes.get(n as usize)?;
        exits(a)
            .iter()
            .find(|&&e| a.exit_time(e) == t)
            .map(|&e| (n, e))
    }

    /// Some activity end at `t` among the first `upto` activities, latest first (the event
    /// that freed an op when the current activity was not it: the queued model's start of a
    /// send that program order would otherwise stall).
    fn ended_at(&self, t: Time, upto: u32) -> (u32, Exit) {
        if t == 0 {
            return NO_WRITER;
        }
        if let Some(c) = &self.streaming {
            // Resolved when the op is freed (`upto` is everything pushed so far, and `t` the
            // current time): the activity pushed last with an end at `t`. A collection keeps,
            // per time `t > 0` not before the current one, the activity pushed last with an
            // end there, and marks the free slots `FREE`.
            return (0..self.nodes.len() as u32)
                .filter(|&n| c.seq[n as usize] != FREE)
                .filter_map(|n| self.exit_at(n, t).map(|e| (c.seq[n as usize], e)))
                .max_by_key(|&(seq, _)| seq)
                .map_or(NO_WRITER, |(_, e)| e);
        }
        (0..upto.min(self.nodes.len() as u32))
            .rev()
            .find_map(|n| self.exit_at(n, t))
            .unwrap_or(NO_WRITER)
    }

    /// The writer of the time an op was freed at (`p.ready`).
    fn event_writer(&self, p: &Pending) -> (u32, Exit) {
        p.event.unwrap_or_else(|| self.ended_at(p.ready, p.upto))
    }

    /// The binding predecessor of an op started at `start`: the CPU clock's writer when the
    /// CPU was free at `start` (`on_cpu`), else the event that freed it when that was at
    /// `start`, else `other` (the send NIC's writer, or the CPU's as a last resort).
    fn op_pred(
        &self,
        p: &Pending,
        start: Time,
        on_cpu: bool,
        cpu: (u32, Exit),
        other: (u32, Exit),
    ) -> (u32, Exit) {
        if on_cpu {
            cpu
        } else if self.queued && p.ready == start {
            self.event_writer(p)
        } else {
            other
        }
    }

    fn base_id(&mut self, b: &MsgCosts) -> u16 {
        let k = (b.latency, b.o, b.g);
        if let Some((last, i)) = self.last_base {
            if last == k {
                return i;
            }
        }
        if let Some(&i) = self.base_ids.get(&k) {
            self.last_base = Some((k, i));
            return i;
        }
        let i = u16::try_from(self.bases.len())
            .expect("more than 65535 distinct noiseless message costs");
        self.bases.push(*b);
        self.base_ids.insert(k, i);
        i
    }

    fn push(&mut self, a: Activity) -> u32 {
        self.pushes += 1;
        if self.streaming.is_some() {
            return self.push_slot(a);
        }
        let i = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&i| i != NONE)
            .expect("more than 4 billion activities in one log");
        self.nodes.push(a);
        self.current = i;
        i
    }

    /// A streaming log's push: into a free slot, after a collection when none is free and
    /// the slab reached its limit.
    fn push_slot(&mut self, a: Activity) -> u32 {
        let c = self.streaming.as_mut().expect("a streaming log");
        if c.free.is_empty() && self.nodes.len() >= c.next {
            self.collect(&[a.pred, a.nic_pred, a.link]);
        }
        let c = self.streaming.as_mut().expect("a streaming log");
        let i = match c.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = a;
                c.seq[i as usize] = self.pushes;
                i
            }
            None => {
                let i = u32::try_from(self.nodes.len())
                    .ok()
                    .filter(|&i| i != NONE)
                    .expect("more than 4 billion live activities in one log");
                self.nodes.push(a);
                c.seq.push(self.pushes);
                i
            }
        };
        self.current = i;
        i
    }

    /// Marks every activity something may still refer to (and `extra`), and frees the other
    /// slots for reuse.
    fn collect(&mut self, extra: &[u32]) {
        let n = self.nodes.len();
        // The work space of the last collection, reused (put back at the end).
        let c = self.streaming.as_mut().expect("a streaming log");
        let (mut live, mut latest) = (std::mem::take(&mut c.live), std::mem::take(&mut c.latest));
        live.clear();
        live.resize(n, false);
        let mut mark = |i: u32| {
            if i != NONE && (i as usize) < n {
                live[i as usize] = true;
            }
        };
        for &i in extra {
            mark(i);
        }
        mark(self.current);
        for w in self
            .cpu_w
            .iter()
            .chain(&self.snd_w)
            .chain(&self.rcv_w)
            .chain(&self.recv_w)
        {
            mark(w.0);
        }
        for p in self.pending.values() {
            mark(p.writer.0);
            if let Some(e) = p.event {
                mark(e.0);
            }
        }
        for &i in self.inflight.values().chain(self.unexpected.values()) {
            mark(i);
        }
        // `ended_at(t)` may still look for an end at a time `t > 0` not before the current
        // one, and finds the activity pushed last with an end there: per such time, that
        // activity is kept (the others can never be found again: later pushes are newer).
        // Keeping every end at or after the current time instead kept, in the queued model,
        // every receive posted at the start of a run (1.07 G on the 16K ring).
        let c = self.streaming.as_mut().expect("a streaming log");
        latest.clear();
        for (i, a) in self.nodes.iter().enumerate() {
            for &e in exits(a) {
                let t = a.exit_time(e);
                if t > 0 && t >= c.now {
                    let s = c.seq[i];
                    let w = latest.entry(t).or_insert((s, i as u32));
                    if s > w.0 {
                        *w = (s, i as u32);
                    }
                }
            }
        }
        for &(_, i) in latest.values() {
            live[i as usize] = true;
        }
        c.free.clear();
        let mut used = 0;
        for i in (0..n).rev() {
            if live[i] {
                used += 1;
            } else {
                // A free slot's stale ends must not be found by `ended_at`, which skips it.
                c.seq[i] = FREE;
                c.free.push(i as u32);
            }
        }
        c.runs += 1;
        c.peak_live = c.peak_live.max(used);
        c.next = (2 * used).max(c.first);
        (c.live, c.latest) = (live, latest);
    }

    fn take_ready(&mut self, rank: u32, op: u32) -> Pending {
        self.pending.remove(&key(rank, op)).unwrap_or(Pending {
            ready: 0,
            writer: NO_WRITER,
            event: Some(NO_WRITER),
            upto: 0,
        })
    }

    /// A receive completed at `end` of `w` on `rank` (the queued model's finishing time).
    fn completed(&mut self, rank: u32, w: (u32, Exit)) {
        let r = rank as usize;
        let t = self.nodes[w.0 as usize].exit_time(w.1);
        let (n, e) = self.recv_w[r];
        if n == NONE || self.nodes[n as usize].exit_time(e) < t {
            self.recv_w[r] = w;
        }
    }

    fn blank(kind: Kind, rank: u32, op: u32, start: Time) -> Activity {
        Activity {
            start,
            ready: 0,
            cpu_end: start,
            nic_end: start,
            nic_start: start,
            o: 0,
            g: 0,
            gap: 0,
            lat: 0,
            detour: 0,
            size: 0,
            gap_noise: 0,
            pred: NONE,
            nic_pred: NONE,
            rank,
            op,
            peer: NONE,
            link: NONE,
            matched: NONE,
            target: op,
            base: 0,
            kind,
            pred_exit: Exit::Cpu,
            nic_pred_exit: Exit::Cpu,
            cpu: 0,
            nic: 0,
            latencies: 1,
            tie: false,
            queued: false,
        }
    }
}

impl Recorder for ActivityLog {
    const ACTIVE: bool = true;

    fn ready(&mut self, rank: u32, op: u32, o: &Op, _at: Time, now: Time) {
        let writer = if o.kind == OpKind::Recv {
            self.cpu_w[rank as usize * self.ncpu + o.cpu as usize]
        } else {
            NO_WRITER
        };
        // Only the queued model starts an op at the time of the event that freed it.
        let mut event = if self.queued {
            self.exit_at(self.current, now)
        } else {
            Some(NO_WRITER)
        };
        let upto = self.nodes.len() as u32;
        if let Some(c) = &mut self.streaming {
            c.now = c.now.max(now);
            if event.is_none() {
                // A streaming log resolves it now, while the activities it may be are kept.
                event = Some(self.ended_at(now, upto));
            }
        }
        self.pending.insert(
            key(rank, op),
            Pending {
                ready: now,
                writer,
                event,
                upto,
            },
        );
    }

    fn calc(&mut self, r: &CalcRecord) {
        self.ops += 1;
        let p = self.take_ready(r.rank, r.op);
        let c = r.rank as usize * self.ncpu + r.cpu as usize;
        let on_cpu = r.cpu_free == r.start;
        debug_assert!(
            on_cpu || (self.queued && p.ready == r.start),
            "a calc starts at its CPU's clock (or when freed, in the queued model)"
        );
        let (pred, pred_exit) = self.op_pred(&p, r.start, on_cpu, self.cpu_w[c], self.cpu_w[c]);
        let a = Activity {
            ready: p.ready,
            cpu_end: r.cpu_end,
            detour: r.detour,
            size: r.duration,
            pred,
            pred_exit,
            cpu: r.cpu,
            ..Self::blank(Kind::Calc, r.rank, r.op, r.start)
        };
        let i = self.push(a);
        self.cpu_w[c] = (i, Exit::Cpu);
    }

    fn send(&mut self, r: &SendRecord) {
        self.ops += 1;
        let p = self.take_ready(r.rank, r.op);
        let c = r.rank as usize * self.ncpu + r.cpu as usize;
        let n = r.rank as usize * self.nnic + r.nic as usize;
        let on_cpu = r.cpu_free == r.start;
        // Under LogGOPSim's rules a send waits for its NIC before it starts; in the queued
        // model only its message does (from `nic_start`).
        let on_nic = r.nic_free == r.start;
        debug_assert!(
            on_cpu || on_nic || (self.queued && p.ready == r.start),
            "a send starts at its CPU's or NIC's clock (or when freed, in the queued model)"
        );
        let other = if on_nic && !self.queued {
            self.snd_w[n]
        } else {
            self.cpu_w[c]
        };
        let (pred, pred_exit) = self.op_pred(&p, r.start, on_cpu, self.cpu_w[c], other);
        let tie = on_cpu && on_nic && distinct(self.cpu_w[c], self.snd_w[n]);
        let (nic_pred, nic_pred_exit) = if r.nic_start > r.start {
            self.snd_w[n]
        } else {
            (pred, pred_exit)
        };
        let base = self.base_id(&r.base);
        let a = Activity {
            ready: p.ready,
            cpu_end: r.cpu_end,
            nic_end: r.nic_end,
            nic_start: r.nic_start,
            o: r.drawn.o,
            g: r.drawn.g,
            gap: r.drawn.gap_bytes,
            lat: r.drawn.latency,
            detour: r.detour,
            size: r.size,
            gap_noise: r.drawn.gap_bytes as i64 - r.base.gap_bytes as i64,
            pred,
            pred_exit,
            nic_pred,
            nic_pred_exit,
            peer: r.dst,
            base,
            cpu: r.cpu,
            nic: r.nic,
            latencies: r.latencies,
            tie,
            ..Self::blank(Kind::Send, r.rank, r.op, r.start)
        };
        debug_assert_eq!(a.arrival(), r.arrival);
        let i = self.push(a);
        self.cpu_w[c] = (i, Exit::Cpu);
        self.snd_w[n] = (i, Exit::Nic);
        self.inflight.insert(key(r.rank, r.op), i);
    }

    fn message(&mut self, r: &MessageRecord) {
        self.messages += 1;
        let send = self
            .inflight
            .remove(&key(r.src, r.send_op))
            .expect("a processed message was sent");
        let arrival = self.nodes[send as usize].arrival();
        let c = r.dst as usize * self.ncpu + r.cpu as usize;
        let n = r.dst as usize * self.nnic + r.nic as usize;
        let cands = [
            (arrival, (send, Exit::Arrival)),
            (r.cpu_free, self.cpu_w[c]),
            (r.nic_free, self.rcv_w[n]),
        ];
        let binding = cands.iter().find(|(t, _)| *t == r.start);
        debug_assert!(binding.is_some(), "a message starts at arrival or a clock");
        let (pred, pred_exit) = binding.map_or(cands[0].1, |b| b.1);
        let tied = cands.iter().filter(|(t, _)| *t == r.start);
        let tie = tied.clone().any(|&(_, w)| distinct(w, (pred, pred_exit)));
        let base = self.base_id(&r.base);
        let a = Activity {
            ready: arrival,
            cpu_end: r.cpu_end,
            nic_end: r.nic_end,
            o: r.drawn.o,
            g: r.drawn.g,
            gap: r.drawn.gap_bytes,
            detour: r.detour,
            size: r.size,
            gap_noise: r.drawn.gap_bytes as i64 - r.base.gap_bytes as i64,
            pred,
            pred_exit,
            nic_pred: pred,
            nic_pred_exit: pred_exit,
            peer: r.src,
            link: send,
            matched: r.matched.unwrap_or(NONE),
            target: r.matched.unwrap_or(NONE),
            base,
            cpu: r.cpu,
            nic: r.nic,
            tie,
            ..Self::blank(Kind::Message, r.dst, r.send_op, r.start)
        };
        let i = self.push(a);
        self.cpu_w[c] = (i, Exit::Cpu);
        self.rcv_w[n] = (i, Exit::Nic);
        if r.matched.is_none() {
            self.unexpected.insert(key(r.src, r.send_op), i);
        }
    }

    fn post(&mut self, r: &PostRecord) {
        self.ops += 1;
        let p = self.take_ready(r.rank, r.op);
        let msg = r
            .matched
            .map(|(s, o)| self.unexpected.remove(&key(s, o)).unwrap_or(NONE));
        if let Some(m) = msg.filter(|&m| m != NONE) {
            self.nodes[m as usize].matched = r.op;
        }
        if msg.is_none() && !self.keep_posts && !self.queued {
            self.current = NONE;
            return;
        }
        // Posted at the CPU clock it was queued at, or (queued model) when it was freed.
        let on_cpu = p.writer.0 == NONE && r.start == 0
            || p.writer.0 != NONE
                && self.nodes[p.writer.0 as usize].exit_time(p.writer.1) == r.start;
        let (pred, pred_exit) = self.op_pred(&p, r.start, on_cpu, p.writer, p.writer);
        let a = Activity {
            ready: p.ready,
            pred,
            pred_exit,
            nic_pred: pred,
            nic_pred_exit: pred_exit,
            peer: r.matched.map_or(NONE, |m| m.0),
            link: msg.unwrap_or(NONE),
            ..Self::blank(Kind::Post, r.rank, r.op, r.start)
        };
        let i = self.push(a);
        if self.queued && msg.is_some() {
            self.completed(r.rank, (i, Exit::Cpu));
        }
    }

    fn received(&mut self, r: &ReceivedRecord) {
        self.messages += 1;
        let k = key(r.src, r.send_op);
        let send = self
            .inflight
            .remove(&k)
            .expect("a received message was sent");
        let arrival = self.nodes[send as usize].arrival();
        let detour = self.deferred.remove(&k).unwrap_or(0);
        let base = self.base_id(&r.base);
        let a = Activity {
            ready: arrival,
            cpu_end: r.time,
            o: r.drawn.o,
            gap: r.drawn.gap_bytes,
            detour,
            size: r.size,
            gap_noise: r.drawn.gap_bytes as i64 - r.base.gap_bytes as i64,
            pred: send,
            pred_exit: Exit::Arrival,
            nic_pred: send,
            nic_pred_exit: Exit::Arrival,
            peer: r.src,
            link: send,
            matched: r.matched.unwrap_or(NONE),
            target: r.matched.unwrap_or(NONE),
            base,
            queued: true,
            ..Self::blank(Kind::Message, r.dst, r.send_op, arrival)
        };
        debug_assert_eq!(
            r.time,
            arrival + r.drawn.o + r.overhead_bytes.max(r.drawn.gap_bytes) + detour,
            "a message is received o + max(O, G)·(s−1) (+ a detour) after it arrives"
        );
        let i = self.push(a);
        if r.matched.is_some() {
            self.completed(r.dst, (i, Exit::Received));
        } else {
            self.unexpected.insert(k, i);
        }
    }

    fn deferred(&mut self, src: u32, send_op: u32, detour: Time) {
        self.deferred.insert(key(src, send_op), detour);
    }

    fn raise(
        &mut self,
        sender: u32,
        cpu: u8,
        nic: u8,
        t: Time,
        cpu_before: Time,
        nic_before: Time,
    ) {
        let cur = (self.current, Exit::Raise);
        if t > cpu_before {
            self.cpu_w[sender as usize * self.ncpu + cpu as usize] = cur;
        }
        if t > nic_before {
            self.snd_w[sender as usize * self.nnic + nic as usize] = cur;
        }
    }
}
