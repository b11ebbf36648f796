//! [`ProgramBuilder`]: builds an [`ExplicitProgram`] rank by rank (from declarations, or from
//! records a binary reader lays out itself), computing depcounts and roots and checking that
//! no dependency cycle blocks an op.

use std::collections::HashMap;

use loggops_engine::{DepKind, Op, OpKind, ANY};

use super::record::{Rec, SlotBase};
use super::{ExplicitProgram, DEPCOUNT_OVERFLOW, MAX_CPU_NIC_INDEX, MAX_OPS_PER_RANK, START};
use crate::error::{BuildError, CycleEdge};
use crate::fxhash::FxBuildHasher;

/// Builds an [`ExplicitProgram`] rank by rank, in rank order.
///
/// ```
/// use loggops_engine::{DepKind, Op, Program};
/// use loggops_goal::ProgramBuilder;
///
/// let mut b = ProgramBuilder::new(2);
/// b.start_rank(0);
/// let s = b.add_op(Op::send(16, 1, 0));
/// let c = b.add_op(Op::calc(100));
/// b.add_dep(c, s, DepKind::Done); // c requires s
/// b.end_rank().unwrap();
/// b.start_rank(1);
/// b.add_op(Op::recv(16, 0, 0));
/// b.end_rank().unwrap();
/// let p = b.finish();
/// assert_eq!(p.depcount(0, c), 1);
/// assert_eq!((p.num_roots(0), p.root(0, 0)), (1, s));
/// ```
///
/// Contract violations (ranks out of order, peers out of range, a send to [`ANY`], cpu/nic
/// index above [`MAX_CPU_NIC_INDEX`], dependency ids not yet added, more than
/// [`MAX_OPS_PER_RANK`] ops in a rank) panic: front ends validate their input first and report
/// errors with source locations.
pub struct ProgramBuilder {
    pub(super) p: ExplicitProgram,
    current: Option<u32>,
    next_rank: u32,
    rank_ops: u32,
    max_cpu: u8,
    max_nic: u8,
    /// `(on, dependent | START)` in declaration order, for the current rank.
    pending: Vec<(u32, u32)>,
    /// Hash of a slot's data → the first slot with that hash (a candidate to share).
    pub(super) slot_of_hash: HashMap<u64, u32, FxBuildHasher>,
    // Reused scratch buffers.
    counts: Vec<u32>,
    depc: Vec<u32>,
    stack: Vec<u32>,
}

