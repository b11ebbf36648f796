//! Building noise profiles from captures: hand-made inputs with exact values, the 8 systems of the
//! paper (written to HDF5 and read back), the loaded VM, and bad input. Tests that read
//! `shared/` skip with a message when it is absent.

mod common;
use common::{selfish_run, Tmp};

use std::path::{Path, PathBuf};

use loggops_calibrate::stats::{quantiles, QuantileTable};
use loggops_calibrate::DEFAULT_MAX_TRACE_DETOURS;
use loggops_calibrate::{
    build_profile, read_params_table, read_params_table_placement_pair, read_pingpong,
    read_prices_table, read_selfish, CalibError, CalibrateInputs, FitReport, ParamOverrides,
    ParamSource, ParamsTableRow, PingPongOptions, PricesTableRow, MC_DRAWS,
};
use loggops_profile::{
    read_profile, write_profile, BaseParams, Calibration, DetourTrace, Distribution, Prices,
    Profile,
};

fn shared() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if p.is_dir() {
        Some(p.canonicalize().unwrap())
    } else {
        eprintln!("skipping: {} is absent", p.display());
        None
    }
}

fn table(d: &Distribution) -> QuantileTable {
    match d {
        Distribution::Quantiles {
            probs,
            values,
            tail,
        } => QuantileTable {
            probs: probs.clone(),
            values: values.clone(),
            tail: tail.as_ref().map(|t| t.values.clone()).unwrap_or_default(),
            sample_count: tail.as_ref().map_or(0, |t| t.sample_count),
        },
        Distribution::Samples(_) => panic!("expected a quantile table"),
    }
}

fn pingpong(size: u64, blocks: &[&[f64]]) -> String {
    let mut s = String::new();
    for b in blocks {
        s.push_str("#size\trtt\n");
        for v in *b {
            s.push_str(&format!("{size}\t{v:.6}\n"));
        }
    }
    s
}

const TOY_PARAMS: &str = "provider,instance,placement,L_us,o_us,g_us,G_us_per_byte,S_bytes_eager_threshold,nodes_per_switch_in_simulate_py,implied_bw_Gbps\n\
Toy,Metal,Same Rack,1.5,0.2,3,0.0001,65536,4,80.0\n\
Toy,Metal,Different Racks,2.5,0.2,3,0.00015,65536,4,53.3\n\
Toy,Small,Same Rack,30,5,0.18,1.1e-03,131072,1,7.3\n";

const TOY_PRICES: &str = "system,class,instance_type,cpu,memory_gb,usd_per_hour_committed,usd_per_hour_on_demand,nominal_bandwidth_gbps\n\
toy,metal,-,\"2x8C, 3 GHz\",64,1.0,3.0,100\n\
toy,small,s1,1C,4,,0.5,10\n";

/// Hand-made captures of a toy system in `t`.
#[test]
fn too_few_samples_are_refused_unless_the_minimum_is_lowered() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    inp.min_samples = loggops_calibrate::DEFAULT_MIN_SAMPLES;
    let e = build_profile(&inp).unwrap_err();
    assert!(
        matches!(
            e,
            CalibError::TooFewSamples {
                kept: 16,
                min: 500,
                ..
            }
        ),
        "{e}"
    );
    insta::assert_snapshot!("too_few_samples", t.msg(e));
    // The bandwidth capture keeps 8.
    inp.min_samples = 9;
    assert!(matches!(
        build_profile(&inp),
        Err(CalibError::TooFewSamples { kept: 8, .. })
    ));
    inp.min_samples = 8;
    assert!(build_profile(&inp).is_ok());
}

/// Building from `inp` fails because the eager threshold S is the one parameter missing.
fn assert_only_s_missing(inp: &CalibrateInputs) {
    let e = build_profile(inp).unwrap_err();
    let CalibError::MissingParams { missing, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(
        missing,
        &vec!["near S (eager threshold, bytes)".to_string()]
    );
}

fn toy_inputs(t: &Tmp) -> CalibrateInputs {
    // Two runs of 10 rows; 2 warm-up rows each, 16 samples kept.
    let lat = t.file(
        "lat.out",
        pingpong(
            1,
            &[
                &[9.0, 9.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 50.0],
                &[9.0, 9.0, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4],
            ],
        ),
    );
    let bw = t.file(
        "bw.out",
        pingpong(
            65536,
            &[&[
                200.0, 200.0, 100.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0,
            ]],
        ),
    );
    let rows = [(0.0, 500.0), (1000.0, 600.0), (5000.0, 700.0)];
    let mut os = selfish_run(&rows, Some(2.0));
    os.push_str(&selfish_run(&rows, None));
    let os = t.file("os.out", &os);
    let params = t.file("params.csv", TOY_PARAMS);
    let prices = t.file("systems.csv", TOY_PRICES);
    let mut inp = CalibrateInputs::new("toy", lat, bw);
    // 16 and 8 samples: far below DEFAULT_MIN_SAMPLES, on purpose (tests of the fit).
    inp.min_samples = 1;
    inp.description = "a toy system".into();
    inp.os_noise = Some(os);
    inp.pingpong = PingPongOptions {
        warmup: 2,
        block_len: Some(10),
        ..PingPongOptions::default()
    };
    inp.params = ParamSource {
        explicit: ParamOverrides {
            o_ps: Some(250_000.0),
            ..Default::default()
        },
        table: Some(ParamsTableRow {
            path: params,
            provider: "toy".into(),
            instance: "METAL".into(),
            placement: "different racks".into(),
        }),
    };
    inp.far_params = ParamOverrides {
        g_ps: Some(4_000_000.0),
        ..Default::default()
    };
    inp.prices = Prices {
        on_demand_usd_per_node_hour: Some(2.5),
        committed_usd_per_node_hour: None,
        spot: Default::default(),
    };
    inp.prices_table = Some(PricesTableRow {
        path: prices,
        system: "toy".into(),
        class: "metal".into(),
    });
    inp.command = "loggops-sim calibrate toy".into();
    inp.created = Some("2001-02-03T04:05:06Z".into());
    inp.notes = vec!["hand-made".into()];
    inp
}

/// Values that cannot be what the user meant are warned about in the fit report: an L a
/// million times below the latency capture (a µs value without its unit is read as ns... or
/// less) and a committed price above the on-demand one.
#[test]
fn implausible_parameters_and_prices_are_warned() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    let (_, report) = build_profile(&inp).unwrap();
    assert!(
        !report
            .warnings
            .iter()
            .any(|w| w.starts_with("parameters: ") || w.starts_with("prices: ")),
        "{:?}",
        report.warnings
    );
    inp.params.explicit.l_ps = Some(1.0);
    inp.prices.committed_usd_per_node_hour = Some(9.0);
    let (_, report) = build_profile(&inp).unwrap();
    let has = |start: &str, part: &str| {
        report
            .warnings
            .iter()
            .any(|w| w.starts_with(start) && w.contains(part))
    };
    assert!(
        has(
            "parameters: L = 1ps is 1/",
            "a number without a unit is read as ns"
        ),
        "{:?}",
        report.warnings
    );
    assert!(
        has(
            "prices: the committed price (9 USD/node-hour) is above the on-demand one (2.5)",
            "swapped"
        ),
        "{:?}",
        report.warnings
    );
}

