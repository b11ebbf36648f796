//! `--mpi-progress`: the simulator's closed form for a rendezvous send followed by a calc, the
//! profile attribute `calibrate --mpi-progress` writes and the outputs that name it, and the
//! flags it does not combine with.
use std::path::Path;

use crate::util::{run_here, stderr, stdout, write_file};

/// Rank 0 sends 1001 B (above S = 100 B) to rank 1 and then computes 50 ns; LogGOPSim's model,
/// L = 1 ns, o = 200 ps, g = 100 ps, G = 10 ps/B. Asynchronous progress: rank 0's send completes
/// at its match, o + L = 1.2 ns, rank 1 is done when the data is in, 2o + L + 1000 G = 11.4 ns.
/// Polled: the send completes when the data is in (11.4 ns), rank 0 computes until 61.4 ns, and
/// rank 1's receive completes only then (its completion notice comes from rank 0).
#[test]
fn a_calc_after_a_rendezvous_send_holds_its_receive_when_polled() {
    let dir = tempfile::tempdir().unwrap();
    let goal = write_file(
        dir.path(),
        "r.goal",
        "num_ranks 2\nrank 0 {\nl1: send 1001b to 1 tag 0\nl2: calc 50ns\nl2 requires l1\n}\n\
         rank 1 {\nl1: recv 1001b from 0 tag 0\n}\n",
    );
    let finish = |extra: &[&str]| {
        let mut a = vec![
            "--goal",
            goal.to_str().unwrap(),
            "-L",
            "1ns",
            "-o",
            "200ps",
            "-g",
            "100ps",
            "-G",
            "10ps",
            "-S",
            "100B",
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        let out = run_here(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["cells"][0]["run"]["finish_ps"].clone(),
            v["plan"]["systems"][0]["mpi_progress"].clone(),
        )
    };
    assert_eq!(
        finish(&[]),
        (serde_json::json!([51_200, 11_400]), serde_json::Value::Null)
    );
    assert_eq!(finish(&["--mpi-progress", "async"]), finish(&[]));
    assert_eq!(
        finish(&["--mpi-progress", "polled"]),
        (
            serde_json::json!([61_400, 61_400]),
            serde_json::json!("polled")
        )
    );
}

fn calibrate(dir: &Path, extra: &[&str]) -> std::path::PathBuf {
    let (out, path) = crate::cli::calibrate(dir, "demo.h5", extra);
    assert!(out.status.success(), "{}", stderr(&out));
    path
}

/// `calibrate --mpi-progress polled` records the attribute; `profile show` names it, runs with
/// the profile apply it (the settings say so) unless `--mpi-progress` overrides it, and a profile
/// without it runs asynchronously.
#[test]
fn the_profile_carries_mpi_progress() {
    let dir = tempfile::tempdir().unwrap();
    let polled = calibrate(dir.path(), &["--mpi-progress", "polled"]);
    let p = loggops_profile::read_profile(&polled).unwrap();
    assert_eq!(p.mpi_progress, Some(loggops_profile::MpiProgress::Polled));
    let show = run_here(&["profile", "show", polled.to_str().unwrap()]);
    assert!(
        stdout(&show).contains(
            "  MPI progress: polled (rendezvous messages progress only inside MPI, not during computation)\n"
        ),
        "{}",
        stdout(&show)
    );
    let run = |profile: &Path, extra: &[&str]| {
        let mut a = vec![
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "4",
            "--noise",
            profile.to_str().unwrap(),
            "--reps",
            "2",
            "-q",
        ];
        a.extend_from_slice(extra);
        let out = run_here(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    assert!(run(&polled, &[]).contains("; MPI progress polled"));
    assert!(!run(&polled, &["--mpi-progress", "async"]).contains("MPI progress"));
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let none = calibrate(&plain, &[]);
    assert_eq!(
        loggops_profile::read_profile(&none).unwrap().mpi_progress,
        None
    );
    assert!(!run(&none, &[]).contains("MPI progress"));
    assert!(run(&none, &["--mpi-progress", "polled"]).contains("; MPI progress polled"));
}

/// Polled progress is not LogGOPSim's behaviour (`--compat`), and the critical path cannot
/// attribute a rendezvous message's waits yet: both say so (a run without one is explained).
#[test]
fn polled_progress_is_refused_where_it_does_not_apply() {
    let out = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4",
        "--compat",
        "loggopsim",
        "--mpi-progress",
        "polled",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--mpi-progress polled does not apply with --compat loggopsim"));
    let explain = |goal: &str| {
        run_here(&[
            "--goal",
            goal,
            "--nodes",
            "4",
            "--mpi-progress",
            "polled",
            "--critical-path",
        ])
    };
    let out = explain("goal/ring_512MiB.goal");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "cannot explain runs with polled MPI progress and rendezvous messages (above S) yet"
        ),
        "{}",
        stderr(&out)
    );
    // Without a rendezvous message polled progress is asynchronous progress: explained, and
    // the verdict of a sweep on the (polled) daint profile says why.
    let out = explain("goal/dissemination_16B.goal");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "64",
        "--noise",
        "calibration/daint.h5",
        "--reps",
        "4",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("of the extra time is") && !text.contains("not attributed"),
        "{text}"
    );
}
