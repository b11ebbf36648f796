//! Per-call cost of the noise interface on a Daint-sized synthetic profile: 332k latency
//! samples (about 1000 distinct values, like Daint's capture), 332k bandwidth samples (about
//! 5000 distinct), a 120 s OS-noise trace with 60k detours (494/s, 13.5 us). A second profile
//! has all-distinct samples (the worst case: 332k latency, 168k bandwidth values).
//! Calls walk 16,384 ranks with advancing times, like a 16K-rank dissemination. The shipped
//! `calibration/paper/alps.h5` profile (quantile tables, a 50k-detour trace) is measured too.

use criterion::{criterion_group, criterion_main, Criterion};
use loggops_engine::{Noise, Params};
use loggops_noise::rng::CounterRng;
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel, NoiseRun};
use loggops_profile::*;
use std::hint::black_box;

const RANKS: u32 = 16_384;

/// Draws from `s` at a golden-ratio sequence of quantiles.
fn bench_draws(c: &mut Criterion, name: &str, s: &loggops_noise::Sampler) {
    let mut u = 0.0f64;
    c.bench_function(name, |b| {
        b.iter(|| {
            u += 0.6180339887498949;
            if u >= 1.0 {
                u -= 1.0;
            }
            black_box(s.sample(u))
        })
    });
}

/// One 16-byte message of a noisy dissemination: send + receive costs and the two CPU windows.
fn bench_message(c: &mut Criterion, name: &str, run: &mut NoiseRun, p: &Params) {
    let mut i = 0u32;
    c.bench_function(name, |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let src = i % RANKS;
            let dst = (src + (1 << (i % 14))) % RANKS;
            let t = (i / RANKS) as u64 * 2_000_000;
            let s = run.send_costs(p, src, dst, i / RANKS, 16);
            let d1 = run.os_detour(src, t, t + s.o);
            let r = run.recv_costs(p, src, dst, i / RANKS, 16);
            let d2 = run.os_detour(dst, t + s.latency, t + s.latency + r.o);
            black_box((s, r, d1, d2))
        })
    });
}

fn profile(distinct: bool) -> Profile {
    let mut s = CounterRng::new(1, 0).stream(0);
    let (lq, gq, gn) = if distinct {
        (1e-9, 1e-12, 168_000)
    } else {
        (1000.0, 0.004, 332_000)
    };
    let latency: Vec<f64> = (0..332_000)
        .map(|_| (0.5e6 / (1.0 - s.next_f64()).powf(1.0 / 1.5) / lq).round() * lq)
        .collect();
    let bandwidth: Vec<f64> = (0..gn)
        .map(|_| ((100.0 + 20.0 * s.next_f64()) / gq).round() * gq)
        .collect();
    let place = |l: f64, g: f64| Placement {
        latency: Some(Distribution::Samples(latency.clone())),
        bandwidth: Some(Distribution::Samples(bandwidth.clone())),
        ..Placement::new(
            BaseParams {
                l_ps: l,
                o_ps: 0.0,
                g_ps: 6e6,
                big_g_ps_per_byte: g,
                big_o_ps_per_byte: 0.0,
                s_bytes: 4096,
            },
            16 << 20,
        )
    };
    let mut start = Vec::new();
    let mut duration = Vec::new();
    let mut t = 0u64;
    for _ in 0..59_280 {
        t += 1 + (s.next_f64() * 4.0e9) as u64; // mean gap 2 ms
        start.push(t);
        duration.push((s.next_f64() * 27e6) as u64);
        t += 27_000_000;
    }
    let period = t + 30_000_000;
    let near = place(500_000.0, 110.0);
    Profile {
        system: "bench".into(),
        description: String::new(),
        far: Some(Placement {
            latency: None,
            bandwidth: None,
            ..place(600_000.0, 140.0)
        }),
        near,
        nodes_per_switch: 16,
        os_noise: OsNoise {
            traces: vec![DetourTrace {
                start_ps: start,
                duration_ps: duration,
                period_ps: period,
            }],
            process: None,
        },
        prices: Prices::default(),
        provenance: Provenance::default(),
        calibration: Default::default(),
        day: String::new(),
        days: Vec::new(),
        mpi_progress: None,
        clock: None,
    }
}

