//! loggops-noise: network and OS noise for the LogGOPS engine, as in "Noise in the Clouds".
//!
//! A [`NoiseModel`] is built once from a [`loggops_profile::Profile`] and a [`NoiseConfig`]
//! (validating everything up front), is immutable and shareable across threads, and hands out
//! one [`NoiseRun`] per repetition. A `NoiseRun` implements the engine's
//! [`loggops_engine::Noise`]: per-message latency, G (one draw per bandwidth block), optional
//! o/g draws, near/far placement by `nodes_per_switch`, and OS detours replayed from
//! selfish-detour traces (or a fitted detour process). Every random number comes from a
//! counter-based generator ([`rng::CounterRng`], a keyed hash built from SplitMix64's output
//! function) keyed by `(seed, rep)` and addressed by what it is for, so a repetition is a pure
//! function of `(schedule, parameters, profile, seed, rep)`.
//!
//! Cost per message (16 B, `os+net`, on a 16K-rank walk; `cargo bench -p loggops-noise`): one
//! counter hash per side plus one per draw, O(1) table lookups (guide tables for samples and
//! quantile tables), and OS noise answered from a per-rank cached quiet stretch of the trace
//! unless the CPU window touches a detour.
//!
//! Modules: [`rng`] (generator), [`dist`] (samplers over measured distributions), [`os`] (trace
//! replay and detour process), [`model`] (the model, its semantics and the stream layout).
//!
//! ```
//! use loggops_engine::Noise;
//! use loggops_noise::{NoiseConfig, NoiseMode, NoiseModel};
//! use loggops_profile::*;
//!
//! let base = BaseParams { l_ps: 1.3e6, o_ps: 150e3, g_ps: 1.5e6, big_g_ps_per_byte: 0.086,
//!                         big_o_ps_per_byte: 0.0, s_bytes: 4096 };
//! let placement = Placement {
//!     latency: Some(Distribution::Samples(vec![2.0, 2.1, 2.2, 9.0])),
//!     ..Placement::new(base, 16 << 20)
//! };
//! let profile = Profile {
//!     system: "demo".into(), description: String::new(), near: placement, far: None,
//!     nodes_per_switch: 1,
//!     os_noise: OsNoise {
//!         traces: vec![DetourTrace { start_ps: vec![0], duration_ps: vec![1000], period_ps: 100_000 }],
//!         process: None,
//!     },
//!     prices: Prices::default(), provenance: Provenance::default(), mpi_progress: None,
//!     clock: None,
//!     calibration: Default::default(), day: String::new(), days: Vec::new(),
//! };
//! let cfg = NoiseConfig { mode: "os+net".parse()?, ..NoiseConfig::default() };
//! let model = NoiseModel::new(&profile, &cfg)?;
//! let p = model.engine_params();
//! let mut run = model.instance(42, 0, 16);
//! let send = run.send_costs(&p, 0, 1, 7, 8);
//! let recv = run.recv_costs(&p, 0, 1, 7, 8);
//! assert_eq!(send.gap_bytes, recv.gap_bytes); // the same G draw at both ends
//! // Median-scaled: the draws are the samples × 1.3us / 2.15.
//! assert!([1_209_302, 1_269_767, 1_330_233, 5_441_860].contains(&send.latency));
//! let _detour_ps = run.os_detour(3, 0, 150_000);
//! # Ok::<(), loggops_noise::NoiseError>(())
//! ```

pub mod config;
pub mod dist;
pub mod error;
pub mod model;
pub mod os;
pub mod rng;

pub use dist::{Sampler, Scaling};
pub use error::NoiseError;
pub use model::{LevelScope, NoiseConfig, NoiseMode, NoiseModel, NoiseRun, OsReplay, ScaleMode};
