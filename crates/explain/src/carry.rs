//! The critical path's attribution carried forward: the parts and sensitivities of a run
//! without keeping its history, so that runs of any length can say why they take as long as
//! they do (the 16,384-rank ring's 1.6 billion events among them).
//!
//! [`crate::critical_path`] reads the path backwards from a full [`ActivityLog`]: from the
//! activity that set the finishing time, through binding predecessors, to 0. Every step's
//! parts depend only on the step itself (its activity and end) and on the activity after it
//! (which decides how much of the step was waiting, [`crate::path`]). So the attribution of
//! the path *up to the start* of an activity is known as soon as the activity runs: it is its
//! binding predecessor's attribution up to that predecessor's start, plus the predecessor's
//! step, cut as this activity's binding says. [`Carrier`] computes this *carry* for every
//! activity when the engine reports it (two carries per activity: through its CPU-side
//! predecessor, and through its NIC's when a queued-model message waited in its NIC's queue)
//! on a streaming [`ActivityLog`] (which keeps only the activities something may still refer
//! to), and at the end adds the last step: the parts, the derivatives and the tie count are
//! exactly those [`crate::critical_path`] reads from the full log of the same run (a
//! property test checks it on random programs, with and without noise, under both models).
//! What it cannot give is the list of the path's steps, ranks and messages.
//!
//! Memory: the streaming log's live activities (a few per rank: clock writers, ops freed and
//! not yet run, messages in flight) with two carries each, about
//! [`BYTES_PER_RANK`] per rank, whatever the run's length.

use loggops_engine::{
    simulate_global_recorded, CalcRecord, Config, EngineError, MessageRecord, Model, Noise, Op,
    Outcome, PerByte, PostRecord, Program, ReceivedRecord, Recorder, SendRecord, Time,
};

use crate::log::{Activity, ActivityLog, Exit, NONE};
use crate::path::{charge, link, CriticalPath, Parts, PathError, TermCounts};

/// The attribution of a path up to some point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Carry {
    parts: Parts,
    counts: TermCounts,
    ties: u32,
}

/// Which carry of an activity a successor continues from: its NIC interval's (a send's NIC
/// and arrival ends, which start at `nic_start`) or the other.
fn side(exit: Exit) -> usize {
    matches!(exit, Exit::Nic | Exit::Arrival) as usize
}

/// A [`Recorder`] that carries the critical path's attribution forward (see the module docs).
pub struct Carrier<'p, P: Program> {
    prog: &'p P,
    log: ActivityLog,
    big_o: PerByte,
    /// Per slot of the log: the carry up to the start of its CPU-side and NIC-side intervals.
    carry: Vec<[Carry; 2]>,
    seen: u64,
}

/// Memory of a [`Carrier`] per rank, bytes: measured peak live activities (about 6 per rank
/// on Schedgen's collectives) with their carries and the log's per-rank writers, rounded up.
pub const BYTES_PER_RANK: u64 = 4096;

impl<'p, P: Program> Carrier<'p, P> {
    /// A carrier for a run of `prog` under `model`, whose per-byte CPU overhead is `big_o`
    /// (used only to count ties).
    pub fn new(prog: &'p P, model: Model, big_o: PerByte) -> Self {
        Carrier {
            prog,
            log: ActivityLog::new(prog).model(model).streaming(),
            big_o,
            carry: Vec::new(),
            seen: 0,
        }
    }

    /// Collect the log once it holds `slots` slots (see [`ActivityLog::collect_from`]).
    pub fn collect_from(mut self, slots: usize) -> Self {
        self.log =
            std::mem::replace(&mut self.log, ActivityLog::new(self.prog)).collect_from(slots);
        self
    }

    /// An upper bound of the memory a carrier for `prog` takes, bytes.
    pub fn estimate_bytes(prog: &P) -> u64 {
        (prog.num_ranks() as u64).saturating_mul(BYTES_PER_RANK)
    }

    /// The streaming log (its collections say how many activities stayed live).
    pub fn log(&self) -> &ActivityLog {
        &self.log
    }

    /// After each report: the carries of the activity it pushed, if any.
    #[inline]
    fn after(&mut self) {
        if self.log.pushes() == self.seen {
            return;
        }
        self.seen = self.log.pushes();
        let i = self.log.current() as usize;
        if self.carry.len() <= i {
            self.carry.resize(i + 1, [Carry::default(); 2]);
        }
        let x = &self.log.nodes[i];
        let cpu = self.carry_into(x, x.pred, x.pred_exit, false);
        let nic = if x.nic_start > x.start {
            self.carry_into(x, x.nic_pred, x.nic_pred_exit, true)
        } else {
            cpu
        };
        self.carry[i] = [cpu, nic];
    }

