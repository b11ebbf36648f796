//! The noise model: built once from a profile, instantiated per repetition.
//!
//! # What a [`NoiseRun`] returns
//! * **Placement.** Ranks `r / nodes_per_switch` share a switch. A message between switches uses
//!   the profile's far placement (base parameters *and* distributions), otherwise the near one.
//!   In every mode, including `none`, the base costs are the near or far base parameters of the
//!   profile; **the `p: &Params` argument of the engine calls is ignored**. Give the engine
//!   [`NoiseModel::engine_params`] (the near base with `rndv_extra_latencies` set) so that the
//!   costs it computes itself (O, S, rendezvous latencies) agree. To override parameters from the
//!   command line, edit the profile's [`BaseParams`] before [`NoiseModel::new`].
//!   A far placement without a distribution of its own uses the near distribution, scaled to
//!   the far base median (with [`ScaleMode::MedianToBase`]) — the paper built its far files
//!   this way from the near measurement.
//! * **Latency** (modes `net`, `os+net`): one draw per message from the latency distribution,
//!   scaled so its median is the base L (or absolute), rounded to whole ps. Medians are pinned
//!   to the engine's representation of the base values (L, o, g in whole ps; G in 1/65536 ps/B
//!   as [`PerByte`]), so a distribution equal to its median reproduces the noiseless costs.
//!   `send_costs` returns the draw; `recv_costs` returns the base L (the engine reads the
//!   latency only at the send, so the receive does not draw it). For rendezvous messages the engine adds
//!   `rndv_extra_latencies` × the same draw (3L in total, as the paper's simulator). A
//!   placement's latency by size ([`SizeLatency`]) adds its extra for the message's size to
//!   the latency of every send, in every mode (a rendezvous message's share is the extra
//!   divided by its `1 + rndv_extra_latencies` latencies).
//! * **G**: the `size − 1` bytes of a message are cut into blocks of `bandwidth_block_bytes`
//!   (16 MiB in the paper); every block gets its own G draw (ps/byte, f64) and
//!   `gap_bytes = round(Σ block_bytes × G_block)`, rounded once (no truncation of G). A message of
//!   up to one block plus one byte makes one draw; 512 MiB at 16 MiB blocks makes 32. A profile
//!   with bandwidth levels multiplies the sum by the repetition's level (or the pair's, see
//!   [`LevelScope`]) before rounding: the captures' runs each keep their own bandwidth.
//! * **o, g**: drawn from the optional distributions when present and
//!   [`NoiseConfig::overhead_gap_noise`] is set; independent draws at the send and at the
//!   receive. Otherwise the base values.
//! * **OS noise** (modes `os`, `os+net`): see [`crate::os`] for the per-window semantics. Every
//!   rank replays the stitched trace from its own phase, uniform in `[0, period)` (or one phase
//!   for all ranks with [`NoiseConfig::cosched`]); [`OsReplay`] chooses what happens beyond
//!   one period.
//!
//! # Random numbers
//! All draws are [`CounterRng::new(seed, rep)`](CounterRng::new)`.at(a, b)` at fixed counters:
//! * message `(src, send_op)`: `a = src << 32 | send_op`, `b = DOMAIN_MSG << 56 | purpose`
//!   with purpose 0 = latency, 1/2 = o/g at the sender, 3/4 = o/g at the receiver, `8 + j` = G
//!   of bandwidth block `j`. The receive side draws the same G values and its own o/g; it does
//!   not draw the latency (the engine uses it only at the send), and with
//!   [`Noise::recv_costs_known_gap`] (the windowed engine) not the G values either;
//! * `a = 0` (or `lo << 32 | hi` for a pair of ranks), `b = DOMAIN_LEVEL << 56`: the bandwidth
//!   level, one uniform for the near and the far placement;
//! * `a = rank`, `b = DOMAIN_PHASE << 56`: the rank's trace phase (`a = 0`,
//!   `b = DOMAIN_PHASE_COSCHED << 56` for the shared phase);
//! * the detour process, see [`crate::os::DetourProcessGen`] (stream = rank, or 0 if cosched).
//!
//! So a repetition's result depends only on (schedule, parameters, profile, seed, rep), not on
//! call order, thread count or what else was drawn.

pub use crate::config::{LevelScope, NoiseConfig, NoiseMode, OsReplay, ScaleMode};
use crate::dist::{Sampler, Scaling};
use crate::os::{DetourProcessGen, DetourTable};
use crate::rng::{
    CounterRng, DOMAIN_DAY, DOMAIN_LEVEL, DOMAIN_MSG, DOMAIN_PHASE, DOMAIN_PHASE_COSCHED,
};
use crate::NoiseError;
use loggops_engine::{MpiProgress, MsgCosts, Noise, Params, PerByte, Time, NEVER_COMMUNICATED};
use loggops_profile::{BaseParams, Distribution, OsNoise, Placement, Profile, SizeLatency};
use std::sync::Arc;

/// One placement, ready to draw.
#[derive(Clone, Debug)]
struct Place {
    base: Params,
    lat: Option<Sampler>,
    /// The profile's idle table ([`loggops_profile::AfterIdle`]), level by level, in
    /// increasing idle time; empty: every message is back to back.
    idle: Box<[IdleStep]>,
    /// The idle time from which the first level applies (`Time::MAX` without levels): the
    /// one comparison every send makes.
    idle_from: Time,
    bw: Option<Sampler>,
    /// Factors on the per-byte time, one per repetition or pair ([`LevelScope`]).
    levels: Option<Sampler>,
    block: u64,
    o: Option<Sampler>,
    g: Option<Sampler>,
    /// The extra one-way latency by message size ([`loggops_profile::SizeLatency`]).
    by_size: Option<Box<SizeLatency>>,
}

/// One level of a placement's idle table, ready to draw.
#[derive(Clone, Debug)]
struct IdleStep {
    /// Idle time from which the level applies, ps.
    from: Time,
    /// The latency a message of this level draws (the level below's when the profile's level
    /// has none; `None`: the back-to-back `lat`).
    lat: Option<Sampler>,
    /// Factor on the message's per-byte time (`gap_bytes`); 1.0 leaves it untouched.
    factor: f64,
}

/// The noise of one capture day.
#[derive(Debug)]
struct DayNoise {
    label: String,
    near: Place,
    far: Place,
    far_differs: bool,
    os: Option<OsSource>,
}

