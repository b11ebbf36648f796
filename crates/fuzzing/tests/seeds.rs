//! How the binary seeds of the corpus were made (they cannot be written by hand). Run
//! `cargo test -p loggops-fuzzing --test seeds -- --ignored` to write them again; the test that
//! is not ignored checks that the committed ones are still what this writes.

use std::path::PathBuf;

use loggops_profile::Profile;

#[path = "../../profile/tests/common/mod.rs"]
mod profiles;

fn corpus(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// Binary GOAL files: the GOAL text seeds that parse, written by `write_binary`.
fn binary_seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(corpus("goal_text"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let text = std::fs::read(&path).unwrap();
        let Ok(p) = loggops_goal::parse_reader("seed", text.as_slice()) else {
            continue;
        };
        let mut bin = Vec::new();
        loggops_goal::write_binary(&p, &mut bin).unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        out.push((format!("{stem}.bin"), bin));
    }
    out
}

/// The profile crate's test profiles: the schema's minimum, and one with every part (exact
/// tails, traces, a detour process, a far placement, prices).
fn profiles() -> Vec<(String, Profile)> {
    vec![
        ("minimal.h5".into(), profiles::minimal_profile()),
        ("full.h5".into(), profiles::tail_profile()),
    ]
}

fn encoded_profiles() -> Vec<(String, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    profiles()
        .into_iter()
        .map(|(name, p)| {
            let path = dir.path().join(&name);
            loggops_profile::write_profile(&path, &p).unwrap();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

#[test]
#[ignore = "writes the binary seeds of fuzz/corpus"]
fn write_binary_seeds() {
    for (name, bytes) in binary_seeds() {
        std::fs::write(corpus("goal_binary").join(name), bytes).unwrap();
    }
    for (name, bytes) in encoded_profiles() {
        std::fs::write(corpus("profile").join(name), bytes).unwrap();
    }
}

#[test]
fn binary_goal_seeds_are_what_the_writer_writes() {
    for (name, bytes) in binary_seeds() {
        let committed = std::fs::read(corpus("goal_binary").join(&name))
            .unwrap_or_else(|e| panic!("fuzz/corpus/goal_binary/{name}: {e}"));
        assert_eq!(committed, bytes, "{name}");
    }
}
