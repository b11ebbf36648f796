//! Progress during computation: whether a rendezvous message advances while its sender or
//! receiver computes ([`MpiProgress`]).
//!
//! An MPI library without asynchronous progress (Cray MPICH's default, MPICH's and Open MPI's
//! without a progress thread) moves a message above the eager threshold only when the ranks at
//! its ends are inside an MPI call: the receiver answers the request to send, and the sender
//! tells the receiver that the data is complete, from within MPI. A rank that busy-waits in a
//! computation (a `calc`) holds up every handshake and completion notice it owes. Under
//! [`MpiProgress::Polled`] the global engine applies two rules to every message larger than
//! S, in both models ([`crate::Model`]):
//!
//! 1. **Handshake.** The message is matched only at a moment when neither its sender nor its
//!    receiver is inside a calc: a match that would fall inside a calc of either waits for that
//!    calc's end (and is checked again then, when another calc may have begun). The send
//!    completes at the handshake. (The queued model checks at the message's arrival, before it
//!    is received; LogGOPSim's model holds the message's processing at its receiver while the
//!    sender computes, and checks both ranks again when the receive is matched.)
//! 2. **Completion notice.** The receive completes only when the sender is outside a calc at
//!    or after the handshake: if the sender is computing then, and in particular when the
//!    send's completion lets it start a calc at that very moment, the receive completes when
//!    that calc ends.
//!
//! A rank is *inside a calc* from the calc's start to its end (its OS detour included); a
//! calc of length 0 never holds anything. Eager messages are unaffected. The rules never
//! advance anything, so a polled run is never faster than the same run with
//! [`MpiProgress::Async`], and an eager-only program runs exactly as with it.
//!
//! How: each rule is a *step* of the message, queued as an event of its own (a `K_BATCH`
//! entry whose item has the [`STEP`] bit, so the queue entries keep their layout), with a
//! fresh insertion stamp taken after the ops the triggering event freed, so that a calc those
//! ops start at the same instant runs first and is seen. Those stamps are not LogGOPSim
//! events (they are left out of [`crate::Outcome::events`] and of progress reports). The
//! windowed engine does not implement these rules: it hands polled runs to this engine.

use super::*;

/// Whether a message larger than the eager threshold S advances while its sender or receiver
/// computes (see the module documentation of `sim/polled.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum MpiProgress {
    /// It does (an MPI with asynchronous progress, or hardware that completes rendezvous
    /// transfers without the CPU): LogGOPSim's behaviour and the default.
    #[default]
    Async,
    /// It advances only while both ranks are outside a calc (inside MPI): the handshake waits
    /// for the end of a calc either rank is executing, and the receive completes only when the
    /// sender is outside a calc after the handshake.
    Polled,
}

impl MpiProgress {
    /// The name used on the command line and in profiles (`async`, `polled`).
    pub fn name(self) -> &'static str {
        match self {
            MpiProgress::Async => "async",
            MpiProgress::Polled => "polled",
        }
    }

    /// The other rule.
    pub fn other(self) -> MpiProgress {
        match self {
            MpiProgress::Async => MpiProgress::Polled,
            MpiProgress::Polled => MpiProgress::Async,
        }
    }
}

impl std::str::FromStr for MpiProgress {
    type Err = String;
    fn from_str(s: &str) -> Result<MpiProgress, String> {
        match s {
            "async" => Ok(MpiProgress::Async),
            "polled" => Ok(MpiProgress::Polled),
            _ => Err(format!(
                "unknown MPI progress `{s}`: expected `async` or `polled`"
            )),
        }
    }
}

impl std::fmt::Display for MpiProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The bit of a `K_BATCH` entry's item that makes it a step of a rendezvous message (the rest
/// is the step's slot).
pub(super) const STEP: u32 = 1 << 31;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepKind {
    /// Queued model: the message arrives at its receiver (rule 1 is checked before it is
    /// received).
    Arrival,
    /// Rule 1 at a match: the handshake happens when neither rank computes.
    Handshake,
    /// LogGOPSim's model: the send completes when its receiver has received the data.
    Complete,
    /// Rule 2: the receive completes when the sender does not compute.
    Notice,
}

