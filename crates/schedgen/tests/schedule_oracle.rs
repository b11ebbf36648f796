//! The lazy `Schedule` against an eager construction of the sequencing rules (README "How phases
//! are sequenced"), for random schedules: a random phase tree is written as schedule text,
//! parsed and instantiated, and compared op for op with the tree built eagerly per rank.

use loggops_engine::{DepKind, Op, OpKind, Program};
use loggops_schedgen::check::{first_difference, validate, Line, Materialized};
use loggops_schedgen::{parse_schedule_str, Collective, GenOptions, Generated};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Ph {
    Coll {
        pattern: Collective,
        size: u64,
        opt: u32,
    },
    Calc {
        ns: u64,
        every: u32,
    },
    Send {
        size: u64,
        shift: i64,
        every: u32,
    },
    Recv {
        size: u64,
        shift: i64,
        every: u32,
    },
    Seq(Vec<Ph>),
    Par(Vec<Ph>),
    Repeat(u32, Box<Ph>),
}

fn cond(every: u32) -> String {
    if every <= 1 {
        String::new()
    } else {
        format!(" if rank % {every} == 0")
    }
}

fn render(ph: &Ph, out: &mut String, indent: usize) {
    let pad = "  ".repeat(indent);
    match ph {
        Ph::Coll { pattern, size, opt } => {
            let extra = match pattern {
                Collective::NwayDissemination => {
                    format!(" nway {} calc {}ns", 1 + opt % 3, opt % 2)
                }
                Collective::PipelinedRing => format!(" segment {}B root 0", 1 + opt),
                Collective::BinomialTreeBcast
                | Collective::BinomialTreeReduce
                | Collective::BinaryTreeBcast => " root 0".to_string(),
                _ => String::new(),
            };
            out.push_str(&format!(
                "{pad}{} {size}B{extra}\n",
                pattern.schedgen_name()
            ));
        }
        Ph::Calc { ns, every } => out.push_str(&format!("{pad}calc {ns}ns{}\n", cond(*every))),
        Ph::Send { size, shift, every } => out.push_str(&format!(
            "{pad}send {size}B to rank + {shift} tag 7{}\n",
            cond(*every)
        )),
        Ph::Recv { size, shift, every } => out.push_str(&format!(
            "{pad}recv {size}B from (rank - {shift}) % P{}\n",
            cond(*every)
        )),
        Ph::Seq(v) | Ph::Par(v) => {
            out.push_str(&format!(
                "{pad}{} {{\n",
                if matches!(ph, Ph::Seq(_)) {
                    "sequence"
                } else {
                    "concurrent"
                }
            ));
            for c in v {
                render(c, out, indent + 1);
            }
            out.push_str(&format!("{pad}}}\n"));
        }
        Ph::Repeat(n, body) => {
            out.push_str(&format!("{pad}repeat {n} {{\n"));
            render(body, out, indent + 1);
            out.push_str(&format!("{pad}}}\n"));
        }
    }
}

/// One rank's ops of a phase, with requires-dependents lists (declaration order).
#[derive(Default, Clone)]
struct Block {
    ops: Vec<Op>,
    deps: Vec<Vec<u32>>,
    depcount: Vec<u32>,
}

impl Block {
    fn roots(&self) -> Vec<u32> {
        (0..self.ops.len() as u32)
            .filter(|&i| self.depcount[i as usize] == 0)
            .collect()
    }
    fn sinks(&self) -> Vec<u32> {
        (0..self.ops.len() as u32)
            .filter(|&i| self.deps[i as usize].is_empty())
            .collect()
    }
    fn append(&mut self, b: Block) -> u32 {
        let base = self.ops.len() as u32;
        self.ops.extend(b.ops);
        self.depcount.extend(b.depcount);
        self.deps.extend(
            b.deps
                .into_iter()
                .map(|v| v.into_iter().map(|x| x + base).collect()),
        );
        base
    }
    fn single(op: Op) -> Block {
        Block {
            ops: vec![op],
            deps: vec![vec![]],
            depcount: vec![0],
        }
    }
    fn dep(&mut self, head: u32, tail: u32) {
        self.deps[head as usize].push(tail);
        self.depcount[tail as usize] += 1;
    }
}

