//! `goal2mpi`: the MPI calls of the paper's benchmark programs, and the schedule they amount to.
//!
//! The expected call listings are what `goal2mpi.py` (DanieleDeSensi/cloud_noise,
//! `simulations/goal2mpi/`) writes for Schedgen's schedules: the snapshot was compared call for
//! call with the script's output for the five measured patterns at 4–32 ranks and 16 B / 16 KiB /
//! 16 MiB in all four variants (blocking, `--use_tests`, `--nb_send`, `--skip_compute`), and with
//! the 45 generated programs of the paper's repository (`benchmarks/collectives/*.c`); neither
//! is part of this repository. The hand-written cases below restate facts of those files.
use loggops_engine::{DepKind, Op};
use loggops_schedgen::check::Line;
use loggops_schedgen::goal2mpi::{ops_of, rank_program, Call, Goal2Mpi, RankProgram, Unsupported};
use loggops_schedgen::schedgen_text::emit_rank;
use loggops_schedgen::{Collective, GenOptions, Generated};

const BLOCKING: Goal2Mpi = Goal2Mpi {
    prioritize_receive: true,
    nb_send: false,
    use_tests: false,
    skip_compute: false,
};

fn rank(g: &Generated, r: u32, opts: Goal2Mpi) -> (RankProgram, Vec<Op>) {
    let mut lines = Vec::new();
    emit_rank(g, r, &mut |l: Line| lines.push(l));
    (rank_program(&lines, opts), ops_of(&lines))
}

fn nway(p: u32, d: u64) -> Generated {
    Generated::new(Collective::NwayDissemination, p, d).unwrap()
}

/// `nwaydissemination_nocompute_test_4_16.c`, rank 0: both receives posted, the first send
/// blocking, the round-1 send in a block polled on the round-0 receive, the last receive
/// waited for after the loop.
#[test]
fn the_test_program_of_the_small_allreduce() {
    let opts = Goal2Mpi {
        use_tests: true,
        skip_compute: true,
        ..BLOCKING
    };
    let (prog, ops) = rank(&nway(4, 16), 0, opts);
    assert_eq!(
        prog.render(&ops),
        "MPI_Irecv l2 16b from 3 tag 0\nMPI_Irecv l5 16b from 2 tag 0\n\
         MPI_Send l1 16b to 1 tag 0\ndo {\n  MPI_Test l2 {\n    MPI_Send l3 16b to 2 tag 0\n  }\n}\n\
         MPI_Wait l5\n"
    );
}

/// The blocking 16 MiB dissemination with compute on 4 ranks, rank 0, as ops in program order:
/// each op after a blocking call requires it, after an `MPI_Irecv` only its start, and each
/// `MPI_Wait` adds its request.
#[test]
fn program_order_as_dependencies() {
    let (prog, ops) = rank(&nway(4, 16 << 20), 0, BLOCKING);
    let calls: Vec<Call> = prog.calls().collect();
    use Call::*;
    // Ops: l1 send, l2 recv, l3 send, l4 calc, l5 recv (ids 0..5).
    assert_eq!(
        calls,
        [
            Irecv(1),
            Irecv(4),
            Send(0),
            Wait(1),
            Compute(3),
            Send(2),
            Wait(4)
        ]
    );
    let s = prog.sequence(&ops).unwrap();
    let d = |on: u32| (on, DepKind::Done);
    let st = |on: u32| (on, DepKind::Start);
    assert_eq!(
        s.ops,
        [
            Op::calc(0),
            ops[1],
            ops[4],
            ops[0],
            ops[3],
            ops[2],
            Op::calc(0)
        ]
    );
    assert_eq!(
        s.deps,
        [
            vec![],
            vec![d(0)],
            vec![st(1)],
            vec![st(2)],
            vec![d(3), d(1)],
            vec![d(4)],
            vec![d(5), d(2)],
        ]
    );
}

