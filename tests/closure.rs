//! Calibration closes: simulating each capture's own ping-pong with the profile made from it
//! reproduces the capture (RTT/2 p50 within 3 %, p95 and p99 within 10 %), for every shipped
//! profile of the captures calibration and for `calibrate` on the shared capture sets.

use std::path::{Path, PathBuf};

use loggops_calibrate::closure::{closure_of, loggp_closure, scatter, ClosureRow};
use loggops_calibrate::stats::quantile_sorted;
use loggops_calibrate::{read_loggp, LogGpFit};
use loggops_calibrate::{read_pingpong, PingPongKind, PingPongOptions};
use loggops_profile::{read_profile, Calibration, Placement};

use crate::util::root;

/// Sorted RTT/2 samples (ps) and the message size of a ping-pong capture, warm-up dropped as
/// `calibrate` drops it.
fn capture(path: &Path, kind: PingPongKind) -> (Vec<f64>, u64) {
    let opts = PingPongOptions {
        kind,
        ..PingPongOptions::default()
    };
    let pp = read_pingpong(path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v: Vec<f64> = pp.samples_ps.iter().map(|&p| p as f64).collect();
    v.sort_by(f64::total_cmp);
    (v, pp.size_bytes)
}

fn assert_closes(what: &str, rows: &[ClosureRow]) {
    assert_eq!(rows.len(), 2, "{what}: one latency and one bandwidth row");
    for r in rows {
        assert!(
            r.closes,
            "{what}: {} does not close: captured p50/p95/p99 {:?} us, simulated {:?} us",
            r.benchmark, r.captured_us, r.simulated_us
        );
    }
}

/// The LogGP run's ping-pong (PRTT(1,0,s)/2 at every size between the latency capture's
/// message and one message of the bandwidth capture's) is reproduced by the profile's latency
/// by size: at the sizes where the model alone is not slower than the run (where it is, no
/// extra latency can close it and the fit report names S), the median RTT/2 is off by at most
/// 3 % (or the run's own scatter between neighbouring sizes, if larger) at the median size, and
/// by more than that without the table.
fn assert_loggp_closes(what: &str, near: &Placement, fit: &LogGpFit, lat: u64, bw: u64) {
    assert!(near.latency_by_size.is_some(), "{what}: no latency by size");
    let with = loggp_closure(near, fit, lat, bw).unwrap();
    let without = loggp_closure(
        &Placement {
            latency_by_size: None,
            ..near.clone()
        },
        fit,
        lat,
        bw,
    )
    .unwrap();
    let median_error = |rows: &[(u64, f64, f64)]| {
        let mut e: Vec<f64> = rows
            .iter()
            .zip(&without)
            .filter(|(_, &(_, run, alone))| alone <= run)
            .map(|(&(_, c, m), _)| (m / c - 1.0).abs())
            .collect();
        assert!(
            e.len() >= 10,
            "{what}: {} sizes the model alone does not exceed",
            e.len()
        );
        e.sort_by(f64::total_cmp);
        quantile_sorted(&e, 0.5)
    };
    let (w, wo) = (median_error(&with), median_error(&without));
    // A smooth table cannot follow a run that jumps between neighbouring sizes (Oracle's VM:
    // 7 %); it closes to within that scatter.
    let run: Vec<f64> = with.iter().map(|&(_, c, _)| c).collect();
    let tolerance = scatter(&run).max(0.03);
    assert!(
        w <= tolerance,
        "{what}: LogGP ping-pong off by {w} at the median size (tolerance {tolerance})"
    );
    assert!(wo > w, "{what}: {wo} without the table, {w} with it");
}

/// Every shipped profile made against captures reproduces the captures it names in its
/// provenance (its first two sources: the latency and the bandwidth ping-pong).
#[test]
fn every_shipped_profile_closes_against_its_captures() {
    crate::shared_or_skip!();
    let mut checked = 0;
    for e in std::fs::read_dir(root().join("calibration")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "h5") {
            continue;
        }
        let p = read_profile(&path).unwrap();
        if p.calibration != Calibration::Captures {
            continue;
        }
        let src = &p.provenance.sources;
        let lat = capture(&root().join(&src[0]), PingPongKind::Latency);
        let bw = capture(&root().join(&src[1]), PingPongKind::Bandwidth);
        let rows = closure_of(&p, (&lat.0, lat.1), (&bw.0, bw.1)).unwrap();
        assert_closes(&path.display().to_string(), &rows);
        let loggp = read_loggp(root().join(&src[2])).unwrap();
        let stripes = (bw.1 / p.near.bandwidth_block_bytes.max(1)).max(1);
        let what = path.display().to_string();
        assert_loggp_closes(&what, &p.near, &loggp, lat.1, bw.1 / stripes);
        checked += 1;
    }
    assert!(
        checked >= 8,
        "{checked} shipped profiles of the captures calibration"
    );
}

