//! GOAL text writer in Schedgen's style, accepted by upstream `txt2bin`.
//!
//! ```text
//! num_ranks 2
//!
//! rank 0 {
//! l1: send 16b to 1 tag 0
//! l2: calc 100 cpu 1
//! l2 requires l1
//! }
//! ```
//!
//! A `calc` is written as a plain number of ticks (what LogGOPSim and Schedgen write): its
//! duration divided by the tick, 1 ns unless [`write_goal_with`] is given another, so that the
//! parser with the same tick ([`ParseOptions::tick_ps`](crate::ParseOptions::tick_ps)) reads
//! back the same durations. A duration that is not a whole number of ticks is an error that
//! asks for a finer tick.
//!
//! Labels are `l<id+1>`; sends and receives always carry `tag` (like Schedgen), `cpu`/`nic` only
//! when non-zero; `-1` for ANY. A dependency line follows the later of its two ops, so the text
//! reads like Schedgen's (which writes `lA requires lB` right after `lA`), while keeping every
//! op's dependents in the program's order (the order LogGOPSim releases them in). The writer walks
//! the program op by op and holds only one rank's dependency lists, so it also works for huge
//! generated programs.

use std::io::{self, BufWriter, Write};

use loggops_engine::{DepKind, OpKind, Program, ANY};

fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

fn put_id(out: &mut Vec<u8>, v: u32) {
    if v == ANY {
        out.extend_from_slice(b"-1");
    } else {
        put_u64(out, v as u64);
    }
}

/// Writes `p` (times in ps) as GOAL text, calc durations in ticks of 1 ns. See
/// [`write_goal_with`].
pub fn write_goal<P: Program + ?Sized>(p: &P, w: impl Write) -> io::Result<()> {
    write_goal_with(p, w, crate::text::DEFAULT_TICK_PS)
}

/// A calc whose duration is not a whole number of ticks: the writers' `InvalidInput` error
/// holds it (`io::Error::get_ref`), so that a caller can say how to choose the tick.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "rank {rank} op {op}: a calc of {} is not a whole number of ticks of {}: write with a finer tick",
    loggops_units::format_duration(*.duration),
    loggops_units::format_duration(*.tick)
)]
pub struct NotWholeTicks {
    pub rank: u32,
    pub op: u32,
    /// The duration, in the program's time units (ps).
    pub duration: u64,
    /// The tick, in the same units.
    pub tick: u64,
}