/// `--nb_send`: sends are `MPI_Isend`s, waited for after the loop in the order they were made
/// (receives first: they were made first).
#[test]
fn nonblocking_sends_are_waited_for_at_the_end() {
    let opts = Goal2Mpi {
        nb_send: true,
        ..BLOCKING
    };
    let (prog, ops) = rank(&nway(4, 16 << 20), 1, opts);
    assert_eq!(
        prog.render(&ops),
        "MPI_Irecv l2 16777216b from 0 tag 0\nMPI_Irecv l5 16777216b from 3 tag 0\n\
         MPI_Isend l1 16777216b to 2 tag 0\ndo {\n  MPI_Wait l2\n  my_nanosleep l4 16777216\n  \
         MPI_Isend l3 16777216b to 3 tag 0\n}\nMPI_Wait l5\nMPI_Wait l1\nMPI_Wait l3\n"
    );
    let s = prog.sequence(&ops).unwrap();
    // The Isend before the wait is only started; the last op waits for everything.
    assert_eq!(s.deps[4], [(3, DepKind::Start), (1, DepKind::Done)]);
    assert_eq!(
        s.deps.last().unwrap(),
        &[
            (5, DepKind::Start),
            (2, DepKind::Done),
            (3, DepKind::Done),
            (5, DepKind::Done)
        ]
    );
}

/// A `_test` program whose loop holds a block without a test (the fork's binomial tree on 8
/// ranks, rank 1: its second send only follows the first) repeats it on every pass: refused.
#[test]
fn an_unguarded_block_in_a_test_program_is_refused() {
    let g = Generated::with_options(
        Collective::BinomialTreeBcast,
        8,
        16,
        GenOptions {
            chain_sends: true,
            ..GenOptions::default()
        },
    )
    .unwrap();
    let opts = Goal2Mpi {
        use_tests: true,
        ..BLOCKING
    };
    let (prog, ops) = rank(&g, 1, opts);
    assert_eq!(
        prog.render(&ops),
        "MPI_Irecv l1 16b from 0 tag 0\ndo {\n  MPI_Test l1 {\n    MPI_Send l2 16b to 3 tag 0\n  }\n  \
         MPI_Send l3 16b to 5 tag 0\n}\n"
    );
    let e = prog.sequence(&ops).unwrap_err();
    assert_eq!(
        e,
        Unsupported::UnguardedBlock {
            first: Call::Send(2)
        }
    );
    assert_eq!(
        e.to_string(),
        "its MPI_Test polling loop repeats a block that starts with MPI_Send (label l3) on every \
         pass: what it measured depends on how often it polled"
    );
    // Blocking, the same program runs its loop once.
    let (prog, ops) = rank(&g, 1, BLOCKING);
    assert!(prog.sequence(&ops).is_ok());
}

/// Every measured pattern and variant at 4 and 8 ranks, every rank: the listings `goal2mpi.py`
/// writes (see the module docs for how they were checked).
#[test]
fn the_programs_of_the_measured_patterns() {
    let mut out = String::new();
    let patterns: [(&str, Collective, GenOptions); 5] = [
        (
            "nwaydissemination",
            Collective::NwayDissemination,
            GenOptions::default(),
        ),
        (
            "pipelinedring",
            Collective::PipelinedRing,
            GenOptions::default(),
        ),
        (
            "binomialtreebcast",
            Collective::BinomialTreeBcast,
            GenOptions {
                chain_sends: true,
                ..GenOptions::default()
            },
        ),
        (
            "binarytreebcast",
            Collective::BinaryTreeBcast,
            GenOptions::default(),
        ),
        (
            "linear_alltoall",
            Collective::LinearAlltoall,
            GenOptions::default(),
        ),
    ];
    let variants = [
        ("", BLOCKING),
        (
            "_test",
            Goal2Mpi {
                use_tests: true,
                ..BLOCKING
            },
        ),
        (
            "_nbsend",
            Goal2Mpi {
                nb_send: true,
                ..BLOCKING
            },
        ),
        (
            " (skip_compute)",
            Goal2Mpi {
                skip_compute: true,
                ..BLOCKING
            },
        ),
    ];
    for (name, c, opts) in patterns {
        for p in [4, 8] {
            let g = Generated::with_options(c, p, 16, opts).unwrap();
            for (v, o) in variants {
                if v == " (skip_compute)" && c != Collective::NwayDissemination {
                    continue;
                }
                out += &format!("== {name}{v} {p} ranks, 16 B\n");
                for r in 0..p {
                    let (prog, ops) = rank(&g, r, o);
                    out += &format!("-- rank {r}\n{}", prog.render(&ops));
                    if let Err(e) = prog.sequence(&ops) {
                        out += &format!("(not a schedule: {e})\n");
                    }
                }
            }
        }
    }
    insta::assert_snapshot!(out);
}
