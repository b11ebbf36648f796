//! One function per reader of untrusted input, shared by the libFuzzer targets in `fuzz/`
//! (nightly, `cargo fuzz run <target>`) and by this crate's test, which replays the committed
//! corpus `fuzz/corpus/<target>/` through the same functions on stable Rust.
//!
//! Each function must return for every input, without panicking, overflowing the stack or
//! running for long: the readers' errors are the expected outcome for most inputs. Inputs that
//! parse go one step further (a GOAL program or schedule is simulated when it is small, a
//! profile builds the noise models), so the fuzzer also reaches what the readers hand on.
//!
//! | target | reader | input |
//! |---|---|---|
//! | `goal_text` | `loggops_goal::parse_reader_with` (ticks of 1 ps, 1 ns, 1 s) | GOAL text |
//! | `goal_binary` | `loggops_goal::read_binary_from_with` (ticks of 1 ps, 1 ns, 1 s) | LogGOPSim binary GOAL |
//! | `schedule` | `loggops_schedgen::parse_schedule_str` | first byte: ranks (1 + byte % 16), then a rank-parametric schedule |
//! | `capture_pingpong` | `loggops_calibrate::read_pingpong_from` | Netgauge per-sample ping-pong (latency, bandwidth) |
//! | `capture_os_noise` | `detect_reader`, then `read_selfish_from` / `read_quanta_from` as `calibrate --os-noise` does | selfish, FWQ, FTQ |
//! | `capture_loggp` | `loggops_calibrate::read_loggp_from` | Netgauge `-x loggp` output |
//! | `capture_measured` | `BenchmarkName::parse`, then `read_measured_from` as `validate` reads a file | first line: the file name (`pipelinedring_4_16.csv`), then the measured CSV |
//! | `capture_tables` | `read_params_table`, `read_prices_table` (from a file) | the parameter and price CSV tables |
//! | `profile` | `loggops_profile::read_profile_from_bytes`, then `NoiseModel::new` per mode and two noisy repetitions of a 16-rank ring | HDF5 noise profile |

use std::io::Cursor;

use loggops_engine::{simulate, Config, NoNoise, Params, Program};

/// Programs with at most this many ops (and ranks) are simulated after they parse.
const SIMULATE_MAX_OPS: u64 = 20_000;

/// A reader entry point: takes any bytes, must return.
pub type Target = fn(&[u8]);

/// Every target by name, as `fuzz/fuzz_targets/<name>.rs` and `fuzz/corpus/<name>/` call it.
pub const TARGETS: &[(&str, Target)] = &[
    ("goal_text", goal_text),
    ("goal_binary", goal_binary),
    ("schedule", schedule),
    ("capture_pingpong", capture_pingpong),
    ("capture_os_noise", capture_os_noise),
    ("capture_loggp", capture_loggp),
    ("capture_measured", capture_measured),
    ("capture_tables", capture_tables),
    ("profile", profile),
];

/// Simulates a small program noiselessly; any result (a time, a stall, an overflow error) is
/// fine, a panic is not.
fn run_small<P: Program>(p: &P) {
    if p.num_ranks() as u64 <= SIMULATE_MAX_OPS && p.total_ops() <= SIMULATE_MAX_OPS {
        let cfg = Config::new(Params::loggopsim_defaults_ps());
        let _ = simulate(p, &cfg, &mut NoNoise);
    }
}

/// The ticks a plain GOAL number is read in: 1 ps (`--compat loggopsim`, `--tick 1ps`), the
/// default 1 ns, and 1 s, where large calc values overflow the clock when scaled (a located
/// error, never a wrap).
fn tick_options() -> [loggops_goal::ParseOptions; 3] {
    [
        loggops_goal::ParseOptions::ticks_as_is(),
        loggops_goal::ParseOptions::default(),
        loggops_goal::ParseOptions::with_tick(1_000_000_000_000),
    ]
}

/// GOAL text, as `--goal FILE` reads it, in each tick of [`tick_options`].
pub fn goal_text(data: &[u8]) {
    for opts in tick_options() {
        if let Ok(parsed) = loggops_goal::parse_reader_with("fuzz.goal", data, &opts) {
            for w in &parsed.warnings {
                let _ = w.to_string();
            }
            run_small(&parsed.program);
        }
    }
}

