//! Behaviour of the command line that users see: messages are pinned with insta snapshots.
use crate::util::{run, run_here, stderr, stdout, write_file};

fn err_of(args: &[&str]) -> String {
    let out = run_here(args);
    assert!(
        !out.status.success(),
        "expected failure: {args:?}\n{}",
        stdout(&out)
    );
    stderr(&out)
}

#[test]
fn missing_goal_is_a_clear_error() {
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out));
}

#[test]
fn zero_nodes() {
    insta::assert_snapshot!(err_of(&["--goal", "goal/ring_512MiB.goal", "--nodes", "0"]));
}

#[test]
fn missing_profile_is_named_once() {
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "4",
        "--noise",
        "no/such/profile.h5",
    ]));
}

#[test]
fn bad_repetition_counts() {
    insta::assert_snapshot!(err_of(&["--goal", "goal/ring_512MiB.goal", "--reps", "0"]));
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--reps",
        "many"
    ]));
}

#[test]
fn parametric_schedule_needs_nodes() {
    insta::assert_snapshot!(err_of(&["--goal", "goal/ring_512MiB.goal"]));
}

#[test]
fn bad_units() {
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "4",
        "-L",
        "3 parsecs"
    ]));
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "4",
        "-S",
        "1.5B"
    ]));
}

#[test]
fn gen_errors() {
    insta::assert_snapshot!(err_of(&[
        "gen",
        "allreduce_tree",
        "--nodes",
        "4",
        "--size",
        "1KiB"
    ]));
    insta::assert_snapshot!(err_of(&[
        "gen",
        "allreduce_recdoub",
        "--nodes",
        "6",
        "--size",
        "1KiB"
    ]));
    insta::assert_snapshot!(err_of(&[
        "gen",
        "dissemination",
        "--nodes",
        "4",
        "--size",
        "0B"
    ]));
    insta::assert_snapshot!(err_of(&[
        "gen",
        "dissemination",
        "--nodes",
        "4",
        "--size",
        "99999999999TiB"
    ]));
}

#[test]
fn explicit_file_errors_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.goal");
    std::fs::write(
        &f,
        "num_ranks 2\nrank 0 {\nsend 16b to 1\nl2 requires l9\n}\nrank 1 {\nrecv 16b from 0\n}\n",
    )
    .unwrap();
    let e = err_of(&["--goal", f.to_str().unwrap()]).replace(dir.path().to_str().unwrap(), "[tmp]");
    insta::assert_snapshot!(e);
    // An explicit file cannot be resized.
    let ok = dir.path().join("ok.goal");
    std::fs::write(
        &ok,
        "num_ranks 2\nrank 0 {\nsend 16b to 1\n}\nrank 1 {\nrecv 16b from 0\n}\n",
    )
    .unwrap();
    let e = err_of(&["--goal", ok.to_str().unwrap(), "--nodes", "4"])
        .replace(dir.path().to_str().unwrap(), "[tmp]");
    insta::assert_snapshot!(e);
}

#[test]
fn unmatched_messages_are_reported_with_labels_and_no_time() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dead.goal");
    std::fs::write(&f, "num_ranks 2\nrank 0 {\nsnd: send 16b to 1 tag 3\nc: calc 5\nc requires snd\n}\nrank 1 {\nrcv: recv 16b from 0 tag 4\n}\n").unwrap();
    let out = run_here(&["--goal", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty(), "no time may be printed");
    insta::assert_snapshot!(stderr(&out).replace(dir.path().to_str().unwrap(), "[tmp]"));
}

#[test]
fn gen_writes_what_the_simulator_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ring.goal");
    let out = run_here(&[
        "gen",
        "allreduce_ring",
        "--nodes",
        "16",
        "--size",
        "16MiB",
        "-o",
        f.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run_here(&["--compat", "loggopsim", "--goal", f.to_str().unwrap(), "-b"]);
    // LOGGOPSIM.md §11: ring 16 MiB, P = 16, default parameters (stable order).
    assert!(
        stdout(&out).contains("Maximum finishing time at host 0: 188908500 ("),
        "{}",
        stdout(&out)
    );
}

#[test]
fn json_output_has_integer_picoseconds() {
    let out = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "1024",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["runs"][0];
    // 10 rounds of 2o + L + 15G with LogGOPSim's defaults read as ns.
    assert_eq!(
        r["max_time_ps"].as_u64(),
        Some(10 * (3_000_000 + 2_500_000 + 15 * 6_000))
    );
    assert_eq!(r["finish_ps"].as_array().unwrap().len(), 1024);
}

#[test]
fn monte_carlo_results_do_not_depend_on_the_thread_count() {
    for reps in ["200", "auto"] {
        thread_count_independent(reps);
    }
}

fn thread_count_independent(reps: &'static str) {
    let args = |t: &'static str| {
        vec![
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "64,256",
            "--noise",
            "calibration/alps.h5",
            "--noise-mode",
            "os,net,os+net",
            "--reps",
            reps,
            "--seed",
            "42",
            "--format",
            "json",
            "-q",
            "--threads",
            t,
        ]
    };
    let one = run_here(&args("1"));
    let two = run_here(&args("2"));
    assert!(one.status.success(), "{}", stderr(&one));
    assert_eq!(stdout(&one), stdout(&two));
    let v: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let cells = v
        .as_array()
        .or_else(|| v["cells"].as_array())
        .expect("a list of cells");
    assert_eq!(cells.len(), 6);
    if reps == "auto" {
        // Every cell stops at a checkpoint: 32, 64, ..., 512 or 1000 repetitions.
        for c in cells {
            let n = c["n"].as_u64().expect("n");
            assert!([32, 64, 128, 256, 512, 1000].contains(&n), "n = {n}");
        }
    }
}

