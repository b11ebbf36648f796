//! Criterion benches of the engine: LogGOPSim's benchmark shapes, as explicit (parsed) programs
//! and as lazily generated ones. Events per second are counted as LogGOPSim counts them (ops
//! enqueued + messages); BENCHMARKS.md records the headline numbers against LogGOPSim.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use loggops_engine::{simulate, Config, NoNoise, Params, Program};
use loggops_goal::ExplicitProgram;
use loggops_schedgen::{Collective, Generated};

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

criterion_group!(benches, engine, generated);
criterion_main!(benches);
