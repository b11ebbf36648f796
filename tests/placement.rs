//! Near and far placement in the queued model ([`Model::Queued`]): on every shipped collective
//! a mixed placement lies between all-near and all-far, and making one parameter of one
//! placement smaller never makes a noiseless run slower (random parameters, P up to 64). The
//! LogGOPSim model violates both (pinned below on the smallest case), which is why `--noise`
//! runs use the queued model by default.
//!
//! Runs go through the real noise model (mode `none`: each message gets the base parameters of
//! its placement) and both engines: the global one, and `simulate`, which tries the windowed
//! one first.
use loggops_engine::{simulate, simulate_global, Config, Model, Program};
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
use loggops_profile::{BaseParams, OsNoise, Placement, Prices, Profile, Provenance};
use loggops_schedgen::{Collective, GenOptions, Generated};
use proptest::prelude::*;

/// LogGOPS parameters of one placement, in ps (G in ps per byte).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Link {
    l: u64,
    o: u64,
    g: u64,
    big_g: f64,
    big_o: f64,
}

impl Link {
    fn base(self, s: u64) -> BaseParams {
        BaseParams {
            l_ps: self.l as f64,
            o_ps: self.o as f64,
            g_ps: self.g as f64,
            big_g_ps_per_byte: self.big_g,
            big_o_ps_per_byte: self.big_o,
            s_bytes: s,
        }
    }
    /// Every parameter at least `self`'s.
    fn at_least(self, d: Link) -> Link {
        Link {
            l: self.l + d.l,
            o: self.o + d.o,
            g: self.g + d.g,
            big_g: self.big_g + d.big_g,
            big_o: self.big_o + d.big_o,
        }
    }
}

fn placement(link: Link, s: u64) -> Placement {
    Placement::new(link.base(s), 16 << 20)
}

/// The noiseless finishing time (max over ranks, ps) of `prog` with `near` links within a
/// switch of `nodes_per_switch` ranks and `far` links across, rendezvous above `s` bytes paying
/// 3L as with `--noise`.
fn run(prog: &Generated, near: Link, far: Link, nps: u32, s: u64, model: Model) -> u64 {
    let profile = Profile {
        system: "placement-test".into(),
        description: String::new(),
        near: placement(near, s),
        far: Some(placement(far, s)),
        nodes_per_switch: nps,
        os_noise: OsNoise::default(),
        prices: Prices::default(),
        provenance: Provenance::default(),
        calibration: Default::default(),
        day: String::new(),
        days: Vec::new(),
        mpi_progress: None,
        clock: None,
    };
    let noise = NoiseModel::new(
        &profile,
        &NoiseConfig {
            mode: NoiseMode::None,
            ..NoiseConfig::default()
        },
    )
    .unwrap();
    let mut cfg = Config::new(noise.engine_params());
    cfg.model = model;
    let global = simulate_global(prog, &cfg, &mut noise.instance(1, 0, prog.num_ranks())).unwrap();
    assert!(global.completed(), "{:?}", global.leftovers);
    let either = simulate(prog, &cfg, &mut noise.instance(1, 0, prog.num_ranks())).unwrap();
    assert_eq!(either, global, "windowed and global engines differ");
    global.max().0
}

/// A shipped collective on `p` ranks (the butterfly on the largest power of two ≤ `p`).
fn collective(which: usize, p: u32, size: u64, nway: u32, reduce_ps: u64) -> Option<Generated> {
    let coll = Collective::ALL[which % Collective::ALL.len()];
    let p = if coll == Collective::AllreduceRecdoub {
        1 << (31 - p.leading_zeros())
    } else {
        p
    };
    let opts = GenOptions {
        nway,
        reduce_calc: Some(reduce_ps),
        ..GenOptions::default()
    };
    // `None` when the pattern cannot cut the size (a pipelined ring of fewer bytes than ranks).
    Generated::with_options(coll, p.max(2), size, opts).ok()
}

fn link() -> impl Strategy<Value = Link> {
    // Cloud-to-supercomputer ranges: L 0.5–30 us, o 0–3 us, g 0 (a third of the time) to
    // 25 us, G 0.05–0.45 ns/B, O 0 (half of the time) to 0.3 ns/B.
    (
        500_000u64..30_000_000,
        0u64..3_000_000,
        prop_oneof![Just(0u64), 0u64..25_000_000, 0u64..25_000_000],
        50.0f64..450.0,
        prop_oneof![Just(0.0f64), 0.0f64..300.0],
    )
        .prop_map(|(l, o, g, big_g, big_o)| Link {
            l,
            o,
            g,
            big_g,
            big_o,
        })
}

fn extra() -> impl Strategy<Value = Link> {
    // What a far link adds: each parameter unchanged half of the time.
    (
        prop_oneof![Just(0u64), 0u64..20_000_000],
        prop_oneof![Just(0u64), 0u64..2_000_000],
        prop_oneof![Just(0u64), 0u64..20_000_000],
        prop_oneof![Just(0.0f64), 0.0f64..300.0],
        prop_oneof![Just(0.0f64), 0.0f64..100.0],
    )
        .prop_map(|(l, o, g, big_g, big_o)| Link {
            l,
            o,
            g,
            big_g,
            big_o,
        })
}

/// A case: collective index, ranks, message size, fan-out, reduction calc, nodes per switch
/// (as a fraction of P), eager threshold.
const REDUCE: std::ops::Range<u64> = 0..1;