    /// The carry of `x` through its predecessor `pred`'s end `exit`: the predecessor's carry
    /// and its step, cut by how `x` came to start there.
    fn carry_into(&self, x: &Activity, pred: u32, exit: Exit, nic_queue: bool) -> Carry {
        if pred == NONE {
            return Carry::default();
        }
        let w = &self.log.nodes[pred as usize];
        let mut c = self.carry[pred as usize][side(exit)];
        let (_, wait) = link(self.prog, x, nic_queue, w, exit);
        let len = w.exit_time(exit).saturating_sub(w.start_of(exit));
        let (ties, _) = charge(
            &self.log.bases,
            w,
            exit,
            len,
            wait,
            self.big_o,
            &mut c.parts,
            &mut c.counts,
        );
        c.ties += ties;
        c
    }

    /// The attribution of the run that ended with the finishing times `finish` (the engine's
    /// [`Outcome::finish`]): parts, derivatives and ties as [`crate::critical_path`] reads
    /// them, without the steps, ranks and messages (empty).
    pub fn path(&self, finish: &[Time]) -> Result<CriticalPath, PathError> {
        let (t_end, rank) =
            finish.iter().enumerate().fold(
                (0, 0),
                |best, (r, &t)| if t > best.0 { (t, r as u32) } else { best },
            );
        let mut c = Carry {
            ties: finish.iter().filter(|&&t| t == t_end).count() as u32 - 1,
            ..Carry::default()
        };
        match self.log.final_writer(rank).filter(|w| w.2 == t_end) {
            Some((node, exit, _)) => {
                let a = &self.log.nodes[node as usize];
                let start = a.start_of(exit);
                if start > t_end {
                    return Err(PathError::Order {
                        what: format!("{:?} of rank {} op {} at {t_end} ps", a.kind, a.rank, a.op),
                    });
                }
                let before = self.carry[node as usize][side(exit)];
                let (ties, _) = charge(
                    &self.log.bases,
                    a,
                    exit,
                    t_end - start,
                    0,
                    self.big_o,
                    &mut c.parts,
                    &mut c.counts,
                );
                c.ties += ties + before.ties;
                for (p, q) in c.parts.0.iter_mut().zip(before.parts.0) {
                    *p += q;
                }
                let k = &mut c.counts;
                k.latency += before.counts.latency;
                k.o += before.counts.o;
                k.g += before.counts.g;
                k.big_g_bytes += before.counts.big_g_bytes;
                k.big_o_bytes += before.counts.big_o_bytes;
            }
            None if t_end > 0 => return Err(PathError::Gap { at: t_end }),
            None => {}
        }
        // The steps tile [0, T] exactly when every carried step began where the one before
        // it ended.
        if c.parts.total() != t_end as i64 {
            return Err(PathError::Gap {
                at: (t_end as i64 - c.parts.total()).max(0) as Time,
            });
        }
        Ok(CriticalPath {
            finish: t_end,
            rank,
            parts: c.parts,
            counts: c.counts,
            steps: Vec::new(),
            ranks: Vec::new(),
            messages: Vec::new(),
            ties: c.ties,
        })
    }
}

impl<P: Program> Recorder for Carrier<'_, P> {
    const ACTIVE: bool = true;
    fn ready(&mut self, rank: u32, op: u32, o: &Op, at: Time, now: Time) {
        self.log.ready(rank, op, o, at, now);
    }
    fn calc(&mut self, r: &CalcRecord) {
        self.log.calc(r);
        self.after();
    }
    fn send(&mut self, r: &SendRecord) {
        self.log.send(r);
        self.after();
    }
    fn message(&mut self, r: &MessageRecord) {
        self.log.message(r);
        self.after();
    }
    fn post(&mut self, r: &PostRecord) {
        self.log.post(r);
        self.after();
    }
    fn received(&mut self, r: &ReceivedRecord) {
        self.log.received(r);
        self.after();
    }
    fn deferred(&mut self, src: u32, send_op: u32, detour: Time) {
        self.log.deferred(src, send_op, detour);
    }
    fn raise(
        &mut self,
        sender: u32,
        cpu: u8,
        nic: u8,
        t: Time,
        cpu_before: Time,
        nic_before: Time,
    ) {
        self.log.raise(sender, cpu, nic, t, cpu_before, nic_before);
    }
}

/// Runs `prog` on the global engine carrying the critical path's attribution forward; the
/// outcome is the one [`loggops_engine::simulate`] gives, the path (without its steps) is
/// `None` when the run did not complete.
pub fn attribute<P: Program, N: Noise>(
    prog: &P,
    cfg: &Config,
    noise: &mut N,
) -> Result<(Outcome, Option<Result<CriticalPath, PathError>>), EngineError> {
    let mut c = Carrier::new(prog, cfg.model, cfg.params.big_o);
    let out = simulate_global_recorded(prog, cfg, noise, &mut c)?;
    let path = out.completed().then(|| c.path(&out.finish));
    Ok((out, path))
}
