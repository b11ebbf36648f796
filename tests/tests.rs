//! Integration tests of the `loggops-sim` binary (one test binary, ripgrep style).
mod util;

mod answer;
mod api;
mod apps;
mod batched;
mod cli;
mod closed_forms;
mod closure;
mod conformance;
mod explain;
mod extrapolate;
mod generators;
mod idle;
mod outputs;
mod placement;
mod progress;
mod roundtrip;
mod shards;
mod spot;
mod validate;
#[allow(clippy::type_complexity)]
mod validation;
mod windowed;
