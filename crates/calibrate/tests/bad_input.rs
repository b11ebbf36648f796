//! Hand-made inputs, good and bad: every error message and warning is pinned by a snapshot.

mod common;
use common::{selfish_run, Tmp};

use std::io::Write;
use std::path::Path;

use loggops_calibrate::{
    detect, read_capture, read_loggp, read_pingpong, read_pingpong_from, read_quanta, read_selfish,
    read_selfish_from, read_summary, read_sysjitter_raw, CalibError, Format, PingPongOptions,
    QuantumOptions, WarningKind,
};

fn pingpong_text(size: u64, blocks: usize, per_block: usize) -> String {
    let mut s = String::new();
    for b in 0..blocks {
        s.push_str("#size\trtt\n");
        for i in 0..per_block {
            s.push_str(&format!(
                "{size}\t{:.6}\n",
                1.5 + 0.001 * ((b * 7 + i) % 13) as f64
            ));
        }
    }
    s
}

fn latency() -> PingPongOptions {
    PingPongOptions::latency()
}

// ---------------------------------------------------------------- ping-pong

#[test]
fn pingpong_counts_and_warmup() {
    let t = Tmp::new();
    let p = t.file("lat.out", pingpong_text(1, 3, 1000).as_bytes());
    let pp = read_pingpong(&p, &latency()).unwrap();
    assert_eq!(pp.rows, 3000);
    assert_eq!(pp.blocks, 3);
    assert_eq!(pp.headers, 3);
    assert_eq!(pp.warmup_dropped, 63);
    assert_eq!(pp.samples_us.len(), 2937);
    assert!(pp.warnings.is_empty(), "{:?}", pp.warnings);
    // The first kept sample is row 21 of block 0: 1.5 + 0.001 * (21 % 13).
    assert_eq!(pp.samples_us[0], 1.508);
    assert_eq!(pp.samples_ps[0], 1_508_000);
    // Configurable warm-up.
    let none = PingPongOptions {
        warmup: 0,
        ..latency()
    };
    assert_eq!(read_pingpong(&p, &none).unwrap().samples_us.len(), 3000);
}

#[test]
fn pingpong_xz_is_recognised_by_magic_not_name() {
    let t = Tmp::new();
    let text = pingpong_text(1, 2, 1000);
    let p = t.xz("plain-looking-name.txt", text.as_bytes());
    assert_eq!(detect(&p).unwrap(), Format::PingPong);
    let pp = read_pingpong(&p, &latency()).unwrap();
    assert_eq!(pp.samples_us.len(), 2 * 979);
    // And a plain file named .xz is read as plain text.
    let q = t.file("not-compressed.xz", text.as_bytes());
    assert_eq!(
        read_pingpong(&q, &latency()).unwrap().samples_us,
        pp.samples_us
    );
    // Streaming from any BufRead.
    let r = read_pingpong_from(std::io::Cursor::new(text.into_bytes()), "mem", &latency()).unwrap();
    assert_eq!(r.samples_us, pp.samples_us);
}

#[test]
fn empty_file() {
    let t = Tmp::new();
    let p = t.file("empty.out", b"");
    insta::assert_snapshot!(
        "empty_pingpong",
        t.msg(read_pingpong(&p, &latency()).unwrap_err())
    );
    insta::assert_snapshot!("empty_selfish", t.msg(read_selfish(&p).unwrap_err()));
    insta::assert_snapshot!("empty_loggp", t.msg(read_loggp(&p).unwrap_err()));
    insta::assert_snapshot!("empty_detect", t.msg(detect(&p).unwrap_err()));
    let q = t.xz("empty.xz", b"");
    insta::assert_snapshot!(
        "empty_xz",
        t.msg(read_pingpong(&q, &latency()).unwrap_err())
    );
}

#[test]
fn header_only() {
    let t = Tmp::new();
    let p = t.file("hdr.out", b"#size\trtt\n#size\trtt\n");
    insta::assert_snapshot!(
        "header_only",
        t.msg(read_pingpong(&p, &latency()).unwrap_err())
    );
}

