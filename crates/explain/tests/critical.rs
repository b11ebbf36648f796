//! The critical path tiles the run exactly, recording changes no answer, and the derivatives
//! read from the path are the run's finite differences where the path is unique.

use loggops_engine::testing::VecProgram;
use loggops_engine::{
    simulate, simulate_global, Config, Model, MsgCosts, NoNoise, Noise, Op, OpKind, Outcome,
    Params, PerByte, Program, Time,
};

/// Both ways of sharing CPUs and NICs: every test runs under each.
const MODELS: [Model; 2] = [Model::LogGOPSim, Model::Queued];

fn config(params: Params, model: Model) -> Config {
    Config {
        model,
        ..Config::new(params)
    }
}
use loggops_engine::simulate_global_recorded;
use loggops_explain::{
    critical_path, record, tolerance, Binding, Carrier, CriticalPath, Part, Shifted,
};
use loggops_noise::{NoiseConfig, NoiseModel};
use loggops_schedgen::{Collective, Generated};

fn xorshift(mut s: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    }
}

/// Rounds of sends and receives with calcs between them, every message its own tag (so that
/// shifting a parameter never changes which receive a message matches), sizes on both sides
/// of S, some ops on a second CPU... only when `cpus`.
fn random_program(rnd: &mut impl FnMut(u64) -> u64) -> VecProgram {
    let ranks = 2 + rnd(7) as u32;
    let mut p = VecProgram::new(ranks);
    let rounds = 1 + rnd(5);
    let big = rnd(2) == 0;
    let mut last: Vec<Option<u32>> = vec![None; ranks as usize];
    let mut tag = 0;
    for _ in 0..rounds {
        let d = 1 + rnd(ranks as u64 - 1) as u32;
        let sizes: Vec<u64> = (0..ranks)
            .map(|_| {
                let sizes = if big {
                    [1, 8, 1000, 4096, 70_000]
                } else {
                    [1, 8, 100, 50, 2]
                };
                sizes[rnd(5) as usize]
            })
            .collect();
        for r in 0..ranks {
            let to = (r + d) % ranks;
            let from = (r + ranks - d) % ranks;
            let s = VecProgram::op(&mut p, r, Op::send(sizes[r as usize], to, tag + r));
            let v = VecProgram::op(&mut p, r, Op::recv(sizes[from as usize], from, tag + from));
            let c = VecProgram::op(&mut p, r, Op::calc(rnd(4) * 3_000_017 + rnd(1000)));
            p.requires(r, c, v);
            if rnd(2) == 0 {
                p.requires(r, c, s);
            }
            if let Some(prev) = last[r as usize] {
                p.requires(r, s, prev);
                if rnd(3) == 0 {
                    p.requires(r, v, prev);
                }
            }
            last[r as usize] = Some(c);
        }
        tag += ranks;
    }
    p
}

/// Parameters with unrelated odd values, so that different paths rarely tie.
fn generic_params() -> Params {
    Params {
        l: 2_500_017,
        o: 1_500_029,
        g: 1_000_003,
        big_g: PerByte::from_units(6_007),
        big_o: PerByte::from_units(3),
        s: 65535,
        rndv_extra_latencies: 2,
    }
}

/// The critical path of a run from its full log; the attribution carried forward on a
/// streaming log (collected every few activities) is checked to be exactly its parts,
/// derivatives and ties, with the same outcome.
fn path_of<P: Program, N: Noise + Clone>(
    p: &P,
    cfg: &Config,
    noise: &mut N,
) -> (Outcome, CriticalPath) {
    let mut again = noise.clone();
    let (out, log) = record(p, cfg, noise, false).unwrap();
    assert!(out.completed(), "{:?}", out.leftovers);
    let path = critical_path(&log, p, &out.finish, cfg.params.big_o).unwrap();
    let mut c = Carrier::new(p, cfg.model, cfg.params.big_o).collect_from(8);
    let carried = simulate_global_recorded(p, cfg, &mut again, &mut c).unwrap();
    assert_eq!(carried, out);
    let a = c.path(&out.finish).unwrap();
    assert_eq!(
        (a.finish, a.rank, a.parts, a.counts, a.ties),
        (path.finish, path.rank, path.parts, path.counts, path.ties),
        "carried forward vs read backwards"
    );
    (out, path)
}

