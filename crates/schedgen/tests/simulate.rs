//! End-to-end checks with a small reference simulator (tests/common/minisim.rs):
//! generated collectives reproduce LogGOPSim's recorded answers on Schedgen's files (both the
//! upstream unstable order and the stable order, deadlocks included), and the noiseless times of
//! generated collectives and of phased schedules equal the closed forms.

mod common;

use common::minisim::{simulate, SimParams};
use loggops_engine::{Params, PerByte};
use loggops_schedgen::closed_form::closed_form_time;
use loggops_schedgen::{parse_schedule_str, Collective, GenOptions, Generated};

fn no_overrides() -> &'static [(&'static str, &'static str)] {
    &[]
}

#[test]
fn generated_collectives_reproduce_loggopsim_results() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("skipping: ../shared (reference material) is absent");
        return;
    };
    let tsv = std::fs::read_to_string(shared.join("reference/loggopsim/results.tsv")).unwrap();
    let mut checked = 0;
    for line in tsv.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (pattern, p, d, paramset, binary) = (f[1], f[2], f[3], f[4], f[5]);
        let pattern: Collective = pattern.parse().unwrap();
        let g = Generated::new(pattern, p.parse().unwrap(), d.parse().unwrap()).unwrap();
        let mut prm = if paramset.starts_with("aws_ps") {
            SimParams::aws_ps()
        } else {
            SimParams::loggopsim_default()
        };
        if paramset.ends_with("_eager") {
            prm.s = 2147483647;
        }
        prm.libstdcxx = binary == "LogGOPSim";
        let res = simulate(&g, prm);
        let events: u64 = f[8].parse().unwrap();
        // LogGOPSim names the first host with the maximum only for P > 16 (it prints every
        // host's time otherwise, and the table's host column is then not LogGOPSim's).
        let host = |h: u32| if g.p() > 16 { Some(h) } else { None };
        let expected =
            (!f[6].is_empty()).then(|| (f[6].parse::<u64>().unwrap(), host(f[7].parse().unwrap())));
        let got = res.max().map(|(t, h)| (t, host(h)));
        assert_eq!((got, res.events), (expected, events), "{line}");
        checked += 1;
    }
    assert_eq!(checked, 112);
}

/// Normal-mode parameters with whole-unit G (so the simulator and `Params` agree).
fn params(l: u64, o: u64, g: u64, big_g: u64, s: u64) -> (SimParams, Params) {
    let sim = SimParams {
        l,
        o,
        g,
        big_g,
        big_o: 0,
        s,
        wrap: false,
        libstdcxx: false,
    };
    let p = Params {
        l,
        o,
        g,
        big_g: PerByte::from_units(big_g),
        big_o: PerByte::from_units(0),
        s,
        rndv_extra_latencies: 0,
    };
    (sim, p)
}

#[test]
fn noiseless_times_equal_closed_forms() {
    // Eager-only and rendezvous-heavy parameter sets, both with g ≤ 2o + L.
    for (sim, prm) in [
        params(2500, 1500, 1000, 6, 65535),
        params(1300, 150, 1500, 86, 4096),
    ] {
        for p in [2u32, 3, 4, 7, 16, 64] {
            for d in [1u64, 16, 1000, 1 << 20] {
                let mut cases = vec![
                    Generated::new(Collective::Dissemination, p, d).unwrap(),
                    Generated::new(Collective::AllreduceRing, p, d).unwrap(),
                    Generated::with_options(
                        Collective::NwayDissemination,
                        p,
                        d,
                        GenOptions {
                            reduce_calc: Some(0),
                            ..GenOptions::default()
                        },
                    )
                    .unwrap(),
                ];
                if p.is_power_of_two() {
                    cases.push(Generated::new(Collective::AllreduceRecdoub, p, d).unwrap());
                }
                for g in cases {
                    let want = closed_form_time(g.pattern(), p, d, &prm).unwrap();
                    let got = simulate(&g, sim).max().unwrap().0;
                    assert_eq!(got, want, "{} P={p} D={d}", g.pattern());
                }
            }
        }
    }
}

#[test]
fn phases_add_up_exactly() {
    let (sim, prm) = params(2500, 1500, 1000, 6, 65535);
    for p in [2u32, 3, 7, 16] {
        let d = 16u64 << 20;
        let ring = closed_form_time(Collective::AllreduceRing, p, d, &prm).unwrap();
        let diss = closed_form_time(Collective::Dissemination, p, 16, &prm).unwrap();
        let x = 21_064_000u64; // 21.064us in ps
        let cases = [
            ("calc 21.064us\nallreduce ring 16MiB\n", x + ring),
            ("allreduce ring 16MiB\ncalc 21.064us\n", ring + x),
            ("repeat 3 {\n  allreduce ring 16MiB\n}\n", 3 * ring),
            ("calc 21.064us\nallreduce dissemination 16B\nallreduce ring 16MiB\n", x + diss + ring),
            ("repeat 2 {\n  calc 21.064us\n  allreduce nwaydissemination 16B\n}\n", 2 * (x + diss)),
            // A point-to-point ring shift, then a phase that is empty on most ranks.
            (
                "concurrent {\n  send 1KiB to rank+1\n  recv 1KiB from rank-1\n}\ncalc 1us if rank == 0\n",
                prm.o * 2 + prm.l + 1023 * 6 + 1_000_000,
            ),
        ];
        for (body, want) in cases {
            let text = format!("loggops-schedule 1\n{body}");
            let s = parse_schedule_str(&text, "t.goal", p, no_overrides()).unwrap();
            loggops_schedgen::check::validate(&s).unwrap();
            let got = simulate(&s, sim).max().unwrap().0;
            assert_eq!(got, want, "P={p}:\n{body}");
        }
    }
}
