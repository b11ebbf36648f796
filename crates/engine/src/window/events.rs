//! The event rules, the global engine's ([`crate::sim`]): an op runs when its CPU (and its
//! NIC, for a send) is free, or is deferred until then; a message is taken when its receiver's
//! CPU and NIC are free, and matched against the posted receives; the ops an event frees are
//! queued in LogGOPSim's order (by type, release order within a type).
//!
//! Shortcuts that keep every answer and every stamp: a freed op, and a message whose CPU or
//! NIC is busy until later in its window, run at once when they are due before every other
//! pending event of their rank (`Win::heap_first` holds the time of the heap's first entry):
//! they are the rank's next event either way, and their stamps are unchanged. Each message's
//! entry carries the gap its sender drew, so a send asks for
//! [`Noise::send_costs_untracked`] (nothing kept for the receiver), and when the model reports
//! constant receive-side o and g ([`Noise::fixed_recv_overheads`]) a message asks for no
//! receive costs at all. A message due before the end of the current window (sooner than the
//! lookahead) makes the run give up ([`GiveUp::Lookahead`]).

use super::entry::{Min, Stamp, MSG_BIT};
use super::{GiveUp, Win};
use crate::matching::{Arrived, Posted};
use crate::noise::{communicated, idle_time, Noise};
use crate::params::{or_overflow, Time};
use crate::program::{DepKind, Op, OpKind, Program};
use crate::sim::{DETOURED, NOT_YET};

/// A freed op run at once (see `Win::flush_freed`): its id, the op, its start and its stamp.
pub(super) struct Direct {
    pub(super) id: u32,
    pub(super) op: Op,
    pub(super) time: Time,
    pub(super) stamp: Stamp,
}

