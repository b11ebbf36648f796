//! The cases that `benches/figures.rs` times (criterion) and `benches/counts.rs` counts
//! (instructions under callgrind, events and messages from the engine): one list, so the two
//! benches always measure the same work (`benches/threads.rs` borrows its setup).
//!
//! Each simulation case is what one CLI run does after loading: the noiseless ones are
//! `loggops-sim --goal FILE --nodes N` (LogGOPSim's default parameters, LogGOPSim's sharing
//! model, no noise), the noisy ones one repetition of `--noise calibration/aws.h5` (its `os+net`
//! mode, the queued model, seed 1, repetition 0, the noise instance built inside the run as the
//! CLI builds one per repetition). The reading cases read a LogGOPSim binary GOAL file written
//! by the setup into a temporary directory.
//!
//! Everything outside [`Prepared::run`] (parsing the schedule, reading the profile, writing the
//! binary file) is setup and is neither timed nor counted.

use std::path::{Path, PathBuf};

use loggops_engine::{simulate, Config, Model, NoNoise, Params, Program};
use loggops_goal::ExplicitProgram;
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
use loggops_schedgen::{Collective, Generated};

/// One case: a name (criterion's benchmark id, the counts table's row) and how to set it up.
pub struct Case {
    pub name: &'static str,
    setup: fn() -> Prepared,
}

/// What [`Prepared::run`] did, in units that do not depend on the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// Messages sent (simulations) or ops read (binary GOAL).
    pub units: u64,
    /// `"messages"` or `"ops read"`: what [`Work::units`] counts.
    pub unit: &'static str,
    /// LogGOPSim's event count (ops enqueued + messages); 0 for reading.
    pub events: u64,
}

/// A case after its setup.
pub enum Prepared {
    Sim {
        prog: Generated,
        cfg: Config,
        noise: Option<NoiseModel>,
    },
    ReadBinary {
        path: PathBuf,
        _dir: tempfile::TempDir,
    },
}

/// The seed and repetition of the noisy cases (the CLI's default seed, its first repetition).
const SEED: u64 = 1;
const REP: u64 = 0;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `goal/FILE` bound to `nodes` ranks: every shipped file used here is one collective, which
/// the CLI runs as the bare generator.
pub fn goal(file: &str, nodes: u32) -> Generated {
    let path = root().join("goal").join(file);
    let s = loggops_schedgen::parse_schedule(&path, nodes, &[] as &[(&str, &str)])
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    s.single_collective()
        .unwrap_or_else(|| panic!("{file} is not a single collective"))
        .clone()
}

fn noiseless(prog: Generated) -> Prepared {
    Prepared::Sim {
        prog,
        cfg: Config::new(Params::loggopsim_defaults_ps()),
        noise: None,
    }
}

/// One repetition under `calibration/aws.h5`, `os+net`, with the queued model (the CLI's
/// default with `--noise`).
pub fn aws(prog: Generated) -> Prepared {
    let path = root().join("calibration/aws.h5");
    let profile =
        loggops_profile::read_profile(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let model = NoiseModel::new(
        &profile,
        &NoiseConfig {
            mode: NoiseMode::OsNet,
            ..NoiseConfig::default()
        },
    )
    .expect("the shipped AWS profile");
    let mut cfg = Config::new(model.engine_params());
    cfg.model = Model::Queued;
    Prepared::Sim {
        prog,
        cfg,
        noise: Some(model),
    }
}

/// `prog` written as LogGOPSim binary GOAL into a fresh temporary directory.
fn binary(prog: &Generated) -> Prepared {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("bench.bin");
    let explicit = ExplicitProgram::from_program(prog).expect("an explicit program");
    let f = std::fs::File::create(&path).expect("a temporary file");
    loggops_goal::write_binary(&explicit, std::io::BufWriter::new(f)).expect("written");
    Prepared::ReadBinary { path, _dir: dir }
}

/// The 16 B dissemination on 4096 ranks: 12 rounds, 49,152 messages.
fn dissemination() -> Generated {
    goal("dissemination_16B.goal", 4096)
}

/// The paper's pipelined ring of 16 MiB on 1024 ranks: 1024 segments of 16 KiB, 1,048,576
/// rendezvous messages.
fn ring() -> Generated {
    goal("paper_pipelinedring_16MiB.goal", 1024)
}

fn case(name: &'static str, setup: fn() -> Prepared) -> Case {
    Case { name, setup }
}

/// Every case, in the order both benches report them. The binary dissemination's rank
/// sections are each the previous one's with peers shifted (shared, not parsed); the binomial
/// broadcast's differ from rank to rank (every one parsed and checked).
pub fn all() -> Vec<Case> {
    vec![
        case("dissemination_16B/4096/noiseless", || {
            noiseless(dissemination())
        }),
        case("dissemination_16B/4096/aws", || aws(dissemination())),
        case("pipelinedring_16MiB/1024/noiseless", || noiseless(ring())),
        case("pipelinedring_16MiB/1024/aws", || aws(ring())),
        case("read_binary/dissemination_16B/4096", || {
            binary(&dissemination())
        }),
        case("read_binary/binomialtreebcast_16B/65536", || {
            binary(&Generated::new(Collective::BinomialTreeBcast, 65536, 16).expect("bcast"))
        }),
    ]
}

impl Case {
    pub fn setup(&self) -> Prepared {
        (self.setup)()
    }
}

impl Prepared {
    /// The measured work: one simulation (noise instance included) or one read of the file.
    /// Panics when a simulation does not complete: a bench of a broken run says nothing.
    pub fn run(&self) -> Work {
        match self {
            Prepared::Sim { prog, cfg, noise } => {
                let out = match noise {
                    Some(m) => {
                        let mut n = m.instance(SEED, REP, prog.num_ranks());
                        simulate(prog, cfg, &mut n)
                    }
                    None => simulate(prog, cfg, &mut NoNoise),
                }
                .expect("the simulation runs");
                assert!(out.completed(), "the simulation completes");
                Work {
                    units: out.messages,
                    unit: "messages",
                    events: out.events,
                }
            }
            Prepared::ReadBinary { path, .. } => {
                let p = loggops_goal::read_binary(path).expect("the binary GOAL file reads back");
                Work {
                    units: p.total_ops(),
                    unit: "ops read",
                    events: 0,
                }
            }
        }
    }
}
