//! Tests of [`ExplicitProgram`](super::ExplicitProgram) and its builder: layouts, depcounts,
//! cycles, shared storage, and random programs against their plain declarations.

use super::*;
use crate::error::CycleEdge;
use crate::test_rng::SplitMix;
use loggops_engine::{Op, OpKind, ANY};

fn ring(p: u32) -> ExplicitProgram {
    let mut b = ProgramBuilder::new(p);
    for r in 0..p {
        b.start_rank(r);
        let mut last = None;
        for k in 0..2 * (p - 1) {
            let s = b.add_op(Op::send(1024, (r + 1) % p, 0));
            if let Some(l) = last {
                b.add_dep(s, l, DepKind::Done);
            }
            last = Some(b.add_op(Op::recv(1024, (r + p - 1) % p, 0)));
            let _ = k;
        }
        b.end_rank().unwrap();
    }
    b.finish()
}

#[test]
fn roots_in_type_order_is_known_per_program() {
    assert!(ring(4).roots_in_type_order(0));
    // A receive root before a send root: the engine must sort them.
    let mut b = ProgramBuilder::new(2);
    for r in 0..2 {
        b.start_rank(r);
        b.add_op(Op::recv(8, 1 - r, 0));
        b.add_op(Op::send(8, 1 - r, 0));
        b.end_rank().unwrap();
    }
    assert!(!b.finish().roots_in_type_order(1));
}

#[test]
fn dense_counters_start_from_the_depcount_bytes_with_exact_large_counts() {
    // Rank r: 10 + r calcs, then 300 more that one last calc of 7 requires.
    let mut b = ProgramBuilder::new(2);
    for r in 0..2 {
        b.start_rank(r);
        for _ in 0..10 + r {
            b.add_op(Op::calc(1));
        }
        let deps: Vec<u32> = (0..300).map(|_| b.add_op(Op::calc(1))).collect();
        let last = b.add_op(Op::calc(7));
        for d in deps {
            b.add_dep(last, d, DepKind::Done);
        }
        b.end_rank().unwrap();
    }
    let p = b.finish();
    assert_eq!(p.depcount(1, 311), 300);
    assert_eq!(p.depcount_bytes(1).map(|b| b[311]), Some(u8::MAX));
    let cfg = loggops_engine::Config::new(loggops_engine::Params::loggopsim_defaults_ps());
    let out = loggops_engine::simulate(&p, &cfg, &mut loggops_engine::NoNoise).unwrap();
    assert_eq!(out.finish, vec![10 + 300 + 7, 11 + 300 + 7]);
}

#[test]
fn ring_layout() {
    let p = ring(4);
    assert_eq!(p.num_ranks(), 4);
    assert_eq!(p.num_ops(2), 12);
    assert_eq!(p.total_ops(), 48);
    assert_eq!(p.num_distinct_ranks(), 1);
    assert_eq!(p.op(3, 0), Op::send(1024, 0, 0));
    assert_eq!(p.op(0, 1), Op::recv(1024, 3, 0));
    assert_eq!(p.depcount(1, 2), 1);
    assert_eq!(p.depcount(1, 0), 0);
    assert_eq!(p.num_roots(1), 7);
    assert_eq!(
        (0..7).map(|k| p.root(1, k)).collect::<Vec<_>>(),
        [0, 1, 3, 5, 7, 9, 11]
    );
    let mut d = Vec::new();
    p.for_each_dependent(1, 1, DepKind::Done, |x| d.push(x));
    assert_eq!(d, [2]);
    d.clear();
    p.for_each_dependent(1, 1, DepKind::Start, |x| d.push(x));
    assert!(d.is_empty());
    assert_eq!((p.num_cpus(), p.num_nics()), (1, 1));
    assert_eq!(p.min_send_size(), 1024);
}

/// The smallest send over all ranks (shared or not), whatever the receives' sizes; no
/// sends bound nothing from below.
#[test]
fn min_send_size_is_the_smallest_send() {
    let mut b = ProgramBuilder::new(3);
    for r in 0..3 {
        b.start_rank(r);
        b.add_op(Op::calc(1));
        b.add_op(Op::recv(7, (r + 2) % 3, 0));
        b.add_op(Op::send([5000, 5000, 900][r as usize], (r + 1) % 3, 0));
        b.end_rank().unwrap();
    }
    assert_eq!(b.finish().min_send_size(), 900);
    let mut b = ProgramBuilder::new(1);
    b.start_rank(0);
    b.add_op(Op::calc(1));
    b.end_rank().unwrap();
    assert_eq!(b.finish().min_send_size(), u64::MAX);
}

