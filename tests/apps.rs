//! Issue 28: real MPI applications (`../shared/apps/`: LULESH and NPB traced with liballprof
//! and converted by Schedgen, 8–27 ranks) in the default mode.
//!
//! * Plain `calc` numbers are ticks of 1 ns: with LogGOPSim's parameters given as plain ns
//!   flags, every rank finishes at LogGOPSim's tick × 1000 ps, for each application and each
//!   of its three recorded parameter sets (LogGOPSim prints every rank up to 16 ranks, else the
//!   maximum and its rank).
//! * The binary path: the program written as binary GOAL (calc in ticks of 1 ns) holds the
//!   text's numbers, as txt2bin would write them, and reads back to the same program.
//! * Noise: every application runs under a shipped profile with the windowed engine's answer
//!   equal to the global engine's, and the CLI's JSON does not depend on `--threads`.
use std::io::Read;
use std::path::{Path, PathBuf};

use loggops_engine::{
    simulate, simulate_global, simulate_windowed_with, Ancestry, Config, NoNoise, Outcome, Params,
    PerByte, Program,
};
use loggops_goal::{first_difference, ExplicitProgram, ParseOptions};
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
use loggops_units::{parse_per_byte, parse_time, TimeRules, TimeUnit};

use crate::shared_or_skip;
use crate::util::{run, shipped_profiles, stderr, stdout, write_file};

/// LogGOPSim's parameter sets of `apps/README.md`: output file suffix and flags (plain ns).
const PARAMETER_SETS: [(&str, &[(&str, &str)]); 3] = [
    ("default", &[]),
    (
        "L3000_o1500_g1000_G6",
        &[("-L", "3000"), ("-o", "1500"), ("-g", "1000"), ("-G", "6")],
    ),
    ("S1024_O1", &[("-S", "1024"), ("-O", "1")]),
];

