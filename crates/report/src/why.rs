//! Why a cell's runs take as long as they do: the critical-path attribution of some of its
//! repetitions and of its noiseless run, as the result model keeps it ([`CellWhy`], the
//! `why` key of a cell in JSON), and what it says about the extra time noise adds
//! ([`ExtraTime`]).
//!
//! The parts are those of `loggops-explain` (its `Part`, in the same order, [`PARTS`]): every
//! picosecond of a run's critical path is compute, CPU overhead, NIC gap (bandwidth), latency,
//! waiting for a busy CPU or NIC, OS detours or network noise (drawn minus noiseless L, G, o,
//! g; negative when the draws were below the base), so a path's parts sum to its finishing
//! time. Repetitions' draws are keyed by (seed, repetition), so the repetitions attributed
//! (by default the first few of a cell) are a random sample of the cell's distribution; with
//! `--critical-path` every repetition is attributed.
//!
//! # The extra time
//! The extra time of the attributed repetitions over the noiseless run, per part, is the mean
//! of the part over them minus its noiseless value; the parts' extras sum to their mean
//! finishing time minus the noiseless time, and a part's *share* is its extra over that
//! total: "84 % of the extra time is network noise on the critical path".

use serde::{Deserialize, Serialize};

/// The parts of a critical path, in `loggops-explain`'s order: `(key, label, phrase)`; JSON
/// and CSV keys are the key with `_ps` appended.
pub const PARTS: [(&str, &str, &str); 8] = [
    ("compute", "compute (calc)", "compute"),
    ("cpu_overhead", "CPU overhead (o, O·size)", "CPU overhead"),
    ("nic_gap", "NIC gap (g, G·size)", "NIC gap (bandwidth)"),
    ("latency", "latency (L)", "latency"),
    (
        "wait_cpu",
        "waiting for a busy CPU",
        "waiting for busy CPUs",
    ),
    (
        "wait_nic",
        "waiting for a busy NIC",
        "waiting for busy NICs",
    ),
    ("os_detour", "OS detours", "OS detours"),
    ("network_noise", "network noise", "network noise"),
];

/// Picoseconds per part of one critical path ([`PARTS`] order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PartsPs {
    pub compute_ps: i64,
    pub cpu_overhead_ps: i64,
    pub nic_gap_ps: i64,
    pub latency_ps: i64,
    pub wait_cpu_ps: i64,
    pub wait_nic_ps: i64,
    pub os_detour_ps: i64,
    pub network_noise_ps: i64,
}

impl PartsPs {
    /// From the values in [`PARTS`] order.
    pub fn from_array(v: [i64; 8]) -> PartsPs {
        PartsPs {
            compute_ps: v[0],
            cpu_overhead_ps: v[1],
            nic_gap_ps: v[2],
            latency_ps: v[3],
            wait_cpu_ps: v[4],
            wait_nic_ps: v[5],
            os_detour_ps: v[6],
            network_noise_ps: v[7],
        }
    }

    /// The values in [`PARTS`] order.
    pub fn to_array(&self) -> [i64; 8] {
        [
            self.compute_ps,
            self.cpu_overhead_ps,
            self.nic_gap_ps,
            self.latency_ps,
            self.wait_cpu_ps,
            self.wait_nic_ps,
            self.os_detour_ps,
            self.network_noise_ps,
        ]
    }

    pub fn total(&self) -> i64 {
        self.to_array().iter().sum()
    }
}

/// The derivatives of the finishing time read from a path: how many latency, `o` and `g`
/// terms lie on it, and the bytes charged at `G` and `O`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[allow(non_snake_case)]
pub struct Sensitivity {
    pub dT_dL: u64,
    pub dT_do: u64,
    pub dT_dg: u64,
    pub dT_dG_per_byte: u64,
    pub dT_dO_per_byte: u64,
}

/// The attribution of one run's critical path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathParts {
    /// The repetition (0 for the noiseless run).
    pub rep: u64,
    /// Its finishing time, ps: the sum of its parts.
    pub finish_ps: u64,
    pub parts: PartsPs,
    pub sensitivity: Sensitivity,
    /// Ties on the path (the derivatives are one-sided there).
    pub ties: u32,
}

