//! The run: window 0 (every rank's roots, queued before anything else, then its other events
//! of that window), then window after window in time order, each rank's events of a window run
//! to the end before the next rank's; and the outcome.
//!
//! Within a window ranks cannot influence each other, so the order in which ranks are visited
//! never matters. The ranks of a dense window (entries for more than a few ranks per 64) are
//! visited in ascending order, read off the bitmap of [`Groups`], so state is touched in memory
//! order; those of a sparse one in the order their first entries were written (scanning the
//! bitmap would cost more than the window). The randomized test runs every program a second
//! time visiting the ranks in written order (`run_windowed`'s `written_order`) and compares.
//!
//! A run that ends with an op never enqueued, or a receive or message left unmatched, gives up
//! ([`GiveUp::Error`], as on overflow): the global engine then reports what went wrong.

use std::collections::BinaryHeap;

use super::buffers::{Groups, Scratch, Slot, RING, SLOT_KEEP, SPARES};
use super::entry::{Ent, Min, Stamp};
use super::parallel::{Part, NONE};
use super::ties::NO_REC;
use super::{GiveUp, Rank, Win};
use crate::counters::Counters;
use crate::matching::NIL;
use crate::noise::Noise;
use crate::params::{Params, Time};
use crate::program::{OpKind, Program};
use crate::sim::Outcome;

impl<'a, P: Program, N: Noise, const FULL: bool, const QUEUED: bool> Win<'a, P, N, FULL, QUEUED> {
    pub(super) fn new(
        prog: &'a P,
        p: Params,
        noise: &'a mut N,
        width: Time,
        s: Box<Scratch>,
        part: Part,
    ) -> Self {
        let n = prog.num_ranks() as usize;
        let Scratch {
            mut rs,
            mut lists,
            mut ring,
            mut far,
            mut heap,
            mut freed,
            spares,
            mut groups,
            mut records,
            mut late,
        } = *s;
        let idle = Rank {
            o: 0,
            gs: 0,
            gr: 0,
            rq: NIL,
            uq: NIL,
        };
        rs.clear();
        rs.resize(n, idle);
        lists.reset(n);
        ring.resize_with(RING as usize, Slot::default);
        ring.iter_mut().for_each(Slot::clear);
        far.clear();
        heap.clear();
        freed.clear();
        groups.reset(n);
        records.clear();
        late.clear();
        let recv_og = noise.fixed_recv_overheads();
        let noise_uses_idle = noise.uses_idle();
        Win {
            prog,
            p,
            noise,
            ranks: prog.num_ranks(),
            part,
            out: vec![Vec::new(); part.threads as usize],
            out_min: NONE,
            rs,
            me: idle,
            lists,
            counters: Counters::for_ranks(prog, part.lo..part.hi),
            start_deps: prog.has_start_dependents(),
            width,
            recip: (u64::MAX / width).max(1),
            cur: 0,
            w_end: width,
            ring,
            in_ring: 0,
            far: BinaryHeap::from(far),
            heap: BinaryHeap::from(heap),
            heap_first: Time::MAX,
            tie: Vec::new(),
            next: Ent::new(0, 0, 0, 0, 0, 0, 0, Stamp::default()),
            has_next: false,
            host: 0,
            now: 0,
            parent: Stamp::default(),
            parent_in: NO_REC,
            parent_rec: NO_REC,
            records,
            too_deep: false,
            deep_tie: false,
            seq: 0,
            freed,
            spares,
            groups,
            messages: 0,
            enqueued: 0,
            open: 0,
            overflow: false,
            written_order: false,
            recv_og,
            late,
            next_send: Vec::new(),
            parked: Default::default(),
            parked_min: Vec::new(),
            last_active: if noise_uses_idle {
                vec![crate::noise::NEVER_COMMUNICATED; n]
            } else {
                Vec::new()
            },
        }
    }

    pub(super) fn into_scratch(self) -> Box<Scratch> {
        Box::new(Scratch {
            rs: self.rs,
            lists: self.lists,
            ring: self.ring,
            far: self.far.into_vec(),
            heap: self.heap.into_vec(),
            freed: self.freed,
            spares: self.spares,
            groups: self.groups,
            records: self.records,
            late: self.late,
        })
    }

    /// Why a run with `overflow` set stops.
    #[cold]
    fn stopped(&self) -> GiveUp {
        if self.too_deep {
            GiveUp::Tie
        } else {
            GiveUp::Error
        }
    }