fn eager(ph: &Ph, r: u32, p: u32) -> Block {
    let on = |every: u32| every <= 1 || r.is_multiple_of(every);
    match ph {
        Ph::Coll { .. } => {
            let g = generated(ph, p).unwrap();
            let mut b = Block::default();
            for i in 0..g.num_ops(r) {
                b.ops.push(g.op(r, i));
                b.depcount.push(g.depcount(r, i));
                let mut d = Vec::new();
                g.for_each_dependent(r, i, DepKind::Done, |x| d.push(x));
                b.deps.push(d);
            }
            b
        }
        Ph::Calc { ns, every } if on(*every) => Block::single(Op::calc(ns * 1000)),
        Ph::Send { size, shift, every } if on(*every) => Block::single(Op::send(
            *size,
            ((r as i64 + shift).rem_euclid(p as i64)) as u32,
            7,
        )),
        Ph::Recv { size, shift, every } if on(*every) => Block::single(Op::recv(
            *size,
            ((r as i64 - shift).rem_euclid(p as i64)) as u32,
            0,
        )),
        Ph::Calc { .. } | Ph::Send { .. } | Ph::Recv { .. } => Block::default(),
        Ph::Par(v) => {
            let mut b = Block::default();
            for c in v {
                b.append(eager(c, r, p));
            }
            b
        }
        Ph::Seq(v) => seq(v.iter().map(|c| eager(c, r, p)).collect()),
        Ph::Repeat(n, body) => seq((0..*n).map(|_| eager(body, r, p)).collect()),
    }
}

/// The sequencing rules, written out eagerly.
fn seq(children: Vec<Block>) -> Block {
    let mut b = Block::default();
    let mut prev_sinks: Option<Vec<u32>> = None;
    for c in children.into_iter().filter(|c| !c.ops.is_empty()) {
        let (roots, sinks) = (c.roots(), c.sinks());
        let base = match prev_sinks.take() {
            None => b.append(c),
            Some(ps) if ps.len() == 1 => {
                let base = b.append(c);
                for r in &roots {
                    b.dep(ps[0], base + r);
                }
                base
            }
            Some(ps) if roots.len() == 1 => {
                let base = b.append(c);
                for s in &ps {
                    b.dep(*s, base + roots[0]);
                }
                base
            }
            Some(ps) => {
                let join = b.append(Block::single(Op::calc(0)));
                for s in &ps {
                    b.dep(*s, join);
                }
                let base = b.append(c);
                for r in &roots {
                    b.dep(join, base + r);
                }
                base
            }
        };
        prev_sinks = Some(sinks.iter().map(|s| s + base).collect());
    }
    b
}

fn generated(ph: &Ph, p: u32) -> Option<Generated> {
    let Ph::Coll { pattern, size, opt } = ph else {
        return None;
    };
    let mut o = GenOptions {
        reduce_calc: Some(0),
        ..GenOptions::default()
    };
    match pattern {
        Collective::NwayDissemination => {
            o.nway = 1 + opt % 3;
            o.reduce_calc = Some((opt % 2) as u64 * 1000);
        }
        Collective::PipelinedRing => o.segment_size = Some(1 + *opt as u64),
        _ => {}
    }
    Generated::with_options(*pattern, p, *size, o).ok()
}

fn to_materialized(blocks: Vec<Block>) -> Materialized {
    let mut m = Materialized::new(blocks.len() as u32);
    for (r, b) in blocks.iter().enumerate() {
        for op in &b.ops {
            m.push_line(r as u32, Line::Op(*op));
        }
        for (head, tails) in b.deps.iter().enumerate() {
            for &tail in tails {
                m.push_line(
                    r as u32,
                    Line::Requires {
                        tail,
                        head: head as u32,
                    },
                );
            }
        }
    }
    m.finish()
}

fn arb_leaf() -> impl Strategy<Value = Ph> {
    let patterns = vec![
        Collective::Dissemination,
        Collective::NwayDissemination,
        Collective::AllreduceRing,
        Collective::PipelinedRing,
        Collective::BinomialTreeBcast,
        Collective::BinaryTreeBcast,
        Collective::BinomialTreeReduce,
        Collective::LinearAlltoall,
    ];
    prop_oneof![
        (proptest::sample::select(patterns), 8u64..64, 0u32..30)
            .prop_map(|(pattern, size, opt)| Ph::Coll { pattern, size, opt }),
        (0u64..5000, 1u32..4).prop_map(|(ns, every)| Ph::Calc { ns, every }),
        (1u64..100, -3i64..4, 1u32..3).prop_map(|(size, shift, every)| Ph::Send {
            size,
            shift,
            every
        }),
        (1u64..100, -3i64..4, 1u32..3).prop_map(|(size, shift, every)| Ph::Recv {
            size,
            shift,
            every
        }),
    ]
}

