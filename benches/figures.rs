//! Criterion times of the cases in `benches/cases` (the 16 B dissemination and the pipelined
//! ring of `goal/`, noiseless and one AWS repetition, and reading binary GOAL), with their
//! throughput in messages (or ops read) per second. Times depend on the machine; the
//! deterministic figures of the same cases come from `cargo bench --bench counts`.
//!
//! `cargo bench --bench figures` (a filter after `--` picks cases: `-- dissemination`).
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

mod cases;

fn figures(c: &mut Criterion) {
    let mut g = c.benchmark_group("figures");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for case in cases::all() {
        let prepared = case.setup();
        g.throughput(Throughput::Elements(prepared.run().units));
        g.bench_function(case.name, |b| b.iter(|| black_box(prepared.run())));
    }
    g.finish();
}

criterion_group!(benches, figures);
criterion_main!(benches);
