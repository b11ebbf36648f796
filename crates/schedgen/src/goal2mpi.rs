//! What the paper's benchmark programs did with a schedule: the MPI calls that
//! `goal2mpi.py` (DanieleDeSensi/cloud_noise, `simulations/goal2mpi/`) writes for each rank, and
//! the schedule those calls amount to.
//!
//! The measured collectives of the paper's data repository are C programs that `goal2mpi.py`
//! generated from Schedgen's GOAL text (`convert_all.sh`: `--prioritize_receive`, and
//! `--skip_compute` for `nwaydissemination_nocompute`; `--nb_send` for the `_nbsend` files,
//! `--use_tests` for the `_test` files). A GOAL schedule only says what depends on what; the
//! program fixes an order, and the order matters: a blocking `MPI_Send` holds its rank until
//! the message is matched, a `calc` is a busy wait outside MPI. [`rank_program`] writes down,
//! per rank and iteration, the calls the generator emits ([`RankProgram`]), from these facts
//! about it:
//!
//! 1. Statements are the schedule's ops in file order; a statement's dependencies are its
//!    `requires` lines in file order (`irequires` lines are read the same way).
//! 2. With `--prioritize_receive`, the receives without dependencies come first, as
//!    `MPI_Irecv` (each gets a request).
//! 3. Then every other statement without dependencies, in order: a send is a blocking
//!    `MPI_Send` (`MPI_Isend` with a request under `--nb_send`), a calc is `my_nanosleep(t)`, a
//!    clock-based busy wait of t ns outside MPI, omitted when t is 0 or under
//!    `--skip_compute`.
//! 4. Then, inside a `do { … } while` loop, one *block* per statement in order: a statement
//!    not yet written is written after its dependencies, each dependency first written itself
//!    if it was not (recursively), then, if it holds a request not yet waited for,
//!    `MPI_Wait` on it (a request is waited for once).
//! 5. After the loop, `MPI_Wait` on every request not yet waited for, in the order they were
//!    made; the iteration's time ends with the next `MPI_Wtime`.
//! 6. Under `--use_tests`, a block whose first call is an `MPI_Wait` becomes `if (not done)
//!    { MPI_Test; if (complete) { rest of the block; done } }`, and the loop repeats until
//!    every such block has run: the rank polls (it stays inside MPI) and runs each block once
//!    its request completes. A block that does not start with a wait is not guarded: it runs
//!    again on every pass of the loop.
//! 7. Every iteration starts with `usleep(1)`, `MPI_Barrier`, `MPI_Wtime` (not modelled here:
//!    the caller adds them).
//!
//! [`RankProgram::sequence`] turns the calls into ops in program order, each depending on what
//! the program waited for before issuing it: the op after a blocking call (`MPI_Send`, a busy
//! wait) requires that call's op; the op after a nonblocking call (`MPI_Irecv`, `MPI_Isend`)
//! requires only that it started (`irequires`); an `MPI_Wait` adds a `requires` on the op of
//! its request. A guarded block of the `_test` programs runs when its request completes, after
//! the blocks before it: the paper's patterns complete their requests in order (a round's
//! message at a rank depends, at its sender, on the previous round's), so the order of the
//! blocks is that of the loop; a program whose loop holds an unguarded block that is not empty
//! is refused ([`Unsupported::UnguardedBlock`]): what it did depends on how often it polled.

use std::fmt::{self, Write as _};

use loggops_engine::{DepKind, Op, OpKind};

use crate::check::Line;

/// The options of `goal2mpi.py` that change the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Goal2Mpi {
    /// `--prioritize_receive` (every measured program): dependency-free receives first.
    pub prioritize_receive: bool,
    /// `--nb_send` (the `_nbsend` programs): `MPI_Isend` and a wait instead of `MPI_Send`.
    pub nb_send: bool,
    /// `--use_tests` (the `_test` programs): blocks guarded by `MPI_Test` (fact 6).
    pub use_tests: bool,
    /// `--skip_compute` (`nwaydissemination_nocompute`): no busy waits.
    pub skip_compute: bool,
}

/// One MPI call (or busy wait) of a rank's program; the `u32` is the schedule's op id (0-based;
/// the generator's request index and label number is the id + 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `MPI_Irecv` of a receive op.
    Irecv(u32),
    /// Blocking `MPI_Send` of a send op.
    Send(u32),
    /// `MPI_Isend` of a send op.
    Isend(u32),
    /// `MPI_Wait` on the request of an op.
    Wait(u32),
    /// `my_nanosleep`: the busy wait of a calc op.
    Compute(u32),
}

/// A block of the loop (fact 4): its calls, and under `--use_tests` the op whose request its
/// `MPI_Test` polls (the block's first wait, removed from `calls`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub guard: Option<u32>,
    pub calls: Vec<Call>,
}

