//! Recognising the collectives in a trace: each collective call is one of the patterns
//! Schedgen's trace conversion writes (`MPI_Barrier`, `MPI_Allgather`, `MPI_Iallreduce` and
//! upstream Schedgen's `MPI_Allreduce`: dissemination; spcl/atlahs' `MPI_Allreduce`: MPICH's
//! recursive doubling; `MPI_Bcast`/`MPI_Reduce`: binomial trees; `MPI_Alltoall`: linear),
//! found by rebuilding each candidate on every rank and comparing op for op.

use loggops_engine::{Op, OpKind, Program};

use loggops_schedgen::{Collective, GenOptions, Generated, RecdoubMpich};

/// A collective pattern as Schedgen's trace conversion writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollPattern {
    /// `dissemination` (barrier: 1 byte).
    Dissemination,
    /// MPICH's recursive doubling (spcl/atlahs' `MPI_Allreduce`).
    RecdoubMpich,
    BcastBinomial(u32),
    ReduceBinomial(u32),
    AlltoallLinear,
}

impl CollPattern {
    /// The statement that writes it (before the size).
    pub fn statement(&self) -> String {
        match self {
            CollPattern::Dissemination => "dissemination".to_string(),
            CollPattern::RecdoubMpich => "allreduce recdoub_mpich".to_string(),
            CollPattern::BcastBinomial(_) => "bcast binomial".to_string(),
            CollPattern::ReduceBinomial(_) => "reduce binomial".to_string(),
            CollPattern::AlltoallLinear => "alltoall linear".to_string(),
        }
    }
    /// Options after the size.
    pub fn options(&self) -> String {
        match self {
            CollPattern::BcastBinomial(r) | CollPattern::ReduceBinomial(r) if *r != 0 => {
                format!(" root {r}")
            }
            _ => String::new(),
        }
    }
    /// Which MPI call Schedgen writes this way (for reports).
    pub fn mpi_call(&self) -> &'static str {
        match self {
            CollPattern::Dissemination => {
                "MPI_Barrier/MPI_Allgather (or upstream Schedgen's MPI_Allreduce)"
            }
            CollPattern::RecdoubMpich => "MPI_Allreduce",
            CollPattern::BcastBinomial(_) => "MPI_Bcast",
            CollPattern::ReduceBinomial(_) => "MPI_Reduce",
            CollPattern::AlltoallLinear => "MPI_Alltoall",
        }
    }

    /// The pattern's ops on rank `r` of `p` with `size` bytes (tag 0), each with the ops it
    /// requires (declaration order), as Schedgen writes them.
    pub fn ops_with_deps(&self, p: u32, r: u32, size: u64) -> Vec<(Op, Vec<u32>)> {
        let mut out: Vec<(Op, Vec<u32>)> = self
            .ops(p, r, size)
            .into_iter()
            .map(|o| (o, Vec::new()))
            .collect();
        let n = out.len() as u32;
        match *self {
            CollPattern::RecdoubMpich => {
                let m = RecdoubMpich::new(p, size);
                for i in 0..n {
                    m.dependents(r, i, &mut |d| out[d as usize].1.push(i));
                }
            }
            _ => {
                let (pattern, root) = match *self {
                    CollPattern::Dissemination => (Collective::Dissemination, 0),
                    CollPattern::BcastBinomial(x) => (Collective::BinomialTreeBcast, x),
                    CollPattern::ReduceBinomial(x) => (Collective::BinomialTreeReduce, x),
                    _ => (Collective::LinearAlltoall, 0),
                };
                if let Ok(g) = Generated::with_options(
                    pattern,
                    p,
                    size.max(1),
                    GenOptions {
                        root,
                        ..GenOptions::default()
                    },
                ) {
                    for i in 0..n {
                        g.for_each_dependent(r, i, loggops_engine::DepKind::Done, |d| {
                            out[d as usize].1.push(i)
                        });
                    }
                }
            }
        }
        out
    }

    /// The pattern's ops on rank `r` of `p` with `size` bytes (tag 0).
    pub fn ops(&self, p: u32, r: u32, size: u64) -> Vec<Op> {
        let gen = |pattern, root| {
            Generated::with_options(
                pattern,
                p,
                size.max(1),
                GenOptions {
                    root,
                    ..GenOptions::default()
                },
            )
            .ok()
            .map(|g| {
                (0..g.num_ops(r))
                    .map(|i| {
                        let mut o = g.op(r, i);
                        o.size = size;
                        o
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
        };
        match *self {
            CollPattern::Dissemination => gen(Collective::Dissemination, 0),
            CollPattern::BcastBinomial(root) => gen(Collective::BinomialTreeBcast, root),
            CollPattern::ReduceBinomial(root) => gen(Collective::BinomialTreeReduce, root),
            CollPattern::AlltoallLinear => gen(Collective::LinearAlltoall, 0),
            CollPattern::RecdoubMpich => {
                let m = RecdoubMpich::new(p, size);
                (0..m.num_ops(r)).map(|i| m.op(r, i)).collect()
            }
        }
    }
}

/// The size of an instance: that of its first op (0 if it has none).
pub fn instance_size(ops: &[&[Op]]) -> u64 {
    ops.iter()
        .flat_map(|o| o.iter())
        .map(|o| o.size)
        .next()
        .unwrap_or(0)
}

/// The patterns an instance can be (in order of preference), given every rank's ops of it:
/// `ops[r]` with one tag; none if the sizes differ within the instance.
pub fn candidates(p: u32, ops: &[&[Op]]) -> Vec<CollPattern> {
    let size = instance_size(ops);
    if ops.iter().flat_map(|o| o.iter()).any(|o| o.size != size) {
        return Vec::new();
    }
    let mut cands = vec![
        CollPattern::RecdoubMpich,
        CollPattern::Dissemination,
        CollPattern::AlltoallLinear,
    ];
    // tree roots: the rank that only sends (bcast) or only receives (reduce)
    if let Some(root) = (0..p).find(|&r| ops[r as usize].iter().all(|o| o.kind == OpKind::Send)) {
        cands.push(CollPattern::BcastBinomial(root));
    }
    if let Some(root) = (0..p).find(|&r| ops[r as usize].iter().all(|o| o.kind == OpKind::Recv)) {
        cands.push(CollPattern::ReduceBinomial(root));
    }
    cands.retain(|c| {
        (0..p).all(|r| {
            let want = c.ops(p, r, size);
            let got = ops[r as usize];
            want.len() == got.len()
                && want
                    .iter()
                    .zip(got)
                    .all(|(a, b)| a.kind == b.kind && a.peer == b.peer && a.size == b.size)
        })
    });
    cands
}
