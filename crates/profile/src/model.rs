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
    /// `values[i]` is the `probs[i]` quantile. `probs` is strictly increasing and starts at 0.0;
    /// `values` is non-decreasing. Sampling interpolates linearly between neighbouring points
    /// (inverse-CDF).
    ///
    /// Without `tail`, `probs` ends at 1.0 (so min and max are kept). With an [`ExactTail`] of
    /// K samples out of N, the table covers the probabilities `[0, (N−K)/N]` (`probs` ends at
    /// [`ExactTail::body_mass`]) and the K largest samples follow as point masses of
    /// probability 1/N each, so extreme outliers are drawn exactly as often, and exactly as
    /// large, as in the measurement.
    Quantiles {
        probs: Vec<f64>,
        values: Vec<f64>,
        tail: Option<ExactTail>,
    },
}

impl Distribution {
    /// A quantile table without an exact tail (`probs` from 0 to 1).
    pub fn quantiles(probs: Vec<f64>, values: Vec<f64>) -> Distribution {
        Distribution::Quantiles {
            probs,
            values,
            tail: None,
        }
    }
}

/// The K largest samples of a quantile table's source, kept exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactTail {
    /// The K largest samples in increasing order (K >= 1); each has probability
    /// `1 / sample_count`. The first is at least the table's last value.
    pub values: Vec<f64>,
    /// Number of samples N the table and tail were built from (N > K).
    pub sample_count: u64,
}

impl ExactTail {
    /// Probability mass of the interpolated part, `(N − K) / N` in float64 (one correctly
    /// rounded division; `(N - K) / N` in Python gives the same value). The table's last
    /// probability must equal it within [`ExactTail::body_mass_tolerance`].
    pub fn body_mass(&self) -> f64 {
        self.sample_count.saturating_sub(self.values.len() as u64) as f64 / self.sample_count as f64
    }

    /// How far the table's last probability may be from [`ExactTail::body_mass`]: 10⁻⁶ of one
    /// sample's probability 1/N, at least 4 float64 epsilons (so `1 - K/N`, rounded twice, is
    /// accepted too).
    pub fn body_mass_tolerance(&self) -> f64 {
        (1e-6 / self.sample_count as f64).max(4.0 * f64::EPSILON)
    }
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
    /// Latency of messages whose sender had been idle (schema version 3); `None`: `latency`
    /// for every message.
    pub after_idle: Option<AfterIdle>,
    /// Bandwidth levels (schema version 6): factors on the per-byte time, one drawn per
    /// repetition and shared by its messages (the spread between the capture's runs, each run
    /// a level times its own samples; `bandwidth` then holds the within-run samples). `None`:
    /// every block draws from `bandwidth` alone.
    pub bandwidth_levels: Option<Distribution>,
    /// Extra one-way latency by message size (schema version 7, [`SizeLatency`]); `None`: a
    /// message costs what the LogGP parameters and the distributions give at every size.
    pub latency_by_size: Option<SizeLatency>,
}

impl Placement {
    /// A placement of base parameters only: no distribution, latency by size or idle-link
    /// latency (every message costs the LogGP values), bandwidth blocks of `block_bytes`.
    pub fn new(params: BaseParams, block_bytes: u64) -> Placement {
        Placement {
            params,
            latency: None,
            bandwidth: None,
            bandwidth_block_bytes: block_bytes,
            overhead: None,
            gap: None,
            after_idle: None,
            bandwidth_levels: None,
            latency_by_size: None,
        }
    }
}

/// What a message of `s` bytes takes one way beyond the model's LogGP costs, ps: the
/// difference between Netgauge's LogGP ping-pong PRTT(1,0,s)/2 and the same ping-pong
/// simulated without it (`calibrate`, "Latency by size"). Mid-size messages (KiB to a few
/// hundred KiB) pay NIC and protocol costs that neither the 1-byte latency nor the per-byte
/// time of a bandwidth-saturating stream contains.
///
/// The extra of a message is piecewise linear between the points on its side of the eager
/// threshold S (sizes of at most S bytes are eager, larger ones rendezvous) and constant
/// beyond that side's first and last point; 0 on a side without points. A rendezvous
/// message pays it once, not once per latency of its handshake.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeLatency {
    /// Message sizes, bytes, strictly increasing.
    pub sizes_bytes: Vec<u64>,
    /// The extra one-way latency at each size, ps, finite and at least 0.
    pub extra_ps: Vec<f64>,
}

