//! The narrow interface through which noise enters the engine.
//!
//! The engine asks a [`Noise`] for the costs of each message when it is sent and when it is
//! received, and for the OS detour time inside each CPU interval. Implementations must be
//! deterministic functions of their own seed and the arguments (a counter-based generator keyed
//! by the message identity `(src, send_op)`), because the same message is asked about twice:
//! [`Noise::send_costs`] and [`Noise::recv_costs`] must agree on `gap_bytes`. State an
//! implementation keeps between calls may only be a cache of such answers: the engine may run
//! part of a repetition with one instance and then start the repetition over with the same
//! instance (see [`crate::sim::simulate`]).

use crate::params::{Params, Time};

/// The idle time [`Noise::send_costs_idle`] is given for a send of a rank that has not
/// communicated yet in the run: a run begins after an idle period (a benchmark's iteration
/// after its sleep, an application's communication after its computation).
pub const NEVER_COMMUNICATED: Time = Time::MAX;

/// The idle time of a send starting at `t` on a rank that last communicated (started a send or
/// completed a receive) at `*last` ([`NEVER_COMMUNICATED`]: not yet, idle since time 0), and
/// records `t`. `None`
/// (the engine keeps no times because the noise ignores them) gives [`NEVER_COMMUNICATED`].
#[inline]
pub fn idle_time(last: Option<&mut Time>, t: Time) -> Time {
    match last {
        Some(last) => {
            // A rank is active from the run's start (the end of the barrier or `MPI_Init` that
            // precedes a measured program): its first send is idle for as long as it ran.
            let idle = if *last == NEVER_COMMUNICATED {
                t
            } else {
                t.saturating_sub(*last)
            };
            *last = t;
            idle
        }
        None => NEVER_COMMUNICATED,
    }
}

/// Records that a rank completed a receive at `t` (see [`idle_time`]).
#[inline]
pub fn communicated(last: Option<&mut Time>, t: Time) {
    if let Some(last) = last {
        if *last == NEVER_COMMUNICATED || *last < t {
            *last = t;
        }
    }
}

/// What a message costs, as drawn for this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgCosts {
    /// Latency L of this message.
    pub latency: Time,
    /// CPU overhead o charged for this message (at the sender in `send_costs`, at the receiver
    /// in `recv_costs`).
    pub o: Time,
    /// NIC gap g charged for this message (send NIC resp. receive NIC).
    pub g: Time,
    /// Total per-byte gap of the message: the cost of `size - 1` bytes at the drawn G (LogGP's
    /// `(s-1)·G`), charged at the sender NIC, the receiver NIC and the receiver CPU.
    pub gap_bytes: Time,
}

