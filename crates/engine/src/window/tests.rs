//! The windowed engine against the global engine, on random programs and noise built to make
//! events tie. Whenever the windowed engine answers, its answer is the global engine's: over
//! 3000 tie-prone random programs (also visiting ranks in written order, and with full
//! ancestry), 1500 lock-step programs whose ties reach back to the roots, large tie groups,
//! simultaneous messages, and rendezvous-only programs in wider windows. A full-ancestry run
//! answers the ties recent ancestry gives up on and reports exactly those. Reversing the
//! order, stopping the ancestry walk or dropping the tie check makes these tests fail;
//! `tests/windowed.rs` runs the comparison on every shipped profile.

use super::*;
use crate::noise::MsgCosts;
use crate::program::{Op, OpKind};
use crate::sim::simulate_global;
use crate::test_rng::{hash, periodic_detour, xorshift};
use crate::testing::VecProgram;
use crate::{PerByte, ANY};

/// Noise whose draws take a few values only, so that events tie often: latencies, o and
/// G from small sets chosen by a hash of the message, and OS detours at a fixed period
/// from a per-rank phase. Every answer is a function of the arguments.
#[derive(Clone)]
struct FewValues {
    lat: Vec<Time>,
    o: Vec<Time>,
    g_per_byte: Vec<u64>,
    detour: Time,
    period: Time,
    /// Reported as [`Noise::fixed_recv_overheads`] (only when `o` has one value).
    fixed_recv: Option<(Time, Time)>,
    /// Added to the true bound in [`Noise::min_latency`] (a false promise, for tests).
    overclaim: Time,
}

impl FewValues {
    fn pick(v: &[Time], h: u64) -> Time {
        v[(h % v.len() as u64) as usize]
    }
    fn costs(&self, p: &Params, src: u32, send_op: u32, size: u64, side: u64) -> MsgCosts {
        let h = hash((src as u64) << 32 | send_op as u64, 0);
        let side_h = hash(h, side + 1);
        MsgCosts {
            latency: Self::pick(&self.lat, h),
            o: Self::pick(&self.o, side_h),
            g: p.g,
            gap_bytes: size.saturating_sub(1) * Self::pick(&self.g_per_byte, h >> 20),
        }
    }
}

impl Noise for FewValues {
    const ACTIVE: bool = true;
    fn send_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        self.costs(p, src, op, size, 0)
    }
    fn recv_costs(&mut self, p: &Params, src: u32, _: u32, op: u32, size: u64) -> MsgCosts {
        let mut c = self.costs(p, src, op, size, 1);
        c.latency = p.l;
        c
    }
    fn os_detour(&mut self, rank: u32, t0: Time, t1: Time) -> Time {
        // Detours start at phase + k·period; count those in [t0, t1].
        let phase = hash(rank as u64, 7) % self.period;
        periodic_detour(phase, self.period, self.detour, t0, t1)
    }
    fn min_message_delay(&self) -> Time {
        self.o.iter().min().unwrap() + self.lat.iter().min().unwrap()
    }
    fn min_latency(&self) -> Time {
        self.lat.iter().min().unwrap() + self.overclaim
    }
    fn fixed_recv_overheads(&self) -> Option<(Time, Time)> {
        self.fixed_recv
    }
}

