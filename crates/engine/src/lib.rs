//! loggops-engine: the discrete-event LogGOPS engine. No I/O.
//!
//! The engine runs any [`Program`] (a per-rank operation graph) under the LogGOPS model with
//! LogGOPSim's exact event rules and ordering, optionally with [`Noise`]. [`simulate`] runs a
//! noisy repetition with the windowed engine ([`window`]) when it can and with the global
//! engine ([`simulate_global`]) otherwise; both give the same answer. A caller that wants to
//! know why a run took as long as it did passes a [`Recorder`] to
//! [`simulate_global_recorded`] (see [`record`]).
//!
//! ```
//! use loggops_engine::{simulate, Config, NoNoise, Params, testing::VecProgram, Op};
//! // One eager 16-byte message, LogGOPSim's default parameters in ticks.
//! let mut p = VecProgram::new(2);
//! p.op(0, Op::send(16, 1, 0));
//! p.op(1, Op::recv(16, 0, 0));
//! let cfg = Config::new(Params::loggopsim_defaults_ticks());
//! let out = simulate(&p, &cfg, &mut NoNoise).unwrap();
//! assert_eq!(out.finish, vec![1500, 5590]); // o, and 2o + L + 15G
//! ```
pub mod batch;
mod counters;
mod matching;
pub mod noise;
pub mod params;
pub mod program;
mod queue;
pub mod record;
mod reduce;
pub mod sim;
pub mod stdsort;
#[cfg(test)]
mod test_rng;
pub mod testing;
pub mod window;
pub use batch::{batch_refusal, simulate_lanes, LaneError, MAX_LANES};
pub use noise::*;
pub use params::*;
pub use program::*;
pub use record::*;
pub use sim::*;
pub use window::{
    simulate_windowed, simulate_windowed_on, simulate_windowed_with, Ancestry, GiveUp, WindowOdds,
    FULL_RECORDS,
};
