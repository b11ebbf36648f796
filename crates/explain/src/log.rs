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
//! A clock that was never written is 0 and has no writer ([`NONE`]): the path starts there.
//! When two candidates tie, the activity is marked ([`Activity::tie`]): another path of the
//! same length exists, and the derivatives read from the path are one-sided there.
//!
//! # Memory
//! One [`Activity`] (112 bytes) per calc, send and processed message, and per posted
//! receive that matched an already processed message (all posted receives with
//! [`ActivityLog::keep_posts`], which timelines need); plus hash maps of the ops freed and
//! not yet run, and of the messages in flight. [`ActivityLog::estimate_bytes`] bounds it
//! before a run.

use std::collections::HashMap;

use loggops_engine::{
    CalcRecord, MessageRecord, MsgCosts, Op, OpKind, PostRecord, Program, Recorder, SendRecord,
    Time,
};

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
    pub rank: u32,
    /// The op (a message: its send op, on rank `peer`).
    pub op: u32,
    /// A send's destination, a message's source, the source of a post's matched message.
    pub peer: u32,
    /// A message: its send's activity. A post: the matched message's activity.
    pub link: u32,
    /// A message: the receive op it completed ([`NONE`] while unexpected or never matched).
    pub matched: u32,
    /// Index of the noiseless `(L, o, g)` of the message in [`ActivityLog::bases`].
    pub base: u16,
    pub kind: Kind,
    pub pred_exit: Exit,
    pub cpu: u8,
    pub nic: u8,
    /// Latencies the message pays (1, or 1 + the rendezvous extra ones).
    pub latencies: u8,
    /// Another candidate tied with the binding one.
    pub tie: bool,
}

impl Activity {
    /// When the given end of the activity was reached.
    pub fn exit_time(&self, exit: Exit) -> Time {
        match exit {
            Exit::Cpu => self.cpu_end,
            Exit::Nic => self.nic_end,
            Exit::Arrival => self.arrival(),
            Exit::Raise => self.start,
        }
    }

    /// A send's arrival time: `start + o + latencies · latency` (the engine's sum).
    pub fn arrival(&self) -> Time {
        self.start
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
}

const NO_WRITER: (u32, Exit) = (NONE, Exit::Cpu);

/// Two writers that give a start time in different ways (two clocks never written are the
/// same start of the run).
fn distinct(a: (u32, Exit), b: (u32, Exit)) -> bool {
    a != b && !(a.0 == NONE && b.0 == NONE)
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
    ranks: u32,
    ncpu: usize,
    nnic: usize,
    cpu_w: Vec<(u32, Exit)>,
    snd_w: Vec<(u32, Exit)>,
    rcv_w: Vec<(u32, Exit)>,
    pending: HashMap<u64, Pending>,
    inflight: HashMap<u64, u32>,
    unexpected: HashMap<u64, u32>,
    current: u32,
    keep_posts: bool,
    /// Ops run (calcs, sends, posted receives) and messages processed.
    pub ops: u64,
    pub messages: u64,
}

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
            base_ids: HashMap::new(),
            ranks,
            ncpu,
            nnic,
            cpu_w: vec![NO_WRITER; n * ncpu],
            snd_w: vec![NO_WRITER; n * nnic],
            rcv_w: vec![NO_WRITER; n * nnic],
            pending: HashMap::new(),
            inflight: HashMap::new(),
            unexpected: HashMap::new(),
            current: NONE,
            keep_posts: false,
            ops: 0,
            messages: 0,
        }
    }

    /// Keep an activity for every posted receive, not only those that matched an already
    /// processed message (timelines show every op).
    pub fn keep_posts(mut self, on: bool) -> ActivityLog {
        self.keep_posts = on;
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

    /// The activity whose end set the final CPU clock of `rank` (the largest over its CPUs),
    /// with that end and its time; `None` if the rank's CPUs never ran anything.
    pub fn final_writer(&self, rank: u32) -> Option<(u32, Exit, Time)> {
        let r = rank as usize;
        (0..self.ncpu)
            .filter_map(|c| {
                let (n, e) = self.cpu_w[r * self.ncpu + c];
                (n != NONE).then(|| (n, e, self.nodes[n as usize].exit_time(e)))
            })
            .max_by_key(|&(n, _, t)| (t, std::cmp::Reverse(n)))
    }

    fn base_id(&mut self, b: &MsgCosts) -> u16 {
        let k = (b.latency, b.o, b.g);
        if let Some(&i) = self.base_ids.get(&k) {
            return i;
        }
        let i = u16::try_from(self.bases.len())
            .expect("more than 65535 distinct noiseless message costs");
        self.bases.push(*b);
        self.base_ids.insert(k, i);
        i
    }

    fn push(&mut self, a: Activity) -> u32 {
        let i = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&i| i != NONE)
            .expect("more than 4 billion activities in one log");
        self.nodes.push(a);
        self.current = i;
        i
    }

    fn take_ready(&mut self, rank: u32, op: u32) -> Pending {
        self.pending.remove(&key(rank, op)).unwrap_or(Pending {
            ready: 0,
            writer: NO_WRITER,
        })
    }

    fn blank(kind: Kind, rank: u32, op: u32, start: Time) -> Activity {
        Activity {
            start,
            ready: 0,
            cpu_end: start,
            nic_end: start,
            o: 0,
            g: 0,
            gap: 0,
            lat: 0,
            detour: 0,
            size: 0,
            gap_noise: 0,
            pred: NONE,
            rank,
            op,
            peer: NONE,
            link: NONE,
            matched: NONE,
            base: 0,
            kind,
            pred_exit: Exit::Cpu,
            cpu: 0,
            nic: 0,
            latencies: 1,
            tie: false,
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
        self.pending
            .insert(key(rank, op), Pending { ready: now, writer });
    }

    fn calc(&mut self, r: &CalcRecord) {
        self.ops += 1;
        let p = self.take_ready(r.rank, r.op);
        let c = r.rank as usize * self.ncpu + r.cpu as usize;
        debug_assert_eq!(r.cpu_free, r.start, "a calc starts at its CPU's clock");
        let (pred, pred_exit) = self.cpu_w[c];
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
        let on_nic = r.nic_free == r.start;
        debug_assert!(
            on_cpu || on_nic,
            "a send starts at its CPU's or NIC's clock"
        );
        let (pred, pred_exit) = if on_cpu || !on_nic {
            self.cpu_w[c]
        } else {
            self.snd_w[n]
        };
        let tie = on_cpu && on_nic && distinct(self.cpu_w[c], self.snd_w[n]);
        let base = self.base_id(&r.base);
        let a = Activity {
            ready: p.ready,
            cpu_end: r.cpu_end,
            nic_end: r.nic_end,
            o: r.drawn.o,
            g: r.drawn.g,
            gap: r.drawn.gap_bytes,
            lat: r.drawn.latency,
            detour: r.detour,
            size: r.size,
            gap_noise: r.drawn.gap_bytes as i64 - r.base.gap_bytes as i64,
            pred,
            pred_exit,
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
            peer: r.src,
            link: send,
            matched: r.matched.unwrap_or(NONE),
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
        if msg.is_none() && !self.keep_posts {
            self.current = NONE;
            return;
        }
        let a = Activity {
            ready: p.ready,
            pred: p.writer.0,
            pred_exit: p.writer.1,
            peer: r.matched.map_or(NONE, |m| m.0),
            link: msg.unwrap_or(NONE),
            ..Self::blank(Kind::Post, r.rank, r.op, r.start)
        };
        self.push(a);
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
