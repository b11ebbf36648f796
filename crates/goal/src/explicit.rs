//! [`ExplicitProgram`]: a materialised GOAL schedule in compact arrays, and its
//! [`ProgramBuilder`].
//!
//! Ranks whose data is identical share one copy. Peers are stored relative to the rank, so in
//! collectives (dissemination, ring allreduce, …) most or all ranks are the same: each rank
//! points at a storage *slot*, and a rank equal to an earlier one (every array below compared
//! exactly, after a hash lookup) reuses that rank's slot instead of adding one.
//!
//! Layout (all slots concatenated; `g` = stored op index = first op of the slot + id):
//! * `rank_slot`: per rank the `u32` index of its slot; `slots`: `num_slots + 1` starts
//!   `(op, edge, root)` as `u64`, so slot `s` spans `slots[s]..slots[s + 1]` in each array.
//! * `recs`: per slot one 24-byte [`Rec`] per op (kind, peer relative to the rank, tag, size,
//!   cpu, nic, and where its dependents start), then a sentinel whose `dep` ends the last op's
//!   dependents; slot `s`'s records start at `slots[s].op + s`. An event reads its op and the
//!   bounds of its dependents from two adjacent records, with no further indirection.
//! * `depcount[g]`: `u8`; the value 255 means "look it up in a sorted overflow table" keyed by
//!   `g` (so shared slots share their entries too).
//! * `edges`: per slot the dependents of its ops, op by op (`Rec::dep` is relative to the slot's
//!   first edge); an edge is the dependent's id, with bit 31 set for `irequires` (start) edges.
//!   Per op, completion (`requires`) dependents come first, then start dependents, each in
//!   declaration order — the layout of txt2bin's appendix.
//! * `roots`: per slot the ids with no dependencies, ascending.
//!
//! A rank of its own costs its data (25 bytes per op and 4 per dependency) plus 24 + 4 + 24
//! bytes; a shared rank costs 4 bytes. Ring allreduce files (4(P−1) ops, 2(P−1)−1 edges and
//! 2P−1 roots per rank, all ranks alike) thus need one rank's data, against ≈43 bytes per op for
//! LogGOPSim's binary format.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::Hasher;

use loggops_engine::{DepKind, Op, OpKind, Program, ANY};

use crate::error::{BuildError, CycleEdge};
use crate::fxhash::{FxBuildHasher, FxHasher};

/// Edge flag: the dependent waits for the start (`irequires`), not the completion.
pub(crate) const START: u32 = 1 << 31;
/// Largest number of ops in one rank (ids must leave bit 31 free for the edge flag).
pub const MAX_OPS_PER_RANK: u32 = START;
/// Largest cpu or nic index: the [`Program`] trait reports `max + 1` as a `u8`.
pub const MAX_CPU_NIC_INDEX: u8 = 254;
const DEPCOUNT_OVERFLOW: u8 = u8::MAX;
// `depcount_bytes` hands the array to the engine, which reads 255 as "ask `depcount`".
const _: () = assert!(DEPCOUNT_OVERFLOW == u8::MAX);

/// One stored op: what an event reads of it, and where its dependents start, in 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Rec {
    pub(crate) size: u64,
    /// `(peer - rank) mod P` for send/recv, [`ANY`] for ANY_SOURCE, 0 for calc.
    pub(crate) peer: u32,
    /// 0 for calc.
    pub(crate) tag: u32,
    /// The op's first dependent in the slot's part of `edges`; the next record's `dep` ends
    /// its dependents.
    pub(crate) dep: u32,
    pub(crate) kind: OpKind,
    pub(crate) cpu: u8,
    pub(crate) nic: u8,
}
const _: () = assert!(std::mem::size_of::<Rec>() == 24);

