//! Hashes (placeholder)
