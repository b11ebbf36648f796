//! Lazy Schedgen collectives: every op, its dependencies and the roots are computed from
//! `(rank, index)`; nothing is stored per op or per rank.
//!
//! Each pattern reproduces, op for op, what LogGOPSim's Schedgen (C++) writes: the op order
//! within a rank (its labels `l1, l2, …` are our ids `0, 1, …`), sizes, peers, tags, the number
//! of `requires` lines per op (duplicates included) and the order in which they are declared.
//! The per-pattern notes below describe that structure; [`Generated::schedgen_reference`]
//! rebuilds it eagerly, the way Schedgen's loops emit it, and the tests check both against each
//! other and against Schedgen's own files.

use std::fmt;
use std::str::FromStr;

use loggops_engine::{DepKind, Op, OpKind, OpTable, Program, TableDep, TableOp};

use crate::check::Materialized;
use crate::error::GenError;

/// The Schedgen patterns loggops-sim generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// `dissemination`: ⌈log2 P⌉ rounds; in round k send to `r+2^k`, receive from `r−2^k`
    /// (mod P); the send of round k requires the receive of round k−1. Tag 0.
    Dissemination,
    /// `nwaydissemination` (`--nway n`): ⌈log_{n+1} P⌉ rounds (computed in floating point like
    /// Schedgen) of n sends and n receives, with a chain of n reduction `calc`s between rounds.
    /// The paper's small-message allreduce (with n = 1 and zero-length calcs).
    NwayDissemination,
    /// `allreduce_ring`: reduce-scatter plus allgather, 2(P−1) steps of ⌊D/P⌋ bytes to `r+1`
    /// from `r−1`; the send of step k requires the receive of step k−1. Tag 0.
    AllreduceRing,
    /// `pipelinedring` as in the paper's Schedgen (the cloud_noise fork): ⌈D/S⌉ segments of
    /// S = `segment_size` bytes (the last one shorter) around the ring, segment i with tag i;
    /// the send of segment i requires the receive of segment i−1.
    PipelinedRing,
    /// `allreduce_recdoub`: recursive halving reduce-scatter and recursive doubling allgather
    /// (butterfly) with partner `r XOR 2^k`; sizes D/2, D/4, … then back up (integer halving).
    /// Power-of-two P only.
    AllreduceRecdoub,
    /// `binomialtreebcast` from `root`.
    BinomialTreeBcast,
    /// `binarytreebcast` (root 0): a binary heap, rank `c` receives from `(c−1)/2` and then
    /// sends to `2c+1` and `2c+2` (those below P), both sends requiring the receive. Schedgen
    /// compares real ranks with virtual ones in this pattern, so only root 0 is generated.
    BinaryTreeBcast,
    /// `binomialtreereduce` to `root`.
    BinomialTreeReduce,
    /// `linear_alltoall`: P−1 steps, send to `r+k`, receive from `r−k`, no dependencies.
    LinearAlltoall,
}

impl Collective {
    /// Every pattern, in the order they are listed in messages.
    pub const ALL: [Collective; 9] = [
        Collective::Dissemination,
        Collective::NwayDissemination,
        Collective::AllreduceRing,
        Collective::PipelinedRing,
        Collective::AllreduceRecdoub,
        Collective::BinomialTreeBcast,
        Collective::BinaryTreeBcast,
        Collective::BinomialTreeReduce,
        Collective::LinearAlltoall,
    ];

    /// Schedgen's `--ptrn` name.
    pub fn schedgen_name(self) -> &'static str {
        match self {
            Collective::Dissemination => "dissemination",
            Collective::NwayDissemination => "nwaydissemination",
            Collective::AllreduceRing => "allreduce_ring",
            Collective::PipelinedRing => "pipelinedring",
            Collective::AllreduceRecdoub => "allreduce_recdoub",
            Collective::BinomialTreeBcast => "binomialtreebcast",
            Collective::BinaryTreeBcast => "binarytreebcast",
            Collective::BinomialTreeReduce => "binomialtreereduce",
            Collective::LinearAlltoall => "linear_alltoall",
        }
    }

    /// The known names, comma separated (for error messages).
    pub fn known_names() -> String {
        Collective::ALL
            .iter()
            .map(|c| c.schedgen_name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the pattern takes a `root`.
    pub fn has_root(self) -> bool {
        matches!(
            self,
            Collective::BinomialTreeBcast
                | Collective::BinaryTreeBcast
                | Collective::BinomialTreeReduce
                | Collective::PipelinedRing
        )
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.schedgen_name())
    }
}

impl FromStr for Collective {
    type Err = GenError;
    fn from_str(s: &str) -> Result<Collective, GenError> {
        Collective::ALL
            .iter()
            .copied()
            .find(|c| c.schedgen_name() == s)
            .ok_or_else(|| GenError::UnknownCollective {
                name: s.to_string(),
                known: Collective::known_names(),
            })
    }
}

/// Optional parameters of a generated collective; `Default` gives Schedgen's defaults except
/// for the segment size (see [`GenOptions::segment_size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenOptions {
    /// Fan-out of `nwaydissemination` (Schedgen `--nway`, default 1).
    pub nway: u32,
    /// Root of the binomial trees and of `pipelinedring` (Schedgen `--root`, default 0).
    pub root: u32,
    /// Segment size of `pipelinedring` in bytes. `None` = ⌊D/P⌋, what the paper's driver
    /// passed (`--segmentsize bytes/P`); Schedgen's own default would be 1 byte.
    pub segment_size: Option<u64>,
    /// Duration of each reduction `calc` of `nwaydissemination`, in engine time units.
    /// `None` = D units: Schedgen writes `calc <datasize>`, i.e. D ticks, which is D units when
    /// the engine counts ticks as they are (`--compat loggopsim`); with picoseconds, pass D
    /// ticks in ps (`loggops-sim gen` passes D × its `--tick`). The paper's runs used 0.
    pub reduce_calc: Option<u64>,
    /// Added to every tag Schedgen would write (0 keeps Schedgen's tags).
    pub tag_offset: u32,
    /// `binomialtreebcast` as the paper's Schedgen (the cloud_noise fork) writes it: every send
    /// of a rank also requires the rank's previous send ("serialize the sends"), so a
    /// rendezvous send waits until the previous one has been matched, as the blocking
    /// `MPI_Send`s of the measured programs do. Other patterns ignore it (the fork writes them
    /// as upstream Schedgen does, apart from `pipelinedring`, which follows the fork anyway).
    pub chain_sends: bool,
}

