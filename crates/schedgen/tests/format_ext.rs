//! The format's extensions for extrapolated schedules: `grid` with coordinates and `at()`,
//! functions, quantity expressions (`calc 98ms * 8 / P`), and `mpi { }` blocks; with the
//! messages users see when they get them wrong (insta snapshots).

use loggops_engine::{DepKind, Op, Program};
use loggops_schedgen::check::validate;
use loggops_schedgen::parse_schedule_str;

fn sched(body: &str, nodes: u32) -> loggops_schedgen::Schedule {
    let text = format!("loggops-schedule 1\n{body}");
    parse_schedule_str(&text, "goal/ext.goal", nodes, &[] as &[(&str, &str)])
        .unwrap_or_else(|e| panic!("{e}"))
}

fn err(body: &str, nodes: u32) -> String {
    let text = format!("loggops-schedule 1\n{body}");
    match parse_schedule_str(&text, "goal/bad.goal", nodes, &[] as &[(&str, &str)]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_cube_grid_gives_coordinates_and_neighbours() {
    let body = "grid root(P, 3), root(P, 3), root(P, 3)\n\
                send 1B to at(1, 0, 0) if x < nx - 1\n\
                send 2B to at(0, -1, 0) if y > 0\n\
                send 3B to at(0, 0, 1) tag 7\n";
    let s = sched(body, 27);
    validate(&s).unwrap();
    // rank 13 = (1, 1, 1): all three; rank 0 = (0, 0, 0): x+1 and (wrapping) z+1
    let ops = |r: u32| (0..s.num_ops(r)).map(|i| s.op(r, i)).collect::<Vec<_>>();
    assert_eq!(
        ops(13),
        [Op::send(1, 14, 0), Op::send(2, 10, 0), Op::send(3, 22, 7)]
    );
    assert_eq!(ops(0), [Op::send(1, 1, 0), Op::send(3, 9, 7)]);
    // (2, 2, 2) = 26: z wraps to 0
    assert_eq!(ops(26), [Op::send(2, 23, 0), Op::send(3, 8, 7)]);
    insta::assert_snapshot!("grid_not_a_cube", err(body, 60));
    insta::assert_snapshot!("grid_uses_rank", err("grid rank, 2\ncalc 1us\n", 4));
    insta::assert_snapshot!("grid_twice", err("grid P\ngrid P\n", 4));
    insta::assert_snapshot!("root_arity", err("grid root(P)\n", 8));
}

#[test]
fn two_dimensional_grids_and_functions() {
    let s = sched(
        "grid 4, P / 4\nsend 1B to at(-1, 1) if min(x, y) == 0 && max(x, y) < 3\n",
        12,
    );
    // rank 4 = (0, 1): to (3, 2) = 11
    assert_eq!(s.op(4, 0), Op::send(1, 11, 0));
    assert_eq!(s.num_ops(5), 0);
    assert_eq!(s.num_ops(3), 0);
}

#[test]
fn quantity_expressions_scale_with_p() {
    let s = sched("calc 98ms * 8 / P\ncalc 1us + 2us * rank\n", 16);
    assert_eq!(s.op(0, 0), Op::calc(49_000_000_000));
    assert_eq!(s.op(3, 1), Op::calc(7_000_000));
    let s = sched("param t = 3us\nmpi {\n  calc ${t} * 2\n  isend 4MiB / (P * P) to rank + 1 as a\n  wait a\n  calc 0ns\n}\n", 4);
    assert_eq!(s.op(0, 0), Op::send(262144, 1, 0));
    assert_eq!(s.op(0, 1), Op::calc(6_000_000));
    insta::assert_snapshot!("quantity_without_unit", err("calc 1000 * P\n", 4));
    insta::assert_snapshot!("quantity_mixed", err("calc 1us + 4KiB\n", 4));
    insta::assert_snapshot!("quantity_negative", err("calc 1us - 1ns * rank\n", 4000));
}

#[test]
fn mpi_blocks_explain_their_mistakes() {
    insta::assert_snapshot!(
        "blocking_call_named",
        err("mpi {\n  send 1B to rank + 1 as s\n}\n", 4)
    );
    insta::assert_snapshot!(
        "wait_for_unknown_request",
        err("mpi {\n  irecv 1B from rank - 1 as r\n  wait q\n}\n", 4)
    );
    insta::assert_snapshot!(
        "wait_inside_repeat_for_outside_request",
        err(
            "mpi {\n  irecv 1B from rank - 1 as r\n  repeat 2 {\n    wait r\n  }\n}\n",
            4
        )
    );
    insta::assert_snapshot!(
        "not_in_an_mpi_block",
        err("mpi {\n  concurrent {\n  }\n}\n", 4)
    );
    insta::assert_snapshot!(
        "collective_size_depends_on_rank",
        err("mpi {\n  allreduce recdoub_mpich 8B * (rank + 1)\n}\n", 4)
    );
    insta::assert_snapshot!("collectives_on_one_rank", err("mpi {\n  barrier\n}\n", 1));
}

#[test]
fn collectives_in_mpi_blocks_are_numbered_like_schedgen() {
    let s = sched(
        "mpi {\n  calc 1us\n  repeat 3 {\n    barrier\n    allreduce recdoub_mpich 8B\n  }\n  bcast binomial 4B root 1 tagbase 5\n  calc 2us\n}\n",
        3,
    );
    validate(&s).unwrap();
    let tags: Vec<u32> = (0..s.num_ops(0))
        .map(|i| s.op(0, i))
        .filter(|o| o.kind != loggops_engine::OpKind::Calc)
        .map(|o| o.tag)
        .collect();
    // rank 0 of 3: dissemination 2 sends + 2 recvs, recdoub_mpich (even, 2 ops), bcast from 1
    assert_eq!(
        tags,
        [
            1000000, 1000000, 1000000, 1000000, 1000001, 1000001, //
            1000002, 1000002, 1000002, 1000002, 1000003, 1000003, //
            1000004, 1000004, 1000004, 1000004, 1000005, 1000005, //
            11
        ]
    );
    // the gap before the first call is a root; the trailing 2us op requires the bcast's closing op (before its gap)
    assert_eq!(s.num_roots(0), 1);
    let last = s.num_ops(0) - 1;
    assert_eq!(s.op(0, last), Op::calc(2_000_000));
    let mut d = Vec::new();
    s.for_each_dependent(0, last - 2, DepKind::Done, |x| d.push(x));
    assert_eq!(d, [last]);
}
