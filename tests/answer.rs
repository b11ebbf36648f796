//! Issue 42, the answer in one place: the verdict after the table and in JSON and CSV, the
//! noiseless column, the extra dollars per run and per job, the ranking of systems, the why
//! (critical-path attribution) in the report, `--dry-run`, and the trial's smaller defects.
use serde_json::Value;

use crate::util::{run_here, stderr, stdout};

fn ok(args: &[&str]) -> String {
    let o = run_here(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

const SWEEP: [&str; 10] = [
    "--goal",
    "goal/dissemination_16B.goal",
    "--nodes",
    "4,16",
    "--noise",
    "calibration/aws.h5,calibration/azure.h5",
    "--reps",
    "8",
    "--job-runs",
    "100",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = SWEEP.to_vec();
    v.extend_from_slice(extra);
    v
}

/// The table has the noiseless column and the extra dollars, and the verdict follows it:
/// one line per system at the largest node count, with the same facts as JSON and CSV.
#[test]
fn the_verdict_follows_the_table_and_matches_json_and_csv() {
    let table = ok(&with(&["-q"]));
    let header = table.lines().next().unwrap();
    for col in ["noiseless", "$+/run-od", "$+/job-od", "rank-time", "rank-$"] {
        assert!(header.contains(col), "{col}: {header}");
    }
    let verdict = table
        .split("Verdict (noise os+net, largest node count):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no verdict: {table}"));
    let lines: Vec<&str> = verdict.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 2, "{verdict}");
    assert!(lines[0].starts_with("  16 nodes, aws: "), "{}", lines[0]);
    assert!(lines[1].starts_with("  16 nodes, azure: "), "{}", lines[1]);
    let b = table.as_bytes();
    let sci = (1..b.len().saturating_sub(1)).any(|i| {
        b[i - 1].is_ascii_digit() && b[i] == b'e' && (b[i + 1] == b'-' || b[i + 1] == b'+')
    });
    assert!(!sci, "no scientific dollar amounts: {table}");

    let v: Value = serde_json::from_str(&ok(&with(&["-q", "--format", "json"]))).unwrap();
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    for (vd, line) in verdicts.iter().zip(&lines) {
        assert_eq!(vd["text"].as_str().unwrap(), line.trim_start());
        assert_eq!(vd["nodes"], 16);
        let cell = v["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["system"] == vd["system"] && c["nodes"] == 16)
            .unwrap();
        let slowdown = cell["mean_ps"].as_f64().unwrap() / cell["noiseless_ps"].as_f64().unwrap();
        assert!((vd["slowdown"].as_f64().unwrap() - slowdown).abs() < 1e-6);
        // Extra cost per run: (mean − noiseless) × nodes × price per node-hour; per job × 100.
        let extra_h = (cell["mean_ps"].as_f64().unwrap() - cell["noiseless_ps"].as_f64().unwrap())
            * 16.0
            / 3.6e15;
        let od = &vd["on_demand"];
        let per_run = extra_h * od["usd_per_node_hour"].as_f64().unwrap();
        assert!(
            (od["extra_usd_per_run"].as_f64().unwrap() - per_run).abs() <= 1e-6 * per_run.abs()
        );
        assert!(
            (od["extra_usd_per_job"].as_f64().unwrap()
                - 100.0 * od["extra_usd_per_run"].as_f64().unwrap())
            .abs()
                <= 1e-9 * per_run.abs().max(1e-12)
        );
        let ci = od["extra_usd_per_run_ci95"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() <= per_run && per_run <= ci[1].as_f64().unwrap());
        assert!(vd["why"]["part"].is_string(), "{vd}");
    }
    // Systems side by side: ranks 1 and 2 by time, the best at ratio 1.
    let mut ranks: Vec<u64> = verdicts
        .iter()
        .map(|v| v["rank"]["by_time"].as_u64().unwrap())
        .collect();
    ranks.sort();
    assert_eq!(ranks, [1, 2]);
    let best = verdicts.iter().find(|v| v["rank"]["by_time"] == 1).unwrap();
    assert_eq!(best["rank"]["time_ratio"].as_f64(), Some(1.0));

    let csv = ok(&with(&["-q", "--format", "csv"]));
    let mut rows = csv.lines();
    let head: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let with_verdict: Vec<&str> = rows
        .filter(|r| !r.split(',').nth(col("verdict")).unwrap_or("").is_empty())
        .collect();
    assert_eq!(with_verdict.len(), 2, "{csv}");
    assert!(with_verdict.iter().all(|r| r.contains("16 nodes, ")));
}

/// Common random numbers (issue 41 item 3): the cells of a run draw the same numbers for the
/// same messages, so two systems compared side by side differ by their parameters, not by their
/// luck. The same profile under two names gives the same samples, repetition by repetition, and
/// a difference of exactly zero; two different clouds give a paired interval narrower than the
/// unpaired one, and the verdict and CSV carry it.
#[test]
fn systems_side_by_side_share_their_draws_and_differences_are_paired() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["one", "two"] {
        std::fs::copy(
            crate::util::root().join("calibration/aws.h5"),
            dir.path().join(format!("{name}.h5")),
        )
        .unwrap();
    }
    let noise = format!("{0}/one.h5,{0}/two.h5", dir.path().display());
    let json = |noise: &str, extra: &[&str]| -> Value {
        let mut args = vec![
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "16",
            "--noise",
            noise,
            "--reps",
            "16",
            "--format",
            "json",
            "-q",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&args)).unwrap()
    };
    // The verdict of the system ranked second by time.
    let ranked_second = |v: &Value| -> Value {
        v["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["rank"]["by_time"] == 2)
            .unwrap()
            .clone()
    };
    let v = json(&noise, &[]);
    let noisy: Vec<&Value> = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["noise_mode"] == "os+net")
        .collect();
    assert_eq!(noisy.len(), 2);
    assert_eq!(noisy[0]["samples_ps"], noisy[1]["samples_ps"]);
    let second = ranked_second(&v);
    let p = &second["rank"]["vs_fastest"];
    assert_eq!(p["reps"], 16);
    assert_eq!(p["diff_mean_ps"], 0);
    assert_eq!(p["diff_ci95_ps"], serde_json::json!([0, 0]));
    let text = second["text"].as_str().unwrap();
    assert!(
        text.contains("no clear difference, 95 % CI +0ps to +0ps paired over 16 repetitions)"),
        "{text}"
    );

    let html = dir.path().join("r.html");
    let v = json(
        "calibration/aws.h5,calibration/azure.h5",
        &["--report", html.to_str().unwrap()],
    );
    let second = ranked_second(&v);
    let p = &second["rank"]["vs_fastest"];
    let width = |k: &str| p[k][1].as_i64().unwrap() - p[k][0].as_i64().unwrap();
    assert!(width("diff_ci95_ps") < width("unpaired_ci95_ps"), "{p}");
    let diff = p["diff_mean_ps"].as_i64().unwrap();
    assert!(p["diff_ci95_ps"][0].as_i64().unwrap() <= diff, "{p}");
    assert!(diff <= p["diff_ci95_ps"][1].as_i64().unwrap(), "{p}");
    assert!(
        second["text"]
            .as_str()
            .unwrap()
            .contains("paired over 16 repetitions"),
        "{second}"
    );
    // The report's ranking shows the same paired difference.
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("vs fastest (95 % CI)</th>"), "the column");
    let text = second["text"].as_str().unwrap();
    let brief = text
        .split("azure: ")
        .nth(1)
        .and_then(|t| t.split(", 95 % CI ").next())
        .unwrap();
    assert!(
        h.contains(&format!("{brief} (")),
        "{brief} in the ranking table"
    );
}

