//! `loggops-sim validate`: located errors for bad or foreign measured files (insta snapshots),
//! exact noiseless answers, and output that does not depend on the thread count.
use std::path::{Path, PathBuf};

use crate::util::{run_here, stderr, stdout};

/// Writes `text` as `dir/name` and returns its path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The error of validating `files` (the temporary directory shown as `[tmp]`).
fn err_of(dir: &Path, files: &[&Path]) -> String {
    let mut args = vec!["validate".to_string()];
    args.extend(files.iter().map(|f| f.to_str().unwrap().to_string()));
    args.extend(["--noise", "calibration/azure.h5", "-q"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_here(&args);
    assert_eq!(out.status.code(), Some(2), "expected failure: {args:?}");
    assert!(stdout(&out).is_empty(), "nothing may be printed on failure");
    stderr(&out).replace(dir.to_str().unwrap(), "[tmp]")
}

const HEADER2: &str = "#MessageSize Rank0Time(us) Rank1Time(us) \n";

#[test]
fn bad_measured_files_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(&str, String)> = vec![
        ("ring_2_16.csv", format!("{HEADER2}16 1.0 2.0\n")),
        ("pipelinedring_two_16.csv", format!("{HEADER2}16 1.0 2.0\n")),
        ("pipelinedring_2_16.csv", "16 1.0 2.0\n".to_string()),
        (
            "pipelinedring_2_16.csv",
            "#MessageSize Rank0Time(us) Rank2Time(us)\n16 1 2\n".into(),
        ),
        ("pipelinedring_4_16.csv", format!("{HEADER2}16 1.0 2.0\n")),
        (
            "pipelinedring_2_16.csv",
            format!("{HEADER2}16 1.0 2.0\n16 1.5 two\n"),
        ),
        (
            "pipelinedring_2_16.csv",
            format!("{HEADER2}16 1.0 2.0\n32 1.0 2.0\n"),
        ),
        ("pipelinedring_2_16.csv", format!("{HEADER2}16 1.0\n")),
        (
            "pipelinedring_2_16.csv",
            format!("{HEADER2}16 1.0 2.0 3.0\n"),
        ),
        ("pipelinedring_2_16.csv", format!("{HEADER2}16 -1.0 2.0\n")),
        ("pipelinedring_2_16.csv", HEADER2.to_string()),
        ("pipelinedring_2_16.csv", String::new()),
        // A Netgauge ping-pong capture under a measured file's name.
        (
            "pipelinedring_2_16.csv",
            "#size\trtt\n1\t1.5\n1\t1.6\n".into(),
        ),
    ];
    let mut all = String::new();
    for (k, (name, text)) in cases.iter().enumerate() {
        let sub = d.join(format!("case{k}"));
        std::fs::create_dir(&sub).unwrap();
        let f = write(&sub, name, text);
        all += &err_of(d, &[&f]);
    }
    insta::assert_snapshot!(all);
}

#[test]
fn missing_files_and_empty_directories() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let empty = d.join("empty");
    std::fs::create_dir(&empty).unwrap();
    write(&empty, "README.md", "not a measured file\n");
    let mut all = err_of(d, &[&empty]);
    all += &err_of(d, &[&d.join("nwaydissemination_4_16.csv")]);
    // One bad file among good ones fails the whole run, before anything is simulated.
    let good = write(
        d,
        "pipelinedring_2_16.csv",
        &format!("{HEADER2}16 1.0 2.0\n"),
    );
    let bad = write(
        d,
        "linear_alltoall_2_16.csv",
        &format!("{HEADER2}16 1.0 x\n"),
    );
    all += &err_of(d, &[&good, &bad]);
    insta::assert_snapshot!(all);
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = run_here(args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn noiseless_validation_is_the_closed_form() {
    let dir = tempfile::tempdir().unwrap();
    // Two rounds of o + L + o + 15 G with Azure's parameters (o 0.15us, L 1.3us, G 86 ps/B).
    let want: u64 = 2 * (150_000 + 1_300_000 + 150_000 + 15 * 86);
    let f = write(
        dir.path(),
        "nwaydissemination_nocompute_4_16.csv",
        "#MessageSize Rank0Time(us) Rank1Time(us) Rank2Time(us) Rank3Time(us)\n16 3.2 3.1 3.0 3.1\n16 3.202580 3.0 3.0 3.0\n",
    );
    let noiseless = |extra: &[&str]| {
        let mut a = vec![
            "validate",
            f.to_str().unwrap(),
            "--noise",
            "calibration/azure.h5",
            "--noise-mode",
            "none",
            "--reps",
            "3",
            "--format",
            "json",
            "-q",
        ];
        a.extend(extra);
        json_of(&a)
    };
    for measure in ["collective", "barrier"] {
        let v = noiseless(&["--measure", measure]);
        let b = &v["benchmarks"][0];
        assert_eq!(b["simulated_mean_ps"], want, "{measure}");
        assert_eq!(b["noiseless_ps"], want, "{measure}");
        // Iterations are the maximum over ranks: 3.2us and 3.20258us.
        assert_eq!(b["measured_mean_ps"], (3_200_000 + 3_202_580) / 2);
        assert_eq!(b["paper_cell"], true);
    }
    // A per-call overhead adds to every rank's start.
    let v = noiseless(&["--call-overhead", "2us"]);
    assert_eq!(v["benchmarks"][0]["simulated_mean_ps"], want + 2_000_000);
}

#[test]
fn validation_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..20)
        .map(|i| format!("16384 {}.5 {}.0 \n", 30 + i % 7, 28 + i % 5))
        .collect();
    let f = write(
        dir.path(),
        "pipelinedring_2_16384.csv",
        &format!("{HEADER2}{rows}"),
    );
    let args = |t: &'static str, fmt: &'static str| {
        let mut a = vec![
            "validate".to_string(),
            f.to_str().unwrap().to_string(),
            dir.path().to_str().unwrap().to_string(),
        ];
        a.extend(
            [
                "--noise",
                "calibration/daint.h5",
                "--reps",
                "64",
                "--measure",
                "barrier",
                "--threads",
                t,
                "--format",
                fmt,
                "-q",
            ]
            .map(String::from),
        );
        a
    };
    let go = |t, fmt| {
        let a = args(t, fmt);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = run_here(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let one = go("1", "json");
    assert_eq!(one, go("2", "json"));
    // The file given directly and through its directory: two rows.
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["benchmarks"].as_array().unwrap().len(), 2);
    assert_eq!(v["summary"]["benchmarks"], 2);
    let csv = go("2", "csv");
    assert!(csv.starts_with("benchmark,pattern,nodes,bytes,paper_cell,"));
    assert_eq!(csv.lines().count(), 3);
    let human = go("2", "human");
    assert!(
        human
            .lines()
            .last()
            .unwrap()
            .starts_with("2 benchmarks: mean within 10%:"),
        "{human}"
    );
}
