//! loggops-schedgen (placeholder)
