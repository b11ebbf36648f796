//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the same reader entry
//! points the libFuzzer targets call, on stable Rust: every seed, and every crash input found
//! and fixed since (they are kept in the corpus), must be read without a panic, and without
//! growing the address space by more than [`ADDRESS_SPACE_LIMIT`] (libFuzzer's
//! `-malloc_limit_mb`, on stable: a reader that reserves what a file claims before checking it
//! can be made to ask for gigabytes by a few hundred bytes; untouched, such a reservation does
//! not show in the RSS, but it does in `VmPeak`).

use std::path::PathBuf;

/// How much a corpus file may raise the process's peak virtual memory, bytes.
const ADDRESS_SPACE_LIMIT: u64 = 1 << 30;

/// `VmPeak` of this process (Linux), bytes; `None` elsewhere.
fn vm_peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmPeak:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

#[test]
fn every_target_has_a_fuzz_target_and_a_corpus() {
    let targets = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
    for (name, _) in loggops_fuzzing::TARGETS {
        let src = std::fs::read_to_string(targets.join(format!("{name}.rs")))
            .unwrap_or_else(|e| panic!("fuzz/fuzz_targets/{name}.rs: {e}"));
        assert!(
            src.contains(&format!("loggops_fuzzing::{name}(")),
            "fuzz/fuzz_targets/{name}.rs must call loggops_fuzzing::{name}"
        );
        let n = std::fs::read_dir(corpus().join(name))
            .unwrap_or_else(|e| panic!("fuzz/corpus/{name}: {e}"))
            .count();
        assert!((1..=64).contains(&n), "fuzz/corpus/{name} holds {n} files");
    }
}

#[test]
fn the_corpus_replays_without_panics() {
    let mut replayed = 0;
    for (name, f) in loggops_fuzzing::TARGETS {
        let mut files: Vec<PathBuf> = std::fs::read_dir(corpus().join(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let before = vm_peak();
            // A panic names the file through this message.
            let r = std::panic::catch_unwind(|| f(&data));
            assert!(r.is_ok(), "{} panicked", file.display());
            if let (Some(b), Some(a)) = (before, vm_peak()) {
                assert!(
                    a - b <= ADDRESS_SPACE_LIMIT,
                    "{}: the peak address space grew by {} MiB (the limit is {} MiB)",
                    file.display(),
                    (a - b) >> 20,
                    ADDRESS_SPACE_LIMIT >> 20
                );
            }
            replayed += 1;
        }
    }
    assert!(replayed >= loggops_fuzzing::TARGETS.len());
}
