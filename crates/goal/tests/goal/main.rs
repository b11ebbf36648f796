//! Integration tests of loggops-goal (one test binary).

mod binary_corrupt;
mod common;
mod edge;
mod errors;
mod shared;
