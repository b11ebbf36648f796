//! The global engine's driver: the event queue, the batches of ops freed together, the
//! initial roots, the direct path (an op that would pop next runs without the queue), the main
//! loop, progress reports, and the op event (calcs here; sends in `send.rs`, receives in
//! `receive.rs`).

use super::*;

impl<
        P: Program,
        N: Noise,
        R: Recorder,
        Q: EventQueue<Ev>,
        const COMPAT: bool,
        const QUEUED: bool,
    > Sim<'_, P, N, R, Q, COMPAT, QUEUED>
{
    // --- queue ---------------------------------------------------------------------------------

    #[inline]
    pub(super) fn push(&mut self, time: Time, ts: u64, kind: u32, host: u32, item: u32) {
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
    pub(super) fn flush_freed(&mut self) {
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

    pub(super) fn run(mut self) -> Result<Outcome, EngineError> {
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
    pub(super) fn check(&mut self, host: u32, op: u32) -> Result<(), EngineError> {
        if self.overflow {
            return Err(EngineError::Overflow { rank: host, op });
        }
        self.flush_freed();
        Ok(())
    }

    /// The event of op `id` of `host` at `t`: a calc here, a send in `send.rs`, a receive in
    /// `receive.rs`.
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
            OpKind::Send => return self.send_event(t, ts, host, id, op),
            OpKind::Recv => return self.recv_event(t, host, id, op),
        }
        self.check(host, id)
    }
}

#[cfg(test)]
thread_local! {
    /// Tests turn the direct path off to check that it changes nothing.
    pub(super) static NO_DIRECT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a freed op that would pop next runs without the queue (always, outside tests).
pub(super) fn direct_path_on() -> bool {
    #[cfg(test)]
    return !NO_DIRECT.with(|c| c.get());
    #[cfg(not(test))]
    true
}
