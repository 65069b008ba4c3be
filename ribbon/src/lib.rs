#![doc = include_str!("standalone/GUIDE.md")]
//!
//! # RocksDB's formats
//!
//! The other modules reproduce RocksDB 11.8.1's filters bit for bit, layered
//! as in RocksDB: the generic Ribbon core ([`alg`]: banding and
//! back-substitution; [`standard`]: the hasher; [`solution`]: the interleaved
//! solution and its queries; [`config`]: slots for a number of keys), the key
//! hashes ([`hash`]) and their arithmetic ([`math`]), the Bloom filters
//! ([`bloom`]), RocksDB's Standard128 Ribbon filter ([`standard128`]), and the
//! filter-block level: policies ([`policy`]), building ([`builder`]) and
//! reading any filter block by its trailer ([`format`](mod@format)). The
//! standalone filter ([`standalone`]) is one more instantiation of the same
//! core.

#![warn(missing_docs)]
pub mod alg;
pub mod bloom;
pub mod builder;
pub mod config;
pub mod format;
pub mod hash;
pub mod math;
pub mod policy;
pub mod solution;
pub mod standalone;
pub mod standard;
pub mod standard128;
