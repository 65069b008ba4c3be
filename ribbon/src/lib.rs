//! RocksDB's filters in pure Rust (crate docs are being written).

pub mod alg;
pub mod bloom;
pub mod builder;
pub mod config;
pub mod format;
pub mod hash;
pub mod math;
pub mod policy;
pub mod solution;
pub mod standard;
pub mod standard128;
