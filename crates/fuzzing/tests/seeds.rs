//! How the binary seeds of the corpus were made (they cannot be written by hand). Run
//! `cargo test -p loggops-fuzzing --test seeds -- --ignored` to write them again; the test that
//! is not ignored checks that the committed ones are still what this writes.

use std::path::PathBuf;

use loggops_profile::{
    BaseParams, DetourProcess, DetourTrace, Distribution, ExactTail, OsNoise, Placement, Prices,
    Profile, Provenance,
};

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

fn params(l_ps: f64) -> BaseParams {
    BaseParams {
        l_ps,
        o_ps: 1_500_000.0,
        g_ps: 1_000_000.0,
        big_g_ps_per_byte: 80.0,
        big_o_ps_per_byte: 0.0,
        s_bytes: 65_536,
    }
}

/// Small profiles: the schema's minimum, and one with every part (exact tails, two traces, a
/// detour process, a far placement, prices).
fn profiles() -> Vec<(String, Profile)> {
    let minimal = Profile {
        system: "min".into(),
        description: String::new(),
        near: Placement {
            params: params(2_000_000.0),
            latency: None,
            bandwidth: None,
            bandwidth_block_bytes: 0,
            overhead: None,
            gap: None,
        },
        far: None,
        nodes_per_switch: 1,
        os_noise: OsNoise::default(),
        prices: Prices::default(),
        provenance: Provenance::default(),
    };
    let full = Profile {
        system: "full".into(),
        description: "every part".into(),
        near: Placement {
            params: params(2_000_000.0),
            latency: Some(Distribution::Quantiles {
                probs: vec![0.0, 0.5, 0.9],
                values: vec![1_800_000.0, 2_000_000.0, 2_400_000.0],
                tail: Some(ExactTail {
                    values: vec![9_000_000.0],
                    sample_count: 10,
                }),
            }),
            bandwidth: Some(Distribution::Samples(vec![80.0, 81.5, 120.0])),
            bandwidth_block_bytes: 16 << 20,
            overhead: Some(Distribution::Samples(vec![1_400_000.0, 1_600_000.0])),
            gap: None,
        },
        far: Some(Placement {
            params: params(3_000_000.0),
            latency: None,
            bandwidth: None,
            bandwidth_block_bytes: 0,
            overhead: None,
            gap: None,
        }),
        nodes_per_switch: 4,
        os_noise: OsNoise {
            traces: vec![
                DetourTrace {
                    start_ps: vec![1_000, 5_000_000],
                    duration_ps: vec![2_500_000, 700_000],
                    period_ps: 10_000_000_000,
                },
                DetourTrace {
                    start_ps: vec![],
                    duration_ps: vec![],
                    period_ps: 1_000_000_000,
                },
            ],
            process: Some(DetourProcess {
                rate_per_s: 200.0,
                duration_ps: Distribution::Quantiles {
                    probs: vec![0.0, 1.0],
                    values: vec![500_000.0, 5_000_000.0],
                    tail: None,
                },
            }),
        },
        prices: Prices {
            on_demand_usd_per_node_hour: Some(3.5),
            committed_usd_per_node_hour: None,
        },
        provenance: Provenance {
            sources: vec!["synthetic".into()],
            command: "seeds.rs".into(),
            created: "2000-01-01T00:00:00Z".into(),
            tool_version: "0".into(),
            notes: vec![],
        },
    };
    vec![("minimal.h5".into(), minimal), ("full.h5".into(), full)]
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
