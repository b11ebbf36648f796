//! Calibration closes: simulating each capture's own ping-pong with the profile made from it
//! reproduces the capture (RTT/2 p50 within 3 %, p95 and p99 within 10 %), for every shipped
//! profile of the captures calibration and for `calibrate` on the shared capture sets.

use std::path::Path;

use loggops_calibrate::closure::{closure_of, ClosureRow};
use loggops_calibrate::{read_pingpong, PingPongKind, PingPongOptions};
use loggops_profile::{read_profile, Calibration};

use crate::util::root;

/// Sorted RTT/2 samples (ps) and the message size of a ping-pong capture, warm-up dropped as
/// `calibrate` drops it.
fn capture(path: &Path, kind: PingPongKind) -> (Vec<f64>, u64) {
    let opts = PingPongOptions {
        kind,
        ..PingPongOptions::default()
    };
    let pp = read_pingpong(path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v: Vec<f64> = pp.samples_ps.iter().map(|&p| p as f64).collect();
    v.sort_by(f64::total_cmp);
    (v, pp.size_bytes)
}

fn assert_closes(what: &str, rows: &[ClosureRow]) {
    assert_eq!(rows.len(), 2, "{what}: one latency and one bandwidth row");
    for r in rows {
        assert!(
            r.closes,
            "{what}: {} does not close: captured p50/p95/p99 {:?} us, simulated {:?} us",
            r.benchmark, r.captured_us, r.simulated_us
        );
    }
}

/// Every shipped profile made against captures reproduces the captures it names in its
/// provenance (its first two sources: the latency and the bandwidth ping-pong).
#[test]
fn every_shipped_profile_closes_against_its_captures() {
    crate::shared_or_skip!();
    let mut checked = 0;
    for e in std::fs::read_dir(root().join("calibration")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "h5") {
            continue;
        }
        let p = read_profile(&path).unwrap();
        if p.calibration != Calibration::Captures {
            continue;
        }
        let src = &p.provenance.sources;
        let lat = capture(&root().join(&src[0]), PingPongKind::Latency);
        let bw = capture(&root().join(&src[1]), PingPongKind::Bandwidth);
        let rows = closure_of(&p.near, (&lat.0, lat.1), (&bw.0, bw.1)).unwrap();
        assert_closes(&path.display().to_string(), &rows);
        checked += 1;
    }
    assert!(
        checked >= 8,
        "{checked} shipped profiles of the captures calibration"
    );
}

/// `calibrate` on the full capture sets of ../shared (the acceptance command's form) makes
/// profiles whose fit report says every row closes.
#[test]
fn calibrate_closes_on_the_shared_capture_sets() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    for (set, s, stripes) in [
        ("daint-2022-03-30", "4KiB", "1"),
        ("daint-2022-05-13", "4KiB", "1"),
        ("gcp-2022-06-08", "64KiB", "8"),
    ] {
        let c = shared.join("captures").join(set);
        let file = |stem: &str| {
            let xz = c.join(format!("{stem}.xz"));
            if xz.exists() {
                xz
            } else {
                c.join(stem)
            }
        };
        let out = dir.path().join(format!("{set}.h5"));
        let report = dir.path().join(format!("{set}.json"));
        let o = crate::util::run(&[
            "calibrate",
            "--system",
            set,
            "--latency",
            file("ng_netnoise_mpi_lat.out").to_str().unwrap(),
            "--bandwidth",
            file("ng_netnoise_mpi_bw.out").to_str().unwrap(),
            "--os-noise",
            file("ng_osnoise.out").to_str().unwrap(),
            "--loggp",
            c.join("ng_loggp.out").to_str().unwrap(),
            "--set-S",
            s,
            "--bandwidth-stripes",
            stripes,
            "--report-json",
            report.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{set}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let rows = json["closure"]["rows"].as_array().expect("closure rows");
        assert_eq!(rows.len(), 2, "{set}");
        for r in rows {
            assert_eq!(r["closes"], true, "{set}: {r}");
        }
    }
}
