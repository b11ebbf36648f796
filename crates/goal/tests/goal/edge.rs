//! Every parser edge case of `txt2bin_edge/`: accepted files give txt2bin's program, files that
//! only fail because of txt2bin's whitespace bug give the intended program, real errors are
//! snapshotted.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use loggops_engine::{DepKind::Done, Op, Program, ANY};
use loggops_goal::{
    describe_op, parse_reader_with, GoalWarning, OpDescription, ParseOptions, Parsed,
};

use crate::common::{assert_same, files, program, shared};

/// Files txt2bin converts (rc=0).
const UPSTREAM_OK: &[&str] = &[
    "crlf",
    "dup_label",
    "emptyall",
    "label_kw",
    "nic_only",
    "nonewline_end",
    "ol10",
    "ol11",
    "ol3",
    "ol6",
    "ol7",
    "sendtag_any",
    "size_mismatch",
    "sp_b",
    "zero_size",
];
/// Files txt2bin rejects or mangles only because of its state-0 whitespace bug.
const WHITESPACE_BUG: &[&str] = &[
    "ol2",
    "ol4",
    "ol5",
    "ol12",
    "ol13",
    "comment_top",
    "ol8",
    "oneline",
];
/// Files txt2bin rejects that our extensions accept (`16B`, comments after an op).
const EXTENSION: &[&str] = &["upperB", "trailcomment"];
/// Files that are errors for both.
const ERRORS: &[&str] = &[
    "KB",
    "calcnic",
    "fwdref",
    "missingrank",
    "nonumranks",
    "numranks_after",
    "ol9",
    "order_tag_cpu",
    "outoforder",
    "send_to_any",
];

/// Parses with LogGOPSim's unit-less ticks, so programs compare with txt2bin's numbers.
fn parse(dir: &Path, name: &str) -> Result<Parsed, loggops_goal::GoalError> {
    let file = format!("{name}.goal");
    let f = File::open(dir.join(&file)).unwrap();
    parse_reader_with(&file, BufReader::new(f), &ParseOptions::ticks_as_is())
}

fn parse_ticks(name: &str, text: &str) -> Result<Parsed, loggops_goal::GoalError> {
    loggops_goal::parse_str_with(name, text, &ParseOptions::ticks_as_is())
}

