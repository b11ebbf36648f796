//! LogGOPSim's micro cases (LOGGOPSIM.md §4.3, §11) with hand-derived answers, default
//! parameters in ticks (L=2500 o=1500 g=1000 G=6 O=0 S=65535).
use loggops_engine::testing::VecProgram;
use loggops_engine::{simulate, Config, NoNoise, Op, Order, Params, ANY};

fn run(p: &VecProgram, compat: bool) -> Vec<u64> {
    let mut cfg = Config::new(Params::loggopsim_defaults_ticks());
    cfg.compat = compat;
    let out = simulate(p, &cfg, &mut NoNoise).unwrap();
    assert!(out.completed(), "{:?}", out.leftovers);
    out.finish
}

#[test]
fn m2_rendezvous_completes_sender_at_match() {
    let mut p = VecProgram::new(2);
    let s = p.op(0, Op::send(100_000, 1, 0));
    let c = p.op(0, Op::calc(100));
    p.requires(0, c, s);
    p.op(1, Op::recv(100_000, 0, 0));
    assert_eq!(run(&p, true), vec![4100, 605_494]);
}

#[test]
fn m3_late_receive_takes_the_unexpected_path() {
    let mut p = VecProgram::new(2);
    p.op(0, Op::send(16, 1, 7));
    let c = p.op(1, Op::calc(10_000));
    let r = p.op(1, Op::recv(16, 0, 7));
    p.requires(1, r, c);
    assert_eq!(run(&p, true), vec![1500, 11_590]);
}

#[test]
fn m4_late_rendezvous_receive_releases_sender() {
    let mut p = VecProgram::new(2);
    let s = p.op(0, Op::send(100_000, 1, 7));
    let c = p.op(0, Op::calc(5));
    p.requires(0, c, s);
    let c1 = p.op(1, Op::calc(10_000));
    let r = p.op(1, Op::recv(100_000, 0, 7));
    p.requires(1, r, c1);
    assert_eq!(run(&p, true), vec![10_005, 611_494]);
}

#[test]
fn m5_nic_gap_and_wildcards() {
    let mut p = VecProgram::new(3);
    p.op(0, Op::send(1000, 1, 0));
    p.op(0, Op::send(1000, 2, 0));
    p.op(1, Op::recv(1000, 0, 0));
    p.op(2, Op::recv(1000, ANY, ANY));
    assert_eq!(run(&p, true), vec![8494, 11_494, 18_488]);
}

#[test]
fn m6_irequires_and_second_cpu_time_travel() {
    let mut p = VecProgram::new(2);
    let a = p.op(0, Op::calc(5000));
    let b = p.op(0, Op::send(8, 1, 1));
    p.irequires(0, b, a);
    let x = p.op(1, Op::recv(8, 0, 1));
    let y = p.op(1, Op::calc(100).on_cpu(1));
    p.requires(1, y, x);
    assert_eq!(run(&p, true), vec![6500, 10_542]);
}

#[test]
fn zero_byte_message_costs_o_minus_g_only_in_compat_mode() {
    let mut p = VecProgram::new(2);
    p.op(0, Op::send(0, 1, 0));
    p.op(1, Op::recv(0, 0, 0));
    assert_eq!(run(&p, true), vec![1500, 5494]);
    // Normal mode: a 0-byte message pays no per-byte cost: 2o + L.
    assert_eq!(run(&p, false), vec![1500, 5500]);
}

#[test]
fn unmatched_receive_is_reported() {
    let mut p = VecProgram::new(2);
    p.op(0, Op::send(8, 1, 3));
    p.op(1, Op::recv(8, 0, 4));
    let cfg = Config::new(Params::loggopsim_defaults_ticks());
    let out = simulate(&p, &cfg, &mut NoNoise).unwrap();
    assert!(!out.completed());
    assert_eq!(out.leftovers.len(), 1);
    assert_eq!(out.leftovers[0].unexpected.len(), 1);
    assert_eq!(out.leftovers[0].posted.len(), 1);
}

#[test]
fn overflow_is_an_error_in_normal_mode_and_wraps_in_compat() {
    let mut p = VecProgram::new(1);
    p.op(0, Op::calc(u64::MAX - 5));
    let c2 = p.op(0, Op::calc(10));
    p.requires(0, c2, 0);
    let cfg = Config::new(Params::loggopsim_defaults_ticks());
    assert!(simulate(&p, &cfg, &mut NoNoise).is_err());
    let cfg = Config {
        model: loggops_engine::Model::LogGOPSim,
        compat: true,
        order: Order::Libstdcxx,
        ..cfg
    };
    assert_eq!(simulate(&p, &cfg, &mut NoNoise).unwrap().finish, vec![4]);
}

#[test]
fn an_op_with_hundreds_of_dependencies_runs_once_all_are_done() {
    // Dependency counters are one byte per op with an overflow map for 255 and more.
    let mut p = VecProgram::new(1);
    let deps: Vec<u32> = (0..300).map(|_| p.op(0, Op::calc(1))).collect();
    let last = p.op(0, Op::calc(7));
    for &d in &deps {
        p.requires(0, last, d);
    }
    assert_eq!(run(&p, false), vec![307]);
}

/// Both counter layouts (dense for explicit schedules, sparse for generated ones) give the
/// same answers.
fn run_both(p: &VecProgram) -> Vec<u64> {
    let mut sparse = p.clone();
    sparse.sparse_counters = true;
    let dense = run(p, false);
    assert_eq!(run(&sparse, false), dense);
    dense
}

