//! The schedule interface the engine simulates.
//!
//! A [`Program`] is the per-rank operation graph of a GOAL schedule: for every rank, ops numbered
//! `0..num_ops(rank)` in file order (LogGOPSim's "offsets"), each a send, a receive or a local
//! computation, with `requires` (completion) and `irequires` (start) dependencies inside the rank.
//!
//! The trait is built so that a schedule never has to be materialised: a generated collective can
//! compute every op, its dependents and its roots from `(rank, index)`. Explicit schedules (parsed
//! GOAL) store compact arrays. The engine only ever asks for one op at a time.
//!
//! **Nothing is materialised per message or per posted receive at scale.** The engine keeps
//! dependency counters sparse for generated schedules (`dense_counters() == false`: an op with
//! one dependency needs no counter, a partially satisfied one takes one of its rank's two slots
//! or an overflow map), roots as lazy batches (or, when [`Program::roots_in_type_order`] says
//! the program lists them in LogGOPSim's type order already, one queue entry holding the next
//! root's index; a run of receive roots that `root_recv_run()` or `root_recv_ids()` reports is
//! posted at once) and posted receives as runs (consecutive posts of an arithmetic progression
//! of op ids; equal (src, tag) stored once). The hints (`roots_in_type_order`,
//! `root_recv_run`, `root_recv_ids`, `depcount_bytes`, `op_table`) are optional and must be
//! exact: their defaults are always correct, `loggops_schedgen::check::validate` checks the
//! claims, and the engine tests run programs with and without them to the same outcome.
//! [`Program::op_table`] hands the engine a generated template (one rank-relative record per op
//! for all ranks: the op, its dependency count, where its dependents are, each dependent with
//! its own count); both engines then read the program through `Tabled`, and releasing an op's
//! dependents reads their counts there too ([`Program::for_each_dependent_counted`], whose
//! default asks `depcount`). Explicit programs store peers relative to the rank and keep one
//! copy of each distinct rank (shared only after an exact comparison), so a collective read
//! from a GOAL file costs about one rank's data; they keep dense counters (one byte per op) so
//! that a stalled run can name every op that never ran.

/// Wildcard peer (`recv ... from -1`) and wildcard tag (`tag -1`), as LogGOPSim stores them.
pub const ANY: u32 = u32::MAX;

/// The three GOAL operation kinds. The discriminants are LogGOPSim's type codes, and the derived
/// order (send < recv < calc) is the order LogGOPSim sorts freed operations by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum OpKind {
    Send = 1,
    Recv = 2,
    Calc = 3,
}

/// One operation of a rank. For `Calc`, `size` is the duration in simulator time units (ps in
/// normal mode, LogGOPSim ticks in compat mode) and `peer`/`tag` are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    pub kind: OpKind,
    /// Destination of a send, source of a receive ([`ANY`] for ANY_SOURCE), 0 for calc.
    pub peer: u32,
    /// Message tag ([`ANY`] for ANY_TAG), 0 for calc.
    pub tag: u32,
    /// Bytes for send/recv, duration for calc.
    pub size: u64,
    pub cpu: u8,
    pub nic: u8,
}

impl Op {
    pub fn send(size: u64, to: u32, tag: u32) -> Op {
        Op {
            kind: OpKind::Send,
            peer: to,
            tag,
            size,
            cpu: 0,
            nic: 0,
        }
    }
    pub fn recv(size: u64, from: u32, tag: u32) -> Op {
        Op {
            kind: OpKind::Recv,
            peer: from,
            tag,
            size,
            cpu: 0,
            nic: 0,
        }
    }
    pub fn calc(duration: u64) -> Op {
        Op {
            kind: OpKind::Calc,
            peer: 0,
            tag: 0,
            size: duration,
            cpu: 0,
            nic: 0,
        }
    }
    pub fn on_cpu(mut self, cpu: u8) -> Op {
        self.cpu = cpu;
        self
    }
    pub fn on_nic(mut self, nic: u8) -> Op {
        self.nic = nic;
        self
    }
}

/// Which event of an op releases a dependent: `requires` waits for completion, `irequires` for
/// the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepKind {
    /// `a requires b`: released when `b` completes.
    Done,
    /// `a irequires b`: released when `b` starts.
    Start,
}