#[derive(Clone, Copy, Debug)]
struct Step {
    kind: StepKind,
    sender: u32,
    send_op: u32,
    /// The receiver and its matched receive (unused for [`StepKind::Arrival`]).
    host: u32,
    recv: u32,
    /// The CPU and NIC whose clocks a LogGOPSim-model handshake raises on the sender.
    cpu: u8,
    nic: u8,
    /// Queued model, [`StepKind::Arrival`]: how long after its handshake the message is
    /// received (`o + (s−1)·max(O, G)` with the costs drawn when it was sent; 0 otherwise).
    recv_after: Time,
}

/// What the rules keep: per rank the latest calc's interval, and the pending steps.
#[derive(Debug)]
pub(super) struct Polled {
    calc_from: Vec<Time>,
    calc_until: Vec<Time>,
    steps: Vec<Step>,
    free: Vec<u32>,
    /// Insertion stamps the steps took (not LogGOPSim events).
    pub(super) extra_ts: u64,
}

impl Polled {
    pub(super) fn new(mode: MpiProgress, ranks: usize) -> Option<Box<Polled>> {
        match mode {
            MpiProgress::Async => None,
            MpiProgress::Polled => Some(Box::new(Polled {
                calc_from: vec![0; ranks],
                calc_until: vec![0; ranks],
                steps: Vec::new(),
                free: Vec::new(),
                extra_ts: 0,
            })),
        }
    }
}