fn arb_tree() -> impl Strategy<Value = Vec<Ph>> {
    let node = arb_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Ph::Seq),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Ph::Par),
            (2u32..4, inner).prop_map(|(n, b)| Ph::Repeat(n, Box::new(b))),
        ]
    });
    proptest::collection::vec(node, 1..5)
}

fn check(tree: &[Ph], p: u32) -> Result<(), TestCaseError> {
    let mut text = String::from("loggops-schedule 1\n");
    for ph in tree {
        render(ph, &mut text, 0);
    }
    let sched = parse_schedule_str(&text, "random.goal", p, &[] as &[(&str, &str)])
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let expected = to_materialized(
        (0..p)
            .map(|r| eager(&Ph::Seq(tree.to_vec()), r, p))
            .collect(),
    );
    if let Some(d) = first_difference(&sched, &expected) {
        return Err(TestCaseError::fail(format!("{d}\n{text}")));
    }
    validate(&sched).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    // `min_send_size` bounds every send from below.
    for r in 0..p {
        for i in 0..sched.num_ops(r) {
            let op = sched.op(r, i);
            if op.kind == OpKind::Send && op.size < sched.min_send_size() {
                return Err(TestCaseError::fail(format!(
                    "rank {r} op {i} sends {} B, below min_send_size {}\n{text}",
                    op.size,
                    sched.min_send_size()
                )));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn lazy_schedule_equals_eager_rules(tree in arb_tree(), p in 1u32..9) {
        check(&tree, p)?;
    }
}

#[test]
fn calc_then_ring_links_the_calc_to_every_ring_root() {
    let p = 4;
    let tree = [
        Ph::Calc { ns: 5, every: 1 },
        Ph::Coll {
            pattern: Collective::AllreduceRing,
            size: 64,
            opt: 0,
        },
    ];
    check(&tree, p).unwrap();
    let s = parse_schedule_str(
        "loggops-schedule 1\ncalc 5ns\nallreduce ring 64B\n",
        "t",
        p,
        &[] as &[(&str, &str)],
    )
    .unwrap();
    let mut deps = Vec::new();
    s.for_each_dependent(0, 0, DepKind::Done, |x| deps.push(x));
    // The ring's roots (its first send and every receive), shifted by the calc.
    assert_eq!(deps, vec![1, 2, 4, 6, 8, 10, 12]);
    assert_eq!((s.num_roots(0), s.root(0, 0), s.depcount(0, 2)), (1, 0, 1));
    // Two rings in a row: 7 sinks and 7 roots, so a join op sits between them.
    let s = parse_schedule_str(
        "loggops-schedule 1\nrepeat 2 {\nallreduce ring 64B\n}\n",
        "t",
        p,
        &[] as &[(&str, &str)],
    )
    .unwrap();
    assert_eq!(s.num_ops(0), 12 + 1 + 12);
    assert_eq!(s.op(0, 12), Op::calc(0));
    assert_eq!(s.depcount(0, 12), 7);
}

/// A schedule's smallest send: its collectives' and its point-to-point sends', through
/// sequences, repeats and concurrent blocks; a schedule without sends bounds nothing from
/// below.
#[test]
fn min_send_size_is_the_smallest_send_of_the_phases() {
    let at = |text: &str| {
        let text = format!("loggops-schedule 1\n{text}");
        parse_schedule_str(&text, "t", 4, &[] as &[(&str, &str)])
            .unwrap()
            .min_send_size()
    };
    assert_eq!(at("calc 5ns\nallreduce ring 64KiB\n"), 16384);
    assert_eq!(
        at("repeat 2 {\n  pipelinedring 40KiB segment 16KiB root 0\n}\n"),
        8192
    );
    assert_eq!(
        at("concurrent {\n  allreduce ring 64KiB\n  sequence {\n    send 300B to rank + 1 tag 7\n    recv 300B from (rank - 1) % P\n  }\n}\n"),
        300
    );
    assert_eq!(at("calc 5ns\n"), u64::MAX);
    assert_eq!(at("allreduce ring 64KiB\ndissemination 1KiB\n"), 1024);
    assert_eq!(at("allreduce recdoub 64KiB\n"), 16384);
}