/// A schedule the engine can run. All indices are per rank; `op` ids are `0..num_ops(rank)`.
///
/// Contract (checked by `validate` helpers in the front ends, relied upon by the engine):
/// * `depcount(r, i)` equals the number of times `i` appears in the dependents lists of ops of
///   rank `r` (both kinds together, duplicates counted);
/// * `root(r, k)` for `k < num_roots(r)` lists, in ascending id order, exactly the ops with
///   `depcount == 0`;
/// * dependents lists are in declaration order (the order LogGOPSim releases them in).
pub trait Program: Sync {
    fn num_ranks(&self) -> u32;
    /// Number of CPUs per rank (LogGOPSim: max cpu index over all ops + 1).
    fn num_cpus(&self) -> u8;
    /// Number of NICs per rank (max nic index over all ops + 1).
    fn num_nics(&self) -> u8;
    fn num_ops(&self, rank: u32) -> u32;
    fn op(&self, rank: u32, id: u32) -> Op;
    /// Number of unsatisfied dependencies of `id` before the run starts.
    fn depcount(&self, rank: u32, id: u32) -> u32;
    fn num_roots(&self, rank: u32) -> u32;
    /// The `k`-th op with no dependencies, ascending by id.
    fn root(&self, rank: u32, k: u32) -> u32;
    /// Calls `f` for every op released when `id` reaches `kind` (start or completion), in
    /// declaration order.
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, f: F);
    /// [`Self::for_each_dependent`], with each dependent's [`Self::depcount`].
    #[inline(always)]
    fn for_each_dependent_counted<F: FnMut(u32, u32)>(
        &self,
        rank: u32,
        id: u32,
        kind: DepKind,
        mut f: F,
    ) {
        self.for_each_dependent(rank, id, kind, |d| f(d, self.depcount(rank, d)))
    }
    /// Whether the engine should keep a dense per-op dependency counter array (explicit
    /// schedules) or a sparse map holding only partially satisfied ops (generated schedules,
    /// where most ops have at most one dependency and `num_ops` is huge).
    fn dense_counters(&self) -> bool {
        true
    }
    /// Whether any op has `irequires` dependents (released when it starts). When false the
    /// engine skips the start-release step of every op. Asked once per run.
    fn has_start_dependents(&self) -> bool {
        true
    }
    /// Total number of ops over all ranks (u64: generated schedules exceed u32).
    fn total_ops(&self) -> u64 {
        (0..self.num_ranks()).map(|r| self.num_ops(r) as u64).sum()
    }
    /// Whether `root(rank, k)` already lists the roots in LogGOPSim's type order (sends, then
    /// receives, then calcs), so that the stable order of the initial batch is the root order
    /// itself and the engine walks it once instead of once per type. `false` is always correct.
    fn roots_in_type_order(&self, _rank: u32) -> bool {
        false
    }
    /// The `depcount` of every op of `rank` as one byte each, in op order, `255` standing for
    /// "255 or more" (the engine then asks [`Program::depcount`]); lets the engine set up dense
    /// counters with one copy per rank. `None` (the default) makes it ask op by op.
    fn depcount_bytes(&self, _rank: u32) -> Option<&[u8]> {
        None
    }
    /// `(n, stride)`: roots `k..k+n` of `rank` are receives with the same peer and tag whose
    /// op ids are `root(rank, k) + i·stride`, so the engine can post them at once (a ring
    /// rank's 2(P−1) receives). `(1, 0)`, the default, is always correct.
    fn root_recv_run(&self, _rank: u32, _k: u32) -> (u32, u32) {
        (1, 0)
    }
    /// `(n, stride)`: roots `k..k+n` of `rank` are receives (from any peers, with any tags)
    /// whose op ids are `root(rank, k) + i·stride`, so the engine can post them as one run that
    /// reads peers and tags back from the program (a dissemination rank's ⌈log2 P⌉ receives).
    /// `(1, 0)`, the default, is always correct.
    fn root_recv_ids(&self, _rank: u32, _k: u32) -> (u32, u32) {
        (1, 0)
    }
    /// The program as one [`OpTable`] shared by all ranks, when it has one (`None`, the
    /// default, is always correct). Both engines then read ops and dependencies from the
    /// table ([`Tabled`]).
    fn op_table(&self) -> Option<OpTable<'_>> {
        None
    }
    /// A lower bound of the size of every send (`0`, the default, is always correct; any value
    /// is one for a program without sends). When it exceeds S every message is a rendezvous
    /// message, which arrives later than an eager one, and the windowed engine widens its
    /// windows accordingly ([`crate::window`]).
    fn min_send_size(&self) -> u64 {
        0
    }
    /// Whether some send carries more than `s` bytes (a rendezvous message under eager
    /// threshold `s`): every op is read until the first such send.
    fn any_send_above(&self, s: u64) -> bool {
        (0..self.num_ranks()).any(|r| {
            (0..self.num_ops(r)).any(|i| {
                let op = self.op(r, i);
                op.kind == OpKind::Send && op.size > s
            })
        })
    }
}

