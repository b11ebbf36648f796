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
