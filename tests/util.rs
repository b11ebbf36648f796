//! Helpers: running the real binary and finding the shared reference data.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared` beside the checkout, if present.
pub fn shared() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if p.join("README.md").exists() {
        Some(p)
    } else {
        None
    }
}

/// Returns the shared dir or prints why the test is skipped.
#[macro_export]
macro_rules! shared_or_skip {
    () => {
        match $crate::util::shared() {
            Some(p) => p,
            None => {
                eprintln!(
                    "skipping: ../shared (reference data) is not present beside the checkout"
                );
                return;
            }
        }
    };
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// The repository root, where [`run_here`] runs the binary.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_loggops-sim"))
}

/// Runs the binary from the repository root, so paths in its messages are stable.
pub fn run_here(args: &[&str]) -> Output {
    bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("spawn loggops-sim")
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("spawn loggops-sim")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// LogGOPSim's output without its wall-clock `PERFORMANCE:` line.
pub fn strip_performance(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with("PERFORMANCE:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A capture file of a set: `STEM.xz` when present, else `STEM`.
pub fn capture_file(set_dir: &Path, stem: &str) -> PathBuf {
    let xz = set_dir.join(format!("{stem}.xz"));
    if xz.exists() {
        xz
    } else {
        set_dir.join(stem)
    }
}

/// `calibrate` on a capture set of ../shared in the acceptance command's form (latency,
/// bandwidth, OS noise, LogGP, `--set-S`, `--bandwidth-stripes`), with `extra` flags, into
/// `out` (`--set-S` only when `s` is given); panics with calibrate's message when it fails.
pub fn calibrate_capture_set(
    set_dir: &Path,
    set: &str,
    s: Option<&str>,
    stripes: &str,
    extra: &[&str],
    out: &Path,
) {
    let f = |stem: &str| capture_file(set_dir, stem).to_str().unwrap().to_string();
    let (lat, bw, os) = (
        f("ng_netnoise_mpi_lat.out"),
        f("ng_netnoise_mpi_bw.out"),
        f("ng_osnoise.out"),
    );
    let loggp = set_dir.join("ng_loggp.out");
    let mut args = vec![
        "calibrate",
        "--system",
        set,
        "--latency",
        &lat,
        "--bandwidth",
        &bw,
        "--os-noise",
        &os,
        "--loggp",
        loggp.to_str().unwrap(),
        "--bandwidth-stripes",
        stripes,
        "-o",
        out.to_str().unwrap(),
    ];
    if let Some(s) = s {
        args.extend_from_slice(&["--set-S", s]);
    }
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{set}: {}", stderr(&o));
}

/// The CPU time of process `pid` so far, in clock ticks (user + system, `/proc/PID/stat`).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Presses Ctrl-C (SIGINT) on `child` once it has computed for `ticks` clock ticks of CPU (so
/// that it is past its start-up and working). Needs `/proc`.
pub fn ctrl_c_once_working(child: &mut std::process::Child, ticks: u64) {
    let pid = child.id();
    let start = std::time::Instant::now();
    while cpu_ticks(pid).unwrap_or(0) < ticks {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the process ended ({status}) before Ctrl-C");
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(600),
            "the process does not start working"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let kill = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
}

/// The shipped profiles (`calibration/*.h5`), sorted; there are at least eight.
pub fn shipped_profiles() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "h5"))
        .collect();
    v.sort();
    assert!(v.len() >= 8, "{v:?}");
    v
}
