//! One result cell: a (workload, system, nodes, noise mode) combination with its statistics.

use crate::cost::{CellCost, CostError, CostModel};
use crate::stats::Summary;
use std::fmt;
use thiserror::Error;

/// Errors building a [`Cell`].
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CellError {
    /// The cell has no samples.
    #[error("{cell}: no samples (a cell needs at least 1 repetition)")]
    NoSamples {
        /// The cell's labels, as displayed.
        cell: String,
    },
    /// The cost model is invalid.
    #[error("{cell}: {source}")]
    Cost {
        /// The cell's labels, as displayed.
        cell: String,
        /// What is wrong with the model.
        source: CostError,
    },
}

/// What a cell is: the coordinates of one point of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Labels {
    /// Workload or schedule name, e.g. `dissemination 16B`.
    pub workload: String,
    /// System (parameter set / profile) name, e.g. `daint`.
    pub system: String,
    /// Number of nodes (ranks) simulated.
    pub nodes: u64,
    /// Noise mode, e.g. `none`, `os`, `net`, `os+net`.
    pub noise_mode: String,
}

impl Labels {
    /// Convenience constructor.
    pub fn new(
        workload: impl Into<String>,
        system: impl Into<String>,
        nodes: u64,
        noise_mode: impl Into<String>,
    ) -> Labels {
        Labels {
            workload: workload.into(),
            system: system.into(),
            nodes,
            noise_mode: noise_mode.into(),
        }
    }
}

impl fmt::Display for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cell (workload `{}`, system `{}`, {} nodes, noise `{}`)",
            self.workload, self.system, self.nodes, self.noise_mode
        )
    }
}

/// One row of the results: labels, the summary of its samples, the noiseless baseline, and costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// What the cell is.
    pub labels: Labels,
    /// Deterministic noiseless time of the same workload, system and node count, ps.
    pub noiseless_ps: Option<u64>,
    /// Statistics of the samples.
    pub summary: Summary,
    /// Cost numbers, when a cost model was given.
    pub cost: Option<CellCost>,
}

impl Cell {
    /// Summarises `samples` (schedule times in ps, one per repetition) into a cell.
    pub fn new(
        labels: Labels,
        samples: &[u64],
        noiseless_ps: Option<u64>,
        cost: Option<&CostModel>,
    ) -> Result<Cell, CellError> {
        if samples.is_empty() {
            return Err(CellError::NoSamples {
                cell: labels.to_string(),
            });
        }
        if let Some(m) = cost {
            m.validate().map_err(|source| CellError::Cost {
                cell: labels.to_string(),
                source,
            })?;
        }
        let summary = Summary::from_samples(samples);
        let cost = cost.map(|m| m.summarize(&summary, noiseless_ps));
        Ok(Cell {
            labels,
            noiseless_ps,
            summary,
            cost,
        })
    }

    /// Runtime inflation of the mean over noiseless, `mean / noiseless` (None without a positive
    /// baseline).
    pub fn inflation_mean(&self) -> Option<f64> {
        self.noiseless_ps
            .filter(|&b| b > 0)
            .map(|b| self.summary.mean / b as f64)
    }

    /// Runtime inflation of the median over noiseless, `median / noiseless`.
    pub fn inflation_median(&self) -> Option<f64> {
        self.noiseless_ps
            .filter(|&b| b > 0)
            .map(|b| self.summary.median / b as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflation_and_errors() {
        let labels = Labels::new("dissemination 16B", "daint", 64, "os");
        let c = Cell::new(labels.clone(), &[30, 40, 50], Some(20), None).unwrap();
        assert_eq!(c.inflation_mean(), Some(2.0));
        assert_eq!(c.inflation_median(), Some(2.0));
        assert_eq!(c.cost, None);
        let c = Cell::new(labels.clone(), &[30], None, None).unwrap();
        assert_eq!(c.inflation_mean(), None);
        let e = Cell::new(labels.clone(), &[], None, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cell (workload `dissemination 16B`, system `daint`, 64 nodes, noise `os`): \
             no samples (a cell needs at least 1 repetition)"
        );
        let bad = CostModel::new(64).with_on_demand(f64::INFINITY);
        let e = Cell::new(labels, &[1], None, Some(&bad)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cell (workload `dissemination 16B`, system `daint`, 64 nodes, noise `os`): \
             invalid on-demand price: expected a finite, non-negative USD per node-hour, found inf"
        );
    }
}
