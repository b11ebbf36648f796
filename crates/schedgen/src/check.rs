//! Comparing and validating [`Program`]s op for op, and a small materialised program for tests.
//!
//! [`first_difference`] walks two programs through the trait only (ops, dependency counts,
//! `requires`/`irequires` dependents in declaration order, roots) and describes the first
//! place where they differ; [`validate`] checks the trait's contract. Both hold one rank's
//! counters at a time.

use loggops_engine::{DepKind, Op, OpKind, Program};

/// One line of a schedule in file order (what Schedgen writes): an op, or a dependency
/// between two ops of the current rank (ids, 0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    Op(Op),
    /// `tail requires head`.
    Requires {
        tail: u32,
        head: u32,
    },
    /// `tail irequires head`.
    Irequires {
        tail: u32,
        head: u32,
    },
}

/// A program stored op by op (for tests and small schedules).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Materialized {
    ranks: Vec<RankOps>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct RankOps {
    ops: Vec<Op>,
    depcount: Vec<u32>,
    deps: Vec<Vec<u32>>,
    sdeps: Vec<Vec<u32>>,
    roots: Vec<u32>,
}

impl Materialized {
    /// An empty program with `p` ranks.
    pub fn new(p: u32) -> Materialized {
        Materialized {
            ranks: vec![RankOps::default(); p as usize],
        }
    }

    /// Appends one line to `rank` (ops get the next id of that rank).
    pub fn push_line(&mut self, rank: u32, line: Line) {
        let r = &mut self.ranks[rank as usize];
        match line {
            Line::Op(op) => {
                r.ops.push(op);
                r.depcount.push(0);
                r.deps.push(Vec::new());
                r.sdeps.push(Vec::new());
                r.roots.clear();
            }
            Line::Requires { tail, head } => {
                r.depcount[tail as usize] += 1;
                r.deps[head as usize].push(tail);
                r.roots.clear();
            }
            Line::Irequires { tail, head } => {
                r.depcount[tail as usize] += 1;
                r.sdeps[head as usize].push(tail);
                r.roots.clear();
            }
        }
    }

    /// Recomputes the root lists (call after the last [`Materialized::push_line`]).
    pub fn finish(mut self) -> Materialized {
        for r in &mut self.ranks {
            r.roots = (0..r.ops.len() as u32)
                .filter(|&i| r.depcount[i as usize] == 0)
                .collect();
        }
        self
    }

    /// Copies any program (memory O(total ops)).
    pub fn from_program<P: Program>(p: &P) -> Materialized {
        let mut m = Materialized::new(p.num_ranks());
        for rank in 0..p.num_ranks() {
            let r = &mut m.ranks[rank as usize];
            let n = p.num_ops(rank);
            for i in 0..n {
                r.ops.push(p.op(rank, i));
                r.depcount.push(p.depcount(rank, i));
                let mut d = Vec::new();
                p.for_each_dependent(rank, i, DepKind::Done, |x| d.push(x));
                r.deps.push(d);
                let mut s = Vec::new();
                p.for_each_dependent(rank, i, DepKind::Start, |x| s.push(x));
                r.sdeps.push(s);
            }
            r.roots = (0..p.num_roots(rank)).map(|k| p.root(rank, k)).collect();
        }
        m
    }
}

impl Program for Materialized {
    fn num_ranks(&self) -> u32 {
        self.ranks.len() as u32
    }
    fn num_cpus(&self) -> u8 {
        self.ranks
            .iter()
            .flat_map(|r| r.ops.iter())
            .map(|o| o.cpu)
            .max()
            .unwrap_or(0)
            + 1
    }
    fn num_nics(&self) -> u8 {
        self.ranks
            .iter()
            .flat_map(|r| r.ops.iter())
            .map(|o| o.nic)
            .max()
            .unwrap_or(0)
            + 1
    }
    fn num_ops(&self, rank: u32) -> u32 {
        self.ranks[rank as usize].ops.len() as u32
    }
    fn op(&self, rank: u32, id: u32) -> Op {
        self.ranks[rank as usize].ops[id as usize]
    }
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        self.ranks[rank as usize].depcount[id as usize]
    }
    fn num_roots(&self, rank: u32) -> u32 {
        self.ranks[rank as usize].roots.len() as u32
    }
    fn root(&self, rank: u32, k: u32) -> u32 {
        self.ranks[rank as usize].roots[k as usize]
    }
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, mut f: F) {
        let r = &self.ranks[rank as usize];
        let list = match kind {
            DepKind::Done => &r.deps[id as usize],
            DepKind::Start => &r.sdeps[id as usize],
        };
        for &x in list {
            f(x);
        }
    }
}

fn dependents<P: Program>(p: &P, rank: u32, id: u32, kind: DepKind) -> Vec<u32> {
    let mut v = Vec::new();
    p.for_each_dependent(rank, id, kind, |x| v.push(x));
    v
}

/// Describes the first difference between two programs, or `None` if they are identical op
/// for op (ranks, CPUs, NICs, ops, dependency counts, dependents lists in order, roots).
pub fn first_difference<A: Program, B: Program>(a: &A, b: &B) -> Option<String> {
    if a.num_ranks() != b.num_ranks() {
        return Some(format!("num_ranks: {} vs {}", a.num_ranks(), b.num_ranks()));
    }
    if a.num_cpus() != b.num_cpus() || a.num_nics() != b.num_nics() {
        return Some(format!(
            "cpus/nics: {}/{} vs {}/{}",
            a.num_cpus(),
            a.num_nics(),
            b.num_cpus(),
            b.num_nics()
        ));
    }
    for rank in 0..a.num_ranks() {
        if let Some(d) = rank_difference(a, b, rank) {
            return Some(format!("rank {rank}: {d}"));
        }
    }
    None
}

