//! The library API (`loggops_sim::api`, what the Python module calls): the CLI's numbers and
//! messages for the same flags, and a poll that stops a sweep as Ctrl-C does.
use loggops_sim::api::{self, LogGops, Runner, SweepRequest, ValidateRequest};

use crate::util::{run_here, stderr, stdout};

fn acceptance() -> SweepRequest {
    SweepRequest {
        noise: vec!["calibration/paper/aws.h5".into()],
        nodes: vec![64],
        noise_mode: vec!["os+net".into()],
        reps: Some("50".into()),
        seed: Some(3),
        ..SweepRequest::new("goal/dissemination_16B.goal")
    }
}

#[test]
fn a_sweep_gives_the_clis_json_csv_and_samples() {
    let run = api::sweep(&acceptance()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.csv");
    let flags = [
        "--goal",
        "goal/dissemination_16B.goal",
        "--noise",
        "calibration/paper/aws.h5",
        "--nodes",
        "64",
        "--noise-mode",
        "os+net",
        "--reps",
        "50",
        "--seed",
        "3",
    ];
    let json = run_here(&[&flags[..], &["--format", "json"]].concat());
    let csv = run_here(
        &[
            &flags[..],
            &["--format", "csv", "--samples", samples.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(json.status.success() && csv.status.success());
    let cli: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let ours: serde_json::Value = serde_json::from_str(&run.json()).unwrap();
    assert_eq!(ours["cells"][0]["mean_ps"], cli["cells"][0]["mean_ps"]);
    // Everything but the wall times and the recorded command (`--goal=FILE` form).
    assert_eq!(ours["cells"], cli["cells"]);
    assert_eq!(ours["plan"], cli["plan"]);
    assert_eq!(run.cells_csv(), stdout(&csv));
    assert_eq!(
        run.samples_csv(),
        std::fs::read_to_string(&samples).unwrap()
    );
    assert!(run.complete());
    assert_eq!(
        run.result.command,
        "loggops-sim --goal=goal/dissemination_16B.goal --noise=calibration/paper/aws.h5 --nodes=64 \
         --noise-mode=os+net --reps=50 --seed=3"
    );
}

#[test]
fn errors_are_the_clis_messages() {
    let cases: Vec<(SweepRequest, Vec<&str>)> = vec![
        (
            SweepRequest::new("goal/missing.goal"),
            vec!["--goal", "goal/missing.goal"],
        ),
        (
            SweepRequest {
                seed: Some(3),
                ..SweepRequest::new("goal/dissemination_16B.goal")
            },
            vec!["--goal", "goal/dissemination_16B.goal", "--seed", "3"],
        ),
        (
            SweepRequest {
                noise: vec!["calibration/paper/aws.h5".into()],
                reps: Some("-2".into()),
                ..SweepRequest::new("goal/dissemination_16B.goal")
            },
            vec![
                "--goal",
                "goal/dissemination_16B.goal",
                "--noise",
                "calibration/paper/aws.h5",
                "--reps",
                "-2",
            ],
        ),
        (
            SweepRequest {
                loggops: LogGops {
                    big_g: Some("fast".into()),
                    ..LogGops::default()
                },
                nodes: vec![4],
                ..SweepRequest::new("goal/dissemination_16B.goal")
            },
            vec![
                "--goal",
                "goal/dissemination_16B.goal",
                "--nodes",
                "4",
                "-G",
                "fast",
            ],
        ),
    ];
    for (req, flags) in cases {
        let err = api::sweep(&req).unwrap_err();
        let out = run_here(&flags);
        assert_eq!(out.status.code(), Some(2));
        let first = stderr(&out).lines().next().unwrap().to_string();
        assert_eq!(format!("error: {err}"), first, "{flags:?}");
        assert!(!err.interrupted());
    }
    let err = api::validate(&ValidateRequest {
        measured: vec!["calibration/README.md".into()],
        noise: "calibration/paper/aws.h5".into(),
        ..ValidateRequest::default()
    })
    .unwrap_err();
    let out = run_here(&[
        "validate",
        "calibration/README.md",
        "--noise",
        "calibration/paper/aws.h5",
    ]);
    assert_eq!(format!("error: {err}\n"), stderr(&out));
    let err = api::profile("calibration/missing.h5".as_ref()).unwrap_err();
    let out = run_here(&["profile", "show", "calibration/missing.h5"]);
    assert_eq!(format!("error: {err}\n"), stderr(&out));
}

#[test]
fn a_poll_stops_a_sweep_and_the_next_call_runs_in_full() {
    let req = SweepRequest {
        noise: vec!["calibration/paper/aws.h5".into()],
        nodes: vec![256],
        reps: Some("1000000".into()),
        threads: Some(2),
        ..SweepRequest::new("goal/dissemination_16B.goal")
    };
    let mut polls = 0;
    let mut stop = || {
        polls += 1;
        polls >= 3
    };
    let run = Runner::stop_when(&mut stop).sweep(&req).unwrap();
    assert!(!run.complete());
    let reps = run
        .result
        .cells
        .iter()
        .map(|c| c.samples_ps.len())
        .sum::<usize>();
    assert!(reps < 1_000_000, "{reps}");
    assert!(run.result.cells.iter().all(|c| !c.complete));
    // The stop is withdrawn for the next call.
    let mut never = || false;
    let next = Runner::stop_when(&mut never).sweep(&acceptance()).unwrap();
    assert!(next.complete());
    assert_eq!(next.result.cells[0].samples_ps.len(), 50);
}

#[test]
fn critical_paths_are_the_clis_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("cp.csv");
    let out = run_here(&[
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "8,32",
        &format!("--critical-path={}", report.display()),
        "--format",
        "csv",
        "--output",
        dir.path().join("out.csv").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let x = api::critical_path(
        &SweepRequest {
            nodes: vec![8, 32],
            ..SweepRequest::new("goal/dissemination_16B.goal")
        },
        false,
    )
    .unwrap();
    assert_eq!(x.csv, std::fs::read_to_string(&report).unwrap());
    assert_eq!(x.sweep.result.cells.len(), 2);
}

/// `profile show` takes several files (a glob of profiles): each shown in turn, one JSON
/// array; `--plot` draws one profile and says so.
#[test]
fn profile_show_takes_several_files() {
    let (a, b) = ("calibration/aws.h5", "calibration/alps.h5");
    let one = |f: &str| stdout(&run_here(&["profile", "show", f]));
    let both = run_here(&["profile", "show", a, b]);
    assert!(both.status.success(), "{}", stderr(&both));
    assert_eq!(stdout(&both), format!("{}\n{}", one(a), one(b)));
    let json = stdout(&run_here(&["profile", "show", a, b, "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(2));
    let out = run_here(&["profile", "show", a, b, "--plot", "/tmp/never.svg"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--plot draws one profile"),
        "{}",
        stderr(&out)
    );
}
