//! Write → read gives back exactly the profile that was written.

mod common;

use common::*;
use loggops_profile::*;

/// Asserts that `p` round-trips and is written as schema `version`; the directory holding
/// the file (`p.h5`) and the file.
fn round_trips_as_version(p: &Profile, version: i64) -> (tempfile::TempDir, hdf5_pure::File) {
    assert_eq!(&round_trip(p), p);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.h5");
    write_profile(&path, p).unwrap();
    let f = hdf5_pure::File::from_bytes(std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        f.root().attrs().unwrap()["schema_version"].as_i64(),
        Some(version)
    );
    (dir, f)
}

fn round_trip(p: &Profile) -> Profile {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.h5");
    write_profile(&path, p).unwrap();
    read_profile(&path).unwrap()
}

#[test]
fn full_profile_round_trips() {
    let p = full_profile();
    assert_eq!(round_trip(&p), p);
}

#[test]
fn profile_with_exact_tails_round_trips() {
    let p = tail_profile();
    assert_eq!(round_trip(&p), p);
}

#[test]
fn mpi_progress_round_trips() {
    for m in [None, Some(MpiProgress::Async), Some(MpiProgress::Polled)] {
        let p = Profile {
            mpi_progress: m,
            clock: None,
            ..full_profile()
        };
        assert_eq!(round_trip(&p), p);
    }
}

/// A clock (schema version 9) round-trips; a negative read is refused with the attribute
/// named, and a profile without a clock keeps the version the rest needs.
#[test]
fn clocks_round_trip_as_version_9() {
    let clock = Clock {
        resolution_ps: 237_975.716,
        read_ps: 27_848.5,
    };
    let p = Profile {
        clock: Some(clock),
        ..full_profile()
    };
    let (_dir, f) = round_trips_as_version(&p, 9);
    let attrs = f.root().attrs().unwrap();
    assert_eq!(attrs["clock_resolution_ps"].as_f64(), Some(237_975.716));
    assert_eq!(attrs["clock_read_ps"].as_f64(), Some(27_848.5));
    let (_dir, f) = round_trips_as_version(&full_profile(), 1);
    assert!(!f.root().attrs().unwrap().contains_key("clock_read_ps"));
    let dir = tempfile::tempdir().unwrap();
    let bad = Profile {
        clock: Some(Clock {
            read_ps: -1.0,
            ..clock
        }),
        ..full_profile()
    };
    let e = write_profile(dir.path().join("p.h5"), &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("/ attribute clock_read_ps: is -1 ps"), "{e}");
}

/// An idle table (schema version 4) round-trips; a version-3 step keeps its version-3 form
/// (readable by older builds) and a table of several levels is written as version 4.
#[test]
fn idle_tables_round_trip_in_the_oldest_version_that_holds_them() {
    let version = |p: &Profile| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.h5");
        write_profile(&path, p).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let f = hdf5_pure::File::from_bytes(bytes).unwrap();
        let v = f.root().attrs().unwrap()["schema_version"]
            .as_i64()
            .unwrap();
        (v, f.group("/near/after_idle").is_ok())
    };
    let lat = Distribution::quantiles(vec![0.0, 1.0], vec![2e6, 3e6]);
    let step = Profile {
        near: Placement {
            after_idle: Some(AfterIdle::step(10e6, lat.clone())),
            bandwidth_levels: None,
            ..full_profile().near
        },
        ..full_profile()
    };
    assert_eq!(round_trip(&step), step);
    assert_eq!(version(&step), (3, false));
    let mut levels = AfterIdle::step(10e6, lat).levels;
    levels.push(IdleLevel {
        from_ps: 2e11,
        latency: None,
        per_byte_factor: 1.25,
    });
    levels.push(IdleLevel {
        from_ps: 1e12,
        latency: Some(Distribution::Samples(vec![4e6, 5e6])),
        per_byte_factor: 5.0,
    });
    let table = Profile {
        near: Placement {
            after_idle: Some(AfterIdle { levels }),
            bandwidth_levels: None,
            ..full_profile().near
        },
        ..full_profile()
    };
    assert_eq!(round_trip(&table), table);
    assert_eq!(version(&table), (4, true));
}

