//! Sweeps over several workloads and systems, what every output records, `profile show`, and
//! Ctrl-C keeping the finished repetitions.
use std::path::Path;
use std::process::Stdio;

use crate::util::{root, run_here, stderr, stdout};

fn ok(args: &[&str]) -> String {
    let out = run_here(args);
    assert!(out.status.success(), "{args:?}\n{}", stderr(&out));
    stdout(&out)
}

/// The file's SHA-256 by coreutils' `sha256sum`, when it is installed.
fn sha256sum(path: &str) -> Option<String> {
    let o = std::process::Command::new("sha256sum")
        .arg(root().join(path))
        .output()
        .ok()?;
    o.status.success().then(|| {
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    })
}

/// An explicit schedule is hashed only for the outputs that show the hash (issue 41 item 4:
/// hashing a large binary file costs about as much CPU as simulating it): the human table names
/// the file without one; JSON and CSV carry the file's SHA-256, computed in the pass that parses
/// it, text and binary alike.
#[test]
fn an_explicit_schedule_is_hashed_for_the_outputs_that_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("d8.goal");
    let bin = dir.path().join("d8.bin");
    let t = text.to_str().unwrap();
    ok(&[
        "gen",
        "dissemination",
        "--nodes",
        "8",
        "--size",
        "16B",
        "-o",
        t,
    ]);
    let prog = loggops_goal::load(&text).unwrap();
    let mut bytes = Vec::new();
    loggops_goal::write_binary(&prog, &mut bytes).unwrap();
    std::fs::write(&bin, bytes).unwrap();
    for path in [&text, &bin] {
        let p = path.to_str().unwrap();
        let human = ok(&["--goal", p, "-q"]);
        let line = human
            .lines()
            .find(|l| l.starts_with("d8: "))
            .unwrap_or_else(|| panic!("{human}"));
        assert_eq!(line, format!("d8: {p}"));
        let v: serde_json::Value =
            serde_json::from_str(&ok(&["--goal", p, "-q", "--format", "json"])).unwrap();
        let sha = v["plan"]["workloads"][0]["sha256"].as_str().unwrap();
        assert_eq!(sha.len(), 64, "{v}");
        if let Some(want) = sha256sum(p) {
            assert_eq!(sha, want);
        }
        let csv = ok(&["--goal", p, "-q", "--format", "csv"]);
        assert!(csv.contains(sha), "{csv}");
    }
}

