//! Reading damaged, incomplete and invalid profiles gives precise errors, never a panic.
//! Broken files are made by writing a valid profile and editing it in place with hdf5-pure.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use hdf5_pure::{AttrValue, File};
use loggops_profile::*;

fn write_full(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    write_profile(&path, &full_profile()).unwrap();
    path
}

/// The error message with the temporary path replaced by `<profile>`.
fn message(path: &Path, e: &ProfileError) -> String {
    e.to_string()
        .replace(&path.display().to_string(), "<profile>")
}

fn read_err(path: &Path) -> String {
    match read_profile(path) {
        Ok(_) => "OK (read without error)".to_string(),
        Err(e) => message(path, &e),
    }
}

/// Applies `edit` to a fresh full profile and returns the read error.
fn after_edit(edit: impl FnOnce(&File) -> Result<(), hdf5_pure::Error>) -> String {
    edit_profile(&full_profile(), edit)
}

/// Applies `edit` to a fresh profile with exact tails ([`tail_profile`]) and returns the read
/// error.
fn after_tail_edit(edit: impl FnOnce(&File) -> Result<(), hdf5_pure::Error>) -> String {
    edit_profile(&tail_profile(), edit)
}

/// Applies `edit` to a fresh full profile with `mpi_progress` (schema version 3) and returns
/// the read error.
fn after_progress_edit(edit: impl FnOnce(&File) -> Result<(), hdf5_pure::Error>) -> String {
    let p = Profile {
        mpi_progress: Some(MpiProgress::Polled),
        clock: None,
        ..full_profile()
    };
    edit_profile(&p, edit)
}

/// Applies `edit` to a fresh full profile with a latency-episode state (schema version 8) and
/// returns the read error.
fn after_states_edit(edit: impl FnOnce(&File) -> Result<(), hdf5_pure::Error>) -> String {
    let p = Profile {
        days: vec![Day {
            weight: Some(0.05),
            episode: true,
            ..Day::new(
                "episodes".into(),
                full_profile().near,
                None,
                OsNoise::default(),
            )
        }],
        ..full_profile()
    };
    edit_profile(&p, edit)
}

fn edit_profile(p: &Profile, edit: impl FnOnce(&File) -> Result<(), hdf5_pure::Error>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.h5");
    write_profile(&path, p).unwrap();
    {
        let f = File::open_rw(&path).unwrap();
        edit(&f).unwrap();
        f.commit().unwrap();
        f.close().unwrap();
    }
    read_err(&path)
}

/// Applies `edit` to a fresh full profile with a clock (schema version 9) and returns the read
/// error.
fn after_clock_edit(edit: impl FnOnce(&File) -> Result<(), hdf5_pure::Error>) -> String {
    let p = Profile {
        clock: Some(Clock {
            resolution_ps: 238_000.0,
            read_ps: 27_000.0,
        }),
        ..full_profile()
    };
    edit_profile(&p, edit)
}

fn set_attr(
    group: &'static str,
    name: &'static str,
    v: AttrValue,
) -> impl FnOnce(&File) -> Result<(), hdf5_pure::Error> {
    move |f| f.group(group)?.set_attr(name, v)
}

fn remove_attr(
    group: &'static str,
    name: &'static str,
) -> impl FnOnce(&File) -> Result<(), hdf5_pure::Error> {
    move |f| f.group(group)?.remove_attr(name)
}

fn delete(path: &'static str) -> impl FnOnce(&File) -> Result<(), hdf5_pure::Error> {
    move |f| f.root().delete(path)
}

/// Replaces dataset `name` of `group` with f64 `data`.
fn replace_f64(
    group: &'static str,
    name: &'static str,
    data: Vec<f64>,
) -> impl FnOnce(&File) -> Result<(), hdf5_pure::Error> {
    move |f| {
        let g = f.group(group)?;
        g.delete(name)?;
        g.create_dataset(name, |b| {
            if data.is_empty() {
                b.with_dtype(hdf5_pure::make_f64_type()).with_shape(&[0]);
            } else {
                b.with_f64_data(&data);
            }
        })?;
        Ok(())
    }
}

