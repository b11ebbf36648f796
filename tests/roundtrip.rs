//! Issue-5 round trip: a paper-table profile (calibration/paper/NAME.h5, whose latency table is
//! the captured RTT/2 itself) reproduces the captured one-way latency. A 1-byte message between
//! two ranks with o = 0 takes exactly one latency draw, so with absolute latencies
//! (`--absolute-latency`) 100,000 repetitions must follow the captured RTT/2 distribution:
//! two-sample KS distance below 0.02, for every system. The default profiles (calibrated from
//! the captures, with o and deconvolved latencies) answer to the ping-pong itself instead:
//! tests/closure.rs.
use std::path::Path;

use loggops_calibrate::stats::ks_two_sample;
use loggops_calibrate::{read_pingpong, PingPongOptions};

use crate::shared_or_skip;
use crate::util::{run, stderr};

const SYSTEMS: [(&str, &str); 8] = [
    ("daint", "daint_hpcmetal_DRday"),
    ("alps", "alps_hpcmetal_DRday"),
    ("azure", "azure_hpc_hc44rs_day"),
    ("azure200", "azure_hpc200_hbv2_day"),
    ("aws", "aws_hpcmetal_c5n_SRnight"),
    ("gcp", "gcp_hpc_c2_SRday"),
    ("deepest", "deepest_hpcmetal_0505"),
    ("oracle", "oracle_normal_SRday"),
];

fn simulate_one_way(profile: &Path, reps: u32, dir: &Path) -> Vec<f64> {
    let goal = dir.join("pingpong.goal");
    std::fs::write(
        &goal,
        "num_ranks 2\nrank 0 {\nsend 1b to 1\n}\nrank 1 {\nrecv 1b from 0\n}\n",
    )
    .unwrap();
    let samples = dir.join("samples.csv");
    let out = run(&[
        "--goal",
        goal.to_str().unwrap(),
        "--noise",
        profile.to_str().unwrap(),
        "--noise-mode",
        "net",
        "--absolute-latency",
        "-o",
        "0",
        "-q",
        "--reps",
        &reps.to_string(),
        "--seed",
        "7",
        "--samples",
        samples.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&samples).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "time_ps")
        .expect("time_ps column");
    lines
        .map(|l| l.split(',').nth(col).unwrap().parse::<f64>().unwrap() / 1e6)
        .collect()
}

#[test]
#[ignore = "slow: 8 systems × 100,000 repetitions (about a minute in release)"]
fn one_way_latency_reproduces_the_capture() {
    let shared = shared_or_skip!();
    let tmp = tempfile::tempdir().unwrap();
    for (name, dir) in SYSTEMS {
        let profile =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("calibration/paper/{name}.h5"));
        let capture = shared
            .join("captures/cloud_noise")
            .join(dir)
            .join("ng_netnoise_mpi_lat.out.xz");
        let captured = read_pingpong(&capture, &PingPongOptions::default())
            .unwrap()
            .samples_us;
        let sim = simulate_one_way(&profile, 100_000, tmp.path());
        assert_eq!(sim.len(), 100_000);
        let d = ks_two_sample(&captured, &sim);
        eprintln!(
            "{name}: KS distance {d:.4} ({} captured, {} simulated)",
            captured.len(),
            sim.len()
        );
        assert!(
            d < 0.02,
            "{name}: KS distance {d} between the capture and the simulation"
        );
    }
}