#[derive(Debug)]
struct Inner {
    system: String,
    cfg: NoiseConfig,
    /// The profile's own day, then its further days; a repetition runs on one.
    days: Vec<DayNoise>,
    /// With weighted days: the upper bound (a fraction of 2^64) of each day's share of the
    /// uniform that chooses it, cumulative; the last is 2^64.
    day_bounds: Option<Vec<u128>>,
    /// Which days are latency episodes of the profile's own capture.
    episode: Vec<bool>,
    nps: u32,
    net: bool,
    og: bool,
    /// Some placement of some day draws latencies or scales per-byte times by the sender's
    /// idle time.
    idle: bool,
    /// Some placement of some day scales per-byte times by the sender's idle time.
    idle_scales: bool,
    /// The smallest `o + L` of any message (see [`Noise::min_message_delay`]); 0 in mode
    /// `none`, whose runs are lock-step.
    min_delay: Time,
    /// The smallest `L` of any message (see [`Noise::min_latency`]); 0 in mode `none`.
    min_latency: Time,
    mpi_progress: MpiProgress,
}

#[derive(Debug)]
struct OsSource {
    replay: OsReplay,
    table: Option<DetourTable>,
    process: Option<DetourProcessGen>,
}

/// An immutable noise model (cheap to clone, `Send + Sync`): build once, then call
/// [`NoiseModel::instance`] per repetition.
#[derive(Clone, Debug)]
pub struct NoiseModel {
    inner: Arc<Inner>,
}

/// Round a non-negative f64 number of ps to the nearest integer (half up; NaN and negatives → 0).
#[inline(always)]
fn round_ps(x: f64) -> Time {
    let y = x + 0.5;
    let bits = y.to_bits();
    // The biased exponent, with the sign bit: 1023..1075 is 1 <= y < 2^52.
    let e = (bits >> 52) as u32;
    if e.wrapping_sub(1023) < 52 {
        // The integer part straight from the bits (exact, and shorter than the saturating
        // conversion, which stays for the rest: below 1, huge, negative or NaN).
        let m = bits & ((1 << 52) - 1) | 1 << 52;
        m >> (1075 - e)
    } else {
        y as u64
    }
}

fn base_params(
    b: &BaseParams,
    placement: &'static str,
    rndv_extra: u8,
) -> Result<Params, NoiseError> {
    let check = |name: &'static str, value: f64, unit: &'static str| {
        if value.is_finite() && value >= 0.0 {
            Ok(value)
        } else {
            Err(NoiseError::BaseParam {
                placement,
                name,
                value,
                unit,
            })
        }
    };
    let per_byte = |name, v| {
        check(name, v, "ps/B").and_then(|v| {
            PerByte::from_f64(v).ok_or(NoiseError::BaseParam {
                placement,
                name,
                value: v,
                unit: "ps/B",
            })
        })
    };
    Ok(Params {
        l: round_ps(check("L", b.l_ps, "ps")?),
        o: round_ps(check("o", b.o_ps, "ps")?),
        g: round_ps(check("g", b.g_ps, "ps")?),
        big_g: per_byte("G", b.big_g_ps_per_byte)?,
        big_o: per_byte("O", b.big_o_ps_per_byte)?,
        s: b.s_bytes,
        rndv_extra_latencies: rndv_extra,
    })
}

fn sampler(
    d: Option<&Distribution>,
    scaling: ScaleMode,
    base: f64,
    what: &str,
    placement: &str,
    unit: &'static str,
) -> Result<Option<Sampler>, NoiseError> {
    let Some(d) = d else { return Ok(None) };
    let s = match scaling {
        ScaleMode::MedianToBase => Scaling::MedianTo(base),
        ScaleMode::Absolute => Scaling::Absolute,
    };
    Sampler::new(d, s, unit)
        .map(Some)
        .map_err(|source| NoiseError::Distribution {
            what: format!("{what} distribution of the {placement} placement"),
            source,
        })
}

/// Builds a placement; distributions missing in `own` are taken from `fallback` (far from near).
fn place(
    own: &Placement,
    fallback: Option<&Placement>,
    name: &'static str,
    cfg: &NoiseConfig,
) -> Result<Place, NoiseError> {
    let rndv = if cfg.rndv_triple_latency { 2 } else { 0 };
    let base = base_params(&own.params, name, rndv)?;
    let pick = |f: fn(&Placement) -> Option<&Distribution>| f(own).or(fallback.and_then(f));
    // Medians are pinned to the engine's representation of the base values (whole ps, G in
    // 1/65536 ps/B), so a distribution equal to its median reproduces the noiseless costs.
    let lat = sampler(
        pick(|p| p.latency.as_ref()),
        cfg.scaling,
        base.l as f64,
        "latency",
        name,
        "ps",
    )?;
    let bw = sampler(
        pick(|p| p.bandwidth.as_ref()),
        cfg.scaling,
        base.big_g.as_f64(),
        "bandwidth",
        name,
        "ps/B",
    )?;
    let o = sampler(
        pick(|p| p.overhead.as_ref()),
        cfg.scaling,
        base.o as f64,
        "overhead (o)",
        name,
        "ps",
    )?;
    let g = sampler(
        pick(|p| p.gap.as_ref()),
        cfg.scaling,
        base.g as f64,
        "gap (g)",
        name,
        "ps",
    )?;
    // After idle periods: the latency moves with `lat` (the same factor), so a base L that is
    // overridden shifts both.
    let after_idle = own
        .after_idle
        .as_ref()
        .or(fallback.and_then(|f| f.after_idle.as_ref()));
    let mut idle = Vec::new();
    if let Some(a) = after_idle {
        let scaling = match (cfg.scaling, &lat) {
            (ScaleMode::MedianToBase, Some(_)) => {
                let of = crate::dist::median_of(
                    pick(|p| p.latency.as_ref()).expect("lat has a distribution"),
                    "ps",
                )
                .map_err(|source| NoiseError::Distribution {
                    what: format!("latency distribution of the {name} placement"),
                    source,
                })?;
                Scaling::Ratio {
                    base: base.l as f64,
                    of,
                }
            }
            (ScaleMode::MedianToBase, None) => Scaling::MedianTo(base.l as f64),
            (ScaleMode::Absolute, _) => Scaling::Absolute,
        };
        let mut below: Option<Sampler> = None;
        for level in &a.levels {
            if let Some(d) = &level.latency {
                let s =
                    Sampler::new(d, scaling, "ps").map_err(|source| NoiseError::Distribution {
                        what: format!("latency-after-idle distribution of the {name} placement"),
                        source,
                    })?;
                below = Some(s);
            }
            idle.push(IdleStep {
                from: round_ps(level.from_ps),
                lat: below.clone(),
                factor: level.per_byte_factor,
            });
        }
    }
    let idle_from = idle.first().map_or(Time::MAX, |s| s.from);
    // The block size goes with the bandwidth distribution it was measured with.
    let block = if own.bandwidth.is_some() {
        own.bandwidth_block_bytes
    } else {
        fallback.map_or(own.bandwidth_block_bytes, |f| f.bandwidth_block_bytes)
    };
    if bw.is_some() && block == 0 {
        return Err(NoiseError::ZeroBlock { placement: name });
    }
    // Levels go with the bandwidth distribution they were fitted with (as the block size).
    let levels_of = if own.bandwidth.is_some() {
        own.bandwidth_levels.as_ref()
    } else {
        fallback.and_then(|f| f.bandwidth_levels.as_ref())
    };
    let levels = match levels_of {
        Some(d) if cfg.bandwidth_levels != LevelScope::Off && bw.is_some() => {
            Some(Sampler::new(d, Scaling::Absolute, "x").map_err(|source| {
                NoiseError::Distribution {
                    what: format!("bandwidth levels of the {name} placement"),
                    source,
                }
            })?)
        }
        _ => None,
    };
    // Netgauge's LogGP run measures one placement; the far one falls back on it.
    let by_size = own
        .latency_by_size
        .as_ref()
        .or(fallback.and_then(|f| f.latency_by_size.as_ref()))
        .map(|t| Box::new(t.clone()));
    Ok(Place {
        base,
        lat,
        idle: idle.into(),
        idle_from,
        bw,
        levels,
        block,
        o,
        g,
        by_size,
    })
}

