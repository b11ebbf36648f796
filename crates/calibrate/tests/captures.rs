//! Every real capture under `shared/captures/`: detection and import with exact counts.
//!
//! Expected numbers were computed independently with the shell, e.g. for ping-pong files
//! `xz -dcf F | awk '/^#/{h++;next} {if (i%1000>20) k++; i++} END{print i, h, k}'` (rows, headers,
//! rows kept by the paper's `index % 1000 <= 20` filter) and `sort -g | awk` for the upper median
//! and the maximum; for selfish files `awk` over the `# Benchmark Method` blocks.
//! Each test skips with a message when `shared/` is absent.

use std::path::PathBuf;

use loggops_calibrate::stats::{ks_two_sample, QuantileTable};
use loggops_calibrate::{
    detect, read_capture, read_distrtt, read_loggp, read_pingpong, read_quanta, read_selfish,
    read_summary, CalibError, Capture, Format, PingPongOptions, QuantumKind, QuantumOptions,
    WarningKind,
};

fn captures() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipping: {} is absent", p.display());
        None
    }
}

const SYSTEMS: [&str; 8] = [
    "alps_hpcmetal_DRday",
    "aws_hpcmetal_c5n_SRnight",
    "azure_hpc200_hbv2_day",
    "azure_hpc_hc44rs_day",
    "daint_hpcmetal_DRday",
    "deepest_hpcmetal_0505",
    "gcp_hpc_c2_SRday",
    "oracle_normal_SRday",
];

/// (file, size, rows, headers, kept, upper median us, max us)
const PINGPONG: &[(&str, u64, u64, usize, usize, f64, f64)] = &[
    (
        "cloud_noise/alps_hpcmetal_DRday/ng_netnoise_mpi_bw.out.xz",
        16 << 20,
        526000,
        526,
        514954,
        1408.24,
        5437.605,
    ),
    (
        "cloud_noise/alps_hpcmetal_DRday/ng_netnoise_mpi_lat.out.xz",
        1,
        526000,
        526,
        514954,
        2.87,
        941.916,
    ),
    (
        "cloud_noise/aws_hpcmetal_c5n_SRnight/ng_netnoise_mpi_bw.out.xz",
        16 << 20,
        351000,
        351,
        343629,
        3524.3205,
        3927.479,
    ),
    (
        "cloud_noise/aws_hpcmetal_c5n_SRnight/ng_netnoise_mpi_lat.out.xz",
        1,
        351000,
        351,
        343629,
        19.0285,
        449.349,
    ),
    (
        "cloud_noise/azure_hpc200_hbv2_day/ng_netnoise_mpi_bw.out.xz",
        16 << 20,
        832000,
        832,
        814528,
        690.54,
        1018.8585,
    ),
    (
        "cloud_noise/azure_hpc200_hbv2_day/ng_netnoise_mpi_lat.out.xz",
        1,
        832000,
        832,
        814528,
        1.75,
        24.651,
    ),
    (
        "cloud_noise/azure_hpc_hc44rs_day/ng_netnoise_mpi_bw.out.xz",
        16 << 20,
        161000,
        1,
        157619,
        1442.491559,
        3134.934255,
    ),
    (
        "cloud_noise/azure_hpc_hc44rs_day/ng_netnoise_mpi_lat.out.xz",
        1,
        161000,
        161,
        157619,
        1.658616,
        232.023177,
    ),
    (
        "cloud_noise/daint_hpcmetal_DRday/ng_netnoise_mpi_bw.out.xz",
        16 << 20,
        332000,
        332,
        325028,
        1762.1515,
        3223.6575,
    ),
    (
        "cloud_noise/daint_hpcmetal_DRday/ng_netnoise_mpi_lat.out.xz",
        1,
        332000,
        332,
        325028,
        2.1455,
        594.6155,
    ),
    (
        "cloud_noise/deepest_hpcmetal_0505/ng_netnoise_mpi_bw.out.xz",
        16 << 20,
        914000,
        914,
        894806,
        1432.657,
        1489.4005,
    ),
    (
        "cloud_noise/deepest_hpcmetal_0505/ng_netnoise_mpi_lat.out.xz",
        1,
        914000,
        914,
        894806,
        1.788,
        29.4445,
    ),
    (
        "cloud_noise/gcp_hpc_c2_SRday/ng_netnoise_mpi_bw.out.xz",
        4 << 20,
        1304000,
        1304,
        1276616,
        1069.5455,
        2467.036,
    ),
    (
        "cloud_noise/gcp_hpc_c2_SRday/ng_netnoise_mpi_lat.out.xz",
        1,
        1304000,
        1304,
        1276616,
        10.0135,
        316.0235,
    ),
    (
        "cloud_noise/oracle_normal_SRday/ng_netnoise_mpi_bw.out.xz",
        16 << 20,
        106000,
        106,
        103774,
        15725.97,
        38221.5975,
    ),
    (
        "cloud_noise/oracle_normal_SRday/ng_netnoise_mpi_lat.out.xz",
        1,
        106000,
        106,
        103774,
        26.464,
        62.227,
    ),
    (
        "daint-2022-03-30/ng_netnoise_mpi_bw.out",
        16 << 20,
        155000,
        155,
        151745,
        1788.9735,
        2266.526,
    ),
    (
        "daint-2022-03-30/ng_netnoise_mpi_lat.out",
        1,
        155000,
        155,
        151745,
        1.907,
        30.279,
    ),
    (
        "vm-under-load/ng_netnoise_mpi_bw_1048576.out",
        1 << 20,
        23000,
        23,
        22517,
        197.1905,
        61180.889,
    ),
    (
        "vm-under-load/ng_netnoise_mpi_bw_16777216.out",
        16 << 20,
        3000,
        3,
        2937,
        8548.5035,
        44783.419,
    ),
    (
        "vm-under-load/ng_netnoise_mpi_lat.out",
        1,
        223000,
        223,
        218317,
        0.943,
        16297.0705,
    ),
    (
        "vm-under-load/ng_lat_single.out",
        1,
        300000,
        1,
        293700,
        0.9345,
        24578.56,
    ),
];

