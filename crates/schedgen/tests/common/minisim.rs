//! A deliberately simple LogGOPS simulator for tests (one CPU and one NIC per rank), written
//! from the event rules in LOGGOPSIM.md §6.3 so that generated programs can be checked end to
//! end against LogGOPSim's recorded answers and against closed forms before the engine exists.
//! Not fast, not part of the product.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use loggops_engine::{DepKind, OpKind, Program, ANY};

#[derive(Clone, Copy, Debug)]
pub struct SimParams {
    pub l: u64,
    pub o: u64,
    pub g: u64,
    /// Per byte, whole units.
    pub big_g: u64,
    pub big_o: u64,
    pub s: u64,
    /// `true`: LogGOPSim's u64 wrap of `size − 1` for 0-byte messages; `false`: saturate at 0.
    pub wrap: bool,
    /// `true`: order freed ops with libstdc++'s `std::sort` (upstream LogGOPSim); `false`:
    /// stable order.
    pub libstdcxx: bool,
}

impl SimParams {
    /// LogGOPSim's defaults (unit-less ticks).
    pub fn loggopsim_default() -> SimParams {
        SimParams {
            l: 2500,
            o: 1500,
            g: 1000,
            big_g: 6,
            big_o: 0,
            s: 65535,
            wrap: true,
            libstdcxx: false,
        }
    }
    /// The reference cases' `aws_ps` set.
    pub fn aws_ps() -> SimParams {
        SimParams {
            l: 16_790_000,
            o: 1_500_000,
            g: 1_000_000,
            big_g: 100,
            big_o: 0,
            s: 65535,
            wrap: true,
            libstdcxx: false,
        }
    }
    /// `step(s) = 2o + L + (s−1)G` (the idle point-to-point time).
    pub fn step(&self, size: u64) -> u64 {
        let s1 = if self.wrap {
            size.wrapping_sub(1)
        } else {
            size.saturating_sub(1)
        };
        (2 * self.o + self.l).wrapping_add(s1.wrapping_mul(self.big_g))
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct SimResult {
    /// Per-rank finishing time (`nexto`), or `None` on leftover receives (deadlock).
    pub times: Option<Vec<u64>>,
    /// LogGOPSim's event counter (ops enqueued + messages).
    pub events: u64,
}

impl SimResult {
    pub fn max(&self) -> Option<(u64, u32)> {
        let t = self.times.as_ref()?;
        let m = *t.iter().max()?;
        Some((m, t.iter().position(|&x| x == m).unwrap() as u32))
    }
}

#[derive(Clone, Copy)]
enum Ev {
    Op {
        host: u32,
        id: u32,
    },
    Msg {
        src: u32,
        dst: u32,
        size: u64,
        tag: u32,
        send: u32,
    },
}

#[derive(Clone, Copy)]
struct Entry {
    src: u32,
    tag: u32,
    id: u32,
    size: u64,
}

fn matches(q_src: u32, q_tag: u32, src: u32, tag: u32) -> bool {
    (src == ANY || q_src == ANY || q_src == src) && (tag == ANY || q_tag == ANY || q_tag == tag)
}

pub fn simulate<P: Program>(p: &P, prm: SimParams) -> SimResult {
    let n = p.num_ranks() as usize;
    let mut dep: Vec<Vec<u32>> = (0..n as u32)
        .map(|r| (0..p.num_ops(r)).map(|i| p.depcount(r, i)).collect())
        .collect();
    let (mut nexto, mut nextgs, mut nextgr) = (vec![0u64; n], vec![0u64; n], vec![0u64; n]);
    let mut rq: Vec<Vec<Entry>> = vec![Vec::new(); n];
    let mut uq: Vec<Vec<Entry>> = vec![Vec::new(); n];
    let mut events: Vec<Ev> = Vec::new();
    let mut heap: BinaryHeap<Reverse<(u64, u64, usize)>> = BinaryHeap::new();
    let mut aqtime = 0u64;
    let s1 = |s: u64| {
        if prm.wrap {
            s.wrapping_sub(1)
        } else {
            s.saturating_sub(1)
        }
    };
    let sort = |v: &mut Vec<u32>, host: u32| {
        let key = |id: &u32| p.op(host, *id).kind;
        if prm.libstdcxx {
            loggops_engine::stdsort::sort_by(v, |a, b| key(a) < key(b));
        } else {
            v.sort_by_key(key);
        }
    };
    let push = |heap: &mut BinaryHeap<_>, events: &mut Vec<Ev>, t: u64, ts: u64, ev: Ev| {
        events.push(ev);
        heap.push(Reverse((t, ts, events.len() - 1)));
    };
    for h in 0..n as u32 {
        let mut roots: Vec<u32> = (0..p.num_roots(h)).map(|k| p.root(h, k)).collect();
        sort(&mut roots, h);
        for id in roots {
            push(&mut heap, &mut events, 0, aqtime, Ev::Op { host: h, id });
            aqtime += 1;
        }
    }
    let mut freed: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut check: BTreeSet<u32> = BTreeSet::new();
    while let Some(Reverse((t, ts, idx))) = heap.pop() {
        let ev = events[idx];
        let mut mark = |h: u32,
                        id: u32,
                        kind: DepKind,
                        freed: &mut Vec<Vec<u32>>,
                        check: &mut BTreeSet<u32>| {
            p.for_each_dependent(h, id, kind, |x| {
                let d = &mut dep[h as usize][x as usize];
                *d -= 1;
                if *d == 0 {
                    freed[h as usize].push(x);
                    check.insert(h);
                }
            });
        };
        match ev {
            Ev::Op { host, id } => {
                let h = host as usize;
                let op = p.op(host, id);
                match op.kind {
                    OpKind::Calc => {
                        if nexto[h] <= t {
                            nexto[h] = t.wrapping_add(op.size);
                            mark(host, id, DepKind::Start, &mut freed, &mut check);
                            mark(host, id, DepKind::Done, &mut freed, &mut check);
                        } else {
                            heap.push(Reverse((nexto[h], ts, idx)));
                        }
                    }
                    OpKind::Send => {
                        let ready = nexto[h].max(nextgs[h]);
                        if ready <= t {
                            mark(host, id, DepKind::Start, &mut freed, &mut check);
                            nexto[h] = t
                                .wrapping_add(prm.o)
                                .wrapping_add(s1(op.size).wrapping_mul(prm.big_o));
                            nextgs[h] = t
                                .wrapping_add(prm.g)
                                .wrapping_add(s1(op.size).wrapping_mul(prm.big_g));
                            let msg = Ev::Msg {
                                src: host,
                                dst: op.peer,
                                size: op.size,
                                tag: op.tag,
                                send: id,
                            };
                            push(
                                &mut heap,
                                &mut events,
                                t.wrapping_add(prm.o).wrapping_add(prm.l),
                                aqtime,
                                msg,
                            );
                            aqtime += 1;
                            if op.size <= prm.s {
                                mark(host, id, DepKind::Done, &mut freed, &mut check);
                            }
                        } else {
                            heap.push(Reverse((ready, ts, idx)));
                        }
                    }
                    OpKind::Recv => {
                        mark(host, id, DepKind::Start, &mut freed, &mut check);
                        if let Some(pos) = uq[h]
                            .iter()
                            .position(|e| matches(op.peer, op.tag, e.src, e.tag))
                        {
                            let e = uq[h].remove(pos);
                            if op.size > prm.s {
                                mark(e.src, e.id, DepKind::Done, &mut freed, &mut check);
                                let sh = e.src as usize;
                                nexto[sh] = nexto[sh].max(t);
                                nextgs[sh] = nextgs[sh].max(t);
                            }
                            mark(host, id, DepKind::Done, &mut freed, &mut check);
                        } else {
                            rq[h].push(Entry {
                                src: op.peer,
                                tag: op.tag,
                                id,
                                size: op.size,
                            });
                        }
                    }
                }
            }
            Ev::Msg {
                src,
                dst,
                size,
                tag,
                send,
            } => {
                let r = dst as usize;
                let ready = nexto[r].max(nextgr[r]);
                if ready <= t {
                    let cpu = s1(size)
                        .wrapping_mul(prm.big_o)
                        .max(s1(size).wrapping_mul(prm.big_g));
                    nexto[r] = t.wrapping_add(prm.o).wrapping_add(cpu);
                    nextgr[r] = t
                        .wrapping_add(prm.g)
                        .wrapping_add(s1(size).wrapping_mul(prm.big_g));
                    if let Some(pos) = rq[r].iter().position(|q| matches(q.src, q.tag, src, tag)) {
                        let q = rq[r].remove(pos);
                        if size > prm.s {
                            mark(src, send, DepKind::Done, &mut freed, &mut check);
                            let sh = src as usize;
                            nexto[sh] = nexto[sh].max(t);
                            nextgs[sh] = nextgs[sh].max(t);
                        }
                        mark(dst, q.id, DepKind::Done, &mut freed, &mut check);
                    } else {
                        uq[r].push(Entry {
                            src,
                            tag,
                            id: send,
                            size,
                        });
                    }
                } else {
                    heap.push(Reverse((ready.max(t), ts, idx)));
                }
            }
        }
        for h in std::mem::take(&mut check) {
            let mut list = std::mem::take(&mut freed[h as usize]);
            sort(&mut list, h);
            for id in list {
                let op = p.op(h, id);
                let hu = h as usize;
                let at = if op.kind == OpKind::Send {
                    nexto[hu].max(nextgs[hu])
                } else {
                    nexto[hu]
                };
                push(&mut heap, &mut events, at, aqtime, Ev::Op { host: h, id });
                aqtime += 1;
            }
        }
    }
    let leftover = rq.iter().any(|q| !q.is_empty()) || uq.iter().any(|q| !q.is_empty());
    SimResult {
        times: (!leftover).then_some(nexto),
        events: aqtime,
    }
}
