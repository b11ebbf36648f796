//! `mpi { }` blocks against an eager emulation of Schedgen's trace conversion: random blocks
//! (computation, blocking and nonblocking point-to-point calls under conditions, waits,
//! collectives, nested repeats) are written as schedule text, instantiated, and compared op
//! for op (ops, dependency counts, dependents in declaration order, roots) with the GOAL that
//! Schedgen's `process_trace` would write for the same calls, built with `ProgramBuilder`.

use loggops_engine::{DepKind, Op, OpKind, Program};
use loggops_goal::ProgramBuilder;
use loggops_schedgen::check::{first_difference, validate};
use loggops_schedgen::{parse_schedule_str, Collective, GenOptions, Generated};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Coll {
    Dissemination,
    Mpich,
    Bcast(u32),
    Reduce(u32),
    Alltoall,
}

#[derive(Clone, Debug)]
enum St {
    Calc(u64),
    P2p {
        send: bool,
        nb: bool,
        shift: i64,
        size: u64,
        tag: u32,
        every: u32,
        name: usize,
    },
    /// waits on the requests named (by `name` of earlier P2p in the same block)
    Wait {
        all: bool,
        names: Vec<usize>,
    },
    Coll(Coll, u64),
    Repeat(u32, Vec<St>),
}

fn render(body: &[St], out: &mut String, depth: usize) {
    let pad = "  ".repeat(depth + 1);
    for s in body {
        match s {
            St::Calc(ns) => out.push_str(&format!("{pad}calc {ns}ns\n")),
            St::P2p {
                send,
                nb,
                shift,
                size,
                tag,
                every,
                name,
            } => {
                let verb = match (send, nb) {
                    (true, false) => "send",
                    (true, true) => "isend",
                    (false, false) => "recv",
                    (false, true) => "irecv",
                };
                let dir = if *send { "to" } else { "from" };
                let nm = if *nb {
                    format!(" as r{name}")
                } else {
                    String::new()
                };
                let cond = if *every > 1 {
                    format!(" if rank % {every} == 0")
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "{pad}{verb} {size}B {dir} rank + {shift} tag {tag}{nm}{cond}\n"
                ));
            }
            St::Wait { all, names } => {
                let n: Vec<String> = names.iter().map(|k| format!("r{k}")).collect();
                out.push_str(&format!(
                    "{pad}{} {}\n",
                    if *all { "waitall" } else { "wait" },
                    n.join(" ")
                ));
            }
            St::Coll(c, size) => out.push_str(&match c {
                Coll::Dissemination => format!("{pad}dissemination {size}B\n"),
                Coll::Mpich => format!("{pad}allreduce recdoub_mpich {size}B\n"),
                Coll::Bcast(r) => format!("{pad}bcast binomial {size}B root {r}\n"),
                Coll::Reduce(r) => format!("{pad}reduce binomial {size}B root {r}\n"),
                Coll::Alltoall => format!("{pad}alltoall linear {size}B\n"),
            }),
            St::Repeat(n, b) => {
                out.push_str(&format!("{pad}repeat {n} {{\n"));
                render(b, out, depth + 1);
                out.push_str(&format!("{pad}}}\n"));
            }
        }
    }
}

