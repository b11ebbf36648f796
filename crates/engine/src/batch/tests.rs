//! The batched engine against the global engine, lane by lane: on random programs (exchange
//! rounds with calcs, rendezvous-sized messages, self-messages, several messages per peer) and
//! hand-made collectives, under noise drawn from wide ranges (few ties) and from a few values
//! (ties everywhere), every lane the walk answers is the global engine's answer to the
//! picosecond, and the walk refuses what it cannot follow.

use super::*;
use crate::noise::MsgCosts;
use crate::params::PerByte;
use crate::program::Op;
use crate::sim::simulate_global;
use crate::test_rng::{hash, periodic_detour, xorshift};
use crate::testing::VecProgram;

/// Costs drawn by hashing (lane seed, message): latency, o and a per-byte gap from `spread`
/// values each (a large spread makes ties rare, a small one makes them common), and OS
/// detours at a period from a per-rank phase. Every answer is a function of its arguments.
#[derive(Clone)]
struct Hashed {
    seed: u64,
    spread: u64,
    detour: Time,
    period: Time,
    /// A message after an idle time above 3 ns pays 500 ps more latency.
    idle: bool,
}

impl Hashed {
    fn costs(&self, p: &Params, src: u32, op: u32, size: u64, side: u64) -> MsgCosts {
        let h = hash(self.seed, (src as u64) << 32 | op as u64);
        let pick = |salt: u64, unit: u64| (hash(h, salt) % self.spread) * unit;
        MsgCosts {
            latency: p.l + pick(1, 37),
            o: p.o + pick(2 + side, 11),
            g: p.g,
            gap_bytes: size.saturating_sub(1) * (1 + pick(4, 1) % 3),
        }
    }
}

impl Noise for Hashed {
    const ACTIVE: bool = true;
    fn uses_idle(&self) -> bool {
        self.idle
    }
    fn send_costs_idle(
        &mut self,
        p: &Params,
        src: u32,
        dst: u32,
        op: u32,
        size: u64,
        idle: Time,
    ) -> MsgCosts {
        let mut c = self.send_costs(p, src, dst, op, size);
        if self.idle && idle > 3000 {
            c.latency += 500;
        }
        c
    }
    fn send_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        self.costs(p, src, op, size, 0)
    }
    fn recv_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        let mut c = self.costs(p, src, op, size, 1);
        c.latency = p.l;
        c
    }
    fn os_detour(&mut self, rank: u32, t0: Time, t1: Time) -> Time {
        if self.detour == 0 {
            return 0;
        }
        let phase = hash(self.seed ^ 0x55, rank as u64) % self.period;
        periodic_detour(phase, self.period, self.detour, t0, t1)
    }
}

fn params(rnd: &mut impl FnMut(u64) -> u64) -> Params {
    Params {
        l: 1000,
        o: 200,
        g: [0, 300][rnd(2) as usize],
        big_g: PerByte::from_units(1),
        big_o: PerByte::from_units(rnd(2)),
        s: 65535,
        rndv_extra_latencies: [0, 2][rnd(2) as usize],
    }
}

/// Exchange rounds: each rank sends to `r + d` and receives from `r − d` (tags per round, or
/// one tag for all: several messages per peer), calcs that require the receive (and sometimes
/// the send), sends and receives that require the last round's calc, now and then a
/// rendezvous-sized message or a self-message.
fn random_program(rnd: &mut impl FnMut(u64) -> u64) -> VecProgram {
    let ranks = 2 + rnd(7) as u32;
    let mut p = VecProgram::new(ranks);
    p.sparse_counters = rnd(2) == 0;
    p.hints = rnd(2) == 0;
    let rounds = 1 + rnd(6);
    let one_tag = rnd(3) == 0;
    let mut last: Vec<Option<u32>> = vec![None; ranks as usize];
    for k in 0..rounds {
        let d = if rnd(8) == 0 {
            0
        } else {
            1 + rnd(ranks as u64 - 1) as u32
        };
        let kinds = if rnd(20) == 0 { 5 } else { 4 };
        let size = [1, 8, 64, 1000, 70_000][rnd(kinds) as usize];
        let tag = if one_tag { 0 } else { k as u32 };
        for r in 0..ranks {
            let s = VecProgram::op(&mut p, r, Op::send(size, (r + d) % ranks, tag));
            let v = VecProgram::op(&mut p, r, Op::recv(size, (r + ranks - d) % ranks, tag));
            let c = VecProgram::op(&mut p, r, Op::calc([0, 0, 500, 1000][rnd(4) as usize]));
            if rnd(4) != 0 {
                p.requires(r, c, v);
            }
            if rnd(2) == 0 {
                p.requires(r, c, s);
            }
            if let Some(prev) = last[r as usize] {
                if rnd(3) != 0 {
                    p.requires(r, s, prev);
                }
                if rnd(3) == 0 {
                    p.requires(r, v, prev);
                }
            }
            last[r as usize] = Some(c);
        }
    }
    p
}