#[test]
fn incomplete_and_invalid_profiles() {
    let nan = f64::NAN;
    let cases: Vec<(&str, String)> = vec![
        (
            "schema_version 10",
            after_edit(set_attr("/", "schema_version", AttrValue::I64(10))),
        ),
        (
            "a clock in a schema_version 8 file",
            after_clock_edit(set_attr("/", "schema_version", AttrValue::I64(8))),
        ),
        (
            "a clock resolution without its read",
            after_clock_edit(remove_attr("/", "clock_read_ps")),
        ),
        (
            "a day's weight in a schema_version 7 file",
            after_states_edit(set_attr("/", "schema_version", AttrValue::I64(7))),
        ),
        (
            "a day of an unknown kind",
            after_states_edit(set_attr(
                "/days/day_0",
                "kind",
                AttrValue::VarLenString("holiday".into()),
            )),
        ),
        (
            "mpi_progress in a schema_version 2 file",
            after_progress_edit(set_attr("/", "schema_version", AttrValue::I64(2))),
        ),
        (
            "mpi_progress neither async nor polled",
            after_progress_edit(set_attr(
                "/",
                "mpi_progress",
                AttrValue::VarLenString("sometimes".into()),
            )),
        ),
        (
            "mpi_progress as an integer",
            after_progress_edit(set_attr("/", "mpi_progress", AttrValue::I64(1))),
        ),
        (
            "schema_version 2 without exact tails",
            after_edit(set_attr("/", "schema_version", AttrValue::I64(2))),
        ),
        (
            "schema_version 0",
            after_edit(set_attr("/", "schema_version", AttrValue::I64(0))),
        ),
        (
            "exact tail in a schema_version 1 file",
            after_tail_edit(set_attr("/", "schema_version", AttrValue::I64(1))),
        ),
        (
            "exact tail without sample_count",
            after_tail_edit(remove_attr("near/latency", "sample_count")),
        ),
        (
            "sample_count as float",
            after_tail_edit(set_attr(
                "near/latency",
                "sample_count",
                AttrValue::F64(1000.0),
            )),
        ),
        (
            "sample_count not above the tail",
            after_tail_edit(set_attr("near/latency", "sample_count", AttrValue::U64(3))),
        ),
        (
            "table does not end at (N - K)/N",
            after_tail_edit(replace_f64(
                "near/latency",
                "probs",
                vec![0.0, 0.001, 0.5, 0.999],
            )),
        ),
        (
            "table ends at 1 before an exact tail",
            after_tail_edit(replace_f64(
                "near/latency",
                "probs",
                vec![0.0, 0.001, 0.5, 1.0],
            )),
        ),
        (
            "exact tail below the table",
            after_tail_edit(replace_f64(
                "near/latency",
                "tail_ps",
                vec![1.0, 90_000_000.0, 620_000_000.25],
            )),
        ),
        (
            "exact tail decreasing",
            after_tail_edit(replace_f64(
                "near/latency",
                "tail_ps",
                vec![40_000_000.5, 620_000_000.25, 90_000_000.0],
            )),
        ),
        (
            "exact tail NaN",
            after_tail_edit(replace_f64(
                "os_noise/process/duration",
                "tail_ps",
                vec![nan],
            )),
        ),
        (
            "exact tail empty",
            after_tail_edit(replace_f64("near/latency", "tail_ps", vec![])),
        ),
        (
            "exact tail without a table",
            after_tail_edit(|f| {
                let g = f.group("near/latency")?;
                g.delete("probs")?;
                g.delete("values_ps")
            }),
        ),
        (
            "exact tail next to raw samples",
            after_tail_edit(|f| {
                f.group("far/latency")?
                    .create_dataset("tail_ps", |b| {
                        b.with_f64_data(&[1.0]);
                    })
                    .map(drop)
            }),
        ),
        (
            "schema_version as string",
            after_edit(set_attr(
                "/",
                "schema_version",
                AttrValue::VarLenString("1".into()),
            )),
        ),
        (
            "schema_version missing",
            after_edit(remove_attr("/", "schema_version")),
        ),
        (
            "other schema",
            after_edit(set_attr(
                "/",
                "schema",
                AttrValue::VarLenString("netcdf thing".into()),
            )),
        ),
        ("schema missing", after_edit(remove_attr("/", "schema"))),
        ("no /near", after_edit(delete("near"))),
        ("no /provenance", after_edit(delete("provenance"))),
        ("no system", after_edit(remove_attr("/", "system"))),
        ("no L_ps", after_edit(remove_attr("near", "L_ps"))),
        (
            "no far bandwidth_block_bytes",
            after_edit(remove_attr("far", "bandwidth_block_bytes")),
        ),
        (
            "no provenance command",
            after_edit(remove_attr("provenance", "command")),
        ),
        (
            "no trace period",
            after_edit(remove_attr("os_noise/trace_0", "period_ps")),
        ),
        ("no values_ps", after_edit(delete("near/latency/values_ps"))),
        ("no probs", after_edit(delete("near/latency/probs"))),
        (
            "no start_ps",
            after_edit(delete("os_noise/trace_0/start_ps")),
        ),
        (
            "gap in trace numbers",
            after_edit(delete("os_noise/trace_1")),
        ),
        (
            "no process duration",
            after_edit(delete("os_noise/process/duration")),
        ),
        (
            "empty distribution group",
            after_edit(|f| {
                let g = f.group("near/gap")?;
                g.delete("samples_ps")
            }),
        ),
        (
            "samples and quantiles",
            after_edit(|f| {
                f.group("near/latency")?
                    .create_dataset("samples_ps", |b| {
                        b.with_f64_data(&[1.0]);
                    })
                    .map(drop)
            }),
        ),
        (
            "probs not increasing",
            after_edit(replace_f64(
                "near/latency",
                "probs",
                vec![0.0, 0.001, 0.5, 0.5, 1.0],
            )),
        ),
        (
            "probs not starting at 0",
            after_edit(replace_f64(
                "near/latency",
                "probs",
                vec![0.01, 0.1, 0.5, 0.999, 1.0],
            )),
        ),
        (
            "probs not ending at 1",
            after_edit(replace_f64(
                "near/latency",
                "probs",
                vec![0.0, 0.1, 0.5, 0.9, 0.99],
            )),
        ),
        (
            "probs above 1",
            after_edit(replace_f64(
                "near/latency",
                "probs",
                vec![0.0, 0.1, 0.5, 1.0, 1.5],
            )),
        ),
        (
            "probs NaN",
            after_edit(replace_f64(
                "near/latency",
                "probs",
                vec![0.0, nan, 0.5, 0.9, 1.0],
            )),
        ),
        (
            "values decreasing",
            after_edit(replace_f64(
                "far/bandwidth",
                "values_ps_per_byte",
                vec![82.0, 81.5, 400.0],
            )),
        ),
        (
            "values NaN",
            after_edit(replace_f64(
                "far/bandwidth",
                "values_ps_per_byte",
                vec![82.0, nan, 400.0],
            )),
        ),
        (
            "negative sample",
            after_edit(replace_f64("far/latency", "samples_ps", vec![1.0, -2.0])),
        ),
        (
            "infinite sample",
            after_edit(replace_f64(
                "near/bandwidth",
                "samples_ps_per_byte",
                vec![f64::INFINITY],
            )),
        ),
        (
            "empty samples",
            after_edit(replace_f64("far/latency", "samples_ps", vec![])),
        ),
        (
            "empty probs",
            after_edit(replace_f64("near/overhead", "probs", vec![])),
        ),
        (
            "length mismatch",
            after_edit(replace_f64(
                "near/latency",
                "values_ps",
                vec![1.0, 2.0, 3.0],
            )),
        ),
        (
            "string dataset for samples",
            after_edit(|f| {
                let g = f.group("near/gap")?;
                g.delete("samples_ps")?;
                g.create_dataset("samples_ps", |b| {
                    b.with_vlen_strings(&["fast"]);
                })
                .map(drop)
            }),
        ),
        (
            "2-D values",
            after_edit(|f| {
                let g = f.group("near/overhead")?;
                g.delete("values_ps")?;
                g.create_dataset("values_ps", |b| {
                    b.with_f64_data(&[1.0, 2.0]).with_shape(&[1, 2]);
                })
                .map(drop)
            }),
        ),
        (
            "negative int64 duration",
            after_edit(|f| {
                let g = f.group("os_noise/trace_0")?;
                g.delete("duration_ps")?;
                g.create_dataset("duration_ps", |b| {
                    b.with_i64_data(&[1, -5, 3]);
                })
                .map(drop)
            }),
        ),
        (
            "float trace starts",
            after_edit(|f| {
                let g = f.group("os_noise/trace_0")?;
                g.delete("start_ps")?;
                g.create_dataset("start_ps", |b| {
                    b.with_f64_data(&[1.0, 2.0, 3.0]);
                })
                .map(drop)
            }),
        ),
        (
            "starts not increasing",
            after_edit(|f| {
                let g = f.group("os_noise/trace_0")?;
                g.delete("start_ps")?;
                g.create_dataset("start_ps", |b| {
                    b.with_u64_data(&[5, 5, 9]);
                })
                .map(drop)
            }),
        ),
        (
            "period too short",
            after_edit(set_attr(
                "os_noise/trace_0",
                "period_ps",
                AttrValue::U64(9_000_000_000),
            )),
        ),
        (
            "L_ps as string",
            after_edit(set_attr(
                "near",
                "L_ps",
                AttrValue::VarLenString("15us".into()),
            )),
        ),
        (
            "L_ps negative",
            after_edit(set_attr("near", "L_ps", AttrValue::F64(-1.0))),
        ),
        (
            "S_bytes float",
            after_edit(set_attr("near", "S_bytes", AttrValue::F64(65536.0))),
        ),
        (
            "nodes_per_switch 0",
            after_edit(set_attr("/", "nodes_per_switch", AttrValue::I64(0))),
        ),
        (
            "nodes_per_switch negative",
            after_edit(set_attr("/", "nodes_per_switch", AttrValue::I64(-4))),
        ),
        (
            "price negative",
            after_edit(set_attr(
                "prices",
                "committed_usd_per_node_hour",
                AttrValue::F64(-0.5),
            )),
        ),
        (
            "rate NaN",
            after_edit(set_attr(
                "os_noise/process",
                "rate_per_s",
                AttrValue::F64(nan),
            )),
        ),
        (
            "sources as numbers",
            after_edit(set_attr(
                "provenance",
                "sources",
                AttrValue::I64Array(vec![1, 2]),
            )),
        ),
        (
            "bad trace name",
            after_edit(|f| f.group("os_noise")?.create_group("trace_01").map(drop)),
        ),
        (
            "near is a dataset",
            after_edit(|f| {
                f.root().delete("near")?;
                f.root()
                    .create_dataset("near", |b| {
                        b.with_f64_data(&[1.0]);
                    })
                    .map(drop)
            }),
        ),
    ];
    let report: String = cases
        .iter()
        .map(|(name, msg)| format!("{name}:\n  {msg}\n"))
        .collect();
    insta::assert_snapshot!(report);
}