impl Rec {
    /// The record of `op` of `rank` (peer made relative), its dependents starting at `dep`.
    #[inline(always)]
    pub(crate) fn new(op: &Op, rank: u32, num_ranks: u32, dep: u32) -> Rec {
        let (peer, tag) = match op.kind {
            OpKind::Calc => (0, 0),
            _ if op.peer == ANY => (ANY, op.tag),
            _ => {
                // rank < P and peer < P: one conditional addition instead of a division.
                let (peer, rank) = (op.peer as u64, rank as u64);
                let rel = if peer >= rank {
                    peer - rank
                } else {
                    peer + num_ranks as u64 - rank
                };
                (rel as u32, op.tag)
            }
        };
        Rec {
            size: op.size,
            peer,
            tag,
            dep,
            kind: op.kind,
            cpu: op.cpu,
            nic: op.nic,
        }
    }

    /// The record ending a slot's records: its `dep` is the slot's number of edges.
    fn sentinel(edges: u32) -> Rec {
        Rec {
            size: 0,
            peer: 0,
            tag: 0,
            dep: edges,
            kind: OpKind::Calc,
            cpu: 0,
            nic: 0,
        }
    }

    #[inline(always)]
    fn hash(&self, h: &mut FxHasher) {
        h.write_u64(self.size);
        h.write_u64(self.peer as u64 | (self.tag as u64) << 32);
        h.write_u64(
            self.dep as u64
                | (self.kind as u64) << 32
                | (self.cpu as u64) << 40
                | (self.nic as u64) << 48,
        );
    }
}

/// Feeds `v` to `h` two values at a time.
fn hash_u32s(mut v: impl Iterator<Item = u32>, h: &mut FxHasher) {
    while let Some(a) = v.next() {
        match v.next() {
            Some(b) => h.write_u64(a as u64 | (b as u64) << 32),
            None => h.write_u32(a),
        }
    }
}

/// Where a slot's data starts in the flat arrays (`recs` starts at `op` + slot index).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SlotBase {
    op: u64,
    edge: u64,
    root: u64,
}

/// A materialised GOAL schedule (parsed text or binary, or a generator's output).
///
/// Equality (`==`) compares the schedules, not the storage: two programs are equal if they have
/// the same ranks, CPU/NIC counts, ops, dependency counts, roots and dependents lists.
#[derive(Clone, Debug)]
pub struct ExplicitProgram {
    num_ranks: u32,
    num_cpus: u8,
    num_nics: u8,
    /// Per slot `num_ops + 1` records; slot s's start at `slots[s].op + s`.
    recs: Vec<Rec>,
    depcount: Vec<u8>,
    /// `(stored op index, depcount)` for depcounts >= 255, ascending.
    depcount_big: Vec<(u64, u32)>,
    edges: Vec<u32>,
    roots: Vec<u32>,
    /// Every rank's roots are in LogGOPSim's type order (sends, receives, calcs).
    roots_in_type_order: bool,
    /// Per rank: its slot.
    rank_slot: Vec<u32>,
    /// `num_slots + 1` entries.
    slots: Vec<SlotBase>,
    /// Over all ranks (shared slots counted once per rank).
    total_ops: u64,
    total_edges: u64,
    /// The smallest size of any send (`u64::MAX` without sends), set by `finish`.
    min_send: u64,
    /// Some op has `irequires` dependents, set by `finish`.
    start_edges: bool,
}

impl ExplicitProgram {
    /// Materialises any [`Program`] (e.g. a generated collective).
    ///
    /// Returns an error if a rank's dependencies contain a cycle.
    ///
    /// # Panics
    /// If the program breaks the [`Program`] contract (peers out of range, ids out of range).
    pub fn from_program<P: Program + ?Sized>(p: &P) -> Result<ExplicitProgram, BuildError> {
        let mut b = ProgramBuilder::new(p.num_ranks());
        b.require_cpus(p.num_cpus());
        b.require_nics(p.num_nics());
        for r in 0..p.num_ranks() {
            b.start_rank(r);
            let n = p.num_ops(r);
            for i in 0..n {
                b.add_op(p.op(r, i));
            }
            for i in 0..n {
                p.for_each_dependent(r, i, DepKind::Done, |d| b.add_dep(d, i, DepKind::Done));
                p.for_each_dependent(r, i, DepKind::Start, |d| b.add_dep(d, i, DepKind::Start));
            }
            b.end_rank()?;
        }
        Ok(b.finish())
    }

