//! Ribbon slot tables (placeholder)
