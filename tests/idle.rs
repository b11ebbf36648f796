//! Messages after long idle periods (issue 44): `calibrate --idle-latency` on the shared capture
//! sets, then the hoverboard benchmark simulated with the profile through the CLI (a 1 MiB
//! ping-pong back to back and after 0.2 … 1 s of computation) reproduces the captured ratio
//! after-idle / back-to-back within 15 % on GCP 2022-06-08 and stays flat on Piz Daint
//! 2022-05-13; the answers do not depend on the thread count.

use std::path::{Path, PathBuf};

use loggops_calibrate::idle::read_hoverboard;

/// The 15 % of the closure check.
const TOLERANCE: f64 = 0.15;
/// "Flat": every simulated ratio within 5 % of 1.
const FLAT: f64 = 0.05;

/// `calibrate` with the capture set's usual flags (as `tests/closure.rs`) and `--idle-latency`.
fn calibrate(set_dir: &Path, set: &str, s: &str, stripes: &str, out: &Path) {
    let hoverboard = crate::util::capture_file(set_dir, "hoverboard_reps_1.out");
    crate::util::calibrate_capture_set(
        set_dir,
        set,
        Some(s),
        stripes,
        &["--idle-latency", hoverboard.to_str().unwrap()],
        out,
    );
}

/// The hoverboard's round trip as a GOAL program: rank 0 computes `sleep_ns`, then sends
/// `size` bytes to rank 1 and receives them back.
fn hoverboard_goal(dir: &Path, size: u64, sleep_ns: u64) -> PathBuf {
    let (calc, after) = if sleep_ns > 0 {
        (format!("l1: calc {sleep_ns}\n"), "l2 requires l1\n")
    } else {
        (String::new(), "")
    };
    crate::util::write_file(
        dir,
        &format!("hoverboard_{sleep_ns}.goal"),
        &format!(
            "num_ranks 2\nrank 0 {{\n{calc}l2: send {size}b to 1 tag 0\nl3: recv {size}b from 1 tag 0\n{after}l3 requires l2\n}}\nrank 1 {{\nl1: recv {size}b from 0 tag 0\nl2: send {size}b to 0 tag 0\nl2 requires l1\n}}\n"
        ),
    )
}

/// The median simulated round trip (ps) of the hoverboard after `sleep_ns` with `profile`.
fn simulated_rtt(dir: &Path, profile: &Path, size: u64, sleep_ns: u64, threads: &str) -> f64 {
    let goal = hoverboard_goal(dir, size, sleep_ns);
    let o = crate::util::run(&[
        "--goal",
        goal.to_str().unwrap(),
        "--noise",
        profile.to_str().unwrap(),
        "--noise-mode",
        "net",
        "--reps",
        "400",
        "--threads",
        threads,
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut rtt: Vec<f64> = json["cells"][0]["samples_ps"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|v| v.as_u64().unwrap() as f64 - sleep_ns as f64 * 1e3)
        .collect();
    rtt.sort_by(f64::total_cmp);
    rtt[rtt.len() / 2]
}

/// `(sleep_ns, captured ratio)` per sleep time of the capture, and its message size.
fn captured_ratios(path: &Path) -> (Vec<(u64, f64)>, u64) {
    let hb = read_hoverboard(path).unwrap();
    let med = |v: &[f64]| v[v.len() / 2];
    let b2b = med(&hb.groups[0].rtt_ps);
    let ratios = hb.groups[1..]
        .iter()
        .map(|g| (g.sleep_ps / 1000, med(&g.rtt_ps) / b2b))
        .collect();
    (ratios, hb.size_bytes)
}

#[test]
fn simulated_hoverboard_reproduces_the_captured_ratio_after_idle() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    for (set, s, stripes, flat) in [
        ("gcp-2022-06-08", "64KiB", "8", false),
        ("daint-2022-05-13", "4KiB", "1", true),
    ] {
        let c = shared.join("captures").join(set);
        let hb = c.join("hoverboard_reps_1.out.xz");
        if !hb.exists() {
            eprintln!("skipping {set}: {} is absent", hb.display());
            continue;
        }
        let profile = dir.path().join(format!("{set}.h5"));
        calibrate(&c, set, s, stripes, &profile);
        let (ratios, size) = captured_ratios(&hb);
        assert_eq!(ratios.len(), 5, "{set}: 0.2, 0.4, … 1 s");
        let b2b = simulated_rtt(dir.path(), &profile, size, 0, "2");
        for &(sleep_ns, captured) in &ratios {
            let sim = simulated_rtt(dir.path(), &profile, size, sleep_ns, "2") / b2b;
            eprintln!(
                "{set}: after {} s idle: captured ratio {captured:.3}, simulated {sim:.3}",
                sleep_ns as f64 / 1e9
            );
            if flat {
                assert!(
                    (sim - 1.0).abs() <= FLAT,
                    "{set}: simulated ratio {sim:.3} after {sleep_ns} ns is not flat"
                );
            } else {
                assert!(
                    (sim / captured - 1.0).abs() <= TOLERANCE,
                    "{set}: simulated ratio {sim:.3} after {sleep_ns} ns, captured {captured:.3}"
                );
            }
        }
        if !flat {
            // Keyed draws: one thread and two give the same round trips.
            let last = ratios.last().unwrap().0;
            assert_eq!(
                simulated_rtt(dir.path(), &profile, size, last, "1"),
                simulated_rtt(dir.path(), &profile, size, last, "2"),
                "{set}: the thread count changed the answer"
            );
        }
    }
}

/// A capture without back-to-back rows, or without its header, is refused with the reason.
#[test]
fn hoverboard_reader_names_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let no_b2b = crate::util::write_file(
        dir.path(),
        "a.out",
        "# Hoverboard test (1048576 1 1000)\n# time(ns),sleep_time(ns),repetitions\n5,1000,1\n6,1000,1\n",
    );
    let e = read_hoverboard(&no_b2b).unwrap_err().to_string();
    assert!(e.contains("no back-to-back round trips"), "{e}");
    let no_header = crate::util::write_file(dir.path(), "b.out", "5,0,1\n6,0,1\n");
    let e = read_hoverboard(&no_header).unwrap_err().to_string();
    assert!(e.contains("header"), "{e}");
    let bad = crate::util::write_file(
        dir.path(),
        "c.out",
        "# Hoverboard test (1048576 1 0)\n5,0,1\nfive,0,1\n",
    );
    let e = read_hoverboard(&bad).unwrap_err().to_string();
    assert!(e.contains("c.out:3"), "{e}");
}
