//! Sends under both models ([`Model`]): when a send may start, and what starting it does.
//!
//! The two models differ only in when a send starts: in LogGOPSim's model when its CPU *and*
//! its NIC are free; in the queued model in program order, when its CPU is free, its NIC
//! then sending it as soon as it is free. Starting it is the same rule in both
//! (`Sim::start_send`): the CPU pays `o + (s−1)·O` (plus an OS detour), the NIC
//! `g + (s−1)·G` from when it starts sending, and the message arrives `o + L` after the NIC
//! started (plus the rendezvous latencies); the queued model then receives it
//! `o + (s−1)·max(O, G)` after it arrives.

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
    /// The event of send op `id` of `host` at `t`.
    #[inline(always)]
    pub(super) fn send_event(
        &mut self,
        t: Time,
        ts: u64,
        host: u32,
        id: u32,
        op: Op,
    ) -> Result<(), EngineError> {
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
        let h = host as usize;
        let cpu_free = self.clock(h, Clock::Cpu, op.cpu);
        let nic_free = self.clock(h, Clock::Send, op.nic);
        let ready = cpu_free.max(nic_free);
        if ready <= t {
            self.start_send(t, host, id, &op, cpu_free, nic_free);
        } else {
            self.push(ready, ts, K_OP, host, id);
        }
        self.check(host, id)
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
        let nic_free = self.clock(h, Clock::Send, op.nic);
        self.start_send(t, host, id, &op, ready, nic_free);
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

    /// Starts send `id` of `host` at `t`, under either model: its CPU is free at `t`
    /// (`cpu_free ≤ t`); its NIC is free at `nic_free` (`≤ t` in LogGOPSim's model, so that
    /// the NIC starts sending at `t` there). Sets the CPU's and the NIC's clocks, tells the
    /// recorder, queues the message's event (its arrival; in the queued model the time it is
    /// received, unless a rendezvous rule of `polled.rs` takes it) and completes an eager
    /// send.
    #[inline(always)]
    fn start_send(&mut self, t: Time, host: u32, id: u32, op: &Op, cpu_free: Time, nic_free: Time) {
        let h = host as usize;
        self.mark(host, id, DepKind::Start);
        // The queued model draws the receiver's `o` here too: its message is received without
        // taking the receiver's CPU, `o + (s−1)·max(O, G)` after it arrives.
        let (lat, o, g, gap, o_r) = if N::ACTIVE {
            let idle = idle_time(self.last_active.get_mut(h), t);
            let c = self
                .noise
                .send_costs_idle(&self.p, host, op.peer, id, op.size, idle);
            let o_r = if QUEUED {
                self.noise.recv_costs(&self.p, host, op.peer, id, op.size).o
            } else {
                0
            };
            (c.latency, c.o, c.g, c.gap_bytes, o_r)
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
        self.set_clock(h, Clock::Cpu, op.cpu, cpu_end);
        let nic_start = t.max(nic_free);
        let v = self.add(nic_start, g);
        let nic_end = self.add(v, gap);
        self.set_clock(h, Clock::Send, op.nic, nic_end);
        let mut arrival = if QUEUED {
            self.add(nic_start, o)
        } else {
            t_o // = nic_start + o
        };
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
                nic_start,
                arrival,
                ..self.send_record(host, id, op, drawn)
            };
            self.rec.send(&r);
        }
        let mts = self.ts;
        self.ts += 1;
        self.messages += 1;
        if QUEUED {
            // The message is received `o + (s-1)·max(O, G)` after it arrives.
            let received = self.add(arrival, o_r);
            let received = self.add(received, ob.max(gap));
            if !self.rndv_arrives(arrival, received - arrival, host, id, op) {
                self.push(received, mts, K_MSG, host, id);
            }
        } else {
            self.push(arrival, mts, K_MSG, host, id);
        }
        if op.size <= self.p.s {
            self.mark(host, id, DepKind::Done);
        }
    }

    /// A rendezvous send completes when its receive is matched at `t`: the sender's CPU and NIC
    /// cannot be free before (LogGOPSim indexes them with the receive's CPU and NIC).
    #[inline]
    pub(super) fn release_sender(&mut self, s: usize, cpu: u8, nic: u8, t: Time) {
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

    /// The first send of `host` with an id of at least `from`, or [`NOT_YET`] when none is
    /// left.
    fn send_from(&self, host: u32, from: u32) -> u32 {
        let n = self.prog.num_ops(host);
        (from..n)
            .find(|&i| self.prog.op(host, i).kind == OpKind::Send)
            .unwrap_or(NOT_YET - 1)
    }

    /// Queued model: when nothing is left to run but sends wait for lower-numbered ones that
    /// never started, the lowest waiting send of the lowest rank starts anyway (the ones it
    /// skips may start whenever they are ready). `false` when none waits.
    pub(super) fn unstall(&mut self, now: Time) -> bool {
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
}
