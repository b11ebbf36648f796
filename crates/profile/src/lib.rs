//! loggops-profile: the noise-profile data model and its HDF5 file format.
//!
//! A noise profile (`aws.h5`) holds everything loggops-sim knows about one system: base
//! LogGOPS parameters for messages within a switch (`near`) and across switches (`far`),
//! measured latency and bandwidth distributions (raw samples, or compact quantile tables that
//! may end in the exact largest samples), OS-detour traces and a fitted detour process,
//! instance prices and provenance. [`model`] is the in-memory form; [`write_profile`] and
//! [`read_profile`] store it as HDF5 following the schema in [`format`](mod@format) (also `SCHEMA.md`),
//! which `h5py` reads and writes with plain datasets and attributes.
//!
//! Reading validates everything: a file that is not HDF5, is truncated or corrupt, has the
//! wrong schema version, lacks a required group/attribute/dataset or holds an invalid quantile
//! table gives a [`ProfileError`] naming the file and the HDF5 object at fault.
//!
//! ```
//! use loggops_profile::*;
//!
//! let profile = Profile {
//!     system: "toy".into(),
//!     description: "two nodes on one switch".into(),
//!     near: Placement {
//!         // 1000 samples: a table up to the 999th, then the largest kept exactly.
//!         latency: Some(Distribution::Quantiles {
//!             probs: vec![0.0, 0.5, 0.999],
//!             values: vec![1_400_000.0, 1_500_000.0, 2_000_000.0],
//!             tail: Some(ExactTail { values: vec![9_000_000.0], sample_count: 1000 }),
//!         }),
//!         // The rest: LogGP values only, bandwidth blocks of 16 MiB.
//!         ..Placement::new(
//!             BaseParams {
//!                 l_ps: 1_500_000.0,
//!                 o_ps: 200_000.0,
//!                 g_ps: 100_000.0,
//!                 big_g_ps_per_byte: 80.5,
//!                 big_o_ps_per_byte: 0.0,
//!                 s_bytes: 65_536,
//!             },
//!             16 << 20,
//!         )
//!     },
//!     far: None,
//!     nodes_per_switch: 16,
//!     os_noise: OsNoise::default(),
//!     prices: Prices { on_demand_usd_per_node_hour: Some(3.888), committed_usd_per_node_hour: None, spot: Default::default() },
//!     provenance: Provenance::default(),
//!     mpi_progress: Some(MpiProgress::Polled),
//!     clock: None,
//!     calibration: Calibration::PaperTable,
//!     day: String::new(),
//!     days: Vec::new(),
//! };
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("toy.h5");
//! write_profile(&path, &profile)?;
//! assert_eq!(read_profile(&path)?, profile);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod error;
mod h5;
pub mod model;
mod schema;
mod validate;

pub use error::{Invalid, ProfileError};
pub use h5::{read_profile, read_profile_from_bytes, write_profile};
pub use model::*;
pub use schema::{MIN_SCHEMA_VERSION, SCHEMA_NAME, SCHEMA_VERSION};
pub use validate::{validate, MAX_PER_BYTE_FACTOR, MAX_PER_BYTE_PS, MAX_RATE_PER_S, MAX_TIME_PS};

/// The HDF5 schema of noise profiles, versions 1 to 3 (the text of `SCHEMA.md`).
pub mod format {
    #![doc = include_str!("../SCHEMA.md")]
}
