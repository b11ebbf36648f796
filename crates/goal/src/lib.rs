//! loggops-goal (placeholder)