/// The captures calibration without a LogGP fit (`--loggp`) guesses o and sets g to 0, and
/// says so in the fit report; it does not once `--loggp` or `--set-o` and `--set-g` give them,
/// nor with the paper's table (which holds o and g).
#[test]
fn captures_calibration_without_loggp_warns_that_o_and_g_are_guessed() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    inp.calibration = Calibration::Captures;
    inp.params = ParamSource {
        explicit: ParamOverrides {
            s_bytes: Some(65536),
            ..Default::default()
        },
        table: None,
    };
    inp.far_params = ParamOverrides::default();
    let guesses = |inp: &CalibrateInputs| -> Vec<String> {
        let (_, report) = build_profile(inp).unwrap();
        report
            .warnings
            .into_iter()
            .filter(|w| w.starts_with("parameters: no LogGP fit"))
            .collect()
    };
    let (_, report) = build_profile(&inp).unwrap();
    assert!(
        report.warnings.contains(
            &"parameters: no LogGP fit (--loggp): o is a guess (a quarter of the latency capture's 1st percentile of RTT/2), g is 0 (back-to-back messages leave the NIC without a gap); give Netgauge's ng_loggp.out with --loggp, or --set-o and --set-g"
                .to_string()
        ),
        "{:?}",
        report.warnings
    );
    assert_eq!(
        report
            .warnings
            .iter()
            .filter(|w| w.contains("no LogGP fit"))
            .count(),
        1,
        "{:?}",
        report.warnings
    );
    let sources = &report.near.params.sources;
    assert!(
        sources
            .o
            .ends_with("(no LogGP fit: a quarter of the capture's 1st percentile of RTT/2)"),
        "{}",
        sources.o
    );
    assert_eq!(sources.g, "g = 0 (no LogGP fit with two eager sizes)");
    assert_eq!(report.near.params.g_us, 0.0);

    // Only what is still guessed is named.
    inp.params.explicit.o_ps = Some(200_000.0);
    assert_eq!(
        guesses(&inp),
        vec!["parameters: no LogGP fit (--loggp): g is 0 (back-to-back messages leave the NIC without a gap); give Netgauge's ng_loggp.out with --loggp, or --set-o and --set-g"]
    );
    inp.params.explicit.o_ps = None;
    inp.params.explicit.g_ps = Some(300_000.0);
    assert_eq!(
        guesses(&inp),
        vec!["parameters: no LogGP fit (--loggp): o is a guess (a quarter of the latency capture's 1st percentile of RTT/2); give Netgauge's ng_loggp.out with --loggp, or --set-o and --set-g"]
    );
    inp.params.explicit.o_ps = Some(200_000.0);
    assert_eq!(guesses(&inp), Vec::<String>::new());

    // With a LogGP fit: o and g come from it, nothing is a guess.
    inp.params.explicit.o_ps = None;
    inp.params.explicit.g_ps = None;
    inp.loggp = Some(t.file("ng_loggp.out", TOY_LOGGP));
    let (_, report) = build_profile(&inp).unwrap();
    assert!(
        !report.warnings.iter().any(|w| w.contains("no LogGP fit")),
        "{:?}",
        report.warnings
    );
    let sources = &report.near.params.sources;
    assert!(sources.o.contains("of the LogGP fit"), "{}", sources.o);
    assert!(sources.g.starts_with("g = "), "{}", sources.g);
    assert!(!sources.g.contains("no LogGP fit"), "{}", sources.g);
    let g_zero = |inp: &CalibrateInputs| -> Vec<String> {
        let (_, report) = build_profile(inp).unwrap();
        report
            .warnings
            .into_iter()
            .filter(|w| w.starts_with("parameters: g is 0"))
            .collect()
    };
    assert_eq!(g_zero(&inp), Vec::<String>::new());

    // An eager threshold below the fit's second size leaves one eager size, whose gap
    // Netgauge does not fit (`-nan`, as in every real fit): g is 0, said so.
    inp.params.explicit.s_bytes = Some(512);
    inp.loggp = Some(t.file(
        "ng_loggp_nan.out",
        TOY_LOGGP.replace(
            "0.400000 0.220000 0.000000 0.000000",
            "0.400000 -nan -nan -nan",
        ),
    ));
    assert_eq!(
        g_zero(&inp),
        vec!["parameters: g is 0 (back-to-back messages leave the NIC without a gap): the LogGP fit has one size at or below S = 512 B (1 B), and its gap needs two eager sizes; give --set-g, or a LogGP run whose sizes step below S (Netgauge's sizes are 1, 1025, 2049, ... B)"]
    );
    inp.params.explicit.g_ps = Some(300_000.0);
    assert_eq!(g_zero(&inp), Vec::<String>::new());
    inp.params.explicit.g_ps = None;
    inp.params.explicit.s_bytes = Some(65536);

    // The paper's table gives o and g: no guess without --loggp either.
    let (_, report) = build_profile(&toy_inputs(&t)).unwrap();
    assert!(
        !report.warnings.iter().any(|w| w.contains("no LogGP fit")),
        "{:?}",
        report.warnings
    );
}