impl<'a, P: Program, N: Noise, const FULL: bool, const QUEUED: bool> Win<'a, P, N, FULL, QUEUED> {
    /// Runs op event `next` at its time, or defers it while the CPU or NIC is busy.
    #[inline(always)]
    pub(super) fn op_event(&mut self) -> Result<(), GiveUp> {
        let (host, id, t) = (self.host, self.next.item(), self.next.time);
        let op: Op = self.prog.op(host, id);
        if QUEUED && op.kind == OpKind::Send && self.send_waits(id) {
            // A lower-numbered send has not started: this one waits for it.
            self.has_next = false;
            self.park(id);
            return Ok(());
        }
        let r = &self.me;
        let ready = match op.kind {
            OpKind::Calc => r.o,
            // The queued model's send needs only its CPU; it then waits in the NIC's queue.
            OpKind::Send if QUEUED => r.o,
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
    pub(super) fn run_op(&mut self, id: u32, op: Op, t: Time) -> Result<(), GiveUp> {
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
                    if QUEUED {
                        self.received(h, t);
                    }
                    communicated(self.last_active.get_mut(h), t);
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
    pub(super) fn send<const RNDV: bool>(
        &mut self,
        id: u32,
        op: Op,
        t: Time,
    ) -> Result<(), GiveUp> {
        let host = self.host;
        self.mark(id, DepKind::Start);
        let idle = idle_time(self.last_active.get_mut(host as usize), t);
        let c = self
            .noise
            .send_costs_untracked_idle(&self.p, host, op.peer, id, op.size, idle);
        let t_o = self.add(t, c.o);
        let noise = self.noise.os_detour(host, t, t_o);
        let ob = self.overhead_bytes(op.size);
        let v = self.add(t_o, ob);
        self.me.o = self.add(v, noise);
        // The queued model's send leaves the NIC when the NIC is free.
        let tn = if QUEUED { t.max(self.me.gs) } else { t };
        let v = self.add(tn, c.g);
        self.me.gs = self.add(v, c.gap_bytes);
        let mut arrival = self.add(tn, c.o);
        arrival = self.add(arrival, c.latency);
        if RNDV {
            for _ in 0..self.p.rndv_extra_latencies {
                arrival = self.add(arrival, c.latency);
            }
        }
        if QUEUED {
            // Its event is when it is received (`msg_event`).
            let o_r = self.recv_o(host, op.peer, id, op.size, c.gap_bytes);
            arrival = self.add(arrival, o_r);
            arrival = self.add(arrival, ob.max(c.gap_bytes));
            if id >= DETOURED {
                return Err(GiveUp::Error);
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
        self.queue_msg(m);
        // A rendezvous send here frees nothing: marking it done now is marking it done when
        // its receive matches (see `release_late`).
        self.mark(id, DepKind::Done);
        if QUEUED {
            self.sent(id, t);
        }
        Ok(())
    }

    /// Queued model: whether send `id` of the current rank must wait for a lower-numbered
    /// send that has not started.
    #[inline(always)]
    pub(super) fn send_waits(&mut self, id: u32) -> bool {
        let h = self.host as usize;
        if self.next_send.is_empty() {
            self.next_send.resize(self.ranks as usize, NOT_YET);
            self.parked_min.resize(self.ranks as usize, NOT_YET);
        }
        if self.next_send[h] == NOT_YET {
            self.next_send[h] = self.send_from(0);
        }
        id > self.next_send[h]
    }

    /// Queued model: send `id` of the current rank started at `t`; when it was the lowest
    /// waiting one, the next send may start, at `t` or later, as the event it was.
    #[inline(always)]
    fn sent(&mut self, id: u32, t: Time) {
        let h = self.host as usize;
        if id != self.next_send[h] {
            return;
        }
        let next = self.send_from(id + 1);
        self.next_send[h] = next;
        // When the rank's lowest parked send is above `next`, `next` is not parked: the set
        // is searched only when it may hold it, not at every send.
        if self.parked_min[h] <= next && self.parked.remove(&(self.host, next)) {
            self.parked_min[h] = self
                .parked
                .range((self.host, next)..=(self.host, u32::MAX))
                .next()
                .map_or(NOT_YET, |&(_, i)| i);
            // Queued again by this event, as any op it would free (stamps as the global
            // engine's new `ts`).
            let e = self.child(t, self.now.saturating_add(1), self.seq, 0, self.host, next);
            self.seq += 1;
            self.heap.push(Min(e));
            self.heap_changed();
        }
    }

    /// Queued model: send `id` of the current rank waits for a lower-numbered one
    /// ([`Self::send_waits`] said so, which also sized `parked_min`).
    #[inline(always)]
    pub(super) fn park(&mut self, id: u32) {
        let h = self.host as usize;
        self.parked.insert((self.host, id));
        self.parked_min[h] = self.parked_min[h].min(id);
    }

    /// The first send of the current rank with an id of at least `from`.
    fn send_from(&self, from: u32) -> u32 {
        let (prog, host) = (self.prog, self.host);
        (from..prog.num_ops(host))
            .find(|&i| prog.op(host, i).kind == OpKind::Send)
            .unwrap_or(NOT_YET - 1)
    }

    /// The receiver's overhead o of a message (fixed, or drawn for it).
    #[inline(always)]
    fn recv_o(&mut self, sender: u32, receiver: u32, send_id: u32, size: u64, gap: Time) -> Time {
        match self.recv_og {
            Some((o, _)) => o,
            None => {
                let n = &mut self.noise;
                n.recv_costs_known_gap(&self.p, sender, receiver, send_id, size, gap)
                    .o
            }
        }
    }

    /// Queued model: a receive of rank `h` completed at `t`; the rank finishes no earlier.
    #[inline(always)]
    fn received(&mut self, h: usize, t: Time) {
        if self.late.is_empty() {
            self.late.resize(self.ranks as usize, 0);
        }
        self.late[h] = self.late[h].max(t);
    }

    /// A message event of the queued model, when the message is received: it takes no
    /// resource; an OS detour in progress at its arrival defers it once.
    #[inline(always)]
    fn queued_msg_event(&mut self) {
        let e = &self.next;
        let (host, sender, item, t, gap) = (self.host, e.src(), e.item(), e.time, e.gap);
        let send_id = item & !DETOURED;
        let h = host as usize;
        let op = self.prog.op(sender, send_id);
        if item & DETOURED == 0 {
            let ob = self.overhead_bytes(op.size);
            let o = self.recv_o(sender, host, send_id, op.size, gap);
            let arrival = t.saturating_sub(o).saturating_sub(ob.max(gap));
            let t_o = self.add(arrival, o);
            let d = self.noise.os_detour(host, arrival, t_o);
            if d > 0 {
                self.next.item |= DETOURED as u64;
                let later = self.add(t, d);
                self.defer(later);
                return;
            }
        }
        self.now = t;
        self.has_next = false;
        let prog = self.prog;
        if let Some(recv) = self.posted(h).take_match(prog, host, sender, op.tag) {
            // A rendezvous send here frees nothing (the engine gives up on those that do), and
            // the queued model holds nothing of its sender.
            self.received(h, t);
            communicated(self.last_active.get_mut(h), t);
            self.open -= 1;
            self.mark(recv, DepKind::Done);
        } else {
            self.arrived(h).push(sender, op.tag, send_id);
            self.open += 1;
        }
    }

    /// Runs message event `next` at its receiver, or defers it while the CPU or NIC is busy.
    #[inline(always)]
    pub(super) fn msg_event(&mut self) {
        if QUEUED {
            return self.queued_msg_event();
        }
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
            communicated(self.last_active.get_mut(h), t);
            self.open -= 1;
            self.mark(recv, DepKind::Done);
        } else {
            self.arrived(h).push(sender, op.tag, send_id);
            self.open += 1;
        }
    }

    /// Defers the event being run (`next`) to `time`, when its CPU or NIC is free: it stays
    /// `next` if that is still in this window.
    #[inline(always)]
    pub(super) fn defer(&mut self, time: Time) {
        self.next.time = time;
        if time >= self.w_end {
            self.has_next = false;
            let e = self.next;
            self.queue(e);
        }
    }

    /// Queues the ops freed by the current event in LogGOPSim's order (by type, release order
    /// within a type), starting when their CPU (and NIC, for sends) is free. The last one due
    /// in this window becomes `next` (which must be free); a single one due in this window,
    /// before every other pending event of the rank, is returned to be run at once instead,
    /// and a single one due after it is queued here.
    #[inline(always)]
    #[must_use]
    pub(super) fn flush_freed(&mut self) -> Option<Direct> {
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
        if QUEUED {
            // Never before the event that frees it; a send does not wait for its NIC.
            return r.o.max(self.now);
        }
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

    #[inline(always)]
    pub(super) fn posted(&mut self, h: usize) -> Posted<'_> {
        self.lists.posted(&mut self.me.rq, h)
    }

    /// Rank `h`'s unexpected-message list.
    #[inline(always)]
    fn arrived(&mut self, h: usize) -> Arrived<'_> {
        self.lists.arrived(&mut self.me.uq, h)
    }

    #[inline(always)]
    fn add(&mut self, a: Time, b: Time) -> Time {
        or_overflow(a.checked_add(b), &mut self.overflow)
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
}
