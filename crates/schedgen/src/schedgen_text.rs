//! Eager emission in Schedgen's line order, and Schedgen's exact text style.
//!
//! [`emit_rank`] walks each pattern the way Schedgen's loops do (round by round, emitting an op
//! or a `requires` line as Schedgen would) and is deliberately written independently of the
//! index arithmetic in [`crate::collective`]: the tests use it as the oracle for the lazy
//! implementation, and [`write_schedgen`] turns it into text that is byte-identical to
//! Schedgen's output (so it can be fed to LogGOPSim's `txt2bin` too).

use std::io::{self, Write};

use loggops_engine::{Op, OpKind, Program};

use crate::check::Line;
use crate::collective::{Collective, Generated};

/// Op id allocator for one rank, with Schedgen's "-1 = none yet" convention.
struct Emitter<'a> {
    next: u32,
    f: &'a mut dyn FnMut(Line),
}

impl Emitter<'_> {
    fn op(&mut self, op: Op) -> i64 {
        (self.f)(Line::Op(op));
        self.next += 1;
        (self.next - 1) as i64
    }
    fn requires(&mut self, tail: i64, head: i64) {
        (self.f)(Line::Requires {
            tail: tail as u32,
            head: head as u32,
        });
    }
}

fn wrap(x: i64, p: u32) -> u32 {
    x.rem_euclid(p as i64) as u32
}

/// Emits the ops and `requires` lines of `rank` in Schedgen's file order.
pub fn emit_rank(g: &Generated, rank: u32, f: &mut dyn FnMut(Line)) {
    let mut e = Emitter { next: 0, f };
    let p = g.p();
    let d = g.size();
    let t0 = g.tag_offset();
    let r = rank as i64;
    let pi = p as i64;
    // Virtual-rank swap of rank 0 and the root (its own inverse).
    let swap = |x: i64| -> i64 {
        let root = g.root_rank() as i64;
        if x == 0 {
            root
        } else if x == root {
            0
        } else {
            x
        }
    };
    match g.pattern() {
        Collective::Dissemination => {
            let mut recv = -1;
            let mut dist = 1i64;
            while dist < pi {
                let send = e.op(Op::send(d, wrap(r + dist, p), t0));
                if recv != -1 {
                    e.requires(send, recv);
                }
                recv = e.op(Op::recv(d, wrap(r - dist, p), t0));
                dist <<= 1;
            }
        }
        Collective::AllreduceRing => {
            let chunk = d / p as u64;
            let mut recv = -1;
            for _phase in 0..2 {
                for _step in 0..pi - 1 {
                    let send = e.op(Op::send(chunk, wrap(r + 1, p), t0));
                    if recv != -1 {
                        e.requires(send, recv);
                    }
                    recv = e.op(Op::recv(chunk, wrap(r - 1, p), t0));
                }
            }
        }
        Collective::AllreduceRecdoub => {
            let steps = p.trailing_zeros();
            let mut mask = 1u32;
            let mut next = d;
            let mut recv = -1;
            for _ in 0..steps {
                next /= 2;
                let send = e.op(Op::send(next, rank ^ mask, t0));
                if recv != -1 {
                    e.requires(send, recv);
                }
                recv = e.op(Op::recv(next, rank ^ mask, t0));
                mask <<= 1;
            }
            mask >>= 1;
            for _ in 0..steps {
                let send = e.op(Op::send(next, rank ^ mask, t0));
                if recv != -1 {
                    e.requires(send, recv);
                }
                recv = e.op(Op::recv(next, rank ^ mask, t0));
                next *= 2;
                mask >>= 1;
            }
        }
        Collective::LinearAlltoall => {
            for step in 1..pi {
                e.op(Op::send(d, wrap(r + step, p), t0));
                e.op(Op::recv(d, wrap(r - step, p), t0));
            }
        }
        Collective::PipelinedRing => {
            let seg = g.segment_size();
            let rounds = d.div_ceil(seg);
            let v = swap(r);
            let mut recvs = Vec::new();
            for k in 0..rounds {
                let size = if k == rounds - 1 { d - seg * k } else { seg };
                let from = if v == 0 { pi - 1 } else { v - 1 };
                let to = (v + 1) % pi;
                let tag = t0 + k as u32;
                recvs.push(e.op(Op::recv(size, swap(from) as u32, tag)));
                let send = e.op(Op::send(size, swap(to) as u32, tag));
                if k > 0 {
                    e.requires(send, recvs[k as usize - 1]);
                }
            }
        }
        Collective::NwayDissemination => {
            let n = g.nway() as usize;
            let rounds = g.rounds();
            let mut recv = vec![-1i64; n];
            let mut send = vec![-1i64; n];
            let mut pw: i128 = 1;
            for round in 0..rounds {
                for w in 1..=n {
                    let peer = (r as i128 + w as i128 * pw).rem_euclid(pi as i128) as u32;
                    send[w - 1] = e.op(Op::send(d, peer, t0));
                }
                if round > 0 {
                    let mut prev = recv[0];
                    for w in 1..n {
                        let red = e.op(Op::calc(g.reduce_calc()));
                        e.requires(red, recv[w]);
                        e.requires(red, prev);
                        prev = red;
                    }
                    let red = e.op(Op::calc(g.reduce_calc()));
                    e.requires(red, recv[0]);
                    e.requires(send[n - 1], prev);
                    for s in &send {
                        e.requires(*s, red);
                    }
                }
                for w in 1..=n {
                    let peer = (r as i128 - w as i128 * pw).rem_euclid(pi as i128) as u32;
                    recv[w - 1] = e.op(Op::recv(d, peer, t0));
                }
                pw *= g.nway() as i128 + 1;
            }
        }
        Collective::BinaryTreeBcast => {
            // Schedgen's breadth-first loop: `src` pops from a queue, the next two counters
            // are its children; real ranks are compared with the counters (root 0).
            let mut queue = std::collections::VecDeque::from([0i64]);
            let mut cnt = 0i64;
            let mut recv = -1i64;
            let mut send = [-1i64; 2];
            while cnt < pi {
                let src = queue
                    .pop_front()
                    .expect("the queue never empties before cnt = P");
                for _child in 0..2 {
                    cnt += 1;
                    let tgt = cnt;
                    if tgt < pi {
                        if r == src {
                            let slot = if send[0] == -1 { 0 } else { 1 };
                            send[slot] = e.op(Op::send(d, swap(tgt) as u32, t0));
                        }
                        if r == tgt {
                            recv = e.op(Op::recv(d, swap(src) as u32, t0));
                        }
                        queue.push_back(tgt);
                    }
                }
            }
            if r > 0 && recv != -1 {
                for s in send {
                    if s != -1 {
                        e.requires(s, recv);
                    }
                }
            }
        }
        Collective::BinomialTreeBcast | Collective::BinomialTreeReduce => {
            let bcast = g.pattern() == Collective::BinomialTreeBcast;
            let v = swap(r);
            let rounds = g.rounds();
            let (mut send, mut recv) = (-1i64, -1i64);
            let mut last_send = -1i64;
            for round in 0..rounds {
                let pw = 1i64 << round;
                // Towards the children (v + 2^round) …
                if v + pw < pi && v < pw {
                    let child = swap(v + pw) as u32;
                    if bcast {
                        send = e.op(Op::send(d, child, t0));
                        // The cloud_noise fork serialises the sends.
                        if g.chain_sends() {
                            if last_send != -1 {
                                e.requires(send, last_send);
                            }
                            last_send = send;
                        }
                    } else {
                        recv = e.op(Op::recv(d, child, t0));
                    }
                }
                if send >= 0 && recv >= 0 {
                    e.requires(send, recv);
                }
                // … and from/to the parent (v − 2^round).
                if v >= pw && v < 2 * pw {
                    let parent = swap(v - pw) as u32;
                    if bcast {
                        recv = e.op(Op::recv(d, parent, t0));
                    } else {
                        send = e.op(Op::send(d, parent, t0));
                    }
                }
            }
        }
    }
}

