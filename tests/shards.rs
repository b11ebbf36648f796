//! `--shard I/N` and `loggops-sim merge`: the merged shards are the unsharded run, byte for byte
//! (JSON, CSV, samples), with fixed repetitions (split round robin), `--reps auto` (whole
//! cells) and noiseless runs; shards of different runs, missing and repeated shards are
//! refused with messages pinned by snapshots.
use std::path::Path;

use crate::util::{bin, root, stderr};

/// Runs the binary from the repository root (schedules and profiles by relative path) and
/// asserts success.
fn ok(args: &[&str]) {
    let out = bin().current_dir(root()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}\n{}", stderr(&out));
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs `common` whole and as `n` shards, merges the shards (given in reverse order) and
/// compares the JSON, CSV and samples files; `strip` removes fields allowed to differ.
fn merged_equals_whole(common: &[&str], n: u32, strip: fn(&str) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    fn with<'a>(common: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [common, extra].concat()
    }
    ok(&with(
        common,
        &["--format", "json", "--output", &p("whole.json")],
    ));
    ok(&with(
        common,
        &["--format", "csv", "--output", &p("whole.csv")],
    ));
    ok(&with(
        common,
        &["--samples", &p("whole.samples.csv"), "--output", &p("t")],
    ));
    let mut shards = Vec::new();
    for i in (1..=n).rev() {
        let name = p(&format!("shard{i}.json"));
        ok(&with(
            common,
            &["--shard", &format!("{i}/{n}"), "--output", &name],
        ));
        let text = read(Path::new(&name));
        assert!(text.contains("\"shard\": {"), "{text}");
        shards.push(name);
    }
    let merge = |extra: &[&str]| {
        let mut args = vec!["merge"];
        args.extend(shards.iter().map(String::as_str));
        args.extend(extra);
        ok(&args);
    };
    merge(&["--format", "json", "--output", &p("merged.json")]);
    merge(&["--format", "csv", "--output", &p("merged.csv")]);
    merge(&["--samples", &p("merged.samples.csv"), "--output", &p("t")]);
    for (a, b) in [
        ("whole.json", "merged.json"),
        ("whole.csv", "merged.csv"),
        ("whole.samples.csv", "merged.samples.csv"),
    ] {
        let (wa, wb) = (read(&dir.path().join(a)), read(&dir.path().join(b)));
        assert_eq!(strip(&wa), strip(&wb), "{a} vs {b}");
    }
}

fn same(s: &str) -> String {
    s.to_string()
}

#[test]
fn fixed_repetitions_split_round_robin_merge_to_the_whole_run() {
    merged_equals_whole(
        &[
            "--goal",
            "goal/dissemination_16B.goal,goal/paper_pipelinedring_512MiB.goal",
            "--nodes",
            "4,16",
            "--noise",
            "calibration/paper/aws.h5,calibration/paper/daint.h5",
            "--noise-mode",
            "none,os,os+net",
            "--reps",
            "7",
            "--seed",
            "3",
            "-q",
        ],
        3,
        same,
    );
}

#[test]
fn auto_repetitions_split_whole_cells_and_merge_to_the_whole_run() {
    // More shards than some workloads have cells: idle shards merge as well.
    merged_equals_whole(
        &[
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "4,16",
            "--noise",
            "calibration/paper/azure.h5",
            "--noise-mode",
            "none,os+net",
            "-q",
        ],
        5,
        same,
    );
}