fn case() -> impl Strategy<Value = (usize, u32, u64, u32, u64, f64, u64)> {
    (
        0..Collective::ALL.len(),
        2u32..=64,
        prop::sample::select(vec![16u64, 1024, 16 << 10, 64 << 10, 1 << 20, 8 << 20]),
        1u32..=4,
        REDUCE,
        0.0f64..1.0,
        prop::sample::select(vec![4096u64, 65535, 1 << 30]),
    )
}

fn nodes_per_switch(p: u32, frac: f64) -> u32 {
    1 + ((p - 1) as f64 * frac) as u32
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Far links at least as slow as near ones: all-near ≤ mixed ≤ all-far.
    #[test]
    fn mixed_placement_lies_between_all_near_and_all_far(
        (which, p, size, nway, reduce, frac, s) in case(),
        near in link(),
        more in extra(),
    ) {
        let prog = collective(which, p, size, nway, reduce);
        prop_assume!(prog.is_some());
        let prog = prog.unwrap();
        let nps = nodes_per_switch(prog.num_ranks(), frac);
        let far = near.at_least(more);
        let q = Model::Queued;
        let all_near = run(&prog, near, near, nps, s, q);
        let mixed = run(&prog, near, far, nps, s, q);
        let all_far = run(&prog, far, far, nps, s, q);
        prop_assert!(all_near <= mixed && mixed <= all_far,
            "{}: near {all_near} mixed {mixed} far {all_far}", Collective::ALL[which]);
    }

    /// Making one parameter of one placement smaller never makes the run slower.
    #[test]
    fn a_smaller_parameter_never_makes_a_run_slower(
        (which, p, size, nway, reduce, frac, s) in case(),
        near in link(),
        far in link(),
        which_param in 0usize..10,
        shrink in 0.0f64..1.0,
    ) {
        let prog = collective(which, p, size, nway, reduce);
        prop_assume!(prog.is_some());
        let prog = prog.unwrap();
        let nps = nodes_per_switch(prog.num_ranks(), frac);
        let (mut near2, mut far2) = (near, far);
        let l = if which_param < 5 { &mut near2 } else { &mut far2 };
        match which_param % 5 {
            0 => l.l = (l.l as f64 * shrink) as u64,
            1 => l.o = (l.o as f64 * shrink) as u64,
            2 => l.g = (l.g as f64 * shrink) as u64,
            3 => l.big_g *= shrink,
            _ => l.big_o *= shrink,
        }
        let q = Model::Queued;
        let before = run(&prog, near, far, nps, s, q);
        let after = run(&prog, near2, far2, nps, s, q);
        prop_assert!(after <= before, "{}: {before} -> {after}", Collective::ALL[which]);
    }
}

/// The smallest case of the LogGOPSim model's pathology: a 5-rank pipelined ring of 64 MiB
/// with Alps' parameters (G 79 / 92 ps/B) and 4 ranks per switch. Under LogGOPSim's rules the
/// mixed placement is slower than putting every message on the far link; the queued model
/// puts it between.
#[test]
fn the_pipelined_ring_pathology_and_its_fix() {
    let prog = Generated::with_options(
        Collective::PipelinedRing,
        5,
        64 << 20,
        GenOptions::default(),
    )
    .unwrap();
    let near = Link {
        l: 1_900_000,
        o: 230_000,
        g: 0,
        big_g: 79.0,
        big_o: 0.0,
    };
    let far = Link {
        big_g: 92.0,
        ..near
    };
    let t = |n, f, m| run(&prog, n, f, 4, 4096, m);
    let lgs = Model::LogGOPSim;
    assert_eq!(
        [t(near, near, lgs), t(near, far, lgs), t(far, far, lgs)],
        [5_334_759_782, 7_087_771_783, 6_207_174_936]
    );
    let q = Model::Queued;
    let [n, m, f] = [t(near, near, q), t(near, far, q), t(far, far, q)];
    assert!(n <= m && m <= f, "{n} {m} {f}");
}

/// What the queued model leaves to timing: a calc and a send that GOAL lets run in either
/// order share one CPU, which serves whichever is ready first. Schedgen's n-way dissemination
/// with reduction calcs of non-zero length (the shipped schedules use the paper's zero-length
/// ones) then has a case where a smaller far latency lets a reduction calc start just before
/// a send that the critical path needs: 6 ranks, fan-out 3, 16 B, 4 ranks per switch.
#[test]
fn a_calc_and_a_send_on_one_cpu_are_served_in_ready_order() {
    let opts = GenOptions {
        nway: 3,
        reduce_calc: Some(99_585),
        ..GenOptions::default()
    };
    let prog = Generated::with_options(Collective::NwayDissemination, 6, 16, opts).unwrap();
    let near = Link {
        l: 17_585_052,
        o: 1_734_808,
        g: 0,
        big_g: 50.0,
        big_o: 0.0,
    };
    let far = Link {
        l: 9_130_895,
        o: 1_683_763,
        g: 6_917_445,
        big_g: 144.301_743_321_812_24,
        big_o: 0.0,
    };
    let faster = Link { l: 0, ..far };
    let q = Model::Queued;
    let before = run(&prog, near, far, 4, 4096, q);
    let after = run(&prog, near, faster, 4, 4096, q);
    assert!(after > before, "{before} -> {after}");
    // Without the calcs the same case is monotone.
    let opts = GenOptions {
        reduce_calc: Some(0),
        ..opts
    };
    let prog = Generated::with_options(Collective::NwayDissemination, 6, 16, opts).unwrap();
    assert!(run(&prog, near, faster, 4, 4096, q) <= run(&prog, near, far, 4, 4096, q));
}
