//! loggops-noise (placeholder)