/// The noise of one capture day: its placements and OS noise.
fn day_noise(
    label: &str,
    near: &Placement,
    far: Option<&Placement>,
    on: &OsNoise,
    system: &str,
    cfg: &NoiseConfig,
) -> Result<DayNoise, NoiseError> {
    let near_p = place(near, None, "near", cfg)?;
    let (far_p, far_differs) = match far {
        Some(f) => (place(f, Some(near), "far", cfg)?, true),
        None => (near_p.clone(), false),
    };
    let os = if cfg.mode.os() {
        if on.traces.is_empty() && on.process.is_none() {
            return Err(NoiseError::OsNoiseMissing {
                mode: cfg.mode.to_string(),
                system: system.to_string(),
            });
        }
        let replay = if on.traces.is_empty() {
            OsReplay::Process
        } else {
            cfg.os_replay
        };
        let process = match (&on.process, replay) {
            (_, OsReplay::Cyclic) => None,
            (Some(p), _) => Some(DetourProcessGen::new(p)?),
            (None, _) => {
                return Err(NoiseError::ProcessMissing {
                    replay: replay.as_str().into(),
                    system: system.to_string(),
                })
            }
        };
        let table = match replay {
            OsReplay::Process => None,
            _ => Some(DetourTable::stitch(&on.traces)?),
        };
        Some(OsSource {
            replay,
            table,
            process,
        })
    } else {
        None
    };
    Ok(DayNoise {
        label: label.to_string(),
        near: near_p,
        far: far_p,
        far_differs,
        os,
    })
}

/// The cumulative bounds of weighted days ([`Inner::day_bounds`]); `None` without weights.
fn day_bounds(profile: &Profile) -> Option<Vec<u128>> {
    if profile.days.iter().all(|d| d.weight.is_none()) {
        return None;
    }
    let w = profile.state_weights();
    let full = 1u128 << 64;
    let mut cum = 0.0;
    let mut b: Vec<u128> = w[..w.len() - 1]
        .iter()
        .map(|&x| {
            cum += x;
            ((cum.clamp(0.0, 1.0) * full as f64) as u128).min(full)
        })
        .collect();
    b.push(full);
    Some(b)
}

impl NoiseModel {
    /// Validates the profile's parts that `cfg` uses and prepares samplers and traces.
    pub fn new(profile: &Profile, cfg: &NoiseConfig) -> Result<NoiseModel, NoiseError> {
        let nps = cfg.nodes_per_switch.unwrap_or(profile.nodes_per_switch);
        if nps == 0 {
            return Err(NoiseError::ZeroNodesPerSwitch);
        }
        let own = day_noise(
            &profile.day,
            &profile.near,
            profile.far.as_ref(),
            &profile.os_noise,
            &profile.system,
            cfg,
        )?;
        let mut days = vec![own];
        for d in &profile.days {
            let day = day_noise(
                &d.label,
                &d.near,
                d.far.as_ref(),
                profile.os_noise_of(d),
                &profile.system,
                cfg,
            )?;
            // The engine computes O, S and the rendezvous latencies from one set of parameters.
            let (a, b) = (&days[0].near.base, &day.near.base);
            if (a.big_o, a.s) != (b.big_o, b.s) {
                return Err(NoiseError::DaysDiffer {
                    day: d.label.clone(),
                });
            }
            days.push(day);
        }
        let og = cfg.mode.net()
            && cfg.overhead_gap_noise
            && days
                .iter()
                .flat_map(|d| [&d.near, &d.far])
                .any(|p| p.o.is_some() || p.g.is_some());
        let net = cfg.mode.net();
        let idle_scales = net
            && days
                .iter()
                .flat_map(|d| [&d.near, &d.far])
                .any(|p| p.idle.iter().any(|s| s.factor != 1.0));
        let idle = idle_scales
            || net
                && days
                    .iter()
                    .flat_map(|d| [&d.near, &d.far])
                    .any(|p| p.lat.is_some() && p.idle.iter().any(|s| s.lat.is_some()));
        // Draws are rounded to whole ps, so never below the floor of the smallest value.
        let least = |s: &Option<Sampler>, on: bool, base: Time| match s {
            Some(s) if on => s.min().floor() as Time,
            _ => base,
        };
        let latency = |p: &Place| {
            let l = least(&p.lat, net, p.base.l);
            if !(net && p.lat.is_some()) {
                return l;
            }
            p.idle
                .iter()
                .filter_map(|s| s.lat.as_ref())
                .fold(l, |l, s| l.min(s.min().floor() as Time))
        };
        let delay = |p: &Place| least(&p.o, og, p.base.o).saturating_add(latency(p));
        let smallest = |f: &dyn Fn(&Place) -> Time| match cfg.mode {
            NoiseMode::None => 0,
            _ => days
                .iter()
                .map(|d| {
                    if d.far_differs {
                        f(&d.near).min(f(&d.far))
                    } else {
                        f(&d.near)
                    }
                })
                .min()
                .unwrap_or(0),
        };
        let (min_delay, min_latency) = (smallest(&delay), smallest(&latency));
        Ok(NoiseModel {
            inner: Arc::new(Inner {
                system: profile.system.clone(),
                cfg: cfg.clone(),
                days,
                day_bounds: day_bounds(profile),
                episode: std::iter::once(false)
                    .chain(profile.days.iter().map(|d| d.episode))
                    .collect(),
                nps,
                net,
                og,
                idle,
                idle_scales,
                min_delay,
                min_latency,
                mpi_progress: cfg.mpi_progress.unwrap_or(match profile.mpi_progress {
                    Some(loggops_profile::MpiProgress::Polled) => MpiProgress::Polled,
                    Some(loggops_profile::MpiProgress::Async) | None => MpiProgress::Async,
                }),
            }),
        })
    }

