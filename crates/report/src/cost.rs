//! Monetary cost of a run and its increase over the noiseless run, as in the paper (Figs. 16 and 17).
//!
//! For one simulated sample with collective time `T_coll`, one iteration of the modelled application
//! takes `T = repeats * T_coll + extra`, where `extra` is compute time outside the simulated schedule
//! (the paper adds the mean measured DGEMM time: 128x128 for the dissemination, 8192x8192 for the
//! ring) and `repeats` counts how often the schedule runs per iteration (the paper doubles the ring
//! to make an allreduce). Then
//!
//! * `USD per run = nodes * price per node-hour * T / 1 h`, for on-demand and committed prices;
//! * `cost increase % = (USD/run - mean USD/run of the noiseless cell) / mean USD/run of the
//!   noiseless cell * 100`, per sample. The paper plots the mean over samples (seaborn `barplot`).
//!   By linearity the mean is `(mean T - T_none) / T_none * 100`: nodes and price cancel, so the
//!   increase is defined even where no price is known, and it is the same for both price kinds.
//!   Its 95 % CI is the image of the mean's t interval under the same affine map (seaborn drew a
//!   bootstrap interval instead).

use crate::stats::{Interval, Summary};
use thiserror::Error;

/// Picoseconds in one hour.
pub const PS_PER_HOUR: f64 = 3.6e15;

/// Errors in a [`CostModel`].
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CostError {
    /// A price is negative, NaN or infinite.
    #[error(
        "invalid {kind} price: expected a finite, non-negative USD per node-hour, found {value}"
    )]
    InvalidPrice {
        /// `on-demand` or `committed`.
        kind: &'static str,
        /// The offending value.
        value: f64,
    },
    /// `nodes` is zero.
    #[error("invalid cost model: the number of nodes must be at least 1, found 0")]
    ZeroNodes,
    /// `comm_repeats` is zero.
    #[error(
        "invalid cost model: the schedule must run at least once per iteration, found 0 repeats"
    )]
    ZeroRepeats,
}

/// How to turn simulated times into money. Build with [`CostModel::new`] and the `with_*` methods.
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    /// Nodes (instances) billed for the whole run.
    pub nodes: u64,
    /// On-demand price, USD per node-hour (the paper's Table I).
    pub on_demand_usd_per_node_hour: Option<f64>,
    /// Committed (3-year, upfront) price, USD per node-hour.
    pub committed_usd_per_node_hour: Option<f64>,
    /// Compute time added to every run outside the simulated schedule (e.g. mean DGEMM time), ps.
    pub extra_ps_per_run: u64,
    /// How many times the simulated schedule runs per iteration (the paper: 2 for the ring allreduce).
    pub comm_repeats: u32,
}

/// Money for one price kind, summarised over a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceCost {
    /// The price used, USD per node-hour.
    pub usd_per_node_hour: f64,
    /// Mean USD per run over the cell's samples.
    pub usd_per_run_mean: f64,
    /// USD per run of the noiseless run, if its time is known.
    pub usd_per_run_noiseless: Option<f64>,
}

/// The cost numbers of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellCost {
    /// The model used.
    pub model: CostModel,
    /// Mean time of one iteration, `repeats * mean + extra`, ps.
    pub run_mean_ps: f64,
    /// Time of one noiseless iteration, ps.
    pub run_noiseless_ps: Option<f64>,
    /// On-demand cost, if that price is known.
    pub on_demand: Option<PriceCost>,
    /// Committed cost, if that price is known.
    pub committed: Option<PriceCost>,
    /// Mean cost increase over noiseless, percent (the paper's number).
    pub increase_pct_mean: Option<f64>,
    /// 95 % CI of the mean cost increase, percent.
    pub increase_pct_ci95: Option<Interval>,
    /// Cost increase of the median run, percent.
    pub increase_pct_median: Option<f64>,
}

/// The cost numbers of one sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleCost {
    /// Iteration time `repeats * time + extra`, ps (saturating at `u64::MAX`).
    pub run_ps: u64,
    /// On-demand USD for this run.
    pub on_demand_usd: Option<f64>,
    /// Committed USD for this run.
    pub committed_usd: Option<f64>,
    /// Cost increase of this run over the noiseless run, percent.
    pub increase_pct: Option<f64>,
}