#[test]
fn order_kinds_and_big_depcounts() {
    let mut b = ProgramBuilder::new(1);
    b.start_rank(0);
    let a = b.add_op(Op::calc(5));
    let ops: Vec<u32> = (0..3).map(|_| b.add_op(Op::calc(1).on_cpu(2))).collect();
    let sink = b.add_op(Op::send(0, 0, ANY).on_nic(3));
    b.add_dep(ops[2], a, DepKind::Start);
    b.add_dep(ops[1], a, DepKind::Done);
    b.add_dep(ops[0], a, DepKind::Start);
    b.add_dep(ops[0], a, DepKind::Done);
    for _ in 0..300 {
        b.add_dep(sink, ops[1], DepKind::Done);
    }
    b.end_rank().unwrap();
    let p = b.finish();
    let mut d = Vec::new();
    p.for_each_dependent(0, a, DepKind::Start, |x| d.push(x));
    assert_eq!(d, [3, 1]);
    d.clear();
    p.for_each_dependent(0, a, DepKind::Done, |x| d.push(x));
    assert_eq!(d, [2, 1]);
    assert_eq!(p.depcount(0, sink), 300);
    assert_eq!(p.depcount(0, ops[0]), 2);
    assert_eq!((p.num_cpus(), p.num_nics()), (3, 4));
    assert_eq!(p.op(0, sink), Op::send(0, 0, ANY).on_nic(3));
    assert_eq!(p, ExplicitProgram::from_program(&p).unwrap());
}

#[test]
fn cycles_are_reported() {
    let mut b = ProgramBuilder::new(1);
    b.start_rank(0);
    for _ in 0..4 {
        b.add_op(Op::calc(1));
    }
    b.add_dep(1, 0, DepKind::Done);
    b.add_dep(3, 2, DepKind::Done); // 3 is downstream of the cycle
    b.add_dep(2, 1, DepKind::Done);
    b.add_dep(1, 2, DepKind::Start);
    let err = b.end_rank().unwrap_err();
    let BuildError::Cycle { rank, cycle } = &err;
    assert_eq!(*rank, 0);
    assert_eq!(
        cycle,
        &[
            CycleEdge {
                dependent: 2,
                on: 1,
                kind: DepKind::Done,
                decl_index: 2
            },
            CycleEdge {
                dependent: 1,
                on: 2,
                kind: DepKind::Start,
                decl_index: 3
            },
        ]
    );
    assert_eq!(
        err.to_string(),
        "dependency cycle in rank 0: op 2 requires op 1, op 1 irequires op 2; these ops can never run"
    );
}

#[test]
fn self_dependency_is_a_cycle() {
    let mut b = ProgramBuilder::new(1);
    b.start_rank(0);
    b.add_op(Op::calc(1));
    b.add_dep(0, 0, DepKind::Done);
    assert!(b.end_rank().is_err());
}

#[test]
fn many_distinct_ops_around_shared_ranks() {
    // Ranks 0 and 2 alike, around a large rank 1.
    let mut b = ProgramBuilder::new(3);
    for r in 0..3 {
        b.start_rank(r);
        let n = if r == 1 { 70_000 } else { 3 };
        for i in 0..n {
            b.add_op(Op::calc(i % 66_000));
        }
        b.end_rank().unwrap();
    }
    let p = b.finish();
    assert_eq!(p.op(1, 65_999), Op::calc(65_999));
    assert_eq!(p.op(1, 66_001), Op::calc(1));
    assert_eq!(p.op(1, 69_999), Op::calc(69_999 % 66_000));
    assert_eq!(p.num_distinct_ranks(), 2);
    assert_eq!(
        (p.num_ops(2), p.op(2, 2), p.root(2, 2)),
        (3, Op::calc(2), 2)
    );
}

