//! Behaviour of the command line that users see: messages are pinned with insta snapshots.
use std::path::Path;

use crate::util::{root, run, run_here, stderr, stdout, write_file};

fn err_of(args: &[&str]) -> String {
    let out = run_here(args);
    assert!(
        !out.status.success(),
        "expected failure: {args:?}\n{}",
        stdout(&out)
    );
    stderr(&out)
}

#[test]
fn missing_goal_is_a_clear_error() {
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out));
}

#[test]
fn zero_nodes() {
    insta::assert_snapshot!(err_of(&["--goal", "goal/ring_512MiB.goal", "--nodes", "0"]));
}

#[test]
fn missing_profile_is_named_once() {
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "4",
        "--noise",
        "no/such/profile.h5",
    ]));
}

#[test]
fn bad_repetition_counts() {
    insta::assert_snapshot!(err_of(&["--goal", "goal/ring_512MiB.goal", "--reps", "0"]));
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--reps",
        "many"
    ]));
}

#[test]
fn parametric_schedule_needs_nodes() {
    insta::assert_snapshot!(err_of(&["--goal", "goal/ring_512MiB.goal"]));
}

#[test]
fn bad_units() {
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "4",
        "-L",
        "3 parsecs"
    ]));
    insta::assert_snapshot!(err_of(&[
        "--goal",
        "goal/ring_512MiB.goal",
        "--nodes",
        "4",
        "-S",
        "1.5B"
    ]));
}

#[test]
fn gen_errors() {
    insta::assert_snapshot!(err_of(&[
        "gen",
        "allreduce_tree",
        "--nodes",
        "4",
        "--size",
        "1KiB"
    ]));
    insta::assert_snapshot!(err_of(&[
        "gen",
        "allreduce_recdoub",
        "--nodes",
        "6",
        "--size",
        "1KiB"
    ]));
    insta::assert_snapshot!(err_of(&[
        "gen",
        "dissemination",
        "--nodes",
        "4",
        "--size",
        "0B"
    ]));
    insta::assert_snapshot!(err_of(&[
        "gen",
        "dissemination",
        "--nodes",
        "4",
        "--size",
        "99999999999TiB"
    ]));
}

#[test]
fn explicit_file_errors_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.goal");
    std::fs::write(
        &f,
        "num_ranks 2\nrank 0 {\nsend 16b to 1\nl2 requires l9\n}\nrank 1 {\nrecv 16b from 0\n}\n",
    )
    .unwrap();
    let e = err_of(&["--goal", f.to_str().unwrap()]).replace(dir.path().to_str().unwrap(), "[tmp]");
    insta::assert_snapshot!(e);
    // An explicit file cannot be resized.
    let ok = dir.path().join("ok.goal");
    std::fs::write(
        &ok,
        "num_ranks 2\nrank 0 {\nsend 16b to 1\n}\nrank 1 {\nrecv 16b from 0\n}\n",
    )
    .unwrap();
    let e = err_of(&["--goal", ok.to_str().unwrap(), "--nodes", "4"])
        .replace(dir.path().to_str().unwrap(), "[tmp]");
    insta::assert_snapshot!(e);
}

/// A file of another kind (binary junk without LogGOPSim's cookie) is said to be one, and its
/// bytes are not written to the terminal as they are.
#[test]
fn binary_junk_is_not_goal() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("junk.bin");
    std::fs::write(&f, b"cx\x00\x1b[2J\x01\xff\xfe junk\n").unwrap();
    let e = err_of(&["--goal", f.to_str().unwrap()]).replace(dir.path().to_str().unwrap(), "[tmp]");
    assert!(
        !e.chars().any(|c| c.is_control() && c != '\n'),
        "control characters: {e:?}"
    );
    insta::assert_snapshot!(e);
}

/// `l: calcc 50` is an unknown op, not `calc` followed by a bad duration.
#[test]
fn a_misspelt_op_is_an_unknown_op() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_file(
        dir.path(),
        "op.goal",
        "num_ranks 1\nrank 0 {\nl1: calcc 50\n}\n",
    );
    let e = err_of(&["--goal", f.to_str().unwrap()]);
    assert!(e.contains("unknown op"), "{e}");
    assert!(!e.contains("duration"), "{e}");
    assert!(e.contains(":3:5"), "located at the op: {e}");
}

