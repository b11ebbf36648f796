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
    args.extend(["--noise", "calibration/paper/azure.h5", "-q"].map(String::from));
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
    // When no file can be simulated the run fails, naming each.
    let bad = write(
        d,
        "linear_alltoall_2_16.csv",
        &format!("{HEADER2}16 1.0 x\n"),
    );
    let unknown = write(d, "ring_2_16.csv", &format!("{HEADER2}16 1.0 2.0\n"));
    all += &err_of(d, &[&bad, &unknown]);
    insta::assert_snapshot!(all);
}

/// A directory with files that cannot be simulated (a malformed row, an unknown pattern, a
/// `_test` program whose polling loop repeats a send) and files that can: the others run, and
/// the table, the JSON and the CSV list each file left out with its reason. The 0-byte-segment
/// ring (16 B on 32 ranks) is simulated as its program ran: nothing between the clock reads.
#[test]
fn unsimulatable_files_are_listed_and_the_rest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "pipelinedring_2_16.csv",
        &format!("{HEADER2}16 1.0 2.0\n"),
    );
    write(
        d,
        "linear_alltoall_2_16.csv",
        &format!("{HEADER2}16 1.0 x\n"),
    );
    write(d, "ring_2_16.csv", &format!("{HEADER2}16 1.0 2.0\n"));
    let header = |p: u32| {
        let cols: String = (0..p).map(|r| format!(" Rank{r}Time(us)")).collect();
        format!("#MessageSize{cols}\n")
    };
    let row = |p: u32, size: u64| {
        let t: String = (0..p).map(|_| " 5.0").collect();
        format!("{size}{t}\n")
    };
    write(
        d,
        "binomialtreebcast_test_8_16.csv",
        &format!("{}{}", header(8), row(8, 16)),
    );
    write(
        d,
        "pipelinedring_32_16.csv",
        &format!("{}{}{}", header(32), row(32, 16), row(32, 16)),
    );
    let run = |fmt: &str| {
        let out = run_here(&[
            "validate",
            d.to_str().unwrap(),
            "--noise",
            "calibration/paper/azure.h5",
            "--noise-mode",
            "none",
            "--reps",
            "2",
            "--format",
            fmt,
            "-q",
            // What the simulation gives, on a perfect clock.
            "--clock-resolution",
            "0",
            "--clock-read",
            "0",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).replace(d.to_str().unwrap(), "[tmp]")
    };
    let human = run("human");
    // The empty ring's simulated median is 0: its spread is undefined, printed as `-`.
    let ring_line = human
        .lines()
        .find(|l| l.starts_with("pipelinedring_32_16 "))
        .expect("the 0-byte ring's row");
    assert!(!human.contains("NaN"), "{human}");
    assert!(ring_line.contains("1.00/-"), "{ring_line}");
    let listing: String = human
        .lines()
        .skip_while(|l| !l.starts_with("note:") && !l.starts_with("not simulated"))
        .map(|l| format!("{l}\n"))
        .collect();
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let rows: Vec<&str> = json["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["pipelinedring_2_16", "pipelinedring_32_16"]);
    // Each row names its measured file (runs of several days share benchmark names).
    assert_eq!(
        json["benchmarks"][0]["file"],
        "[tmp]/pipelinedring_2_16.csv"
    );
    let ring = &json["benchmarks"][1];
    assert_eq!(ring["simulated_mean_ps"], 0);
    assert!(ring["note"].as_str().unwrap().contains("no ops"));
    assert_eq!(json["summary"]["not_simulated"], 3);
    let csv = run("csv");
    let skipped_rows: String = csv
        .lines()
        .filter(|l| l.contains("not simulated: "))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!(format!(
        "{listing}-- JSON not_simulated\n{}\n-- CSV\n{skipped_rows}",
        serde_json::to_string_pretty(&json["not_simulated"]).unwrap()
    ));
}

#[test]
fn ctrl_c_writes_the_benchmarks_simulated_and_lists_the_rest() {
    if !Path::new("/proc/self/stat").exists() {
        eprintln!("skipping: needs /proc to see the run working");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Two 32-rank benchmarks (a tree of 31 messages a repetition, a ring of about 2,000):
    // Ctrl-C comes long before the first one's 10^7 repetitions end.
    let cols: String = (0..32).map(|r| format!(" Rank{r}Time(us)")).collect();
    let times: String = (0..32).map(|_| " 5.0").collect();
    for name in ["binomialtreebcast_32_16384", "pipelinedring_32_16384"] {
        let size = 16384;
        write(
            d,
            &format!("{name}.csv"),
            &format!("#MessageSize{cols}\n{size}{times}\n"),
        );
    }
    // An earlier result is kept: the partial one goes beside it.
    let earlier = write(d, "v.json", "{}\n");
    let mut child = crate::util::bin()
        .current_dir(crate::util::root())
        .args([
            "validate",
            d.to_str().unwrap(),
            "--noise",
            "calibration/paper/azure.h5",
        ])
        .args(["--reps", "10000000", "--format", "json", "-q", "--output"])
        .arg(&earlier)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::util::ctrl_c_once_working(&mut child, 150);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "interrupted: wrote a partial result (0 benchmark(s) simulated, 2 not reached, 0 not \
             simulatable; all listed with their reasons)"
        ) && stderr(&out).contains("interrupted: dropping the benchmark in progress"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&earlier).unwrap(), "{}\n");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("v.partial.json")).unwrap()).unwrap();
    assert_eq!(v["status"], "interrupted", "{v}");
    let listed = v["not_simulated"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{v}");
    for l in listed {
        assert_eq!(
            l["reason"], "interrupted (Ctrl-C) before it was simulated",
            "{v}"
        );
    }
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
            "calibration/paper/azure.h5",
            "--noise-mode",
            "none",
            "--reps",
            "3",
            "--format",
            "json",
            "-q",
        ];
        a.extend(extra);
        // The closed form is the simulated region: read on a perfect clock unless a call
        // sets one (the profile has Azure's).
        for (flag, v) in [("--clock-resolution", "0"), ("--clock-read", "0")] {
            if !extra.contains(&flag) {
                a.extend([flag, v]);
            }
        }
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
    // A clock read adds to every timed region, the noiseless one included.
    let v = noiseless(&["--clock-read", "27ns"]);
    let b = &v["benchmarks"][0];
    assert_eq!(b["simulated_mean_ps"], want + 27_000);
    assert_eq!(b["noiseless_ps"], want + 27_000);
    let line = v["settings"]["line"].as_str().unwrap();
    assert!(
        line.contains(
            "each region plus one clock read of 27.0ns (--clock-resolution, --clock-read)"
        ),
        "{line}"
    );
    // A clock of 238 ns steps reads 3.20258 us as 13 or 14 steps, at each rank's phase.
    let v = noiseless(&["--clock-resolution", "238ns"]);
    let b = &v["benchmarks"][0];
    for key in ["simulated_p50_ps", "simulated_max_ps", "noiseless_ps"] {
        let t = b[key].as_u64().unwrap();
        assert!(t == 13 * 238_000 || t == 14 * 238_000, "{key} {t}");
    }
    assert_eq!(v["settings"]["clock_resolution_ps"], 238_000.0);
    // The JSON says how it was made.
    let st = &v["settings"];
    assert_eq!(
        (st["seed"].as_u64(), st["reps"].as_u64()),
        (Some(1), Some(3)),
        "{st}"
    );
    assert_eq!(st["profile"], "calibration/paper/azure.h5");
    assert_eq!(
        st["profile_sha256"].as_str().map(str::len),
        Some(64),
        "{st}"
    );
    assert_eq!(
        (&st["noise_mode"], &st["measure"]),
        (&"none".into(), &"barrier".into())
    );
    // Parameter overrides are recorded, in JSON and in the header line.
    let v = noiseless(&["-L", "1us"]);
    assert_eq!(v["settings"]["overrides"], serde_json::json!(["-L 1us"]));
    let line = v["settings"]["line"].as_str().unwrap();
    assert!(line.contains("overridden by -L 1us"), "{line}");
    // A file named twice (directly and through its directory) is one benchmark.
    let v = noiseless(&[f.to_str().unwrap(), dir.path().to_str().unwrap()]);
    assert_eq!(v["summary"]["benchmarks"], 1, "{}", v["summary"]);
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
    write(
        dir.path(),
        "pipelinedring_2_32768.csv",
        &format!("{HEADER2}{}", rows.replace("16384 ", "32768 ")),
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
                "calibration/paper/daint.h5",
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
    // A file given directly and through its directory counts once: two files, two rows.
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

/// Polled MPI progress (the global engine, a step per rendezvous message) gives the same answer
/// on one thread and on two; on the 16 MiB dissemination with compute it holds the transfers
/// behind the busy-wait calcs (a mean above 1.5× the asynchronous one, about 2 calcs where
/// asynchronous progress takes 1).
#[test]
fn polled_validation_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..5)
        .map(|i| format!("16777216 {}.0 21000.0 37000.0 21000.0\n", 37_000 + i))
        .collect();
    let f = write(
        dir.path(),
        "nwaydissemination_4_16777216.csv",
        &format!("#MessageSize Rank0Time(us) Rank1Time(us) Rank2Time(us) Rank3Time(us)\n{rows}"),
    );
    let mean = |progress: &str, threads: &str| {
        let v = json_of(&[
            "validate",
            f.to_str().unwrap(),
            "--noise",
            "calibration/paper/daint.h5",
            "--reps",
            "32",
            "--mpi-progress",
            progress,
            "--threads",
            threads,
            "--format",
            "json",
            "-q",
        ]);
        assert_eq!(v["benchmarks"][0]["mpi_progress"], progress);
        // The flag settles the rule: no evidence is gathered for the other one.
        assert!(v["settings"]["mpi_progress_evidence"].is_null(), "{v}");
        v["benchmarks"][0]["simulated_mean_ps"].as_u64().unwrap()
    };
    let polled = mean("polled", "1");
    assert_eq!(polled, mean("polled", "2"));
    let asynchronous = mean("async", "2");
    assert!(
        polled * 2 > asynchronous * 3,
        "polled {polled} ps, async {asynchronous} ps"
    );
}