fn check_tiles(path: &CriticalPath) {
    assert_eq!(path.parts.total(), path.finish as i64, "{:?}", path.parts);
    let mut t = 0;
    for s in &path.steps {
        assert_eq!(s.start, t);
        assert!(s.end >= s.start && s.wait <= s.end - s.start);
        t = s.end;
    }
    assert_eq!(t, path.finish);
    let on_ranks: u64 = path.ranks.iter().map(|r| r.1).sum();
    assert_eq!(on_ranks, path.finish);
    for p in Part::ALL {
        if p != Part::NetworkNoise {
            assert!(path.parts.get(p) >= 0, "{p:?} negative: {:?}", path.parts);
        }
    }
}

fn finish(p: &VecProgram, params: Params, model: Model) -> Time {
    let out = simulate(p, &config(params, model), &mut NoNoise).unwrap();
    assert!(out.completed());
    out.max().0
}

/// On 300 random programs: recording gives the engine's answer, the path tiles `[0, T]`, and
/// where it has no tie, every derivative read from it equals both one-sided finite
/// differences of the exact runs (L, o, g by 1 ps; G and O by 1 ps/B, on programs whose
/// messages have at most 100 bytes: a step of 1 ps/B moves a message's term by its byte
/// count, and with kilobyte messages that is enough to reorder two events that were a few
/// hundred ps apart somewhere off the path, after which the run is another schedule).
#[test]
fn path_tiles_the_run_and_its_counts_are_the_derivatives() {
    for model in MODELS {
        path_counts_are_the_derivatives(model);
    }
}

/// Parameters moved by a step.
type Shift<'a> = Box<dyn Fn(i64) -> Params + 'a>;

fn path_counts_are_the_derivatives(model: Model) {
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
    let params = generic_params();
    let cfg = config(params, model);
    let (mut checked, mut tied, mut bytes_checked) = (0, 0, 0);
    for _ in 0..300 {
        let p = random_program(&mut rnd);
        let (out, path) = path_of(&p, &cfg, &mut NoNoise);
        assert_eq!(out, simulate(&p, &cfg, &mut NoNoise).unwrap());
        check_tiles(&path);
        assert_eq!(path.parts.get(Part::NetworkNoise), 0);
        if path.ties > 0 {
            tied += 1;
            continue;
        }
        checked += 1;
        let t = path.finish;
        let c = path.counts;
        let per_byte = |g: PerByte, d: i64| PerByte::from_raw((g.raw() as i64 + d) as u64);
        let cases: [(&str, u64, Shift); 5] = [
            (
                "L",
                c.latency,
                Box::new(|d| Params {
                    l: (params.l as i64 + d) as u64,
                    ..params
                }),
            ),
            (
                "o",
                c.o,
                Box::new(|d| Params {
                    o: (params.o as i64 + d) as u64,
                    ..params
                }),
            ),
            (
                "g",
                c.g,
                Box::new(|d| Params {
                    g: (params.g as i64 + d) as u64,
                    ..params
                }),
            ),
            (
                "G",
                c.big_g_bytes,
                Box::new(|d| Params {
                    big_g: per_byte(params.big_g, d * 65536),
                    ..params
                }),
            ),
            (
                "O",
                c.big_o_bytes,
                Box::new(|d| Params {
                    big_o: per_byte(params.big_o, d * 65536),
                    ..params
                }),
            ),
        ];
        // G and O move a term by its byte count: only small messages keep that perturbation
        // below the margins between competing event orders.
        let small = (0..p.num_ranks()).all(|r| {
            (0..p.num_ops(r)).all(|i| p.op(r, i).kind == OpKind::Calc || p.op(r, i).size <= 100)
        });
        for (name, n, at) in cases {
            if matches!(name, "G" | "O") && !small {
                continue;
            }
            bytes_checked += (name == "G") as u32;
            let up = finish(&p, at(1), model) as i64 - t as i64;
            let down = t as i64 - finish(&p, at(-1), model) as i64;
            assert_eq!(
                (up, down),
                (n as i64, n as i64),
                "{model:?}: dT/d{name}: {p:?}\n{path:?}"
            );
        }
    }
    eprintln!(
        "{model:?}: {checked} programs checked against finite differences ({bytes_checked} \
         also in G and O), {tied} with ties"
    );
    assert!(
        checked > 250 && bytes_checked > 100,
        "{checked} {bytes_checked}"
    );
}