/// The collective's ops on rank r as (op, requires-list), Schedgen's declaration order.
fn coll_ops(c: &Coll, p: u32, r: u32, size: u64) -> Vec<(Op, Vec<u32>)> {
    let gen = |pattern, root| {
        let g = Generated::with_options(
            pattern,
            p,
            size,
            GenOptions {
                root,
                ..GenOptions::default()
            },
        )
        .unwrap();
        let n = g.num_ops(r);
        let mut reqs: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
        for i in 0..n {
            g.for_each_dependent(r, i, DepKind::Done, |d| reqs[d as usize].push(i));
        }
        (0..n)
            .map(|i| (g.op(r, i), reqs[i as usize].clone()))
            .collect::<Vec<_>>()
    };
    match c {
        Coll::Dissemination => gen(Collective::Dissemination, 0),
        Coll::Bcast(root) => gen(Collective::BinomialTreeBcast, *root),
        Coll::Reduce(root) => gen(Collective::BinomialTreeReduce, *root),
        Coll::Alltoall => gen(Collective::LinearAlltoall, 0),
        Coll::Mpich => {
            // atlahs' create_allreduce_recdoub_rank
            let pof2 = 1u32 << (31 - p.leading_zeros());
            let rem = p - pof2;
            let mut ops: Vec<(Op, Vec<u32>)> = Vec::new();
            let mut prev: Option<u32> = None;
            let nr = if r < 2 * rem {
                if r.is_multiple_of(2) {
                    ops.push((Op::send(size, r + 1, 0), vec![]));
                    None
                } else {
                    ops.push((Op::recv(size, r - 1, 0), vec![]));
                    prev = Some(0);
                    Some(r / 2)
                }
            } else {
                Some(r - rem)
            };
            if let Some(nr) = nr {
                let mut mask = 1;
                while mask < pof2 {
                    let nd = nr ^ mask;
                    let dst = if nd < rem { 2 * nd + 1 } else { nd + rem };
                    let s = ops.len() as u32;
                    ops.push((Op::send(size, dst, 0), prev.into_iter().collect()));
                    ops.push((Op::recv(size, dst, 0), vec![]));
                    prev = Some(s + 1);
                    mask <<= 1;
                }
            }
            if r < 2 * rem {
                if r % 2 == 1 {
                    ops.push((Op::send(size, r - 1, 0), prev.into_iter().collect()));
                } else {
                    ops.push((Op::recv(size, r + 1, 0), vec![]));
                }
            }
            ops
        }
    }
}

struct Emitter<'a> {
    b: &'a mut ProgramBuilder,
    p: u32,
    r: u32,
    pending: u64,
    calc_after: bool,
    prev: Vec<(u32, DepKind)>,
    colls: u32,
}

impl Emitter<'_> {
    fn gap(&mut self) -> u32 {
        let g = self.b.add_op(Op::calc(self.pending));
        self.pending = 0;
        self.calc_after = false;
        g
    }
    fn link_prev(&mut self, g: u32) {
        for &(e, k) in &self.prev {
            self.b.add_dep(g, e, k);
        }
    }
    fn run(&mut self, body: &[St]) {
        // requests posted in this block instance: name → op id
        let mut posted: Vec<(usize, u32)> = Vec::new();
        for s in body {
            match s {
                St::Calc(ns) => {
                    self.pending += ns * 1000;
                    self.calc_after = true;
                }
                St::P2p {
                    send,
                    nb,
                    shift,
                    size,
                    tag,
                    every,
                    name,
                } => {
                    if !self.r.is_multiple_of(*every.max(&1)) {
                        continue;
                    }
                    let peer = (self.r as i64 + shift).rem_euclid(self.p as i64) as u32;
                    let op = if *send {
                        Op::send(*size, peer, *tag)
                    } else {
                        Op::recv(*size, peer, *tag)
                    };
                    let id = self.b.add_op(op);
                    let g = self.gap();
                    self.b.add_dep(id, g, DepKind::Done);
                    self.link_prev(g);
                    self.prev = vec![(id, if *nb { DepKind::Start } else { DepKind::Done })];
                    if *nb {
                        posted.push((*name, id));
                    }
                }
                St::Wait { all, names } => {
                    let reqs: Vec<u32> = names
                        .iter()
                        .filter_map(|n| posted.iter().rev().find(|(k, _)| k == n).map(|x| x.1))
                        .collect();
                    if !all && reqs.is_empty() {
                        continue;
                    }
                    let id = self.b.add_op(Op::calc(0));
                    for &q in &reqs {
                        self.b.add_dep(id, q, DepKind::Done);
                    }
                    let g = self.gap();
                    self.b.add_dep(id, g, DepKind::Done);
                    self.link_prev(g);
                    self.prev = vec![(id, DepKind::Done)];
                }
                St::Coll(c, size) => {
                    let tag = 1_000_000 + self.colls;
                    self.colls += 1;
                    let ops = coll_ops(c, self.p, self.r, *size);
                    let first = self.b.rank_ops();
                    for (op, _) in &ops {
                        let mut op = *op;
                        op.tag += tag;
                        self.b.add_op(op);
                    }
                    let mut has_dependent = vec![false; ops.len()];
                    for (i, (_, reqs)) in ops.iter().enumerate() {
                        for &q in reqs {
                            self.b.add_dep(first + i as u32, first + q, DepKind::Done);
                            has_dependent[q as usize] = true;
                        }
                    }
                    let collop = self.b.add_op(Op::calc(0));
                    for i in 0..ops.len() {
                        if !has_dependent[i] {
                            self.b.add_dep(collop, first + i as u32, DepKind::Done);
                        }
                    }
                    let g = self.gap();
                    for (i, (_, reqs)) in ops.iter().enumerate() {
                        if reqs.is_empty() {
                            self.b.add_dep(first + i as u32, g, DepKind::Done);
                        }
                    }
                    self.link_prev(g);
                    self.prev = vec![(collop, DepKind::Done)];
                }
                St::Repeat(n, b) => {
                    for _ in 0..*n {
                        self.run(b);
                    }
                }
            }
        }
    }
}