/// A Netgauge LogGP fit (`ng_loggp.out`) of the toy system: o = (0.2 + 0.4)/2 us.
const TOY_LOGGP: &str =
    "# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)\n\
# to get o: plot \"./loggp.out\" using 1:(($5-$3)/($2-1)-$3)\n\
# to get g,G: plot \"./loggp.out\" using 1:($4-$3)/($2-1)\n\
1 10 2.000000 4.000000 22.000000 1.000000 0.200000 0.400000 0.220000 0.000000 0.000000\n\
1025 10 3.000000 17.000000 49.000000 1.000000 1.600000 1.600000 0.300000 0.001000 0.000000\n\
2049 10 4.000000 23.000000 61.000000 1.000000 2.100000 1.800000 0.400000 0.000900 0.000000\n";

/// A hoverboard capture (`calibrate --idle-latency`) of `size`-byte ping-pongs: one run per
/// `(sleep_ns, round trips in ns)`, each after a first round trip that is dropped.
fn hoverboard(size: u64, runs: &[(u64, &[u64])]) -> String {
    let mut s = String::new();
    for (sleep, rtts) in runs {
        s.push_str(&format!(
            "# Hoverboard test ({size} 1 {sleep})\n# time(ns),sleep_time(ns),repetitions\n"
        ));
        s.push_str(&format!("999999,{sleep},1\n"));
        for r in *rtts {
            s.push_str(&format!("{r},{sleep},1\n"));
        }
    }
    s
}

/// The idle table holds ratios to the idle capture's back-to-back round trip: one more than
/// 10 % away from the profile's own is warned about (GCP's is 870 us, the profile's 517 us),
/// one within 10 % is not.
#[test]
fn idle_capture_back_to_back_off_the_profile_is_warned() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    // The toy profile's simulated back-to-back 65536 B round trip is 17.19 us; the captures'
    // back-to-back medians lie just inside and just outside 10 % of it, on either side (the
    // difference is relative to the capture's).
    for (cap_ns, warned) in [
        (18_900, None),
        (
            19_200,
            Some("(17.2us) is -10 % off the idle capture's (19.2us)"),
        ),
        (15_700, None),
        (
            15_600,
            Some("(17.2us) is +10 % off the idle capture's (15.6us)"),
        ),
    ] {
        // Nine round trips with median `cap_ns`, the same after a 1 ms sleep: no level.
        let rtts: Vec<u64> = (0..9).map(|i| cap_ns - 40 + 10 * i).collect();
        inp.idle_latency = Some(t.file(
            "hoverboard.out",
            hoverboard(65536, &[(0, &rtts), (1_000_000, &rtts)]),
        ));
        let (p, report) = build_profile(&inp).unwrap();
        let idle = report.idle.as_ref().unwrap();
        assert_eq!(idle.back_to_back_rtt_us, cap_ns as f64 / 1e3);
        assert_eq!(
            format!("{:.2}", idle.simulated_back_to_back_rtt_us),
            "17.19"
        );
        assert_eq!(idle.rows.len(), 1);
        assert_eq!(idle.rows[0].per_byte_factor, 1.0);
        assert!(p.near.after_idle.is_none(), "{:?}", p.near.after_idle);
        let after_idle: Vec<&String> = report
            .warnings
            .iter()
            .filter(|w| w.starts_with("after idle: "))
            .collect();
        match warned {
            None => assert!(after_idle.is_empty(), "{cap_ns} ns: {after_idle:?}"),
            Some(part) => assert_eq!(
                after_idle,
                vec![&format!(
                    "after idle: the profile's back-to-back 65536 B round trip {part}; the idle table holds ratios to it, so times after idle periods are off as much (another size or striping than the bandwidth capture's?)"
                )],
                "{cap_ns} ns"
            ),
        }
    }
}

