//! The windowed engine on the shipped profiles: its answers are the global engine's in every
//! noise mode, and for the paper's small-message dissemination with network noise it answers
//! (so those runs take the fast path) on every profile. With OS noise alone, lock-step ranks
//! tie in ways that the parents' and grandparents' queueing times do not decide, and those
//! runs need full ancestry, which answers every run.
use std::path::Path;

use loggops_engine::testing::VecProgram;
use loggops_engine::{
    simulate_global, simulate_windowed, simulate_windowed_on, simulate_windowed_with, Ancestry,
    Config, GiveUp, Op,
};
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
use loggops_schedgen::{Collective, GenOptions, Generated};

use crate::util::shipped_profiles;

fn dissemination(ranks: u32, size: u64) -> Generated {
    let opts = GenOptions {
        nway: 1,
        reduce_calc: Some(0),
        ..GenOptions::default()
    };
    Generated::with_options(Collective::NwayDissemination, ranks, size, opts).unwrap()
}

#[test]
fn windowed_engine_answers_the_dissemination_exactly_on_every_shipped_profile() {
    let profiles = shipped_profiles();
    let prog = dissemination(1024, 16);
    let mut gave_up = Vec::new();
    for path in &profiles {
        let profile = loggops_profile::read_profile(path).unwrap();
        for mode in [NoiseMode::Os, NoiseMode::Net, NoiseMode::OsNet] {
            let cfg = NoiseConfig {
                mode,
                ..NoiseConfig::default()
            };
            let model = NoiseModel::new(&profile, &cfg).unwrap();
            let engine = Config::new(model.engine_params());
            for rep in 0..20 {
                let noise = || model.instance(7, rep, 1024);
                let windowed = simulate_windowed(&prog, &engine, &mut noise());
                let full = simulate_windowed_with(&prog, &engine, &mut noise(), Ancestry::Full);
                let global = simulate_global(&prog, &engine, &mut noise());
                let what = format!("{} {mode} rep {rep}", path.display());
                assert_eq!(full.clone().ok(), global.ok(), "{what}: full ancestry");
                match windowed {
                    Ok(w) => assert_eq!(Ok(w), full, "{what}"),
                    Err(e) => gave_up.push((path.file_stem().unwrap().to_owned(), mode, e)),
                }
            }
        }
    }
    let runs = profiles.len() * 3 * 20;
    assert!(
        gave_up.len() * 4 < runs,
        "{} of {runs}: {gave_up:?}",
        gave_up.len()
    );
    // With network noise, ties that only the global insertion order could break are rare
    // enough not to happen here (DEEP-EST's needed the grandparents' queueing times); with OS
    // noise alone the network is lock-step and some profiles tie further back.
    assert!(
        gave_up.iter().all(|(_, mode, _)| *mode == NoiseMode::Os),
        "{gave_up:?}"
    );
    assert!(
        gave_up.iter().all(|(_, _, why)| *why == GiveUp::Tie),
        "{gave_up:?}"
    );
}

/// A rendezvous message completes its send when a receive matches it, on another rank and
/// with no delay. When the send frees nothing (the paper's dissemination, Schedgen's rings),
/// only the sender's final clock shows it and the windowed engine answers; when it frees an
/// op, the windowed engine gives up at that send and `simulate` falls back to the global
/// engine.
#[test]
fn windowed_engine_runs_rendezvous_sends_that_free_nothing() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/paper/alps.h5");
    let profile = loggops_profile::read_profile(path).unwrap();
    let cfg = NoiseConfig {
        mode: NoiseMode::OsNet,
        ..NoiseConfig::default()
    };
    let model = NoiseModel::new(&profile, &cfg).unwrap();
    let engine = Config::new(model.engine_params());
    assert_eq!(engine.params.s, 4096, "Alps' S");
    let prog = dissemination(64, 128 << 10);
    let global = simulate_global(&prog, &engine, &mut model.instance(1, 0, 64)).unwrap();
    assert_eq!(
        simulate_windowed(&prog, &engine, &mut model.instance(1, 0, 64)),
        Ok(global)
    );
    // Rank 0 computes after its rendezvous send completes.
    let mut prog = VecProgram::new(2);
    let s = prog.op(0, Op::send(128 << 10, 1, 0));
    let c = prog.op(0, Op::calc(1000));
    prog.requires(0, c, s);
    prog.op(1, Op::recv(128 << 10, 0, 0));
    assert_eq!(
        simulate_windowed(&prog, &engine, &mut model.instance(1, 0, 2)),
        Err(GiveUp::Rendezvous)
    );
    assert_eq!(
        loggops_engine::simulate(&prog, &engine, &mut model.instance(1, 0, 2)),
        simulate_global(&prog, &engine, &mut model.instance(1, 0, 2))
    );
}