/// A noise model instance for one repetition. A clone answers as the original (what it keeps
/// is a cache, and the clone's is its own): a windowed run on several threads gives each
/// thread a clone (see [`crate::window`]).
pub trait Noise: Clone + Send {
    /// `false` only for [`NoNoise`]: lets the engine skip all calls.
    const ACTIVE: bool;
    /// Costs of the message sent by op `send_op` of rank `src` to `dst` (called at the send).
    fn send_costs(&mut self, p: &Params, src: u32, dst: u32, send_op: u32, size: u64) -> MsgCosts;
    /// [`Self::send_costs`] for an engine that hands the message's `gap_bytes` to
    /// [`Self::recv_costs_known_gap`] itself: nothing need be kept for the receiver.
    #[inline]
    fn send_costs_untracked(
        &mut self,
        p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
    ) -> MsgCosts {
        self.send_costs(p, src, dst, send_op, size)
    }
    /// Whether the costs of a message depend on how long its sender had not communicated
    /// before it (its *idle time*: since it last started a send or completed a receive): the
    /// engine then calls [`Self::send_costs_idle`] with it. `false` (the default) lets the
    /// engine skip keeping those times.
    #[inline]
    fn uses_idle(&self) -> bool {
        false
    }
    /// [`Self::send_costs`] of a message whose sender last communicated `idle` before this
    /// send (since time 0 if it had not yet; [`NEVER_COMMUNICATED`]: unknown). Only the latency may depend on `idle`:
    /// the receiver's costs ([`Self::recv_costs`]) do not. The default ignores it.
    #[inline]
    fn send_costs_idle(
        &mut self,
        p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        _idle: Time,
    ) -> MsgCosts {
        self.send_costs(p, src, dst, send_op, size)
    }
    /// [`Self::send_costs_untracked`] with the sender's idle time (see
    /// [`Self::send_costs_idle`]).
    #[inline]
    fn send_costs_untracked_idle(
        &mut self,
        p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        idle: Time,
    ) -> MsgCosts {
        if self.uses_idle() {
            self.send_costs_idle(p, src, dst, send_op, size, idle)
        } else {
            self.send_costs_untracked(p, src, dst, send_op, size)
        }
    }
    /// Costs of the same message at the receiver; `gap_bytes` must equal the send's.
    fn recv_costs(&mut self, p: &Params, src: u32, dst: u32, send_op: u32, size: u64) -> MsgCosts;
    /// OS detour time injected into the CPU interval `[t0, t1)` of `rank`.
    fn os_detour(&mut self, rank: u32, t0: Time, t1: Time) -> Time;
    /// [`Self::recv_costs`] when the engine already holds the message's `gap_bytes` (from its
    /// `send_costs`): implementations may skip drawing it again.
    #[inline]
    fn recv_costs_known_gap(
        &mut self,
        p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        _gap_bytes: Time,
    ) -> MsgCosts {
        self.recv_costs(p, src, dst, send_op, size)
    }
    /// `(o, g)` at the receiver when they are the same for every message (nothing is drawn at
    /// the receiver): an engine that holds the gap may then use them instead of asking
    /// [`Self::recv_costs_known_gap`]. `None` (the default): ask per message.
    fn fixed_recv_overheads(&self) -> Option<(Time, Time)> {
        None
    }
    /// A lower bound of `o + latency` over every message this instance can produce, i.e. of
    /// how long after its send a message arrives. `0` (the default) when there is none; then
    /// the engine never uses its windowed form (see [`crate::window`]).
    fn min_message_delay(&self) -> Time {
        0
    }
    /// A lower bound of the latency drawn for any message (`0`, the default, is always
    /// correct). A rendezvous message adds `rndv_extra_latencies` times its latency to its
    /// delay, so in a run with rendezvous messages only, every message arrives at least
    /// `min_message_delay() + rndv_extra_latencies · min_latency()` after its send.
    fn min_latency(&self) -> Time {
        0
    }
    /// The costs of message `(src → dst, size bytes)` without network noise: what
    /// [`Self::send_costs`] would return if nothing were drawn (a model with placements gives
    /// the base parameters of the message's placement). Recorders compare the drawn costs
    /// with these to attribute network noise. The default is the engine's parameters `p`
    /// (`gap_bytes` = `G·(size−1)`, saturating); only asked when recording.
    fn base_costs(&self, p: &Params, _src: u32, _dst: u32, size: u64) -> MsgCosts {
        MsgCosts {
            latency: p.l,
            o: p.o,
            g: p.g,
            gap_bytes: p.big_g.cost(size.saturating_sub(1)).unwrap_or(Time::MAX),
        }
    }
}

/// No noise: the engine's default; every call is compiled away.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoNoise;

impl Noise for NoNoise {
    const ACTIVE: bool = false;
    fn send_costs(&mut self, _: &Params, _: u32, _: u32, _: u32, _: u64) -> MsgCosts {
        unreachable!("NoNoise is never asked")
    }
    fn recv_costs(&mut self, _: &Params, _: u32, _: u32, _: u32, _: u64) -> MsgCosts {
        unreachable!("NoNoise is never asked")
    }
    fn os_detour(&mut self, _: u32, _: Time, _: Time) -> Time {
        0
    }
}