/// Noise modes and node counts are compared as systems are: `differences` lists, per system,
/// every later noisy mode minus an earlier one at each node count and every node count minus
/// the one before it in each mode, each the exact mean difference of the two cells' samples
/// with a paired interval. `os+net` and `net` share their network draws, so their paired
/// interval is narrower than the unpaired one; the report shows the table.
#[test]
fn noise_modes_and_node_counts_differ_by_paired_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let v: Value = serde_json::from_str(&ok(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "8,16",
        "--noise",
        "calibration/azure.h5",
        "--noise-mode",
        "net,os+net",
        "--reps",
        "24",
        "--format",
        "json",
        "-q",
        "--report",
        html.to_str().unwrap(),
    ]))
    .unwrap();
    let mean = |nodes: u64, mode: &str| -> f64 {
        let c = v["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["nodes"] == nodes && c["noise_mode"] == mode)
            .unwrap();
        let s: Vec<f64> = c["samples_ps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as f64)
            .collect();
        s.iter().sum::<f64>() / s.len() as f64
    };
    let d = v["differences"].as_array().unwrap();
    let got: Vec<(String, u64, String, u64, String)> = d
        .iter()
        .map(|x| {
            (
                x["varies"].as_str().unwrap().to_string(),
                x["a"]["nodes"].as_u64().unwrap(),
                x["a"]["noise_mode"].as_str().unwrap().to_string(),
                x["b"]["nodes"].as_u64().unwrap(),
                x["b"]["noise_mode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = |v: &str, an, am: &str, bn, bm: &str| (v.into(), an, am.into(), bn, bm.into());
    assert_eq!(
        got,
        vec![
            want("noise_mode", 8, "os+net", 8, "net"),
            want("nodes", 16, "net", 8, "net"),
            want("nodes", 16, "os+net", 8, "os+net"),
            want("noise_mode", 16, "os+net", 16, "net"),
        ]
    );
    for x in d {
        assert_eq!(x["reps"], 24);
        let (a, b) = (&x["a"], &x["b"]);
        let exact = mean(
            a["nodes"].as_u64().unwrap(),
            a["noise_mode"].as_str().unwrap(),
        ) - mean(
            b["nodes"].as_u64().unwrap(),
            b["noise_mode"].as_str().unwrap(),
        );
        assert_eq!(
            x["diff_mean_ps"].as_i64().unwrap(),
            exact.round() as i64,
            "{x}"
        );
        let ci = &x["diff_ci95_ps"];
        assert!(ci[0].as_i64().unwrap() <= ci[1].as_i64().unwrap(), "{x}");
    }
    let width = |x: &Value, k: &str| x[k][1].as_i64().unwrap() - x[k][0].as_i64().unwrap();
    for x in d.iter().filter(|x| x["varies"] == "noise_mode") {
        assert!(
            width(x, "diff_ci95_ps") < width(x, "unpaired_ci95_ps"),
            "{x}"
        );
    }
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("<h2>Differences, paired by repetition</h2>"));
    assert!(
        h.contains("<td>os+net, 16 nodes</td><td>net, 16 nodes</td>"),
        "table rows"
    );
}

/// Why, where people look: the report has the verdict at the top and, per verdict cell, the
/// critical-path table and a stacked bar.
#[test]
fn the_report_has_the_verdict_and_the_why() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let mut args = with(&["-q", "--report"]);
    let h = html.to_str().unwrap().to_string();
    args.push(&h);
    ok(&args);
    let h = std::fs::read_to_string(&html).unwrap();
    let verdict = h.find("<h2>Verdict</h2>").expect("a verdict");
    let results = h.find("<h2>Results</h2>").expect("results");
    assert!(verdict < results, "the verdict comes first");
    let why = &h[h
        .find("<h2>Why: the critical path</h2>")
        .expect("a why section")
        + 10..];
    let why = &why[..why.find("<h2>").unwrap_or(why.len())];
    assert_eq!(why.matches("<h3>").count(), 2, "one per verdict cell");
    assert!(why.contains("network noise"));
    assert!(h.contains("Systems side by side"));
}

/// Time spent moving bytes is bandwidth: the 64-node AWS ring's noiseless critical path is
/// sends of 8 MiB, so NIC gap (G·size) is most of it, not "waiting for a busy NIC". The p95
/// band names repetitions, and the attribution's p95 is the table's.
#[test]
fn moving_bytes_is_bandwidth_and_the_band_names_repetitions() {
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("cp.json");
    let flag = format!("--critical-path={}", cp.display());
    let out = ok(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "64",
        "--noise",
        "calibration/aws.h5",
        "--reps",
        "20",
        "--format",
        "json",
        "-q",
        &flag,
    ]);
    let r: Value = serde_json::from_str(&out).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&cp).unwrap()).unwrap();
    let run = &v["runs"][0]["shares"];
    let share = |k: &str| run[k].as_f64().unwrap_or_else(|| panic!("{k}: {run}"));
    assert!(share("nic_gap") > 0.8, "{run}");
    assert!(share("wait_nic") < 0.2, "{run}");
    let noisy = |cells: &Value| -> Value {
        cells
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["noise_mode"] == "os+net")
            .unwrap_or_else(|| panic!("{cells}"))
            .clone()
    };
    let cell = noisy(&v["cells"]);
    let band = cell["p95_band"]["reps"].as_array().unwrap();
    assert!(!band.is_empty());
    let table_p95 = noisy(&r["cells"])["p95_ps"].as_f64().unwrap();
    let path_p95 = cell["parts"]["total"]["p95_ps"].as_f64().unwrap();
    assert!(
        (table_p95 - path_p95).abs() <= 1.0,
        "{table_p95} {path_p95}"
    );
    let human = ok(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "64",
        "--noise",
        "calibration/aws.h5",
        "--reps",
        "20",
        "-q",
        "--critical-path",
    ]);
    let line = human
        .lines()
        .find(|l| l.contains("p95 band"))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(line.contains("p95 band: repetition"), "{line}");
    assert!(!line.contains("ranks"), "{line}");
}