/// `gen` writes calc durations as plain ticks (1 ns by default) that read back to the same
/// durations: the expanded DGEMM + dissemination schedule simulates as the parametric one does.
#[test]
fn gen_writes_calc_in_ticks_that_read_back_to_the_same_durations() {
    let dir = tempfile::tempdir().unwrap();
    let max_time = |args: &[&str]| -> u64 {
        let out = run_here(&[args, &["--format", "json"][..]].concat());
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["runs"][0]["max_time_ps"].as_u64().unwrap()
    };
    let parametric = "goal/dgemm128_dissemination_128KiB.goal";
    let want = max_time(&["--goal", parametric, "--nodes", "4"]);
    for tick in [None, Some("1ps"), Some("1us")] {
        let f = dir.path().join("dgemm.goal");
        let mut gen = vec![
            "gen",
            "--goal",
            parametric,
            "--nodes",
            "4",
            "-o",
            f.to_str().unwrap(),
        ];
        let mut sim = vec!["--goal", f.to_str().unwrap()];
        if let Some(t) = tick {
            gen.extend(["--tick", t]);
            sim.extend(["--tick", t]);
        }
        let out = run_here(&gen);
        if tick == Some("1us") {
            // 18.883 us is not a whole number of microseconds.
            assert!(!out.status.success());
            insta::assert_snapshot!("gen_tick_too_coarse", stderr(&out));
            assert!(!f.exists(), "nothing may be written");
            continue;
        }
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(&f).unwrap();
        let dgemm = if tick.is_none() {
            "calc 18883\n"
        } else {
            "calc 18883000\n"
        };
        assert!(text.contains(dgemm), "{tick:?}: {}", &text[..400]);
        assert_eq!(max_time(&sim), want, "{tick:?}");
        std::fs::remove_file(&f).unwrap();
    }
}

/// Schedgen's nwaydissemination writes `calc <datasize>`: D ticks, whatever the tick.
#[test]
fn gen_nwaydissemination_reduction_calcs_are_d_ticks() {
    for tick in ["1ns", "1ps"] {
        let out = run_here(&[
            "gen",
            "nwaydissemination",
            "--nodes",
            "4",
            "--size",
            "16B",
            "--tick",
            tick,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("l4: calc 16\n"), "{}", stdout(&out));
    }
}

#[test]
fn tick_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_file(
        dir.path(),
        "long.goal",
        "num_ranks 1\nrank 0 {\nl1: calc 5\nl2: calc 18446744073709552\n}\n",
    );
    let path = f.to_str().unwrap();
    let tmp = |s: String| s.replace(dir.path().to_str().unwrap(), "[tmp]");
    // 2^64 / 1000 ticks of 1 ns overflow u64 ps, located; with a 1 ps tick it is a time.
    insta::assert_snapshot!("tick_overflow", tmp(err_of(&["--goal", path])));
    let ok = run_here(&["--goal", path, "--tick", "1ps", "--format", "json"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    insta::assert_snapshot!(
        "tick_without_unit",
        err_of(&["--goal", path, "--tick", "1000"])
    );
    insta::assert_snapshot!(
        "tick_in_compat_mode",
        err_of(&["--compat", "loggopsim", "--goal", path, "--tick", "1ps"])
    );
}

/// The output says which tick plain calc numbers were read in, noiseless and noisy.
#[test]
fn output_names_the_tick() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_file(
        dir.path(),
        "pingpong.goal",
        "num_ranks 2\nrank 0 {\nl1: calc 1500\nl2: send 8b to 1\nl2 requires l1\n}\nrank 1 {\nrecv 8b from 0\n}\n",
    );
    let path = f.to_str().unwrap();
    let out = run_here(&["--goal", path, "--tick", "1ps"]);
    let human = stdout(&out);
    assert!(
        human
            .lines()
            .next()
            .unwrap()
            .ends_with("(stable order, loggopsim model; plain calc numbers are ticks of 1ps)"),
        "{human}"
    );
    let noisy = |format: &str| {
        let out = run_here(&[
            "--goal",
            path,
            "--noise",
            "calibration/aws.h5",
            "--reps",
            "2",
            "-q",
            "--format",
            format,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let table = noisy("human");
    assert_eq!(
        table.lines().next().unwrap(),
        format!("{path}: plain calc numbers are ticks of 1ns (--tick)")
    );
    let v: serde_json::Value = serde_json::from_str(&noisy("json")).unwrap();
    assert_eq!(v["tick_ps"].as_u64(), Some(1000));
}