#[test]
fn truncated_mid_row() {
    let t = Tmp::new();
    let mut text = pingpong_text(1, 1, 1000);
    text.push_str("#size\trtt\n");
    for _ in 0..500 {
        text.push_str("1\t1.600000\n");
    }
    text.push_str("1\t1.6"); // cut off mid-number: would parse as a plausible 1.6
    let p = t.file("cut.out", text.as_bytes());
    let pp = read_pingpong(&p, &latency()).unwrap();
    assert_eq!(pp.rows, 1501);
    assert_eq!(pp.skipped, 1);
    assert_eq!(pp.skipped_lines, vec![1503]);
    assert_eq!(pp.samples_us.len(), 979 + 500 - 21);
    let msgs: Vec<String> = pp.warnings.iter().map(|w| w.to_string()).collect();
    insta::assert_snapshot!("truncated_mid_row", msgs.join("\n"));
}

#[test]
fn truncated_xz_stream() {
    let t = Tmp::new();
    let mut enc = liblzma::write::XzEncoder::new(Vec::new(), 6);
    enc.write_all(pingpong_text(1, 50, 1000).as_bytes())
        .unwrap();
    let full = enc.finish().unwrap();
    let p = t.file("cut.out.xz", &full[..full.len() / 2]);
    let e = read_pingpong(&p, &latency()).unwrap_err();
    let CalibError::Read { line, .. } = &e else {
        panic!("{e}")
    };
    assert!(*line > 0);
    // The line depends on the decoder's buffering; pin the rest of the message.
    let m = t
        .msg(&e)
        .replace(&format!("after line {line}"), "after line N");
    insta::assert_snapshot!("truncated_xz", m);
}

#[test]
fn nan_and_garbage_rows_are_skipped_with_lines() {
    let t = Tmp::new();
    let mut text = String::from("#size\trtt\n");
    for i in 0..1000 {
        match i {
            100 => text.push_str("1\tnan\n"),
            200 => text.push_str("1\t-nan\n"),
            300 => text.push_str("1\tinf\n"),
            400 => text.push_str("1\t0.000000\n"),
            500 => text.push_str("x\t1.5\n"),
            600 => text.push_str("1\t1.5\t7\n"),
            _ => text.push_str("1\t1.500000\n"),
        }
    }
    let p = t.file("nan.out", text.as_bytes());
    let pp = read_pingpong(&p, &latency()).unwrap();
    assert_eq!(pp.skipped, 6);
    assert_eq!(pp.skipped_lines, vec![102, 202, 302, 402, 502]);
    assert_eq!(pp.samples_us.len(), 1000 - 21 - 6);
    assert_eq!(pp.warnings.len(), 1);
    assert_eq!(pp.warnings[0].kind, WarningKind::SkippedRows);
    insta::assert_snapshot!("nan_rows", pp.warnings[0].to_string());
}

#[test]
fn mostly_garbage_is_rejected() {
    let t = Tmp::new();
    let mut text = String::from("#size\trtt\n");
    for i in 0..100 {
        text.push_str(if i % 2 == 0 { "1\tnan\n" } else { "1\t1.5\n" });
    }
    let p = t.file("bad.out", text.as_bytes());
    insta::assert_snapshot!(
        "too_many_bad_rows",
        t.msg(read_pingpong(&p, &latency()).unwrap_err())
    );
}

