//! loggops-report (placeholder)