/// LogGOPSim's binary GOAL, as `--goal FILE.bin` reads it, in each tick of [`tick_options`].
pub fn goal_binary(data: &[u8]) {
    for opts in tick_options() {
        if let Ok(p) = loggops_goal::read_binary_from_with("fuzz.bin", Cursor::new(data), &opts) {
            run_small(&p);
        }
    }
}

/// A rank-parametric schedule on 1 to 16 ranks (the first byte picks the count).
pub fn schedule(data: &[u8]) {
    let Some((&n, text)) = data.split_first() else {
        return;
    };
    let nodes = 1 + (n % 16) as u32;
    let text = String::from_utf8_lossy(text);
    let no: &[(&str, &str)] = &[];
    match loggops_schedgen::parse_schedule_str(&text, "fuzz.goal", nodes, no) {
        Ok(s) => {
            if s.total_ops() <= SIMULATE_MAX_OPS {
                let _ = loggops_schedgen::check::validate(&s);
            }
            run_small(&s);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// A ping-pong capture, read as `--latency` and as `--bandwidth` read it.
pub fn capture_pingpong(data: &[u8]) {
    use loggops_calibrate::{read_pingpong_from, PingPongOptions};
    for opts in [PingPongOptions::latency(), PingPongOptions::bandwidth()] {
        if let Err(e) = read_pingpong_from(Cursor::new(data.to_vec()), "fuzz.out", &opts) {
            let _ = e.to_string();
        }
    }
}

/// An OS-noise capture, detected and read as `calibrate --os-noise` does.
pub fn capture_os_noise(data: &[u8]) {
    use loggops_calibrate::{detect_reader, read_quanta_from, read_selfish_from, Format};
    let reader = || Cursor::new(data.to_vec());
    match detect_reader(reader(), "fuzz.out") {
        Ok(Format::Fwq | Format::Ftq) => {
            if let Ok(q) = read_quanta_from(reader(), "fuzz.out") {
                let _ = q.to_detours(&loggops_calibrate::QuantumOptions::default());
            }
        }
        Ok(_) | Err(_) => {
            if let Ok(t) = read_selfish_from(reader(), "fuzz.out") {
                let _ = t.stitched().to_ps();
            }
        }
    }
}

/// Netgauge's LogGP fit output.
pub fn capture_loggp(data: &[u8]) {
    if let Ok(fit) = loggops_calibrate::read_loggp_from(Cursor::new(data.to_vec()), "fuzz.out") {
        let _ = fit.summary();
    }
}

/// A measured collective (`validate`): the first line names the file (its pattern, nodes and
/// bytes, as a file name does), the rest is its content.
pub fn capture_measured(data: &[u8]) {
    let (name, text) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(name) = loggops_calibrate::BenchmarkName::parse(&String::from_utf8_lossy(name)) else {
        return;
    };
    if let Ok(m) = loggops_calibrate::read_measured_from(text, "fuzz.csv", name, None) {
        let _ = m.iteration_max_ps();
    }
}

/// The parameter and price tables (CSV), read from a file as `--params-table` and
/// `--prices-table` are.
pub fn capture_tables(data: &[u8]) {
    use loggops_calibrate::{
        read_params_table, read_params_table_placement_pair, read_prices_table,
    };
    let Ok(mut f) = tempfile::NamedTempFile::new() else {
        return;
    };
    if std::io::Write::write_all(&mut f, data).is_err() {
        return;
    }
    let p = f.path();
    let _ = read_params_table(p, "AWS", "HPC (Metal)", "Same Rack");
    let _ = read_params_table_placement_pair(p, "AWS", "HPC (Metal)");
    let _ = read_prices_table(p, "aws", "hpc-metal");
}

/// An HDF5 noise profile, then the noise models a run builds from it.
pub fn profile(data: &[u8]) {
    use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
    let Ok(p) = loggops_profile::read_profile_from_bytes(data.to_vec(), "fuzz.h5") else {
        return;
    };
    for mode in NoiseMode::ALL {
        let cfg = NoiseConfig {
            mode,
            ..NoiseConfig::default()
        };
        if let Ok(m) = NoiseModel::new(&p, &cfg) {
            // Two repetitions of a 16-rank ring with this noise: every sampler draws.
            let ring = loggops_schedgen::Generated::new(
                loggops_schedgen::Collective::AllreduceRing,
                16,
                1 << 20,
            )
            .expect("a valid ring");
            let cfg = Config::new(m.engine_params());
            for rep in 0..2 {
                let mut n = m.instance(1, rep, ring.num_ranks());
                let _ = simulate(&ring, &cfg, &mut n);
            }
        }
    }
}