#[test]
fn toy_profile_exact() {
    let t = Tmp::new();
    let inp = toy_inputs(&t);
    let (p, r) = build_profile(&inp).unwrap();

    // Parameters: explicit o wins over the table for both placements, far g is explicit (far),
    // everything else comes from the Same Rack (near) and Different Racks (far) rows.
    assert_eq!(
        p.near.params,
        BaseParams {
            l_ps: 1_500_000.0,
            o_ps: 250_000.0,
            g_ps: 3_000_000.0,
            big_g_ps_per_byte: 100.0,
            big_o_ps_per_byte: 0.0,
            s_bytes: 65536,
        }
    );
    let far = p.far.as_ref().unwrap();
    assert_eq!(
        far.params,
        BaseParams {
            l_ps: 2_500_000.0,
            o_ps: 250_000.0,
            g_ps: 4_000_000.0,
            big_g_ps_per_byte: 150.0,
            big_o_ps_per_byte: 0.0,
            s_bytes: 65536,
        }
    );
    assert_eq!(p.nodes_per_switch, 4);
    assert_eq!(r.near.params.sources.o, "explicit");
    assert_eq!(
        r.near.params.sources.l,
        "table params.csv: toy / METAL / Same Rack"
    );
    let fs = &r.far.as_ref().unwrap().params.sources;
    assert_eq!(fs.g, "explicit (far)");
    assert_eq!(fs.o, "explicit");
    assert_eq!(fs.l, "table params.csv: toy / METAL / Different Racks");
    assert_eq!(
        fs.big_o,
        "table params.csv: toy / METAL / Different Racks: no O column, 0 as the paper's -O 0"
    );

    // Latency: 16 kept samples, median (1.4 + 1.5)/2 us pinned at p = 0.5.
    let lat = table(p.near.latency.as_ref().unwrap());
    assert_eq!(lat.quantile(0.5), 1_450_000.0);
    assert_eq!(lat.values[0], 1_000_000.0);
    // The largest of the 16 samples is kept exactly (the exact tail: ⌈16/1000⌉ = 1 sample of
    // probability 1/16); the table ends at p = 15/16 with the second largest.
    assert_eq!(*lat.values.last().unwrap(), 2_400_000.0);
    assert_eq!(
        (lat.tail.clone(), lat.sample_count),
        (vec![50_000_000.0], 16)
    );
    assert_eq!(lat.tail_start(), 15.0 / 16.0);
    assert_eq!(lat.quantile(0.95), 50_000_000.0);
    // Just below: the table's last segment, 2.2 us at p = 14/16 to 2.4 us at 15/16.
    assert!((lat.quantile(0.9374) - (2_400_000.0 - 0.0001 * 16.0 * 200_000.0)).abs() < 1e-3);
    assert_eq!(
        (
            r.near.latency.tail_samples,
            r.near.latency.tail_from_quantile,
            r.near.latency.tail_min,
            r.near.latency.tail_max
        ),
        (1, 0.9375, Some(50.0), Some(50.0))
    );
    assert_eq!(lat.ks_to_samples(&toy_lat_ps()), r.near.latency.ks_exact);
    assert_eq!(r.near.latency.kept, 16);
    assert_eq!(r.near.latency.rows_read, 20);
    assert_eq!(r.near.latency.blocks, 2);
    assert_eq!(r.near.latency.dropped.warmup, 4);
    assert_eq!(
        r.near.latency.dropped.reasons,
        vec!["4 warm-up rows (the first 2 rows of every block; 2 blocks)"]
    );
    assert_eq!(r.near.latency.median, 1.45);
    assert_eq!(r.near.latency.quantiles.min, 1.0);
    assert_eq!(r.near.latency.quantiles.max, 50.0);
    assert_eq!(r.near.latency.mc_draws, MC_DRAWS);

    // Bandwidth: per-byte time of 65536-byte messages; median (102 + 103)/2 us / 65536 B.
    let bw = table(p.near.bandwidth.as_ref().unwrap());
    assert_eq!(bw.quantile(0.5), 102_500_000.0 / 65536.0);
    assert_eq!(bw.values[0], 100_000_000.0 / 65536.0);
    assert_eq!(p.near.bandwidth_block_bytes, 65536);
    assert_eq!(r.near.bandwidth.median, 102_500_000.0 / 65536.0);
    let gbit = r.near.bandwidth.quantiles_gbit_s.as_ref().unwrap();
    assert_eq!(gbit.max, 65536.0 * 8.0 / 100e3);
    assert_eq!(gbit.min, 65536.0 * 8.0 / 106e3);

    // Far: the near distributions (no far captures), with the far parameters.
    assert_eq!(far.latency, p.near.latency);
    assert_eq!(far.bandwidth, p.near.bandwidth);
    assert!(r.far.as_ref().unwrap().latency.shared_with_near);
    assert!(!r.far_stored_as_near);

    // OS noise: both runs stitched on one axis, the second shifted by the first's 2 s period.
    assert_eq!(
        p.os_noise.traces,
        vec![DetourTrace {
            start_ps: vec![
                0,
                1_000_000,
                5_000_000,
                2_000_000_000_000,
                2_000_001_000_000,
                2_000_005_000_000
            ],
            duration_ps: vec![500_000, 600_000, 700_000, 500_000, 600_000, 700_000],
            period_ps: 2_000_005_700_000,
        }]
    );
    let proc_ = p.os_noise.process.as_ref().unwrap();
    assert_eq!(proc_.rate_per_s, 6.0 / 2.0000057);
    let dur = table(&proc_.duration_ps);
    assert_eq!(dur.values[0], 500_000.0);
    assert_eq!(*dur.values.last().unwrap(), 700_000.0);
    assert_eq!((dur.tail.clone(), dur.sample_count), (vec![700_000.0], 6));
    let os = r.os_noise.as_ref().unwrap();
    assert_eq!((os.runs, os.detours, os.trace_detours), (2, 6, 6));
    assert_eq!(os.trace_bytes, 96);
    assert_eq!(os.max_us, 0.7);
    assert_eq!(os.p50_us, 0.6);
    assert_eq!(os.overhead_pct, 3600.0 / 2_000_005_700.0 * 100.0);

    // Prices: explicit on-demand, committed from the table.
    assert_eq!(
        p.prices,
        Prices {
            on_demand_usd_per_node_hour: Some(2.5),
            committed_usd_per_node_hour: Some(1.0),
            spot: Default::default(),
        }
    );
    assert_eq!(
        r.prices.source,
        "explicit, then table systems.csv: toy / metal"
    );

    // Provenance: sources in a fixed order (the captures first: the closure check reads them), relative to the current directory (never a
    // machine's absolute path), the given date and command, notes.
    let dir = t.path().canonicalize().unwrap();
    let src = |f: &str| loggops_calibrate::relative_to_cwd(&dir.join(f));
    assert!(!src("lat.out").starts_with('/'), "{}", src("lat.out"));
    assert_eq!(
        p.provenance.sources,
        vec![
            src("lat.out"),
            src("bw.out"),
            src("params.csv"),
            src("os.out"),
            src("systems.csv")
        ]
    );
    assert_eq!(p.provenance.command, "loggops-sim calibrate toy");
    assert_eq!(p.provenance.created, "2001-02-03T04:05:06Z");
    assert_eq!(p.provenance.tool_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(p.provenance.notes, r.notes);
    assert_eq!(p.provenance.notes[0], "hand-made");
    assert_eq!(p.description, "a toy system");

    // Round trip through HDF5.
    let out = t.path().join("toy.h5");
    write_profile(&out, &p).unwrap();
    assert_eq!(read_profile(&out).unwrap(), p);

    // The JSON report parses and carries the same numbers.
    let j: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(j["near"]["latency"]["kept"], 16);
    assert_eq!(j["near"]["latency"]["median"], 1.45);
    assert_eq!(j["os_noise"]["detours"], 6);
    assert_eq!(j["prices"]["committed_usd_per_node_hour"], 1.0);
    assert_eq!(j["far"]["bandwidth"]["shared_with_near"], true);
    assert_eq!(j["near"]["latency"]["tail_samples"], 1);
    assert_eq!(j["near"]["latency"]["tail_from_quantile"], 0.9375);
    assert_eq!(j["near"]["latency"]["tail_min"], 50.0);
    assert_eq!(j["os_noise"]["process"]["duration_tail_samples"], 1);

    insta::assert_snapshot!("toy_report", t.msg(r.to_text()));
}

fn toy_lat_ps() -> Vec<f64> {
    [
        1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 50.0, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4,
    ]
    .iter()
    .map(|us| (us * 1e6_f64).round())
    .collect()
}

#[test]
fn toy_trace_cut_and_defaults() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    inp.max_trace_detours = 4;
    inp.created = None;
    inp.params.explicit = ParamOverrides::default();
    inp.far_params = ParamOverrides::default();
    inp.params.table.as_mut().unwrap().instance = "small".into();
    inp.params.table.as_mut().unwrap().placement = "Same Rack".into();
    inp.prices = Prices::default();
    inp.prices_table.as_mut().unwrap().class = "small".into();
    let (p, r) = build_profile(&inp).unwrap();
    // The trace keeps the first 4 detours and ends where the 5th starts; the process is fitted on
    // all 6.
    let tr = &p.os_noise.traces[0];
    assert_eq!(tr.start_ps.len(), 4);
    assert_eq!(tr.period_ps, 2_000_001_000_000);
    assert_eq!(
        p.os_noise.process.as_ref().unwrap().rate_per_s,
        6.0 / 2.0000057
    );
    assert!(r.notes.contains(
        &"OS-noise trace cut to its first 4 of 6 detours (2.000s of 2.000s); the detour process is fitted on all 6"
            .to_string()
    ));
    // A single Same Rack row: no far placement; nodes per switch from the row.
    assert!(p.far.is_none() && r.far.is_none());
    assert_eq!(p.nodes_per_switch, 1);
    assert_eq!(p.near.params.l_ps, 30_000_000.0);
    assert_eq!(p.near.params.big_g_ps_per_byte, 1100.0);
    assert_eq!(p.near.params.s_bytes, 131072);
    // An empty price cell is unknown.
    assert_eq!(
        p.prices,
        Prices {
            on_demand_usd_per_node_hour: Some(0.5),
            committed_usd_per_node_hour: None,
            spot: Default::default(),
        }
    );
    assert!(r.notes.contains(&"committed price unknown".to_string()));
    // The date is now, ISO-8601 UTC.
    let c = &p.provenance.created;
    assert_eq!(c.len(), 20, "{c}");
    assert!(
        c.starts_with("20") && c.ends_with('Z') && &c[10..11] == "T",
        "{c}"
    );
}