/// Every rank's ops as one table ([`Program::op_table`]): op `i` of rank `r` is `ops[i]`, a
/// send's or receive's peer being `(r + ops[i].op.peer) mod ranks` (a calc's is 0); its
/// dependency count and completion dependents are the same for every rank, and no op has
/// start dependents.
#[derive(Clone, Copy, Debug)]
pub struct OpTable<'a> {
    pub ranks: u32,
    pub ops: &'a [TableOp],
    /// The completion dependents of every op, each op's in one slice
    /// ([`TableOp::dependents`]).
    pub deps: &'a [TableDep],
}

impl<'a> OpTable<'a> {
    /// Op `id` of `rank`, its peer made absolute (without a branch: ops of all kinds are asked
    /// for in no predictable order; a calc's peer stays 0).
    #[inline(always)]
    pub fn op(&self, rank: u32, id: u32) -> Op {
        let mut op = self.ops[id as usize].op;
        let x = rank as u64 + op.peer as u64;
        let p = self.ranks as u64;
        let peer = (if x >= p { x - p } else { x }) as u32;
        op.peer = peer & ((op.kind != OpKind::Calc) as u32).wrapping_neg();
        op
    }

    /// Op `id`'s dependency count.
    #[inline(always)]
    pub fn depcount(&self, id: u32) -> u32 {
        self.ops[id as usize].depcount
    }

    /// Op `id`'s completion dependents, each with its dependency count.
    #[inline(always)]
    pub fn dependents(&self, id: u32) -> &'a [TableDep] {
        &self.deps[self.ops[id as usize].dependents()]
    }
}

/// An op of an [`OpTable`], its dependency count and where its dependents are: what an event
/// reads of its op, in one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableOp {
    pub op: Op,
    pub depcount: u32,
    /// Its completion dependents are `deps[first_dep..first_dep + num_deps]`.
    pub first_dep: u32,
    pub num_deps: u32,
}

impl TableOp {
    /// The range of [`OpTable::deps`] holding the op's completion dependents.
    #[inline(always)]
    pub fn dependents(&self) -> std::ops::Range<usize> {
        self.first_dep as usize..self.first_dep as usize + self.num_deps as usize
    }
}

/// A completion dependent in an [`OpTable`], with its dependency count (which releasing it
/// needs, so it is read with the dependent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableDep {
    pub op: u32,
    pub depcount: u32,
}

/// A program read through its [`OpTable`]: the same answers, with the per-event lookups
/// (op, dependency count, dependents) on the table's slices.
pub struct Tabled<'a, P: Program> {
    prog: &'a P,
    t: OpTable<'a>,
    /// `t` is not `prog`'s own table (its dependency counts may differ from `prog`'s).
    other_counts: bool,
}

impl<'a, P: Program> Tabled<'a, P> {
    pub fn new(prog: &'a P, t: OpTable<'a>) -> Self {
        debug_assert_eq!(t.ranks, prog.num_ranks());
        debug_assert!(t.ops.iter().all(|o| o.dependents().end <= t.deps.len()));
        Tabled {
            prog,
            t,
            other_counts: false,
        }
    }

    /// `prog` read through `t`, a table with the same ops and fewer dependencies (see
    /// `crate::reduce`): its dependency counts are `t`'s.
    pub(crate) fn with_own_counts(prog: &'a P, t: OpTable<'a>) -> Self {
        Tabled {
            other_counts: true,
            ..Tabled::new(prog, t)
        }
    }
}

