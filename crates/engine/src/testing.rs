//! A small in-memory [`Program`] for tests, examples and tiny hand-made schedules.

use crate::program::{DepKind, Op, OpKind, Program};

/// Ops and dependencies held in plain vectors. Build with [`VecProgram::op`] and
/// [`VecProgram::requires`] / [`VecProgram::irequires`].
#[derive(Clone, Debug, Default)]
pub struct VecProgram {
    ops: Vec<Vec<Op>>,
    /// Per rank, per op: (dependent, kind) in declaration order.
    deps: Vec<Vec<Vec<(u32, DepKind)>>>,
    depcount: Vec<Vec<u32>>,
    /// Ask the engine for sparse dependency counters, as generated schedules do.
    pub sparse_counters: bool,
    /// Answer the optional hints ([`Program::roots_in_type_order`],
    /// [`Program::root_recv_run`], [`Program::root_recv_ids`], [`Program::min_send_size`]) from
    /// the ops, as generated schedules do; otherwise give their always-correct defaults.
    pub hints: bool,
}

impl VecProgram {
    pub fn new(ranks: u32) -> VecProgram {
        let n = ranks as usize;
        VecProgram {
            ops: vec![Vec::new(); n],
            deps: vec![Vec::new(); n],
            depcount: vec![Vec::new(); n],
            sparse_counters: false,
            hints: false,
        }
    }
    /// A ring of `rounds` rounds of 16 B: each rank sends to the next, receives from the one
    /// before, and sends a round's message once the previous round's has arrived.
    pub fn ring(ranks: u32, rounds: u32) -> VecProgram {
        let mut p = VecProgram::new(ranks);
        for r in 0..ranks {
            let mut prev = None;
            for round in 0..rounds {
                let s = Self::op(&mut p, r, Op::send(16, (r + 1) % ranks, round));
                let v = Self::op(&mut p, r, Op::recv(16, (r + ranks - 1) % ranks, round));
                if let Some(x) = prev {
                    p.requires(r, s, x);
                }
                prev = Some(v);
            }
        }
        p
    }
    /// Appends `op` to `rank` and returns its id.
    pub fn op(&mut self, rank: u32, op: Op) -> u32 {
        let r = rank as usize;
        self.ops[r].push(op);
        self.deps[r].push(Vec::new());
        self.depcount[r].push(0);
        (self.ops[r].len() - 1) as u32
    }
    /// `a requires b` on `rank`.
    pub fn requires(&mut self, rank: u32, a: u32, b: u32) {
        self.dep(rank, a, b, DepKind::Done)
    }
    /// `a irequires b` on `rank`.
    pub fn irequires(&mut self, rank: u32, a: u32, b: u32) {
        self.dep(rank, a, b, DepKind::Start)
    }
    fn dep(&mut self, rank: u32, a: u32, b: u32, kind: DepKind) {
        let r = rank as usize;
        self.deps[r][b as usize].push((a, kind));
        self.depcount[r][a as usize] += 1;
    }
}

impl Program for VecProgram {
    fn dense_counters(&self) -> bool {
        !self.sparse_counters
    }
    fn has_start_dependents(&self) -> bool {
        self.deps
            .iter()
            .flatten()
            .flatten()
            .any(|&(_, k)| k == DepKind::Start)
    }
    fn num_ranks(&self) -> u32 {
        self.ops.len() as u32
    }
    fn num_cpus(&self) -> u8 {
        self.ops.iter().flatten().map(|o| o.cpu).max().unwrap_or(0) + 1
    }
    fn num_nics(&self) -> u8 {
        self.ops.iter().flatten().map(|o| o.nic).max().unwrap_or(0) + 1
    }
    fn num_ops(&self, rank: u32) -> u32 {
        self.ops[rank as usize].len() as u32
    }
    fn op(&self, rank: u32, id: u32) -> Op {
        self.ops[rank as usize][id as usize]
    }
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        self.depcount[rank as usize][id as usize]
    }
    fn num_roots(&self, rank: u32) -> u32 {
        self.depcount[rank as usize]
            .iter()
            .filter(|&&c| c == 0)
            .count() as u32
    }
    fn root(&self, rank: u32, k: u32) -> u32 {
        self.depcount[rank as usize]
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == 0)
            .nth(k as usize)
            .map(|(i, _)| i as u32)
            .expect("root index in range")
    }
    fn roots_in_type_order(&self, rank: u32) -> bool {
        let roots = (0..self.num_roots(rank)).map(|k| self.op(rank, self.root(rank, k)).kind);
        self.hints && roots.is_sorted()
    }
    fn root_recv_run(&self, rank: u32, k: u32) -> (u32, u32) {
        let n = self.num_roots(rank);
        if !self.hints || k + 1 >= n {
            return (1, 0);
        }
        let (first, second) = (self.root(rank, k), self.root(rank, k + 1));
        let (a, stride) = (self.op(rank, first), second - first);
        if a.kind != OpKind::Recv {
            return (1, 0);
        }
        let mut len = 1;
        while k + len < n {
            let id = self.root(rank, k + len);
            let b = self.op(rank, id);
            let same = b.kind == OpKind::Recv && (b.peer, b.tag) == (a.peer, a.tag);
            if !same || id != first + len * stride {
                break;
            }
            len += 1;
        }
        if len == 1 {
            (1, 0)
        } else {
            (len, stride)
        }
    }
    fn root_recv_ids(&self, rank: u32, k: u32) -> (u32, u32) {
        let n = self.num_roots(rank);
        if !self.hints || k + 1 >= n {
            return (1, 0);
        }
        let (first, stride) = (
            self.root(rank, k),
            self.root(rank, k + 1) - self.root(rank, k),
        );
        let recv = |id: u32| self.op(rank, id).kind == OpKind::Recv;
        let mut len = 0;
        while k + len < n {
            let id = self.root(rank, k + len);
            if !recv(id) || id != first + len * stride {
                break;
            }
            len += 1;
        }
        if len <= 1 {
            (1, 0)
        } else {
            (len, stride)
        }
    }
    fn min_send_size(&self) -> u64 {
        if !self.hints {
            return 0;
        }
        let sends = self.ops.iter().flatten().filter(|o| o.kind == OpKind::Send);
        sends.map(|o| o.size).min().unwrap_or(0)
    }
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, mut f: F) {
        for &(d, k) in &self.deps[rank as usize][id as usize] {
            if k == kind {
                f(d);
            }
        }
    }
}
