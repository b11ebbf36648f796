//! The batched engine: many repetitions of a run whose order is fixed, walked once.
//!
//! Repetitions of a noisy run differ only in their draws. Under the queued model
//! ([`Model::Queued`]) with asynchronous progress, when the order of sends, the matching of
//! messages and the order of ops on a CPU do not depend on timing, every time of a run is a
//! maximum over its predecessors plus costs. [`simulate_lanes`] then runs one *lane* per
//! repetition through one walk of the program: the schedule is read, dependencies are
//! released and messages are matched once, in the order of the first lane's times, while each
//! lane keeps its own clocks and draws its own costs from its own [`Noise`].
//!
//! Whether the global engine would have taken the same decisions for a lane is checked as the
//! walk goes, lane by lane (the *guards*): the order in which a CPU runs its ops, what its
//! clock was when a receive was posted, the order in which a receiver posts and is sent
//! messages of each peer, which event completes a receive. A lane in which any of them may
//! differ, or in which two events tie where the global engine would have broken the tie by
//! its insertion order, is given up (`None`) and must be run alone; the lanes answered are
//! the global engine's answers to the picosecond (`tests.rs` compares them on random
//! programs). Runs outside the engine's reach are refused before they start
//! ([`batch_refusal`]) or when the walk meets what it cannot follow (a wildcard receive, a
//! stall, a schedule that does not complete).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::matching::{Lists, NIL};
use crate::noise::{Noise, NEVER_COMMUNICATED};
use crate::params::{Params, Time};
use crate::program::{DepKind, OpKind, Program, ANY};
use crate::sim::{Config, Model, MpiProgress, Order, Outcome, Progress};

#[cfg(test)]
mod tests;

/// The creator of what the initial roots free (nothing ran before them).
const INIT: u64 = 0;
/// No CPU op yet, no pending post.
const NONE: u64 = u64::MAX - 1;
/// Two events of different identity at the same time: the global engine orders them by
/// insertion, which the walk does not follow.
const AMBIG: u64 = u64::MAX;
/// A time the walk cannot know for a lane (used only where a guard then gives the lane up).
const UNKNOWN: Time = Time::MAX;
/// Lanes walked at once at most.
pub const MAX_LANES: usize = 64;

/// Why a run cannot be batched, or why a batched walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaneError {
    /// The batched engine does not take this run (the reason, for the user).
    Refused(&'static str),
    /// The caller's progress hook asked to stop.
    Stopped,
}

/// Why the batched engine does not take a run with these settings, before it starts; `None`
/// when it may (the walk may still refuse it, see [`simulate_lanes`]).
pub fn batch_refusal<P: Program>(prog: &P, cfg: &Config) -> Option<&'static str> {
    if cfg.model != Model::Queued {
        return Some("it follows the queued model only (LogGOPSim's model orders sends by timing)");
    }
    if cfg.compat {
        return Some("LogGOPSim's compatibility mode is simulated one repetition at a time");
    }
    if cfg.order != Order::Stable {
        return Some("the libstdc++ order of freed ops is simulated one repetition at a time");
    }
    if cfg.mpi_progress == MpiProgress::Polled && prog.any_send_above(cfg.params.s) {
        return Some("polled MPI progress with rendezvous messages makes transfers wait for calcs");
    }
    if prog.num_cpus() > 1 || prog.num_nics() > 1 {
        return Some("the schedule uses several CPUs or NICs per rank");
    }
    if prog.has_start_dependents() {
        return Some("the schedule has irequires dependencies");
    }
    None
}

/// One slot of per-lane values in a [`Slots`] arena: a time and a creator per lane, and a
/// second time per lane.
struct Slots {
    l: usize,
    t: Vec<Time>,
    c: Vec<u64>,
    free: Vec<u32>,
}

impl Slots {
    fn new(l: usize) -> Slots {
        // Slot 0: the initial roots (time 0, created by INIT).
        Slots {
            l,
            t: vec![0; 2 * l],
            c: vec![INIT; l],
            free: Vec::new(),
        }
    }
    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        let i = self.c.len() / self.l;
        self.t.resize(self.t.len() + 2 * self.l, 0);
        self.c.resize(self.c.len() + self.l, INIT);
        i as u32
    }
    fn release(&mut self, i: u32) {
        if i != 0 {
            self.free.push(i);
        }
    }
    #[inline]
    fn a(&self, i: u32, k: usize) -> Time {
        self.t[i as usize * 2 * self.l + k]
    }
    #[inline]
    fn b(&self, i: u32, k: usize) -> Time {
        self.t[i as usize * 2 * self.l + self.l + k]
    }
    #[inline]
    fn c(&self, i: u32, k: usize) -> u64 {
        self.c[i as usize * self.l + k]
    }
    #[inline]
    fn set(&mut self, i: u32, k: usize, a: Time, b: Time, c: u64) {
        let l = self.l;
        self.t[i as usize * 2 * l + k] = a;
        self.t[i as usize * 2 * l + l + k] = b;
        self.c[i as usize * l + k] = c;
    }
}