#[test]
fn toy_far_identical_is_stored_as_near() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    inp.params.table = None;
    inp.params.explicit = ParamOverrides {
        l_ps: Some(1e6),
        o_ps: Some(0.0),
        g_ps: Some(0.0),
        big_g_ps_per_byte: Some(80.0),
        big_o_ps_per_byte: None,
        s_bytes: Some(4096),
    };
    // Far parameters equal to near ones, far captures = the near ones.
    inp.far_params = ParamOverrides {
        l_ps: Some(1e6),
        ..Default::default()
    };
    inp.far_latency = Some(inp.latency.clone());
    inp.nodes_per_switch = Some(8);
    let (p, r) = build_profile(&inp).unwrap();
    assert!(p.far.is_none());
    assert!(r.far_stored_as_near);
    assert!(!r.far.as_ref().unwrap().latency.shared_with_near);
    assert_eq!(p.nodes_per_switch, 8);
    assert_eq!(
        r.near.params.sources.big_o,
        "default: 0, as the paper (-O 0)"
    );
    // Explicit parameters, no far row: nodes per switch is needed once a far placement exists.
    inp.far_params.l_ps = Some(2e6);
    inp.nodes_per_switch = None;
    let e = build_profile(&inp).unwrap_err();
    insta::assert_snapshot!("far_without_nodes_per_switch", t.msg(e));
}

#[test]
fn tables_exact() {
    let t = Tmp::new();
    let params = t.file("params.csv", TOY_PARAMS);
    let (p, nps) = read_params_table(&params, "Toy", "Small", "Same Rack").unwrap();
    assert_eq!(nps, 1);
    assert_eq!(
        p,
        BaseParams {
            l_ps: 30e6,
            o_ps: 5e6,
            g_ps: 180_000.0,
            big_g_ps_per_byte: 1100.0,
            big_o_ps_per_byte: 0.0,
            s_bytes: 131072
        }
    );
    let (near, far, nps) = read_params_table_placement_pair(&params, "toy", "metal").unwrap();
    assert_eq!((near.l_ps, far.l_ps, nps), (1.5e6, 2.5e6, 4));
    assert_eq!(
        (near.big_g_ps_per_byte, far.big_g_ps_per_byte),
        (100.0, 150.0)
    );

    let e = read_params_table(&params, "Toy", "Metal", "Same Switch").unwrap_err();
    insta::assert_snapshot!("unknown_params_row", t.msg(e));
    let e = read_params_table_placement_pair(&params, "Toy", "Small").unwrap_err();
    insta::assert_snapshot!("pair_without_far_row", t.msg(e));

    let prices = t.file("systems.csv", TOY_PRICES);
    assert_eq!(
        read_prices_table(&prices, "TOY", "metal").unwrap(),
        Prices {
            on_demand_usd_per_node_hour: Some(3.0),
            committed_usd_per_node_hour: Some(1.0),
            spot: Default::default(),
        }
    );
    let e = read_prices_table(&prices, "toy", "huge").unwrap_err();
    insta::assert_snapshot!("unknown_prices_row", t.msg(e));

    // Malformed tables.
    let bad = t.file("bad.csv", "provider,instance,placement,L_us\nA,B,C,1\n");
    insta::assert_snapshot!(
        "params_missing_columns",
        t.msg(read_params_table(&bad, "A", "B", "C").unwrap_err())
    );
    let bad = t.file(
        "bad2.csv",
        TOY_PARAMS.replace("Toy,Small,Same Rack,30,", "Toy,Small,Same Rack,-3,"),
    );
    insta::assert_snapshot!(
        "params_negative",
        t.msg(read_params_table(&bad, "Toy", "Small", "Same Rack").unwrap_err())
    );
    let bad = t.file("bad3.csv", TOY_PRICES.replace(",,0.5,", ",cheap,0.5,"));
    insta::assert_snapshot!(
        "prices_not_a_number",
        t.msg(read_prices_table(&bad, "toy", "small").unwrap_err())
    );
}

