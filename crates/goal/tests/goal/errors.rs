//! Parser behaviour beyond the shared edge cases: extensions, warnings, and every error kind
//! (messages pinned with insta).

use loggops_engine::{DepKind::Done, DepKind::Start, Op, Program, ANY};
use loggops_goal::{
    describe_op_in, parse_str, parse_str_with, GoalError, OpDescription, ParseOptions, TimeUnit,
};

use crate::common::{assert_same, program};

fn err(text: &str) -> String {
    match parse_str("t.goal", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn one_rank(body: &str) -> String {
    format!("num_ranks 2\nrank 0 {{\n{body}\n}}\nrank 1 {{\n}}\n")
}

#[test]
fn units_and_glued_tokens() {
    let p = parse_str(
        "t.goal",
        &one_rank("a: send 4KiB to 1\nb: send 1.5KiB to 1 tag 3\nc: send 2 MB to 1\nd: calc 2.5us\ne: calc 7\nf: calc 1s cpu 2"),
    )
    .unwrap();
    assert_eq!(p.op(0, 0), Op::send(4096, 1, 0));
    assert_eq!(p.op(0, 1), Op::send(1536, 1, 3));
    assert_eq!(p.op(0, 2), Op::send(2_000_000, 1, 0));
    assert_eq!(p.op(0, 3), Op::calc(2_500_000));
    assert_eq!(p.op(0, 4), Op::calc(7_000)); // 7 ticks of 1 ns
    assert_eq!(p.op(0, 5), Op::calc(1_000_000_000_000).on_cpu(2));
    assert_eq!(p.num_cpus(), 3);

    let ns = ParseOptions {
        time_unit: TimeUnit::Ns,
        ..ParseOptions::default()
    };
    let p = parse_str_with("t.goal", &one_rank("calc 2.5us\ncalc 7\ncalc 3000ps"), &ns)
        .unwrap()
        .program;
    assert_eq!(
        [p.op(0, 0).size, p.op(0, 1).size, p.op(0, 2).size],
        [2500, 7, 3]
    );
    let e = parse_str_with("t.goal", &one_rank("calc 1500ps"), &ns).unwrap_err();
    insta::assert_snapshot!("calc_not_whole_ns", e.to_string());

    // Tokens may touch inside a statement, as in txt2bin.
    let p = parse_str(
        "t.goal",
        &one_rank("l1:send16b to1 tag2cpu1nic1\nl2:calc5cpu1\nl2 requires l1"),
    )
    .unwrap();
    assert_eq!(p.op(0, 0), Op::send(16, 1, 2).on_cpu(1).on_nic(1));
    assert_eq!(p.op(0, 1), Op::calc(5_000).on_cpu(1));
    assert_eq!(p.depcount(0, 1), 1);
}

/// A plain calc number is a count of ticks (1 ns unless told otherwise); a unit keeps its
/// meaning whatever the tick; scaling never wraps.
#[test]
fn plain_calc_numbers_are_ticks() {
    let text = one_rank("calc 7\ncalc 2.5us\ncalc 0");
    for (tick, plain) in [(1, 7), (1_000, 7_000), (1_000_000, 7_000_000)] {
        let p = parse_str_with("t.goal", &text, &ParseOptions::with_tick(tick))
            .unwrap()
            .program;
        assert_eq!(
            [p.op(0, 0), p.op(0, 1), p.op(0, 2)],
            [Op::calc(plain), Op::calc(2_500_000), Op::calc(0)],
            "tick {tick} ps"
        );
    }
    assert_eq!(ParseOptions::default(), ParseOptions::with_tick(1_000));
    // The largest count of 1 ns ticks in u64 ps, and one more.
    let most = u64::MAX / 1_000;
    let p = parse_str("t.goal", &one_rank(&format!("calc {most}"))).unwrap();
    assert_eq!(p.op(0, 0), Op::calc(most * 1_000));
    insta::assert_snapshot!(
        "calc_ticks_overflow",
        err(&one_rank(&format!("l1: calc 5\nl2: calc {}", most + 1)))
    );
    let us = ParseOptions::with_tick(1_000_000);
    let e = parse_str_with("t.goal", &one_rank("calc 18446744073710"), &us).unwrap_err();
    assert!(matches!(&e, GoalError::Unit { loc, .. } if loc.line == 3 && loc.column == 6));
    insta::assert_snapshot!("calc_ticks_overflow_us", e.to_string());
}

#[test]
fn layout_freedom() {
    let text = "\u{feff}// header\n  num_ranks 2 /* two */ rank 0 {   a: send 8b to 1 tag -1 // any tag\n\
                \t b: recv 8b from -1 tag 4 cpu 1 nic 2\n  /* a\n  multi-line\n  comment */ c: calc 5\n\
                c requires a\n\tc irequires b\r\n} rank 1 {\nrecv 8b from 0\n}\ntrailing junk ignored";
    let parsed = parse_str_with("t.goal", text, &ParseOptions::ticks_as_is()).unwrap();
    assert_same(
        &parsed.program,
        &program(&[
            (
                &[
                    Op::send(8, 1, ANY),
                    Op::recv(8, ANY, 4).on_cpu(1).on_nic(2),
                    Op::calc(5),
                ],
                &[(2, 0, Done), (2, 1, Start)],
            ),
            (&[Op::recv(8, 0, 0)], &[]),
        ]),
    );
    assert_eq!(parsed.warnings.len(), 1);
    insta::assert_snapshot!("trailing_warning", parsed.warnings[0].to_string());
    let d = |r, i| describe_op_in("t.goal", text.as_bytes(), r, i).unwrap();
    assert_eq!(
        d(0, 0),
        Some(OpDescription {
            label: Some("a".into()),
            line: 2
        })
    );
    assert_eq!(
        d(0, 1),
        Some(OpDescription {
            label: Some("b".into()),
            line: 3
        })
    );
    assert_eq!(
        d(0, 2),
        Some(OpDescription {
            label: Some("c".into()),
            line: 6
        })
    );
    assert_eq!(
        d(1, 0),
        Some(OpDescription {
            label: None,
            line: 10
        })
    );
    assert_eq!(d(1, 1), None);
    assert_eq!(d(0, 2).unwrap().to_string(), "c (line 6)");
    assert_eq!(d(1, 0).unwrap().to_string(), "op on line 10");
    // An error before the op is reached is reported; one after it is not.
    assert!(describe_op_in(
        "t.goal",
        "num_ranks 1\nrank 0 {\nfoo\ncalc 1\n}\n".as_bytes(),
        0,
        0
    )
    .is_err());
    assert!(describe_op_in(
        "t.goal",
        "num_ranks 1\nrank 0 {\ncalc 1\nfoo\n}\n".as_bytes(),
        0,
        0
    )
    .unwrap()
    .is_some());
}

#[test]
fn duplicate_labels_are_counted() {
    let body: String =
        (0..5).map(|i| format!("x: calc {i}\n")).collect::<String>() + "y: calc 9\ny requires x";
    let opts = ParseOptions {
        max_warnings: 2,
        ..ParseOptions::default()
    };
    let parsed = parse_str_with("t.goal", &one_rank(&body), &opts).unwrap();
    assert_eq!(parsed.duplicate_labels, 4);
    assert_eq!(parsed.warnings.len(), 2);
    let mut deps = Vec::new();
    parsed
        .program
        .for_each_dependent(0, 0, Done, |d| deps.push(d));
    assert_eq!(deps, [5]);
    assert_eq!(
        describe_op_in("t.goal", one_rank(&body).as_bytes(), 0, 3).unwrap(),
        Some(OpDescription {
            label: Some("x".into()),
            line: 6
        })
    );
    // Labels are scoped per rank block.
    let text =
        "num_ranks 2\nrank 0 {\nx: calc 1\n}\nrank 1 {\nx: calc 2\ny: calc 3\ny requires x\n}\n";
    assert!(parse_str_with("t.goal", text, &opts)
        .unwrap()
        .warnings
        .is_empty());
}

#[test]
fn large_dependency_counts() {
    let mut body = String::from("sink: calc 1\n");
    for i in 0..300 {
        body += &format!("s{i}: calc 1\nsink irequires s{i}\n");
    }
    let p = parse_str("t.goal", &one_rank(&body)).unwrap();
    assert_eq!(p.depcount(0, 0), 300);
    assert_eq!(p.num_roots(0), 300);
}

#[test]
fn error_messages() {
    let cases: &[(&str, String)] = &[
        ("size_overflow", one_rank("send 18446744073709551616b to 1")),
        ("size_unit_overflow", one_rank("send 16777216TiB to 1")),
        ("size_missing_unit", one_rank("send 16 to 1")),
        ("size_not_whole", one_rank("send 1.5b to 1")),
        ("size_missing", one_rank("send to 1")),
        ("missing_to", one_rank("send 8b from 1")),
        (
            "rank_overflow",
            "num_ranks 2\nrank 4294967296 {\n}\n".into(),
        ),
        ("num_ranks_zero", "num_ranks 0\n".into()),
        ("num_ranks_twice", "num_ranks 2\nnum_ranks 2\n".into()),
        ("tag_overflow", one_rank("send 8b to 1 tag 4294967295")),
        ("cpu_overflow", one_rank("calc 5 cpu 255")),
        ("nic_overflow", one_rank("recv 8b from 1 nic 300")),
        ("peer_out_of_range", one_rank("recv 8b from 2")),
        ("recv_from_minus_two", one_rank("recv 8b from -2")),
        ("calc_fraction", one_rank("calc 1.5")),
        ("calc_unknown_unit", one_rank("calc 2.5parsec")),
        ("calc_overflow", one_rank("calc 99999999999999999999")),
        ("calc_too_long", one_rank("calc 18446745s")),
        ("calc_tag", one_rank("calc 5 tag 1")),
        (
            "cycle",
            one_rank("a: calc 1\nb: calc 2\nc: calc 3\nc requires b\nb requires a\na irequires c"),
        ),
        ("self_dependency", one_rank("a: calc 1\na requires a")),
        ("unterminated_comment", one_rank("calc 1\n/* open\ncalc 2")),
        (
            "unterminated_block",
            "num_ranks 1\nrank 0 {\ncalc 1\n".into(),
        ),
        ("unknown_keyword", one_rank("sned 8b to 1")),
        ("label_without_op", one_rank("a: sned 8b to 1")),
        ("label_then_eol", one_rank("a:")),
        (
            "dependency_extra",
            one_rank("a: calc 1\nb: calc 1\nb requires a c"),
        ),
        ("dependency_no_label", one_rank("a: calc 1\na requires 5")),
        (
            "undefined_second_label",
            one_rank("a: calc 1\na requires zz"),
        ),
        ("close_outside", "num_ranks 1\n}\n".into()),
        ("op_outside", "num_ranks 1\ncalc 5\nrank 0 {\n}\n".into()),
        ("dep_outside", "num_ranks 1\na requires b\n".into()),
        ("rank_in_rank", "num_ranks 2\nrank 0 {\nrank 1 {\n".into()),
        ("rank_out_of_range", "num_ranks 2\nrank 5 {\n}\n".into()),
        ("missing_brace", "num_ranks 1\nrank 0\n".into()),
        ("missing_ranks", "num_ranks 4\nrank 0 {\n}\n".into()),
        ("empty_file", String::new()),
        (
            "num_ranks_in_block",
            "num_ranks 1\nrank 0 {\nnum_ranks 1\n}\n".into(),
        ),
        ("stray_character", one_rank("calc 1\n#include")),
        ("tab_caret", one_rank("\tsend\t8b\tto\t1\ttag\tx")),
        ("unicode_caret", one_rank("/* µ */ send 8b to 1 täg 2")),
        ("kb_lowercase", one_rank("send 4kb to 1")),
    ];
    for (name, text) in cases {
        insta::assert_snapshot!(*name, err(text));
    }
}

#[test]
fn error_kinds() {
    let e = parse_str("t.goal", &one_rank("a: calc 1\na requires a")).unwrap_err();
    assert!(
        matches!(e, GoalError::Cycle { rank: 0, ref steps, .. } if steps.len() == 1 && steps[0].line == 4)
    );
    let e = parse_str("t.goal", &one_rank("send 8b to 7")).unwrap_err();
    assert!(
        matches!(e, GoalError::PeerOutOfRange { peer: 7, num_ranks: 2, ref loc } if loc.line == 3 && loc.column == 12)
    );
    assert!(matches!(
        parse_str("t.goal", "").unwrap_err(),
        GoalError::NoNumRanks { .. }
    ));
}

#[test]
fn io_error() {
    let e = loggops_goal::parse_file("/nonexistent/x.goal").unwrap_err();
    assert!(matches!(e, GoalError::Io { .. }));
    assert!(e.to_string().starts_with("/nonexistent/x.goal: "), "{e}");
    assert!(loggops_goal::describe_op("/nonexistent/x.goal", 0, 0).is_err());
}

/// A very long line (a generated file, binary junk read as text) is shown as a window around
/// the error's column, not whole.
#[test]
fn long_lines_are_cut_around_the_column() {
    let label = "x".repeat(3000);
    let e = err(&one_rank(&format!(
        "{label}: calc 5 bogus\n{label}: calc 6"
    )));
    assert!(e.lines().all(|l| l.chars().count() < 140), "{e}");
    insta::assert_snapshot!("long_line", e);
}