/// One rank's calls per iteration, between its `MPI_Wtime`s.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RankProgram {
    /// Before the loop (facts 2 and 3).
    pub prologue: Vec<Call>,
    /// The loop's blocks, one per statement (many empty).
    pub blocks: Vec<Block>,
    /// After the loop: the waits of fact 5.
    pub epilogue: Vec<Call>,
}

/// A program [`RankProgram::sequence`] cannot express as a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsupported {
    /// A `_test` program whose polling loop holds a block without a test (fact 6): it runs on
    /// every pass, as often as the rank polls.
    UnguardedBlock { first: Call },
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsupported::UnguardedBlock { first } => write!(
                f,
                "its MPI_Test polling loop repeats a block that starts with {} (label l{}) on \
                 every pass: what it measured depends on how often it polled",
                match first {
                    Call::Irecv(_) => "MPI_Irecv",
                    Call::Send(_) => "MPI_Send",
                    Call::Isend(_) => "MPI_Isend",
                    Call::Wait(_) => "MPI_Wait",
                    Call::Compute(_) => "my_nanosleep",
                },
                call_op(*first) + 1
            ),
        }
    }
}

fn call_op(c: Call) -> u32 {
    match c {
        Call::Irecv(i) | Call::Send(i) | Call::Isend(i) | Call::Wait(i) | Call::Compute(i) => i,
    }
}

/// The ops among `lines`, in order (op `i` of the rank is the `i`-th).
pub fn ops_of(lines: &[Line]) -> Vec<Op> {
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Op(op) => Some(*op),
            _ => None,
        })
        .collect()
}

/// The calls `goal2mpi.py` writes for one rank whose schedule is `lines` (its ops and
/// `requires` lines in file order, as [`crate::schedgen_text::emit_rank`] gives them).
pub fn rank_program(lines: &[Line], opts: Goal2Mpi) -> RankProgram {
    let ops = ops_of(lines);
    let mut deps: Vec<Vec<u32>> = vec![Vec::new(); ops.len()];
    for l in lines {
        if let Line::Requires { tail, head } | Line::Irequires { tail, head } = *l {
            deps[tail as usize].push(head);
        }
    }
    let mut g = Gen {
        ops: &ops,
        deps: &deps,
        opts,
        printed: vec![false; ops.len()],
        handles: Vec::new(),
    };
    let mut prologue = Vec::new();
    if opts.prioritize_receive {
        for id in 0..ops.len() {
            if deps[id].is_empty() && !g.printed[id] && ops[id].kind == OpKind::Recv {
                g.statement(id as u32, &mut prologue);
            }
        }
    }
    for id in 0..ops.len() {
        if deps[id].is_empty() && !g.printed[id] {
            g.statement(id as u32, &mut prologue);
        }
    }
    let mut blocks = Vec::with_capacity(ops.len());
    for id in 0..ops.len() {
        let mut calls = Vec::new();
        g.with_deps(id as u32, &mut calls);
        let guard = match calls.first() {
            Some(&Call::Wait(r)) if opts.use_tests => {
                calls.remove(0);
                Some(r)
            }
            _ => None,
        };
        blocks.push(Block { guard, calls });
    }
    let epilogue = g.handles.iter().map(|&h| Call::Wait(h)).collect();
    RankProgram {
        prologue,
        blocks,
        epilogue,
    }
}

struct Gen<'a> {
    ops: &'a [Op],
    deps: &'a [Vec<u32>],
    opts: Goal2Mpi,
    printed: Vec<bool>,
    /// Requests not yet waited for, in the order they were made.
    handles: Vec<u32>,
}

impl Gen<'_> {
    /// Writes statement `id` (fact 3; a receive is always an `MPI_Irecv`).
    fn statement(&mut self, id: u32, out: &mut Vec<Call>) {
        let op = self.ops[id as usize];
        match op.kind {
            OpKind::Send if self.opts.nb_send => {
                out.push(Call::Isend(id));
                self.handles.push(id);
            }
            OpKind::Send => out.push(Call::Send(id)),
            OpKind::Recv => {
                out.push(Call::Irecv(id));
                self.handles.push(id);
            }
            OpKind::Calc => {
                if !self.opts.skip_compute && op.size != 0 {
                    out.push(Call::Compute(id));
                }
            }
        }
        self.printed[id as usize] = true;
    }

    /// Writes statement `id` after its dependencies (fact 4).
    fn with_deps(&mut self, id: u32, out: &mut Vec<Call>) {
        if self.printed[id as usize] {
            return;
        }
        for k in 0..self.deps[id as usize].len() {
            let d = self.deps[id as usize][k];
            if !self.printed[d as usize] {
                self.with_deps(d, out);
            }
            if let Some(pos) = self.handles.iter().position(|&h| h == d) {
                out.push(Call::Wait(d));
                self.handles.remove(pos);
            }
        }
        self.statement(id, out);
    }
}

