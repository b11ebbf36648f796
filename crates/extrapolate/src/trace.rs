//! Reading a trace (GOAL text or binary, optionally xz-compressed) and decoding every rank's
//! ops back into the MPI calls Schedgen's trace conversion made them from.
//!
//! Schedgen (`schedgen -p trace`) writes, per rank and per MPI call, the call's ops followed by
//! one computation op (the *gap*: the time since the previous call returned), with
//! * a point-to-point call: one send or receive that requires its gap;
//! * `MPI_Wait`/`MPI_Waitall`: a zero-length op that requires its gap and the requests;
//! * a collective: the pattern's ops (the ones without dependencies require the gap) and a
//!   zero-length *closing* op that requires the pattern's ops without dependents;
//!
//! each gap requiring the previous call's exit (`irequires` after `MPI_Isend`/`MPI_Irecv`), and
//! a last computation op up to `MPI_Finalize`. [`decode`] reads exactly that shape back and
//! refuses anything else, naming the op.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use loggops_engine::{DepKind, Op, OpKind, Program, ANY};
use loggops_goal::{ExplicitProgram, ParseOptions};

use crate::error::{ExtrapError, Refusal};

/// A point-to-point peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Peer {
    Rank(u32),
    /// `MPI_ANY_SOURCE`.
    Any,
}

/// One MPI call of a rank, as decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallKind {
    P2p {
        send: bool,
        /// `MPI_Isend`/`MPI_Irecv` (the next computation starts when it starts).
        nb: bool,
        peer: Peer,
        size: u64,
        tag: u32,
    },
    /// A zero-length op that requires the requests of these earlier calls (indices into the
    /// rank's calls). `all`: certainly `MPI_Waitall` (Schedgen wrote other than one request).
    Wait { reqs: Vec<u32>, all: bool },
    /// A collective: its send/receive ops in order (all with one tag), and what each requires
    /// inside the collective (indices into `ops`, declaration order).
    Coll { ops: Vec<Op>, reqs: Vec<Vec<u32>> },
}

/// A call and the computation before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The gap before the call, in ps.
    pub gap: u64,
    pub kind: CallKind,
    /// Id of the call's first op in the trace (for messages: label `l{op+1}`).
    pub op: u32,
}

/// A rank's calls and its last computation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankCalls {
    pub calls: Vec<Call>,
    /// The computation after the last call (up to `MPI_Finalize`), in ps.
    pub trailing: Option<u64>,
}

/// A decoded trace.
#[derive(Debug)]
pub struct Trace {
    pub path: PathBuf,
    pub p: u32,
    pub ranks: Vec<RankCalls>,
    /// The trace as a program (times in ps with the tick it was read with).
    pub program: ExplicitProgram,
}