impl CostModel {
    /// A model for `nodes` nodes with no prices, no extra time and one schedule run per iteration.
    pub fn new(nodes: u64) -> CostModel {
        CostModel {
            nodes,
            on_demand_usd_per_node_hour: None,
            committed_usd_per_node_hour: None,
            extra_ps_per_run: 0,
            comm_repeats: 1,
        }
    }

    /// Sets the on-demand price, USD per node-hour.
    pub fn with_on_demand(mut self, usd_per_node_hour: f64) -> CostModel {
        self.on_demand_usd_per_node_hour = Some(usd_per_node_hour);
        self
    }

    /// Sets the committed price, USD per node-hour.
    pub fn with_committed(mut self, usd_per_node_hour: f64) -> CostModel {
        self.committed_usd_per_node_hour = Some(usd_per_node_hour);
        self
    }

    /// Sets the compute time added to every run, ps.
    pub fn with_extra_ps_per_run(mut self, ps: u64) -> CostModel {
        self.extra_ps_per_run = ps;
        self
    }

    /// Sets how many times the schedule runs per iteration.
    pub fn with_comm_repeats(mut self, repeats: u32) -> CostModel {
        self.comm_repeats = repeats;
        self
    }

    /// Checks prices (finite, non-negative), nodes and repeats (at least 1).
    pub fn validate(&self) -> Result<(), CostError> {
        for (kind, price) in [
            ("on-demand", self.on_demand_usd_per_node_hour),
            ("committed", self.committed_usd_per_node_hour),
        ] {
            if let Some(value) = price {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(CostError::InvalidPrice { kind, value });
                }
            }
        }
        if self.nodes == 0 {
            return Err(CostError::ZeroNodes);
        }
        if self.comm_repeats == 0 {
            return Err(CostError::ZeroRepeats);
        }
        Ok(())
    }

    /// Iteration time for a simulated schedule time: `repeats * comm_ps + extra`, ps.
    pub fn run_time_ps(&self, comm_ps: f64) -> f64 {
        comm_ps * self.comm_repeats as f64 + self.extra_ps_per_run as f64
    }

    /// USD for one iteration at `usd_per_node_hour`: `nodes * price * run time / 1 h`.
    pub fn usd_per_run(&self, usd_per_node_hour: f64, comm_ps: f64) -> f64 {
        self.nodes as f64 * usd_per_node_hour * self.run_time_ps(comm_ps) / PS_PER_HOUR
    }

    /// Cost increase in percent of a run whose schedule took `comm_ps` over the noiseless run whose
    /// schedule took `noiseless_comm_ps` (price and nodes cancel).
    pub fn cost_increase_pct(&self, comm_ps: f64, noiseless_comm_ps: f64) -> f64 {
        let base = self.run_time_ps(noiseless_comm_ps);
        (self.run_time_ps(comm_ps) - base) / base * 100.0
    }

    /// Cost numbers of one sample.
    pub fn sample(&self, comm_ps: u64, noiseless_ps: Option<u64>) -> SampleCost {
        let run = comm_ps as u128 * self.comm_repeats as u128 + self.extra_ps_per_run as u128;
        let t = comm_ps as f64;
        SampleCost {
            run_ps: u64::try_from(run).unwrap_or(u64::MAX),
            on_demand_usd: self
                .on_demand_usd_per_node_hour
                .map(|p| self.usd_per_run(p, t)),
            committed_usd: self
                .committed_usd_per_node_hour
                .map(|p| self.usd_per_run(p, t)),
            increase_pct: noiseless_ps.map(|b| self.cost_increase_pct(t, b as f64)),
        }
    }

    /// Cost numbers of a cell from its summary and the noiseless schedule time.
    pub fn summarize(&self, summary: &Summary, noiseless_ps: Option<u64>) -> CellCost {
        let base = noiseless_ps.map(|b| b as f64);
        let price = |p: Option<f64>| {
            p.map(|p| PriceCost {
                usd_per_node_hour: p,
                usd_per_run_mean: self.usd_per_run(p, summary.mean),
                usd_per_run_noiseless: base.map(|b| self.usd_per_run(p, b)),
            })
        };
        CellCost {
            model: self.clone(),
            run_mean_ps: self.run_time_ps(summary.mean),
            run_noiseless_ps: base.map(|b| self.run_time_ps(b)),
            on_demand: price(self.on_demand_usd_per_node_hour),
            committed: price(self.committed_usd_per_node_hour),
            increase_pct_mean: base.map(|b| self.cost_increase_pct(summary.mean, b)),
            increase_pct_ci95: base.and_then(|b| {
                summary.mean_ci95.map(|ci| Interval {
                    lo: self.cost_increase_pct(ci.lo, b),
                    hi: self.cost_increase_pct(ci.hi, b),
                })
            }),
            increase_pct_median: base.map(|b| self.cost_increase_pct(summary.median, b)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_per_run_hand_computed() {
        // 16384 nodes at 1.73 USD/node-hour for 1 ms: 16384 * 1.73 / 3.6e6 = 0.007873422222... USD.
        let m = CostModel::new(16384).with_on_demand(1.73);
        let usd = m.usd_per_run(1.73, 1e9);
        assert!((usd - 0.007_873_422_222_222_222).abs() < 1e-17, "{usd}");
        // 4 nodes at 3.88 USD for one hour exactly.
        assert!((CostModel::new(4).usd_per_run(3.88, 3.6e15) - 15.52).abs() < 1e-12);
    }

    #[test]
    fn cost_increase_with_extra_and_repeats() {
        // Schedule 100 us noisy vs 40 us noiseless, run twice, plus 20 us compute:
        // (2*100 + 20 - (2*40 + 20)) / (2*40 + 20) = 120 / 100 = +120 %.
        let m = CostModel::new(64)
            .with_on_demand(4.03)
            .with_comm_repeats(2)
            .with_extra_ps_per_run(20_000_000);
        assert!((m.cost_increase_pct(100e6, 40e6) - 120.0).abs() < 1e-12);
        let s = m.sample(100_000_000, Some(40_000_000));
        assert_eq!(s.run_ps, 220_000_000);
        // 64 * 4.03 * 220e-6 s / 3600 s = 0.0000157617... USD
        let want = 64.0 * 4.03 * 220e-6 / 3600.0;
        assert!((s.on_demand_usd.unwrap() - want).abs() < 1e-18);
        assert_eq!(s.committed_usd, None);
        assert!((s.increase_pct.unwrap() - 120.0).abs() < 1e-12);
    }

    #[test]
    fn summarize_is_mean_of_per_sample_increases() {
        let samples = [50_000_000u64, 60_000_000, 70_000_000, 100_000_000];
        let summary = Summary::from_samples(&samples);
        let m = CostModel::new(16)
            .with_on_demand(3.168)
            .with_committed(2.218)
            .with_extra_ps_per_run(18_883_000);
        let c = m.summarize(&summary, Some(40_000_000));
        let per_sample: f64 = samples
            .iter()
            .map(|&t| m.sample(t, Some(40_000_000)).increase_pct.unwrap())
            .sum::<f64>()
            / samples.len() as f64;
        assert!((c.increase_pct_mean.unwrap() - per_sample).abs() < 1e-12);
        // Hand: mean 70 us; (70 + 18.883 - 40 - 18.883) / 58.883 = 30 / 58.883 = 50.9485...%
        assert!((c.increase_pct_mean.unwrap() - 3000.0 / 58.883).abs() < 1e-10);
        // Median 65 us: 25 / 58.883.
        assert!((c.increase_pct_median.unwrap() - 2500.0 / 58.883).abs() < 1e-10);
        let od = c.on_demand.unwrap();
        let cm = c.committed.unwrap();
        assert!((od.usd_per_run_mean - 16.0 * 3.168 * 88.883e-6 / 3600.0).abs() < 1e-18);
        assert!(
            (cm.usd_per_run_noiseless.unwrap() - 16.0 * 2.218 * 58.883e-6 / 3600.0).abs() < 1e-18
        );
        let ci = c.increase_pct_ci95.unwrap();
        assert!(ci.lo < c.increase_pct_mean.unwrap() && c.increase_pct_mean.unwrap() < ci.hi);
        assert_eq!(c.run_noiseless_ps, Some(58_883_000.0));
    }

    #[test]
    fn no_baseline_no_increase() {
        let s = Summary::from_samples(&[1, 2, 3]);
        let c = CostModel::new(4).summarize(&s, None);
        assert_eq!((c.increase_pct_mean, c.on_demand.clone()), (None, None));
        assert_eq!(c.run_mean_ps, 2.0);
    }

    #[test]
    fn validation_messages() {
        let e = CostModel::new(4)
            .with_on_demand(-1.0)
            .validate()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid on-demand price: expected a finite, non-negative USD per node-hour, found -1"
        );
        let e = CostModel::new(0).validate().unwrap_err();
        assert_eq!(e, CostError::ZeroNodes);
        let e = CostModel::new(1)
            .with_comm_repeats(0)
            .validate()
            .unwrap_err();
        assert_eq!(e, CostError::ZeroRepeats);
        assert!(CostModel::new(1)
            .with_committed(f64::NAN)
            .validate()
            .is_err());
        assert!(CostModel::new(1).with_committed(1.02).validate().is_ok());
    }

    /// The paper's headline cost increases (CLOUD_NOISE.md section 1.6) from its per-cell means
    /// (`sim_summary_shared.csv`) and DGEMM times (`gemm_times.csv`).
    #[test]
    fn reproduces_paper_cost_increases() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/reference/paper");
        let (Ok(sim), Ok(gemm)) = (
            std::fs::read_to_string(dir.join("sim_summary_shared.csv")),
            std::fs::read_to_string(dir.join("gemm_times.csv")),
        ) else {
            eprintln!("skipping: {} is absent", dir.display());
            return;
        };
        let us_to_ps = |us: f64| (us * 1e6).round();
        // mean_us and none_us of a cell: columns 7 (mean) and 14 (none_us).
        let cell = |coll: &str, size: &str, prov: &str, nodes: &str, noise: &str| -> (f64, f64) {
            let row = sim
                .lines()
                .map(|l| l.split(',').collect::<Vec<_>>())
                .find(|f| {
                    f[0] == coll && f[1] == size && f[2] == prov && f[4] == nodes && f[5] == noise
                })
                .unwrap_or_else(|| panic!("no row {coll} {size} {prov} {nodes} {noise}"));
            (row[7].parse().unwrap(), row[14].parse().unwrap())
        };
        let gemm_us = |prov: &str, inst: &str, n: &str| -> f64 {
            gemm.lines()
                .map(|l| l.split(',').collect::<Vec<_>>())
                .find(|f| f[0] == prov && f[1] == inst && f[2] == n)
                .unwrap_or_else(|| panic!("no gemm row {prov} {inst} {n}"))[4]
                .parse()
                .unwrap()
        };
        // (collective, size, provider, instance, nodes, DGEMM N, repeats, paper's increase %)
        let cases = [
            (
                "nwaydissemination_nocompute",
                "131072",
                "Daint",
                "HPC (Metal)",
                "16384",
                "128",
                1,
                118.0,
            ),
            (
                "nwaydissemination_nocompute",
                "131072",
                "Azure",
                "HPC",
                "16384",
                "128",
                1,
                230.0,
            ),
            (
                "pipelinedring",
                "536870912",
                "Daint",
                "HPC (Metal)",
                "1024",
                "8192",
                2,
                6.1,
            ),
            (
                "pipelinedring",
                "536870912",
                "Azure",
                "HPC",
                "1024",
                "8192",
                2,
                2.5,
            ),
        ];
        for (coll, size, prov, inst, nodes, n, reps, paper) in cases {
            let (mean_us, none_us) = cell(coll, size, prov, nodes, "os+net");
            let m = CostModel::new(nodes.parse().unwrap())
                .with_comm_repeats(reps)
                .with_extra_ps_per_run(us_to_ps(gemm_us(prov, inst, n)) as u64);
            let inc = m.cost_increase_pct(us_to_ps(mean_us), us_to_ps(none_us));
            // The paper's text rounds to whole percent (one decimal below 10 %).
            let tol = if paper < 10.0 { 0.05 } else { 0.5 };
            assert!(
                (inc - paper).abs() <= tol,
                "{prov} {coll}: {inc:.3}% vs paper {paper}%"
            );
        }
    }
}
