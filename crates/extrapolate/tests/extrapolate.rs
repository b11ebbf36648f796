//! Extrapolation of real traces (LULESH, NPB FT and IS, tests/data/README.md), leave one out;
//! replication against Schedgen's own `--traces-extr`; decoding; and the refusals users see
//! (insta snapshots).

use std::path::{Path, PathBuf};

use loggops_engine::{simulate, Config, NoNoise, Op, Params, Program};
use loggops_extrapolate::trace::{Call, CallKind, Peer, RankCalls};
use loggops_extrapolate::{extrapolate, instantiate, program_of, replicate, Options};
use loggops_schedgen::check::first_difference;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn opts(nodes: u32, compare: &[&str]) -> Options {
    Options {
        nodes: Some(nodes),
        tick_ps: 1, // calc numbers as ps: communication-bound times
        compare: compare.iter().map(|c| data(c)).collect(),
        ..Options::default()
    }
}

fn time<P: Program>(p: &P) -> u64 {
    let out = simulate(
        p,
        &Config::new(Params::loggopsim_defaults_ps()),
        &mut NoNoise,
    )
    .unwrap();
    assert!(out.leftovers.is_empty());
    out.max().0
}

/// The report without the file names' directories.
fn render(r: &loggops_extrapolate::Report) -> String {
    r.render()
}

#[test]
fn lulesh_from_8_and_27_ranks_predicts_64() {
    let inputs = [data("lulesh_p8.goal.xz"), data("lulesh_p27.goal.xz")];
    let x = extrapolate(&inputs, &opts(64, &["lulesh_p64.goal.xz"]), &mut |_| {}).unwrap();
    let left_out = x.report.rows.iter().find(|r| !r.input).unwrap();
    let s = left_out.schedule.unwrap();
    // messages and bytes exact, communication alone exact, ps-calc time within 10 %
    assert_eq!(s.messages, left_out.trace.messages);
    assert_eq!(s.bytes, left_out.trace.bytes);
    assert_eq!(s.comm_time, left_out.trace.comm_time);
    let (a, b) = (left_out.trace.time.unwrap() as f64, s.time.unwrap() as f64);
    assert!((b - a).abs() / a < 0.10, "{a} vs {b}");
    assert!(x
        .schedule
        .contains("grid root(P, 3), root(P, 3), root(P, 3)"));
    assert!(x.schedule.contains("repeat 19 {"));
    insta::assert_snapshot!("lulesh_report", render(&x.report));
    let head: String = x
        .schedule
        .lines()
        .filter(|l| !l.starts_with("#   "))
        .take(30)
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("lulesh_schedule_head", head);
    // the schedule runs at any cube, the rank count it was asked about included
    for p in [8u32, 64, 125] {
        let sched = instantiate(&x.schedule, p).unwrap();
        loggops_schedgen::check::validate(&sched).unwrap();
        time(&sched);
    }
}

#[test]
fn npb_ft_and_is_from_4_8_16_ranks_predict_32() {
    for app in ["ft", "is"] {
        let inputs: Vec<PathBuf> = [4, 8, 16]
            .iter()
            .map(|p| data(&format!("npb_{app}_S_p{p}.goal.xz")))
            .collect();
        let cmp = format!("npb_{app}_S_p32.goal.xz");
        let x = extrapolate(&inputs, &opts(32, &[&cmp]), &mut |_| {}).unwrap();
        let row = x.report.rows.iter().find(|r| !r.input).unwrap();
        let s = row.schedule.unwrap();
        assert_eq!(s.messages, row.trace.messages, "{app}");
        assert_eq!(s.bytes, row.trace.bytes, "{app}");
        assert_eq!(s.comm_time, row.trace.comm_time, "{app}");
        // the time with the traces' calc read as ps within 10 % of the left-out trace's
        let (a, b) = (row.trace.time.unwrap() as f64, s.time.unwrap() as f64);
        assert!((b - a).abs() / a < 0.10, "{app}: {a} vs {b}");
        insta::assert_snapshot!(format!("npb_{app}_report"), render(&x.report));
    }
}

#[test]
fn replication_is_schedgen_traces_extr() {
    // IS: no wait on an already completed request, so the programs are equal op for op
    let mine = replicate(&data("npb_is_S_p4.goal.xz"), 12, 1000).unwrap();
    let theirs =
        loggops_extrapolate::trace::load(&data("npb_is_S_p4.traces-extr3.goal.xz"), 1000).unwrap();
    assert_eq!(first_difference(&mine, &theirs.program), None);
    // LULESH: Schedgen's MPI_Waitall also requires requests completed before (dropped when
    // decoding): equal to Schedgen's file decoded, and the same noiseless time as the file
    let mine = replicate(&data("lulesh_p8.goal.xz"), 16, 1000).unwrap();
    let theirs =
        loggops_extrapolate::trace::load(&data("lulesh_p8.traces-extr2.goal.xz"), 1000).unwrap();
    assert_eq!(
        first_difference(&mine, &program_of(&theirs.ranks).unwrap()),
        None
    );
    assert_eq!(time(&mine), time(&theirs.program));
    insta::assert_snapshot!(
        "replicate_not_a_multiple",
        replicate(&data("lulesh_p8.goal.xz"), 20, 1000)
            .unwrap_err()
            .to_string()
    );
}

