//! Bloom filters (placeholder)
