//! Receives under both models ([`Model`]): a receive op's event (it takes the first
//! unexpected message that fits or is posted) and a message's event (LogGOPSim's model: at its
//! arrival, on the receiver's CPU and receive NIC; the queued model: when it is received,
//! taking neither), with the match lists of `crate::matching`.

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
    /// The event of receive op `id` of `host` at `t`: it matches the first unexpected message
    /// that fits, or is posted.
    #[inline(always)]
    pub(super) fn recv_event(
        &mut self,
        t: Time,
        host: u32,
        id: u32,
        op: Op,
    ) -> Result<(), EngineError> {
        let h = host as usize;
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
        self.check(host, id)
    }

    /// Rank `h`'s posted-receive list.
    #[inline(always)]
    pub(super) fn posted(&mut self, h: usize) -> Posted<'_> {
        self.lists.posted(&mut self.rs[h].rq, h)
    }

    /// Rank `h`'s unexpected-message list.
    #[inline(always)]
    fn arrived(&mut self, h: usize) -> Arrived<'_> {
        self.lists.arrived(&mut self.rs[h].uq, h)
    }

    pub(super) fn msg_event(
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
}