#[test]
fn missing_parameters() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    inp.params = ParamSource::default();
    inp.far_params = ParamOverrides::default();
    insta::assert_snapshot!("missing_params", t.msg(build_profile(&inp).unwrap_err()));
    inp.params.explicit = ParamOverrides {
        l_ps: Some(1e6),
        o_ps: Some(0.0),
        g_ps: Some(0.0),
        big_g_ps_per_byte: Some(80.0),
        big_o_ps_per_byte: None,
        s_bytes: None,
    };
    assert_only_s_missing(&inp);
}

#[test]
fn bad_captures() {
    let t = Tmp::new();
    let mut inp = toy_inputs(&t);
    inp.latency = inp.bandwidth.clone();
    insta::assert_snapshot!(
        "bandwidth_as_latency",
        t.msg(build_profile(&inp).unwrap_err())
    );
    let mut inp = toy_inputs(&t);
    inp.os_noise = Some(inp.latency.clone());
    insta::assert_snapshot!(
        "latency_as_os_noise",
        t.msg(build_profile(&inp).unwrap_err())
    );
    let mut inp = toy_inputs(&t);
    inp.bandwidth = t.path().join("nope.out");
    insta::assert_snapshot!(
        "missing_bandwidth_file",
        t.msg(build_profile(&inp).unwrap_err())
    );
    let mut inp = toy_inputs(&t);
    inp.params.explicit.l_ps = Some(-1.0);
    insta::assert_snapshot!(
        "negative_explicit_latency",
        t.msg(build_profile(&inp).unwrap_err())
    );
}

// ---------------------------------------------------------------- the paper's systems

/// (capture dir, profile name, description, table provider, table instance, prices system,
/// prices class, note)
type PaperSystem = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
);

const PAPER: [PaperSystem; 8] = [
    (
        "daint_hpcmetal_DRday",
        "daint",
        "Piz Daint, Cray XC50 (Aries), different racks, day",
        "Daint",
        "HPC (Metal)",
        "daint",
        "hpc-metal",
        None,
    ),
    (
        "alps_hpcmetal_DRday",
        "alps",
        "Alps, HPE Cray EX (Slingshot), different racks, day",
        "Alps",
        "HPC (Metal)",
        "alps",
        "hpc-metal",
        None,
    ),
    (
        "azure_hpc_hc44rs_day",
        "azure",
        "Azure HC44rs (100 Gb/s InfiniBand), day",
        "Azure",
        "HPC",
        "azure",
        "hpc",
        None,
    ),
    (
        "azure_hpc200_hbv2_day",
        "azure200",
        "Azure HB120rs_v2 (200 Gb/s InfiniBand), day",
        "Azure",
        "HPC (200 Gb/s)",
        "azure",
        "hpc-200",
        None,
    ),
    (
        "aws_hpcmetal_c5n_SRnight",
        "aws",
        "AWS c5n.metal (EFA 100 Gb/s)",
        "AWS",
        "HPC (Metal)",
        "aws",
        "hpc-metal",
        Some("substitute captures: same rack, night (the paper's different-racks run is missing upstream)"),
    ),
    (
        "gcp_hpc_c2_SRday",
        "gcp",
        "GCP c2-standard-60 TIER_1 (100 Gb/s)",
        "GCP",
        "HPC",
        "gcp",
        "hpc",
        Some("substitute captures: same rack, day (the paper's different-racks run is missing upstream)"),
    ),
    (
        "deepest_hpcmetal_0505",
        "deepest",
        "DEEP-EST (InfiniBand EDR)",
        "DEEP-EST",
        "HPC (Metal)",
        "deep-est",
        "hpc-metal",
        Some("substitute captures: run of 2022-05-05 (the paper's different-racks run is missing upstream)"),
    ),
    (
        "oracle_normal_SRday",
        "oracle",
        "Oracle BM.Optimized3.36 (RoCEv2 100 Gb/s)",
        "Oracle",
        "HPC (Metal)",
        "oracle",
        "hpc-metal",
        Some("substitute captures: a normal instance (VM.Optimized3.Flex), same rack, day; the HPC instance was not captured"),
    ),
];

fn paper_inputs(shared: &Path, k: usize) -> CalibrateInputs {
    let (dir, name, desc, provider, instance, psys, pclass, note) = PAPER[k];
    let d = shared.join("captures/cloud_noise").join(dir);
    let mut inp = CalibrateInputs::new(
        name,
        d.join("ng_netnoise_mpi_lat.out.xz"),
        d.join("ng_netnoise_mpi_bw.out.xz"),
    );
    inp.description = desc.into();
    inp.os_noise = Some(d.join("ng_osnoise.out.xz"));
    inp.loggp = Some(d.join("ng_loggp.out"));
    inp.params = ParamSource {
        explicit: ParamOverrides::default(),
        table: Some(ParamsTableRow {
            path: shared.join("reference/paper/loggp_params.csv"),
            provider: provider.into(),
            instance: instance.into(),
            placement: "Different Racks".into(),
        }),
    };
    inp.prices_table = Some(PricesTableRow {
        path: shared.join("paper/systems.csv"),
        system: psys.into(),
        class: pclass.into(),
    });
    inp.command = format!("loggops-sim calibrate ({name}, test)");
    inp.created = Some("2000-01-01T00:00:00Z".into());
    inp.notes = note.map(|n| vec![n.to_string()]).unwrap_or_default();
    inp
}