#[test]
fn several_partially_satisfied_ops_on_one_rank() {
    // After c0, both `a` and `b` wait for one more dependency: the sparse counters keep one in
    // the rank's slot and the other in the overflow map. One CPU, always busy: 10+20+30+1+1.
    let mut p = VecProgram::new(1);
    let c0 = p.op(0, Op::calc(10));
    let c1 = p.op(0, Op::calc(20));
    let c2 = p.op(0, Op::calc(30));
    let a = p.op(0, Op::calc(1));
    let b = p.op(0, Op::calc(1));
    p.requires(0, a, c0);
    p.requires(0, a, c2);
    p.requires(0, b, c0);
    p.requires(0, b, c1);
    assert_eq!(run_both(&p), vec![62]);
}

#[test]
fn a_message_can_match_a_receive_in_the_middle_of_a_posted_run() {
    // Rank 1 posts three receives in a row (one run of mixed sources); rank 2's message
    // arrives first and takes the middle one, then rank 0's two messages take the others in
    // posting order (tag 5 first even though tag 7 was sent first: tags select the receive).
    let mut p = VecProgram::new(3);
    let r0 = p.op(1, Op::recv(8, 0, 5));
    let r1 = p.op(1, Op::recv(8, 2, 5));
    let r2 = p.op(1, Op::recv(8, 0, 7));
    let tail = p.op(1, Op::calc(100));
    for r in [r0, r1, r2] {
        p.requires(1, tail, r);
    }
    let late = p.op(0, Op::calc(20_000));
    let s7 = p.op(0, Op::send(8, 1, 7));
    let s5 = p.op(0, Op::send(8, 1, 5));
    p.requires(0, s7, late);
    p.requires(0, s5, s7);
    p.op(2, Op::send(8, 1, 5));
    // Ticks: L=2500 o=1500 g=1000 G=6. Rank 0 sends at 20000 and 21500 (o after o); they
    // arrive at 24000 and 25500. The first keeps rank 1's CPU busy until 24000+1500+7·6 =
    // 25542, so the second is received from 25542 to 27084; then the calc: 27184.
    let f = run_both(&p);
    assert_eq!(f, vec![23_000, 27_184, 1_500]);
}

/// The engine's shortcuts for roots already in type order and for runs of receive roots
/// (whole runs posted at once) give the same outcome as the general path.
fn same_with_hints(p: &VecProgram) -> Vec<u64> {
    let cfg = Config::new(Params::loggopsim_defaults_ticks());
    let plain = simulate(p, &cfg, &mut NoNoise).unwrap();
    let mut hinted = p.clone();
    hinted.hints = true;
    assert_eq!(simulate(&hinted, &cfg, &mut NoNoise).unwrap(), plain);
    plain.finish
}

#[test]
fn runs_of_receive_roots_posted_at_once_match_in_posting_order() {
    // Rank 1 posts a tag-5 receive, then three tag-1 receives (a run the engine posts at
    // once, after a run it cannot extend); rank 0's tag-1 messages take them in order.
    let mut p = VecProgram::new(2);
    for tag in [1, 1, 1, 5] {
        p.op(0, Op::send(16, 1, tag));
    }
    let first = p.op(1, Op::recv(16, 0, 5));
    let runs: Vec<u32> = (0..3).map(|_| p.op(1, Op::recv(16, 0, 1))).collect();
    let c = p.op(1, Op::calc(1));
    p.requires(1, c, runs[2]);
    p.requires(1, c, first);
    let mut hinted = p.clone();
    hinted.hints = true;
    assert_eq!(
        loggops_engine::Program::root_recv_run(&hinted, 1, 1),
        (3, 1)
    );
    // Rank 1: arrivals at 4000, 5500, 7000, 8500, each 1590 of CPU; the calc after the last.
    assert_eq!(same_with_hints(&p), vec![6000, 10_361]);
}

#[test]
fn a_ring_gives_the_same_times_with_and_without_root_hints() {
    let n = 5;
    let mut p = VecProgram::new(n);
    for r in 0..n {
        let mut last = None;
        for _ in 0..2 * (n - 1) {
            let s = p.op(r, Op::send(1024, (r + 1) % n, 0));
            if let Some(l) = last {
                p.requires(r, s, l);
            }
            last = Some(p.op(r, Op::recv(1024, (r + n - 1) % n, 0)));
        }
    }
    let mut hinted = p.clone();
    hinted.hints = true;
    assert_eq!(
        loggops_engine::Program::root_recv_run(&hinted, 2, 1),
        (2 * (n - 1), 2)
    );
    let t = same_with_hints(&p);
    assert!(t.iter().all(|&x| x == t[0]));
}

#[test]
fn the_progress_hook_counts_every_op_and_stops_when_asked() {
    use loggops_engine::{simulate_global, EngineError, Progress};
    // A 64-rank ring of 200 rounds: enough events for several reports.
    let p = VecProgram::ring(64, 200);
    static HOOK: Progress = Progress::new();
    let plain = Config::new(Params::loggopsim_defaults_ticks());
    let cfg = Config {
        progress: Some(&HOOK),
        ..plain
    };
    let with = simulate_global(&p, &cfg, &mut NoNoise).unwrap();
    let without = simulate_global(&p, &plain, &mut NoNoise).unwrap();
    assert_eq!(with.finish, without.finish);
    assert_eq!(HOOK.ops_started(), loggops_engine::Program::total_ops(&p));
    assert!(
        with.events > Progress::EVERY,
        "the run reports more than once"
    );
    HOOK.reset();
    HOOK.request_stop();
    assert_eq!(
        simulate_global(&p, &cfg, &mut NoNoise).unwrap_err(),
        EngineError::Stopped
    );
}