impl<P: Program> Program for Tabled<'_, P> {
    fn num_ranks(&self) -> u32 {
        self.prog.num_ranks()
    }
    fn num_cpus(&self) -> u8 {
        self.prog.num_cpus()
    }
    fn num_nics(&self) -> u8 {
        self.prog.num_nics()
    }
    fn num_ops(&self, _rank: u32) -> u32 {
        self.t.ops.len() as u32
    }
    #[inline(always)]
    fn op(&self, rank: u32, id: u32) -> Op {
        self.t.op(rank, id)
    }
    #[inline(always)]
    fn depcount(&self, _rank: u32, id: u32) -> u32 {
        self.t.depcount(id)
    }
    fn num_roots(&self, rank: u32) -> u32 {
        self.prog.num_roots(rank)
    }
    fn root(&self, rank: u32, k: u32) -> u32 {
        self.prog.root(rank, k)
    }
    #[inline(always)]
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, mut f: F) {
        self.for_each_dependent_counted(rank, id, kind, |d, _| f(d));
    }
    #[inline(always)]
    fn for_each_dependent_counted<F: FnMut(u32, u32)>(
        &self,
        _rank: u32,
        id: u32,
        kind: DepKind,
        mut f: F,
    ) {
        if kind == DepKind::Done {
            self.t
                .dependents(id)
                .iter()
                .for_each(|d| f(d.op, d.depcount));
        }
    }
    fn dense_counters(&self) -> bool {
        self.prog.dense_counters()
    }
    fn has_start_dependents(&self) -> bool {
        false
    }
    fn total_ops(&self) -> u64 {
        self.prog.total_ops()
    }
    fn roots_in_type_order(&self, rank: u32) -> bool {
        self.prog.roots_in_type_order(rank)
    }
    fn depcount_bytes(&self, rank: u32) -> Option<&[u8]> {
        if self.other_counts {
            return None;
        }
        self.prog.depcount_bytes(rank)
    }
    fn root_recv_run(&self, rank: u32, k: u32) -> (u32, u32) {
        self.prog.root_recv_run(rank, k)
    }
    fn root_recv_ids(&self, rank: u32, k: u32) -> (u32, u32) {
        self.prog.root_recv_ids(rank, k)
    }
    fn op_table(&self) -> Option<OpTable<'_>> {
        Some(self.t)
    }
    fn min_send_size(&self) -> u64 {
        self.prog.min_send_size()
    }
}

impl<P: Program + ?Sized> Program for &P {
    fn num_ranks(&self) -> u32 {
        (**self).num_ranks()
    }
    fn num_cpus(&self) -> u8 {
        (**self).num_cpus()
    }
    fn num_nics(&self) -> u8 {
        (**self).num_nics()
    }
    fn num_ops(&self, rank: u32) -> u32 {
        (**self).num_ops(rank)
    }
    fn op(&self, rank: u32, id: u32) -> Op {
        (**self).op(rank, id)
    }
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        (**self).depcount(rank, id)
    }
    fn num_roots(&self, rank: u32) -> u32 {
        (**self).num_roots(rank)
    }
    fn root(&self, rank: u32, k: u32) -> u32 {
        (**self).root(rank, k)
    }
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, f: F) {
        (**self).for_each_dependent(rank, id, kind, f)
    }
    fn for_each_dependent_counted<F: FnMut(u32, u32)>(
        &self,
        rank: u32,
        id: u32,
        kind: DepKind,
        f: F,
    ) {
        (**self).for_each_dependent_counted(rank, id, kind, f)
    }
    fn dense_counters(&self) -> bool {
        (**self).dense_counters()
    }
    fn has_start_dependents(&self) -> bool {
        (**self).has_start_dependents()
    }
    fn total_ops(&self) -> u64 {
        (**self).total_ops()
    }
    fn roots_in_type_order(&self, rank: u32) -> bool {
        (**self).roots_in_type_order(rank)
    }
    fn depcount_bytes(&self, rank: u32) -> Option<&[u8]> {
        (**self).depcount_bytes(rank)
    }
    fn root_recv_run(&self, rank: u32, k: u32) -> (u32, u32) {
        (**self).root_recv_run(rank, k)
    }
    fn root_recv_ids(&self, rank: u32, k: u32) -> (u32, u32) {
        (**self).root_recv_ids(rank, k)
    }
    fn op_table(&self) -> Option<OpTable<'_>> {
        (**self).op_table()
    }
    fn min_send_size(&self) -> u64 {
        (**self).min_send_size()
    }
}