#[test]
fn mixed_sizes() {
    let t = Tmp::new();
    let mut text = pingpong_text(1, 2, 1000);
    text.push_str(&pingpong_text(8, 1, 1000));
    text.push_str(&pingpong_text(16 << 20, 1, 1000));
    let p = t.file("mixed.out", text.as_bytes());
    insta::assert_snapshot!(
        "mixed_sizes",
        t.msg(read_pingpong(&p, &latency()).unwrap_err())
    );
    let one = read_pingpong(&p, &latency().with_size(8)).unwrap();
    assert_eq!(one.samples_us.len(), 979);
    assert_eq!(one.other_sizes.len(), 2);
    // Size changes inside one header-delimited run start a new block (each with warm-up).
    let mut sweep = String::from("#size\trtt\n");
    for s in [1u64, 2, 4] {
        for _ in 0..100 {
            sweep.push_str(&format!("{s}\t1.000000\n"));
        }
    }
    let q = t.file("sweep.out", sweep.as_bytes());
    let opts = PingPongOptions {
        block_len: Some(100),
        ..latency().with_size(2)
    };
    let two = read_pingpong(&q, &opts).unwrap();
    assert_eq!(
        (two.blocks, two.warmup_dropped, two.samples_us.len()),
        (1, 21, 79)
    );
    assert!(two.warnings.is_empty(), "{:?}", two.warnings);
    insta::assert_snapshot!(
        "size_not_found",
        t.msg(read_pingpong(&q, &latency().with_size(3)).unwrap_err())
    );
}

#[test]
fn bandwidth_file_given_as_latency() {
    let t = Tmp::new();
    let mut text = String::from("#size\trtt\n");
    for i in 0..1000 {
        text.push_str(&format!("16777216\t{:.6}\n", 1800.0 + (i % 7) as f64));
    }
    let p = t.file("ng_netnoise_mpi_bw.out", text.as_bytes());
    insta::assert_snapshot!(
        "bw_as_latency",
        t.msg(read_pingpong(&p, &latency()).unwrap_err())
    );
    let q = t.file("lat.out", pingpong_text(1, 1, 1000).as_bytes());
    insta::assert_snapshot!(
        "latency_as_bw",
        t.msg(read_pingpong(&q, &PingPongOptions::bandwidth()).unwrap_err())
    );
}

#[test]
fn short_and_long_blocks_are_reported() {
    let t = Tmp::new();
    let mut text = pingpong_text(1, 2, 1000);
    text.push_str(&pingpong_text(1, 1, 300)); // a run cut short
    text.push_str("#size\trtt\n");
    for _ in 0..2500 {
        text.push_str("1\t1.500000\n"); // a run of 2500 under one header
    }
    let p = t.file("blocks.out", text.as_bytes());
    let pp = read_pingpong(&p, &latency()).unwrap();
    assert_eq!(pp.blocks, 2 + 1 + 3);
    assert_eq!(pp.warmup_dropped, 21 * 6);
    let msgs: Vec<String> = pp.warnings.iter().map(|w| w.to_string()).collect();
    insta::assert_snapshot!("block_lengths", msgs.join("\n"));
}

#[test]
fn wrong_format_given() {
    let t = Tmp::new();
    let selfish = "# Benchmark Method: selfish\n# Selfish Benchmark\n# Time [ns]\tselfish duration [ns]\n0.00\t100.00\n";
    let p = t.file("os.out", selfish.as_bytes());
    insta::assert_snapshot!(
        "selfish_as_pingpong",
        t.msg(read_pingpong(&p, &latency()).unwrap_err())
    );
    let q = t.file("lat.out", pingpong_text(1, 1, 10).as_bytes());
    insta::assert_snapshot!("pingpong_as_selfish", t.msg(read_selfish(&q).unwrap_err()));
    insta::assert_snapshot!("pingpong_as_loggp", t.msg(read_loggp(&q).unwrap_err()));
    insta::assert_snapshot!(
        "pingpong_as_fwq",
        t.msg(read_capture(&q, Some(Format::Fwq), &latency()).unwrap_err())
    );
    // A headerless selfish list given as ping-pong.
    let r = t.file("bare.out", b"0.00\t5960.35\n9535.96\t17403.10\n");
    assert_eq!(detect(&r).unwrap(), Format::Selfish);
    insta::assert_snapshot!(
        "bare_selfish_as_pingpong",
        t.msg(read_pingpong(&r, &latency()).unwrap_err())
    );
}