impl<
        P: Program,
        N: Noise,
        R: Recorder,
        Q: EventQueue<Ev>,
        const COMPAT: bool,
        const QUEUED: bool,
    > Sim<'_, P, N, R, Q, COMPAT, QUEUED>
{
    /// A calc of rank `h` occupies `[start, end)` (detour included).
    #[inline]
    pub(super) fn calc_ran(&mut self, h: usize, start: Time, end: Time) {
        if let Some(p) = self.polled.as_deref_mut() {
            if start < p.calc_until[h] {
                // Another CPU of the rank still computes: one busy stretch.
                p.calc_until[h] = p.calc_until[h].max(end);
            } else {
                p.calc_from[h] = start;
                p.calc_until[h] = end;
            }
        }
    }

    /// When rank `h`, at `t`, is next outside a calc (`t` when it is now).
    fn computes_until(&self, h: u32, t: Time) -> Time {
        let p = self.polled.as_deref().expect("polled progress");
        let h = h as usize;
        if p.calc_from[h] <= t && t < p.calc_until[h] {
            p.calc_until[h]
        } else {
            t
        }
    }

    /// Insertion stamps taken by steps so far.
    #[inline]
    pub(super) fn extra_ts(&self) -> u64 {
        self.polled.as_deref().map_or(0, |p| p.extra_ts)
    }

    /// A fresh insertion stamp that is not a LogGOPSim event.
    fn extra_stamp(&mut self) -> u64 {
        let ts = self.ts;
        self.ts += 1;
        self.polled
            .as_deref_mut()
            .expect("polled progress")
            .extra_ts += 1;
        ts
    }

    fn push_step(&mut self, t: Time, s: Step) {
        let ts = self.extra_stamp();
        let p = self.polled.as_deref_mut().expect("polled progress");
        let slot = match p.free.pop() {
            Some(i) => {
                p.steps[i as usize] = s;
                i
            }
            None => {
                p.steps.push(s);
                (p.steps.len() - 1) as u32
            }
        };
        debug_assert!(slot < STEP);
        self.push(t, ts, K_BATCH, s.host, slot | STEP);
    }

    /// LogGOPSim's model: when a rendezvous message reaching its receiver at `t` must wait
    /// for its sender to leave a calc (rule 1), the time it waits for; `t` otherwise (always
    /// with [`MpiProgress::Async`] and for eager messages).
    #[inline]
    pub(super) fn sender_holds(&self, sender: u32, size: u64, t: Time) -> Time {
        if self.polled.is_none() || size <= self.p.s {
            return t;
        }
        self.computes_until(sender, t)
    }

    /// Queued model: a rendezvous message sent by `send_op` of `sender` arrives at its
    /// receiver at `arrival` and would be received `recv_after` later. `true` when the rules
    /// take it over (it is then received `recv_after` after its handshake, with the costs its
    /// send drew); `false` with [`MpiProgress::Async`] and for eager messages.
    #[inline]
    pub(super) fn rndv_arrives(
        &mut self,
        arrival: Time,
        recv_after: Time,
        sender: u32,
        send_op: u32,
        op: &Op,
    ) -> bool {
        if self.polled.is_none() || op.size <= self.p.s {
            return false;
        }
        self.push_step(
            arrival,
            Step {
                kind: StepKind::Arrival,
                sender,
                send_op,
                host: op.peer,
                recv: 0,
                cpu: op.cpu,
                nic: op.nic,
                recv_after,
            },
        );
        true
    }

    /// The rendezvous message of `send_op` of `sender` matched receive `recv` of `host` at `t`;
    /// its data is in at `data_in` (LogGOPSim's model: when the receiver's CPU has received
    /// it; else `t`). `true` when the rules take over its completions (the caller then marks
    /// neither the send nor the receive done); `false` with [`MpiProgress::Async`].
    #[inline]
    pub(super) fn rndv_matched(
        &mut self,
        t: Time,
        data_in: Time,
        sender: u32,
        send_op: u32,
        host: u32,
        recv: u32,
        cpu: u8,
        nic: u8,
    ) -> bool {
        if self.polled.is_none() {
            return false;
        }
        // The receiver communicates at the match, as with asynchronous progress: its next
        // send is not a send after idle.
        communicated(self.last_active.get_mut(host as usize), t);
        let s = Step {
            kind: StepKind::Handshake,
            sender,
            send_op,
            host,
            recv,
            cpu,
            nic,
            recv_after: 0,
        };
        self.handshake(t, data_in, s);
        true
    }

    /// Rule 1: the handshake happens at `t` unless a rank computes; the send completes when
    /// the data is in (`data_in`), then the completion notice follows.
    fn handshake(&mut self, t: Time, data_in: Time, s: Step) {
        let wait = self
            .computes_until(s.sender, t)
            .max(self.computes_until(s.host, t));
        if wait > t {
            self.push_step(wait, s);
        } else if data_in > t {
            self.push_step(
                data_in,
                Step {
                    kind: StepKind::Complete,
                    ..s
                },
            );
        } else {
            self.complete(t, s);
        }
    }

    /// The send completes at `t`: its sender's clocks are raised (LogGOPSim's model) and the
    /// completion notice (rule 2) is queued behind the ops the completion frees.
    fn complete(&mut self, t: Time, s: Step) {
        self.mark(s.sender, s.send_op, DepKind::Done);
        self.release_sender(s.sender as usize, s.cpu, s.nic, t);
        // The ops the send's completion frees take their stamps first, so that a calc they
        // start now is seen by the notice.
        self.flush_freed();
        self.push_step(
            t,
            Step {
                kind: StepKind::Notice,
                ..s
            },
        );
    }

    /// A step's event at `t` (`slot` without the [`STEP`] bit).
    pub(super) fn step_event(&mut self, t: Time, slot: u32) -> Result<(), EngineError> {
        let p = self.polled.as_deref_mut().expect("polled progress");
        let s = p.steps[slot as usize];
        p.free.push(slot);
        match s.kind {
            StepKind::Arrival => {
                let wait = self
                    .computes_until(s.sender, t)
                    .max(self.computes_until(s.host, t));
                if wait > t {
                    self.push_step(wait, s);
                } else {
                    // Received as long after the handshake as it would have been after its
                    // arrival.
                    let received = self.add(t, s.recv_after);
                    let ts = self.extra_stamp();
                    self.push(received, ts, K_MSG, s.sender, s.send_op);
                }
            }
            StepKind::Handshake => self.handshake(t, t, s),
            StepKind::Complete => self.complete(t, s),
            StepKind::Notice => {
                let wait = self.computes_until(s.sender, t);
                if wait > t {
                    self.push_step(wait, s);
                } else {
                    let h = s.host as usize;
                    self.recv_end[h] = self.recv_end[h].max(t);
                    if !QUEUED {
                        // LogGOPSim's model queues a freed op at its CPU's clock: the rank
                        // waited inside MPI until now (as its rule raises a rendezvous
                        // sender's clocks at the match).
                        let cpu = self.prog.op(s.host, s.recv).cpu;
                        let c = self.clock(h, Clock::Cpu, cpu);
                        self.set_clock(h, Clock::Cpu, cpu, c.max(t));
                    }
                    self.mark(s.host, s.recv, DepKind::Done);
                }
            }
        }
        if s.kind == StepKind::Arrival {
            self.check(s.sender, s.send_op)
        } else {
            self.check(s.host, s.recv)
        }
    }
}