fn ok(dir: &Path, name: &str) -> Parsed {
    parse(dir, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_edge_case_is_covered() {
    let Some(dir) = shared("txt2bin_edge") else {
        return;
    };
    let known: Vec<&str> = [UPSTREAM_OK, WHITESPACE_BUG, EXTENSION, ERRORS].concat();
    for f in files(&dir, "goal") {
        let stem = f.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(known.contains(&stem.as_str()), "{stem}.goal has no test");
        let upstream_rc0 = std::fs::read_to_string(dir.join(format!("{stem}.txt2bin.out")))
            .unwrap()
            .contains("rc=0");
        assert_eq!(
            upstream_rc0,
            UPSTREAM_OK.contains(&stem.as_str()),
            "{stem}: txt2bin outcome"
        );
        assert_eq!(
            parse(&dir, &stem).is_ok(),
            !ERRORS.contains(&stem.as_str()),
            "{stem}: our outcome"
        );
    }
}

fn calc5() -> loggops_goal::ExplicitProgram {
    program(&[(&[Op::calc(5)], &[])])
}

fn ping(size: u64) -> loggops_goal::ExplicitProgram {
    program(&[
        (&[Op::send(size, 1, 0)], &[]),
        (&[Op::recv(size, 0, 0)], &[]),
    ])
}

#[test]
fn upstream_accepted() {
    let Some(dir) = shared("txt2bin_edge") else {
        return;
    };
    for name in ["crlf", "nonewline_end", "ol3", "ol11", "ol6", "ol7"] {
        let p = ok(&dir, name);
        assert_same(&p.program, &calc5());
        assert!(p.warnings.is_empty(), "{name}: {:?}", p.warnings);
    }
    let dup = ok(&dir, "dup_label");
    assert_same(
        &dup.program,
        &program(&[(&[Op::calc(5), Op::calc(7), Op::calc(1)], &[(2, 0, Done)])]),
    );
    assert_eq!(dup.duplicate_labels, 1);
    assert_eq!(dup.warnings.len(), 1);
    insta::assert_snapshot!("dup_label_warning", dup.warnings[0].to_string());

    assert_same(
        &ok(&dir, "emptyall").program,
        &program(&[(&[], &[]), (&[], &[])]),
    );
    assert_same(
        &ok(&dir, "label_kw").program,
        &program(&[(&[Op::calc(5), Op::calc(1)], &[(1, 0, Done)])]),
    );

    let nic = ok(&dir, "nic_only").program;
    assert_same(
        &nic,
        &program(&[
            (&[Op::send(8, 1, 0).on_nic(1)], &[]),
            (&[Op::recv(8, 0, 0).on_nic(1)], &[]),
        ]),
    );
    assert_eq!((nic.num_cpus(), nic.num_nics()), (1, 2)); // "(1 CPUs, 2 NICs)" in nic_only.sim.out

    // ol10: "} rank 1 {" after the last block of a 1-rank file is never read.
    let ol10 = ok(&dir, "ol10");
    assert_same(&ol10.program, &calc5());
    assert!(
        matches!(&ol10.warnings[..], [GoalWarning::TrailingText { loc, num_ranks: 1 }] if loc.line == 4 && loc.column == 3)
    );
    insta::assert_snapshot!("ol10_warning", ol10.warnings[0].to_string());

    assert_same(
        &ok(&dir, "sendtag_any").program,
        &program(&[(&[Op::send(8, 1, ANY)], &[]), (&[Op::recv(8, 0, 5)], &[])]),
    );
    assert_same(
        &ok(&dir, "size_mismatch").program,
        &program(&[
            (&[Op::send(100000, 1, 0), Op::calc(1)], &[(1, 0, Done)]),
            (&[Op::calc(50000), Op::recv(16, 0, 0)], &[(1, 0, Done)]),
        ]),
    );
    assert_same(&ok(&dir, "sp_b").program, &ping(16));
    assert_same(&ok(&dir, "zero_size").program, &ping(0));
}

#[test]
fn ol7_defines_label_ab_not_b() {
    let Some(dir) = shared("txt2bin_edge") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("ol7.goal")).unwrap();
    assert!(parse_ticks("ol7.goal", &text).is_ok());
    // The label is "ab" (txt2bin's lexer bug would define "b").
    assert_eq!(
        describe_op(dir.join("ol7.goal"), 0, 0).unwrap(),
        Some(OpDescription {
            label: Some("ab".to_string()),
            line: 2
        })
    );
    let with_dep = text.replace("}\n", "c: calc 1\nc requires ab\n}\n");
    let p = parse_ticks("ol7.goal", &with_dep).unwrap().program;
    assert_same(
        &p,
        &program(&[(&[Op::calc(5), Op::calc(1)], &[(1, 0, Done)])]),
    );
    let err = parse_ticks(
        "ol7.goal",
        &text.replace("}\n", "c: calc 1\nc requires b\n}\n"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("ol7.goal:4:12: error: undefined label \"b\""),
        "{err}"
    );
}

#[test]
fn whitespace_bug_cases_parse_as_intended() {
    let Some(dir) = shared("txt2bin_edge") else {
        return;
    };
    for name in ["ol2", "ol4", "ol5", "ol12", "ol13", "comment_top", "ol8"] {
        let p = ok(&dir, name);
        assert_same(&p.program, &calc5());
        assert!(p.warnings.is_empty(), "{name}: {:?}", p.warnings);
    }
    assert_eq!(
        describe_op(dir.join("ol4.goal"), 0, 0).unwrap(),
        Some(OpDescription {
            label: Some("a".into()),
            line: 2
        })
    );
    assert_eq!(
        describe_op(dir.join("ol5.goal"), 0, 0).unwrap(),
        Some(OpDescription {
            label: Some("a".into()),
            line: 3
        })
    );
    assert_eq!(
        describe_op(dir.join("ol13.goal"), 0, 0).unwrap(),
        Some(OpDescription {
            label: Some("l1".into()),
            line: 3
        })
    );
    assert_eq!(
        describe_op(dir.join("comment_top.goal"), 0, 0).unwrap(),
        Some(OpDescription {
            label: None,
            line: 5
        })
    );
    let one = ok(&dir, "oneline");
    assert_same(&one.program, &ping(8));
    assert_eq!(
        describe_op(dir.join("oneline.goal"), 1, 0).unwrap(),
        Some(OpDescription {
            label: None,
            line: 4
        })
    );
    assert_eq!(describe_op(dir.join("oneline.goal"), 1, 1).unwrap(), None);
}

#[test]
fn extensions() {
    let Some(dir) = shared("txt2bin_edge") else {
        return;
    };
    assert_same(&ok(&dir, "upperB").program, &ping(16));
    assert_same(&ok(&dir, "trailcomment").program, &ping(8));
}

#[test]
fn errors_snapshots() {
    let Some(dir) = shared("txt2bin_edge") else {
        return;
    };
    for name in ERRORS {
        let err = parse(&dir, name).unwrap_err();
        insta::assert_snapshot!(format!("edge_{name}"), err.to_string());
    }
}
