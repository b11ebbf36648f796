//! The noise model's settings: which noise a run injects ([`NoiseMode`]), how distributions
//! are scaled ([`ScaleMode`]), OS-noise replay ([`OsReplay`]), who shares a bandwidth level
//! ([`LevelScope`]) and all of them together ([`NoiseConfig`]).

use crate::NoiseError;
use loggops_engine::MpiProgress;
use std::fmt;
use std::str::FromStr;

/// Which noise a run injects (the paper's four variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NoiseMode {
    /// Base parameters only (near/far placement still applies).
    #[default]
    None,
    /// OS noise only.
    Os,
    /// Network noise only (L, G, and o/g if the profile has them).
    Net,
    /// OS and network noise.
    OsNet,
}

impl NoiseMode {
    pub const ALL: [NoiseMode; 4] = [
        NoiseMode::None,
        NoiseMode::Os,
        NoiseMode::Net,
        NoiseMode::OsNet,
    ];

    /// Whether OS detours are injected.
    pub fn os(self) -> bool {
        matches!(self, NoiseMode::Os | NoiseMode::OsNet)
    }

    /// Whether message costs are drawn.
    pub fn net(self) -> bool {
        matches!(self, NoiseMode::Net | NoiseMode::OsNet)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NoiseMode::None => "none",
            NoiseMode::Os => "os",
            NoiseMode::Net => "net",
            NoiseMode::OsNet => "os+net",
        }
    }
}

impl fmt::Display for NoiseMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for NoiseMode {
    type Err = NoiseError;
    fn from_str(s: &str) -> Result<NoiseMode, NoiseError> {
        match s {
            "none" => Ok(NoiseMode::None),
            "os" => Ok(NoiseMode::Os),
            "net" => Ok(NoiseMode::Net),
            "os+net" | "net+os" => Ok(NoiseMode::OsNet),
            _ => Err(NoiseError::UnknownMode { found: s.into() }),
        }
    }
}

/// How measured network distributions (L, G, o, g) become draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ScaleMode {
    /// Multiply every draw by `base / median` (the paper's convention): the median draw is the
    /// base parameter of the placement.
    #[default]
    MedianToBase,
    /// Use the measured values as they are.
    Absolute,
}

impl FromStr for ScaleMode {
    type Err = NoiseError;
    fn from_str(s: &str) -> Result<ScaleMode, NoiseError> {
        match s {
            "median" => Ok(ScaleMode::MedianToBase),
            "absolute" => Ok(ScaleMode::Absolute),
            _ => Err(NoiseError::UnknownScaling { found: s.into() }),
        }
    }
}

/// `as_str` and `FromStr` of a setting from one table of its names (an unknown name is the
/// given `NoiseError` variant).
macro_rules! named {
    ($ty:ident, $err:ident, { $($v:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$v => $name,)+
                }
            }
        }

        impl FromStr for $ty {
            type Err = NoiseError;
            fn from_str(s: &str) -> Result<$ty, NoiseError> {
                match s {
                    $($name => Ok($ty::$v),)+
                    _ => Err(NoiseError::$err { found: s.into() }),
                }
            }
        }
    };
}

/// What OS noise does beyond one period of the (stitched) trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OsReplay {
    /// The trace repeats forever (LogGOPSim's behaviour, with the full period).
    #[default]
    Cyclic,
    /// Simulated times `[0, period)` replay the trace once from the rank's phase (wrapping
    /// once); from `period` on, the fitted detour process takes over. A window straddling
    /// `period` gets the trace part and the process part.
    ThenProcess,
    /// Only the fitted detour process (also used when the profile has no traces).
    Process,
}

named!(OsReplay, UnknownReplay, {
    Cyclic => "cyclic",
    ThenProcess => "then-process",
    Process => "process",
});

/// Who shares a bandwidth level (profiles with `bandwidth_levels`, SCHEMA.md "Bandwidth
/// levels"): the per-byte time of a message is its level times its blocks' draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LevelScope {
    /// One level per repetition, shared by every message (the network's state during the run).
    #[default]
    Run,
    /// One level per repetition and pair of ranks (each connection its own state).
    Link,
    /// No levels: every block draws from the profile's `bandwidth` alone (on a profile with
    /// levels, the within-run distribution: the spread between runs is left out).
    Off,
}

named!(LevelScope, UnknownLevels, {
    Run => "run",
    Link => "link",
    Off => "off",
});

/// Options of a noise model.
#[derive(Clone, Debug, PartialEq)]
pub struct NoiseConfig {
    pub mode: NoiseMode,
    /// Scaling of the L, G, o and g distributions.
    pub scaling: ScaleMode,
    /// All ranks replay the OS-noise trace from the same phase (co-scheduled noise).
    pub cosched: bool,
    /// Overrides the profile's `nodes_per_switch`.
    pub nodes_per_switch: Option<u32>,
    /// Rendezvous messages pay 3 × the latency draw (the paper's rule). Sets
    /// `rndv_extra_latencies` (2 or 0) in [`NoiseModel::engine_params`](crate::NoiseModel::engine_params); the engine applies it.
    pub rndv_triple_latency: bool,
    /// Draw o and g from the profile's distributions when it has them (net modes).
    pub overhead_gap_noise: bool,
    /// OS-noise replay beyond one trace period.
    pub os_replay: OsReplay,
    /// Overrides the profile's `mpi_progress` (whether rendezvous messages progress while a
    /// rank computes; [`NoiseModel::mpi_progress`](crate::NoiseModel::mpi_progress)).
    pub mpi_progress: Option<MpiProgress>,
    /// Who shares a bandwidth level (profiles with bandwidth levels only).
    pub bandwidth_levels: LevelScope,
}

impl Default for NoiseConfig {
    fn default() -> NoiseConfig {
        NoiseConfig {
            mode: NoiseMode::None,
            scaling: ScaleMode::MedianToBase,
            cosched: false,
            nodes_per_switch: None,
            rndv_triple_latency: true,
            overhead_gap_noise: true,
            os_replay: OsReplay::Cyclic,
            mpi_progress: None,
            bandwidth_levels: LevelScope::Run,
        }
    }
}