    /// Total number of dependency edges (`requires` and `irequires`) over all ranks.
    pub fn num_edges(&self) -> u64 {
        self.total_edges
    }

    /// Number of distinct ranks stored (ranks identical to an earlier one share its storage).
    pub fn num_distinct_ranks(&self) -> u32 {
        (self.slots.len() - 1) as u32
    }

    /// Heap memory held by this program, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.recs.capacity() * std::mem::size_of::<Rec>()
            + self.depcount.capacity()
            + self.depcount_big.capacity() * 16
            + self.edges.capacity() * 4
            + self.roots.capacity() * 4
            + self.rank_slot.capacity() * 4
            + self.slots.capacity() * std::mem::size_of::<SlotBase>()
    }

    /// Whether slots `a` and `b` hold the same rank data.
    fn same_slots(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        let (a0, a1, b0, b1) = (
            self.slots[a],
            self.slots[a + 1],
            self.slots[b],
            self.slots[b + 1],
        );
        let n = a1.op - a0.op;
        if n != b1.op - b0.op || a1.edge - a0.edge != b1.edge - b0.edge {
            return false;
        }
        if a1.root - a0.root != b1.root - b0.root {
            return false;
        }
        let (n, ao, bo) = (n as usize, a0.op as usize, b0.op as usize);
        let range = |lo: u64, hi: u64| lo as usize..hi as usize;
        // Overflow entries relative to the slot's first op.
        let big = |s0: SlotBase, s1: SlotBase| {
            let lo = self.depcount_big.partition_point(|&(g, _)| g < s0.op);
            let hi = self.depcount_big.partition_point(|&(g, _)| g < s1.op);
            self.depcount_big[lo..hi]
                .iter()
                .map(move |&(g, c)| (g - s0.op, c))
        };
        self.recs[ao + a..ao + a + n + 1] == self.recs[bo + b..bo + b + n + 1]
            && self.depcount[ao..ao + n] == self.depcount[bo..bo + n]
            && self.edges[range(a0.edge, a1.edge)] == self.edges[range(b0.edge, b1.edge)]
            && self.roots[range(a0.root, a1.root)] == self.roots[range(b0.root, b1.root)]
            && big(a0, a1).eq(big(b0, b1))
    }

    #[inline(always)]
    fn slot(&self, rank: u32) -> usize {
        self.rank_slot[rank as usize] as usize
    }

    /// Stored index of op `id` of `rank` (in `depcount`).
    #[inline(always)]
    fn global(&self, rank: u32, id: u32) -> usize {
        let s = self.slot(rank);
        let b = &self.slots[s];
        debug_assert!(
            (id as u64) < self.slots[s + 1].op - b.op,
            "op id out of range"
        );
        (b.op + id as u64) as usize
    }

    /// The record of op `id` of `rank`.
    #[inline(always)]
    fn rec(&self, rank: u32, id: u32) -> &Rec {
        let s = self.slot(rank);
        let b = &self.slots[s];
        debug_assert!(
            (id as u64) < self.slots[s + 1].op - b.op,
            "op id out of range"
        );
        &self.recs[b.op as usize + s + id as usize]
    }

    /// The dependents of `id` (both kinds, completion first; bit 31 marks start edges).
    #[inline(always)]
    fn dependents(&self, rank: u32, id: u32) -> &[u32] {
        let s = self.slot(rank);
        let b = &self.slots[s];
        let i = b.op as usize + s + id as usize;
        let (lo, hi) = (self.recs[i].dep as usize, self.recs[i + 1].dep as usize);
        &self.edges[b.edge as usize + lo..b.edge as usize + hi]
    }
}