impl Default for GenOptions {
    fn default() -> GenOptions {
        GenOptions {
            nway: 1,
            root: 0,
            segment_size: None,
            reduce_calc: None,
            tag_offset: 0,
            chain_sends: false,
        }
    }
}

/// A generated collective on `p` ranks, implementing [`Program`] lazily.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pattern: Collective,
    p: u32,
    size: u64,
    nway: u32,
    root: u32,
    segment: u64,
    reduce_calc: u64,
    tag_offset: u32,
    /// binomialtreebcast: each send requires the previous one (see [`GenOptions::chain_sends`]).
    chain: bool,
    /// Rounds (dissemination, nway, binomial trees: ⌈log⌉; recdoub: log2 P), segments
    /// (pipelinedring) or steps (ring: 2(P−1), alltoall: P−1).
    rounds: u32,
    /// nwaydissemination: `(n+1)^r mod P` for every round `r` (empty for other patterns).
    nway_pow: Vec<u64>,
    /// nwaydissemination: every distance `w·(n+1)^r mod P` (`w` in 1..=n), when there are at
    /// most [`NWAY_TABLE_MAX`] of them (empty otherwise).
    nway_tab: Vec<u32>,
    /// nwaydissemination: division by the 3n ops of a round after the first.
    nway_round: FastDiv,
    /// allreduce_ring: the ⌊D/P⌋ bytes of every message.
    chunk: u64,
    /// nwaydissemination: every rank's ops decoded once (see [`Template`]).
    tmpl: Option<Box<Template>>,
}

/// The ops, dependencies and roots of a pattern whose structure does not depend on the rank
/// (only the peers move with it), decoded once from rank 0: peers are stored relative to the
/// rank. Saves the per-call arithmetic of nwaydissemination (divisions, distance tables).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Template {
    /// Every op, its `peer` holding `(peer − rank) mod P` (0 for calcs), with its depcount
    /// and where its completion dependents are in `deps`.
    ops: Vec<TableOp>,
    deps: Vec<TableDep>,
    roots: Vec<u32>,
    /// The roots are in type order (see [`Program::roots_in_type_order`]).
    roots_in_type_order: bool,
    /// [`Program::root_recv_ids`] of every root.
    recv_ids: Vec<(u32, u32)>,
}

/// Largest op count per rank decoded into a [`Template`].
const TEMPLATE_MAX_OPS: u32 = 1 << 16;

impl Template {
    /// Decodes rank 0 of `g` (which must not use a template itself).
    fn of(g: &Generated) -> Template {
        let n = g.num_ops(0);
        let mut t = Template {
            ops: Vec::with_capacity(n as usize),
            deps: Vec::new(),
            roots: (0..g.num_roots(0)).map(|k| g.root(0, k)).collect(),
            roots_in_type_order: false,
            recv_ids: Vec::new(),
        };
        t.roots_in_type_order = t.roots.is_sorted_by_key(|&r| g.op(0, r).kind);
        // From the last root back: the receives in arithmetic progression starting at each.
        let recv = |k: usize| g.op(0, t.roots[k]).kind == OpKind::Recv;
        let nr = t.roots.len();
        t.recv_ids = vec![(1, 0); nr];
        for k in (0..nr.saturating_sub(1)).rev() {
            if !(recv(k) && recv(k + 1)) {
                continue;
            }
            let step = t.roots[k + 1] - t.roots[k];
            let (next, next_step) = t.recv_ids[k + 1];
            t.recv_ids[k] = if next > 1 && next_step == step {
                (next + 1, step)
            } else {
                (2, step)
            };
        }
        for id in 0..n {
            let first_dep = t.deps.len() as u32;
            g.for_each_dependent(0, id, DepKind::Done, |d| {
                t.deps.push(TableDep {
                    op: d,
                    depcount: g.depcount(0, d),
                })
            });
            t.ops.push(TableOp {
                op: g.op(0, id),
                depcount: g.depcount(0, id),
                first_dep,
                num_deps: t.deps.len() as u32 - first_dep,
            });
        }
        t
    }
}

/// Largest nwaydissemination distance table kept (entries of 4 bytes).
const NWAY_TABLE_MAX: u64 = 1 << 16;

/// Ceil(log2(p)) for p ≥ 1 (0 for p = 1).
fn ceil_log2(p: u32) -> u32 {
    if p <= 1 {
        0
    } else {
        32 - (p - 1).leading_zeros()
    }
}

/// Floor(log2(v)) for v ≥ 1.
fn floor_log2(v: u32) -> u32 {
    31 - v.leading_zeros()
}

/// Schedgen's round count for `nwaydissemination`: `ceil(log(P) / log(n+1))` in double
/// precision, with the same rounding artefacts (e.g. n = 4, P = 125 gives 4, not 3).
fn nway_rounds(p: u32, n: u32) -> u32 {
    let v = (p as f64).ln() / ((n as f64) + 1.0).ln();
    v.ceil() as u32
}

