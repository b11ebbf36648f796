//! Times the importers on captures given on the command line (or on the largest shared ones).
//!
//! `cargo run --release -p loggops-calibrate --example import_timing -- [FILE...]`

use std::path::PathBuf;
use std::time::Instant;

use loggops_calibrate::stats::QuantileTable;
use loggops_calibrate::{detect, read_capture, Capture, PingPongOptions};

fn main() {
    let mut files: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if files.is_empty() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures");
        files = [
            "cloud_noise/gcp_hpc_c2_SRday/ng_netnoise_mpi_bw.out.xz",
            "cloud_noise/deepest_hpcmetal_0505/ng_netnoise_mpi_lat.out.xz",
            "cloud_noise/oracle_normal_SRday/ng_osnoise.out.xz",
            "vm-under-load/ng_lat_single.out",
        ]
        .iter()
        .map(|f| root.join(f))
        .collect();
    }
    for f in &files {
        let t0 = Instant::now();
        let format = match detect(f) {
            Ok(fmt) => fmt,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let t1 = Instant::now();
        let capture = match read_capture(f, Some(format), &PingPongOptions::default()) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let t2 = Instant::now();
        let (what, samples) = match &capture {
            Capture::PingPong(p) => (
                format!("{} samples", p.samples_us.len()),
                Some(p.samples_us.clone()),
            ),
            Capture::Selfish(s) => (
                format!("{} detours in {} runs", s.detour_count(), s.runs.len()),
                Some(s.stitched().detours.iter().map(|d| d.duration_ns).collect()),
            ),
            other => (format!("{} warnings", other.warnings().len()), None),
        };
        let mut table = String::new();
        if let Some(v) = samples {
            let t3 = Instant::now();
            let q = QuantileTable::compress(&v, 200, 10).expect("samples");
            let t4 = Instant::now();
            table = format!(
                ", table {} points KS {:.5} in {:.3}s",
                q.len(),
                q.ks_to_samples(&v),
                (t4 - t3).as_secs_f64()
            );
        }
        println!(
            "{}: {format} detect {:.3}s read {:.3}s ({what}){table}",
            f.display(),
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64()
        );
    }
}
