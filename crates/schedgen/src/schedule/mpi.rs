//! `mpi { … }` blocks: a rank's MPI calls, turned into ops and dependencies exactly the way
//! Schedgen's trace conversion (`schedgen -p trace`) turns a liballprof trace into GOAL.
//!
//! # What a block means on a rank
//!
//! The active statements (those whose `if` holds on the rank) are the rank's MPI calls in
//! order, `calc` statements the computation between them. Every call is preceded by one
//! computation op, the *gap*, lasting the sum of the `calc` statements since the previous call
//! (0 if none; across `repeat` boundaries too); a `calc` after the last call becomes one
//! trailing op. Ops are numbered as Schedgen numbers them: each call's ops, then its gap.
//!
//! * a gap requires the previous call's *exit*: a blocking `send`/`recv`, a `wait`/`waitall`
//!   op or a collective's closing op (`requires`), or a nonblocking `isend`/`irecv`
//!   (`irequires`: the computation goes on once the request has started);
//! * a call's first ops require its gap (a collective's ops without dependencies inside it);
//! * `wait`/`waitall` is a zero-length op that also requires the named requests posted on the
//!   rank; a `wait` whose request was not posted is not called (MPI_REQUEST_NULL);
//! * a collective is the Schedgen pattern followed by a zero-length op that requires its ops
//!   without dependents (its *closing* op); the k-th collective of the rank in the block gets
//!   tag `tagbase + k` (default 1000000, Schedgen's `collsbase + nops`) unless `tag` fixes it.
//!
//! # How it is evaluated
//!
//! Ranks whose active statements, relative peers, sizes, tags, computation times and
//! collective op counts are the same share one compiled *class*. A class is a tree of
//! sequences: `repeat` is never unrolled, so a block costs memory in proportion to its text
//! and its number of classes (27 for a 3-D stencil), not to its ops. Every lookup descends the
//! tree from the root (a binary search per level), carrying what crosses item boundaries: the
//! computation pending, the previous call's exits, the next call's gap and the number of
//! collectives so far.

use std::collections::HashMap;

use loggops_engine::{DepKind, Op, OpKind};

use crate::collective::Generated;
use crate::error::SchedError;
use crate::schedule::expr::{Dimension, Expr};
use crate::schedule::parse::{MStmt, P2pKind, QArg, Span, TraceColl};
use crate::schedule::trace_coll::{RecdoubMpich, TColl};
use crate::schedule::Builder;

/// Schedgen's `collsbase`: the first collective's tag.
pub const COLLS_BASE: u32 = 1_000_000;

/// A value evaluated per rank (or the same everywhere).
#[derive(Clone, Debug)]
enum RVal {
    Fixed(u64),
    Expr(Expr),
}

