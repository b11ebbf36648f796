//! In-memory form of a noise profile. Plain data: the HDF5 layer (`h5` module) reads and writes
//! it, `loggops-noise` builds samplers from it, `loggops-calibrate` fills it from captures.
//!
//! Units: every time is in picoseconds, every per-byte cost in picoseconds per byte, sizes in
//! bytes, prices in USD per node-hour.

/// A measured distribution of one quantity, kept either as raw samples or as a quantile table.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    /// Raw samples in measurement order (units given by the field that holds the distribution).
    Samples(Vec<f64>),
    /// `values[i]` is the `probs[i]` quantile. `probs` is strictly increasing, starts at 0.0 and
    /// ends at 1.0 (so min and max are kept); `values` is non-decreasing. Sampling interpolates
    /// linearly between neighbouring points (inverse-CDF).
    Quantiles { probs: Vec<f64>, values: Vec<f64> },
}

/// Base LogGOPS parameters of one placement.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseParams {
    /// Latency L, ps.
    pub l_ps: f64,
    /// CPU overhead per message o, ps.
    pub o_ps: f64,
    /// NIC gap per message g, ps.
    pub g_ps: f64,
    /// Gap per byte G, ps/byte (sub-picosecond precision kept).
    pub big_g_ps_per_byte: f64,
    /// CPU overhead per byte O, ps/byte.
    pub big_o_ps_per_byte: f64,
    /// Eager threshold S: messages of at most S bytes are eager.
    pub s_bytes: u64,
}

/// Parameters and measured distributions for messages between two nodes in one placement
/// (near = same switch, far = different switches).
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub params: BaseParams,
    /// One-way latency samples (RTT/2 of 1-byte ping-pongs), ps.
    pub latency: Option<Distribution>,
    /// Per-byte time (RTT/2 divided by the message size) of bandwidth-saturating ping-pongs,
    /// ps/byte.
    pub bandwidth: Option<Distribution>,
    /// Message size the bandwidth samples were measured at, bytes (16 MiB in the paper). Large
    /// messages draw one G per block of this many bytes.
    pub bandwidth_block_bytes: u64,
    /// Optional distribution of o, ps.
    pub overhead: Option<Distribution>,
    /// Optional distribution of g, ps.
    pub gap: Option<Distribution>,
}

/// One selfish-detour run: detours as (start, duration) pairs relative to the run's start.
#[derive(Clone, Debug, PartialEq)]
pub struct DetourTrace {
    /// Start of each detour, ps, strictly increasing within the run.
    pub start_ps: Vec<u64>,
    /// Length of each detour, ps.
    pub duration_ps: Vec<u64>,
    /// Length of the measured period, ps (>= last start + last duration).
    pub period_ps: u64,
}

/// A fitted detour process for runs longer than the traces: detours arrive as a Poisson
/// process of `rate_per_s` and last a duration drawn from `duration_ps`.
#[derive(Clone, Debug, PartialEq)]
pub struct DetourProcess {
    pub rate_per_s: f64,
    pub duration_ps: Distribution,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct OsNoise {
    /// Traces as measured; runs of a concatenated capture are stitched into one trace each
    /// (never restarting at 0).
    pub traces: Vec<DetourTrace>,
    pub process: Option<DetourProcess>,
}

/// Instance prices, USD per node-hour.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Prices {
    pub on_demand_usd_per_node_hour: Option<f64>,
    pub committed_usd_per_node_hour: Option<f64>,
}

/// Where a profile came from.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Provenance {
    /// Source capture files as given to `calibrate`.
    pub sources: Vec<String>,
    /// The command line that made the profile.
    pub command: String,
    /// ISO-8601 date the profile was made.
    pub created: String,
    /// loggops-sim version that made it.
    pub tool_version: String,
    /// Free-form notes (substitute captures, warnings).
    pub notes: Vec<String>,
}

/// A complete noise profile (`aws.h5`).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Short system name, e.g. "aws".
    pub system: String,
    /// Human description, e.g. "AWS c5n.metal (EFA 100G)".
    pub description: String,
    pub near: Placement,
    /// Parameters for messages that cross switches; `None` = same as near.
    pub far: Option<Placement>,
    /// Ranks `r / nodes_per_switch` share a switch.
    pub nodes_per_switch: u32,
    pub os_noise: OsNoise,
    pub prices: Prices,
    pub provenance: Provenance,
}