/// The attributed runs of one cell.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CellWhy {
    /// The noiseless run of the same workload, system and nodes.
    pub noiseless: Option<PathParts>,
    /// The repetitions attributed, by repetition (none in a noiseless cell).
    pub reps: Vec<PathParts>,
}

/// The extra time of a cell's attributed repetitions over its noiseless run, per part.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraTime {
    /// How many repetitions were attributed.
    pub n: usize,
    /// Their mean finishing time, and the noiseless one, ps.
    pub mean_ps: f64,
    pub noiseless_ps: u64,
    /// Mean per part over the attributed repetitions ([`PARTS`] order), ps.
    pub mean_parts_ps: [f64; 8],
    /// Mean minus noiseless per part, ps; they sum to [`ExtraTime::total_ps`].
    pub extra_ps: [f64; 8],
    pub total_ps: f64,
}

impl ExtraTime {
    /// A part's share of the extra time (`None` when there is no extra time).
    pub fn share(&self, part: usize) -> Option<f64> {
        (self.total_ps > 0.0).then(|| self.extra_ps[part] / self.total_ps)
    }

    /// The part with the largest share of the extra time.
    pub fn main_part(&self) -> Option<usize> {
        if self.total_ps <= 0.0 {
            return None;
        }
        (0..8).max_by(|&a, &b| self.extra_ps[a].total_cmp(&self.extra_ps[b]))
    }
}

impl CellWhy {
    /// The extra time of the attributed repetitions over the noiseless run (`None` without
    /// both).
    pub fn extra(&self) -> Option<ExtraTime> {
        let base = self.noiseless.as_ref()?;
        if self.reps.is_empty() {
            return None;
        }
        let n = self.reps.len() as f64;
        let mut mean_parts = [0f64; 8];
        for r in &self.reps {
            for (m, v) in mean_parts.iter_mut().zip(r.parts.to_array()) {
                *m += v as f64 / n;
            }
        }
        let b = base.parts.to_array();
        let mut extra = [0f64; 8];
        for i in 0..8 {
            extra[i] = mean_parts[i] - b[i] as f64;
        }
        let mean = self.reps.iter().map(|r| r.finish_ps as f64).sum::<f64>() / n;
        Some(ExtraTime {
            n: self.reps.len(),
            mean_ps: mean,
            noiseless_ps: base.finish_ps,
            mean_parts_ps: mean_parts,
            extra_ps: extra,
            total_ps: mean - base.finish_ps as f64,
        })
    }

    /// Which repetitions were attributed, as people read it: `0-3`, `0-999`, `0, 2, 5`.
    pub fn reps_text(&self) -> String {
        let r: Vec<u64> = self.reps.iter().map(|p| p.rep).collect();
        match (r.first(), r.last()) {
            (Some(&a), Some(&b)) if b - a + 1 == r.len() as u64 && r.len() > 2 => {
                format!("{a}-{b}")
            }
            _ => r.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(rep: u64, parts: [i64; 8]) -> PathParts {
        PathParts {
            rep,
            finish_ps: parts.iter().sum::<i64>() as u64,
            parts: PartsPs::from_array(parts),
            sensitivity: Sensitivity::default(),
            ties: 0,
        }
    }

    #[test]
    fn extra_time_sums_and_shares() {
        let why = CellWhy {
            noiseless: Some(path(0, [100, 0, 50, 10, 0, 0, 0, 0])),
            reps: vec![
                path(0, [100, 0, 50, 10, 0, 0, 30, 10]),
                path(1, [100, 0, 50, 10, 0, 0, 10, -10]),
            ],
        };
        let e = why.extra().unwrap();
        assert_eq!(e.total_ps, 20.0);
        assert_eq!(e.extra_ps.iter().sum::<f64>(), 20.0);
        assert_eq!(e.share(6), Some(1.0));
        assert_eq!(e.share(7), Some(0.0));
        assert_eq!(e.main_part(), Some(6));
        assert_eq!(why.reps_text(), "0, 1");
        let none = CellWhy::default();
        assert!(none.extra().is_none());
    }
}
