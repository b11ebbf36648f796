//! Interoperability with h5py: profiles written here read in h5py with the right types and
//! values, and profiles written by h5py following SCHEMA.md load here.
//!
//! Needs `python3` with `h5py` (`pip install h5py`); skipped with a message when missing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use loggops_profile::*;
use serde_json::{json, Map, Value};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}

/// True when `python3 -c 'import h5py'` works; prints the skip reason otherwise.
fn have_h5py() -> bool {
    static SKIP_REASON: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let reason = SKIP_REASON.get_or_init(|| {
        match Command::new("python3").args(["-c", "import h5py"]).output() {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(format!(
                "python3 cannot import h5py (pip install h5py): {}",
                String::from_utf8_lossy(&o.stderr)
                    .trim()
                    .lines()
                    .last()
                    .unwrap_or("")
            )),
            Err(e) => Some(format!("cannot run python3: {e}")),
        }
    });
    if let Some(r) = reason {
        eprintln!("skipping: {r}");
    }
    reason.is_none()
}

fn run_python(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new("python3").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "python3 {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The flat `{"<group>@<attr>": value, "<dataset path>": [..]}` view of `p` that
/// `dump_profile.py` prints, built from SCHEMA.md independently of the crate's writer.
fn expected_flat(p: &Profile) -> Value {
    let mut m = Map::new();
    let mut put = |k: String, v: Value| {
        m.insert(k, v);
    };
    put("/@schema".into(), json!("loggops-sim noise profile"));
    // Version 3 only with `mpi_progress`, 2 only when a table has an exact tail.
    put(
        "/@schema_version".into(),
        json!(if !p.prices.spot.is_empty() {
            5
        } else if p.mpi_progress.is_some() {
            3
        } else if has_tail(p) {
            2
        } else {
            1
        }),
    );
    if let Some(m) = p.mpi_progress {
        put("/@mpi_progress".into(), json!(m.name()));
    }
    put("/@system".into(), json!(p.system));
    put("/@description".into(), json!(p.description));
    put("/@nodes_per_switch".into(), json!(p.nodes_per_switch));
    fn dist(put: &mut dyn FnMut(String, Value), g: &str, unit: &str, d: &Distribution) {
        match d {
            Distribution::Samples(s) => put(format!("{g}/samples_{unit}"), json!(s)),
            Distribution::Quantiles {
                probs,
                values,
                tail,
            } => {
                put(format!("{g}/probs"), json!(probs));
                put(format!("{g}/values_{unit}"), json!(values));
                if let Some(t) = tail {
                    put(format!("{g}/tail_{unit}"), json!(t.values));
                    put(format!("{g}@sample_count"), json!(t.sample_count));
                }
            }
        }
    }
    let mut placements = vec![("/near", &p.near)];
    if let Some(far) = &p.far {
        placements.push(("/far", far));
    }
    for (g, pl) in placements {
        let b = &pl.params;
        put(format!("{g}@L_ps"), json!(b.l_ps));
        put(format!("{g}@o_ps"), json!(b.o_ps));
        put(format!("{g}@g_ps"), json!(b.g_ps));
        put(format!("{g}@G_ps_per_byte"), json!(b.big_g_ps_per_byte));
        put(format!("{g}@O_ps_per_byte"), json!(b.big_o_ps_per_byte));
        put(format!("{g}@S_bytes"), json!(b.s_bytes));
        put(
            format!("{g}@bandwidth_block_bytes"),
            json!(pl.bandwidth_block_bytes),
        );
        for (name, unit, d) in [
            ("latency", "ps", &pl.latency),
            ("bandwidth", "ps_per_byte", &pl.bandwidth),
            ("overhead", "ps", &pl.overhead),
            ("gap", "ps", &pl.gap),
        ] {
            if let Some(d) = d {
                dist(&mut put, &format!("{g}/{name}"), unit, d);
            }
        }
    }
    for (k, t) in p.os_noise.traces.iter().enumerate() {
        let g = format!("/os_noise/trace_{k}");
        put(format!("{g}@period_ps"), json!(t.period_ps));
        put(format!("{g}/start_ps"), json!(t.start_ps));
        put(format!("{g}/duration_ps"), json!(t.duration_ps));
    }
    if let Some(pr) = &p.os_noise.process {
        put("/os_noise/process@rate_per_s".into(), json!(pr.rate_per_s));
        dist(
            &mut put,
            "/os_noise/process/duration",
            "ps",
            &pr.duration_ps,
        );
    }
    if let Some(v) = p.prices.on_demand_usd_per_node_hour {
        put("/prices@on_demand_usd_per_node_hour".into(), json!(v));
    }
    if let Some(v) = p.prices.committed_usd_per_node_hour {
        put("/prices@committed_usd_per_node_hour".into(), json!(v));
    }
    let sp = &p.prices.spot;
    if let Some(v) = sp.usd_per_node_hour {
        put("/prices@spot_usd_per_node_hour".into(), json!(v));
    }
    if let Some(v) = sp.interruptions_per_node_hour {
        put("/prices@spot_interruptions_per_node_hour".into(), json!(v));
    }
    if !sp.source.is_empty() {
        put("/prices@spot_source".into(), json!(sp.source));
    }
    if !sp.date.is_empty() {
        put("/prices@spot_date".into(), json!(sp.date));
    }
    let pv = &p.provenance;
    put("/provenance@command".into(), json!(pv.command));
    put("/provenance@created".into(), json!(pv.created));
    put("/provenance@tool_version".into(), json!(pv.tool_version));
    if !pv.sources.is_empty() {
        put("/provenance@sources".into(), json!(pv.sources));
    }
    if !pv.notes.is_empty() {
        put("/provenance@notes".into(), json!(pv.notes));
    }
    Value::Object(m)
}

fn h5py_reads(p: &Profile) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rust.h5");
    write_profile(&path, p).unwrap();
    let out = run_python(&[script("dump_profile.py").as_os_str(), path.as_os_str()]);
    let got: Value = serde_json::from_str(&out).unwrap();
    assert_same(&got, &expected_flat(p));
}

