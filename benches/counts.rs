//! Deterministic figures of the cases in `benches/cases`: what the engine counts (messages,
//! LogGOPSim's events) and the instructions the measured code executes, counted by valgrind's
//! callgrind (Debian package `valgrind`). Unlike times they do not depend on how quiet the
//! machine is: the engine's counts are exact everywhere, the instruction counts are the same
//! on every run of the same build (a different compiler or target shifts them a little).
//!
//! ```text
//! cargo bench --bench counts                          # all cases, compared with the last run
//! cargo bench --bench counts -- ring                  # the cases whose name contains "ring"
//! cargo bench --bench counts -- --save-baseline main  # save as "main" (default: "last")
//! cargo bench --bench counts -- --baseline main       # compare with "main"
//! ```
//!
//! Each case runs in its own process under `valgrind --tool=callgrind`, which counts only
//! inside [`measured`] (`--toggle-collect`): the setup (parsing the schedule, reading the
//! profile, writing the binary file) is left out. Without valgrind on PATH the instruction
//! column is skipped with a printed reason and the engine's counts are still printed. Results
//! are saved (atomically) as tab-separated text in `target/counts/NAME.tsv`.
//! Run without `--bench` (as `cargo test --benches` does), every case runs once natively.

use std::collections::HashMap;
use std::hint::black_box;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

mod cases;

/// The argument that makes this binary the measured child: `--measure CASE`.
const MEASURE: &str = "--measure";
/// Callgrind counts instructions inside this function only (see [`callgrind`]).
const MEASURED: &str = "counts::measured";

/// The measured work of one case; its name is what callgrind's `--toggle-collect` matches.
#[inline(never)]
fn measured(p: &cases::Prepared) -> cases::Work {
    black_box(p).run()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == MEASURE) {
        let name = args.get(i + 1).expect("--measure CASE");
        let case = cases::all().into_iter().find(|c| c.name == name);
        let prepared = case.unwrap_or_else(|| panic!("no case {name}")).setup();
        black_box(measured(&prepared));
        return;
    }
    // Flags: --bench (cargo bench), --save-baseline NAME, --baseline NAME; the other
    // arguments are filters (a case runs when its name contains one of them).
    let (mut save, mut baseline, mut filter) = ("last".to_string(), None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{a} NAME")).clone();
        match a.as_str() {
            "--save-baseline" => save = value(),
            "--baseline" => baseline = Some(value()),
            _ if a.starts_with("--") => {}
            _ => filter.push(a.as_str()),
        }
    }
    let baseline = baseline.unwrap_or_else(|| save.clone());
    let cases: Vec<cases::Case> = cases::all()
        .into_iter()
        .filter(|c| filter.is_empty() || filter.iter().any(|f| c.name.contains(f)))
        .collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --benches`: check that every case runs.
        for c in &cases {
            let w = measured(&c.setup());
            println!("{}: {} {}: ok", c.name, w.units, w.unit);
        }
        return;
    }
    let valgrind = match Command::new("valgrind").arg("--version").output() {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => {
            println!(
                "skipping instruction counts: valgrind is not on PATH (Debian package `valgrind`)"
            );
            None
        }
    };
    let dir = target_dir().join("counts");
    let previous = read_results(&dir.join(format!("{baseline}.tsv")));
    if let Some(v) = &valgrind {
        println!("instructions counted by {v} (callgrind), compared with baseline \"{baseline}\"");
    }
    println!(
        "{:<42} {:>10} {:>9} {:>9} {:>14} {:>10} {:>9}",
        "case", "units", "unit", "events/u", "instructions", "instr/u", "change"
    );
    let mut rows = Vec::new();
    for c in &cases {
        let work = measured(&c.setup());
        let instructions = valgrind.as_ref().map(|_| callgrind(c.name));
        let per = |x: u64| x as f64 / work.units.max(1) as f64;
        let change = match (instructions, previous.get(c.name)) {
            (Some(n), Some(&(_, _, Some(old)))) if old > 0 => {
                format!("{:+.2} %", (n as f64 / old as f64 - 1.0) * 100.0)
            }
            _ => "-".into(),
        };
        println!(
            "{:<42} {:>10} {:>9} {:>9} {:>14} {:>10} {:>9}",
            c.name,
            work.units,
            work.unit,
            if work.events > 0 {
                format!("{:.3}", per(work.events))
            } else {
                "-".into()
            },
            instructions.map_or("-".into(), |n| n.to_string()),
            instructions.map_or("-".into(), |n| format!("{:.1}", per(n))),
            change,
        );
        rows.push((c.name, work, instructions));
    }
    println!("units: messages sent (simulations) or ops read (binary GOAL); events/u: LogGOPSim's");
    println!("events (ops enqueued + messages) per message; instr/u: instructions per unit");
    if valgrind.is_some() {
        save_results(&dir, &save, &rows);
    }
}

/// Instructions executed inside [`measured`] for case `name`, in a child process under
/// callgrind.
fn callgrind(name: &str) -> u64 {
    let exe = std::env::current_exe().expect("this benchmark's path");
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--toggle-collect={MEASURED}"))
        .arg(format!(
            "--callgrind-out-file={}",
            tmp.path().join("callgrind.out").display()
        ))
        .arg(&exe)
        .args([MEASURE, name])
        .output()
        .expect("valgrind runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "valgrind failed on {name} ({}):\n{stderr}",
        out.status
    );
    // "==PID== Collected : 123456789": the instructions collected while toggled on.
    stderr
        .lines()
        .find_map(|l| {
            l.split_once("Collected :")
                .map(|(_, n)| n.trim().to_string())
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no \"Collected :\" line in callgrind's output:\n{stderr}"))
}

/// `target/` of this build (the benchmark runs from `target/<profile>/deps/`).
fn target_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        return d.into();
    }
    let exe = std::env::current_exe().expect("this benchmark's path");
    exe.ancestors()
        .nth(3)
        .expect("target/<profile>/deps/counts-HASH")
        .to_path_buf()
}

type Saved = HashMap<String, (u64, u64, Option<u64>)>;

/// A saved table: case, units, events, instructions per line (tab-separated).
fn read_results(path: &std::path::Path) -> Saved {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Saved::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            match f[..] {
                [name, units, events, instr] => Some((
                    name.to_string(),
                    (
                        units.parse().ok()?,
                        events.parse().ok()?,
                        instr.parse().ok(),
                    ),
                )),
                _ => None,
            }
        })
        .collect()
}

/// Writes `rows` to `dir/NAME.tsv` atomically, keeping the saved rows of cases not run now.
fn save_results(dir: &std::path::Path, name: &str, rows: &[(&str, cases::Work, Option<u64>)]) {
    std::fs::create_dir_all(dir).expect("target/counts");
    let path = dir.join(format!("{name}.tsv"));
    let mut all = read_results(&path);
    for (case, w, n) in rows {
        all.insert(case.to_string(), (w.units, w.events, *n));
    }
    let mut names: Vec<&String> = all.keys().collect();
    names.sort();
    let mut f = tempfile::NamedTempFile::new_in(dir).expect("a temporary file");
    for n in names {
        let (u, e, i) = all[n];
        writeln!(
            f,
            "{n}\t{u}\t{e}\t{}",
            i.map_or("-".into(), |i| i.to_string())
        )
        .unwrap();
    }
    f.persist(&path).expect("saved");
    println!("saved as {}", path.display());
}
