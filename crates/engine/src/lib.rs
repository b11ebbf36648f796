//! loggops-engine: the discrete-event LogGOPS engine. No I/O.
pub mod program;
pub use program::*;