/// What one lane keeps of a rank: the last two ops its CPU ran (start, end, when each was
/// freed and by which event, and for the last its place in the CPU's order), the NIC's clock,
/// the latest receive completion, the last send's start, and the latest time a post or send
/// was freed with the CPU clock as it was then (later CPU ops must start after it).
#[derive(Clone, Copy, Debug)]
struct LaneRank {
    end: Time,
    s: Time,
    /// The last CPU op's place in the CPU's queue: when it entered it and through which event.
    rq: Time,
    cq: u64,
    /// When the last CPU op was freed, and by which event.
    rf: Time,
    cf: u64,
    prev_end: Time,
    prev_s: Time,
    prev_rf: Time,
    prev_cf: u64,
    nic: Time,
    recv_end: Time,
    send_s: Time,
    pend: Time,
    pend_c: u64,
    /// When the rank last communicated (started a send or completed a receive;
    /// [`NEVER_COMMUNICATED`] before), kept when the noise asks for idle times; the last two
    /// sends' starts, and what the last one took as the rank's last communication.
    active: Time,
    active_ev: u64,
    /// When the event that set `active` was queued.
    active_born: Time,
    sent: Time,
    sent_before: Time,
    used: Time,
}

impl Default for LaneRank {
    fn default() -> Self {
        LaneRank {
            end: 0,
            s: 0,
            rq: 0,
            cq: NONE,
            rf: 0,
            cf: NONE,
            prev_end: 0,
            prev_s: 0,
            prev_rf: 0,
            prev_cf: NONE,
            nic: 0,
            recv_end: 0,
            send_s: 0,
            pend: 0,
            pend_c: NONE,
            active: NEVER_COMMUNICATED,
            active_ev: NONE,
            active_born: 0,
            sent: NEVER_COMMUNICATED,
            sent_before: NEVER_COMMUNICATED,
            used: NEVER_COMMUNICATED,
        }
    }
}

/// What the walk keeps of a rank for all lanes.
#[derive(Clone, Copy, Debug)]
struct Shared {
    last_ev: u64,
    prev_ev: u64,
    /// The event at which the walk queued the last CPU op.
    last_wc: u64,
    cpu_ops: u64,
    last_is_send: bool,
    last_send_ev: u64,
    next_send: u32,
    rq: u32,
    uq: u32,
}

/// A queued op or message: (walk time, insertion, kind, host, op or send op, slot, the event
/// that queued it).
type Item = (Time, u64, u8, u32, u32, u32, u64);

const NOT_YET: u32 = u32::MAX;
const K_OP: u8 = 0;
const K_MSG: u8 = 1;

fn key(a: u32, b: u32) -> u64 {
    (a as u64) << 32 | b as u64
}

struct Walk<'a, P: Program, N: Noise> {
    prog: &'a P,
    p: Params,
    noises: &'a mut [N],
    l: usize,
    dead: Vec<bool>,
    lanes: Vec<LaneRank>,
    shared: Vec<Shared>,
    slots: Slots,
    heap: BinaryHeap<Reverse<Item>>,
    ts: u64,
    ev: u64,
    lists: Lists,
    /// Non-root posted receives: their slot (post times) and the post's event.
    posted: HashMap<u64, (u32, u64)>,
    /// Unexpected messages: their slot (received times) and the message's event.
    unexpected: HashMap<u64, (u32, u64)>,
    /// Sends waiting for a lower-numbered send of their rank.
    parked: HashMap<u64, (u32, u64)>,
    /// Partially satisfied ops: dependencies left and their slot (latest completion so far).
    partial: HashMap<u64, (u32, u32)>,
    /// Per (receiver, sender), whatever the tag (one entry per pair of ranks that talk, not
    /// per message): the last message's received times (`a`) and the last
    /// non-root post's times (`b`), [`UNKNOWN`] before the first.
    classes: HashMap<u64, u32>,
    freed: Vec<(u32, u32, u32)>,
    /// The dependents of the op being released (kept to avoid an allocation per release).
    deps: Vec<(u32, u32)>,
    done_t: Vec<Time>,
    done_c: Vec<u64>,
    /// Per lane, the event that freed the op whose start completes now ([`NONE`] for a
    /// receive's completion): an op it frees that another dependency freed at the same
    /// time before is freed by this event, which that one caused.
    done_from: Vec<u64>,
    /// Per lane, when the event completing a receive was queued.
    done_born: Vec<Time>,
    /// Items taken from the queue, ops run (each once; receive roots included) and messages.
    processed: u64,
    ops_done: u64,
    messages: u64,
    progress: Option<&'static Progress>,
    reported: u64,
    /// The noise asks for senders' idle times ([`Noise::uses_idle`]).
    idle: bool,
}