/// One rank's program as ops in program order (see the module docs): `ops[0]` is the
/// iteration's first `MPI_Wtime` and the last op its second one (both calcs of length 0); every
/// other op depends on ops before it (`deps[i]`, with the kind of dependency).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sequence {
    pub ops: Vec<Op>,
    pub deps: Vec<Vec<(u32, DepKind)>>,
}

impl RankProgram {
    /// Every call in program order, the guards as waits (fact 6 in the loop's order).
    pub fn calls(&self) -> impl Iterator<Item = Call> + '_ {
        let blocks = self.blocks.iter().flat_map(|b| {
            b.guard
                .map(Call::Wait)
                .into_iter()
                .chain(b.calls.iter().copied())
        });
        self.prologue
            .iter()
            .copied()
            .chain(blocks)
            .chain(self.epilogue.iter().copied())
    }

    /// The program as ops in program order; `schedule_ops` are the rank's ops by id (a calc's
    /// busy wait lasts its op's duration).
    pub fn sequence(&self, schedule_ops: &[Op]) -> Result<Sequence, Unsupported> {
        if self.blocks.iter().any(|b| b.guard.is_some()) {
            if let Some(b) = self
                .blocks
                .iter()
                .find(|b| b.guard.is_none() && !b.calls.is_empty())
            {
                return Err(Unsupported::UnguardedBlock { first: b.calls[0] });
            }
        }
        let mut s = Sequence {
            ops: vec![Op::calc(0)],
            deps: vec![Vec::new()],
        };
        let mut id_of = vec![u32::MAX; schedule_ops.len()];
        let mut gate: Vec<(u32, DepKind)> = vec![(0, DepKind::Done)];
        let emit = |s: &mut Sequence, gate: &mut Vec<(u32, DepKind)>, op: Op| -> u32 {
            let id = s.ops.len() as u32;
            s.ops.push(op);
            s.deps.push(std::mem::take(gate));
            id
        };
        for call in self.calls() {
            match call {
                Call::Wait(x) => {
                    let dep = (id_of[x as usize], DepKind::Done);
                    debug_assert!(dep.0 != u32::MAX, "a wait before its request");
                    if !gate.contains(&dep) {
                        gate.push(dep);
                    }
                }
                Call::Irecv(x) | Call::Isend(x) | Call::Send(x) | Call::Compute(x) => {
                    let id = emit(&mut s, &mut gate, schedule_ops[x as usize]);
                    id_of[x as usize] = id;
                    let kind = match call {
                        Call::Irecv(_) | Call::Isend(_) => DepKind::Start,
                        _ => DepKind::Done,
                    };
                    gate.push((id, kind));
                }
            }
        }
        emit(&mut s, &mut gate, Op::calc(0));
        Ok(s)
    }

    /// The calls as text, one per line, in the generator's terms (the label `lN` is op id + 1,
    /// as is the request index): `MPI_Irecv l2 16b from 3 tag 0`, `MPI_Send l1 16b to 1 tag 0`,
    /// `MPI_Isend …`, `MPI_Wait l2`, `my_nanosleep l4 16777216`; the loop as `do {` … `}`,
    /// a guarded block as `MPI_Test l2 {` … `}`.
    pub fn render(&self, schedule_ops: &[Op]) -> String {
        let mut out = String::new();
        let line = |out: &mut String, indent: usize, c: Call| {
            let id = call_op(c);
            let op = schedule_ops[id as usize];
            let _ = match c {
                Call::Irecv(_) => writeln!(
                    out,
                    "{:indent$}MPI_Irecv l{} {}b from {} tag {}",
                    "",
                    id + 1,
                    op.size,
                    op.peer,
                    op.tag
                ),
                Call::Send(_) | Call::Isend(_) => writeln!(
                    out,
                    "{:indent$}{} l{} {}b to {} tag {}",
                    "",
                    if matches!(c, Call::Send(_)) {
                        "MPI_Send"
                    } else {
                        "MPI_Isend"
                    },
                    id + 1,
                    op.size,
                    op.peer,
                    op.tag
                ),
                Call::Wait(_) => writeln!(out, "{:indent$}MPI_Wait l{}", "", id + 1),
                Call::Compute(_) => {
                    writeln!(out, "{:indent$}my_nanosleep l{} {}", "", id + 1, op.size)
                }
            };
        };
        for &c in &self.prologue {
            line(&mut out, 0, c);
        }
        out.push_str("do {\n");
        for b in &self.blocks {
            match b.guard {
                Some(g) => {
                    let _ = writeln!(out, "  MPI_Test l{} {{", g + 1);
                    for &c in &b.calls {
                        line(&mut out, 4, c);
                    }
                    out.push_str("  }\n");
                }
                None => {
                    for &c in &b.calls {
                        line(&mut out, 2, c);
                    }
                }
            }
        }
        out.push_str("}\n");
        for &c in &self.epilogue {
            line(&mut out, 0, c);
        }
        out
    }
}