impl Trace {
    /// Per rank, its collective calls: (first op, ops).
    pub fn collective_calls(&self) -> Vec<Vec<(u32, &[Op])>> {
        self.ranks
            .iter()
            .map(|r| {
                r.calls
                    .iter()
                    .filter_map(|c| match &c.kind {
                        CallKind::Coll { ops, .. } => Some((c.op, &ops[..])),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    /// A short name for tables (the file name).
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// Reads a file, decompressing it when it is xz (by its magic bytes).
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, ExtrapError> {
    let io = |source| ExtrapError::Io {
        path: path.to_path_buf(),
        source,
    };
    let raw = std::fs::read(path).map_err(io)?;
    if raw.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
        let mut out = Vec::new();
        liblzma::read::XzDecoder::new_multi_decoder(&raw[..])
            .read_to_end(&mut out)
            .map_err(io)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Loads a trace: GOAL text or LogGOPSim binary, plain or xz-compressed; plain calc numbers
/// are ticks of `tick_ps`.
pub fn load(path: &Path, tick_ps: u64) -> Result<Trace, ExtrapError> {
    let bytes = read_bytes(path)?;
    let name = path.display().to_string();
    let opts = ParseOptions::with_tick(tick_ps);
    let magic = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let program = if magic == Some(loggops_goal::binary::MAGIC)
        || magic == Some(loggops_goal::binary::MAGIC_INVALIDATED)
    {
        loggops_goal::read_binary_from_with(&name, Cursor::new(&bytes[..]), &opts)
    } else {
        loggops_goal::parse_reader_with(&name, &bytes[..], &opts).map(|p| p.program)
    }
    .map_err(|source| ExtrapError::Goal {
        path: path.to_path_buf(),
        source: Box::new(source),
    })?;
    let p = program.num_ranks();
    let mut ranks = Vec::with_capacity(p as usize);
    for r in 0..p {
        ranks.push(decode(&program, r).map_err(|why| {
            ExtrapError::Refused(Box::new(Refusal {
                scale: p,
                file: path.to_path_buf(),
                rank: r,
                op: Some(why.op),
                what: why.what,
                fix: "extrapolate reads traces as `schedgen -p trace` converts liballprof traces (every MPI call's ops followed by the computation before it); convert the trace with Schedgen, unchanged".to_string(),
            }))
        })?);
    }
    Ok(Trace {
        path: path.to_path_buf(),
        p,
        ranks,
        program,
    })
}

/// Why a rank does not have the shape Schedgen writes.
#[derive(Debug)]
pub(crate) struct Shape {
    pub op: u32,
    pub what: String,
}

fn shape(op: u32, what: impl Into<String>) -> Shape {
    Shape {
        op,
        what: what.into(),
    }
}

/// Decodes rank `r` of a program written by Schedgen's trace conversion.
pub(crate) fn decode<P: Program>(prog: &P, r: u32) -> Result<RankCalls, Shape> {
    let n = prog.num_ops(r);
    let ops: Vec<Op> = (0..n).map(|i| prog.op(r, i)).collect();
    // what each op requires, in declaration order per dependency
    let mut reqs: Vec<Vec<(u32, DepKind)>> = vec![Vec::new(); n as usize];
    for i in 0..n {
        for kind in [DepKind::Done, DepKind::Start] {
            prog.for_each_dependent(r, i, kind, |d| reqs[d as usize].push((i, kind)));
        }
    }
    let comm = |o: &Op| o.kind != OpKind::Calc;
    let mut out = RankCalls::default();
    // (gap id, exits of the call) per call, to check the chain afterwards
    let mut chain: Vec<(u32, Vec<(u32, DepKind)>)> = Vec::new();
    // call index of each op that is a request (nonblocking candidates)
    let mut call_of_op: std::collections::HashMap<u32, u32> = Default::default();
    // calls whose requests a wait already completed
    let mut waited: std::collections::HashSet<u32> = Default::default();
    let mut i = 0u32;
    while i < n {
        let op = ops[i as usize];
        if comm(&op) {
            let own = &reqs[i as usize];
            let next_is_gap = i + 1 < n && ops[(i + 1) as usize].kind == OpKind::Calc;
            if next_is_gap && own.len() == 1 && own[0] == (i + 1, DepKind::Done) {
                if op.kind == OpKind::Send && op.peer == ANY {
                    return Err(shape(i, "a send to ANY"));
                }
                let peer = if op.peer == ANY {
                    Peer::Any
                } else {
                    Peer::Rank(op.peer)
                };
                call_of_op.insert(i, out.calls.len() as u32);
                out.calls.push(Call {
                    gap: ops[(i + 1) as usize].size,
                    kind: CallKind::P2p {
                        send: op.kind == OpKind::Send,
                        nb: false, // set from the next gap below
                        peer,
                        size: op.size,
                        tag: op.tag,
                    },
                    op: i,
                });
                chain.push((i + 1, vec![(i, DepKind::Done)]));
                i += 2;
                continue;
            }
            // a collective: a run of sends and receives, its closing op, its gap
            let mut j = i;
            while j < n && comm(&ops[j as usize]) {
                j += 1;
            }
            if j + 1 >= n {
                return Err(shape(i, "a run of sends and receives without the closing op and computation of a collective after it"));
            }
            let (close, gap) = (j, j + 1);
            if ops[close as usize] != Op::calc(0) || ops[gap as usize].kind != OpKind::Calc {
                return Err(shape(i, format!("a {} that neither requires the computation right after it (a point-to-point call) nor belongs to a collective (sends and receives, then a zero-length closing op and a computation)", kind_name(&op))));
            }
            if reqs[close as usize]
                .iter()
                .any(|&(x, k)| x < i || x >= j || k != DepKind::Done)
            {
                return Err(shape(
                    close,
                    "the closing op of a collective requires ops outside it",
                ));
            }
            for k in i..j {
                for &(x, kind) in &reqs[k as usize] {
                    let inside = x >= i && x < j && kind == DepKind::Done;
                    if !inside && (x, kind) != (gap, DepKind::Done) {
                        return Err(shape(
                            k,
                            "an op of a collective requires an op outside the collective",
                        ));
                    }
                }
                if reqs[k as usize].is_empty() {
                    return Err(shape(
                        k,
                        "an op of a collective that does not wait for the computation before it",
                    ));
                }
            }
            let tag = ops[i as usize].tag;
            if let Some(k) = (i..j).find(|&k| ops[k as usize].tag != tag) {
                return Err(shape(
                    k,
                    format!(
                        "a collective whose ops have different tags ({tag} and {})",
                        ops[k as usize].tag
                    ),
                ));
            }
            let mut inner: Vec<Vec<u32>> = vec![Vec::new(); (j - i) as usize];
            for k in i..j {
                prog.for_each_dependent(r, k, DepKind::Done, |d| {
                    if d >= i && d < j {
                        inner[(d - i) as usize].push(k - i);
                    }
                });
            }
            out.calls.push(Call {
                gap: ops[gap as usize].size,
                kind: CallKind::Coll {
                    ops: ops[i as usize..j as usize].to_vec(),
                    reqs: inner,
                },
                op: i,
            });
            chain.push((gap, vec![(close, DepKind::Done)]));
            i = gap + 1;
            continue;
        }
        // a calc: a wait (zero-length, requires the computation after it), or the last op
        let own = &reqs[i as usize];
        if op.size == 0
            && i + 1 < n
            && ops[(i + 1) as usize].kind == OpKind::Calc
            && own.contains(&(i + 1, DepKind::Done))
        {
            let mut calls = Vec::new();
            let raw = own.len() - 1;
            for &(x, kind) in own {
                if x == i + 1 {
                    continue;
                }
                match (call_of_op.get(&x), kind) {
                    // Schedgen's MPI_Waitall looks up every handle of the array, also those of
                    // requests an earlier wait completed (it forgets only the first): such a
                    // dependency never delays anything and is dropped
                    (Some(&c), DepKind::Done) if waited.contains(&c) => {}
                    (Some(&c), DepKind::Done) => calls.push(c),
                    _ => {
                        return Err(shape(
                            i,
                            format!(
                                "a wait that requires op l{} (not a point-to-point call before it)",
                                x + 1
                            ),
                        ))
                    }
                }
            }
            waited.extend(calls.iter().copied());
            out.calls.push(Call {
                gap: ops[(i + 1) as usize].size,
                kind: CallKind::Wait {
                    reqs: calls,
                    all: raw != 1,
                },
                op: i,
            });
            chain.push((i + 1, vec![(i, DepKind::Done)]));
            i += 2;
            continue;
        }
        if i + 1 == n {
            out.trailing = Some(op.size);
            chain.push((i, Vec::new()));
            i += 1;
            continue;
        }
        return Err(shape(
            i,
            "a computation that is neither the computation before a call, a wait, nor the last op",
        ));
    }
    // the chain: each gap requires the previous call's exit (irequires: nonblocking)
    for k in 0..chain.len() {
        let gap = chain[k].0;
        let got = &reqs[gap as usize];
        if k == 0 {
            if !got.is_empty() {
                return Err(shape(
                    gap,
                    "the first computation of the rank waits for another op",
                ));
            }
            continue;
        }
        let prev = &chain[k - 1].1;
        let ok = got.len() == prev.len() && got.iter().zip(prev).all(|(a, b)| a.0 == b.0);
        if !ok {
            return Err(shape(gap, format!("the computation before call {} does not follow the previous call (it requires {:?})", k + 1, got.iter().map(|x| format!("l{}", x.0 + 1)).collect::<Vec<_>>())));
        }
        // the kind of the dependency tells blocking from nonblocking point-to-point calls
        let prev_call = &mut out.calls[k - 1];
        if let CallKind::P2p { nb, .. } = &mut prev_call.kind {
            *nb = got[0].1 == DepKind::Start;
        } else if got.iter().any(|x| x.1 != DepKind::Done) {
            return Err(shape(gap, "a computation irequires a wait or a collective"));
        }
    }
    // requests waited for must be nonblocking calls
    for c in &out.calls {
        if let CallKind::Wait { reqs, .. } = &c.kind {
            for &q in reqs {
                if !matches!(out.calls[q as usize].kind, CallKind::P2p { nb: true, .. }) {
                    return Err(shape(
                        c.op,
                        format!(
                            "a wait for op l{}, which is a blocking call",
                            out.calls[q as usize].op + 1
                        ),
                    ));
                }
            }
        }
    }
    // a last nonblocking call without a next computation: waited for means nonblocking
    if out.trailing.is_none() {
        if let Some(last) = out.calls.len().checked_sub(1) {
            let waited = out.calls.iter().any(
                |c| matches!(&c.kind, CallKind::Wait { reqs, .. } if reqs.contains(&(last as u32))),
            );
            if let CallKind::P2p { nb, .. } = &mut out.calls[last].kind {
                *nb = waited;
            }
        }
    }
    Ok(out)
}

fn kind_name(op: &Op) -> &'static str {
    match op.kind {
        OpKind::Send => "send",
        OpKind::Recv => "receive",
        OpKind::Calc => "computation",
    }
}