/// Writes the whole collective as Schedgen writes it (`num_ranks`, blank line, `rank r {`,
/// `lN: send Sb to D tag T`, `lN: recv Sb from S tag T`, `lN: calc T`, `lA requires lB`,
/// `}`), byte for byte. Streams rank by rank; memory is O(1) beyond the writer.
pub fn write_schedgen<W: Write>(g: &Generated, mut w: W) -> io::Result<()> {
    writeln!(w, "num_ranks {}", g.num_ranks())?;
    for rank in 0..g.num_ranks() {
        write!(w, "\nrank {rank} {{\n")?;
        let mut id = 0u32;
        let mut err = Ok(());
        emit_rank(g, rank, &mut |line| {
            if err.is_err() {
                return;
            }
            err = match line {
                Line::Op(op) => {
                    id += 1;
                    match op.kind {
                        OpKind::Send => {
                            writeln!(w, "l{id}: send {}b to {} tag {}", op.size, op.peer, op.tag)
                        }
                        OpKind::Recv => writeln!(
                            w,
                            "l{id}: recv {}b from {} tag {}",
                            op.size, op.peer, op.tag
                        ),
                        OpKind::Calc => writeln!(w, "l{id}: calc {}", op.size),
                    }
                }
                Line::Requires { tail, head } => {
                    writeln!(w, "l{} requires l{}", tail + 1, head + 1)
                }
                Line::Irequires { tail, head } => {
                    writeln!(w, "l{} irequires l{}", tail + 1, head + 1)
                }
            };
        });
        err?;
        writeln!(w, "}}")?;
    }
    w.flush()
}