fn aws() -> loggops_profile::Profile {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../calibration/paper/aws.h5"
    );
    loggops_profile::read_profile(path).unwrap()
}

/// With the AWS profile's noise (every mode): recording on the global engine gives exactly the
/// answer the windowed engine gives without recording, and the path's parts (network noise
/// included, which may be negative) sum to the finishing time.
#[test]
fn noisy_paths_tile_and_recording_changes_no_answer() {
    let profile = aws();
    for model in MODELS {
        noisy_paths_tile(&profile, model);
    }
}

fn noisy_paths_tile(profile: &loggops_profile::Profile, engine_model: Model) {
    let mut rnd = xorshift(42);
    for mode in ["os", "net", "os+net", "none"] {
        let cfg = NoiseConfig {
            mode: mode.parse().unwrap(),
            ..NoiseConfig::default()
        };
        let model = NoiseModel::new(profile, &cfg).unwrap();
        let ecfg = config(model.engine_params(), engine_model);
        let mut noisy_parts = 0;
        for rep in 0..40 {
            let p = random_program(&mut rnd);
            let plain = simulate(&p, &ecfg, &mut model.instance(7, rep, p.num_ranks())).unwrap();
            let (out, path) = path_of(&p, &ecfg, &mut model.instance(7, rep, p.num_ranks()));
            assert_eq!(out, plain, "{engine_model:?} {mode} rep {rep}");
            check_tiles(&path);
            noisy_parts += (path.parts.get(Part::NetworkNoise) != 0) as u32
                + (path.parts.get(Part::OsDetour) != 0) as u32;
        }
        if mode.contains("net") {
            assert!(noisy_parts > 0, "{mode}: no noise on any path");
        }
    }
}

/// A noise that draws something for every term and a detour in every CPU interval: the
/// parts still tile, network noise (also negative) and OS detours included.
#[derive(Clone)]
struct Jitter(u64);

impl Jitter {
    fn h(&self, a: u64, b: u64) -> u64 {
        let mut x = self.0 ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.rotate_left(17);
        x ^= x >> 31;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^ (x >> 29)
    }
    fn costs(&self, p: &Params, src: u32, op: u32, size: u64, side: u64) -> MsgCosts {
        let k = (src as u64) << 32 | op as u64;
        let gap = p.big_g.cost(size.saturating_sub(1)).unwrap();
        MsgCosts {
            latency: p.l / 2 + self.h(k, 0) % p.l,
            o: p.o / 2 + self.h(k, 1 + side) % p.o,
            g: p.g / 2 + self.h(k, 3 + side) % p.g,
            gap_bytes: gap / 2 + self.h(k, 5) % (gap + 1),
        }
    }
}

impl Noise for Jitter {
    const ACTIVE: bool = true;
    fn send_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        self.costs(p, src, op, size, 0)
    }
    fn recv_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        self.costs(p, src, op, size, 1)
    }
    fn os_detour(&mut self, rank: u32, t0: Time, t1: Time) -> Time {
        if t1 > t0 {
            self.h(rank as u64, t0) % 700_000
        } else {
            0
        }
    }
}

#[test]
fn jittered_paths_tile() {
    for model in MODELS {
        jittered(model);
    }
}

fn jittered(model: Model) {
    let mut rnd = xorshift(77);
    let cfg = config(generic_params(), model);
    let (mut negative, mut detours) = (0, 0);
    for seed in 0..200 {
        let p = random_program(&mut rnd);
        let plain = simulate(&p, &cfg, &mut Jitter(seed)).unwrap();
        let (out, path) = path_of(&p, &cfg, &mut Jitter(seed));
        assert_eq!(out, plain);
        check_tiles(&path);
        negative += (path.parts.get(Part::NetworkNoise) < 0) as u32;
        detours += (path.parts.get(Part::OsDetour) > 0) as u32;
    }
    assert!(negative > 10 && detours > 100, "{negative} {detours}");
}