/// Compares key by key so that a mismatch in a 50,000-element dataset prints one element.
fn assert_same(got: &Value, want: &Value) {
    let (g, w) = (got.as_object().unwrap(), want.as_object().unwrap());
    let gk: Vec<&String> = g.keys().collect();
    let wk: Vec<&String> = w.keys().collect();
    assert_eq!(gk, wk, "h5py sees different objects");
    for (k, wv) in w {
        let gv = &g[k];
        match (gv.as_array(), wv.as_array()) {
            (Some(ga), Some(wa)) => {
                assert_eq!(ga.len(), wa.len(), "{k}: length");
                for (i, (a, b)) in ga.iter().zip(wa).enumerate() {
                    assert_eq!(a, b, "{k}[{i}]");
                }
            }
            _ => assert_eq!(gv, wv, "{k}"),
        }
    }
}

#[test]
fn h5py_reads_every_field_of_a_full_profile() {
    if !have_h5py() {
        return;
    }
    h5py_reads(&full_profile());
}

#[test]
fn h5py_reads_every_field_of_a_minimal_profile() {
    if !have_h5py() {
        return;
    }
    h5py_reads(&minimal_profile());
}

#[test]
fn h5py_reads_a_profile_with_exact_tails() {
    if !have_h5py() {
        return;
    }
    h5py_reads(&tail_profile());
}

#[test]
fn h5py_reads_mpi_progress() {
    if !have_h5py() {
        return;
    }
    for m in [MpiProgress::Async, MpiProgress::Polled] {
        h5py_reads(&Profile {
            mpi_progress: Some(m),
            clock: None,
            ..tail_profile()
        });
    }
}

