//! Progress during computation (`MpiProgress`): both behaviours against hand-derived closed
//! forms, in both models; eager messages and runs without calcs unchanged; the same answer
//! from `simulate` and the global engine under noise.
//!
//! Parameters (ps): L = 1000, o = 200, g = 100, G = 10/B, O = 0, S = 100, no extra rendezvous
//! latencies; messages of D = 1001 bytes are rendezvous messages, (D−1)·G = 10 000. A message
//! sent at `t` from an idle rank is in at its receiver `X = 2o + L + (D−1)·G = 11 400` later,
//! in both models (LogGOPSim's: it arrives at `t + o + L` and holds the receiver's CPU for
//! `o + (D−1)·G`; the queued model: received `o + (D−1)·G` after its arrival).

use loggops_engine::testing::VecProgram;
use loggops_engine::{
    simulate, simulate_global, Config, Model, MpiProgress, MsgCosts, NoNoise, Noise, Op, Params,
    PerByte, Time,
};

const D: u64 = 1001;
const C: u64 = 50_000;
const X: u64 = 11_400;

fn params() -> Params {
    Params {
        l: 1000,
        o: 200,
        g: 100,
        big_g: PerByte::from_units(10),
        big_o: PerByte::from_units(0),
        s: 100,
        rndv_extra_latencies: 0,
    }
}

fn cfg(model: Model, progress: MpiProgress) -> Config {
    Config {
        model,
        mpi_progress: progress,
        ..Config::new(params())
    }
}

fn finish(p: &VecProgram, model: Model, progress: MpiProgress) -> Vec<Time> {
    let out = simulate(p, &cfg(model, progress), &mut NoNoise).unwrap();
    assert!(out.completed(), "{:?}", out.leftovers);
    out.finish
}

const BOTH: [Model; 2] = [Model::LogGOPSim, Model::Queued];

/// Rule 2: rank 0 sends D bytes to rank 1 and then computes (its calc requires the send, as
/// the statement after a blocking `MPI_Send`). Asynchronous progress: the receive completes
/// when the data is in; polled: only when the sender's calc ends, since the sender owes the
/// completion notice. (LogGOPSim's model completes a rendezvous send at the match, `o + L`;
/// polled, when the data is in, `X`.)
#[test]
fn a_receive_waits_for_its_senders_calc_when_polled() {
    let mut p = VecProgram::new(2);
    let s = p.op(0, Op::send(D, 1, 0));
    let c = p.op(0, Op::calc(C));
    p.requires(0, c, s);
    p.op(1, Op::recv(D, 0, 0));
    assert_eq!(
        finish(&p, Model::LogGOPSim, MpiProgress::Async),
        [1200 + C, X]
    );
    assert_eq!(finish(&p, Model::Queued, MpiProgress::Async), [X + C, X]);
    for m in BOTH {
        assert_eq!(finish(&p, m, MpiProgress::Polled), [X + C, X + C], "{m:?}");
    }
}

/// Rule 1 at the receiver: rank 1 posts its receive and computes C; the message arrives at
/// `o + L` in the middle of the calc. LogGOPSim's model already holds the message until the
/// receiver's CPU is free (so the data is in at `C + o + (D−1)·G`); the queued model receives
/// it beside the calc unless polled.
#[test]
fn a_handshake_waits_for_the_receivers_calc_when_polled() {
    let mut p = VecProgram::new(2);
    p.op(0, Op::send(D, 1, 0));
    let r = p.op(1, Op::recv(D, 0, 0));
    let c = p.op(1, Op::calc(C));
    let z = p.op(1, Op::calc(0));
    p.requires(1, z, r);
    p.requires(1, z, c);
    let late = C + 200 + 10_000;
    // LogGOPSim's model raises the sender's clocks to the match (async) or to the data's
    // arrival (polled).
    assert_eq!(finish(&p, Model::LogGOPSim, MpiProgress::Async), [C, late]);
    assert_eq!(
        finish(&p, Model::LogGOPSim, MpiProgress::Polled),
        [late, late]
    );
    assert_eq!(finish(&p, Model::Queued, MpiProgress::Async), [200, C]);
    assert_eq!(finish(&p, Model::Queued, MpiProgress::Polled), [200, late]);
}

/// Rule 1 at the sender: rank 0 starts the send (`MPI_Isend`) and computes at once (the calc
/// irequires the send); the handshake waits for the calc's end, `o + C`.
#[test]
fn a_handshake_waits_for_the_senders_calc_when_polled() {
    let mut p = VecProgram::new(2);
    let s = p.op(0, Op::send(D, 1, 0));
    let c = p.op(0, Op::calc(C));
    p.irequires(0, c, s);
    p.op(1, Op::recv(D, 0, 0));
    let end = 200 + C;
    assert_eq!(finish(&p, Model::LogGOPSim, MpiProgress::Async), [end, X]);
    assert_eq!(finish(&p, Model::Queued, MpiProgress::Async), [end, X]);
    let late = end + 200 + 10_000;
    assert_eq!(
        finish(&p, Model::LogGOPSim, MpiProgress::Polled),
        [late, late]
    );
    assert_eq!(finish(&p, Model::Queued, MpiProgress::Polled), [end, late]);
}