/// Schedgen's collectives, noiseless and with AWS noise: exact tiling, the answer of the
/// unrecorded run, and (noiseless) the latency count equals the finite difference.
#[test]
fn collectives_tile_with_and_without_noise() {
    let profile = aws();
    let model = NoiseModel::new(
        &profile,
        &NoiseConfig {
            mode: "os+net".parse().unwrap(),
            ..NoiseConfig::default()
        },
    )
    .unwrap();
    for name in [
        "dissemination",
        "allreduce_ring",
        "pipelinedring",
        "allreduce_recdoub",
        "binomialtreebcast",
        "binomialtreereduce",
        "linear_alltoall",
    ] {
        for (ranks, size) in [(8, 16), (13, 100_000), (32, 1 << 20)] {
            let coll: Collective = name.parse().unwrap();
            let Ok(g) = Generated::new(coll, ranks, size) else {
                continue;
            };
            for m in MODELS {
                let cfg = config(generic_params(), m);
                let (out, path) = path_of(&g, &cfg, &mut NoNoise);
                assert_eq!(out, simulate_global(&g, &cfg, &mut NoNoise).unwrap());
                check_tiles(&path);
                let ecfg = config(model.engine_params(), m);
                let mut n = model.instance(3, 1, ranks);
                let plain = simulate(&g, &ecfg, &mut n).unwrap();
                let (out, noisy) = path_of(&g, &ecfg, &mut model.instance(3, 1, ranks));
                assert_eq!(out, plain, "{m:?} {name} {ranks}");
                check_tiles(&noisy);
            }
        }
    }
}

/// The latency tolerance by bisection equals a linear scan of exact runs.
#[test]
fn latency_tolerance_is_the_exact_crossing() {
    let mut rnd = xorshift(5);
    let params = Params {
        l: 1_000,
        o: 500,
        g: 300,
        big_g: PerByte::from_units(1),
        big_o: PerByte::from_units(0),
        s: 65535,
        rndv_extra_latencies: 0,
    };
    for _ in 0..20 {
        let p = random_program(&mut rnd);
        let run = |x: Time| {
            simulate(
                &p,
                &Config::new(Params {
                    l: params.l + x,
                    ..params
                }),
                &mut NoNoise,
            )
            .map(|o| o.max().0)
        };
        let (_, path) = path_of(&p, &Config::new(params), &mut NoNoise);
        let t0 = run(0).unwrap();
        let tol = tolerance(t0, path.counts.latency, 1, run).unwrap();
        let x = tol.extra_latency_ps.expect("messages make it bounded");
        assert!(run(x).unwrap() <= tol.limit_ps && run(x + 1).unwrap() > tol.limit_ps);
        // The same through the Shifted noise wrapper.
        let shifted = |x: Time| {
            let mut n = Shifted {
                inner: NoNoise,
                extra: x,
            };
            simulate(&p, &Config::new(params), &mut n).map(|o| o.max().0)
        };
        assert_eq!(shifted(x).unwrap(), run(x).unwrap());
        assert_eq!(shifted(x + 1).unwrap(), run(x + 1).unwrap());
        // Runtime is monotone in L on these programs: the bisection found the largest x.
        let scan = (0..=x + 1).rev().find(|&y| run(y).unwrap() <= tol.limit_ps);
        assert_eq!(scan, Some(x));
    }
}

/// Base costs of the noise model are its placement's parameters (far and near).
#[test]
fn base_costs_follow_the_placement() {
    let mut profile = aws();
    let mut far = profile.near.clone();
    far.params.l_ps *= 3.0;
    profile.far = Some(far);
    profile.nodes_per_switch = 2;
    let model = NoiseModel::new(&profile, &NoiseConfig::default()).unwrap();
    let n = model.instance(1, 0, 4);
    let p = model.engine_params();
    let near: MsgCosts = n.base_costs(&p, 0, 1, 100);
    let far: MsgCosts = n.base_costs(&p, 0, 2, 100);
    assert_eq!(near.latency, model.near_params().l);
    assert_eq!(far.latency, model.far_params().l);
    assert_eq!(near.gap_bytes, model.near_params().big_g.cost(99).unwrap());
}