#[test]
fn implausible_values_are_refused_on_load() {
    let cases: Vec<(&str, String)> = vec![
        (
            "latency tail of 1e300 ps",
            after_tail_edit(replace_f64(
                "near/latency",
                "tail_ps",
                vec![40_000_000.5, 90_000_000.0, 1e300],
            )),
        ),
        (
            "L of 1e300 ps",
            after_edit(set_attr("near", "L_ps", AttrValue::F64(1e300))),
        ),
        (
            "detour rate of 1e300/s",
            after_edit(set_attr(
                "os_noise/process",
                "rate_per_s",
                AttrValue::F64(1e300),
            )),
        ),
    ];
    let report: String = cases
        .iter()
        .map(|(name, msg)| format!("{name}:\n  {msg}\n"))
        .collect();
    insta::assert_snapshot!(report);
}

#[test]
fn files_that_are_not_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let empty = d.join("empty.h5");
    std::fs::write(&empty, b"").unwrap();
    let text = d.join("text.h5");
    std::fs::write(&text, b"{\"system\": \"aws\"}\n").unwrap();
    let missing = d.join("missing.h5");
    let other = d.join("other.h5");
    let mut b = hdf5_pure::FileBuilder::new();
    b.create_dataset("x").with_f64_data(&[1.0]);
    b.write(&other).unwrap();
    let report: String = [&empty, &text, &missing, &other, &d.to_path_buf()]
        .iter()
        .map(|p| {
            let e = read_profile(p).unwrap_err();
            format!(
                "{}\n",
                e.to_string().replace(&d.display().to_string(), "<dir>")
            )
        })
        .collect();
    insta::assert_snapshot!(report);
}