#[test]
fn empty_ranks() {
    let mut b = ProgramBuilder::new(3);
    for r in 0..3 {
        b.start_rank(r);
        b.end_rank().unwrap();
    }
    let p = b.finish();
    assert_eq!((p.num_ops(1), p.num_roots(2), p.total_ops()), (0, 0, 0));
}

/// Schedgen-style dissemination: in round k rank r sends to r + 2^k and receives from
/// r − 2^k; round k's send requires round k − 1's receive (every depcount is 0 or 1).
fn dissemination<B: FnMut(u32, Op) -> u32, D: FnMut(u32, u32, u32)>(
    p: u32,
    mut add: B,
    mut dep: D,
) {
    for r in 0..p {
        let mut last = None;
        let mut d = 1;
        while d < p {
            let s = add(r, Op::send(8, (r + d) % p, 0));
            let v = add(r, Op::recv(8, (r + p - d) % p, 0));
            if let Some(l) = last {
                dep(r, s, l);
            }
            last = Some(v);
            d *= 2;
        }
    }
}

fn built_dissemination(p: u32, calc_per_rank: impl Fn(u32) -> Option<u64>) -> ExplicitProgram {
    let mut ops: Vec<Vec<Op>> = vec![Vec::new(); p as usize];
    let mut deps: Vec<Vec<(u32, u32)>> = vec![Vec::new(); p as usize];
    dissemination(
        p,
        |r, op| {
            ops[r as usize].push(op);
            ops[r as usize].len() as u32 - 1
        },
        |r, a, b| deps[r as usize].push((a, b)),
    );
    let mut b = ProgramBuilder::new(p);
    for r in 0..p {
        b.start_rank(r);
        for &op in &ops[r as usize] {
            b.add_op(op);
        }
        if let Some(c) = calc_per_rank(r) {
            b.add_op(Op::calc(c));
        }
        for &(a, on) in &deps[r as usize] {
            b.add_dep(a, on, DepKind::Done);
        }
        b.end_rank().unwrap();
    }
    b.finish()
}

fn vec_dissemination(p: u32) -> loggops_engine::testing::VecProgram {
    let v = std::cell::RefCell::new(loggops_engine::testing::VecProgram::new(p));
    dissemination(
        p,
        |r, op| loggops_engine::testing::VecProgram::op(&mut v.borrow_mut(), r, op),
        |r, a, b| v.borrow_mut().requires(r, a, b),
    );
    v.into_inner()
}

fn simulate<P: Program>(p: &P) -> loggops_engine::Outcome {
    let cfg = loggops_engine::Config::new(loggops_engine::Params::loggopsim_defaults_ps());
    loggops_engine::simulate(p, &cfg, &mut loggops_engine::NoNoise).unwrap()
}

#[test]
fn identical_ranks_share_storage() {
    let p = built_dissemination(1024, |_| None);
    assert_eq!(p.num_distinct_ranks(), 1);
    assert_eq!(first_difference(&p, &vec_dissemination(1024)), None);
    assert_eq!((p.total_ops(), p.num_edges()), (1024 * 20, 1024 * 9));
    assert_eq!((p.num_ops(1023), p.num_roots(517)), (20, 11));
    assert_eq!(p.op(1000, 18), Op::send(8, (1000 + 512) % 1024, 0));
    assert_eq!(p.op(3, 19), Op::recv(8, 3 + 1024 - 512, 0));
    // One rank's data (20 op records and a sentinel, 20 depcounts, 9 edges, 11 roots), two
    // slot starts and one slot index per rank.
    let one_rank = 21 * 24 + 20 + (9 + 11) * 4;
    let records = 2 * std::mem::size_of::<SlotBase>() + 1024 * 4;
    assert_eq!(p.heap_bytes(), one_rank + records);
    assert_eq!(simulate(&p), simulate(&vec_dissemination(1024)));

    // A calc that differs per rank: nothing is shared, the answers are those of the ops.
    let q = built_dissemination(1024, |r| Some(r as u64));
    assert_eq!(q.num_distinct_ranks(), 1024);
    assert_eq!(q.op(700, 20), Op::calc(700));
    assert_eq!(q.num_roots(700), 12);
    assert!(q.heap_bytes() > 1024 * one_rank);
    // Every second rank alike: two slots.
    let h = built_dissemination(1024, |r| Some((r % 2) as u64));
    assert_eq!(h.num_distinct_ranks(), 2);
    assert_eq!((h.op(701, 20), h.op(702, 20)), (Op::calc(1), Op::calc(0)));
}