/// `--dry-run`: the plan and the estimates, and nothing run or written.
#[test]
fn dry_run_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let text = ok(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "16384",
        "--noise",
        "calibration/aws.h5",
        "--dry-run",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(!out.exists(), "a dry run wrote its output");
    assert!(text.contains("= 1 cells"), "{text}");
    assert!(text.contains("nothing is run"), "{text}");
    assert!(
        text.contains("ring_512MiB  aws     16384  os+net"),
        "{text}"
    );
    assert!(text.contains("estimated CPU time: "), "{text}");
    assert!(text.contains("peak memory: about "), "{text}");
}

/// A dry run of an all-to-all says its estimate leaves out the matching queues (an extrapolated
/// all-to-all of 512 ranks was estimated at 0.1-0.4 s and took 68 s); a ring does not.
#[test]
fn dry_runs_of_all_to_all_warn_of_matching() {
    let dir = tempfile::tempdir().unwrap();
    let a2a = dir.path().join("a2a.goal");
    ok(&[
        "gen",
        "linear_alltoall",
        "--nodes",
        "100",
        "--size",
        "4B",
        "-o",
        a2a.to_str().unwrap(),
    ]);
    let text = ok(&["--goal", a2a.to_str().unwrap(), "--dry-run"]);
    assert!(
        text.contains("note: ranks receive from up to 99 peers (an all-to-all)"),
        "{text}"
    );
    let text = ok(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "100",
        "--dry-run",
    ]);
    assert!(!text.contains("all-to-all"), "{text}");
}