/// The application folders, sorted.
fn apps(shared: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(shared.join("apps"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    assert!(v.len() >= 7, "{v:?}");
    v
}

fn name(dir: &Path) -> &str {
    dir.file_name().unwrap().to_str().unwrap()
}

/// The GOAL text of an application (`<name>.goal.xz`).
fn goal_text(dir: &Path) -> String {
    let path = dir.join(format!("{}.goal.xz", name(dir)));
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    liblzma::read::XzDecoder::new(f)
        .read_to_string(&mut text)
        .unwrap();
    text
}

fn parse(dir: &Path, text: &str, opts: &ParseOptions) -> ExplicitProgram {
    loggops_goal::parse_str_with(name(dir), text, opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .program
}

/// The parameters the command line makes of `flags` (as `-L 3000` etc., bare numbers in ns).
fn params(flags: &[(&str, &str)]) -> Params {
    let mut p = Params::loggopsim_defaults_ps();
    let per_byte =
        |v| PerByte::from_raw(parse_per_byte(v, TimeUnit::Ns, PerByte::FRAC_BITS).unwrap());
    for &(flag, v) in flags {
        match flag {
            "-L" => p.l = parse_time(v, TimeRules::COMMAND_LINE).unwrap(),
            "-o" => p.o = parse_time(v, TimeRules::COMMAND_LINE).unwrap(),
            "-g" => p.g = parse_time(v, TimeRules::COMMAND_LINE).unwrap(),
            "-G" => p.big_g = per_byte(v),
            "-O" => p.big_o = per_byte(v),
            "-S" => p.s = v.parse().unwrap(),
            _ => unreachable!("{flag}"),
        }
    }
    p
}

/// LogGOPSim's answer in ticks: every rank's finishing time (`Host h: t`, up to 16 ranks) or
/// the maximum and its rank.
enum Answer {
    Hosts(Vec<u64>),
    Max { host: u32, ticks: u64 },
}

fn loggopsim_answer(out: &Path) -> Answer {
    let text = std::fs::read_to_string(out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let mut hosts = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Host ") {
            let (h, t) = rest.split_once(": ").unwrap();
            assert_eq!(h.parse::<usize>().unwrap(), hosts.len(), "{line}");
            hosts.push(t.parse().unwrap());
        } else if let Some(rest) = line.strip_prefix("Maximum finishing time at host ") {
            let (h, rest) = rest.split_once(": ").unwrap();
            let t = rest.split_whitespace().next().unwrap();
            return Answer::Max {
                host: h.parse().unwrap(),
                ticks: t.parse().unwrap(),
            };
        }
    }
    assert!(!hosts.is_empty(), "{}: no finishing times", out.display());
    Answer::Hosts(hosts)
}

/// Asserts that `out` (ps) is LogGOPSim's `answer` (ticks of 1 ns), rank by rank.
fn check(what: &str, out: &Outcome, answer: &Answer) {
    assert!(out.completed(), "{what}: did not complete");
    match answer {
        Answer::Hosts(ticks) => {
            let want: Vec<u64> = ticks.iter().map(|t| t * 1000).collect();
            assert_eq!(out.finish, want, "{what}: finishing times (ps)");
        }
        Answer::Max { host, ticks } => {
            assert_eq!(
                out.max(),
                (ticks * 1000, *host),
                "{what}: maximum (ps, rank)"
            );
        }
    }
}

#[test]
fn finishing_times_are_loggopsim_ticks_in_ns() {
    let shared = shared_or_skip!();
    let ns = ParseOptions::default();
    let raw = ParseOptions::ticks_as_is();
    for dir in apps(&shared) {
        let text = goal_text(&dir);
        let prog = parse(&dir, &text, &ns);
        // Through binary GOAL: calc fields hold the text's numbers (what txt2bin writes) and
        // read back, with the same tick, to the same program.
        let mut bin = Vec::new();
        loggops_goal::write_binary(&prog, &mut bin).unwrap();
        let mut bin_ticks = Vec::new();
        loggops_goal::write_binary_with(&parse(&dir, &text, &raw), &mut bin_ticks, 1).unwrap();
        assert!(bin == bin_ticks, "{}: binary calc fields", name(&dir));
        let back = loggops_goal::read_binary_from("app.bin", std::io::Cursor::new(bin)).unwrap();
        assert_eq!(first_difference(&back, &prog), None, "{}", name(&dir));

        for (set, flags) in PARAMETER_SETS {
            let answer = loggopsim_answer(&dir.join(format!("loggopsim.{set}.out")));
            let out = simulate(&prog, &Config::new(params(flags)), &mut NoNoise).unwrap();
            check(&format!("{} {set}", name(&dir)), &out, &answer);
        }
    }
}

/// The same through the command line (flags as a user types them), text and `--tick`, on the
/// smallest application.
#[test]
fn command_line_reads_traces_in_ns_ticks() {
    let shared = shared_or_skip!();
    let dir = shared.join("apps/npb_ft_S_p8");
    let tmp = tempfile::tempdir().unwrap();
    let text = goal_text(&dir);
    let goal = write_file(tmp.path(), "npb_ft_S_p8.goal", &text);
    for (set, flags) in PARAMETER_SETS {
        let mut args = vec!["--goal", goal.to_str().unwrap(), "--format", "json"];
        for (f, v) in flags {
            args.extend([*f, *v]);
        }
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["plan"]["settings"]["tick_ps"].as_u64(), Some(1000));
        let finish: Vec<u64> = v["cells"][0]["run"]["finish_ps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap())
            .collect();
        let Answer::Hosts(ticks) = loggopsim_answer(&dir.join(format!("loggopsim.{set}.out")))
        else {
            panic!("8 ranks: LogGOPSim prints every host");
        };
        let want: Vec<u64> = ticks.iter().map(|t| t * 1000).collect();
        assert_eq!(finish, want, "{set}");
    }
    // With a 1 ps tick (the paper's simulator's unit) compute is 1000 times shorter.
    let ps = run(&[
        "--goal",
        goal.to_str().unwrap(),
        "--tick",
        "1ps",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&ps.stdout).unwrap();
    assert_eq!(v["plan"]["settings"]["tick_ps"].as_u64(), Some(1));
    let prog = parse(&dir, &text, &ParseOptions::with_tick(1));
    let out = simulate(
        &prog,
        &Config::new(Params::loggopsim_defaults_ps()),
        &mut NoNoise,
    )
    .unwrap();
    assert_eq!(
        v["cells"][0]["noiseless_ps"].as_u64(),
        Some(out.max().0),
        "{}",
        stdout(&ps)
    );
}

/// Every application under a shipped profile (a different one for each, so that profiles with
/// and without far parameters and nodes per switch below and above the rank count all occur),
/// two repetitions of `os+net`: they complete, and the windowed engine, where it answers, gives
/// the global engine's answer.
#[test]
fn noise_runs_on_every_application() {
    let shared = shared_or_skip!();
    let profiles = shipped_profiles();
    for (i, dir) in apps(&shared).iter().enumerate() {
        let prog = parse(dir, &goal_text(dir), &ParseOptions::default());
        let path = &profiles[i % profiles.len()];
        let profile = loggops_profile::read_profile(path).unwrap();
        let cfg = NoiseConfig {
            mode: NoiseMode::OsNet,
            ..NoiseConfig::default()
        };
        let model = NoiseModel::new(&profile, &cfg).unwrap();
        let cfg = Config::new(model.engine_params());
        let what = format!("{} with {}", name(dir), path.display());
        for rep in 0..2 {
            let noise = || model.instance(3, rep, prog.num_ranks());
            let global = simulate_global(&prog, &cfg, &mut noise()).unwrap();
            assert!(global.completed(), "{what} rep {rep}");
            if let Ok(w) = simulate_windowed_with(&prog, &cfg, &mut noise(), Ancestry::Full) {
                assert_eq!(w, global, "{what} rep {rep}: windowed engine");
            }
            assert_eq!(
                simulate(&prog, &cfg, &mut noise()).unwrap(),
                global,
                "{what}"
            );
        }
    }
}

/// `--noise` on two applications with two profiles: the JSON is the same with 1 and 3
/// threads (it holds no wall times).
#[test]
fn noisy_applications_do_not_depend_on_the_thread_count() {
    let shared = shared_or_skip!();
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for app in ["npb_ft_S_p8", "lulesh_p27_s10_i20"] {
        let text = goal_text(&shared.join("apps").join(app));
        let goal = write_file(tmp.path(), &format!("{app}.goal"), &text);
        for profile in ["alps", "aws"] {
            let profile = root.join(format!("calibration/{profile}.h5"));
            let json = |threads: &str| {
                let out = run(&[
                    "--goal",
                    goal.to_str().unwrap(),
                    "--noise",
                    profile.to_str().unwrap(),
                    "--noise-mode",
                    "none,os,net,os+net",
                    "--reps",
                    "6",
                    "--seed",
                    "11",
                    "--format",
                    "json",
                    "-q",
                    "--threads",
                    threads,
                ]);
                assert!(out.status.success(), "{app}: {}", stderr(&out));
                stdout(&out)
            };
            let one = json("1");
            assert_eq!(one, json("3"), "{app} with {}", profile.display());
            let v: serde_json::Value = serde_json::from_str(&one).unwrap();
            assert_eq!(v["plan"]["settings"]["tick_ps"].as_u64(), Some(1000));
            assert_eq!(v["cells"].as_array().unwrap().len(), 4);
        }
    }
}