impl Generated {
    /// A collective with default options (see [`GenOptions`]).
    pub fn new(pattern: Collective, p: u32, size: u64) -> Result<Generated, GenError> {
        Generated::with_options(pattern, p, size, GenOptions::default())
    }

    /// A collective with explicit options; checks that the pattern is valid for `p` and that
    /// every op id, tag and count fits the engine's 32-bit fields.
    pub fn with_options(
        pattern: Collective,
        p: u32,
        size: u64,
        opts: GenOptions,
    ) -> Result<Generated, GenError> {
        if p == 0 {
            return Err(GenError::ZeroRanks);
        }
        if size == 0 {
            return Err(GenError::ZeroSize { pattern });
        }
        if pattern.has_root() && opts.root >= p {
            return Err(GenError::RootOutOfRange {
                pattern,
                root: opts.root,
                p,
            });
        }
        if pattern == Collective::BinaryTreeBcast && opts.root != 0 {
            return Err(GenError::RootUnsupported {
                pattern,
                root: opts.root,
            });
        }
        let mut segment = 0;
        let rounds: u64 = match pattern {
            Collective::Dissemination
            | Collective::BinomialTreeBcast
            | Collective::BinomialTreeReduce => ceil_log2(p) as u64,
            // The depth of the heap: rank P−1 is ⌊log2 P⌋ levels below the root.
            Collective::BinaryTreeBcast => floor_log2(p) as u64,
            Collective::NwayDissemination => {
                if opts.nway == 0 {
                    return Err(GenError::ZeroNway);
                }
                nway_rounds(p, opts.nway) as u64
            }
            Collective::AllreduceRing => 2 * (p as u64 - 1),
            Collective::LinearAlltoall => p as u64 - 1,
            Collective::AllreduceRecdoub => {
                if !p.is_power_of_two() {
                    return Err(GenError::NotPowerOfTwo { pattern, p });
                }
                floor_log2(p) as u64
            }
            Collective::PipelinedRing => {
                segment = match opts.segment_size {
                    Some(0) => {
                        return Err(GenError::ZeroSegment {
                            size,
                            p,
                            derived: false,
                        })
                    }
                    Some(s) => s,
                    None if size / p as u64 == 0 => {
                        return Err(GenError::ZeroSegment {
                            size,
                            p,
                            derived: true,
                        })
                    }
                    None => size / p as u64,
                };
                size.div_ceil(segment)
            }
        };
        let ops_per_rank: u128 = match pattern {
            Collective::NwayDissemination if rounds > 0 => {
                let n = opts.nway as u128;
                2 * n + 3 * n * (rounds as u128 - 1)
            }
            Collective::NwayDissemination => 0,
            // Binomial trees: at most one receive plus ⌈log2 P⌉ sends (or the reverse).
            Collective::BinomialTreeBcast | Collective::BinomialTreeReduce => rounds as u128 + 1,
            // One receive and at most two sends.
            Collective::BinaryTreeBcast => 3,
            Collective::AllreduceRecdoub => 4 * rounds as u128,
            _ => 2 * rounds as u128,
        };
        if ops_per_rank > u32::MAX as u128 {
            return Err(GenError::TooManyOps {
                pattern,
                p,
                ops: ops_per_rank,
            });
        }
        let max_tag = if pattern == Collective::PipelinedRing {
            rounds.saturating_sub(1)
        } else {
            0
        };
        if opts.tag_offset as u64 + max_tag >= u32::MAX as u64 {
            return Err(GenError::TagOverflow {
                offset: opts.tag_offset,
                max_tag,
            });
        }
        let nway_pow = if pattern == Collective::NwayDissemination {
            let mut pw = 1 % p as u64;
            (0..rounds)
                .map(|_| {
                    let cur = pw;
                    pw = (pw as u128 * (opts.nway as u128 + 1) % p as u128) as u64;
                    cur
                })
                .collect()
        } else {
            Vec::new()
        };
        let nway_round = FastDiv::new(3 * opts.nway.clamp(1, u32::MAX / 3));
        let nway_tab = if nway_pow.len() as u64 * opts.nway as u64 <= NWAY_TABLE_MAX {
            nway_pow
                .iter()
                .flat_map(|&pw| {
                    (1..=opts.nway as u64).map(move |w| ((w % p as u64) * pw % p as u64) as u32)
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut g = Generated {
            tmpl: None,
            chunk: size / p as u64,
            nway_pow,
            nway_tab,
            nway_round,
            pattern,
            p,
            size,
            nway: opts.nway,
            root: if pattern.has_root() { opts.root } else { 0 },
            segment,
            reduce_calc: opts.reduce_calc.unwrap_or(size),
            tag_offset: opts.tag_offset,
            chain: opts.chain_sends && pattern == Collective::BinomialTreeBcast,
            rounds: rounds as u32,
        };
        if pattern == Collective::NwayDissemination && ops_per_rank <= TEMPLATE_MAX_OPS as u128 {
            g.tmpl = Some(Box::new(Template::of(&g)));
        }
        Ok(g)
    }

    pub fn pattern(&self) -> Collective {
        self.pattern
    }
    /// Number of ranks.
    pub fn p(&self) -> u32 {
        self.p
    }
    /// Data size D in bytes (Schedgen `--datasize`).
    pub fn size(&self) -> u64 {
        self.size
    }
    pub fn nway(&self) -> u32 {
        self.nway
    }
    /// Root rank of the binomial trees and of `pipelinedring` (0 for other patterns).
    pub fn root_rank(&self) -> u32 {
        self.root
    }
    /// Segment size of `pipelinedring` (0 for other patterns).
    pub fn segment_size(&self) -> u64 {
        self.segment
    }
    /// Duration of the `nwaydissemination` reduction calcs.
    pub fn reduce_calc(&self) -> u64 {
        self.reduce_calc
    }
    pub fn tag_offset(&self) -> u32 {
        self.tag_offset
    }
    /// Whether a binomialtreebcast chains its sends (see [`GenOptions::chain_sends`]).
    pub fn chain_sends(&self) -> bool {
        self.chain
    }
    /// Rounds, steps or segments, depending on the pattern (see the field notes).
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// Number of ops with no `requires` dependents on `rank` (the ops whose completion means
    /// the collective is done on that rank).
    pub fn num_sinks(&self, rank: u32) -> u32 {
        let m = self.steps();
        match self.pattern {
            Collective::Dissemination
            | Collective::AllreduceRing
            | Collective::AllreduceRecdoub
            | Collective::PipelinedRing => {
                if m == 0 {
                    0
                } else {
                    m + 1
                }
            }
            Collective::LinearAlltoall => 2 * m,
            Collective::NwayDissemination => {
                if m == 0 {
                    0
                } else {
                    self.nway * (m + 1)
                }
            }
            Collective::BinomialTreeBcast => {
                let t = self.tree(rank);
                if self.chain {
                    // The last send (or a leaf's receive).
                    (t.v != 0 || t.count > 0) as u32
                } else if t.v == 0 {
                    t.count
                } else if t.count == 0 {
                    1
                } else {
                    t.count
                }
            }
            Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                if t.v == 0 {
                    t.count
                } else {
                    1
                }
            }
            Collective::BinaryTreeBcast => {
                let kids = self.heap_children(rank);
                if rank > 0 && kids == 0 {
                    1 // a leaf's receive
                } else {
                    kids
                }
            }
        }
    }

    /// Whether op `id` of `rank` has no `requires` dependents.
    pub fn is_sink(&self, rank: u32, id: u32) -> bool {
        let m = self.steps();
        match self.pattern {
            Collective::Dissemination
            | Collective::AllreduceRing
            | Collective::AllreduceRecdoub => id.is_multiple_of(2) || id + 1 == 2 * m,
            Collective::PipelinedRing => id % 2 == 1 || id + 2 == 2 * m,
            Collective::LinearAlltoall => true,
            Collective::NwayDissemination => {
                let (r, local) = self.nway_locate(id);
                let n = self.nway;
                let recv_start = if r == 0 { n } else { 2 * n };
                local < n || (local >= recv_start && r == m - 1)
            }
            Collective::BinomialTreeBcast => {
                let t = self.tree(rank);
                if self.chain {
                    id + 1 == self.num_ops(rank)
                } else {
                    t.v == 0 || id >= 1 || t.count == 0
                }
            }
            Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                t.v == 0 || id == 0
            }
            // Every send; the receive only of a leaf.
            Collective::BinaryTreeBcast => rank == 0 || id >= 1 || self.heap_children(rank) == 0,
        }
    }

    /// Binary tree: how many of `2c+1`, `2c+2` are ranks.
    #[inline]
    fn heap_children(&self, c: u32) -> u32 {
        let first = 2 * c as u64 + 1;
        let p = self.p as u64;
        (first < p) as u32 + (first + 1 < p) as u32
    }

    /// Send/receive steps of the chain patterns (dissemination, ring, recdoub, pipelinedring,
    /// alltoall): op 2k is the send (receive for pipelinedring) of step k.
    fn steps(&self) -> u32 {
        if self.pattern == Collective::AllreduceRecdoub {
            2 * self.rounds
        } else {
            self.rounds
        }
    }

    fn tag(&self, t: u32) -> u32 {
        self.tag_offset + t
    }

    /// Virtual rank: ranks 0 and root swapped (Schedgen's RANK2VRANK / VRANK2RANK).
    fn swap_root(&self, r: u32) -> u32 {
        if r == 0 {
            self.root
        } else if r == self.root {
            0
        } else {
            r
        }
    }

    fn tree(&self, rank: u32) -> Tree {
        let v = self.swap_root(rank);
        let rounds = self.rounds;
        let p = self.p as u64;
        if v == 0 {
            // The root sends (bcast) or receives (reduce) in every round.
            return Tree {
                v,
                r0: 0,
                count: rounds,
                dup: 0,
            };
        }
        let r0 = floor_log2(v);
        // Rounds r0+1 .. rounds-1 with v + 2^r < P (a prefix of them).
        let mut count = 0;
        let mut r = r0 + 1;
        while r < rounds && (v as u64) + (1u64 << r) < p {
            count += 1;
            r += 1;
        }
        let dup = if count > 0 {
            rounds - 1 - (r0 + count)
        } else {
            0
        };
        Tree { v, r0, count, dup }
    }

    fn nway_base(&self, r: u32) -> u32 {
        let n = self.nway;
        if r == 0 {
            0
        } else {
            2 * n + 3 * n * (r - 1)
        }
    }

    /// (round, index within the round) of an nwaydissemination op.
    fn nway_locate(&self, id: u32) -> (u32, u32) {
        let n = self.nway;
        if id < 2 * n {
            (0, id)
        } else {
            let k = id - 2 * n;
            let (q, r) = self.nway_round.div_rem(k);
            (1 + q, r)
        }
    }

    /// `w · (n+1)^r mod P`.
    #[inline]
    fn nway_dist(&self, w: u32, r: u32) -> u64 {
        if let Some(&d) = self
            .nway_tab
            .get((r as usize * self.nway as usize) + w as usize - 1)
        {
            return d as u64;
        }
        // Both factors are below P < 2^32, so the product fits in u64.
        let p = self.p as u64;
        (w as u64 % p) * self.nway_pow[r as usize] % p
    }

    /// A materialised copy built the way Schedgen's loops emit the schedule (op lines and
    /// `requires` lines in file order). Memory O(total ops): for tests and small P.
    pub fn schedgen_reference(&self) -> Materialized {
        let mut m = Materialized::new(self.p);
        for rank in 0..self.p {
            crate::schedgen_text::emit_rank(self, rank, &mut |line| m.push_line(rank, line));
        }
        m.finish()
    }
}

/// Per-rank shape of a binomial tree.
#[derive(Clone, Copy, Debug)]
struct Tree {
    /// Virtual rank (root = 0).
    v: u32,
    /// ⌊log2 v⌋: the round in which v receives (bcast) or sends (reduce).
    r0: u32,
    /// Sends (bcast) or receives (reduce) in rounds after r0; for v = 0 all rounds.
    count: u32,
    /// How many times Schedgen repeats the last `requires` line (rounds after the last
    /// send/receive still pass its `if (send >= 0 and recv >= 0)` test).
    dup: u32,
}

/// `(a + b) mod p` for `a, b < p` (no division).
#[inline(always)]
fn wrap_add(a: u32, b: u32, p: u32) -> u32 {
    let x = a as u64 + b as u64;
    let p = p as u64;
    (if x >= p { x - p } else { x }) as u32
}

/// `x mod p` (non-negative). Callers pass `-p < x < 2p`, which needs no division.
#[inline]
fn modp(x: i64, p: u32) -> u32 {
    let p = p as i64;
    let y = if x < 0 {
        x + p
    } else if x >= p {
        x - p
    } else {
        x
    };
    if (0..p).contains(&y) {
        y as u32
    } else {
        x.rem_euclid(p) as u32
    }
}

/// Division of 32-bit numbers by a divisor fixed at construction, by multiplication
/// (Lemire, Kaser, Kurz: "Faster remainder by direct computation", 2019): exact for every
/// 32-bit dividend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FastDiv {
    d: u32,
    /// ⌈2^64 / d⌉ (unused for d = 1).
    m: u64,
}