/// The trial's smaller defects.
#[test]
fn small_defects_stay_fixed() {
    // `--nodes 4,4`: one row, and a note.
    let o = run_here(&["--goal", "goal/dissemination_16B.goal", "--nodes", "4,4"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o).matches("4 ranks: finishes at").count(), 1);
    assert!(stderr(&o).contains("--nodes repeats a node count"));
    // `--threads 0` refused.
    let o = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4",
        "--threads",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("at least one thread"), "{}", stderr(&o));
    // Timeline ranks outside the run refused, located.
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.json");
    let o = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "64",
        "--timeline",
        t.to_str().unwrap(),
        "--timeline-ranks",
        "0-5000",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("ranks 64-5000 are not in the run, which has 64 rank(s)"),
        "{}",
        stderr(&o)
    );
    // The help's -G is the README's.
    let help = ok(&["--help"]);
    assert!(help.contains("-G 6ns") && !help.contains("0.006ns"));
    let readme = std::fs::read_to_string(crate::util::root().join("README.md")).unwrap();
    assert!(readme.contains("-G 6ns"));
    // A noiseless plot draws single runs as diamonds, no boxes, and no system `flags`.
    let svg = dir.path().join("nl.svg");
    ok(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4,16",
        "-q",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("diamonds"), "title names the diamonds");
    assert!(!s.contains(">flags<"), "the system is not named `flags`");
}

