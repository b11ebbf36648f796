//! Integration tests of the `loggops-sim` binary (one test binary, ripgrep style).
mod util;

mod apps;
mod cli;
mod closed_forms;
mod conformance;
mod explain;
mod extrapolate;
mod generators;
mod outputs;
mod placement;
mod roundtrip;
mod shards;
mod validate;
#[allow(clippy::type_complexity)]
mod validation;
mod windowed;