#[test]
fn several_workloads_and_systems_make_one_tidy_result() {
    let text = ok(&[
        "--goal",
        "goal/dissemination_16B.goal,goal/paper_dissemination_128KiB.goal",
        "--noise",
        "calibration/paper/alps.h5",
        "--noise",
        "calibration/paper/azure.h5",
        "--nodes",
        "4,16",
        "--noise-mode",
        "none,os+net",
        "--reps",
        "8",
        "--format",
        "json",
        "-q",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["status"], "complete");
    let cells = v["cells"].as_array().unwrap();
    // 2 workloads x 2 systems x 2 node counts x 2 modes, in that order.
    assert_eq!(cells.len(), 16);
    let key = |c: &serde_json::Value| {
        format!(
            "{} {} {} {}",
            c["workload"].as_str().unwrap(),
            c["system"].as_str().unwrap(),
            c["nodes"],
            c["noise_mode"].as_str().unwrap()
        )
    };
    assert_eq!(key(&cells[0]), "dissemination_16B alps 4 none");
    assert_eq!(key(&cells[3]), "dissemination_16B alps 16 os+net");
    assert_eq!(key(&cells[4]), "dissemination_16B azure 4 none");
    assert_eq!(
        key(&cells[15]),
        "paper_dissemination_128KiB azure 16 os+net"
    );
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(c["id"], i);
        let n = if c["noise_mode"] == "none" { 1 } else { 8 };
        assert_eq!(c["samples_ps"].as_array().unwrap().len(), n);
        assert_eq!(c["n"], n);
    }
    let systems = v["plan"]["systems"].as_array().unwrap();
    assert_eq!(systems[0]["name"], "alps");
    assert_eq!(
        systems[0]["profile"]["sha256"].as_str().unwrap().len(),
        64,
        "a SHA-256 in hex"
    );
    if let Some(want) = sha256sum("calibration/paper/alps.h5") {
        assert_eq!(systems[0]["profile"]["sha256"], want.as_str());
    }
    // Alps has near and far parameters (G 79 and 92 ps/B).
    assert_eq!(systems[0]["near"]["G_ps_per_byte"], 79.0);
    assert_eq!(systems[0]["far"]["G_ps_per_byte"], 92.0);
    assert_eq!(v["plan"]["settings"]["seed"], 1);
    assert_eq!(v["plan"]["settings"]["reps"]["rule"], "fixed");
    assert_eq!(v["tool"]["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn the_table_footer_records_the_settings() {
    let text = ok(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--noise",
        "calibration/paper/azure.h5",
        "--nodes",
        "8",
        "--noise-mode",
        "os",
        "--reps",
        "8",
        "--seed",
        "7",
        "-q",
    ]);
    assert!(
        text.contains("seed 7; 8 repetitions per noisy cell"),
        "{text}"
    );
    assert!(
        text.contains("azure: profile calibration/paper/azure.h5 (sha256 "),
        "{text}"
    );
    assert!(text.contains("near L 1.30us"), "{text}");
    assert!(
        text.contains("dissemination_16B: goal/dissemination_16B.goal (sha256 "),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "loggops-sim {}, results schema 2",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
}

#[test]
fn noiseless_and_noisy_csv_have_the_same_columns() {
    let noiseless = ok(&[
        "--goal",
        "goal/dissemination_16B.goal,goal/ring_512MiB.goal",
        "--nodes",
        "4",
        "--format",
        "csv",
    ]);
    let noisy = ok(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4",
        "--noise",
        "calibration/paper/alps.h5",
        "--reps",
        "8",
        "--format",
        "csv",
        "-q",
    ]);
    let header = |t: &str| t.lines().next().unwrap().to_string();
    assert_eq!(header(&noiseless), header(&noisy));
    // Two workloads, one row each; the noiseless time is its own baseline.
    let rows: Vec<&str> = noiseless.lines().skip(1).collect();
    assert_eq!(rows.len(), 2);
    assert!(
        rows[0].starts_with("dissemination_16B,flags,4,none,1,"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].starts_with("ring_512MiB,flags,4,none,1,"),
        "{}",
        rows[1]
    );
}

#[test]
fn samples_have_the_columns_the_help_names() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("s.csv");
    ok(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4",
        "--noise",
        "calibration/paper/daint.h5",
        "--noise-mode",
        "net",
        "--reps",
        "8",
        "-q",
        "--samples",
        samples.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&samples).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    assert_eq!(header, loggops_report::SAMPLE_COLUMNS);
    assert_eq!(text.lines().count(), 9);
    let help = ok(&["--help"]);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let samples_help = &flat[flat.find("--samples <FILE>").unwrap()..];
    let samples_help = &samples_help[..samples_help.find("--plot").unwrap()];
    for c in header {
        assert!(
            samples_help.contains(c),
            "--help of --samples does not name {c}"
        );
    }
}

#[test]
fn every_table_column_is_explained_in_the_help_and_the_readme() {
    let help = ok(&["--help"]);
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let columns = &readme[readme.find("## Columns").expect("a Columns section")..];
    for (c, _) in loggops_report::guide::TABLE_COLUMNS {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(c)),
            "--help does not explain {c}"
        );
        assert!(
            columns.contains(&format!("`{c}`")),
            "README's Columns section does not explain {c}"
        );
    }
}