/// Without --mpi-progress, the benchmarks whose time depends on the progress rule run under the
/// other rule too, and the line after the table says which one their measured means favour:
/// polled for runs that took two calcs and two transfers one after the other (37 ms at 4
/// nodes), async for runs where the transfers hid behind the calcs (21 ms); a benchmark
/// without computation gives no evidence.
#[test]
fn the_measurements_say_which_progress_rule_they_favour() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, us: u64| {
        let rows: String = (0..5)
            .map(|i| format!("16777216 {}.0 {us}.0 {us}.0 {us}.0\n", us + i))
            .collect();
        let d = dir.path().join(format!("{us}"));
        std::fs::create_dir_all(&d).unwrap();
        write(
            &d,
            name,
            &format!(
                "#MessageSize Rank0Time(us) Rank1Time(us) Rank2Time(us) Rank3Time(us)\n{rows}"
            ),
        )
    };
    let evidence = |f: &Path, format: &str| {
        let out = run_here(&[
            "validate",
            f.to_str().unwrap(),
            "--noise",
            "calibration/paper/daint.h5",
            "--reps",
            "16",
            "--format",
            format,
            "-q",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let name = "nwaydissemination_4_16777216.csv";
    for (us, favours) in [(37_000, "polled"), (21_000, "async")] {
        let f = file(name, us);
        let v: serde_json::Value = serde_json::from_str(&evidence(&f, "json")).unwrap();
        let e = &v["settings"]["mpi_progress_evidence"];
        assert_eq!(e["simulated"], "async", "{e}");
        assert_eq!(e["favours"], favours, "{e}");
        let b = &e["benchmarks"][0];
        assert_eq!(b["benchmark"], "nwaydissemination_4_16777216");
        let mean = |rule: &str| b[format!("{rule}_mean_ps")].as_u64().unwrap();
        assert_eq!(
            mean("async"),
            v["benchmarks"][0]["simulated_mean_ps"],
            "{e}"
        );
        assert!(mean("polled") * 2 > mean("async") * 3, "{e}");
        let human = evidence(&f, "human");
        let line = human.lines().last().unwrap();
        assert!(
            line.starts_with(
                "MPI progress: 1 benchmark depends on it (nwaydissemination_4_16777216); \
                 median error of their means "
            ),
            "{line}"
        );
        assert!(line.contains(&format!("favour {favours}")), "{line}");
    }
    let f = file("nwaydissemination_nocompute_4_16777216.csv", 4_000);
    let v: serde_json::Value = serde_json::from_str(&evidence(&f, "json")).unwrap();
    assert_eq!(
        v["settings"]["mpi_progress_evidence"],
        serde_json::Value::Null
    );
}

/// `calibrate` keeps the clock the selfish capture read (its steps: the loop's shortest
/// iteration; a read: its mean one) and `validate` reads every simulated region on it: an
/// empty region (the 0-byte-segment ring) reads 0 or one step per rank, as the real
/// benchmark's did.
#[test]
fn a_timed_region_is_read_on_the_profiles_clock() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let profile = d.join("p.h5");
    let out = run_here(&[
        "calibrate",
        "--system",
        "demo",
        "--latency",
        "calibration/example/lat.txt",
        "--bandwidth",
        "calibration/example/bw.txt",
        "--os-noise",
        "calibration/example/osnoise.txt",
        "--set-S",
        "64KiB",
        "-o",
        profile.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The example capture: `# Minimal cycle length [ns]: 40.50`, 100,000,000 iterations in
    // `# Measurement period: 1.11 s`.
    assert!(
        stderr(&out)
            .contains("clock: steps of 40.50ns (the loop's shortest iteration), 11.10ns per read"),
        "{}",
        stderr(&out)
    );
    let shown = json_of(&[
        "profile",
        "show",
        profile.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(shown["clock"]["resolution_ps"], 40_500.0);
    assert_eq!(shown["clock"]["read_ps"], 11_100.0);
    let cols: String = (0..32).map(|r| format!(" Rank{r}Time(us)")).collect();
    let row: String = (0..32).map(|_| " 0.04").collect();
    let f = write(
        d,
        "pipelinedring_32_16.csv",
        &format!("#MessageSize{cols}\n16{row}\n"),
    );
    let validate = |extra: &[&str]| {
        let mut a = vec![
            "validate",
            f.to_str().unwrap(),
            "--noise",
            profile.to_str().unwrap(),
            "--reps",
            "5",
            "--format",
            "json",
            "-q",
        ];
        a.extend(extra);
        json_of(&a)
    };
    // Each of 32 ranks reads a step with probability 11.1/40.5: the slowest almost surely
    // does.
    let v = validate(&[]);
    let b = &v["benchmarks"][0];
    assert_eq!(b["simulated_mean_ps"], 40_500, "{b}");
    assert_eq!(v["settings"]["clock_read_ps"], 11_100);
    // A perfect clock reads what was simulated: nothing.
    let v = validate(&["--clock-resolution", "0", "--clock-read", "0"]);
    assert_eq!(v["benchmarks"][0]["simulated_mean_ps"], 0);
}

/// A parent of run directories is refused with the runs it holds named; a broken link among
/// the measured files is listed with its reason while the others run; a profile without OS
/// noise validates in the noise it holds (`net`) when no `--noise-mode` is given.
#[test]
fn run_directories_broken_links_and_a_profile_without_os_noise() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let parent = d.join("runs");
    let mut all = String::new();
    for (k, run) in ["2022_05_06", "2022_05_09"].iter().enumerate() {
        let sub = parent.join(run);
        std::fs::create_dir_all(&sub).unwrap();
        write(
            &sub,
            "pipelinedring_2_16.csv",
            &format!("{HEADER2}16 1.0 2.0\n"),
        );
        // One run directory, then two.
        all += &err_of(d, &[&parent]);
        if k == 0 {
            all += "--\n";
        }
    }
    // The example's latency and bandwidth captures, no OS noise.
    let (out, profile) = crate::cli::calibrate(d, "net_only.h5", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = parent.join("2022_05_06");
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("gone.csv"), run.join("pipelinedring_4_16.csv")).unwrap();
    let json = json_of(&[
        "validate",
        run.to_str().unwrap(),
        "--noise",
        profile.to_str().unwrap(),
        "--reps",
        "2",
        "--format",
        "json",
        "-q",
    ]);
    assert_eq!(json["settings"]["noise_mode"], "net", "{json:#}");
    assert_eq!(json["benchmarks"][0]["benchmark"], "pipelinedring_2_16");
    #[cfg(unix)]
    {
        assert_eq!(json["summary"]["not_simulated"], 1, "{json:#}");
        all += &serde_json::to_string_pretty(&json["not_simulated"])
            .unwrap()
            .replace(d.to_str().unwrap(), "[tmp]");
    }
    insta::assert_snapshot!(all);
}