    /// The number of capture days (1 for a profile of one day).
    pub fn days(&self) -> usize {
        self.inner.days.len()
    }

    /// The day repetition `rep` of a run with master seed `seed` runs on (an index into
    /// `[the profile's own day, its further days...]`; always 0 with one day, and 0 for a
    /// latency episode when the mode has no network noise).
    pub fn day_of(&self, seed: u64, rep: u64) -> usize {
        let n = self.inner.days.len() as u128;
        if n <= 1 {
            return 0;
        }
        let x = CounterRng::new(seed, rep).at(0, DOMAIN_DAY << 56) as u128;
        let d = match &self.inner.day_bounds {
            Some(b) => b.iter().position(|&b| x < b).unwrap_or(b.len() - 1),
            None => ((x * n) >> 64) as usize,
        };
        // A latency episode differs from the profile's own day only in its network: without
        // network noise its repetitions run on the profile's own day (so a noiseless run is
        // always the profile's own).
        if self.inner.episode[d] && !self.inner.net {
            0
        } else {
            d
        }
    }

    /// Whether day `d` (see [`Self::day_of`]) is a latency episode of the profile's own
    /// capture rather than another day.
    pub fn day_is_episode(&self, d: usize) -> bool {
        self.inner.episode[d]
    }

    /// The label of day `d` (see [`Self::day_of`]).
    pub fn day_label(&self, d: usize) -> &str {
        &self.inner.days[d].label
    }

    /// Whether rendezvous messages progress while a rank computes: the override of
    /// [`NoiseConfig::mpi_progress`], else the profile's `mpi_progress`, else
    /// [`MpiProgress::Async`] (what a profile without the attribute means). Runs with this
    /// model set [`loggops_engine::Config::mpi_progress`] to it.
    pub fn mpi_progress(&self) -> MpiProgress {
        self.inner.mpi_progress
    }

    /// The noise of repetition `rep` of a run with master seed `seed`, for ranks `0..num_ranks`.
    pub fn instance(&self, seed: u64, rep: u64, num_ranks: u32) -> NoiseRun {
        let rng = CounterRng::new(seed, rep);
        let i = &*self.inner;
        let day = self.day_of(seed, rep);
        let dn = &i.days[day];
        let mut ranks: Box<[RankOs]> = match &dn.os {
            Some(OsSource { table: Some(t), .. }) => {
                let phase = |r: u32| RankOs {
                    phase: t.phase(rng.at(r as u64, DOMAIN_PHASE << 56)),
                    hint: 0,
                };
                if i.cfg.cosched {
                    let p = t.phase(rng.at(0, DOMAIN_PHASE_COSCHED << 56));
                    vec![RankOs { phase: p, hint: 0 }; num_ranks as usize].into()
                } else {
                    (0..num_ranks).map(phase).collect()
                }
            }
            _ => Box::default(),
        };
        let col = |purpose: u64| rng.col(DOMAIN_MSG << 56 | purpose);
        // Quiet stretches come from the trace (the process-only replay has none).
        let use_quiet = matches!(
            &dn.os,
            Some(OsSource {
                replay: OsReplay::Cyclic | OsReplay::ThenProcess,
                table: Some(_),
                ..
            })
        );
        // One uniform for both placements: near and far messages see the same network state.
        let u_level = rng.at(0, DOMAIN_LEVEL << 56);
        let level = |p: &Place| match &p.levels {
            Some(s) if i.cfg.bandwidth_levels == LevelScope::Run => s.sample_bits(u_level),
            _ => 1.0,
        };
        NoiseRun {
            level: [level(&dn.near), level(&dn.far)],
            link_levels: i.cfg.bandwidth_levels == LevelScope::Link
                && (dn.near.levels.is_some() || dn.far.levels.is_some()),
            rng,
            col_lat: col(PURPOSE_LATENCY),
            col_block0: col(PURPOSE_BLOCK0),
            col_og: [
                [col(PURPOSE_O_SEND), col(PURPOSE_G_SEND)],
                [col(PURPOSE_O_RECV), col(PURPOSE_G_RECV)],
            ],
            nps: i.nps,
            nps_shift: if i.nps.is_power_of_two() {
                i.nps.trailing_zeros()
            } else {
                u32::MAX
            },
            far_differs: dn.far_differs,
            net: i.net,
            og: i.og,
            idle: i.idle,
            scaled: Default::default(),
            day: day as u32,
            quiet: if use_quiet {
                let mut quiet: Box<[[u64; 2]]> = vec![[0, 0]; num_ranks as usize].into();
                Self::first_quiet_stretches(dn, &mut ranks, &mut quiet);
                quiet
            } else {
                Box::default()
            },
            sent: Box::default(),
            by_size_memo: std::cell::Cell::new([None; 2]),
            num_ranks,
            ranks,
            m: self.inner.clone(),
        }
    }

