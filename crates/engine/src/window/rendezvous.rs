//! Rendezvous sends (larger than S) and their release when a receive matches their message.
//!
//! A rendezvous message pays `1 + rndv_extra_latencies` latencies (`Win::send`). A rendezvous
//! send completes when a receive matches its message: the global engine then raises the
//! sender's CPU and NIC clocks to the match time and frees the send's dependents, on another
//! rank and with no delay. The raise changes nothing the sender does later (every later event
//! of the sender is due at the match or after and compares the clocks with its own time, and
//! every clock value set later is at least that time), only the sender's final CPU clock, so
//! this engine keeps the latest match per sender ([`Win::release_late`]) and takes the maximum
//! at the end (`Win::run`). A rendezvous send that frees ops cannot be handled so: the engine
//! gives up on it ([`GiveUp::Rendezvous`]; Schedgen's disseminations and rings have none).
//! LogGOPSim also takes a match as the send's completion when the *receive* is larger than S,
//! whatever the send's size ([`Win::receive_completes`]).
//!
//! Guarded by `rendezvous_sends_without_dependents_run_windowed` and
//! `rendezvous_only_programs_run_in_wider_windows` (`tests.rs`), and on real profiles by
//! `windowed_engine_runs_rendezvous_sends_that_free_nothing` (`tests/windowed.rs`).

use super::{GiveUp, Win};
use crate::noise::Noise;
use crate::params::Time;
use crate::program::{DepKind, Op, Program};

impl<'a, P: Program, N: Noise, const FULL: bool, const QUEUED: bool> Win<'a, P, N, FULL, QUEUED> {
    /// Whether op `id` of `rank` has completion dependents: a rendezvous send that has some
    /// frees them when its receive matches, on another rank with no delay, which this
    /// engine cannot order (it gives up). Inlined into its two cold callers: asked at every
    /// rendezvous send, a call cost 17 instructions.
    #[inline(always)]
    fn completes_others(&self, rank: u32, id: u32) -> bool {
        let mut any = false;
        self.prog
            .for_each_dependent(rank, id, DepKind::Done, |_| any = true);
        any
    }

    /// A receive larger than S took the message of send `id` of rank `s` at `t`, which
    /// LogGOPSim takes as that send's completion, whatever its size.
    #[cold]
    #[inline(never)]
    pub(super) fn receive_completes(&mut self, s: u32, id: u32, t: Time) -> Result<(), GiveUp> {
        if self.completes_others(s, id) {
            return Err(GiveUp::Rendezvous);
        }
        self.release_late(s, t);
        Ok(())
    }

    /// A receive matched at `t` a rendezvous message of rank `s` whose send frees nothing.
    /// The global engine then raises `s`'s CPU and NIC clocks to at least `t`. Nothing else
    /// of `s` sees that: every later event of `s` is due at `t` or after and compares the
    /// clocks with its own time, and every clock value set later is at least that time. So
    /// only `s`'s final CPU clock shows it, as `max(clock, t)`, which is taken at the end.
    #[inline(always)]
    pub(super) fn release_late(&mut self, s: u32, t: Time) {
        if QUEUED {
            // The queued model holds nothing of the sender (its receiver's completion counts
            // instead, see `events.rs`).
            return;
        }
        match self.late.get_mut(s as usize) {
            Some(l) => *l = (*l).max(t),
            None => self.first_late(s, t),
        }
    }

    /// [`Self::release_late`] at the run's first rendezvous match, which allocates `late`.
    /// Only this stays out of line: a call per rendezvous message cost a 1024-rank Alps ring
    /// 26 instructions per message (2 % of its run).
    #[cold]
    #[inline(never)]
    fn first_late(&mut self, s: u32, t: Time) {
        self.late.resize(self.ranks as usize, 0);
        if let Some(l) = self.late.get_mut(s as usize) {
            *l = (*l).max(t);
        }
    }

    /// [`Self::send`] of a rendezvous send, unless it frees ops.
    #[cold]
    #[inline(never)]
    pub(super) fn rendezvous_send(&mut self, id: u32, op: Op, t: Time) -> Result<(), GiveUp> {
        if self.completes_others(self.host, id) {
            return Err(GiveUp::Rendezvous);
        }
        self.send::<true>(id, op, t)
    }
}