/// A stalled run names every op that never ran, also when ranks share storage and no op
/// has two dependencies.
#[test]
fn stalled_shared_ranks_name_the_ops_that_never_ran() {
    let mut b = ProgramBuilder::new(4);
    for r in 0..4 {
        b.start_rank(r);
        let recv = b.add_op(Op::recv(16, (r + 1) % 4, 3));
        let calc = b.add_op(Op::calc(5));
        b.add_dep(calc, recv, DepKind::Done);
        b.end_rank().unwrap();
    }
    let p = b.finish();
    assert_eq!(p.num_distinct_ranks(), 1);
    let out = simulate(&p);
    assert_eq!(out.leftovers.len(), 4);
    for (r, l) in out.leftovers.iter().enumerate() {
        assert_eq!(
            (l.rank, l.never_ran, &l.never_ran_ops[..]),
            (r as u32, 1, &[1][..])
        );
        assert_eq!(l.posted.len(), 1);
    }
}

#[test]
fn shared_ranks_keep_exact_large_depcounts() {
    // Rank r: 10 calcs, 300 more that a last calc requires (rank 2: one of them twice).
    let mut b = ProgramBuilder::new(5);
    for r in 0..5 {
        b.start_rank(r);
        for _ in 0..10 {
            b.add_op(Op::calc(1));
        }
        let deps: Vec<u32> = (0..300).map(|_| b.add_op(Op::calc(1))).collect();
        let last = b.add_op(Op::calc(7));
        for &d in &deps {
            b.add_dep(last, d, DepKind::Done);
        }
        if r == 2 {
            b.add_dep(last, deps[0], DepKind::Done);
        }
        b.end_rank().unwrap();
    }
    let p = b.finish();
    assert_eq!(p.num_distinct_ranks(), 2);
    assert!(p.dense_counters());
    for r in 0..5 {
        assert_eq!(
            p.depcount(r, 310),
            if r == 2 { 301 } else { 300 },
            "rank {r}"
        );
        assert_eq!(p.depcount(r, 309), 0);
        let bytes = p.depcount_bytes(r).unwrap();
        assert_eq!((bytes.len(), bytes[310], bytes[309]), (311, u8::MAX, 0));
    }
    assert_eq!(simulate(&p).finish, vec![10 + 300 + 7; 5]);
    assert_eq!(p, ExplicitProgram::from_program(&p).unwrap());
}

#[test]
fn identical_ranks_with_a_cycle_are_both_reported() {
    let mut b = ProgramBuilder::new(3);
    for r in 0..3 {
        b.start_rank(r);
        b.add_op(Op::calc(1));
        b.add_op(Op::calc(1));
        if r < 2 {
            b.add_dep(0, 1, DepKind::Done);
            b.add_dep(1, 0, DepKind::Start);
        }
        assert_eq!(b.end_rank().is_err(), r < 2, "rank {r}");
    }
    let p = b.finish();
    assert_eq!(p.num_distinct_ranks(), 2);
    assert_eq!((p.num_roots(1), p.num_roots(2)), (0, 2));
    assert_eq!(p.depcount(1, 1), 1);
}

/// A rank with peers relative to the rank; `order` is a topological order of the ops and
/// every declaration `(dependent, on, kind)` has `on` before `dependent` in it.
#[derive(Clone, Debug)]
struct RelRank {
    ops: Vec<Op>,
    order: Vec<u32>,
    deps: Vec<(u32, u32, DepKind)>,
}

impl RelRank {
    fn random_op(rng: &mut SplitMix, p: u32) -> Op {
        let peer = rng.below(p as u64) as u32;
        let tag = rng.below(3) as u32;
        let op = match rng.below(3) {
            0 => Op::send(rng.below(4), peer, tag),
            1 if rng.below(4) == 0 => Op::recv(rng.below(4), ANY, ANY),
            1 => Op::recv(rng.below(4), peer, tag),
            _ => Op::calc(rng.below(4)),
        };
        op.on_cpu(rng.below(2) as u8).on_nic(rng.below(2) as u8)
    }