impl FastDiv {
    fn new(d: u32) -> FastDiv {
        assert!(d > 0, "division by zero");
        FastDiv {
            d,
            m: if d == 1 { 0 } else { u64::MAX / d as u64 + 1 },
        }
    }

    /// `(n / d, n % d)`.
    #[inline]
    fn div_rem(self, n: u32) -> (u32, u32) {
        if self.d == 1 {
            return (n, 0);
        }
        let q = ((self.m as u128 * n as u128) >> 64) as u32;
        (q, n - q * self.d)
    }
}

/// The dependent of op `id` in a pipelined ring of `segments` segments: the receive of
/// segment j (op 2j) frees the send of segment j + 1 (op 2j + 3).
#[inline(always)]
fn pipelined_next(id: u32, segments: u32) -> Option<u32> {
    (id.is_multiple_of(2) && id + 3 < 2 * segments).then_some(id + 3)
}

/// The dependent of op `id` in a chain of `steps` send/receive steps (dissemination, ring,
/// recursive doubling): receive `id` (odd) frees the next step's send, `id + 1`.
#[inline(always)]
fn chain_next(id: u32, steps: u32) -> Option<u32> {
    (id % 2 == 1 && id + 1 < 2 * steps).then_some(id + 1)
}

impl Program for Generated {
    fn num_ranks(&self) -> u32 {
        self.p
    }
    fn num_cpus(&self) -> u8 {
        1
    }
    fn num_nics(&self) -> u8 {
        1
    }