impl RVal {
    fn at(&self, r: u32, p: u32) -> u64 {
        match self {
            RVal::Fixed(v) => *v,
            // Checked on every rank at instantiation (non-negative, no error).
            RVal::Expr(e) => e.eval(r, p).unwrap_or(0).max(0) as u64,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum CollTag {
    Fixed(u32),
    Base(u32),
}

/// A statement with its values resolved and checked.
#[derive(Clone, Debug)]
enum RStmt {
    Calc {
        dur: RVal,
        cond: Option<Expr>,
    },
    P2p {
        send: bool,
        nb: bool,
        size: RVal,
        peer: Expr,
        tag: u32,
        cond: Option<Expr>,
    },
    Wait {
        all: bool,
        /// Per name: the calls given that name before the wait (the last one posted counts).
        refs: Vec<Vec<usize>>,
        cond: Option<Expr>,
    },
    Coll {
        coll: u32,
        tag: CollTag,
    },
    Repeat {
        n: u32,
        body: Vec<RStmt>,
    },
}

fn holds(c: &Option<Expr>, r: u32, p: u32) -> bool {
    c.as_ref().is_none_or(|c| c.holds(r, p))
}

/// One call of a class: its ops (`nops` of them) followed by its gap.
#[derive(Clone, Debug)]
struct Call {
    kind: CallKind,
    nops: u32,
    /// Offsets (from the call's first op) of the ops the next gap depends on, with the kind.
    exits: Vec<(u32, DepKind)>,
}

#[derive(Clone, Debug)]
enum CallKind {
    P2p {
        send: bool,
        nb: bool,
        rel_peer: u32,
        size: u64,
        tag: u32,
        /// Offsets, in the enclosing sequence instance, of the wait ops that require it.
        waited_by: Vec<u32>,
    },
    Wait {
        /// Offsets, in the enclosing sequence instance, of the requests it requires.
        reqs: Vec<u32>,
    },
    Coll {
        coll: u32,
        n: u32,
        tag: CollTag,
    },
}

#[derive(Clone, Debug)]
enum Item {
    Call(Call),
    Repeat { n: u32, body: Box<Seq> },
}

/// A compiled sequence (the block, or the body of a `repeat`), one instance's layout.
#[derive(Clone, Debug, Default)]
struct Seq {
    items: Vec<Item>,
    /// First op of each item, from the instance's first op.
    starts: Vec<u32>,
    /// Computation between the previous item and each item (without what the previous item
    /// carries out of its last repetition).
    pre: Vec<u64>,
    /// Collectives before each item in the instance.
    colls_before: Vec<u32>,
    len: u32,
    /// Computation pending at the end of an instance (after its last call).
    trail: u64,
    /// Whether a `calc` is active after the last call (or anywhere, without calls).
    trail_seen: bool,
    colls: u32,
    first_gap: u32,
    last_exits: Vec<(u32, DepKind)>,
    /// Nonblocking requests no wait requires, per instance (they are sinks).
    unwaited: u32,
}

impl Seq {
    fn carry(&self, j: usize) -> u64 {
        match &self.items[j] {
            Item::Call(_) => 0,
            Item::Repeat { body, .. } => body.trail,
        }
    }
    fn first_gap_of(&self, j: usize) -> u32 {
        self.starts[j]
            + match &self.items[j] {
                Item::Call(c) => c.nops,
                Item::Repeat { body, .. } => body.first_gap,
            }
    }
    /// The exits of item `j`'s last call, relative to `base` (the instance's first op).
    fn exits_of(&self, j: usize, base: u32) -> Exits<'_> {
        match &self.items[j] {
            Item::Call(c) => Exits {
                base: base + self.starts[j],
                list: &c.exits,
            },
            Item::Repeat { n, body } => Exits {
                base: base + self.starts[j] + (n - 1) * body.len,
                list: &body.last_exits,
            },
        }
    }
}

#[derive(Clone, Copy)]
struct Exits<'a> {
    base: u32,
    list: &'a [(u32, DepKind)],
}

/// A compiled class of ranks.
#[derive(Clone, Debug)]
struct Class {
    root: Seq,
    /// Duration of the trailing computation op, if the class has one (the last op).
    trailing: Option<u64>,
    len: u32,
    sinks: u32,
    /// Every call located once (repetitions unrolled), when the block is small enough: a
    /// lookup is then an index instead of a descent.
    flat: Option<Flat>,
    /// With `flat`: every op's answers, except for the ops of collectives and the ops next to
    /// them (whose answers depend on the rank): the engine's questions then cost one index.
    table: Option<Vec<OpRec>>,
    /// A rank of the class.
    rep: u32,
}

/// An op's answers, the same for every rank of its class (its peer relative to the rank).
#[derive(Clone, Debug)]
struct OpRec {
    op: Op,
    depcount: u32,
    /// `deps[done.0..done.1]`, `deps[start.0..start.1]`: dependents (op ids).
    done: (u32, u32),
    start: (u32, u32),
    sink: bool,
    /// The answers depend on the rank: ask the collective.
    lazy: bool,
}

/// A class's calls located in advance.
#[derive(Clone, Debug)]
struct Flat {
    calls: Vec<FlatCall>,
    /// The call of every op (the trailing op excluded).
    call_of: Vec<u32>,
}

#[derive(Clone, Debug)]
struct FlatCall {
    call: Call,
    base: u32,
    seq_base: u32,
    gap: u64,
    /// The previous call's exits, absolute.
    prev: Option<Vec<(u32, DepKind)>>,
    next_gap: Option<u32>,
    coll_index: u32,
}

/// Most ops of all classes together that are located in advance (beyond, lookups descend the
/// tree: the same answers, more slowly).
pub const MAX_FLAT_OPS: u64 = 1 << 23;

/// Where an op is: its call and what crosses the call's boundaries.
struct Loc<'a> {
    call: &'a Call,
    base: u32,
    local: u32,
    seq_base: u32,
    gap: u64,
    prev: Option<Exits<'a>>,
    next_gap: Option<u32>,
    coll_index: u32,
}

/// An instantiated `mpi { }` block on P ranks.
#[derive(Clone, Debug)]
pub(crate) struct MpiProg {
    p: u32,
    /// Each rank's class.
    class_of: Vec<u32>,
    classes: Vec<Class>,
    colls: Vec<TColl>,
    min_send: u64,
    nonblocking: bool,
    /// Dependents lists of the classes' op tables.
    deps: Vec<u32>,
}

/// Most distinct classes a block may have (each costs memory in proportion to the block's
/// text); beyond, the block's values depend on the rank in too many ways.
pub const MAX_CLASSES: usize = 1 << 16;