fn bench(c: &mut Criterion) {
    let prof = profile(false);
    let model = |mode| {
        NoiseModel::new(
            &prof,
            &NoiseConfig {
                mode,
                ..NoiseConfig::default()
            },
        )
        .unwrap()
    };
    let osnet = model(NoiseMode::OsNet);
    let none = model(NoiseMode::None);
    let p: Params = osnet.engine_params();

    let rng = CounterRng::new(7, 0);
    let mut k = 0u64;
    c.bench_function("counter hash at(a, b)", |b| {
        b.iter(|| {
            k = k.wrapping_add(1);
            black_box(rng.at(black_box(k), 1 << 56))
        })
    });
    let lat = loggops_noise::Sampler::new(
        prof.near.latency.as_ref().unwrap(),
        loggops_noise::Scaling::Absolute,
        "ps",
    )
    .unwrap();
    bench_draws(c, "latency sampler draw", &lat);
    let mut run = osnet.instance(7, 0, RANKS);
    let mut i = 0u32;
    c.bench_function("send_costs 16B os+net", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let src = i % RANKS;
            black_box(run.send_costs(&p, src, (src + (1 << (i % 14))) % RANKS, i / RANKS, 16))
        })
    });
    c.bench_function("recv_costs 16B os+net", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let src = i % RANKS;
            black_box(run.recv_costs(&p, src, (src + (1 << (i % 14))) % RANKS, i / RANKS, 16))
        })
    });
    c.bench_function("send_costs 1MiB os+net", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            black_box(run.send_costs(&p, i % RANKS, (i + 1) % RANKS, i / RANKS, 1 << 20))
        })
    });
    c.bench_function("send_costs 512MiB os+net (32 G draws)", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            black_box(run.send_costs(&p, i % RANKS, (i + 1) % RANKS, i / RANKS, 512 << 20))
        })
    });
    let mut base = none.instance(7, 0, RANKS);
    c.bench_function("send_costs 16B none (far/near base)", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let src = i % RANKS;
            black_box(base.send_costs(&p, src, (src + (1 << (i % 14))) % RANKS, i, 16))
        })
    });
    // OS noise: empty windows (o = 0) and 150 ns windows, times advancing 2 us per round.
    c.bench_function("os_detour empty window", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let t = (i / RANKS) as u64 * 2_000_000;
            black_box(run.os_detour(i % RANKS, t, t))
        })
    });
    c.bench_function("os_detour 150ns window", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let t = (i / RANKS) as u64 * 2_000_000;
            black_box(run.os_detour(i % RANKS, t, t + 150_000))
        })
    });
    c.bench_function("os_detour 10ms window", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let t = (i / RANKS) as u64 * 2_000_000;
            black_box(run.os_detour(i % RANKS, t, t + 10_000_000_000))
        })
    });
    bench_message(
        c,
        "per message os+net (send+recv+2 os_detour)",
        &mut run,
        &p,
    );
    let alps = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../calibration/paper/alps.h5"
    );
    match loggops_profile::read_profile(alps) {
        Ok(prof) => {
            let m = NoiseModel::new(
                &prof,
                &NoiseConfig {
                    mode: NoiseMode::OsNet,
                    ..NoiseConfig::default()
                },
            )
            .unwrap();
            let p = m.engine_params();
            let mut run = m.instance(7, 0, RANKS);
            let lat = loggops_noise::Sampler::new(
                prof.near.latency.as_ref().unwrap(),
                loggops_noise::Scaling::Absolute,
                "ps",
            )
            .unwrap();
            bench_draws(c, "alps: latency quantile-table draw (exact tail)", &lat);
            // The same distribution with its exact tail folded into the table as ordinary
            // points (the representation before exact tails): the cost of the tail branch.
            if let Some(Distribution::Quantiles {
                probs,
                values,
                tail: Some(t),
            }) = &prof.near.latency
            {
                let (n, k) = (t.sample_count, t.values.len() as u64);
                let mut probs = probs.clone();
                let mut values = values.clone();
                for (i, &x) in (1..).zip(&t.values) {
                    probs.push(if i == k {
                        1.0
                    } else {
                        (n - k + i) as f64 / n as f64
                    });
                    values.push(x);
                }
                let folded = loggops_noise::Sampler::new(
                    &Distribution::quantiles(probs, values),
                    loggops_noise::Scaling::Absolute,
                    "ps",
                )
                .unwrap();
                bench_draws(c, "alps: latency draw, tail folded into the table", &folded);
            }
            bench_message(
                c,
                "alps: per message os+net (send+recv+2 os_detour)",
                &mut run,
                &p,
            );
            c.bench_function("alps: instance 16384 ranks", |b| {
                let mut rep = 0;
                b.iter(|| {
                    rep += 1;
                    black_box(m.instance(7, rep, RANKS))
                })
            });
        }
        Err(e) => eprintln!("skipping the alps benchmarks: {e}"),
    }
    let worst = NoiseModel::new(
        &profile(true),
        &NoiseConfig {
            mode: NoiseMode::OsNet,
            ..NoiseConfig::default()
        },
    )
    .unwrap();
    let mut wrun = worst.instance(7, 0, RANKS);
    c.bench_function("send_costs 16B os+net, all-distinct samples", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let src = i % RANKS;
            black_box(wrun.send_costs(&p, src, (src + (1 << (i % 14))) % RANKS, i / RANKS, 16))
        })
    });
    c.bench_function("instance 16384 ranks", |b| {
        let mut rep = 0;
        b.iter(|| {
            rep += 1;
            black_box(osnet.instance(7, rep, RANKS))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