fn upper_median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

#[test]
fn pingpong_files_import_with_exact_counts() {
    let Some(root) = captures() else { return };
    for &(file, size, rows, headers, kept, median, max) in PINGPONG {
        let path = root.join(file);
        assert_eq!(detect(&path).unwrap(), Format::PingPong, "{file}");
        let pp = read_pingpong(&path, &PingPongOptions::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(pp.size_bytes, size, "{file}");
        assert_eq!(pp.rows, rows, "{file}");
        assert_eq!(pp.headers, headers, "{file}");
        assert_eq!(pp.blocks as u64, rows / 1000, "{file}");
        assert_eq!(pp.samples_us.len(), kept, "{file}");
        assert_eq!(pp.warmup_dropped, 21 * rows / 1000, "{file}");
        assert_eq!(pp.skipped, 0, "{file}");
        assert_eq!(pp.samples_ps.len(), kept, "{file}");
        assert_eq!(upper_median(&pp.samples_us), median, "{file}");
        let m = pp.samples_us.iter().copied().fold(0.0, f64::max);
        assert_eq!(m, max, "{file}");
        assert_eq!(
            *pp.samples_ps.iter().max().unwrap(),
            (max * 1e6).round() as u64,
            "{file}"
        );
        for w in &pp.warnings {
            eprintln!("{file}: warning: {w}");
        }
        // The kind check accepts what each file is.
        let kind = if size == 1 {
            PingPongOptions::latency()
        } else {
            PingPongOptions::bandwidth()
        };
        if file.contains("oracle") {
            // Smallest file: also check the explicit-kind path end to end.
            assert_eq!(read_pingpong(&path, &kind).unwrap().samples_us.len(), kept);
        }
    }
}

#[test]
fn paper_medians_match_noise_stats() {
    // shared/reference/paper/noise_stats.csv: lat_median (ps) and lat_n_used of the paper's runs.
    let Some(root) = captures() else { return };
    let pp = read_pingpong(
        root.join("cloud_noise/daint_hpcmetal_DRday/ng_netnoise_mpi_lat.out.xz"),
        &PingPongOptions::latency(),
    )
    .unwrap();
    assert_eq!(pp.samples_ps.len(), 325028);
    assert_eq!(upper_median(&pp.samples_us), 2.1455);
    let mut ps = pp.samples_ps.clone();
    ps.sort_unstable();
    assert_eq!(ps[ps.len() / 2], 2_145_500);
}

#[test]
fn headerless_runs_are_cut_like_the_paper() {
    // Azure HC44rs bandwidth: 161 runs of 1000 rows under one header (rewritten by pandas).
    let Some(root) = captures() else { return };
    let pp = read_pingpong(
        root.join("cloud_noise/azure_hpc_hc44rs_day/ng_netnoise_mpi_bw.out.xz"),
        &PingPongOptions::bandwidth(),
    )
    .unwrap();
    assert_eq!(pp.blocks, 161);
    let w: Vec<_> = pp
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::BlockLength)
        .collect();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].count, 160);
    assert_eq!(w[0].lines, vec![1002, 2002, 3002, 4002, 5002]);
    insta::assert_snapshot!("hc44rs_bw_cut_blocks", w[0].to_string());
}