/// `calibrate` on a capture set of ../shared in the acceptance command's form; returns the
/// profile and its fit report.
fn calibrate_set(
    shared: &Path,
    dir: &Path,
    set: &str,
    s: Option<&str>,
    stripes: &str,
) -> (PathBuf, serde_json::Value) {
    calibrate_set_with(shared, dir, set, s, stripes, &[])
}

/// [`calibrate_set`] with `extra` flags.
fn calibrate_set_with(
    shared: &Path,
    dir: &Path,
    set: &str,
    s: Option<&str>,
    stripes: &str,
    extra: &[&str],
) -> (PathBuf, serde_json::Value) {
    let out = dir.join(format!("{set}.h5"));
    let report = dir.join(format!("{set}.json"));
    let set_dir = shared.join("captures").join(set);
    let mut args = vec!["--report-json", report.to_str().unwrap()];
    args.extend_from_slice(extra);
    crate::util::calibrate_capture_set(&set_dir, set, s, stripes, &args, &out);
    let json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (out, json)
}

/// `calibrate` on the full capture sets of ../shared (the acceptance command's form) makes
/// profiles whose fit report says every row closes. The 2022-03-30 set runs without
/// `--set-S`: Netgauge marks no protocol change there, and S comes from the step up of its
/// LogGP ping-pong between 7,169 and 8,193 B.
#[test]
fn calibrate_closes_on_the_shared_capture_sets() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    for (set, s, stripes) in [
        ("daint-2022-03-30", None, "1"),
        ("daint-2022-05-13", Some("4KiB"), "1"),
        ("gcp-2022-06-08", Some("64KiB"), "8"),
    ] {
        let (out, json) = calibrate_set(&shared, dir.path(), set, s, stripes);
        let rows = json["closure"]["rows"].as_array().expect("closure rows");
        let size = |i: usize| rows[i]["size_bytes"].as_u64().unwrap();
        let p = read_profile(&out).unwrap();
        let loggp = read_loggp(root().join(&p.provenance.sources[2])).unwrap();
        let stripes = rows[1]["stripes"].as_u64().unwrap().max(1);
        assert_loggp_closes(set, &p.near, &loggp, size(0), size(1) / stripes);
        assert_eq!(rows.len(), 2, "{set}");
        for r in rows {
            assert_eq!(r["closes"], true, "{set}: {r}");
        }
        // Only on 2022-05-13 is the LogGP ping-pong's back-to-back RTT/2 (1.669 us) clearly
        // below the capture's median (2.146 us): its back-to-back latency is the capture's
        // fastest part with that median.
        let sources = json["closure"]["sources"].to_string();
        assert_eq!(
            sources.contains("S = 8KiB (the LogGP run's ping-pong steps up 2.0x from 7169 B (PRTT(1,0,s) 7.15 us) to 8193 B (15.73 us): the first protocol change of the run"),
            s.is_none(),
            "{set}: {sources}"
        );
        assert_eq!(
            sources.contains("whose median is the LogGP ping-pong's back-to-back PRTT(1,0,1)/2"),
            set == "daint-2022-05-13",
            "{set}: {sources}"
        );
        // Only the 2022-05-13 latency capture holds its tail in a few runs (episodes); the
        // default makes them a state of their own, weighted by their share of the samples
        // (the closure rows above simulate both states against the whole capture).
        let episodes = json
            .to_string()
            .contains("the tail comes in episodes: 15 of 287");
        assert_eq!(episodes, set == "daint-2022-05-13", "{set}: {json}");
        assert_eq!(json["states"].is_null(), !episodes, "{set}");
        assert_eq!(p.has_episodes(), episodes, "{set}");
        if episodes {
            let w = p.episode_weight();
            assert!((0.04..0.07).contains(&w), "{set}: episode weight {w}");
            assert_eq!(json["states"]["episode_runs"], 15);
            // The state outside episodes keeps the capture's median and halves its p99.
            let quiet = &json["states"]["quiet_closure"][0]["captured_us"];
            let all = &rows[0]["captured_us"];
            let r = |i: usize| quiet[i].as_f64().unwrap() / all[i].as_f64().unwrap();
            assert!(
                (r(0) - 1.0).abs() < 0.01 && r(2) < 0.6,
                "{quiet} against {all}"
            );
        }
        // Runs that keep their own bandwidth: GCP's and 2022-05-13's slow runs (about a tenth
        // of them, 20-25 % slower) become levels.
        let levels = p.near.bandwidth_levels.as_ref().expect("bandwidth levels");
        let q = |x: f64| {
            loggops_noise::Sampler::new(levels, loggops_noise::Scaling::Absolute, "x")
                .unwrap()
                .sample(x)
        };
        assert!((q(0.5) - 1.0).abs() < 0.01, "{set}: level p50 {}", q(0.5));
        if set != "daint-2022-03-30" {
            assert!(q(0.95) > 1.15, "{set}: level p95 {}", q(0.95));
        }
    }
}

