//! Helpers shared by the calibration test files.
#![allow(dead_code)] // each test file uses a different subset

use std::io::Write;
use std::path::PathBuf;

/// A temporary directory for capture files.
pub struct Tmp {
    dir: tempfile::TempDir,
}

impl Tmp {
    pub fn new() -> Tmp {
        Tmp {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes `content` to `name` and returns its canonical path.
    pub fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        p.canonicalize().unwrap()
    }

    /// Writes `content` xz-compressed to `name`.
    pub fn xz(&self, name: &str, content: &[u8]) -> PathBuf {
        let mut enc = liblzma::write::XzEncoder::new(Vec::new(), 6);
        enc.write_all(content).unwrap();
        self.file(name, enc.finish().unwrap())
    }

    /// A message with the temporary directory replaced by `<tmp>`.
    pub fn msg(&self, e: impl ToString) -> String {
        let canonical = self.dir.path().canonicalize().unwrap();
        // Reports name files relative to the current directory: replace that form first (it
        // ends in the absolute one).
        e.to_string()
            .replace(&loggops_calibrate::relative_to_cwd(&canonical), "<tmp>")
            .replace(&*canonical.display().to_string(), "<tmp>")
            .replace(&*self.dir.path().display().to_string(), "<tmp>")
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

/// The header selfish (Netgauge `-x noise`) writes before its detour rows.
const PREAMBLE: &str = "# Benchmark Method: selfish\n# Compute-Cycle Duration: 1000 usec\n# Number of Cycles/Detours: 8\n# Sysname : Linux\n# Nodename: n1\n# Release : 6\n# Version : #1\n# Machine : Linux\n# Selfish Benchmark\n# Minimal cycle length [ns]: 40.5 \n# Number of iterations (recorded+unrecorded): 1000 \n# Threshold: [% minimal cycle length]: 900 \n# \n# Time [ns]\tselfish duration [ns]\n";

/// One selfish run: the header, `(time, duration)` rows in ns and, optionally, the trailer
/// with the measurement period.
pub fn selfish_run(rows: &[(f64, f64)], period_s: Option<f64>) -> String {
    let mut s = String::from(PREAMBLE);
    for (a, b) in rows {
        s.push_str(&format!("{a:.2}\t{b:.2}\n"));
    }
    if let Some(p) = period_s {
        s.push_str("# CPU overhead due to noise: 0.50%\n");
        s.push_str(&format!("# Measurement period: {p:.2} s\n"));
    }
    s
}