/// `calc`'s duration `size` as a number of ticks of `tick`, or the `InvalidInput` error that
/// says why it is not one.
pub(crate) fn calc_ticks(rank: u32, op: u32, size: u64, tick: u64) -> io::Result<u64> {
    if tick != 0 && size.is_multiple_of(tick) {
        return Ok(size / tick);
    }
    let e = NotWholeTicks {
        rank,
        op,
        duration: size,
        tick,
    };
    Err(io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// Writes `p` as GOAL text with calc durations in ticks of `tick` time units of the program
/// (picoseconds for the engine's programs; 1 writes them as they are). Fails with
/// `InvalidInput` if a duration is not a whole number of ticks or a `calc` op uses a NIC other
/// than 0 (GOAL text cannot express that); the output is then incomplete (write through a
/// temporary file).
pub fn write_goal_with<P: Program + ?Sized>(p: &P, w: impl Write, tick: u64) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    let mut out: Vec<u8> = Vec::with_capacity(1 << 16);
    out.extend_from_slice(b"num_ranks ");
    put_u64(&mut out, p.num_ranks() as u64);
    out.push(b'\n');
    let mut rw = RankWriter::default();
    for r in 0..p.num_ranks() {
        out.extend_from_slice(b"\nrank ");
        put_u64(&mut out, r as u64);
        out.extend_from_slice(b" {\n");
        rw.write_rank(p, r, tick, &mut out, &mut w)?;
        out.extend_from_slice(b"}\n");
    }
    w.write_all(&out)?;
    w.flush()
}

/// Per-rank scratch: the rank's dependency declarations and their emission state.
#[derive(Default)]
struct RankWriter {
    /// `(on, dependent, kind)`, grouped by (on, kind) in list order.
    edges: Vec<(u32, u32, DepKind)>,
    /// Per key `2·on + kind`: next unwritten edge and end of the group.
    cursor: Vec<u32>,
    end: Vec<u32>,
    /// Incoming declarations of each op (edge indices), ascending.
    inc_off: Vec<u32>,
    inc: Vec<u32>,
}

fn key(on: u32, kind: DepKind) -> usize {
    2 * on as usize + (kind == DepKind::Start) as usize
}

impl RankWriter {
    fn write_rank<P: Program + ?Sized, W: Write>(
        &mut self,
        p: &P,
        r: u32,
        tick: u64,
        out: &mut Vec<u8>,
        w: &mut W,
    ) -> io::Result<()> {
        let n = p.num_ops(r);
        self.edges.clear();
        self.cursor.clear();
        self.end.clear();
        for i in 0..n {
            for kind in [DepKind::Done, DepKind::Start] {
                self.cursor.push(self.edges.len() as u32);
                p.for_each_dependent(r, i, kind, |d| self.edges.push((i, d, kind)));
                self.end.push(self.edges.len() as u32);
            }
        }
        self.inc_off.clear();
        self.inc_off.resize(n as usize + 1, 0);
        for &(_, d, _) in &self.edges {
            self.inc_off[d as usize + 1] += 1;
        }
        for k in 1..self.inc_off.len() {
            self.inc_off[k] += self.inc_off[k - 1];
        }
        self.inc.clear();
        self.inc.resize(self.edges.len(), 0);
        let mut fill = self.inc_off.clone();
        for (e, &(_, d, _)) in self.edges.iter().enumerate() {
            self.inc[fill[d as usize] as usize] = e as u32;
            fill[d as usize] += 1;
        }

        for k in 0..n {
            let op = p.op(r, k);
            out.push(b'l');
            put_u64(out, k as u64 + 1);
            match op.kind {
                OpKind::Send | OpKind::Recv => {
                    out.extend_from_slice(if op.kind == OpKind::Send {
                        b": send "
                    } else {
                        b": recv "
                    });
                    put_u64(out, op.size);
                    out.extend_from_slice(if op.kind == OpKind::Send {
                        b"b to "
                    } else {
                        b"b from "
                    });
                    put_id(out, op.peer);
                    out.extend_from_slice(b" tag ");
                    put_id(out, op.tag);
                    if op.cpu != 0 {
                        out.extend_from_slice(b" cpu ");
                        put_u64(out, op.cpu as u64);
                    }
                    if op.nic != 0 {
                        out.extend_from_slice(b" nic ");
                        put_u64(out, op.nic as u64);
                    }
                }
                OpKind::Calc => {
                    if op.nic != 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!(
                                "rank {r} op {k}: a calc on nic {} cannot be written as GOAL text",
                                op.nic
                            ),
                        ));
                    }
                    out.extend_from_slice(b": calc ");
                    put_u64(out, calc_ticks(r, k, op.size, tick)?);
                    if op.cpu != 0 {
                        out.extend_from_slice(b" cpu ");
                        put_u64(out, op.cpu as u64);
                    }
                }
            }
            out.push(b'\n');
            // Declarations whose later op is k: first those of k as dependent (by `on`), then
            // those where k is the op depended on and the dependent came earlier.
            for j in self.inc_off[k as usize]..self.inc_off[k as usize + 1] {
                let e = self.inc[j as usize];
                let (on, _, kind) = self.edges[e as usize];
                if self.cursor[key(on, kind)] == e {
                    self.emit_chain(key(on, kind), k, out);
                }
            }
            self.emit_chain(key(k, DepKind::Done), k, out);
            self.emit_chain(key(k, DepKind::Start), k, out);
            if out.len() >= 1 << 16 {
                w.write_all(out)?;
                out.clear();
            }
        }
        debug_assert!(self.cursor.iter().zip(&self.end).all(|(c, e)| c == e));
        Ok(())
    }

    /// Writes the declarations of group `g` in order while both of their ops are written.
    fn emit_chain(&mut self, g: usize, k: u32, out: &mut Vec<u8>) {
        while self.cursor[g] < self.end[g] {
            let (on, d, kind) = self.edges[self.cursor[g] as usize];
            if d.max(on) > k {
                break;
            }
            out.push(b'l');
            put_u64(out, d as u64 + 1);
            out.extend_from_slice(if kind == DepKind::Done {
                b" requires l"
            } else {
                b" irequires l"
            });
            put_u64(out, on as u64 + 1);
            out.push(b'\n');
            self.cursor[g] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use loggops_engine::{DepKind, Op, ANY};

    use crate::test_rng::SplitMix;
    use crate::{
        first_difference, parse_str_with, read_binary_from_with, write_binary_with, ParseOptions,
        ProgramBuilder,
    };

    /// Random acyclic programs whose dependencies point in any id direction and whose
    /// dependents lists are in arbitrary order, with calc durations in ticks of 1 ps, 1 ns or
    /// 1 us, written and read back with that tick.
    #[test]
    fn random_programs_roundtrip_through_text_and_binary() {
        let mut g = SplitMix(42);
        for case in 0..300 {
            let tick = [1, 1_000, 1_000_000][case % 3];
            let ranks = 1 + g.below(4) as u32;
            let mut b = ProgramBuilder::new(ranks);
            for r in 0..ranks {
                b.start_rank(r);
                let n = g.below(12) as u32;
                for _ in 0..n {
                    let peer = g.below(ranks as u64) as u32;
                    let tag = if g.below(5) == 0 {
                        ANY
                    } else {
                        g.below(4) as u32
                    };
                    let op = match g.below(3) {
                        0 => Op::send(g.below(100_000), peer, tag),
                        1 => Op::recv(
                            g.below(100_000),
                            if g.below(4) == 0 { ANY } else { peer },
                            tag,
                        ),
                        _ => Op::calc(g.below(1000) * tick),
                    };
                    b.add_op(op.on_cpu(g.below(3) as u8));
                }
                // Topological order = a random permutation of the ids.
                let mut order: Vec<u32> = (0..n).collect();
                for i in (1..order.len()).rev() {
                    order.swap(i, g.below(i as u64 + 1) as usize);
                }
                if n >= 2 {
                    for _ in 0..g.below(3 * n as u64) {
                        let (x, y) = (g.below(n as u64) as usize, g.below(n as u64) as usize);
                        if x != y {
                            let (on, dep) = (order[x.min(y)], order[x.max(y)]);
                            let kind = if g.below(3) == 0 {
                                DepKind::Start
                            } else {
                                DepKind::Done
                            };
                            b.add_dep(dep, on, kind);
                        }
                    }
                }
                b.end_rank().unwrap();
            }
            let p = b.finish();
            let opts = ParseOptions::with_tick(tick);
            let mut text = Vec::new();
            super::write_goal_with(&p, &mut text, tick).unwrap();
            let text = String::from_utf8(text).unwrap();
            let back = parse_str_with("w.goal", &text, &opts)
                .unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"))
                .program;
            assert_eq!(first_difference(&back, &p), None, "case {case}:\n{text}");
            let mut bin = Vec::new();
            write_binary_with(&p, &mut bin, tick).unwrap();
            let back = read_binary_from_with("w.bin", std::io::Cursor::new(bin), &opts).unwrap();
            assert_eq!(first_difference(&back, &p), None, "case {case}");
        }
    }

    #[test]
    fn forward_dependency_lines_follow_the_later_op() {
        let mut b = ProgramBuilder::new(1);
        b.start_rank(0);
        for _ in 0..4 {
            b.add_op(Op::calc(1));
        }
        b.add_dep(3, 0, DepKind::Done);
        b.add_dep(1, 0, DepKind::Done); // op 0's dependents: [3, 1], not ascending
        b.add_dep(0, 2, DepKind::Start); // op 0 irequires a later op
        b.end_rank().unwrap();
        let mut out = Vec::new();
        super::write_goal_with(&b.finish(), &mut out, 1).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "num_ranks 1\n\nrank 0 {\nl1: calc 1\nl2: calc 1\nl3: calc 1\nl1 irequires l3\nl4: calc 1\n\
             l4 requires l1\nl2 requires l1\n}\n"
        );
    }

    #[test]
    fn calc_on_a_nic_cannot_be_written() {
        let mut b = ProgramBuilder::new(1);
        b.start_rank(0);
        b.add_op(Op::calc(1).on_nic(1));
        b.end_rank().unwrap();
        let err = super::write_goal(&b.finish(), Vec::new()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rank 0 op 0: a calc on nic 1 cannot be written as GOAL text"
        );
    }

    #[test]
    fn calcs_are_written_in_ticks_and_must_be_whole_ticks() {
        let mut b = ProgramBuilder::new(1);
        b.start_rank(0);
        b.add_op(Op::calc(18_883_000));
        b.add_op(Op::calc(1_500));
        b.end_rank().unwrap();
        let p = b.finish();
        let mut out = Vec::new();
        super::write_goal_with(&p, &mut out, 1).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("l1: calc 18883000\nl2: calc 1500\n"));
        for err in [
            super::write_goal(&p, Vec::new()).unwrap_err(),
            write_binary_with(&p, Vec::new(), 1_000).unwrap_err(),
        ] {
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
            assert_eq!(
                err.to_string(),
                "rank 0 op 1: a calc of 1.5ns is not a whole number of ticks of 1ns: write with a finer tick"
            );
        }
    }
}
