//! The units of [`ExplicitProgram`](super::ExplicitProgram)'s storage: one op's 24-byte
//! record, with its peer relative to the rank, and where a slot's data starts in the flat
//! arrays.

use loggops_engine::{Op, OpKind, ANY};

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
    pub(super) fn sentinel(edges: u32) -> Rec {
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
}

/// Where a slot's data starts in the flat arrays (`recs` starts at `op` + slot index).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SlotBase {
    pub(super) op: u64,
    pub(super) edge: u64,
    pub(super) root: u64,
}
