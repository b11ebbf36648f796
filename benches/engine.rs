//! Criterion benches of the engine: LogGOPSim's benchmark shapes, as explicit (parsed) programs
//! and as lazily generated ones. Events per second are counted as LogGOPSim counts them (ops
//! enqueued + messages); BENCHMARKS.md records the headline numbers against LogGOPSim.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use loggops_engine::{simulate, simulate_global, Config, NoNoise, Params, Program};
use loggops_goal::ExplicitProgram;
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
use loggops_schedgen::{Collective, GenOptions, Generated};

fn events<P: Program>(p: &P, cfg: &Config) -> u64 {
    simulate(p, cfg, &mut NoNoise).unwrap().events
}

fn bench(c: &mut Criterion, name: &str, coll: Collective, ranks: u32, size: u64, explicit: bool) {
    let cfg = Config::new(Params::loggopsim_defaults_ps());
    let generated = Generated::new(coll, ranks, size).unwrap();
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    g.throughput(Throughput::Elements(events(&generated, &cfg)));
    g.bench_with_input(BenchmarkId::new("generated", ranks), &generated, |b, p| {
        b.iter(|| events(p, &cfg))
    });
    if explicit {
        let prog = ExplicitProgram::from_program(&generated).unwrap();
        g.bench_with_input(BenchmarkId::new("explicit", ranks), &prog, |b, p| {
            b.iter(|| events(p, &cfg))
        });
    }
    g.finish();
}

fn engine(c: &mut Criterion) {
    bench(
        c,
        "dissemination_16B",
        Collective::Dissemination,
        16384,
        16,
        true,
    );
    bench(
        c,
        "allreduce_ring_16MiB",
        Collective::AllreduceRing,
        1024,
        16 << 20,
        true,
    );
}

fn generated(c: &mut Criterion) {
    bench(
        c,
        "gen_allreduce_ring_16MiB",
        Collective::AllreduceRing,
        4096,
        16 << 20,
        false,
    );
    bench(
        c,
        "gen_dissemination_16B",
        Collective::Dissemination,
        65536,
        16,
        false,
    );
}

/// One noisy repetition of `prog` under the shipped profile `profile`, `os+net`, with the
/// windowed engine (what `simulate` runs) and, with `global`, with the global engine, against
/// two noiseless runs, in one group so that their ratio (the per-message cost of noise) is
/// measured in the same run: `noiseless`, every message with the profile's near parameters
/// (`NoNoise`), and `noiseless placed`, the profile's noiseless run as `--noise-mode none`
/// computes it (messages between switches with the far parameters).
fn noisy_group<P: Program>(c: &mut Criterion, name: &str, prog: &P, profile: &str, global: bool) {
    let path = format!("{}/calibration/{profile}.h5", env!("CARGO_MANIFEST_DIR"));
    let profile = loggops_profile::read_profile(&path).expect("shipped profile");
    let cfg_of = |mode| {
        let model = NoiseModel::new(
            &profile,
            &NoiseConfig {
                mode,
                ..NoiseConfig::default()
            },
        )
        .unwrap();
        (Config::new(model.engine_params()), model)
    };
    let (cfg, model) = cfg_of(NoiseMode::OsNet);
    let (quiet_cfg, quiet_model) = cfg_of(NoiseMode::None);
    let ranks = prog.num_ranks();
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    g.throughput(Throughput::Elements(events(prog, &quiet_cfg)));
    g.bench_function(format!("noiseless/{ranks}"), |b| {
        b.iter(|| events(prog, &quiet_cfg))
    });
    g.bench_function(format!("noiseless placed/{ranks}"), |b| {
        b.iter(|| {
            let mut n = quiet_model.instance(1, 0, ranks);
            simulate(prog, &quiet_cfg, &mut n).unwrap().events
        })
    });
    let mut rep = 0;
    g.bench_function(format!("os+net windowed/{ranks}"), |b| {
        b.iter(|| {
            rep += 1;
            let mut n = model.instance(1, rep, ranks);
            simulate(prog, &cfg, &mut n).unwrap().events
        })
    });
    if global {
        g.bench_function(format!("os+net global/{ranks}"), |b| {
            b.iter(|| {
                rep += 1;
                let mut n = model.instance(1, rep, ranks);
                simulate_global(prog, &cfg, &mut n).unwrap().events
            })
        });
    }
    g.finish();
}

/// The paper's 16 B dissemination at 16,384 ranks (`goal/dissemination_16B.goal`) under the
/// shipped Alps profile; and the ring allreduce of 32 MiB at 1024 ranks (32 KiB messages:
/// rendezvous under Alps' S, eager under AWS').
fn noisy(c: &mut Criterion) {
    let dissemination = Generated::with_options(
        Collective::NwayDissemination,
        16384,
        16,
        GenOptions {
            nway: 1,
            reduce_calc: Some(0),
            ..GenOptions::default()
        },
    )
    .unwrap();
    noisy_group(c, "noisy_dissemination_16B", &dissemination, "alps", true);
    let ring = Generated::new(Collective::AllreduceRing, 1024, 32 << 20).unwrap();
    noisy_group(c, "noisy_ring_32MiB_alps", &ring, "alps", false);
    noisy_group(c, "noisy_ring_32MiB_aws", &ring, "aws", false);
}

/// The shared application traces (`../shared/apps`, skipped when absent), calc in ticks of
/// 1 ns: LULESH on 27 ranks and NPB CG class S on 8, under AWS noise (the windowed engine
/// answers) and Alps noise (LULESH's rendezvous sends free ops: the global engine answers).
/// `cargo bench --bench engine -- --quick noisy_app`.
fn apps(c: &mut Criterion) {
    use std::io::Read;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/apps");
    for app in ["lulesh_p27_s10_i20", "npb_cg_S_p8"] {
        let path = dir.join(app).join(format!("{app}.goal.xz"));
        let Ok(f) = std::fs::File::open(&path) else {
            eprintln!("skipping {}: absent", path.display());
            return;
        };
        let mut text = String::new();
        liblzma::read::XzDecoder::new(f)
            .read_to_string(&mut text)
            .expect("xz-compressed GOAL text");
        let prog = loggops_goal::parse_str(app, &text).expect("GOAL text");
        for profile in ["aws", "alps"] {
            noisy_group(
                c,
                &format!("noisy_app_{app}_{profile}"),
                &prog,
                profile,
                true,
            );
        }
    }
}

criterion_group!(benches, engine, generated, noisy, apps);
criterion_main!(benches);