#[test]
fn unmatched_messages_are_reported_with_labels_and_no_time() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dead.goal");
    std::fs::write(&f, "num_ranks 2\nrank 0 {\nsnd: send 16b to 1 tag 3\nc: calc 5\nc requires snd\n}\nrank 1 {\nrcv: recv 16b from 0 tag 4\n}\n").unwrap();
    let out = run_here(&["--goal", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty(), "no time may be printed");
    insta::assert_snapshot!(stderr(&out).replace(dir.path().to_str().unwrap(), "[tmp]"));
    // With noise the same: what was left over, named, and exit status 1.
    for extra in [
        &["--reps", "3"][..],
        &["--noise-mode", "none"],
        &["--critical-path"],
    ] {
        let mut args = vec![
            "--goal",
            f.to_str().unwrap(),
            "--noise",
            "calibration/aws.h5",
            "-q",
        ];
        args.extend_from_slice(extra);
        let noisy = run_here(&args);
        assert_eq!(
            noisy.status.code(),
            Some(1),
            "{extra:?}: {}",
            stderr(&noisy)
        );
        assert!(stdout(&noisy).is_empty(), "no time may be printed");
        assert_eq!(stderr(&noisy), stderr(&out), "{extra:?}");
    }
}

#[test]
fn gen_writes_what_the_simulator_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ring.goal");
    let out = run_here(&[
        "gen",
        "allreduce_ring",
        "--nodes",
        "16",
        "--size",
        "16MiB",
        "-o",
        f.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run_here(&["--compat", "loggopsim", "--goal", f.to_str().unwrap(), "-b"]);
    // LOGGOPSIM.md §11: ring 16 MiB, P = 16, default parameters (stable order).
    assert!(
        stdout(&out).contains("Maximum finishing time at host 0: 188908500 ("),
        "{}",
        stdout(&out)
    );
}

/// `--compat loggopsim` counts ticks of 1 ns: a duration with a unit is that many ns, in an
/// explicit file and in a rank-parametric one alike (a microsecond was 1,000,000 ticks), and a
/// rank-parametric schedule runs as the GOAL `gen` writes.
#[test]
fn compat_reads_durations_with_units_as_ns_ticks() {
    let dir = tempfile::tempdir().unwrap();
    let explicit = dir.path().join("e.goal");
    std::fs::write(&explicit, "num_ranks 1\nrank 0 {\nl1: calc 1us\n}\n").unwrap();
    let parametric = dir.path().join("p.goal");
    std::fs::write(&parametric, "loggops-schedule 1\ncalc 1us\n").unwrap();
    for (f, nodes) in [(&explicit, None), (&parametric, Some("1"))] {
        let mut args = vec!["--compat", "loggopsim", "--goal", f.to_str().unwrap(), "-b"];
        args.extend(nodes.iter().flat_map(|n| ["--nodes", *n]));
        let out = run_here(&args);
        assert!(
            stdout(&out).contains("Maximum finishing time at host 0: 1000 (1e-06 s)"),
            "{f:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    let g = "goal/dgemm128_dissemination_128KiB.goal";
    let written = dir.path().join("g.goal");
    let out = run_here(&[
        "gen",
        "--goal",
        g,
        "--nodes",
        "4",
        "-o",
        written.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let compat = |goal: &str, nodes: &[&str]| {
        let mut args = vec!["--compat", "loggopsim", "--goal", goal, "-b"];
        args.extend(nodes);
        stdout(&run_here(&args))
    };
    let direct = compat(g, &["--nodes", "4"]);
    assert!(direct.contains("host 0: 1602735 ("), "{direct}");
    assert_eq!(direct, compat(written.to_str().unwrap(), &[]));
}

#[test]
fn json_output_has_integer_picoseconds() {
    let out = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "1024",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["cells"][0];
    // 10 rounds of 2o + L + 15G with LogGOPSim's defaults read as ns.
    let want = 10 * (3_000_000 + 2_500_000 + 15 * 6_000);
    assert_eq!(c["samples_ps"][0].as_u64(), Some(want));
    assert_eq!(c["median_ps"].as_u64(), Some(want));
    assert_eq!(c["noiseless_ps"].as_u64(), Some(want));
    assert_eq!(c["nodes"], 1024);
    assert_eq!(c["noise_mode"], "none");
    assert_eq!(c["run"]["messages"], 10 * 1024);
    assert_eq!(v["plan"]["systems"][0]["near"]["L_ps"], 2_500_000);
}

#[test]
fn monte_carlo_results_do_not_depend_on_the_thread_count() {
    for reps in ["200", "auto"] {
        thread_count_independent(reps);
    }
}

/// `--reps auto` says when a cell stopped at its cap short of the precision it aims at (the
/// 16-rank GCP dissemination needs more than 1000 repetitions for ±0.5 %, the 16-rank Azure
/// ring 32).
#[test]
fn reps_auto_says_when_its_cap_was_not_enough() {
    let run = |goal: &str, noise: &str| {
        let out = run_here(&[
            "--goal",
            goal,
            "--nodes",
            "64",
            "--noise",
            noise,
            "--why-reps",
            "0",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let short = run("goal/dissemination_16B.goal", "calibration/gcp.h5");
    assert!(
        short.contains("--reps auto did NOT reach its precision in 1 cell(s) by 1000 repetitions"),
        "{short}"
    );
    let precise = run("goal/ring_512MiB.goal", "calibration/azure.h5");
    assert!(!precise.contains("did NOT reach"), "{precise}");
}

fn thread_count_independent(reps: &'static str) {
    let args = |t: &'static str| {
        vec![
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "64,256",
            "--noise",
            "calibration/paper/alps.h5",
            "--noise-mode",
            "os,net,os+net",
            "--reps",
            reps,
            "--seed",
            "42",
            "--format",
            "json",
            "-q",
            "--threads",
            t,
        ]
    };
    let one = run_here(&args("1"));
    let two = run_here(&args("2"));
    assert!(one.status.success(), "{}", stderr(&one));
    // Everything but the command line (which names the thread count) is the same.
    let without_command = |o: &std::process::Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.as_object_mut().unwrap().remove("command");
        v
    };
    assert_eq!(without_command(&one), without_command(&two));
    let v: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let cells = v
        .as_array()
        .or_else(|| v["cells"].as_array())
        .expect("a list of cells");
    assert_eq!(cells.len(), 6);
    if reps == "auto" {
        // Every cell stops at a checkpoint: 32, 64, ..., 512 or 1000 repetitions.
        for c in cells {
            let n = c["n"].as_u64().expect("n");
            assert!([32, 64, 128, 256, 512, 1000].contains(&n), "n = {n}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hardening (issue 32): odd output files, huge runs, deep nesting, closed pipes, warnings,
// flags that do not apply, implausible captures, clashing files, negative numbers.

/// `stderr` with the temporary directory replaced by `[tmp]`.
fn masked(out: &std::process::Output, dir: &Path) -> String {
    stderr(out).replace(dir.to_str().unwrap(), "[tmp]")
}

/// The machine's memory in a refusal replaced by `[mem]` (it differs between machines).
fn mask_memory(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("this machine has ") {
        out.push_str(&rest[..i + "this machine has ".len()]);
        rest = &rest[i + "this machine has ".len()..];
        let end = rest.find(" available").unwrap_or(0);
        out.push_str("[mem]");
        rest = &rest[end..];
        if let Some(a) = rest.find("of it (") {
            let a = a + "of it (".len();
            if let Some(b) = rest[a..].find(')') {
                out.push_str(&rest[..a]);
                out.push_str("[limit]");
                rest = &rest[a + b..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Runs the example captures of calibration/example through `calibrate` with extra flags.
pub(crate) fn calibrate(
    dir: &Path,
    name: &str,
    extra: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    let out_path = dir.join(name);
    let mut args = vec![
        "calibrate",
        "--system",
        "demo",
        "--set-L",
        "2us",
        "--set-o",
        "1us",
        "--set-g",
        "1us",
        "--set-G",
        "0.1ns",
        "--set-S",
        "64KiB",
        "-o",
        out_path.to_str().unwrap(),
    ];
    for (flag, file) in [("--latency", "lat.txt"), ("--bandwidth", "bw.txt")] {
        if !extra.contains(&flag) {
            args.push(flag);
            args.push(match file {
                "lat.txt" => "calibration/example/lat.txt",
                _ => "calibration/example/bw.txt",
            });
        }
    }
    args.extend_from_slice(extra);
    (run_here(&args), out_path)
}

/// The file type of `p` itself (a symlink is not followed).
#[cfg(unix)]
fn file_type(p: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(p).unwrap().file_type()
}

/// Each case's arguments (split at white space) and the error it gives, one after the other.
fn errors_of(cases: &[String]) -> String {
    cases
        .iter()
        .map(|c| {
            let a: Vec<&str> = c.split_whitespace().collect();
            format!("{c}\n  {}", err_of(&a))
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn devices_fifos_and_symlinks_are_written_through_and_read_only_files_refused() {
    let dir = tempfile::tempdir().unwrap();
    // A device stays a device (as root it used to be replaced by a regular file).
    let out = run_here(&[
        "gen",
        "dissemination",
        "--nodes",
        "4",
        "--size",
        "16B",
        "-o",
        "/dev/null",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    use std::os::unix::fs::FileTypeExt;
    assert!(file_type(Path::new("/dev/null")).is_char_device());
    // /dev/stdout is the process's stdout (it used to need a temporary file in /dev).
    let out = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4",
        "--output",
        "/dev/stdout",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("4 ranks: finishes at 11.18us"),
        "{}",
        stdout(&out)
    );
    // A full device is a clear error.
    if Path::new("/dev/full").exists() {
        let out = run_here(&[
            "gen",
            "dissemination",
            "--nodes",
            "64",
            "--size",
            "16B",
            "-o",
            "/dev/full",
        ]);
        assert_eq!(out.status.code(), Some(2));
        insta::assert_snapshot!("output_dev_full", stderr(&out));
        assert!(file_type(Path::new("/dev/full")).is_char_device());
    }
    // A FIFO is written through to its reader.
    let fifo = dir.path().join("schedule.fifo");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        let out = run_here(&[
            "gen",
            "dissemination",
            "--nodes",
            "2",
            "--size",
            "16B",
            "-o",
            fifo.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(file_type(&fifo).is_fifo());
        assert!(reader.join().unwrap().starts_with("num_ranks 2\n"));
    }
    // A symlink keeps pointing at its target, which gets the new content.
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/samples.csv"), "old").unwrap();
    let link = dir.path().join("samples.csv");
    std::os::unix::fs::symlink("real/samples.csv", &link).unwrap();
    let out = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4",
        "--noise",
        "calibration/paper/alps.h5",
        "--reps",
        "2",
        "-q",
        "--samples",
        link.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(file_type(&link).is_symlink());
    let csv = std::fs::read_to_string(dir.path().join("real/samples.csv")).unwrap();
    assert!(
        csv.starts_with("workload,system,nodes,noise_mode,rep,time_ps"),
        "{csv}"
    );
    // A read-only file is refused and kept.
    use std::os::unix::fs::PermissionsExt;
    let frozen = dir.path().join("frozen.h5");
    std::fs::write(&frozen, "old profile").unwrap();
    std::fs::set_permissions(&frozen, std::fs::Permissions::from_mode(0o444)).unwrap();
    let (out, _) = calibrate(dir.path(), "frozen.h5", &[]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("output_read_only", masked(&out, dir.path()));
    assert_eq!(std::fs::read_to_string(&frozen).unwrap(), "old profile");
}

#[test]
fn huge_node_counts_are_refused_before_anything_is_allocated() {
    let noiseless = err_of(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "4000000000",
    ]);
    let noisy = err_of(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "64,4000000000",
        "--noise",
        "calibration/paper/alps.h5",
        "--threads",
        "2",
    ]);
    insta::assert_snapshot!(
        "huge_node_counts",
        mask_memory(&format!("{noiseless}{noisy}"))
    );
}

#[test]
fn deeply_nested_schedules_are_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("deep.goal");
    std::fs::write(
        &f,
        format!(
            "loggops-schedule 1\nsend 1B to {}rank{}\n",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
    )
    .unwrap();
    let out = run_here(&["--goal", f.to_str().unwrap(), "--nodes", "4"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let first = masked(&out, dir.path()).lines().next().unwrap().to_string();
    insta::assert_snapshot!("deep_parentheses", first);
}

#[cfg(unix)]
#[test]
fn closed_pipes_end_the_run_quietly() {
    let closed = || {
        let (r, w) = std::io::pipe().unwrap();
        drop(r);
        w
    };
    // An error message to a closed stderr (it used to panic: exit 101).
    let out = crate::util::bin()
        .current_dir(root())
        .args(["gen", "dissemination", "--nodes", "4"])
        .stderr(closed())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A schedule to a closed stdout, warnings to a closed stderr.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dup.goal");
    std::fs::write(&f, "num_ranks 1\nrank 0 {\na: calc 5\na: calc 6\n}\n").unwrap();
    for args in [
        vec!["gen", "dissemination", "--nodes", "1024", "--size", "16B"],
        vec!["--goal", f.to_str().unwrap()],
    ] {
        let out = crate::util::bin()
            .current_dir(root())
            .args(&args)
            .stdout(closed())
            .stderr(closed())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn goal_parser_warnings_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("warn.goal");
    std::fs::write(
        &f,
        "num_ranks 1\nrank 0 {\na: calc 5\na: calc 6\nb: calc 1\nb requires a\n}\nrank 1 {\ncalc 1\n}\n",
    )
    .unwrap();
    let out = run_here(&["--goal", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!("goal_warnings", masked(&out, dir.path()));
}

#[test]
fn flags_that_do_not_apply_are_errors() {
    let g = "--goal goal/dissemination_16B.goal --nodes 4";
    let gen = "gen dissemination --nodes 16 --size 16B";
    let cal = "calibrate --system x --latency a --bandwidth b -o x.h5";
    let cases = [
        format!("{g} --noise-mode os"),
        format!("{g} --reps 10"),
        format!("{g} --cosched"),
        format!("{g} --absolute-latency"),
        format!("{g} --seed 7"),
        format!("{g} -b"),
        format!("--compat loggopsim {g} --noise calibration/paper/aws.h5"),
        format!("--compat loggopsim {g} --format json"),
        format!("--compat loggopsim {g} --samples f.csv"),
        format!("--compat loggopsim {g} --plot f.svg"),
        format!("--compat loggopsim {g} --report r.html"),
        format!("--compat loggopsim {g} --rndv-3l true"),
        format!("--compat loggopsim {g} --model queued"),
        format!("--compat loggopsim {g} --timeline t.json"),
        format!("{g} --critical-path-top 5"),
        format!("{g} --timeline-ranks 0-3"),
        format!("{g} --timeline t.json --timeline-rep 2"),
        format!("{g} --noise calibration/paper/aws.h5 --reps 4 --timeline t.json --timeline-rep 4"),
        format!("{g} --tick 1ps"),
        format!("{gen} --root 9 --nway 3"),
        format!("{gen} --root 9"),
        "gen allreduce_ring --nodes 16 --size 16B --segmentsize 1B".to_string(),
        "gen --goal goal/dissemination_16B.goal --nodes 16 --size 16B".to_string(),
        format!("{gen} --param size=1B"),
        format!("{cal} --provider AWS"),
        format!("{cal} --price-class hpc"),
        format!("{g} --noise calibration/paper/aws.h5 --noise-mode none --job-runs 100"),
        format!("{g} --noise calibration/paper/aws.h5 --spot-price 0.5 --spot-interruptions -0.1"),
    ];
    let report = errors_of(&cases);
    insta::assert_snapshot!("flags_that_do_not_apply", report);
    // Defaults never count as given, and flags that apply pass.
    for ok in [
        format!("{g} --order stable --format csv"),
        format!("{g} --model queued --format csv"),
        format!("--compat loggopsim {g} --model loggopsim --output /dev/null"),
        "gen binomialtreebcast --nodes 16 --size 16B --root 9 -o /dev/null".to_string(),
    ] {
        let out = run_here(&ok.split_whitespace().collect::<Vec<_>>());
        assert!(out.status.success(), "{ok}: {}", stderr(&out));
    }
}

#[test]
fn implausible_and_too_few_samples_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lat = std::fs::read_to_string(root().join("calibration/example/lat.txt")).unwrap();
    // One corrupt row among good ones.
    let bad = dir.path().join("lat_1e300.txt");
    std::fs::write(&bad, lat.replacen("\n1\t", "\n1\t1e300\n1\t", 1)).unwrap();
    let (out, p) = calibrate(dir.path(), "a.h5", &["--latency", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!p.exists());
    // A 25-row capture: 4 samples after the warm-up.
    let short = dir.path().join("lat_25.txt");
    std::fs::write(
        &short,
        lat.lines()
            .take(26)
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let (out2, p2) = calibrate(dir.path(), "b.h5", &["--latency", short.to_str().unwrap()]);
    assert_eq!(out2.status.code(), Some(2));
    assert!(!p2.exists());
    insta::assert_snapshot!(
        "implausible_and_few_samples",
        format!("{}{}", masked(&out, dir.path()), masked(&out2, dir.path()))
    );
    // The advice works.
    let (out, p) = calibrate(
        dir.path(),
        "c.h5",
        &["--latency", short.to_str().unwrap(), "--min-samples", "4"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.exists());
}

#[test]
fn calibrate_advice_names_flags_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let lat = std::fs::read_to_string(root().join("calibration/example/lat.txt")).unwrap();
    let rows: Vec<&str> = lat.lines().skip(1).collect();
    // One 2000-row run without a header in between: cut at 1000 rows unless --block-len none.
    let long = dir.path().join("long.txt");
    std::fs::write(
        &long,
        format!("#size\trtt\n{}\n{}\n", rows.join("\n"), rows.join("\n")),
    )
    .unwrap();
    let (out, _) = calibrate(dir.path(), "a.h5", &["--latency", long.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stderr(&out);
    let advice = report
        .lines()
        .find(|l| l.contains("run(s) longer than"))
        .expect("a block-length warning");
    assert!(
        advice.contains("use --block-len none if the file is one long run"),
        "{advice}"
    );
    let (out, _) = calibrate(
        dir.path(),
        "b.h5",
        &["--latency", long.to_str().unwrap(), "--block-len", "none"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("run(s) longer than"),
        "{}",
        stderr(&out)
    );
    // Two message sizes: the error names the flag that picks one, and the flag works.
    let mixed = dir.path().join("mixed.txt");
    let eight: String = rows
        .iter()
        .map(|r| r.replacen("1\t", "8\t", 1) + "\n")
        .collect();
    std::fs::write(&mixed, format!("{lat}#size\trtt\n{eight}")).unwrap();
    let (out, _) = calibrate(dir.path(), "c.h5", &["--latency", mixed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("mixed_sizes_advice", masked(&out, dir.path()));
    let (out, _) = calibrate(
        dir.path(),
        "d.h5",
        &["--latency", mixed.to_str().unwrap(), "--latency-size", "8B"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_calibrate_help_example_runs_when_pasted() {
    let out = run_here(&["calibrate", "--help"]);
    assert!(out.status.success());
    let help = stdout(&out);
    // The lines from `loggops-sim calibrate` to the first one without a `\` continuation.
    let start = help.find("  loggops-sim calibrate").expect("an example");
    // Written to fit 80 columns, so that no terminal wraps a value away from its flag.
    for l in help[help.find("Example").unwrap()..].lines() {
        assert!(
            l.chars().count() <= 80,
            "help line longer than 80 columns: {l:?}"
        );
    }
    let mut cmd = String::new();
    for l in help[start..].lines() {
        let (part, more) = match l.trim_end().strip_suffix('\\') {
            Some(p) => (p, true),
            None => (l.trim_end(), false),
        };
        cmd.push_str(part);
        cmd.push(' ');
        if !more {
            break;
        }
    }
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(&words[..2], ["loggops-sim", "calibrate"], "{cmd}");
    assert!(!cmd.contains("../shared"), "{cmd}");
    assert!(
        !cmd.contains('\'') && !cmd.contains('"'),
        "quote-free, so it splits like a shell: {cmd}"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = words[1..].iter().map(|w| w.to_string()).collect();
    let o = args.iter().position(|a| a == "-o").expect("-o FILE");
    args[o + 1] = dir.path().join(&args[o + 1]).display().to_string();
    let out = crate::util::bin()
        .current_dir(root())
        .args(&args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{cmd}\n{}", stderr(&out));
    assert!(Path::new(&args[o + 1]).exists());
}

#[test]
fn the_default_noise_mode_follows_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (out, profile) = calibrate(dir.path(), "net_only.h5", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = profile.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "--goal",
            "goal/dissemination_16B.goal",
            "--nodes",
            "4",
            "--noise",
            p,
            "--reps",
            "2",
            "-q",
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        run_here(&a)
    };
    let out = run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cells"][0]["noise_mode"], "net");
    let out = run(&["--noise-mode", "os+net"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(
        "noise_mode_the_profile_cannot_run",
        masked(&out, dir.path())
    );
    // The help says so.
    let help = stdout(&run_here(&["--help"]));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("net when a profile has no OS noise"),
        "{help}"
    );
}

#[test]
fn outputs_that_would_overwrite_inputs_or_each_other_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("s.goal");
    std::fs::write(&g, "loggops-schedule 1\nallreduce ring 1KiB\n").unwrap();
    let g = g.display();
    let r = dir.path().join("r.csv");
    let r = r.display();
    let missing = dir.path().join("no/such/dir/r.csv");
    let missing = missing.display();
    let m = dir.path().join("pipelinedring_2_16.csv");
    std::fs::write(&m, "#MessageSize Rank0Time(us) Rank1Time(us)\n16 1.5 2.5\n").unwrap();
    let m = m.display();
    let cal = "calibrate --system x --latency calibration/example/lat.txt \
               --bandwidth calibration/example/bw.txt";
    let cases = [
        format!(
            "--goal {g} --nodes 4 --noise calibration/paper/alps.h5 --output {r} --samples {r}"
        ),
        format!("--goal {g} --nodes 4 --output {g}"),
        format!("--goal {g} --nodes 4 --output {missing}"),
        format!("gen --goal {g} --nodes 4 -o {g}"),
        format!("{cal} --set-S 1B -o calibration/example/lat.txt"),
        format!("{cal} -o {r} --report {r}"),
        format!("validate {m} --noise calibration/paper/aws.h5 --output {m}"),
        format!("--goal {g} --nodes 4 --output {r} --timeline {r}"),
        format!("--goal {g} --nodes 4 --critical-path={g}"),
        // A directory no file can be created in (Linux's /proc): refused before the run,
        // and nothing else is written.
        format!("--goal {g} --nodes 4 --samples {r} --noise calibration/paper/alps.h5 --output /proc/r.json"),
    ];
    let report = errors_of(&cases).replace(dir.path().to_str().unwrap(), "[tmp]");
    assert!(!dir.path().join("r.csv").exists());
    insta::assert_snapshot!("clashing_files", report);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("s.goal")).unwrap(),
        "loggops-schedule 1\nallreduce ring 1KiB\n"
    );
}

#[test]
fn negative_numbers_get_a_plain_message() {
    let g = "--goal goal/dissemination_16B.goal";
    let val = "validate pipelinedring_2_16.csv --noise calibration/paper/aws.h5";
    let cal = "calibrate --system x --latency a --bandwidth b -o x.h5";
    let cases = [
        "gen dissemination --nodes 4 --size -5B".to_string(),
        "gen nwaydissemination --nodes 4 --size 5B --nway -2".to_string(),
        "gen dissemination --nodes -4 --size 5B".to_string(),
        format!("{g} --nodes -5"),
        format!("{g} --nodes 4 --noise calibration/paper/aws.h5 --reps -1"),
        format!("{g} --nodes 4 -L -2us"),
        format!("{g} --nodes 4 --tick -1ns"),
        "gen dissemination --nodes 4 --size 5B --tick -1ns".to_string(),
        format!("{val} --reps -1"),
        format!("{val} --seed -1"),
        format!("{val} --threads -2"),
        format!("{val} --call-overhead -1us"),
        format!("{cal} --warmup -1"),
        format!("{cal} --price-on-demand -3"),
    ];
    let report = errors_of(&cases);
    assert!(!report.contains("tip:"), "{report}");
    insta::assert_snapshot!("negative_numbers", report);
}

/// `gen` says when Schedgen's rules make a schedule other than its flags suggest: a fan-out
/// that wraps around onto the sender, data that does not divide among the ranks.
#[test]
fn gen_notes_wrapped_fan_outs_and_data_left_over() {
    let note = |args: &[&str]| {
        let o = run_here(args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let nway = |n: &str| {
        note(&[
            "gen",
            "nwaydissemination",
            "--nodes",
            "8",
            "--size",
            "16B",
            "--nway",
            n,
        ])
    };
    assert_eq!(nway("7"), "");
    assert_eq!(
        nway("8"),
        "note: --nway 8 with 8 ranks: a round's partners r+1 ... r+8 wrap around, so every rank sends to itself (at most 7 partners are distinct)\n"
    );
    assert!(nway("9").contains("sends to itself and to some ranks more than once"));
    let ring = |size: &str| note(&["gen", "allreduce_ring", "--nodes", "3", "--size", size]);
    assert_eq!(ring("3KiB"), "");
    assert_eq!(
        ring("16KiB"),
        "note: --size 16384B over 3 ranks: chunks of 5461B, 1B of the data not sent (Schedgen divides the data evenly, rounding down)\n"
    );
    // A tick other than LogGOPSim's 1 ns is named, as the file cannot hold it; without a calc
    // there is nothing to say.
    let ticked = |pattern: &str, tick: &str| {
        note(&[
            "gen", pattern, "--nodes", "4", "--size", "16B", "--tick", tick,
        ])
    };
    assert_eq!(
        ticked("nwaydissemination", "1ps"),
        "note: calc numbers are ticks of 1ps, which the file does not record: read it back with --tick 1ps\n"
    );
    assert_eq!(ticked("nwaydissemination", "1ns"), "");
    assert_eq!(ticked("binomialtreebcast", "1ps"), "");
}

/// `gen` writes calc durations as plain ticks (1 ns by default) that read back to the same
/// durations: the expanded DGEMM + dissemination schedule simulates as the parametric one does.
#[test]
fn gen_writes_calc_in_ticks_that_read_back_to_the_same_durations() {
    let dir = tempfile::tempdir().unwrap();
    let max_time = |args: &[&str]| -> u64 {
        let out = run_here(&[args, &["--format", "json"][..]].concat());
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["cells"][0]["noiseless_ps"].as_u64().unwrap()
    };
    let parametric = "goal/dgemm128_dissemination_128KiB.goal";
    let want = max_time(&["--goal", parametric, "--nodes", "4"]);
    for tick in [None, Some("1ps"), Some("1us")] {
        let f = dir.path().join("dgemm.goal");
        let mut gen = vec![
            "gen",
            "--goal",
            parametric,
            "--nodes",
            "4",
            "-o",
            f.to_str().unwrap(),
        ];
        let mut sim = vec!["--goal", f.to_str().unwrap()];
        if let Some(t) = tick {
            gen.extend(["--tick", t]);
            sim.extend(["--tick", t]);
        }
        let out = run_here(&gen);
        if tick == Some("1us") {
            // 18.883 us is not a whole number of microseconds.
            assert!(!out.status.success());
            insta::assert_snapshot!("gen_tick_too_coarse", stderr(&out));
            assert!(!f.exists(), "nothing may be written");
            continue;
        }
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(&f).unwrap();
        let dgemm = if tick.is_none() {
            "calc 18883\n"
        } else {
            "calc 18883000\n"
        };
        assert!(text.contains(dgemm), "{tick:?}: {}", &text[..400]);
        assert_eq!(max_time(&sim), want, "{tick:?}");
        std::fs::remove_file(&f).unwrap();
    }
}

/// Schedgen's nwaydissemination writes `calc <datasize>`: D ticks, whatever the tick.
#[test]
fn gen_nwaydissemination_reduction_calcs_are_d_ticks() {
    for tick in ["1ns", "1ps"] {
        let out = run_here(&[
            "gen",
            "nwaydissemination",
            "--nodes",
            "4",
            "--size",
            "16B",
            "--tick",
            tick,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("l4: calc 16\n"), "{}", stdout(&out));
    }
}

#[test]
fn tick_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_file(
        dir.path(),
        "long.goal",
        "num_ranks 1\nrank 0 {\nl1: calc 5\nl2: calc 18446744073709552\n}\n",
    );
    let path = f.to_str().unwrap();
    let tmp = |s: String| s.replace(dir.path().to_str().unwrap(), "[tmp]");
    // 2^64 / 1000 ticks of 1 ns overflow u64 ps, located; with a 1 ps tick it is a time.
    insta::assert_snapshot!("tick_overflow", tmp(err_of(&["--goal", path])));
    let ok = run_here(&["--goal", path, "--tick", "1ps", "--format", "json"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    insta::assert_snapshot!(
        "tick_without_unit",
        err_of(&["--goal", path, "--tick", "1000"])
    );
    insta::assert_snapshot!(
        "tick_in_compat_mode",
        err_of(&["--compat", "loggopsim", "--goal", path, "--tick", "1ps"])
    );
}

/// The output says which tick plain calc numbers were read in, noiseless and noisy.
#[test]
fn output_names_the_tick() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_file(
        dir.path(),
        "pingpong.goal",
        "num_ranks 2\nrank 0 {\nl1: calc 1500\nl2: send 8b to 1\nl2 requires l1\n}\nrank 1 {\nrecv 8b from 0\n}\n",
    );
    let path = f.to_str().unwrap();
    let out = run_here(&["--goal", path, "--tick", "1ps"]);
    let human = stdout(&out);
    assert!(
        human
            .lines()
            .next()
            .unwrap()
            .ends_with("(stable order, loggopsim model; plain calc numbers are ticks of 1ps)"),
        "{human}"
    );
    let noisy = |format: &str| {
        let out = run_here(&[
            "--goal",
            path,
            "--noise",
            "calibration/paper/aws.h5",
            "--reps",
            "2",
            "-q",
            "--format",
            format,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let table = noisy("human");
    assert_eq!(
        table.lines().next().unwrap(),
        format!("{path}: plain calc numbers are ticks of 1ns (--tick)")
    );
    let v: serde_json::Value = serde_json::from_str(&noisy("json")).unwrap();
    assert_eq!(v["plan"]["settings"]["tick_ps"].as_u64(), Some(1000));
}