/// The 16 MiB dissemination with compute on 4 ranks as its benchmark program ran it (the
/// paper's `goal2mpi.py`, blocking variant): per rank `Irecv a` (from r−1), `Irecv b` (from
/// r+2), `Send x` (to r+1, blocking), `Wait a`, calc C, `Send y` (to r+2, blocking), `Wait b`,
/// then a zero calc marking the end. Odd ranks enter δ = 300 ps later (a calc before their
/// first statement), so the round-0 transfers into ranks 1 and 3 finish first, as in the
/// measured Daint runs. Asynchronous progress: one calc and two transfers, δ + 2X + C on
/// every rank. Polled: ranks 1 and 3 start their calc the moment their send completes,
/// holding the completion notices that ranks 2 and 0 wait for, so those compute one calc
/// later: δ + 2X + 2C (ranks 1 and 3: δ + 2X + C).
#[test]
fn dissemination_with_compute_on_four_ranks_takes_two_calcs_when_polled() {
    const DELTA: u64 = 300;
    let mut p = VecProgram::new(4);
    for r in 0..4u32 {
        let first = (r % 2 == 1).then(|| p.op(r, Op::calc(DELTA)));
        let a = p.op(r, Op::recv(D, (r + 3) % 4, 0));
        if let Some(f) = first {
            p.requires(r, a, f);
        }
        let b = p.op(r, Op::recv(D, (r + 2) % 4, 1));
        p.irequires(r, b, a);
        let x = p.op(r, Op::send(D, (r + 1) % 4, 0));
        p.irequires(r, x, b);
        let c = p.op(r, Op::calc(C));
        p.requires(r, c, x);
        p.requires(r, c, a);
        let y = p.op(r, Op::send(D, (r + 2) % 4, 1));
        p.requires(r, y, c);
        let end = p.op(r, Op::calc(0));
        p.requires(r, end, y);
        p.requires(r, end, b);
    }
    let one = DELTA + 2 * X + C;
    let two = DELTA + 2 * X + 2 * C;
    let late = 2 * X + C + DELTA;
    for m in BOTH {
        let async_ = finish(&p, m, MpiProgress::Async);
        assert_eq!(*async_.iter().max().unwrap(), one, "{m:?}: {async_:?}");
        assert_eq!(
            finish(&p, m, MpiProgress::Polled),
            [two, late, two, late],
            "{m:?}"
        );
    }
    // The LogGOPSim model's asynchronous answer per rank: ranks 1 and 3 compute from X
    // (their data is in first), ranks 0 and 2 from δ + X.
    assert_eq!(
        finish(&p, Model::LogGOPSim, MpiProgress::Async),
        [one, one - DELTA, one, one - DELTA]
    );
}

/// Random exchange rounds with eager messages only (sizes up to S), calcs between them: the
/// polled rules never apply, so every rank finishes as with asynchronous progress, in both
/// models, with the same event count.
#[test]
fn eager_only_programs_are_unchanged() {
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..200 {
        let p = random_program(&mut rnd, &[0, 1, 16, 100], &CALCS);
        for m in BOTH {
            let a = simulate(&p, &cfg(m, MpiProgress::Async), &mut NoNoise).unwrap();
            let b = simulate(&p, &cfg(m, MpiProgress::Polled), &mut NoNoise).unwrap();
            assert_eq!(a, b, "{m:?}: {p:?}");
        }
    }
}

/// Random programs with rendezvous messages: a polled run under noise gives the global
/// engine's answer through `simulate` (which hands it to the global engine), twice the same,
/// and completes whenever the asynchronous run does.
#[test]
fn polled_runs_under_noise_are_deterministic_and_complete() {
    let mut rnd = xorshift(0x2545_F491_4F6C_DD1Du64);
    for seed in 0..100u64 {
        let p = random_program(&mut rnd, &[1, 100, D, 5000], &CALCS);
        for m in BOTH {
            let c = cfg(m, MpiProgress::Polled);
            let a = simulate(&p, &c, &mut Jitter(seed)).unwrap();
            let b = simulate_global(&p, &c, &mut Jitter(seed)).unwrap();
            assert_eq!(a, b, "{m:?}: {p:?}");
            let asy = simulate(&p, &cfg(m, MpiProgress::Async), &mut Jitter(seed)).unwrap();
            assert_eq!(a.completed(), asy.completed(), "{m:?}: {p:?}");
            assert_eq!(a.messages, asy.messages);
        }
    }
}

/// A xorshift generator of numbers below `n` from `seed` (the tests' fixed sequences).
fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
    move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

/// The calc lengths of [`random_program`]'s rounds, ps.
const CALCS: [u64; 4] = [0, 500, 5000, 30_000];