/// Runs `noises.len()` repetitions of `prog` (one per noise instance, at most [`MAX_LANES`])
/// in one walk. Each answer is the global engine's for that repetition; `None` marks a lane the
/// walk gave up (its order may differ from the walk's), to be run alone with the same noise
/// instance. Refused when [`batch_refusal`] says so, when the walk meets a wildcard receive,
/// when the schedule stalls or does not complete, or when every lane was given up.
pub fn simulate_lanes<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noises: &mut [N],
) -> Result<Vec<Option<Outcome>>, LaneError> {
    let l = noises.len();
    assert!((1..=MAX_LANES).contains(&l), "1..={MAX_LANES} lanes");
    if let Some(why) = batch_refusal(prog, cfg) {
        return Err(LaneError::Refused(why));
    }
    let n = prog.num_ranks() as usize;
    let mut lists = Lists::default();
    lists.reset(n);
    let w = Walk {
        prog,
        p: cfg.params,
        l,
        dead: vec![false; l],
        lanes: vec![LaneRank::default(); n * l],
        shared: vec![
            Shared {
                last_ev: NONE,
                prev_ev: NONE,
                last_wc: NONE,
                cpu_ops: 0,
                last_is_send: false,
                last_send_ev: NONE,
                next_send: NOT_YET,
                rq: NIL,
                uq: NIL,
            };
            n
        ],
        slots: Slots::new(l),
        heap: BinaryHeap::new(),
        ts: 0,
        ev: INIT,
        lists,
        posted: HashMap::new(),
        unexpected: HashMap::new(),
        parked: HashMap::new(),
        partial: HashMap::new(),
        classes: HashMap::new(),
        freed: Vec::new(),
        deps: Vec::new(),
        done_t: vec![0; l],
        done_c: vec![INIT; l],
        done_from: vec![NONE; l],
        done_born: vec![0; l],
        processed: 0,
        ops_done: 0,
        messages: 0,
        progress: cfg.progress,
        reported: 0,
        idle: N::ACTIVE && noises[0].uses_idle(),
        noises,
    };
    w.run()
}