impl Program for ExplicitProgram {
    fn num_ranks(&self) -> u32 {
        self.num_ranks
    }
    fn min_send_size(&self) -> u64 {
        self.min_send
    }
    fn num_cpus(&self) -> u8 {
        self.num_cpus
    }
    fn num_nics(&self) -> u8 {
        self.num_nics
    }
    fn num_ops(&self, rank: u32) -> u32 {
        let s = self.slot(rank);
        (self.slots[s + 1].op - self.slots[s].op) as u32
    }
    #[inline(always)]
    fn op(&self, rank: u32, id: u32) -> Op {
        let r = self.rec(rank, id);
        // rank < P and the relative peer < P, so one conditional subtraction wraps.
        let x = rank as u64 + r.peer as u64;
        let p = self.num_ranks as u64;
        let abs = (if x >= p { x - p } else { x }) as u32;
        let peer = if r.kind == OpKind::Calc {
            0
        } else if r.peer == ANY {
            ANY
        } else {
            abs
        };
        Op {
            kind: r.kind,
            peer,
            tag: r.tag,
            size: r.size,
            cpu: r.cpu,
            nic: r.nic,
        }
    }
    #[inline(always)]
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        let g = self.global(rank, id);
        match self.depcount[g] {
            DEPCOUNT_OVERFLOW => {
                let i = self
                    .depcount_big
                    .binary_search_by_key(&(g as u64), |&(k, _)| k)
                    .expect("depcount overflow entry");
                self.depcount_big[i].1
            }
            d => d as u32,
        }
    }
    fn num_roots(&self, rank: u32) -> u32 {
        let s = self.slot(rank);
        (self.slots[s + 1].root - self.slots[s].root) as u32
    }
    #[inline(always)]
    fn root(&self, rank: u32, k: u32) -> u32 {
        self.roots[(self.slots[self.slot(rank)].root + k as u64) as usize]
    }
    #[inline(always)]
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, mut f: F) {
        let want = match kind {
            DepKind::Done => 0,
            DepKind::Start => START,
        };
        for &e in self.dependents(rank, id) {
            if e & START == want {
                f(e & !START);
            }
        }
    }
    fn total_ops(&self) -> u64 {
        self.total_ops
    }
    fn dense_counters(&self) -> bool {
        // Also with at most one dependency per op (the engine's sparse map would stay empty):
        // the dense counters let a stalled run name every op that never ran.
        true
    }
    fn has_start_dependents(&self) -> bool {
        self.start_edges
    }
    fn roots_in_type_order(&self, _rank: u32) -> bool {
        self.roots_in_type_order
    }
    fn depcount_bytes(&self, rank: u32) -> Option<&[u8]> {
        // The same encoding: DEPCOUNT_OVERFLOW is 255.
        let s = self.slot(rank);
        Some(&self.depcount[self.slots[s].op as usize..self.slots[s + 1].op as usize])
    }
}

impl PartialEq for ExplicitProgram {
    fn eq(&self, other: &ExplicitProgram) -> bool {
        first_difference(self, other).is_none()
    }
}