/// Exchange rounds: each rank sends to `r + d` and receives from `r − d`, then computes (the
/// calc requires the receive, sometimes the send; its length one of `calcs`), the next round's
/// send requiring the calc.
fn random_program(rnd: &mut impl FnMut(u64) -> u64, sizes: &[u64], calcs: &[u64]) -> VecProgram {
    let ranks = 2 + rnd(6) as u32;
    let mut p = VecProgram::new(ranks);
    let mut last: Vec<Option<u32>> = vec![None; ranks as usize];
    for k in 0..1 + rnd(5) {
        let d = 1 + rnd(ranks as u64 - 1) as u32;
        let size = sizes[rnd(sizes.len() as u64) as usize];
        for r in 0..ranks {
            let s = p.op(r, Op::send(size, (r + d) % ranks, k as u32));
            let v = p.op(r, Op::recv(size, (r + ranks - d) % ranks, k as u32));
            let c = p.op(r, Op::calc(calcs[rnd(calcs.len() as u64) as usize]));
            p.requires(r, c, v);
            match rnd(3) {
                0 => p.requires(r, c, s),
                1 => p.irequires(r, c, s),
                _ => {}
            }
            if let Some(prev) = last[r as usize] {
                p.requires(r, s, prev);
            }
            last[r as usize] = Some(c);
        }
    }
    p
}

/// Latencies and per-byte gaps drawn per message from a hash of (seed, sender, op); OS
/// detours of 700 ps every 9000 ps.
#[derive(Clone)]
struct Jitter(u64);

impl Jitter {
    fn h(&self, src: u32, op: u32) -> u64 {
        let mut z = self.0 ^ ((src as u64) << 32 | op as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z ^ (z >> 31)
    }
    fn costs(&self, p: &Params, src: u32, op: u32, size: u64) -> MsgCosts {
        let h = self.h(src, op);
        MsgCosts {
            latency: p.l + h % 700,
            o: p.o,
            g: p.g,
            gap_bytes: size.saturating_sub(1) * (8 + (h >> 20) % 5),
        }
    }
}

impl Noise for Jitter {
    const ACTIVE: bool = true;
    fn send_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        self.costs(p, src, op, size)
    }
    fn recv_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        self.costs(p, src, op, size)
    }
    fn os_detour(&mut self, _rank: u32, t0: Time, t1: Time) -> Time {
        let upto = |t: Time| t / 9000;
        (upto(t1) - upto(t0)) * 700
    }
    fn min_message_delay(&self) -> Time {
        1200
    }
}

/// [`Jitter`] whose latency after an idle stretch of more than 2000 ps is 5000 ps longer (a
/// link's slow first message after idle, as profiles with an idle table draw it).
#[derive(Clone)]
struct IdleJitter(Jitter);

impl Noise for IdleJitter {
    const ACTIVE: bool = true;
    fn send_costs(&mut self, p: &Params, src: u32, dst: u32, op: u32, size: u64) -> MsgCosts {
        self.0.send_costs(p, src, dst, op, size)
    }
    fn recv_costs(&mut self, p: &Params, src: u32, dst: u32, op: u32, size: u64) -> MsgCosts {
        self.0.recv_costs(p, src, dst, op, size)
    }
    fn uses_idle(&self) -> bool {
        true
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
        let mut c = self.0.send_costs(p, src, dst, op, size);
        if idle > 2000 {
            c.latency += 5000;
        }
        c
    }
    fn os_detour(&mut self, _rank: u32, _t0: Time, _t1: Time) -> Time {
        0
    }
    fn min_message_delay(&self) -> Time {
        1200
    }
}

/// Random programs with rendezvous messages and no computation, queued model: the polled
/// rules never hold anything, so every rank finishes as with asynchronous progress under noise
/// too, including a latency that depends on how long the sender was idle (a matched
/// rendezvous receive is communication under both rules). (LogGOPSim's model completes a
/// polled rendezvous send when the data is in, not at the match: it differs without calcs.)
#[test]
fn programs_without_calcs_are_unchanged_when_polled() {
    let mut rnd = xorshift(0x5851_F42D_4C95_7F2Du64);
    let mut idle_mattered = false;
    for seed in 0..100u64 {
        let p = random_program(&mut rnd, &[1, 100, D, 5000], &[0]);
        let m = Model::Queued;
        let noise = IdleJitter(Jitter(seed));
        let asy = simulate(&p, &cfg(m, MpiProgress::Async), &mut noise.clone()).unwrap();
        let pol = simulate(&p, &cfg(m, MpiProgress::Polled), &mut noise.clone()).unwrap();
        assert_eq!(asy.finish, pol.finish, "seed {seed}: {p:?}");
        let plain = simulate(&p, &cfg(m, MpiProgress::Async), &mut Jitter(seed)).unwrap();
        idle_mattered |= plain.finish != asy.finish;
    }
    assert!(
        idle_mattered,
        "the idle latency never applied: the test tests nothing"
    );
}
