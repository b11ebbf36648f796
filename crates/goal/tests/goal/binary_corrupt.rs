//! Hand-made and corrupted binary GOAL files: clear errors, never a panic.

use std::io::Cursor;

use loggops_engine::{DepKind, Op, Program};
use loggops_goal::{parse_str, read_binary_from, write_binary, GoalError, ProgramBuilder};

use crate::common::assert_same;

/// micro/m6_irequires.goal
const M6: &str =
    "num_ranks 2\nrank 0 {\na: calc 5000\nb: send 8b to 1 tag 1 cpu 0 nic 0\nb irequires a\n}\n\
                  rank 1 {\nx: recv 8b from 0 tag 1\ny: calc 100 cpu 1\ny requires x\n}\n";

// Layout of M6's binary: header 14 + jumptable 32 bytes; rank 0 at 46: n, nroots, root[0],
// node 0 at 58, node 1 at 97, appendix at 136..140; rank 1 from 140.
const NODE0: usize = 58;
const NODE1: usize = 97;
const APPENDIX0: usize = 136;

fn m6_bin() -> Vec<u8> {
    let mut v = Vec::new();
    write_binary(&parse_str("m6.goal", M6).unwrap(), &mut v).unwrap();
    v
}

fn read(bytes: Vec<u8>) -> Result<loggops_goal::ExplicitProgram, GoalError> {
    read_binary_from("m6.bin", Cursor::new(bytes))
}

fn err_with(patch: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut b = m6_bin();
    patch(&mut b);
    read(b).unwrap_err().to_string()
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn layout_assumptions() {
    let b = m6_bin();
    assert_eq!(b.len(), 140 + 8 + 4 + 2 * 39 + 4);
    assert_eq!(u64::from_le_bytes(b[0..8].try_into().unwrap()), 4223);
    assert_eq!(b[12..14], [1, 0]); // max_cpu 1, max_nic 0
    assert_eq!(u64::from_le_bytes(b[14..22].try_into().unwrap()), 38); // start of rank 0, relative to byte 8
    assert_eq!(b[NODE1 + 4], 1); // send
    assert_eq!(
        u32::from_le_bytes(b[APPENDIX0..APPENDIX0 + 4].try_into().unwrap()),
        1
    );
    assert_same(&read(b).unwrap(), &parse_str("m6.goal", M6).unwrap());
}

#[test]
fn corrupt_files() {
    let cases: Vec<(&str, String)> = vec![
        ("bad_magic", err_with(|b| b[0] = 7)),
        (
            "invalidated",
            err_with(|b| b[0..8].copy_from_slice(&2342u64.to_le_bytes())),
        ),
        (
            "text_file",
            read(M6.as_bytes().to_vec()).unwrap_err().to_string(),
        ),
        ("empty", read(Vec::new()).unwrap_err().to_string()),
        ("truncated_node", err_with(|b| b.truncate(120))),
        ("huge_num_ranks", err_with(|b| put32(b, 8, 1 << 30))),
        (
            "jumptable_out_of_range",
            err_with(|b| b[30..38].copy_from_slice(&10_000u64.to_le_bytes())),
        ),
        ("too_many_nodes", err_with(|b| put32(b, 46, 1000))),
        ("bad_type", err_with(|b| b[NODE1 + 4] = 7)),
        ("peer_out_of_range", err_with(|b| put32(b, NODE1 + 5, 2))),
        ("send_to_any", err_with(|b| put32(b, NODE1 + 5, u32::MAX))),
        ("cpu_above_header", err_with(|b| b[NODE0 + 21] = 2)),
        (
            "dependent_out_of_range",
            err_with(|b| put32(b, APPENDIX0, 5)),
        ),
        (
            "deps_beyond_appendix",
            err_with(|b| put32(b, NODE0 + 31, 5)),
        ),
        ("wrong_depcount", err_with(|b| put32(b, NODE0, 1))),
        ("wrong_roots", err_with(|b| put32(b, 54, 1))),
        ("max_cpu_255", err_with(|b| b[12] = 255)),
        (
            "appendix_not_words",
            err_with(|b| {
                b.push(0);
                b[38..46].copy_from_slice(&(140u64 - 8 + 8 + 4 + 78 + 4 + 1).to_le_bytes())
            }),
        ),
    ];
    for (name, msg) in cases {
        insta::assert_snapshot!(format!("bin_{name}"), msg);
    }
}

#[test]
fn binary_cycle() {
    // One rank, two calcs requiring each other (depcounts and roots consistent).
    let mut b = Vec::new();
    b.extend_from_slice(&4223u64.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&[0, 0]);
    let start = 6 + 16u64;
    let len = 8 + 2 * 39 + 2 * 4;
    b.extend_from_slice(&start.to_le_bytes());
    b.extend_from_slice(&(start + len).to_le_bytes());
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    for (i, other) in [(0u32, 1u32), (1, 0)] {
        b.extend_from_slice(&1u32.to_le_bytes()); // depcnt
        b.push(3);
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&5u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&1u32.to_le_bytes()); // n_deps
        b.extend_from_slice(&i.to_le_bytes()); // deps_idx
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(i + 1).to_le_bytes());
        let _ = other;
    }
    b.extend_from_slice(&1u32.to_le_bytes()); // op 0's dependent: 1
    b.extend_from_slice(&0u32.to_le_bytes()); // op 1's dependent: 0
    let e = read_binary_from("cycle.bin", Cursor::new(b)).unwrap_err();
    assert!(matches!(e, GoalError::BinaryCycle { .. }));
    insta::assert_snapshot!("bin_cycle", e.to_string());
}