#[test]
fn globs_and_directories_expand_sorted() {
    let run = |noise: &str| -> Vec<String> {
        let text = ok(&[
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "4",
            "--noise",
            noise,
            "--noise-mode",
            "none",
            "--format",
            "json",
            "-q",
        ]);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["plan"]["systems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        run("calibration/a*.h5"),
        ["alps", "aws", "azure", "azure200"]
    );
    let all = run("calibration");
    assert_eq!(all.len(), 8);
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
}

#[test]
fn plots_and_the_report_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("r.svg");
    let png = dir.path().join("c.png");
    let html = dir.path().join("r.html");
    ok(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4,16",
        "--noise",
        "calibration/paper/azure.h5",
        "--noise-mode",
        "none,os,os+net",
        "--reps",
        "16",
        "-q",
        "--plot",
        svg.to_str().unwrap(),
        "--plot",
        &format!("cost={}", png.display()),
        "--report",
        html.to_str().unwrap(),
    ]);
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg"));
    assert!(s.contains("nodes (log scale)"));
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("calibration/paper/azure.h5"));
    assert_eq!(
        h.matches("<svg").count(),
        5,
        "the verdict's two bars (the path's parts, the extra time per part), then the runtime, \
         cost and ECDF plots inline"
    );
    for needle in ["<script", "<link", "src=\"http", "url(http", "@import"] {
        assert!(!h.contains(needle), "the report loads {needle}");
    }
    let e = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4",
        "--plot",
        "out.pdf",
    ]);
    assert_eq!(e.status.code(), Some(2));
    assert!(stderr(&e).contains("out.pdf: a plot file must end in .svg or .png"));
}

#[test]
fn profile_show_prints_parameters_quantiles_noise_and_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("aws.png");
    let text = ok(&[
        "profile",
        "show",
        "calibration/paper/aws.h5",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(
        text.starts_with("calibration/paper/aws.h5: noise profile of system `aws`"),
        "{text}"
    );
    assert!(text.contains("near parameters: L 28.0us"), "{text}");
    assert!(
        text.contains("far parameters: L 28.0us, o 0ps, g 22.0us, G 300ps/B"),
        "{text}"
    );
    assert!(
        text.contains("  latency (one way): the near distribution"),
        "AWS has no far capture: {text}"
    );
    assert!(
        text.contains("latency (one way): quantile table of"),
        "{text}"
    );
    assert!(
        text.contains("p50 19.03us"),
        "the capture's median RTT/2: {text}"
    );
    assert!(text.contains("OS noise:\n  trace 1: "), "{text}");
    assert!(
        text.contains("prices: on-demand $3.88 per node-hour"),
        "{text}"
    );
    assert!(text.contains("provenance: made "), "{text}");
    assert!(
        !text
            .split_whitespace()
            .any(|w| w.trim_start_matches('\'').starts_with('/') && w.len() > 1),
        "no absolute path in what a profile records: {text}"
    );
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    assert!(
        !text.contains("(cut: "),
        "AWS keeps its whole trace: {text}"
    );
    // A trace kept shorter than its capture says so where it is described.
    let azure = ok(&["profile", "show", "calibration/azure.h5"]);
    assert!(
        azure.contains(
            " (cut: the capture's first 65000 of 99998 detours; the process is fitted on all)\n"
        ),
        "{azure}"
    );
}

/// `profile show --format json` holds every number the text shows, in ps, ps/B and USD.
#[test]
fn profile_show_json_has_the_numbers_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("aws.json");
    let text = ok(&["profile", "show", "calibration/paper/aws.h5"]);
    ok(&[
        "profile",
        "show",
        "calibration/paper/aws.h5",
        "--format",
        "json",
        "--output",
        out.to_str().unwrap(),
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["schema"], "loggops-sim/profile-show/1");
    assert_eq!(v["system"], "aws");
    assert_eq!(v["near"]["params"]["L_ps"].as_f64(), Some(28e6));
    assert_eq!(v["far"]["params"]["g_ps"].as_f64(), Some(22e6));
    assert_eq!(v["far"]["params"]["G_ps_per_byte"].as_f64(), Some(300.0));
    assert_eq!(v["far"]["latency_ps"]["same_as_near"], true);
    assert!(
        v["near"]["latency_ps"]["same_as_near"].is_null(),
        "only far says it"
    );
    let p50 = v["near"]["latency_ps"]["quantiles"]["p50"]
        .as_f64()
        .unwrap();
    assert!(
        (p50 - 19.03e6).abs() < 0.005e6,
        "{p50} against the text's p50 19.03us"
    );
    assert_eq!(
        v["prices"]["on_demand_usd_per_node_hour"].as_f64(),
        Some(3.88)
    );
    let traces = v["os_noise"]["traces"].as_array().unwrap();
    assert_eq!(
        traces.len(),
        text.matches("\n  trace ").count(),
        "one object per trace line"
    );
    assert!(
        traces.iter().all(|t| t["captured_detours"].is_null()),
        "AWS keeps its whole trace"
    );
    // A trace kept shorter than its capture says so, as the text's "(cut: ...)".
    let azure: serde_json::Value = serde_json::from_str(&ok(&[
        "profile",
        "show",
        "calibration/azure.h5",
        "--format",
        "json",
    ]))
    .unwrap();
    let t = &azure["os_noise"]["traces"][0];
    assert_eq!(
        (t["detours"].as_u64(), t["captured_detours"].as_u64()),
        (Some(65000), Some(99998)),
        "{t}"
    );
    let sha = v["sha256"].as_str().unwrap();
    assert!(text.contains(&format!("sha256 {sha}")));
    for (name, _) in [("min", 0), ("p1", 1), ("p99.9", 2), ("max", 3)] {
        assert!(
            v["near"]["latency_ps"]["quantiles"][name].is_number(),
            "{name}"
        );
    }
}

#[test]
fn shipped_profiles_record_no_absolute_paths() {
    for e in std::fs::read_dir(root().join("calibration")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "h5") {
            let prof = loggops_profile::read_profile(&p).unwrap();
            let pv = &prof.provenance;
            for s in &pv.sources {
                assert!(!s.starts_with('/'), "{}: source {s}", p.display());
            }
            assert!(
                !pv.command.split_whitespace().any(|w| w.starts_with('/')),
                "{}: command {}",
                p.display(),
                pv.command
            );
        }
    }
}