fn eager(body: &[St], p: u32) -> loggops_goal::ExplicitProgram {
    let mut b = ProgramBuilder::new(p);
    for r in 0..p {
        b.start_rank(r);
        let mut e = Emitter {
            b: &mut b,
            p,
            r,
            pending: 0,
            calc_after: false,
            prev: Vec::new(),
            colls: 0,
        };
        e.run(body);
        if e.calc_after {
            let t = e.b.add_op(Op::calc(e.pending));
            let prev = std::mem::take(&mut e.prev);
            for (x, k) in prev {
                e.b.add_dep(t, x, k);
            }
        }
        b.end_rank().unwrap();
    }
    b.finish()
}

fn st(depth: u32, p: u32) -> BoxedStrategy<St> {
    let leaf = prop_oneof![
        3 => (0u64..5000).prop_map(St::Calc),
        4 => (any::<bool>(), any::<bool>(), -3i64..4, 1u64..100_000, 0u32..3, 1u32..4, 0usize..4)
            .prop_map(|(send, nb, shift, size, tag, every, name)| St::P2p { send, nb, shift, size, tag, every, name }),
        2 => (any::<bool>(), proptest::collection::vec(0usize..4, 1..3))
            .prop_map(|(all, mut names)| { if !all { names.truncate(1) }; St::Wait { all, names } }),
        1 => (0u32..5, 0..p, 1u64..70_000).prop_map(|(k, root, size)| St::Coll(match k {
            0 => Coll::Dissemination, 1 => Coll::Mpich, 2 => Coll::Bcast(root), 3 => Coll::Reduce(root), _ => Coll::Alltoall,
        }, size)),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        6 => leaf,
        1 => (1u32..4, proptest::collection::vec(st(depth - 1, p), 0..5)).prop_map(|(n, b)| St::Repeat(n, b)),
    ]
    .boxed()
}

/// Names waited for must be posted earlier in the same block (the parser insists): drop the
/// waits whose names were never given to a nonblocking call before them.
fn legal(body: Vec<St>) -> Vec<St> {
    let mut named: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for s in body {
        match s {
            St::P2p { nb: true, name, .. } => {
                named.push(name);
                out.push(s);
            }
            St::Wait { all, names } => {
                let names: Vec<usize> = names.into_iter().filter(|n| named.contains(n)).collect();
                if !names.is_empty() {
                    out.push(St::Wait { all, names });
                }
            }
            St::Repeat(n, b) => out.push(St::Repeat(n, legal(b))),
            s => out.push(s),
        }
    }
    out
}