    pub(super) fn run(&mut self) -> Result<Outcome, GiveUp> {
        self.run_roots()?;
        let mut res = Ok(());
        while let Some(w) = self.next_window() {
            res = self.run_at(w);
            if res.is_err() {
                break;
            }
        }
        res?;
        // Queued model: sends left waiting for lower-numbered ones would stall the run; the
        // global engine starts them out of order.
        if self.open != 0 || self.enqueued != self.prog.total_ops() || !self.parked.is_empty() {
            return Err(GiveUp::Error);
        }
        Ok(Outcome {
            finish: (self.rs.iter().enumerate())
                .map(|(i, r)| r.o.max(self.late.get(i).copied().unwrap_or(0)))
                .collect(),
            // LogGOPSim's count: ops enqueued and messages.
            events: self.enqueued + self.messages,
            messages: self.messages,
            leftovers: Vec::new(),
        })
    }

    /// Window 0: every rank's roots (queued before anything else), then its other events.
    pub(super) fn run_roots(&mut self) -> Result<(), GiveUp> {
        for r in self.part.lo..self.part.hi {
            self.host = r;
            self.me = self.rs[r as usize];
            self.roots()?;
            self.drain()?;
            self.rs[r as usize] = self.me;
        }
        Ok(())
    }

    /// Runs window `w`, which holds entries and is the next window that does.
    pub(super) fn run_at(&mut self, w: u64) -> Result<(), GiveUp> {
        self.cur = w;
        self.w_end = (w + 1).saturating_mul(self.width);
        let slot = (w % RING) as usize;
        // Nothing is queued for window `w + RING` while `w` runs: the slot stays empty.
        let mut entries = std::mem::take(&mut self.ring[slot]);
        self.in_ring -= entries.ents.len();
        let res = self.run_window(&entries);
        // The emptied buffer goes back to its slot, or to the spares when it is large
        // (`buffers.rs`; written out here: a call by value copied the buffer).
        entries.clear();
        if entries.ents.capacity() <= SLOT_KEEP {
            self.ring[slot] = entries;
        } else if self.spares.len() < SPARES {
            self.spares.push(entries);
        }
        res
    }