#[test]
fn truncated_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_full(dir.path(), "p.h5");
    let bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let mut report = String::new();
    for cut in [0, 4, 8, 47, 100, 500, 1000, n / 2, n - 100, n - 1] {
        let t = dir.path().join(format!("cut{cut}.h5"));
        std::fs::write(&t, &bytes[..cut]).unwrap();
        let msg = match read_profile(&t) {
            Ok(_) => "OK (read without error)".to_string(),
            Err(e) => message(&t, &e),
        };
        let cut_name = if cut > n / 2 {
            format!("size - {}", n - cut)
        } else if cut == n / 2 {
            "size / 2".to_string()
        } else {
            cut.to_string()
        };
        report.push_str(&format!("truncated to {cut_name} bytes:\n  {msg}\n"));
    }
    insta::assert_snapshot!(report);
}

/// Flips every `stride`-th byte of a full profile in turn: each read either fails with an
/// error or gives a profile that passes validation; none panics. The report records how the
/// damage showed.
fn byte_flip_sweep(stride: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write_full(dir.path(), "p.h5");
    let bytes = std::fs::read(&path).unwrap();
    let original = full_profile();
    let mut same = 0;
    let mut changed = Vec::new();
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for i in (0..bytes.len()).step_by(stride) {
        let mut b = bytes.clone();
        b[i] ^= 0xFF;
        match read_profile_from_bytes(b, "flip.h5") {
            Ok(p) if p == original => same += 1,
            // Only bytes of variable-length strings, which HDF5 keeps in unchecksummed heaps.
            Ok(_) => changed.push(i),
            Err(e) => {
                let kind = match &e {
                    ProfileError::NotHdf5 { reason, .. } if reason.contains("decoder failed") => {
                        "NotHdf5 (hdf5-pure panicked; caught)"
                    }
                    ProfileError::NotHdf5 { .. } => "NotHdf5",
                    ProfileError::WrongSchema { .. } => "WrongSchema",
                    ProfileError::UnsupportedVersion { .. } => "UnsupportedVersion",
                    ProfileError::MissingGroup { .. } => "MissingGroup",
                    ProfileError::MissingDataset { .. } => "MissingDataset",
                    ProfileError::MissingAttribute { .. } => "MissingAttribute",
                    ProfileError::Invalid { .. } => "Invalid",
                    _ => "other",
                };
                *kinds.entry(kind.to_string()).or_default() += 1;
            }
        }
    }
    let mut report = format!(
        "file size: {} bytes, every {stride}. byte flipped\nread back unchanged: {same}\nread back with changed strings (heap bytes, unchecksummed in HDF5): {}\n",
        bytes.len(),
        changed.len()
    );
    for (k, c) in &kinds {
        report.push_str(&format!("error {k}: {c}\n"));
    }
    report
}