    fn random(rng: &mut SplitMix, p: u32) -> RelRank {
        let mut ops: Vec<Op> = (0..rng.below(8)).map(|_| Self::random_op(rng, p)).collect();
        if rng.below(2) == 0 {
            // A receive for every send, so that copies of this rank match each other.
            for k in 0..ops.len() {
                if ops[k].kind == OpKind::Send {
                    let s = ops[k];
                    ops.push(Op::recv(s.size, (p - s.peer) % p, s.tag));
                }
            }
        }
        let n = ops.len() as u32;
        let mut order: Vec<u32> = (0..n).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut r = RelRank {
            ops,
            order,
            deps: Vec::new(),
        };
        for _ in 0..rng.below(3 * n as u64 + 1) {
            r.add_random_dep(rng);
        }
        if n >= 2 && rng.below(6) == 0 {
            let d = r.deps.len();
            r.add_random_dep(rng);
            let copies = 253 + rng.below(50);
            for _ in 0..copies {
                r.deps.push(r.deps[d]);
            }
        }
        r
    }

    fn add_random_dep(&mut self, rng: &mut SplitMix) {
        let n = self.ops.len() as u64;
        if n < 2 {
            return;
        }
        let i = rng.below(n - 1) as usize;
        let j = i + 1 + rng.below(n - 1 - i as u64) as usize;
        let kind = if rng.below(3) == 0 {
            DepKind::Start
        } else {
            DepKind::Done
        };
        let at = rng.below(self.deps.len() as u64 + 1) as usize;
        self.deps.insert(at, (self.order[j], self.order[i], kind));
    }

    /// Changes one thing (which may leave the schedule as it was, e.g. swapping two
    /// declarations on different ops).
    fn mutate(&mut self, rng: &mut SplitMix, p: u32) {
        let (n, m) = (self.ops.len() as u64, self.deps.len() as u64);
        match rng.below(7) {
            0 if n > 0 => self.ops[rng.below(n) as usize].size += 1,
            1 if n > 0 => self.ops[rng.below(n) as usize] = Self::random_op(rng, p),
            2 if m > 0 => {
                self.deps.remove(rng.below(m) as usize);
            }
            3 if m > 0 => {
                let d = &mut self.deps[rng.below(m) as usize];
                d.2 = match d.2 {
                    DepKind::Done => DepKind::Start,
                    DepKind::Start => DepKind::Done,
                };
            }
            4 if m > 1 => {
                let i = rng.below(m - 1) as usize;
                self.deps.swap(i, i + 1);
            }
            5 => {
                self.order.push(self.ops.len() as u32);
                self.ops.push(Self::random_op(rng, p));
            }
            _ => self.add_random_dep(rng),
        }
    }

    fn absolute(&self, rank: u32, p: u32) -> Vec<Op> {
        let abs = |mut op: Op| {
            if op.kind != OpKind::Calc && op.peer != ANY {
                op.peer = (rank + op.peer) % p;
            }
            op
        };
        self.ops.iter().map(|&op| abs(op)).collect()
    }

    /// What the program answers about the rank: ops (relative) and per op its completion
    /// and start dependents in declaration order.
    fn canonical(&self) -> Vec<(Op, Vec<u32>, Vec<u32>)> {
        let mut c: Vec<_> = self.ops.iter().map(|&op| (op, vec![], vec![])).collect();
        for &(d, on, kind) in &self.deps {
            match kind {
                DepKind::Done => c[on as usize].1.push(d),
                DepKind::Start => c[on as usize].2.push(d),
            }
        }
        c
    }
}