/// Like [`first_difference`] for a single rank.
pub fn rank_difference<A: Program, B: Program>(a: &A, b: &B, rank: u32) -> Option<String> {
    let n = a.num_ops(rank);
    if n != b.num_ops(rank) {
        return Some(format!("num_ops {} vs {}", n, b.num_ops(rank)));
    }
    for i in 0..n {
        let (oa, ob) = (a.op(rank, i), b.op(rank, i));
        if oa != ob {
            return Some(format!("op {i}: {oa:?} vs {ob:?}"));
        }
        let (da, db) = (a.depcount(rank, i), b.depcount(rank, i));
        if da != db {
            return Some(format!("op {i}: depcount {da} vs {db}"));
        }
        for kind in [DepKind::Done, DepKind::Start] {
            let (la, lb) = (dependents(a, rank, i, kind), dependents(b, rank, i, kind));
            if la != lb {
                return Some(format!("op {i}: {kind:?} dependents {la:?} vs {lb:?}"));
            }
        }
    }
    let (ra, rb) = (a.num_roots(rank), b.num_roots(rank));
    if ra != rb {
        return Some(format!("num_roots {ra} vs {rb}"));
    }
    for k in 0..ra {
        let (xa, xb) = (a.root(rank, k), b.root(rank, k));
        if xa != xb {
            return Some(format!("root {k}: {xa} vs {xb}"));
        }
    }
    None
}

/// Checks the [`Program`] contract: dependents are valid ids, every `depcount` equals the
/// number of times the op appears in dependents lists, and the roots are exactly the ops with
/// no dependencies, ascending. Returns the first violation.
pub fn validate<P: Program>(p: &P) -> Result<(), String> {
    for rank in 0..p.num_ranks() {
        let n = p.num_ops(rank);
        let mut seen = vec![0u32; n as usize];
        for i in 0..n {
            for kind in [DepKind::Done, DepKind::Start] {
                let mut bad = None;
                p.for_each_dependent(rank, i, kind, |x| {
                    if x >= n {
                        bad = Some(x);
                    } else {
                        seen[x as usize] += 1;
                    }
                });
                if let Some(x) = bad {
                    return Err(format!(
                        "rank {rank} op {i}: dependent {x} is not an op (num_ops {n})"
                    ));
                }
            }
        }
        let mut roots = Vec::new();
        for i in 0..n {
            let d = p.depcount(rank, i);
            if d != seen[i as usize] {
                return Err(format!(
                    "rank {rank} op {i}: depcount {d} but listed {} times as a dependent",
                    seen[i as usize]
                ));
            }
            if d == 0 {
                roots.push(i);
            }
        }
        let listed: Vec<u32> = (0..p.num_roots(rank)).map(|k| p.root(rank, k)).collect();
        if listed != roots {
            let show = |v: &[u32]| {
                format!(
                    "{:?}{}",
                    &v[..v.len().min(20)],
                    if v.len() > 20 { "…" } else { "" }
                )
            };
            return Err(format!(
                "rank {rank}: roots {} but ops without dependencies {}",
                show(&listed),
                show(&roots)
            ));
        }
        // `root_recv_run`: pairs (j, j+1) of roots that are receives from the same (peer, tag);
        // `same[j]` counts how many such pairs follow from j on with the same id step.
        let ops: Vec<Op> = roots.iter().map(|&r| p.op(rank, r)).collect();
        let pair = |j: usize| {
            ops[j].kind == OpKind::Recv
                && ops[j + 1].kind == OpKind::Recv
                && (ops[j].peer, ops[j].tag) == (ops[j + 1].peer, ops[j + 1].tag)
        };
        let mut same = vec![0u32; roots.len()];
        for j in (0..roots.len().saturating_sub(1)).rev() {
            if pair(j) {
                let step = roots[j + 1] - roots[j];
                same[j] = 1;
                if j + 2 < roots.len() && same[j + 1] > 0 && roots[j + 2] - roots[j + 1] == step {
                    same[j] += same[j + 1];
                }
            }
        }
        for k in 0..roots.len() {
            let (n, stride) = p.root_recv_run(rank, k as u32);
            let ok = n == 1 || (n >= 1 && same[k] >= n - 1 && roots[k + 1] - roots[k] == stride);
            if !ok {
                return Err(format!(
                    "rank {rank}: root_recv_run({k}) = ({n}, {stride}), but roots {k}.. are not \
                     {n} receives from one (peer, tag) with ids {stride} apart"
                ));
            }
        }
        for k in 0..roots.len() {
            let (n, stride) = p.root_recv_ids(rank, k as u32);
            let ok = n == 1
                || (n >= 2
                    && k + n as usize <= roots.len()
                    && (0..n as usize).all(|i| {
                        ops[k + i].kind == OpKind::Recv
                            && roots[k + i] as u64 == roots[k] as u64 + i as u64 * stride as u64
                    }));
            if !ok {
                return Err(format!(
                    "rank {rank}: root_recv_ids({k}) = ({n}, {stride}), but roots {k}.. are not \
                     {n} receives with ids {stride} apart"
                ));
            }
        }
        if p.roots_in_type_order(rank) && !roots.is_sorted_by_key(|&r| p.op(rank, r).kind) {
            return Err(format!(
                "rank {rank}: roots_in_type_order() but the roots are not ordered send, recv, calc"
            ));
        }
    }
    Ok(())
}
