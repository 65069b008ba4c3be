//! The compatibility workspace's root package: the native reference harness.
//!
//! [`harness`] drives RocksDB 11.8.1's own filter builders and readers in
//! this process, so tests and benchmarks compare the pure-Rust `ribbon` crate
//! with RocksDB byte for byte, without an SST file in between.

#![warn(missing_docs)]
pub mod binary_fuse;
pub mod construction;
pub mod harness;
pub mod packed;
pub mod proc_status;

// The harness calls into RocksDB's static library directly from C++; name the
// crate that links it so the linker sees `librocksdb.a` even in binaries that
// use no `rocksdb` API from Rust.
extern crate librocksdb_sys;

/// The README's Rust example is compiled as a doctest (`cargo test --doc`),
/// so the front door cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctest;