    fn num_ops(&self, rank: u32) -> u32 {
        let m = self.steps();
        match self.pattern {
            Collective::NwayDissemination => {
                if m == 0 {
                    0
                } else {
                    self.nway_base(m)
                }
            }
            Collective::BinomialTreeBcast | Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                if t.v == 0 {
                    t.count
                } else {
                    t.count + 1
                }
            }
            Collective::BinaryTreeBcast => (rank > 0) as u32 + self.heap_children(rank),
            _ => 2 * m,
        }
    }

    #[inline(always)]
    fn op(&self, rank: u32, id: u32) -> Op {
        // The engine asks for ops several times per event: the template, the ring and the
        // pipelined ring (the patterns of the large runs) are decoded inline, the rest out of
        // line.
        if let Some(t) = self.op_table() {
            return t.op(rank, id);
        }
        if self.pattern == Collective::AllreduceRing {
            return if id.is_multiple_of(2) {
                Op::send(self.chunk, wrap_add(rank, 1, self.p), self.tag(0))
            } else {
                Op::recv(self.chunk, wrap_add(rank, self.p - 1, self.p), self.tag(0))
            };
        }
        if self.pattern == Collective::PipelinedRing {
            // Asked for each posted receive a message is matched against.
            let seg = id / 2;
            let s = if seg == self.rounds - 1 {
                self.size - self.segment * seg as u64
            } else {
                self.segment
            };
            let v = self.swap_root(rank);
            return if id.is_multiple_of(2) {
                let from = wrap_add(v, self.p - 1, self.p);
                Op::recv(s, self.swap_root(from), self.tag(seg))
            } else {
                Op::send(s, self.swap_root(wrap_add(v, 1, self.p)), self.tag(seg))
            };
        }
        self.op_general(rank, id)
    }

    #[inline]
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        if let Some(t) = self.op_table() {
            return t.depcount(id);
        }
        if self.pattern == Collective::AllreduceRing {
            return (id.is_multiple_of(2) && id >= 2) as u32;
        }
        if self.pattern == Collective::PipelinedRing {
            return (id % 2 == 1 && id >= 3) as u32;
        }
        self.depcount_general(rank, id)
    }

    #[inline]
    fn num_roots(&self, rank: u32) -> u32 {
        if let Some(t) = &self.tmpl {
            return t.roots.len() as u32;
        }
        if self.pattern == Collective::AllreduceRing && self.rounds > 0 {
            return self.rounds + 1;
        }
        self.num_roots_general(rank)
    }

    #[inline]
    fn root(&self, rank: u32, k: u32) -> u32 {
        if let Some(t) = &self.tmpl {
            return t.roots[k as usize];
        }
        if self.pattern == Collective::AllreduceRing {
            return if k == 0 { 0 } else { 2 * k - 1 };
        }
        self.root_general(rank, k)
    }

    fn root_recv_run(&self, _rank: u32, k: u32) -> (u32, u32) {
        // The ring's roots after send 0 are its receives 1, 3, …, all from the left neighbour.
        if self.pattern == Collective::AllreduceRing && k >= 1 {
            (self.rounds + 1 - k, 2)
        } else {
            (1, 0)
        }
    }

    fn root_recv_ids(&self, _rank: u32, k: u32) -> (u32, u32) {
        match &self.tmpl {
            Some(t) => t.recv_ids[k as usize],
            None => self.root_recv_run(_rank, k),
        }
    }

    fn roots_in_type_order(&self, _rank: u32) -> bool {
        if let Some(t) = &self.tmpl {
            return t.roots_in_type_order;
        }
        // Send 0 then receives; a tree rank's roots are all of one type or a single op.
        matches!(
            self.pattern,
            Collective::Dissemination
                | Collective::AllreduceRing
                | Collective::AllreduceRecdoub
                | Collective::BinomialTreeBcast
                | Collective::BinaryTreeBcast
                | Collective::BinomialTreeReduce
        )
    }

    #[inline(always)]
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, mut f: F) {
        if kind == DepKind::Start {
            return; // Schedgen's collectives use `requires` only.
        }
        if let Some(t) = self.op_table() {
            t.dependents(id).iter().for_each(|d| f(d.op));
            return;
        }
        if self.pattern == Collective::AllreduceRing {
            if let Some(d) = chain_next(id, self.rounds) {
                f(d);
            }
            return;
        }
        if self.pattern == Collective::PipelinedRing {
            if let Some(d) = pipelined_next(id, self.rounds) {
                f(d);
            }
            return;
        }
        self.dependents_general(rank, id, &mut f)
    }

    /// As the default (each dependent with its `depcount`), with the ring's count known
    /// without asking: the engine calls this for every completed op.
    #[inline(always)]
    fn for_each_dependent_counted<F: FnMut(u32, u32)>(
        &self,
        rank: u32,
        id: u32,
        kind: DepKind,
        mut f: F,
    ) {
        if kind == DepKind::Start {
            return;
        }
        if let Some(t) = self.op_table() {
            t.dependents(id).iter().for_each(|d| f(d.op, d.depcount));
            return;
        }
        if self.pattern == Collective::AllreduceRing {
            // The ring's next send has that receive as its only dependency.
            if let Some(d) = chain_next(id, self.rounds) {
                f(d, 1);
            }
            return;
        }
        if self.pattern == Collective::PipelinedRing {
            // The next segment's send has that receive as its only dependency.
            if let Some(d) = pipelined_next(id, self.rounds) {
                f(d, 1);
            }
            return;
        }
        self.dependents_general(rank, id, &mut |d| f(d, self.depcount_general(rank, d)))
    }

    fn dense_counters(&self) -> bool {
        false
    }
    fn has_start_dependents(&self) -> bool {
        false // Schedgen's collectives use `requires` only.
    }
    #[inline(always)]
    fn op_table(&self) -> Option<OpTable<'_>> {
        self.tmpl.as_ref().map(|t| OpTable {
            ranks: self.p,
            ops: &t.ops,
            deps: &t.deps,
        })
    }

    fn min_send_size(&self) -> u64 {
        match self.pattern {
            Collective::AllreduceRing => self.chunk,
            // The last segment is the shortest.
            Collective::PipelinedRing if self.rounds > 0 => {
                self.size - self.segment * (self.rounds as u64 - 1)
            }
            // Halved every round down to D >> rounds, then doubled back.
            Collective::AllreduceRecdoub => self.size >> self.rounds,
            // Every send carries the whole size.
            _ => self.size,
        }
    }

    fn total_ops(&self) -> u64 {
        match self.pattern {
            Collective::BinomialTreeBcast | Collective::BinomialTreeReduce => {
                (0..self.p).map(|r| self.num_ops(r) as u64).sum()
            }
            // Every rank but the root receives once, and each receive has one send.
            Collective::BinaryTreeBcast => 2 * (self.p as u64 - 1),
            _ => self.p as u64 * self.num_ops(0) as u64,
        }
    }
}

