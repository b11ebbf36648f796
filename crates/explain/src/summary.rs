//! Critical-path parts across Monte-Carlo repetitions: their distribution per cell and what
//! the slow repetitions spend their extra time on.
//!
//! # p95 inflation
//! The repetitions of a cell are ranked by runtime (ties by repetition number). The *p95
//! band* is ranks `⌈0.925 n⌉` to `⌈0.975 n⌉` (1-based; at least rank `⌈0.95 n⌉`): three
//! repetitions of 32, 51 of 1000, the repetition nearest the p95 and its neighbours. The p95
//! inflation of a part is its mean over the band minus its value in the noiseless run; the
//! parts' inflations add up to the band's mean runtime minus the noiseless runtime, and a
//! part's *share* is its inflation over that total. "62 % of the p95 inflation is OS detours
//! on the critical path" reads: of the time the repetitions around the p95 take beyond the
//! noiseless run, 62 % is OS detour time on their critical paths.

use loggops_engine::Time;

use crate::path::{CriticalPath, Part, Parts, TermCounts};
use crate::sensitivity::Tolerance;

/// What a repetition's critical path says, without the path itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathSummary {
    pub rep: u64,
    pub finish: Time,
    pub parts: Parts,
    pub counts: TermCounts,
    pub ties: u32,
}

impl PathSummary {
    pub fn of(rep: u64, p: &CriticalPath) -> PathSummary {
        PathSummary {
            rep,
            finish: p.finish,
            parts: p.parts,
            counts: p.counts,
            ties: p.ties,
        }
    }
}

/// Mean, median and p95 (numpy's default linear interpolation) of one quantity.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Dist {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
}

impl Dist {
    pub fn of(values: &[i64]) -> Dist {
        let mut v = values.to_vec();
        v.sort_unstable();
        let q = |p: f64| {
            if v.is_empty() {
                return f64::NAN;
            }
            let h = p * (v.len() - 1) as f64;
            let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
            v[lo] as f64 + (h - lo as f64) * (v[hi] as f64 - v[lo] as f64)
        };
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
        Dist {
            mean,
            p50: q(0.5),
            p95: q(0.95),
        }
    }
}

/// The critical-path parts of one cell (workload, system, nodes, noise mode).
#[derive(Clone, Debug, PartialEq)]
pub struct CellPaths {
    pub workload: String,
    pub system: String,
    pub nodes: u64,
    pub mode: String,
    pub noiseless: PathSummary,
    /// Per part (in [`Part::ALL`] order), then the finishing time.
    pub parts: Vec<Dist>,
    pub finish: Dist,
    pub n: usize,
    /// 1-based ranks of the p95 band and the repetitions in it.
    pub band: (usize, usize),
    pub band_reps: Vec<u64>,
    /// Per part: mean over the band minus the noiseless value, ps.
    pub p95_inflation: Vec<f64>,
    /// The band's mean runtime minus the noiseless runtime, ps.
    pub p95_inflation_total: f64,
    /// The noiseless run's latency tolerances, when computed.
    pub tolerance: Vec<Tolerance>,
}