/// `calibrate` on the loaded VM's captures (../shared/captures/vm-under-load) with the
/// bandwidth capture `bw`, in `dir`; returns the profile and the fit report.
fn calibrate_vm(shared: &Path, dir: &Path, bw: &str) -> (PathBuf, serde_json::Value) {
    let vm = shared.join("captures/vm-under-load");
    calibrate_json(
        dir,
        "vm",
        &vm.join("ng_netnoise_mpi_lat.out"),
        &vm.join(bw),
        &vm.join("ng_loggp.out"),
    )
}

/// `calibrate` by the acceptance form (`--set-S 4KiB`, no OS noise) into `dir`: the profile's
/// path and the fit report's JSON.
fn calibrate_json(
    dir: &Path,
    system: &str,
    latency: &Path,
    bandwidth: &Path,
    loggp: &Path,
) -> (PathBuf, serde_json::Value) {
    let (out, report) = (
        dir.join(format!("{system}.h5")),
        dir.join(format!("{system}.json")),
    );
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let o = crate::util::run(&[
        "calibrate",
        "--system",
        system,
        "--latency",
        &arg(latency),
        "--bandwidth",
        &arg(bandwidth),
        "--loggp",
        &arg(loggp),
        "--set-S",
        "4KiB",
        "--report-json",
        &arg(&report),
        "-o",
        &arg(&out),
    ]);
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    let json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (out, json)
}

/// A capture of few samples closes too: the loaded VM's 16 MiB bandwidth capture keeps 2,937
/// samples (before one grid point per sample, its deconvolution collapsed and the row missed
/// its median by +5.9 %).
#[test]
fn calibrate_closes_on_a_capture_of_few_samples() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    let (_, json) = calibrate_vm(&shared, dir.path(), "ng_netnoise_mpi_bw_16777216.out");
    let rows = json["closure"]["rows"].as_array().expect("closure rows");
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["closes"], true, "{r}");
    }
}

