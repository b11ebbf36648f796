//! loggops-profile: the noise-profile data model and its HDF5 file format.
pub mod model;
pub use model::*;