impl SizeLatency {
    /// The extra one-way latency of a message of `bytes` under the eager threshold
    /// `s_bytes`, ps (see [`SizeLatency`]).
    pub fn extra_at(&self, bytes: u64, s_bytes: u64) -> f64 {
        let split = self.sizes_bytes.partition_point(|&b| b <= s_bytes);
        let side = if bytes > s_bytes {
            split..self.sizes_bytes.len()
        } else {
            0..split
        };
        let (sizes, extra) = (&self.sizes_bytes[side.clone()], &self.extra_ps[side]);
        let (Some(&b0), Some(&bn)) = (sizes.first(), sizes.last()) else {
            return 0.0;
        };
        if bytes <= b0 {
            return extra[0];
        }
        if bytes >= bn {
            return extra[extra.len() - 1];
        }
        let k = sizes.partition_point(|&b| b <= bytes);
        let (xa, xb, ya, yb) = (sizes[k - 1], sizes[k], extra[k - 1], extra[k]);
        ya + (yb - ya) * (bytes - xa) as f64 / (xb - xa) as f64
    }
}

/// How a message's costs depend on how long its sender had been idle (not started a send nor
/// completed a receive) before it: a table of *levels* indexed by idle time (schema version 3
/// holds one level with a latency, the *step*; version 4 any table, SCHEMA.md "Idle table").
///
/// A message whose sender was idle for `t` uses the last level with `from_ps <= t` (none:
/// the back-to-back costs). Its latency is drawn from the last level at or below that one
/// that has a latency (none: [`Placement::latency`]); its per-byte time (the drawn G) is
/// multiplied by that level's `per_byte_factor`. Levels are sorted by `from_ps`, strictly
/// increasing.
#[derive(Clone, Debug, PartialEq)]
pub struct AfterIdle {
    pub levels: Vec<IdleLevel>,
}

/// One level of an [`AfterIdle`] table.
#[derive(Clone, Debug, PartialEq)]
pub struct IdleLevel {
    /// Idle time from which the level applies, ps.
    pub from_ps: f64,
    /// One-way latency L after such an idle period, ps; `None`: the level below's.
    pub latency: Option<Distribution>,
    /// Factor on the message's per-byte time (1.0: unchanged).
    pub per_byte_factor: f64,
}

impl AfterIdle {
    /// The schema-version-3 step: from `threshold_ps` on, a message draws `latency`; nothing
    /// else changes.
    pub fn step(threshold_ps: f64, latency: Distribution) -> AfterIdle {
        AfterIdle {
            levels: vec![IdleLevel {
                from_ps: threshold_ps,
                latency: Some(latency),
                per_byte_factor: 1.0,
            }],
        }
    }

    /// `(threshold_ps, latency)` when the table is a version-3 step ([`AfterIdle::step`]).
    pub fn as_step(&self) -> Option<(f64, &Distribution)> {
        match self.levels.as_slice() {
            [IdleLevel {
                from_ps,
                latency: Some(l),
                per_byte_factor,
            }] if *per_byte_factor == 1.0 => Some((*from_ps, l)),
            _ => None,
        }
    }

    /// Whether some level changes the per-byte time.
    pub fn scales_per_byte(&self) -> bool {
        self.levels.iter().any(|l| l.per_byte_factor != 1.0)
    }
}

/// How a profile's distributions become the costs of a message (schema version 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Calibration {
    /// The paper's convention (versions 1 and 2): the distributions hold measured RTT/2 and
    /// per-byte times, and a draw is scaled so that its median is the base parameter
    /// (`x · L / median`).
    #[default]
    PaperTable,
    /// Made by `calibrate` so that simulating the captures' own ping-pongs reproduces them:
    /// the distributions hold the model's per-message L (ps) and G (ps/byte), used as drawn.
    Captures,
}