impl Builder<'_> {
    /// Instantiates an `mpi { }` block.
    pub(super) fn mpi(&self, body: &[MStmt], span: Span) -> Result<MpiProg, SchedError> {
        let mut colls = Vec::new();
        let stmts = self.mpi_stmts(body, &mut colls)?;
        let p = self.p;
        if !colls.is_empty() && p < 2 {
            return Err(self.err(
                span,
                "an mpi block with collectives needs at least 2 ranks",
                Some(format!("--nodes is {p}")),
            ));
        }
        let mut keys: HashMap<Vec<u64>, u32> = HashMap::new();
        let mut class_of = Vec::with_capacity(p as usize);
        let mut classes: Vec<Class> = Vec::new();
        let mut key = Vec::new();
        for r in 0..p {
            key.clear();
            class_key(&stmts, &colls, r, p, &mut key);
            let id = match keys.get(&key) {
                Some(&id) => id,
                None => {
                    if classes.len() == MAX_CLASSES {
                        return Err(self.err(
                            span,
                            format!("this mpi block has more than {MAX_CLASSES} kinds of ranks (ranks differing in their calls, peers relative to the rank, sizes, tags or computation)"),
                            Some("make values depend on the rank through a few conditions (e.g. grid boundaries) rather than on every rank".to_string()),
                        ));
                    }
                    let c = self.compile_class(&stmts, &colls, r, span)?;
                    let id = classes.len() as u32;
                    classes.push(c);
                    keys.insert(key.clone(), id);
                    id
                }
            };
            class_of.push(id);
        }
        let total: u64 = classes.iter().map(|c| c.len as u64).sum();
        if total <= MAX_FLAT_OPS {
            for c in &mut classes {
                c.flat = Some(flatten(c));
            }
        }
        let mut prog = MpiProg {
            p,
            class_of,
            classes,
            colls,
            min_send: u64::MAX,
            nonblocking: false,
            deps: Vec::new(),
        };
        for k in 0..prog.classes.len() {
            if prog.classes[k].flat.is_some() {
                let t = prog.table(k);
                prog.classes[k].table = Some(t);
            }
        }
        let MpiProg {
            class_of,
            classes,
            colls,
            deps,
            ..
        } = prog;
        let mut min_send = colls
            .iter()
            .map(TColl::min_send_size)
            .min()
            .unwrap_or(u64::MAX);
        let mut nonblocking = false;
        min_sends(&stmts, p, &mut min_send, &mut nonblocking);
        Ok(MpiProg {
            p,
            class_of,
            classes,
            colls,
            min_send,
            nonblocking,
            deps,
        })
    }

    fn qval(&self, q: &QArg, want: Dimension) -> Result<RVal, SchedError> {
        match q {
            QArg::Val(v) => Ok(RVal::Fixed(match want {
                Dimension::Time => self.duration(v)?,
                _ => self.size(v)?,
            })),
            QArg::Expr(e) => {
                let x = self.quantity_expr(e, want)?;
                if x.uses_rank() {
                    Ok(RVal::Expr(x))
                } else {
                    Ok(RVal::Fixed(x.eval(0, self.p).unwrap_or(0) as u64))
                }
            }
        }
    }

    fn mpi_stmts(&self, body: &[MStmt], colls: &mut Vec<TColl>) -> Result<Vec<RStmt>, SchedError> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            out.push(match s {
                MStmt::Calc { dur, cond } => RStmt::Calc {
                    dur: self.qval(dur, Dimension::Time)?,
                    cond: cond.as_ref().map(|c| self.expr(c)).transpose()?,
                },
                MStmt::P2p {
                    kind,
                    nonblocking,
                    size,
                    peer,
                    tag,
                    cond,
                    ..
                } => RStmt::P2p {
                    send: *kind == P2pKind::Send,
                    nb: *nonblocking,
                    size: match size {
                        // A single value keeps the rule that a size is at least 1B.
                        QArg::Val(_) => self.qval(size, Dimension::Size)?,
                        QArg::Expr(_) => self.qval(size, Dimension::Size)?,
                    },
                    peer: self.expr(peer)?,
                    tag: self.tag(tag)?,
                    cond: cond.as_ref().map(|c| self.expr(c)).transpose()?,
                },
                MStmt::Wait {
                    all, refs, cond, ..
                } => RStmt::Wait {
                    all: *all,
                    refs: refs.clone(),
                    cond: cond.as_ref().map(|c| self.expr(c)).transpose()?,
                },
                MStmt::Coll {
                    coll,
                    name_span,
                    size,
                    opts,
                    ..
                } => {
                    let d = match self.qval(size, Dimension::Size)? {
                        RVal::Fixed(d) => d,
                        RVal::Expr(_) => {
                            let span = match size {
                                QArg::Expr(e) => e.span,
                                QArg::Val(v) => v.span,
                            };
                            return Err(self.err(
                                span,
                                "a collective's size must be the same on every rank",
                                Some("use `P`, integers and parameters, not `rank` or grid coordinates".to_string()),
                            ));
                        }
                    };
                    let mut o = self.gen_options(opts)?;
                    // the block numbers the instances' tags itself
                    o.tag_offset = 0;
                    let mut tag = CollTag::Base(COLLS_BASE);
                    for (key, _, v) in opts {
                        match key.as_str() {
                            "tag" => tag = CollTag::Fixed(self.tag(&Some(v.clone()))?),
                            "tagbase" => tag = CollTag::Base(self.tag(&Some(v.clone()))?),
                            _ => {}
                        }
                    }
                    let c = match coll {
                        TraceColl::RecdoubMpich => TColl::Mpich(RecdoubMpich::new(self.p, d)),
                        TraceColl::Gen(pattern) => {
                            match Generated::with_options(*pattern, self.p, d.max(1), o) {
                                Ok(g) => TColl::Gen(g),
                                Err(e) => return Err(self.err(*name_span, e.to_string(), Some(format!("the number of ranks comes from --nodes ({})", self.p)))),
                            }
                        }
                    };
                    colls.push(c);
                    RStmt::Coll {
                        coll: colls.len() as u32 - 1,
                        tag,
                    }
                }
                MStmt::Repeat { count, body } => RStmt::Repeat {
                    n: self.int(count, "repeat count", 1, u32::MAX as u64)? as u32,
                    body: self.mpi_stmts(body, colls)?,
                },
            });
        }
        Ok(out)
    }

    /// Compiles the class of rank `r`.
    fn compile_class(
        &self,
        stmts: &[RStmt],
        colls: &[TColl],
        r: u32,
        span: Span,
    ) -> Result<Class, SchedError> {
        let too_many = |what: &str| {
            self.err(
                span,
                format!("this mpi block gives rank {r} {what}"),
                Some("an engine rank holds at most 4294967295 ops and times are u64 picoseconds; reduce the repeat counts".to_string()),
            )
        };
        let root = compile_seq(stmts, colls, r, self.p).map_err(&too_many)?;
        let trailing = root.trail_seen.then_some(root.trail);
        let len = root.len as u64 + trailing.is_some() as u64;
        if len > u32::MAX as u64 {
            return Err(too_many("more than 4294967295 ops"));
        }
        let done_exits = root
            .last_exits
            .iter()
            .filter(|e| e.1 == DepKind::Done)
            .count() as u32;
        let sinks = root.unwaited + if trailing.is_some() { 1 } else { done_exits };
        // Tags of numbered collectives must stay below the wildcard tag.
        let max_tag = colls.iter().map(TColl::max_tag).max().unwrap_or(0);
        let max_base = max_coll_base(stmts);
        if (max_base + root.colls as u64 + max_tag) >= u32::MAX as u64 {
            return Err(self.err(
                span,
                format!("the collectives' tags overflow on rank {r}: {} collectives numbered from {max_base}", root.colls),
                Some("give a smaller `tagbase`".to_string()),
            ));
        }
        Ok(Class {
            root,
            trailing,
            len: len as u32,
            sinks,
            flat: None,
            table: None,
            rep: r,
        })
    }
}