#[test]
fn random_programs_with_copied_and_altered_ranks_answer_like_their_declarations() {
    use loggops_engine::testing::VecProgram;
    // How often: 1 < distinct ranks < P; a shared overflow entry; shared ranks with
    // dependencies; leftovers; a complete run.
    let mut seen = [0u32; 5];
    for seed in 0..2000 {
        let rng = &mut SplitMix(seed);
        let p = 1 + rng.below(9) as u32;
        let templates: Vec<RelRank> = (0..1 + rng.below(3))
            .map(|_| RelRank::random(rng, p))
            .collect();
        let ranks: Vec<RelRank> = (0..p)
            .map(|_| {
                let t = &templates[rng.below(templates.len() as u64) as usize];
                match rng.below(4) {
                    0 | 1 => t.clone(),
                    2 => {
                        let mut r = t.clone();
                        r.mutate(rng, p);
                        r
                    }
                    _ => RelRank::random(rng, p),
                }
            })
            .collect();
        let mut b = ProgramBuilder::new(p);
        let mut v = VecProgram::new(p);
        for (r, rel) in (0..p).zip(&ranks) {
            b.start_rank(r);
            for op in rel.absolute(r, p) {
                assert_eq!(b.add_op(op), VecProgram::op(&mut v, r, op));
            }
            for &(d, on, kind) in &rel.deps {
                b.add_dep(d, on, kind);
                match kind {
                    DepKind::Done => v.requires(r, d, on),
                    DepKind::Start => v.irequires(r, d, on),
                }
            }
            b.end_rank().unwrap();
        }
        let e = b.finish();
        let ctx = format!("seed {seed}: {ranks:?}");
        assert_eq!(first_difference(&e, &v), None, "{ctx}");
        let mut distinct = Vec::new();
        for rel in &ranks {
            let c = rel.canonical();
            if !distinct.contains(&c) {
                distinct.push(c);
            }
        }
        assert_eq!(e.num_distinct_ranks() as usize, distinct.len(), "{ctx}");
        for r in 0..p {
            let bytes = e.depcount_bytes(r).unwrap();
            assert_eq!(bytes.len() as u32, v.num_ops(r), "{ctx}");
            for (i, &c) in bytes.iter().enumerate() {
                let d = v.depcount(r, i as u32);
                assert_eq!(c as u32, d.min(255), "{ctx} rank {r} op {i}");
            }
            v.hints = true;
            if e.roots_in_type_order(r) {
                assert!(v.roots_in_type_order(r), "{ctx} rank {r}");
            }
            v.hints = false;
        }
        let edges: u64 = ranks.iter().map(|r| r.deps.len() as u64).sum();
        assert_eq!((e.total_ops(), e.num_edges()), (v.total_ops(), edges));
        assert!(e.dense_counters(), "{ctx}");
        assert_eq!(e.has_start_dependents(), v.has_start_dependents());
        let again = ExplicitProgram::from_program(&e).unwrap();
        assert_eq!(again, e);
        assert_eq!(again.num_distinct_ranks(), e.num_distinct_ranks());
        // Through the binary format: copied ranks repeat the previous rank's section with
        // shifted peers and are shared unparsed, altered ones are parsed (and shared by
        // hash when they equal an earlier one).
        let mut bin = Vec::new();
        // (Calc durations as they are: a tick of one time unit.)
        crate::binary::write_binary_with(&e, &mut bin, 1).unwrap();
        let as_is = crate::ParseOptions::ticks_as_is();
        let back = crate::binary::read_binary_from_with("r.bin", std::io::Cursor::new(bin), &as_is)
            .unwrap();
        assert_eq!(first_difference(&back, &e), None, "{ctx}");
        assert_eq!(back.num_distinct_ranks(), e.num_distinct_ranks(), "{ctx}");
        assert_eq!(
            (back.min_send_size(), back.has_start_dependents()),
            (e.min_send_size(), e.has_start_dependents())
        );
        let a = simulate(&e);
        assert_eq!(a, simulate(&v), "{ctx}");
        let d = e.num_distinct_ranks();
        seen[0] += (d > 1 && d < p) as u32;
        let big: usize = (0..p)
            .map(|r| {
                (0..e.num_ops(r))
                    .filter(|&i| e.depcount(r, i) >= 255)
                    .count()
            })
            .sum();
        seen[1] += (e.depcount_big.len() < big) as u32;
        seen[2] += (d < p && e.num_edges() > 0) as u32;
        seen[3] += (!a.leftovers.is_empty()) as u32;
        seen[4] += (a.leftovers.is_empty() && e.total_ops() > 0) as u32;
    }
    // The cases were all met: partly shared programs, shared overflow entries, shared ranks
    // with dependencies, and runs with and without leftovers.
    assert!(seen.iter().all(|&k| k >= 20), "{seen:?}");
}