/// Parallel windows on every shipped profile and noisy mode, in both models, on the shipped
/// collectives: the ranks split between 2, 3 and 8 threads give the one-thread result (the
/// same answer, or the same reason to give up), and the answers are the global engine's.
#[test]
fn parallel_windows_answer_as_one_thread_on_every_shipped_profile() {
    let profiles = shipped_profiles();
    let progs = shipped_collectives();
    let (mut answered, mut runs) = (0, 0);
    for path in &profiles {
        let profile = loggops_profile::read_profile(path).unwrap();
        for mode in [NoiseMode::Os, NoiseMode::Net, NoiseMode::OsNet] {
            let cfg = NoiseConfig {
                mode,
                ..NoiseConfig::default()
            };
            let model = NoiseModel::new(&profile, &cfg).unwrap();
            for engine_model in [
                loggops_engine::Model::LogGOPSim,
                loggops_engine::Model::Queued,
            ] {
                let mut engine = Config::new(model.engine_params());
                engine.model = engine_model;
                for (i, prog) in progs.iter().enumerate() {
                    let n = loggops_engine::Program::num_ranks(prog);
                    let noise = || model.instance(5, i as u64, n);
                    let what = format!("{} {mode} {engine_model:?} program {i}", path.display());
                    let one =
                        simulate_windowed_on(prog, &engine, &mut noise(), Ancestry::Recent, 1);
                    for threads in [2, 3, 8] {
                        let many = simulate_windowed_on(
                            prog,
                            &engine,
                            &mut noise(),
                            Ancestry::Recent,
                            threads,
                        );
                        assert_eq!(many, one, "{what}, {threads} threads");
                    }
                    runs += 1;
                    if let Ok(w) = one {
                        let global = simulate_global(prog, &engine, &mut noise()).unwrap();
                        assert_eq!(w, global, "{what}");
                        answered += 1;
                    }
                }
            }
        }
    }
    assert!(answered * 2 > runs, "{answered} of {runs}");
}

/// The shipped noise profiles (`calibration/*.h5`, at least eight), sorted.
/// The collectives the profile tests run: disseminations (small and rendezvous messages),
/// rings, recursive doubling, all-to-all and a reduction tree.
fn shipped_collectives() -> [Generated; 7] {
    [
        dissemination(256, 16),
        dissemination(64, 128 << 10),
        Generated::with_options(
            Collective::PipelinedRing,
            48,
            16 << 20,
            GenOptions::default(),
        )
        .unwrap(),
        Generated::new(Collective::AllreduceRing, 40, 4 << 20).unwrap(),
        Generated::new(Collective::AllreduceRecdoub, 64, 1 << 20).unwrap(),
        Generated::new(Collective::LinearAlltoall, 24, 64 << 10).unwrap(),
        Generated::new(Collective::BinomialTreeReduce, 50, 1 << 20).unwrap(),
    ]
}

/// The queued model (`--model queued`, the default with `--noise`) on every shipped profile
/// and noise mode, on the shipped collectives: the windowed engine answers as the global one
/// whenever it answers, and it answers the paper's dissemination and rings.
#[test]
fn queued_model_windowed_engine_answers_as_the_global_engine_on_every_shipped_profile() {
    let profiles = shipped_profiles();
    let progs = shipped_collectives();
    let (mut answered, mut runs) = (0, 0);
    for path in &profiles {
        let profile = loggops_profile::read_profile(path).unwrap();
        for mode in [
            NoiseMode::None,
            NoiseMode::Os,
            NoiseMode::Net,
            NoiseMode::OsNet,
        ] {
            let cfg = NoiseConfig {
                mode,
                ..NoiseConfig::default()
            };
            let model = NoiseModel::new(&profile, &cfg).unwrap();
            let mut engine = Config::new(model.engine_params());
            engine.model = loggops_engine::Model::Queued;
            for (i, prog) in progs.iter().enumerate() {
                let n = loggops_engine::Program::num_ranks(prog);
                for rep in 0..3 {
                    let noise = || model.instance(11, rep, n);
                    let global = simulate_global(prog, &engine, &mut noise()).unwrap();
                    assert!(global.completed());
                    let what = format!("{} {mode} program {i} rep {rep}", path.display());
                    for ancestry in [Ancestry::Recent, Ancestry::Full] {
                        runs += 1;
                        if let Ok(w) = simulate_windowed_with(prog, &engine, &mut noise(), ancestry)
                        {
                            assert_eq!(w, global, "{what} {ancestry:?}");
                            answered += 1;
                        }
                    }
                    assert_eq!(
                        loggops_engine::simulate(prog, &engine, &mut noise()).unwrap(),
                        global,
                        "{what}"
                    );
                }
            }
        }
    }
    assert!(answered * 2 > runs, "{answered} of {runs}");
}
