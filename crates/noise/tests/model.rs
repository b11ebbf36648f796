//! Behaviour of `NoiseModel` / `NoiseRun` through the public API (fixed seeds).

use loggops_engine::{MsgCosts, Noise, Params};
use loggops_noise::rng::{unit_f64, CounterRng, DOMAIN_MSG};
use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel, NoiseRun, OsReplay, Sampler, Scaling};
use loggops_profile::*;

const MIB: u64 = 1 << 20;

/// Heavy-tailed latency samples (ps): 1 us · Pareto(1.5), 20001 values (odd count).
fn latency_samples() -> Vec<f64> {
    let mut s = CounterRng::new(77, 0).stream(0);
    (0..20_001)
        .map(|_| 1e6 / (1.0 - s.next_f64()).powf(1.0 / 1.5))
        .collect()
}

/// Bandwidth samples (ps/B) around 0.1 with a right tail.
fn bandwidth_samples() -> Vec<f64> {
    let mut s = CounterRng::new(78, 0).stream(0);
    (0..10_001)
        .map(|_| {
            let u = s.next_f64();
            0.1 + 0.02 * u + if u > 0.95 { 0.5 * (u - 0.95) } else { 0.0 }
        })
        .collect()
}

fn base(l: f64, g: f64) -> BaseParams {
    BaseParams {
        l_ps: l,
        o_ps: 150_000.0,
        g_ps: 1_500_000.0,
        big_g_ps_per_byte: g,
        big_o_ps_per_byte: 0.0,
        s_bytes: 4096,
    }
}

fn placement(l: f64, g: f64) -> Placement {
    Placement {
        latency: Some(Distribution::Samples(latency_samples())),
        bandwidth: Some(Distribution::Samples(bandwidth_samples())),
        ..Placement::new(base(l, g), 16 * MIB)
    }
}

/// 1000 ps detours every 100000 ps, period 1_000_000 ps.
fn periodic_trace() -> DetourTrace {
    DetourTrace {
        start_ps: (0..10).map(|i| i * 100_000).collect(),
        duration_ps: vec![1000; 10],
        period_ps: 1_000_000,
    }
}