/// Random exchange rounds: sends to `r + d`, receives from `r − d` (sometimes from
/// ANY_SOURCE, sometimes with ANY_TAG), calcs of a few lengths, `requires` and `irequires`
/// between rounds, now and then a self-message or a rendezvous-sized one. `send_deps`:
/// calcs may require sends (with it off no send frees ops; the draws are the same).
fn random_program(rnd: &mut impl FnMut(u64) -> u64, send_deps: bool) -> VecProgram {
    let ranks = 2 + rnd(7) as u32;
    let mut p = VecProgram::new(ranks);
    p.sparse_counters = rnd(2) == 0;
    p.hints = rnd(2) == 0;
    let rounds = 1 + rnd(6);
    let mut last: Vec<Option<u32>> = vec![None; ranks as usize];
    for k in 0..rounds {
        let d = if rnd(8) == 0 {
            0
        } else {
            1 + rnd(ranks as u64 - 1) as u32
        };
        let kinds = if rnd(20) == 0 { 5 } else { 4 };
        let size = [1, 8, 64, 1000, 70_000][rnd(kinds) as usize];
        for r in 0..ranks {
            let s = VecProgram::op(&mut p, r, Op::send(size, (r + d) % ranks, k as u32));
            let from = if rnd(5) == 0 {
                ANY
            } else {
                (r + ranks - d) % ranks
            };
            let tag = if rnd(6) == 0 { ANY } else { k as u32 };
            // Now and then a receive of another size: LogGOPSim decides rendezvous by the
            // send's size when the message finds its receive, by the receive's when the
            // receive finds the message.
            let rsize = if rnd(10) == 0 {
                [8, 70_000][rnd(2) as usize]
            } else {
                size
            };
            let v = VecProgram::op(&mut p, r, Op::recv(rsize, from, tag));
            let c = VecProgram::op(&mut p, r, Op::calc([0, 0, 500, 1000][rnd(4) as usize]));
            p.requires(r, c, v);
            if rnd(2) == 0 && send_deps {
                p.requires(r, c, s);
            }
            if let Some(prev) = last[r as usize] {
                match rnd(3) {
                    0 => p.requires(r, s, prev),
                    1 => p.irequires(r, s, prev),
                    _ => {}
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

/// Whether `p` sends or receives more than `s` bytes somewhere.
fn has_rendezvous(p: &VecProgram, s: u64) -> bool {
    (0..p.num_ranks()).any(|r| {
        (0..p.num_ops(r)).any(|i| {
            let op = p.op(r, i);
            op.kind != OpKind::Calc && op.size > s
        })
    })
}

/// L = 1 us, o = 200 ns, S = 64 KiB − 1, and a random g (0 or 300 ns), O (0 or 1 ps per
/// byte) and rendezvous latency (L or 3L, the paper's).
fn random_params(rnd: &mut impl FnMut(u64) -> u64) -> Params {
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

/// Full ancestry on `p`, against recent ancestry's answer `recent` and the global one: the
/// same answer when recent ancestry answers, the global one when it gave up on a tie, the
/// same reason when it gave up on anything else (on a tie, it may give up later for any
/// reason); and it reports a deep tie exactly when recent ancestry gave up on one. Returns
/// whether it answered a tie.
fn check_full_ancestry(
    case: usize,
    p: &VecProgram,
    cfg: &Config,
    noise: &FewValues,
    recent: &Result<Outcome, GiveUp>,
    global: &Result<Outcome, crate::sim::EngineError>,
) -> bool {
    let full = windowed(p, cfg, &mut noise.clone(), Ancestry::Full, 1);
    if let Ok((_, deep)) = full {
        assert_eq!(deep, *recent == Err(GiveUp::Tie), "case {case}: {p:?}");
    }
    let full = full.map(|(out, _)| out);
    match (recent, &full) {
        (Err(GiveUp::Tie), Ok(f)) => {
            assert_eq!(Ok(f), global.as_ref(), "case {case}: {p:?}");
            true
        }
        // Past the tie, full ancestry may give up later for another reason (a receive
        // that completes a rendezvous send with dependents, a run that does not complete).
        (Err(GiveUp::Tie), Err(_)) => false,
        (Ok(_), _) => {
            assert_eq!(&full, recent, "case {case}");
            false
        }
        (Err(why), _) => {
            assert_eq!(full, Err(*why), "case {case}");
            false
        }
    }
}

/// One to three latencies (1 us apart by 0.5 us), one or two o's, two per-byte gaps and a
/// periodic detour: few values, so that events tie.
fn random_noise(rnd: &mut impl FnMut(u64) -> u64) -> FewValues {
    FewValues {
        lat: (0..1 + rnd(3)).map(|i| 1000 + 500 * i).collect(),
        o: (0..1 + rnd(2))
            .map(|i| [0, 200][rnd(2) as usize] + 100 * i)
            .collect(),
        g_per_byte: vec![1, 2],
        detour: [0, 50, 700][rnd(3) as usize],
        period: 2000 + rnd(3000),
        fixed_recv: None,
        overclaim: 0,
    }
}

/// When every send is larger than S, every message pays `1 + rndv_extra_latencies`
/// latencies and the windows are `rndv_extra_latencies` smallest latencies wider; with
/// them the windowed engine still gives the global engine's answer, and no message beats
/// the wider lookahead. One byte more of S (a message is eager) and the windows are back
/// to `min o + L`. A noise that promises more than it draws makes runs give up on the
/// lookahead, never answer wrongly.
#[test]
fn rendezvous_only_programs_run_in_wider_windows() {
    let mut next = xorshift(0x0DDB_A11C_AFE0_5EED);
    let mut rnd = move |n: u64| next() % n;
    let (mut answered, mut overclaimed) = (0, 0);
    for case in 0..1500 {
        let mut p = random_program(&mut rnd, false);
        p.hints = true;
        let min_send = p.min_send_size();
        let mut params = Params {
            s: min_send - 1,
            rndv_extra_latencies: 2,
            ..random_params(&mut rnd)
        };
        let mut noise = random_noise(&mut rnd);
        let delay = noise.min_message_delay();
        assert_eq!(lookahead(&p, &params, &noise), delay + 2 * noise.lat[0]);
        let cfg = Config::new(params);
        let global = simulate_global(&p, &cfg, &mut noise.clone());
        match simulate_windowed(&p, &cfg, &mut noise.clone()) {
            Ok(w) => {
                assert_eq!(Ok(w), global, "case {case}: {p:?}");
                answered += 1;
            }
            Err(why) => assert_ne!(why, GiveUp::Lookahead, "case {case}: {p:?}"),
        }
        noise.overclaim = 5000;
        match simulate_windowed(&p, &cfg, &mut noise.clone()) {
            Ok(w) => assert_eq!(Ok(w), global, "case {case}: {p:?}"),
            Err(GiveUp::Lookahead) => overclaimed += 1,
            Err(_) => {}
        }
        params.s = min_send;
        assert_eq!(lookahead(&p, &params, &noise), delay, "case {case}");
    }
    assert!(
        answered > 900 && overclaimed > 1000,
        "{answered} {overclaimed}"
    );
}

/// Whenever the windowed engine answers, its answer is the global engine's; over random
/// programs and tie-prone noise it both answers and gives up (ties, rendezvous).
#[test]
fn windowed_engine_gives_the_global_answer_or_gives_up() {
    let mut next = xorshift(0x5DEE_CE66_D1CE_4E5B);
    let mut rnd = move |n: u64| next() % n;
    let mut tally = std::collections::HashMap::new();
    for case in 0..3000 {
        let p = random_program(&mut rnd, true);
        let params = random_params(&mut rnd);
        let mut noise = random_noise(&mut rnd);
        if noise.o.len() == 1 && rnd(2) == 0 {
            // The receiver's o and g are constants: the windowed engine takes them as such.
            noise.fixed_recv = Some((noise.o[0], params.g));
        }
        let cfg = Config::new(params);
        let global = simulate_global(&p, &cfg, &mut noise.clone());
        let windowed = simulate_windowed(&p, &cfg, &mut noise.clone());
        let width = lookahead(&p, &cfg.params, &noise);
        let written = run_windowed(
            &p,
            &cfg,
            &mut noise.clone(),
            width,
            true,
            Ancestry::Recent,
            1,
        )
        .map(|(out, _)| out);
        assert_eq!(
            written, windowed,
            "case {case}: visiting ranks in written order"
        );
        let full_written =
            run_windowed(&p, &cfg, &mut noise.clone(), width, true, Ancestry::Full, 1);
        assert_eq!(
            full_written,
            super::windowed(&p, &cfg, &mut noise.clone(), Ancestry::Full, 1),
            "case {case}: full ancestry, written order"
        );
        if check_full_ancestry(case, &p, &cfg, &noise, &windowed, &global) {
            *tally.entry("answered with full ancestry").or_insert(0) += 1;
        } else if windowed == Err(GiveUp::Tie) {
            *tally.entry("gave up past a tie").or_insert(0) += 1;
        }
        let through = crate::sim::simulate(&p, &cfg, &mut noise.clone());
        assert_eq!(
            through, global,
            "case {case}: simulate differs from the global engine: {p:?} {params:?}"
        );
        match windowed {
            Ok(w) => {
                assert_eq!(Ok(w), global, "case {case}: {p:?}");
                *tally.entry("answered").or_insert(0) += 1;
                if has_rendezvous(&p, params.s) {
                    *tally.entry("answered with rendezvous").or_insert(0) += 1;
                }
            }
            Err(why) => *tally.entry(format!("{why:?}").leak()).or_insert(0) += 1,
        }
    }
    let n = |k: &str| tally.get(k).copied().unwrap_or(0);
    // Ties that need more history are rare here; `simultaneous_messages_from_two_ranks`
    // and `full_ancestry_orders_lock_step_ties` make many.
    assert!(
        n("answered") > 2000
            && n("Rendezvous") > 10
            && n("answered with rendezvous") > 10
            && n("Tie") == n("answered with full ancestry") + n("gave up past a tie")
            && n("answered with full ancestry") > 0,
        "{tally:?}"
    );
}

/// Rounds in which every rank runs a chain of calcs (one length per round and link, the
/// same on every rank), then sends to several ranks and receives as many messages, mostly
/// from ANY_SOURCE; the next round's chain waits for the receives. Message sizes grow
/// with the sender, so the order in which simultaneous messages are taken shows.
fn lock_step_program(rnd: &mut impl FnMut(u64) -> u64) -> VecProgram {
    let ranks = 3 + rnd(6) as u32;
    let mut p = VecProgram::new(ranks);
    p.sparse_counters = rnd(2) == 0;
    let rounds = 1 + rnd(4);
    let mut last: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
    for k in 0..rounds {
        let links: Vec<u64> = (0..1 + rnd(4))
            .map(|_| [0, 100, 250][rnd(3) as usize])
            .collect();
        let fan = 1 + rnd(3) as u32;
        // Send `i` goes to `r + i`, or to rank `i` from every rank (a gather).
        let gather = rnd(2) == 0;
        let to = |r: u32, i: u32| if gather { i % ranks } else { (r + i) % ranks };
        let any = rnd(4) != 0;
        let mut sources: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
        for r in 0..ranks {
            for i in 1..=fan {
                sources[to(r, i) as usize].push(r);
            }
        }
        for r in 0..ranks {
            let mut prev = last[r as usize].clone();
            for &len in &links {
                let c = VecProgram::op(&mut p, r, Op::calc(len));
                for &q in &prev {
                    p.requires(r, c, q);
                }
                prev = vec![c];
            }
            for i in 1..=fan {
                let size = 8 + 300 * r as u64 + 50 * i as u64;
                let s = VecProgram::op(&mut p, r, Op::send(size, to(r, i), k as u32));
                p.requires(r, s, prev[0]);
            }
            last[r as usize] = sources[r as usize]
                .iter()
                .map(|&from| {
                    let from = if any { ANY } else { from };
                    VecProgram::op(&mut p, r, Op::recv(8, from, k as u32))
                })
                .collect();
        }
    }
    p
}

/// A lock-step gather that needs more than [`FULL_RECORDS`] records: full ancestry gives up
/// on it as on a tie, `simulate` and `WindowOdds` still give the global answer, and
/// `WindowOdds` goes back to trying recent ancestry first.
#[test]
fn full_ancestry_gives_up_beyond_its_records() {
    let ranks = 64;
    let mut p = VecProgram::new(ranks);
    let mut prev: Vec<Option<u32>> = vec![None; ranks as usize];
    for k in 0..40 {
        for r in 0..ranks {
            let c = VecProgram::op(&mut p, r, Op::calc(100));
            if let Some(q) = prev[r as usize] {
                p.requires(r, c, q);
            }
            let s = VecProgram::op(&mut p, r, Op::send(8 + r as u64, (k + 1) % ranks, k));
            p.requires(r, s, c);
            prev[r as usize] = Some(s);
        }
        for _ in 0..ranks {
            VecProgram::op(&mut p, (k + 1) % ranks, Op::recv(8, ANY, k));
        }
    }
    let cfg = Config::new(Params::loggopsim_defaults_ticks());
    let noise = lock_step_noise;
    let global = simulate_global(&p, &cfg, &mut noise());
    assert!(global.is_ok());
    assert_eq!(simulate_windowed(&p, &cfg, &mut noise()), Err(GiveUp::Tie));
    let full = simulate_windowed_with(&p, &cfg, &mut noise(), Ancestry::Full);
    assert_eq!(full, Err(GiveUp::Tie));
    assert_eq!(crate::sim::simulate(&p, &cfg, &mut noise()), global);
    let odds = WindowOdds::default();
    assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
    assert!(!odds.full_ancestry());
}

/// Lock-step noise on [`lock_step_program`]s: whole histories of different ranks coincide,
/// so ordering simultaneous messages takes ancestries back to the roots. With full
/// ancestry the windowed engine gives the global answer on every such tie.
#[test]
fn full_ancestry_orders_lock_step_ties() {
    let mut next = xorshift(0x0123_4567_89AB_CDEF);
    let mut rnd = move |n: u64| next() % n;
    let mut tally = std::collections::HashMap::new();
    for case in 0..1500 {
        let p = lock_step_program(&mut rnd);
        let params = random_params(&mut rnd);
        let mut noise = lock_step_noise();
        noise.o = vec![[100, 200][rnd(2) as usize]];
        let cfg = Config::new(params);
        let global = simulate_global(&p, &cfg, &mut noise.clone());
        let recent = simulate_windowed(&p, &cfg, &mut noise.clone());
        let tie = check_full_ancestry(case, &p, &cfg, &noise, &recent, &global);
        let what = match recent {
            _ if tie => "tie",
            Ok(_) => "answered",
            Err(why) => format!("{why:?}").leak(),
        };
        *tally.entry(what).or_insert(0) += 1;
    }
    assert!(tally.get("tie").copied().unwrap_or(0) > 100, "{tally:?}");
}

/// One latency, one o, no detours: messages sent at one instant arrive at one instant.
/// Ranks sending to many peers at one instant (n-way disseminations with calcs of 0 ns):
/// a rank's sends tie in groups of up to `fan` entries, deferred by the NIC's gap one
/// after the other, and zero-time chains of calcs (and calcs freed by a send when o is 0)
/// make later entries tie with a group already kept aside. Groups of [`TIE_ASIDE`] or more
/// are sorted once and kept aside; the answer is still the global engine's, in lock step
/// and with noise.
#[test]
fn large_tie_groups_give_the_global_answer() {
    let mut next = xorshift(0x7135_A51D_E000_0001);
    let mut rnd = move |n: u64| next() % n;
    for case in 0..400 {
        let ranks = 3 + rnd(12) as u32;
        let fan = 1 + rnd(ranks as u64 - 1) as u32;
        let mut p = VecProgram::new(ranks);
        let mut last: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
        for round in 0..1 + rnd(3) as u32 {
            for r in 0..ranks {
                let c = VecProgram::op(&mut p, r, Op::calc([0, 0, 100][rnd(3) as usize]));
                for &v in &last[r as usize] {
                    p.requires(r, c, v);
                }
                // A second calc of 0 ns after the first: sends after either.
                let c2 = VecProgram::op(&mut p, r, Op::calc(0));
                p.requires(r, c2, c);
                let mut recvs = Vec::new();
                let after_c2 = rnd(4);
                for k in 1..=fan {
                    let s = VecProgram::op(&mut p, r, Op::send(8, (r + k) % ranks, round));
                    p.requires(r, s, if rnd(4) < after_c2 { c2 } else { c });
                    if rnd(3) == 0 {
                        // Freed by the send, at once when o is 0.
                        let z = VecProgram::op(&mut p, r, Op::calc(0));
                        p.requires(r, z, s);
                    }
                    let from = (r + ranks - k) % ranks;
                    recvs.push(VecProgram::op(&mut p, r, Op::recv(8, from, round)));
                }
                last[r as usize] = recvs;
            }
        }
        let cfg = Config::new(Params {
            g: [0, 300][rnd(2) as usize],
            ..Params::loggopsim_defaults_ticks()
        });
        let noisy = FewValues {
            lat: vec![1000, 1500],
            o: vec![200, 300],
            g_per_byte: vec![1, 2],
            detour: 50,
            period: 2500,
            fixed_recv: None,
            overclaim: 0,
        };
        let no_o = FewValues {
            o: vec![0],
            ..lock_step_noise()
        };
        let cfg = if rnd(2) == 0 {
            cfg
        } else {
            Config::new(Params {
                o: 0,
                g: 0,
                ..Params::loggopsim_defaults_ticks()
            })
        };
        for noise in [lock_step_noise(), noisy, no_o] {
            let global = simulate_global(&p, &cfg, &mut noise.clone()).unwrap();
            for ancestry in [Ancestry::Recent, Ancestry::Full] {
                let windowed = simulate_windowed_with(&p, &cfg, &mut noise.clone(), ancestry);
                if ancestry == Ancestry::Full || windowed != Err(GiveUp::Tie) {
                    assert_eq!(windowed, Ok(global.clone()), "case {case}: {fan}-way");
                }
            }
        }
    }
}

fn lock_step_noise() -> FewValues {
    FewValues {
        lat: vec![1000],
        o: vec![200],
        g_per_byte: vec![1],
        detour: 0,
        period: 1000,
        fixed_recv: None,
        overclaim: 0,
    }
}

/// A rendezvous send that frees nothing runs windowed, and its sender's CPU stays busy
/// until a receive matches it (whatever else the sender does ends earlier here): o = 200,
/// L = 1000 and 3L for rendezvous, so its message arrives at 3200.
#[test]
fn rendezvous_sends_without_dependents_run_windowed() {
    let params = Params {
        s: 1000,
        rndv_extra_latencies: 2,
        ..random_params(&mut |_| 0)
    };
    let cfg = Config::new(params);
    // (rank 1 computes before taking the message, rank 1 posts its receive late, matched)
    for (busy, late, matched) in [(0, false, 3200), (50_000, false, 50_000), (0, true, 51_607)] {
        let mut p = VecProgram::new(2);
        VecProgram::op(&mut p, 0, Op::send(4000, 1, 0));
        if late {
            // An eager message sent after a calc of 50000 (at 50200, arriving at 51400)
            // lets rank 1 post its receive once it has taken that one in (o = 200 and
            // 7 bytes at G = 1: at 51607), and the receive finds the message.
            let c = VecProgram::op(&mut p, 0, Op::calc(50_000));
            let e = VecProgram::op(&mut p, 0, Op::send(8, 1, 1));
            p.requires(0, e, c);
            let first = VecProgram::op(&mut p, 1, Op::recv(8, 0, 1));
            let r = VecProgram::op(&mut p, 1, Op::recv(4000, 0, 0));
            p.requires(1, r, first);
        } else {
            VecProgram::op(&mut p, 1, Op::recv(4000, 0, 0));
            if busy > 0 {
                // The message waits for rank 1's CPU (the message finds its receive then).
                VecProgram::op(&mut p, 1, Op::calc(busy));
            }
        }
        let noise = lock_step_noise();
        let global = simulate_global(&p, &cfg, &mut noise.clone()).unwrap();
        let windowed = simulate_windowed(&p, &cfg, &mut noise.clone());
        assert_eq!(windowed.as_ref(), Ok(&global), "busy {busy}, late {late}");
        assert_eq!(global.finish[0], matched, "busy {busy}, late {late}");
    }
}

/// Two ranks send to a third at the same instant with the same latency; it receives
/// from ANY_SOURCE, so which message it takes first is LogGOPSim's insertion order of the
/// two sends. When the sends are roots, that is rank order (roots are queued rank by rank
/// before the run) and the windowed engine answers. When each send follows a calc, the
/// order is that of the two calcs, roots queued before the run (rank order), which the
/// messages do not carry (their grandparents' `ggpt` is 0 on both): it gives up with
/// recent ancestry and answers with full ancestry.
#[test]
fn simultaneous_messages_from_two_ranks() {
    let noise = lock_step_noise;
    let cfg = Config::new(Params::loggopsim_defaults_ticks());
    // Each rank's send follows a calc (`after_calc`) or is a root; with `pause`, rank 2
    // computes between its two receives.
    let two_senders = |after_calc: bool, pause: bool| {
        let mut p = VecProgram::new(3);
        for r in 0..2 {
            let s = VecProgram::op(&mut p, r, Op::send(8, 2, 0));
            if after_calc {
                let c = VecProgram::op(&mut p, r, Op::calc(100));
                p.requires(r, s, c);
            }
        }
        let first = VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
        let second = VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
        if pause {
            let c = VecProgram::op(&mut p, 2, Op::calc(300));
            p.requires(2, c, first);
            p.requires(2, second, c);
        }
        p
    };
    for after_calc in [false, true] {
        let p = two_senders(after_calc, true);
        let global = simulate_global(&p, &cfg, &mut noise());
        let windowed = simulate_windowed(&p, &cfg, &mut noise());
        if after_calc {
            assert_eq!(windowed, Err(GiveUp::Tie));
        } else {
            assert_eq!(windowed.ok(), global.clone().ok());
        }
        let full = simulate_windowed_with(&p, &cfg, &mut noise(), Ancestry::Full);
        assert_eq!(full.ok(), global.clone().ok(), "full ancestry");
        assert_eq!(crate::sim::simulate(&p, &cfg, &mut noise()), global);
    }
    // Every run ties with recent ancestry and answers with full ancestry; after the
    // trials, runs start with full ancestry.
    let p = two_senders(true, false);
    let odds = WindowOdds::default();
    let global = simulate_global(&p, &cfg, &mut noise());
    for i in 0..20 {
        assert_eq!(odds.full_ancestry(), i >= WindowOdds::TRIALS, "run {i}");
        assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
    }
    assert_eq!(odds.counts(), (20, 0));
    // The first run ties and no other: recent ancestry stays first.
    let odds = WindowOdds::default();
    for i in 0..30 {
        let p = two_senders(i == 0, false);
        let global = simulate_global(&p, &cfg, &mut noise());
        assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
    }
    assert_eq!(odds.counts(), (30, 0));
    assert!(!odds.full_ancestry());
    // A rendezvous send that frees an op (when another rank's receive matches it): the
    // windowed engine is dropped after its trials.
    let mut p = VecProgram::new(2);
    let s = VecProgram::op(&mut p, 0, Op::send(1 << 20, 1, 0));
    let c = VecProgram::op(&mut p, 0, Op::calc(100));
    p.requires(0, c, s);
    VecProgram::op(&mut p, 1, Op::recv(1 << 20, 0, 0));
    let odds = WindowOdds::default();
    let global = simulate_global(&p, &cfg, &mut noise());
    for _ in 0..20 {
        assert_eq!(odds.simulate(&p, &cfg, &mut noise()), global);
    }
    assert_eq!(odds.counts(), (0, WindowOdds::TRIALS));
    assert!(!odds.full_ancestry());
}

/// Two ranks send to a third at the same instant, each send queued at the same instant by
/// an op that itself was queued at a different time on each rank (a chain of calcs). The
/// message whose grandparent was queued first is first in LogGOPSim's order: the windowed
/// engine orders the tie by `ggpt` and answers as the global engine does, both ways round,
/// and the order shows (the messages have different sizes).
#[test]
fn simultaneous_messages_ordered_by_when_their_grandparents_were_queued() {
    let noise = lock_step_noise;
    let cfg = Config::new(Params::loggopsim_defaults_ticks());
    let mut finishes = Vec::new();
    for (first, second) in [((100, 200), (150, 150)), ((150, 150), (100, 200))] {
        let mut p = VecProgram::new(3);
        for (r, (c, d)) in [first, second].into_iter().enumerate() {
            let r = r as u32;
            // c → d → q → send: q is queued at c and runs at c + d = 300 on both ranks.
            let oc = VecProgram::op(&mut p, r, Op::calc(c));
            let od = VecProgram::op(&mut p, r, Op::calc(d));
            let oq = VecProgram::op(&mut p, r, Op::calc(50));
            let os = VecProgram::op(&mut p, r, Op::send(10 + 5000 * r as u64, 2, 0));
            p.requires(r, od, oc);
            p.requires(r, oq, od);
            p.requires(r, os, oq);
        }
        // Rank 2 answers rank 0 once it has the first message (whose size sets when).
        let a = VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
        VecProgram::op(&mut p, 2, Op::recv(8, ANY, 0));
        let reply = VecProgram::op(&mut p, 2, Op::send(8, 0, 1));
        p.requires(2, reply, a);
        VecProgram::op(&mut p, 0, Op::recv(8, 2, 1));
        let global = simulate_global(&p, &cfg, &mut noise()).unwrap();
        let windowed = simulate_windowed(&p, &cfg, &mut noise());
        assert_eq!(windowed, Ok(global.clone()), "{first:?} {second:?}");
        finishes.push(global.finish[0]);
    }
    assert_ne!(
        finishes[0], finishes[1],
        "the order shows when rank 0 gets the reply"
    );
}

/// The queued model ([`crate::sim::Model::Queued`]) through both engines: over the random
/// programs and tie-prone noise of `windowed_engine_gives_the_global_answer_or_gives_up`,
/// whenever the windowed engine answers (visiting ranks in either order, with either
/// ancestry) its answer is the global engine's, and `simulate` always is.
#[test]
fn queued_model_windowed_engine_gives_the_global_answer_or_gives_up() {
    let mut next = xorshift(0x0DDB_A11C_AFE5_EED5);
    let mut rnd = move |n: u64| next() % n;
    let mut tally = std::collections::HashMap::new();
    for case in 0..3000 {
        let p = random_program(&mut rnd, true);
        let params = random_params(&mut rnd);
        let mut noise = random_noise(&mut rnd);
        if noise.o.len() == 1 && rnd(2) == 0 {
            noise.fixed_recv = Some((noise.o[0], params.g));
        }
        let mut cfg = Config::new(params);
        cfg.model = crate::sim::Model::Queued;
        let global = simulate_global(&p, &cfg, &mut noise.clone());
        let width = lookahead(&p, &cfg.params, &noise);
        for (written, ancestry) in [
            (false, Ancestry::Recent),
            (true, Ancestry::Recent),
            (false, Ancestry::Full),
            (true, Ancestry::Full),
        ] {
            match run_windowed(&p, &cfg, &mut noise.clone(), width, written, ancestry, 1) {
                Ok((w, _)) => {
                    assert_eq!(Ok(&w), global.as_ref(), "case {case} {ancestry:?}: {p:?}");
                    *tally.entry(format!("answered {ancestry:?}")).or_insert(0) += 1;
                }
                Err(why) => *tally.entry(format!("{why:?}")).or_insert(0) += 1,
            }
        }
        let through = crate::sim::simulate(&p, &cfg, &mut noise.clone());
        assert_eq!(
            through, global,
            "case {case}: simulate differs: {p:?} {params:?}"
        );
    }
    let n = |k: &str| tally.get(k).copied().unwrap_or(0);
    assert!(
        n("answered Recent") > 3000 && n("answered Full") > 3000,
        "{tally:?}"
    );
}

/// The ranks split between 2, 3 and 8 threads (one rank per thread and more threads than
/// ranks included), visiting them in either order, in both models: the same result as on
/// one thread (the same answer, or the same reason to give up), on the random programs, the
/// lock-step programs and the rendezvous-only programs in wider windows.
#[test]
fn parallel_windows_give_the_one_thread_answer() {
    let mut next = xorshift(0x9A7A_11E1_0000_0033);
    let mut rnd = move |n: u64| next() % n;
    let mut tally = std::collections::HashMap::new();
    for case in 0..1200 {
        let mut p = match case % 3 {
            0 => random_program(&mut rnd, true),
            1 => lock_step_program(&mut rnd),
            _ => random_program(&mut rnd, false),
        };
        let mut params = random_params(&mut rnd);
        if case % 3 == 2 {
            p.hints = true;
            // Every send larger than S: wider windows.
            params.s = p.min_send_size() - 1;
            params.rndv_extra_latencies = 2;
        }
        let noise = if case % 3 == 1 {
            lock_step_noise()
        } else {
            random_noise(&mut rnd)
        };
        let mut cfg = Config::new(params);
        if rnd(2) == 0 {
            cfg.model = crate::sim::Model::Queued;
        }
        let width = lookahead(&p, &cfg.params, &noise);
        let written = rnd(2) == 0;
        let one = run_windowed(
            &p,
            &cfg,
            &mut noise.clone(),
            width,
            written,
            Ancestry::Recent,
            1,
        );
        for threads in [2, 3, 8] {
            let many = run_windowed(
                &p,
                &cfg,
                &mut noise.clone(),
                width,
                written,
                Ancestry::Recent,
                threads,
            );
            assert_eq!(many, one, "case {case}, {threads} threads: {p:?}");
        }
        let what = match one {
            Ok(_) => "answered",
            Err(why) => format!("{why:?}").leak(),
        };
        *tally.entry(what).or_insert(0) += 1;
    }
    assert!(tally["answered"] > 750, "{tally:?}");
}
