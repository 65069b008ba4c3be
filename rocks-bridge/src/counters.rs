//! The process-wide counts behind [`crate::counters`].

use std::sync::atomic::AtomicU64;

/// Filters finished by Rust builders.
pub(crate) static FILTERS_BUILT: AtomicU64 = AtomicU64::new(0);
/// Rust readers created for RocksDB.
pub(crate) static READERS_CREATED: AtomicU64 = AtomicU64::new(0);