    /// Runs the entries of the current window, rank by rank: in ascending order (read off the
    /// bitmap) when the window has entries for more than a few ranks per bitmap word, else in
    /// the order their first entries were written.
    fn run_window(&mut self, slot: &Slot) -> Result<(), GiveUp> {
        let mut g = std::mem::take(&mut self.groups);
        g.group(&slot.ranks);
        let mut res = Ok(());
        // The bitmap words of this engine's ranks (all of them on one thread).
        let words = self.part.lo as usize / 64..(self.part.hi as usize).div_ceil(64);
        if slot.ranks.len() >= words.len() / 4 && !self.written_order {
            'words: for w in words {
                let mut b = std::mem::take(&mut g.bits[w]);
                while b != 0 {
                    let rank = (w * 64) as u32 + b.trailing_zeros();
                    b &= b - 1;
                    res = self.run_rank(&mut g, &slot.ents, rank);
                    if res.is_err() {
                        break 'words;
                    }
                }
            }
        } else {
            for &rank in &slot.ranks {
                g.bits[rank as usize / 64] = 0;
            }
            for &rank in &slot.ranks {
                if g.heads[rank as usize] != NIL {
                    res = self.run_rank(&mut g, &slot.ents, rank);
                    if res.is_err() {
                        break;
                    }
                }
            }
        }
        if res.is_err() {
            g.reset(self.ranks as usize);
        }
        self.groups = g;
        res
    }

    /// Runs `rank`'s entries of the window (its chain in `g`, which it leaves empty).
    #[inline(always)]
    fn run_rank(&mut self, g: &mut Groups, buf: &[Ent], rank: u32) -> Result<(), GiveUp> {
        // Which of a rank's entries starts as `next` does not matter: `select` compares it
        // with the heap, and every key differs (`seq`).
        let mut i = std::mem::replace(&mut g.heads[rank as usize], NIL);
        self.host = rank;
        self.me = self.rs[rank as usize];
        self.next = buf[i as usize];
        self.has_next = true;
        i = g.links[i as usize];
        while i != NIL {
            self.heap.push(Min(buf[i as usize]));
            i = g.links[i as usize];
        }
        self.heap_changed();
        let res = self.drain();
        self.rs[rank as usize] = self.me;
        res
    }

    /// Runs the current rank's events of this window in order, from `next` and the heap.
    fn drain(&mut self) -> Result<(), GiveUp> {
        while self.select()? {
            self.now = self.next.time;
            let (stamp, queued_by) = (self.next.stamp(), self.next.g2 as u32);
            self.set_parent(stamp, queued_by);
            if self.next.is_msg() {
                self.msg_event();
            } else {
                self.op_event()?;
            }
            // A deferred event frees nothing; a single freed op with nothing else pending runs
            // at once, and so on down the chain.
            loop {
                if self.overflow {
                    return Err(self.stopped());
                }
                if self.has_next {
                    break;
                }
                let Some(d) = self.flush_freed() else { break };
                if QUEUED && d.op.kind == OpKind::Send && self.send_waits(d.id) {
                    // Queued model: a lower-numbered send has not started; this one waits.
                    self.park(d.id);
                    continue;
                }
                self.now = d.time;
                let queued_by = self.parent_record();
                self.set_parent(d.stamp, queued_by);
                self.run_op(d.id, d.op, d.time)?;
            }
        }
        debug_assert!(self.tie.is_empty(), "a set-aside tie group was left behind");
        Ok(())
    }

    /// The current rank's roots, in LogGOPSim's stable type order (sends, receives, calcs).
    fn roots(&mut self) -> Result<(), GiveUp> {
        let (prog, host) = (self.prog, self.host);
        let n = prog.num_roots(host);
        if n == 0 {
            return Ok(());
        }
        self.enqueued += n as u64;
        let h = host as usize;
        // Root `k` as an event, and whether it is a receive (`op_event` of a receive with
        // nothing unexpected only posts it, so a run of them is posted at once).
        let root = |w: &mut Self, k: u32, runs: bool| -> Result<u32, GiveUp> {
            let id = prog.root(host, k);
            let op = prog.op(host, id);
            let mut done = 1;
            if op.kind == OpKind::Recv && !w.start_deps && w.me.uq == NIL {
                let (run, stride) = if runs {
                    prog.root_recv_run(host, k)
                } else {
                    (1, 0)
                };
                let (ids, id_stride) = if runs && run == 1 {
                    prog.root_recv_ids(host, k)
                } else {
                    (1, 0)
                };
                let mut posted = w.posted(h);
                if run > 1 {
                    posted.post_run(op.peer, op.tag, id, stride, run);
                    done = run;
                } else if ids > 1 {
                    posted.post_mixed(id, id_stride, ids);
                    done = ids;
                } else {
                    posted.post(op.peer, op.tag, id);
                    // The receives that follow (in type order), posted in one go.
                    while runs && k + done < n {
                        let id = prog.root(host, k + done);
                        let op = prog.op(host, id);
                        if op.kind != OpKind::Recv {
                            break;
                        }
                        posted.post(op.peer, op.tag, id);
                        done += 1;
                    }
                }
                w.open += done as u64;
                w.seq += done as u64;
            } else {
                let root = Stamp {
                    pt: 0,
                    src: host,
                    seq: w.seq,
                    gpt: 0,
                };
                w.next = Ent::new(0, 0, w.seq, 0, host, host, id, root);
                if FULL {
                    w.next.g2 = NO_REC as u64;
                }
                w.has_next = true;
                w.set_parent(root, NO_REC);
                w.seq += 1;
                w.now = 0;
                w.op_event()?;
                if !w.has_next {
                    if let Some(d) = w.flush_freed() {
                        // Not run at once: later roots come first.
                        w.next = w.child(d.time, d.stamp.pt, d.stamp.seq, 0, host, d.id);
                        w.has_next = true;
                    }
                }
                // Later roots come first: what is due now waits in the heap.
                if w.has_next {
                    w.has_next = false;
                    let d = w.next;
                    w.heap.push(Min(d));
                    w.heap_changed();
                }
            }
            Ok(done)
        };
        if prog.roots_in_type_order(host) {
            let mut k = 0;
            while k < n {
                k += root(self, k, true)?;
            }
        } else {
            // Three passes over the roots, one per type.
            for kind in [OpKind::Send, OpKind::Recv, OpKind::Calc] {
                for k in 0..n {
                    if prog.op(host, prog.root(host, k)).kind == kind {
                        root(self, k, false)?;
                    }
                }
            }
        }
        if self.overflow {
            return Err(self.stopped());
        }
        Ok(())
    }
}