impl<P: Program, N: Noise> Walk<'_, P, N> {
    #[inline]
    fn lr(&mut self, h: u32, k: usize) -> &mut LaneRank {
        &mut self.lanes[h as usize * self.l + k]
    }

    /// `a + b`, giving lane `k` up on overflow (its own run reports the error).
    #[inline]
    fn add(&mut self, a: Time, b: Time, k: usize) -> Time {
        match a.checked_add(b) {
            Some(v) => v,
            None => {
                self.dead[k] = true;
                Time::MAX
            }
        }
    }

    fn run(mut self) -> Result<Vec<Option<Outcome>>, LaneError> {
        self.roots()?;
        while let Some(Reverse((t, ts, kind, host, item, slot, wc))) = self.heap.pop() {
            self.processed += 1;
            if self.processed & (Progress::EVERY - 1) == 0 {
                self.report()?;
            }
            if kind == K_MSG {
                self.message(host, item, slot);
            } else {
                self.op(t, ts, host, item, slot, wc)?;
            }
            if self.dead.iter().all(|&d| d) {
                // Each runs alone.
                return Ok(vec![None; self.l]);
            }
        }
        self.finish()
    }

    fn report(&mut self) -> Result<(), LaneError> {
        if let Some(p) = self.progress {
            let live = self.dead.iter().filter(|&&d| !d).count() as u64;
            let ops = self.ops_done;
            p.add_ops(ops.saturating_sub(self.reported) * live);
            self.reported = ops;
            if p.stop_requested() {
                return Err(LaneError::Stopped);
            }
        }
        Ok(())
    }

    /// Every rank's roots at time 0, in LogGOPSim's type order: receives are posted at once,
    /// sends and calcs queued.
    fn roots(&mut self) -> Result<(), LaneError> {
        for h in 0..self.prog.num_ranks() {
            let n = self.prog.num_roots(h);
            let mut ids: Vec<u32> = (0..n).map(|k| self.prog.root(h, k)).collect();
            let prog = self.prog;
            ids.sort_by_key(|&id| prog.op(h, id).kind);
            for id in ids {
                let op = self.prog.op(h, id);
                if op.kind == OpKind::Recv {
                    if op.peer == ANY || op.tag == ANY {
                        return Err(LaneError::Refused("the schedule has wildcard receives"));
                    }
                    self.ops_done += 1;
                    let s = &mut self.shared[h as usize];
                    self.lists
                        .posted(&mut s.rq, h as usize)
                        .post(op.peer, op.tag, id);
                } else {
                    self.ts += 1;
                    self.heap.push(Reverse((0, self.ts, K_OP, h, id, 0, INIT)));
                }
            }
        }
        Ok(())
    }

    /// The CPU clock of rank `h` in lane `k` when an op was freed at `r` by event `c`: the end
    /// of the last CPU op that had started by then. `None` when the two ops the walk keeps do
    /// not tell (or a tie makes it depend on insertion order).
    fn clock_at(&self, h: u32, k: usize, r: Time, c: u64) -> Option<Time> {
        let s = &self.shared[h as usize];
        let x = &self.lanes[h as usize * self.l + k];
        let cands = [
            (s.last_ev, x.s, x.end, x.rf, x.cf),
            (s.prev_ev, x.prev_s, x.prev_end, x.prev_rf, x.prev_cf),
        ];
        for (i, &(ev, start, end, rf, cf)) in cands.iter().enumerate() {
            if i as u64 >= s.cpu_ops {
                return Some(0);
            }
            if ev == c || start < r {
                return Some(end);
            }
            if start == r && !(rf == r && cf == c && c != AMBIG) {
                return None;
            }
        }
        if s.cpu_ops <= 2 {
            Some(0)
        } else {
            None
        }
    }

    /// Queues the ops freed by the event just processed, host by host, each host's by type.
    fn flush(&mut self) {
        if self.freed.is_empty() {
            return;
        }
        let mut freed = std::mem::take(&mut self.freed);
        let prog = self.prog;
        freed.sort_by_key(|&(h, d, _)| (h, prog.op(h, d).kind));
        for &(h, d, slot) in &freed {
            let op = prog.op(h, d);
            let mut key_time = self.slots.a(slot, 0);
            if op.kind != OpKind::Calc {
                for k in 0..self.l {
                    let (r, c) = (self.slots.a(slot, k), self.slots.c(slot, k));
                    let p = match self.clock_at(h, k, r, c) {
                        Some(o) => o.max(r),
                        None => {
                            if op.kind == OpKind::Recv {
                                self.dead[k] = true;
                            }
                            UNKNOWN
                        }
                    };
                    self.slots.set(slot, k, r, p, c);
                    let x = self.lr(h, k);
                    if x.pend_c == NONE || r > x.pend {
                        x.pend = r;
                        x.pend_c = c;
                    } else if r == x.pend && c != x.pend_c {
                        x.pend_c = AMBIG;
                    }
                }
                if op.kind == OpKind::Recv {
                    let p0 = self.slots.b(slot, 0);
                    key_time = if p0 == UNKNOWN { key_time } else { p0 };
                }
            }
            self.ts += 1;
            self.heap
                .push(Reverse((key_time, self.ts, K_OP, h, d, slot, self.ev)));
        }
        freed.clear();
        self.freed = freed;
    }

    /// Op `op` of `host` reached completion at `done_t` through the events `done_c` (per lane):
    /// its dependents whose last dependency this was are freed.
    fn release(&mut self, host: u32, op: u32) {
        let mut deps = std::mem::take(&mut self.deps);
        deps.clear();
        self.prog
            .for_each_dependent_counted(host, op, DepKind::Done, |d, n| deps.push((d, n)));
        for &(d, n) in &deps {
            if n <= 1 {
                let slot = self.slots.alloc();
                for k in 0..self.l {
                    self.slots.set(slot, k, self.done_t[k], 0, self.done_c[k]);
                }
                self.freed.push((host, d, slot));
                continue;
            }
            let kk = key(host, d);
            match self.partial.get_mut(&kk) {
                None => {
                    let slot = self.slots.alloc();
                    for k in 0..self.l {
                        self.slots.set(slot, k, self.done_t[k], 0, self.done_c[k]);
                    }
                    self.partial.insert(kk, (n - 1, slot));
                }
                Some(e) => {
                    let slot = e.1;
                    for k in 0..self.l {
                        let (r, c) = (self.slots.a(slot, k), self.slots.c(slot, k));
                        let (t, tc) = (self.done_t[k], self.done_c[k]);
                        if t > r {
                            self.slots.set(slot, k, t, 0, tc);
                        } else if t == r && tc != c {
                            let caused = c != AMBIG && self.done_from[k] == c;
                            self.slots
                                .set(slot, k, r, 0, if caused { tc } else { AMBIG });
                        }
                    }
                    e.0 -= 1;
                    if e.0 == 0 {
                        self.partial.remove(&kk);
                        self.freed.push((host, d, slot));
                    }
                }
            }
        }
        self.deps = deps;
    }

    /// Checks that lane `k` of rank `h` runs a CPU op entering the CPU's queue at `(rq, cq)`
    /// and freed at `(rf, cf)`, starting at `s`, after the CPU's last op and after the posts
    /// that did not see it; gives the lane up otherwise.
    #[allow(clippy::too_many_arguments)]
    fn cpu_guard(
        &mut self,
        h: u32,
        k: usize,
        is_send: bool,
        wc: u64,
        q: (Time, u64),
        f: (Time, u64),
        s: Time,
    ) {
        let sh = self.shared[h as usize];
        let x = self.lanes[h as usize * self.l + k];
        let mut ok = true;
        if sh.cpu_ops > 0 && !(sh.last_is_send && is_send) {
            ok = if x.rq == UNKNOWN || q.0 == UNKNOWN {
                false
            } else if x.rq < q.0 {
                true
            } else if x.rq == q.0 {
                // Entered the queue at the same time: the initial roots before everything
                // else, an op before the ops its own event freed, else in the order one
                // event freed them, when the walk queued both at that event too.
                (x.cq == INIT && q.1 != INIT)
                    || q.1 == sh.last_ev
                    || (x.cq == q.1 && q.1 != AMBIG && sh.last_wc == q.1 && wc == q.1)
            } else {
                false
            };
        }
        if x.pend_c != NONE && ok {
            ok = s > x.pend || (s == x.pend && f.0 == s && f.1 == x.pend_c && f.1 != AMBIG);
        }
        if !ok {
            self.dead[k] = true;
        }
    }

    /// Records a CPU op of rank `h` in lane `k` that ran `[s, end)`.
    #[allow(clippy::too_many_arguments)]
    fn ran(&mut self, h: u32, k: usize, s: Time, end: Time, q: (Time, u64), f: (Time, u64)) {
        let x = self.lr(h, k);
        x.prev_s = x.s;
        x.prev_end = x.end;
        x.prev_rf = x.rf;
        x.prev_cf = x.cf;
        x.s = s;
        x.end = end;
        x.rq = q.0;
        x.cq = q.1;
        x.rf = f.0;
        x.cf = f.1;
    }

    fn cpu_ran(&mut self, h: u32, ev: u64, wc: u64, is_send: bool) {
        let s = &mut self.shared[h as usize];
        s.last_wc = wc;
        s.prev_ev = s.last_ev;
        s.last_ev = ev;
        s.cpu_ops += 1;
        s.last_is_send = is_send;
    }

    fn op(
        &mut self,
        t: Time,
        ts: u64,
        h: u32,
        id: u32,
        slot: u32,
        wc: u64,
    ) -> Result<(), LaneError> {
        let op = self.prog.op(h, id);
        if op.peer >= self.prog.num_ranks() && op.kind != OpKind::Calc && op.peer != ANY {
            return Err(LaneError::Refused(
                "the schedule names a rank that does not exist",
            ));
        }
        match op.kind {
            OpKind::Calc => {
                if self.wait_for_cpu(t, ts, h, id, slot, wc) {
                    return Ok(());
                }
                self.ops_done += 1;
                self.ev += 1;
                let ev = self.ev;
                for k in 0..self.l {
                    let (r, c) = (self.slots.a(slot, k), self.slots.c(slot, k));
                    let s = r.max(self.lanes[h as usize * self.l + k].end);
                    self.cpu_guard(h, k, false, wc, (r, c), (r, c), s);
                    let e = self.add(s, op.size, k);
                    let d = if N::ACTIVE {
                        self.noises[k].os_detour(h, s, e)
                    } else {
                        0
                    };
                    let v = self.add(e, d, k);
                    self.ran(h, k, s, v, (r, c), (r, c));
                    self.done_t[k] = s;
                    self.done_c[k] = ev;
                    self.done_from[k] = c;
                }
                self.cpu_ran(h, ev, wc, false);
                self.slots.release(slot);
                self.release(h, id);
                self.flush();
            }
            OpKind::Send => self.send(t, ts, h, id, slot, wc),
            OpKind::Recv => self.recv(h, id, slot)?,
        }
        Ok(())
    }

    /// Whether a calc or send popped at `t` waits for its CPU in the walk's lane (lane 0), as
    /// the global engine's op would: it is then queued again when the CPU is free, keeping its
    /// place (`ts`), so that the walk runs each CPU's ops in lane 0's order.
    #[allow(clippy::too_many_arguments)]
    fn wait_for_cpu(&mut self, t: Time, ts: u64, h: u32, id: u32, slot: u32, wc: u64) -> bool {
        let free = self.lanes[h as usize * self.l].end;
        if self.shared[h as usize].cpu_ops == 0 || free <= t {
            return false;
        }
        self.heap.push(Reverse((free, ts, K_OP, h, id, slot, wc)));
        true
    }

    fn send_from(&self, host: u32, from: u32) -> u32 {
        let n = self.prog.num_ops(host);
        (from..n)
            .find(|&i| self.prog.op(host, i).kind == OpKind::Send)
            .unwrap_or(NOT_YET - 1)
    }

    fn send(&mut self, t: Time, ts: u64, h: u32, id: u32, slot: u32, wc: u64) {
        let hu = h as usize;
        if self.shared[hu].next_send == NOT_YET {
            self.shared[hu].next_send = self.send_from(h, 0);
        }
        if id > self.shared[hu].next_send {
            self.parked.insert(key(h, id), (slot, wc));
            return;
        }
        if self.wait_for_cpu(t, ts, h, id, slot, wc) {
            return;
        }
        let op = self.prog.op(h, id);
        self.ops_done += 1;
        self.ev += 1;
        let ev = self.ev;
        let prev_send = self.shared[hu].last_send_ev;
        let msg = self.slots.alloc();
        let p = self.p;
        let rndv = op.size > p.s;
        for k in 0..self.l {
            let (r, pt, c) = (
                self.slots.a(slot, k),
                self.slots.b(slot, k),
                self.slots.c(slot, k),
            );
            let x = self.lanes[hu * self.l + k];
            // Its place in the CPU's queue: where it was freed, or, when it waited for the
            // previous send, that send's start.
            let q = if prev_send == NONE {
                (r, c)
            } else if pt == UNKNOWN || x.send_s == pt {
                (UNKNOWN, AMBIG)
            } else if x.send_s > pt {
                (x.send_s, prev_send)
            } else {
                (r, c)
            };
            let s = r.max(x.end);
            self.cpu_guard(h, k, true, wc, q, (r, c), s);
            let idle = if self.idle {
                let xm = &mut self.lanes[hu * self.l + k];
                // A receive the walk completed before this send but that completes after it
                // in this lane (or at its start, through an event queued after the send's):
                // its idle time is not the walk's.
                let never = NEVER_COMMUNICATED;
                let after = xm.active == s
                    && xm.active_ev != c
                    && (q.0 == UNKNOWN || xm.active_born >= q.0);
                if xm.active != never && (xm.active > s || after) {
                    self.dead[k] = true;
                }
                let idle = if xm.active == NEVER_COMMUNICATED {
                    s
                } else {
                    s.saturating_sub(xm.active)
                };
                xm.used = xm.active;
                xm.active = s;
                xm.active_ev = ev;
                xm.sent_before = xm.sent;
                xm.sent = s;
                idle
            } else {
                NEVER_COMMUNICATED
            };
            // The receiver's overhead, drawn once (its gap is the sender's).
            let (lat, o, g, gap, o_r) = if N::ACTIVE {
                let cs = self.noises[k].send_costs_idle(&p, h, op.peer, id, op.size, idle);
                let gap = cs.gap_bytes;
                let rc = self.noises[k].recv_costs_known_gap(&p, h, op.peer, id, op.size, gap);
                (cs.latency, cs.o, cs.g, gap, rc.o)
            } else {
                let gap = self.per_byte(p.big_g, op.size, k);
                (p.l, p.o, p.g, gap, p.o)
            };
            let t_o = self.add(s, o, k);
            let detour = if N::ACTIVE {
                self.noises[k].os_detour(h, s, t_o)
            } else {
                0
            };
            let ob = self.per_byte(p.big_o, op.size, k);
            let v = self.add(t_o, ob, k);
            let cpu_end = self.add(v, detour, k);
            let nic_start = s.max(x.nic);
            let v = self.add(nic_start, g, k);
            let nic_end = self.add(v, gap, k);
            let mut arrival = self.add(nic_start, o, k);
            arrival = self.add(arrival, lat, k);
            if rndv {
                for _ in 0..p.rndv_extra_latencies {
                    arrival = self.add(arrival, lat, k);
                }
            }
            let received = self.add(arrival, o_r, k);
            let mut received = self.add(received, ob.max(gap), k);
            if N::ACTIVE {
                // An OS detour in progress at its arrival defers it once.
                let arr = received.saturating_sub(o_r).saturating_sub(ob.max(gap));
                let t2 = self.add(arr, o_r, k);
                let d = self.noises[k].os_detour(op.peer, arr, t2);
                if d > 0 {
                    received = self.add(received, d, k);
                }
            }
            self.ran(h, k, s, cpu_end, q, (r, c));
            let xm = self.lr(h, k);
            xm.nic = nic_end;
            xm.send_s = s;
            self.slots.set(msg, k, received, s, ev);
            self.done_t[k] = s;
            self.done_c[k] = ev;
            self.done_from[k] = c;
        }
        self.cpu_ran(h, ev, wc, true);
        self.shared[hu].last_send_ev = ev;
        self.messages += 1;
        self.ts += 1;
        let m0 = self.slots.a(msg, 0);
        self.heap
            .push(Reverse((m0, self.ts, K_MSG, h, id, msg, ev)));
        self.slots.release(slot);
        if !rndv {
            self.release(h, id);
        }
        if id == self.shared[hu].next_send {
            let next = self.send_from(h, id + 1);
            self.shared[hu].next_send = next;
            if let Some((ps, _)) = self.parked.remove(&key(h, next)) {
                // Queued again at this send's start, as the global engine does.
                self.ts += 1;
                let s0 = self.lanes[hu * self.l].s;
                self.heap
                    .push(Reverse((s0, self.ts, K_OP, h, next, ps, ev)));
            }
        }
        self.flush();
    }

    fn per_byte(&mut self, c: crate::params::PerByte, size: u64, k: usize) -> Time {
        match c.cost(size.saturating_sub(1)) {
            Some(v) => v,
            None => {
                self.dead[k] = true;
                Time::MAX
            }
        }
    }

    /// Gives up the lanes whose times `t` (per lane, in `slot`'s `a` or `b`) do not follow the
    /// last ones of the same (receiver, sender) and kind strictly (a stronger condition than
    /// the order in which messages and receives of one tag are matched), and records them.
    fn class_guard(&mut self, dst: u32, src: u32, slot: u32, post: bool) {
        let l = self.l;
        let cs = match self.classes.get(&key(dst, src)) {
            Some(&c) => c,
            None => {
                let c = self.slots.alloc();
                for k in 0..l {
                    self.slots.set(c, k, UNKNOWN, UNKNOWN, INIT);
                }
                self.classes.insert(key(dst, src), c);
                c
            }
        };
        for k in 0..l {
            let t = if post {
                self.slots.b(slot, k)
            } else {
                self.slots.a(slot, k)
            };
            let (lm, lp) = (self.slots.a(cs, k), self.slots.b(cs, k));
            let last = if post { lp } else { lm };
            if last != UNKNOWN && t <= last {
                self.dead[k] = true;
            }
            if post {
                self.slots.set(cs, k, lm, t, INIT);
            } else {
                self.slots.set(cs, k, t, lp, INIT);
            }
        }
    }

    /// Sets `done_t`/`done_c` to when a receive completes in each lane: its post (`pslot`'s
    /// `b`, event `pev`) or its message (`mslot`'s `a`, event `mev`), whichever is later.
    fn completion(&mut self, pslot: u32, pev: u64, mslot: u32, mev: u64) {
        for k in 0..self.l {
            let (pt, mt) = (self.slots.b(pslot, k), self.slots.a(mslot, k));
            self.done_from[k] = NONE;
            if pt > mt {
                self.done_t[k] = pt;
                self.done_c[k] = pev;
                self.done_born[k] = self.slots.a(pslot, k);
            } else {
                self.done_born[k] = self.slots.b(mslot, k);
                if pt == mt {
                    self.dead[k] = true;
                }
                self.done_t[k] = mt;
                self.done_c[k] = mev;
            }
        }
    }

    /// Completes receive `recv` of `h` matched with the message of send `send_op` of `src`.
    fn received(&mut self, h: u32, recv: u32, size: u64, src: u32, send_op: u32) {
        // Rendezvous by the size of the op whose event matched (LogGOPSim's rule).
        if size > self.p.s {
            self.release(src, send_op);
        }
        let idle = self.idle;
        for k in 0..self.l {
            let t = self.done_t[k];
            let x = &mut self.lanes[h as usize * self.l + k];
            x.recv_end = x.recv_end.max(t);
            if idle {
                // A receive that completed before a send the walk already started counts for
                // that send's idle time: the lane is given up when it would have changed it.
                let never = NEVER_COMMUNICATED;
                let late = x.sent != never && t <= x.sent;
                let changes =
                    (x.sent_before != never && t <= x.sent_before) || x.used == never || t > x.used;
                if late && changes {
                    self.dead[k] = true;
                } else if x.active == never || x.active < t {
                    x.active = t;
                    x.active_ev = self.done_c[k];
                    x.active_born = self.done_born[k];
                }
            }
        }
        self.release(h, recv);
        self.flush();
    }

    fn recv(&mut self, h: u32, id: u32, slot: u32) -> Result<(), LaneError> {
        let op = self.prog.op(h, id);
        if op.peer == ANY || op.tag == ANY {
            return Err(LaneError::Refused("the schedule has wildcard receives"));
        }
        self.ops_done += 1;
        self.ev += 1;
        let ev = self.ev;
        self.class_guard(h, op.peer, slot, true);
        let s = &mut self.shared[h as usize];
        let matched = self
            .lists
            .arrived(&mut s.uq, h as usize)
            .take_match(op.peer, op.tag);
        match matched {
            Some(u) => {
                let (mslot, mev) = self
                    .unexpected
                    .remove(&key(u.src, u.send_op))
                    .expect("an unexpected message has its times");
                self.completion(slot, ev, mslot, mev);
                self.slots.release(mslot);
                self.slots.release(slot);
                self.received(h, id, op.size, u.src, u.send_op);
            }
            None => {
                let s = &mut self.shared[h as usize];
                self.lists
                    .posted(&mut s.rq, h as usize)
                    .post(op.peer, op.tag, id);
                self.posted.insert(key(h, id), (slot, ev));
            }
        }
        Ok(())
    }

    fn message(&mut self, sender: u32, send_id: u32, mslot: u32) {
        let op = self.prog.op(sender, send_id);
        let h = op.peer;
        self.ev += 1;
        let ev = self.ev;
        self.class_guard(h, sender, mslot, false);
        let prog = self.prog;
        let s = &mut self.shared[h as usize];
        let matched = self
            .lists
            .posted(&mut s.rq, h as usize)
            .take_match(prog, h, sender, op.tag);
        match matched {
            Some(recv) => {
                let (pslot, pev) = self.posted.remove(&key(h, recv)).unwrap_or((0, INIT));
                self.completion(pslot, pev, mslot, ev);
                self.slots.release(pslot);
                self.slots.release(mslot);
                self.received(h, recv, op.size, sender, send_id);
            }
            None => {
                let s = &mut self.shared[h as usize];
                self.lists
                    .arrived(&mut s.uq, h as usize)
                    .push(sender, op.tag, send_id);
                self.unexpected.insert(key(sender, send_id), (mslot, ev));
            }
        }
    }

    fn finish(mut self) -> Result<Vec<Option<Outcome>>, LaneError> {
        self.report()?;
        let complete = self.parked.is_empty()
            && self.partial.is_empty()
            && self.posted.is_empty()
            && self.unexpected.is_empty()
            && self.shared.iter().all(|s| s.rq == NIL && s.uq == NIL);
        let ops = self.ops_done;
        if !complete || ops != self.prog.total_ops() {
            return Err(LaneError::Refused(
                "the schedule does not complete (or stalls) in the walk's order",
            ));
        }
        let n = self.prog.num_ranks() as usize;
        Ok((0..self.l)
            .map(|k| {
                if self.dead[k] {
                    return None;
                }
                let finish = (0..n)
                    .map(|h| {
                        let x = &self.lanes[h * self.l + k];
                        x.end.max(x.recv_end)
                    })
                    .collect();
                Some(Outcome {
                    finish,
                    events: ops + self.messages,
                    messages: self.messages,
                    leftovers: Vec::new(),
                })
            })
            .collect())
    }
}