#[test]
fn single_long_run_without_cutting() {
    let Some(root) = captures() else { return };
    let path = root.join("vm-under-load/ng_lat_single.out");
    let opts = PingPongOptions {
        block_len: None,
        ..PingPongOptions::latency()
    };
    let pp = read_pingpong(&path, &opts).unwrap();
    assert_eq!(pp.blocks, 1);
    assert_eq!(pp.warmup_dropped, 21);
    assert_eq!(pp.samples_us.len(), 300000 - 21);
    assert!(pp
        .warnings
        .iter()
        .all(|w| w.kind != WarningKind::BlockLength));
}

#[test]
fn loaded_vm_latency_warns_about_heavy_tail() {
    let Some(root) = captures() else { return };
    let pp = read_pingpong(
        root.join("vm-under-load/ng_netnoise_mpi_lat.out"),
        &PingPongOptions::latency(),
    )
    .unwrap();
    let tail: Vec<_> = pp
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::HeavyTail)
        .collect();
    assert_eq!(tail.len(), 1);
    insta::assert_snapshot!("vm_latency_heavy_tail", tail[0].to_string());
}

#[test]
fn size_sweeps_need_and_honour_a_size_filter() {
    let Some(root) = captures() else { return };
    for (file, median_1b, median_16m) in [
        (
            "cloud_noise/daint_hpcmetal_DRday/ng_one_one_mpi_stripe1.out.xz",
            2.7415,
            1798.1525,
        ),
        (
            "vm-under-load/ng_one_one_mpi_stripe1.out",
            1.5115,
            10060.2285,
        ),
    ] {
        let path = root.join(file);
        assert_eq!(detect(&path).unwrap(), Format::PingPong);
        let err = read_pingpong(&path, &PingPongOptions::default()).unwrap_err();
        let CalibError::MixedSizes { sizes, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(sizes.len(), 25, "{file}");
        assert!(sizes.iter().all(|s| s.rows == 1000));
        assert_eq!(sizes[0].size_bytes, 1);
        assert_eq!(sizes[24].size_bytes, 16 << 20);
        assert_eq!(sizes[24].first_line, 24002);
        let one = read_pingpong(&path, &PingPongOptions::latency().with_size(1)).unwrap();
        assert_eq!(one.size_bytes, 1);
        assert_eq!(one.rows, 1000);
        assert_eq!(one.blocks, 1);
        assert_eq!(one.samples_us.len(), 979);
        assert_eq!(one.other_sizes.len(), 24);
        let big = read_pingpong(&path, &PingPongOptions::bandwidth().with_size(16 << 20)).unwrap();
        assert_eq!(big.samples_us.len(), 979);
        assert_eq!(upper_median(&one.samples_us), median_1b, "{file}");
        assert_eq!(upper_median(&big.samples_us), median_16m, "{file}");
        let e = read_pingpong(&path, &PingPongOptions::default().with_size(3)).unwrap_err();
        assert!(matches!(e, CalibError::SizeNotFound { size: 3, .. }), "{e}");
    }
}

/// (file, runs, detours per run, t_min of run 0 in ns, period of run 0 in s)
const SELFISH: &[(&str, usize, usize, f64, f64)] = &[
    (
        "cloud_noise/alps_hpcmetal_DRday/ng_osnoise.out.xz",
        1,
        49999,
        28.997304,
        197.52,
    ),
    (
        "cloud_noise/aws_hpcmetal_c5n_SRnight/ng_osnoise.out.xz",
        1,
        49999,
        71.991583,
        154.71,
    ),
    (
        "cloud_noise/azure_hpc200_hbv2_day/ng_osnoise.out.xz",
        3,
        49999,
        98.992110,
        44.44,
    ),
    (
        "cloud_noise/azure_hpc_hc44rs_day/ng_osnoise.out.xz",
        2,
        49999,
        7.424444,
        44.32,
    ),
    (
        "cloud_noise/daint_hpcmetal_DRday/ng_osnoise.out.xz",
        2,
        49999,
        237.973277,
        101.52,
    ),
    (
        "cloud_noise/deepest_hpcmetal_0505/ng_osnoise.out.xz",
        2,
        49999,
        237.985985,
        49.82,
    ),
    (
        "cloud_noise/gcp_hpc_c2_SRday/ng_osnoise.out.xz",
        1,
        49999,
        952.965692,
        150.57,
    ),
    (
        "cloud_noise/oracle_normal_SRday/ng_osnoise.out.xz",
        4,
        49999,
        237.979234,
        24.93,
    ),
    (
        "daint-2022-03-30/ng_osnoise.out",
        1,
        49999,
        237.973958,
        94.83,
    ),
    ("vm-under-load/ng_osnoise.out", 1, 49999, 40.996645, 26.69),
    ("vm-under-load/ng_osnoise_rdtsc.out", 1, 49999, 0.0, 1.57),
    ("vm-under-load/ng_osnoise_2ranks.out.0", 1, 9999, 0.0, 4.86),
    ("vm-under-load/ng_osnoise_2ranks.out.1", 1, 9999, 0.0, 7.05),
];

#[test]
fn selfish_files_import_and_stitch() {
    let Some(root) = captures() else { return };
    for &(file, runs, per_run, t_min, period0) in SELFISH {
        let path = root.join(file);
        assert_eq!(detect(&path).unwrap(), Format::Selfish, "{file}");
        let tr = read_selfish(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(tr.runs.len(), runs, "{file}");
        assert!(tr.runs.iter().all(|r| r.detours.len() == per_run), "{file}");
        assert!(tr.warnings.is_empty(), "{file}: {:?}", tr.warnings);
        let r0 = &tr.runs[0];
        if t_min > 0.0 {
            assert_eq!(r0.t_min_ns, Some(t_min), "{file}");
        }
        assert_eq!(r0.threshold_pct, Some(900.0));
        assert_eq!(r0.period_s, Some(period0), "{file}");
        assert_eq!(r0.detours[0].start_ns, 0.0);
        let st = tr.stitched();
        assert_eq!(st.detours.len(), runs * per_run);
        assert!(
            st.detours.windows(2).all(|w| w[0].start_ns < w[1].start_ns),
            "{file}"
        );
        let expected_period: f64 = tr.runs.iter().map(|r| r.effective_period_ns()).sum();
        assert_eq!(st.period_ns, expected_period);
        let (s, d, p) = st.to_ps();
        assert!(s.windows(2).all(|w| w[0] < w[1]), "{file}");
        assert_eq!(d.len(), s.len());
        assert!(p >= s.last().unwrap() + d.last().unwrap());
    }
}

#[test]
fn selfish_daint_values() {
    let Some(root) = captures() else { return };
    let tr = read_selfish(root.join("cloud_noise/daint_hpcmetal_DRday/ng_osnoise.out.xz")).unwrap();
    let (a, b) = (&tr.runs[0], &tr.runs[1]);
    assert_eq!(a.first_line, 1);
    assert_eq!(b.first_line, 50016);
    assert_eq!(a.iterations, Some(3673759058));
    assert_eq!(b.iterations, Some(3651097006));
    assert_eq!(a.overhead_pct, Some(0.67));
    assert_eq!(a.samples, Some(100000));
    assert_eq!(a.host.as_deref(), Some("nid00460"));
    // The printed period (101.52 s) is below the last detour end (101.520602669.92 ns + its
    // duration), so the end is used as the run length.
    assert_eq!(a.last_end_ns(), 101520602669.92);
    assert_eq!(a.effective_period_ns(), 101520602669.92);
    let st = tr.stitched();
    assert_eq!(st.detours[49999].start_ns, 101520602669.92);
    assert_eq!(st.detours[49999].duration_ns, b.detours[0].duration_ns);
    assert_eq!(st.period_ns, 101520602669.92 + 100933683395.34);
    // noise_stats.csv of the paper: 0.67 % overhead.
    assert!((st.overhead_fraction() * 100.0 - 0.6686).abs() < 0.001);
}

#[test]
fn fwq_and_ftq_import_and_convert() {
    let Some(root) = captures() else { return };
    let fwq_path = root.join("vm-under-load/ng_fwq.out");
    let ftq_path = root.join("vm-under-load/ng_ftq.out");
    assert_eq!(detect(&fwq_path).unwrap(), Format::Fwq);
    assert_eq!(detect(&ftq_path).unwrap(), Format::Ftq);
    let fwq = read_quanta(&fwq_path).unwrap();
    assert_eq!(fwq.kind, QuantumKind::Fwq);
    assert_eq!(fwq.values.len(), 5000);
    assert_eq!(fwq.quantum_us, Some(1000.0));
    assert_eq!(fwq.samples, Some(5000));
    assert_eq!(fwq.values[..3], [1015, 997, 1117]);
    assert_eq!(*fwq.values.iter().min().unwrap(), 976);
    assert_eq!(*fwq.values.iter().max().unwrap(), 10101);
    let d = fwq.to_detours(&QuantumOptions::default()).unwrap();
    let total: u64 = fwq.values.iter().sum();
    assert_eq!(d.period_ns, total as f64 * 1e3);
    let longer = fwq.values.iter().filter(|&&q| q > 977).count();
    assert_eq!(d.detours.len(), longer);
    assert_eq!(d.detours[0].start_ns, 976e3);
    assert_eq!(d.detours[0].duration_ns, 39e3);

    let ftq = read_quanta(&ftq_path).unwrap();
    assert_eq!(ftq.kind, QuantumKind::Ftq);
    assert_eq!(ftq.values.len(), 5000);
    assert_eq!(ftq.values[..3], [12327, 12762, 12789]);
    assert_eq!(*ftq.values.iter().max().unwrap(), 13361);
    let d = ftq
        .to_detours(&QuantumOptions { threshold_ns: 0.0 })
        .unwrap();
    assert_eq!(d.period_ns, 5000.0 * 1e6);
    let below = ftq.values.iter().filter(|&&w| w < 13361).count();
    assert_eq!(d.detours.len(), below);
    let lost0 = 1e6 * (1.0 - 12327.0 / 13361.0);
    assert!((d.detours[0].duration_ns - lost0).abs() < 1e-6);
    assert!(d.detours.windows(2).all(|w| w[0].start_ns < w[1].start_ns));

    // An explicit format that does not match.
    let e = read_capture(&fwq_path, Some(Format::Ftq), &PingPongOptions::default()).unwrap_err();
    insta::assert_snapshot!(
        "fwq_read_as_ftq",
        e.to_string()
            .replace(&*root.display().to_string(), "<captures>")
    );
}

#[test]
fn loggp_files_import_and_summarise() {
    let Some(root) = captures() else { return };
    let mut files: Vec<String> = SYSTEMS
        .iter()
        .map(|s| format!("cloud_noise/{s}/ng_loggp.out"))
        .collect();
    files.push("daint-2022-03-30/ng_loggp.out".into());
    files.push("vm-under-load/ng_loggp.out".into());
    for file in &files {
        let path = root.join(file);
        assert_eq!(detect(&path).unwrap(), Format::LogGp, "{file}");
        let fit = read_loggp(&path).unwrap();
        assert_eq!(fit.rows.len(), 128, "{file}");
        assert_eq!(fit.rows[0].size_bytes, 1);
        assert_eq!(fit.rows[127].size_bytes, 130049);
        assert_eq!(fit.rows[0].line, 4);
        assert!(fit.rows[0].g_us.is_nan());
        assert!(fit.warnings.is_empty(), "{file}: {:?}", fit.warnings);
        let s = fit.summary().unwrap();
        assert_eq!(s.o_line, 4);
        assert_eq!(s.gap_line, 131);
    }
    let fit = read_loggp(root.join("cloud_noise/daint_hpcmetal_DRday/ng_loggp.out")).unwrap();
    let s = fit.summary().unwrap();
    assert_eq!(s.l_ps, 1311000.0);
    assert!((s.o_s_ps - 1404667.0).abs() < 1e-6);
    assert!((s.o_r_ps - 1431111.0).abs() < 1e-6);
    assert!((s.o_ps - 1417889.0).abs() < 1e-6);
    assert!((s.g_ps - 4027910.0).abs() < 1e-6);
    assert!((s.big_g_ps_per_byte - 108.0).abs() < 1e-9);
    // Our own fit over the large sizes comes out close to Netgauge's.
    let g = fit.fit_gap(65536, u64::MAX).unwrap();
    assert!((g.big_g_us_per_byte * 1e6 - 108.0).abs() < 10.0, "{g:?}");

    // Oracle's second row has a negative G; the summary takes the last row (positive).
    let fit = read_loggp(root.join("cloud_noise/oracle_normal_SRday/ng_loggp.out")).unwrap();
    assert!(fit.rows[1].big_g_us_per_byte < 0.0);
    let s = fit.summary().unwrap();
    assert!((s.big_g_ps_per_byte - 1092.0).abs() < 1e-9);
    assert!(s.warnings.is_empty());
}

#[test]
fn summaries_import() {
    let Some(root) = captures() else { return };
    // (file, rows, runs, first size, last size)
    for (file, rows, runs, first, last) in [
        ("vm-under-load/ng_upstream_one_one.out", 48, 1, 1, 16 << 20),
        (
            "vm-under-load/ng_upstream_one_one.cmdout",
            48,
            1,
            1,
            16 << 20,
        ),
        ("vm-under-load/ng_lat_single.summary.out", 1, 1, 1, 1),
        (
            "vm-under-load/ng_netnoise_mpi_lat.summary.out",
            223,
            223,
            1,
            1,
        ),
        (
            "vm-under-load/ng_netnoise_mpi_bw_1048576.summary.out",
            23,
            23,
            1 << 20,
            1 << 20,
        ),
        (
            "vm-under-load/ng_netnoise_mpi_bw_16777216.summary.out",
            3,
            3,
            16 << 20,
            16 << 20,
        ),
        (
            "vm-under-load/ng_one_one_mpi_stripe1.summary.out",
            25,
            1,
            1,
            16 << 20,
        ),
    ] {
        let path = root.join(file);
        assert_eq!(detect(&path).unwrap(), Format::Summary, "{file}");
        let s = read_summary(&path).unwrap();
        assert_eq!(s.rows.len(), rows, "{file}");
        assert_eq!(s.runs, runs, "{file}");
        assert_eq!(s.rows[0].size_bytes, first, "{file}");
        assert_eq!(s.rows.last().unwrap().size_bytes, last, "{file}");
        assert!(s.warnings.is_empty(), "{file}: {:?}", s.warnings);
    }
    let s = read_summary(root.join("vm-under-load/ng_lat_single.summary.out")).unwrap();
    let r = s.rows[0];
    assert_eq!(r.send.min_us, 0.24);
    assert_eq!(r.send.outliers, 45);
    assert_eq!(r.rtt_half.median_us, 0.93);
    assert_eq!(r.rtt_half.max_us, 24578.56);
    assert_eq!(r.rtt_half.outliers, 2166);
    assert_eq!(r.throughput_mbit_s.from_min_rtt, 19.09);
}

#[test]
fn distrtt_imports_in_ticks() {
    let Some(root) = captures() else { return };
    let path = root.join("vm-under-load/ng_distrtt.stdout");
    assert_eq!(detect(&path).unwrap(), Format::DistRtt);
    let d = read_distrtt(&path).unwrap();
    assert_eq!(d.rows.len(), 500);
    assert_eq!(d.timer.as_deref(), Some("x86-64"));
    assert_eq!(d.rows[0].roundtrip_ticks, 101208);
    assert_eq!(d.rows[499].index, 499);
    assert_eq!(d.rows[499].local_time_s, 51.259882);
    assert_eq!(d.warnings.len(), 1);
    assert_eq!(d.warnings[0].kind, WarningKind::Timebase);
    assert_eq!(d.rtt_half_us(2000.0)[0], 101208.0 / 2000.0 / 2.0);
}

#[test]
fn non_capture_files_are_unknown() {
    let Some(root) = captures() else { return };
    let mut files = vec![
        "vm-under-load/commands.log",
        "vm-under-load/monitor.log",
        "vm-under-load/ng_fwq.cmdout",
        "vm-under-load/ng_ftq.cmdout",
        "vm-under-load/ng_lat_single.cmdout",
        "vm-under-load/ng_loggp.cmdout",
        "vm-under-load/ng_netnoise_mpi_bw_1048576.cmdout",
        "vm-under-load/ng_netnoise_mpi_bw_16777216.cmdout",
        "vm-under-load/ng_netnoise_mpi_lat.cmdout",
        "vm-under-load/ng_one_one_mpi_stripe1.cmdout",
        "vm-under-load/ng_osnoise.cmdout",
        "vm-under-load/ng_osnoise_2ranks.cmdout",
        "vm-under-load/ng_osnoise_rdtsc.cmdout",
        "daint-2022-03-30/ng_loggp.cmdout",
        "daint-2022-03-30/ng_netnoise_mpi_lat.cmdout.head300",
        "daint-2022-03-30/ng_osnoise.cmdout",
        "daint-2022-03-30/wtime_res.out",
        "cloud_noise/description.csv",
        "cloud_noise/description_snapshot_status.txt",
        "README.md",
    ];
    let sources: Vec<String> = SYSTEMS
        .iter()
        .map(|s| format!("cloud_noise/{s}/SOURCE"))
        .collect();
    files.extend(sources.iter().map(String::as_str));
    for file in files {
        match detect(root.join(file)) {
            Err(CalibError::UnknownFormat { .. }) => {}
            other => panic!("{file}: {other:?}"),
        }
    }
    let e = detect(root.join("vm-under-load/ng_osnoise.cmdout")).unwrap_err();
    insta::assert_snapshot!(
        "stdout_log_unknown",
        e.to_string()
            .replace(&*root.display().to_string(), "<captures>")
    );
}

#[test]
fn every_capture_file_is_classified() {
    // Walks the directories so a new capture cannot go untested: every file is either detected
    // and read by `read_capture`, or reported as unknown.
    let Some(root) = captures() else { return };
    let mut dirs = vec![root.clone()];
    let mut n = 0;
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            n += 1;
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            // Large ping-pong files are covered above; keep this walk quick.
            if name.starts_with("ng_netnoise") && !name.contains("summary") {
                continue;
            }
            match detect(&p) {
                Ok(Format::PingPong) => {
                    let opts = PingPongOptions::default().with_size(1);
                    read_capture(&p, None, &opts).unwrap();
                }
                Ok(f) => {
                    let c = read_capture(&p, Some(f), &PingPongOptions::default())
                        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    assert!(!matches!(c, Capture::PingPong(_)));
                }
                Err(CalibError::UnknownFormat { .. }) => {}
                Err(e) => panic!("{}: {e}", p.display()),
            }
        }
    }
    assert!(n >= 80, "{n} files");
}