#[test]
fn decoding_gives_back_the_trace() {
    for f in [
        "npb_ft_S_p8.goal.xz",
        "npb_is_S_p16.goal.xz",
        "lulesh_p27.goal.xz",
    ] {
        let t = loggops_extrapolate::trace::load(&data(f), 1000).unwrap();
        let back = program_of(&t.ranks).unwrap();
        if f.starts_with("npb") {
            assert_eq!(first_difference(&back, &t.program), None, "{f}");
        }
        // dropping waits on completed requests changes no time
        assert_eq!(time(&back), time(&t.program), "{f}");
    }
}

// ---------------------------------------------------------------------------------------
// Refusals, on small synthetic traces in Schedgen's shape

fn p2p(send: bool, nb: bool, peer: u32, size: u64) -> CallKind {
    CallKind::P2p {
        send,
        nb,
        peer: Peer::Rank(peer),
        size,
        tag: 7,
    }
}

fn calls(kinds: Vec<CallKind>) -> RankCalls {
    RankCalls {
        calls: kinds
            .into_iter()
            .map(|kind| Call {
                gap: 1_000_000,
                kind,
                op: 0,
            })
            .collect(),
        trailing: Some(2_000_000),
    }
}

/// A ring exchange on every rank (send right, receive left), nonblocking, then `extra` calls.
fn ring(p: u32, extra: &dyn Fn(u32) -> Vec<CallKind>) -> Vec<RankCalls> {
    (0..p)
        .map(|r| {
            let mut k = vec![
                p2p(false, true, (r + p - 1) % p, 64),
                p2p(true, true, (r + 1) % p, 64),
                CallKind::Wait {
                    reqs: vec![0, 1],
                    all: true,
                },
            ];
            k.extend(extra(r));
            calls(k)
        })
        .collect()
}

fn write(dir: &Path, name: &str, ranks: &[RankCalls]) -> PathBuf {
    let prog = program_of(ranks).unwrap();
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    loggops_goal::write_goal(&prog, &mut f).unwrap();
    path
}

fn refusal(dir: &Path, traces: &[(&str, Vec<RankCalls>)], nodes: Option<u32>) -> String {
    let paths: Vec<PathBuf> = traces.iter().map(|(n, r)| write(dir, n, r)).collect();
    let o = Options {
        nodes,
        ..Options::default()
    };
    let e = extrapolate(&paths, &o, &mut |_| {})
        .unwrap_err()
        .to_string();
    e.replace(&dir.display().to_string(), "DIR")
}

#[test]
fn a_ring_extrapolates_to_any_size() {
    let dir = tempfile::tempdir().unwrap();
    let none = |_| Vec::new();
    let paths = [
        write(dir.path(), "ring4.goal", &ring(4, &none)),
        write(dir.path(), "ring6.goal", &ring(6, &none)),
    ];
    let x = extrapolate(&paths, &Options::default(), &mut |_| {}).unwrap();
    let body: String = x
        .schedule
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("ring_schedule", body);
    let s = instantiate(&x.schedule, 1000).unwrap();
    assert_eq!(s.op(0, 0), Op::recv(64, 999, 7));
    assert_eq!(s.op(999, 2), Op::send(64, 0, 7));
}