#[test]
fn bandwidth_levels_round_trip_as_version_6_and_older_files_refuse_them() {
    let p = Profile {
        near: Placement {
            bandwidth_levels: Some(Distribution::Samples(vec![1.0, 0.99, 1.24])),
            ..full_profile().near
        },
        ..full_profile()
    };
    assert_eq!(round_trip(&p), p);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.h5");
    write_profile(&path, &p).unwrap();
    let f = hdf5_pure::File::from_bytes(std::fs::read(&path).unwrap()).unwrap();
    let v = f.root().attrs().unwrap()["schema_version"]
        .as_i64()
        .unwrap();
    assert_eq!(v, 6);
    assert!(f.group("/near/bandwidth_levels").is_ok());
    // Without levels the version stays what the rest needs.
    let q = full_profile();
    write_profile(&path, &q).unwrap();
    let f = hdf5_pure::File::from_bytes(std::fs::read(&path).unwrap()).unwrap();
    assert!(
        f.root().attrs().unwrap()["schema_version"]
            .as_i64()
            .unwrap()
            < 6
    );
    // A level of 0 is refused by the validator, with the object named.
    let bad = Profile {
        near: Placement {
            bandwidth_levels: Some(Distribution::Samples(vec![1.0, 0.0])),
            ..full_profile().near
        },
        ..full_profile()
    };
    let e = write_profile(&path, &bad).unwrap_err().to_string();
    assert!(e.contains("/near/bandwidth_levels/samples_factor"), "{e}");
    assert!(e.contains("above 0"), "{e}");
}

#[test]
fn minimal_profile_round_trips() {
    let p = minimal_profile();
    assert_eq!(round_trip(&p), p);
}

#[test]
fn big_profile_round_trips_and_is_small() {
    let p = big_profile();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.h5");
    write_profile(&path, &p).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    eprintln!("big profile (2x2 tables of 2000 points, 50000-detour trace): {size} bytes");
    assert!(size < 700_000, "profile is {size} bytes");
    assert_eq!(read_profile(&path).unwrap(), p);
}

#[test]
fn writing_is_deterministic_and_overwrites_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.h5");
    let b = dir.path().join("b.h5");
    write_profile(&a, &full_profile()).unwrap();
    write_profile(&b, &full_profile()).unwrap();
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // Overwrite an existing profile; no temporary file is left behind.
    write_profile(&a, &minimal_profile()).unwrap();
    assert_eq!(read_profile(&a).unwrap(), minimal_profile());
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.h5", "b.h5"]);
}

#[test]
fn invalid_profile_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.h5");
    let mut p = full_profile();
    p.near.latency = Some(Distribution::Quantiles {
        probs: vec![0.0, 0.5, 1.0],
        values: vec![3.0, 2.0, 4.0],
        tail: None,
    });
    let err = write_profile(&path, &p).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: invalid noise profile: /near/latency/values_ps: values_ps[1] = 2 ps is below values_ps[0] = 3 ps; quantile values must be non-decreasing",
            path.display()
        )
    );
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn write_into_missing_directory_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope").join("p.h5");
    let err = write_profile(&path, &minimal_profile()).unwrap_err();
    assert!(matches!(err, ProfileError::Write { .. }));
    assert!(err
        .to_string()
        .starts_with(&format!("cannot write noise profile {}: ", path.display())));
}

/// Writes the big profile to $LOGGOPS_PROFILE_DUMP for manual inspection.
#[test]
#[ignore = "manual: writes the big profile to $LOGGOPS_PROFILE_DUMP"]
fn dump_big_profile() {
    let path = std::env::var("LOGGOPS_PROFILE_DUMP").unwrap();
    write_profile(path, &big_profile()).unwrap();
}

/// Reads $LOGGOPS_PROFILE_READ and prints the outcome, for manual inspection.
#[test]
#[ignore = "manual: reads the profile at $LOGGOPS_PROFILE_READ"]
fn read_env_profile() {
    let path = std::env::var("LOGGOPS_PROFILE_READ").unwrap();
    match read_profile(&path) {
        Ok(p) => eprintln!("OK: {} ({})", p.system, p.description),
        Err(e) => eprintln!("ERR: {e}"),
    }
}

/// The latency by size: written as version 7, read back exactly, refused by the validator
/// when its sizes are not increasing.
#[test]
fn latency_by_size_round_trips_as_version_7() {
    let with = |t: SizeLatency| Profile {
        near: Placement {
            latency_by_size: Some(t),
            ..full_profile().near
        },
        ..full_profile()
    };
    let p = with(SizeLatency {
        sizes_bytes: vec![1, 1025, 4097, 16385, 16_777_216],
        extra_ps: vec![0.0, 1.5e6, 2.0e5, 1.6e6, 0.0],
    });
    let (dir, f) = round_trips_as_version(&p, 7);
    let path = dir.path().join("p.h5");
    assert!(f.group("/near/latency_by_size").is_ok());
    let bad = with(SizeLatency {
        sizes_bytes: vec![1, 4097, 1025],
        extra_ps: vec![0.0, 1.0, 2.0],
    });
    let e = write_profile(&path, &bad).unwrap_err().to_string();
    assert!(e.contains("/near/latency_by_size/size_bytes"), "{e}");
    assert!(e.contains("strictly increasing"), "{e}");
}

