//! Measures the GOAL front ends on a file.
//!
//! `cargo run --release -p loggops-goal --example goal_bench -- FILE.goal [REPEAT]` parses FILE
//! (text or binary) REPEAT times and prints throughput and bytes per op.
//! `... --example goal_bench -- --ring P OUT.goal` writes a Schedgen-style ring allreduce
//! (16 MiB) with P ranks to OUT.goal first.

use std::time::Instant;

use loggops_engine::{DepKind, Op, Program};
use loggops_goal::{load, write_goal, ProgramBuilder};

fn ring(p: u32, bytes: u64) -> loggops_goal::ExplicitProgram {
    let mut b = ProgramBuilder::new(p);
    for r in 0..p {
        b.start_rank(r);
        let mut last = None;
        for _ in 0..2 * (p - 1) {
            let s = b.add_op(Op::send(bytes / p as u64, (r + 1) % p, 0));
            if let Some(l) = last {
                b.add_dep(s, l, DepKind::Done);
            }
            last = Some(b.add_op(Op::recv(bytes / p as u64, (r + p - 1) % p, 0)));
        }
        b.end_rank().unwrap();
    }
    b.finish()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args[0] == "--ring" {
        let p: u32 = args[1].parse().unwrap();
        let prog = ring(p, 16 << 20);
        let f = std::fs::File::create(&args[2]).unwrap();
        write_goal(&prog, f).unwrap();
        return;
    }
    let path = &args[0];
    let repeat: usize = args.get(1).map_or(1, |s| s.parse().unwrap());
    let size = std::fs::metadata(path).unwrap().len();
    let mut best = f64::MAX;
    let mut prog = None;
    for _ in 0..repeat {
        let t = Instant::now();
        let p = load(path).unwrap_or_else(|e| panic!("{e}"));
        best = best.min(t.elapsed().as_secs_f64());
        prog = Some(p);
    }
    let p = prog.unwrap();
    println!(
        "{path}: {:.1} MB in {:.3} s = {:.0} MB/s; {} ops, {} edges, {} distinct ranks, {} heap bytes = {:.2} B/op",
        size as f64 / 1e6,
        best,
        size as f64 / 1e6 / best,
        p.total_ops(),
        p.num_edges(),
        p.num_distinct_ranks(),
        p.heap_bytes(),
        p.heap_bytes() as f64 / p.total_ops() as f64
    );
}
