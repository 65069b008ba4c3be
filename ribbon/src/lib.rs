//! RocksDB's filters in pure Rust (crate docs are being written).

pub mod bloom;
pub mod config;
pub mod hash;
pub mod math;