impl ProgramBuilder {
    /// A builder for `num_ranks` ranks.
    pub fn new(num_ranks: u32) -> ProgramBuilder {
        ProgramBuilder {
            p: ExplicitProgram {
                num_ranks,
                num_cpus: 1,
                num_nics: 1,
                recs: Vec::new(),
                depcount: Vec::new(),
                depcount_big: Vec::new(),
                edges: Vec::new(),
                roots: Vec::new(),
                roots_in_type_order: true,
                rank_slot: Vec::new(),
                slots: vec![SlotBase::default()],
                total_ops: 0,
                total_edges: 0,
                min_send: u64::MAX,
                start_edges: false,
            },
            slot_of_hash: HashMap::default(),
            current: None,
            next_rank: 0,
            rank_ops: 0,
            max_cpu: 0,
            max_nic: 0,
            pending: Vec::new(),
            counts: Vec::new(),
            depc: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Makes the program report at least `n` CPUs per rank (e.g. a binary file's header).
    pub fn require_cpus(&mut self, n: u8) {
        if n > 0 {
            self.max_cpu = self.max_cpu.max(n - 1);
        }
    }

    /// Makes the program report at least `n` NICs per rank.
    pub fn require_nics(&mut self, n: u8) {
        if n > 0 {
            self.max_nic = self.max_nic.max(n - 1);
        }
    }

    /// The rank being built, if any.
    pub fn current_rank(&self) -> Option<u32> {
        self.current
    }

    /// Number of ops added to the current rank so far.
    pub fn rank_ops(&self) -> u32 {
        self.rank_ops
    }

    /// Begins rank `rank`, which must be the next one (0, 1, 2, …).
    pub fn start_rank(&mut self, rank: u32) {
        assert!(
            self.current.is_none(),
            "start_rank({rank}) while rank {:?} is open",
            self.current
        );
        assert_eq!(rank, self.next_rank, "ranks must be built in order");
        assert!(
            rank < self.p.num_ranks,
            "rank {rank} out of range (num_ranks {})",
            self.p.num_ranks
        );
        self.current = Some(rank);
        self.rank_ops = 0;
        self.pending.clear();
    }

    /// Appends an op to the current rank and returns its id.
    #[inline]
    pub fn add_op(&mut self, op: Op) -> u32 {
        let rank = self.current.expect("add_op outside of a rank");
        assert!(
            self.rank_ops < MAX_OPS_PER_RANK,
            "more than {MAX_OPS_PER_RANK} ops in rank {rank}"
        );
        assert!(
            op.cpu <= MAX_CPU_NIC_INDEX && op.nic <= MAX_CPU_NIC_INDEX,
            "cpu/nic index above 254: {op:?}"
        );
        let p = self.p.num_ranks;
        if op.kind != OpKind::Calc && !(op.kind == OpKind::Recv && op.peer == ANY) {
            assert!(op.peer < p, "peer out of range (num_ranks {p}): {op:?}");
        }
        self.p.recs.push(Rec::new(&op, rank, p, 0));
        self.max_cpu = self.max_cpu.max(op.cpu);
        self.max_nic = self.max_nic.max(op.nic);
        self.rank_ops += 1;
        self.rank_ops - 1
    }

    /// Declares that op `dependent` requires (`Done`) or irequires (`Start`) op `on`; both are
    /// ids of the current rank. Declaration order is kept.
    #[inline]
    pub fn add_dep(&mut self, dependent: u32, on: u32, kind: DepKind) {
        assert!(
            dependent < self.rank_ops && on < self.rank_ops,
            "dependency {dependent} -> {on} references an op not yet added ({} ops)",
            self.rank_ops
        );
        let flag = match kind {
            DepKind::Done => 0,
            DepKind::Start => START,
        };
        self.pending.push((on, dependent | flag));
    }

    /// Closes the current rank: lays out its dependents, depcounts and roots, checks that
    /// every op can run (no dependency cycle), and shares the storage of an earlier identical
    /// rank if there is one. On a cycle the rank is still committed and the error names the
    /// declarations that form the cycle.
    pub fn end_rank(&mut self) -> Result<(), BuildError> {
        let rank = self.current.take().expect("end_rank without start_rank");
        let n = self.rank_ops as usize;
        let p = &mut self.p;
        let rec_base = p.recs.len() - n;
        // Counting sort of the edges by (on, kind): completion dependents first, then start.
        self.counts.clear();
        self.counts.resize(2 * n + 1, 0);
        for &(on, d) in &self.pending {
            self.counts[2 * on as usize + (d >> 31) as usize + 1] += 1;
        }
        for k in 1..self.counts.len() {
            self.counts[k] += self.counts[k - 1];
        }
        let m = self.pending.len();
        assert!(
            m <= u32::MAX as usize,
            "more than 2^32 dependencies in rank {rank}"
        );
        for i in 0..n {
            p.recs[rec_base + i].dep = self.counts[2 * i];
        }
        p.recs.push(Rec::sentinel(m as u32));
        let edge_base = p.edges.len();
        p.edges.resize(edge_base + m, 0);
        for &(on, d) in &self.pending {
            let slot = &mut self.counts[2 * on as usize + (d >> 31) as usize];
            p.edges[edge_base + *slot as usize] = d;
            *slot += 1;
        }
        self.close_rank(rank)
    }

    /// Begins rank `rank` (the next one) to be laid out by the caller, who appends its ops'
    /// records (peers relative, `dep` the start of each op's dependents among the edges it
    /// appends, counted from the first) and its edges to the two vectors returned, then calls
    /// [`Self::end_laid_out_rank`]: what [`Self::start_rank`], [`Self::add_op`],
    /// [`Self::add_dep`] and [`Self::end_rank`] would build from the declarations
    /// `(dependent, on)` in the order of the edges, without sorting them. The caller checks
    /// every id, peer and cpu/nic index; on an error it drops the builder.
    pub(crate) fn lay_out_rank(&mut self, rank: u32) -> (&mut Vec<Rec>, &mut Vec<u32>) {
        self.start_rank(rank);
        (&mut self.p.recs, &mut self.p.edges)
    }

    /// Closes the rank begun by [`Self::lay_out_rank`], like [`Self::end_rank`].
    pub(crate) fn end_laid_out_rank(&mut self) -> Result<(), BuildError> {
        let rank = self
            .current
            .take()
            .expect("end_laid_out_rank without lay_out_rank");
        let p = &mut self.p;
        let start = *p.slots.last().expect("slot starts");
        let slot = p.slots.len() - 1;
        let rec_base = start.op as usize + slot;
        let n = p.recs.len() - rec_base;
        let m = p.edges.len() - start.edge as usize;
        assert!(
            n <= MAX_OPS_PER_RANK as usize,
            "more than {MAX_OPS_PER_RANK} ops in rank {rank}"
        );
        assert!(
            m <= u32::MAX as usize,
            "more than 2^32 dependencies in rank {rank}"
        );
        self.rank_ops = n as u32;
        for r in &p.recs[rec_base..] {
            self.max_cpu = self.max_cpu.max(r.cpu);
            self.max_nic = self.max_nic.max(r.nic);
        }
        p.recs.push(Rec::sentinel(m as u32));
        self.close_rank(rank)
    }

    /// Makes rank `rank` (the next one) share the slot of the rank before it: the caller knows
    /// they are the same (e.g. identical binary sections, peers relative).
    pub(crate) fn repeat_previous_rank(&mut self, rank: u32) {
        self.start_rank(rank);
        self.current = None;
        let p = &mut self.p;
        let s = *p.rank_slot.last().expect("a previous rank") as usize;
        p.rank_slot.push(s as u32);
        p.total_ops += p.slots[s + 1].op - p.slots[s].op;
        p.total_edges += p.slots[s + 1].edge - p.slots[s].edge;
        self.next_rank += 1;
    }

    /// Finishes the rank whose records (with the sentinel) and edges were just appended:
    /// depcounts, roots, the cycle check, and sharing with an identical earlier rank.
    fn close_rank(&mut self, rank: u32) -> Result<(), BuildError> {
        let n = self.rank_ops as usize;
        let p = &mut self.p;
        let start = *p.slots.last().expect("slot starts");
        let rec_base = p.recs.len() - n - 1;
        let big_base = p.depcount_big.len();
        let edges = &p.edges[start.edge as usize..];
        let m = edges.len();
        self.depc.clear();
        self.depc.resize(n, 0);
        for &d in edges {
            self.depc[(d & !START) as usize] += 1;
        }
        let op_base = start.op;
        let root_base = p.roots.len();
        p.depcount.reserve(n);
        for (i, &c) in self.depc.iter().enumerate() {
            if c >= DEPCOUNT_OVERFLOW as u32 {
                p.depcount.push(DEPCOUNT_OVERFLOW);
                p.depcount_big.push((op_base + i as u64, c));
            } else {
                p.depcount.push(c as u8);
            }
            if c == 0 {
                p.roots.push(i as u32);
            }
        }
        let recs = &p.recs[rec_base..];
        p.roots_in_type_order &= p.roots[root_base..].is_sorted_by_key(|&i| recs[i as usize].kind);
        p.total_ops += n as u64;
        p.total_edges += m as u64;
        self.next_rank += 1;

        // Kahn's algorithm: every op must become executable.
        self.stack.clear();
        self.stack
            .extend((0..n as u32).filter(|&i| self.depc[i as usize] == 0));
        let mut done = 0usize;
        while let Some(v) = self.stack.pop() {
            done += 1;
            let (lo, hi) = (recs[v as usize].dep, recs[v as usize + 1].dep);
            for &e in &edges[lo as usize..hi as usize] {
                let t = (e & !START) as usize;
                self.depc[t] -= 1;
                if self.depc[t] == 0 {
                    self.stack.push(t as u32);
                }
            }
        }
        if done < n && self.pending.len() != m {
            // Laid out without declarations: they are the edges, op by op.
            self.pending.clear();
            for v in 0..n {
                let (lo, hi) = (recs[v].dep, recs[v + 1].dep);
                for &e in &edges[lo as usize..hi as usize] {
                    self.pending.push((v as u32, e));
                }
            }
        }
        self.commit_rank(start, big_base);
        if done < n {
            return Err(BuildError::Cycle {
                rank,
                cycle: find_cycle(&self.pending, &self.depc),
            });
        }
        Ok(())
    }

    /// Finishes the program.
    ///
    /// # Panics
    /// If a rank is still open or fewer than `num_ranks` ranks were built.
    pub fn finish(mut self) -> ExplicitProgram {
        assert!(
            self.current.is_none(),
            "finish() while rank {:?} is open",
            self.current
        );
        assert_eq!(
            self.next_rank, self.p.num_ranks,
            "finish() before all ranks were built"
        );
        self.slot_of_hash = HashMap::default();
        let p = &mut self.p;
        p.num_cpus = self.max_cpu + 1;
        p.num_nics = self.max_nic + 1;
        // Every stored record is some rank's op (sentinels are calcs).
        let sends = p.recs.iter().filter(|r| r.kind == OpKind::Send);
        p.min_send = sends.map(|r| r.size).min().unwrap_or(u64::MAX);
        p.start_edges = p.edges.iter().any(|e| e & START != 0);
        p.recs.shrink_to_fit();
        p.depcount.shrink_to_fit();
        p.depcount_big.shrink_to_fit();
        p.edges.shrink_to_fit();
        p.roots.shrink_to_fit();
        p.rank_slot.shrink_to_fit();
        p.slots.shrink_to_fit();
        self.p
    }
}

/// Finds a cycle among the blocked ops (`remaining[i] > 0`), walking dependencies backwards.
/// Returns the declarations forming it, starting with the earliest declared one.
fn find_cycle(pending: &[(u32, u32)], remaining: &[u32]) -> Vec<CycleEdge> {
    // For every blocked op, one declaration whose `on` side is blocked too.
    let mut pred: Vec<Option<usize>> = vec![None; remaining.len()];
    for (k, &(on, d)) in pending.iter().enumerate() {
        let d = (d & !START) as usize;
        if remaining[d] > 0 && remaining[on as usize] > 0 && pred[d].is_none() {
            pred[d] = Some(k);
        }
    }
    let start = (0..remaining.len())
        .find(|&i| remaining[i] > 0)
        .expect("a blocked op");
    let mut seen = vec![usize::MAX; remaining.len()];
    let mut path: Vec<usize> = Vec::new();
    let mut v = start;
    while seen[v] == usize::MAX {
        seen[v] = path.len();
        let k = pred[v].expect("a blocked op has a blocked dependency");
        path.push(k);
        v = pending[k].0 as usize;
    }
    let mut cycle: Vec<CycleEdge> = path[seen[v]..]
        .iter()
        .map(|&k| {
            let (on, d) = pending[k];
            CycleEdge {
                dependent: d & !START,
                on,
                kind: if d & START != 0 {
                    DepKind::Start
                } else {
                    DepKind::Done
                },
                decl_index: k,
            }
        })
        .collect();
    let first = (0..cycle.len())
        .min_by_key(|&i| cycle[i].decl_index)
        .unwrap_or(0);
    cycle.rotate_left(first);
    cycle
}