fn queued(params: Params) -> Config {
    Config {
        model: Model::Queued,
        ..Config::new(params)
    }
}

/// Runs `noises` as lanes and each alone; asserts every answered lane equals its global run.
/// Returns (lanes answered, lanes given up), or `None` when the walk refused the run.
fn compare(case: usize, p: &VecProgram, cfg: &Config, noises: &[Hashed]) -> Option<(usize, usize)> {
    let mut lanes = noises.to_vec();
    let got = simulate_lanes(p, cfg, &mut lanes);
    let got = match got {
        Ok(g) => g,
        Err(LaneError::Refused(_)) => return None,
        Err(LaneError::Stopped) => panic!("case {case}: nobody asked to stop"),
    };
    let mut answered = 0;
    for (k, (lane, noise)) in got.iter().zip(noises).enumerate() {
        if let Some(out) = lane {
            let alone = simulate_global(p, cfg, &mut noise.clone());
            assert_eq!(
                alone.as_ref(),
                Ok(out),
                "case {case}, lane {k}: {p:?} {cfg:?}"
            );
            answered += 1;
        }
    }
    Some((answered, got.len() - answered))
}

fn lanes(rnd: &mut impl FnMut(u64) -> u64, spread: u64, n: usize) -> Vec<Hashed> {
    let detour = [0, 50, 700][rnd(3) as usize];
    let period = 2000 + rnd(3000);
    let idle = rnd(2) == 0;
    (0..n)
        .map(|_| Hashed {
            seed: rnd(u64::MAX),
            spread,
            detour,
            period,
            idle,
        })
        .collect()
}

#[test]
fn answered_lanes_are_the_global_engines_answers() {
    let mut next = xorshift(0xBA7C_4ED0_0C0F_FEE5);
    let mut rnd = move |n: u64| next() % n;
    let (mut answered, mut given_up, mut refused) = (0, 0, 0);
    for case in 0..4000 {
        let p = random_program(&mut rnd);
        let cfg = queued(params(&mut rnd));
        let spread = [2, 5, 1_000_000][rnd(3) as usize];
        let n = 1 + rnd(8) as usize;
        let noises = lanes(&mut rnd, spread, n);
        match compare(case, &p, &cfg, &noises) {
            Some((a, g)) => {
                answered += a;
                given_up += g;
            }
            None => refused += 1,
        }
    }
    // Not a bound on how often the walk answers, only that these cases exercise it.
    assert!(
        answered > 1000,
        "answered {answered}, given up {given_up}, refused {refused}"
    );
    assert!(given_up > 0, "the tie-prone cases give lanes up");
}