    /// Sets every rank's quiet stretch at time 0 (and its trace hint), as its first
    /// [`NoiseRun::os_detour`] would: done here, the lookups into the trace are independent of
    /// each other, and made in the order of the ranks' phases, so that they walk the trace
    /// forward instead of missing the cache at random places in it (a 16K-rank repetition
    /// spent 2.5 % of its time on those misses).
    fn first_quiet_stretches(i: &DayNoise, ranks: &mut [RankOs], quiet: &mut [[u64; 2]]) {
        let Some(OsSource {
            table: Some(t),
            replay,
            ..
        }) = &i.os
        else {
            return;
        };
        let period = t.period();
        if period == 0 {
            return;
        }
        // The ranks by the top 12 bits of their phase (a counting sort).
        const BIN_BITS: u32 = 12;
        let shift = (u64::BITS - period.leading_zeros()).saturating_sub(BIN_BITS);
        let bin = |r: &RankOs| (r.phase >> shift) as usize;
        let mut start = vec![0u32; (1 << BIN_BITS) + 1];
        for r in ranks.iter() {
            start[bin(r) + 1] += 1;
        }
        for b in 0..1 << BIN_BITS {
            start[b + 1] += start[b];
        }
        let mut order = vec![0u32; ranks.len()];
        for (k, r) in ranks.iter().enumerate() {
            let at = &mut start[bin(r)];
            order[*at as usize] = k as u32;
            *at += 1;
        }
        // The quiet stretch `detour_at_quiet(phase, hint, 0, _)` gives.
        for k in order {
            let (r, q) = (&mut ranks[k as usize], &mut quiet[k as usize]);
            let (lo, hi) = t.bucket(r.phase);
            let i = t.count_le_in(r.phase, lo, hi);
            r.hint = i as u32;
            let [lo, hi] = t.quiet_stretch(i, r.phase, 0);
            // As `os_detour_slow`: with the process after the trace, quiet ends with the trace.
            *q = match replay {
                OsReplay::ThenProcess => [lo, hi.min(period)],
                _ => [lo, hi],
            };
        }
    }

    /// Parameters for the engine: the near base, with `rndv_extra_latencies` per the config.
    pub fn engine_params(&self) -> Params {
        self.inner.days[0].near.base
    }

    /// Base parameters of messages within a switch (of the profile's own day).
    pub fn near_params(&self) -> Params {
        self.inner.days[0].near.base
    }

    /// Base parameters of messages between switches (= near if the profile has no far part).
    pub fn far_params(&self) -> Params {
        self.inner.days[0].far.base
    }

    pub fn mode(&self) -> NoiseMode {
        self.inner.cfg.mode
    }

    pub fn config(&self) -> &NoiseConfig {
        &self.inner.cfg
    }

    pub fn nodes_per_switch(&self) -> u32 {
        self.inner.nps
    }

    /// `false` when a [`NoiseRun`] would only ever return `engine_params()` and no OS noise
    /// (mode `none` without a distinct far placement): the engine can then use `NoNoise`.
    pub fn needs_noise_run(&self) -> bool {
        let i = &self.inner;
        // Without network noise an episode state is never chosen (see `day_of`).
        let chosen = if i.net {
            i.days.len()
        } else {
            i.episode.iter().filter(|&&e| !e).count()
        };
        i.cfg.mode != NoiseMode::None
            || chosen > 1
            || i.days
                .iter()
                .any(|d| d.near.by_size.is_some() || d.far.by_size.is_some())
            || i.days
                .iter()
                .any(|d| d.far_differs && d.far.base != d.near.base)
    }

    /// Period of the stitched OS-noise trace of the profile's own day, ps (`None` without
    /// trace replay).
    pub fn os_period_ps(&self) -> Option<u64> {
        self.inner.days[0]
            .os
            .as_ref()?
            .table
            .as_ref()
            .map(|t| t.period())
    }

    /// One line per active ingredient, for logs.
    pub fn summary(&self) -> String {
        let i = &self.inner;
        let mut s = format!(
            "noise mode {} for `{}`, nodes per switch {}",
            i.cfg.mode, i.system, i.nps
        );
        let d = |o: &Option<Sampler>, unit: &str| match o {
            Some(x) if x.median() >= 1000.0 => {
                format!("{} values, median {:.0}{unit}", x.len(), x.median())
            }
            Some(x) => format!("{} values, median {:.4}{unit}", x.len(), x.median()),
            None => "constant".into(),
        };
        let d0 = &i.days[0];
        let episodes = i.episode.iter().filter(|&&e| e).count();
        if episodes > 0 {
            s += &format!(
                ", {} capture day(s) and {episodes} latency episode state(s) (one per repetition)",
                i.days.len() - episodes
            );
        } else if i.days.len() > 1 {
            s += &format!(", {} capture days (one per repetition)", i.days.len());
        }
        if i.net {
            for (name, p) in [("near", &d0.near), ("far", &d0.far)] {
                if name == "far" && !d0.far_differs {
                    continue;
                }
                s += &format!(
                    "\n  {name}: L {}, G {} per {}B block",
                    d(&p.lat, "ps"),
                    d(&p.bw, "ps/B"),
                    p.block
                );
                if p.levels.is_some() {
                    s += &format!(
                        ", bandwidth levels {} (one per {})",
                        d(&p.levels, "x"),
                        if i.cfg.bandwidth_levels == LevelScope::Link {
                            "pair of ranks"
                        } else {
                            "repetition"
                        }
                    );
                }
                if i.og {
                    s += &format!(", o {}, g {}", d(&p.o, "ps"), d(&p.g, "ps"));
                }
            }
        }
        if let Some(os) = &d0.os {
            s += &format!("\n  OS noise: replay {}", os.replay.as_str());
            if let Some(t) = &os.table {
                s += &format!(
                    ", {} detours in {}ps ({:.3}% of the time){}",
                    t.len(),
                    t.period(),
                    100.0 * t.total_detour() as f64 / t.period() as f64,
                    if i.cfg.cosched { ", co-scheduled" } else { "" }
                );
            }
        }
        s
    }
}

