//! Errors of building a noise model.

use crate::dist::DistError;
use thiserror::Error;

/// Why a noise model cannot be built from a profile and configuration.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum NoiseError {
    #[error("{what}: {source}")]
    Distribution {
        what: String,
        #[source]
        source: DistError,
    },
    #[error("unknown noise mode `{found}`; expected one of none, os, net, os+net")]
    UnknownMode { found: String },
    #[error("unknown latency/bandwidth scaling `{found}`; expected one of median, absolute")]
    UnknownScaling { found: String },
    #[error("unknown OS-noise replay `{found}`; expected one of cyclic, then-process, process")]
    UnknownReplay { found: String },
    #[error("unknown bandwidth-level sharing `{found}`; expected one of run, link, off")]
    UnknownLevels { found: String },
    #[error(
        "base parameter {name} of the {placement} placement is {value}{unit}; expected a finite \
         value >= 0{unit}"
    )]
    BaseParam {
        placement: &'static str,
        name: &'static str,
        value: f64,
        unit: &'static str,
    },
    #[error(
        "the {placement} placement has a bandwidth distribution but its block size is 0B; \
         expected the message size the bandwidth was measured at (16MiB = 16777216B in the paper)"
    )]
    ZeroBlock { placement: &'static str },
    #[error("nodes per switch is 0; expected at least 1")]
    ZeroNodesPerSwitch,
    #[error(
        "OS-noise trace {trace} has {starts} start times but {durations} durations; expected one \
         duration per start time"
    )]
    TraceLengths {
        trace: usize,
        starts: usize,
        durations: usize,
    },
    #[error(
        "OS-noise trace {trace}: detour {index} starts at {start}ps, not after the previous \
         detour's start {prev}ps; expected strictly increasing start times"
    )]
    TraceUnsorted {
        trace: usize,
        index: usize,
        start: u64,
        prev: u64,
    },
    #[error(
        "OS-noise trace {trace}: detour {index} ends at {end}ps, after the end of the trace's \
         period {period}ps; expected a period >= the end of every detour"
    )]
    TracePeriod {
        trace: usize,
        index: usize,
        end: u128,
        period: u64,
    },
    #[error("OS-noise traces are too long: more than 2^62ps of period or of detour time, or 2^31 detours, in total")]
    TraceTooLong,
    #[error("the {traces} OS-noise trace(s) have a total period of 0ps; expected a period > 0ps")]
    TraceEmpty { traces: usize },
    #[error("detour process rate is {rate}/s; expected a finite rate > 0/s")]
    ProcessRate { rate: f64 },
    #[error(
        "noise mode `{mode}` injects OS noise, but profile `{system}` has neither detour traces \
         nor a fitted detour process"
    )]
    OsNoiseMissing { mode: String, system: String },
    #[error(
        "OS-noise replay `{replay}` needs a fitted detour process, but profile `{system}` has none"
    )]
    ProcessMissing { replay: String, system: String },
    #[error(
        "capture day `{day}` has another eager threshold S or per-byte overhead O than the \
         profile's own day; the days of one profile must share them"
    )]
    DaysDiffer { day: String },
}