fn check(body: &[St], p: u32) {
    let mut text = String::from("loggops-schedule 1\nmpi {\n");
    render(body, &mut text, 0);
    text.push_str("}\n");
    let s = parse_schedule_str(&text, "oracle.goal", p, &[] as &[(&str, &str)])
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    validate(&s).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let want = eager(body, p);
    if let Some(d) = first_difference(&s, &want) {
        panic!("{d}\n{text}");
    }
    // the same without the calls located in advance
    let tree = s.clone().without_precomputed_calls();
    if let Some(d) = first_difference(&tree, &want) {
        panic!("descending the tree: {d}\n{text}");
    }
    assert_eq!(
        s.has_start_dependents(),
        want.num_ranks() > 0 && has_nb(body)
    );
    // sinks: ops without completion dependents (checked through a trailing statement)
    let mut t2 = text.clone();
    t2.push_str("calc 1ns\n");
    let s2 = parse_schedule_str(&t2, "oracle.goal", p, &[] as &[(&str, &str)]).unwrap();
    validate(&s2).unwrap_or_else(|e| panic!("{e}\n{t2}"));
    for r in 0..p {
        let n = want.num_ops(r);
        if n == 0 {
            continue;
        }
        let mut sinks = Vec::new();
        for i in 0..n {
            let mut any = false;
            want.for_each_dependent(r, i, DepKind::Done, |_| any = true);
            if !any {
                sinks.push(i);
            }
        }
        // the appended calc (the last op, a single root) requires exactly the block's sinks
        let last = s2.num_ops(r) - 1;
        assert_eq!(s2.num_ops(r), n + 1);
        assert_eq!(s2.op(r, last).kind, OpKind::Calc);
        let mut req = Vec::new();
        for i in 0..n {
            s2.for_each_dependent(r, i, DepKind::Done, |d| {
                if d == last {
                    req.push(i)
                }
            });
        }
        assert_eq!(req, sinks, "rank {r}\n{text}");
    }
}

fn has_nb(body: &[St]) -> bool {
    body.iter().any(|s| match s {
        St::P2p { nb, .. } => *nb,
        St::Repeat(_, b) => has_nb(b),
        _ => false,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn mpi_blocks_are_schedgen_trace_conversion_op_for_op(
        p in 2u32..11,
        body in proptest::collection::vec(st(2, 10), 0..10),
    ) {
        let body = legal(fix_roots(body, p));
        check(&body, p);
    }
}

fn fix_roots(body: Vec<St>, p: u32) -> Vec<St> {
    body.into_iter()
        .map(|s| match s {
            St::Coll(Coll::Bcast(r), d) => St::Coll(Coll::Bcast(r % p), d),
            St::Coll(Coll::Reduce(r), d) => St::Coll(Coll::Reduce(r % p), d),
            St::Repeat(n, b) => St::Repeat(n, fix_roots(b, p)),
            s => s,
        })
        .collect()
}

#[test]
fn a_lulesh_like_exchange_matches_the_emulation() {
    use St::*;
    let body = vec![
        Calc(300),
        P2p {
            send: false,
            nb: true,
            shift: -1,
            size: 968,
            tag: 1024,
            every: 1,
            name: 0,
        },
        P2p {
            send: false,
            nb: true,
            shift: 1,
            size: 968,
            tag: 1024,
            every: 2,
            name: 1,
        },
        P2p {
            send: true,
            nb: true,
            shift: 1,
            size: 968,
            tag: 1024,
            every: 1,
            name: 2,
        },
        P2p {
            send: true,
            nb: true,
            shift: -1,
            size: 968,
            tag: 1024,
            every: 2,
            name: 3,
        },
        Wait {
            all: true,
            names: vec![2, 3],
        },
        Calc(1000),
        Wait {
            all: false,
            names: vec![0],
        },
        Wait {
            all: false,
            names: vec![1],
        },
        Repeat(
            3,
            vec![
                Calc(5),
                St::Coll(self::Coll::Mpich, 8),
                Calc(7),
                St::Coll(self::Coll::Bcast(1), 24),
            ],
        ),
        Calc(12),
    ];
    for p in 2..10 {
        check(&body, p);
    }
}