/// Spot capacity (schema version 5) reads back in Rust and in h5py.
#[test]
fn spot_capacity_round_trips_and_h5py_reads_it() {
    let mut p = tail_profile();
    p.prices.spot = loggops_profile::SpotPrices {
        usd_per_node_hour: Some(0.7),
        interruptions_per_node_hour: Some(0.002),
        source: "AWS Spot Instance Advisor, c5n.18xlarge us-east-1".into(),
        date: "2026-11-20".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spot.h5");
    write_profile(&path, &p).unwrap();
    assert_eq!(loggops_profile::read_profile(&path).unwrap(), p);
    // Only the price: still version 5, the rate stays unknown.
    let mut q = minimal_profile();
    q.prices.spot.usd_per_node_hour = Some(1.5);
    write_profile(&path, &q).unwrap();
    assert_eq!(loggops_profile::read_profile(&path).unwrap(), q);
    if have_h5py() {
        h5py_reads(&p);
        h5py_reads(&q);
    }
}

#[test]
fn h5py_reads_a_big_compressed_profile() {
    if !have_h5py() {
        return;
    }
    h5py_reads(&big_profile());
}

/// What `write_profile.py` writes, as the model (tool_version checked separately).
fn handmade(tool_version: String) -> Profile {
    let params = |l_ps| BaseParams {
        l_ps,
        o_ps: 300_000.0,
        g_ps: 100_000.5,
        big_g_ps_per_byte: 80.25,
        big_o_ps_per_byte: 0.0,
        s_bytes: 65536,
    };
    let far_samples: Vec<f64> = (0..5000)
        .map(|i| 2.9e6 + (4.0e6 - 2.9e6) * i as f64 / 4999.0)
        .collect();
    Profile {
        system: "handmade".into(),
        description: "written by h5py – ünïcode".into(),
        near: Placement {
            latency: Some(Distribution::Quantiles {
                probs: vec![0.0, 0.5, 0.99, 1.0],
                values: vec![1.9e6, 2.0e6, 3.5e6, 9.0e6],
                tail: None,
            }),
            bandwidth: Some(Distribution::Samples(vec![80.5, 81.0, 79.75])),
            ..Placement::new(params(2_000_000.0), 16 << 20)
        },
        far: Some(Placement {
            latency: Some(Distribution::Samples(far_samples)),
            bandwidth: Some(Distribution::Quantiles {
                probs: vec![0.0, 0.5, 1.0 - 2.0 / 200.0],
                values: vec![80.0, 81.0, 85.5],
                tail: Some(ExactTail {
                    values: vec![90.0, 300.0],
                    sample_count: 200,
                }),
            }),
            ..Placement::new(params(3_000_000.0), 16 << 20)
        }),
        nodes_per_switch: 8,
        os_noise: OsNoise {
            traces: vec![
                DetourTrace {
                    start_ps: vec![10, 1_000_000, 2_000_000],
                    duration_ps: vec![5, 6, 7],
                    period_ps: 3_000_000,
                },
                DetourTrace {
                    start_ps: vec![],
                    duration_ps: vec![],
                    period_ps: 1_000_000_000,
                },
            ],
            process: Some(DetourProcess {
                rate_per_s: 250.0,
                duration_ps: Distribution::Samples(vec![1e6, 2e6]),
            }),
        },
        prices: Prices {
            on_demand_usd_per_node_hour: Some(3.888),
            committed_usd_per_node_hour: None,
            spot: Default::default(),
        },
        provenance: Provenance {
            sources: vec!["a.txt".into(), "b – c.txt".into()],
            command: "python3 write_profile.py".into(),
            created: "2025-02-01".into(),
            tool_version,
            notes: vec!["a single note as a scalar string".into()],
        },
        calibration: Default::default(),
        day: String::new(),
        days: Vec::new(),
        mpi_progress: Some(MpiProgress::Polled),
        clock: None,
    }
}

fn loads_h5py_profile(libver: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("h5py-{libver}.h5"));
    run_python(&[
        script("write_profile.py").as_os_str(),
        path.as_os_str(),
        libver.as_ref(),
    ]);
    let got = match read_profile(&path) {
        Ok(p) => p,
        // Known limitation of hdf5-pure 0.47: HDF5 2.x with libver "latest" writes chunked
        // datasets with data layout version 5. The error must say so and how to avoid it.
        Err(e) if libver == "latest" => {
            assert_eq!(
                e.to_string(),
                format!(
                    "{} is not a readable HDF5 file: cannot read `/far/latency/samples_ps`: \
                     HDF5 format error: invalid data layout version: 5 (data layout version 5 \
                     comes from HDF5 2.x with libver \"latest\"/\"v200\"; rewrite the file \
                     with h5py's default libver or libver=\"v114\")",
                    path.display()
                )
            );
            eprintln!("note: h5py's HDF5 writes layout version 5 for libver=\"latest\": {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert!(
        got.provenance.tool_version.starts_with("h5py "),
        "{}",
        got.provenance.tool_version
    );
    let mut want = handmade(got.provenance.tool_version.clone());
    // np.linspace and the Rust formula may differ in the last bit; compare those within 1 ulp
    // and the rest exactly.
    if let (Some(Distribution::Samples(g)), Some(Distribution::Samples(w))) = (
        &got.far.as_ref().unwrap().latency,
        &mut want.far.as_mut().unwrap().latency,
    ) {
        assert_eq!(g.len(), w.len());
        for (a, b) in g.iter().zip(w.iter_mut()) {
            assert!((a - *b).abs() <= b.abs() * f64::EPSILON, "{a} vs {b}");
            *b = *a;
        }
    }
    assert_eq!(got, want);
}

#[test]
fn loads_profile_written_by_h5py_earliest_format() {
    if !have_h5py() {
        return;
    }
    loads_h5py_profile("earliest");
}

#[test]
fn loads_profile_written_by_h5py_v114_format() {
    if !have_h5py() {
        return;
    }
    loads_h5py_profile("v114");
}

#[test]
fn loads_profile_written_by_h5py_latest_format() {
    if !have_h5py() {
        return;
    }
    loads_h5py_profile("latest");
}

/// The "Writing with h5py" example of SCHEMA.md writes a profile that loads.
#[test]
fn schema_md_h5py_example_loads() {
    if !have_h5py() {
        return;
    }
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("SCHEMA.md")).unwrap();
    let section = &doc[doc.find("## Writing with h5py").unwrap()..];
    let start = section.find("```python\n").unwrap() + "```python\n".len();
    let code = &section[start..start + section[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.h5");
    let code = code.replace("\"mine.h5\"", &format!("{:?}", path.to_str().unwrap()));
    run_python(&["-c".as_ref(), code.as_ref()]);
    let p = read_profile(&path).unwrap();
    assert_eq!(p.system, "mine");
    assert_eq!(p.nodes_per_switch, 16);
    assert_eq!(p.near.params.l_ps, 2e6);
    assert_eq!(p.near.params.s_bytes, 65536);
    assert_eq!(
        p.near.latency,
        Some(Distribution::Quantiles {
            probs: vec![0.0, 0.5, 0.99, 1.0],
            values: vec![1.9e6, 2.0e6, 3.5e6, 9.0e6],
            tail: None,
        })
    );
    assert_eq!(
        p.os_noise.traces,
        [DetourTrace {
            start_ps: vec![10, 1_000_000],
            duration_ps: vec![5, 6],
            period_ps: 2_000_000,
        }]
    );
    assert_eq!(p.prices.on_demand_usd_per_node_hour, Some(3.888));
    assert_eq!(p.prices.committed_usd_per_node_hour, None);
    assert_eq!(p.provenance.sources, ["ping.txt", "detour.txt"]);
    assert!(p.far.is_none() && p.os_noise.process.is_none());
}
