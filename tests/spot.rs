//! Issue 47, spot capacity: the job priced on demand, committed and on spot, in the table, the
//! JSON, the CSV and the verdict; the closed form without interruptions; nothing priced
//! without a rate; results independent of the thread count; shards merged.
use serde_json::Value;

use crate::util::{run_here, stderr, stdout};

fn ok(args: &[&str]) -> String {
    let o = run_here(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

const SWEEP: [&str; 12] = [
    "--goal",
    "goal/dissemination_16B.goal",
    "--nodes",
    "4,16",
    "--noise",
    "calibration/aws.h5",
    "--reps",
    "8",
    "--job-runs",
    "100",
    "--spot-price",
    "0.7",
];

/// The sweep and `extra` (`--job-node-hours` in `extra` replaces `--job-runs 100`).
fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = SWEEP.to_vec();
    if extra.contains(&"--job-node-hours") {
        v.drain(8..10);
    }
    v.extend_from_slice(extra);
    v
}

fn json(extra: &[&str]) -> Value {
    serde_json::from_str(&ok(&with(&[extra, &["-q", "--format", "json"]].concat()))).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// At rate 0 a spot job is its work: the same drawn times as on demand, priced at the spot
/// price; the best interval is the whole work (no checkpoint), the closed form is the work,
/// and Young's and Daly's intervals do not exist. With a fixed interval the closed form is
/// the work plus one checkpoint per interval but the last.
#[test]
fn at_rate_zero_spot_is_the_closed_form() {
    let v = json(&["--spot-interruptions", "0"]);
    let spot = &v["spot"];
    assert_eq!(spot["noise_mode"], "os+net");
    let sys = &spot["systems"][0];
    assert_eq!(sys["system"], "aws");
    assert!(sys.get("not_priced").is_none(), "{sys}");
    let od_price = f(&v["plan"]["systems"][0]["prices"]["on_demand_usd_per_node_hour"]);
    let rows = sys["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let nodes = f(&r["nodes"]);
        assert_eq!(f(&r["runs"]), 100.0);
        assert_eq!(f(&r["interruptions_mean"]), 0.0);
        assert!(r["young_s"].is_null() && r["daly_s"].is_null(), "{r}");
        let work = f(&r["work_s"]);
        assert_eq!(f(&r["checkpoint_every_s"]), work);
        assert_eq!(f(&r["closed_form_time_s"]), work);
        let (od, sp) = (&r["on_demand"], &r["spot"]);
        assert_eq!(f(&sp["mean_time_s"]), f(&od["mean_time_s"]));
        assert_eq!(f(&sp["p95_time_s"]), f(&od["p95_time_s"]));
        // The drawn jobs' mean work is the closed form's (100 runs of the cell's run times).
        assert!(close(f(&od["mean_time_s"]), work, 0.01), "{r}");
        let usd = f(&sp["mean_time_s"]) / 3600.0 * nodes * 0.7;
        assert!(close(f(&sp["mean_usd"]), usd, 1e-12), "{r}");
        assert!(close(
            f(&od["mean_usd"]) / f(&sp["mean_usd"]),
            od_price / 0.7,
            1e-12
        ));
    }
    // Spot at $0.70 against on demand at more never stops paying without interruptions.
    assert!(od_price > 0.7);
    assert_eq!(f(&sys["pays_up_to_nodes"]), 16.0);
    assert!(sys.get("stops_paying_at_nodes").is_none());
    assert!(sys.get("stops_paying_nodes_closed_form").is_none());
    let text = v["verdicts"][0]["text"].as_str().unwrap();
    assert!(text.contains("; spot: $"), "{text}");
    assert!(text.contains("pays at every node count run"), "{text}");
    assert_eq!(v["verdicts"][0]["spot"]["pays_up_to_nodes"], 16);
    // A job run in one segment shows no checkpoint interval in the table.
    let table = ok(&with(&["--spot-interruptions", "0", "-q"]));
    let none = table.lines().filter(|l| l.trim_end().ends_with(" none"));
    assert_eq!(none.count(), 2, "{table}");

    // A fixed interval: (k - 1) checkpoints of 30 s for k intervals of work.
    let v = json(&["--spot-interruptions", "0", "--checkpoint-every", "1ms"]);
    for r in v["spot"]["systems"][0]["rows"].as_array().unwrap() {
        let work = f(&r["work_s"]);
        let k = (work / 1e-3).ceil();
        let want = work + (k - 1.0) * 30.0;
        assert!(close(f(&r["closed_form_time_s"]), want, 1e-9), "{r} {want}");
        assert!(f(&r["spot"]["mean_time_s"]) > work + 29.0, "{r}");
    }
}

/// Without an interruption rate (flag or profile) spot is not priced and the outputs say so;
/// without any spot input there is no spot section at all.
#[test]
fn without_a_rate_nothing_is_priced() {
    let v = json(&[]);
    let sys = &v["spot"]["systems"][0];
    let why = sys["not_priced"].as_str().unwrap();
    assert!(why.contains("no interruption rate"), "{why}");
    assert!(why.contains("nothing is assumed"), "{why}");
    assert_eq!(sys["rows"].as_array().unwrap().len(), 0);
    let text = v["verdicts"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("spot: not priced (no interruption rate"),
        "{text}"
    );
    let table = ok(&with(&["-q"]));
    assert!(
        table.contains("not priced: no interruption rate"),
        "{table}"
    );

    let plain: Vec<&str> = SWEEP[..10].to_vec();
    let v: Value =
        serde_json::from_str(&ok(&[&plain[..], &["-q", "--format", "json"]].concat())).unwrap();
    assert!(v.get("spot").is_none());
    assert!(v["plan"]["settings"].get("spot").is_none());
    assert!(!v["verdicts"][0]["text"].as_str().unwrap().contains("spot"));
}

/// With interruptions: a spot job takes longer than its work, the drawn mean agrees with the
/// closed form (run times near constant), and the answer is the same with 1 and 2 threads,
/// in the JSON, the CSV and the table.
#[test]
fn interruptions_cost_time_and_do_not_depend_on_threads() {
    // 100 runs of ~10 us on 16 nodes are far too short to be interrupted: a job of 2000
    // node-hours is long enough.
    let args = [
        "--spot-mtbi",
        "50h",
        "--job-node-hours",
        "2000",
        "--checkpoint-cost",
        "10s",
        "--restart-cost",
        "60s",
    ];
    let one = json(&[&args[..], &["--threads", "1"]].concat());
    let two = json(&[&args[..], &["--threads", "2"]].concat());
    assert_eq!(one["spot"], two["spot"]);
    let sys = &one["spot"]["systems"][0];
    assert_eq!(f(&sys["interruptions_per_node_hour"]), 1.0 / 50.0);
    for r in sys["rows"].as_array().unwrap() {
        let (work, sp) = (f(&r["work_s"]), &r["spot"]);
        assert!(f(&r["interruptions_mean"]) > 1.0, "{r}");
        assert!(f(&sp["mean_time_s"]) > work, "{r}");
        assert!(
            close(f(&sp["mean_time_s"]), f(&r["closed_form_time_s"]), 0.02),
            "{r}"
        );
        let (young, daly) = (f(&r["young_s"]), f(&r["daly_s"]));
        assert!(close(f(&r["checkpoint_every_s"]), daly, 0.1), "{r}");
        assert!(close(young, daly, 0.2), "{r}");
    }
    let csv = ok(&with(&[&args[..], &["-q", "--format", "csv"]].concat()));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "spot_job_usd_mean")
        .expect("spot columns");
    let row16 = csv
        .lines()
        .find(|l| l.contains(",16,os+net,"))
        .expect("the 16-node os+net row");
    // The spot columns come last (the verdict, earlier, is quoted text with commas).
    let from_end = header.len() - col;
    let fields: Vec<&str> = row16.split(',').collect();
    let cell: f64 = fields[fields.len() - from_end].parse().unwrap();
    let want = f(&sys["rows"][1]["spot"]["mean_usd"]);
    assert!(close(cell, want, 1e-12), "{cell} {want}");
    let table = ok(&with(&[&args[..], &["-q"]].concat()));
    assert!(table.contains("Spot capacity (noise os+net"), "{table}");
    assert!(
        table.contains("aws: $0.70/node-hour, 0.02 interruptions per node-hour"),
        "{table}"
    );
}

/// Shards record the spot inputs; `merge` prices the merged samples as one process does.
#[test]
fn merge_prices_the_shards() {
    let dir = tempfile::tempdir().unwrap();
    let args = with(&[
        "--spot-interruptions",
        "0.01",
        "--job-node-hours",
        "500",
        "-q",
    ]);
    let mut shards = Vec::new();
    for i in 1..=2 {
        let out = dir.path().join(format!("s{i}.json"));
        let shard = format!("{i}/2");
        let o = out.to_str().unwrap().to_string();
        ok(&[&args[..], &["--shard", &shard, "--output", &o]].concat());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert!(v.get("spot").is_none(), "a shard does not price");
        assert!(v["plan"]["settings"]["spot"].is_object());
        shards.push(o);
    }
    let refs: Vec<&str> = shards.iter().map(String::as_str).collect();
    let merged: Value =
        serde_json::from_str(&ok(&[&["merge"][..], &refs, &["--format", "json"]].concat()))
            .unwrap();
    let whole = json(&["--spot-interruptions", "0.01", "--job-node-hours", "500"]);
    assert_eq!(merged["spot"], whole["spot"]);
}

/// `calibrate --spot-*` records spot capacity in the profile (schema version 5); `profile
/// show` prints it (text and JSON); a run prices spot from the profile alone, and its flags
/// override the profile's values.
#[test]
fn the_profile_carries_spot_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    let (o, path) = crate::cli::calibrate(
        dir.path(),
        "spot.h5",
        &[
            "--price-on-demand",
            "3",
            "--spot-price",
            "0.9",
            "--spot-mtbi",
            "1000h",
            "--spot-source",
            "AWS Spot Instance Advisor",
            "--spot-date",
            "2026-11-20",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = path.to_str().unwrap();
    let show = ok(&["profile", "show", p]);
    assert!(
        show.contains(
            "spot: $0.90 per node-hour, 0.001 interruptions per node-hour (one per 1000.00 h \
             per node) [AWS Spot Instance Advisor, 2026-11-20]"
        ),
        "{show}"
    );
    let j: Value = serde_json::from_str(&ok(&["profile", "show", p, "--format", "json"])).unwrap();
    let spot = &j["prices"]["spot"];
    assert_eq!(f(&spot["usd_per_node_hour"]), 0.9);
    assert!(close(f(&spot["interruptions_per_node_hour"]), 0.001, 1e-12));
    assert_eq!(spot["date"], "2026-11-20");
    let run = |extra: &[&str]| -> Value {
        let base = [
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "4",
            "--noise",
            p,
            "--reps",
            "4",
            "-q",
            "--format",
            "json",
        ];
        serde_json::from_str(&ok(&[&base[..], extra].concat())).unwrap()
    };
    let v = run(&[]);
    let sys = &v["spot"]["systems"][0];
    assert_eq!(f(&sys["spot_usd_per_node_hour"]), 0.9);
    assert_eq!(sys["source"], "AWS Spot Instance Advisor, 2026-11-20");
    assert_eq!(sys["rows"].as_array().unwrap().len(), 1);
    let v = run(&["--spot-price", "0.5", "--spot-interruptions", "0"]);
    let sys = &v["spot"]["systems"][0];
    assert_eq!(f(&sys["spot_usd_per_node_hour"]), 0.5);
    assert_eq!(f(&sys["interruptions_per_node_hour"]), 0.0);
    assert_eq!(
        f(&v["plan"]["systems"][0]["prices"]["spot_usd_per_node_hour"]),
        0.5
    );
}