impl Calibration {
    /// The name stored in the `calibration` attribute and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Calibration::PaperTable => "paper-table",
            Calibration::Captures => "captures",
        }
    }

    /// The calibration named `s` ([`Calibration::as_str`]).
    pub fn parse(s: &str) -> Option<Calibration> {
        match s {
            "paper-table" => Some(Calibration::PaperTable),
            "captures" => Some(Calibration::Captures),
            _ => None,
        }
    }
}

/// The network and OS noise of one capture day or state (schema version 3): a profile holding
/// several runs each repetition on one of them, chosen uniformly or by their weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Day {
    /// What distinguishes the day, e.g. its capture date `2022-05-13`.
    pub label: String,
    pub near: Placement,
    pub far: Option<Placement>,
    pub os_noise: OsNoise,
    /// The share of repetitions that run on this day (schema version 8). Either every day of
    /// a profile has one or none has; the profile's own day takes what remains
    /// ([`Profile::state_weights`]).
    pub weight: Option<f64>,
    /// A latency episode of the profile's own capture (schema version 8): the Netgauge runs
    /// whose latency tail was far heavier than the others' (`calibrate --latency-episodes
    /// state`), rather than another day. Its `os_noise` is empty when the profile's applies
    /// ([`Profile::os_noise_of`]). `validate` compares a measured run with the other
    /// states and reports this one beside them.
    pub episode: bool,
}

impl Day {
    /// A further capture day (no weight, not an episode).
    pub fn new(label: String, near: Placement, far: Option<Placement>, os_noise: OsNoise) -> Day {
        Day {
            label,
            near,
            far,
            os_noise,
            weight: None,
            episode: false,
        }
    }
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

/// Instance prices, USD per node-hour; absent = unknown.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Prices {
    pub on_demand_usd_per_node_hour: Option<f64>,
    pub committed_usd_per_node_hour: Option<f64>,
    /// Spot (preemptible) capacity, schema version 5 (SCHEMA.md "Spot capacity").
    pub spot: SpotPrices,
}

/// Spot (preemptible) capacity: its price, where it comes from, and how often a node is taken
/// away (schema version 5). Spot is priced only when both the price and the rate are known.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SpotPrices {
    /// USD per node-hour.
    pub usd_per_node_hour: Option<f64>,
    /// Interruptions per node-hour (the inverse of a node's mean time between interruptions).
    pub interruptions_per_node_hour: Option<f64>,
    /// Where the price and the rate come from (empty: not recorded).
    pub source: String,
    /// When they were read, ISO-8601 (empty: not recorded).
    pub date: String,
}

impl SpotPrices {
    /// Whether any spot value is recorded.
    pub fn is_empty(&self) -> bool {
        *self == SpotPrices::default()
    }
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

/// Whether a message above the eager threshold S advances while its sender or receiver
/// computes (the root attribute `mpi_progress`, SCHEMA.md "MPI progress"). A property of the
/// system and its MPI library: without asynchronous progress (Cray MPICH's default, for one) a
/// rendezvous transfer moves only while both ranks are inside MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MpiProgress {
    /// It advances during computation (`"async"`).
    Async,
    /// It advances only while both ranks are outside computation, inside MPI (`"polled"`).
    Polled,
}

impl MpiProgress {
    /// The attribute's value: `"async"` or `"polled"`.
    pub fn name(self) -> &'static str {
        match self {
            MpiProgress::Async => "async",
            MpiProgress::Polled => "polled",
        }
    }

    /// From the attribute's value.
    pub fn from_name(s: &str) -> Option<MpiProgress> {
        match s {
            "async" => Some(MpiProgress::Async),
            "polled" => Some(MpiProgress::Polled),
            _ => None,
        }
    }
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
    /// How the distributions are used (schema version 3; older profiles: the paper's table).
    pub calibration: Calibration,
    /// Label of the day `near`, `far` and `os_noise` were captured (empty: not recorded).
    pub day: String,
    /// Further capture days or states (schema version 3): with any, each repetition runs on
    /// one of `[this profile's own, days...]`, chosen uniformly or by their weights
    /// ([`Profile::state_weights`]).
    pub days: Vec<Day>,
    /// Whether rendezvous messages progress during computation; `None` (profiles made before
    /// it existed, or that do not know): the simulator's default, asynchronous progress.
    pub mpi_progress: Option<MpiProgress>,
    /// The clock a benchmark times itself with (schema version 9); `None` (profiles made
    /// before it existed, or without a selfish capture): not known, a perfect clock.
    pub clock: Option<Clock>,
}