/// Purposes (the low bits of `b`) of the per-message draws, `b = DOMAIN_MSG << 56 | purpose`.
const PURPOSE_LATENCY: u64 = 0;
const PURPOSE_O_SEND: u64 = 1;
const PURPOSE_G_SEND: u64 = 2;
const PURPOSE_O_RECV: u64 = 3;
const PURPOSE_G_RECV: u64 = 4;
/// G of bandwidth block `j` is purpose `PURPOSE_BLOCK0 + j`.
const PURPOSE_BLOCK0: u64 = 8;

/// The noise of one repetition; implements the engine's [`Noise`].
///
/// Holds copies of what the per-message path needs (flags, placement rule, the per-purpose
/// halves of the counter hash) and, per rank, the trace phase and the current *quiet stretch*
/// of OS noise (see [`crate::os::DetourTable::detour_at_quiet`]): a CPU window inside it is
/// answered with 0 ps from 16 bytes of per-rank state, without touching the trace.
#[derive(Clone, Debug)]
pub struct NoiseRun {
    rng: CounterRng,
    col_lat: u64,
    col_block0: u64,
    /// `[send, recv]` × `[o, g]`.
    col_og: [[u64; 2]; 2],
    nps: u32,
    /// `log2(nps)` if `nps` is a power of two, else `u32::MAX`.
    nps_shift: u32,
    far_differs: bool,
    net: bool,
    og: bool,
    /// Latencies depend on the sender's idle time ([`Noise::uses_idle`]).
    idle: bool,
    /// `gap_bytes` of the messages whose per-byte time an idle level scaled, by
    /// `(src << 32 | send_op)`, for `recv_costs` when the sender has sent again since
    /// (`sent` then no longer holds it, and a draw again would not know the idle time). Only
    /// filled by `send_costs_idle` on profiles whose idle table scales per-byte times: one
    /// entry per message sent after a long idle period.
    scaled: std::collections::HashMap<u64, Time>,
    /// The capture day this repetition runs on (index into the model's days).
    day: u32,
    /// The repetition's bandwidth level of the near and far placement (1.0 without levels).
    level: [f64; 2],
    /// Levels are drawn per pair of ranks ([`LevelScope::Link`]) instead of `level`.
    link_levels: bool,
    /// Per rank, `[lo, hi)`: the absolute times of its current quiet stretch, which nearly
    /// every CPU interval looks up (one cache line holds four ranks); empty without trace
    /// replay.
    quiet: Box<[[u64; 2]]>,
    /// Per rank, `gap_bytes` of its latest message as a sender and that message's send op
    /// ([`NO_OP`] before the first): `recv_costs` reuses the drawn gap instead of drawing it
    /// again. Allocated by the first `send_costs` with network noise; engines that hand the gap
    /// over themselves (`send_costs_untracked`) never touch it.
    sent: Box<[(Time, u32)]>,
    /// The extra latency by size ([`Self::by_size`]) of the near and far placement's last
    /// asked size, `(size, extra)`: a program sends few distinct sizes, and the table lookup
    /// (two binary searches) cost 12 % of a noisy 16K-rank dissemination's instructions.
    by_size_memo: std::cell::Cell<[Option<(u64, Time)>; 2]>,
    num_ranks: u32,
    /// Per rank: trace phase and search hint (empty without trace replay).
    ranks: Box<[RankOs]>,
    m: Arc<Inner>,
}

/// Never an op id (ids are below `num_ops <= u32::MAX`).
const NO_OP: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct RankOs {
    phase: u64,
    hint: u32,
}

impl NoiseRun {
    /// The trace phase of `rank` (`None` without trace replay).
    pub fn phase(&self, rank: u32) -> Option<u64> {
        self.ranks.get(rank as usize).map(|r| r.phase)
    }

    /// The generator of this repetition.
    pub fn rng(&self) -> &CounterRng {
        &self.rng
    }

    /// The capture day this repetition runs on.
    #[inline(always)]
    fn dn(&self) -> &DayNoise {
        &self.m.days[self.day as usize]
    }

    #[inline(always)]
    fn is_far(&self, src: u32, dst: u32) -> bool {
        self.far_differs
            && if self.nps_shift != u32::MAX {
                (src ^ dst) >> self.nps_shift != 0
            } else {
                src / self.nps != dst / self.nps
            }
    }

    /// The near or the far placement of the repetition's day.
    #[inline(always)]
    fn placement(&self, far: bool) -> &Place {
        let d = self.dn();
        if far {
            &d.far
        } else {
            &d.near
        }
    }

    #[inline(always)]
    fn place(&self, src: u32, dst: u32) -> &Place {
        self.placement(self.is_far(src, dst))
    }

    /// The bandwidth level of a message between `src` and `dst` (1.0 without levels).
    #[inline(always)]
    fn level_of(&self, far: bool, src: u32, dst: u32) -> f64 {
        if self.link_levels {
            return self.link_level(far, src, dst);
        }
        self.level[far as usize]
    }

    /// The level of the pair `{src, dst}` ([`LevelScope::Link`]).
    #[cold]
    #[inline(never)]
    fn link_level(&self, far: bool, src: u32, dst: u32) -> f64 {
        let pl = self.placement(far);
        let (lo, hi) = (src.min(dst) as u64, src.max(dst) as u64);
        match &pl.levels {
            Some(s) => s.sample_bits(self.rng.at(lo << 32 | hi, DOMAIN_LEVEL << 56)),
            None => 1.0,
        }
    }

    /// The base per-byte gap of `bytes`.
    #[inline(always)]
    fn base_gap(pl: &Place, bytes: u64) -> Time {
        pl.base.big_g.cost(bytes).unwrap_or(Time::MAX)
    }

    /// `gap_bytes` of message `(src, send_op)` given its `row` of the counter hash and its
    /// bandwidth level.
    #[inline(always)]
    fn gap(&self, pl: &Place, s: &Sampler, row: u64, bytes: u64, level: f64) -> Time {
        let x0 = CounterRng::join(row, self.col_block0);
        if bytes <= pl.block {
            return round_ps(bytes as f64 * s.sample_bits(x0) * level);
        }
        self.gap_blocks(pl, s, row, bytes, x0, level)
    }