/// What the captures and tables of one system must give.
struct Expected {
    /// Kept latency and bandwidth samples (after 21 warm-up rows per 1000-row block).
    lat_kept: u64,
    bw_kept: u64,
    /// Bandwidth message size, bytes.
    bw_size: u64,
    detours: usize,
    /// Latency median, ps (0 = not checked against an independent figure).
    lat_median_ps: f64,
    /// Near and far G, ps/byte.
    near_g: f64,
    far_g: f64,
    /// On-demand and committed USD/node-hour.
    on_demand: Option<f64>,
    committed: Option<f64>,
}

const fn ex(
    kept: u64,
    bw_size: u64,
    detours: usize,
    lat_median_ps: f64,
    (near_g, far_g): (f64, f64),
    (on_demand, committed): (Option<f64>, Option<f64>),
) -> Expected {
    Expected {
        lat_kept: kept,
        bw_kept: kept,
        bw_size,
        detours,
        lat_median_ps,
        near_g,
        far_g,
        on_demand,
        committed,
    }
}

/// Kept counts and latency medians as in the paper's `noise_stats.csv` (AWS: its run there is
/// another one), detour counts as in `noise_stats.csv`.
const EXPECTED: [Expected; 8] = [
    ex(
        325028,
        16 << 20,
        99998,
        2_145_500.0,
        (110.0, 140.0),
        (Some(1.73), Some(1.02)),
    ),
    ex(
        514954,
        16 << 20,
        49999,
        2_870_000.0,
        (79.0, 92.0),
        (None, None),
    ),
    ex(
        157619,
        16 << 20,
        99998,
        1_658_616.0,
        (86.0, 86.0),
        (Some(3.168), Some(2.218)),
    ),
    ex(
        814528,
        16 << 20,
        149997,
        1_750_000.0,
        (46.0, 46.0),
        (Some(3.6), Some(1.8)),
    ),
    ex(
        343629,
        16 << 20,
        49999,
        0.0,
        (170.0, 300.0),
        (Some(3.88), Some(1.475)),
    ),
    ex(
        1276616,
        4 << 20,
        49999,
        10_013_500.0,
        (390.0, 390.0),
        (Some(4.03), Some(2.148)),
    ),
    ex(
        894806,
        16 << 20,
        99998,
        1_788_000.0,
        (89.0, 89.0),
        (None, None),
    ),
    ex(
        103774,
        16 << 20,
        199996,
        26_464_000.0,
        (100.0, 105.0),
        (Some(2.712), None),
    ),
];

fn check_paper_system(sh: &Path, k: usize, out_dir: &Path) -> (Profile, FitReport, u64) {
    let inp = paper_inputs(sh, k);
    let (p, r) = build_profile(&inp).unwrap();
    let Expected {
        lat_kept,
        bw_kept,
        bw_size,
        detours,
        lat_median_ps: lat_median,
        near_g,
        far_g,
        on_demand: od,
        committed: cm,
    } = EXPECTED[k];
    let name = PAPER[k].1;

    // Written, read back unchanged, small.
    let out = out_dir.join(format!("{name}.h5"));
    write_profile(&out, &p).unwrap();
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(size < 1_000_000, "{name}: {size} bytes");
    assert_eq!(read_profile(&out).unwrap(), p, "{name}");

    // The paper's Different Racks parameters: near = Same Rack row, far = Different Racks row.
    let (near, far, nps) = read_params_table_placement_pair(
        sh.join("reference/paper/loggp_params.csv"),
        PAPER[k].3,
        PAPER[k].4,
    )
    .unwrap();
    assert_eq!(p.near.params, near, "{name}");
    assert_eq!(p.near.params.big_g_ps_per_byte, near_g, "{name}");
    assert_eq!(far.big_g_ps_per_byte, far_g, "{name}");
    assert_eq!(p.nodes_per_switch, nps, "{name}");
    if near == far {
        // Same parameters and the same captures: stored as near only.
        assert!(p.far.is_none() && r.far_stored_as_near, "{name}");
    } else {
        let f = p.far.as_ref().unwrap();
        assert_eq!(f.params, far, "{name}");
        assert_eq!(f.latency, p.near.latency, "{name}");
        assert_eq!(f.bandwidth, p.near.bandwidth, "{name}");
    }
    assert_eq!(
        p.prices,
        Prices {
            on_demand_usd_per_node_hour: od,
            committed_usd_per_node_hour: cm,
            spot: Default::default(),
        },
        "{name}"
    );

    // Latency and bandwidth tables against the captured samples, computed independently.
    let lat_pp = read_pingpong(&inp.latency, &PingPongOptions::latency()).unwrap();
    let lat_ps: Vec<f64> = lat_pp.samples_ps.iter().map(|&v| v as f64).collect();
    assert_eq!(lat_ps.len() as u64, lat_kept, "{name}");
    assert_eq!(r.near.latency.kept, lat_kept, "{name}");
    let lt = table(p.near.latency.as_ref().unwrap());
    let median = quantiles(&lat_ps, &[0.5])[0];
    assert_eq!(lt.quantile(0.5), median, "{name}");
    if lat_median > 0.0 {
        assert_eq!(median, lat_median, "{name}");
    }
    // Every sample above the 99.9th percentile is kept exactly, after the table's last point.
    let mut srt = lat_ps.clone();
    srt.sort_by(f64::total_cmp);
    let k = lat_ps.len().div_ceil(1000).min(2048);
    assert_eq!(lt.tail, srt[srt.len() - k..], "{name}");
    assert_eq!(*lt.values.last().unwrap(), srt[srt.len() - k - 1], "{name}");
    assert_eq!(lt.sample_count, lat_kept, "{name}");
    assert_eq!(r.near.latency.tail_samples, k, "{name}");
    let ks = lt.ks_to_samples(&lat_ps);
    assert_eq!(ks, r.near.latency.ks_exact, "{name}");
    assert!(ks < 0.01, "{name}: latency KS {ks}");
    assert!(r.near.latency.ks_monte_carlo < 0.01, "{name}");

    let bw_pp = read_pingpong(&inp.bandwidth, &PingPongOptions::bandwidth()).unwrap();
    assert_eq!(bw_pp.size_bytes, bw_size, "{name}");
    assert_eq!(p.near.bandwidth_block_bytes, bw_size, "{name}");
    let bw: Vec<f64> = bw_pp
        .samples_ps
        .iter()
        .map(|&v| v as f64 / bw_size as f64)
        .collect();
    assert_eq!(bw.len() as u64, bw_kept, "{name}");
    let bt = table(p.near.bandwidth.as_ref().unwrap());
    assert_eq!(bt.quantile(0.5), quantiles(&bw, &[0.5])[0], "{name}");
    let ks = bt.ks_to_samples(&bw);
    assert!(ks < 0.01, "{name}: bandwidth KS {ks}");
    assert!(r.near.bandwidth.ks_monte_carlo < 0.01, "{name}");

    // OS noise: every detour in the process, at most 100k kept raw.
    let os = r.os_noise.as_ref().unwrap();
    assert_eq!(os.detours, detours, "{name}");
    assert_eq!(
        os.trace_detours,
        detours.min(DEFAULT_MAX_TRACE_DETOURS),
        "{name}"
    );
    let trace = &p.os_noise.traces[0];
    assert_eq!(
        trace.start_ps.len(),
        detours.min(DEFAULT_MAX_TRACE_DETOURS),
        "{name}"
    );
    let st = read_selfish(inp.os_noise.as_ref().unwrap())
        .unwrap()
        .stitched();
    let (starts, durs, _) = st.to_ps();
    assert_eq!(trace.start_ps[..], starts[..trace.start_ps.len()], "{name}");
    assert_eq!(
        trace.duration_ps[..],
        durs[..trace.start_ps.len()],
        "{name}"
    );
    assert!(os.warnings.is_empty(), "{name}: {:?}", os.warnings);
    let rate = p.os_noise.process.as_ref().unwrap().rate_per_s;
    assert_eq!(rate, detours as f64 / (os.period_s), "{name}");
    (p, r, size)
}