#[test]
fn every_fourth_byte_flip() {
    insta::assert_snapshot!(byte_flip_sweep(4));
}

#[test]
#[ignore = "slow: decodes the profile once per byte (about 38,000 times)"]
fn every_single_byte_flip() {
    insta::assert_snapshot!(byte_flip_sweep(1));
}

#[test]
fn selected_byte_flips() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_full(dir.path(), "p.h5");
    let bytes = std::fs::read(&path).unwrap();
    let mut report = String::new();
    for i in [0, 8, 9, 20, 40, 200, 1000] {
        let mut b = bytes.clone();
        b[i] ^= 0xFF;
        let t = dir.path().join(format!("flip{i}.h5"));
        std::fs::write(&t, &b).unwrap();
        report.push_str(&format!("byte {i} flipped:\n  {}\n", read_err(&t)));
    }
    // A byte of the raw data of /near/latency/values_ps (its last value, 120e6 ps).
    let needle = 120_000_000.0f64.to_le_bytes();
    let at = bytes.windows(8).position(|w| w == needle).unwrap();
    let mut b = bytes.clone();
    b[at + 3] ^= 0x01;
    let t = dir.path().join("flipdata.h5");
    std::fs::write(&t, &b).unwrap();
    report.push_str(&format!("raw data byte flipped:\n  {}\n", read_err(&t)));
    insta::assert_snapshot!(report);
}