#[test]
fn quantile_tables_fit_every_distribution() {
    // KS(table, samples) < 0.005 for every ping-pong capture (and the detour durations), with
    // at most 2000 points; inverse-CDF draws on a fine grid agree with the samples too.
    let Some(root) = captures() else { return };
    let mut dists: Vec<(String, Vec<f64>)> = Vec::new();
    for &(file, size, ..) in PINGPONG {
        let pp = read_pingpong(root.join(file), &PingPongOptions::default()).unwrap();
        let v = if size == 1 {
            pp.samples_us
        } else {
            pp.per_byte_ps()
        };
        dists.push((file.to_string(), v));
    }
    for &(file, ..) in SELFISH {
        let tr = read_selfish(root.join(file)).unwrap();
        let d: Vec<f64> = tr
            .stitched()
            .detours
            .iter()
            .map(|d| d.duration_ns)
            .collect();
        dists.push((file.to_string(), d));
    }
    for (name, v) in &dists {
        let t = QuantileTable::compress(v, 200, 10).unwrap();
        let ks = t.ks_to_samples(v);
        eprintln!(
            "{name}: {} samples -> {} points, KS {ks:.5}",
            v.len(),
            t.len()
        );
        assert!(t.len() <= 2000, "{name}: {} points", t.len());
        assert!(ks < 0.005, "{name}: KS {ks}");
        assert_eq!(t.probs[0], 0.0);
        // The table ends where the exact tail (every sample above the 99.9th percentile)
        // begins; the tail holds the largest samples as they are.
        let k = v.len().div_ceil(1000).min(2048);
        let m = v.len() - k;
        assert_eq!(*t.probs.last().unwrap(), m as f64 / v.len() as f64);
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(t.tail, sorted[m..], "{name}");
        assert_eq!(*t.values.last().unwrap(), sorted[m - 1], "{name}");
        assert!(t.probs.windows(2).all(|w| w[0] < w[1]));
        let n = v.len().min(200_000);
        let draws: Vec<f64> = (0..n)
            .map(|i| t.quantile((i as f64 + 0.5) / n as f64))
            .collect();
        let ks2 = ks_two_sample(&draws, v);
        assert!(ks2 < 0.005, "{name}: two-sample KS {ks2}");
    }
}
