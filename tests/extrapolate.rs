//! `extrapolate`: the acceptance form, `extrapolate A.goal B.goal --nodes 64 --output X`
//! then `--goal X --nodes 64`, on the committed LULESH traces (8 and 27 ranks).
use std::io::Read;
use std::path::Path;

use crate::util::{run, stderr, stdout};

/// Decompresses the committed trace `name` (`.goal.xz`) to `dir/to`.
fn trace(dir: &Path, name: &str, to: &str) -> String {
    let src = crate::util::root()
        .join("crates/extrapolate/tests/data")
        .join(name);
    let mut text = Vec::new();
    liblzma::read::XzDecoder::new(std::fs::File::open(&src).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    let path = dir.join(to);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_schedule_extrapolated_to_64_ranks_runs_at_64() {
    let dir = tempfile::tempdir().unwrap();
    let a = trace(dir.path(), "lulesh_p8.goal.xz", "A.goal");
    let b = trace(dir.path(), "lulesh_p27.goal.xz", "B.goal");
    let x = dir.path().join("X");
    let x = x.to_str().unwrap();
    let out = run(&["extrapolate", &a, &b, "--nodes", "64", "--output", x]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(report.contains("grid: 3-D cube"), "{report}");
    // the 64-rank trace (VALIDATION.md, leave one out) has exactly these
    assert!(
        report.contains("at --nodes 64: 42519 messages, 52425144 bytes"),
        "{report}"
    );
    assert!(std::fs::read_to_string(x)
        .unwrap()
        .starts_with("loggops-schedule 1\n"));
    let out = run(&["--goal", x, "--nodes", "64"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(234702 ops + 42519 messages)"),
        "{}",
        stdout(&out)
    );
    // any cube the grid allows, and a refusal that says which sizes it runs at
    let out = run(&["--goal", x, "--nodes", "125"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&["--goal", x, "--nodes", "100"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("grid"), "{}", stderr(&out));
}
