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