/// GOAL text: `n` round trips of `size` bytes between ranks 0 and 1, back to back.
fn pingpong_sequence(n: usize, size: u64) -> String {
    let mut s = String::from("num_ranks 2\nrank 0 {\n");
    for i in 0..n {
        s += &format!("s{i}: send {size}b to 1 tag {i}\nr{i}: recv {size}b from 1 tag {i}\n");
        s += &format!("r{i} requires s{i}\n");
        if i > 0 {
            s += &format!("s{i} requires r{}\n", i - 1);
        }
    }
    s += "}\nrank 1 {\n";
    for i in 0..n {
        s += &format!("r{i}: recv {size}b from 0 tag {i}\ns{i}: send {size}b to 0 tag {i}\n");
        s += &format!("s{i} requires r{i}\n");
        if i > 0 {
            s += &format!("r{i} requires s{}\n", i - 1);
        }
    }
    s + "}\n"
}

/// Bandwidth that stays bad for a while: 50 consecutive 16 MiB round trips of a Netgauge run
/// spread as the capture's windows of 50 consecutive samples do (p95/p50 within 2 % plus a
/// tenth of the captured excess; 2022-05-13: 1.225 captured, 1.059 without levels).
#[test]
fn consecutive_round_trips_spread_as_the_capture_windows() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    const N: usize = 50;
    let goal = dir.path().join("pp.goal");
    std::fs::write(&goal, pingpong_sequence(N, 16 << 20)).unwrap();
    for set in ["daint-2022-03-30", "daint-2022-05-13"] {
        let (out, _) = calibrate_set(&shared, dir.path(), set, Some("4KiB"), "1");
        let bw =
            crate::util::capture_file(&shared.join("captures").join(set), "ng_netnoise_mpi_bw.out");
        let opts = PingPongOptions {
            kind: PingPongKind::Bandwidth,
            ..PingPongOptions::default()
        };
        let pp = read_pingpong(&bw, &opts).unwrap();
        let mut windows: Vec<f64> = Vec::new();
        for (_, run) in pp.runs() {
            for w in run.chunks_exact(N) {
                windows.push(w.iter().map(|&x| x as f64).sum());
            }
        }
        windows.sort_by(f64::total_cmp);
        let ratio = |v: &[f64]| quantile_sorted(v, 0.95) / quantile_sorted(v, 0.5);
        let captured = ratio(&windows);
        let o = crate::util::run(&[
            "--goal",
            goal.to_str().unwrap(),
            "--noise",
            out.to_str().unwrap(),
            "--noise-mode",
            "net",
            "--reps",
            "400",
            "--format",
            "json",
            "-q",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let c = &j["cells"][0];
        let simulated = c["p95_ps"].as_f64().unwrap() / c["median_ps"].as_f64().unwrap();
        assert!(
            (simulated - captured).abs() <= 0.02 + 0.1 * (captured - 1.0),
            "{set}: {N} round trips p95/p50 simulated {simulated:.4}, captured windows {captured:.4}"
        );
    }
}

/// The 2022-05-13 Daint capture set calibrated into `dir` (`--set-S 4KiB`): its fit report
/// must contain `in_report` and its `profile show` text `in_show`; the profile and its
/// `profile show --format json`.
fn daint_profile_showing(
    shared: &Path,
    dir: &Path,
    in_report: &str,
    in_show: &str,
) -> (PathBuf, serde_json::Value) {
    let (out, report) = calibrate_set(shared, dir, "daint-2022-05-13", Some("4KiB"), "1");
    let report = report.to_string();
    assert!(report.contains(in_report), "{report}");
    let p = out.to_str().unwrap();
    let text = crate::util::stdout(&crate::util::run(&["profile", "show", p]));
    assert!(text.contains(in_show), "{text}");
    let o = crate::util::run(&["profile", "show", p, "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (out, serde_json::from_slice(&o.stdout).unwrap())
}

/// What a user sees of the latency by size: the fit report's line, `profile show` (text and
/// JSON), with the table anchored at 0 at the captures' own message sizes.
#[test]
fn latency_by_size_is_reported_and_shown() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    let (_, j) = daint_profile_showing(
        &shared,
        dir.path(),
        "latency by size: PRTT(1,0,s)/2 of the LogGP run",
        "latency by size (one way, on top of L and G",
    );
    let t = &j["near"]["latency_by_size"];
    let sizes = t["size_bytes"].as_array().unwrap();
    let extra = t["extra_ps"].as_array().unwrap();
    assert_eq!(sizes.len(), extra.len());
    assert_eq!(sizes[0], 1);
    assert_eq!(sizes[sizes.len() - 1], 16 << 20);
    assert_eq!(extra[0], 0.0);
    assert_eq!(extra[extra.len() - 1], 0.0);
}

/// A run's settings give the profile's latency by size beside L, o, g and G (the same points
/// as `profile show`): without it the noiseless times do not follow from the settings line.
#[test]
fn a_runs_settings_give_the_latency_by_size() {
    let show = crate::util::stdout(&crate::util::run_here(&[
        "profile",
        "show",
        "calibration/aws.h5",
    ]));
    let points = show
        .lines()
        .find_map(|l| l.split_once("latency by size (one way").map(|(_, r)| r))
        .and_then(|r| r.split_once("points): "))
        .map(|(_, p)| p.to_string())
        .unwrap_or_else(|| panic!("{show}"));
    assert!(points.starts_with("1B 0ps, 1KiB "), "{points}");
    let args = [
        "--goal",
        "goal/dissemination_16B.goal",
        "--nodes",
        "2",
        "--noise",
        "calibration/aws.h5",
        "--noise-mode",
        "none",
        "-q",
    ];
    let table = crate::util::stdout(&crate::util::run_here(&args));
    let line = format!("; latency by size (one way, on top of L and G): {points}; ");
    assert!(table.contains(&line), "{line}\n{table}");
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let j: serde_json::Value =
        serde_json::from_str(&crate::util::stdout(&crate::util::run_here(&json_args))).unwrap();
    assert_eq!(j["plan"]["systems"][0]["latency_by_size"], points.as_str());
}

/// What a user sees of bandwidth levels: `profile show` lists them (text and JSON), the fit
/// report's time-correlation warning says the profile keeps them, and a run records who shared
/// them when `--bandwidth-levels` is given.
#[test]
fn bandwidth_levels_are_shown_and_recorded() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    let (out, j) = daint_profile_showing(
        &shared,
        dir.path(),
        "the profile keeps the runs' bandwidth levels",
        "bandwidth levels (a factor on every per-byte time",
    );
    let p = out.to_str().unwrap();
    let p95 = j["near"]["bandwidth_levels"]["quantiles"]["p95"]
        .as_f64()
        .unwrap();
    assert!(p95 > 1.15, "{p95}");
    let goal = dir.path().join("pp.goal");
    std::fs::write(&goal, pingpong_sequence(2, 1 << 20)).unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["--goal", goal.to_str().unwrap(), "--noise", p];
        args.extend_from_slice(&["--reps", "4", "--format", "json", "-q"]);
        args.extend_from_slice(extra);
        let o = crate::util::run(&args);
        assert!(o.status.success(), "{}", crate::util::stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let noise = |v: &serde_json::Value| v["plan"]["settings"]["noise"].clone();
    assert_eq!(
        noise(&run(&["--bandwidth-levels", "link"]))["bandwidth_levels"],
        "link"
    );
    assert!(noise(&run(&[])).get("bandwidth_levels").is_none());
}

/// `--latency-episodes separate` leaves the runs that hold the 2022-05-13 latency capture's
/// tail out of the profile (VALIDATION.md, "Latency episodes"): the fit report names them,
/// the closure reproduces the other runs, whose p99 is half the pooled one, and the median
/// stays. The default holds them as a state of their own, which `validate` simulates apart.
#[test]
fn latency_episodes_are_left_out_on_request_or_a_state() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    let set = "daint-2022-05-13";
    let set_dir = shared.join("captures").join(set);
    let episodes = ["--latency-episodes", "separate"];
    let (out, json) = calibrate_set_with(&shared, dir.path(), set, Some("4KiB"), "1", &episodes);
    let text = json.to_string();
    assert!(
        text.contains("episodes left out: 15 of 287 Netgauge runs hold 78 % of the samples"),
        "{text}"
    );
    let rows = json["closure"]["rows"].as_array().expect("closure rows");
    for r in rows {
        assert_eq!(r["closes"], true, "{r}");
    }
    let (pooled, _) = capture(
        &crate::util::capture_file(&set_dir, "ng_netnoise_mpi_lat.out"),
        PingPongKind::Latency,
    );
    // Closure rows hold p50, p95, p99 in µs; the pooled samples are in ps.
    let captured = &rows[0]["captured_us"];
    let (p50, p99) = (
        1e6 * captured[0].as_f64().unwrap(),
        1e6 * captured[2].as_f64().unwrap(),
    );
    let (q50, q99) = (
        quantile_sorted(&pooled, 0.5),
        quantile_sorted(&pooled, 0.99),
    );
    assert!((p50 / q50 - 1.0).abs() < 0.01, "p50 {p50} against {q50}");
    assert!(p99 < 0.6 * q99, "p99 {p99} against the pooled {q99}");
    // The profile says so too (`profile show`), as the shipped daint.h5 says it pooled them.
    let show = |p: &Path| {
        crate::util::stdout(&crate::util::run(&["profile", "show", p.to_str().unwrap()]))
    };
    let text = show(&out);
    assert!(
        text.contains("latency episodes: 15 of the latency capture's 287 runs")
            && text.contains("left out of the latency distributions"),
        "{text}"
    );
    let text = show(&root().join("calibration/daint.h5"));
    assert!(
        text.contains("a state of their own")
            && text.contains("2022-05-19 latency episodes (latency episode, 7.8 %)"),
        "{text}"
    );

    // The default holds the episodes as a state of their own: `validate` predicts from the
    // state outside them, to the picosecond what the profile without them predicts, and
    // reports the episodes' mean beside it.
    let default_dir = dir.path().join("default");
    std::fs::create_dir(&default_dir).unwrap();
    let (state, _) = calibrate_set(&shared, &default_dir, set, Some("4KiB"), "1");
    let measured = dir.path().join("measured");
    std::fs::create_dir(&measured).unwrap();
    for f in ["nwaydissemination_8_16384.csv", "pipelinedring_8_16.csv"] {
        let from = shared.join("measured/daint_2022_05_06_19_04_02").join(f);
        std::fs::copy(from, measured.join(f)).unwrap();
    }
    let validate = |p: &Path| -> serde_json::Value {
        let o = crate::util::run(&[
            "validate",
            measured.to_str().unwrap(),
            "--noise",
            p.to_str().unwrap(),
            "--reps",
            "40",
            "--seed",
            "1",
            "--format",
            "json",
            "-q",
        ]);
        assert!(o.status.success(), "{}", crate::util::stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let (with, without) = (validate(&state), validate(&out));
    let rows = |v: &serde_json::Value| v["benchmarks"].as_array().unwrap().clone();
    for (a, b) in rows(&with).iter().zip(&rows(&without)) {
        assert_eq!(a["simulated_mean_ps"], b["simulated_mean_ps"], "{a}");
        assert_eq!(a["simulated_p95_ps"], b["simulated_p95_ps"], "{a}");
        assert!(b["episode_mean_ps"].is_null(), "{b}");
        let w = a["episode_weight"].as_f64().unwrap();
        assert!((0.04..0.07).contains(&w), "{a}");
        assert!(a["episode_mean_ps"].as_f64().unwrap() > 0.0, "{a}");
    }
    // Episodes with too few samples for a state of their own are pooled, and the report
    // says why.
    let few_dir = dir.path().join("few");
    std::fs::create_dir(&few_dir).unwrap();
    let few = ["--min-samples", "20000"];
    let (pooled, report) = calibrate_set_with(&shared, &few_dir, set, Some("4KiB"), "1", &few);
    let text = report.to_string();
    assert!(text.contains("cannot make a state of their own"), "{text}");
    assert!(!read_profile(&pooled).unwrap().has_episodes());
    // The 16 KiB dissemination is several times slower inside an episode.
    let d = &rows(&with)[0];
    assert!(
        d["episode_mean_ps"].as_f64().unwrap() > 3.0 * d["simulated_mean_ps"].as_f64().unwrap(),
        "{d}"
    );
}

/// `profile combine` of two profiles with latency episodes: each file keeps half of the
/// repetitions, split between its states as before, and its episodes keep its OS noise; a
/// sweep runs on the result and says how likely a repetition lies inside an episode; a day
/// given twice is refused.
#[test]
fn combined_profiles_keep_each_files_states() {
    let dir = tempfile::tempdir().unwrap();
    let daint = root().join("calibration/daint.h5");
    let p = read_profile(&daint).unwrap();
    let w = p.episode_weight();
    assert!(w > 0.0, "the shipped daint.h5 holds latency episodes");
    let (a, b, ab) = (
        dir.path().join("a.h5"),
        dir.path().join("b.h5"),
        dir.path().join("ab.h5"),
    );
    // Two days: the shipped profile and a copy labelled as another day.
    std::fs::copy(&daint, &a).unwrap();
    let mut other = p.clone();
    other.day = "2022-05-20".into();
    loggops_profile::write_profile(&b, &other).unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let o = crate::util::run(&["profile", "combine", &path(&a), &path(&b), "-o", &path(&ab)]);
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    assert!(
        crate::util::stderr(&o).contains(
            "(2 capture days: 2022-05-19, 2022-05-20; states of their own: 2022-05-19 latency episodes, "
        ),
        "{}",
        crate::util::stderr(&o)
    );
    let c = read_profile(&ab).unwrap();
    let weights = c.state_weights();
    let want = [(1.0 - w) / 2.0, w / 2.0, (1.0 - w) / 2.0, w / 2.0];
    assert_eq!(weights.len(), 4, "{weights:?}");
    for (got, want) in weights.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{weights:?} against {want}");
    }
    assert_eq!(
        c.days.iter().map(|d| d.episode).collect::<Vec<_>>(),
        [true, false, true]
    );
    assert_eq!(c.os_noise_of(&c.days[2]), &p.os_noise);
    // A day given twice (here through the combined file) is refused, and nothing is written.
    let twice = dir.path().join("twice.h5");
    let o = crate::util::run(&[
        "profile",
        "combine",
        &path(&ab),
        &path(&a),
        "-o",
        &path(&twice),
    ]);
    assert!(!o.status.success());
    assert!(
        crate::util::stderr(&o).contains("capture day `2022-05-19` is already in"),
        "{}",
        crate::util::stderr(&o)
    );
    assert!(!twice.exists());
    // Days whose MPI progresses otherwise are refused: which one would the runs take?
    let mut async_day = p.clone();
    async_day.day = "2022-05-21".into();
    async_day.mpi_progress = None;
    let c = dir.path().join("c.h5");
    loggops_profile::write_profile(&c, &async_day).unwrap();
    let o = crate::util::run(&[
        "profile",
        "combine",
        &path(&a),
        &path(&c),
        "-o",
        &path(&twice),
    ]);
    assert!(!o.status.success());
    assert!(
        crate::util::stderr(&o).contains(&format!(
            "{}: MPI progress not recorded (asynchronous), but {} has polled",
            path(&c),
            path(&a)
        )),
        "{}",
        crate::util::stderr(&o)
    );
    assert!(!twice.exists());
    // `profile show` names the states and their shares (text and JSON).
    let o = crate::util::run(&["profile", "show", &path(&ab)]);
    let text = crate::util::stdout(&o);
    assert!(
        text.contains("further states:") && text.contains("(latency episode, "),
        "{text}"
    );
    assert!(
        text.contains("(a message's time beyond o_send + o_recv: 0 where a captured RTT/2 left nothing beyond 2o)"),
        "{text}"
    );
    let o = crate::util::run(&["profile", "show", &path(&ab), "--format", "json"]);
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["state_weights"].as_array().unwrap().len(), 4, "{j}");
    assert_eq!(j["episodes"].as_array().unwrap().len(), 2, "{j}");
    let goal = root().join("goal/dissemination_16B.goal");
    let o = crate::util::run(&[
        "--goal",
        goal.to_str().unwrap(),
        "--nodes",
        "8",
        "--noise",
        &path(&ab),
        "--reps",
        "20",
    ]);
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    let text = crate::util::stdout(&o);
    assert!(
        text.contains(&format!(
            "a repetition runs inside a latency episode with probability {:.1} %",
            100.0 * w
        )),
        "{text}"
    );
}

/// A profile that does not reproduce its captures says so: a warning naming the rows that
/// miss, and a note that does not claim closure (the loaded VM's 1 MiB capture, 13 % of whose
/// ping-pongs are time slices of milliseconds that no per-message distribution closes).
#[test]
fn a_closure_that_fails_is_a_warning() {
    let shared = crate::shared_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    let (out, json) = calibrate_vm(&shared, dir.path(), "ng_netnoise_mpi_bw_1048576.out");
    let rows = json["closure"]["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["closes"] == false), "{json}");
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains("closure: the profile does not reproduce its own captures"),
        "{warnings}"
    );
    let notes = read_profile(&out).unwrap().provenance.notes.join("\n");
    assert!(notes.contains("does NOT reproduce them"), "{notes}");
}

/// The second half of AWS's captures (another stretch of the same night, as a user's capture
/// of another day would be) closes: 1.03 % of its latency samples are a far tail at 80 us
/// RTT/2 (the body's p98.8 is 24 us), so its p99 lies on that gap, and a simulated p99 of
/// 20,000 repetitions falls on either side by chance (a share of 1.00 % gives 32 us: −60 %).
/// The verdict compares it with the captured quantiles within its sampling error; the row
/// says so (`closes_by_band`).
#[test]
#[ignore = "slow: one calibrate of 171,804 + 171,804 samples (about 10 s in release)"]
fn calibrate_closes_on_a_capture_whose_p99_lies_on_a_gap() {
    use std::io::{BufRead, BufReader, Write};
    let shared = crate::shared_or_skip!();
    let aws = shared.join("captures/cloud_noise/aws_hpcmetal_c5n_SRnight");
    let dir = tempfile::tempdir().unwrap();
    // The header and the second half of the rows.
    let half = |name: &str| -> PathBuf {
        let f = std::fs::File::open(aws.join(format!("{name}.xz"))).unwrap();
        let lines: Vec<String> = BufReader::new(liblzma::read::XzDecoder::new(f))
            .lines()
            .map(Result::unwrap)
            .collect();
        let (head, rows): (Vec<&String>, Vec<&String>) =
            lines.iter().partition(|l| l.starts_with('#'));
        let out = dir.path().join(name);
        let mut w = std::fs::File::create(&out).unwrap();
        for l in head.iter().chain(&rows[rows.len() / 2..]) {
            writeln!(w, "{l}").unwrap();
        }
        out
    };
    let (lat, bw) = (
        half("ng_netnoise_mpi_lat.out"),
        half("ng_netnoise_mpi_bw.out"),
    );
    let (_, json) = calibrate_json(dir.path(), "aws", &lat, &bw, &aws.join("ng_loggp.out"));
    let rows = json["closure"]["rows"].as_array().expect("closure rows");
    for r in rows {
        assert_eq!(r["closes"], true, "{r}");
    }
    // The latency row closes on its band, which spans the gap at the p99.
    assert_eq!(rows[0]["closes_by_band"], true, "{}", rows[0]);
    let band = &rows[0]["captured_band_us"][2];
    let (lo, hi) = (band[0].as_f64().unwrap(), band[1].as_f64().unwrap());
    assert!(lo < 30.0 && hi > 75.0, "{band}");
}
