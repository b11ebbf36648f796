//! The global engine's own tests (the conformance, windowed-engine and property tests live in
//! `crate::window::tests`, `crates/engine/tests` and the root's `tests/`).

use super::*;
use crate::noise::NoNoise;
use crate::sim::driver::NO_DIRECT;
use crate::test_rng::xorshift;
use crate::testing::VecProgram;
use crate::{Op, Params};

fn both(p: &VecProgram, params: Params, compat: bool) -> [(Vec<Time>, u64, u64); 2] {
    [false, true].map(|off| {
        NO_DIRECT.with(|c| c.set(off));
        let mut cfg = Config::new(params);
        cfg.compat = compat;
        let out = simulate(p, &cfg, &mut NoNoise).unwrap();
        NO_DIRECT.with(|c| c.set(false));
        assert!(out.completed(), "{:?}", out.leftovers);
        (out.finish, out.events, out.messages)
    })
}

/// Random exchange rounds with calcs of random length (many of them 0, so ops are freed to
/// start at the time of the event that frees them, the others later) under parameters that
/// make ties common (L = o = g, 1-byte messages): the direct path gives the same finishing
/// times and event counts as the queue, with the radix queue (more than `FEW_RANKS` ranks)
/// and with the heap (fewer ranks, and compat mode).
#[test]
fn ops_run_without_the_queue_exactly_when_they_would_pop_next() {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let mut rnd = move |n: u64| next() % n;
    let lgs = Params::loggopsim_defaults_ticks();
    let ties = Params {
        l: 1000,
        o: 1000,
        g: 1000,
        ..lgs
    };
    for _ in 0..300 {
        // Few ranks run on the binary heap, more than `FEW_RANKS` on the radix heap.
        let ranks = if rnd(4) == 0 {
            FEW_RANKS + 1 + rnd(8) as u32
        } else {
            2 + rnd(9) as u32
        };
        let mut p = VecProgram::new(ranks);
        p.sparse_counters = rnd(2) == 0;
        let rounds = 1 + rnd(5);
        let mut last: Vec<Option<u32>> = vec![None; ranks as usize];
        for k in 0..rounds {
            let d = 1 + (k as u32 % (ranks - 1));
            for r in 0..ranks {
                let size = [0, 1, 1, 16][rnd(4) as usize];
                let s = VecProgram::op(&mut p, r, Op::send(size, (r + d) % ranks, k as u32));
                let v =
                    VecProgram::op(&mut p, r, Op::recv(size, (r + ranks - d) % ranks, k as u32));
                let c = VecProgram::op(&mut p, r, Op::calc([0, 0, 1000, 2000][rnd(4) as usize]));
                p.requires(r, c, v);
                if rnd(2) == 0 {
                    p.requires(r, c, s);
                }
                if let Some(prev) = last[r as usize] {
                    p.requires(r, s, prev);
                    if rnd(3) == 0 {
                        p.requires(r, v, prev);
                    }
                }
                last[r as usize] = Some(c);
            }
        }
        for (params, compat) in [(ties, false), (ties, true), (lgs, false)] {
            let [queued, direct] = both(&p, params, compat);
            assert_eq!(queued, direct, "compat {compat}: {p:?}");
        }
    }
}
