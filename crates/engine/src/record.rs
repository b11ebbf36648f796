//! The recording hook: what the global engine tells a caller-owned [`Recorder`] about every
//! activity of a run, so that the caller can find out why the run took as long as it did
//! (critical path, timelines) without the engine doing any I/O or keeping anything itself.
//!
//! Like [`Noise`](crate::Noise), a recorder is a type parameter: with [`NoRecord`]
//! (`ACTIVE == false`) every call is removed at compile time and a run costs what it cost
//! before the hook existed. Only the global engine ([`crate::simulate_global_recorded`])
//! records; a caller that records a noisy repetition runs it there, which gives the same
//! answer as the windowed engine (ARCHITECTURE invariant 6).
//!
//! # What is reported, and what decides a start time
//! Every event that runs is reported once, after the engine has decided that it runs and
//! computed its costs and the clock values it sets, and before the ops it frees are queued:
//! * [`CalcRecord`]: a calc occupies a CPU from `start` to `cpu_end`
//!   (`duration`, then the OS `detour`);
//! * [`SendRecord`]: a send occupies a CPU (`o`, `O·(s−1)`, detour) and a send NIC
//!   (`g`, `G·(s−1)`) from `nic_start`; its message arrives at `arrival` (`nic_start`, `o`,
//!   and `latencies` latencies);
//! * [`MessageRecord`] (LogGOPSim's model): a message is processed at its receiver, occupying
//!   a CPU (`o`, detour, then the larger of `O·(s−1)` and `G·(s−1)`) and a receive NIC
//!   (`g`, `G·(s−1)`);
//! * [`ReceivedRecord`] (the queued model, [`Model::Queued`](crate::Model::Queued)): a
//!   message was received `o + max(O·(s−1), G·(s−1))` after its arrival, plus an OS detour
//!   in progress at its arrival that deferred it ([`Recorder::deferred`], reported earlier),
//!   holding no CPU or NIC;
//! * [`PostRecord`]: a receive is posted (it completes at once when its message has already
//!   been processed);
//! * [`Recorder::raise`]: a rendezvous send completed at its receiver's event, which raised
//!   the sender's CPU and NIC clocks to that event's time;
//! * [`Recorder::ready`]: an op was freed (its last dependency satisfied) during the event
//!   at `now` and queued to start at `at`, the value of its CPU clock (and, for a send, of its
//!   send NIC clock) at that moment (the queued model: the later of its CPU clock and `now`);
//!   in the queued model also a send that waited for a lower-numbered send of its rank
//!   (program order) and is queued again when that one starts (`at == now`).
//!
//! The engine's rules make every start time one of the candidates the records carry: a calc
//! or a send starts exactly when its CPU (and send NIC) clock says, which was set by the end
//! of an earlier activity on that resource, by a rendezvous raise, or is 0; a posted receive
//! at the CPU clock it was queued at; a message is processed at the latest of its arrival
//! and the clocks of the receiver's CPU and receive NIC. Under LogGOPSim's rules the
//! dependency that freed an op never sets its start directly (LogGOPSim queues a freed op at
//! its CPU's clock, which the releasing event has already pushed past its own work). In the
//! queued model it may: an op starts at the later of its CPU clock and the time of the event
//! that freed it (or, for a send that waited for program order, of the lower-numbered send's
//! start); a send's message leaves at the later of its start and its NIC clock; a receive
//! completes at its message's reception or at its post, whichever is later, and a rank
//! finishes at the later of its CPU clock and its last receive completion.
//!
//! Costs are reported as drawn (`drawn`) and as the noise model's noiseless values for the
//! same message (`base`, [`Noise::base_costs`](crate::Noise::base_costs)); they are equal
//! without network noise.

use crate::noise::MsgCosts;
use crate::params::Time;
use crate::program::Op;

/// A calc that ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalcRecord {
    pub rank: u32,
    pub op: u32,
    pub cpu: u8,
    pub start: Time,
    /// The CPU clock before the calc (at most `start`).
    pub cpu_free: Time,
    /// The calc's own length.
    pub duration: Time,
    /// OS detour injected into it.
    pub detour: Time,
    /// `start + duration + detour`: the CPU clock it set.
    pub cpu_end: Time,
}

/// A send that ran (its message leaves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendRecord {
    pub rank: u32,
    pub op: u32,
    pub dst: u32,
    pub size: u64,
    pub cpu: u8,
    pub nic: u8,
    pub start: Time,
    /// The CPU and send-NIC clocks before the send (both at most `start`).
    pub cpu_free: Time,
    pub nic_free: Time,
    /// The message's costs as drawn for this run.
    pub drawn: MsgCosts,
    /// The same costs without network noise (the placement's base parameters).
    pub base: MsgCosts,
    /// `O·(s−1)` charged to the CPU after `o`.
    pub overhead_bytes: Time,
    /// OS detour injected into `[start, start + o)`.
    pub detour: Time,
    /// `start + o + O·(s−1) + detour`: the CPU clock it set.
    pub cpu_end: Time,
    /// `start + g + G·(s−1)`: the send-NIC clock it set.
    pub nic_end: Time,
    /// When the NIC takes the message: `start` under LogGOPSim's rules (the send waited for
    /// the NIC before it started), `max(start, nic_free)` in the queued model (the message
    /// waits in the NIC's queue while the CPU goes on).
    pub nic_start: Time,
    /// `nic_start + o + latencies · latency`: when the message arrives.
    pub arrival: Time,
    /// How many latencies the message pays: 1, or `1 + rndv_extra_latencies` above S.
    pub latencies: u8,
}