    /// `gap_bytes` of a message of more than one bandwidth block.
    #[cold]
    #[inline(never)]
    fn gap_blocks(
        &self,
        pl: &Place,
        s: &Sampler,
        row: u64,
        bytes: u64,
        x0: u64,
        level: f64,
    ) -> Time {
        let block = pl.block;
        let nblocks = bytes.div_ceil(block);
        let mut sum = block as f64 * s.sample_bits(x0);
        for j in 1..nblocks {
            let x = CounterRng::join(row, self.rng.col(DOMAIN_MSG << 56 | (PURPOSE_BLOCK0 + j)));
            let len = (bytes - j * block).min(block);
            sum += len as f64 * s.sample_bits(x);
        }
        round_ps(sum * level)
    }

    /// The extra latency of a message of `size` bytes ([`SizeLatency`]) on the near or far
    /// placement `pl`, per latency the message pays: a rendezvous message pays
    /// `1 + rndv_extra_latencies` latencies and the extra once in all.
    #[inline]
    fn by_size(&self, far: bool, pl: &Place, size: u64) -> Time {
        let Some(t) = &pl.by_size else {
            return 0;
        };
        let mut memo = self.by_size_memo.get();
        if let Some((s, v)) = memo[far as usize] {
            if s == size {
                return v;
            }
        }
        let extra = t.extra_at(size, pl.base.s);
        let share = if size > pl.base.s {
            1 + pl.base.rndv_extra_latencies as u64
        } else {
            1
        };
        let v = round_ps(extra / share as f64);
        memo[far as usize] = Some((size, v));
        self.by_size_memo.set(memo);
        v
    }

    /// `(o, g)` of a message at one side (0 = send, 1 = receive).
    #[inline(always)]
    fn o_g(&self, pl: &Place, row: u64, side: usize) -> (Time, Time) {
        if !self.og || (pl.o.is_none() && pl.g.is_none()) {
            return (pl.base.o, pl.base.g);
        }
        let [co, cg] = self.col_og[side];
        let draw = |s: &Option<Sampler>, col: u64, base: Time| match s {
            Some(s) => round_ps(s.sample_bits(CounterRng::join(row, col))),
            None => base,
        };
        (draw(&pl.o, co, pl.base.o), draw(&pl.g, cg, pl.base.g))
    }

    /// The costs of message `(src, send_op)`; the latency is drawn only if `with_latency`, the
    /// gap only if not `known`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn costs(
        &self,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        side: usize,
        with_latency: bool,
        known_gap: Option<Time>,
        idle: Time,
    ) -> MsgCosts {
        let far = self.is_far(src, dst);
        let pl = self.placement(far);
        let bytes = size.saturating_sub(1);
        if !self.net {
            let by_size = if with_latency {
                self.by_size(far, pl, size)
            } else {
                0
            };
            return MsgCosts {
                latency: pl.base.l.saturating_add(by_size),
                o: pl.base.o,
                g: pl.base.g,
                gap_bytes: Self::base_gap(pl, bytes),
            };
        }
        let row = self.rng.row((src as u64) << 32 | send_op as u64);
        // The idle level of a send (the receiver's side knows the gap or draws the message as
        // back to back: only `send_costs_idle` records scaled gaps, see `scaled`).
        let step = if with_latency && idle >= pl.idle_from {
            Self::idle_step(pl, idle)
        } else {
            None
        };
        let latency = match (&pl.lat, step.and_then(|s| s.lat.as_ref())) {
            (Some(_), Some(s)) if with_latency => {
                round_ps(s.sample_bits(CounterRng::join(row, self.col_lat)))
            }
            (Some(s), _) if with_latency => {
                round_ps(s.sample_bits(CounterRng::join(row, self.col_lat)))
            }
            _ => pl.base.l,
        };
        let latency = if with_latency && pl.by_size.is_some() {
            latency.saturating_add(self.by_size(far, pl, size))
        } else {
            latency
        };
        let mut gap_bytes = match (&pl.bw, known_gap) {
            (_, Some(gap)) => gap,
            (Some(s), None) if bytes > 0 => {
                self.gap(pl, s, row, bytes, self.level_of(far, src, dst))
            }
            _ => Self::base_gap(pl, bytes),
        };
        if let Some(s) = step {
            if s.factor != 1.0 && known_gap.is_none() {
                gap_bytes = round_ps(gap_bytes as f64 * s.factor);
            }
        }
        let (o, g) = self.o_g(pl, row, side);
        MsgCosts {
            latency,
            o,
            g,
            gap_bytes,
        }
    }

    /// The idle level of a send whose sender was idle for `idle` (`None`: below the first).
    #[cold]
    #[inline(never)]
    fn idle_step(pl: &Place, idle: Time) -> Option<&IdleStep> {
        pl.idle.iter().rev().find(|s| idle >= s.from)
    }

    /// Keeps the gap of `src`'s latest message for `recv_costs` (allocated with the first send).
    #[inline(always)]
    fn keep_gap(&mut self, src: u32, send_op: u32, gap_bytes: Time) {
        if self.net {
            if self.sent.is_empty() {
                self.sent = vec![(0, NO_OP); self.num_ranks as usize].into();
            }
            if let Some(s) = self.sent.get_mut(src as usize) {
                *s = (gap_bytes, send_op);
            }
        }
    }

    /// OS detour of a window outside the rank's quiet stretch (or without one).
    #[cold]
    #[inline(never)]
    fn os_detour_slow(&mut self, rank: u32, t0: Time, t1: Time) -> Time {
        let day = self.day as usize;
        let Some(os) = &self.m.days[day].os else {
            return 0;
        };
        let len = t1.saturating_sub(t0);
        let stream = if self.m.cfg.cosched { 0 } else { rank };
        match os.replay {
            OsReplay::Cyclic => {
                let t = os.table.as_ref().expect("cyclic replay has a trace");
                let r = &mut self.ranks[rank as usize];
                let (d, q) = t.detour_at_quiet(r.phase, &mut r.hint, t0, len);
                self.quiet[rank as usize] = q;
                d
            }
            OsReplay::ThenProcess => {
                let t = os.table.as_ref().expect("then-process replay has a trace");
                let p = os
                    .process
                    .as_ref()
                    .expect("then-process replay has a process");
                let period = t.period();
                if t0 < period {
                    let r = &mut self.ranks[rank as usize];
                    let (mut n, q) =
                        t.detour_at_quiet(r.phase, &mut r.hint, t0, len.min(period - t0));
                    self.quiet[rank as usize] = [q[0], q[1].min(period)];
                    if len > period - t0 {
                        n += p.detour(&self.rng, stream, period, period, len - (period - t0));
                    }
                    n
                } else {
                    p.detour(&self.rng, stream, period, t0, len)
                }
            }
            OsReplay::Process => {
                let p = os.process.as_ref().expect("process replay has a process");
                p.detour(&self.rng, stream, 0, t0, len)
            }
        }
    }
}