impl Generated {
    /// [`Program::op`] of the patterns without a fast path.
    #[inline(never)]
    fn op_general(&self, rank: u32, id: u32) -> Op {
        let p = self.p;
        let d = self.size;
        let r = rank as i64;
        match self.pattern {
            Collective::Dissemination => {
                let k = id / 2;
                let dist = 1i64 << k;
                if id.is_multiple_of(2) {
                    Op::send(d, modp(r + dist, p), self.tag(0))
                } else {
                    Op::recv(d, modp(r - dist, p), self.tag(0))
                }
            }
            Collective::AllreduceRing => unreachable!("the ring is decoded in `Program::op`"),
            Collective::LinearAlltoall => {
                let step = (id / 2 + 1) as i64;
                if id.is_multiple_of(2) {
                    Op::send(d, modp(r + step, p), self.tag(0))
                } else {
                    Op::recv(d, modp(r - step, p), self.tag(0))
                }
            }
            Collective::AllreduceRecdoub => {
                let k = id / 2;
                let m = self.rounds;
                let (mask, s) = if k < m {
                    (1u32 << k, d >> (k + 1))
                } else {
                    let j = k - m;
                    (1u32 << (m - 1 - j), (d >> m) << j)
                };
                let peer = rank ^ mask;
                if id.is_multiple_of(2) {
                    Op::send(s, peer, self.tag(0))
                } else {
                    Op::recv(s, peer, self.tag(0))
                }
            }
            Collective::PipelinedRing => unreachable!("decoded in `Program::op`"),
            Collective::NwayDissemination => {
                let n = self.nway;
                let (rd, local) = self.nway_locate(id);
                let recv_start = if rd == 0 { n } else { 2 * n };
                if local < n {
                    let dist = self.nway_dist(local + 1, rd);
                    Op::send(d, modp(rank as i64 + dist as i64, p), self.tag(0))
                } else if local < recv_start {
                    Op::calc(self.reduce_calc)
                } else {
                    let dist = self.nway_dist(local - recv_start + 1, rd);
                    Op::recv(d, modp(rank as i64 - dist as i64, p), self.tag(0))
                }
            }
            Collective::BinomialTreeBcast => {
                let t = self.tree(rank);
                if t.v == 0 {
                    Op::send(d, self.swap_root(1 << id), self.tag(0))
                } else if id == 0 {
                    Op::recv(d, self.swap_root(t.v - (1 << t.r0)), self.tag(0))
                } else {
                    Op::send(d, self.swap_root(t.v + (1 << (t.r0 + id))), self.tag(0))
                }
            }
            Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                if t.v == 0 {
                    Op::recv(d, self.swap_root(1 << id), self.tag(0))
                } else if id == 0 {
                    Op::send(d, self.swap_root(t.v - (1 << t.r0)), self.tag(0))
                } else {
                    Op::recv(d, self.swap_root(t.v + (1 << (t.r0 + id))), self.tag(0))
                }
            }
            // Root 0 only, so real and virtual ranks coincide.
            Collective::BinaryTreeBcast => {
                if rank > 0 && id == 0 {
                    Op::recv(d, (rank - 1) / 2, self.tag(0))
                } else {
                    let k = id - (rank > 0) as u32;
                    Op::send(d, 2 * rank + 1 + k, self.tag(0))
                }
            }
        }
    }

    #[inline(never)]
    fn depcount_general(&self, rank: u32, id: u32) -> u32 {
        match self.pattern {
            Collective::Dissemination
            | Collective::AllreduceRing
            | Collective::AllreduceRecdoub => (id.is_multiple_of(2) && id >= 2) as u32,
            Collective::PipelinedRing => unreachable!("decoded in `Program::depcount`"),
            Collective::LinearAlltoall => 0,
            Collective::NwayDissemination => {
                let n = self.nway;
                let (rd, local) = self.nway_locate(id);
                if rd == 0 || local >= 2 * n {
                    0
                } else if local < n {
                    // Sends: the last one also waits for the reduction chain's previous link.
                    if local == n - 1 {
                        2
                    } else {
                        1
                    }
                } else if local == 2 * n - 1 {
                    1
                } else {
                    2
                }
            }
            Collective::BinomialTreeBcast => {
                let t = self.tree(rank);
                // The fork's chain: a send after the rank's first send requires its predecessor.
                let chained = self.chain && id > (t.v != 0) as u32;
                let own = if t.v == 0 || id == 0 {
                    0
                } else if id == t.count {
                    1 + t.dup
                } else {
                    1
                };
                own + chained as u32
            }
            Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                if t.v == 0 || id > 0 || t.count == 0 {
                    0
                } else {
                    t.count + t.dup
                }
            }
            // A non-root rank's sends require its receive.
            Collective::BinaryTreeBcast => (rank > 0 && id > 0) as u32,
        }
    }

    fn num_roots_general(&self, rank: u32) -> u32 {
        let m = self.steps();
        match self.pattern {
            Collective::Dissemination
            | Collective::AllreduceRing
            | Collective::AllreduceRecdoub
            | Collective::PipelinedRing => {
                if m == 0 {
                    0
                } else {
                    m + 1
                }
            }
            Collective::LinearAlltoall => 2 * m,
            Collective::NwayDissemination => {
                if m == 0 {
                    0
                } else {
                    self.nway * (m + 1)
                }
            }
            Collective::BinomialTreeBcast => {
                let t = self.tree(rank);
                if t.v != 0 {
                    1
                } else if self.chain {
                    t.count.min(1)
                } else {
                    t.count
                }
            }
            Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                if t.v == 0 {
                    t.count
                } else if t.count == 0 {
                    1
                } else {
                    t.count
                }
            }
            // The root's sends; elsewhere the receive.
            Collective::BinaryTreeBcast => {
                if rank == 0 {
                    self.heap_children(0)
                } else {
                    1
                }
            }
        }
    }

    #[inline(never)]
    fn root_general(&self, rank: u32, k: u32) -> u32 {
        match self.pattern {
            // Roots: send 0 and every receive (odd ids).
            Collective::Dissemination
            | Collective::AllreduceRing
            | Collective::AllreduceRecdoub => {
                if k == 0 {
                    0
                } else {
                    2 * k - 1
                }
            }
            // Roots: receive 0, send 0, then the receives 2, 4, ….
            Collective::PipelinedRing => {
                if k < 2 {
                    k
                } else {
                    2 * (k - 1)
                }
            }
            Collective::LinearAlltoall => k,
            Collective::NwayDissemination => {
                let n = self.nway;
                if k < 2 * n {
                    k
                } else {
                    let k2 = k - 2 * n;
                    self.nway_base(1 + k2 / n) + 2 * n + k2 % n
                }
            }
            Collective::BinomialTreeBcast => {
                let t = self.tree(rank);
                if t.v == 0 {
                    k
                } else {
                    0
                }
            }
            Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                if t.v == 0 || t.count == 0 {
                    k
                } else {
                    k + 1
                }
            }
            Collective::BinaryTreeBcast => k,
        }
    }

    #[inline(never)]
    fn dependents_general(&self, rank: u32, id: u32, f: &mut dyn FnMut(u32)) {
        let m = self.steps();
        match self.pattern {
            Collective::Dissemination
            | Collective::AllreduceRing
            | Collective::AllreduceRecdoub => {
                if let Some(d) = chain_next(id, m) {
                    f(d);
                }
            }
            Collective::PipelinedRing => {
                unreachable!("decoded in `Program::for_each_dependent`")
            }
            Collective::LinearAlltoall => {}
            Collective::NwayDissemination => {
                let n = self.nway;
                let (rd, local) = self.nway_locate(id);
                let recv_start = if rd == 0 { n } else { 2 * n };
                let base = self.nway_base(rd);
                if local >= recv_start {
                    // A receive: feeds the reduction chain of the next round.
                    if rd + 1 >= m {
                        return;
                    }
                    let next = self.nway_base(rd + 1);
                    let w = local - recv_start;
                    if w == 0 {
                        if n == 1 {
                            f(next + 1);
                            f(next);
                        } else {
                            f(next + n);
                            f(next + 2 * n - 1);
                        }
                    } else {
                        f(next + n + w - 1);
                    }
                } else if local >= n {
                    // A reduction calc red_w (w = local − n + 1).
                    let w = local - n + 1;
                    if w == n {
                        for s in 0..n {
                            f(base + s);
                        }
                    } else if w == n - 1 {
                        f(base + n - 1);
                    } else {
                        f(base + n + w);
                    }
                }
            }
            Collective::BinomialTreeBcast => {
                let t = self.tree(rank);
                if t.v != 0 && id == 0 {
                    for s in 1..=t.count {
                        f(s);
                    }
                    for _ in 0..t.dup {
                        f(t.count);
                    }
                } else if self.chain && id + 1 < self.num_ops(rank) {
                    f(id + 1); // a send frees the next send
                }
            }
            Collective::BinomialTreeReduce => {
                let t = self.tree(rank);
                if t.v != 0 && id >= 1 {
                    f(0);
                    if id == t.count {
                        for _ in 0..t.dup {
                            f(0);
                        }
                    }
                }
            }
            // A non-root rank's receive frees its sends, in Schedgen's `requires` order.
            Collective::BinaryTreeBcast => {
                if rank > 0 && id == 0 {
                    for s in 1..=self.heap_children(rank) {
                        f(s);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every op, dependency count, dependent list and root of every rank.
    fn decode<P: Program>(g: &P) -> Vec<(Op, u32, Vec<u32>)> {
        let mut all = Vec::new();
        for r in 0..g.num_ranks() {
            for id in 0..g.num_ops(r) {
                let mut deps = Vec::new();
                g.for_each_dependent(r, id, DepKind::Done, |d| deps.push(d));
                g.for_each_dependent(r, id, DepKind::Start, |_| panic!("a start dependent"));
                // The counted form names the same dependents with their depcounts.
                let mut counted = Vec::new();
                g.for_each_dependent_counted(r, id, DepKind::Done, |d, c| counted.push((d, c)));
                let want: Vec<(u32, u32)> = deps.iter().map(|&d| (d, g.depcount(r, d))).collect();
                assert_eq!(counted, want, "rank {r} op {id}");
                all.push((g.op(r, id), g.depcount(r, id), deps));
            }
            let roots: Vec<u32> = (0..g.num_roots(r)).map(|k| g.root(r, k)).collect();
            all.push((Op::calc(0), u32::MAX, roots));
        }
        all
    }

    /// Every collective (its template too, where it has one) names each op's dependents with
    /// their depcounts in the counted form: `decode` checks it.
    #[test]
    fn counted_dependents_carry_their_depcounts() {
        for c in Collective::ALL {
            for p in [1, 2, 3, 4, 7, 16, 33] {
                let size = 1 << 16;
                let Ok(g) = Generated::new(c, p, size) else {
                    continue; // e.g. recursive doubling on a P that is not a power of two
                };
                decode(&g);
                decode(&Generated {
                    tmpl: None,
                    ..g.clone()
                });
            }
        }
    }

    #[test]
    fn nway_template_equals_the_direct_arithmetic() {
        for p in [1, 2, 3, 4, 7, 16, 64, 1000] {
            for nway in [1, 2, 3, 5] {
                let opts = GenOptions {
                    nway,
                    ..GenOptions::default()
                };
                let g =
                    Generated::with_options(Collective::NwayDissemination, p, 16, opts).unwrap();
                assert!(g.tmpl.is_some() || g.rounds == 0);
                let direct = Generated {
                    tmpl: None,
                    ..g.clone()
                };
                assert_eq!(decode(&g), decode(&direct), "P={p} n={nway}");
                // The engine's flat view of the template, too.
                if let Some(t) = g.op_table() {
                    let tabled = loggops_engine::Tabled::new(&g, t);
                    assert_eq!(decode(&tabled), decode(&direct), "P={p} n={nway}");
                    assert_eq!(tabled.total_ops(), direct.total_ops());
                }
            }
        }
    }

    #[test]
    fn fast_division_is_exact() {
        for d in [1u32, 2, 3, 6, 7, 15, 641, 65_537, u32::MAX / 3, u32::MAX] {
            let f = FastDiv::new(d);
            for n in [
                0u32,
                1,
                2,
                d - 1,
                d,
                d.saturating_add(1),
                1 << 31,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(f.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
