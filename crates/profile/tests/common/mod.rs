//! Profiles shared by the integration tests.
#![allow(dead_code)]

use loggops_profile::*;

pub fn params(l_ps: f64) -> BaseParams {
    BaseParams {
        l_ps,
        o_ps: 1_250_000.0,
        g_ps: 333_333.5,
        big_g_ps_per_byte: 80.123456789,
        big_o_ps_per_byte: 0.25,
        s_bytes: 65_536,
    }
}

/// Every optional part present, non-ASCII strings, both distribution kinds.
pub fn full_profile() -> Profile {
    Profile {
        system: "aws".into(),
        description: "AWS c5n.metal (EFA 100G), µs-scale noise – café".into(),
        near: Placement {
            latency: Some(Distribution::Quantiles {
                probs: vec![0.0, 0.001, 0.5, 0.999, 1.0],
                values: vec![
                    14_000_000.0,
                    14_100_000.0,
                    15_000_000.0,
                    40_000_000.5,
                    120_000_000.0,
                ],
                tail: None,
            }),
            bandwidth: Some(Distribution::Samples(vec![80.5, 80.25, 81.0, 95.125])),
            overhead: Some(Distribution::Quantiles {
                probs: vec![0.0, 1.0],
                values: vec![1_000_000.0, 1_000_000.0],
                tail: None,
            }),
            gap: Some(Distribution::Samples(vec![333_000.0])),
            ..Placement::new(params(15_000_000.0), 16 << 20)
        },
        far: Some(Placement {
            latency: Some(Distribution::Samples(vec![18_000_000.0, 19_000_000.0, 0.0])),
            bandwidth: Some(Distribution::Quantiles {
                probs: vec![0.0, 0.25, 1.0],
                values: vec![82.0, 83.5, 400.0],
                tail: None,
            }),
            ..Placement::new(params(18_500_000.0), 1 << 20)
        }),
        nodes_per_switch: 16,
        os_noise: OsNoise {
            traces: vec![
                DetourTrace {
                    start_ps: vec![1_000, 5_000_000, 9_000_000_000],
                    duration_ps: vec![2_500_000, 7, 1_000_000_000],
                    period_ps: 10_000_000_000,
                },
                DetourTrace {
                    start_ps: vec![],
                    duration_ps: vec![],
                    period_ps: 1_000_000_000_000,
                },
                DetourTrace {
                    start_ps: vec![u64::MAX - 10],
                    duration_ps: vec![10],
                    period_ps: u64::MAX,
                },
            ],
            process: Some(DetourProcess {
                rate_per_s: 1000.5,
                duration_ps: Distribution::Quantiles {
                    probs: vec![0.0, 0.9, 1.0],
                    values: vec![1_000_000.0, 2_000_000.0, 50_000_000.0],
                    tail: None,
                },
            }),
        },
        prices: Prices {
            on_demand_usd_per_node_hour: Some(3.888),
            committed_usd_per_node_hour: Some(2.449),
            spot: Default::default(),
        },
        provenance: Provenance {
            sources: vec![
                "captures/aws/ping_near.txt".into(),
                "captures/aws/selfish détour.txt".into(),
            ],
            command: "loggops-sim calibrate --system aws captures/aws -o aws.h5".into(),
            created: "2025-01-31T12:00:00Z".into(),
            tool_version: "0.1.0".into(),
            notes: vec!["far latency substituted from near capture".into()],
        },
        calibration: Default::default(),
        day: String::new(),
        days: Vec::new(),
        mpi_progress: None,
        clock: None,
    }
}

/// Only what the schema requires.
pub fn minimal_profile() -> Profile {
    Profile {
        system: "toy".into(),
        description: String::new(),
        near: Placement::new(params(1_000_000.0), 0),
        far: None,
        nodes_per_switch: 1,
        os_noise: OsNoise::default(),
        prices: Prices::default(),
        provenance: Provenance::default(),
        calibration: Default::default(),
        day: String::new(),
        days: Vec::new(),
        mpi_progress: None,
        clock: None,
    }
}

/// The full profile with exact tails: near latency (3 tail samples of 1000) and the detour
/// process durations (1 of 10); schema version 2.
pub fn tail_profile() -> Profile {
    let mut p = full_profile();
    p.near.latency = Some(Distribution::Quantiles {
        probs: vec![0.0, 0.001, 0.5, 0.997],
        values: vec![14_000_000.0, 14_100_000.0, 15_000_000.0, 40_000_000.5],
        tail: Some(ExactTail {
            values: vec![40_000_000.5, 90_000_000.0, 620_000_000.25],
            sample_count: 1000,
        }),
    });
    p.os_noise.process.as_mut().unwrap().duration_ps = Distribution::Quantiles {
        probs: vec![0.0, 0.5, 0.9],
        values: vec![1_000_000.0, 1_500_000.0, 2_000_000.0],
        tail: Some(ExactTail {
            values: vec![50_000_000.0],
            sample_count: 10,
        }),
    };
    p
}

/// True when some quantile table of `p` has an exact tail.
pub fn has_tail(p: &Profile) -> bool {
    let t =
        |d: &Option<Distribution>| matches!(d, Some(Distribution::Quantiles { tail: Some(_), .. }));
    std::iter::once(&p.near)
        .chain(p.far.as_ref())
        .any(|pl| t(&pl.latency) || t(&pl.bandwidth) || t(&pl.overhead) || t(&pl.gap))
        || p.os_noise
            .process
            .as_ref()
            .is_some_and(|pr| t(&Some(pr.duration_ps.clone())))
}

/// Deterministic pseudo-random numbers (xorshift64*), for realistic-looking bulk data.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A quantile table of `n` points with dense tails (probabilities crowd towards 0 and 1),
/// values with full-precision noise (worst case for compression).
pub fn dense_tail_table(n: usize, base: f64, rng: &mut Rng) -> Distribution {
    let probs: Vec<f64> = (0..n)
        .map(|i| {
            let x = i as f64 / (n - 1) as f64;
            // Smoothstep-like map: dense near both ends.
            0.5 - 0.5 * (std::f64::consts::PI * x).cos()
        })
        .collect();
    let mut v = base;
    let values = (0..n)
        .map(|i| {
            if i > 0 {
                v += base * 0.001 * rng.unit() + if i > n - 20 { base * rng.unit() } else { 0.0 };
            }
            v
        })
        .collect();
    let mut probs = probs;
    probs[0] = 0.0;
    probs[n - 1] = 1.0;
    Distribution::quantiles(probs, values)
}

/// Two 2000-point tables per placement and one 50,000-detour trace.
pub fn big_profile() -> Profile {
    let mut rng = Rng::new(42);
    let mut p = full_profile();
    for (pl, base) in [(&mut p.near, 15e6), (p.far.as_mut().unwrap(), 18e6)] {
        pl.latency = Some(dense_tail_table(2000, base, &mut rng));
        pl.bandwidth = Some(dense_tail_table(2000, 80.0, &mut rng));
    }
    let mut t = 0u64;
    let mut start = Vec::with_capacity(50_000);
    let mut dur = Vec::with_capacity(50_000);
    for _ in 0..50_000 {
        // Detours about every 1 ms, lasting 1-20 us, at 1 ns resolution.
        t += 500_000_000 + 1000 * (rng.next_u64() % 1_000_000);
        let d = 1000 * (1000 + rng.next_u64() % 19_000);
        start.push(t);
        dur.push(d);
        t += d;
    }
    p.os_noise.traces = vec![DetourTrace {
        start_ps: start,
        duration_ps: dur,
        period_ps: t + 1_000_000,
    }];
    p
}