fn max_coll_base(stmts: &[RStmt]) -> u64 {
    stmts
        .iter()
        .map(|s| match s {
            RStmt::Coll {
                tag: CollTag::Base(b),
                ..
            } => *b as u64,
            RStmt::Coll {
                tag: CollTag::Fixed(t),
                ..
            } => *t as u64,
            RStmt::Repeat { body, .. } => max_coll_base(body),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

fn min_sends(stmts: &[RStmt], p: u32, min: &mut u64, nb: &mut bool) {
    for s in stmts {
        match s {
            RStmt::P2p {
                send, size, nb: n, ..
            } => {
                *nb |= *n;
                if *send {
                    let m = match size {
                        RVal::Fixed(v) => *v,
                        RVal::Expr(_) => (0..p).map(|r| size.at(r, p)).min().unwrap_or(0),
                    };
                    *min = (*min).min(m);
                }
            }
            RStmt::Repeat { body, .. } => min_sends(body, p, min, nb),
            _ => {}
        }
    }
}

/// What makes rank `r`'s class: everything the compiled class stores.
fn class_key(stmts: &[RStmt], colls: &[TColl], r: u32, p: u32, key: &mut Vec<u64>) {
    for s in stmts {
        match s {
            RStmt::Calc { dur, cond } => {
                if holds(cond, r, p) {
                    key.push(1);
                    key.push(dur.at(r, p));
                } else {
                    key.push(0);
                }
            }
            RStmt::P2p {
                size, peer, cond, ..
            } => {
                if holds(cond, r, p) {
                    key.push(1);
                    key.push(rel(peer.peer(r, p), r, p) as u64);
                    key.push(size.at(r, p));
                } else {
                    key.push(0);
                }
            }
            RStmt::Wait { cond, .. } => key.push(holds(cond, r, p) as u64),
            RStmt::Coll { coll, .. } => {
                let c = &colls[*coll as usize];
                key.push(c.num_ops(r) as u64);
            }
            RStmt::Repeat { body, .. } => class_key(body, colls, r, p, key),
        }
    }
}

fn rel(peer: u32, r: u32, p: u32) -> u32 {
    ((peer as u64 + p as u64 - r as u64) % p as u64) as u32
}

/// Compiles one sequence for rank `r`; the error says what overflowed.
fn compile_seq(stmts: &[RStmt], colls: &[TColl], r: u32, p: u32) -> Result<Seq, &'static str> {
    let mut s = Seq::default();
    let mut pending: u64 = 0;
    let mut seen = false;
    let mut len: u64 = 0;
    let mut colls_n: u64 = 0;
    let mut unwaited: u64 = 0;
    // statement index → (item index, op offset) of the requests posted
    let mut posted: HashMap<usize, (usize, u32)> = HashMap::new();
    const TIME: &str = "computation longer than u64 picoseconds";
    const OPS: &str = "more than 4294967295 ops";
    let push = |s: &mut Seq,
                item: Item,
                pre: u64,
                len: &mut u64,
                colls_n: &mut u64,
                n_ops: u64|
     -> Result<(), &'static str> {
        s.starts.push(u32::try_from(*len).map_err(|_| OPS)?);
        s.pre.push(pre);
        s.colls_before
            .push(u32::try_from(*colls_n).map_err(|_| OPS)?);
        *len += n_ops;
        if *len > u32::MAX as u64 {
            return Err(OPS);
        }
        s.items.push(item);
        Ok(())
    };
    for (si, st) in stmts.iter().enumerate() {
        match st {
            RStmt::Calc { dur, cond } => {
                if holds(cond, r, p) {
                    pending = pending.checked_add(dur.at(r, p)).ok_or(TIME)?;
                    seen = true;
                }
            }
            RStmt::P2p {
                send,
                nb,
                size,
                peer,
                tag,
                cond,
            } => {
                if !holds(cond, r, p) {
                    continue;
                }
                let off = len as u32;
                let call = Call {
                    kind: CallKind::P2p {
                        send: *send,
                        nb: *nb,
                        rel_peer: rel(peer.peer(r, p), r, p),
                        size: size.at(r, p),
                        tag: *tag,
                        waited_by: Vec::new(),
                    },
                    nops: 1,
                    exits: vec![(0, if *nb { DepKind::Start } else { DepKind::Done })],
                };
                posted.insert(si, (s.items.len(), off));
                push(&mut s, Item::Call(call), pending, &mut len, &mut colls_n, 2)?;
                pending = 0;
                seen = false;
            }
            RStmt::Wait { all, refs, cond } => {
                if !holds(cond, r, p) {
                    continue;
                }
                let reqs: Vec<(usize, u32)> = refs
                    .iter()
                    .filter_map(|cands| cands.iter().rev().find_map(|i| posted.get(i).copied()))
                    .collect();
                if !*all && reqs.is_empty() {
                    continue;
                }
                let off = len as u32;
                for &(item, _) in &reqs {
                    if let Item::Call(Call {
                        kind: CallKind::P2p { waited_by, .. },
                        ..
                    }) = &mut s.items[item]
                    {
                        waited_by.push(off);
                    }
                }
                let call = Call {
                    kind: CallKind::Wait {
                        reqs: reqs.iter().map(|x| x.1).collect(),
                    },
                    nops: 1,
                    exits: vec![(0, DepKind::Done)],
                };
                push(&mut s, Item::Call(call), pending, &mut len, &mut colls_n, 2)?;
                pending = 0;
                seen = false;
            }
            RStmt::Coll { coll, tag } => {
                let n = colls[*coll as usize].num_ops(r);
                let call = Call {
                    kind: CallKind::Coll {
                        coll: *coll,
                        n,
                        tag: *tag,
                    },
                    nops: n + 1,
                    exits: vec![(n, DepKind::Done)],
                };
                push(
                    &mut s,
                    Item::Call(call),
                    pending,
                    &mut len,
                    &mut colls_n,
                    n as u64 + 2,
                )?;
                colls_n += 1;
                pending = 0;
                seen = false;
            }
            RStmt::Repeat { n, body } => {
                let b = compile_seq(body, colls, r, p)?;
                if b.items.is_empty() {
                    pending = pending
                        .checked_add(b.trail.checked_mul(*n as u64).ok_or(TIME)?)
                        .ok_or(TIME)?;
                    seen |= b.trail_seen;
                    continue;
                }
                // the time pending across repetitions must fit too
                b.trail.checked_mul(*n as u64).ok_or(TIME)?;
                let ops = b.len as u64 * *n as u64;
                let c = b.colls as u64 * *n as u64;
                let uw = b.unwaited as u64 * *n as u64;
                let tseen = b.trail_seen;
                push(
                    &mut s,
                    Item::Repeat {
                        n: *n,
                        body: Box::new(b),
                    },
                    pending,
                    &mut len,
                    &mut colls_n,
                    ops,
                )?;
                colls_n += c;
                unwaited += uw;
                // what the last repetition leaves pending is carried (Seq::carry), not pre
                pending = 0;
                seen = tseen;
            }
        }
    }
    for it in &s.items {
        if let Item::Call(Call {
            kind:
                CallKind::P2p {
                    nb: true,
                    waited_by,
                    ..
                },
            ..
        }) = it
        {
            unwaited += waited_by.is_empty() as u64;
        }
    }
    s.len = len as u32;
    s.colls = u32::try_from(colls_n).map_err(|_| OPS)?;
    s.unwaited = u32::try_from(unwaited).map_err(|_| OPS)?;
    s.trail_seen = seen;
    if s.items.is_empty() {
        s.trail = pending;
    } else {
        let last = s.items.len() - 1;
        s.trail = pending.checked_add(s.carry(last)).ok_or(TIME)?;
        s.first_gap = s.first_gap_of(0);
        let ex = s.exits_of(last, 0);
        s.last_exits = ex.list.iter().map(|&(o, k)| (ex.base + o, k)).collect();
    }
    Ok(s)
}

/// Locates every call of a class once.
fn flatten(c: &Class) -> Flat {
    let n = c.len - c.trailing.is_some() as u32;
    let mut calls = Vec::new();
    let mut call_of = Vec::with_capacity(n as usize);
    let mut id = 0;
    while id < n {
        let loc = MpiProg::locate_in_tree(c, id);
        let ops = loc.call.nops + 1;
        calls.push(FlatCall {
            call: loc.call.clone(),
            base: loc.base,
            seq_base: loc.seq_base,
            gap: loc.gap,
            prev: loc
                .prev
                .map(|e| e.list.iter().map(|&(o, k)| (e.base + o, k)).collect()),
            next_gap: loc.next_gap,
            coll_index: loc.coll_index,
        });
        call_of.extend(std::iter::repeat_n(calls.len() as u32 - 1, ops as usize));
        id += ops;
    }
    Flat { calls, call_of }
}

impl MpiProg {
    /// Class `k`'s op table (built from its representative rank).
    fn table(&mut self, k: usize) -> Vec<OpRec> {
        let c = &self.classes[k];
        let r = c.rep;
        let mut out = Vec::with_capacity(c.len as usize);
        let mut deps = std::mem::take(&mut self.deps);
        for id in 0..c.len {
            let lazy = !Self::is_trailing(c, id) && {
                let loc = self.locate(c, id);
                matches!(&loc.call.kind, CallKind::Coll { .. })
            };
            if lazy {
                out.push(OpRec {
                    op: Op::calc(0),
                    depcount: 0,
                    done: (0, 0),
                    start: (0, 0),
                    sink: false,
                    lazy: true,
                });
                continue;
            }
            let mut op = self.op_slow(r, id);
            if op.kind != OpKind::Calc && op.peer != loggops_engine::ANY {
                op.peer = rel(op.peer, r, self.p);
            }
            let d0 = deps.len() as u32;
            self.dependents_slow(r, id, DepKind::Done, &mut |x| deps.push(x));
            let d1 = deps.len() as u32;
            self.dependents_slow(r, id, DepKind::Start, &mut |x| deps.push(x));
            let d2 = deps.len() as u32;
            out.push(OpRec {
                op,
                depcount: self.depcount_slow(r, id),
                done: (d0, d1),
                start: (d1, d2),
                sink: self.is_sink_slow(r, id),
                lazy: false,
            });
        }
        self.deps = deps;
        out
    }

    /// The op table record of op `id` of rank `r`, when it answers for the rank.
    #[inline]
    fn rec(&self, r: u32, id: u32) -> Option<&OpRec> {
        let c = self.class(r);
        c.table
            .as_ref()
            .map(|t| &t[id as usize])
            .filter(|rec| !rec.lazy)
    }

    fn class(&self, r: u32) -> &Class {
        &self.classes[self.class_of[r as usize] as usize]
    }

    fn is_trailing(c: &Class, id: u32) -> bool {
        c.trailing.is_some() && id + 1 == c.len
    }

    fn locate<'a>(&'a self, c: &'a Class, id: u32) -> Loc<'a> {
        if let Some(f) = &c.flat {
            let fc = &f.calls[f.call_of[id as usize] as usize];
            return Loc {
                call: &fc.call,
                base: fc.base,
                local: id - fc.base,
                seq_base: fc.seq_base,
                gap: fc.gap,
                prev: fc.prev.as_ref().map(|v| Exits { base: 0, list: v }),
                next_gap: fc.next_gap,
                coll_index: fc.coll_index,
            };
        }
        Self::locate_in_tree(c, id)
    }

    fn locate_in_tree<'a>(c: &'a Class, id: u32) -> Loc<'a> {
        let mut seq = &c.root;
        let mut base = 0u32;
        let mut pending_in = 0u64;
        let mut prev_in: Option<Exits<'a>> = None;
        let mut next_in: Option<u32> = c.trailing.map(|_| c.len - 1);
        let mut coll_base = 0u32;
        loop {
            let off = id - base;
            let j = seq.starts.partition_point(|&s| s <= off) - 1;
            let ib = base + seq.starts[j];
            let (pending, prev) = if j == 0 {
                (pending_in + seq.pre[0], prev_in)
            } else {
                (
                    seq.pre[j] + seq.carry(j - 1),
                    Some(seq.exits_of(j - 1, base)),
                )
            };
            let next = if j + 1 < seq.items.len() {
                Some(base + seq.first_gap_of(j + 1))
            } else {
                next_in
            };
            let coll = coll_base + seq.colls_before[j];
            match &seq.items[j] {
                Item::Call(call) => {
                    return Loc {
                        call,
                        base: ib,
                        local: id - ib,
                        seq_base: base,
                        gap: pending,
                        prev,
                        next_gap: next,
                        coll_index: coll,
                    }
                }
                Item::Repeat { n, body } => {
                    let k = (id - ib) / body.len;
                    let kb = ib + k * body.len;
                    pending_in = if k == 0 { pending } else { body.trail };
                    prev_in = if k == 0 {
                        prev
                    } else {
                        Some(Exits {
                            base: kb - body.len,
                            list: &body.last_exits,
                        })
                    };
                    next_in = if k + 1 < *n {
                        Some(kb + body.len + body.first_gap)
                    } else {
                        next
                    };
                    coll_base = coll + k * body.colls;
                    base = kb;
                    seq = body;
                }
            }
        }
    }

    fn coll_tag(tag: CollTag, index: u32) -> u32 {
        match tag {
            CollTag::Fixed(t) => t,
            CollTag::Base(b) => b + index,
        }
    }

    pub(crate) fn len(&self, r: u32) -> u32 {
        self.class(r).len
    }

    pub(crate) fn op(&self, r: u32, id: u32) -> Op {
        if let Some(rec) = self.rec(r, id) {
            let mut op = rec.op;
            if op.kind != OpKind::Calc && op.peer != loggops_engine::ANY {
                op.peer = ((r as u64 + op.peer as u64) % self.p as u64) as u32;
            }
            return op;
        }
        self.op_slow(r, id)
    }

    fn op_slow(&self, r: u32, id: u32) -> Op {
        let c = self.class(r);
        if Self::is_trailing(c, id) {
            return Op::calc(c.trailing.unwrap_or(0));
        }
        let loc = self.locate(c, id);
        if loc.local == loc.call.nops {
            return Op::calc(loc.gap);
        }
        match &loc.call.kind {
            CallKind::P2p {
                send,
                rel_peer,
                size,
                tag,
                ..
            } => {
                let peer = ((r as u64 + *rel_peer as u64) % self.p as u64) as u32;
                if *send {
                    Op::send(*size, peer, *tag)
                } else {
                    Op::recv(*size, peer, *tag)
                }
            }
            CallKind::Wait { .. } => Op::calc(0),
            CallKind::Coll { coll, n, tag } => {
                if loc.local < *n {
                    let mut op = self.colls[*coll as usize].op(r, loc.local);
                    if op.kind != OpKind::Calc {
                        op.tag += Self::coll_tag(*tag, loc.coll_index);
                    }
                    op
                } else {
                    Op::calc(0)
                }
            }
        }
    }

    pub(crate) fn depcount(&self, r: u32, id: u32) -> u32 {
        match self.rec(r, id) {
            Some(rec) => rec.depcount,
            None => self.depcount_slow(r, id),
        }
    }

    fn depcount_slow(&self, r: u32, id: u32) -> u32 {
        let c = self.class(r);
        if Self::is_trailing(c, id) {
            return if c.root.items.is_empty() {
                0
            } else {
                c.root.last_exits.len() as u32
            };
        }
        let loc = self.locate(c, id);
        if loc.local == loc.call.nops {
            return loc.prev.map_or(0, |e| e.list.len() as u32);
        }
        match &loc.call.kind {
            CallKind::P2p { .. } => 1,
            CallKind::Wait { reqs } => 1 + reqs.len() as u32,
            CallKind::Coll { coll, n, .. } => {
                let g = &self.colls[*coll as usize];
                if loc.local < *n {
                    g.depcount(r, loc.local).max(1)
                } else {
                    g.num_sinks(r)
                }
            }
        }
    }

    pub(crate) fn num_roots(&self, r: u32) -> u32 {
        (self.class(r).len > 0) as u32
    }

    pub(crate) fn root(&self, r: u32, _k: u32) -> u32 {
        let c = self.class(r);
        if c.root.items.is_empty() {
            0
        } else {
            c.root.first_gap
        }
    }

    pub(crate) fn num_sinks(&self, r: u32) -> u32 {
        self.class(r).sinks
    }

    pub(crate) fn is_sink(&self, r: u32, id: u32) -> bool {
        match self.rec(r, id) {
            Some(rec) => rec.sink,
            None => self.is_sink_slow(r, id),
        }
    }

    fn is_sink_slow(&self, r: u32, id: u32) -> bool {
        let c = self.class(r);
        if Self::is_trailing(c, id) {
            return true;
        }
        let loc = self.locate(c, id);
        if loc.local == loc.call.nops {
            return false;
        }
        match &loc.call.kind {
            CallKind::P2p {
                nb: true,
                waited_by,
                ..
            } => waited_by.is_empty(),
            CallKind::P2p { .. } | CallKind::Wait { .. } => loc.next_gap.is_none(),
            CallKind::Coll { n, .. } => loc.local == *n && loc.next_gap.is_none(),
        }
    }

    pub(crate) fn for_each_dependent(
        &self,
        r: u32,
        id: u32,
        kind: DepKind,
        f: &mut dyn FnMut(u32),
    ) {
        if let Some(rec) = self.rec(r, id) {
            let (a, b) = if kind == DepKind::Done {
                rec.done
            } else {
                rec.start
            };
            for &x in &self.deps[a as usize..b as usize] {
                f(x);
            }
            return;
        }
        self.dependents_slow(r, id, kind, f)
    }

    fn dependents_slow(&self, r: u32, id: u32, kind: DepKind, f: &mut dyn FnMut(u32)) {
        let c = self.class(r);
        if Self::is_trailing(c, id) {
            return;
        }
        let loc = self.locate(c, id);
        let done = kind == DepKind::Done;
        if loc.local == loc.call.nops {
            if !done {
                return;
            }
            match &loc.call.kind {
                CallKind::P2p { .. } | CallKind::Wait { .. } => f(loc.base),
                CallKind::Coll { coll, .. } => {
                    let g = &self.colls[*coll as usize];
                    for k in 0..g.num_roots(r) {
                        f(loc.base + g.root(r, k));
                    }
                }
            }
            return;
        }
        match &loc.call.kind {
            CallKind::P2p { nb, waited_by, .. } => {
                if *nb {
                    if done {
                        for &w in waited_by {
                            f(loc.seq_base + w);
                        }
                    } else if let Some(g) = loc.next_gap {
                        f(g);
                    }
                } else if done {
                    if let Some(g) = loc.next_gap {
                        f(g);
                    }
                }
            }
            CallKind::Wait { .. } => {
                if done {
                    if let Some(g) = loc.next_gap {
                        f(g);
                    }
                }
            }
            CallKind::Coll { coll, n, .. } => {
                let g = &self.colls[*coll as usize];
                if loc.local < *n {
                    g.for_each_dependent(r, loc.local, kind, &mut |d| f(loc.base + d));
                    if done && g.is_sink(r, loc.local) {
                        f(loc.base + n);
                    }
                } else if done {
                    if let Some(g) = loc.next_gap {
                        f(g);
                    }
                }
            }
        }
    }

    pub(crate) fn min_send_size(&self) -> u64 {
        self.min_send
    }

    /// Forgets the calls located in advance (lookups descend the tree; for tests).
    pub(crate) fn drop_flat(&mut self) {
        for c in &mut self.classes {
            c.flat = None;
            c.table = None;
        }
    }

    pub(crate) fn has_start_dependents(&self) -> bool {
        self.nonblocking
    }
}