/// `extra_at` interpolates within the message's side of S and holds the side's end values.
#[test]
fn latency_by_size_interpolates_within_each_side_of_s() {
    let t = SizeLatency {
        sizes_bytes: vec![1, 1025, 4097, 16385, 16_777_216],
        extra_ps: vec![0.0, 1024.0, 3000.0, 6000.0, 0.0],
    };
    let s = 4096;
    assert_eq!(t.extra_at(1, s), 0.0);
    assert_eq!(t.extra_at(513, s), 512.0);
    assert_eq!(t.extra_at(1025, s), 1024.0);
    // Eager above the last eager point: held.
    assert_eq!(t.extra_at(4096, s), 1024.0);
    // Rendezvous below the first rendezvous point: held; between points: linear.
    assert_eq!(t.extra_at(4097, s), 3000.0);
    assert_eq!(t.extra_at(10241, s), 4500.0);
    assert_eq!(t.extra_at(16_777_216, s), 0.0);
    assert_eq!(t.extra_at(1 << 30, s), 0.0);
    let eager_only = SizeLatency {
        sizes_bytes: vec![1, 1025],
        extra_ps: vec![0.0, 1024.0],
    };
    assert_eq!(eager_only.extra_at(8192, s), 0.0);
}

/// Weighted days and latency episodes (schema version 8): they round-trip, need version 8,
/// an episode takes the profile's OS noise, and `split_episodes` rescales the shares.
#[test]
fn states_round_trip_as_version_8_and_split() {
    let base = full_profile();
    let state = |label: &str, weight: f64, episode: bool| Day {
        weight: Some(weight),
        episode,
        ..Day::new(
            label.into(),
            minimal_profile().near,
            None,
            if episode {
                OsNoise::default()
            } else {
                base.os_noise.clone()
            },
        )
    };
    let p = Profile {
        day: "2022-05-13".into(),
        days: vec![state("other day", 0.4, false), state("episodes", 0.1, true)],
        ..base.clone()
    };
    round_trips_as_version(&p, 8);
    let w = p.state_weights();
    assert!(
        (w[0] - 0.5).abs() < 1e-12 && w[1] == 0.4 && w[2] == 0.1,
        "{w:?}"
    );
    assert!((p.episode_weight() - 0.1).abs() < 1e-12);
    assert_eq!(p.os_noise_of(&p.days[1]), &p.os_noise);
    let (quiet, episodes) = p.split_episodes();
    assert_eq!(quiet.days.len(), 1);
    assert!((quiet.days[0].weight.unwrap() - 0.4 / 0.9).abs() < 1e-12);
    assert!(!quiet.has_episodes());
    let e = episodes.expect("the episodes as a profile");
    assert_eq!((e.day.as_str(), e.days.len()), ("episodes", 0));
    assert_eq!(e.near, minimal_profile().near);
    assert_eq!(e.os_noise, p.os_noise);
    // Without weights the days share the repetitions equally, and nothing needs version 8.
    let unweighted = Profile {
        days: vec![Day::new(
            "b".into(),
            minimal_profile().near,
            None,
            OsNoise::default(),
        )],
        ..base.clone()
    };
    assert_eq!(unweighted.state_weights(), vec![0.5, 0.5]);
    assert_eq!(round_trip(&unweighted), unweighted);
    assert!(unweighted.split_episodes().1.is_none());
}

/// The days' weights: every day has one or none has, each in (0, 1), their sum below 1.
#[test]
fn state_weights_are_checked() {
    let day = |w: Option<f64>| Day {
        weight: w,
        ..Day::new("d".into(), minimal_profile().near, None, OsNoise::default())
    };
    let with = |days: Vec<Day>| Profile {
        days,
        ..minimal_profile()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.h5");
    for (days, what) in [
        (
            vec![day(Some(0.2)), day(None)],
            "either every day has a weight",
        ),
        (vec![day(Some(1.5))], "expected a share in (0, 1)"),
        (
            vec![day(Some(0.6)), day(Some(0.5))],
            "leaving the profile's own day no share",
        ),
    ] {
        let e = write_profile(&path, &with(days)).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
    write_profile(&path, &with(vec![day(Some(0.3)), day(Some(0.3))])).unwrap();
}