fn profile() -> Profile {
    Profile {
        system: "test".into(),
        description: "synthetic".into(),
        near: placement(1_300_000.0, 86.3),
        far: Some(Placement {
            latency: None,
            bandwidth: None,
            ..placement(2_000_000.0, 140.7)
        }),
        nodes_per_switch: 4,
        os_noise: OsNoise {
            traces: vec![periodic_trace()],
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

fn model(mode: NoiseMode) -> NoiseModel {
    let cfg = NoiseConfig {
        mode,
        ..NoiseConfig::default()
    };
    NoiseModel::new(&profile(), &cfg).unwrap()
}

const P: Params = Params::loggopsim_defaults_ps(); // ignored by NoiseRun

fn ks_to_sampler(draws: &mut [f64], cdf_src: &mut [f64]) -> f64 {
    draws.sort_by(f64::total_cmp);
    cdf_src.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < draws.len() && j < cdf_src.len() {
        let x = draws[i].min(cdf_src[j]);
        while i < draws.len() && draws[i] <= x {
            i += 1;
        }
        while j < cdf_src.len() && cdf_src[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / draws.len() as f64 - j as f64 / cdf_src.len() as f64).abs());
    }
    d
}

#[test]
fn latency_draws_follow_the_median_scaled_distribution() {
    let m = model(NoiseMode::Net);
    let mut run = m.instance(1, 0, 8);
    // Scaled source: samples × 1.3us / median, rounded to ps like the draws.
    let s = Sampler::new(
        &Distribution::Samples(latency_samples()),
        Scaling::MedianTo(1_300_000.0),
        "ps",
    )
    .unwrap();
    assert_eq!(s.median(), 1_300_000.0);
    let med = latency_samples_median();
    let mut src: Vec<f64> = latency_samples()
        .iter()
        .map(|&x| (x * 1_300_000.0 / med + 0.5).floor())
        .collect();
    let mut draws: Vec<f64> = (0..100_000)
        .map(|i| run.send_costs(&P, i % 4, (i + 1) % 4, i, 8).latency as f64)
        .collect();
    let d = ks_to_sampler(&mut draws, &mut src);
    assert!(d < 0.01, "KS {d}");
    // The median of the draws is the base L (within sampling noise of a 100k bootstrap).
    let med = draws[50_000];
    assert!((med / 1_300_000.0 - 1.0).abs() < 0.01, "median {med}");
    // The median sample itself maps to exactly L: some draws are exactly 1.3us.
    assert!(draws.contains(&1_300_000.0));
}

fn latency_samples_median() -> f64 {
    let mut v = latency_samples();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn g_draws_follow_the_median_scaled_distribution_without_truncation() {
    let m = model(NoiseMode::Net);
    let mut run = m.instance(2, 0, 8);
    let size = 16 * MIB; // 16 MiB − 1 bytes: one block
    let bytes = (size - 1) as f64;
    let mut per_byte: Vec<f64> = (0..50_000)
        .map(|i| run.send_costs(&P, 0, 1, i, size).gap_bytes as f64 / bytes)
        .collect();
    let s = Sampler::new(
        &Distribution::Samples(bandwidth_samples()),
        Scaling::MedianTo(86.3),
        "ps/B",
    )
    .unwrap();
    let mut src: Vec<f64> = (0..10_001).map(|i| s.sample(i as f64 / 10_001.0)).collect();
    let d = ks_to_sampler(&mut per_byte, &mut src);
    assert!(d < 0.015, "KS {d}");
    // Sub-ps/B precision is kept: the median gap is 86.3 ps/B × bytes, not 86 (integer G).
    // The draws are spread uniformly over about 15.7 ps/B around the median, so the median of
    // 50k draws has sd 15.7 / (2 · sqrt(50k)) = 0.035 ps/B; ±0.17 ps/B is 5 sd, and 86 is 8.6 sd
    // away.
    let med = per_byte[25_000];
    assert!((med - 86.3).abs() < 0.17, "median {med} ps/B");
}

/// Replays the documented stream layout: `at(src << 32 | op, DOMAIN_MSG << 56 | 8 + j)` is
/// the G uniform of block `j`.
fn expected_gap(seed: u64, rep: u64, src: u32, op: u32, size: u64, g_base: f64) -> u64 {
    let s = Sampler::new(
        &Distribution::Samples(bandwidth_samples()),
        Scaling::MedianTo(g_base),
        "ps/B",
    )
    .unwrap();
    let rng = CounterRng::new(seed, rep);
    let bytes = size - 1;
    let block = 16 * MIB;
    let mut sum = 0.0;
    let mut left = bytes;
    let mut j = 0;
    while left > 0 {
        let len = left.min(block);
        let u = unit_f64(rng.at((src as u64) << 32 | op as u64, DOMAIN_MSG << 56 | (8 + j)));
        sum += len as f64 * s.sample(u);
        left -= len;
        j += 1;
    }
    (sum + 0.5) as u64
}

#[test]
fn g_is_one_draw_per_block_at_pinned_counters() {
    let m = model(NoiseMode::Net);
    let mut run = m.instance(5, 3, 8);
    for (size, blocks) in [
        (2, 1),
        (16 * MIB, 1),
        (16 * MIB + 1, 1),
        (16 * MIB + 2, 2),
        (48 * MIB + 1, 3),
        (512 * MIB, 32),
        (512 * MIB + 2, 33),
    ] {
        let got = run.send_costs(&P, 1, 2, 9, size).gap_bytes;
        let g = loggops_engine::PerByte::from_f64(86.3).unwrap().as_f64();
        assert_eq!(got, expected_gap(5, 3, 1, 9, size, g), "size {size}");
        assert_eq!((size - 1).div_ceil(16 * MIB), blocks);
    }
    // Zero- and one-byte messages have no per-byte gap.
    assert_eq!(run.send_costs(&P, 1, 2, 9, 1).gap_bytes, 0);
    assert_eq!(run.send_costs(&P, 1, 2, 9, 0).gap_bytes, 0);
}

#[test]
fn g_variance_shrinks_with_the_number_of_blocks() {
    let m = model(NoiseMode::Net);
    let mut run = m.instance(6, 0, 8);
    let var = |run: &mut loggops_noise::NoiseRun, size: u64| {
        let v: Vec<f64> = (0..4000)
            .map(|i| run.send_costs(&P, 2, 3, i, size).gap_bytes as f64 / (size - 1) as f64)
            .collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64
    };
    let one = var(&mut run, 16 * MIB);
    let many = var(&mut run, 512 * MIB);
    let ratio = one / many;
    // 32 independent blocks of (almost) equal size: ratio 32; the sd of a variance estimate
    // from 4000 values is about 2.5 % (light tails) to 6 %, so ±25 % is > 4 sd.
    assert!((24.0..40.0).contains(&ratio), "variance ratio {ratio}");
}

#[test]
fn constant_distribution_reproduces_the_noiseless_costs() {
    // The paper's integer-G quirk made "net" faster than "none"; here a distribution equal to
    // its median gives exactly the base costs.
    let mut p = profile();
    p.near.latency = Some(Distribution::Samples(vec![7.0; 5]));
    p.near.bandwidth = Some(Distribution::Samples(vec![3.0; 5]));
    p.far = None;
    let cfg = |mode| NoiseConfig {
        mode,
        ..NoiseConfig::default()
    };
    let net = NoiseModel::new(&p, &cfg(NoiseMode::Net)).unwrap();
    let none = NoiseModel::new(&p, &cfg(NoiseMode::None)).unwrap();
    let (mut a, mut b) = (net.instance(1, 1, 2), none.instance(1, 1, 2));
    for size in [1, 2, 100, 16 * MIB, 100 * MIB, 512 * MIB] {
        let x = a.send_costs(&P, 0, 1, 4, size);
        let y = b.send_costs(&P, 0, 1, 4, size);
        assert_eq!(x, y, "size {size}");
        let g = loggops_engine::PerByte::from_f64(86.3).unwrap();
        assert_eq!(y.gap_bytes, g.cost(size.max(1) - 1).unwrap());
    }
    assert!(!none.needs_noise_run());
    assert!(net.needs_noise_run());
}

#[test]
fn modes_none_and_os_use_base_costs_and_net_has_no_os_noise() {
    for mode in [NoiseMode::None, NoiseMode::Os] {
        let m = model(mode);
        let mut run = m.instance(1, 0, 8);
        let near = run.send_costs(&P, 0, 3, 1, 1000);
        assert_eq!(
            near,
            MsgCosts {
                latency: 1_300_000,
                o: 150_000,
                g: 1_500_000,
                gap_bytes: 86_214 // 999 B × 86.3 ps/B = 86213.7 ps
            }
        );
        let far = run.recv_costs(&P, 0, 4, 1, 1000);
        assert_eq!(
            far,
            MsgCosts {
                latency: 2_000_000,
                o: 150_000,
                g: 1_500_000,
                gap_bytes: 140_559 // 999 B × 140.7 ps/B = 140559.3 ps
            }
        );
        assert!(m.needs_noise_run(), "far placement differs");
    }
    for mode in [NoiseMode::None, NoiseMode::Net] {
        let mut run = model(mode).instance(1, 0, 8);
        assert_eq!(run.os_detour(0, 0, 10_000_000), 0);
    }
    let mut run = model(NoiseMode::Os).instance(1, 0, 8);
    // A window of 10 periods always holds 100 detours of 1000 ps (plus at most a remainder).
    let d = run.os_detour(0, 12_345, 10_012_345);
    assert!((100_000..=101_000).contains(&d), "{d}");
}

#[test]
fn placement_follows_nodes_per_switch() {
    let m = model(NoiseMode::Net);
    assert_eq!(m.nodes_per_switch(), 4);
    assert_eq!(m.engine_params().l, 1_300_000);
    assert_eq!(m.engine_params().rndv_extra_latencies, 2);
    assert_eq!(m.far_params().l, 2_000_000);
    let mut run = m.instance(3, 0, 16);
    // Far messages draw from the near shapes scaled to the far medians: median 2 us.
    let mut far: Vec<u64> = (0..20_001)
        .map(|i| run.send_costs(&P, 5, 8, i, 8).latency)
        .collect();
    let mut near: Vec<u64> = (0..20_001)
        .map(|i| run.send_costs(&P, 5, 7, i, 8).latency)
        .collect();
    far.sort();
    near.sort();
    let (mf, mn) = (far[10_000] as f64, near[10_000] as f64);
    assert!((mf / 2e6 - 1.0).abs() < 0.02, "far median {mf}");
    assert!((mn / 1.3e6 - 1.0).abs() < 0.02, "near median {mn}");
    // Override: one switch for everything → all near.
    let cfg = NoiseConfig {
        mode: NoiseMode::None,
        nodes_per_switch: Some(1 << 20),
        ..NoiseConfig::default()
    };
    let m = NoiseModel::new(&profile(), &cfg).unwrap();
    let mut run = m.instance(3, 0, 16);
    assert_eq!(run.send_costs(&P, 5, 8, 0, 8).latency, 1_300_000);
    // Triple latency off.
    let cfg = NoiseConfig {
        rndv_triple_latency: false,
        ..NoiseConfig::default()
    };
    let m = NoiseModel::new(&profile(), &cfg).unwrap();
    assert_eq!(m.engine_params().rndv_extra_latencies, 0);
}

#[test]
fn send_and_recv_agree_regardless_of_call_order() {
    let m = model(NoiseMode::OsNet);
    let mut a = m.instance(11, 4, 8);
    let mut b = m.instance(11, 4, 8);
    let msgs: Vec<(u32, u32, u32, u64)> = (0..200)
        .map(|i| {
            (
                i % 8,
                (i * 3 + 1) % 8,
                i / 8,
                [8, 4096, 20 * MIB, 512 * MIB][i as usize % 4],
            )
        })
        .collect();
    let sends: Vec<MsgCosts> = msgs
        .iter()
        .map(|&(s, d, o, z)| a.send_costs(&P, s, d, o, z))
        .collect();
    // Receives first, in reverse order, interleaved with OS-noise queries.
    let recvs: Vec<MsgCosts> = msgs
        .iter()
        .rev()
        .map(|&(s, d, o, z)| {
            b.os_detour(s, 1000, 50_000);
            b.recv_costs(&P, s, d, o, z)
        })
        .collect();
    for (x, y) in sends.iter().zip(recvs.iter().rev()) {
        assert_eq!(x.gap_bytes, y.gap_bytes);
        // The receive does not draw the latency: it reports the base L of the placement.
        assert!([1_300_000, 2_000_000].contains(&y.latency), "{}", y.latency);
    }
    let later: Vec<MsgCosts> = msgs
        .iter()
        .map(|&(s, d, o, z)| b.send_costs(&P, s, d, o, z))
        .collect();
    assert_eq!(sends, later);
}

/// The receiver reuses the gap its sender drew for its latest message and draws the others
/// again: both give the send's value, and nothing else changes.
#[test]
fn receives_reuse_the_latest_send_draw_or_draw_again_alike() {
    let m = model(NoiseMode::OsNet);
    let mut a = m.instance(5, 2, 4);
    let mut fresh = m.instance(5, 2, 4);
    for size in [8, 4096, 20 * MIB] {
        // Rank 1 sends ops 10 and 11 before either is received: 11 is its latest.
        let s10 = a.send_costs(&P, 1, 2, 10, size);
        let s11 = a.send_costs(&P, 1, 3, 11, size);
        let r11 = a.recv_costs(&P, 1, 3, 11, size);
        let r10 = a.recv_costs(&P, 1, 2, 10, size);
        assert_eq!(
            (r10.gap_bytes, r11.gap_bytes),
            (s10.gap_bytes, s11.gap_bytes)
        );
        assert_eq!(r10, fresh.recv_costs(&P, 1, 2, 10, size));
        assert_eq!(r11, fresh.recv_costs(&P, 1, 3, 11, size));
        // Same op id from another rank: no mix-up.
        let s0 = a.send_costs(&P, 0, 2, 11, size);
        assert_eq!(a.recv_costs(&P, 1, 3, 11, size), r11);
        assert_eq!(a.recv_costs(&P, 0, 2, 11, size).gap_bytes, s0.gap_bytes);
    }
}

/// `send_costs_untracked` gives exactly `send_costs`'s costs and leaves the receiver's memo
/// alone: receives after it still agree with the send (and with a fresh instance).
#[test]
fn untracked_sends_cost_the_same_and_keep_receives_exact() {
    let m = model(NoiseMode::OsNet);
    let mut tracked = m.instance(7, 3, 8);
    let mut untracked = m.instance(7, 3, 8);
    let mut fresh = m.instance(7, 3, 8);
    for (i, size) in [0, 1, 8, 4096, 20 * MIB].into_iter().enumerate() {
        let (s, d, op) = (i as u32 % 8, (i as u32 * 3 + 1) % 8, 40 + i as u32);
        let a = tracked.send_costs(&P, s, d, op, size);
        let b = untracked.send_costs_untracked(&P, s, d, op, size);
        assert_eq!(a, b, "size {size}");
        // The tracked instance reuses its memo, the untracked one draws again: same answer.
        let ra = tracked.recv_costs(&P, s, d, op, size);
        let rb = untracked.recv_costs(&P, s, d, op, size);
        assert_eq!(ra, rb, "size {size}");
        assert_eq!(rb, fresh.recv_costs(&P, s, d, op, size));
        assert_eq!(rb.gap_bytes, b.gap_bytes);
        let known = untracked.recv_costs_known_gap(&P, s, d, op, size, b.gap_bytes);
        assert_eq!(known, rb, "size {size}");
    }
}

/// `fixed_recv_overheads` is the receive-side (o, g) of every message when it is given: near
/// and far alike, and nothing drawn at the receiver; otherwise it is not given.
#[test]
fn fixed_receive_overheads_are_those_of_every_message() {
    let check_rep = |p: &Profile, mode: NoiseMode, want_fixed: bool, rep: u64| {
        let cfg = NoiseConfig {
            mode,
            ..NoiseConfig::default()
        };
        let mut run = NoiseModel::new(p, &cfg).unwrap().instance(3, rep, 16);
        let fixed = run.fixed_recv_overheads();
        assert_eq!(fixed.is_some(), want_fixed, "{mode:?}");
        for i in 0..64u32 {
            let (s, d, size) = (i % 16, (i * 5 + 3) % 16, [8, 20 * MIB][i as usize % 2]);
            let c = run.send_costs(&P, s, d, i, size);
            let r = run.recv_costs_known_gap(&P, s, d, i, size, c.gap_bytes);
            if let Some((o, g)) = fixed {
                assert_eq!((r.o, r.g), (o, g), "message {i}");
            }
        }
        fixed
    };
    let check = |p: &Profile, mode: NoiseMode, want_fixed: bool| {
        check_rep(p, mode, want_fixed, 1);
    };
    // Near and far differ in L and G only.
    for mode in [
        NoiseMode::None,
        NoiseMode::Os,
        NoiseMode::Net,
        NoiseMode::OsNet,
    ] {
        check(&profile(), mode, true);
    }
    // A far o of its own.
    let mut far_o = profile();
    far_o.far.as_mut().unwrap().params.o_ps = 300_000.0;
    check(&far_o, NoiseMode::OsNet, false);
    // o drawn at the receiver.
    let mut drawn = profile();
    drawn.near.overhead = Some(Distribution::Samples(vec![100_000.0, 150_000.0, 200_000.0]));
    check(&drawn, NoiseMode::OsNet, false);
    // A further day with an o of its own: each repetition gives its own day's (o, g).
    let mut other = placement(1_300_000.0, 86.3);
    other.params.o_ps = 300_000.0;
    let mut other_far = placement(2_000_000.0, 140.7);
    other_far.params.o_ps = 300_000.0;
    let two_days = Profile {
        days: vec![Day::new(
            "other".into(),
            other,
            Some(other_far),
            profile().os_noise,
        )],
        ..profile()
    };
    let seen: std::collections::BTreeSet<u64> = (0..16)
        .map(|rep| check_rep(&two_days, NoiseMode::OsNet, true, rep).unwrap().0)
        .collect();
    assert_eq!(seen.len(), 2, "both days' o among 16 repetitions: {seen:?}");
}

#[test]
fn determinism_across_instances_and_repetitions() {
    let m = model(NoiseMode::OsNet);
    let sample = |seed: u64, rep: u64| {
        let mut r = m.instance(seed, rep, 64);
        let mut v = vec![];
        for i in 0..64u32 {
            v.push(r.send_costs(&P, i, (i + 1) % 64, 0, 64 * MIB).latency);
            v.push(r.recv_costs(&P, i, (i + 1) % 64, 0, 64 * MIB).gap_bytes);
            v.push(r.phase(i).unwrap());
            v.push(r.os_detour(i, 0, 150_000));
        }
        v
    };
    let a = sample(9, 0);
    assert_eq!(a, sample(9, 0));
    let mut r = m.clone().instance(9, 0, 64);
    assert_eq!(a[0], r.send_costs(&P, 0, 1, 0, 64 * MIB).latency);
    let b = sample(9, 1);
    let c = sample(10, 0);
    let differ = |x: &[u64], y: &[u64]| x.iter().zip(y).filter(|(p, q)| p != q).count();
    assert!(differ(&a, &b) > 150, "{}", differ(&a, &b));
    assert!(differ(&a, &c) > 150, "{}", differ(&a, &c));
}

#[test]
fn os_detour_hand_computed_with_known_phase() {
    let m = model(NoiseMode::Os);
    assert_eq!(m.os_period_ps(), Some(1_000_000));
    let mut run = m.instance(21, 0, 4);
    let phase = run.phase(2).unwrap();
    assert!(phase < 1_000_000);
    // Absolute time that maps to trace time x for rank 2 (in the second period).
    let at = |x: u64| {
        1_000_000 + (x + 1_000_000 - phase) % 1_000_000 + if x < phase { 1_000_000 } else { 0 }
    };
    let mut q = |x: u64, len: u64| run.os_detour(2, at(x), at(x) + len);
    assert_eq!(q(5_000, 1_000), 0); // quiet
    assert_eq!(q(100_400, 0), 600); // empty window inside a detour
    assert_eq!(q(100_400, 10_000), 600); // starts inside a detour
    assert_eq!(q(150_000, 50_000), 0); // ends exactly at a detour start
    assert_eq!(q(150_000, 50_001), 1000); // covers its start: full duration
    assert_eq!(q(100_999, 300_000), 3001); // straddles 4 detours
    assert_eq!(q(850_000, 200_000), 2000); // wraps around the period
    assert_eq!(q(50_000, 2_500_000), 25_000); // 2.5 periods
    assert_eq!(q(0, 0), 1000);
}

#[test]
fn cosched_gives_all_ranks_one_phase() {
    let cfg = NoiseConfig {
        mode: NoiseMode::Os,
        cosched: true,
        ..NoiseConfig::default()
    };
    let m = NoiseModel::new(&profile(), &cfg).unwrap();
    let mut run = m.instance(4, 2, 100);
    let p0 = run.phase(0).unwrap();
    assert!((1..100).all(|r| run.phase(r) == Some(p0)));
    let d0 = run.os_detour(0, 123_456, 323_456);
    assert!((1..100).all(|r| run.os_detour(r, 123_456, 323_456) == d0));
    let indep = model(NoiseMode::Os).instance(4, 2, 100);
    let distinct: std::collections::HashSet<u64> =
        (0..100).map(|r| indep.phase(r).unwrap()).collect();
    assert_eq!(distinct.len(), 100);
}

#[test]
fn phases_are_uniform_over_the_period() {
    let m = model(NoiseMode::Os);
    let run = m.instance(8, 0, 20_000);
    let mut bins = [0u32; 10];
    for r in 0..20_000 {
        bins[(run.phase(r).unwrap() / 100_000) as usize] += 1;
    }
    // 2000 expected per bin, sd ≈ 42.
    assert!(bins.iter().all(|&b| (1800..2200).contains(&b)), "{bins:?}");
}

#[test]
fn detour_process_replay_modes() {
    let mut p = profile();
    p.os_noise.process = Some(DetourProcess {
        rate_per_s: 1e7, // one detour per 100 ns
        duration_ps: Distribution::Samples(vec![1000.0]),
    });
    let cfg = |replay| NoiseConfig {
        mode: NoiseMode::Os,
        os_replay: replay,
        ..NoiseConfig::default()
    };
    let cyc = NoiseModel::new(&p, &cfg(OsReplay::Cyclic)).unwrap();
    let then = NoiseModel::new(&p, &cfg(OsReplay::ThenProcess)).unwrap();
    let only = NoiseModel::new(&p, &cfg(OsReplay::Process)).unwrap();
    let (mut c, mut t, mut o) = (
        cyc.instance(1, 0, 4),
        then.instance(1, 0, 4),
        only.instance(1, 0, 4),
    );
    // Within the first period, then-process replays the trace like cyclic.
    for x in (0..970_000).step_by(7_919) {
        assert_eq!(c.os_detour(1, x, x + 30_000), t.os_detour(1, x, x + 30_000));
    }
    // Beyond it, the process: ~1000 detours of 1 ns in 100 us (trace would give 1 detour).
    let d = t.os_detour(1, 5_000_000, 105_000_000);
    assert!((850_000..1_150_000).contains(&d), "{d}");
    let d = o.os_detour(1, 5_000_000, 105_000_000);
    assert!((850_000..1_150_000).contains(&d), "{d}");
    assert_eq!(
        d,
        only.instance(1, 0, 4).os_detour(1, 5_000_000, 105_000_000)
    );
    // Without traces, the process is used automatically.
    p.os_noise.traces.clear();
    let m = NoiseModel::new(&p, &cfg(OsReplay::Cyclic)).unwrap();
    assert_eq!(m.os_period_ps(), None);
    assert_eq!(m.instance(1, 0, 4).os_detour(1, 5_000_000, 105_000_000), d);
}

#[test]
fn overhead_and_gap_distributions_are_drawn_per_side() {
    let mut p = profile();
    p.near.overhead = Some(Distribution::Samples(vec![1.0, 2.0, 3.0]));
    p.near.gap = Some(Distribution::Samples(vec![10.0, 20.0, 30.0]));
    p.far = None;
    let m = NoiseModel::new(
        &p,
        &NoiseConfig {
            mode: NoiseMode::Net,
            ..NoiseConfig::default()
        },
    )
    .unwrap();
    let mut run = m.instance(1, 0, 2);
    let mut os = std::collections::BTreeSet::new();
    let mut same = 0;
    for i in 0..300 {
        let s = run.send_costs(&P, 0, 1, i, 8);
        let r = run.recv_costs(&P, 0, 1, i, 8);
        os.insert(s.o);
        os.insert(r.g);
        same += (s.o == r.o) as u32;
        assert!([75_000, 150_000, 225_000].contains(&s.o));
        assert!([750_000, 1_500_000, 2_250_000].contains(&r.g));
    }
    // Independent sides: equal in about a third of the messages.
    assert!((60..140).contains(&same), "{same}");
    let off = NoiseModel::new(
        &p,
        &NoiseConfig {
            mode: NoiseMode::Net,
            overhead_gap_noise: false,
            ..NoiseConfig::default()
        },
    )
    .unwrap();
    let c = off.instance(1, 0, 2).send_costs(&P, 0, 1, 0, 8);
    assert_eq!((c.o, c.g), (150_000, 1_500_000));
}

#[test]
fn parse_modes() {
    assert_eq!("none".parse::<NoiseMode>().unwrap(), NoiseMode::None);
    assert_eq!("os".parse::<NoiseMode>().unwrap(), NoiseMode::Os);
    assert_eq!("net".parse::<NoiseMode>().unwrap(), NoiseMode::Net);
    assert_eq!("os+net".parse::<NoiseMode>().unwrap(), NoiseMode::OsNet);
    for m in NoiseMode::ALL {
        assert_eq!(m.to_string().parse::<NoiseMode>().unwrap(), m);
    }
    assert_eq!(
        "then-process".parse::<OsReplay>().unwrap(),
        OsReplay::ThenProcess
    );
    for r in [OsReplay::Cyclic, OsReplay::ThenProcess, OsReplay::Process] {
        assert_eq!(r.as_str().parse::<OsReplay>().unwrap(), r);
    }
    use loggops_noise::LevelScope;
    for l in [LevelScope::Run, LevelScope::Link, LevelScope::Off] {
        assert_eq!(l.as_str().parse::<LevelScope>().unwrap(), l);
    }
    assert_eq!("link".parse::<LevelScope>().unwrap(), LevelScope::Link);
}

#[test]
fn configuration_errors() {
    let e = |p: &Profile, cfg: NoiseConfig| NoiseModel::new(p, &cfg).unwrap_err().to_string();
    let os = NoiseConfig {
        mode: NoiseMode::Os,
        ..NoiseConfig::default()
    };
    let mut no_os = profile();
    no_os.os_noise.traces.clear();
    let mut bad_l = profile();
    bad_l.far.as_mut().unwrap().params.l_ps = -1.0;
    let mut bad_lat = profile();
    bad_lat.near.latency = Some(Distribution::Samples(vec![1.0, f64::INFINITY]));
    let mut zero_block = profile();
    zero_block.near.bandwidth_block_bytes = 0;
    let mut nps0 = profile();
    nps0.nodes_per_switch = 0;
    let mut bad_rate = profile();
    bad_rate.os_noise.process = Some(DetourProcess {
        rate_per_s: 0.0,
        duration_ps: Distribution::Samples(vec![1.0]),
    });
    let mut unsorted = profile();
    unsorted.os_noise.traces[0].start_ps[3] = 100_000;
    let msgs = [
        e(&no_os, os.clone()),
        e(
            &profile(),
            NoiseConfig {
                os_replay: OsReplay::ThenProcess,
                ..os.clone()
            },
        ),
        e(
            &bad_rate,
            NoiseConfig {
                os_replay: OsReplay::Process,
                ..os.clone()
            },
        ),
        e(&unsorted, os.clone()),
        e(&bad_l, NoiseConfig::default()),
        e(&bad_lat, NoiseConfig::default()),
        e(&zero_block, NoiseConfig::default()),
        e(&nps0, NoiseConfig::default()),
        "os-net".parse::<NoiseMode>().unwrap_err().to_string(),
        "mean"
            .parse::<loggops_noise::ScaleMode>()
            .unwrap_err()
            .to_string(),
        "loop".parse::<OsReplay>().unwrap_err().to_string(),
        "pair"
            .parse::<loggops_noise::LevelScope>()
            .unwrap_err()
            .to_string(),
    ];
    insta::assert_snapshot!(msgs.join("\n"));
    // OS noise is only validated when used.
    assert!(NoiseModel::new(&unsorted, &NoiseConfig::default()).is_ok());
}

#[test]
fn summary_mentions_the_active_parts() {
    let m = model(NoiseMode::OsNet);
    insta::assert_snapshot!(m.summary());
}

/// Every draw is at its documented counter: latency at purpose 0, o/g at 1/2 (send) and 3/4
/// (receive), the trace phase of rank r at `(r, DOMAIN_PHASE << 56)`; concrete values pinned.
#[test]
fn draws_are_at_the_documented_counters() {
    use loggops_noise::rng::{below, DOMAIN_PHASE};
    let mut p = profile();
    p.near.overhead = Some(Distribution::Samples(vec![1.0, 2.0, 3.0, 4.0, 5.0]));
    p.near.gap = Some(Distribution::Samples(vec![10.0, 20.0, 30.0, 40.0, 50.0]));
    let m = NoiseModel::new(
        &p,
        &NoiseConfig {
            mode: NoiseMode::OsNet,
            ..NoiseConfig::default()
        },
    )
    .unwrap();
    let (seed, rep) = (2024, 3);
    let mut run = m.instance(seed, rep, 8);
    let rng = CounterRng::new(seed, rep);
    let lat = Sampler::new(
        &Distribution::Samples(latency_samples()),
        Scaling::MedianTo(1_300_000.0),
        "ps",
    )
    .unwrap();
    let scaled = |v: &[f64], base: f64| {
        Sampler::new(
            &Distribution::Samples(v.to_vec()),
            Scaling::MedianTo(base),
            "ps",
        )
        .unwrap()
    };
    let o = scaled(&[1.0, 2.0, 3.0, 4.0, 5.0], 150_000.0);
    let g = scaled(&[10.0, 20.0, 30.0, 40.0, 50.0], 1_500_000.0);
    let draw = |s: &Sampler, a: u64, purpose: u64| {
        (s.sample(unit_f64(rng.at(a, DOMAIN_MSG << 56 | purpose))) + 0.5) as u64
    };
    let mut pinned = vec![];
    for (src, dst, op) in [(0u32, 1u32, 0u32), (3, 2, 7), (1, 0, 123_456)] {
        let a = (src as u64) << 32 | op as u64;
        let s = run.send_costs(&P, src, dst, op, 8);
        let r = run.recv_costs(&P, src, dst, op, 8);
        assert_eq!(s.latency, draw(&lat, a, 0));
        assert_eq!((s.o, s.g), (draw(&o, a, 1), draw(&g, a, 2)));
        assert_eq!((r.o, r.g), (draw(&o, a, 3), draw(&g, a, 4)));
        assert_eq!(r.latency, 1_300_000);
        pinned.push([s.latency, s.o, s.g, r.o, r.g, s.gap_bytes]);
    }
    for r in 0..8 {
        assert_eq!(
            run.phase(r),
            Some(below(rng.at(r as u64, DOMAIN_PHASE << 56), 1_000_000))
        );
    }
    assert_eq!(
        pinned,
        [
            [1_119_809, 150_000, 1_000_000, 150_000, 2_500_000, 572],
            [1_153_417, 200_000, 1_500_000, 200_000, 1_500_000, 639],
            [1_574_589, 200_000, 2_000_000, 250_000, 1_000_000, 724],
        ]
    );
    let phases: Vec<u64> = (0..8).map(|r| run.phase(r).unwrap()).collect();
    assert_eq!(
        phases,
        [9364, 59588, 322_646, 637_785, 1235, 47525, 912_987, 586_654]
    );
}

/// The per-rank quiet-stretch cache never changes a result: `os_detour` equals the uncached
/// trace lookup for mostly advancing (sometimes repeated or earlier) windows of many ranks,
/// in cyclic and then-process replay, on an irregular trace with bursts and long gaps.
#[test]
fn os_detour_cache_is_transparent() {
    use loggops_noise::os::{DetourProcessGen, DetourTable};
    let mut s = CounterRng::new(31, 0).stream(0);
    let (mut start, mut duration) = (vec![], vec![]);
    let mut t = 0u64;
    for i in 0..400 {
        t += if i % 40 < 8 {
            1 + s.next_u64() % 500
        } else {
            1 + s.next_u64() % 400_000
        };
        let d = s.next_u64() % 20_000;
        start.push(t);
        duration.push(d);
        t += d;
    }
    let trace = DetourTrace {
        start_ps: start,
        duration_ps: duration,
        period_ps: t + 1 + s.next_u64() % 100_000,
    };
    let mut p = profile();
    p.os_noise.traces = vec![trace.clone()];
    p.os_noise.process = Some(DetourProcess {
        rate_per_s: 2e6,
        duration_ps: Distribution::Samples(vec![500.0, 3000.0]),
    });
    let table = DetourTable::stitch(&[trace]).unwrap();
    let process = DetourProcessGen::new(p.os_noise.process.as_ref().unwrap()).unwrap();
    let period = table.period();
    for replay in [OsReplay::Cyclic, OsReplay::ThenProcess] {
        let m = NoiseModel::new(
            &p,
            &NoiseConfig {
                mode: NoiseMode::Os,
                os_replay: replay,
                ..NoiseConfig::default()
            },
        )
        .unwrap();
        let mut run = m.instance(5, 1, 16);
        let rng = *run.rng();
        let mut now = [0u64; 16];
        for _ in 0..20_000 {
            let r = (s.next_u64() % 16) as u32;
            let t0 = match s.next_u64() % 20 {
                0 => now[r as usize].saturating_sub(s.next_u64() % 1_000_000),
                1 => now[r as usize],
                _ => now[r as usize] + s.next_u64() % 300_000,
            };
            let len = match s.next_u64() % 4 {
                0 => 0,
                1 => s.next_u64() % 1_000,
                2 => s.next_u64() % 200_000,
                _ => s.next_u64() % 3_000_000,
            };
            let phase = run.phase(r).unwrap();
            let expected = match replay {
                OsReplay::Cyclic => table.detour_at(phase, t0, len),
                _ if t0 < period => {
                    let mut n = table.detour_at(phase, t0, len.min(period - t0));
                    if len > period - t0 {
                        n += process.detour(&rng, r, period, period, len - (period - t0));
                    }
                    n
                }
                _ => process.detour(&rng, r, period, t0, len),
            };
            assert_eq!(
                run.os_detour(r, t0, t0 + len),
                expected,
                "{replay:?} rank {r} [{t0}, +{len})"
            );
            now[r as usize] = t0 + len;
        }
        // The walk crossed several periods.
        assert!(now.iter().any(|&x| x > 3 * period), "{now:?} vs {period}");
        // Each rank's first window, near time 0 (its quiet stretch there is set up by
        // `instance`), over many phases: inside bursts, inside detours and in long gaps.
        let run = &mut m.instance(6, 2, 4000);
        for r in 0..4000u32 {
            let t0 = s.next_u64() % 3 * (s.next_u64() % 50_000);
            let len = s.next_u64() % 400_000;
            let phase = run.phase(r).unwrap();
            assert_eq!(
                run.os_detour(r, t0, t0 + len),
                table.detour_at(phase, t0, len),
                "{replay:?} rank {r} first window [{t0}, +{len})"
            );
        }
    }
}

/// `min_message_delay` bounds `o + latency` of every message from below and `min_latency`
/// its latency (the windowed engine's lookahead), both attained up to rounding by the
/// smallest latency sample; they are the base `o + L` and `L` without network noise and 0 in
/// mode `none`; `recv_costs_known_gap` answers as `recv_costs` does.
#[test]
fn min_message_delay_bounds_every_message_and_known_gaps_agree() {
    let m = model(NoiseMode::OsNet);
    let mut run = m.instance(3, 1, 64);
    let least = run.min_message_delay();
    let least_latency = run.min_latency();
    assert_eq!(least, 150_000 + least_latency);
    let mut smallest = u64::MAX;
    for src in 0..64u32 {
        for op in 0..400u32 {
            let dst = (src + 1 + op % 63) % 64;
            let s = run.send_costs(&P, src, dst, op, 16);
            assert!(s.o + s.latency >= least, "{src} {op}: {s:?} < {least}");
            assert!(
                s.latency >= least_latency,
                "{src} {op}: {s:?} < {least_latency}"
            );
            smallest = smallest.min(s.o + s.latency);
            let r = run.recv_costs_known_gap(&P, src, dst, op, 16, s.gap_bytes);
            assert_eq!(r, run.recv_costs(&P, src, dst, op, 16));
        }
    }
    // Near messages: o = 150 ns and the smallest latency sample, scaled so that the median is
    // L = 1.3 us (far messages have L = 2 us).
    let min_sample = latency_samples().into_iter().fold(f64::INFINITY, f64::min);
    let scale = 1_300_000.0 / latency_samples_median();
    let near_least = 150_000 + (min_sample * scale).floor() as u64;
    assert!(
        least <= near_least && near_least - least <= 1,
        "{least} {near_least}"
    );
    assert!(
        smallest >= least && smallest < least + least / 20,
        "{smallest} {least}"
    );
    let quiet = model(NoiseMode::Os).instance(3, 1, 64);
    assert_eq!(quiet.min_message_delay(), 150_000 + 1_300_000);
    assert_eq!(quiet.min_latency(), 1_300_000);
    let none = model(NoiseMode::None).instance(3, 1, 64);
    assert_eq!((none.min_message_delay(), none.min_latency()), (0, 0));
}

/// A profile whose near placement has an idle table: the 10 us latency step, then the
/// per-byte time x2 from 1 ms and x3 from 10 ms of idleness.
fn idle_profile(step_only: bool) -> Profile {
    let mut p = profile();
    let step = AfterIdle::step(10e6, Distribution::Samples(vec![5e6; 3]));
    p.near.after_idle = Some(if step_only {
        step
    } else {
        let mut levels = step.levels;
        for (from, f) in [(1e9, 2.0), (1e10, 3.0)] {
            levels.push(IdleLevel {
                from_ps: from,
                latency: None,
                per_byte_factor: f,
            });
        }
        AfterIdle { levels }
    });
    p.far = None;
    p
}

/// The idle table scales the per-byte time by the level the sender's idle time reaches, the
/// latency follows the level's (inherited) distribution, and a receive that comes after the
/// sender has sent again still gets the scaled gap; a version-3 step leaves every gap as a
/// profile without it does.
#[test]
fn idle_levels_scale_the_per_byte_time_at_both_ends() {
    let cfg = NoiseConfig {
        mode: NoiseMode::Net,
        ..NoiseConfig::default()
    };
    let table = NoiseModel::new(&idle_profile(false), &cfg).unwrap();
    let step = NoiseModel::new(&idle_profile(true), &cfg).unwrap();
    let plain = NoiseModel::new(&profile(), &cfg).unwrap();
    let size = 4 * MIB;
    let mut t = table.instance(5, 0, 4);
    let mut s = step.instance(5, 0, 4);
    let mut n = plain.instance(5, 0, 4);
    assert!(t.uses_idle() && s.uses_idle() && !n.uses_idle());
    let back = n.send_costs(&P, 0, 1, 0, size);
    for (idle, factor) in [
        (0, 1.0),
        (20_000_000, 1.0),
        (2_000_000_000, 2.0),
        (u64::MAX, 3.0),
    ] {
        let c = t.send_costs_idle(&P, 0, 1, 0, size, idle);
        assert_eq!(
            c.gap_bytes,
            (back.gap_bytes as f64 * factor).round() as u64,
            "{idle}"
        );
        let c3 = s.send_costs_idle(&P, 0, 1, 0, size, idle);
        assert_eq!(c3.gap_bytes, back.gap_bytes, "a step never scales the gap");
        if idle >= 10_000_000 {
            // The 10 us step's latency, inherited by the levels above it (scaled to L).
            assert_eq!(c.latency, c3.latency);
            assert_ne!(c.latency, back.latency);
        } else {
            assert_eq!(c.latency, back.latency);
        }
    }
    // Op 1 sent after 1 s idle, then op 2 back to back: op 1's receive still sees its x3 gap.
    let mut t = table.instance(5, 0, 4);
    let c1 = t.send_costs_idle(&P, 0, 1, 1, size, 1_000_000_000_000);
    let c2 = t.send_costs_idle(&P, 0, 1, 2, size, 0);
    assert_eq!(t.recv_costs(&P, 0, 1, 1, size).gap_bytes, c1.gap_bytes);
    assert_eq!(t.recv_costs(&P, 0, 1, 2, size).gap_bytes, c2.gap_bytes);
    assert_eq!(
        c1.gap_bytes,
        (n.send_costs(&P, 0, 1, 1, size).gap_bytes as f64 * 3.0).round() as u64
    );
}

/// A profile whose per-byte time is constant within a run and whose runs are at level 1 or 2.
fn levels_profile() -> Profile {
    let mut p = profile();
    p.far = None;
    p.near.bandwidth = Some(Distribution::Samples(vec![100.0]));
    p.near.params.big_g_ps_per_byte = 100.0;
    p.near.bandwidth_levels = Some(Distribution::Samples(vec![1.0, 2.0]));
    p
}

fn levels_model(scope: loggops_noise::LevelScope) -> NoiseModel {
    let cfg = NoiseConfig {
        mode: NoiseMode::Net,
        bandwidth_levels: scope,
        ..NoiseConfig::default()
    };
    NoiseModel::new(&levels_profile(), &cfg).unwrap()
}

#[test]
fn a_bandwidth_level_is_shared_by_every_message_of_a_repetition() {
    use loggops_noise::LevelScope;
    let size = 1001; // 1000 bytes at 100 ps/B: 100_000 ps at level 1
    let m = levels_model(LevelScope::Run);
    let mut seen = std::collections::BTreeSet::new();
    for rep in 0..64 {
        let mut run = m.instance(3, rep, 8);
        let gaps: std::collections::BTreeSet<u64> = (0..8u32)
            .flat_map(|src| (0..4u32).map(move |op| (src, op)))
            .map(|(src, op)| run.send_costs(&P, src, (src + 1) % 8, op, size).gap_bytes)
            .collect();
        assert_eq!(gaps.len(), 1, "rep {rep}: {gaps:?}");
        seen.extend(gaps);
    }
    // Both levels occur, as the profile's two runs do.
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![100_000, 200_000]);
    // Per pair of ranks: a pair keeps its level in both directions, pairs differ.
    let m = levels_model(LevelScope::Link);
    let mut run = m.instance(3, 0, 64);
    let mut levels = std::collections::BTreeSet::new();
    for a in 0..64u32 {
        let b = (a * 7 + 3) % 64;
        if a == b {
            continue;
        }
        let ab = run.send_costs(&P, a, b, 0, size).gap_bytes;
        let ba = run.send_costs(&P, b, a, 1, size).gap_bytes;
        assert_eq!(ab, ba, "pair {a}-{b}");
        levels.insert(ab);
    }
    assert_eq!(levels.len(), 2);
    // Off: the within-run distribution alone.
    let mut run = levels_model(LevelScope::Off).instance(3, 0, 8);
    for src in 0..8 {
        assert_eq!(
            run.send_costs(&P, src, (src + 1) % 8, 0, size).gap_bytes,
            100_000
        );
    }
}

#[test]
fn a_level_multiplies_the_sum_of_the_blocks_and_latencies_stay() {
    use loggops_noise::LevelScope;
    let with = levels_model(LevelScope::Run);
    let off = levels_model(LevelScope::Off);
    for rep in 0..16 {
        let (mut a, mut b) = (with.instance(9, rep, 4), off.instance(9, rep, 4));
        let size = 40 * MIB + 1; // three blocks
        let (ca, cb) = (
            a.send_costs(&P, 0, 1, 5, size),
            b.send_costs(&P, 0, 1, 5, size),
        );
        assert_eq!(ca.latency, cb.latency);
        assert!(
            ca.gap_bytes == cb.gap_bytes || ca.gap_bytes == 2 * cb.gap_bytes,
            "{ca:?} {cb:?}"
        );
    }
}

/// The latency by size adds its extra to the drawn latency of a send, once in all for a
/// rendezvous message (split over its `1 + rndv_extra_latencies` latencies), in every noise
/// mode; the far placement without a table of its own uses the near one's.
#[test]
fn latency_by_size_adds_its_extra_once_per_message() {
    let table = SizeLatency {
        sizes_bytes: vec![1, 1025, 4097, 16 * MIB],
        extra_ps: vec![0.0, 1_024_000.0, 3_000_000.0, 0.0],
    };
    // The far placement's own table: twice the near one's extras.
    let far_table = SizeLatency {
        extra_ps: table.extra_ps.iter().map(|e| 2.0 * e).collect(),
        ..table.clone()
    };
    let mut with = profile();
    with.near.latency_by_size = Some(table.clone());
    with.far.as_mut().expect("a far placement").latency_by_size = Some(far_table);
    for mode in [NoiseMode::Net, NoiseMode::None] {
        let cfg = NoiseConfig {
            mode,
            ..NoiseConfig::default()
        };
        let plain = NoiseModel::new(&profile(), &cfg).unwrap();
        let by_size = NoiseModel::new(&with, &cfg).unwrap();
        assert!(by_size.needs_noise_run(), "{mode:?}");
        let shares = 1 + by_size.engine_params().rndv_extra_latencies as u64;
        // One instance asked about sizes and placements in turn, each twice: what it keeps of
        // earlier answers never leaks into another size or placement.
        let mut a = plain.instance(5, 3, 8);
        let mut b = by_size.instance(5, 3, 8);
        for _ in 0..2 {
            for (size, extra) in [(1, 0), (513, 512_000), (4096, 1_024_000), (4097, 3_000_000)] {
                for (src, dst, factor) in [(0, 1, 1), (0, 5, 2), (1, 0, 1)] {
                    let la = a.send_costs(&P, src, dst, 9, size).latency;
                    let lb = b.send_costs(&P, src, dst, 9, size).latency;
                    let extra = factor * extra;
                    let per_latency = if size > 4096 { extra / shares } else { extra };
                    assert_eq!(lb - la, per_latency, "{mode:?} {src}->{dst} {size} B");
                    // Part of the placement's base costs: the critical path counts it as latency.
                    let base = |r: &NoiseRun| r.base_costs(&P, src, dst, size).latency;
                    assert_eq!(
                        base(&b) - base(&a),
                        per_latency,
                        "base {src}->{dst} {size} B"
                    );
                }
            }
        }
    }
}

/// Weighted days (latency episodes among them): each repetition runs on a day with its
/// weight's probability (binomial, 4 sigma over 20,000 repetitions), an episode only with
/// network noise; an episode runs with the profile's own OS noise (its own is empty);
/// unweighted days stay uniform.
#[test]
fn weighted_days_are_chosen_by_their_weights() {
    let episode = Day {
        weight: Some(0.1),
        episode: true,
        ..Day::new(
            "episodes".into(),
            placement(5_000_000.0, 86.3),
            None,
            OsNoise::default(),
        )
    };
    let other = Day {
        weight: Some(0.3),
        ..Day::new(
            "other".into(),
            placement(1_300_000.0, 86.3),
            None,
            profile().os_noise,
        )
    };
    let p = Profile {
        days: vec![other, episode],
        ..profile()
    };
    let cfg = NoiseConfig {
        mode: NoiseMode::OsNet,
        ..NoiseConfig::default()
    };
    let m = NoiseModel::new(&p, &cfg).unwrap();
    assert!(!m.day_is_episode(1) && m.day_is_episode(2));
    let n = 20_000u64;
    let mut count = [0u64; 3];
    for rep in 0..n {
        count[m.day_of(5, rep)] += 1;
    }
    for (d, w) in [0.6, 0.3, 0.1].iter().enumerate() {
        let sigma = (n as f64 * w * (1.0 - w)).sqrt();
        let off = (count[d] as f64 - n as f64 * w).abs();
        assert!(
            off < 4.0 * sigma,
            "day {d}: {} of {n}, weight {w}",
            count[d]
        );
    }
    // Without network noise an episode is the profile's own day (the other day stays).
    for mode in [NoiseMode::None, NoiseMode::Os] {
        let quiet = NoiseModel::new(
            &p,
            &NoiseConfig {
                mode,
                ..NoiseConfig::default()
            },
        )
        .unwrap();
        let days: Vec<usize> = (0..n).map(|r| quiet.day_of(5, r)).collect();
        assert!(!days.contains(&2), "{mode:?}");
        let own = days.iter().filter(|&&d| d == 0).count() as f64;
        assert!((own - 0.7 * n as f64).abs() < 4.0 * (n as f64 * 0.21).sqrt());
    }
    // A profile whose only further state is an episode runs noiseless without a noise run
    // (the episode is never chosen), and needs one with any noise.
    let lone = Profile {
        far: None,
        days: vec![p.days[1].clone()],
        ..profile()
    };
    for (mode, needs) in [
        (NoiseMode::None, false),
        (NoiseMode::Os, true),
        (NoiseMode::Net, true),
    ] {
        let cfg = NoiseConfig {
            mode,
            ..NoiseConfig::default()
        };
        let m = NoiseModel::new(&lone, &cfg).unwrap();
        assert_eq!(m.needs_noise_run(), needs, "{mode:?}");
    }
    // The episode's OS noise is the profile's: a repetition on it sees the periodic detours.
    let rep = (0..n).find(|&r| m.day_of(5, r) == 2).unwrap();
    let mut run = m.instance(5, rep, 1);
    assert!(
        run.os_detour(0, 0, 2_000_000) > 0,
        "no OS noise on the episode day"
    );
    // Unweighted days: uniform.
    let uniform = Profile {
        days: vec![Day::new(
            "b".into(),
            placement(1_300_000.0, 86.3),
            None,
            profile().os_noise,
        )],
        ..profile()
    };
    let m = NoiseModel::new(&uniform, &cfg).unwrap();
    let ones = (0..n).filter(|&r| m.day_of(5, r) == 1).count() as f64;
    assert!(
        (ones - n as f64 / 2.0).abs() < 4.0 * (n as f64 / 4.0).sqrt(),
        "{ones}"
    );
}