/// What a user met in a sweep of several systems and modes: a mode given twice runs once; the
/// cost rank counts only priced systems; a 1-node run is priced as nothing to price; a plot of
/// noisy cells in a run without any is refused before anything runs; a profile without OS
/// noise beside one with it says what the shared default leaves out.
#[test]
fn sweeps_of_several_systems_say_what_they_compare() {
    let g = "goal/dissemination_16B.goal";
    // `--goal g` at `nodes` nodes with `noise`, then `extra`.
    let sim = |nodes: &str, noise: &str, extra: &[&str]| {
        let mut a = vec!["--goal", g, "--nodes", nodes, "--noise", noise, "-q"];
        a.extend_from_slice(extra);
        run_here(&a)
    };
    let aws = "calibration/aws.h5";
    let o = sim(
        "4",
        aws,
        &[
            "--noise-mode",
            "os+net,os+net",
            "--reps",
            "4",
            "--format",
            "csv",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).lines().count(),
        2,
        "a header, one row: {}",
        stdout(&o)
    );

    let text = stdout(&sim(
        "4",
        "calibration/alps.h5,calibration/aws.h5",
        &["--reps", "4"],
    ));
    let row = text.lines().find(|l| l.contains(" aws ")).unwrap();
    assert!(row.trim_end().ends_with("1/1 1.00x"), "{row}");
    assert!(
        text.contains("the only one with an on-demand price"),
        "{text}"
    );
    assert!(text.contains("committed $1.475/node-hour"), "{text}");

    let text = stdout(&sim("1", aws, &["--reps", "3"]));
    assert!(
        text.contains("1 node, aws: mean 0ps, nothing to price"),
        "{text}"
    );
    assert!(!text.contains("±-"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("s.csv");
    let plot = format!("cost={}", dir.path().join("c.svg").display());
    let o = sim(
        "4",
        aws,
        &[
            "--noise-mode",
            "none",
            "--samples",
            samples.to_str().unwrap(),
            "--plot",
            &plot,
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("it draws the cost increase of noisy cells"),
        "{e}"
    );
    assert!(!samples.exists(), "nothing is written before the refusal");

    // A profile without OS noise (calibrated without --os-noise) beside one with it.
    let noos = dir.path().join("noos.h5");
    ok(&[
        "calibrate",
        "--system",
        "ex",
        "--latency",
        "calibration/example/lat.txt",
        "--bandwidth",
        "calibration/example/bw.txt",
        "--set-S",
        "4KiB",
        "-o",
        noos.to_str().unwrap(),
    ]);
    let both = format!("{aws},{}", noos.display());
    let o = sim("4", &both, &["--reps", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("has no OS noise, so the OS noise of calibration/aws.h5 is left out"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("OS noise replayed"), "{}", stdout(&o));
}

/// A heavy tail widens the mean's 95 % CI past 1× while every repetition is slower than the
/// noiseless run: the verdict then says so by the median (its exact interval lies above
/// noiseless) and gives both intervals, never "no slower than noiseless".
#[test]
fn a_heavy_tail_is_judged_by_the_median() {
    let args = [
        "--goal",
        "goal/dgemm128_dissemination_128KiB.goal",
        "--nodes",
        "64",
        "--noise",
        "calibration/aws.h5",
        "--reps",
        "8",
        "-q",
        "--format",
        "json",
    ];
    let v: Value = serde_json::from_str(&ok(&args)).unwrap();
    let cell = &v["cells"][0];
    let noiseless = cell["noiseless_ps"].as_u64().unwrap();
    let samples = cell["samples_ps"].as_array().unwrap();
    assert!(
        samples.iter().all(|s| s.as_u64().unwrap() > noiseless),
        "{cell}"
    );
    let text = v["verdicts"][0]["text"].as_str().unwrap();
    let lo = v["verdicts"][0]["slowdown_ci95"][0].as_f64().unwrap();
    // The case this test is about: the mean's interval holds 1×.
    assert!(lo < 1.0, "{text}");
    assert!(text.contains("× slower by the median (median "), "{text}");
    assert!(text.contains("is widened by a heavy tail)"), "{text}");
    assert!(!text.contains("no slower"), "{text}");
}