/// A ring (each rank sends around P − 1 times, receiving from its left neighbour) and a
/// dissemination barrier, each step's calc after its send and receive (so that each CPU's
/// order is fixed), under noise of the order of L: the walk answers nearly every lane, each as
/// the global engine does.
#[test]
fn collectives_under_continuous_noise_are_answered() {
    let mut next = xorshift(0x0123_4567_89AB_CDEF);
    let mut rnd = move |n: u64| next() % n;
    for ranks in [2u32, 5, 16, 33] {
        let mut ring = VecProgram::new(ranks);
        let mut dis = VecProgram::new(ranks);
        for r in 0..ranks {
            let mut prev: Option<u32> = None;
            for step in 0..ranks - 1 {
                let s = VecProgram::op(&mut ring, r, Op::send(4096, (r + 1) % ranks, step));
                let v = VecProgram::op(&mut ring, r, Op::recv(4096, (r + ranks - 1) % ranks, step));
                let c = VecProgram::op(&mut ring, r, Op::calc(300));
                ring.requires(r, c, v);
                ring.requires(r, c, s);
                if let Some(pc) = prev {
                    ring.requires(r, s, pc);
                }
                prev = Some(c);
            }
            let mut prev: Option<u32> = None;
            let mut d = 1;
            let mut round = 0;
            while d < ranks {
                let s = VecProgram::op(&mut dis, r, Op::send(16, (r + d) % ranks, round));
                let v = VecProgram::op(&mut dis, r, Op::recv(16, (r + ranks - d) % ranks, round));
                let c = VecProgram::op(&mut dis, r, Op::calc(100));
                dis.requires(r, c, v);
                dis.requires(r, c, s);
                if let Some(pc) = prev {
                    dis.requires(r, s, pc);
                    dis.requires(r, v, pc);
                }
                prev = Some(c);
                d *= 2;
                round += 1;
            }
        }
        for (case, prog) in [ring, dis].iter().enumerate() {
            let cfg = queued(params(&mut rnd));
            // Latency jitter of up to 1.1 ns, about L: a jitter wider than the time between
            // two sends to one peer lets messages overtake, which gives their lanes up.
            let mut noises = lanes(&mut rnd, 30, 16);
            // Idle times make the draws depend on whether a receive completed before a send,
            // which the jitter reorders: the random programs test them.
            noises.iter_mut().for_each(|n| n.idle = false);
            let (a, g) = compare(case, prog, &cfg, &noises).expect("a fixed-order program");
            assert!(
                a >= 12,
                "{ranks} ranks, case {case}: answered {a}, gave up {g}"
            );
        }
    }
}

/// What the walk cannot follow is refused, with a reason: LogGOPSim's model, wildcard
/// receives, several CPUs.
#[test]
fn runs_it_cannot_follow_are_refused() {
    let mut p = VecProgram::new(2);
    VecProgram::op(&mut p, 0, Op::send(8, 1, 0));
    VecProgram::op(&mut p, 1, Op::recv(8, ANY, 0));
    let params = Params::loggopsim_defaults_ps();
    let noise = Hashed {
        seed: 1,
        spread: 100,
        detour: 0,
        period: 1000,
        idle: false,
    };
    let mut one = vec![noise.clone()];
    let got = simulate_lanes(&p, &Config::new(params), &mut one);
    assert!(matches!(got, Err(LaneError::Refused(w)) if w.contains("queued model")));
    let got = simulate_lanes(&p, &queued(params), &mut one);
    assert_eq!(
        got,
        Err(LaneError::Refused("the schedule has wildcard receives"))
    );
    let mut q = VecProgram::new(2);
    VecProgram::op(&mut q, 0, Op::send(8, 1, 0).on_cpu(1));
    VecProgram::op(&mut q, 1, Op::recv(8, 0, 0));
    let got = simulate_lanes(&q, &queued(params), &mut one);
    assert!(matches!(got, Err(LaneError::Refused(w)) if w.contains("several CPUs")));
}

#[test]
fn the_walk_reports_its_lanes_ops_and_stops_when_asked() {
    // A 64-rank ring of 300 rounds: enough events for several reports.
    let p = VecProgram::ring(64, 300);
    static HOOK: Progress = Progress::new();
    let plain = queued(Params::loggopsim_defaults_ticks());
    let cfg = Config {
        progress: Some(&HOOK),
        ..plain
    };
    let noises: Vec<Hashed> = (0..4)
        .map(|k| Hashed {
            seed: 0x5EED + k,
            // Every lane the noiseless run: none is given up.
            spread: 1,
            detour: 0,
            period: 1,
            idle: false,
        })
        .collect();
    let with = simulate_lanes(&p, &cfg, &mut noises.clone()).unwrap();
    let without = simulate_lanes(&p, &plain, &mut noises.clone()).unwrap();
    assert_eq!(with, without);
    assert!(with.iter().all(Option::is_some), "every lane answered");
    // Every lane's ops, as its own run of the global engine would count them.
    assert_eq!(HOOK.ops_started(), 4 * crate::Program::total_ops(&p));
    HOOK.reset();
    HOOK.request_stop();
    assert_eq!(
        simulate_lanes(&p, &cfg, &mut noises.clone()),
        Err(LaneError::Stopped)
    );
    HOOK.clear_stop();
}