#[test]
fn ctrl_c_keeps_the_finished_repetitions_in_every_output() {
    if !Path::new("/proc/self/stat").exists() {
        eprintln!("skipping: needs /proc to see the run working");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let samples = dir.path().join("s.csv");
    let html = dir.path().join("r.html");
    let svg = dir.path().join("r.svg");
    // A complete result from an earlier run is kept: the partial one goes beside it.
    let earlier = "{\"status\": \"complete\"}\n";
    std::fs::write(&json, earlier).unwrap();
    // Far more repetitions than can finish: the run is interrupted in its second cell.
    let mut child = crate::util::bin()
        .current_dir(root())
        .args([
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "64",
            "--noise",
            "calibration/paper/alps.h5",
            "--noise-mode",
            "none,os+net,net",
            "--reps",
            "100000000",
            "--format",
            "json",
            "-q",
            "--output",
            json.to_str().unwrap(),
            "--samples",
            samples.to_str().unwrap(),
            "--report",
            html.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::util::ctrl_c_once_working(&mut child, 150);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted: wrote a partial result"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&json).unwrap(), earlier);
    let beside = dir.path().join("r.partial.json");
    assert!(
        stderr(&out).contains(&format!(
            "{} exists and is kept: the partial result went to {}",
            json.display(),
            beside.display()
        )),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&beside).unwrap()).unwrap();
    assert_eq!(v["status"], "interrupted");
    let cells = v["cells"].as_array().unwrap();
    // The noiseless cell is complete; the os+net cell holds what finished; net never started.
    assert_eq!(cells.len(), 2, "{cells:?}");
    assert_eq!(cells[0]["noise_mode"], "none");
    assert_eq!(cells[0]["complete"], true);
    let c = &cells[1];
    assert_eq!(c["noise_mode"], "os+net");
    assert_eq!(c["complete"], false);
    let n = c["n"].as_u64().unwrap();
    assert!(n > 0 && n < 100_000_000, "n = {n}");
    assert_eq!(c["samples_ps"].as_array().unwrap().len() as u64, n);
    let text = std::fs::read_to_string(&samples).unwrap();
    assert_eq!(text.lines().count() as u64, 1 + 1 + n);
    assert!(text.lines().last().unwrap().ends_with(",true"));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("PARTIAL RESULT"));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("PARTIAL"), "no PARTIAL mark on the plot");
}
