//! How a run is simulated: [`Config`], the [`Model`] and [`Order`] it follows, and the
//! caller's [`Progress`] hook.

use std::sync::atomic::{AtomicBool, AtomicU64};

use super::*;

/// How ops freed by the same event are ordered before they are enqueued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// By type (send, recv, calc), in program order within a type: LogGOPSim with
    /// `std::stable_sort`, the intended semantics.
    #[default]
    Stable,
    /// By type with libstdc++'s unstable `std::sort` permutation: upstream LogGOPSim exactly,
    /// including its deadlocks on Schedgen's ring and recursive-doubling allreduce.
    Libstdcxx,
}

/// How a rank's CPU and NIC are shared between its sends, receives and computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Model {
    /// LogGOPSim's rules (LOGGOPSIM.md §6): a send waits until its CPU *and* its NIC are free;
    /// a message arriving at a rank waits for the rank's CPU and receive NIC, then holds the
    /// CPU for `o + (s−1)·max(O, G)` and the NIC for `g + (s−1)·G`, in arrival order; a
    /// rendezvous send completes when its receive is matched and holds the sender's CPU and
    /// NIC until then. The answer is LogGOPSim's to the tick, but it is not monotone: a message
    /// that arrives early (because its link is faster) takes a CPU or NIC that a more urgent
    /// send or message then waits for, so a faster link can make a run slower (see
    /// [`Model::Queued`]).
    #[default]
    LogGOPSim,
    /// The same costs, shared so that a faster resource never makes a run slower:
    /// * a rank starts its sends in program (op id) order, as an MPI process issues them;
    /// * a send needs only its CPU: it pays `o + (s−1)·O` when the CPU is free and then waits
    ///   in its NIC's queue, which sends one message at a time for `g + (s−1)·G`; the message
    ///   arrives `o + L` after it leaves the NIC (plus the rendezvous latencies);
    /// * receiving takes neither the CPU nor the NIC away from other work: a message is
    ///   received `o + (s−1)·max(O, G)` after it arrives (plus an OS detour in progress at its
    ///   arrival), and its receive completes then, or when it is posted if that is later;
    /// * a rendezvous send completes when its message is received; it holds nothing meanwhile;
    /// * an op starts no earlier than the event that frees it, and a rank finishes when its
    ///   CPU is free and its last receive has completed.
    ///
    /// Every start time is then a maximum of sums of the parameters over a fixed set of
    /// chains whenever the order of sends, the matching of messages and the order of calcs
    /// and sends on a CPU do not depend on timing (for Schedgen's collectives the first two
    /// hold by construction), so making a parameter smaller never makes such a run slower.
    /// If program order would stall a run (a send waits for a lower-numbered one that can
    /// only run after it), the lowest waiting send of the lowest rank starts anyway.
    Queued,
}

/// How a run is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub params: Params,
    pub order: Order,
    /// How CPUs and NICs are shared ([`Model`]). Compat mode requires [`Model::LogGOPSim`].
    pub model: Model,
    /// LogGOPSim compatibility: u64 wrapping arithmetic, `(s-1)` wraps for 0-byte messages
    /// (they cost `o - G` at the receiver), per-byte costs in whole ticks. Otherwise every
    /// addition is checked and `s-1` saturates at 0.
    pub compat: bool,
    /// A progress hook the caller owns (see [`Progress`]); `None` costs nothing.
    pub progress: Option<&'static Progress>,
    /// Whether a rendezvous message advances while its sender or receiver computes
    /// ([`MpiProgress`]; [`MpiProgress::Async`], the default, is LogGOPSim's behaviour).
    pub mpi_progress: MpiProgress,
}

impl Config {
    pub fn new(params: Params) -> Config {
        Config {
            params,
            order: Order::Stable,
            model: Model::LogGOPSim,
            compat: false,
            progress: None,
            mpi_progress: MpiProgress::Async,
        }
    }
}

/// A caller-owned progress hook for long runs of the global engine ([`simulate_global`], and so
/// every noiseless run): the engine adds the number of ops it has started to
/// [`Progress::ops_started`] about every [`Progress::EVERY`] events (and the rest when the run
/// ends, so a completed run adds exactly `Program::total_ops`), and stops with
/// [`EngineError::Stopped`] at the next such point once [`Progress::request_stop`] was called.
/// The engine does no I/O: a caller polls the counter from another thread (e.g. to draw a
/// progress bar). Several runs may share one hook; their counts add up. The hot loop pays one
/// comparison per event for it, with or without a hook. The windowed engine (noisy runs)
/// does not report.
#[derive(Debug, Default)]
pub struct Progress {
    pub(super) ops: AtomicU64,
    stop: AtomicBool,
}

impl Progress {
    /// Events between two reports.
    pub const EVERY: u64 = 1 << 14;

    pub const fn new() -> Progress {
        Progress {
            ops: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        }
    }
    /// Ops started so far by the runs using this hook.
    pub fn ops_started(&self) -> u64 {
        self.ops.load(AtomicOrdering::Relaxed)
    }
    /// Sets the counter back to 0 (between runs).
    pub fn reset(&self) {
        self.ops.store(0, AtomicOrdering::Relaxed);
    }
    /// Asks every run using this hook to stop at its next report.
    pub fn request_stop(&self) {
        self.stop.store(true, AtomicOrdering::Relaxed);
    }
    /// Counts `n` more ops started (the batched engine's reports).
    pub(crate) fn add_ops(&self, n: u64) {
        self.ops.fetch_add(n, AtomicOrdering::Relaxed);
    }
    pub fn stop_requested(&self) -> bool {
        self.stop.load(AtomicOrdering::Relaxed)
    }
    /// Withdraws [`Progress::request_stop`], for the next run of a process that runs several
    /// (a library front end whose user pressed Ctrl-C once).
    pub fn clear_stop(&self) {
        self.stop.store(false, AtomicOrdering::Relaxed);
    }
}

/// Two hooks are equal only when they are the same object.
impl PartialEq for Progress {
    fn eq(&self, other: &Progress) -> bool {
        std::ptr::eq(self, other)
    }
}
impl Eq for Progress {}