impl CellPaths {
    /// Summarises the repetitions `reps` of a cell against its noiseless run.
    pub fn new(
        workload: impl Into<String>,
        system: impl Into<String>,
        nodes: u64,
        mode: impl Into<String>,
        noiseless: PathSummary,
        reps: &[PathSummary],
    ) -> CellPaths {
        let n = reps.len();
        let parts = Part::ALL
            .iter()
            .map(|&p| Dist::of(&reps.iter().map(|r| r.parts.get(p)).collect::<Vec<_>>()))
            .collect();
        let finish = Dist::of(&reps.iter().map(|r| r.finish as i64).collect::<Vec<_>>());
        let mut order: Vec<&PathSummary> = reps.iter().collect();
        order.sort_by_key(|r| (r.finish, r.rep));
        let rank = |f: f64| ((f * n as f64 - 1e-9).ceil() as usize).clamp(1, n.max(1));
        let band = (rank(0.925), rank(0.975));
        let in_band: Vec<&PathSummary> = if n == 0 {
            Vec::new()
        } else {
            order[band.0 - 1..band.1].to_vec()
        };
        let k = in_band.len().max(1) as f64;
        let p95_inflation = Part::ALL
            .iter()
            .map(|&p| {
                in_band.iter().map(|r| r.parts.get(p) as f64).sum::<f64>() / k
                    - noiseless.parts.get(p) as f64
            })
            .collect();
        let p95_inflation_total =
            in_band.iter().map(|r| r.finish as f64).sum::<f64>() / k - noiseless.finish as f64;
        CellPaths {
            workload: workload.into(),
            system: system.into(),
            nodes,
            mode: mode.into(),
            noiseless,
            parts,
            finish,
            n,
            band,
            band_reps: in_band.iter().map(|r| r.rep).collect(),
            p95_inflation,
            p95_inflation_total,
            tolerance: Vec::new(),
        }
    }

    /// A part's share of the p95 inflation (NaN when there is none).
    pub fn share(&self, p: Part) -> f64 {
        let i = Part::ALL.iter().position(|&q| q == p).unwrap_or(0);
        if self.p95_inflation_total > 0.0 {
            self.p95_inflation[i] / self.p95_inflation_total
        } else {
            f64::NAN
        }
    }

    /// The part with the largest share of the p95 inflation.
    pub fn main_part(&self) -> Option<Part> {
        if self.p95_inflation_total <= 0.0 {
            return None;
        }
        Part::ALL
            .iter()
            .copied()
            .max_by(|&a, &b| self.share(a).total_cmp(&self.share(b)))
    }

    /// The plain sentence of the cell, e.g. "at 1024 nodes on aws (os+net), 62 % of the p95
    /// inflation (+12.3us over the noiseless 45.6us) is OS detours on the critical path".
    pub fn sentence(&self) -> String {
        let head = format!("at {} nodes on {} ({})", self.nodes, self.system, self.mode);
        match self.main_part() {
            None => format!(
                "{head}, the repetitions around the p95 are no slower than the noiseless run \
                 ({})",
                loggops_report::fmt_time_ps(self.noiseless.finish)
            ),
            Some(p) => format!(
                "{head}, {:.0} % of the p95 inflation (+{} over the noiseless {}) is {} on the \
                 critical path",
                100.0 * self.share(p),
                loggops_report::fmt_time_ps_f64(self.p95_inflation_total),
                loggops_report::fmt_time_ps(self.noiseless.finish),
                p.phrase()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(rep: u64, compute: i64, os: i64) -> PathSummary {
        let mut parts = Parts::default();
        parts.0[0] = compute;
        parts.0[6] = os;
        PathSummary {
            rep,
            finish: (compute + os) as Time,
            parts,
            counts: TermCounts::default(),
            ties: 0,
        }
    }

    /// 32 repetitions: the band is ranks 30..=32; their extra time is all OS detours.
    #[test]
    fn p95_band_and_shares() {
        let reps: Vec<PathSummary> = (0..32).map(|i| rep(i, 100, i as i64)).collect();
        let c = CellPaths::new("w", "aws", 1024, "os", rep(99, 100, 0), &reps);
        assert_eq!(c.band, (30, 32));
        assert_eq!(c.band_reps, vec![29, 30, 31]);
        assert_eq!(c.p95_inflation_total, 30.0);
        assert_eq!(c.share(Part::OsDetour), 1.0);
        assert_eq!(c.main_part(), Some(Part::OsDetour));
        assert_eq!(c.parts[6].p50, 15.5);
        assert_eq!(
            c.sentence(),
            "at 1024 nodes on aws (os), 100 % of the p95 inflation (+30ps over the noiseless \
             100ps) is OS detours on the critical path"
        );
        let c1000 = CellPaths::new("w", "aws", 1, "os", rep(0, 1, 0), &[rep(0, 1, 0); 1000]);
        assert_eq!(c1000.band, (925, 975));
    }
}