/// A message processed at its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRecord {
    /// Sender and its send op: the message's identity.
    pub src: u32,
    pub send_op: u32,
    pub dst: u32,
    pub size: u64,
    /// The receiver's CPU and NIC it occupies (LogGOPSim uses the send op's indices).
    pub cpu: u8,
    pub nic: u8,
    pub start: Time,
    /// The receiver's CPU and receive-NIC clocks before (both at most `start`).
    pub cpu_free: Time,
    pub nic_free: Time,
    /// Receive-side costs as drawn (`latency` is not used) and without network noise.
    pub drawn: MsgCosts,
    pub base: MsgCosts,
    /// `O·(s−1)`; the CPU is charged the larger of it and `drawn.gap_bytes`.
    pub overhead_bytes: Time,
    /// OS detour injected into `[start, start + o)`.
    pub detour: Time,
    /// `start + o + detour + max(O·(s−1), G·(s−1))`: the CPU clock it set.
    pub cpu_end: Time,
    /// `start + g + G·(s−1)`: the receive-NIC clock it set.
    pub nic_end: Time,
    /// The posted receive it completed, if one was waiting (else it waits in the unexpected
    /// queue for a [`PostRecord`] to match it).
    pub matched: Option<u32>,
}

/// A message received in the queued model: it held no resource; its receive completes now
/// (when one is posted, else when one is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceivedRecord {
    pub src: u32,
    pub send_op: u32,
    pub dst: u32,
    pub size: u64,
    /// When it was received: its arrival, plus `drawn.o`, plus the larger of
    /// `overhead_bytes` and `drawn.gap_bytes`, plus the detour reported by
    /// [`Recorder::deferred`] (if any).
    pub time: Time,
    /// Receive-side costs as drawn (`latency` and `g` are not used) and without network noise.
    pub drawn: MsgCosts,
    pub base: MsgCosts,
    /// `O·(s−1)`.
    pub overhead_bytes: Time,
    /// The posted receive it completed, if one was waiting.
    pub matched: Option<u32>,
}

/// A receive posted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostRecord {
    pub rank: u32,
    pub op: u32,
    pub start: Time,
    /// The already processed message `(src, send_op)` it matched, if any (it then completes
    /// at `start`).
    pub matched: Option<(u32, u32)>,
}

/// Receives what the global engine does, event by event (see the module docs).
pub trait Recorder {
    /// `false` only for [`NoRecord`]: lets the engine skip every call.
    const ACTIVE: bool;
    /// Op `op` of `rank` was freed during the event at `now` and queued to start at `at`.
    fn ready(&mut self, rank: u32, op: u32, o: &Op, at: Time, now: Time);
    fn calc(&mut self, r: &CalcRecord);
    fn send(&mut self, r: &SendRecord);
    fn message(&mut self, r: &MessageRecord);
    fn post(&mut self, r: &PostRecord);
    /// Queued model: a message was received (see [`ReceivedRecord`]).
    fn received(&mut self, r: &ReceivedRecord);
    /// Queued model: the reception of message `(src, send_op)` was deferred by `detour`, an
    /// OS detour in progress at its arrival (reported before its [`ReceivedRecord`]).
    fn deferred(&mut self, src: u32, send_op: u32, detour: Time);
    /// The event being reported completed a rendezvous send of `sender` at `t`, raising its
    /// CPU `cpu` and send NIC `nic` from `cpu_before` and `nic_before` to at least `t`.
    fn raise(&mut self, sender: u32, cpu: u8, nic: u8, t: Time, cpu_before: Time, nic_before: Time);
}

/// No recording: the default; every call is compiled away.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoRecord;

impl Recorder for NoRecord {
    const ACTIVE: bool = false;
    #[inline(always)]
    fn ready(&mut self, _: u32, _: u32, _: &Op, _: Time, _: Time) {}
    #[inline(always)]
    fn calc(&mut self, _: &CalcRecord) {}
    #[inline(always)]
    fn send(&mut self, _: &SendRecord) {}
    #[inline(always)]
    fn message(&mut self, _: &MessageRecord) {}
    #[inline(always)]
    fn post(&mut self, _: &PostRecord) {}
    #[inline(always)]
    fn received(&mut self, _: &ReceivedRecord) {}
    #[inline(always)]
    fn deferred(&mut self, _: u32, _: u32, _: Time) {}
    #[inline(always)]
    fn raise(&mut self, _: u32, _: u8, _: u8, _: Time, _: Time, _: Time) {}
}