impl Noise for NoiseRun {
    const ACTIVE: bool = true;

    #[inline(always)]
    fn send_costs(&mut self, p: &Params, src: u32, dst: u32, send_op: u32, size: u64) -> MsgCosts {
        let c = self.send_costs_untracked(p, src, dst, send_op, size);
        self.keep_gap(src, send_op, c.gap_bytes);
        c
    }

    #[inline(always)]
    fn uses_idle(&self) -> bool {
        self.idle
    }

    #[inline(always)]
    fn send_costs_idle(
        &mut self,
        p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        idle: Time,
    ) -> MsgCosts {
        let _ = p;
        let c = self.costs(src, dst, send_op, size, 0, true, None, idle);
        self.keep_gap(src, send_op, c.gap_bytes);
        if self.m.idle_scales {
            let pl = self.place(src, dst);
            if idle >= pl.idle_from && Self::idle_step(pl, idle).is_some_and(|s| s.factor != 1.0) {
                self.scaled
                    .insert((src as u64) << 32 | send_op as u64, c.gap_bytes);
            }
        }
        c
    }

    #[inline(always)]
    fn send_costs_untracked_idle(
        &mut self,
        _p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        idle: Time,
    ) -> MsgCosts {
        self.costs(src, dst, send_op, size, 0, true, None, idle)
    }

    #[inline(always)]
    fn send_costs_untracked(
        &mut self,
        _p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
    ) -> MsgCosts {
        self.costs(src, dst, send_op, size, 0, true, None, NEVER_COMMUNICATED)
    }

    /// As [`Self::send_costs`] at the receiver, except that the latency is not drawn (the engine
    /// uses it only at the send): `latency` is the placement's base L.
    #[inline]
    fn recv_costs(&mut self, _p: &Params, src: u32, dst: u32, send_op: u32, size: u64) -> MsgCosts {
        // The sender's draw, unless the sender has sent again since (then it is drawn again:
        // the same counter gives the same value).
        let known = match self.sent.get(src as usize) {
            Some(&(gap, op)) if op == send_op => Some(gap),
            _ if !self.scaled.is_empty() => self
                .scaled
                .get(&((src as u64) << 32 | send_op as u64))
                .copied(),
            _ => None,
        };
        self.costs(src, dst, send_op, size, 1, false, known, NEVER_COMMUNICATED)
    }

    /// As [`Self::recv_costs`] with the gap the engine already holds: nothing is looked up
    /// at the sender.
    #[inline(always)]
    fn recv_costs_known_gap(
        &mut self,
        _p: &Params,
        src: u32,
        dst: u32,
        send_op: u32,
        size: u64,
        gap_bytes: Time,
    ) -> MsgCosts {
        if !self.og {
            // Nothing is drawn at the receiver.
            let pl = self.place(src, dst);
            return MsgCosts {
                latency: pl.base.l,
                o: pl.base.o,
                g: pl.base.g,
                gap_bytes,
            };
        }
        self.costs(
            src,
            dst,
            send_op,
            size,
            1,
            false,
            Some(gap_bytes),
            NEVER_COMMUNICATED,
        )
    }

    /// The base parameters of the message's placement (near or far), whatever the mode; the
    /// latency with its extra by size (part of the placement's costs, not noise).
    fn base_costs(&self, _p: &Params, src: u32, dst: u32, size: u64) -> MsgCosts {
        let far = self.is_far(src, dst);
        let pl = self.placement(far);
        MsgCosts {
            latency: pl.base.l.saturating_add(self.by_size(far, pl, size)),
            o: pl.base.o,
            g: pl.base.g,
            gap_bytes: Self::base_gap(pl, size.saturating_sub(1)),
        }
    }

    fn min_message_delay(&self) -> Time {
        self.m.min_delay
    }

    fn min_latency(&self) -> Time {
        self.m.min_latency
    }

    fn fixed_recv_overheads(&self) -> Option<(Time, Time)> {
        // As `recv_costs_known_gap`: the placement's base o and g of the repetition's day
        // (an instance runs on one day) unless o and g are drawn.
        let (near, far) = (&self.dn().near.base, &self.dn().far.base);
        let alike = !self.far_differs || (near.o, near.g) == (far.o, far.g);
        (!self.og && alike).then_some((near.o, near.g))
    }

    #[inline(always)]
    fn os_detour(&mut self, rank: u32, t0: Time, t1: Time) -> Time {
        // Fast path: the window lies in the rank's quiet stretch (no detour carries into it or
        // starts inside it).
        if let Some(&[lo, hi]) = self.quiet.get(rank as usize) {
            if lo <= t0 && t0 < hi && t1 <= hi {
                return 0;
            }
        }
        self.os_detour_slow(rank, t0, t1)
    }
}

#[cfg(test)]
mod tests {
    use super::round_ps;
    use crate::rng::CounterRng;

    /// `round_ps` is `(x + 0.5) as u64` everywhere: around every power of two, at the
    /// boundaries of its fast path, for special values and for random magnitudes.
    #[test]
    fn round_ps_is_the_saturating_conversion() {
        let reference = |x: f64| (x + 0.5) as u64;
        let mut xs = vec![
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.0,
            1.5,
            2.5,
            -0.5,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            1e19,
            1.9e19,
            18446744073709551615.0,
        ];
        for k in 0..70 {
            let p = 2f64.powi(k);
            for d in [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0] {
                let x = p + d;
                let b = x.to_bits();
                xs.extend([
                    x,
                    f64::from_bits(b + 1),
                    f64::from_bits(b.saturating_sub(1)),
                ]);
            }
        }
        let mut s = CounterRng::new(8, 8).stream(8);
        xs.extend((0..100_000).map(|_| s.next_f64() * 2f64.powi((s.next_u64() % 66) as i32)));
        for x in xs {
            assert_eq!(round_ps(x), reference(x), "x = {x:e}");
        }
    }
}