#[test]
fn paper_profiles() {
    let Some(sh) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    eprintln!(
        "system    bytes   lat KS exact/MC   points  bw KS exact/MC   points  detours (kept)"
    );
    for k in 0..PAPER.len() {
        let (_, r, size) = check_paper_system(&sh, k, dir.path());
        eprintln!(
            "{:9} {:7} {:.5}/{:.5}  {:5}  {:.5}/{:.5}  {:5}  {} ({})",
            r.system,
            size,
            r.near.latency.ks_exact,
            r.near.latency.ks_monte_carlo,
            r.near.latency.table_points,
            r.near.bandwidth.ks_exact,
            r.near.bandwidth.ks_monte_carlo,
            r.near.bandwidth.table_points,
            r.os_noise.as_ref().unwrap().detours,
            r.os_noise.as_ref().unwrap().trace_detours,
        );
    }
}

/// The text report of one system, with the shared directory redacted.
#[test]
fn daint_fit_report() {
    let Some(sh) = shared() else { return };
    let (_, r) = build_profile(&paper_inputs(&sh, 0)).unwrap();
    let text = r
        .to_text()
        .replace(&loggops_calibrate::relative_to_cwd(&sh), "[shared]")
        .replace(&*sh.display().to_string(), "[shared]");
    insta::assert_snapshot!("daint_report", text);
}

#[test]
fn unknown_paper_row() {
    let Some(sh) = shared() else { return };
    let e = read_params_table(
        sh.join("reference/paper/loggp_params.csv"),
        "Azure",
        "HPC (400 Gb/s)",
        "Same Rack",
    )
    .unwrap_err();
    insta::assert_snapshot!(
        "unknown_paper_row",
        e.to_string()
            .replace(&*sh.display().to_string(), "[shared]")
    );
}

#[test]
fn vm_under_load_warns_about_heavy_tails() {
    let Some(sh) = shared() else { return };
    let d = sh.join("captures/vm-under-load");
    let mut inp = CalibrateInputs::new(
        "vm",
        d.join("ng_netnoise_mpi_lat.out"),
        d.join("ng_netnoise_mpi_bw_16777216.out"),
    );
    inp.os_noise = Some(d.join("ng_osnoise.out"));
    inp.loggp = Some(d.join("ng_loggp.out"));
    // The LogGP fit gives L, o, g and G but not S.
    assert_only_s_missing(&inp);
    inp.params.explicit.s_bytes = Some(4096);
    let (p, r) = build_profile(&inp).unwrap();
    let lat = &r.near.latency;
    assert_eq!(lat.kept, 223 * (1000 - 21));
    assert!(
        lat.warnings.iter().any(|w| w.starts_with("heavy tail")),
        "{:?}",
        lat.warnings
    );
    let os = r.os_noise.as_ref().unwrap();
    assert_eq!(os.detours, 49999);
    assert_eq!(os.warnings.len(), 2, "{:?}", os.warnings);
    assert!(os.warnings[0].starts_with("heavy OS noise: detours take 5.327% of the CPU time"));
    assert!(
        os.warnings[1].starts_with("heavy tail: "),
        "{}",
        os.warnings[1]
    );
    assert!(r
        .warnings
        .iter()
        .any(|w| w.starts_with("near latency: heavy tail")));
    assert!(r
        .warnings
        .iter()
        .any(|w| w.starts_with("OS noise: heavy tail")));
    assert!(r.near.latency.ks_exact < 0.01);
    assert!(r.near.bandwidth.ks_exact < 0.01);
    assert_eq!(r.near.params.sources.s, "explicit");
    assert!(r
        .near
        .params
        .sources
        .l
        .starts_with("LogGP fit ng_loggp.out"));
    assert_eq!(r.loggp.as_ref().unwrap().used_for, vec!["L", "o", "g", "G"]);
    assert!(p.far.is_none());
    let dir = tempfile::tempdir().unwrap();
    write_profile(dir.path().join("vm.h5"), &p).unwrap();
}
