//! loggops-calibrate (placeholder)