/// The clock the captures were timed with (`MPI_Wtime` in the paper's benchmarks), from the
/// selfish capture, whose loop does nothing but read it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    /// The smallest step it shows, ps: the loop's shortest non-zero iteration (selfish's
    /// `Minimal cycle length`; 2^-22 s on Piz Daint's `MPI_Wtime`).
    pub resolution_ps: f64,
    /// What one read costs, ps: the loop's mean iteration (`Measurement period` over
    /// `Number of iterations`).
    pub read_ps: f64,
}

impl Profile {
    /// The share of repetitions of each of `[this profile's own day, days...]`: uniform when no
    /// day has a weight, else each day's weight and what remains for the profile's own.
    pub fn state_weights(&self) -> Vec<f64> {
        let n = self.days.len() + 1;
        if self.days.iter().all(|d| d.weight.is_none()) {
            return vec![1.0 / n as f64; n];
        }
        let days: Vec<f64> = self.days.iter().map(|d| d.weight.unwrap_or(0.0)).collect();
        let own = 1.0 - days.iter().sum::<f64>();
        std::iter::once(own).chain(days).collect()
    }

    /// The OS noise of day `d`: its own, or the profile's for a latency episode without OS
    /// noise of its own (an episode is a state of the profile's own captures, stored with an
    /// empty `os_noise`; `profile combine` fills in the OS noise of another file's episode).
    pub fn os_noise_of<'a>(&'a self, d: &'a Day) -> &'a OsNoise {
        if d.episode && d.os_noise == OsNoise::default() {
            &self.os_noise
        } else {
            &d.os_noise
        }
    }

    /// Whether a day is a latency episode of the profile's own capture.
    pub fn has_episodes(&self) -> bool {
        self.days.iter().any(|d| d.episode)
    }

    /// The share of repetitions in latency episodes (0 without).
    pub fn episode_weight(&self) -> f64 {
        let w = self.state_weights();
        self.days
            .iter()
            .zip(&w[1..])
            .filter(|(d, _)| d.episode)
            .map(|(_, w)| w)
            .sum()
    }

    /// The profile without its latency episodes, and (when it has any) the episodes as a
    /// profile of their own; weights rescaled so that each side's shares add up to 1.
    pub fn split_episodes(&self) -> (Profile, Option<Profile>) {
        let w = self.state_weights();
        let (mut quiet, mut episodes) = (Vec::new(), Vec::new());
        for (d, &wd) in self.days.iter().zip(&w[1..]) {
            if d.episode {
                episodes.push((d, wd));
            } else {
                quiet.push((d, wd));
            }
        }
        let weighted = self.days.iter().any(|d| d.weight.is_some());
        let with = |days: &[(&Day, f64)], total: f64| -> Vec<Day> {
            days.iter()
                .map(|&(d, wd)| Day {
                    weight: weighted.then(|| wd / total),
                    episode: false,
                    os_noise: self.os_noise_of(d).clone(),
                    ..d.clone()
                })
                .collect()
        };
        let quiet_total = w[0] + quiet.iter().map(|q| q.1).sum::<f64>();
        let q = Profile {
            days: with(&quiet, quiet_total),
            ..self.clone()
        };
        let Some((&(first, _), rest)) = episodes.split_first() else {
            return (q, None);
        };
        let ep_total = episodes.iter().map(|e| e.1).sum::<f64>();
        let e = Profile {
            day: first.label.clone(),
            near: first.near.clone(),
            far: first.far.clone(),
            os_noise: self.os_noise_of(first).clone(),
            days: with(rest, ep_total),
            ..self.clone()
        };
        (q, Some(e))
    }
}