#[test]
fn refusals_name_the_rank_op_and_scale_and_what_would_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let none = |_| Vec::new();
    // one trace
    let one = [write(d, "one.goal", &ring(4, &none))];
    insta::assert_snapshot!(
        "only_one_trace",
        extrapolate(&one, &Options::default(), &mut |_| {})
            .unwrap_err()
            .to_string()
    );
    // a rank that makes a call the others do not
    let extra = |r: u32| {
        if r == 3 {
            vec![p2p(true, false, 0, 8)]
        } else {
            Vec::new()
        }
    };
    insta::assert_snapshot!(
        "different_op_sequences",
        refusal(
            d,
            &[("a4.goal", ring(4, &none)), ("a8.goal", ring(8, &extra))],
            None
        )
    );
    // partners that are no fixed offset: r talks to 3r mod P
    let irregular = |p: u32| -> Vec<RankCalls> {
        (0..p)
            .map(|r| {
                calls(vec![
                    p2p(true, true, (3 * r) % p, 8),
                    p2p(false, true, (r * (p - 1) / 3 + p) % p, 8),
                    CallKind::Wait {
                        reqs: vec![0, 1],
                        all: true,
                    },
                ])
            })
            .collect()
    };
    insta::assert_snapshot!(
        "irregular_partners",
        refusal(
            d,
            &[("b4.goal", irregular(4)), ("b8.goal", irregular(8))],
            None
        )
    );
    // a wildcard receive
    let mut wild = ring(4, &none);
    if let CallKind::P2p { peer, .. } = &mut wild[2].calls[0].kind {
        *peer = Peer::Any;
    }
    insta::assert_snapshot!(
        "wildcard_receive",
        refusal(d, &[("c4.goal", wild), ("c8.goal", ring(8, &none))], None)
    );
    // a collective that only some ranks call
    let coll = |p: u32, r: u32| -> Vec<CallKind> {
        if r == 0 && p == 8 {
            return Vec::new();
        }
        let ops: Vec<Op> = loggops_extrapolate::coll::CollPattern::Dissemination
            .ops(p, r, 1)
            .into_iter()
            .map(|mut o| {
                o.tag = 1_000_000;
                o
            })
            .collect();
        let reqs = loggops_extrapolate::coll::CollPattern::Dissemination
            .ops_with_deps(p, r, 1)
            .into_iter()
            .map(|x| x.1)
            .collect();
        vec![CallKind::Coll { ops, reqs }]
    };
    insta::assert_snapshot!(
        "collective_not_on_every_rank",
        refusal(
            d,
            &[
                ("e4.goal", ring(4, &|r| coll(4, r))),
                ("e8.goal", ring(8, &|r| coll(8, r)))
            ],
            None
        )
    );
    // a rank count the grid cannot lay out: a 2-D square stencil asked at 10 ranks
    let square = |p: u32| -> Vec<RankCalls> {
        let n = (p as f64).sqrt() as u32;
        (0..p)
            .map(|r| {
                let (x, y) = (r % n, r / n);
                let right = y * n + (x + 1) % n;
                let down = ((y + 1) % n) * n + x;
                calls(vec![p2p(true, false, right, 8), p2p(true, false, down, 8)])
            })
            .collect()
    };
    // (sends only: extrapolation does not need matching receives)
    insta::assert_snapshot!(
        "grid_cannot_lay_out_nodes",
        refusal(
            d,
            &[("f9.goal", square(9)), ("f16.goal", square(16))],
            Some(10)
        )
    );
    // not Schedgen's trace shape: a generated collective (no computation between calls)
    let g = loggops_schedgen::Generated::new(loggops_schedgen::Collective::Dissemination, 4, 8)
        .unwrap();
    let path = d.join("gen.goal");
    loggops_goal::write_goal(&g, &mut std::fs::File::create(&path).unwrap()).unwrap();
    let e = extrapolate(&[path, d.join("a4.goal")], &Options::default(), &mut |_| {})
        .unwrap_err()
        .to_string()
        .replace(&d.display().to_string(), "DIR");
    insta::assert_snapshot!("not_schedgen_shape", e);
}

#[test]
fn computation_that_grows_with_p_is_reported_at_the_target_size() {
    let inputs: Vec<PathBuf> = [4, 8, 16]
        .iter()
        .map(|p| data(&format!("npb_ft_S_p{p}.goal.xz")))
        .collect();
    let x = extrapolate(&inputs, &opts(256, &[]), &mut |_| {}).unwrap();
    let (n, _, _, at_n) = x.report.target.unwrap();
    assert_eq!(n, 256);
    // FT's last computation grows as P² in the traces (VALIDATION.md): at 256 ranks it alone
    // is 4.93us + 401.3ns · 256² = 26.3ms, far above the 16-rank schedule's 137us per rank
    assert!(at_n > 26.0e9, "{at_n}");
    let text = x.report.render();
    assert!(text.contains(" per rank; simulate it with"), "{text}");
    let note = x
        .report
        .notes
        .iter()
        .find(|n| n.contains("computations grow with P"))
        .expect("a note on the growing computation");
    assert!(
        note.contains("at --nodes 256 the computation per rank is"),
        "{note}"
    );
    assert!(note.contains("--compute weak"), "{note}");
    // stated scaling: nothing grows, no note
    let weak = Options {
        compute: loggops_extrapolate::ComputeMode::Weak,
        ..opts(256, &[])
    };
    let x = extrapolate(&inputs, &weak, &mut |_| {}).unwrap();
    assert!(x.report.notes.iter().all(|n| !n.contains("grow with P")));
}