/// A binary calc duration is a count of ticks: 1 ns by default, another tick on request; one
/// that does not fit u64 ps is an error at its offset.
#[test]
fn calc_durations_are_ticks() {
    let bin = m6_bin();
    assert_eq!(
        u64::from_le_bytes(bin[NODE0 + 9..NODE0 + 17].try_into().unwrap()),
        5000
    );
    let p = read(bin.clone()).unwrap();
    assert_eq!(p.op(0, 0), Op::calc(5_000_000));
    let ps = loggops_goal::ParseOptions::with_tick(1);
    let p = loggops_goal::read_binary_from_with("m6.bin", Cursor::new(bin.clone()), &ps).unwrap();
    assert_eq!(p.op(0, 0), Op::calc(5000));
    let mut big = bin;
    big[NODE0 + 9..NODE0 + 17].copy_from_slice(&(u64::MAX / 1000 + 1).to_le_bytes());
    let e = read(big).unwrap_err();
    assert!(matches!(e, GoalError::Binary { offset, .. } if offset == (NODE0 + 9) as u64));
    insta::assert_snapshot!("bin_calc_ticks_overflow", e.to_string());
}

#[test]
fn calc_peer_and_tag_are_ignored() {
    let mut b = m6_bin();
    put32(&mut b, NODE0 + 5, 9); // peer of the calc
    put32(&mut b, NODE0 + 17, 9); // tag of the calc
    assert_same(&read(b).unwrap(), &parse_str("m6.goal", M6).unwrap());
}

#[test]
fn any_truncation_or_byte_flip_is_an_error_not_a_panic() {
    let good = m6_bin();
    for len in 0..good.len() {
        assert!(
            read(good[..len].to_vec()).is_err(),
            "truncated to {len} bytes"
        );
    }
    for at in 0..good.len() {
        for v in [0u8, 1, 2, 0x7f, 0xff, good[at] ^ 0x80] {
            let mut b = good.clone();
            b[at] = v;
            let _ = read(b);
        }
    }
}

#[test]
fn big_depcounts_and_ranks_roundtrip() {
    let mut b = ProgramBuilder::new(3);
    for r in 0..3 {
        b.start_rank(r);
        let sink = b.add_op(
            Op::recv(1 << 40, loggops_engine::ANY, loggops_engine::ANY)
                .on_cpu(3)
                .on_nic(2),
        );
        for i in 0..400 {
            let c = b.add_op(Op::calc(i * 1_000));
            b.add_dep(
                sink,
                c,
                if i % 2 == 0 {
                    DepKind::Done
                } else {
                    DepKind::Start
                },
            );
        }
        b.end_rank().unwrap();
    }
    let p = b.finish();
    let mut bin = Vec::new();
    write_binary(&p, &mut bin).unwrap();
    let back = read(bin).unwrap();
    assert_same(&back, &p);
    assert_eq!(back.depcount(2, 0), 400);
    assert_eq!((back.num_cpus(), back.num_nics()), (4, 3));
}

/// A ring whose ranks repeat the previous rank's section with every peer shifted by one are
/// shared; a rank whose bytes differ only where the reader ignores them (a calc's peer and
/// tag) or whose peers are not shifted alike is parsed, and shared only if it is the same
/// program as an earlier rank.
#[test]
fn repeated_sections_share_ranks_exactly() {
    let p = 6;
    let mut b = ProgramBuilder::new(p);
    for r in 0..p {
        b.start_rank(r);
        let c = b.add_op(Op::calc(10_000)); // 10 ns: whole ticks
                                            // Rank 4 sends two ranks on: not the same rank data as its neighbours.
        let hop = if r == 4 { 2 } else { 1 };
        let s = b.add_op(Op::send(8, (r + hop) % p, 3));
        let v = b.add_op(Op::recv(8, (r + p - 1) % p, 3));
        b.add_dep(s, c, DepKind::Done);
        b.add_dep(v, c, DepKind::Start);
        b.end_rank().unwrap();
    }
    let want = b.finish();
    assert_eq!(want.num_distinct_ranks(), 2);
    let mut bin = Vec::new();
    write_binary(&want, &mut bin).unwrap();
    // Rank 2's calc gets a peer and a tag (bytes the reader ignores): its section no longer
    // repeats rank 1's, but it is the same rank.
    let sec2 = 8 + u64::from_le_bytes(bin[14 + 32..22 + 32].try_into().unwrap()) as usize;
    let calc = sec2 + 8 + 4; // after n, nroots and the one root
    assert_eq!(bin[calc + 4], 3);
    put32(&mut bin, calc + 5, 1);
    put32(&mut bin, calc + 17, 9);
    let got = read(bin).unwrap();
    assert_same(&got, &want);
    assert_eq!(got.num_distinct_ranks(), 2);
    assert_eq!(got.op(5, 1), Op::send(8, 0, 3));
    assert_eq!(got.op(4, 1), Op::send(8, 0, 3));
    assert_eq!(got.op(0, 2), Op::recv(8, 5, 3));
}