#[test]
fn unknown_format() {
    let t = Tmp::new();
    let p = t.file("x.csv", b"time,value\n1,2\n3,4\n");
    insta::assert_snapshot!("unknown_format", t.msg(detect(&p).unwrap_err()));
    let gz = t.file("x.gz", [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
    insta::assert_snapshot!("gzip", t.msg(detect(&gz).unwrap_err()));
    let bin = t.file("x.bin", [0, 159, 146, 150, 255, 0, 10]);
    insta::assert_snapshot!("binary", t.msg(detect(&bin).unwrap_err()));
    insta::assert_snapshot!(
        "missing_file",
        t.msg(detect(t.path().join("nope.out")).unwrap_err())
    );
    assert_eq!(
        "pingpong".parse::<Format>().unwrap(),
        Format::PingPong,
        "--format names parse"
    );
}

// ---------------------------------------------------------------- selfish

#[test]
fn selfish_concatenated_runs_are_stitched() {
    let t = Tmp::new();
    let rows = [(0.0, 500.0), (1000.0, 600.0), (5000.0, 700.0)];
    let mut text = selfish_run(&rows, Some(2.0));
    text.push_str(&selfish_run(&rows, None)); // last run cut before its trailer
    let p = t.file("os.out", text.as_bytes());
    let tr = read_selfish(&p).unwrap();
    assert_eq!(tr.runs.len(), 2);
    assert_eq!(tr.runs[0].t_min_ns, Some(40.5));
    assert_eq!(tr.runs[0].threshold_pct, Some(900.0));
    assert_eq!(tr.runs[0].iterations, Some(1000));
    assert_eq!(tr.runs[0].period_s, Some(2.0));
    assert_eq!(tr.runs[0].overhead_pct, Some(0.5));
    assert_eq!(tr.runs[1].first_line, 20);
    assert_eq!(tr.runs[1].period_s, None);
    let st = tr.stitched();
    let starts: Vec<f64> = st.detours.iter().map(|d| d.start_ns).collect();
    assert_eq!(
        starts,
        vec![0.0, 1000.0, 5000.0, 2e9, 2e9 + 1000.0, 2e9 + 5000.0]
    );
    assert_eq!(st.period_ns, 2e9 + 5700.0);
    let (s, d, per) = st.to_ps();
    assert_eq!(s[3], 2_000_000_000_000);
    assert_eq!(d[0], 500_000);
    assert_eq!(per, 2_000_005_700_000);
    let msgs: Vec<String> = tr.warnings.iter().map(|w| w.to_string()).collect();
    insta::assert_snapshot!("selfish_missing_trailer", msgs.join("\n"));
}

#[test]
fn selfish_restart_without_header() {
    let t = Tmp::new();
    let text = "0.00\t10.00\n100.00\t20.00\n0.00\t30.00\n50.00\t40.00\n";
    let tr = read_selfish_from(std::io::Cursor::new(text.as_bytes().to_vec()), "bare.out").unwrap();
    assert_eq!(tr.runs.len(), 2);
    let st = tr.stitched();
    let starts: Vec<f64> = st.detours.iter().map(|d| d.start_ns).collect();
    assert_eq!(starts, vec![0.0, 100.0, 120.0, 170.0]);
    let msgs: Vec<String> = tr.warnings.iter().map(|w| w.to_string()).collect();
    insta::assert_snapshot!("selfish_restart", t.msg(msgs.join("\n")));
}

#[test]
fn selfish_unsorted_detours() {
    let t = Tmp::new();
    let text = selfish_run(&[(0.0, 500.0), (3000.0, 600.0), (2000.0, 700.0)], Some(1.0));
    let p = t.file("os.out", text.as_bytes());
    insta::assert_snapshot!("selfish_unsorted", t.msg(read_selfish(&p).unwrap_err()));
}

#[test]
fn implausible_values_are_rejected_with_their_line() {
    let t = Tmp::new();
    let mut text = pingpong_text(1, 1, 30);
    text.push_str("1\t1e300\n");
    let p = t.file("lat.out", text.as_bytes());
    insta::assert_snapshot!(
        "pingpong_implausible",
        t.msg(read_pingpong(&p, &latency()).unwrap_err())
    );
    // One hour is the limit; just below it is a (very heavy) sample.
    let mut text = pingpong_text(1, 1, 30);
    text.push_str("1\t3600000000\n");
    let p = t.file("lat2.out", text.as_bytes());
    let pp = read_pingpong(&p, &latency()).unwrap();
    assert_eq!(pp.samples_ps.last(), Some(&3_600_000_000_000_000));
    // The heavy-tail warning prints the ratio in exponent form, not 300 digits.
    let w = pp
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        w.contains("max = 3600s is 2.39e9x the median (limit 100x)"),
        "{w}"
    );
    let text = selfish_run(&[(0.0, 500.0), (3000.0, 4e12)], Some(1.0));
    let p = t.file("os.out", text.as_bytes());
    insta::assert_snapshot!("selfish_implausible", t.msg(read_selfish(&p).unwrap_err()));
}

#[test]
fn selfish_negative_duration() {
    let t = Tmp::new();
    let text = selfish_run(&[(0.0, 500.0), (3000.0, -6.0)], Some(1.0));
    let p = t.file("os.out", text.as_bytes());
    insta::assert_snapshot!("selfish_negative", t.msg(read_selfish(&p).unwrap_err()));
}

#[test]
fn selfish_nan_row_and_overlap() {
    let t = Tmp::new();
    let mut rows = vec![(0.0, 500.0), (300.0, 600.0)];
    rows.extend((1..=20).map(|i| (1000.0 * i as f64, 10.0)));
    let mut text = selfish_run(&rows, None);
    text.push_str("nan\t5.00\n50000.00\t12.00\n# CPU overhead due to noise: 0.50%\n# Measurement period: 0.00 s\n");
    let p = t.file("os.out", text.as_bytes());
    let tr = read_selfish(&p).unwrap();
    assert_eq!(tr.skipped, 1);
    assert_eq!(tr.runs[0].detours.len(), 23);
    // 10 % of the rows unusable is too many.
    let mut bad = selfish_run(&[(0.0, 500.0)], None);
    bad.push_str("nan\t5.00\n");
    let q = t.file("bad.out", bad.as_bytes());
    insta::assert_snapshot!("selfish_too_many_bad", t.msg(read_selfish(&q).unwrap_err()));
    let msgs: Vec<String> = tr.warnings.iter().map(|w| w.to_string()).collect();
    insta::assert_snapshot!("selfish_nan_overlap", msgs.join("\n"));
}

// ---------------------------------------------------------------- FWQ / FTQ

#[test]
fn fwq_out_of_order_and_ftq_without_quantum() {
    let t = Tmp::new();
    let p = t.file(
        "fwq.out",
        b"# Benchmark Method: fwq\n# Fixed Work Quantum Benchmark\n0             1000\n2             1001\n",
    );
    insta::assert_snapshot!("fwq_order", t.msg(read_quanta(&p).unwrap_err()));
    let q = t.file(
        "ftq.out",
        b"# Fixed Time Quantum Benchmark\n 0                100\n 1                50\n",
    );
    let ftq = read_quanta(&q).unwrap();
    insta::assert_snapshot!(
        "ftq_no_quantum",
        t.msg(ftq.to_detours(&QuantumOptions::default()).unwrap_err())
    );
    let r = t.file(
        "fwq2.out",
        b"# Benchmark Method: fwq\n# Compute-Cycle Duration: 1000 usec\n# Number of Cycles/Detours: 4\n0 1000\n1 1000\n2 1500\n",
    );
    let fwq = read_quanta(&r).unwrap();
    let d = fwq.to_detours(&QuantumOptions::default()).unwrap();
    assert_eq!(d.detours.len(), 1);
    assert_eq!(
        (d.detours[0].start_ns, d.detours[0].duration_ns),
        (3e6, 0.5e6)
    );
    assert_eq!(d.period_ns, 3.5e6);
    let msgs: Vec<String> = fwq.warnings.iter().map(|w| w.to_string()).collect();
    insta::assert_snapshot!("fwq_short", msgs.join("\n"));
}

// ---------------------------------------------------------------- LogGP

const LOGGP_HEADER: &str = "# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)\n# to get o: plot \"./loggp.out\" using 1:(($5-$3)/($2-1)-$3)\n# to get g,G: plot \"./loggp.out\" using 1:($4-$3)/($2-1)\n";

#[test]
fn loggp_nan_inf_and_duplicates() {
    let t = Tmp::new();
    let text = format!(
        "{LOGGP_HEADER}1 10 2.000000 4.000000 22.000000 1.000000 0.200000 0.400000 -nan -nan -nan\n\
         1025 10 3.000000 17.000000 49.000000 1.000000 1.600000 1.600000 0.300000 0.001000 inf\n\
         2049 10 4.000000 23.000000 61.000000 1.000000 2.100000 1.800000 0.400000 0.000900 0.200000\n\
         2049 10 4.000000 23.500000 61.000000 1.000000 2.200000 1.900000 0.500000 0.000800 0.000000\n\
         3073 10 4.500000 25.000000 66.000000 1.000000 2.300000 2.200000 nan 0.000700 0.300000\n"
    );
    let p = t.file("loggp.out", text.as_bytes());
    let fit = read_loggp(&p).unwrap();
    assert_eq!(fit.rows.len(), 5);
    assert_eq!(fit.rows_by_size().len(), 4);
    assert_eq!(fit.rows_by_size()[2].g_us, 0.5);
    let s = fit.summary().unwrap();
    assert_eq!(s.l_ps, 1e6);
    assert!((s.o_ps - 0.3e6).abs() < 1e-6);
    assert_eq!(s.o_line, 4);
    // The last row has a NaN g, so g and G come from the duplicate 2049 row.
    assert_eq!(s.gap_line, 7);
    assert!((s.g_ps - 0.5e6).abs() < 1e-6);
    assert!((s.big_g_ps_per_byte - 800.0).abs() < 1e-6);
    let msgs: Vec<String> = fit.warnings.iter().map(|w| w.to_string()).collect();
    insta::assert_snapshot!("loggp_warnings", msgs.join("\n"));
    let g = fit.fit_gap(1025, 3073).unwrap();
    assert_eq!(g.rows_used, 3);
}

#[test]
fn loggp_negative_gap_is_clamped_and_bad_rows_reported() {
    let t = Tmp::new();
    let text = format!(
        "{LOGGP_HEADER}1 10 2.000000 4.000000 22.000000 1.000000 0.200000 0.400000 -nan -nan -nan\n\
         1025 10 3.000000 17.000000 49.000000 1.000000 1.600000 1.600000 -0.300000 0.001000 0.1\n\
         2049 10 4.000000\n"
    );
    let p = t.file("loggp.out", text.as_bytes());
    let fit = read_loggp(&p).unwrap();
    assert_eq!(fit.rows.len(), 2);
    let s = fit.summary().unwrap();
    assert_eq!(s.g_ps, 0.0);
    let mut msgs: Vec<String> = fit.warnings.iter().map(|w| w.to_string()).collect();
    msgs.extend(s.warnings.iter().map(|w| w.to_string()));
    insta::assert_snapshot!("loggp_clamp", msgs.join("\n"));
    let only_first = t.file(
        "l1.out",
        format!("{LOGGP_HEADER}1 10 2.000000 4.000000 22.000000 1.000000 0.200000 0.400000 -nan -nan -nan\n").as_bytes(),
    );
    insta::assert_snapshot!(
        "loggp_no_gap",
        t.msg(read_loggp(&only_first).unwrap().summary().unwrap_err())
    );
}

// ---------------------------------------------------------------- summary, sysjitter

#[test]
fn summary_bad_row() {
    let t = Tmp::new();
    let text = "## Netgauge v2.4.6 - mode mpi - 2 processes\n\
                1 - 0.25 0.87 0.56 29.79 (2.21 4) - 0.53 117.53 0.93 6001.51 (665.32 7) - 0.00 0.07 8.60 14.97\n\
                2 - 0.26 0.52 0.51 1.56 (0.21 7) - 0.54 41.27\n";
    let p = t.file("sum.out", text.as_bytes());
    let s = read_summary(&p).unwrap();
    assert_eq!(s.rows.len(), 1);
    assert_eq!(s.rows[0].rtt_half.avg_us, 117.53);
    assert_eq!(s.rows[0].throughput_mbit_s.from_max_rtt, 0.0);
    insta::assert_snapshot!("summary_bad_row", s.warnings[0].to_string());
}

#[test]
fn sysjitter_raw() {
    let t = Tmp::new();
    let text = "# cpu_mhz: 2000\n# threshold: 200ns\n# n_interruptions: 3\n# interruption: 0.010000%\n\
                # total_interruption: 3000 cycles\n# total_runtime: 2000000000 cycles\n\
                # total_interruption: 0.000001500 seconds\n# total_runtime: 1.000000000 seconds\n#\n\
                #      Timestamp      delta   <== interruption =>\n#         (nsec)     (usec)   (cycles)     (nsec)\n\
                \x20        1000000          0       1000        500\n\
                \x20        2000000       1000       1200        600\n\
                \x20        5000000       3000        800        400\n";
    let p = t.file("sj.0", text.as_bytes());
    assert_eq!(detect(&p).unwrap(), Format::SysjitterRaw);
    let s = read_sysjitter_raw(&p).unwrap();
    assert_eq!(s.cpu_mhz, Some(2000.0));
    assert_eq!(s.threshold_ns, Some(200.0));
    assert_eq!(s.runtime_s, Some(1.0));
    assert!(!s.sorted);
    assert_eq!(s.rows.len(), 3);
    assert!(s.warnings.is_empty());
    let d = s.to_detours();
    assert_eq!(d.period_ns, 1e9);
    assert_eq!(d.detours[2].start_ns, 5e6);
    assert_eq!(d.detours[2].duration_ns, 400.0);
    // `--sort` files: three columns, sorted by length; detours come back in time order.
    let sorted = "# cpu_mhz: 2000\n# threshold: 200ns\n# n_interruptions: 2\n\
                  \x20        5000000        800        400\n\
                  \x20        1000000       1000        500\n";
    let q = t.file("sj.1", sorted.as_bytes());
    let s = read_sysjitter_raw(&q).unwrap();
    assert!(s.sorted);
    let d = s.to_detours();
    assert_eq!(d.detours[0].start_ns, 1e6);
    assert_eq!(d.period_ns, 5e6 + 400.0);
}

#[test]
fn read_capture_dispatches() {
    let t = Tmp::new();
    let p = t.file("lat", pingpong_text(1, 1, 100).as_bytes());
    let opts = PingPongOptions {
        block_len: Some(100),
        ..latency()
    };
    match read_capture(&p, None, &opts).unwrap() {
        loggops_calibrate::Capture::PingPong(pp) => assert_eq!(pp.samples_us.len(), 79),
        other => panic!("{other:?}"),
    }
    assert_path_is_tmp(&p, &t);
}

fn assert_path_is_tmp(p: &Path, t: &Tmp) {
    assert!(p.starts_with(t.path()));
}

/// A capture's runs are its blocks in order, with their indices; leaving blocks out keeps the
/// others whole and in order, and what the file held (rows, warm-up) as it was.
#[test]
fn runs_and_blocks_left_out() {
    let t = Tmp::new();
    let p = t.file("runs.out", pingpong_text(1, 4, 30).as_bytes());
    let pp = read_pingpong(&p, &latency()).unwrap();
    let runs = pp.runs();
    assert_eq!(runs.len(), 4);
    assert_eq!(runs.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(runs.iter().all(|r| r.1.len() == 30 - 21));
    let kept = pp.without_blocks(&[0, 2]);
    assert_eq!(kept.blocks, 2);
    assert_eq!(kept.block_starts, [0, 9]);
    let want: Vec<u64> = [runs[1].1, runs[3].1].concat();
    assert_eq!(kept.samples_ps, want);
    assert_eq!(kept.samples_us.len(), want.len());
    assert_eq!(
        (kept.rows, kept.warmup_dropped),
        (pp.rows, pp.warmup_dropped)
    );
}