/// Noiseless cells keep the engine's wall time and memory, which differ from run to run.
fn without_wall_time(s: &str) -> String {
    s.lines()
        .filter(|l| !l.contains("\"wall_s\"") && !l.contains("\"peak_rss_bytes\""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn noiseless_runs_shard_by_cells() {
    merged_equals_whole(
        &[
            "--goal",
            "goal/dissemination_16B.goal,goal/paper_pipelinedring_512MiB.goal",
            "--nodes",
            "4,8,16",
            "-q",
        ],
        2,
        without_wall_time,
    );
}

/// Runs in a temporary directory (relative names in messages) and returns stderr.
fn fails_in(dir: &Path, args: &[&str]) -> String {
    let out = bin().current_dir(dir).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail");
    stderr(&out)
}

#[test]
fn merge_refuses_mismatched_missing_and_duplicated_shards() {
    let dir = tempfile::tempdir().unwrap();
    let goal = root().join("goal/dissemination_16B.goal");
    let aws = root().join("calibration/paper/aws.h5");
    // The same profile read from another path (another node's copy) is the same run.
    let copy = dir.path().join("copy-of-aws.h5");
    std::fs::copy(&aws, &copy).unwrap();
    let shard_on = |profile: &Path, name: &str, extra: &[&str]| {
        let mut args = vec![
            "--goal",
            goal.to_str().unwrap(),
            "--nodes",
            "4",
            "--noise",
            profile.to_str().unwrap(),
            "--reps",
            "4",
            "-q",
            "--output",
            name,
        ];
        args.extend(extra);
        let out = bin().current_dir(dir.path()).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let shard = |name: &str, extra: &[&str]| shard_on(&aws, name, extra);
    shard("a1.json", &["--shard", "1/3"]);
    shard("a2.json", &["--shard", "2/3"]);
    shard("a3.json", &["--shard", "3/3"]);
    shard_on(&copy, "a3-copy.json", &["--shard", "3/3"]);
    shard("seed2.json", &["--shard", "3/3", "--seed", "2"]);
    shard("four.json", &["--shard", "3/4"]);
    shard("whole.json", &["--format", "json"]);
    let d = dir.path();
    insta::assert_snapshot!(
        "merge_missing",
        fails_in(d, &["merge", "a1.json", "a3.json"])
    );
    insta::assert_snapshot!(
        "merge_duplicate",
        fails_in(d, &["merge", "a1.json", "a2.json", "a2.json", "a3.json"])
    );
    insta::assert_snapshot!(
        "merge_other_seed",
        fails_in(d, &["merge", "a1.json", "a2.json", "seed2.json"])
    );
    insta::assert_snapshot!(
        "merge_other_count",
        fails_in(d, &["merge", "a1.json", "a2.json", "four.json"])
    );
    insta::assert_snapshot!(
        "merge_not_a_shard",
        fails_in(d, &["merge", "a1.json", "whole.json"])
    );
    let shard_as = |format: &str| {
        let g = goal.to_str().unwrap();
        fails_in(
            d,
            &[
                "--goal", g, "--nodes", "4", "--shard", "1/2", "--format", format,
            ],
        )
    };
    insta::assert_snapshot!("shard_with_csv", shard_as("csv"));
    // `--format human` asked for by name is refused as csv is (the default writes JSON).
    let human = shard_as("human");
    assert!(
        human.contains("--format does not apply with --shard 1/2: "),
        "{human}"
    );
    insta::assert_snapshot!(
        "shard_out_of_range",
        fails_in(
            d,
            &[
                "--goal",
                goal.to_str().unwrap(),
                "--nodes",
                "4",
                "--shard",
                "3/2"
            ]
        )
    );
    // The complete set merges to the same bytes in any order, and a shard that read a copy of
    // the profile is one of them (the merged result names shard 1's paths).
    let merged = |shards: &[&str]| {
        let out = bin()
            .current_dir(d)
            .arg("merge")
            .args(shards)
            .args(["--format", "json", "-q"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    let whole = String::from_utf8(merged(&["a1.json", "a2.json", "a3.json"])).unwrap();
    for order in [
        ["a3.json", "a1.json", "a2.json"],
        ["a3-copy.json", "a2.json", "a1.json"],
    ] {
        assert_eq!(
            String::from_utf8(merged(&order)).unwrap(),
            whole,
            "{order:?}"
        );
    }
}
