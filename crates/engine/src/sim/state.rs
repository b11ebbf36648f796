//! The global engine's state: building it, the per-rank clocks, checked (or, in compat mode,
//! wrapping) arithmetic, and dependency releases.

use super::*;

impl<
        'a,
        P: Program,
        N: Noise,
        R: Recorder,
        Q: EventQueue<Ev>,
        const COMPAT: bool,
        const QUEUED: bool,
    > Sim<'a, P, N, R, Q, COMPAT, QUEUED>
{
    pub(super) fn new(
        prog: &'a P,
        cfg: &Config,
        noise: &'a mut N,
        rec: &'a mut R,
        heap: Q,
    ) -> Result<Self, EngineError> {
        let ranks = prog.num_ranks();
        if ranks > HOST_MASK {
            return Err(EngineError::TooLarge {
                what: "ranks",
                value: ranks as u64,
                max: HOST_MASK as u64,
            });
        }
        let ncpu = prog.num_cpus().max(1) as usize;
        let nnic = prog.num_nics().max(1) as usize;
        let counters = Counters::new(prog);
        let n = ranks as usize;
        let uses_idle = noise.uses_idle();
        Ok(Sim {
            prog,
            p: cfg.params,
            order: cfg.order,
            noise,
            rec,
            ranks,
            ncpu,
            nnic,
            rs: vec![
                RankState {
                    o: 0,
                    gs: 0,
                    gr: 0,
                    rq: NIL,
                    uq: NIL,
                };
                n
            ],
            lists: {
                let mut l = Lists::default();
                l.reset(n);
                l
            },
            enqueued: vec![0; n],
            extra: vec![0; n * (ncpu - 1 + 2 * (nnic - 1))],
            xstride: ncpu - 1 + 2 * (nnic - 1),
            counters,
            heap,
            batches: Vec::new(),
            free_batches: Vec::new(),
            ts: 0,
            messages: 0,
            freed: Vec::new(),
            now: 0,
            direct_on: direct_path_on(),
            direct_ok: false,
            direct: None,
            overflow: false,
            next_send: if QUEUED { vec![NOT_YET; n] } else { Vec::new() },
            parked: Default::default(),
            recv_end: if QUEUED || cfg.mpi_progress == MpiProgress::Polled {
                vec![0; n]
            } else {
                Vec::new()
            },
            last_active: if N::ACTIVE && uses_idle {
                vec![NEVER_COMMUNICATED; n]
            } else {
                Vec::new()
            },
            requeued: 0,
            start_deps: prog.has_start_dependents(),
            g_ticks: cfg.params.big_g.whole_units(),
            o_ticks: cfg.params.big_o.whole_units(),
            progress: cfg.progress,
            next_report: if cfg.progress.is_some() { 0 } else { u64::MAX },
            reported: 0,
            polled: Polled::new(cfg.mpi_progress, n),
        })
    }

    // --- clocks ------------------------------------------------------------------------------

    /// Position in `extra` of clock `i` ≥ 1 of `kind` of rank `h` (CPUs 1.., then send NICs
    /// 1.., then receive NICs 1..); index 0 lives in the rank's hot [`RankState`].
    #[inline]
    fn extra_index(&self, h: usize, kind: Clock, i: u8) -> usize {
        let first = match kind {
            Clock::Cpu => 0,
            Clock::Send => self.ncpu - 1,
            Clock::Recv => self.ncpu - 1 + self.nnic - 1,
        };
        h * self.xstride + first + i as usize - 1
    }
    #[inline(always)]
    pub(super) fn clock(&self, h: usize, kind: Clock, i: u8) -> Time {
        if i == 0 {
            *self.rs[h].clock(kind)
        } else {
            self.extra[self.extra_index(h, kind, i)]
        }
    }
    #[inline(always)]
    pub(super) fn set_clock(&mut self, h: usize, kind: Clock, i: u8, v: Time) {
        if i == 0 {
            *self.rs[h].clock_mut(kind) = v
        } else {
            let j = self.extra_index(h, kind, i);
            self.extra[j] = v
        }
    }
    // --- arithmetic -------------------------------------------------------------------------

    #[inline]
    pub(super) fn add(&mut self, a: Time, b: Time) -> Time {
        if COMPAT {
            a.wrapping_add(b)
        } else {
            or_overflow(a.checked_add(b), &mut self.overflow)
        }
    }

    /// `s - 1` as LogGOPSim computes it (wrapping) or saturating at 0.
    #[inline]
    fn s1(size: u64) -> u64 {
        if COMPAT {
            size.wrapping_sub(1)
        } else {
            size.saturating_sub(1)
        }
    }

    /// `(s-1)·G`.
    #[inline]
    pub(super) fn gap_bytes(&mut self, size: u64) -> Time {
        if COMPAT {
            Self::s1(size).wrapping_mul(self.g_ticks)
        } else {
            or_overflow(self.p.big_g.cost(Self::s1(size)), &mut self.overflow)
        }
    }

    /// `(s-1)·O`.
    #[inline]
    pub(super) fn overhead_bytes(&mut self, size: u64) -> Time {
        if COMPAT {
            Self::s1(size).wrapping_mul(self.o_ticks)
        } else {
            or_overflow(self.p.big_o.cost(Self::s1(size)), &mut self.overflow)
        }
    }

    // --- dependencies ------------------------------------------------------------------------

    #[inline]
    pub(super) fn mark(&mut self, host: u32, op: u32, kind: DepKind) {
        if kind == DepKind::Start && !self.start_deps {
            return;
        }
        let freed = &mut self.freed;
        self.counters
            .release(self.prog, host, op, kind, |d| freed.push((host, d)));
    }
}