/// The queued model: a send whose message waits in its NIC's queue behind the previous send
/// is on the path through the NIC. Rank 0 sends 60 kB (eager) to rank 1, then to rank 2: the
/// second send starts when the CPU is free (`o + O·(s−1)`), its message leaves when the NIC
/// is (`g + G·(s−1)`). Of the first message's NIC time after the second send started, the
/// NIC's per-message gap `g` is waiting for a busy NIC and the time moving its bytes,
/// `G·(s−1)`, stays bandwidth (NIC gap), whichever message waits for it; rank 2 finishes
/// last, at the reception.
#[test]
fn queued_nic_queue_is_waiting_for_a_busy_nic() {
    let params = generic_params();
    let size = 60_000;
    let mut p = VecProgram::new(3);
    VecProgram::op(&mut p, 0, Op::send(size, 1, 1));
    VecProgram::op(&mut p, 0, Op::send(size, 2, 2));
    VecProgram::op(&mut p, 1, Op::recv(size, 0, 1));
    VecProgram::op(&mut p, 2, Op::recv(size, 0, 2));
    let (out, path) = path_of(&p, &config(params, Model::Queued), &mut NoNoise);
    check_tiles(&path);
    let gap = params.big_g.cost(size - 1).unwrap();
    let ob = params.big_o.cost(size - 1).unwrap();
    let cpu = params.o + ob;
    let nic = params.g + gap;
    assert!(nic > cpu);
    let t = nic + params.o + params.l + params.o + gap.max(ob);
    assert_eq!((out.max(), path.finish, path.rank), ((t, 2), t, 2));
    assert!(nic - cpu > params.g);
    assert_eq!(path.parts.get(Part::WaitNic), params.g as i64);
    assert_eq!(path.parts.get(Part::WaitCpu), 0);
    assert_eq!(path.parts.get(Part::Latency), params.l as i64);
    assert_eq!(path.parts.get(Part::CpuOverhead), 2 * params.o as i64);
    assert_eq!(path.parts.get(Part::NicGap), (gap + gap.max(ob)) as i64);
    let bindings: Vec<Binding> = path.steps.iter().map(|s| s.binding).collect();
    assert_eq!(
        bindings,
        [Binding::Start, Binding::SendNicFree, Binding::Arrival]
    );
    // dT/dg = 1 (the first message's g), dT/dG = both messages' bytes at the NIC and the
    // receiver, no O on the path.
    assert_eq!(path.counts.g, 1);
    assert_eq!(path.counts.big_g_bytes, 2 * (size - 1));
}

/// The carrier's memory follows the ranks, not the run's length: on Schedgen's ring the
/// streaming log's live activities per rank stay a small constant from 32 to 128 ranks under
/// both models (a log of the whole run grows with the steps, 2(P−1) per rank).
#[test]
fn carrier_memory_follows_the_ranks() {
    for model in MODELS {
        for ranks in [32u32, 128] {
            let p = Generated::new(Collective::AllreduceRing, ranks, 64 << 20).unwrap();
            let cfg = config(generic_params(), model);
            let mut c = Carrier::new(&p, cfg.model, cfg.params.big_o);
            let out = simulate_global_recorded(&p, &cfg, &mut NoNoise, &mut c).unwrap();
            assert!(out.completed());
            let (runs, peak) = c.log().collections();
            let slots = c.log().nodes.len();
            eprintln!(
                "{model:?} {ranks} ranks: {runs} collections, peak live {peak}, slab {slots}"
            );
            assert!(runs > 0, "{model:?} {ranks}: never collected");
            assert!(
                slots <= (8 * ranks as usize).max(1024) && peak <= 4 * ranks as usize,
                "{model:?} at {ranks} ranks: {slots} slots for {} pushes",
                c.log().pushes()
            );
        }
    }
}
