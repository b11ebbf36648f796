//! What a run returns ([`Outcome`], [`EngineError`]) and how the global engine builds it.

use super::*;

/// An entry left in a match queue at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueEntry {
    /// Source rank ([`ANY`](crate::ANY) for an ANY_SOURCE receive).
    pub src: u32,
    /// Tag ([`ANY`](crate::ANY) for ANY_TAG).
    pub tag: u32,
    /// The receive op (posted-receive queue) or the sender's send op (unexpected queue).
    pub op: u32,
}

/// What was left over on one rank when the event queue ran dry.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RankLeftovers {
    pub rank: u32,
    /// Messages that arrived but were never received (LogGOPSim's "unexpected queue").
    pub unexpected: Vec<QueueEntry>,
    /// Receives that were posted but never matched.
    pub posted: Vec<QueueEntry>,
    /// Number of ops that never became executable.
    pub never_ran: u64,
    /// Some of those ops (all of them for explicit schedules, up to a limit).
    pub never_ran_ops: Vec<u32>,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Per rank: the time its last CPU became free (LogGOPSim's reported host time).
    pub finish: Vec<Time>,
    /// LogGOPSim's event count: ops enqueued + messages sent.
    pub events: u64,
    /// Messages sent.
    pub messages: u64,
    /// Ranks with unmatched messages, unmatched receives or ops that never ran. Empty when the
    /// schedule completed.
    pub leftovers: Vec<RankLeftovers>,
}

impl Outcome {
    /// The latest finishing time and the first rank that has it.
    pub fn max(&self) -> (Time, u32) {
        let mut best = (0, 0);
        for (r, &t) in self.finish.iter().enumerate() {
            if t > best.0 {
                best = (t, r as u32);
            }
        }
        best
    }
    /// True when every op ran and every message was received.
    pub fn completed(&self) -> bool {
        self.leftovers.is_empty()
    }
    /// True when a match queue is non-empty (what LogGOPSim reports).
    pub fn has_queue_leftovers(&self) -> bool {
        self.leftovers
            .iter()
            .any(|l| !l.unexpected.is_empty() || !l.posted.is_empty())
    }
}

/// A run that cannot produce a meaningful time.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum EngineError {
    #[error(
        "time overflow at rank {rank}, op #{op}: the simulated time exceeds {max} ps (about 213 \
         days); check the parameters and sizes (use --compat loggopsim for LogGOPSim's wrapping \
         arithmetic)",
        max = u64::MAX
    )]
    Overflow { rank: u32, op: u32 },
    #[error("the schedule uses {what} {value} but the engine supports at most {max}")]
    TooLarge {
        what: &'static str,
        value: u64,
        max: u64,
    },
    #[error("the run was stopped by its caller before it ended (interrupted)")]
    Stopped,
    #[error(
        "rank {rank}, op #{op}: {what} {peer} does not exist (the schedule has {ranks} ranks)"
    )]
    BadPeer {
        rank: u32,
        op: u32,
        what: &'static str,
        peer: u32,
        ranks: u32,
    },
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
    /// The outcome of the run once its queue ran dry: finishing times, counts, leftovers.
    pub(super) fn finish(self) -> Outcome {
        if let Some(p) = self.progress {
            let started = self.ts - self.messages - self.extra_ts();
            p.ops
                .fetch_add(started - self.reported, AtomicOrdering::Relaxed);
        }
        let finish: Vec<Time> = (0..self.ranks as usize)
            .map(|h| {
                let cpu = (0..self.ncpu as u8)
                    .map(|c| self.clock(h, Clock::Cpu, c))
                    .max()
                    .unwrap_or(0);
                if QUEUED || self.polled.is_some() {
                    // The polled rules may complete a receive after its CPU work.
                    cpu.max(self.recv_end[h])
                } else {
                    cpu
                }
            })
            .collect();
        let mut leftovers = Vec::new();
        for r in 0..self.ranks {
            let h = r as usize;
            let unexpected: Vec<QueueEntry> = self
                .lists
                .uq
                .iter(self.rs[h].uq)
                .map(|u| QueueEntry {
                    src: u.src,
                    tag: u.tag,
                    op: u.send_op,
                })
                .collect();
            let prog = self.prog;
            let posted: Vec<QueueEntry> = self
                .lists
                .rq
                .iter(self.rs[h].rq)
                .flat_map(|run| {
                    (0..run.count).map(move |i| {
                        let op = run.first + i * run.stride;
                        let (src, tag) = if run.src == MIXED {
                            let o = prog.op(r, op);
                            (o.peer, o.tag)
                        } else {
                            (run.src, run.tag)
                        };
                        QueueEntry { src, tag, op }
                    })
                })
                .collect();
            let never_ran = self.prog.num_ops(r) as u64 - self.enqueued[h] as u64;
            let never_ran_ops = if never_ran > 0 {
                self.counters.waiting_ops(r, self.prog.num_ops(r), 1000)
            } else {
                Vec::new()
            };
            if !unexpected.is_empty() || !posted.is_empty() || never_ran > 0 {
                leftovers.push(RankLeftovers {
                    rank: r,
                    unexpected,
                    posted,
                    never_ran,
                    never_ran_ops,
                });
            }
        }
        Outcome {
            finish,
            events: self.ts - self.requeued - self.extra_ts(),
            messages: self.messages,
            leftovers,
        }
    }
}
