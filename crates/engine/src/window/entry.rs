//! What a pending event is: an entry ([`Ent`]) that stands for an op to run or a message to
//! take, with the stamp ([`Stamp`]) of the event that queued it, and the order of a rank's
//! entries in its heap ([`Min`]).
//!
//! Besides its time and what it is, an entry carries where it was queued: `pt` (1 + the time
//! of the event that queued it, 0 for the roots, queued before the run), `src` (that event's
//! rank) and `seq` (this engine's insertion counter, which agrees with LogGOPSim's global
//! insertion counter `ts` for events queued by one rank); and of its parent, the event that
//! queued it: the parent's `pt` (`gpt`), its rank (`gsrc`), and in `g2` the parent's `seq` when
//! the parent is a root, else the parent's own `gpt` (`ggpt`: when the event that queued the
//! parent was queued), or with [`super::Ancestry::Full`] the parent's ancestry record. A rank's
//! entries are ordered by `(time, pt, gpt, seq)` ([`Ent::key`]), which is LogGOPSim's
//! `(time, ts)` order whenever `(time, pt, gpt)` differ; entries that tie on those are ordered
//! by the rules of [`super::ties`].
//!
//! Invariant: every field of an entry is 8 bytes (an entry is 64 bytes), so copies of an entry
//! are made of loads as wide as the stores that wrote it: with 4-byte fields the compiler
//! copied two stores with one 8-byte load, which stalls store-to-load forwarding on every
//! event. New fields keep to that (see the note on [`Ent`]'s layout).

use std::cmp::Ordering;

use crate::params::Time;

/// `Ent::seq`'s top bit: the entry is a message.
pub(super) const MSG_BIT: u64 = 1 << 63;

/// Where an entry was queued: while the event at time `pt − 1` (`pt` 0: before the run) of
/// rank `src` ran, as this engine's `seq`-th insertion; `gpt` is the `pt` of that event. The
/// stamp of the event that queued an entry is that entry's parent stamp.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stamp {
    pub(super) pt: Time,
    pub(super) src: u32,
    pub(super) seq: u64,
    pub(super) gpt: Time,
}

/// An event: an op of `rank` to run, or a message to `rank` from `src`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ent {
    pub(super) time: Time,
    /// 1 + the time of the event during which this entry was first queued (0 for the roots,
    /// queued before the run starts).
    pub(super) pt: Time,
    /// Messages: the `gap_bytes` drawn at the send.
    pub(super) gap: Time,
    /// This engine's insertion counter, with [`MSG_BIT`] set for messages.
    pub(super) seq: u64,
    /// `rank | src << 32`: whose event it is (the receiver for messages), and the rank of the
    /// event that queued it (the sender for messages, else `rank`).
    pub(super) who: u64,
    /// `item | gsrc << 32`: the op id (op events) or the sender's send op (messages), and the
    /// `src` of the event that queued this one's parent.
    pub(super) item: u64,
    /// The `pt` of the event that queued this one (its parent's [`Stamp`]).
    pub(super) gpt: Time,
    /// When the parent is a root (`gpt` 0): the parent's `seq`. Else the parent's own `gpt`
    /// (when the event that queued the parent was queued: `ggpt`). With
    /// [`super::Ancestry::Full`]: the parent's record ([`super::ties::NO_REC`] for the roots).
    pub(super) g2: u64,
}

// Every field is 8 bytes, so copies of an entry are made of loads as wide as the stores that
// wrote it (narrower fields made the compiler read two 4-byte stores with one 8-byte load,
// which stalls store-to-load forwarding on every event). For the same reason `pt` and `seq`,
// read together into the parent stamp of every event, are not neighbours: the compiler read
// them with one 16-byte load of two 8-byte stores.
impl Ent {
    /// An entry queued by the event whose stamp is `parent`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn new(
        time: Time,
        pt: Time,
        seq: u64,
        gap: Time,
        rank: u32,
        src: u32,
        item: u32,
        parent: Stamp,
    ) -> Ent {
        Ent {
            time,
            pt,
            seq,
            gap,
            who: rank as u64 | (src as u64) << 32,
            item: item as u64 | (parent.src as u64) << 32,
            gpt: parent.pt,
            g2: if parent.pt == 0 {
                parent.seq
            } else {
                parent.gpt
            },
        }
    }
    #[inline(always)]
    pub(super) fn rank(&self) -> u32 {
        self.who as u32
    }
    #[inline(always)]
    pub(super) fn src(&self) -> u32 {
        (self.who >> 32) as u32
    }
    #[inline(always)]
    pub(super) fn item(&self) -> u32 {
        self.item as u32
    }
    #[inline(always)]
    pub(super) fn gsrc(&self) -> u32 {
        (self.item >> 32) as u32
    }
    #[inline(always)]
    pub(super) fn stamp(&self) -> Stamp {
        Stamp {
            pt: self.pt,
            src: self.src(),
            seq: self.seq & !MSG_BIT,
            gpt: self.gpt,
        }
    }
    /// The heap order: `(time, pt, gpt)` is the global order whenever they differ; among
    /// entries equal on them, see [`Ent::order_tied`].
    #[inline(always)]
    pub(super) fn key(&self) -> (Time, Time, Time, u64) {
        (self.time, self.pt, self.gpt, self.seq & !MSG_BIT)
    }
    #[inline(always)]
    pub(super) fn tied(&self, other: &Ent) -> bool {
        (self.time, self.pt, self.gpt) == (other.time, other.pt, other.gpt)
    }
    #[inline(always)]
    pub(super) fn is_msg(&self) -> bool {
        self.seq & MSG_BIT != 0
    }
}

/// A heap entry: the min-heap order of [`Ent::key`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Min(pub(super) Ent);

impl PartialEq for Min {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}
impl Eq for Min {}
impl PartialOrd for Min {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Min {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key().cmp(&self.0.key())
    }
}
