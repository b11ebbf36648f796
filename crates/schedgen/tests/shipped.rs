//! The schedules shipped in `goal/` and the examples in `goal/README.md` load and mean what their
//! comments say.

use std::path::PathBuf;

use loggops_engine::{DepKind, Op, Program};
use loggops_schedgen::check::validate;
use loggops_schedgen::{parse_schedule, parse_schedule_str, sniff, Collective, FileKind};

fn goal_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../goal")
}

fn load(name: &str, nodes: u32) -> loggops_schedgen::Schedule {
    parse_schedule(goal_dir().join(name), nodes, &[] as &[(&str, &str)]).unwrap()
}

#[test]
fn every_shipped_file_is_a_valid_schedule() {
    let mut n = 0;
    for entry in std::fs::read_dir(goal_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "goal") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(sniff(&text), FileKind::Schedule, "{}", path.display());
        assert!(
            text.lines().nth(1).is_some_and(|l| l.starts_with('#')),
            "{}: no comment",
            path.display()
        );
        for nodes in [2, 4, 16, 64] {
            let s = parse_schedule(&path, nodes, &[] as &[(&str, &str)]).unwrap();
            validate(&s).unwrap();
        }
        n += 1;
    }
    assert!(n >= 5, "only {n} shipped schedules");
}

#[test]
fn ring_512mib_at_16384_ranks_is_lazy() {
    let s = load("ring_512MiB.goal", 16384);
    let g = s.single_collective().expect("one collective phase");
    assert_eq!(
        (g.pattern(), g.size()),
        (Collective::AllreduceRing, 512 << 20)
    );
    assert_eq!(s.total_ops(), 1_073_676_288);
    assert_eq!(s.op(7, 0), Op::send(32768, 8, 0));
    assert_eq!(s.op(0, 1), Op::recv(32768, 16383, 0));
    assert_eq!(s.num_roots(0), 32767);
    // The schedule is a few nodes, independent of P.
    assert!(std::mem::size_of_val(&s) < 256);
}

#[test]
fn cost_workloads_start_with_the_dgemm() {
    let s = load("dgemm128_dissemination_128KiB.goal", 16);
    assert_eq!(s.op(0, 0), Op::calc(18_883_000));
    // The DGEMM is the only root; it releases the collective's first ops.
    assert_eq!((s.num_roots(3), s.root(3, 0)), (1, 0));
    assert_eq!(s.op(0, 1), Op::send(131072, 1, 0));
    let mut deps = Vec::new();
    s.for_each_dependent(0, 0, DepKind::Done, |x| deps.push(x));
    // The first send and every receive of the 4 rounds (receives are posted up front).
    assert_eq!(deps, vec![1, 2, 5, 8, 11]);

    let s = load("dgemm8192_ring_512MiB.goal", 16);
    assert_eq!(s.op(5, 0), Op::calc(416_705_549_000));
    // calc, pass 1 (16 segments of 32 MiB = 32 ops), join, pass 2.
    assert_eq!(s.num_ops(5), 1 + 32 + 1 + 32);
    assert_eq!(s.op(5, 33), Op::calc(0));
    assert_eq!(s.op(5, 1), Op::recv(32 << 20, 4, 0));
    assert_eq!(s.op(5, 34 + 31), Op::send(32 << 20, 6, 15));
    let s = parse_schedule(
        goal_dir().join("dgemm8192_ring_512MiB.goal"),
        16,
        &[("dgemm", "923471.174us"), ("passes", "1")],
    )
    .unwrap();
    assert_eq!((s.op(0, 0), s.num_ops(0)), (Op::calc(923_471_174_000), 33));
}

#[test]
fn dissemination_and_butterfly() {
    let s = load("dissemination_16B.goal", 1024);
    let g = s.single_collective().unwrap();
    assert_eq!(
        (g.pattern(), g.nway(), g.reduce_calc(), g.rounds()),
        (Collective::NwayDissemination, 1, 0, 10)
    );
    let s = load("butterfly_16MiB.goal", 1024);
    assert_eq!(
        s.single_collective().unwrap().pattern(),
        Collective::AllreduceRecdoub
    );
    let e = parse_schedule(
        goal_dir().join("butterfly_16MiB.goal"),
        1000,
        &[] as &[(&str, &str)],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("needs a power-of-two number of ranks, got 1000"),
        "{e}"
    );
}

#[test]
fn readme_examples_parse() {
    let readme = std::fs::read_to_string(goal_dir().join("README.md")).unwrap();
    let mut blocks = 0;
    for block in readme.split("```").skip(1).step_by(2) {
        let body = block
            .trim_start_matches(|c: char| c.is_alphanumeric())
            .trim_start_matches('\n');
        if body.starts_with("loggops-schedule 1") {
            // 64 ranks: a power of two and a cube (the grid example's `root(P, 3)`)
            let s = parse_schedule_str(body, "README.md", 64, &[] as &[(&str, &str)])
                .unwrap_or_else(|e| panic!("{e}"));
            validate(&s).unwrap();
            blocks += 1;
        }
    }
    assert_eq!(blocks, 5);
}