/// Compares two programs op by op and describes the first difference (`None` if they are the
/// same schedule). Meant for tests and diagnostics.
pub fn first_difference<A: Program + ?Sized, B: Program + ?Sized>(a: &A, b: &B) -> Option<String> {
    if a.num_ranks() != b.num_ranks() {
        return Some(format!("num_ranks {} vs {}", a.num_ranks(), b.num_ranks()));
    }
    if a.num_cpus() != b.num_cpus() || a.num_nics() != b.num_nics() {
        return Some(format!(
            "{} CPUs, {} NICs vs {} CPUs, {} NICs",
            a.num_cpus(),
            a.num_nics(),
            b.num_cpus(),
            b.num_nics()
        ));
    }
    let (mut da, mut db) = (Vec::new(), Vec::new());
    for r in 0..a.num_ranks() {
        if a.num_ops(r) != b.num_ops(r) {
            return Some(format!(
                "rank {r}: {} ops vs {} ops",
                a.num_ops(r),
                b.num_ops(r)
            ));
        }
        for i in 0..a.num_ops(r) {
            if a.op(r, i) != b.op(r, i) {
                return Some(format!(
                    "rank {r} op {i}: {:?} vs {:?}",
                    a.op(r, i),
                    b.op(r, i)
                ));
            }
            if a.depcount(r, i) != b.depcount(r, i) {
                return Some(format!(
                    "rank {r} op {i}: depcount {} vs {}",
                    a.depcount(r, i),
                    b.depcount(r, i)
                ));
            }
            for kind in [DepKind::Done, DepKind::Start] {
                da.clear();
                db.clear();
                a.for_each_dependent(r, i, kind, |d| da.push(d));
                b.for_each_dependent(r, i, kind, |d| db.push(d));
                if da != db {
                    return Some(format!(
                        "rank {r} op {i}: {kind:?} dependents {da:?} vs {db:?}"
                    ));
                }
            }
        }
        if a.num_roots(r) != b.num_roots(r) {
            return Some(format!(
                "rank {r}: {} roots vs {} roots",
                a.num_roots(r),
                b.num_roots(r)
            ));
        }
        for k in 0..a.num_roots(r) {
            if a.root(r, k) != b.root(r, k) {
                return Some(format!(
                    "rank {r}: root {k} is op {} vs op {}",
                    a.root(r, k),
                    b.root(r, k)
                ));
            }
        }
    }
    None
}

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
    p: ExplicitProgram,
    current: Option<u32>,
    next_rank: u32,
    rank_ops: u32,
    max_cpu: u8,
    max_nic: u8,
    /// `(on, dependent | START)` in declaration order, for the current rank.
    pending: Vec<(u32, u32)>,
    /// Hash of a slot's data → the first slot with that hash (a candidate to share).
    slot_of_hash: HashMap<u64, u32, FxBuildHasher>,
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

    /// Makes the rank just laid out (its data starts at `start` and `depcount_big[big_base..]`)
    /// a new slot, or, if an earlier slot holds the same data, drops it and points the rank at
    /// that slot.
    fn commit_rank(&mut self, start: SlotBase, big_base: usize) {
        let p = &mut self.p;
        let slot = p.slots.len() - 1;
        let n = (p.depcount.len() as u64 - start.op) as usize;
        let rec_base = start.op as usize + slot;
        // The depcounts, overflow entries and roots follow from the ops and the edges.
        let mut h = FxHasher::default();
        h.write_usize(n);
        for r in &p.recs[rec_base..] {
            r.hash(&mut h);
        }
        hash_u32s(p.edges[start.edge as usize..].iter().copied(), &mut h);
        p.slots.push(SlotBase {
            op: p.depcount.len() as u64,
            edge: p.edges.len() as u64,
            root: p.roots.len() as u64,
        });
        let slot = slot as u32;
        let shared = match self.slot_of_hash.entry(h.finish()) {
            Entry::Occupied(e) => Some(*e.get()).filter(|&c| p.same_slots(c, slot)),
            Entry::Vacant(e) => {
                e.insert(slot);
                None
            }
        };
        match shared {
            Some(c) => {
                p.slots.pop();
                p.recs.truncate(rec_base);
                p.depcount.truncate(start.op as usize);
                p.depcount_big.truncate(big_base);
                p.edges.truncate(start.edge as usize);
                p.roots.truncate(start.root as usize);
                p.rank_slot.push(c);
            }
            None => p.rank_slot.push(slot),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::SplitMix;

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
            let back =
                crate::binary::read_binary_from_with("r.bin", std::io::Cursor::new(bin), &as_is)
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
}
